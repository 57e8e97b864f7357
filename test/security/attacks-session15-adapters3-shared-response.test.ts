/**
 * Attacker's review, session 15 (helper-60; fixed by helper-62): one Response object returned for several requests
 * (`const notFound = new Response(null, { status: 404 })`: a null body can be sent any number of times, and a string
 * body on `@hono/node-server` too). The Fetch and Hono adapters wrote each request's CORS headers into the handler's
 * own Response, so one request's `Access-Control-Allow-Origin` / `-Credentials` stayed on the shared object and went
 * out with a later request's answer: denied with `onDenied: 'omit'`, without an `Origin`, refused by a drop-in origin
 * function, or under another route's policy; requests in flight at the same time raced on it. The attacker is a page
 * on an origin allowed somewhere (a partner widget) reading what it was never allowed to read.
 *
 * Each answer must be what the same application answers when its handler makes a fresh Response every time.
 */
import { once } from 'node:events';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { withAmpCors } from '@ampcors/fetch';
import { ampCors } from '@ampcors/hono';
import { getRequestListener } from '@hono/node-server';
import fc from 'fast-check';
import { Hono } from 'hono';
import { afterAll, describe, expect, it } from 'vitest';

const PARTNER = 'https://partner.example';
const SITE = 'https://example.com';
const EVIL = 'https://evil.example';
const ORIGINS = [PARTNER, SITE, EVIL, undefined] as const;
type Origin = (typeof ORIGINS)[number];

const get = (path: string, origin: Origin) => new Request(`https://api.example.com${path}`, origin === undefined ? {} : { headers: { origin } });
/** What a page reading the answer sees: status and every header. */
const seen = async (response: Response) => ({ status: response.status, headers: [...response.headers].sort(), body: await response.text() });
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** A handler returning one shared Response, or a fresh copy of it each time (the reference). */
function handlers(make: () => Response) {
  const shared = make();
  return { shared: () => shared, fresh: () => make() };
}

