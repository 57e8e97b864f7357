// Compact allow-sets (issue #5): compile → bytes → load gives the verifier's
// answer for cache origins, in every prefix form, and a damaged file is
// always refused as a whole.
import { sha256 } from '@noble/hashes/sha2.js';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { type AmpCache, CACHES, compileAllowSet, createAllowSetBuilder, createVerifier, isAmpCorsError, loadAllowSet, prefixForms } from '../src/index.js';
import { COMPACT_MEMO_GENERATION_SIZE } from '../src/compact-allow-set.js';
import { publisherDomain } from './arbitraries.js';

const errorOf = (fn: () => unknown): { code: string; message: string } | undefined => {
  try {
    fn();
    return undefined;
  } catch (error) {
    return isAmpCorsError(error) ? { code: error.code, message: error.message } : { code: 'not-an-AmpCorsError', message: String(error) };
  }
};

/** Rewrites the trailing checksum, to test the checks behind it. */
const resealed = (bytes: Uint8Array, edit: (copy: Uint8Array) => void): Uint8Array => {
  const copy = bytes.slice();
  edit(copy);
  copy.set(sha256(copy.subarray(0, copy.length - 32)), copy.length - 32);
  return copy;
};

const originsOf = (domain: string, caches: readonly AmpCache[] = CACHES): string[] =>
  prefixForms(domain).flatMap(({ prefix }) => caches.map((cache) => `https://${prefix}.${cache.cacheDomain}`));

const LONG = `${'a'.repeat(40)}.${'b'.repeat(30)}.example.com`;
const DOMAINS = ['example.com', 'www.example.com', 'en-us.example.com', '⚡😊.com', 'äb-c.de', LONG];

