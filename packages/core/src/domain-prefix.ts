import { sha256 } from '@noble/hashes/sha2.js';
import { utf8ToBytes } from '@noble/hashes/utils.js';
import { base32 } from '@scure/base';
import { toASCII, toUnicode } from 'punycode/punycode.es6.js';
import { canonicalDomain, MAX_LABEL_LENGTH, unicodeDomain } from './domain-name.js';

/** Length of a fallback (hashed) domain prefix: base32 of SHA-256 without padding. */
export const HASHED_PREFIX_LENGTH = 52;

/**
 * SPEC §2 basic algorithm, steps 1–5, on a canonical (ASCII) domain. The
 * result may be longer than 63 octets; {@link domainPrefix} then falls back.
 *
 * @example basicPrefix('en-us.example.com') // '0-en--us-example-com-0'
 */
export function basicPrefix(asciiDomain: string): string {
  // Step 1: punycode-decode (IDN → Unicode).
  const unicode = unicodeDomain(asciiDomain);
  // Step 2: every '-' becomes '--'. Step 3: every '.' becomes '-'.
  let label = unicode.replaceAll('-', '--').replaceAll('.', '-');
  // Step 4: hyphens at positions 3 and 4 (1-based, in code points) are
  // reserved for IDNA (amphtml#26205): wrap in '0-' … '-0'.
  const points = unicode === asciiDomain ? label : Array.from(label.slice(0, 8));
  if (points[2] === '-' && points[3] === '-') label = `0-${label}-0`;
  // Step 5: punycode-encode (IDNA to ASCII) the single label.
  return unicode === asciiDomain ? label : toASCII(label);
}

/**
 * SPEC §2 fallback algorithm: base32 (RFC 4648, lowercase) of the SHA-256 of
 * `input`, without the trailing `====`: always 52 characters, no `-`.
 * ampcors hashes the canonical ASCII domain; {@link prefixForms} also lists
 * the hash of the Unicode form, which other implementations produce.
 */
export function fallbackPrefix(input: string): string {
  // Step 1: SHA-256. Step 2: base32, lowercase. Step 3: drop the 4 padding chars.
  return base32.encode(sha256(utf8ToBytes(input))).slice(0, HASHED_PREFIX_LENGTH).toLowerCase();
}

/**
 * The domain prefix of a publisher domain (SPEC §2, combined algorithm): the
 * basic result if it is a valid DNS label (at most 63 octets), else the
 * fallback hash. The domain is canonicalized first (lowercase, IDNA to ASCII,
 * trailing dot removed).
 *
 * @throws AmpCorsError `invalid-domain` for an empty, over-long or malformed domain.
 * @example domainPrefix('foo-example.com') // 'foo--example-com'
 * @example domainPrefix('xn--57hw060o.com') // 'xn---com-p33b41770a'
 */
export function domainPrefix(publisherDomain: string): string {
  const ascii = canonicalDomain(publisherDomain);
  const basic = basicPrefix(ascii);
  return basic.length <= MAX_LABEL_LENGTH ? basic : fallbackPrefix(ascii);
}

// Scripts written left to right, and right to left (Hebrew, Arabic, Syriac,
// Thaana, NKo and their presentation forms): a label mixing both is hashed
// by @ampproject/toolbox-cache-url.
const LEFT_TO_RIGHT = /[A-Za-z\u00c0-\u00d6\u00d8-\u00f6\u00f8-\u02b8\u0300-\u0590\u0800-\u1fff\u200e\u2c00-\ufb1c\ufe00-\ufe6f\ufefd-\uffff]/;
const RIGHT_TO_LEFT = /[\u0591-\u06ef\u06fa-\u07ff\u200f\ufb1d-\ufdff\ufe70-\ufefc]/;

const NON_ASCII = /[^\x00-\x7f]/;

function hyphensAt3And4(s: string): boolean {
  return s.slice(2, 4) === '--' && s.slice(0, 2) !== 'xn';
}

