// Compact allow-sets at their edges (issue #6, mutation testing): the file
// format field by field as documented, every refusal of the builder and the
// loader with its message, and every verdict of verifyOrigin with what it says.
import { createHash } from 'node:crypto';
import {
  ALLOW_SET_VERSION,
  type AmpCache,
  CACHES,
  compileAllowSet,
  createAllowSetBuilder,
  fallbackPrefix,
  loadAllowSet,
  MAX_CACHES,
  prefixForms,
} from '@ampcors/core';
import { describe, expect, it } from 'vitest';
import { expectError } from './ampcors-error.js';

/** SHA-256 by node:crypto, independent of the hash core uses. */
function sha256(bytes: Uint8Array): Uint8Array {
  return new Uint8Array(createHash('sha256').update(bytes).digest());
}

/** Rewrites the trailing checksum after an edit, to reach the checks behind it. */
function resealed(bytes: Uint8Array, edit: (copy: Uint8Array) => void): Uint8Array {
  const copy = bytes.slice();
  edit(copy);
  copy.set(sha256(copy.subarray(0, copy.length - 32)), copy.length - 32);
  return copy;
}

/** Builds a file by hand, per the documented format. */
function handmade(fields: {
  encoding?: number;
  hashBytes?: number;
  count: number;
  domains?: number;
  rice?: number;
  caches?: Array<[string, string]>;
  data: Uint8Array;
  reserved?: number;
}): Uint8Array {
  const caches = fields.caches ?? [['google', 'cdn.ampproject.org']];
  const cacheBytes = caches.flatMap(([id, domain]) => [id.length, ...new TextEncoder().encode(id), domain.length, ...new TextEncoder().encode(domain)]);
  const head = new Uint8Array(24);
  head.set([0x41, 0x4d, 0x50, 0x43, 0x41, 0x53, 0x0d, 0x0a]);
  const view = new DataView(head.buffer);
  view.setUint16(8, 1);
  head[10] = fields.encoding ?? 0;
  head[11] = fields.hashBytes ?? 16;
  view.setUint32(12, fields.count);
  view.setUint32(16, fields.domains ?? fields.count);
  head[20] = fields.rice ?? 0;
  head[21] = caches.length;
  view.setUint16(22, fields.reserved ?? 0);
  const length = new Uint8Array(4);
  new DataView(length.buffer).setUint32(0, fields.data.length);
  const body = Uint8Array.of(...head, ...cacheBytes, ...length, ...fields.data);
  return Uint8Array.of(...body, ...sha256(body));
}

const digest = (prefix: string, bytes = 16) => sha256(new TextEncoder().encode(prefix)).slice(0, bytes);

