/**
 * Attacker's review, session 17 (fix-koa): Koa's `keepDecision` (session 16:
 * a Fetch `Response` set as `ctx.body` brings its headers over the answer, so
 * the outer Koa ampCors puts its plan back) against an INNER ampCors of
 * another framework on the same Node request (Express's, run as Koa
 * middleware on `ctx.req`/`ctx.res`, koa-connect style; an
 * `@hono/node-server` listener). The inner one decides (core's
 * nested-policies.ts, 4.): an application-wide Koa policy allows the partner
 * with credentials, a stricter Express one on `/admin` denies it (or allows
 * it without credentials), and the handler answers with a Response carrying
 * its own grant (`new Response('secret', { headers: { 'access-control-allow-origin': partner } })`,
 * or a proxied upstream's echo of the Origin with `-Credentials`). The outer
 * took the Response's grant for one overruling its own plan and put its plan
 * back: the partner got `Access-Control-Allow-Origin` and `-Credentials` on
 * `/admin` (Koa 3, which copies the Response's headers; Koa 2 too, which does
 * not, since the outer wrote its plan over the inner's denial anyway).
 */
import { ampCors as expressCors, type ExpressAmpCorsOptions } from '@ampcors/express';
import { lastTakeBack, NO_CORS_HEADERS, removeEarlierCorsHeaders } from '@ampcors/core/adapter';
import { type FetchAmpCorsOptions, withAmpCors } from '@ampcors/fetch';
import { ampCors as honoCors, type HonoAmpCorsOptions } from '@ampcors/hono';
import { ampCors as koaCors, type KoaAmpCorsOptions } from '@ampcors/koa';
import { getRequestListener } from '@hono/node-server';
import express from 'express';
import { Hono } from 'hono';
import Koa3 from 'koa';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { createRequire } from 'node:module';
import type { AddressInfo } from 'node:net';
import request from 'supertest';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { allowedFor, corsOf } from './cors-header-names.js';

const require = createRequire(import.meta.url);
const Koa2 = require('koa2') as typeof Koa3;
const express4 = require('express4') as typeof express;

const PARTNER = 'https://partner.example';
const OWN = 'https://example.com';
/** The application-wide policy: the partner and the publisher (credentials: AMP's default). */
const OUTER = { publishers: ['partner.example', 'example.com'], onDenied: 'omit' as const };
/** The stricter policy of /admin: the publisher only. */
const INNER = { publishers: ['example.com'], onDenied: 'omit' as const };
/** An /admin policy allowing the partner without credentials. */
const INNER_NO_CREDENTIALS = { ...OUTER, credentials: false };

type Options = Readonly<Record<string, unknown>>;
type Headers = Readonly<Record<string, string | undefined>>;

/** An upstream echoing the request's Origin with credentials (the proxied answer a handler hands on as it is). */
let upstream = '';
let echo: Server;
beforeAll(async () => {
  echo = createServer((req, res) => {
    const origin = req.headers.origin ?? '*';
    res.setHeader('access-control-allow-origin', origin);
    res.setHeader('access-control-allow-credentials', 'true');
    res.setHeader('access-control-expose-headers', 'X-Secret');
    res.setHeader('vary', 'Accept-Encoding');
    res.end('upstream secret');
  }).listen(0, '127.0.0.1');
  await new Promise((resolve) => echo.once('listening', resolve));
  upstream = `http://127.0.0.1:${(echo.address() as AddressInfo).port}/`;
});
afterAll(async () => {
  await new Promise((resolve) => echo.close(resolve));
});

/** The headers that grant a page access by themselves. */
const GRANTS = ['access-control-allow-origin', 'access-control-allow-credentials', 'amp-access-control-allow-source-origin', 'amp-email-allow-sender'];

/**
 * The handler's Responses (made afresh per request), each with CORS headers of its own, and those headers when they carry
 * no grant (`'grant'`: they do; a Response's own CORS headers stay only without a grant, where the deciding policy sets
 * none: core's response-bodies.ts, 3.).
 */
