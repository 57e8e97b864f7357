// SPEC §5 host canonicalization (Safe Browsing "URLs and Hashing").
import { toASCII } from 'punycode/punycode.es6.js';
import { AmpCorsError } from './errors.js';
import { embeddedIpv4, formatIpv4, formatIpv6, parseIpv4, parseIpv6 } from './ip-address.js';

/**
 * Characters a bare host can never contain: controls, space, DEL, the URL
 * delimiters and `%` (a host given to {@link canonicalHost} is not escaped).
 * Brackets and `:` are only allowed around and inside an IPv6 literal.
 */
const NOT_IN_HOST = /[\u0000-\u0020\u007f/\\?#@%:[\]]/;
const NON_ASCII = /[^\u0000-\u007f]/;
const ASCII_UPPER = /[A-Z]+/g;
const BRACKET = /[[\]]/;

function quoted(text: string): string {
  return JSON.stringify(text.length > 80 ? `${text.slice(0, 80)}…` : text);
}

// §5 host step 4: a bracketed IPv6 literal is written in RFC 5952 form, and an
// IPv4-mapped or NAT64 address becomes its IPv4 address.
function canonicalIpv6Literal(host: string): string {
  const groups = host.endsWith(']') ? parseIpv6(host.slice(1, -1)) : null;
  if (groups === null) throw new AmpCorsError('invalid-ip', `Invalid host ${quoted(host)}: not a bracketed IPv6 address`);
  const ipv4 = embeddedIpv4(groups);
  return ipv4 === null ? `[${formatIpv6(groups)}]` : formatIpv4(ipv4);
}

// §5 host steps 1 and 2: strip leading and trailing dots, collapse runs of dots.
function trimDots(host: string): string {
  return host.replace(/^\.+|\.+$/g, '').replace(/\.{2,}/g, '.');
}

/**
 * The SPEC §5 host steps as applied to the host of a URL being canonicalized
 * (used by `canonicalizeUrl`): apart from brackets, no character is refused
 * here, because the URL's final percent-escaping takes care of spaces,
 * controls and `#`.
 *
 * Order: lowercase (§5 step 5, first so IDN labels are encoded from
 * lowercase), IDN to ASCII punycode, dots (steps 1–2), IPv4 (step 3); a host
 * starting with `[` takes the IPv6 path (step 4) instead.
 *
 * @param host - the unescaped host, without userinfo or port
 * @param unicode - true when `host` is a Unicode string (its non-ASCII labels
 *   are punycode-encoded); false when it is a byte string that is not UTF-8,
 *   whose bytes above 0x7F are kept for escaping and only ASCII is lowercased
 * @throws AmpCorsError `invalid-host` when nothing is left after the dots are
 *   stripped, the host has a bracket but is not an IPv6 literal, or an
 *   internationalized host contains `%` or cannot be
 *   punycode-encoded; `invalid-ip` for a bad IPv6 literal
 */
export function canonicalUrlHost(host: string, unicode: boolean): string {
  if (host.startsWith('[')) return canonicalIpv6Literal(host);
  if (BRACKET.test(host)) throw new AmpCorsError('invalid-host', `Invalid host ${quoted(host)}: a bracket outside an IPv6 literal`);
  // §5 host step 5: lowercase.
  let name = unicode ? host.normalize('NFC').toLowerCase() : host.replace(ASCII_UPPER, (upper) => upper.toLowerCase());
  // §5 (URL preamble): an internationalized host is converted to ASCII punycode.
  if (unicode && NON_ASCII.test(name)) {
    // Punycode moves a label's ASCII characters together, so a `%` could form a
    // new escape with them: refused, so that canonical output stays canonical.
    if (name.includes('%')) throw new AmpCorsError('invalid-host', `Invalid host ${quoted(host)}: "%" in an internationalized host`);
    try {
      name = toASCII(name);
    } catch {
      throw new AmpCorsError('invalid-host', `Invalid host ${quoted(host)}: cannot be converted to punycode`);
    }
  }
  name = trimDots(name);
  if (name === '') throw new AmpCorsError('invalid-host', `Invalid host ${quoted(host)}: empty`);
  // §5 host step 3: an IPv4 address in any legal form becomes dotted decimal.
  const ipv4 = parseIpv4(name);
  return ipv4 === null ? name : formatIpv4(ipv4);
}

/**
 * Canonical form of a host name (SPEC §5, Safe Browsing host rules): leading
 * and trailing dots stripped, repeated dots collapsed, IPv4 in any legal form
 * (octal, hex, fewer than four parts) written as dotted decimal, a bracketed
 * IPv6 address shortened per RFC 5952, IPv4-mapped and NAT64 IPv6 addresses
 * turned into IPv4, lowercase, IDN labels converted to ASCII punycode.
 *
 * Hosts that are not valid DNS names but are still hosts to Safe Browsing
 * (`w!eird<>ho$^.com`) are kept; use `canonicalDomain` to insist on a DNS name.
 *
 * @param host - a bare host: no scheme, userinfo, port, path or escapes
 * @returns the canonical host
 * @throws AmpCorsError `invalid-host` for a non-string, an empty host (after
 *   the dots are stripped), or one containing a space, a control character,
 *   `/ \ ? # @ % :` or brackets outside an IPv6 literal; `invalid-ip` for a
 *   bracketed host that is not an IPv6 address
 * @example canonicalHost('WWW.Example.com.') // 'www.example.com'
 * @example canonicalHost('0x12.0x43.0x44.0x01') // '18.67.68.1'
 * @example canonicalHost('[2001:0db8:0000::1]') // '[2001:db8::1]'
 * @example canonicalHost('[::ffff:1.2.3.4]') // '1.2.3.4'
 * @example canonicalHost('bücher.de') // 'xn--bcher-kva.de'
 */
export function canonicalHost(host: string): string {
  if (typeof host !== 'string') throw new AmpCorsError('invalid-host', `Invalid host ${quoted(String(host))}: not a string`);
  if (host.startsWith('[')) return canonicalIpv6Literal(host);
  const bad = NOT_IN_HOST.exec(host);
  if (bad !== null) {
    throw new AmpCorsError('invalid-host', `Invalid host ${quoted(host)}: contains ${JSON.stringify(bad[0])}`);
  }
  return canonicalUrlHost(host, true);
}

/**
 * True when `host` canonicalizes (see {@link canonicalHost}) to an IP address:
 * IPv4 in any legal form (SPEC §5 host step 3) or a bracketed IPv6 address
 * (step 4). Never throws: a string that is not a host is not an IP address.
 * Safe Browsing forms no host-suffix expressions for IP addresses.
 *
 * @example isIpHost('3279880203') // true
 * @example isIpHost('[::1]') // true
 * @example isIpHost('example.com') // false
 */
export function isIpHost(host: string): boolean {
  let canonical: string;
  try {
    canonical = canonicalHost(host);
  } catch {
    return false;
  }
  return canonical.startsWith('[') || parseIpv4(canonical) !== null;
}