describe('Fetch adapter: one Response returned for several requests', () => {
  it('two policies sharing one cached 404: the strict one never answers with the open one`s allow', async () => {
    const notFound = new Response(null, { status: 404 });
    const open = withAmpCors(() => notFound, { publishers: ['example.com', 'partner.example'] });
    const strict = withAmpCors(() => notFound, { publishers: ['example.com'], onDenied: 'omit' });
    const allowed = await open(get('/public', PARTNER));
    expect([allowed.headers.get('access-control-allow-origin'), allowed.headers.get('access-control-allow-credentials')]).toEqual([PARTNER, 'true']);
    const denied = await strict(get('/private', PARTNER));
    expect([denied.status, denied.headers.get('access-control-allow-origin'), denied.headers.get('access-control-allow-credentials')]).toEqual([
      404,
      null,
      null,
    ]);
    expect(denied.headers.get('vary')).toBe('Origin');
  });

  it('one policy: a request without Origin after an allowed one gets no Access-Control-Allow-Origin', async () => {
    const notFound = new Response(null, { status: 404 });
    const h = withAmpCors(() => notFound, { publishers: ['example.com'] });
    expect((await h(get('/x', SITE))).headers.get('access-control-allow-origin')).toBe(SITE);
    const later = await h(get('/x', undefined));
    expect([later.headers.get('access-control-allow-origin'), later.headers.get('access-control-allow-credentials')]).toEqual([null, null]);
  });

  it('an onError answer shared with a handler`s: the failure gets Vary: Origin and no allow', async () => {
    const oops = new Response('unavailable', { status: 503 });
    const h = withAmpCors(
      (request: Request) => {
        if (new URL(request.url).pathname === '/boom') throw new Error('boom');
        return oops;
      },
      { publishers: ['partner.example'], onError: () => oops },
    );
    expect((await h(get('/ok', PARTNER))).headers.get('access-control-allow-origin')).toBe(PARTNER);
    const failed = await h(get('/boom', PARTNER));
    expect([failed.status, failed.headers.get('access-control-allow-origin'), failed.headers.get('access-control-allow-credentials')]).toEqual([
      503,
      null,
      null,
    ]);
  });

  it('any sequence of requests, through two policies and nested wrappers, answers as with a fresh Response each time', async () => {
    const make = () => {
      const headers = new Headers({ 'content-type': 'text/plain', vary: 'Accept-Encoding', 'x-kept': 'yes' });
      headers.append('set-cookie', 'a=1');
      headers.append('set-cookie', 'b=2');
      return new Response(null, { status: 404, statusText: 'Nowhere', headers });
    };
    const apps = (handler: () => Response) => ({
      open: withAmpCors(handler, { publishers: ['example.com', 'partner.example'], exposedHeaders: ['X-Kept'] }),
      strict: withAmpCors(handler, { publishers: ['example.com'], onDenied: 'omit' }),
      nested: withAmpCors(withAmpCors(handler, { publishers: ['partner.example'], onDenied: 'omit', exposedHeaders: ['X-Kept'] }), {
        publishers: ['example.com'],
        onDenied: 'omit',
        maxAge: 60,
      }),
    });
    await fc.assert(
      fc.asyncProperty(
        fc.array(fc.tuple(fc.constantFrom('open', 'strict', 'nested' as const), fc.constantFrom(...ORIGINS)), { minLength: 1, maxLength: 12 }),
        async (steps) => {
          const { shared, fresh } = handlers(make);
          const [withShared, withFresh] = [apps(shared), apps(fresh)];
          for (const [app, origin] of steps) {
            const expected = await seen(await withFresh[app](get('/x', origin)));
            const actual = await withShared[app](get('/x', origin));
            expect(await seen(actual)).toEqual(expected);
            if (actual.status === 404) expect([actual.statusText, actual.headers.getSetCookie()]).toEqual(['Nowhere', ['a=1', 'b=2']]);
          }
        },
      ),
      { numRuns: 150 },
    );
  });

  it('requests in flight at the same time on one cached Response each get their own headers', async () => {
    const notFound = new Response(null, { status: 404 });
    let turn = 0;
    const slow = async () => {
      await sleep(turn++ % 3);
      return notFound;
    };
    const open = withAmpCors(slow, { publishers: ['example.com', 'partner.example'], onDenied: 'omit' });
    const strict = withAmpCors(slow, { publishers: ['example.com'], onDenied: 'omit' });
    const asked = Array.from({ length: 60 }, (_, i) => ({ app: i % 2 === 0 ? open : strict, origin: ORIGINS[i % 4] as Origin, strict: i % 2 === 1 }));
    const answers = await Promise.all(asked.map(({ app, origin }) => app(get('/x', origin))));
    answers.forEach((answer, i) => {
      const { origin, strict: isStrict } = asked[i] as (typeof asked)[number];
      const allowed = origin === SITE || (origin === PARTNER && !isStrict);
      expect([answer.status, answer.headers.get('access-control-allow-origin'), answer.headers.get('access-control-allow-credentials')]).toEqual(
        allowed ? [404, origin, 'true'] : [404, null, null],
      );
    });
  });

  it('a cached string body is sent whole every time; a cached body already read gives a 500 without CORS headers', async () => {
    const page = new Response('gone', { status: 410 });
    const h = withAmpCors(() => page, { publishers: ['example.com', 'partner.example'], onDenied: 'omit' });
    const first = await h(get('/x', PARTNER));
    expect(first).toBe(page);
    const second = await h(get('/x', EVIL));
    expect([second.status, second.headers.get('access-control-allow-origin'), await second.text()]).toEqual([410, null, 'gone']);
    await first.text();
    const third = await h(get('/x', SITE));
    expect([third.status, third.headers.get('access-control-allow-origin'), third.headers.get('vary')]).toEqual([500, null, 'Origin']);
  });

  it('a cached Response.redirect and Response.error are never written into', async () => {
    const moved = Response.redirect('https://www.example.com/next', 302);
    const h = withAmpCors(() => moved, { publishers: ['partner.example'], onDenied: 'omit' });
    expect((await h(get('/x', PARTNER))).headers.get('access-control-allow-origin')).toBe(PARTNER);
    const denied = await h(get('/x', EVIL));
    expect([denied.status, denied.headers.get('location'), denied.headers.get('access-control-allow-origin')]).toEqual([
      302,
      'https://www.example.com/next',
      null,
    ]);
    expect(moved.headers.get('access-control-allow-origin')).toBeNull();
    const failed = Response.error();
    const e = withAmpCors(() => failed, { publishers: ['partner.example'] });
    expect(await e(get('/x', PARTNER))).toBe(failed);
    expect([failed.status, failed.headers.get('access-control-allow-origin')]).toEqual([0, null]);
  });
});

