import fc from 'fast-check';
import { getDomain } from 'tldts';
import { describe, expect, it } from 'vitest';
import { mixHash, stringHash } from '../src/allow-set.js';
import { cacheIndexOf, plainCacheOriginOf } from '../src/cache-origin.js';
import { matchesPublisher, parsePublisherRules } from '../src/publisher-rules.js';
import { plainAsciiReading, plainPrefixClaimants, searchReadings } from '../src/prefix-claimants.js';
import { PSL_ANCESTORS } from '../src/psl-ancestors.js';
import { type AmpCache, AmpCorsError, CACHES, canonicalDomain, createVerifier, domainPrefix, prefixForms, type Verdict } from '../src/index.js';

// Issue 16: a plain cache origin whose claimants are no exact domain is judged without searching the
// table, and its verdict is kept in a direct-mapped memo on second sight. Both are shortcuts: written
// from the attacker's side, these tests check that neither ever changes a verdict.

const GOOGLE = 'cdn.ampproject.org';
const onGoogle = (prefix: string): string => `https://${prefix}.${GOOGLE}`;
const INDEX = cacheIndexOf(CACHES);

/** The memo slot of a plain cache origin (as verifier.ts computes it). */
function slotOf(origin: string): number {
  const plain = plainCacheOriginOf(origin, INDEX);
  if (plain === undefined) throw new Error(`not plain: ${origin}`);
  return (plain.hash ^ plain.cache.cacheDomain.length) & 1023;
}

/** What SPEC §6 says of a cache origin outside the table: allowed only if every claimant (general search) is trusted. */
function expectedOutsideTable(prefix: string, publishers: readonly string[]): boolean {
  const rules = parsePublisherRules(publishers, CACHES);
  const { claimants, complete } = searchReadings(prefix);
  return complete && claimants.length > 0 && claimants.every((c) => matchesPublisher(c.publisherDomain, rules));
}

describe('plain cache origins: the table skipped when no claimant is an exact domain', () => {
  const exact = ['example.com', 'www.example.co.uk', 'en-us.example.net', 'xn--bcher-kva.example'];
  const publishers = [...exact, '*.example.org', '*.shop.example'];
  const verifier = createVerifier({ publishers });

  it('a plain prefix has one claimant, its reading, and the general search agrees', () => {
    fc.assert(
      fc.property(fc.stringMatching(/^[a-z0-9]{1,6}(?:-{1,2}[a-z0-9]{1,6}){0,4}$/), (prefix) => {
        const reading = plainAsciiReading(prefix);
        if (reading === undefined) return;
        expect(plainPrefixClaimants(prefix)).toEqual([{ publisherDomain: reading, form: 'spec' }]);
        expect(searchReadings(prefix)).toEqual({ claimants: [{ publisherDomain: reading, form: 'spec' }], complete: true });
      }),
      { numRuns: 3000 },
    );
  });

  it('every verdict agrees with the table and with SPEC §6 (attacker-made prefixes near the configured ones)', () => {
    const near = fc.oneof(
      fc.constantFrom(...exact, 'shop.example.org', 'a.b.example.org', 'x.shop.example', 'evil.com', 'example.org.evil.com', 'example.com.evil.org'),
      fc.tuple(fc.constantFrom(...exact, 'example.org'), fc.constantFrom('evil-', 'x', '0-', 'a.', 'www.', '-x')).map(([d, junk]) => `${junk}${d}`),
    );
    fc.assert(
      fc.property(near, fc.boolean(), fc.boolean(), (domain, toolbox, twice) => {
        let prefix: string;
        try {
          const forms = prefixForms(canonicalDomain(domain));
          prefix = (toolbox ? forms.find((f) => f.form === 'toolbox') : undefined)?.prefix ?? domainPrefix(domain);
        } catch {
          return;
        }
        const origin = onGoogle(prefix);
        const first = verifier.verify(origin);
        const verdict = twice ? verifier.verify(origin) : first;
        expect(verdict).toEqual(first);
        const entry = verifier.allowSet.get(origin);
        if (entry !== undefined) {
          expect(verdict).toMatchObject({ allowed: true, publisherDomain: entry.publisherDomain, prefix: entry.prefix });
          expect(['cache-origin', 'cache-origin-hashed']).toContain(verdict.reason);
        } else {
          expect(verdict.allowed).toBe(expectedOutsideTable(prefix, publishers));
        }
      }),
      { numRuns: 2000 },
    );
  });

  it('an exact domain also under a wildcard keeps the verdict of the table', () => {
    const both = createVerifier({ publishers: ['shop.example.org', '*.example.org'] });
    const origin = onGoogle('shop-example-org');
    const verdict = both.verify(origin);
    expect(verdict).toMatchObject({ allowed: true, reason: 'cache-origin', publisherDomain: 'shop.example.org' });
    expect(both.verify(origin)).toBe(verdict);
    expect(both.verify(onGoogle('news-example-org'))).toMatchObject({ allowed: true, reason: 'cache-origin-wildcard', publisherDomain: 'news.example.org' });
  });

  it('a simple IDN prefix claimed by an unconfigured domain is denied, even when another claimant is configured', () => {
    // xn--a-de-gqa reads as xn--a-rga.de (spec) and as xn-a.de.gqa (toolbox).
    const origin = onGoogle('xn--a-de-gqa');
    expect(plainPrefixClaimants('xn--a-de-gqa')?.map((c) => c.publisherDomain)).toEqual(['xn--a-rga.de', 'xn-a.de.gqa']);
    const one = createVerifier({ publishers: ['xn--a-rga.de'] });
    for (let i = 0; i < 3; i++) {
      expect(one.verify(origin)).toMatchObject({ allowed: false, reason: 'unknown-publisher', publisherDomain: 'xn-a.de.gqa' });
    }
    const both = createVerifier({ publishers: ['xn--a-rga.de', 'xn-a.de.gqa'] });
    expect(both.verify(origin)).toMatchObject({ allowed: true, reason: 'cache-origin' });
  });
});

