import { toUnicode } from 'punycode/punycode.es6.js';
import { toASCII as uts46ToASCII, type Tr46Options } from 'tr46';
import { AmpCorsError } from './errors.js';

/** Longest domain name in octets (RFC 1035 §2.3.4, without the root dot). */
export const MAX_DOMAIN_LENGTH = 253;
/** Longest DNS label in octets (RFC 2181 §11). */
export const MAX_LABEL_LENGTH = 63;
/** Inputs longer than this are refused before any UTS #46 work is done. */
const MAX_INPUT_LENGTH = 1024;

const LDH_LABEL = /^[a-z0-9](?:[a-z0-9-]*[a-z0-9])?$/;
// Letters, digits and hyphens anywhere: what a browser accepts (WHATWG URL: CheckHyphens=false) and DNS holds.
const BROWSER_LABEL = /^[a-z0-9-]+$/;
// LDH labels of 1–63 octets, the last one not all digits.
const CANONICAL_ASCII = /^(?:[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?\.)*(?=[a-z0-9-]*[a-z-])[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?$/;
// WHATWG URL "ends in a number": a last label of digits, or `0x` + hex digits, makes the host an IPv4 address.
const NUMERIC_LAST_LABEL = /(?:^|\.)(?:[0-9]+|0x[0-9a-f]*)$/;
const U_LABEL_FORBIDDEN = /[\p{C}\p{Z}\x00-\x2c\x2e\x2f\x3a-\x40\x5b-\x60\x7b-\x7f]/u;
const JOINERS = /[\u200c\u200d]/g;
const COMBINING_MARK_START = /^\p{M}/u;

/**
 * UTS #46 options of the WHATWG URL host parser ("domain to ASCII" with
 * beStrict false): non-transitional (`ß`, `ς`, ZWJ and ZWNJ are kept), the
 * Bidi rule (RFC 5893) and the CONTEXTJ rules (RFC 5892), no hyphen, STD3 or
 * length checks (ampcors applies its own below).
 */
const BROWSER_UTS46: Tr46Options = {
  checkBidi: true,
  checkJoiners: true,
  checkHyphens: false,
  useSTD3ASCIIRules: false,
  verifyDNSLength: false,
  transitionalProcessing: false,
};

function invalid(domain: string, why: string): AmpCorsError {
  const shown = domain.length > 80 ? `${domain.slice(0, 80)}…` : domain;
  return new AmpCorsError('invalid-domain', `Invalid domain ${JSON.stringify(shown)}: ${why}`);
}

/** Why UTS #46 refused `name`, found by relaxing one check at a time (error path only). */
function uts46Refusal(name: string): string {
  const labels = name.split('.');
  for (const label of labels) {
    if (/^xn--/i.test(label) && uts46ToASCII(label, { ...BROWSER_UTS46, checkBidi: false, checkJoiners: false }) === null) {
      return `label ${JSON.stringify(label)} is not valid punycode of a valid label`;
    }
  }
  if (labels.some((label) => COMBINING_MARK_START.test(label.normalize('NFC')))) return 'a label starts with a combining mark';
  if (uts46ToASCII(name, { ...BROWSER_UTS46, checkBidi: false }) !== null)
    return 'it breaks the Bidi rule (RFC 5893): right-to-left labels mixed with left-to-right text';
  if (uts46ToASCII(name, { ...BROWSER_UTS46, checkJoiners: false }) !== null) return 'a zero-width joiner or non-joiner is out of context (RFC 5892 CONTEXTJ)';
  return 'it holds a character UTS #46 disallows (browsers refuse this host)';
}

/**
 * Canonical form of a domain name: the host a browser puts in `Origin` for
 * it (SPEC §6 "Canonical publisher domain = the browser's host"). UTS #46
 * processing as the WHATWG URL host parser does it — mapping (lowercase,
 * compatibility forms, ignored characters such as variation selectors),
 * non-transitional (`ß` and `ς` kept), NFC, the Bidi and CONTEXTJ rules —
 * then IDNA to ASCII. One trailing dot (the root) is removed. Already
 * canonical plain-ASCII names take a fast path.
 *
 * Refused with an `AmpCorsError` of code `invalid-domain`: what browsers
 * refuse (disallowed code points, a label starting with a combining mark,
 * Bidi or joiner violations, `xn--` labels that are not valid punycode or
 * whose content UTS #46 would map, a name ending in a number, which is an
 * IPv4 address) and, stricter than browsers, what no AMP cache can serve: an
 * empty name or label, a label that is not letters, digits and inner
 * hyphens, a label over 63 octets, a name over 253 octets, and a U-label
 * with edge hyphens, `--` in positions 3–4, or punctuation.
 *
 * @example canonicalDomain('WWW.Example.COM.') // 'www.example.com'
 * @example canonicalDomain('❤️.com') // 'xn--qei.com' (the variation selector is ignored)
 * @example canonicalDomain('STRAẞE.DE') // 'xn--strae-oqa.de'
 */
export function canonicalDomain(domain: string): string {
  if (typeof domain !== 'string') throw invalid(String(domain), 'not a string');
  const checked = checkHost(domain, true);
  if (checked.why !== undefined)
    throw invalid(domain, checked.why === UTS46_REFUSED ? uts46Refusal(domain.endsWith('.') ? domain.slice(0, -1) : domain) : checked.why);
  return checked.ascii;
}

/**
 * The host a browser makes of `name` if it is one that could hold a
 * publisher page, else `undefined` (never throws): as {@link canonicalDomain}
 * but without its restrictions that go beyond browsers: `--` in positions
 * 3–4, punctuation in a U-label, and labels (or U-labels) that start or end
 * with a hyphen — browsers accept them (the WHATWG URL standard runs UTS #46
 * with CheckHyphens=false) and DNS holds them (`xn-.com.fxl`, `a.-.b.com`).
 * Labels are letters, digits and hyphens of 1–63 octets. Because a label may
 * now start or end with `-`, the SPEC §2 replacement of `-` and `.` is no
 * longer one-to-one (`a-.b` and `a.-b` both spell `a---b`): the claimant
 * search reads every hyphen run every way (SPEC §6).
 * Used to enumerate every domain that may claim a cache prefix (SPEC §6).
 */
export function browserHost(name: string): string | undefined {
  return checkHost(name, false).ascii;
}

/**
 * Fast path: an already canonical plain-ASCII name is its own UTS #46 form
 * (lowercase LDH code points are valid and unmapped; no Bidi, no joiners).
 */
function isCanonicalAscii(domain: string): boolean {
  return domain.length <= MAX_DOMAIN_LENGTH && CANONICAL_ASCII.test(domain) && !domain.includes('xn--') && !NUMERIC_LAST_LABEL.test(domain);
}

/** UTS #46 refused the name: canonicalDomain then finds out why (error path only, never on a request). */
const UTS46_REFUSED = 'refused by UTS #46';
const ASCII_WITHOUT_A_LABEL = /^(?![\s\S]*(?:^|\.)xn--)[\x00-\x7f]*$/i;

/** A host as a browser makes it, or why it is refused. */
type HostCheck = { readonly ascii: string; readonly why?: undefined } | { readonly ascii?: undefined; readonly why: string };

function checkHost(domain: string, strict: boolean): HostCheck {
  if (isCanonicalAscii(domain)) return { ascii: domain };
  if (domain.length === 0) return { why: 'empty' };
  if (domain.length > MAX_INPUT_LENGTH) return { why: `longer than ${MAX_INPUT_LENGTH} characters` };
  const name = domain.endsWith('.') ? domain.slice(0, -1) : domain;
  if (name.length === 0) return { why: 'empty' };
  // ASCII without an `xn--` label: UTS #46 only lowercases it (every other
  // ASCII code point is valid in non-STD3 processing; no Bidi, no joiners).
  const ascii = ASCII_WITHOUT_A_LABEL.test(name) ? name.toLowerCase() : uts46ToASCII(name, BROWSER_UTS46);
  if (ascii === null) return { why: UTS46_REFUSED };
  if (ascii.length > MAX_DOMAIN_LENGTH) return { why: `longer than ${MAX_DOMAIN_LENGTH} octets` };
  const labels = ascii.split('.');
  for (const label of labels) {
    if (label.length === 0) return { why: 'empty label' };
    if (label.length > MAX_LABEL_LENGTH) return { why: `label longer than ${MAX_LABEL_LENGTH} octets` };
    if (!(strict ? LDH_LABEL : BROWSER_LABEL).test(label)) return { why: `label ${JSON.stringify(label)} is not letters, digits and inner hyphens` };
    if (label.startsWith('xn--') && !validULabel(label, strict))
      return { why: `label ${JSON.stringify(label)} decodes to a label that is not a valid U-label` };
  }
  if (NUMERIC_LAST_LABEL.test(ascii)) return { why: 'it ends in a number: an IP address is not a domain' };
  return { ascii };
}

/**
 * RFC 5891 §4.2.3.1, on top of what UTS #46 checked, and only `strict`
 * (beyond browsers, which skip the hyphen checks): a U-label neither begins
 * nor ends with a hyphen, has no hyphens in both its third and fourth
 * positions (so it is never itself an `xn--` label) and holds no control,
 * format, separator or ASCII punctuation code point other than the joiners
 * (which passed CONTEXTJ).
 */
function validULabel(label: string, strict: boolean): boolean {
  if (!strict) return true;
  const unicode = toUnicode(label);
  if (unicode.startsWith('-') || unicode.endsWith('-')) return false;
  const points = Array.from(unicode.slice(0, 8));
  return !(points[2] === '-' && points[3] === '-') && !U_LABEL_FORBIDDEN.test(unicode.replace(JOINERS, ''));
}

/** Unicode form of a canonical (ASCII) domain: each `xn--` label decoded. */
export function unicodeDomain(asciiDomain: string): string {
  return asciiDomain.includes('xn--') ? toUnicode(asciiDomain) : asciiDomain;
}