const RESPONSES: ReadonlyArray<readonly [string, (origin: string) => Response | Promise<Response>, 'grant' | Headers]> = [
  ['its own Access-Control-Allow-Origin', (origin) => new Response('secret', { headers: { 'access-control-allow-origin': origin } }), 'grant'],
  [
    'its own Allow-Origin and -Credentials',
    (origin) => new Response('secret', { headers: { 'access-control-allow-origin': origin, 'access-control-allow-credentials': 'true' } }),
    'grant',
  ],
  ['Access-Control-Allow-Origin: *', () => new Response('secret', { headers: { 'access-control-allow-origin': '*' } }), 'grant'],
  [
    'a grant and Expose-Headers, as a stream',
    (origin) =>
      new Response(new Blob(['secret']).stream(), {
        headers: { 'access-control-allow-origin': origin, 'access-control-allow-credentials': 'true', 'access-control-expose-headers': 'X-Secret' },
      }),
    'grant',
  ],
  [
    'only Expose-Headers of its own',
    () => new Response('secret', { headers: { 'access-control-expose-headers': 'X-Secret', 'x-secret': '1' } }),
    { 'access-control-expose-headers': 'X-Secret' },
  ],
  ["a proxied upstream's echo (fetch)", (origin) => fetch(upstream, { headers: { origin } }), 'grant'],
];

/**
 * The answer carries every CORS header of `decider` (the deciding policy's) with its value, each grant exactly as the
 * decider's (none when it sets none), and no other CORS header but one of the Response's own (`own`) where the decider sets none.
 */
function expectDecidedBy(answer: Answer, decider: Headers, own: 'grant' | Headers): void {
  const cors = corsOf(answer.headers);
  for (const name of GRANTS) expect([name, cors[name]]).toEqual([name, decider[name]]);
  for (const [name, value] of Object.entries(cors)) {
    const allowed = decider[name] ?? (own === 'grant' ? undefined : own[name]);
    expect([name, value]).toEqual([name, allowed]);
  }
  for (const [name, value] of Object.entries(decider)) expect([name, cors[name]]).toEqual([name, value]);
}

/** A Node request listener (a whole app taking over the request). */
type Listener = (req: IncomingMessage, res: ServerResponse) => void;

type Runner = (inner: Options) => (ctx: { req: IncomingMessage; res: ServerResponse }, next: () => Promise<unknown>) => Promise<unknown>;

/** Express's ampCors (in an Express 5 or 4 app) run on Koa's Node request, Koa's next middleware then (koa-connect style). */
const viaExpress =
  (make: typeof express): Runner =>
  (inner) => {
    const app = make();
    app.use(expressCors(inner as ExpressAmpCorsOptions));
    const handle = app as unknown as (req: IncomingMessage, res: ServerResponse, done: (error?: unknown) => void) => void;
    return (ctx, next) =>
      new Promise((resolve, reject) => handle(ctx.req, ctx.res, (error) => (error === undefined ? resolve(next()) : reject(error as Error))));
  };

/** Express's ampCors middleware alone on Koa's Node request. */
const viaExpressMiddleware: Runner = (inner) => {
  const middleware = expressCors(inner as ExpressAmpCorsOptions);
  return (ctx, next) =>
    new Promise((resolve, reject) =>
      middleware(ctx.req as never, ctx.res as never, (error?: unknown) => (error === undefined ? resolve(next()) : reject(error as Error))),
    );
};

const INNERS: ReadonlyArray<readonly [string, Runner]> = [
  ['an Express 5 app', viaExpress(express)],
  ['an Express 4 app', viaExpress(express4)],
  ["Express's ampCors middleware", viaExpressMiddleware],
];

const KOAS: ReadonlyArray<readonly [string, typeof Koa3]> = [
  ['Koa 3', Koa3],
  ['Koa 2', Koa2],
];

interface Answer {
  readonly status: number;
  readonly headers: Headers;
}

/**
 * Koa: ampCors(`outer`), the inner layer on /admin, a handler setting `ctx.body = respond(origin)`. `early`: the Response is
 * set before the inner layer runs (a default body set by an earlier middleware), the handler then sets nothing.
 */
async function ask(
  Koa: typeof Koa3,
  run: Runner,
  outer: Options,
  inner: Options,
  respond: (origin: string) => Response | Promise<Response>,
  {
    origin = PARTNER,
    path = '/admin/secret',
    method = 'GET',
    early = false,
  }: { origin?: string; path?: string; method?: 'GET' | 'HEAD'; early?: boolean } = {},
): Promise<Answer> {
  const app = new Koa();
  app.silent = true;
  app.use(koaCors(outer as KoaAmpCorsOptions) as never);
  if (early) app.use(async (ctx, next) => void ((ctx.body = await respond(ctx.get('Origin'))), await next()));
  const runInner = run(inner);
  app.use((ctx, next) => (ctx.path.startsWith('/admin') ? runInner(ctx, next) : next()));
  app.use(async (ctx) => {
    if (!early) ctx.body = await respond(ctx.get('Origin'));
  });
  const r = await (method === 'HEAD' ? request(app.callback()).head(path) : request(app.callback()).get(path)).set('Origin', origin);
  return { status: r.status, headers: r.headers as Headers };
}