describe('the file format, field by field', () => {
  it('raw encoding: header, caches, sorted truncated prefix hashes, checksum', () => {
    const bytes = compileAllowSet(['example.com', 'www.example.com'], { encoding: 'raw' });
    const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
    expect(new TextDecoder().decode(bytes.subarray(0, 8))).toBe('AMPCAS\r\n');
    expect(view.getUint16(8)).toBe(ALLOW_SET_VERSION);
    expect(ALLOW_SET_VERSION).toBe(1);
    expect(bytes[10]).toBe(0);
    expect(bytes[11]).toBe(16);
    // Each plain domain: its readable prefix and its hash (SPEC §6).
    expect(view.getUint32(12)).toBe(4);
    expect(view.getUint32(16)).toBe(2);
    expect(bytes[20]).toBe(0);
    expect(bytes[21]).toBe(2);
    expect(view.getUint16(22)).toBe(0);
    let at = 24;
    const caches: string[] = [];
    for (let i = 0; i < 2; i++) {
      const id = new TextDecoder().decode(bytes.subarray(at + 1, at + 1 + (bytes[at] as number)));
      at += 1 + (bytes[at] as number);
      const domain = new TextDecoder().decode(bytes.subarray(at + 1, at + 1 + (bytes[at] as number)));
      at += 1 + (bytes[at] as number);
      caches.push(`${id} ${domain}`);
    }
    expect(caches).toEqual(['google cdn.ampproject.org', 'bing www.bing-amp.com']);
    expect(view.getUint32(at)).toBe(64);
    const prefixes = ['example-com', 'www-example-com', fallbackPrefix('example.com'), fallbackPrefix('www.example.com')];
    const hashes = prefixes.map((p) => digest(p)).sort((a, b) => Buffer.compare(a, b));
    expect([...bytes.subarray(at + 4, at + 68)]).toEqual(hashes.flatMap((h) => [...h]));
    expect(bytes.length).toBe(at + 68 + 32);
    expect([...bytes.subarray(at + 68)]).toEqual([...sha256(bytes.subarray(0, at + 68))]);
  });
  it('Rice encoding: the first hash, then the coded deltas, and the parameter in the header', () => {
    const domains = Array.from({ length: 50 }, (_, i) => `d${i}.example.com`);
    const bytes = compileAllowSet(domains, { hashBytes: 20 });
    expect(bytes[10]).toBe(1);
    expect(bytes[11]).toBe(20);
    expect(bytes[20]).toBeGreaterThan(100); // 100 random 160-bit values: about 160 − log2(100)
    expect(bytes[20]).toBeLessThan(160);
    const set = loadAllowSet(bytes);
    expect(set).toMatchObject({ encoding: 'rice', hashBytes: 20, size: 100, domainCount: 50 });
    const raw = compileAllowSet(domains, { encoding: 'raw', hashBytes: 20 });
    expect(bytes.length).toBeLessThan(raw.length);
  });
  it('one hash under Rice: parameter 0, data is just the hash', () => {
    // A domain whose every algorithm falls back to the hash has one prefix.
    const long = `${'a'.repeat(40)}.${'b'.repeat(30)}.com`;
    expect(prefixForms(long)).toHaveLength(1);
    const bytes = compileAllowSet([long]);
    expect(bytes[20]).toBe(0);
    expect(loadAllowSet(bytes).has(fallbackPrefix(long))).toBe(true);
    expect(bytes.length).toBe(24 + (1 + 6 + 1 + 18) + (1 + 4 + 1 + 16) + 4 + 16 + 32);
  });
  it('an empty set: no data, under either encoding', () => {
    for (const encoding of ['raw', 'rice'] as const) {
      const bytes = compileAllowSet([], { encoding });
      expect(new DataView(bytes.buffer).getUint32(12)).toBe(0);
      const set = loadAllowSet(bytes);
      expect(set.size).toBe(0);
      expect(set.has('example-com')).toBe(false);
    }
  });
  it('stores the caches it was built for, custom ones by id and domain', () => {
    const custom: AmpCache = { id: 'test', name: 'Test cache', cacheDomain: 'amp.cache.example.net' };
    const set = loadAllowSet(compileAllowSet(['example.com'], { caches: [custom] }));
    expect(set.caches).toEqual([{ id: 'test', name: 'test', cacheDomain: 'amp.cache.example.net' }]);
    expect(set.verifyOrigin('https://example-com.amp.cache.example.net')).toMatchObject({ allowed: true, cache: { id: 'test' } });
    expect(loadAllowSet(compileAllowSet(['example.com'])).caches).toEqual(CACHES);
  });
});

