// fast-check generators of publisher domains shared by the core property tests.
import fc from 'fast-check';
import { getDomain } from 'tldts';
import { canonicalDomain } from '../src/index.js';

const ASCII = 'abcdefghijklmnopqrstuvwxyz0123456789'.split('');
const UNICODE = ['ä', 'ö', 'ü', 'é', 'ñ', 'ç', 'ı', 'ø', 'å', 'я', 'ж', 'ω', 'λ', '中', '文', '日', '本', '⚡', '😊', 'ب', 'ש', '٣', 'ก', 'ह', 'ी'];

/** An ASCII LDH label with the hyphen patterns that matter (`--`, hyphens at 3–4). */
export const asciiLabel = fc
  .tuple(
    fc.array(fc.constantFrom(...ASCII), { minLength: 1, maxLength: 12 }).map((a) => a.join('')),
    fc.constantFrom('', '-', '--', '---'),
    fc.array(fc.constantFrom(...ASCII), { minLength: 0, maxLength: 12 }).map((a) => a.join('')),
  )
  .map(([a, h, b]) => (b === '' ? a : `${a}${h}${b}`));

/** A label with some non-ASCII letters (an IDN label once encoded). */
export const unicodeLabel = fc
  .array(fc.oneof(fc.constantFrom(...UNICODE), fc.constantFrom(...ASCII), fc.constant('-')), { minLength: 1, maxLength: 10 })
  .map((a) => a.join(''));

/** A long label, to reach the 63-octet limit of the prefix. */
export const longLabel = fc.integer({ min: 20, max: 63 }).map((n) => 'abcdefghij'.repeat(7).slice(0, n));

const TLDS = ['com', 'org', 'net', 'de', 'co.uk', 'jp', 'io', 'xn--p1ai'];

/** A canonical ASCII publisher domain (ASCII, IDN, hyphen patterns, long labels). */
export const publisherDomain = fc
  .tuple(
    fc.array(fc.oneof({ weight: 5, arbitrary: asciiLabel }, { weight: 2, arbitrary: unicodeLabel }, { weight: 1, arbitrary: longLabel }), {
      minLength: 1,
      maxLength: 4,
    }),
    fc.constantFrom(...TLDS),
  )
  .map(([labels, tld]) => {
    try {
      return canonicalDomain(`${labels.join('.')}.${tld}`);
    } catch {
      return undefined;
    }
  })
  // A registrable domain only (`in.net` is a private suffix, which createVerifier refuses).
  .filter((d): d is string => d !== undefined && getDomain(d, { allowPrivateDomains: true }) !== null);
