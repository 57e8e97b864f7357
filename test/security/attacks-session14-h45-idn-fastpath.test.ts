// Attacker's review (session 14, helper-45): the simple-IDN fast path reads an `xn--` cache prefix with
// ampcors's own BMP punycode codec (domain-prefix.ts: decodeBmpPunycode, encodeBmpPunycode). The attacker
// picks the prefix, so it need not be anyone's encoding: arbitrary base-36 text after `xn--`, an
// encoding with digits spliced in (deltas pushed past the BMP, into the surrogates, towards overflow),
// labels at the 63-octet limit, and hyphens anywhere. Wherever the fast path answers, its claimants
// must be exactly the general search's (tr46 + punycode.js), and a verifier configured with one of them
// must never allow a prefix the general search would also give to another publisher.
import fc from 'fast-check';
import { toASCII } from 'tr46';
import { describe, expect, it } from 'vitest';
import { plainPrefixClaimants, searchReadings } from '../../packages/core/src/prefix-claimants.js';
import { createVerifier } from '../../packages/core/src/index.js';

/** The punycode of a label (UTS #46 mapped, no validity rule: the attacker need not pass any), without `xn--`. */
function punycodeEncode(label: string): string {
  const ascii = toASCII(label, { transitionalProcessing: false }) ?? label;
  return ascii.startsWith('xn--') ? ascii.slice(4) : ascii;
}

const BASE36 = 'abcdefghijklmnopqrstuvwxyz0123456789';
const baseChar = fc.constantFrom(...BASE36, '-');
const wide = fc.constantFrom(...'üéøßςжё日本가\u00a0\u00ad\u0080\uffff\ud7ff\ue000\ufb01', 'Ü', '\u0301', 'א');
const ascii = fc.constantFrom('a', 'de', 'com', 'x', 'xn', '0', '9', '-', '--', 'www', 'org');
const simpleWide = fc.constantFrom(...'üéøßςжё日本가\ud7a3\ue000');
const segment = fc
  .array(fc.oneof({ arbitrary: fc.constantFrom('a', 'de', 'b0', '9', 'www', 'org'), weight: 2 }, { arbitrary: simpleWide, weight: 1 }), {
    minLength: 1,
    maxLength: 4,
  })
  .map((p) => p.join(''));
const label = fc.oneof(
  fc.array(fc.oneof({ arbitrary: ascii, weight: 3 }, { arbitrary: wide, weight: 1 }), { minLength: 1, maxLength: 12 }).map((p) => p.join('')),
  // The fast path's own shape: labels of D joined by '-', the last one a top-level domain of letters.
  fc.tuple(fc.array(fc.tuple(segment, fc.constantFrom('-', '--')), { minLength: 1, maxLength: 3 }), fc.constantFrom('de', 'com', 'org', 'x', 'qa')).map(
    ([parts, tld]) =>
      parts
        .map(([s, sep]) => s + sep)
        .join('')
        .replace(/-+$/, '') +
      '-' +
      tld,
  ),
);

/** Prefixes an attacker may put before `.cdn.ampproject.org`. */
const prefix = fc.oneof(
  // Honest encodings (the fast path's own shape among them).
  label.map((l) => `xn--${punycodeEncode(l)}`),
  // Arbitrary base-36 text with hyphens after `xn--`, up to the 63-octet label limit.
  fc.array(baseChar, { minLength: 1, maxLength: 59 }).map((c) => `xn--${c.join('')}`),
  // A real encoding with base-36 digits spliced in (pushes deltas past the BMP or into surrogates).
  fc.tuple(label, fc.array(fc.constantFrom(...BASE36), { minLength: 1, maxLength: 6 }), fc.nat(60)).map(([l, noise, at]) => {
    const encoded = punycodeEncode(l);
    const cut = Math.min(at, encoded.length);
    return `xn--${encoded.slice(0, cut)}${noise.join('')}${encoded.slice(cut)}`;
  }),
  // Real encodings, padded to the 63-octet limit and one past it.
  fc.tuple(label, fc.constantFrom(0, 1, 2)).map(([l, over]) => {
    const encoded = `xn--${punycodeEncode(l)}`;
    const basic = 'a'.repeat(Math.max(0, 63 + over - encoded.length));
    return `xn--${punycodeEncode(basic + l)}`;
  }),
);

describe('attacker-chosen xn-- prefixes: the BMP codec fast path against the general search', () => {
  it('wherever the fast path answers, it names exactly the general search claimants', () => {
    let answered = 0;
    fc.assert(
      fc.property(prefix, (p) => {
        const fast = plainPrefixClaimants(p);
        if (fast === undefined) return;
        answered++;
        expect(searchReadings(p)).toEqual({ claimants: fast, complete: true });
      }),
      { numRuns: 6000 },
    );
    expect(answered).toBeGreaterThan(150);
  });

  it('a verifier trusting one fast-path claimant allows the prefix only when every general-search claimant is trusted', () => {
    let answered = 0;
    let allowed = 0;
    fc.assert(
      fc.property(prefix, (p) => {
        const fast = plainPrefixClaimants(p);
        if (fast === undefined) return;
        answered++;
        const general = searchReadings(p);
        for (const claimant of fast) {
          let verifier: ReturnType<typeof createVerifier>;
          try {
            verifier = createVerifier({ publishers: [claimant.publisherDomain] });
          } catch {
            continue;
          }
          const verdict = verifier.verify(`https://${p}.cdn.ampproject.org`);
          const expected = general.complete && general.claimants.every((c) => c.publisherDomain === claimant.publisherDomain);
          expect(verdict.allowed).toBe(expected);
          if (verdict.allowed) allowed++;
          if (verdict.allowed) expect(verdict).toMatchObject({ publisherDomain: claimant.publisherDomain });
        }
      }),
      { numRuns: 1500 },
    );
    expect(answered).toBeGreaterThan(50);
    expect(allowed).toBeGreaterThan(20);
  });
});