describe('createAllowSetBuilder', () => {
  it('counts domains and hashes, and grows past its first block', () => {
    const builder = createAllowSetBuilder({ encoding: 'raw' });
    expect(builder.domainCount).toBe(0);
    expect(builder.hashCount).toBe(0);
    builder.add('bücher.de');
    expect(builder.domainCount).toBe(1);
    expect(builder.hashCount).toBe(prefixForms('bücher.de').length);
    for (let i = 0; i < 400; i++) builder.add(`d${i}.example.com`);
    expect(builder.domainCount).toBe(401);
    const set = loadAllowSet(builder.build());
    expect(set.size).toBe(800 + prefixForms('bücher.de').length);
    for (let i = 0; i < 400; i += 37) expect(set.has(`d${i}-example-com`)).toBe(true);
    expect(set.has(fallbackPrefix('bücher.de'))).toBe(true);
  });
  it('a domain added twice is stored once but counted twice', () => {
    const builder = createAllowSetBuilder();
    builder.add('example.com');
    builder.add('EXAMPLE.com');
    expect(builder.domainCount).toBe(2);
    expect(builder.hashCount).toBe(4);
    expect(loadAllowSet(builder.build())).toMatchObject({ size: 2, domainCount: 2 });
  });
  it('refuses wildcard rules, quoting at most 80 characters', () => {
    const builder = createAllowSetBuilder();
    expectError(
      () => builder.add('*.example.com'),
      'invalid-domain',
      '"*.example.com": a compact allow-set holds exact domains; wildcard rules need createVerifier',
    );
    const long = `*.${'a'.repeat(100)}.com`;
    expectError(() => builder.add(long), 'invalid-domain', new RegExp(`^${JSON.stringify(long.slice(0, 80)).replaceAll('*', '\\*').replaceAll('.', '\\.')}:`));
    expectError(() => builder.add('co.uk'), 'public-suffix-rule', /co\.uk/);
    expectError(() => builder.add(42 as never), 'invalid-domain', /not a string$/);
    expectError(() => builder.add('x.cdn.ampproject.org'), 'publisher-covers-cache', /cdn\.ampproject\.org/);
    expect(builder.domainCount).toBe(0);
  });
  it('refuses bad options, naming them', () => {
    for (const hashBytes of [8, 12, 33, '16'])
      expectError(
        () => createAllowSetBuilder({ hashBytes: hashBytes as never }),
        'invalid-option',
        'hashBytes must be one of 16, 20, 24, 28, 32 (at least 128 bits)',
      );
    expectError(() => createAllowSetBuilder({ encoding: 'gzip' as never }), 'invalid-option', 'encoding must be raw or rice');
    // The file has one byte for the number of caches; validateCaches accepts far fewer (MAX_CACHES).
    const many = Array.from({ length: MAX_CACHES + 1 }, (_, i) => ({ id: `c${i}`, name: `C${i}`, cacheDomain: `c${i}.example.net` }));
    expect(MAX_CACHES).toBeLessThan(256);
    expectError(() => createAllowSetBuilder({ caches: many }), 'invalid-cache', /at most \d+ are accepted/);
    expect(loadAllowSet(compileAllowSet(['example.com'], { caches: many.slice(0, MAX_CACHES) })).caches).toHaveLength(MAX_CACHES);
    expectError(() => createAllowSetBuilder({ caches: [] }), 'invalid-cache', /must not be empty/);
  });
  it('accepts every allowed hash length', () => {
    for (const hashBytes of [16, 20, 24, 28, 32])
      expect(loadAllowSet(compileAllowSet(['example.com', 'a.example.com'], { hashBytes })).hashBytes).toBe(hashBytes);
  });
});

