/**
 * Attacker's review (session 15; found by helper-55, fixed by helper-59): a drop-in options delegate (Express) or
 * origin function (Koa, Hono) with credentials that echoes the origin from another part of the request the
 * attacker controls (the `__amp_source_origin` query parameter, the `Referer`, a custom header, a path segment)
 * instead of the `Origin` header. The guard's questions replaced only the `Origin`: every question still showed
 * the attacker's origin in the query or the `Referer`, so the function answered it (neither the canary nor a
 * look-alike), the guard passed, and any website read credentialed responses. A question request now carries
 * the asked origin wherever the real one shows (core's asked-origin.ts), in whatever encoding the attacker chose.
 * Each attack is the attacker's read: GET from https://evil.example.net with the victim's cookie.
 * The last block checks the other side: correct functions stay allowed, and are not marked unsafe.
 */
import { ampCors as expressAmpCors } from '@ampcors/express';
import { ampCors as honoAmpCors } from '@ampcors/hono';
import { ampCors as koaAmpCors } from '@ampcors/koa';
import { getRequestListener } from '@hono/node-server';
import { createRequire } from 'node:module';
import express5 from 'express';
import { Hono } from 'hono';
import Koa from 'koa';
import request from 'supertest';
import { describe, expect, it } from 'vitest';

const express4 = createRequire(import.meta.url)('express4') as typeof express5;
const EVIL = 'https://evil.example.net';
const TRUSTED = 'https://www.example.com';
type Seen = { status: number; acao: string | undefined; credentials: string | undefined };
type Headers = Record<string, string>;
type Callback = (error: null, options: object) => void;
type ExpressDelegate = (req: express5.Request, callback: Callback) => void;

const originOfUrl = (url: string | undefined): string => {
  try {
    return url === undefined ? '' : new URL(url).origin;
  } catch {
    return '';
  }
};

const seenOf = (status: number, acao: string | null | undefined, credentials: string | null | undefined): Seen => ({
  status,
  acao: acao ?? undefined,
  credentials: credentials ?? undefined,
});

/** GET `path` through Express 4 or 5 with the delegate, on the same app `times` times; the last answer. */
async function expressReads(express: typeof express5, delegate: ExpressDelegate, path: string, headers: Headers, times = 1): Promise<Seen> {
  const app = express();
  app.use(expressAmpCors(delegate as never));
  app.get(/.*/, (_req, res) => void res.json({ secret: 1 }));
  app.use((_e: unknown, _q: unknown, res: express5.Response, _n: unknown) => void res.status(500).end());
  let res: request.Response | undefined;
  for (let i = 0; i < times; i++)
    res = await request(app)
      .get(path)
      .set({ Cookie: 'session=victim', ...headers });
  const last = res as request.Response;
  return seenOf(last.status, last.headers['access-control-allow-origin'], last.headers['access-control-allow-credentials']);
}

/** GET `path` through Koa with the origin function (after `before`, e.g. a router setting `ctx.params`). */
async function koaReads(
  origin: (ctx: Koa.Context) => unknown,
  path: string,
  headers: Headers,
  options: { proxy?: boolean; times?: number; before?: Koa.Middleware } = {},
): Promise<Seen> {
  const app = new Koa();
  app.silent = true;
  app.proxy = options.proxy === true;
  if (options.before !== undefined) app.use(options.before);
  app.use(koaAmpCors({ origin, credentials: true } as never) as never);
  app.use((ctx) => {
    ctx.body = { secret: 1 };
  });
  let res: request.Response | undefined;
  for (let i = 0; i < (options.times ?? 1); i++)
    res = await request(app.callback())
      .get(path)
      .set({ Cookie: 'session=victim', ...headers });
  const last = res as request.Response;
  return seenOf(last.status, last.headers['access-control-allow-origin'], last.headers['access-control-allow-credentials']);
}

type HonoFunction = (origin: string, c: import('hono').Context) => string | null | undefined;

