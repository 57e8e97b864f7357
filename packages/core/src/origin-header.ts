/**
 * Longest `Origin` header ampcors parses (SPEC §6: cap before parsing). The
 * longest real origin is `https://` + a 253-octet name + `:65535`.
 */
export const MAX_ORIGIN_LENGTH = 300;

/** Why a raw `Origin` header is not a single canonical http(s) origin. */
export type OriginSyntaxReason =
  'missing' | 'too-long' | 'null-origin' | 'list' | 'control-character' | 'malformed' | 'unsupported-scheme' | 'userinfo' | 'path' | 'not-canonical';

/** A raw `Origin` header that is one canonical http(s) origin. */
export interface ParsedOrigin {
  readonly ok: true;
  /** `http` or `https`. */
  readonly scheme: 'http' | 'https';
  /** The host as sent: lowercase, no trailing dot, IPv6 in brackets. */
  readonly host: string;
  /** The port, or `null` for the scheme's default. */
  readonly port: number | null;
}

/** A raw `Origin` header that was refused, and why. */
export interface RejectedOrigin {
  readonly ok: false;
  /** The stable reason code. */
  readonly reason: OriginSyntaxReason;
  /** A short human-readable explanation. */
  readonly detail: string;
}

const SCHEME = /^([A-Za-z][A-Za-z0-9+.-]*):\/\//;
const HOST_NAME = /^[a-z0-9_](?:[a-z0-9_-]*[a-z0-9_])?(?:\.[a-z0-9_](?:[a-z0-9_-]*[a-z0-9_])?)*$/;
const DOTTED_QUAD = /^(?:(?:25[0-5]|2[0-4][0-9]|1[0-9][0-9]|[1-9]?[0-9])\.){3}(?:25[0-5]|2[0-4][0-9]|1[0-9][0-9]|[1-9]?[0-9])$/;
const IPV6_CHARS = /^[0-9a-f:.]+$/;

function reject(reason: OriginSyntaxReason, detail: string): RejectedOrigin {
  return { ok: false, reason, detail };
}

/**
 * Judges a raw `Origin` header as sent (SPEC §6): browsers serialize an
 * origin canonically — lowercase scheme and host, no default port, no
 * trailing dot, no path, punycode for IDN hosts — so anything else is
 * refused, never repaired. Checks, in order: missing, length cap, `null`,
 * a comma-separated list, whitespace or control characters, scheme syntax,
 * http(s) only, userinfo, path/query/fragment, then the host and port.
 * Never throws.
 *
 * @example parseOrigin('https://www-example-com.cdn.ampproject.org') // { ok: true, scheme: 'https', host: 'www-example-com.cdn.ampproject.org', port: null }
 * @example parseOrigin('https://Example.com') // { ok: false, reason: 'not-canonical', … }
 */
export function parseOrigin(raw: string | null | undefined): ParsedOrigin | RejectedOrigin {
  if (raw === undefined || raw === null || raw === '') return reject('missing', 'no Origin header');
  if (typeof raw !== 'string') return reject('malformed', 'Origin is not a string');
  if (raw.length > MAX_ORIGIN_LENGTH) return reject('too-long', `Origin longer than ${MAX_ORIGIN_LENGTH} characters`);
  if (raw === 'null') return reject('null-origin', 'opaque origin "null"');
  if (raw.includes(',')) return reject('list', 'a list of origins');
  for (let i = 0; i < raw.length; i++) {
    const code = raw.charCodeAt(i);
    if (code <= 0x20 || code === 0x7f) return reject('control-character', 'whitespace or a control character');
    if (code > 0x7f) return reject('not-canonical', 'non-ASCII characters (a browser sends punycode)');
  }
  const scheme = SCHEME.exec(raw);
  if (!scheme) return reject('malformed', 'not of the form scheme://host');
  const schemeName = scheme[1] as string;
  const lowerScheme = schemeName.toLowerCase();
  if (lowerScheme !== 'http' && lowerScheme !== 'https') return reject('unsupported-scheme', `scheme ${lowerScheme} is not http or https`);
  if (schemeName !== lowerScheme) return reject('not-canonical', 'scheme is not lowercase');
  const rest = raw.slice(scheme[0].length);
  if (rest.includes('@')) return reject('userinfo', 'userinfo in an origin');
  if (/[/?#\\]/.test(rest)) return reject('path', 'a path, query or fragment in an origin');
  let host: string;
  let portText: string | undefined;
  if (rest.startsWith('[')) {
    const close = rest.indexOf(']');
    if (close < 0) return reject('malformed', 'unclosed IPv6 bracket');
    host = rest.slice(0, close + 1);
    const after = rest.slice(close + 1);
    if (after !== '') {
      if (!after.startsWith(':')) return reject('malformed', 'junk after IPv6 address');
      portText = after.slice(1);
    }
    const inner = host.slice(1, -1);
    if (!IPV6_CHARS.test(inner.toLowerCase()) || !inner.includes(':')) return reject('malformed', 'not an IPv6 address');
    if (inner !== inner.toLowerCase()) return reject('not-canonical', 'host is not lowercase');
  } else {
    const colon = rest.indexOf(':');
    host = colon < 0 ? rest : rest.slice(0, colon);
    if (colon >= 0) portText = rest.slice(colon + 1);
    if (host === '') return reject('malformed', 'empty host');
    if (host !== host.toLowerCase()) return reject('not-canonical', 'host is not lowercase');
    if (host.endsWith('.')) return reject('not-canonical', 'trailing dot in host');
    if (host.length > 253 || !HOST_NAME.test(host)) return reject('malformed', 'host is not a valid host name');
    // A host whose last label is numeric (decimal or 0x-hex) is parsed as IPv4
    // by browsers (WHATWG URL), so it must be in dotted-decimal form.
    if (/(?:^|\.)(?:0x[0-9a-f]*|[0-9]+)$/.test(host)) {
      if (!DOTTED_QUAD.test(host)) return reject('not-canonical', 'IPv4 address not in dotted-decimal form');
    }
  }
  let port: number | null = null;
  if (portText !== undefined) {
    if (!/^[1-9][0-9]{0,4}$/.test(portText)) return reject(portText === '' ? 'not-canonical' : 'malformed', 'invalid port');
    port = Number(portText);
    if (port > 65535) return reject('malformed', 'port out of range');
    if ((lowerScheme === 'https' && port === 443) || (lowerScheme === 'http' && port === 80)) {
      return reject('not-canonical', 'default port written out');
    }
  }
  return { ok: true, scheme: lowerScheme as 'http' | 'https', host, port };
}
