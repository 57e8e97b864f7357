// caches.json refresh faults (issue #6): a registry server on loopback that
// hangs, fails or serves hostile entries. fetchCaches must keep the last good
// list, and no verifier built from its answer may trust more than before.
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { type AmpCache, CACHES, createVerifier, fetchCaches, type FetchCachesResult } from '@ampcors/core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

const GOOD = { caches: CACHES.map((c) => ({ ...c })) };
const entry = (cacheDomain: unknown, id = 'evil') => ({ id, name: 'Hostile', cacheDomain });
/** Each route answers one fault. */
const ROUTES: Record<string, { status?: number; body?: string; hang?: boolean; redirect?: string; type?: string }> = {
  '/good': { body: JSON.stringify(GOOD) },
  '/hang': { hang: true },
  '/slow-body': { body: JSON.stringify(GOOD), hang: true },
  '/500': { status: 500, body: JSON.stringify(GOOD) },
  '/404': { status: 404, body: 'not found' },
  '/204': { status: 204 },
  '/redirect': { status: 302, redirect: '/good' },
  '/invalid-json': { body: '{"caches": [' },
  '/html': { body: '<html>maintenance</html>', type: 'text/html' },
  '/null': { body: 'null' },
  '/array': { body: JSON.stringify(GOOD.caches) },
  '/empty-list': { body: '{"caches": []}' },
  '/object-list': { body: '{"caches": {"0": {"id": "g", "name": "G", "cacheDomain": "cdn.ampproject.org"}}}' },
  '/com': { body: JSON.stringify({ caches: [...GOOD.caches, entry('com')] }) },
  '/empty-domain': { body: JSON.stringify({ caches: [...GOOD.caches, entry('')] }) },
  '/suffix-trick': { body: JSON.stringify({ caches: [...GOOD.caches, entry('ampproject.org.evil.com')] }) },
  '/evil-operator': { body: JSON.stringify({ caches: [entry('cdn.evil.com')] }) },
  '/private-suffix': { body: JSON.stringify({ caches: [entry('github.io')] }) },
  '/uppercase': { body: JSON.stringify({ caches: [entry('CDN.AMPPROJECT.ORG')] }) },
  '/trailing-dot': { body: JSON.stringify({ caches: [entry('cdn.ampproject.org.')] }) },
  '/not-string': { body: JSON.stringify({ caches: [entry(42)] }) },
  '/with-scheme': { body: JSON.stringify({ caches: [entry('https://cdn.ampproject.org')] }) },
  '/with-wildcard': { body: JSON.stringify({ caches: [entry('*.ampproject.org')] }) },
  '/unicode': { body: JSON.stringify({ caches: [entry('cdn.аmpproject.org')] }) },
  '/duplicate-id': { body: JSON.stringify({ caches: [...GOOD.caches, { ...GOOD.caches[0], cacheDomain: 'cdn2.ampproject.org' }] }) },
  '/overlap': { body: JSON.stringify({ caches: [...GOOD.caches, entry('x.cdn.ampproject.org')] }) },
  '/proto': { body: '{"caches": [{"__proto__": {"cacheDomain": "com"}, "id": "p", "name": "P"}]}' },
  '/huge': { body: JSON.stringify({ caches: [...GOOD.caches, ...Array.from({ length: 20_000 }, (_, i) => entry('com', `x${i}`))] }) },
};

let server: Server;
let base: string;
const open = new Set<import('node:http').ServerResponse>();

