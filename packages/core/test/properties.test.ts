// Property tests of SPEC §4 and §6: the reverse algorithm inverts the forward
// one, and no origin derived from a domain outside the configured set is
// ever allowed, in any prefix form, on any cache.
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  AmpCorsError,
  amppackagerPrefix,
  basicPrefix,
  CACHES,
  cacheOrigin,
  canonicalDomain,
  createVerifier,
  domainPrefix,
  fallbackPrefix,
  prefixForms,
  reverseOrigin,
  toolboxPrefix,
  unicodeDomain,
} from '../src/index.js';
import { allPrefixForms, hashedPrefixForms, prefixClaimants, readableFormOf, readableFormsOf, readablePrefixForms } from '../src/algorithms.js';
import { hashFormsOf } from '../src/domain-prefix.js';
import { plainPrefixClaimants, searchClaimants, searchReadings } from '../src/prefix-claimants.js';
import { encode as punycodeEncode } from 'punycode/punycode.es6.js';
import { publisherDomain } from './arbitraries.js';

/** True when createVerifier refuses `domain` (or `*.domain`) as a rule on a public suffix. */
function isPublicSuffixRule(domain: string, wildcard: boolean): boolean {
  try {
    createVerifier({ publishers: [wildcard ? `*.${domain}` : domain] });
    return false;
  } catch (error) {
    if (error instanceof AmpCorsError && error.code === 'public-suffix-rule') return true;
    throw error;
  }
}

describe('round trip (SPEC §4)', () => {
  it('reverseOrigin(cacheOrigin(d)).publisherDomain === d for every human-readable prefix', () => {
    let readable = 0;
    fc.assert(
      fc.property(publisherDomain, fc.constantFrom(...CACHES), (domain, cache) => {
        const origin = cacheOrigin(domain, cache);
        const reversed = reverseOrigin(origin);
        if (!domainPrefix(domain).includes('-')) {
          expect(reversed).toMatchObject({ ok: true, hashed: true });
          return;
        }
        readable++;
        expect(reversed).toMatchObject({ ok: true, hashed: false, publisherDomain: domain, form: 'spec', cache });
      }),
      { numRuns: 1000 },
    );
    expect(readable).toBeGreaterThan(500);
  });
});

