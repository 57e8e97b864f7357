// Issue #7: no SHA-256 and no punycode on the allowed path; issue 16: nor on the
// readable ASCII path of a wildcard rule or an unknown publisher. Both modules (and
// ampcors's own punycode codec, domain-prefix.ts) are wrapped in spies; after the verifier is built, verifying allowed cache
// origins (readable, hashed, IDN) must not call either.
import { afterEach, describe, expect, it, vi } from 'vitest';
import { CACHES, createVerifier, domainPrefix, fallbackPrefix } from '../src/index.js';

const calls = vi.hoisted(() => ({ sha256: 0, punycode: 0, tr46: 0 }));

vi.mock('@noble/hashes/sha2.js', async (importOriginal) => {
  const original = await importOriginal<typeof import('@noble/hashes/sha2.js')>();
  const sha256 = Object.assign((...args: Parameters<typeof original.sha256>) => {
    calls.sha256++;
    return original.sha256(...args);
  }, original.sha256);
  return { ...original, sha256 };
});

vi.mock('punycode/punycode.es6.js', async (importOriginal) => {
  const original = await importOriginal<Record<string, (input: string) => string>>();
  const counted = (fn: (input: string) => string) => (input: string) => {
    calls.punycode++;
    return fn(input);
  };
  return {
    ...original,
    toASCII: counted(original.toASCII as never),
    toUnicode: counted(original.toUnicode as never),
    encode: counted(original.encode as never),
    decode: counted(original.decode as never),
  };
});

// ampcors's own RFC 3492 codec for BMP labels (the simple-IDN path) counts as punycode too.
vi.mock('../src/domain-prefix.js', async (importOriginal) => {
  const original = await importOriginal<typeof import('../src/domain-prefix.js')>();
  return {
    ...original,
    decodeBmpPunycode: (encoded: string) => {
      calls.punycode++;
      return original.decodeBmpPunycode(encoded);
    },
    encodeBmpPunycode: (label: string, from?: number, to?: number) => {
      calls.punycode++;
      return original.encodeBmpPunycode(label, from, to);
    },
  };
});

vi.mock('tr46', async (importOriginal) => {
  const original = await importOriginal<typeof import('tr46')>();
  const counted =
    <A extends unknown[], R>(fn: (...args: A) => R) =>
    (...args: A): R => {
      calls.tr46++;
      return fn(...args);
    };
  return { ...original, toASCII: counted(original.toASCII), toUnicode: counted(original.toUnicode) };
});

afterEach(() => {
  calls.sha256 = 0;
  calls.punycode = 0;
  calls.tr46 = 0;
});

