// Runs against a real redis-server (Debian's package, installed by the
// vitest global setup when missing) on a free loopback port, started and stopped by the test.
import { AmpCorsError, cacheOrigin, createAsyncVerifier, prefixForms } from '@ampcors/core';
import { createClient } from 'redis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { freePort, startTestRedis, type TestRedis } from '../../../test/setup/redis-server.js';
import { createRedisRegistry, LocalCache, type RedisRegistry } from '../src/index.js';

let redis: TestRedis;
const registries: RedisRegistry[] = [];

function registry(options: Parameters<typeof createRedisRegistry>[0] = {}): RedisRegistry {
  const r = createRedisRegistry({ url: redis.url, keyPrefix: `t${registries.length}:`, ...options });
  registries.push(r);
  return r;
}

beforeAll(async () => {
  redis = await startTestRedis();
}, 60_000);

afterAll(async () => {
  await Promise.all(registries.map((r) => r.close()));
  await redis.stop();
});

describe('LocalCache', () => {
  it('expires entries and keeps at most max, dropping the least recently used', () => {
    let now = 0;
    const cache = new LocalCache<string>(2, () => now);
    cache.set('a', 'A', 100);
    cache.set('b', 'B', 100);
    expect(cache.get('a')).toBe('A');
    cache.set('c', 'C', 100);
    expect(cache.get('b')).toBeUndefined();
    now = 150;
    expect(cache.get('a')).toBeUndefined();
    expect(cache.getStale('a', 100)).toBe('A');
    expect(cache.getStale('a', 10)).toBeUndefined();
  });
});