describe('loadAllowSet: refusals name the problem', () => {
  const raw = compileAllowSet(['a.example.com', 'b.example.com'], { encoding: 'raw' });
  const rice = compileAllowSet(['a.example.com', 'b.example.com', 'c.example.com']);
  it('not bytes, or too short', () => {
    expectError(() => loadAllowSet([1, 2, 3] as never), 'invalid-allow-set', 'Invalid allow-set: expected a Uint8Array');
    expectError(() => loadAllowSet(new Uint8Array(59)), 'invalid-allow-set', 'Invalid allow-set: 59 bytes is too short (truncated?)');
    // 60 bytes is long enough to be judged: it fails on its magic.
    expectError(() => loadAllowSet(new Uint8Array(60)), 'invalid-allow-set', 'Invalid allow-set: not an ampcors allow-set (bad magic bytes)');
  });
  it('magic, version, checksum', () => {
    expectError(() => loadAllowSet(resealed(raw, (b) => (b[7] = 0x0d))), 'invalid-allow-set', /bad magic bytes/);
    expectError(
      () => loadAllowSet(resealed(raw, (b) => (b[8] = 1))),
      'invalid-allow-set',
      'Invalid allow-set: format version 257 is not supported (this ampcors reads version 1)',
    );
    const flipped = raw.slice();
    flipped[flipped.length - 1] = (flipped[flipped.length - 1] as number) ^ 0x80;
    expectError(() => loadAllowSet(flipped), 'invalid-allow-set', 'Invalid allow-set: checksum mismatch (the file is corrupt or truncated)');
  });
  it('header fields', () => {
    expectError(() => loadAllowSet(resealed(raw, (b) => (b[10] = 2))), 'invalid-allow-set', 'Invalid allow-set: unknown encoding 2');
    expectError(
      () => loadAllowSet(resealed(raw, (b) => (b[11] = 17))),
      'invalid-allow-set',
      'Invalid allow-set: hash length 17 is not one of 16, 20, 24, 28, 32',
    );
    expectError(() => loadAllowSet(resealed(raw, (b) => (b[21] = 0))), 'invalid-allow-set', 'Invalid allow-set: no caches');
    expectError(() => loadAllowSet(resealed(raw, (b) => (b[22] = 1))), 'invalid-allow-set', 'Invalid allow-set: reserved bytes are not zero');
  });
  it('lengths', () => {
    expectError(() => loadAllowSet(resealed(raw, (b) => (b[21] = 200))), 'invalid-allow-set', /^Invalid allow-set: truncated in cache (id|domain)( length)?$/);
    expectError(() => loadAllowSet(resealed(raw, (b) => (b[24] = 250))), 'invalid-allow-set', 'Invalid allow-set: truncated in cache id');
    expectError(
      () => loadAllowSet(handmade({ count: 1, data: new Uint8Array(15) })),
      'invalid-allow-set',
      'Invalid allow-set: 15 bytes of data for 1 hashes of 16 bytes',
    );
    expectError(
      () => loadAllowSet(handmade({ count: 0, data: new Uint8Array(16) })),
      'invalid-allow-set',
      'Invalid allow-set: 16 bytes of data for 0 hashes of 16 bytes',
    );
    const long = handmade({ count: 1, data: new Uint8Array(16) });
    const body = long.slice(0, long.length - 32);
    const lengthAt = body.length - 16 - 4;
    new DataView(body.buffer).setUint32(lengthAt, 17);
    const sealed = Uint8Array.of(...body, ...sha256(body));
    expectError(() => loadAllowSet(sealed), 'invalid-allow-set', 'Invalid allow-set: truncated in hash data');
    new DataView(body.buffer).setUint32(lengthAt, 12);
    expectError(() => loadAllowSet(Uint8Array.of(...body, ...sha256(body))), 'invalid-allow-set', 'Invalid allow-set: 4 unexpected bytes after the hash data');
  });
  it('names the field a truncation falls in', () => {
    // A valid header for one cache, then the content ends inside the cache list (the checksum is right).
    const head = handmade({ count: 0, data: new Uint8Array(0) }).subarray(0, 24);
    const seal = (body: Uint8Array) => Uint8Array.of(...body, ...sha256(body));
    const withId = Uint8Array.of(...head, 6, ...new TextEncoder().encode('google'));
    expect(seal(withId).length).toBeGreaterThanOrEqual(60); // long enough to be read at all
    expectError(() => loadAllowSet(seal(withId)), 'invalid-allow-set', 'Invalid allow-set: truncated in cache domain length');
    const withCache = Uint8Array.of(...withId, 18, ...new TextEncoder().encode('cdn.ampproject.org'));
    expectError(() => loadAllowSet(seal(withCache)), 'invalid-allow-set', 'Invalid allow-set: truncated in data length');
    const shortDomain = Uint8Array.of(...withId, 30, ...new TextEncoder().encode('cdn.ampproject.org'));
    expectError(() => loadAllowSet(seal(shortDomain)), 'invalid-allow-set', 'Invalid allow-set: truncated in cache domain');
  });
  it('exactly the data and nothing after it', () => {
    const withSpare = handmade({ count: 1, data: Uint8Array.of(...digest('example-com'), 0) });
    expectError(() => loadAllowSet(withSpare), 'invalid-allow-set', 'Invalid allow-set: 17 bytes of data for 1 hashes of 16 bytes');
  });
  it('the cache list', () => {
    expectError(
      () => loadAllowSet(handmade({ count: 0, data: new Uint8Array(0), caches: [['g', 'com']] })),
      'invalid-allow-set',
      /^Invalid allow-set: bad cache list \(caches\[0\]: cacheDomain "com" is a public suffix\)$/,
    );
    expectError(
      () =>
        loadAllowSet(
          handmade({
            count: 0,
            data: new Uint8Array(0),
            caches: [
              ['g', 'a.example.net'],
              ['g', 'b.example.net'],
            ],
          }),
        ),
      'invalid-allow-set',
      /bad cache list.*duplicate id/,
    );
    const ok = loadAllowSet(
      handmade({
        count: 0,
        data: new Uint8Array(0),
        caches: [
          ['bing', 'www.bing-amp.com'],
          ['google', 'other.ampproject.org'],
        ],
      }),
    );
    expect(ok.caches).toEqual([CACHES[1], { id: 'google', name: 'google', cacheDomain: 'other.ampproject.org' }]);
    // A bundled domain under another id is not the bundled cache.
    const renamed = loadAllowSet(handmade({ count: 0, data: new Uint8Array(0), caches: [['mine', 'cdn.ampproject.org']] }));
    expect(renamed.caches).toEqual([{ id: 'mine', name: 'mine', cacheDomain: 'cdn.ampproject.org' }]);
  });
  it('raw data: the Rice parameter must be 0', () => {
    expectError(() => loadAllowSet(resealed(raw, (b) => (b[20] = 3))), 'invalid-allow-set', 'Invalid allow-set: a Rice parameter on uncoded data');
  });
  it('Rice data: first hash present, parameter iff several hashes, well coded', () => {
    expectError(
      () => loadAllowSet(handmade({ encoding: 1, count: 1, data: new Uint8Array(15) })),
      'invalid-allow-set',
      'Invalid allow-set: Rice data shorter than its first hash',
    );
    expectError(
      () => loadAllowSet(handmade({ encoding: 1, count: 1, rice: 5, data: new Uint8Array(16) })),
      'invalid-allow-set',
      'Invalid allow-set: Rice parameter 5 for 1 hashes',
    );
    expectError(
      () => loadAllowSet(handmade({ encoding: 1, count: 2, rice: 0, data: new Uint8Array(17) })),
      'invalid-allow-set',
      'Invalid allow-set: Rice parameter 0 for 2 hashes',
    );
    expect(loadAllowSet(handmade({ encoding: 1, count: 1, data: digest('example-com') })).has('example-com')).toBe(true);
    expectError(
      () => loadAllowSet(handmade({ encoding: 1, count: 3, rice: 100, data: new Uint8Array(17) })),
      'invalid-allow-set',
      /^Invalid allow-set: Rice-coded data: 2 deltas cannot fit in 1 bytes$/,
    );
    expectError(
      () => loadAllowSet(handmade({ encoding: 1, count: 2, rice: 200, data: new Uint8Array(60) })),
      'invalid-allow-set',
      /^Invalid allow-set: Rice parameter 200 out of range/,
    );
    expectError(() => loadAllowSet(resealed(rice, (b) => (b[20] = 1))), 'invalid-allow-set', /^Invalid allow-set: Rice-coded data: /);
  });
  it('hashes strictly increasing: a duplicate is refused too', () => {
    const h = digest('example-com');
    expectError(
      () => loadAllowSet(handmade({ count: 2, data: Uint8Array.of(...h, ...h) })),
      'invalid-allow-set',
      'Invalid allow-set: hash 1 is not greater than hash 0',
    );
    const lower = digest('www-example-com');
    const [a, b] = [h, lower].sort((x, y) => Buffer.compare(x, y)) as [Uint8Array, Uint8Array];
    expectError(
      () => loadAllowSet(handmade({ count: 2, data: Uint8Array.of(...b, ...a) })),
      'invalid-allow-set',
      'Invalid allow-set: hash 1 is not greater than hash 0',
    );
    expect(loadAllowSet(handmade({ count: 2, data: Uint8Array.of(...a, ...b) })).size).toBe(2);
  });
  it('loads from a view into a larger buffer', () => {
    const padded = new Uint8Array(raw.length + 10);
    padded.set(raw, 5);
    const set = loadAllowSet(padded.subarray(5, 5 + raw.length));
    expect(set.has('a-example-com')).toBe(true);
    padded.fill(0);
    expect(set.has('a-example-com')).toBe(true);
  });
});

