// The amppackager oracle against amppackager's 13 published test vectors,
// and against facts of the Go reference build (issue 13): every expected
// value below is what that build printed for the input.
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { amppackagerHash, amppackagerPrefix, punycodeEncode, tr46 } from './amppackager-oracle.js';
import { DIFFERENTIAL_SEED, label } from './domains.js';
import vectors from './amppackager-vectors.json' with { type: 'json' };

describe('amppackager oracle', () => {
  it('has the 13 published vectors', () => {
    expect(vectors.vectors).toHaveLength(13);
  });

  it.each(vectors.vectors.map((v) => [v.description, v.input, v.expected] as const))('published vector: %s (%s)', (_description, input, expected) => {
    expect(amppackagerPrefix(input).prefix).toBe(expected);
  });

  it.each([
    // The example: positions 3–4 of the UTF-8 bytes of `я--дома-рф` are `-`.
    ['я-дома.рф', 'xn--0-----0-5fg9azfva1a6czi', 'wrapped'],
    // Any label (not only the first) with `--` at 3–4 is refused by the IDNA profile: hash.
    ['www.ab--cd.example.com', amppackagerHash('www.ab--cd.example.com'), 'hash'],
    // The byte rule refuses `é--x` (bytes 3–4 are `-`) but not `aé--x`.
    ['é--x.com', amppackagerHash('é--x.com'), 'hash'],
    ['aé--x.com', 'xn--a----x-com-b7a', 'readable'],
    // Transitional mapping: αβς.gr is spelled with σ.
    ['xn--mxac2c.gr', 'xn---gr-nxcf6h', 'readable'],
    // An Arabic label joined with `com` breaks the Bidi rule: hash (نامه‌ای.com).
    ['xn--mgba3gch31f060k.com', amppackagerHash('xn--mgba3gch31f060k.com'), 'hash'],
    // A right-to-left domain cannot be wrapped: `0` breaks the Bidi rule, so it is hashed.
    ['xn----7hcbh.com', amppackagerHash('xn----7hcbh.com'), 'hash'],
    // STD3 rules: `_` refused (hash); Unicode 13 tables: ≠ refused (hash).
    ['a_b.com', amppackagerHash('a_b.com'), 'hash'],
    ['xn--1ch.com', amppackagerHash('xn--1ch.com'), 'hash'],
  ] as const)('%s → %s (%s)', (input, prefix, path) => {
    expect(amppackagerPrefix(input)).toEqual({ prefix, path });
  });

  it('panics, as the Go code does, on a one-label host of fewer than 3 bytes', () => {
    expect(amppackagerPrefix('a')).toEqual({ prefix: null, path: 'panic' });
    expect(amppackagerPrefix('abcd').path).toBe('hash');
  });

  it('encodes punycode as tr46 (punycode.js) does', () => {
    expect(punycodeEncode('bücher')).toBe('bcher-kva');
    fc.assert(
      fc.property(label, (text) => {
        const mapped = tr46.toUnicode(text).domain;
        const expected = tr46.toASCII(mapped);
        fc.pre(/[^\x00-\x7f]/.test(mapped) && !mapped.includes('.') && expected !== null && tr46.toUnicode(mapped).domain === mapped);
        expect(`xn--${punycodeEncode(mapped)}`).toBe(expected);
      }),
      { seed: DIFFERENTIAL_SEED, numRuns: 2_000 },
    );
  });

  it('maps non-transitionally when asked (the form ampcors accepts)', () => {
    expect(amppackagerPrefix('faß.de', { transitional: false }).prefix).toBe('xn--fa-de-mqa');
    expect(amppackagerPrefix('faß.de').prefix).toBe('fass-de');
  });
});