describe('compile and load', () => {
  for (const encoding of ['rice', 'raw'] as const) {
    for (const hashBytes of [16, 20, 32]) {
      it(`allows every cache origin of every compiled domain (${encoding}, ${hashBytes}-byte hashes)`, () => {
        const set = loadAllowSet(compileAllowSet(DOMAINS, { encoding, hashBytes }));
        expect(set).toMatchObject({ encoding, hashBytes, domainCount: DOMAINS.length });
        expect(set.caches.map((c) => c.id)).toEqual(['google', 'bing']);
        for (const domain of DOMAINS) {
          for (const origin of originsOf(domain)) expect(set.verifyOrigin(origin), origin).toMatchObject({ allowed: true, via: 'cache' });
        }
        expect(set.verifyOrigin('https://example-org.cdn.ampproject.org')).toMatchObject({
          allowed: false,
          reason: 'unknown-publisher',
          publisherDomain: 'example.org',
        });
      });
    }
  }

  it('reports the domain a readable prefix spells, and says a hashed one is not recoverable', () => {
    const set = loadAllowSet(compileAllowSet(DOMAINS));
    expect(set.verifyOrigin('https://0-en--us-example-com-0.www.bing-amp.com')).toMatchObject({
      allowed: true,
      reason: 'cache-origin',
      publisherDomain: 'en-us.example.com',
      prefixForm: 'spec',
      prefix: '0-en--us-example-com-0',
      cache: { id: 'bing' },
    });
    const hashed = prefixForms(LONG)[0]?.prefix as string;
    expect(hashed).toMatch(/^[a-z2-7]{52}$/);
    const verdict = set.verifyOrigin(`https://${hashed}.cdn.ampproject.org`);
    expect(verdict).toMatchObject({ allowed: true, reason: 'cache-origin-hashed', prefix: hashed });
    expect(verdict).not.toHaveProperty('publisherDomain');
    expect(verdict.detail).toMatch(/not recoverable/);
    // toolbox-cache-url's form of äb-c.de is not the guide's, yet is allowed: it reverses to äb-c.de alone.
    const toolbox = prefixForms('äb-c.de').find((f) => f.form === 'toolbox')?.prefix as string;
    expect(toolbox).toBe('xn--b--c-de-4wa');
    expect(set.has(toolbox)).toBe(true);
    expect(set.verifyOrigin(`https://${toolbox}.cdn.ampproject.org`)).toMatchObject({
      allowed: true,
      reason: 'cache-origin',
      publisherDomain: 'xn--b-c-pla.de',
      prefixForm: 'toolbox',
    });
  });

  it('never compiles a readable form another domain also has (SPEC §6)', () => {
    // äb-c.com's toolbox form xn--b--c-com-zza is also toolbox's form of the
    // plain xn-b-c.com.zza, which anyone may register once .zza exists.
    const set = loadAllowSet(compileAllowSet(['äb-c.com']));
    expect(set.has('xn--b--c-com-zza')).toBe(false);
    expect(set.verifyOrigin('https://xn--b--c-com-zza.cdn.ampproject.org')).toMatchObject({ allowed: false, reason: 'unknown-publisher' });
    // Its hashes still identify it.
    for (const { prefix } of prefixForms('äb-c.com')) expect(set.verifyOrigin(`https://${prefix}.cdn.ampproject.org`).allowed).toBe(true);
  });

  it('denies with the verifier reason codes', () => {
    const set = loadAllowSet(compileAllowSet(['example.com']));
    const cases: [string | null, string][] = [
      [null, 'missing'],
      ['null', 'null-origin'],
      ['https://Example-com.cdn.ampproject.org', 'not-canonical'],
      ['http://example-com.cdn.ampproject.org', 'insecure-scheme'],
      ['https://example-com.cdn.ampproject.org:444', 'non-default-port'],
      ['https://cdn.ampproject.org', 'legacy-cache-origin'],
      ['https://a.example-com.cdn.ampproject.org', 'not-a-label'],
      ['https://example.com', 'unknown-origin'],
      ['https://example-com.cdn.ampproject.org.evil.com', 'unknown-origin'],
      ['https://v2c4ucasgcskftbjt4c7phpkbqedcdcqo23tkamleapoa5o6fygq.cdn.ampproject.org', 'hashed-unknown'],
      ['https://en--us-example-com.cdn.ampproject.org', 'not-reproducible'],
      ['https://a-b-1.cdn.ampproject.org', 'invalid-domain'],
      // a-.b.com's prefix is wrapped (hyphens at 3–4): a---b-com is nobody's.
      ['https://a---b-com.cdn.ampproject.org', 'not-reproducible'],
      // a-.b.com and a.-b.com (edge-hyphen labels, browser hosts) share it: never compiled.
      ['https://0-a---b-com-0.cdn.ampproject.org', 'unknown-publisher'],
      // No cache prefix is longer than 67 octets: refused before any decoding or hashing.
      [`https://${'xn--'.repeat(17)}a.cdn.ampproject.org`, 'not-a-label'],
      ['https://xn--zz-9999.cdn.ampproject.org', 'invalid-punycode'],
    ];
    for (const [origin, reason] of cases) expect(set.verifyOrigin(origin), String(origin)).toMatchObject({ allowed: false, reason });
    expect(set.has('example-com')).toBe(true);
    expect(set.has('example-org')).toBe(false);
    expect(set.has(undefined as unknown as string)).toBe(false);
  });

  it('holds only the caches it was built for', () => {
    const test: AmpCache = { id: 'test', name: 'Test cache', cacheDomain: 'amp.cache.test.example' };
    const set = loadAllowSet(compileAllowSet(['example.com'], { caches: [test] }));
    expect(set.caches).toEqual([{ id: 'test', name: 'test', cacheDomain: 'amp.cache.test.example' }]);
    expect(set.verifyOrigin('https://example-com.amp.cache.test.example')).toMatchObject({ allowed: true, cache: { id: 'test' } });
    expect(set.verifyOrigin('https://example-com.cdn.ampproject.org')).toMatchObject({ allowed: false, reason: 'unknown-origin' });
  });

  it('loads from a Node Buffer inside a shared pool, and keeps its own copy', () => {
    const bytes = compileAllowSet(['example.com'], { encoding: 'raw' });
    const pooled = Buffer.concat([Buffer.alloc(13), Buffer.from(bytes)]).subarray(13);
    const set = loadAllowSet(pooled);
    pooled.fill(0);
    expect(set.verifyOrigin('https://example-com.cdn.ampproject.org').allowed).toBe(true);
  });

  it('an empty set loads and allows nothing', () => {
    const set = loadAllowSet(compileAllowSet([]));
    expect(set.size).toBe(0);
    expect(set.verifyOrigin('https://example-com.cdn.ampproject.org')).toMatchObject({ allowed: false, reason: 'unknown-publisher' });
  });

  it('stores each prefix once, and Rice coding is smaller than raw hashes', () => {
    const domains = Array.from({ length: 3000 }, (_, i) => `shop${i}.example.com`);
    const builder = createAllowSetBuilder();
    for (const d of [...domains, ...domains]) builder.add(d);
    expect(builder.domainCount).toBe(6000);
    const rice = builder.build();
    // Each plain domain: its readable prefix and the hash of the domain.
    expect(loadAllowSet(rice).size).toBe(6000);
    const raw = compileAllowSet(domains, { encoding: 'raw' });
    expect(raw.length).toBeGreaterThan(6000 * 16);
    expect(rice.length / 6000).toBeLessThan(15);
    expect(rice.length).toBeLessThan(raw.length);
  });
});