describe('sorting hashes that share their first 32 bits', () => {
  // Found by search: SHA-256 of each pair's prefixes agree on the first 4 bytes.
  const PAIRS: Array<[string, string]> = [
    ['d52749.example.com', 'd73943.example.com'],
    ['d57829.example.com', 'd102051.example.com'],
    ['d153235.example.com', 'd167365.example.com'],
  ];
  it('the pairs do share their first word (so the second-word comparison decides)', () => {
    for (const [a, b] of PAIRS) {
      const [x, y] = [digest(a.replaceAll('.', '-')), digest(b.replaceAll('.', '-'))];
      expect([...x.slice(0, 4)]).toEqual([...y.slice(0, 4)]);
      expect(Buffer.compare(x, y)).not.toBe(0);
    }
  });
  it.each(['raw', 'rice'] as const)('in either order of addition, every hash is stored once and sorted (%s)', (encoding) => {
    for (const order of [0, 1]) {
      const domains = PAIRS.flatMap(([a, b]) => (order === 0 ? [a, b] : [b, a]));
      const builder = createAllowSetBuilder({ encoding, hashBytes: 16 });
      for (const domain of [...domains, 'example.com', ...domains]) builder.add(domain);
      const bytes = builder.build();
      const set = loadAllowSet(bytes); // refuses hashes that are not strictly increasing
      expect(set.size).toBe(2 * (domains.length + 1));
      for (const domain of [...domains, 'example.com']) expect(set.has(domain.replaceAll('.', '-'))).toBe(true);
      expect(set.has('d52750-example-com')).toBe(false);
      if (encoding === 'raw') {
        const data = bytes.subarray(bytes.length - 32 - set.size * 16, bytes.length - 32);
        const prefixes = [...domains, 'example.com'].flatMap((d) => [d.replaceAll('.', '-'), fallbackPrefix(d)]);
        const hashes = prefixes.map((p) => digest(p)).sort((x, y) => Buffer.compare(x, y));
        expect([...data]).toEqual(hashes.flatMap((h) => [...h]));
      }
    }
  });
});

