// createAsyncVerifier at its edges (issue #6, mutation testing): when the
// source is asked (and with what), when it is not, what an allowed verdict
// from the source says, __amp_source_origin through memory and source, and
// failures that deny with the source's message.
import { CACHES, cacheOrigin, createAsyncVerifier, fallbackPrefix, type PublisherSource, type Verdict } from '@ampcors/core';
import { describe, expect, it } from 'vitest';

interface Recorder extends PublisherSource {
  prefixes: string[];
  hosts: string[];
}

function source(owner: Record<string, string>, publishers: string[], fail?: unknown): Recorder {
  const recorder: Recorder = {
    prefixes: [],
    hosts: [],
    async publisherOfPrefix(prefix) {
      recorder.prefixes.push(prefix);
      if (fail !== undefined) throw fail;
      return owner[prefix];
    },
    async hasPublisher(domain) {
      recorder.hosts.push(domain);
      if (fail !== undefined) throw fail;
      return publishers.includes(domain);
    },
  };
  return recorder;
}

const LONG = `${'a'.repeat(30)}.${'b'.repeat(30)}.example.net`;
const HASHED = fallbackPrefix(LONG);
const owner = { 'shop-example-com': 'shop.example.com', [HASHED]: LONG, 'bad-example-com': 'Not A Domain', 'upper-example-com': 'UPPER.example.com' };

describe('createAsyncVerifier: memory first', () => {
  it('answers synchronously what memory allows or denies for good', () => {
    const src = source(owner, ['shop.example.com']);
    const verifier = createAsyncVerifier({ publishers: ['example.com'], source: src });
    expect(verifier.verify('https://example-com.cdn.ampproject.org')).toMatchObject({ allowed: true });
    for (const origin of ['https://Example.com', 'http://shop-example-com.cdn.ampproject.org', 'https://cdn.ampproject.org', undefined, '']) {
      const verdict = verifier.verify(origin);
      expect(verdict).not.toBeInstanceOf(Promise);
      expect((verdict as Verdict).allowed).toBe(false);
    }
    expect(verifier.verify(42 as never)).not.toBeInstanceOf(Promise);
    expect(src.prefixes).toEqual([]);
    expect(src.hosts).toEqual([]);
    expect(verifier.memory.verify('https://example-com.cdn.ampproject.org').allowed).toBe(true);
  });
  it('without publishers, memory trusts nothing and the source decides', async () => {
    const verifier = createAsyncVerifier({ source: source(owner, ['shop.example.com']) });
    expect(await verifier.verify('https://shop-example-com.cdn.ampproject.org')).toMatchObject({ allowed: true, publisherDomain: 'shop.example.com' });
  });
});