/** GET `path` through Hono with the origin function, as middleware of `route` (a middleware sees its own route's parameters). */
async function honoReads(origin: HonoFunction, path: string, headers: Headers, route = '/api/*'): Promise<Seen> {
  const app = new Hono();
  app.use(route, honoAmpCors({ origin, credentials: true } as never) as never);
  app.get(route, (c) => c.json({ secret: 1 }));
  const res = await app.request(`http://api.example.test${path}`, { headers: { Cookie: 'session=victim', ...headers } });
  return seenOf(res.status, res.headers.get('access-control-allow-origin'), res.headers.get('access-control-allow-credentials'));
}

const notReadable = (seen: Seen, label = '') => expect.soft(seen.acao === EVIL && seen.credentials === 'true', `${label} ${JSON.stringify(seen)}`).toBe(false);
const readableBy = (seen: Seen, origin: string) => expect(seen, JSON.stringify(seen)).toMatchObject({ status: 200, acao: origin, credentials: 'true' });

/** The ways an attacker writes its origin into a query value, each read back by a function that decodes what the framework gave it `decodes` more times. */
const ENCODINGS: ReadonlyArray<{ name: string; value: string; decodes: number }> = [
  { name: 'encodeURIComponent', value: encodeURIComponent(EVIL), decodes: 0 },
  { name: 'literal', value: EVIL, decodes: 0 },
  { name: 'an escaped letter', value: 'https://%65vil.example.net', decodes: 0 },
  { name: 'lower-case escapes', value: 'https%3a%2f%2fevil.example.net', decodes: 0 },
  { name: 'every character escaped', value: [...EVIL].map((c) => `%${c.charCodeAt(0).toString(16)}`).join(''), decodes: 0 },
  { name: 'double encoding', value: encodeURIComponent(encodeURIComponent(EVIL)), decodes: 1 },
  { name: 'double-encoded letter', value: 'https://%2565vil.example.net', decodes: 1 },
  // helper-66: read as new URL(q).origin after the framework's one decoding, whose URL parser decodes the host once more.
  { name: 'double-encoded letter read as a URL', value: 'https://%2565vil.example.net', decodes: 0 },
  { name: 'triple-encoded letter read as a URL after one decoding', value: 'https://%252565vil.example.net/welcome', decodes: 1 },
  { name: 'an escaped full-width letter', value: 'https://%25EF%25BD%2585vil.example.net', decodes: 0 },
  { name: 'a soft hyphen the URL parser drops', value: 'https://ev%25C2%25ADil.example.net', decodes: 0 },
  { name: 'upper case', value: 'HTTPS://EVIL.Example.NET', decodes: 0 },
];
/** What a function makes of a query value: decoded `decodes` more times, then read as a URL (as a browser origin is compared). */
const readAs = (value: string | undefined, decodes: number): string => {
  let text = value ?? '';
  for (let i = 0; i < decodes; i++) text = decodeURIComponent(text);
  return originOfUrl(text);
};

