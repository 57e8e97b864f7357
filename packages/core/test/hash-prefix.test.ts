// SPEC §5 hashing against ../shared/vectors/sb-hash-vectors.json (copied to
// fixtures/): SHA-256 of each expression and its 4, 8, 16 and 32-byte
// prefixes, and the list checksums (SHA-256 of the sorted prefixes joined).
// No vector is diverged from.
import { bytesToHex } from '@noble/hashes/utils.js';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import vectors from './fixtures/sb-hash-vectors.json' with { type: 'json' };
import { AmpCorsError } from '../src/errors.js';
import { hashPrefix, hashPrefixHex, sha256Utf8, type HashPrefixLength } from '../src/hash-prefix.js';
import { urlExpressions } from '../src/url-expressions.js';

type HashVector = { expression: string; sha256: string } & Record<`prefix_${HashPrefixLength}`, string>;
type ChecksumVector = { prefixes: string[]; sha256: string };

const LENGTHS: HashPrefixLength[] = [4, 8, 16, 32];
const hashes = vectors.vectors as HashVector[];
const checksums = vectors.list_checksums as ChecksumVector[];

describe('sb-hash-vectors', () => {
  it.each(hashes.map((v) => [v.expression, v] as const))('%s: SHA-256', (expression, v) => {
    expect(bytesToHex(sha256Utf8(expression))).toBe(v.sha256);
  });

  it.each(hashes.flatMap((v) => LENGTHS.map((n) => [v.expression, n, v] as const)))('%s: %i-byte prefix', (expression, n, v) => {
    const prefix = hashPrefix(expression, n);
    expect(prefix).toBeInstanceOf(Uint8Array);
    expect(prefix).toHaveLength(n);
    expect(bytesToHex(prefix)).toBe(v[`prefix_${n}`]);
    expect(hashPrefixHex(expression, n)).toBe(v[`prefix_${n}`]);
  });

  it.each(checksums.map((v) => [v.prefixes.join(','), v] as const))('list checksum of [%s]', (_list, v) => {
    expect(bytesToHex(sha256Utf8([...v.prefixes].sort().join('')))).toBe(v.sha256);
  });
});

describe('hashPrefix', () => {
  it('hashes the expressions urlExpressions gives (v5 Local Database example)', () => {
    const byExpression = new Map(hashes.map((v) => [v.expression, v.prefix_4]));
    expect(urlExpressions('http://a.example.com/').map((e) => hashPrefixHex(e, 4))).toEqual([
      byExpression.get('a.example.com/'),
      hashPrefixHex('example.com/', 4),
    ]);
  });

  it('hashes the UTF-8 bytes', () => {
    expect(hashPrefixHex('ä', 32)).toBe(bytesToHex(sha256Utf8('\u00e4')));
    expect(hashPrefixHex('ä', 4)).not.toBe(hashPrefixHex('\u00c3\u00a4', 4));
  });

  it.each([0, 5, 20, 33, -4, Number.NaN])('refuses a %d-byte prefix with invalid-option', (n) => {
    expect(() => hashPrefix('foo.com/', n as HashPrefixLength)).toThrow(AmpCorsError);
    expect(() => hashPrefix('foo.com/', n as HashPrefixLength)).toThrow(expect.objectContaining({ code: 'invalid-option' }));
  });

  it('every prefix is the start of the full hash', () => {
    fc.assert(
      fc.property(fc.string(), fc.constantFrom(...LENGTHS), (expression, n) => {
        const full = hashPrefix(expression, 32);
        return bytesToHex(hashPrefix(expression, n)) === bytesToHex(full.subarray(0, n));
      }),
    );
  });
});
