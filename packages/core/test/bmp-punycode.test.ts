// The verifier's IDN path decodes and encodes A-labels with ampcors's own RFC 3492 codec for labels of
// the Basic Multilingual Plane (domain-prefix.ts: decodeBmpPunycode, encodeBmpPunycode). A wrong
// decoding would read a cache prefix as another domain than the one whose prefix it is: these tests
// hold it to punycode.js, the reference the rest of ampcors uses, on hostile input as on valid labels.
import fc from 'fast-check';
import { decode as libraryDecode, encode as libraryEncode } from 'punycode/punycode.es6.js';
import { describe, expect, it } from 'vitest';
import { decodeBmpPunycode, encodeBmpPunycode } from '../src/domain-prefix.js';

/** A UTF-16 surrogate unit: what the BMP codec leaves to punycode.js (astral code points, lone surrogates). */
const SURROGATE = /[\ud800-\udfff]/;

/** punycode.js's decoding where the BMP codec must give the same answer, else undefined (an error, or a surrogate in the result). */
function expectedDecoding(encoded: string): string | undefined {
  let decoded: string;
  try {
    decoded = libraryDecode(encoded);
  } catch {
    return undefined;
  }
  return SURROGATE.test(decoded) ? undefined : decoded;
}

/** punycode.js's encoding of a label without surrogates, else undefined (also when punycode.js refuses it: an overflow). */
function expectedEncoding(label: string): string | undefined {
  if (SURROGATE.test(label)) return undefined;
  try {
    return libraryEncode(label);
  } catch {
    return undefined;
  }
}

// Labels of ASCII letters, digits and hyphens around simple, mapped, right-to-left, combining and astral code points.
const piece = fc.constantFrom(
  'a',
  'z',
  'de',
  'com',
  '0',
  '9',
  '-',
  '--',
  'xn',
  'ü',
  'é',
  'ß',
  'ж',
  '日',
  '가',
  '\u0301',
  'א',
  'ب',
  '\u200d',
  '\uffff',
  '\u0080',
  '𝒜',
  '😊',
);
const unicodeLabel = fc.oneof(
  fc.array(piece, { minLength: 0, maxLength: 12 }).map((pieces) => pieces.join('')),
  fc.string({ unit: 'binary', maxLength: 20 }),
  fc.string({ unit: 'grapheme', maxLength: 12 }),
);
// What an attacker may put after `xn--`: valid encodings, their corruptions, and arbitrary text.
const digit = fc.constantFrom(...'abcdefghijklmnopqrstuvwxyz0123456789-ABCZ');
const encodedLabel = fc.oneof(
  unicodeLabel.map((label) => libraryEncode(label)),
  fc.tuple(unicodeLabel, fc.array(digit, { maxLength: 8 }), fc.nat(40)).map(([label, noise, at]) => {
    const encoded = libraryEncode(label);
    const cut = Math.min(at, encoded.length);
    return encoded.slice(0, cut) + noise.join('') + encoded.slice(cut);
  }),
  fc.array(digit, { maxLength: 24 }).map((chars) => chars.join('')),
  fc.string({ unit: 'binary', maxLength: 24 }),
);

describe('the BMP punycode codec agrees with punycode.js', () => {
  it('decodes as punycode.js wherever the result has no surrogate, and refuses everything else', () => {
    let decoded = 0;
    fc.assert(
      fc.property(encodedLabel, (encoded) => {
        const expected = expectedDecoding(encoded);
        if (expected !== undefined) decoded++;
        expect(decodeBmpPunycode(encoded)).toBe(expected);
      }),
      { numRuns: 5000 },
    );
    expect(decoded).toBeGreaterThan(1000);
  });

  it('encodes as punycode.js any label without surrogates, any range of it alike', () => {
    fc.assert(
      fc.property(unicodeLabel, fc.nat(30), fc.nat(30), (label, a, b) => {
        expect(encodeBmpPunycode(label)).toBe(expectedEncoding(label));
        const from = Math.min(a, b, label.length);
        const to = Math.min(Math.max(a, b), label.length);
        expect(encodeBmpPunycode(label, from, to)).toBe(expectedEncoding(label.slice(from, to)));
      }),
      { numRuns: 5000 },
    );
  });

  it('round-trips: decoding an encoding gives the label back', () => {
    fc.assert(
      fc.property(unicodeLabel, (label) => {
        const encoded = encodeBmpPunycode(label);
        if (encoded !== undefined) expect(decodeBmpPunycode(encoded)).toBe(label);
      }),
      { numRuns: 2000 },
    );
  });

  it('refuses what punycode.js refuses: a non-ASCII basic part, a bad digit, a delta cut short, overflows', () => {
    // Each of these throws in punycode.js; the codec answers undefined (never a wrong label, never a throw).
    const hostile = [
      'ü-kva', // a non-ASCII character before the last '-'
      'bcher-kv!', // not a digit
      'bcher-k9', // a delta cut short (9 = 35 is not below the threshold, more digits must follow)
      'a-99999999999', // i beyond 2^31 − 1
      'zzzzzzzzzzzzzzzzzzzzz', // the weight w beyond 2^31 − 1
      '-abc', // a delimiter with no basic code points: '-' read as a digit
    ];
    for (const encoded of hostile) {
      expect(() => libraryDecode(encoded)).toThrow();
      expect(decodeBmpPunycode(encoded)).toBeUndefined();
    }
    // A code point beyond the BMP (U+1F60A) or a lone surrogate decodes in punycode.js, but not here.
    expect(libraryDecode(libraryEncode('a😊'))).toBe('a😊');
    expect(decodeBmpPunycode(libraryEncode('a😊'))).toBeUndefined();
    const loneSurrogate = libraryEncode('a\ud800');
    expect(libraryDecode(loneSurrogate)).toBe('a\ud800');
    expect(decodeBmpPunycode(loneSurrogate)).toBeUndefined();
    // A delta past 2^31 − 1 (U+FFFF after 40,000 letters): punycode.js refuses to encode it, and so does the codec.
    const long = `${'a'.repeat(40_000)}\uffff`;
    expect(() => libraryEncode(long)).toThrow();
    expect(encodeBmpPunycode(long)).toBeUndefined();
    // Surrogates are left to punycode.js.
    expect(encodeBmpPunycode('a😊')).toBeUndefined();
  });

  it('gives the published vectors (RFC 3492 §7.1 and the ampcors spec)', () => {
    expect(encodeBmpPunycode('bücher')).toBe('bcher-kva');
    expect(decodeBmpPunycode('bcher-kva')).toBe('bücher');
    // RFC 3492 §7.1 (B) Chinese (simplified), (C) Chinese (traditional), (I) Russian (lowercase).
    expect(decodeBmpPunycode('ihqwcrb4cv8a8dqg056pqjye')).toBe('他们为什么不说中文');
    expect(encodeBmpPunycode('他們爲什麽不說中文')).toBe('ihqwctvzc91f659drss3x8bo0yb');
    expect(decodeBmpPunycode('b1abfaaepdrnnbgefbadotcwatmq2g4l')).toBe('почемужеонинеговорятпорусски');
    // SPEC §2 ⚡😊-com is astral: left to punycode.js.
    expect(decodeBmpPunycode('-com-p33b41770a')).toBeUndefined();
  });
});
