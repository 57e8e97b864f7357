/**
 * Every CORS header a plan may set but `Vary`, written out here for the
 * attacker-side tests of nested policies (core's CORS_RESPONSE_HEADERS
 * again: a test does not trust the list it checks).
 */
export const CORS_HEADERS = [
  'access-control-allow-origin',
  'access-control-allow-credentials',
  'access-control-expose-headers',
  'amp-access-control-allow-source-origin',
  'amp-email-allow-sender',
  'access-control-allow-methods',
  'access-control-allow-headers',
  'access-control-max-age',
  'access-control-allow-private-network',
] as const;

/** The CORS headers among `headers` (an answer's name-to-value record, or a Fetch `Headers`), `Vary` apart: every one of {@link CORS_HEADERS} present. */
export function corsOf(headers: Readonly<Record<string, string | undefined>> | Headers): Record<string, string> {
  const found: Record<string, string> = {};
  for (const name of CORS_HEADERS) {
    const value = headers instanceof Headers ? headers.get(name) : headers[name];
    if (value !== undefined && value !== null) found[name] = value;
  }
  return found;
}

/** The CORS headers of an actual request allowed for `origin` by an AMP policy with default options but `credentials`. */
export const allowedFor = (origin: string, credentials = true): Record<string, string> => ({
  'access-control-allow-origin': origin,
  ...(credentials && { 'access-control-allow-credentials': 'true' }),
  'access-control-expose-headers': 'AMP-Redirect-To',
});
