// The two memos on the __amp_source_origin path (issue 16), from the attacker's side: a remembered
// answer for one source origin never answers for another, and a remembered decoding never answers
// for another spelling.
import { createVerifier } from '@ampcors/core';
import { sourceOriginOfUrl } from '@ampcors/core/adapter';
import { describe, expect, it } from 'vitest';

const verifier = createVerifier({ publishers: ['example.com'] });
const CACHE = 'https://example-com.cdn.ampproject.org';

describe('the verifier remembers the last source origin of a verdict', () => {
  it('a hostile source after an allowed one, for the same Origin, is denied', () => {
    for (let round = 0; round < 3; round++) {
      const good = verifier.verify(CACHE, { sourceOrigin: 'https://example.com' });
      expect(good).toMatchObject({ allowed: true, sourceOrigin: 'https://example.com' });
      expect(Object.isFrozen(good)).toBe(true);
      expect(verifier.verify(CACHE, { sourceOrigin: 'https://evil.example' })).toMatchObject({ allowed: false, reason: 'source-origin-mismatch' });
      expect(verifier.verify(CACHE, { sourceOrigin: 'https://example.com.evil.example' })).toMatchObject({ allowed: false });
      // The same good source again: the remembered verdict, equal to the first.
      expect(verifier.verify(CACHE, { sourceOrigin: 'https://example.com' })).toEqual(good);
    }
  });
  it('a remembered verdict cannot be altered by its reader', () => {
    const good = verifier.verify(CACHE, { sourceOrigin: 'https://example.com' }) as { sourceOrigin?: string };
    expect(() => {
      good.sourceOrigin = 'https://evil.example';
    }).toThrow(TypeError);
    expect(verifier.verify(CACHE, { sourceOrigin: 'https://example.com' })).toMatchObject({ sourceOrigin: 'https://example.com' });
  });
});

describe('sourceOriginOfUrl remembers recent decodings', () => {
  it('each spelling decodes as URLSearchParams reads it, however often and in whatever order', () => {
    const values = [
      'https%3A%2F%2Fexample.com',
      'https%3a%2f%2fexample.com',
      'https%3A%2F%2Fexample.com%0D%0AX',
      'https%3A%2F%2Fe+x.com',
      'https%3A%2F%2F%E4%BE%8B.com',
      '%FF',
    ];
    for (let round = 0; round < 3; round++) {
      for (const value of values) {
        const url = `/api?__amp_source_origin=${value}`;
        expect(sourceOriginOfUrl(url)).toBe(new URL(url, 'https://api.example').searchParams.get('__amp_source_origin'));
        const twice = `/api?__amp_source_origin=${value}&__amp_source_origin=${value}`;
        expect(sourceOriginOfUrl(twice)).toBe(new URL(twice, 'https://api.example').searchParams.getAll('__amp_source_origin').join(','));
      }
    }
  });
  it('more distinct values than the memo holds: still exact', () => {
    for (let i = 0; i < 3000; i++) {
      const url = `/api?__amp_source_origin=https%3A%2F%2Fp${i}.example`;
      expect(sourceOriginOfUrl(url)).toBe(`https://p${i}.example`);
    }
  });
});
