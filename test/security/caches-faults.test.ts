// caches.json refresh faults (issue #6, issue 14 items 6 and 7): a registry
// server on loopback that hangs, fails, serves hostile entries, thousands of
// entries, a gzip bomb, an endless body or a slow drip. fetchCaches must keep
// the last good list, finish within its timeout (plus a small margin) without
// growing memory, and no verifier built from its answer may trust more than
// before.
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { gzipSync } from 'node:zlib';
import { type AmpCache, CACHES, createVerifier, fetchCaches, type FetchCachesResult } from '@ampcors/core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MAX_CACHES, MAX_CACHES_JSON_BYTES } from '../../packages/core/src/caches.js';

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
    for (const cacheDomain of [
      'com',
      '',
      'github.io',
      'co.uk',
      'CDN.AMPPROJECT.ORG',
      'cdn.ampproject.org.',
      '*.ampproject.org',
      'https://cdn.ampproject.org',
    ]) {
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

/** Valid entries of a trusted operator, distinct and not overlapping: `count` of them. */
const validEntries = (count: number) => Array.from({ length: count }, (_, i) => ({ id: `c${i}`, name: 'C', cacheDomain: `c${i}.ampproject.org` }));

/** Runs `run`, sampling the resident set size every few milliseconds: its peak growth and the time taken. */
async function measured<T>(run: () => Promise<T>): Promise<{ result: T; ms: number; growthMb: number }> {
  const before = process.memoryUsage.rss();
  let peak = before;
  const sampler = setInterval(() => {
    peak = Math.max(peak, process.memoryUsage.rss());
  }, 2);
  const started = performance.now();
  try {
    const result = await run();
    const ms = performance.now() - started;
    peak = Math.max(peak, process.memoryUsage.rss());
    return { result, ms, growthMb: (peak - before) / 2 ** 20 };
  } finally {
    clearInterval(sampler);
  }
}

describe('hostile registry bodies are bounded in time and memory (issue 14 items 6 and 7)', () => {
  const TIMEOUT = 1000;
  /** Finishes within the timeout plus this (a shared 2-core machine; the old code took 6.6 s). */
  const MARGIN = 500;
  /** Growth of the resident set allowed during one refresh (the old code reached 1.2 GB). */
  const MEMORY_MB = 64;
  // A gzip bomb: 1.6 MB on the wire, 1.6 GB decoded (gzip members of 16 MB of spaces, concatenated).
  const member = gzipSync(Buffer.alloc(16 * 2 ** 20, 0x20), { level: 9 });
  const bomb = Buffer.concat([gzipSync(Buffer.from('{"caches":[')), ...Array.from({ length: 100 }, () => member)]);
  const good = JSON.stringify(GOOD);
  // As many short valid entries as fit under the byte cap: they all reach validation.
  const shortEntries = (count: number) =>
    Array.from({ length: count }, (_, i) => ({ id: i.toString(36), name: '', cacheDomain: `${i.toString(36)}.ampproject.org` }));
  const underCap = (() => {
    let count = 100;
    while (JSON.stringify({ caches: shortEntries(count + 100) }).length <= MAX_CACHES_JSON_BYTES) count += 100;
    return JSON.stringify({ caches: shortEntries(count) });
  })();
  const closed: Record<string, Promise<number>> = {};
  let hostile: Server;
  let url: string;

  /** Writes `chunk` until the client goes away or `total` bytes are sent, honouring backpressure. */
  const pump = (res: ServerResponse, chunk: Buffer, total = Infinity, end?: string): void => {
    let sent = 0;
    const more = (): void => {
      while (sent < total && !res.destroyed) {
        sent += chunk.length;
        if (!res.write(chunk)) return void res.once('drain', more);
      }
      if (!res.destroyed) res.end(end);
    };
    more();
  };

  const HANDLERS: Record<string, (req: IncomingMessage, res: ServerResponse) => void> = {
    '/thousands': (_, res) => res.end(JSON.stringify({ caches: validEntries(8000) })),
    '/over-max': (_, res) => res.end(JSON.stringify({ caches: validEntries(MAX_CACHES + 1) })),
    '/under-cap': (_, res) => res.end(underCap),
    '/max': (_, res) => res.end(JSON.stringify({ caches: validEntries(MAX_CACHES) })),
    '/gzip-bomb': (_, res) => {
      res.writeHead(200, { 'content-type': 'application/json', 'content-encoding': 'gzip' });
      res.end(bomb);
    },
    '/gzip-good': (_, res) => {
      res.writeHead(200, { 'content-type': 'application/json', 'content-encoding': 'gzip' });
      res.end(gzipSync(good));
    },
    // A valid list padded with 200 MB of JSON whitespace (the old code accepted it).
    '/200mb': (_, res) => {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.write(good.slice(0, -1));
      pump(res, Buffer.alloc(2 ** 20, 0x20), 200 * 2 ** 20, '}');
    },
    '/endless': (_, res) => {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.write('{"caches":[');
      pump(res, Buffer.alloc(64 * 1024, 0x20));
    },
    '/content-length': (_, res) => {
      res.writeHead(200, { 'content-type': 'application/json', 'content-length': String(10 * 2 ** 20) });
      res.write('{"caches":');
    },
    // One byte every 5 ms, forever: the body is small, but never ends.
    '/drip': (req, res) => {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.write('{"caches":[');
      const timer = setInterval(() => res.write(' '), 5);
      closed['/drip'] = new Promise((resolve) => req.socket.once('close', () => resolve(performance.now())));
      res.once('close', () => clearInterval(timer));
    },
  };

  beforeAll(async () => {
    hostile = createServer((req, res) => {
      const handler = HANDLERS[req.url ?? ''];
      if (handler) handler(req, res);
      else res.writeHead(404).end();
    });
    await new Promise<void>((resolve) => hostile.listen(0, '127.0.0.1', resolve));
    url = `http://127.0.0.1:${(hostile.address() as AddressInfo).port}`;
  });
  afterAll(async () => {
    hostile.closeAllConnections();
    await new Promise<void>((resolve) => hostile.close(() => resolve()));
  });

  const hostileRefresh = (path: string) => measured(() => fetchCaches({ url: `${url}${path}`, timeoutMs: TIMEOUT, fallback: LAST_GOOD }));

  /** The common verdict: refused, the last good list kept, in time and memory. */
  const expectBounded = ({ result, ms, growthMb }: { result: FetchCachesResult; ms: number; growthMb: number }) => {
    expect(result.ok).toBe(false);
    expect(result.caches).toBe(LAST_GOOD);
    expect(ms).toBeLessThan(TIMEOUT + MARGIN);
    expect(growthMb).toBeLessThan(MEMORY_MB);
    return result.ok ? '' : result.error.message;
  };

  it('a registry of 8,000 valid entries is refused within the timeout (its body is over the cap)', async () => {
    expect(expectBounded(await hostileRefresh('/thousands'))).toMatch(new RegExp(`larger than ${MAX_CACHES_JSON_BYTES} bytes`));
  });
  it('over a thousand valid entries within the byte cap are refused by count, within the timeout', async () => {
    const count = (JSON.parse(underCap) as { caches: unknown[] }).caches.length;
    expect(count).toBeGreaterThanOrEqual(1000);
    expect(expectBounded(await hostileRefresh('/under-cap'))).toBe(
      `caches has ${count} entries; at most ${MAX_CACHES} are accepted (the AMP registry lists 2)`,
    );
  });
  it(`more than ${MAX_CACHES} entries in a small body are refused, ${MAX_CACHES} are accepted`, async () => {
    expect(expectBounded(await hostileRefresh('/over-max'))).toBe(
      `caches has ${MAX_CACHES + 1} entries; at most ${MAX_CACHES} are accepted (the AMP registry lists 2)`,
    );
    const { result } = await hostileRefresh('/max');
    expect(result.ok).toBe(true);
    expect(result.caches).toHaveLength(MAX_CACHES);
  });
  it('8,000 entries given directly to createVerifier are refused at once', async () => {
    const { result: error, ms } = await measured(async () => {
      try {
        createVerifier({ publishers: ['example.com'], caches: validEntries(8000) });
      } catch (caught) {
        return caught;
      }
      return undefined;
    });
    expect(error).toMatchObject({
      name: 'AmpCorsError',
      code: 'invalid-cache',
      message: `caches has 8000 entries; at most ${MAX_CACHES} are accepted (the AMP registry lists 2)`,
    });
    expect(ms).toBeLessThan(MARGIN);
  });
  it('a gzip bomb (1.6 MB → 1.6 GB) is cut off at the cap: no memory growth, no wait for the timeout', async () => {
    expect(bomb.length).toBeLessThan(2 * 2 ** 20);
    const measuredRefresh = await hostileRefresh('/gzip-bomb');
    expect(expectBounded(measuredRefresh)).toMatch(/larger than 65536 bytes \(decoded\)/);
    expect(measuredRefresh.ms).toBeLessThan(TIMEOUT);
  });
  it('a gzip-encoded good list is read (the control)', async () => {
    const { result } = await hostileRefresh('/gzip-good');
    expect(result).toEqual({ ok: true, caches: CACHES });
  });
  it('a valid list padded to 200 MB is refused, not accepted', async () => {
    const measuredRefresh = await hostileRefresh('/200mb');
    expect(expectBounded(measuredRefresh)).toMatch(/larger than 65536 bytes/);
    expect(measuredRefresh.ms).toBeLessThan(TIMEOUT);
  });
  it('an endless body is cut off at the cap, long before the timeout', async () => {
    const measuredRefresh = await hostileRefresh('/endless');
    expect(expectBounded(measuredRefresh)).toMatch(/larger than 65536 bytes/);
    expect(measuredRefresh.ms).toBeLessThan(TIMEOUT);
  });
  it('a Content-Length over the cap is refused before reading', async () => {
    const measuredRefresh = await hostileRefresh('/content-length');
    expect(expectBounded(measuredRefresh)).toBe(
      `caches.json is larger than ${MAX_CACHES_JSON_BYTES} bytes (Content-Length ${10 * 2 ** 20}); the AMP registry is under 1 kB`,
    );
    expect(measuredRefresh.ms).toBeLessThan(TIMEOUT);
  });
  it('a slow drip (a byte every 5 ms, forever) times out on time, and the connection is closed', async () => {
    const measuredRefresh = await hostileRefresh('/drip');
    const finished = performance.now();
    expect(expectBounded(measuredRefresh)).toBe(`caches.json fetch timed out after ${TIMEOUT} ms`);
    expect(measuredRefresh.ms).toBeGreaterThanOrEqual(TIMEOUT - 5);
    // The download is aborted, not left dripping in the background.
    const closedAt = await Promise.race([
      closed['/drip'] ?? Promise.resolve(Infinity),
      new Promise<number>((resolve) => setTimeout(() => resolve(Infinity), MARGIN)),
    ]);
    expect(closedAt - finished).toBeLessThan(MARGIN);
  });
});
