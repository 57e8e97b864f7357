// SPEC §5 URL canonicalization (Safe Browsing "URLs and Hashing"). The URL is
// hand-parsed: the WHATWG URL parser escapes, resolves and rejects differently.
//
// The work is done on a byte string (one char per UTF-8 byte, 0x00–0xFF), since
// percent-unescaping yields bytes, not characters.
import { AmpCorsError } from './errors.js';
import { canonicalUrlHost } from './canonical-host.js';

/** Schemes Safe Browsing checks; other schemes (`mailto:`, `data:`, …) have no host to check. */
const SCHEMES: ReadonlySet<string> = new Set(['http', 'https', 'ftp']);
const SCHEME = /^([a-z][a-z0-9+.-]*):/i;
/** What follows `host:` when the input has no scheme but a port (`example.com:80/`). */
const PORT_NOT_SCHEME = /^[0-9]+(?:[/?]|$)/;
const PORT = /^[0-9]*$/;
const EDGE_SPACE = /^[\u0000-\u0020]+|[\u0000-\u0020]+$/g;
const TAB_CR_LF = /[\t\r\n]/g;
const NON_ASCII = /[^\u0000-\u007f]/;
const HIGH_BYTE = /[\u0080-\u00ff]/;
const HEX_DIGIT = /^[0-9a-f]$/i;
/** Bytes the final step escapes: ≤ 32, ≥ 127, `#` and `%`. */
const TO_ESCAPE = /[\u0000-\u0020\u007f-\u00ff#%]/g;

const utf8Decoder = new TextDecoder('utf-8', { fatal: true, ignoreBOM: true });

/** A canonical URL split into its parts, each already percent-escaped. */
export interface CanonicalUrlParts {
  /** Lowercase scheme: `http`, `https` or `ftp`. */
  readonly scheme: string;
  /** Canonical host (SPEC §5 host steps), escaped. */
  readonly host: string;
  /** Canonical path, starting with `/`, escaped. */
  readonly path: string;
  /** The query without its `?`, escaped; null when the URL has no `?`. */
  readonly query: string | null;
}

function invalid(url: string, why: string): AmpCorsError {
  const shown = url.length > 120 ? `${url.slice(0, 120)}…` : url;
  return new AmpCorsError('invalid-url', `Invalid URL ${JSON.stringify(shown)}: ${why}`);
}

function toByteString(text: string): string {
  if (!NON_ASCII.test(text)) return text;
  let bytes = '';
  for (const byte of new TextEncoder().encode(text)) bytes += String.fromCharCode(byte);
  return bytes;
}

// §5 URL step 3: percent-unescape until no escape is left. Done in one pass:
// whenever the last three characters of the output form an escape, they are
// replaced by the byte, which may complete an earlier escape in turn. The
// result has no escape left, like unescaping the whole string repeatedly.
function unescapeFully(text: string): string {
  const out: string[] = [];
  for (const char of text) {
    out.push(char);
    for (let n = out.length; n >= 3; n = out.length) {
      const [percent, high, low] = out.slice(n - 3) as [string, string, string];
      if (percent !== '%' || !HEX_DIGIT.test(high) || !HEX_DIGIT.test(low)) break;
      out.length = n - 3;
      out.push(String.fromCharCode(parseInt(high + low, 16)));
    }
  }
  return out.join('');
}

// §5 final step: escape bytes ≤ 32, ≥ 127, `#` and `%`, with uppercase hex.
function escapeBytes(bytes: string): string {
  return bytes.replace(TO_ESCAPE, (byte) => `%${byte.charCodeAt(0).toString(16).toUpperCase().padStart(2, '0')}`);
}

// §5 path steps 1 and 2, in the doc's order: resolve `/./` and `/../` (a `..`
// removes the component before it, even an empty one), then collapse slashes.
function canonicalPath(path: string): string {
  const segments = path.split('/').slice(1);
  const kept: string[] = [];
  for (const segment of segments) {
    if (segment === '..') kept.pop();
    else if (segment !== '.') kept.push(segment);
  }
  // A path ending in `/.` or `/..` names a directory.
  const last = segments[segments.length - 1];
  if (last === '.' || last === '..') kept.push('');
  return `/${kept.join('/')}`.replace(/\/{2,}/g, '/');
}

// The host bytes as §5 host canonicalization takes them: UTF-8 is decoded so
// IDN labels can be punycode-encoded; other high bytes stay bytes.
function canonicalHostBytes(host: string): string {
  if (!HIGH_BYTE.test(host)) return canonicalUrlHost(host, true);
  let unicode: string;
  try {
    unicode = utf8Decoder.decode(Uint8Array.from(host, (char) => char.charCodeAt(0)));
  } catch {
    return canonicalUrlHost(host, false);
  }
  return canonicalUrlHost(unicode, true);
}

/**
 * Canonicalizes a URL by the SPEC §5 rules and returns its parts (see
 * {@link canonicalizeUrl}, which joins them).
 *
 * @param url - an absolute URL, or one without a scheme (`http` is assumed)
 * @throws AmpCorsError `invalid-url` (no host, a scheme other than http,
 *   https or ftp, a scheme not followed by `//`, a bad port), `invalid-host`
 *   or `invalid-ip` (see `canonicalHost`)
 */
export function canonicalUrlParts(url: string): CanonicalUrlParts {
  if (typeof url !== 'string') throw invalid(String(url), 'not a string');
  // Leading and trailing spaces are not part of the URL (doc example
  // "  http://www.google.com/  "); §5 URL step 1: remove tab, CR and LF.
  let rest = toByteString(url).replace(EDGE_SPACE, '').replace(TAB_CR_LF, '');
  // §5 URL step 2: drop the fragment.
  const hash = rest.indexOf('#');
  if (hash >= 0) rest = rest.slice(0, hash);
  // §5 URL step 3: percent-unescape repeatedly (this may expose new delimiters).
  rest = unescapeFully(rest);

  // A missing scheme means http (doc examples "www.google.com/"); a
  // `name:digits` start is a host and port, not a scheme.
  let scheme = 'http';
  const schemeMatch = SCHEME.exec(rest);
  if (schemeMatch !== null && !PORT_NOT_SCHEME.test(rest.slice(schemeMatch[0].length))) {
    scheme = (schemeMatch[1] as string).toLowerCase();
    if (!SCHEMES.has(scheme)) throw invalid(url, `scheme ${JSON.stringify(scheme)} is not http, https or ftp`);
    rest = rest.slice(schemeMatch[0].length);
    if (!rest.startsWith('//')) throw invalid(url, `"${scheme}:" is not followed by "//"`);
    rest = rest.slice(2);
  }

  // Authority: userinfo and port are dropped (doc example "http://www.gotaport.com:1234/").
  const authorityEnd = rest.search(/[/?]/);
  const authority = authorityEnd < 0 ? rest : rest.slice(0, authorityEnd);
  const hostPort = authority.slice(authority.lastIndexOf('@') + 1);
  // An IPv6 literal runs to its `]` (or to the end, when unclosed: refused later).
  const bracketEnd = hostPort.startsWith('[') ? hostPort.indexOf(']') + 1 || hostPort.length : 0;
  const colon = hostPort.indexOf(':', bracketEnd);
  const host = colon < 0 ? hostPort : hostPort.slice(0, colon);
  if (colon >= 0 && !PORT.test(hostPort.slice(colon + 1))) throw invalid(url, 'the port is not a number');
  if (bracketEnd > 0 && host.length !== bracketEnd) throw invalid(url, 'text after the IPv6 literal');
  if (host === '') throw invalid(url, 'no host');

  // A URL has a path: `http://google.com` → `http://google.com/`.
  const pathAndQuery = authorityEnd < 0 ? '' : rest.slice(authorityEnd);
  const question = pathAndQuery.indexOf('?');
  const path = question < 0 ? pathAndQuery : pathAndQuery.slice(0, question);
  const query = question < 0 ? null : pathAndQuery.slice(question + 1);

  return {
    scheme,
    host: escapeBytes(canonicalHostBytes(host)),
    // The path steps never touch the query.
    path: escapeBytes(canonicalPath(path === '' ? '/' : path)),
    query: query === null ? null : escapeBytes(query),
  };
}

/**
 * Canonical form of a URL by the Safe Browsing rules (SPEC §5): tab, CR and
 * LF removed, the fragment dropped, percent-escapes removed repeatedly, the
 * host canonicalized (see `canonicalHost`), userinfo and port dropped, `/./`
 * and `/../` resolved and repeated slashes collapsed in the path (never in the
 * query), and finally bytes ≤ 32, ≥ 127, `#` and `%` escaped with uppercase
 * hex. A URL without a scheme is taken as `http`; the result always has a path.
 * Non-ASCII input is taken as UTF-8.
 *
 * @param url - the URL to canonicalize
 * @returns the canonical URL (ASCII)
 * @throws AmpCorsError `invalid-url`, `invalid-host` or `invalid-ip` for input
 *   with no usable host (see {@link canonicalUrlParts})
 * @example canonicalizeUrl('http://host/%25%32%35') // 'http://host/%25'
 * @example canonicalizeUrl('www.GOOgle.com') // 'http://www.google.com/'
 * @example canonicalizeUrl('http://3279880203/blah') // 'http://195.127.0.11/blah'
 */
export function canonicalizeUrl(url: string): string {
  const { scheme, host, path, query } = canonicalUrlParts(url);
  return `${scheme}://${host}${path}${query === null ? '' : `?${query}`}`;
}