describe('attacks (SPEC §6)', () => {
  it('no origin derived from a domain outside the allowed set is allowed', () => {
    fc.assert(
      fc.property(
        fc.uniqueArray(publisherDomain, { minLength: 1, maxLength: 6 }),
        fc.array(publisherDomain, { minLength: 1, maxLength: 6 }),
        fc.boolean(),
        (allowed, others, wildcard) => {
          // A generated name may be a public suffix (`ae.org` is one, PSL private section): no configuration, skip the run.
          fc.pre(allowed.every((d) => !isPublicSuffixRule(d, wildcard)));
          const verifier = createVerifier({ publishers: wildcard ? allowed.map((d) => `*.${d}`) : allowed });
          const covered = (d: string) => allowed.some((a) => d === a || (wildcard && d.endsWith(`.${a}`)));
          for (const other of others) {
            if (covered(other)) continue;
            for (const cache of CACHES) {
              for (const { prefix } of prefixForms(other)) {
                // A different allowed domain may legitimately share a form (SPEC §6 notes it for 0-…-0).
                const sharedWithAllowed = allowed.some((a) => prefixForms(a).some((f) => f.prefix === prefix));
                if (sharedWithAllowed) continue;
                const verdict = verifier.verify(`https://${prefix}.${cache.cacheDomain}`);
                expect(verdict.allowed, `${other} via ${prefix}.${cache.cacheDomain}`).toBe(false);
              }
            }
            expect(verifier.verify(`https://${other}`).allowed).toBe(false);
            expect(verifier.verify(`http://${other}`).allowed).toBe(false);
          }
          // …while every form of every allowed domain is allowed.
          if (!wildcard) {
            for (const a of allowed) {
              for (const { prefix } of prefixForms(a)) {
                expect(verifier.verify(`https://${prefix}.${CACHES[0]!.cacheDomain}`).allowed).toBe(true);
              }
            }
          }
        },
      ),
      { numRuns: 150 },
    );
  });

  it('look-alikes built from an allowed domain are denied', () => {
    fc.assert(
      fc.property(publisherDomain, fc.constantFrom('evil-', '-evil', 'evil--', '--evil', '0-', '-0', '-', 'x'), fc.boolean(), (domain, junk, before) => {
        const verifier = createVerifier({ publishers: [domain] });
        const prefix = domainPrefix(domain);
        const forged = before ? `${junk}${prefix}` : `${prefix}${junk}`;
        fc.pre(!prefixForms(domain).some((f) => f.prefix === forged));
        expect(verifier.verify(`https://${forged}.cdn.ampproject.org`).allowed).toBe(false);
        expect(verifier.verify(`https://${prefix}.cdn.ampproject.org.evil.com`).allowed).toBe(false);
        expect(verifier.verify(`https://${prefix}.evil.com`).allowed).toBe(false);
        expect(verifier.verify(`https://${prefix}.cdn.ampproject.org.`).allowed).toBe(false);
        expect(verifier.verify(`https://${prefix.toUpperCase()}.cdn.ampproject.org`).allowed).toBe(prefix === prefix.toUpperCase());
      }),
      { numRuns: 300 },
    );
  });

  it('verify never throws on arbitrary strings, and never allows a non-canonical header', () => {
    const verifier = createVerifier({ publishers: ['example.com', '*.example.org'] });
    fc.assert(
      fc.property(
        fc.oneof(
          fc.string({ unit: 'binary', maxLength: 400 }),
          fc.string({ maxLength: 64 }).map((s) => `https://${s}.cdn.ampproject.org`),
          fc.string({ unit: 'grapheme', maxLength: 40 }).map((s) => `https://${s}-example-com.cdn.ampproject.org`),
          fc.constantFrom(
            'https://xn--.cdn.ampproject.org',
            'https://xn---.cdn.ampproject.org',
            'https://xn--zz-.cdn.ampproject.org',
            'https://xn--9999999999999.cdn.ampproject.org',
          ),
        ),
        fc.option(fc.string({ maxLength: 20 })),
        (origin, sameOrigin) => {
          const verdict = verifier.verify(origin, { ampSameOrigin: sameOrigin });
          expect(typeof verdict.allowed).toBe('boolean');
          expect(typeof verdict.reason).toBe('string');
          if (verdict.allowed && origin !== '') expect(origin).toMatch(/^https:\/\/[a-z0-9.-]+$/);
        },
      ),
      { numRuns: 3000 },
    );
  });

  it('a 64 kB header, control characters and invalid punycode are denied with a reason', () => {
    const verifier = createVerifier({ publishers: ['example.com'] });
    const cases: Array<[string, string]> = [
      [`https://${'a'.repeat(65536)}.cdn.ampproject.org`, 'too-long'],
      ['https://example-com.cdn.ampproject.org\r\nX: y', 'control-character'],
      ['https://example-com.cdn.ampproject.org\u0000', 'control-character'],
      [' https://example-com.cdn.ampproject.org', 'control-character'],
      ['https://xn--9999999999999.cdn.ampproject.org', 'invalid-punycode'],
      ['https://xn--a.cdn.ampproject.org', 'invalid-domain'],
      ['https://example-com.cdn.ampproject.org, https://evil.com', 'list'],
      ['null', 'null-origin'],
    ];
    for (const [origin, reason] of cases) expect(verifier.verify(origin)).toMatchObject({ allowed: false, reason });
  });
});