describe('createAsyncVerifier: what the source decides', () => {
  it('a readable cache prefix: asks publisherOfPrefix with the prefix, allows with cache and prefix', async () => {
    const src = source(owner, []);
    const verifier = createAsyncVerifier({ source: src });
    expect(await verifier.verify('https://shop-example-com.www.bing-amp.com')).toEqual({
      allowed: true,
      origin: 'https://shop-example-com.www.bing-amp.com',
      via: 'cache',
      reason: 'cache-origin',
      publisherDomain: 'shop.example.com',
      cache: CACHES[1],
      prefix: 'shop-example-com',
    });
    expect(src.prefixes).toEqual(['shop-example-com']);
    expect(src.hosts).toEqual([]);
  });
  it('a hashed prefix: allowed as hashed', async () => {
    const verifier = createAsyncVerifier({ source: source(owner, []) });
    expect(await verifier.verify(`https://${HASHED}.cdn.ampproject.org`)).toMatchObject({
      allowed: true,
      via: 'cache',
      reason: 'cache-origin-hashed',
      publisherDomain: LONG,
      prefix: HASHED,
      cache: CACHES[0],
    });
  });
  it('an unknown prefix, or an answer that is not a canonical domain, keeps the memory denial', async () => {
    const verifier = createAsyncVerifier({ source: source(owner, []) });
    expect(await verifier.verify('https://other-example-com.cdn.ampproject.org')).toMatchObject({ allowed: false, reason: 'unknown-publisher' });
    expect(await verifier.verify('https://bad-example-com.cdn.ampproject.org')).toMatchObject({ allowed: false, reason: 'unknown-publisher' });
    expect(await verifier.verify('https://upper-example-com.cdn.ampproject.org')).toMatchObject({ allowed: false, reason: 'unknown-publisher' });
    expect(await verifier.verify(`https://${fallbackPrefix('x.example.net')}.cdn.ampproject.org`)).toMatchObject({ allowed: false, reason: 'hashed-unknown' });
  });
  it('a publisher origin: asks hasPublisher with the host, https on the default port only', async () => {
    const src = source(owner, ['shop.example.com']);
    const verifier = createAsyncVerifier({ source: src });
    expect(await verifier.verify('https://shop.example.com')).toEqual({
      allowed: true,
      origin: 'https://shop.example.com',
      via: 'publisher',
      reason: 'publisher-origin',
      publisherDomain: 'shop.example.com',
    });
    expect(src.hosts).toEqual(['shop.example.com']);
    expect(await verifier.verify('https://other.example.com')).toMatchObject({ allowed: false, reason: 'unknown-origin' });
    src.hosts.length = 0;
    expect(await verifier.verify('http://shop.example.com')).toMatchObject({ allowed: false, reason: 'unknown-origin' });
    expect(await verifier.verify('https://shop.example.com:8443')).toMatchObject({ allowed: false, reason: 'unknown-origin' });
    expect(src.hosts).toEqual([]);
    expect(src.prefixes).toEqual([]);
  });
  it('with explicit origins, the source never turns a host into a publisher origin', async () => {
    const src = source(owner, ['shop.example.com']);
    const verifier = createAsyncVerifier({ origins: ['https://www.example.com'], source: src });
    expect(await verifier.verify('https://shop.example.com')).toMatchObject({ allowed: false, reason: 'unknown-origin' });
    expect(src.hosts).toEqual([]);
    expect(await verifier.verify('https://shop-example-com.cdn.ampproject.org')).toMatchObject({ allowed: true });
  });
  it('a failing source denies with source-unavailable and its message, cut at 80 characters', async () => {
    const verifier = createAsyncVerifier({ source: source(owner, [], new Error('connection refused')) });
    expect(await verifier.verify('https://shop-example-com.cdn.ampproject.org')).toEqual({
      allowed: false,
      origin: 'https://shop-example-com.cdn.ampproject.org',
      reason: 'source-unavailable',
      detail: 'publisher source failed: connection refused',
    });
    const long = createAsyncVerifier({ source: source(owner, [], new Error('x'.repeat(100))) });
    expect(await long.verify('https://shop.example.com')).toMatchObject({ reason: 'source-unavailable', detail: `publisher source failed: ${'x'.repeat(80)}` });
    const odd = createAsyncVerifier({ source: source(owner, [], 'down') });
    expect(await odd.verify('https://shop.example.com')).toMatchObject({ reason: 'source-unavailable', detail: 'publisher source failed: unknown error' });
  });
});

