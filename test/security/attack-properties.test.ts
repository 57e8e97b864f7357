// Property-based attacks on the verifier (issue #6): random allowed sets
// against random and derived domains, through every cache and prefix form,
// and arbitrary strings that must never make verify throw.
import { type AmpCache, CACHES, createVerifier, fallbackPrefix, parseOrigin, prefixForms, reverseOrigin, toolboxPrefix, unicodeDomain, type Verifier } from '@ampcors/core';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { anyString, domain, lookAlike, originLike } from './arbitraries.js';

const TEST_CACHE: AmpCache = { id: 'test', name: 'Test cache', cacheDomain: 'amp.cache.example.net' };
const ALL_CACHES = [...CACHES, TEST_CACHE];

/** Every prefix any implementation may compute for `d`, including forms the verifier may not list. */
function everyPrefix(d: string): string[] {
  const unicode = unicodeDomain(d);
  return [...new Set([...prefixForms(d).map((f) => f.prefix), toolboxPrefix(d), toolboxPrefix(unicode), fallbackPrefix(d), fallbackPrefix(unicode), fallbackPrefix(`${d}.`)])];
}

interface Setup {
  verifier: Verifier;
  exact: string[];
  wildcard: string[];
}

function setup(exact: string[], wildcard: string[]): Setup | undefined {
  try {
    const verifier = createVerifier({ publishers: [...exact, ...wildcard.map((d) => `*.${d}`)], caches: ALL_CACHES });
    return { verifier, exact, wildcard };
  } catch {
    return undefined; // a public suffix or a domain covering a cache: refused at construction, tested elsewhere
  }
}

const covered = (s: Setup, d: string) => s.exact.includes(d) || s.wildcard.some((w) => d === w || d.endsWith(`.${w}`));

/** Is an allowed cache origin explained by a configured domain (forward computation only)? */
function justified(s: Setup, origin: string): boolean {
  for (const d of s.exact) {
    if (prefixForms(d).some((f) => ALL_CACHES.some((c) => origin === `https://${f.prefix}.${c.cacheDomain}`))) return true;
  }
  const reversed = reverseOrigin(origin, { caches: ALL_CACHES });
  return reversed.ok && !reversed.hashed && covered(s, reversed.publisherDomain) && everyPrefix(reversed.publisherDomain).includes(reversed.prefix);
}

const allowedSet = fc.tuple(fc.uniqueArray(domain, { minLength: 1, maxLength: 4 }), fc.uniqueArray(domain, { maxLength: 2 }));

describe('no origin of a domain outside the allowed set is allowed', () => {
  it('random other domains and look-alikes of the allowed ones, every cache, every prefix form', () => {
    let checked = 0;
    let lookAlikes = 0;
    fc.assert(
      fc.property(
        allowedSet.chain(([exact, wildcard]) =>
          fc.tuple(
            fc.constant(exact),
            fc.constant(wildcard),
            fc.array(fc.oneof(domain, fc.constantFrom(...exact, ...wildcard).chain(lookAlike)), { minLength: 1, maxLength: 6 }),
          ),
        ),
        ([exact, wildcard, others]) => {
          const s = setup(exact, wildcard);
          fc.pre(s !== undefined);
          if (!s) return;
          for (const other of others) {
            if (other === undefined || covered(s, other)) continue;
            if (exact.some((e) => e !== other && (e.includes(other) || other.includes(e)))) lookAlikes++;
            const publisher = s.verifier.verify(`https://${other}`);
            expect(publisher.allowed, `https://${other}`).toBe(false);
            for (const prefix of everyPrefix(other)) {
              for (const cache of ALL_CACHES) {
                const origin = `https://${prefix}.${cache.cacheDomain}`;
                const verdict = s.verifier.verify(origin);
                checked++;
                if (verdict.allowed) expect(justified(s, origin), `${origin} allowed for ${other}, config ${JSON.stringify([exact, wildcard])}`).toBe(true);
              }
            }
          }
        },
      ),
      { numRuns: 300 },
    );
    expect(checked).toBeGreaterThan(2000);
    expect(lookAlikes).toBeGreaterThan(50);
  });

  it('every form of an allowed exact domain is allowed, on every cache (the positive control)', () => {
    fc.assert(
      fc.property(allowedSet, ([exact, wildcard]) => {
        const s = setup(exact, wildcard);
        fc.pre(s !== undefined);
        for (const d of exact) {
          for (const { prefix } of prefixForms(d)) {
            for (const cache of ALL_CACHES) expect(s?.verifier.verify(`https://${prefix}.${cache.cacheDomain}`).allowed).toBe(true);
          }
        }
      }),
      { numRuns: 150 },
    );
  });

  it('an allowed verdict is always for a canonical origin that a configured rule explains', () => {
    fc.assert(
      fc.property(allowedSet, fc.array(originLike, { maxLength: 20 }), ([exact, wildcard], origins) => {
        const s = setup(exact, wildcard);
        fc.pre(s !== undefined);
        if (!s) return;
        for (const origin of origins) {
          const verdict = s.verifier.verify(origin);
          if (!verdict.allowed) continue;
          const parsed = parseOrigin(origin);
          expect(parsed.ok).toBe(true);
          if (verdict.via === 'cache') expect(justified(s, origin)).toBe(true);
          else if (parsed.ok) expect(covered(s, parsed.host)).toBe(true);
        }
      }),
      { numRuns: 300 },
    );
  });

  it('__amp_source_origin never turns a denial into an allow', () => {
    fc.assert(
      fc.property(allowedSet, domain, fc.oneof(anyString, domain.map((d) => `https://${d}`)), ([exact, wildcard], other, source) => {
        const s = setup(exact, wildcard);
        fc.pre(s !== undefined && !covered(s, other));
        if (!s) return;
        for (const prefix of everyPrefix(other)) {
          const origin = `https://${prefix}.cdn.ampproject.org`;
          const plain = s.verifier.verify(origin);
          const withSource = s.verifier.verify(origin, { sourceOrigin: source, ampSameOrigin: 'true' });
          if (!plain.allowed) expect(withSource.allowed).toBe(false);
        }
        expect(s.verifier.verify(`https://${other}`, { sourceOrigin: `https://${other}` }).allowed).toBe(false);
      }),
      { numRuns: 200 },
    );
  });
});

describe('verify never throws', () => {
  const verifier = createVerifier({ publishers: ['example.com', '*.example.org', `${'a'.repeat(40)}.${'b'.repeat(30)}.com`] });

  it('on arbitrary strings, byte strings and origin-like strings, with arbitrary context', () => {
    fc.assert(
      fc.property(anyString, fc.option(anyString), fc.option(anyString), (origin, same, source) => {
        const verdict = verifier.verify(origin, { ampSameOrigin: same, sourceOrigin: source });
        expect(typeof verdict.allowed).toBe('boolean');
        expect(typeof verdict.reason).toBe('string');
        if (!verdict.allowed) expect(verdict.detail.length).toBeLessThan(400);
      }),
      { numRuns: 3000 },
    );
  });

  it('on values that are not strings at all', () => {
    const values: unknown[] = [undefined, null, 0, 1n, {}, [], ['https://example.com'], Symbol('x'), () => 'https://example.com', new String('https://example.com'), NaN];
    for (const value of values) {
      const verdict = verifier.verify(value as string, value as never);
      expect(verdict.allowed).toBe(false);
    }
  });
});