describe('Hono adapter: one Response returned for several requests', () => {
  it('AMP mode, two policies sharing one cached 404', async () => {
    const notFound = new Response(null, { status: 404 });
    const app = new Hono();
    app.use('/public/*', ampCors({ publishers: ['example.com', 'partner.example'] }));
    app.use('/private/*', ampCors({ publishers: ['example.com'], onDenied: 'omit' }));
    app.get('*', () => notFound);
    expect((await app.request('/public/x', { headers: { origin: PARTNER } })).headers.get('access-control-allow-origin')).toBe(PARTNER);
    const denied = await app.request('/private/x', { headers: { origin: PARTNER } });
    expect([denied.status, denied.headers.get('access-control-allow-origin'), denied.headers.get('access-control-allow-credentials')]).toEqual([
      404,
      null,
      null,
    ]);
  });

  it('drop-in mode: an origin function allowing one path, with credentials', async () => {
    const notFound = new Response(null, { status: 404 });
    const app = new Hono();
    app.use('*', ampCors({ origin: (o, c) => (c.req.path === '/widget' && o === PARTNER ? o : null), credentials: true }));
    app.get('*', () => notFound);
    expect((await app.request('/widget', { headers: { origin: PARTNER } })).headers.get('access-control-allow-origin')).toBe(PARTNER);
    const denied = await app.request('/account', { headers: { origin: PARTNER } });
    expect([denied.headers.get('access-control-allow-origin'), denied.headers.get('access-control-allow-credentials')]).toEqual([null, null]);
  });

  it('any sequence of requests, with ampCors at two levels (a sub-app), answers as with a fresh Response each time', async () => {
    const make = () => {
      const headers = new Headers({ 'content-type': 'text/plain', 'x-kept': 'yes' });
      headers.append('set-cookie', 'a=1');
      headers.append('set-cookie', 'b=2');
      return new Response(null, { status: 404, headers });
    };
    const appOf = (handler: () => Response) => {
      const api = new Hono();
      api.use('*', ampCors({ publishers: ['partner.example'], onDenied: 'omit', exposedHeaders: ['X-Kept'] }));
      api.get('*', handler);
      const app = new Hono();
      app.use('/api/*', ampCors({ publishers: ['example.com'], onDenied: 'omit', maxAge: 60 }));
      app.use('/open/*', ampCors({ publishers: ['example.com', 'partner.example'] }));
      app.use('/widget/*', ampCors({ origin: (o) => (o === PARTNER ? o : null), credentials: true }));
      app.route('/api', api);
      app.get('*', handler);
      return app;
    };
    await fc.assert(
      fc.asyncProperty(
        fc.array(fc.tuple(fc.constantFrom('/api/x', '/open/x', '/widget/x'), fc.constantFrom(...ORIGINS)), { minLength: 1, maxLength: 12 }),
        async (steps) => {
          const { shared, fresh } = handlers(make);
          const [withShared, withFresh] = [appOf(shared), appOf(fresh)];
          for (const [path, origin] of steps) {
            const init = origin === undefined ? {} : { headers: { origin } };
            const expected = await seen(await withFresh.request(path, init));
            const actual = await withShared.request(path, init);
            expect(await seen(actual)).toEqual(expected);
            if (actual.status === 404) expect(actual.headers.getSetCookie()).toEqual(['a=1', 'b=2']);
          }
        },
      ),
      { numRuns: 150 },
    );
  });

  it('an answer ampCors ends itself (a 403) from a cached Response set by earlier middleware carries no earlier allow', async () => {
    const notFound = new Response(null, { status: 404 });
    const app = new Hono();
    app.use('/public/*', ampCors({ publishers: ['partner.example'] }));
    app.use('/private/*', async (c, next) => {
      c.res = notFound;
      await next();
    });
    app.use('/private/*', ampCors({ publishers: ['example.com'] }));
    app.get('*', () => notFound);
    expect((await app.request('/public/x', { headers: { origin: PARTNER } })).headers.get('access-control-allow-origin')).toBe(PARTNER);
    const denied = await app.request('/private/x', { headers: { origin: PARTNER } });
    expect([denied.status, denied.headers.get('access-control-allow-origin'), denied.headers.get('access-control-allow-credentials')]).toEqual([
      403,
      null,
      null,
    ]);
  });

  it('requests in flight at the same time on one cached Response each get their own headers', async () => {
    const notFound = new Response(null, { status: 404 });
    let turn = 0;
    const app = new Hono();
    app.use('/open/*', ampCors({ publishers: ['example.com', 'partner.example'] }));
    app.use('/strict/*', ampCors({ publishers: ['example.com'], onDenied: 'omit' }));
    app.get('*', async () => {
      await sleep(turn++ % 3);
      return notFound;
    });
    const asked = Array.from({ length: 60 }, (_, i) => ({ strict: i % 2 === 1, origin: ORIGINS[i % 4] as Origin }));
    const answers = await Promise.all(
      asked.map(({ strict, origin }) => app.request(strict ? '/strict/x' : '/open/x', origin === undefined ? {} : { headers: { origin } })),
    );
    answers.forEach((answer, i) => {
      const { origin, strict } = asked[i] as (typeof asked)[number];
      const allowed = origin === SITE || (origin === PARTNER && !strict);
      expect([answer.headers.get('access-control-allow-origin'), answer.headers.get('access-control-allow-credentials')]).toEqual(
        allowed ? [origin, 'true'] : [null, null],
      );
    });
  });
});