describe('Express delegate (4 and 5): an origin copied from elsewhere in the request is guarded', () => {
  for (const [name, express] of [
    ['express 4', express4],
    ['express 5', express5],
  ] as const) {
    it(`${name}: control, req.headers.origin copied`, async () => {
      notReadable(await expressReads(express, (req, cb) => cb(null, { origin: req.headers.origin, credentials: true }), '/api', { Origin: EVIL }));
    });
    it(`${name}: req.query.__amp_source_origin`, async () => {
      const delegate: ExpressDelegate = (req, cb) =>
        cb(null, { origin: (req.query as Record<string, string>).__amp_source_origin ?? false, credentials: true });
      notReadable(await expressReads(express, delegate, `/api?__amp_source_origin=${encodeURIComponent(EVIL)}`, { Origin: EVIL }));
    });
    it(`${name}: a query parameter, however the attacker encodes it`, async () => {
      for (const { name: how, value, decodes } of ENCODINGS) {
        const delegate: ExpressDelegate = (req, cb) =>
          cb(null, { origin: readAs((req.query as Record<string, string>).src, decodes) || false, credentials: true });
        const seen = await expressReads(express, delegate, `/api?src=${value}`, { Origin: EVIL });
        expect.soft(seen.acao === EVIL && seen.credentials === 'true', `${how}: ${JSON.stringify(seen)}`).toBe(false);
      }
    });
    it(`${name}: the host alone in the query, used as https://\${host} (any case, escaped, a tab in it)`, async () => {
      for (const host of ['evil.example.net', 'EVIL.example.NET', '%65vil.example.net', 'ev%09il.example.net']) {
        const delegate: ExpressDelegate = (req, cb) =>
          cb(null, { origin: originOfUrl(`https://${(req.query as Record<string, string>).host}`) || false, credentials: true });
        notReadable(await expressReads(express, delegate, `/api?host=${host}`, { Origin: EVIL }));
      }
    });
    it(`${name}: a full-width host, as a URL parser maps it`, async () => {
      const delegate: ExpressDelegate = (req, cb) =>
        cb(null, { origin: originOfUrl(`https://${(req.query as Record<string, string>).host}`) || false, credentials: true });
      notReadable(await expressReads(express, delegate, `/api?host=${encodeURIComponent('ｅｖｉｌ.example.net')}`, { Origin: EVIL }));
    });
    it(`${name}: the origin parsed from req.url, req.originalUrl or req.path`, async () => {
      const delegates: ExpressDelegate[] = [
        (req, cb) => cb(null, { origin: new URL(req.url, 'http://x').searchParams.get('src') ?? false, credentials: true }),
        (req, cb) => cb(null, { origin: new URL(req.originalUrl, 'http://x').searchParams.get('src') ?? false, credentials: true }),
        (req, cb) => cb(null, { origin: decodeURIComponent(req.path.split('/')[2] ?? '') || false, credentials: true }),
      ];
      for (const [at, delegate] of delegates.entries())
        notReadable(await expressReads(express, delegate, `/api/${encodeURIComponent(EVIL)}?src=${encodeURIComponent(EVIL)}`, { Origin: EVIL }), `#${at}`);
    });
    it(`${name}: the Referer's origin, canonical or not`, async () => {
      const delegate: ExpressDelegate = (req, cb) => cb(null, { origin: originOfUrl(req.get('referer')) || false, credentials: true });
      for (const referer of [`${EVIL}/page`, 'https://EVIL.example.net:443/page?x=1', 'HTTPS://evil.example.net/'])
        notReadable(await expressReads(express, delegate, '/api', { Origin: EVIL, Referer: referer }));
    });
    it(`${name}: a custom header, a raw header line, and req.res.req`, async () => {
      const delegates: ExpressDelegate[] = [
        (req, cb) => cb(null, { origin: req.get('x-source-origin') ?? false, credentials: true }),
        (req, cb) =>
          cb(null, { origin: req.rawHeaders[req.rawHeaders.findIndex((h) => h.toLowerCase() === 'x-source-origin') + 1] ?? false, credentials: true }),
        (req, cb) => cb(null, { origin: (req.res as unknown as { req: express5.Request }).req.headers.origin ?? false, credentials: true }),
      ];
      for (const [at, delegate] of delegates.entries())
        notReadable(await expressReads(express, delegate, '/api', { Origin: EVIL, 'X-Source-Origin': EVIL }), `#${at}`);
    });
  }
});