describe('the allowed path', () => {
  const domains = ['www.example.com', `${'a'.repeat(60)}.example.com`, 'xn--57hw060o.com', 'en-us.example.org'];

  it('the spies see the algorithms (so silence below means something)', () => {
    fallbackPrefix('example.com');
    domainPrefix('xn--57hw060o.com');
    domainPrefix('Bücher.de');
    expect(calls.sha256).toBeGreaterThan(0);
    expect(calls.punycode).toBeGreaterThan(0);
    expect(calls.tr46).toBeGreaterThan(0);
  });

  it('verify of allowed cache origins, readable and hashed, calls neither SHA-256, punycode nor UTS #46', () => {
    const verifier = createVerifier({ publishers: domains });
    const origins = [...verifier.allowSet.entries()].map(([origin]) => origin);
    expect(origins.some((o) => o.startsWith(`https://${fallbackPrefix(domains[1] as string)}.`))).toBe(true);
    calls.sha256 = 0;
    calls.punycode = 0;
    calls.tr46 = 0;
    for (let pass = 0; pass < 2; pass++) {
      for (const origin of origins) expect(verifier.verify(origin)).toMatchObject({ allowed: true, via: 'cache' });
    }
    expect(calls).toEqual({ sha256: 0, punycode: 0, tr46: 0 });
  });

  it("issue 16: a wildcard rule's readable ASCII cache origin, and an unknown publisher's, call neither SHA-256, punycode nor UTS #46", () => {
    const verifier = createVerifier({ publishers: [...domains, '*.example.net'] });
    calls.sha256 = 0;
    calls.punycode = 0;
    calls.tr46 = 0;
    for (const cache of CACHES) {
      // Allowed under the wildcard: the attacker's side is below, where every other reading is denied.
      expect(verifier.verify(`https://shop-example-net.${cache.cacheDomain}`)).toMatchObject({
        allowed: true,
        reason: 'cache-origin-wildcard',
        publisherDomain: 'shop.example.net',
      });
      expect(verifier.verify(`https://a--b-shop-example-net.${cache.cacheDomain}`)).toMatchObject({ allowed: true, publisherDomain: 'a-b.shop.example.net' });
      // Denied: another publisher, a lookalike of the wildcard's base, and the base spelled with a hyphen.
      expect(verifier.verify(`https://www-other-com.${cache.cacheDomain}`)).toMatchObject({
        allowed: false,
        reason: 'unknown-publisher',
        publisherDomain: 'www.other.com',
      });
      expect(verifier.verify(`https://shop-example-net-evil-com.${cache.cacheDomain}`)).toMatchObject({
        allowed: false,
        reason: 'unknown-publisher',
        publisherDomain: 'shop.example.net.evil.com',
      });
      expect(verifier.verify(`https://shop-example--net-com.${cache.cacheDomain}`)).toMatchObject({
        allowed: false,
        reason: 'unknown-publisher',
        publisherDomain: 'shop.example-net.com',
      });
    }
    expect(calls).toEqual({ sha256: 0, punycode: 0, tr46: 0 });
  });

  it("issue 16: a simple IDN prefix (a wildcard rule's, an unknown publisher's) is read without UTS #46 or SHA-256 once its letters are known", () => {
    const verifier = createVerifier({ publishers: [...domains, '*.example.net'] });
    const munich = domainPrefix('münchen.example.net');
    const books = domainPrefix('bücher.de');
    // The first sight of a letter (é, ü) asks UTS #46 about it, once.
    calls.tr46 = 0;
    for (const prefix of [munich, books, 'xn--caf-example-net-dnb']) verifier.verify(`https://${prefix}.cdn.ampproject.org`);
    expect(calls.tr46).toBeLessThanOrEqual(2);
    calls.sha256 = 0;
    calls.punycode = 0;
    calls.tr46 = 0;
    for (const cache of CACHES) {
      // münchen.example.net (xn--mnchen-example-net-m6b): one claimant, under the wildcard.
      expect(verifier.verify(`https://${munich}.${cache.cacheDomain}`)).toMatchObject({
        allowed: true,
        reason: 'cache-origin-wildcard',
        publisherDomain: 'xn--mnchen-3ya.example.net',
        prefixForm: 'spec',
      });
      // The attacker's side: café.example.net's prefix also reads as xn-caf.example.net.dnb (toolbox), outside the rules.
      expect(verifier.verify(`https://xn--caf-example-net-dnb.${cache.cacheDomain}`)).toMatchObject({
        allowed: false,
        reason: 'unknown-publisher',
        publisherDomain: 'xn-caf.example.net.dnb',
        detail: 'xn--caf-example-net-dnb is also the prefix of xn-caf.example.net.dnb (toolbox algorithm), which is not a configured publisher',
      });
      expect(verifier.verify(`https://${books}.${cache.cacheDomain}`)).toMatchObject({ allowed: false, reason: 'unknown-publisher' });
    }
    expect(calls.sha256).toBe(0);
    expect(calls.tr46).toBe(0);
    expect(calls.punycode).toBeGreaterThan(0);
  });

  it('a denied IDN cache origin does reach the algorithms (reverse path), as expected', () => {
    const verifier = createVerifier({ publishers: domains, caches: CACHES });
    calls.punycode = 0;
    // A plain ASCII prefix is reversed without punycode; an `xn--` one needs it.
    expect(verifier.verify('https://xn--bcher-ch-65a.cdn.ampproject.org')).toMatchObject({ allowed: false, reason: 'unknown-publisher' });
    expect(calls.punycode).toBeGreaterThan(0);
  });
});