describe('has', () => {
  const set = loadAllowSet(compileAllowSet(['example.com', 'b.example.com', 'c.example.com', 'd.example.com', 'e.example.com']));
  it('finds every compiled prefix, and nothing else, by binary search', () => {
    for (const prefix of ['example-com', 'b-example-com', 'c-example-com', 'd-example-com', 'e-example-com']) expect(set.has(prefix)).toBe(true);
    for (const prefix of ['example-org', 'a-example-com', 'f-example-com', 'example-co', 'xample-com']) expect(set.has(prefix)).toBe(false);
  });
  it('refuses what cannot be a label: empty, over 63, not a string', () => {
    expect(set.has('')).toBe(false);
    expect(set.has(42 as never)).toBe(false);
    const long = `${'a'.repeat(60)}.com`;
    const longSet = loadAllowSet(compileAllowSet([long]));
    const toolbox = prefixForms(long).map((f) => f.prefix);
    expect(toolbox.some((p) => p.length > 63)).toBe(false);
    expect(longSet.has(`${'a'.repeat(64)}`)).toBe(false);
    const sixtyThree = `${'a'.repeat(59)}.com`; // prefix "aaa…a-com": 63 octets
    expect(loadAllowSet(compileAllowSet([sixtyThree])).has(`${'a'.repeat(59)}-com`)).toBe(true);
  });
});

