// Domain names, prefixes, publisher rules and the allow-set at their edges
// (issue #6, mutation testing): canonicalDomain's refusals with their
// messages and the 63/253/1024 boundaries on both sides, the code-point
// hyphen rule of the guide's prefix, toolboxPrefix against
// @ampproject/toolbox-cache-url itself, the composition of prefixForms, and
// the allow-set's lookup against origins that only resemble cache origins.
import { createRequire } from 'node:module';
import { domainToASCII } from 'node:url';
import {
  AmpCorsError,
  amppackagerPrefix,
  basicPrefix,
  CACHES,
  canonicalDomain,
  createVerifier,
  domainPrefix,
  fallbackPrefix,
  prefixForms,
  type PrefixFormEntry,
  toolboxPrefix,
  unicodeDomain,
} from '@ampcors/core';
import { buildAllowSet, parsePublisherRules } from '@ampcors/core/algorithms';
import fc from 'fast-check';
// Not exported by the package index: the search that says whether its list of claimants is complete.
import { searchClaimants } from '../../src/prefix-claimants.js';
import { describe, expect, it } from 'vitest';
import { errorOf } from './ampcors-error.js';

const toolbox = createRequire(import.meta.url)('@ampproject/toolbox-cache-url') as { createCurlsSubdomain(url: string): Promise<string> };

/** A plain domain of exactly `length` octets: 63-octet labels, then the rest, then ".com". */
function domainOfLength(length: number, letter = 'a'): string {
  const labels: string[] = [];
  let left = length - '.com'.length;
  while (left > 64) {
    labels.push(letter.repeat(63));
    left -= 64;
  }
  labels.push(letter.repeat(left));
  return `${labels.join('.')}.com`;
}

describe('canonicalDomain: refusals name the problem', () => {
  const cases: Array<[string, unknown, RegExp]> = [
    ['a number', 42, /^Invalid domain "42": not a string$/],
    ['undefined', undefined, /^Invalid domain "undefined": not a string$/],
    ['the empty string', '', /^Invalid domain "": empty$/],
    ['a lone dot', '.', /^Invalid domain "\.": empty$/],
    ['an empty label', 'a..com', /^Invalid domain "a\.\.com": empty label$/],
    ['a leading dot', '.example.com', /empty label$/],
    ['a bad character', 'exa mple.com', /label "exa mple" is not letters, digits and inner hyphens$/],
    ['a leading hyphen', '-a.com', /label "-a" is not letters, digits and inner hyphens$/],
    ['an IPv4 address', '1.2.3.4', /an IP address is not a domain$/],
    ['a numeric last label', 'example.123', /an IP address is not a domain$/],
    ['punycode that overflows', 'xn--99999999999.com', /label "xn--99999999999" is not valid punycode of a valid label$/],
    ['punycode decoding to a dot', 'xn--r6j.com', /label "xn--r6j" is not valid punycode of a valid label$/],
    ['punycode decoding to a leading hyphen', 'xn----eha.com', /label "xn----eha" decodes to a label that is not a valid U-label$/],
    ['punycode decoding to a trailing hyphen', 'xn----dha.com', /label "xn----dha" decodes to a label that is not a valid U-label$/],
    ['punycode decoding to a joiner out of context', 'xn--ab-m1t.com', /a zero-width joiner or non-joiner is out of context \(RFC 5892 CONTEXTJ\)$/],
    ['punycode decoding to an ideographic space', 'xn--ab-l13a.com', /label "xn--ab-l13a" is not valid punycode of a valid label$/],
    ['punycode decoding to "--" in positions 3–4', 'xn--ab---3ra.com', /label "xn--ab---3ra" decodes to a label that is not a valid U-label$/],
    ['punycode decoding to "--" in code points 3–4 after an emoji', 'xn--a--b-9b83c.com', /decodes to a label that is not a valid U-label$/],
  ];
  it.each(cases)('%s', (_, domain, message) => {
    const error = errorOf(() => canonicalDomain(domain as string));
    expect(error.code).toBe('invalid-domain');
    expect(error.message).toMatch(message);
  });
  it('quotes at most 80 characters of a long input', () => {
    const domain = `${'a'.repeat(100)}!.com`;
    const message = errorOf(() => canonicalDomain(domain)).message;
    expect(message).toContain(JSON.stringify(`${domain.slice(0, 80)}…`));
    expect(message).not.toContain(domain.slice(0, 81));
    const eighty = `${'b'.repeat(75)}!.com`;
    expect(eighty).toHaveLength(80);
    expect(errorOf(() => canonicalDomain(eighty)).message).toContain(JSON.stringify(eighty));
  });
});

