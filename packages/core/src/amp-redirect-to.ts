import { AmpCorsError } from './errors.js';

/** The `amp-form` redirect header (SPEC §7), always exposed. */
export const AMP_REDIRECT_TO = 'AMP-Redirect-To';

/**
 * The value of an `AMP-Redirect-To` response header (`amp-form`, SPEC §7):
 * only an absolute https URL is accepted.
 *
 * @throws AmpCorsError `invalid-url` for anything else, including control characters.
 * @example res.setHeader('AMP-Redirect-To', ampRedirectTo('https://example.com/thanks'))
 */
export function ampRedirectTo(url: string): string {
  if (typeof url !== 'string' || url.length > 8192 || /[\u0000-\u0020\u007f]/.test(url) || !/^https:\/\//i.test(url)) {
    throw new AmpCorsError('invalid-url', 'AMP-Redirect-To needs an absolute https URL without whitespace or control characters');
  }
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    throw new AmpCorsError('invalid-url', 'AMP-Redirect-To needs an absolute https URL');
  }
  if (parsed.protocol !== 'https:' || parsed.hostname === '') throw new AmpCorsError('invalid-url', 'AMP-Redirect-To needs an absolute https URL');
  return parsed.href;
}