describe('Koa origin function: an origin copied from elsewhere in the request is guarded', () => {
  const Q = `?__amp_source_origin=${encodeURIComponent(EVIL)}`;
  it('control: ctx.get("Origin") copied is refused at construction', () => {
    expect(() => koaAmpCors({ origin: ((ctx: Koa.Context) => ctx.get('Origin')) as never, credentials: true })).toThrow(
      /every site read credentialed responses/,
    );
  });
  it('ctx.query, ctx.querystring, ctx.href, ctx.originalUrl, ctx.URL, ctx.request.URL, ctx.path', async () => {
    const reads: Array<(ctx: Koa.Context) => unknown> = [
      (ctx) => ctx.query.__amp_source_origin ?? '',
      (ctx) => new URLSearchParams(ctx.querystring).get('__amp_source_origin') ?? '',
      (ctx) => new URL(ctx.href).searchParams.get('__amp_source_origin') ?? '',
      (ctx) => new URL(ctx.originalUrl, 'http://x').searchParams.get('__amp_source_origin') ?? '',
      (ctx) => ctx.URL.searchParams.get('__amp_source_origin') ?? '',
      (ctx) => ctx.request.URL.searchParams.get('__amp_source_origin') ?? '',
      (ctx) => decodeURIComponent(ctx.path.split('/')[2] ?? ''),
    ];
    for (const [at, read] of reads.entries()) notReadable(await koaReads(read, `/api/${encodeURIComponent(EVIL)}${Q}`, { Origin: EVIL }), `#${at}`);
  });
  it('ctx.URL read (and memoized) by earlier middleware', async () => {
    const before: Koa.Middleware = (ctx, next) => {
      void ctx.URL;
      void ctx.query;
      return next();
    };
    notReadable(await koaReads((ctx) => ctx.URL.searchParams.get('src') ?? '', `/api?src=${encodeURIComponent(EVIL)}`, { Origin: EVIL }, { before }));
    notReadable(await koaReads((ctx) => ctx.query.src ?? '', `/api?src=${encodeURIComponent(EVIL)}`, { Origin: EVIL }, { before }));
  });
  it('a router parameter (ctx.params) and the query, however encoded', async () => {
    const before: Koa.Middleware = (ctx, next) => {
      (ctx as unknown as { params: object }).params = { site: decodeURIComponent(ctx.path.slice('/api/'.length)) };
      return next();
    };
    notReadable(
      await koaReads((ctx) => (ctx as unknown as { params: { site: string } }).params.site, `/api/${encodeURIComponent(EVIL)}`, { Origin: EVIL }, { before }),
    );
    for (const { name, value, decodes } of ENCODINGS) {
      const seen = await koaReads((ctx) => readAs(ctx.query.src as string, decodes), `/api?src=${value}`, { Origin: EVIL });
      expect.soft(seen.acao === EVIL && seen.credentials === 'true', `${name}: ${JSON.stringify(seen)}`).toBe(false);
    }
  });
  it('the Referer, a custom header, ctx.req.headers and ctx.res.req', async () => {
    const reads: Array<(ctx: Koa.Context) => unknown> = [
      (ctx) => originOfUrl(ctx.get('Referer')),
      (ctx) => ctx.get('X-Source-Origin'),
      (ctx) => ctx.req.headers['x-source-origin'],
      (ctx) => originOfUrl((ctx.res as unknown as { req: { headers: Headers } }).req.headers.referer),
    ];
    for (const [at, read] of reads.entries())
      notReadable(await koaReads(read, '/api', { Origin: EVIL, Referer: `${EVIL}/page`, 'X-Source-Origin': EVIL }), `#${at}`);
  });
});