describe('the prefix hash made while recognizing a plain origin (twin of stringHash)', () => {
  it('finishes to the hash the readable index was built with, so an accepted origin is always found', () => {
    fc.assert(
      fc.property(fc.stringMatching(/^[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?$/), (prefix) => {
        const plain = plainCacheOriginOf(onGoogle(prefix), INDEX);
        expect(plain?.prefix).toBe(prefix);
        expect(mixHash(plain?.hash ?? 0)).toBe(stringHash(prefix));
      }),
      { numRuns: 2000 },
    );
    // From the attacker's side: every readable form of a configured domain is allowed on first sight, on every cache.
    const domains = ['example.com', 'en-us.example.net', 'a--b.example.org', 'xn--bcher-kva.example', 'www.example.co.uk'];
    for (const domain of domains) {
      for (const { prefix } of prefixForms(domain)) {
        for (const cache of CACHES) {
          const origin = `https://${prefix}.${cache.cacheDomain}`;
          expect(createVerifier({ publishers: [domain] }).verify(origin), origin).toMatchObject({ allowed: true, publisherDomain: domain });
        }
      }
    }
  });
});

describe('the direct-mapped memo of plain verdicts', () => {
  const verifier = createVerifier({ publishers: ['example.com', '*.example.org'] });

  it('two origins of one slot, one allowed and one denied, never take each other’s verdict', () => {
    // Find, by the slot formula, a denied origin sharing the slot of an allowed wildcard origin.
    const allowed = onGoogle('shop-example-org');
    const slot = slotOf(allowed);
    let denied: string | undefined;
    for (let i = 0; denied === undefined; i++) {
      const candidate = onGoogle(`shop${i}-evil-com`);
      if (slotOf(candidate) === slot) denied = candidate;
    }
    for (let round = 0; round < 6; round++) {
      // Each seen twice in a row (kept), then the other (the slot taken over).
      for (const origin of [allowed, allowed, denied, denied, allowed, denied]) {
        const verdict = verifier.verify(origin);
        expect(verdict.origin).toBe(origin);
        expect(verdict.allowed).toBe(origin === allowed);
      }
    }
  });

  it('a kept verdict is frozen and shared; __amp_source_origin still checked each time', () => {
    const origin = onGoogle('news-example-org');
    const first = verifier.verify(origin);
    const second = verifier.verify(origin);
    const third = verifier.verify(origin);
    expect(first).toEqual(second);
    expect(third).toBe(second);
    expect(Object.isFrozen(third)).toBe(true);
    expect(() => {
      (third as { allowed: boolean }).allowed = false;
    }).toThrow(TypeError);
    expect(verifier.verify(origin, { sourceOrigin: 'https://evil.com' })).toMatchObject({ allowed: false, reason: 'source-origin-mismatch' });
    expect(verifier.verify(origin, { sourceOrigin: 'https://example.com' })).toMatchObject({ allowed: true, sourceOrigin: 'https://example.com' });
    expect(verifier.verify(origin)).not.toHaveProperty('sourceOrigin');
    const denied = onGoogle('news-example-org-evil-com');
    verifier.verify(denied);
    const kept: Verdict = verifier.verify(denied);
    expect(kept).toMatchObject({ allowed: false, reason: 'unknown-publisher' });
    expect(verifier.verify(denied)).toBe(kept);
  });

  it('the same prefix on two caches gets each cache’s verdict', () => {
    const origins = CACHES.map((cache) => `https://shop-example-org.${cache.cacheDomain}`);
    for (let round = 0; round < 3; round++) {
      for (const [i, origin] of origins.entries()) {
        expect(verifier.verify(origin)).toMatchObject({ allowed: true, origin, cache: { cacheDomain: (CACHES[i] as AmpCache).cacheDomain } });
      }
    }
  });

  it('many origins through the memo: each verdict is the one a fresh verifier gives', () => {
    const fresh = () => createVerifier({ publishers: ['example.com', '*.example.org'] });
    const origins = Array.from({ length: 3000 }, (_, i) => onGoogle(i % 3 === 0 ? `n${i}-example-org` : i % 3 === 1 ? `n${i}-example-com` : `n${i}-evil-org`));
    for (let round = 0; round < 2; round++) {
      for (const origin of origins) expect(verifier.verify(origin).allowed).toBe(origin.endsWith('-example-org.cdn.ampproject.org'));
    }
    const sample = origins.filter((_, i) => i % 97 === 0);
    const reference = fresh();
    for (const origin of sample) expect(verifier.verify(origin)).toEqual(reference.verify(origin));
  });
});

describe('parsePublisherRules: the shortcuts refuse what they refused', () => {
  it('tldts gives the same registrable domain with and without extraction and validation, for the names of the Public Suffix List data', () => {
    const full = { allowPrivateDomains: true } as const;
    const canonical = { allowPrivateDomains: true, extractHostname: false, validateHostname: false, detectIp: false, mixedInputs: false } as const;
    let checked = 0;
    for (const pair of PSL_ANCESTORS.split(' ')) {
      const [domain, labels] = pair.split('/') as [string, string];
      for (const name of [domain, `x.${domain}`, `${labels.replace(/^\*/, 'x')}.${domain}`, `a.${labels.replace(/^\*/, 'x')}.${domain}`]) {
        expect(getDomain(name, canonical), name).toBe(getDomain(name, full));
        checked++;
      }
    }
    expect(checked).toBeGreaterThan(100);
  });

  it.each([
    'localhost',
    'app.localhost',
    '*.localhost',
    'localhost.',
    '127.0.0.1',
    '10.0.0.1.',
    '1.2.3',
    'example.com:443',
    'com',
    '*.github.io',
    'co.uk',
    '*.amazonaws.com',
  ])('still refuses %s', (entry) => {
    expect(() => parsePublisherRules([entry], CACHES)).toThrow(AmpCorsError);
  });

  it('with 64 caches, a rule at or under any guarded domain is refused, a same-length neighbour is not', () => {
    const many: AmpCache[] = Array.from({ length: 64 }, (_, i) => ({
      id: `c${i}`,
      name: `Cache ${i}`,
      cacheDomain: `c${String(i).padStart(2, '0')}.example.net`,
      thirdPartyFrameDomainSuffix: `f${String(i).padStart(2, '0')}.example.io`,
    }));
    for (const i of [0, 31, 63]) {
      const n = String(i).padStart(2, '0');
      for (const rule of [`c${n}.example.net`, `x.c${n}.example.net`, `a.b.f${n}.example.io`, `*.f${n}.example.io`]) {
        expect(() => parsePublisherRules([rule], many), rule).toThrow(/covers the Cache/);
      }
      // Same length as a guarded domain, not it: allowed.
      expect(parsePublisherRules([`x.d${n}.example.net`, `e${n}.example.net`], many).exact.size).toBe(2);
    }
  });
});