describe('canonical domains are total (SPEC §6)', () => {
  it('refuses an A-label whose U-label is itself an xn-- label (found by the attack properties)', () => {
    // 'xn--xn--a0cn0c-fvaa-jds' decodes to a U-label starting "xn--": RFC 5891
    // §4.2.3.1 forbids hyphens in positions 3 and 4 of a U-label.
    expect(() => canonicalDomain('xn--xn--a0cn0c-fvaa-jds.com')).toThrow(/"xn--xn--a0cn0c-fvaa-jds" is not valid punycode of a valid label/);
    expect(() => createVerifier({ publishers: ['xn--xn--a0cn0c-fvaa-jds.com'] })).toThrow(AmpCorsError);
    expect(() => canonicalDomain('ab--ü.com')).toThrow(/not a valid U-label/);
    expect(unicodeDomain(canonicalDomain('abc-ü.com'))).toBe('abc-ü.com');
  });

  it('every domain canonicalDomain accepts has its prefix forms and can be configured', () => {
    const punycodeish = fc.array(fc.constantFrom('x', 'n', '-', 'a', '0', 'ü', 'ß', 'ש', '⚡'), { minLength: 1, maxLength: 14 }).map((chars) => chars.join(''));
    fc.assert(
      fc.property(punycodeish, fc.boolean(), (text, encode) => {
        let domain: string;
        try {
          domain = canonicalDomain(encode ? `xn--${text}.example.com` : `${text}.example.com`);
        } catch (error) {
          expect(error).toBeInstanceOf(AmpCorsError);
          return;
        }
        // Every accepted form is allowed (the hashes always are); the guide's
        // prefix is denied only when another domain also has it.
        const forms = prefixForms(domain);
        expect(forms.length).toBeGreaterThan(0);
        const verifier = createVerifier({ publishers: [domain] });
        for (const { prefix } of forms) expect(verifier.verify(`https://${prefix}.cdn.ampproject.org`).allowed).toBe(true);
        if (!verifier.verify(cacheOrigin(domain)).allowed) {
          const search = searchClaimants(domainPrefix(domain));
          expect(!search.complete || search.claimants.some((c) => c.publisherDomain !== domain)).toBe(true);
        }
      }),
      { numRuns: 3000 },
    );
  });
});

describe('A-labels browsers refuse', () => {
  it('refuses an A-label that decodes to uppercase or non-NFC text (the WHATWG URL parser refuses both)', () => {
    for (const domain of ['xn--wca.com', 'xn--u-ccb.com']) {
      expect(() => canonicalDomain(domain), domain).toThrow(/not valid punycode/);
      expect(() => new URL(`https://${domain}/`), domain).toThrow();
    }
    expect(canonicalDomain('Ü.com')).toBe(canonicalDomain('ü.com'));
    expect(() => new URL(`https://${canonicalDomain('ü.com')}/`)).not.toThrow();
  });
});

