// The allow-sets hash every configured domain (and the compact set every
// prefix) with sha256Words, a SHA-256 written into a reused state: it must
// give exactly @noble/hashes' digest for any string, at every block boundary.
import { sha256 } from '@noble/hashes/sha2.js';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { sha256Words } from '../src/sha256-words.js';

function nobleWords(input: string): number[] {
  const digest = sha256(new TextEncoder().encode(input));
  const view = new DataView(digest.buffer, digest.byteOffset, digest.byteLength);
  return Array.from({ length: 8 }, (_, w) => view.getUint32(w * 4));
}

function words(input: string, at = 0): number[] {
  const out = new Uint32Array(at + 8);
  sha256Words(input, out, at);
  return Array.from(out.subarray(at, at + 8));
}

describe('sha256Words', () => {
  it('equals @noble/hashes on any string (ASCII, non-ASCII, lone surrogates)', () => {
    fc.assert(
      fc.property(
        fc.oneof(fc.string({ maxLength: 300 }), fc.string({ unit: 'binary', maxLength: 200 }), fc.string({ unit: 'grapheme', maxLength: 80 })),
        (input) => {
          expect(words(input)).toEqual(nobleWords(input));
        },
      ),
      { numRuns: 2000 },
    );
  });

  it('equals @noble/hashes at every length around the block and padding boundaries, and after a longer input', () => {
    for (const length of [0, 1, 54, 55, 56, 57, 63, 64, 65, 118, 119, 120, 127, 128, 129, 253, 1000, 5]) {
      const ascii = 'a.b-c'.repeat(400).slice(0, length);
      expect(words(ascii), `${length} ASCII`).toEqual(nobleWords(ascii));
      const wide = 'ü中😊'.repeat(300).slice(0, length);
      expect(words(wide), `${length} non-ASCII`).toEqual(nobleWords(wide));
    }
  });

  it('writes only its eight words, at the offset given', () => {
    const out = new Uint32Array(24).fill(7);
    sha256Words('example.com', out, 8);
    expect(Array.from(out.subarray(8, 16))).toEqual(nobleWords('example.com'));
    expect([...out.subarray(0, 8), ...out.subarray(16)].every((w) => w === 7)).toBe(true);
  });
});
