// Attacker's review, session 15 (helper-49): ampcors's own RFC 3492 codec for Basic Multilingual Plane
// labels (domain-prefix.ts: decodeBmpPunycode, encodeBmpPunycode), the verifier's IDN fast path. A codec
// that decodes an attacker's `xn--` text to another label than punycode.js does, or accepts what
// punycode.js refuses, would name the wrong claimant of a cache prefix. Differential properties against
// punycode.js at high run counts, with inputs aimed at its failure cases: deltas built to land exactly on
// the overflow limits (i, w and the delta at 2^31 − 1), on the BMP's edges (U+D7FF, U+D800, U+DFFF,
// U+E000, U+FFFF, U+10000), on the delimiter (first, last, doubled, absent), on digits outside base 36,
// and labels long enough to overflow the encoder's delta. Then the same prefixes through a verifier.
import { createRequire } from 'node:module';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { decodeBmpPunycode, encodeBmpPunycode } from '../../packages/core/src/domain-prefix.js';
import { plainPrefixClaimants, searchReadings } from '../../packages/core/src/prefix-claimants.js';
import { createVerifier } from '@ampcors/core';

/** punycode.js, the reference, resolved where @ampcors/core depends on it. */
const punycode = createRequire(new URL('../../packages/core/package.json', import.meta.url))('punycode/punycode.js') as {
  decode(input: string): string;
  encode(input: string): string;
  toUnicode(input: string): string;
};

const SURROGATE = /[\ud800-\udfff]/;
const MAX_INT = 0x7fffffff;

/** What the BMP decoder must answer: punycode.js's label, or undefined where punycode.js throws or leaves the BMP. */
function referenceDecode(encoded: string): string | undefined {
  let decoded: string;
  try {
    decoded = punycode.decode(encoded);
  } catch {
    return undefined;
  }
  return SURROGATE.test(decoded) ? undefined : decoded;
}

/** What the BMP encoder must answer: punycode.js's encoding of a surrogate-free label, else undefined. */
function referenceEncode(label: string): string | undefined {
  if (SURROGATE.test(label)) return undefined;
  try {
    return punycode.encode(label);
  } catch {
    return undefined;
  }
}

// RFC 3492 §5 parameters, restated for the raw encoder below (written from the RFC, not from either codec).
const BASE = 36;
const T_MIN = 1;
const T_MAX = 26;
const SKEW = 38;
const DAMP = 700;

function adapt(delta: number, points: number, first: boolean): number {
  let d = first ? Math.floor(delta / DAMP) : Math.floor(delta / 2);
  d += Math.floor(d / points);
  let k = 0;
  while (d > ((BASE - T_MIN) * T_MAX) / 2) {
    d = Math.floor(d / (BASE - T_MIN));
    k += BASE;
  }
  return k + Math.floor(((BASE - T_MIN + 1) * d) / (d + SKEW));
}

function digitChar(d: number, upper: boolean): string {
  const c = d < 26 ? 97 + d : 22 + d;
  return upper && d < 26 ? String.fromCharCode(c - 32) : String.fromCharCode(c);
}

/**
 * The digits of arbitrary deltas (any value ≥ 0, also beyond 2^31 − 1, which no encoder emits), after a
 * basic part: what an attacker writes after `xn--` to steer the decoder's state <n, i> where it likes.
 * `upper` writes letter digits in upper case (RFC 3492 digits are case-insensitive).
 */
function rawEncode(basic: string, deltas: readonly number[], upper = false): string {
  let out = basic.length > 0 ? `${basic}-` : '';
  let bias = 72;
  for (let j = 0; j < deltas.length; j++) {
    let q = deltas[j] as number;
    for (let k = BASE; ; k += BASE) {
      const t = k <= bias ? T_MIN : k >= bias + T_MAX ? T_MAX : k - bias;
      if (q < t) break;
      out += digitChar(t + ((q - t) % (BASE - t)), upper);
      q = Math.floor((q - t) / (BASE - t));
    }
    out += digitChar(q, upper);
    bias = adapt(deltas[j] as number, basic.length + j + 1, j === 0);
  }
  return out;
}

/** The first delta that makes the decoder insert code point `cp` at position `at` of a basic part of `length`. */
function firstDeltaFor(cp: number, length: number, at: number): number {
  return (cp - 128) * (length + 1) + at;
}