describe('each rule once: the twins agree', () => {
  // readablePrefixForms has a plain-domain fast path (the allow-set's build
  // path: string replacements, no punycode) that restates basicPrefix,
  // toolboxPrefix and amppackagerPrefix: it must give what they give.
  const plainLabel = fc.stringMatching(/^[a-z0-9](?:[a-z0-9-]{0,20}[a-z0-9])?$/);
  const plain = fc
    .tuple(
      fc.array(fc.oneof(plainLabel, fc.constantFrom('en-us', 'ab--cd', 'a--b', 'xn-a', 'xnab--c', 'x', 'a'.repeat(63))), { minLength: 0, maxLength: 4 }),
      fc.constantFrom('com', 'co.uk', 'ab--cd', 'de'),
    )
    .map(([labels, tld]) => [...labels, tld].join('.'))
    .filter((domain) => {
      try {
        return canonicalDomain(domain) === domain;
      } catch {
        return false;
      }
    });

  it('readable forms: the plain fast path agrees with the algorithms', () => {
    fc.assert(
      fc.property(fc.oneof(plain, publisherDomain), (domain) => {
        expect(readablePrefixForms(domain)).toEqual(readableFormsOf(domain));
      }),
      { numRuns: 3000 },
    );
  });

  it('hashFormsOf names each hash as hashedPrefixForms does (the allow-set names a digest hit with it)', () => {
    fc.assert(
      fc.property(fc.oneof(plain, publisherDomain), (domain) => {
        const forms = hashFormsOf(domain);
        const unicode = unicodeDomain(domain);
        const named = new Map(hashedPrefixForms(domain).map((entry) => [entry.prefix, entry.form]));
        expect(named.get(fallbackPrefix(domain))).toBe(forms.ascii);
        expect(forms.unicode).toBe(unicode === domain ? undefined : named.get(fallbackPrefix(unicode)));
      }),
      { numRuns: 1500 },
    );
  });

  it('plain prefixes: the fast path agrees with the search', () => {
    // Prefixes near the fast path's every boundary: runs of 1–4 hyphens, edge hyphens, `xn`, the 0-…-0 wrap,
    // hyphens at 3–4, digits in the last label, 62–64 octets; and the prefixes of real domains.
    const piece = fc.constantFrom('a', 'b', 'ab', 'com', 'org', 'de', '0', '9', 'x', 'xn', 'n', '-', '--', '---', '----', 'www', 'a'.repeat(30));
    const prefix = fc.oneof(
      fc.array(piece, { minLength: 1, maxLength: 8 }).map((pieces) => pieces.join('')),
      publisherDomain.map((domain) => readablePrefixForms(domain)[0]?.prefix ?? 'a-b'),
    );
    let plain = 0;
    fc.assert(
      fc.property(prefix, (p) => {
        const fast = plainPrefixClaimants(p);
        const general = searchReadings(p);
        if (fast === undefined) return;
        plain++;
        expect(general).toEqual({ claimants: fast, complete: true });
        // And searchClaimants, which takes the fast path, stops where the general search stops.
        expect(searchClaimants(p, () => true)).toEqual(searchReadings(p, () => true));
      }),
      { numRuns: 4000 },
    );
    expect(plain).toBeGreaterThan(400);
  });

  it('simple IDN prefixes: the fast path agrees with the search (one or two claimants, or none taken)', () => {
    // Labels of ASCII pieces and code points on each side of the fast path's rules: simple letters (Latin,
    // Cyrillic, CJK, Hangul syllables, ß and ς, which browsers keep), and what it must leave to the search:
    // uppercase and mapped letters (Ü, ſ, ŀ, the Ohm sign, a ligature), a combining mark, a Hangul jamo that
    // composes with the syllable before it, right-to-left letters and an Arabic digit, joiners, a non-BMP letter.
    const ascii = fc.constantFrom('a', 'b', 'de', 'com', 'org', 'x', 'xn', 'n', '0', '9', '-', '-', '--', 'www');
    const wide = fc.constantFrom(...'üéøÿıßςёж日本가각·', 'Ü', 'ſ', 'ŀ', '\u2126', 'ﬁ', '\u0301', '\u11a8', 'א', 'ب', '٣', '\u200d', '\u200c', '𝒜');
    const label = fc
      .array(fc.oneof({ arbitrary: ascii, weight: 3 }, { arbitrary: wide, weight: 1 }), { minLength: 2, maxLength: 9 })
      .map((pieces) => pieces.join(''));
    const prefix = fc.oneof(
      label.map((l) => `xn--${punycodeEncode(l)}`),
      // The guide's prefixes of IDN names: with their digit or letter endings, one claimant or two.
      fc
        .tuple(fc.stringMatching(/^[a-z]{1,6}$/), fc.constantFrom('ü', 'é', 'ж', '日', 'üé', 'ß'), fc.constantFrom('de', 'com', 'example-org'))
        .map(([word, letter, tld]) => `xn--${punycodeEncode(`${word}${letter}-${tld}`)}`),
    );
    let one = 0;
    let two = 0;
    fc.assert(
      fc.property(prefix, (p) => {
        const fast = plainPrefixClaimants(p);
        if (fast === undefined) return;
        if (fast.length === 1) one++;
        else two++;
        expect(searchReadings(p)).toEqual({ claimants: fast, complete: true });
        expect(searchClaimants(p, () => true)).toEqual(searchReadings(p, () => true));
        expect(searchClaimants(p, (c) => c.form === 'toolbox')).toEqual(searchReadings(p, (c) => c.form === 'toolbox'));
      }),
      { numRuns: 3000 },
    );
    expect(one).toBeGreaterThan(100);
    expect(two).toBeGreaterThan(100);
  });

  it('readable forms are the dashed forms of allPrefixForms, with the forms the algorithms give', () => {
    fc.assert(
      fc.property(fc.oneof(plain, publisherDomain), (domain) => {
        const all = allPrefixForms(domain);
        const readable = readablePrefixForms(domain);
        expect(readable.map((f) => f.prefix)).toEqual(all.filter((f) => f.prefix.includes('-')).map((f) => f.prefix));
        const computed = new Set([basicPrefix(domain), toolboxPrefix(domain), toolboxPrefix(unicodeDomain(domain)), amppackagerPrefix(domain)]);
        for (const { prefix } of readable) expect(computed.has(prefix)).toBe(true);
      }),
      { numRuns: 1500 },
    );
  });

  it('the allow-set\'s claimant fast path: a domain without "xn-" or "--" has no other claimant for any of its forms, edge-hyphen twins included', () => {
    // Plain names with hyphens next to each other or next to dots, so that edge-hyphen readings are tried.
    const hyphenated = fc
      .array(fc.constantFrom('a', 'b', 'ab', 'a-b', 'en-us', 'x-n', '0-a', 'a-0', 'xn'), { minLength: 2, maxLength: 4 })
      .map((labels) => `${labels.join('.')}.com`);
    fc.assert(
      fc.property(fc.oneof(plain, publisherDomain, hyphenated), (domain) => {
        for (const { prefix } of readablePrefixForms(domain)) {
          const others = prefixClaimants(prefix).filter((c) => c.publisherDomain !== domain);
          if (!domain.includes('xn-') && !domain.includes('--')) expect(others).toEqual([]);
          // A domain that could exist (two labels, a top-level domain of letters or an A-label) claims its own forms.
          if (/\.(?:[a-z]+|xn--[a-z0-9-]+)$/.test(domain)) expect(prefixClaimants(prefix).map((c) => c.publisherDomain)).toContain(domain);
        }
      }),
      { numRuns: 1500 },
    );
    // `a-b.c` (prefix `a--b-c`) has no edge-hyphen twin; `a-.b.com` and `a.-b.com` (no canonical domains, but browser
    // hosts) share `0-a---b-com-0` (wrapped: hyphens at 3–4), and `a---b-com` is nobody's.
    expect(prefixClaimants('a--b-c').map((c) => c.publisherDomain)).toEqual(['a-b.c']);
    expect(prefixClaimants('0-a---b-com-0').map((c) => c.publisherDomain)).toEqual(['a-.b.com', 'a.-b.com']);
    expect(prefixClaimants('a---b-com')).toEqual([]);
    // A plain domain with "--" is outside the fast path: `ab.-.cd.com` spells its prefix too.
    expect(prefixClaimants('0-ab----cd-com-0').map((c) => c.publisherDomain)).toEqual(['ab--cd.com', 'ab.-.cd.com']);
  });
});

