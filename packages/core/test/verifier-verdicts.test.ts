// Issue 16: the verifier keeps no verdict per origin; a cache origin's verdict
// is made on demand from the compact allow-set and shared while remembered. It
// must be the verdict the definition gives (the allow-set reference: every
// accepted form of every domain, the first listed domain winning), frozen, and
// equal on every call — while remembered and after the memo has forgotten it.
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { type AllowEntry, CACHES, createVerifier, type Verdict } from '../src/index.js';
import { referenceMap } from './allow-set-reference.js';
import { publisherDomain } from './arbitraries.js';

/** The verdict of an allowed cache origin, from its reference entry. */
function expectedVerdict(origin: string, entry: AllowEntry): Verdict {
  return {
    allowed: true,
    origin,
    via: 'cache',
    reason: entry.prefix.includes('-') ? 'cache-origin' : 'cache-origin-hashed',
    publisherDomain: entry.publisherDomain,
    cache: entry.cache,
    prefix: entry.prefix,
    prefixForm: entry.form,
  };
}

/** A verifier, or undefined when the configuration is refused (a generated name may be a public suffix). */
function verifierOf(domains: readonly string[]) {
  try {
    return createVerifier({ publishers: domains });
  } catch {
    return undefined;
  }
}

describe('verdicts made on demand (issue 16)', () => {
  it('every accepted cache origin gets the verdict of the definition, frozen, equal on every call', () => {
    fc.assert(
      fc.property(
        fc.array(fc.oneof(publisherDomain, fc.constantFrom('www.example.com', `${'a'.repeat(60)}.example.com`)), { minLength: 1, maxLength: 6 }),
        (domains) => {
          const verifier = verifierOf(domains);
          fc.pre(verifier !== undefined);
          const reference = referenceMap(domains, CACHES);
          expect(verifier!.allowSet.size).toBe(reference.size);
          for (const [origin, entry] of reference) {
            const first = verifier!.verify(origin);
            expect(first).toEqual(expectedVerdict(origin, entry));
            expect(Object.isFrozen(first)).toBe(true);
            const second = verifier!.verify(origin);
            expect(second).toEqual(first);
            expect(Object.isFrozen(second)).toBe(true);
          }
        },
      ),
      { numRuns: 150 },
    );
  });

  it('after the memo has forgotten them, the verdicts made again are equal and frozen', () => {
    const domains = Array.from({ length: 40_000 }, (_, i) => `site${i}.example.com`);
    const verifier = createVerifier({ publishers: domains });
    const sample = [0, 1, 777, 39_999].flatMap((i) => CACHES.map((cache) => `https://site${i}-example-com.${cache.cacheDomain}`));
    const before = sample.map((origin) => verifier.verify(origin));
    // 80,000 other allowed origins: more than two memo generations.
    for (let i = 0; i < domains.length; i++) for (const cache of CACHES) verifier.verify(`https://site${i}-example-com.${cache.cacheDomain}`);
    for (let i = 0; i < 1000; i++) verifier.verify(`https://site${i}-example-com.${CACHES[0]!.cacheDomain}`);
    sample.forEach((origin, k) => {
      const again = verifier.verify(origin);
      expect(again).toEqual(before[k]);
      expect(again).toMatchObject({ allowed: true, reason: 'cache-origin', publisherDomain: origin.slice(8, origin.indexOf('.')).replaceAll('-', '.') });
      expect(Object.isFrozen(again)).toBe(true);
    });
    // The attacker's side: names one digit past the list, or one letter off, stay denied.
    for (const origin of ['https://site40000-example-com.cdn.ampproject.org', 'https://sitf0-example-com.cdn.ampproject.org']) {
      expect(verifier.verify(origin)).toMatchObject({ allowed: false, reason: 'unknown-publisher' });
    }
  });
});