describe('Hono origin function: an origin copied from elsewhere in the request is guarded', () => {
  const Q = `?__amp_source_origin=${encodeURIComponent(EVIL)}`;
  it('control: the origin it is given, copied, is refused at construction', () => {
    expect(() => honoAmpCors({ origin: (o: string) => o, credentials: true })).toThrow(/every site read credentialed responses/);
  });
  it('c.req.query, c.req.queries, c.req.url, c.req.raw.url, c.req.path, c.req.param', async () => {
    const reads: HonoFunction[] = [
      (_o, c) => c.req.query('__amp_source_origin') ?? null,
      (_o, c) => c.req.queries('__amp_source_origin')?.[0] ?? null,
      (_o, c) => c.req.query().__amp_source_origin ?? null,
      (_o, c) => new URL(c.req.url).searchParams.get('__amp_source_origin'),
      (_o, c) => new URL(c.req.raw.url).searchParams.get('__amp_source_origin'),
      (_o, c) => decodeURIComponent(c.req.path.split('/')[2] ?? ''),
      (_o, c) => c.req.param('site') ?? null,
    ];
    for (const [at, read] of reads.entries())
      notReadable(await honoReads(read, `/api/${encodeURIComponent(EVIL)}${Q}`, { Origin: EVIL }, '/api/:site'), `#${at}`);
  });
  it('the query, however encoded', async () => {
    for (const { name, value, decodes } of ENCODINGS) {
      const seen = await honoReads((_o, c) => readAs(c.req.query('src'), decodes) || null, `/api/data?src=${value}`, { Origin: EVIL });
      expect.soft(seen.acao === EVIL && seen.credentials === 'true', `${name}: ${JSON.stringify(seen)}`).toBe(false);
    }
  });
  it('the Referer, a custom header, c.req.raw.headers', async () => {
    const reads: HonoFunction[] = [
      (_o, c) => originOfUrl(c.req.header('referer')) || null,
      (_o, c) => c.req.header('x-source-origin') ?? null,
      (_o, c) => c.req.header()['x-source-origin'] ?? null,
      (_o, c) => c.req.raw.headers.get('x-source-origin'),
    ];
    for (const [at, read] of reads.entries())
      notReadable(await honoReads(read, '/api/data', { Origin: EVIL, Referer: `${EVIL}/page`, 'X-Source-Origin': EVIL }), `#${at}`);
  });
  it('on @hono/node-server: env.incoming and env.outgoing.req', async () => {
    type Env = { incoming: { url: string; headers: Headers }; outgoing: { req: { headers: Headers } } };
    const reads: Array<(o: string, c: import('hono').Context<{ Bindings: Env }>) => string | null> = [
      (_o, c) => new URL(c.env.incoming.url, 'http://x').searchParams.get('__amp_source_origin'),
      (_o, c) => originOfUrl(c.env.outgoing.req.headers.referer) || null,
    ];
    for (const read of reads) {
      const app = new Hono<{ Bindings: Env }>();
      app.use(honoAmpCors({ origin: read, credentials: true } as never) as never);
      app.get('/api', (c) => c.text('secret'));
      const res = await request(getRequestListener(app.fetch)).get(`/api${Q}`).set('Origin', EVIL).set('Referer', `${EVIL}/page`);
      notReadable(seenOf(res.status, res.headers['access-control-allow-origin'], res.headers['access-control-allow-credentials']));
    }
  });
});

describe('a value handed over decoded, whose host is escaped once more (new URL decodes it: helper-66)', () => {
  const VALUE = 'https://%65vil.example.net/welcome';
  const PATH_VALUE = encodeURIComponent(VALUE);
  it('Express 4: req.query as an object (qs), and req.params of a route', async () => {
    const fromQuery: ExpressDelegate = (req, cb) => cb(null, { origin: originOfUrl((req.query as { r?: { to?: string } }).r?.to) || false, credentials: true });
    notReadable(await expressReads(express4, fromQuery, `/api?r[to]=${PATH_VALUE}`, { Origin: EVIL }), 'query object');
    for (const express of [express4, express5]) {
      const app = express();
      const delegate: ExpressDelegate = (req, cb) => cb(null, { origin: originOfUrl(req.params['site'] as string | undefined) || false, credentials: true });
      app.get('/api/:site', expressAmpCors(delegate as never) as never, (_req: express5.Request, res: express5.Response) => void res.json({ secret: 1 }));
      app.use((_e: unknown, _q: unknown, res: express5.Response, _n: unknown) => void res.status(500).end());
      const res = await request(app).get(`/api/${PATH_VALUE}`).set({ Origin: EVIL, Cookie: 'session=victim' });
      notReadable(seenOf(res.status, res.headers['access-control-allow-origin'], res.headers['access-control-allow-credentials']), 'params');
    }
  });
  it('Koa: a router parameter (ctx.params), decoded by the router', async () => {
    const before: Koa.Middleware = (ctx, next) => {
      (ctx as unknown as { params: object }).params = { site: decodeURIComponent(ctx.path.slice('/api/'.length)) };
      return next();
    };
    const read = (ctx: Koa.Context) => originOfUrl((ctx as unknown as { params: { site: string } }).params.site);
    notReadable(await koaReads(read, `/api/${PATH_VALUE}`, { Origin: EVIL }, { before }));
  });
  it('Hono: c.req.param', async () => {
    notReadable(await honoReads((_o, c) => originOfUrl(c.req.param('site')) || null, `/api/${PATH_VALUE}`, { Origin: EVIL }, '/api/:site'));
  });
});