/** Whether `Vary` names Origin. */
const variesOnOrigin = (headers: Headers) => (headers.vary ?? '').split(',').some((name) => name.trim().toLowerCase() === 'origin');

describe.each(KOAS)('%s: an ampCors allowing the partner with credentials on every path', (_koaName, Koa) => {
  describe.each(INNERS)('and %s on /admin: the inner decides whatever Response the handler gives', (_innerName, run) => {
    describe.each([false, true])('the Response set before the inner layer ran: %s', (early) => {
      it.each(RESPONSES)('the inner denies the partner, the handler answers %s: no grant, no header of the outer policy', async (_what, respond, own) => {
        const answer = await ask(Koa, run, OUTER, INNER, respond, { early });
        expect(answer.status).toBe(200);
        expectDecidedBy(answer, {}, own);
        expect(variesOnOrigin(answer.headers)).toBe(true);
      });

      it.each(RESPONSES)('the inner allows the partner without credentials, the handler answers %s: its headers only', async (_what, respond, own) => {
        const answer = await ask(Koa, run, OUTER, INNER_NO_CREDENTIALS, respond, { early });
        expect(answer.status).toBe(200);
        expectDecidedBy(answer, allowedFor(PARTNER, false), own);
        expect(variesOnOrigin(answer.headers)).toBe(true);
      });

      it.each(RESPONSES)('the inner allows the publisher, the handler answers %s: its headers only', async (_what, respond, own) => {
        const answer = await ask(Koa, run, OUTER, INNER, respond, { origin: OWN, early });
        expect(answer.status).toBe(200);
        expectDecidedBy(answer, allowedFor(OWN), own);
      });

      it.each(RESPONSES)(
        'the outer denies, the inner allows the publisher, the handler answers %s: no CORS header but the inner policy would set',
        async (_what, respond, own) => {
          const answer = await ask(Koa, run, { publishers: ['other.example'], onDenied: 'omit' }, INNER, respond, { origin: OWN, early });
          const inner: Headers = allowedFor(OWN);
          for (const [name, value] of Object.entries(corsOf(answer.headers)))
            expect([name, value]).toEqual([name, inner[name] ?? (own === 'grant' ? undefined : own[name])]);
        },
      );
    });

    it.each(RESPONSES)(
      'a HEAD from the partner the inner denies, the handler answers %s: no grant, no header of the outer policy',
      async (_what, respond, own) => {
        expectDecidedBy(await ask(Koa, run, OUTER, INNER, respond, { method: 'HEAD' }), {}, own);
      },
    );

    it.each(RESPONSES)('control, outside /admin (the outer alone decides), the handler answers %s: the outer policy only', async (_what, respond, own) => {
      const answer = await ask(Koa, run, OUTER, INNER, respond, { path: '/me' });
      expect(answer.status).toBe(200);
      expectDecidedBy(answer, allowedFor(PARTNER), own);
      expect(variesOnOrigin(answer.headers)).toBe(true);
    });
  });
});

/** Listeners of an /admin app in each framework, ampCors(`inner`) in it, a handler answering 'admin secret' itself. */
const LISTENERS: ReadonlyArray<readonly [string, (inner: Options) => Listener]> = [
  [
    'Hono (@hono/node-server)',
    (inner) => {
      const hono = new Hono();
      hono.use('*', honoCors(inner as HonoAmpCorsOptions));
      hono.all('*', (c) => c.text('admin secret'));
      return getRequestListener(hono.fetch) as Listener;
    },
  ],
  ['Fetch (@hono/node-server)', (inner) => getRequestListener(withAmpCors(() => new Response('admin secret'), inner as FetchAmpCorsOptions)) as Listener],
  [
    'Koa (callback)',
    (inner) => {
      const app = new Koa3();
      app.silent = true;
      app.use(koaCors(inner as KoaAmpCorsOptions));
      app.use((ctx) => void (ctx.body = 'admin secret'));
      return app.callback() as Listener;
    },
  ],
  [
    'Express 5 (app)',
    (inner) => {
      const app = express();
      app.use(expressCors(inner as ExpressAmpCorsOptions));
      app.use((_req, res) => void res.send('admin secret'));
      return app as unknown as Listener;
    },
  ],
];