describe('refused input', () => {
  it('refuses domains the verifier refuses, naming them, and keeps building', () => {
    const builder = createAllowSetBuilder();
    builder.add('example.com');
    expect(errorOf(() => builder.add('*.example.org'))?.code).toBe('invalid-domain');
    expect(errorOf(() => builder.add('co.uk'))?.code).toBe('public-suffix-rule');
    expect(errorOf(() => builder.add('x.cdn.ampproject.org'))?.code).toBe('publisher-covers-cache');
    const bad = errorOf(() => builder.add('exa mple.com'));
    expect(bad?.code).toBe('invalid-domain');
    expect(bad?.message).toContain('exa mple.com');
    expect(builder.domainCount).toBe(1);
    expect(loadAllowSet(builder.build()).size).toBe(prefixForms('example.com').length);
  });

  it('refuses hashes shorter than 128 bits and unknown options', () => {
    for (const hashBytes of [8, 12, 17, 64]) expect(errorOf(() => compileAllowSet([], { hashBytes }))?.code).toBe('invalid-option');
    expect(errorOf(() => compileAllowSet([], { encoding: 'zip' as 'raw' }))?.code).toBe('invalid-option');
    expect(errorOf(() => compileAllowSet([], { caches: [] }))?.code).toBe('invalid-cache');
  });
});

describe('damaged files are refused whole', () => {
  const small = compileAllowSet(['example.com', 'www.example.com', LONG]);

  it('every single-byte change, at every offset, is refused', () => {
    for (let offset = 0; offset < small.length; offset++) {
      for (const flip of [0x01, 0x80, 0xff]) {
        const copy = small.slice();
        copy[offset] = (copy[offset] as number) ^ flip;
        expect(errorOf(() => loadAllowSet(copy))?.code, `offset ${offset}`).toBe('invalid-allow-set');
      }
    }
  });

  it('every truncation, and any appended byte, is refused', () => {
    for (let length = 0; length < small.length; length++) {
      expect(errorOf(() => loadAllowSet(small.subarray(0, length)))?.code, `length ${length}`).toBe('invalid-allow-set');
    }
    expect(errorOf(() => loadAllowSet(Uint8Array.of(...small, 0)))?.code).toBe('invalid-allow-set');
    expect(errorOf(() => loadAllowSet([...small] as unknown as Uint8Array))?.code).toBe('invalid-allow-set');
  });

  it('random corruption of random sets is refused (property)', () => {
    fc.assert(
      fc.property(
        fc.uniqueArray(publisherDomain, { minLength: 1, maxLength: 20 }),
        fc.constantFrom('rice' as const, 'raw' as const),
        fc.nat(),
        fc.integer({ min: 1, max: 255 }),
        fc.boolean(),
        (domains, encoding, where, flip, truncate) => {
          const bytes = compileAllowSet(domains, { encoding });
          const offset = where % bytes.length;
          const damaged = truncate ? bytes.subarray(0, offset) : bytes.slice();
          if (!truncate) damaged[offset] = (damaged[offset] as number) ^ flip;
          expect(errorOf(() => loadAllowSet(damaged))?.code).toBe('invalid-allow-set');
        },
      ),
      { numRuns: 150 },
    );
  });

  it('names the problem: magic, version, checksum', () => {
    expect(errorOf(() => loadAllowSet(resealed(small, (b) => (b[0] = 0x42))))?.message).toMatch(/magic/);
    expect(errorOf(() => loadAllowSet(resealed(small, (b) => (b[9] = 2))))?.message).toMatch(/version 2 is not supported/);
    const flipped = small.slice();
    flipped[30] = (flipped[30] as number) ^ 1;
    expect(errorOf(() => loadAllowSet(flipped))?.message).toMatch(/checksum/);
  });

  it('checks the structure behind a valid checksum', () => {
    const raw = compileAllowSet(['a.example.com', 'b.example.com'], { encoding: 'raw' });
    const end = raw.length - 32;
    const edits: [string, (b: Uint8Array) => void, RegExp][] = [
      ['unknown encoding', (b) => (b[10] = 7), /encoding/],
      ['short hashes', (b) => (b[11] = 8), /hash length/],
      ['count mismatch', (b) => (b[15] = 3), /bytes of data/],
      ['reserved bytes', (b) => (b[23] = 1), /reserved/],
      ['no caches', (b) => (b[21] = 0), /no caches/],
      ['unsorted hashes', (b) => b.copyWithin(end - 32, end - 16, end), /not greater/],
      ['bad cache domain', (b) => (b[32] = 0x2e), /cache/],
    ];
    for (const [what, edit, message] of edits) {
      const error = errorOf(() => loadAllowSet(resealed(raw, edit)));
      expect(error?.code, what).toBe('invalid-allow-set');
      expect(error?.message, what).toMatch(message);
    }
  });
});