describe('createAsyncVerifier: __amp_source_origin', () => {
  it('absent: allowed; a memory publisher origin: passed on, without asking the source', async () => {
    const src = source(owner, []);
    const verifier = createAsyncVerifier({ publishers: ['example.com'], source: src });
    const origin = 'https://shop-example-com.cdn.ampproject.org';
    const withNull = await verifier.verify(origin, { sourceOrigin: null });
    expect(withNull).toMatchObject({ allowed: true, publisherDomain: 'shop.example.com' });
    expect(withNull).not.toHaveProperty('sourceOrigin');
    expect(await verifier.verify(origin, {})).toMatchObject({ allowed: true });
    expect(await verifier.verify(origin, { sourceOrigin: 'https://example.com' })).toMatchObject({ allowed: true, sourceOrigin: 'https://example.com' });
    expect(src.hosts).toEqual([]);
  });
  it('a publisher origin known to the source: passed on; anything else denies', async () => {
    const src = source(owner, ['shop.example.com']);
    const verifier = createAsyncVerifier({ source: src });
    const origin = 'https://shop-example-com.cdn.ampproject.org';
    expect(await verifier.verify(origin, { sourceOrigin: 'https://shop.example.com' })).toMatchObject({
      allowed: true,
      sourceOrigin: 'https://shop.example.com',
    });
    const mismatch = { allowed: false, origin, reason: 'source-origin-mismatch', detail: '__amp_source_origin is not a publisher origin' };
    expect(await verifier.verify(origin, { sourceOrigin: 'https://evil.com' })).toEqual(mismatch);
    src.hosts.length = 0;
    for (const sourceOrigin of ['http://shop.example.com', 'https://shop.example.com:8443', 'not an origin']) {
      expect(await verifier.verify(origin, { sourceOrigin })).toEqual(mismatch);
    }
    expect(src.hosts).toEqual([]);
  });
  it('with explicit origins, only memory vouches for the source origin', async () => {
    const src = source(owner, ['shop.example.com']);
    const verifier = createAsyncVerifier({ origins: ['https://www.example.com'], source: src });
    const origin = 'https://shop-example-com.cdn.ampproject.org';
    expect(await verifier.verify(origin, { sourceOrigin: 'https://www.example.com' })).toMatchObject({
      allowed: true,
      sourceOrigin: 'https://www.example.com',
    });
    expect(await verifier.verify(origin, { sourceOrigin: 'https://shop.example.com' })).toMatchObject({ allowed: false, reason: 'source-origin-mismatch' });
    expect(src.hosts).toEqual([]);
  });
  it('a memory denial for the source origin stands (memory already judged it)', () => {
    const verifier = createAsyncVerifier({ publishers: ['example.com'], source: source(owner, []) });
    expect(verifier.verify(cacheOrigin('example.com'), { sourceOrigin: 'https://evil.com' })).toMatchObject({
      allowed: false,
      reason: 'source-origin-mismatch',
    });
  });
});

describe('createAsyncVerifier: a source answer is a claim, checked like configuration', () => {
  it('a prefix another domain can claim is denied, whatever the source says it belongs to', async () => {
    // `xn--shop-example-org-fun` spells shopђ.example.org, and is also toolbox's
    // (and amppackager's) prefix of the plain ASCII xn-shop.example.org.fun.
    const src = source({ 'xn--shop-example-org-fun': 'xn--shop-38d.example.org', 'example-com': 'example.org' }, []);
    const verifier = createAsyncVerifier({ source: src });
    await expect(Promise.resolve(verifier.verify('https://xn--shop-example-org-fun.cdn.ampproject.org'))).resolves.toMatchObject({ allowed: false });
    // A store that maps a prefix to a domain it is no form of allows nothing.
    await expect(Promise.resolve(verifier.verify('https://example-com.cdn.ampproject.org'))).resolves.toMatchObject({ allowed: false });
    expect(src.prefixes).toEqual(['xn--shop-example-org-fun', 'example-com']);
  });

  it('a prefix no other domain claims is allowed when the source names its domain', async () => {
    const src = source({ 'xn--bcher-de-65a': 'xn--bcher-kva.de' }, []);
    const verifier = createAsyncVerifier({ source: src });
    await expect(Promise.resolve(verifier.verify('https://xn--bcher-de-65a.cdn.ampproject.org'))).resolves.toMatchObject({
      allowed: true,
      reason: 'cache-origin',
      publisherDomain: 'xn--bcher-kva.de',
    });
  });
});
