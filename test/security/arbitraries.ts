/**
 * fast-check generators for the attack properties and the fuzzer: publisher
 * domains, look-alikes derived from them, and hostile `Origin` strings.
 */
import { canonicalDomain } from '@ampcors/core';
import fc from 'fast-check';

const LETTERS = 'abcxn0-'.split('');
/** Non-ASCII characters an attacker likes: homographs, full-width forms, invisible characters, dots that IDNA maps to `.`. */
export const TRICKY_CHARS = [
  'а',
  'е',
  'о',
  'ä',
  'é',
  'ｅ',
  'ａ',
  '０',
  '．',
  '。',
  '｡',
  '\u00ad',
  '\u200b',
  '\u200c',
  '\u200d',
  '\ufeff',
  'ß',
  'ς',
  'İ',
  'ı',
  'ש',
  '⚡',
];
const TLDS = ['com', 'org', 'net', 'de', 'co.uk', 'io', 'xn--p1ai', 'example'];

/** A short label over a tiny alphabet, so that hyphen patterns and collisions are frequent. */
const label = fc
  .array(fc.oneof({ weight: 12, arbitrary: fc.constantFrom(...LETTERS) }, { weight: 1, arbitrary: fc.constantFrom(...TRICKY_CHARS) }), {
    minLength: 1,
    maxLength: 8,
  })
  .map((chars) => chars.join(''));
const longLabel = fc.integer({ min: 30, max: 63 }).map((n) => 'ab'.repeat(32).slice(0, n));

/** The canonical form of `text`, or undefined when core refuses it. */
function canonical(text: string): string | undefined {
  try {
    return canonicalDomain(text);
  } catch {
    return undefined;
  }
}

/** A canonical ASCII domain: short tricky labels, sometimes long ones (hashed prefixes), sometimes IDN. */
export const domain = fc
  .tuple(fc.array(fc.oneof({ weight: 6, arbitrary: label }, { weight: 1, arbitrary: longLabel }), { minLength: 1, maxLength: 3 }), fc.constantFrom(...TLDS))
  .map(([labels, tld]) => canonical(`${labels.join('.')}.${tld}`))
  .filter((d): d is string => d !== undefined);

/** Ways an attacker derives a domain they might register from a publisher's. */
const MUTATIONS: ReadonlyArray<(d: string, n: number) => string> = [
  (d) => `evil.${d}`,
  (d) => `${d}.evil.com`,
  (d) => `${d}-evil.com`,
  (d) => `evil-${d}`,
  (d) => `0.${d}`,
  (d) => `${d}.0a`,
  (d) => d.replace('.', '-'),
  (d) => d.replace('-', '.'),
  (d) => d.replace('-', '--'),
  (d) => d.replace('--', '-'),
  (d, n) => `${d.slice(0, n % (d.length + 1))}-${d.slice(n % (d.length + 1))}`,
  (d, n) => `${d.slice(0, n % (d.length + 1))}.${d.slice(n % (d.length + 1))}`,
  (d, n) => d.slice(0, n % d.length) + d.slice((n % d.length) + 1),
  (d, n) => `${d.slice(0, n % (d.length + 1))}${TRICKY_CHARS[n % TRICKY_CHARS.length]}${d.slice(n % (d.length + 1))}`,
  (d) => d.replace('a', 'а'),
  (d) => d.replace(/xn--/, 'xn-'),
  (d) => d.split('.').slice(1).join('.'),
  (d) => `${d.split('.')[0]}.co.uk`,
];

/** A look-alike of `base`: the result is a canonical domain, but not necessarily different from `base`. */
export function lookAlike(base: string): fc.Arbitrary<string | undefined> {
  return fc.tuple(fc.nat(MUTATIONS.length - 1), fc.nat(1000)).map(([which, n]) => canonical((MUTATIONS[which] as (d: string, n: number) => string)(base, n)));
}

/** Fragments of origins, for strings that are nearly valid `Origin` headers. */
export const ORIGIN_PARTS = [
  'https://',
  'http://',
  'HTTPS://',
  '//',
  ':',
  ':443',
  ':80',
  ':8443',
  '.',
  '..',
  '-',
  '--',
  '0-',
  '-0',
  'xn--',
  '@',
  '/',
  '?',
  '#',
  ',',
  ' ',
  '\t',
  '\r\n',
  '\u0000',
  'null',
  'example',
  'example-com',
  'com',
  'cdn.ampproject.org',
  'www.bing-amp.com',
  'bing-amp.com',
  'ampproject.org',
  '[',
  ']',
  '::1',
  '127.0.0.1',
  '0x7f',
  '%2e',
  '\\',
  ...TRICKY_CHARS,
];

/** A string assembled from origin fragments: most inputs get past the first checks of the parser. */
export const originLike = fc.array(fc.oneof(fc.constantFrom(...ORIGIN_PARTS), fc.string({ maxLength: 4 })), { maxLength: 12 }).map((parts) => parts.join(''));

/** Any string: ASCII, full Unicode (lone surrogates included) or a byte string as a server decodes it (latin1). */
export const anyString = fc.oneof(
  fc.string({ maxLength: 80 }),
  fc.string({ unit: 'binary', maxLength: 80 }),
  fc.uint8Array({ maxLength: 120 }).map((bytes) => String.fromCharCode(...bytes)),
  originLike,
);