describe('Redis registry', () => {
  it('add and remove are seen by a second instance (a second server of the fleet)', async () => {
    const keyPrefix = 'fleet:';
    const a = registry({ keyPrefix, ttlMs: 0, negativeTtlMs: 0 });
    const b = registry({ keyPrefix, ttlMs: 0, negativeTtlMs: 0 });
    const verifyB = createAsyncVerifier({ source: b });
    const origin = cacheOrigin('shop.example');
    await expect(verifyB.verify(origin)).resolves.toMatchObject({ allowed: false, reason: 'unknown-publisher' });
    expect(await a.add(['Shop.Example', 'blog.example'])).toBe(2);
    await expect(verifyB.verify(origin)).resolves.toMatchObject({ allowed: true, publisherDomain: 'shop.example' });
    await expect(verifyB.verify('https://blog.example')).resolves.toMatchObject({ allowed: true, via: 'publisher' });
    expect(await a.remove(['shop.example'])).toBe(1);
    await expect(verifyB.verify(origin)).resolves.toMatchObject({ allowed: false });
    expect(await b.size()).toBe(1);
  });

  it('hashed prefixes and every accepted form are registered', async () => {
    const r = registry();
    const long = `${'a'.repeat(30)}.${'b'.repeat(30)}.example.net`;
    await r.add([long, 'in--trouble.com']);
    const verifier = createAsyncVerifier({ source: r });
    await expect(verifier.verify(cacheOrigin(long))).resolves.toMatchObject({ allowed: true, reason: 'cache-origin-hashed', publisherDomain: long });
    // in--trouble.com's readable prefix is also in.-.trouble.com's (a browser host that could exist):
    // denied, whatever the registry holds; its hash (toolbox's form) is its own.
    await expect(verifier.verify('https://0-in----trouble-com-0.cdn.ampproject.org')).resolves.toMatchObject({ allowed: false });
    await expect(verifier.verify('https://r5s7rxu53tjelpr7ngbxkxpirbrylvbwcuueckh7gmn5mim5cjna.cdn.ampproject.org')).resolves.toMatchObject({ allowed: true });
  });

  it("add and load refuse what the publishers option refuses (a public suffix, an AMP cache's own domain): nothing of the refused batch is written", async () => {
    // Attacker's review, session 17: a fleet's registry took github.io and cdn.ampproject.org, which an in-memory verifier refuses.
    const r = registry({ ttlMs: 0, negativeTtlMs: 0 });
    for (const bad of ['github.io', 's3.amazonaws.com', 'co.uk', 'cdn.ampproject.org', 'www.ampproject.net']) {
      const added = r.add(['shop.example', bad]);
      await expect(added).rejects.toBeInstanceOf(AmpCorsError);
      await expect(r.add(['shop.example', bad])).rejects.toThrow(/^publishers: /);
      await expect(r.load(['shop.example', bad])).rejects.toBeInstanceOf(AmpCorsError);
    }
    expect(await r.size()).toBe(0);
    // A later batch refused: the batches before it were written, and the load rejects.
    await expect(r.load(['a.example', 'b.example', 'github.io'], { batchSize: 2 })).rejects.toBeInstanceOf(AmpCorsError);
    expect(await r.hasPublisher('a.example')).toBe(true);
    expect(await r.hasPublisher('github.io')).toBe(false);
  });

  it('removing one domain leaves a prefix another domain re-registered', async () => {
    const r = registry({ ttlMs: 0, negativeTtlMs: 0 });
    await r.add(['x.example']);
    await r.remove(['y.example']);
    expect(await r.publisherOfPrefix('x-example')).toBe('x.example');
  });

  it('the local cache answers until its TTL, then Redis is asked again', async () => {
    let now = 1_000;
    const writer = registry({ keyPrefix: 'ttl:' });
    const reader = registry({ keyPrefix: 'ttl:', ttlMs: 1000, negativeTtlMs: 500, now: () => now });
    expect(await reader.hasPublisher('late.example')).toBe(false);
    await writer.add(['late.example']);
    expect(await reader.hasPublisher('late.example')).toBe(false); // cached negative answer
    now += 600;
    expect(await reader.hasPublisher('late.example')).toBe(true);
    await writer.remove(['late.example']);
    expect(await reader.hasPublisher('late.example')).toBe(true); // cached positive answer
    now += 1100;
    expect(await reader.hasPublisher('late.example')).toBe(false);
  });

  it('Redis stopped mid-run: fails closed (or serves the cache when asked to), then recovers by itself', async () => {
    const writer = registry({ keyPrefix: 'down:' });
    await writer.add(['up.example']);
    const strict = registry({ keyPrefix: 'down:', ttlMs: 0, negativeTtlMs: 0 });
    let now = 0;
    const lenient = registry({ keyPrefix: 'down:', ttlMs: 10, onUnavailable: 'cache-only', now: () => now });
    const strictVerifier = createAsyncVerifier({ source: strict });
    const lenientVerifier = createAsyncVerifier({ source: lenient });
    const origin = cacheOrigin('up.example');
    await expect(strictVerifier.verify(origin)).resolves.toMatchObject({ allowed: true });
    await expect(lenientVerifier.verify(origin)).resolves.toMatchObject({ allowed: true });

    await redis.stop();
    now += 1000; // the lenient cache entry has expired, but is within its stale window
    await expect(strictVerifier.verify(origin)).resolves.toMatchObject({ allowed: false, reason: 'source-unavailable' });
    await expect(lenientVerifier.verify(origin)).resolves.toMatchObject({ allowed: true });
    await expect(lenientVerifier.verify(cacheOrigin('never-seen.example'))).resolves.toMatchObject({ allowed: false, reason: 'source-unavailable' });

    await redis.start(); // a fresh, empty server on the same port
    const deadline = Date.now() + 10_000;
    // The clients reconnect by themselves; until then commands fail fast (no offline queue).
    for (;;) {
      try {
        await writer.add(['up.example']);
        break;
      } catch (error) {
        if (Date.now() > deadline) throw error;
        await new Promise((r) => setTimeout(r, 100));
      }
    }
    let verdict = await strictVerifier.verify(origin);
    while (!verdict.allowed && Date.now() < deadline) {
      await new Promise((r) => setTimeout(r, 100));
      verdict = await strictVerifier.verify(origin);
    }
    expect(verdict).toMatchObject({ allowed: true });
  }, 30_000);

  it('loads 1M domains in one pipelined run', async () => {
    const r = registry({ keyPrefix: 'bulk:' });
    const N = 1_000_000;
    function* domains() {
      for (let i = 0; i < N; i++) yield `shop${i}.example${i % 97}.com`;
    }
    const started = Date.now();
    expect(await r.load(domains(), { batchSize: 2000 })).toBe(N);
    const seconds = (Date.now() - started) / 1000;
    console.log(`[redis test] loaded ${N} domains in ${seconds.toFixed(1)} s`);
    expect(await r.size()).toBe(N);
    const last = N - 1;
    expect(await r.publisherOfPrefix(`shop${last}-example${last % 97}-com`)).toBe(`shop${last}.example${last % 97}.com`);
    expect((await createAsyncVerifier({ source: r }).verify(cacheOrigin('shop123456.example72.com'))).allowed).toBe(true);
  }, 180_000);

  it('a toolbox prefix of 64-67 octets is registered and found', async () => {
    const r = registry({ keyPrefix: 'toolbox:' });
    // toolbox checks 63 octets before its 0-…-0 wrap: `ab--a…a-com` (63) becomes a 67-octet prefix.
    const domain = `ab-${'a'.repeat(55)}.com`;
    const toolbox = prefixForms(domain).find((f) => f.form === 'toolbox')?.prefix as string;
    expect(toolbox.length).toBeGreaterThan(63);
    await r.add([domain]);
    expect(await r.publisherOfPrefix(toolbox)).toBe(domain);
    await expect(createAsyncVerifier({ source: r }).verify(`https://${toolbox}.cdn.ampproject.org`)).resolves.toMatchObject({
      allowed: true,
      publisherDomain: domain,
    });
  });

  it('writes to a Redis that never answers fail within seconds with a clear error, never hang', async () => {
    const nobody = await freePort();
    const r = registry({ url: `redis://user:secret@127.0.0.1:${nobody}` });
    const started = Date.now();
    for (const write of [() => r.add(['example.com']), () => r.remove(['example.com']), () => r.load(['example.com'])]) {
      // Like every registry error, the message names the condition, never the URL (whose credentials the caller holds).
      await expect(write()).rejects.toThrow(/^Redis did not accept a connection within 1000 ms$/);
    }
    await expect(r.hasPublisher('example.com')).rejects.toThrow();
    expect(Date.now() - started).toBeLessThan(8_000);
  });

  it('works through a node-redis client you pass (and leaves it open on close)', async () => {
    const client = createClient({ url: redis.url });
    await client.connect();
    try {
      const r = createRedisRegistry({ client, keyPrefix: 'byo:' });
      expect(await r.add(['shop.example'])).toBe(1);
      expect(await r.publisherOfPrefix('shop-example')).toBe('shop.example');
      expect(await r.hasPublisher('shop.example')).toBe(true);
      expect(await r.size()).toBe(1);
      await r.close();
      expect(client.isReady).toBe(true);
    } finally {
      client.destroy();
    }
  });

  it('a url with a database number selects it; a url that is not redis:// is refused', async () => {
    const r = registry({ url: `redis://127.0.0.1:${redis.port}/3`, keyPrefix: 'db3:' });
    await r.add(['three.example']);
    const other = registry({ url: redis.url, keyPrefix: 'db3:' });
    expect([await r.size(), await other.size()]).toEqual([1, 0]);
    expect(() => createRedisRegistry({ url: 'http://127.0.0.1:6379' })).toThrow(expect.objectContaining({ code: 'invalid-option' }));
    expect(() => createRedisRegistry({ url: 'redis://127.0.0.1:6379/x' })).toThrow(expect.objectContaining({ code: 'invalid-option' }));
  });

  it('refuses bad input with clear errors', async () => {
    const r = registry();
    await expect(r.add(['not a domain'])).rejects.toMatchObject({ code: 'invalid-domain' });
    expect(await r.publisherOfPrefix('x'.repeat(100))).toBeUndefined();
    expect(() => createRedisRegistry({})).toThrow(expect.objectContaining({ code: 'invalid-option' }));
  });
});
