/**
 * Attacker's review, session 15 (helper-70): hostile `caches.json` bodies
 * within the 64 KiB cap — nesting 30,000 deep, `__proto__` keys, a name or id
 * holding terminal controls or bidi overrides, duplicated keys, invalid
 * UTF-8, a BOM. `fetchCaches` must resolve (never throw or hang), keep the
 * fallback unless the list is valid, and never pollute `Object.prototype`.
 */
import { CACHES, fetchCaches } from '@ampcors/core';
import { describe, expect, it } from 'vitest';

const GOOD = JSON.stringify({ caches: CACHES });
const answer = (body: string | Uint8Array) => async () => new Response(typeof body === 'string' ? body : new Blob([new Uint8Array(body)]), { status: 200 });

describe('hostile caches.json bodies (helper-70)', () => {
  const bodies: [string, string | Uint8Array][] = [
    ['30,000 nested arrays', `{"caches":${'['.repeat(30_000)}${']'.repeat(30_000)}}`],
    ['30,000 nested objects', `{"caches":${'{"a":'.repeat(12_000)}1${'}'.repeat(12_000)}}`],
    ['__proto__ entries', GOOD.replace('"caches":[', '"caches":[{"__proto__":{"polluted":true},"id":"x"},')],
    ['__proto__ at the top', `{"__proto__":{"polluted":true},"caches":${JSON.stringify(CACHES)}}`],
    ['a name with an OSC sequence', JSON.stringify({ caches: CACHES.map((c, i) => (i === 0 ? { ...c, name: 'Google\u001b]0;PWNED\u0007' } : c)) })],
    ['a name with a bidi override', JSON.stringify({ caches: CACHES.map((c, i) => (i === 0 ? { ...c, name: 'Google \u202eelgooG' } : c)) })],
    ['an id with a bidi override', JSON.stringify({ caches: CACHES.map((c, i) => (i === 0 ? { ...c, id: 'goo\u202egle' } : c)) })],
    ['a cache domain with a NUL', JSON.stringify({ caches: CACHES.map((c, i) => (i === 0 ? { ...c, cacheDomain: `${c.cacheDomain}\u0000` } : c)) })],
    ['duplicated keys', GOOD.replace('"caches":', '"caches":[],"caches":').replace(/^\{/, '{"caches":null,')],
    ['a BOM', `\ufeff${GOOD}`],
    ['invalid UTF-8', new Uint8Array([0x7b, 0x22, 0xff, 0xfe, 0x22, 0x3a, 0x31, 0x7d])],
  ];
  for (const [name, body] of bodies) {
    it(`${name}: resolves, keeps the fallback or a valid list, no prototype pollution`, async () => {
      const result = await fetchCaches({ fetch: answer(body) as unknown as typeof fetch, timeoutMs: 2000 });
      expect(({} as Record<string, unknown>).polluted).toBeUndefined();
      expect(Object.prototype).not.toHaveProperty('polluted');
      if (result.ok) {
        for (const cache of result.caches) {
          // Whatever was accepted is one of the bundled operators' own, free of controls.
          expect(JSON.stringify(cache)).not.toMatch(/\\u00[01]|\\u007f|[\u0080-\u009f\u202a-\u202e\u2066-\u2069]/);
          expect(cache.cacheDomain).toMatch(/(^|\.)(ampproject\.org|bing-amp\.com)$/);
        }
      } else {
        expect(result.caches).toBe(CACHES);
      }
    });
  }
});