describe('canonicalDomain: boundaries on both sides', () => {
  it('253 octets pass and 254 fail, on the fast path and after lowercasing', () => {
    const d253 = domainOfLength(253);
    const d254 = domainOfLength(254);
    expect(d253).toHaveLength(253);
    expect(canonicalDomain(d253)).toBe(d253);
    expect(canonicalDomain(d253.toUpperCase())).toBe(d253);
    expect(canonicalDomain(`${d253}.`)).toBe(d253);
    expect(errorOf(() => canonicalDomain(d254)).message).toMatch(/longer than 253 octets$/);
    expect(errorOf(() => canonicalDomain(d254.toUpperCase())).message).toMatch(/longer than 253 octets$/);
  });
  it('labels of 63 octets pass and 64 fail', () => {
    expect(canonicalDomain(`${'a'.repeat(63)}.com`)).toBe(`${'a'.repeat(63)}.com`);
    expect(canonicalDomain(`${'A'.repeat(63)}.com`)).toBe(`${'a'.repeat(63)}.com`);
    expect(errorOf(() => canonicalDomain(`${'a'.repeat(64)}.com`)).message).toMatch(/label longer than 63 octets$/);
  });
  it('inputs over 1024 characters are refused before any punycode work; 1024 are judged', () => {
    expect(errorOf(() => canonicalDomain('a'.repeat(1025))).message).toMatch(/longer than 1024 characters$/);
    expect(errorOf(() => canonicalDomain('a'.repeat(1024))).message).toMatch(/longer than 253 octets$/);
  });
  it('"--" in UTF-16 units 3–4 but not in code points 3–4 is a valid U-label', () => {
    expect(canonicalDomain('xn----b-vi33b.com')).toBe('xn----b-vi33b.com'); // "😊--b"
    expect(canonicalDomain('xn----b-goa.com')).toBe('xn----b-goa.com'); // "ü--b"
    expect(canonicalDomain('xn--abc--3ra.com')).toBe('xn--abc--3ra.com'); // "abc-ü": a hyphen in position 4 alone is fine
  });
  it('removes one trailing dot, lowercases, converts IDNs', () => {
    expect(canonicalDomain('WWW.Example.COM.')).toBe('www.example.com');
    expect(canonicalDomain('example.com.')).toBe('example.com');
    expect(canonicalDomain('Bücher.DE')).toBe('xn--bcher-kva.de');
    expect(canonicalDomain('xn--bcher-kva.de')).toBe('xn--bcher-kva.de');
    expect(canonicalDomain('a')).toBe('a');
    expect(errorOf(() => canonicalDomain('example.com..')).message).toMatch(/empty label$/);
  });
});

describe("the guide's prefix: the hyphen rule counts code points", () => {
  it('wraps when code points 3 and 4 are hyphens, even after an astral character', () => {
    // "😊a-b.com" → "😊a--b-com": code points 3–4 are "--" (UTF-16 units 3–4 are not).
    const wrapped = domainPrefix('😊a-b.com');
    expect(wrapped.startsWith('xn--0-')).toBe(true);
    expect(wrapped.endsWith('-0') || /-0-[a-z0-9]+$/.test(wrapped)).toBe(true);
    // "😊-z.com" → "😊--z-com": UTF-16 units 3–4 are "--", code points 3–4 are "-z".
    expect(domainPrefix('😊-z.com').startsWith('xn--0-')).toBe(false);
    expect(basicPrefix(canonicalDomain('😊-z.com'))).toBe(domainPrefix('😊-z.com'));
  });
  it('ASCII domains: doubled hyphens, dots as hyphens, the wrap', () => {
    expect(basicPrefix('en-us.example.com')).toBe('0-en--us-example-com-0');
    expect(basicPrefix('a-b.example.com')).toBe('a--b-example-com');
    expect(basicPrefix('abc-d.com')).toBe('abc--d-com');
  });
});

// Hosts on both sides of every rule toolbox-cache-url applies.
const TOOLBOX_HOSTS = [
  'example.com',
  'a-b.example.com',
  'ab-c.com', // "--" at 3–4 only after doubling: wrapped
  'ab--cd.com', // "--" at 3–4 of the host itself: hashed
  'in--trouble.com',
  'xn--b-c-pla.com', // the hyphen rule exempts "xn…"
  'localhost', // no dot: hashed
  `${'a'.repeat(59)}.com`, // 63 octets: readable
  `${'a'.repeat(60)}.com`, // 64 octets: hashed
  `${'a-'.repeat(25)}a.com`, // 55 octets whose label doubles past 63: hashed
  'xn--bcher-kva.de',
  'bücher.de',
  'xn--4gbrim.com', // right-to-left label and a left-to-right one: hashed
  'مثال.com',
  'مثال.إختبار',
  'hello.xn--4gbrim.xn----rmckbbajlc6dj7bxne2c.xn--wgbh1c',
  // 83 octets in ASCII, so toolbox hashes it; its Unicode form is short, so toolbox's prefix of that is readable.
  'xn--tda.xn--tda.xn--tda.xn--tda.xn--tda.xn--tda.xn--tda.xn--tda.xn--tda.xn--tda.com',
  'ü.ü.ü.ü.ü.ü.ü.ü.ü.ü.com',
];