describe.each(LISTENERS)(
  'Koa 3: an ampCors allowing the partner with credentials, a Response set as the body, then %s taking over on /admin',
  (_name, make) => {
    /** The listener's ampCors(`inner`) answers; `wait`: the Koa middleware waits until the listener has answered. */
    async function send(inner: Options, wait: boolean): Promise<Answer> {
      const listener = make(inner);
      const app = new Koa3();
      app.silent = true;
      app.use(koaCors(OUTER));
      app.use(async (ctx, next) => {
        ctx.body = new Response('default', { headers: { 'access-control-allow-origin': ctx.get('Origin'), 'access-control-allow-credentials': 'true' } });
        await next();
      });
      app.use(async (ctx) => {
        ctx.respond = false;
        const done = new Promise((resolve) => ctx.res.once('finish', resolve));
        void listener(ctx.req, ctx.res);
        if (wait) await done;
      });
      const r = await request(app.callback()).get('/admin/secret').set('Origin', PARTNER);
      return { status: r.status, headers: r.headers as Headers };
    }

    it.each([false, true])('the inner denies the partner (Koa waits for the listener: %s): no CORS header', async (wait) => {
      const answer = await send(INNER, wait);
      expect([answer.status, corsOf(answer.headers)]).toEqual([200, {}]);
    });

    it.each([false, true])('the inner allows the partner without credentials (Koa waits: %s): its headers only', async (wait) => {
      const answer = await send(INNER_NO_CREDENTIALS, wait);
      expect([answer.status, corsOf(answer.headers)]).toEqual([200, allowedFor(PARTNER, false)]);
    });
  },
);

describe.each(KOAS)('%s: the outer exposes a header the inner (Express) does not, both allowing the publisher', (_koaName, Koa) => {
  const outer = { ...OUTER, exposedHeaders: ['X-Secret'] };
  it.each(RESPONSES)("the handler answers %s: the inner policy's headers only (no X-Secret exposed)", async (_what, respond, own) => {
    const answer = await ask(Koa, viaExpress(express), outer, INNER, respond, { origin: OWN });
    expectDecidedBy(answer, allowedFor(OWN), own);
  });

  it('the handler throws: the error answer carries no CORS header the inner policy does not set with that value', async () => {
    const app = new Koa();
    app.silent = true;
    app.use(koaCors(outer) as never);
    const runInner = viaExpress(express)(INNER);
    app.use((ctx, next) => runInner(ctx, next));
    app.use(() => {
      throw Object.assign(new Error('secret failure'), { status: 500, expose: true });
    });
    const r = await request(app.callback()).get('/admin/secret').set('Origin', OWN);
    expect(r.status).toBe(500);
    const inner: Headers = allowedFor(OWN);
    for (const [name, value] of Object.entries(corsOf(r.headers as Headers))) expect([name, value]).toEqual([name, inner[name]]);
  });
});

describe("core's lastTakeBack: what an earlier Koa ampCors compares before and after its handler", () => {
  /** A header store whose removals are counted. */
  const store = () => ({
    removed: [] as string[],
    removeHeader(name: string) {
      this.removed.push(name);
    },
  });

  it('each removeEarlierCorsHeaders is a new record on its own target, holding the headers of the layer that made it', () => {
    const [a, b] = [store(), store()];
    const untouched = lastTakeBack(a);
    const pairs = [['access-control-allow-origin', OWN]] as const;
    removeEarlierCorsHeaders(a, pairs);
    const first = lastTakeBack(a);
    const removedFirst = [...a.removed];
    removeEarlierCorsHeaders(a, NO_CORS_HEADERS);
    const second = lastTakeBack(a);
    expect(untouched).toBeUndefined();
    expect([first?.headers, second?.headers]).toEqual([pairs, NO_CORS_HEADERS]);
    expect(second).not.toBe(first);
    expect(lastTakeBack(b)).toBeUndefined();
    expect(removedFirst).not.toContain('access-control-allow-origin');
    expect(removedFirst).toContain('access-control-allow-credentials');
    expect(a.removed.slice(removedFirst.length)).toContain('access-control-allow-origin');
  });
});