/**
 * The prefix `@ampproject/toolbox-cache-url` 2.10.1 computes for a host
 * written exactly as given (SPEC §6 lists how it diverges from the guide): it
 * hashes hosts with no dot, hosts mixing left-to-right and right-to-left
 * scripts and hosts with `--` at positions 3–4; it tests the hyphen rule on
 * the final ASCII label (exempting `xn…`) and checks the 63 limit before
 * wrapping in `0-…-0`. Used to accept, for a configured domain, the origin
 * a cache running that code would produce.
 */
export function toolboxPrefix(host: string): string {
  return toolboxForm(host).prefix;
}

/** {@link toolboxPrefix}, saying whether the result is a hash. */
function toolboxForm(host: string): { prefix: string; hashed: boolean } {
  const plain = !NON_ASCII.test(host) && !host.includes('xn--');
  const unicode = plain ? host : toUnicode(host);
  const basicAllowed =
    !hyphensAt3And4(host) &&
    host.length <= MAX_LABEL_LENGTH &&
    host.includes('.') &&
    (plain || !(LEFT_TO_RIGHT.test(unicode) && RIGHT_TO_LEFT.test(unicode)));
  if (!basicAllowed) return { prefix: fallbackPrefix(host), hashed: true };
  const joined = unicode.split('-').join('--').split('.').join('-');
  let label = (plain ? joined : toASCII(joined)).toLowerCase();
  if (label.length > MAX_LABEL_LENGTH) return { prefix: fallbackPrefix(host), hashed: true };
  if (hyphensAt3And4(label)) label = `0-${label}-0`;
  return { prefix: label, hashed: false };
}

/** Which algorithm produced a prefix (SPEC §6). */
export type PrefixForm = 'spec' | 'toolbox' | 'hash-ascii' | 'hash-unicode';

/** One accepted prefix of a publisher domain and where it comes from. */
export interface PrefixFormEntry {
  /** The domain prefix (a single DNS label). */
  readonly prefix: string;
  /** The algorithm that produced it. */
  readonly form: PrefixForm;
}

/**
 * Every prefix a real AMP cache may use for a publisher domain (SPEC §6):
 * the guide's prefix, toolbox-cache-url's prefix of the ASCII and of the
 * Unicode form, and — for an IDN, or whenever any of these algorithms hashes
 * the domain — the hash of both its ASCII and its Unicode form. Duplicates are removed,
 * first form wins. Each is derived from the configured domain alone, so
 * none widens trust.
 *
 * @throws AmpCorsError `invalid-domain` for a malformed domain.
 * @example prefixForms('example.com') // [{ prefix: 'example-com', form: 'spec' }]
 */
export function prefixForms(publisherDomain: string): PrefixFormEntry[] {
  const ascii = canonicalDomain(publisherDomain);
  const unicode = unicodeDomain(ascii);
  const basic = basicPrefix(ascii);
  const specHashed = basic.length > MAX_LABEL_LENGTH;
  const spec = specHashed ? fallbackPrefix(ascii) : basic;
  const candidates: PrefixFormEntry[] = [{ prefix: spec, form: 'spec' }];
  const toolboxAscii = toolboxForm(ascii);
  candidates.push({ prefix: toolboxAscii.prefix, form: 'toolbox' });
  const toolboxUnicode = unicode === ascii ? toolboxAscii : toolboxForm(unicode);
  candidates.push({ prefix: toolboxUnicode.prefix, form: 'toolbox' });
  // Hash forms are listed when some algorithm hashes this domain, and for
  // every IDN: implementations that apply the IDNA Bidi and context rules
  // (amppackager) hash IDNs the guide's algorithm leaves readable.
  if (unicode !== ascii || specHashed || toolboxAscii.hashed || toolboxUnicode.hashed) {
    const hashAscii = fallbackPrefix(ascii);
    candidates.push({ prefix: hashAscii, form: 'hash-ascii' });
    candidates.push({ prefix: unicode === ascii ? hashAscii : fallbackPrefix(unicode), form: 'hash-unicode' });
  }
  if (candidates[1]!.prefix === spec && candidates[2]!.prefix === spec && candidates.length === 3) return [candidates[0]!];
  const seen = new Set<string>();
  return candidates.filter((c) => (seen.has(c.prefix) ? false : (seen.add(c.prefix), true)));
}
