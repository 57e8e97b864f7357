import { toASCII, toUnicode } from 'punycode/punycode.es6.js';
import { AmpCorsError } from './errors.js';

/** Longest domain name in octets (RFC 1035 §2.3.4, without the root dot). */
export const MAX_DOMAIN_LENGTH = 253;
/** Longest DNS label in octets (RFC 2181 §11). */
export const MAX_LABEL_LENGTH = 63;
/** Inputs longer than this are refused before any punycode work is done. */
const MAX_INPUT_LENGTH = 1024;

const LDH_LABEL = /^[a-z0-9](?:[a-z0-9-]*[a-z0-9])?$/;
const ALL_DIGITS = /^[0-9]+$/;
// LDH labels of 1–63 octets, the last one not all digits.
const CANONICAL_ASCII = /^(?:[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?\.)*(?=[a-z0-9-]*[a-z-])[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?$/;
const U_LABEL_FORBIDDEN = /[\p{C}\p{Z}\x00-\x2c\x2e\x2f\x3a-\x40\x5b-\x60\x7b-\x7f]/u;

function invalid(domain: string, why: string): AmpCorsError {
  const shown = domain.length > 80 ? `${domain.slice(0, 80)}…` : domain;
  return new AmpCorsError('invalid-domain', `Invalid domain ${JSON.stringify(shown)}: ${why}`);
}

/**
 * Canonical form of a domain name as ampcors compares and forward-computes it
 * (SPEC §6 "Forward, normative"): IDNA to ASCII (punycode), lowercase, no
 * trailing dot. Unicode input is NFC-normalized and lowercased first.
 *
 * Refused with an `AmpCorsError` of code `invalid-domain`: a non-string, an
 * empty name, an empty label, a label that is not letters, digits and inner
 * hyphens, a label over 63 octets, a name over 253 octets, a `xn--` label that
 * is not valid punycode (or does not round-trip, or decodes to uppercase or
 * non-NFC text) or decodes to an invalid U-label (edge hyphens, `--` in
 * positions 3–4, controls, punctuation), and an all-numeric last label (an
 * IPv4 address is not a domain).
 *
 * @example canonicalDomain('WWW.Example.COM.') // 'www.example.com'
 * @example canonicalDomain('⚡😊.com') // 'xn--57hw060o.com'
 */
export function canonicalDomain(domain: string): string {
  if (typeof domain !== 'string') throw invalid(String(domain), 'not a string');
  // Fast path: an already canonical plain-ASCII name (no punycode labels).
  if (domain.length <= MAX_DOMAIN_LENGTH && CANONICAL_ASCII.test(domain) && !domain.includes('xn--')) return domain;
  if (domain.length === 0) throw invalid(domain, 'empty');
  if (domain.length > MAX_INPUT_LENGTH) throw invalid(domain, `longer than ${MAX_INPUT_LENGTH} characters`);
  let name = domain.endsWith('.') ? domain.slice(0, -1) : domain;
  let ascii: string;
  try {
    ascii = toASCII(name.normalize('NFC').toLowerCase()).toLowerCase();
  } catch {
    throw invalid(domain, 'cannot be converted to ASCII (IDNA)');
  }
  name = ascii;
  if (name.length === 0) throw invalid(domain, 'empty');
  if (name.length > MAX_DOMAIN_LENGTH) throw invalid(domain, `longer than ${MAX_DOMAIN_LENGTH} octets`);
  const labels = name.split('.');
  for (const label of labels) {
    if (label.length === 0) throw invalid(domain, 'empty label');
    if (label.length > MAX_LABEL_LENGTH) throw invalid(domain, `label longer than ${MAX_LABEL_LENGTH} octets`);
    if (!LDH_LABEL.test(label)) throw invalid(domain, `label ${JSON.stringify(label)} is not letters, digits and inner hyphens`);
    if (label.startsWith('xn--')) checkPunycodeLabel(domain, label);
  }
  if (ALL_DIGITS.test(labels[labels.length - 1] as string)) throw invalid(domain, 'an IP address is not a domain');
  return name;
}

function checkPunycodeLabel(domain: string, label: string): void {
  let unicode: string;
  try {
    unicode = toUnicode(label);
  } catch {
    throw invalid(domain, `label ${JSON.stringify(label)} is not valid punycode`);
  }
  // A valid A-label decodes to something non-ASCII and encodes back to itself.
  let back: string;
  try {
    back = toASCII(unicode);
  } catch {
    throw invalid(domain, `label ${JSON.stringify(label)} is not valid punycode`);
  }
  // It must also be what IDNA maps it to (lowercase, NFC), as browsers require.
  if (back !== label || !/[^\x00-\x7f]/.test(unicode) || unicode !== unicode.normalize('NFC').toLowerCase()) {
    throw invalid(domain, `label ${JSON.stringify(label)} is not valid punycode`);
  }
  // RFC 5891 §4.2.3.1: a U-label neither begins nor ends with a hyphen, has
  // no hyphens in both its third and fourth positions (so it is never itself
  // an `xn--` label), and holds no control, format (bidi marks, joiners),
  // unassigned, separator or ASCII punctuation code points.
  const points = Array.from(unicode.slice(0, 8));
  if (unicode.startsWith('-') || unicode.endsWith('-') || (points[2] === '-' && points[3] === '-') || U_LABEL_FORBIDDEN.test(unicode)) {
    throw invalid(domain, `label ${JSON.stringify(label)} decodes to a label that is not a valid U-label`);
  }
}

/** Unicode form of a canonical (ASCII) domain: each `xn--` label decoded. */
export function unicodeDomain(asciiDomain: string): string {
  return asciiDomain.includes('xn--') ? toUnicode(asciiDomain) : asciiDomain;
}