describe('toolboxPrefix is what @ampproject/toolbox-cache-url 2.10.1 computes', () => {
  it.each(TOOLBOX_HOSTS)('%s', async (host) => {
    expect(toolboxPrefix(host)).toBe(await toolbox.createCurlsSubdomain(`https://${host}`));
  });
});

/**
 * prefixForms by its definition (SPEC §6): spec, toolbox of ASCII and
 * Unicode, amppackager, the ASCII and Unicode hashes (always); first form
 * wins; then a readable form is kept only if no other domain claims it.
 */
function expectedForms(domain: string): PrefixFormEntry[] {
  const ascii = canonicalDomain(domain);
  const unicode = unicodeDomain(ascii);
  const basic = basicPrefix(ascii);
  const all: PrefixFormEntry[] = [
    { prefix: basic.length > 63 ? fallbackPrefix(ascii) : basic, form: 'spec' },
    { prefix: toolboxPrefix(ascii), form: 'toolbox' },
    { prefix: toolboxPrefix(unicode), form: 'toolbox' },
    { prefix: amppackagerPrefix(ascii), form: 'amppackager' },
    { prefix: fallbackPrefix(ascii), form: 'hash-ascii' },
    { prefix: fallbackPrefix(unicode), form: 'hash-unicode' },
  ];
  return all
    .filter((entry, index) => all.findIndex((other) => other.prefix === entry.prefix) === index)
    .filter((entry) => {
      const search = searchClaimants(entry.prefix);
      return search.complete && search.claimants.every((claimant) => claimant.publisherDomain === ascii);
    });
}

const FORM_DOMAINS = [
  ...TOOLBOX_HOSTS.filter((h) => !h.startsWith('hello.')),
  `${'long-publisher-domain-name'.repeat(2)}.example.net`,
  'ab--cd.xn',
  '😊a-b.com',
];

describe('prefixForms lists every form once, in order', () => {
  it.each(FORM_DOMAINS)('%s', (domain) => {
    const forms = prefixForms(domain);
    expect(forms).toEqual(expectedForms(domain));
    expect(new Set(forms.map((f) => f.prefix)).size).toBe(forms.length);
  });
  it('a plain short domain has its readable form and its hash; an IDN has its two hashes', () => {
    expect(prefixForms('example.com')).toEqual([
      { prefix: 'example-com', form: 'spec' },
      { prefix: fallbackPrefix('example.com'), form: 'hash-ascii' },
    ]);
    const idn = prefixForms('bücher.de');
    expect(idn).toContainEqual({ prefix: fallbackPrefix('xn--bcher-kva.de'), form: 'hash-ascii' });
    expect(idn).toContainEqual({ prefix: fallbackPrefix('bücher.de'), form: 'hash-unicode' });
    expect(idn.filter((f) => f.form === 'toolbox')).toEqual([]); // toolbox agrees with the guide here
  });
});