beforeAll(async () => {
  server = createServer((req, res) => {
    const route = ROUTES[req.url ?? ''];
    if (!route) return void res.writeHead(404).end();
    if (route.redirect) return void res.writeHead(route.status ?? 302, { location: route.redirect }).end();
    res.writeHead(route.status ?? 200, { 'content-type': route.type ?? 'application/json' });
    if (route.hang) {
      open.add(res);
      if (route.body) res.write(route.body.slice(0, 10));
      return;
    }
    res.end(route.body);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});

afterAll(async () => {
  for (const res of open) res.destroy();
  await new Promise<void>((resolve) => server.close(() => resolve()));
});

/** A previous good list that differs from the bundled one, so "kept" is observable. */
const LAST_GOOD: readonly AmpCache[] = Object.freeze([Object.freeze({ ...(CACHES[0] as AmpCache) })]);

const refresh = (path: string, timeoutMs = 300): Promise<FetchCachesResult> => fetchCaches({ url: `${base}${path}`, timeoutMs, fallback: LAST_GOOD });

/** Origins that no registry refresh may ever make acceptable for publisher example.com. */
const NEVER = [
  'https://example-com.com',
  'https://example-com.ampproject.org.evil.com',
  'https://example-com.cdn.evil.com',
  'https://example-com.github.io',
  'https://evil-com.cdn.ampproject.org',
  'https://example-com.x.cdn.ampproject.org',
  'https://example-com.cdn2.ampproject.org',
  'https://cdn.ampproject.org',
];

describe('caches.json refresh faults', () => {
  it('the good route is accepted (the control)', async () => {
    const result = await refresh('/good');
    expect(result.ok).toBe(true);
    expect(result.caches.map((c) => c.cacheDomain)).toEqual(CACHES.map((c) => c.cacheDomain));
  });

  it.each(Object.keys(ROUTES).filter((r) => r !== '/good'))('%s keeps the last good registry and never widens trust', async (path) => {
    const started = Date.now();
    const result = await refresh(path);
    expect(Date.now() - started).toBeLessThan(5_000);
    expect(result.ok).toBe(false);
    if (!result.ok) expect(result.error).toBeInstanceOf(Error);
    expect(result.caches).toBe(LAST_GOOD);
    const verifier = createVerifier({ publishers: ['example.com'], caches: result.caches });
    for (const origin of NEVER) expect(verifier.verify(origin).allowed, origin).toBe(false);
    expect(verifier.verify('https://example-com.cdn.ampproject.org').allowed).toBe(true);
  });

  it('an unreachable registry (closed port) and a hanging one resolve, never reject', async () => {
    const closed = createServer();
    await new Promise<void>((resolve) => closed.listen(0, '127.0.0.1', resolve));
    const port = (closed.address() as AddressInfo).port;
    await new Promise<void>((resolve) => closed.close(() => resolve()));
    const results = await Promise.all([
      fetchCaches({ url: `http://127.0.0.1:${port}/caches.json`, timeoutMs: 1000, fallback: LAST_GOOD }),
      fetchCaches({ url: `${base}/hang`, timeoutMs: 50 }),
    ]);
    expect(results.map((r) => r.ok)).toEqual([false, false]);
    expect(results[0]?.caches).toBe(LAST_GOOD);
    expect(results[1]?.caches).toBe(CACHES);
  });

  it('a fetch that throws synchronously, rejects with a non-Error, or returns garbage is contained', async () => {
    const fetches = [
      () => {
        throw new TypeError('boom');
      },
      () => Promise.reject('a string'),
      () => Promise.resolve(null as unknown as Response),
      () => Promise.resolve({ status: 200, json: () => Promise.reject(new SyntaxError('bad')) } as unknown as Response),
      () => Promise.resolve({ status: 200, json: () => Promise.resolve({ caches: [{ id: 'x', name: 'x', cacheDomain: 'com' }] }) } as unknown as Response),
    ];
    for (const fetch of fetches) {
      const result = await fetchCaches({ fetch: fetch as never, fallback: LAST_GOOD, timeoutMs: 200 });
      expect(result.ok).toBe(false);
      expect(result.caches).toBe(LAST_GOOD);
    }
  });

  it('a user-supplied list with a hostile entry is refused at construction, not silently used', () => {
    for (const cacheDomain of ['com', '', 'github.io', 'co.uk', 'CDN.AMPPROJECT.ORG', 'cdn.ampproject.org.', '*.ampproject.org', 'https://cdn.ampproject.org']) {
      expect(() => createVerifier({ publishers: ['example.com'], caches: [entry(cacheDomain) as AmpCache] }), cacheDomain).toThrowError(
        expect.objectContaining({ code: 'invalid-cache' }),
      );
    }
  });

  it('the bundled registry cannot be altered at run time', () => {
    expect(Object.isFrozen(CACHES)).toBe(true);
    expect(CACHES.every((c) => Object.isFrozen(c))).toBe(true);
    expect(() => (CACHES as AmpCache[]).push(entry('com') as AmpCache)).toThrow(TypeError);
  });
});