describe('@hono/node-server: a cached string body, sent again on every request', () => {
  const servers: Server[] = [];
  afterAll(() => Promise.all(servers.map((server) => new Promise((resolve) => server.close(resolve)))));
  const listen = async (fetchHandler: (request: Request) => Response | Promise<Response>) => {
    const server = createServer(getRequestListener(fetchHandler));
    servers.push(server);
    server.listen(0, '127.0.0.1');
    await once(server, 'listening');
    return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  };
  const ask = async (base: string, path: string, origin: Origin) => {
    const response = await fetch(base + path, origin === undefined ? {} : { headers: { origin } });
    return [
      response.status,
      response.headers.get('access-control-allow-origin'),
      response.headers.get('access-control-allow-credentials'),
      await response.text(),
    ];
  };

  it('Hono: each answer has its own CORS headers and the whole body', async () => {
    let page: Response | undefined;
    const app = new Hono();
    app.use('/open/*', ampCors({ publishers: ['example.com', 'partner.example'] }));
    app.use('/strict/*', ampCors({ publishers: ['example.com'], onDenied: 'omit' }));
    // Made after the server replaced the global Response with its own (which sends a string body again).
    app.get('*', () => (page ??= new Response('not here', { status: 404, headers: { 'content-type': 'text/plain' } })));
    const base = await listen(app.fetch);
    for (let round = 0; round < 3; round++) {
      expect(await ask(base, '/open/x', PARTNER)).toEqual([404, PARTNER, 'true', 'not here']);
      expect(await ask(base, '/strict/x', PARTNER)).toEqual([404, null, null, 'not here']);
      expect(await ask(base, '/strict/x', SITE)).toEqual([404, SITE, 'true', 'not here']);
      expect(await ask(base, '/open/x', undefined)).toEqual([404, null, null, 'not here']);
    }
    // The copies took the string itself: the server still sends the cached Response as a constant body (no stream teed per request).
    expect(Object.getOwnPropertySymbols(page).map((symbol) => symbol.description)).toContain('cache');
  });

  it('Fetch: each answer has its own CORS headers and the whole body', async () => {
    let page: Response | undefined;
    const h = withAmpCors(() => (page ??= new Response('not here', { status: 404 })), { publishers: ['partner.example'], onDenied: 'omit' });
    const base = await listen(h);
    for (let round = 0; round < 3; round++) {
      expect(await ask(base, '/x', PARTNER)).toEqual([404, PARTNER, 'true', 'not here']);
      expect(await ask(base, '/x', EVIL)).toEqual([404, null, null, 'not here']);
    }
    expect(Object.getOwnPropertySymbols(page).map((symbol) => symbol.description)).toContain('cache');
  });
});