// Code points at the edges that matter: the BMP, the surrogates, the last code point, ASCII.
const EDGE_POINTS = [0x80, 0xff, 0x100, 0x7ff, 0x800, 0xd7ff, 0xd800, 0xdbff, 0xdc00, 0xdfff, 0xe000, 0xfffd, 0xfffe, 0xffff, 0x10000, 0x10ffff, 0x110000];
// Deltas at the edges of the 31-bit arithmetic.
const EDGE_DELTAS = [0, 1, 35, 36, 699, 700, 701, 2 ** 16, 2 ** 30, MAX_INT - 36, MAX_INT - 1, MAX_INT, MAX_INT + 1, 2 ** 32, 2 ** 35];

const basicPart = fc.oneof(
  fc.constant(''),
  fc.stringMatching(/^[a-z0-9]{1,8}$/),
  fc.stringMatching(/^[a-z0-9-]{1,10}$/),
  fc.constantFrom('-', '--', 'a-', '-a', 'xn', 'xn--', 'A', 'ABC', '\u00e9', 'a\u00e9b', '\uffff'),
);
const delta = fc.oneof(
  { arbitrary: fc.nat(4000), weight: 4 },
  { arbitrary: fc.nat(MAX_INT), weight: 2 },
  { arbitrary: fc.constantFrom(...EDGE_DELTAS), weight: 2 },
  { arbitrary: fc.integer({ min: MAX_INT - 5000, max: MAX_INT + 5000 }), weight: 1 },
);
/** Attacker-steered encodings: raw deltas, edge code points placed exactly, corrupted tails. */
const steered = fc.oneof(
  fc.tuple(basicPart, fc.array(delta, { minLength: 0, maxLength: 6 }), fc.boolean()).map(([b, ds, up]) => rawEncode(b, ds, up)),
  fc
    .tuple(basicPart, fc.constantFrom(...EDGE_POINTS), fc.integer({ min: -2, max: 2 }), fc.nat(12), fc.array(delta, { maxLength: 3 }))
    .map(([b, cp, shift, at, more]) => rawEncode(b, [Math.max(0, firstDeltaFor(cp + shift, b.length, at % (b.length + 1))), ...more])),
  fc
    .tuple(basicPart, fc.array(delta, { minLength: 1, maxLength: 4 }), fc.nat(20), fc.constantFrom('', '-', '!', '.', '\u00e9', 'Z', '9', '--', '\u0000', ' '))
    .map(([b, ds, cut, tail]) => {
      const full = rawEncode(b, ds);
      return full.slice(0, Math.max(0, full.length - (cut % (full.length + 1)))) + tail;
    }),
  fc.stringMatching(/^[a-zA-Z0-9-]{0,40}$/),
  fc.string({ unit: 'binary', maxLength: 30 }),
);

/** Labels for the encoder: ASCII with BMP characters at the edges, repeated characters, many of them. */
const bmpChar = fc.oneof(
  fc.integer({ min: 0x80, max: 0xd7ff }).map((c) => String.fromCharCode(c)),
  fc.integer({ min: 0xe000, max: 0xffff }).map((c) => String.fromCharCode(c)),
  fc.constantFrom(...EDGE_POINTS.filter((c) => c <= 0xffff).map((c) => String.fromCharCode(c))),
);
const anyChar = fc.oneof(
  { arbitrary: fc.constantFrom(...'abcxyz019-'), weight: 3 },
  { arbitrary: bmpChar, weight: 3 },
  { arbitrary: fc.constantFrom('\ud800', '\udfff', '\ud83d\ude0a', 'A', '.', '\u0000', '\u007f'), weight: 1 },
);
const encoderLabel = fc.oneof(
  fc.array(anyChar, { maxLength: 24 }).map((cs) => cs.join('')),
  // More non-ASCII characters than the encoder's first table holds (64), and runs of one character.
  fc.tuple(fc.array(bmpChar, { minLength: 1, maxLength: 4 }), fc.integer({ min: 1, max: 90 })).map(([cs, n]) => cs.join('').repeat(Math.ceil(n / cs.length))),
  fc.string({ unit: 'binary', maxLength: 40 }),
);