describe('buildAllowSet', () => {
  it.each(FORM_DOMAINS)('lists exactly prefixForms × caches for %s', (domain) => {
    const canonical = canonicalDomain(domain);
    const set = buildAllowSet([canonical], CACHES);
    const expected = prefixForms(canonical).flatMap(({ prefix, form }) =>
      CACHES.map((cache) => [`https://${prefix}.${cache.cacheDomain}`, { publisherDomain: canonical, cache, prefix, form }] as const),
    );
    expect([...set.entries()].sort(([a], [b]) => a.localeCompare(b))).toEqual([...expected].sort(([a], [b]) => a.localeCompare(b)));
    expect(set.size).toBe(expected.length);
    for (const [origin, entry] of expected) expect(set.get(origin)).toEqual(entry);
  });
  it('refuses a domain that is not canonical', () => {
    expect(() => buildAllowSet(['1.2.3.4'], CACHES)).toThrow(AmpCorsError);
  });
  it('matches only the exact cache suffix, never a look-alike of the same length', () => {
    const set = buildAllowSet(['example.com'], CACHES);
    expect(set.get('https://example-com.cdn.ampproject.org')).toBeDefined();
    for (const origin of [
      'https://example-com.cdn.ampproject.net',
      'https://example-com.cdn-ampproject.org',
      'https://example-comxcdn.ampproject.org',
      'https://example-com.www.bing-amp.net',
      'http://example-com.cdn.ampproject.org',
      'https://example-com.cdn.ampproject.org.',
      'https://.cdn.ampproject.org',
      'https://cdn.ampproject.org',
    ]) {
      expect(set.get(origin)).toBeUndefined();
    }
    expect(createVerifier({ publishers: ['example.com'] }).verify('https://example-com.cdn.ampproject.net')).toMatchObject({
      allowed: false,
      reason: 'unknown-origin',
    });
  });
  it('answers undefined, never throws, for a non-string', () => {
    const set = buildAllowSet(['example.com'], CACHES);
    for (const value of [42, null, undefined, {}, ['https://example-com.cdn.ampproject.org']]) expect(set.get(value as never)).toBeUndefined();
  });
  it('reports the first configured domain for a shared prefix, and each cache once', () => {
    const forms = prefixForms('example.com').length;
    const twice = buildAllowSet(['example.com'], [...CACHES, CACHES[0]!]);
    expect(twice.size).toBe(forms * 2);
    const shared = buildAllowSet(['example.com', 'example.com'], CACHES);
    expect(shared.size).toBe(forms * 2);
    expect(shared.get('https://example-com.www.bing-amp.com')).toMatchObject({ publisherDomain: 'example.com', cache: CACHES[1] });
  });
});

describe('parsePublisherRules: refusals name the rule', () => {
  const cases: Array<[string, unknown, string, RegExp]> = [
    ['not an array', 'example.com', 'invalid-option', /^publishers must be an array of domains$/],
    ['a number', [42], 'invalid-domain', /^publishers: 42 is not a string$/],
    ['an invalid domain', ['exa mple.com'], 'invalid-domain', /^publishers: Invalid domain "exa mple\.com": label "exa mple"/],
    ['an invalid wildcard base', ['*.-a.com'], 'invalid-domain', /^publishers: "\*\.-a\.com": Invalid domain "-a\.com"/],
    [
      'a public suffix',
      ['co.uk'],
      'public-suffix-rule',
      /^publishers: "co\.uk" is a public suffix \(Public Suffix List, ICANN section\), not a publisher's domain; a rule may not cover every domain under it$/,
    ],
    [
      'a wildcard public suffix',
      ['*.github.io'],
      'public-suffix-rule',
      /^publishers: "\*\.github\.io" would trust every domain under the public suffix github\.io/,
    ],
    [
      'a cache domain',
      ['cdn.ampproject.org'],
      'publisher-covers-cache',
      /^publishers: "cdn\.ampproject\.org" covers the Google AMP Cache domain cdn\.ampproject\.org, /,
    ],
    ['a wildcard on a cache domain', ['*.cdn.ampproject.org'], 'publisher-covers-cache', /covers the Google AMP Cache domain/],
    ['a domain under a cache', ['a.www.bing-amp.com'], 'publisher-covers-cache', /covers the Bing AMP Cache domain www\.bing-amp\.com, /],
    ['a wildcard above a cache', ['*.bing-amp.com'], 'publisher-covers-cache', /covers the Bing AMP Cache domain/],
  ];
  it.each(cases)('%s', (_, publishers, code, message) => {
    const error = errorOf(() => parsePublisherRules(publishers as string[], CACHES));
    expect(error.code).toBe(code);
    expect(error.message).toMatch(message);
  });
  it('an exact rule above a cache is fine (it trusts that domain only)', () => {
    expect(parsePublisherRules(['bing-amp.com'], CACHES).exact).toEqual(new Set(['bing-amp.com']));
  });
  it('sorts rules into exact domains and wildcard bases, canonicalized', () => {
    const rules = parsePublisherRules(['Example.COM', '*.Example.org', 'bücher.de'], CACHES);
    expect(rules.exact).toEqual(new Set(['example.com', 'xn--bcher-kva.de']));
    expect(rules.wildcard).toEqual(new Set(['example.org']));
  });
});