describe('correct functions stay allowed and are never marked unsafe', () => {
  const TRUSTED_LIST = new Set([TRUSTED, 'https://amp.example.com']);
  const Q = `?__amp_source_origin=${encodeURIComponent(TRUSTED)}`;
  it('Express: a delegate checking the query against a list, asked three times', async () => {
    const delegate: ExpressDelegate = (req, cb) => {
      const source = (req.query as Record<string, string>).__amp_source_origin;
      cb(null, { origin: source !== undefined && TRUSTED_LIST.has(source) ? source : false, credentials: true });
    };
    for (const express of [express4, express5])
      readableBy(await expressReads(express, delegate, `/api${Q}`, { Origin: TRUSTED, Referer: `${TRUSTED}/page` }, 3), TRUSTED);
  });
  it("Express: a delegate allowing its own origin (Host and X-Forwarded-Host are the server's, never rewritten)", async () => {
    const own = 'https://api.example.com';
    for (const express of [express4, express5]) {
      const delegate: ExpressDelegate = (req, cb) => {
        const host = req.get('x-forwarded-host') ?? req.get('host');
        cb(null, { origin: req.headers.origin === `https://${host}` ? req.headers.origin : false, credentials: true });
      };
      readableBy(
        await expressReads(
          express,
          delegate,
          `/api?back=${encodeURIComponent(own)}`,
          { Origin: own, 'X-Forwarded-Host': 'api.example.com', Referer: `${own}/page` },
          3,
        ),
        own,
      );
    }
  });
  it('Koa: a function comparing the Origin with its own host behind a proxy (X-Forwarded-Host)', async () => {
    const own = 'https://api.example.com';
    const read = (ctx: Koa.Context) => (ctx.get('Origin') === `https://${ctx.host}` ? ctx.get('Origin') : '');
    readableBy(
      await koaReads(
        read,
        `/api?back=${encodeURIComponent(own)}`,
        { Origin: own, 'X-Forwarded-Host': 'api.example.com', Host: 'internal:8080' },
        { proxy: true, times: 3 },
      ),
      own,
    );
  });
  it('Koa and Hono: a list checked against the query, the Referer and a cookie the server set', async () => {
    const pick = (value: string | undefined) => (value !== undefined && TRUSTED_LIST.has(value) ? value : '');
    readableBy(await koaReads((ctx) => pick(ctx.query.__amp_source_origin as string), `/api${Q}`, { Origin: TRUSTED }, { times: 3 }), TRUSTED);
    readableBy(await koaReads((ctx) => pick(originOfUrl(ctx.get('Referer'))), '/api', { Origin: TRUSTED, Referer: `${TRUSTED}/p` }, { times: 3 }), TRUSTED);
    readableBy(await koaReads((ctx) => pick(ctx.cookies.get('partner')), '/api', { Origin: TRUSTED, Cookie: `partner=${TRUSTED}` }, { times: 3 }), TRUSTED);
    readableBy(await honoReads((_o, c) => pick(c.req.query('__amp_source_origin')) || null, `/api/data${Q}`, { Origin: TRUSTED }), TRUSTED);
  });
});