describe('the BMP codec against punycode.js, at high run counts', () => {
  it('decodes every attacker-steered encoding as punycode.js, or refuses it where punycode.js throws or leaves the BMP', () => {
    let agreedLabels = 0;
    fc.assert(
      fc.property(steered, (encoded) => {
        const expected = referenceDecode(encoded);
        if (expected !== undefined && expected.length > 0) agreedLabels++;
        expect(decodeBmpPunycode(encoded)).toBe(expected);
      }),
      { numRuns: 150_000 },
    );
    expect(agreedLabels).toBeGreaterThan(20_000);
  });

  it('encodes every surrogate-free label (and every range of it) as punycode.js, and the encoding decodes back', () => {
    fc.assert(
      fc.property(encoderLabel, fc.nat(100), fc.nat(100), (label, a, b) => {
        const expected = referenceEncode(label);
        const got = encodeBmpPunycode(label);
        expect(got).toBe(expected);
        if (got !== undefined) expect(decodeBmpPunycode(got)).toBe(label);
        const from = Math.min(a, b, label.length);
        const to = Math.min(Math.max(a, b), label.length);
        expect(encodeBmpPunycode(label, from, to)).toBe(referenceEncode(label.slice(from, to)));
      }),
      { numRuns: 60_000 },
    );
  });

  it('agrees exactly at the edges: each edge code point at each place of short basic parts, and deltas at 2^31 − 1', () => {
    for (const basic of ['', 'a', 'ab', 'a-b', 'abcdefghij']) {
      for (const cp of EDGE_POINTS) {
        for (let at = 0; at <= basic.length; at++) {
          for (const shift of [-1, 0, 1]) {
            const d = firstDeltaFor(cp, basic.length, at) + shift;
            if (d < 0) continue;
            for (const more of [[], [0], [MAX_INT], [MAX_INT - d]]) {
              const encoded = rawEncode(basic, [d, ...more]);
              expect(decodeBmpPunycode(encoded), encoded).toBe(referenceDecode(encoded));
              expect(decodeBmpPunycode(encoded.toUpperCase()), encoded).toBe(referenceDecode(encoded.toUpperCase()));
            }
          }
        }
      }
    }
    for (const d of EDGE_DELTAS) {
      for (const basic of ['', 'a', 'abc']) {
        const encoded = rawEncode(basic, [d]);
        expect(decodeBmpPunycode(encoded), encoded).toBe(referenceDecode(encoded));
      }
    }
  });

  it('refuses a delta that overflows the encoder exactly where punycode.js does (U+FFFF after about 32,800 letters)', () => {
    // (U+FFFF − 128) × (basic + 1) crosses 2^31 − 1 between these lengths.
    const limit = Math.floor(MAX_INT / (0xffff - 128)) - 1;
    for (let basic = limit - 3; basic <= limit + 3; basic++) {
      for (const tail of ['\uffff', '\uffff\uffff', '\u0080\uffff', '\uffff\u0080']) {
        const label = 'a'.repeat(basic) + tail;
        expect(encodeBmpPunycode(label), `${basic} + ${JSON.stringify(tail)}`).toBe(referenceEncode(label));
      }
    }
  });

  it('answers the delimiter and empty cases as punycode.js: `xn--` alone, `-` only, a basic part and nothing after it', () => {
    for (const encoded of [
      '',
      '-',
      '--',
      '---',
      'a-',
      'a--',
      '-a',
      '--a',
      'a-b-',
      'abc',
      'ABC-',
      '-kva',
      '--kva',
      'bcher--kva',
      'bcher-kva-',
      'b-c-h-e-r-kva',
    ]) {
      expect(decodeBmpPunycode(encoded), JSON.stringify(encoded)).toBe(referenceDecode(encoded));
    }
  });
});