// canonicalDomain is the host a browser makes (SPEC §6, issue 13), checked
// against Node's url.domainToASCII (ICU's UTS #46, as the WHATWG URL host
// parser applies it) as the oracle. Core refuses more than browsers (LDH
// labels only, U-labels without punctuation or "--" in positions 3–4): a
// refusal is always allowed; an answer must be the oracle's.
describe("canonicalDomain is the browser's host", () => {
  // Node 20's ICU implements an older UTS #46, where U+1E9E (ẞ) maps to "ss";
  // since UTS #46 15.1 (tr46 v6, current browsers' URL standard) it maps to ß.
  // The class is exactly "input containing U+1E9E": there the oracle is asked about ß.
  const oracle = (domain: string) => domainToASCII(domain.replaceAll('\u1e9e', 'ß')).replace(/\.$/, '');
  const PIECES = [
    'a',
    'z',
    'A',
    'Z',
    '0',
    '9',
    '-',
    '--',
    '.',
    'xn--',
    'ß',
    'ς',
    'Σ',
    '\u200d',
    '\u200c',
    '❤',
    '\ufe0f',
    '😊',
    '⚡',
    'ü',
    'u\u0308',
    '\u0301',
    'ｅ',
    'Ａ',
    '０',
    '．',
    '。',
    'ש',
    'ל',
    'ب',
    '٣',
    '۳',
    'ẞ',
    'İ',
    'ı',
    'Ϋ́',
    'ा',
    'क',
    '्',
    '\u00ad',
    'ǅ',
    'ﬃ',
    'ⅽ',
    '℃',
    '_',
    'é',
    'ё',
    '中',
    '\u2060',
    '\u0600',
  ];
  const TLDS = ['com', 'de', 'рф', 'xn--p1ai', 'COM', 'ישראל', 'みんな'];
  const host = fc
    .tuple(
      fc.array(
        fc.array(fc.constantFrom(...PIECES), { minLength: 1, maxLength: 8 }).map((a) => a.join('')),
        { minLength: 1, maxLength: 3 },
      ),
      fc.constantFrom(...TLDS),
      fc.boolean(),
    )
    .map(([labels, tld, dot]) => `${labels.join('.')}.${tld}${dot ? '.' : ''}`);

  it("equals Node's url.domainToASCII (one trailing dot removed) or refuses with invalid-domain", () => {
    let accepted = 0;
    fc.assert(
      fc.property(host, (domain) => {
        let ours: string;
        try {
          ours = canonicalDomain(domain);
        } catch {
          expect(errorOf(() => canonicalDomain(domain)).code).toBe('invalid-domain');
          return;
        }
        accepted++;
        expect(ours, JSON.stringify(domain)).toBe(oracle(domain));
      }),
      { numRuns: 20_000, seed: 46 },
    );
    expect(accepted).toBeGreaterThan(2_000);
  });

  it.each([
    ['❤️.com', 'xn--qei.com'], // the variation selector is ignored
    ['STRAẞE.DE', 'xn--strae-oqa.de'], // ẞ → ß, kept (non-transitional)
    ['Ϋ́.GR', 'xn--lxa.gr'], // lowercase before NFC
    ['faß.de', 'xn--fa-hia.de'],
    ['ΣΑΣ.gr', 'xn--mxa9ab.gr'], // Σ maps to σ, never to the final ς
    ['a\u2060b.com', 'ab.com'], // the word joiner is ignored
    ['ｅｘａｍｐｌｅ.com', 'example.com'], // full-width forms mapped
    ['XN--57HW060O.COM', 'xn--57hw060o.com'],
    ['نامه\u200cای.com', 'xn--mgba3gch31f060k.com'], // ZWNJ in its Persian context
  ])('%s → %s, as browsers', (input, expected) => {
    expect(canonicalDomain(input)).toBe(expected);
    expect(oracle(input)).toBe(expected);
  });

  it.each([
    ['a label starting with a combining mark', '\u0301a.com', /starts with a combining mark$/],
    ['a Bidi rule violation', 'aשלום.com', /breaks the Bidi rule/],
    ['a ZWNJ out of context', 'a\u200cb.com', /CONTEXTJ/],
    ['an A-label of uppercase text (UTS #46 would map it)', 'xn--wca.com', /"xn--wca" is not valid punycode of a valid label$/],
    ['an A-label of decomposed text (not NFC)', 'xn--u-ccb.com', /"xn--u-ccb" is not valid punycode of a valid label$/],
    ['an A-label of full-width letters', 'xn--mi7chab1aes7c.com', /is not valid punycode of a valid label$/],
    ['a name ending in a hex number', 'example.0x1f', /ends in a number/],
    ['a disallowed code point', 'a\ue000b.com', /UTS #46 disallows/],
  ])('refuses %s, as browsers do', (_, input, message) => {
    const error = errorOf(() => canonicalDomain(input));
    expect(error.code).toBe('invalid-domain');
    expect(error.message).toMatch(message);
    expect(domainToASCII(input)).toBe('');
  });
});