describe('each rule once: the hashed forms', () => {
  it('hashedPrefixForms lists the dash-free forms of allPrefixForms, same names, same order', () => {
    fc.assert(
      fc.property(publisherDomain, (domain) => {
        expect(hashedPrefixForms(domain)).toEqual(allPrefixForms(domain).filter((f) => !f.prefix.includes('-')));
      }),
      { numRuns: 1500 },
    );
    for (const domain of [
      'localhost',
      `${'a'.repeat(40)}.${'b'.repeat(30)}.com`,
      'ab--cd.com',
      'in--trouble.com',
      'www.ab--cd.example.com',
      'xn--4gbrim.com',
      'xn----a-vi33b.a.com',
    ]) {
      expect(hashedPrefixForms(domain)).toEqual(allPrefixForms(domain).filter((f) => !f.prefix.includes('-')));
    }
  });
});

describe('each rule once: one prefix at a time', () => {
  it('readableFormOf gives the form readablePrefixForms lists for that prefix, for every prefix of every algorithm', () => {
    fc.assert(
      fc.property(publisherDomain, (domain) => {
        const forms = readablePrefixForms(domain);
        for (const { prefix } of allPrefixForms(domain)) expect(readableFormOf(domain, prefix)).toBe(forms.find((f) => f.prefix === prefix)?.form);
        expect(readableFormOf(domain, `${domainPrefix(domain)}x`)).toBeUndefined();
      }),
      { numRuns: 1500 },
    );
  });
});