describe('the codec on the verify path: an attacker-steered xn-- prefix', () => {
  it('the fast path names exactly the general search claimants, and a verifier trusting one allows only when all are trusted', () => {
    // The fast path's own shape (labels of D joined by `-`, a hyphen as `--`, a last label of letters) with
    // any BMP code point, honestly encoded, then with one delta digit changed or digits added: the decoder
    // is steered to neighbouring code points and places.
    const wideChar = fc.oneof(bmpChar, fc.constantFrom(...'üéøßςжё日本가ªº'));
    const segment = fc
      .array(fc.oneof({ arbitrary: fc.constantFrom('a', 'de', 'b0', '9', 'www', 'xn'), weight: 2 }, { arbitrary: wideChar, weight: 1 }), {
        minLength: 1,
        maxLength: 4,
      })
      .map((parts) => parts.join(''));
    const shaped = fc
      .tuple(fc.array(fc.tuple(segment, fc.constantFrom('-', '--')), { minLength: 1, maxLength: 3 }), fc.constantFrom('de', 'com', 'org', 'x', 'qa', 'b0'))
      .map(
        ([parts, tld]) =>
          `${parts
            .map(([s, sep]) => s + sep)
            .join('')
            .replace(/-+$/, '')}-${tld}`,
      );
    const honest = shaped.map((label) => referenceEncode(label)).filter((e): e is string => e !== undefined);
    const base36 = fc.constantFrom(...'abcdefghijklmnopqrstuvwxyz0123456789');
    const encodedPrefix = fc.oneof(
      honest,
      fc.tuple(honest, fc.nat(40), base36).map(([e, at, d]) => {
        const i = e.lastIndexOf('-') + 1 + (at % Math.max(1, e.length - e.lastIndexOf('-') - 1));
        return e.slice(0, i) + d + e.slice(i + 1);
      }),
      fc.tuple(honest, fc.array(base36, { minLength: 1, maxLength: 3 })).map(([e, ds]) => e + ds.join('')),
    );
    const prefix = encodedPrefix.map((e) => `xn--${e}`).filter((p) => /^xn--[a-z0-9]([a-z0-9-]*[a-z0-9])?$/.test(p) && p.length <= 63);
    let answered = 0;
    let allowed = 0;
    fc.assert(
      fc.property(prefix, (p) => {
        const fast = plainPrefixClaimants(p);
        if (fast === undefined) return;
        answered++;
        const general = searchReadings(p);
        expect(general).toEqual({ claimants: fast, complete: true });
        // punycode.js's own reading of the label agrees with the codec's.
        expect(decodeBmpPunycode(p.slice(4))).toBe(punycode.toUnicode(p));
        for (const claimant of fast) {
          let verifier: ReturnType<typeof createVerifier>;
          try {
            verifier = createVerifier({ publishers: [`*.${claimant.publisherDomain}`] });
          } catch {
            continue;
          }
          const verdict = verifier.verify(`https://${p}.cdn.ampproject.org`);
          const everyTrusted = general.claimants.every(
            (c) => c.publisherDomain === claimant.publisherDomain || c.publisherDomain.endsWith(`.${claimant.publisherDomain}`),
          );
          if (verdict.allowed) {
            allowed++;
            expect(everyTrusted).toBe(true);
          }
        }
      }),
      { numRuns: 40_000 },
    );
    expect(answered).toBeGreaterThan(100);
    expect(allowed).toBeGreaterThan(100);
  });
});

describe('xn-- with empty or garbage text on the verify path', () => {
  it('every prefix `xn--` + up to 3 of [a-z0-9-] (and `xn--` alone) is judged without a throw, and allowed only when every claimant is trusted', () => {
    const configs = [
      ['example.com', '*.example.org'],
      ['bücher.de', '*.пример.рф'],
      ['*.a.com', '*.b.de', 'xn-a.com'],
    ];
    const verifiers = configs.map((publishers) => createVerifier({ publishers }));
    const alphabet = [...'abcdefghijklmnopqrstuvwxyz0123456789-'];
    const tails = [''];
    for (let length = 1; length <= 3; length++) for (const t of tails.filter((x) => x.length === length - 1)) for (const c of alphabet) tails.push(t + c);
    let judged = 0;
    for (const tail of tails) {
      const prefix = `xn--${tail}`;
      const general = searchReadings(prefix);
      for (const [k, verifier] of verifiers.entries()) {
        const verdict = verifier.verify(`https://${prefix}.cdn.ampproject.org`);
        judged++;
        if (!verdict.allowed) continue;
        const rules = configs[k] as string[];
        const trusted = (d: string) => rules.some((r) => (r.startsWith('*.') ? d === r.slice(2) || d.endsWith(`.${r.slice(2)}`) : d === r));
        expect(general.complete, prefix).toBe(true);
        expect(
          general.claimants.every((c) => trusted(c.publisherDomain)),
          `${prefix}: ${JSON.stringify(general.claimants)}`,
        ).toBe(true);
      }
    }
    expect(judged).toBe(tails.length * verifiers.length);
  });
});