describe('verifyOrigin: every verdict says why', () => {
  const domains = ['example.com', 'en-us.example.com', 'bücher.de', `${'long-publisher-domain-name'.repeat(2)}.example.net`];
  const set = loadAllowSet(compileAllowSet(domains));
  const detail = (origin: unknown) => {
    const verdict = set.verifyOrigin(origin as string);
    return verdict.detail;
  };
  it("a syntax refusal passes on parseOrigin's reason", () => {
    expect(set.verifyOrigin(undefined)).toMatchObject({ allowed: false, origin: null, reason: 'missing' });
    expect(set.verifyOrigin(42 as never)).toMatchObject({ allowed: false, origin: null, reason: 'malformed' });
    expect(set.verifyOrigin('https://Example-com.cdn.ampproject.org')).toMatchObject({
      allowed: false,
      origin: 'https://Example-com.cdn.ampproject.org',
      reason: 'not-canonical',
    });
  });
  it('not a cache origin: lists the caches of the set', () => {
    expect(set.verifyOrigin('https://example.com')).toMatchObject({ allowed: false, reason: 'unknown-origin' });
    expect(detail('https://example.com')).toBe(
      'not an origin on a cache of this allow-set (cdn.ampproject.org, www.bing-amp.com); it holds only cache origins',
    );
  });
  it('scheme, port, bare cache, two labels', () => {
    expect(set.verifyOrigin('http://example-com.cdn.ampproject.org')).toMatchObject({
      reason: 'insecure-scheme',
      cache: CACHES[0],
      detail: 'cache origins are always https',
    });
    expect(set.verifyOrigin('https://example-com.cdn.ampproject.org:444')).toMatchObject({
      reason: 'non-default-port',
      cache: CACHES[0],
      detail: 'cache origins use the default port',
    });
    expect(set.verifyOrigin('https://www.bing-amp.com')).toMatchObject({
      reason: 'legacy-cache-origin',
      cache: CACHES[1],
      detail: 'the bare Bing AMP Cache origin does not identify a publisher',
    });
    expect(set.verifyOrigin('https://a.example-com.cdn.ampproject.org')).toMatchObject({
      reason: 'not-a-label',
      cache: CACHES[0],
      prefix: 'a.example-com',
      detail: 'a domain prefix is a single DNS label',
    });
  });
  it('a readable prefix in the set: allowed, with the domain it spells and its form', () => {
    expect(set.verifyOrigin('https://0-en--us-example-com-0.www.bing-amp.com')).toEqual({
      allowed: true,
      origin: 'https://0-en--us-example-com-0.www.bing-amp.com',
      via: 'cache',
      reason: 'cache-origin',
      cache: CACHES[1],
      prefix: '0-en--us-example-com-0',
      detail: 'prefix of en-us.example.com, in the compiled allow-set',
      publisherDomain: 'en-us.example.com',
      prefixForm: 'spec',
    });
  });
  it('a hashed prefix in the set: allowed, without a publisher domain', () => {
    const prefix = fallbackPrefix('bücher.de');
    expect(set.verifyOrigin(`https://${prefix}.cdn.ampproject.org`)).toEqual({
      allowed: true,
      origin: `https://${prefix}.cdn.ampproject.org`,
      via: 'cache',
      reason: 'cache-origin-hashed',
      cache: CACHES[0],
      prefix,
      detail: 'hashed prefix in the compiled allow-set; the publisher domain is not recoverable (the set stores only hashes)',
    });
  });
  it('a hashed prefix not in the set', () => {
    const prefix = fallbackPrefix('other.example.net');
    expect(set.verifyOrigin(`https://${prefix}.cdn.ampproject.org`)).toEqual({
      allowed: false,
      origin: `https://${prefix}.cdn.ampproject.org`,
      reason: 'hashed-unknown',
      detail: 'hashed prefix of no compiled publisher domain',
      cache: CACHES[0],
      prefix,
    });
  });
  it('a readable prefix not in the set: the domain it spells, or why it spells none', () => {
    expect(set.verifyOrigin('https://other-net.cdn.ampproject.org')).toEqual({
      allowed: false,
      origin: 'https://other-net.cdn.ampproject.org',
      reason: 'unknown-publisher',
      detail: 'other.net is not in the compiled allow-set',
      cache: CACHES[0],
      prefix: 'other-net',
      publisherDomain: 'other.net',
    });
    expect(set.verifyOrigin('https://0-example-com-0.cdn.ampproject.org')).toMatchObject({
      allowed: false,
      reason: 'not-reproducible',
      cache: CACHES[0],
      prefix: '0-example-com-0',
    });
    expect(set.verifyOrigin('https://xn--a-9999999999.cdn.ampproject.org')).toMatchObject({
      allowed: false,
      reason: 'invalid-punycode',
      prefix: 'xn--a-9999999999',
    });
    // Not valid punycode, yet toolbox's prefix of the plain xn-a.b (a possible domain: its TLD is letters).
    expect(set.verifyOrigin('https://xn--a-b.cdn.ampproject.org')).toMatchObject({
      allowed: false,
      reason: 'unknown-publisher',
      prefix: 'xn--a-b',
      publisherDomain: 'xn-a.b',
    });
  });
  it('a prefix with a dot but no hyphen is not a label (not a hash)', () => {
    expect(set.verifyOrigin('https://a.b.cdn.ampproject.org')).toMatchObject({ allowed: false, reason: 'not-a-label', prefix: 'a.b', cache: CACHES[0] });
  });
  it('on a custom cache, a readable prefix still reports the domain it spells', () => {
    const custom: AmpCache = { id: 'test', name: 'Test cache', cacheDomain: 'amp.cache.example.net' };
    const customSet = loadAllowSet(compileAllowSet(['en-us.example.com'], { caches: [custom] }));
    expect(customSet.verifyOrigin('https://0-en--us-example-com-0.amp.cache.example.net')).toMatchObject({
      allowed: true,
      reason: 'cache-origin',
      publisherDomain: 'en-us.example.com',
      prefixForm: 'spec',
      detail: 'prefix of en-us.example.com, in the compiled allow-set',
    });
    expect(customSet.verifyOrigin('https://other-example-com.amp.cache.example.net')).toMatchObject({
      allowed: false,
      reason: 'unknown-publisher',
      publisherDomain: 'other.example.com',
    });
  });
  it("toolbox's wrapped prefix of up to 67 octets is held; longer is not a prefix", () => {
    const domain = `ab-${'x'.repeat(55)}.com`; // label of 63 octets, wrapped by toolbox after its 63-octet check
    const toolbox = prefixForms(domain).find((f) => f.form === 'toolbox')?.prefix as string;
    expect(toolbox).toHaveLength(67);
    const wrappedSet = loadAllowSet(compileAllowSet([domain]));
    expect(wrappedSet.has(toolbox)).toBe(true);
    expect(wrappedSet.verifyOrigin(`https://${toolbox}.cdn.ampproject.org`)).toMatchObject({ allowed: true, reason: 'cache-origin' });
    expect(wrappedSet.has(`${toolbox}x`)).toBe(false);
  });
  it('exposes size, domain count, hash length and encoding', () => {
    expect(set).toMatchObject({ domainCount: 4, hashBytes: 16, encoding: 'rice' });
    expect(set.size).toBe(new Set(domains.flatMap((d) => prefixForms(d).map((f) => f.prefix))).size);
  });
});