describe('agreement with the verifier (property)', () => {
  it('compiled domains are allowed on every cache in every form; other domains are not', () => {
    fc.assert(
      fc.property(fc.uniqueArray(publisherDomain, { minLength: 1, maxLength: 8 }), fc.array(publisherDomain, { maxLength: 8 }), (domains, others) => {
        const set = loadAllowSet(compileAllowSet(domains));
        const verifier = createVerifier({ publishers: domains });
        const allowedPrefixes = new Set(domains.flatMap((d) => prefixForms(d).map((f) => f.prefix)));
        for (const domain of domains) {
          for (const origin of originsOf(domain)) expect(set.verifyOrigin(origin).allowed, origin).toBe(true);
        }
        for (const other of others) {
          for (const origin of originsOf(other)) {
            const verdict = set.verifyOrigin(origin);
            expect(verdict.allowed, origin).toBe(verifier.verify(origin).allowed);
            const prefix = origin.slice('https://'.length).split('.')[0] as string;
            if (!allowedPrefixes.has(prefix)) expect(verdict.allowed, origin).toBe(false);
          }
        }
      }),
      { numRuns: 150 },
    );
  });
});

describe('long toolbox prefixes', () => {
  it('allows the 64–67 octet prefix toolbox wraps after its 63-octet check, as the verifier does', () => {
    // found by the agreement property: a 64-octet toolbox form
    // (a domain without "--", so that no edge-hyphen reading claims its prefix: ab-…)
    const domain = `ab-${'a'.repeat(55)}.com`;
    const toolbox = prefixForms(domain).find((f) => f.form === 'toolbox');
    expect(toolbox?.prefix.length).toBeGreaterThan(63);
    const origin = `https://${toolbox?.prefix}.cdn.ampproject.org`;
    expect(createVerifier({ publishers: [domain] }).verify(origin).allowed).toBe(true);
    expect(loadAllowSet(compileAllowSet([domain])).verifyOrigin(origin).allowed).toBe(true);
    expect(loadAllowSet(compileAllowSet(['a.com'])).verifyOrigin(origin).allowed).toBe(false);
  });
});

// Issue 16: a repeated origin is answered from a bounded memo in front of the SHA-256.
describe('the recent-verdict memo (issue 16)', () => {
  it('a repeated origin gets the same frozen verdict; the memo forgets after two generations of other origins', () => {
    const set = loadAllowSet(compileAllowSet(['example.com']));
    const origin = 'https://example-com.cdn.ampproject.org';
    const first = set.verifyOrigin(origin);
    expect(first).toMatchObject({ allowed: true, publisherDomain: 'example.com' });
    expect(Object.isFrozen(first)).toBe(true);
    expect(set.verifyOrigin(origin)).toBe(first);
    // Denied origins are remembered too, with the same answer as the first time.
    const denied = set.verifyOrigin('https://other-com.cdn.ampproject.org');
    expect(set.verifyOrigin('https://other-com.cdn.ampproject.org')).toBe(denied);
    expect(denied).toMatchObject({ allowed: false, reason: 'unknown-publisher' });
    // Bounded: after twice a generation of distinct origins (cheap ones: not on a cache), the first is forgotten.
    for (let i = 0; i < 2 * COMPACT_MEMO_GENERATION_SIZE + 1; i++) set.verifyOrigin(`https://h${i}.example`);
    const again = set.verifyOrigin(origin);
    expect(again).not.toBe(first);
    expect(again).toEqual(first);
  });

  it('the attacker: a remembered allowed verdict cannot be altered for the next request, and a hostile long header is judged, not kept', () => {
    const set = loadAllowSet(compileAllowSet(['example.com']));
    const origin = 'https://example-com.cdn.ampproject.org';
    const first = set.verifyOrigin(origin);
    expect(() => {
      (first as { allowed: boolean }).allowed = false;
    }).toThrow(TypeError);
    expect(set.verifyOrigin(origin).allowed).toBe(true);
    const long = `https://${'a'.repeat(400)}.cdn.ampproject.org`;
    expect(set.verifyOrigin(long)).toMatchObject({ allowed: false, reason: 'too-long' });
    expect(set.verifyOrigin(long)).not.toBe(set.verifyOrigin(long));
  });
});
