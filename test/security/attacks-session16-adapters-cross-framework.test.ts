/**
 * Attacker's review, session 16 (helper-74): two ampCors policies on one
 * Node request, in different frameworks, or in one Koa app whose
 * `ctx.state` is replaced between them. An application-wide policy allows
 * the partner; a stricter one on `/admin` (`publishers: ['example.com']`)
 * denies it. Session 15's "the innermost decides" read the earlier layer's
 * verdict from the framework's own store (Express's `req`, Koa's
 * `ctx.state`, Fastify's `request`, a note on a Fetch `Response`), which the
 * other framework never sees: `GET /admin/secret` from the partner was
 * answered 200 with the outer policy's `Access-Control-Allow-Origin` and
 * `-Credentials` (the 403 of `'reject'` too), through Express mounting a
 * Koa app's `callback()`, an `@hono/node-server` listener of a Hono app or
 * of `withAmpCors`, Koa handing `ctx.req`/`ctx.res` to an Express app, and
 * Koa with `ctx.state = { user }` between its two ampCors.
 *
 * Fixed (core's nested-policies.ts, 4.): what any layer writes on a Node
 * response is in its one header store, so the response tells that an
 * earlier layer granted. An inner ampCors finding there a CORS grant its
 * plan does not make removes every CORS header its plan does not set
 * (Express, Koa); Fastify, and Hono and Fetch under `@hono/node-server`,
 * whose answers are merged over that store when sent, remove every CORS
 * header found there. The same goes for a grant left by another CORS
 * middleware (`cors`, `@koa/cors`) before ampCors.
 */
import type { Verdict } from '@ampcors/core';
import { ampCors as expressCors, type ExpressAmpCorsOptions } from '@ampcors/express';
import { ampCors as fastifyCors, type FastifyAmpCorsOptions } from '@ampcors/fastify';
import { withAmpCors } from '@ampcors/fetch';
import { type AmpCorsVariables, ampCors as honoCors, type HonoAmpCorsOptions } from '@ampcors/hono';
import { type AmpCorsState, ampCors as koaCors, type KoaAmpCorsOptions } from '@ampcors/koa';
import fastifyPeerCors from '@fastify/cors';
import koaPeerCors from '@koa/cors';
import peerCors from 'cors';
import express from 'express';
import Fastify from 'fastify';
import { Hono } from 'hono';
import Koa from 'koa';
import { createRequire } from 'node:module';
import request from 'supertest';
import { describe, expect, it } from 'vitest';
import { allowedFor, corsOf } from './cors-header-names.js';
import { expressMounting, innerApps, koaMounting, type Listener, type Options } from './cross-framework-apps.js';

const express4 = createRequire(import.meta.url)('express4') as typeof express;

const PARTNER = 'https://partner.example';
const OWN = 'https://example.com';
/** The application-wide policy: the partner and the publisher (credentials: AMP's default). */
const OUTER = { publishers: ['partner.example', 'example.com'], onDenied: 'omit' as const };
/** The stricter policy of /admin: the publisher only. */
const INNER = { publishers: ['example.com'], onDenied: 'omit' as const };

interface Answer {
  readonly status: number;
  readonly headers: Readonly<Record<string, string | undefined>>;
  /** What the inner handler saw: its verdict's `allowed`, `null` without one; `undefined` when it did not answer. */
  readonly seen: boolean | null | undefined;
}

const body = (verdict: Verdict | undefined) => ({ seen: verdict === undefined ? null : verdict.allowed });
function seenOf(text: string): boolean | null | undefined {
  try {
    return (JSON.parse(text) as { seen?: boolean | null }).seen;
  } catch {
    return undefined;
  }
}
/** A verifier that throws: the inner ampCors fails. */
const failing = {
  verify() {
    throw new Error('verifier down');
  },
};

const INNERS = innerApps(body);

/** The outer apps: ampCors (or a peer) with `outer` on every path, the inner listener on /admin. */
type Outer = (outer: Options, inner: Listener, peer?: 'peer') => (origin: string) => Promise<Answer>;

const viaExpress: Outer = (outer, inner, peer) => {
  const app = expressMounting(peer === undefined ? expressCors(outer as ExpressAmpCorsOptions) : peerCors(outer as peerCors.CorsOptions), inner);
  return async (origin) => {
    const r = await request(app).get('/admin/secret').set('Origin', origin);
    return { status: r.status, headers: r.headers as Record<string, string>, seen: seenOf(r.text) };
  };
};

const viaKoa: Outer = (outer, inner, peer) => {
  const app = koaMounting(peer === undefined ? koaCors(outer as KoaAmpCorsOptions) : koaPeerCors(outer as koaPeerCors.Options), inner);
  return async (origin) => {
    const r = await request(app.callback()).get('/admin/secret').set('Origin', origin);
    return { status: r.status, headers: r.headers as Record<string, string>, seen: seenOf(r.text) };
  };
};

const OUTERS: ReadonlyArray<readonly [string, Outer]> = [
  ['Express', viaExpress],
  ['Koa (ctx.respond = false)', viaKoa],
];

describe.each(OUTERS)('an ampCors in %s on every path', (_outerName, via) => {
  describe.each(INNERS)('and one in %s on /admin: the inner decides', (_innerName, make) => {
    it.each(['omit', 'reject'] as const)("the inner denies the partner (onDenied '%s'): no CORS header of the outer policy", async (onDenied) => {
      const answer = await via(OUTER, await make({ ...INNER, onDenied }))(PARTNER);
      expect(corsOf(answer.headers)).toEqual({});
      if (onDenied === 'omit') expect([answer.status, answer.seen]).toEqual([200, false]);
      else expect([answer.status, answer.seen]).toEqual([403, undefined]);
    });

    it('the inner allows the publisher: exactly its own headers, each once', async () => {
      const answer = await via(OUTER, await make(INNER))(OWN);
      expect([answer.status, answer.seen, corsOf(answer.headers)]).toEqual([200, true, allowedFor(OWN)]);
    });

    it('the inner allows the partner without credentials under an outer with credentials: no Access-Control-Allow-Credentials', async () => {
      const answer = await via(OUTER, await make({ ...OUTER, credentials: false }))(PARTNER);
      expect([answer.status, answer.seen, corsOf(answer.headers)]).toEqual([200, true, allowedFor(PARTNER, false)]);
    });

    it('the inner allows what the outer denied: the inner headers', async () => {
      const answer = await via({ publishers: ['other.example'], onDenied: 'omit' }, await make(INNER))(OWN);
      expect([answer.status, answer.seen, corsOf(answer.headers)]).toEqual([200, true, allowedFor(OWN)]);
    });

    it('the inner fails (its verifier throws): no CORS header, the handler not run', async () => {
      const answer = await via(OUTER, await make({ verifier: failing }))(PARTNER);
      expect(corsOf(answer.headers)).toEqual({});
      expect(answer.status).toBeGreaterThanOrEqual(500);
      expect(answer.seen).toBeUndefined();
    });

    it('a peer CORS middleware outside (`cors`, `@koa/cors`) allowing every origin with credentials, the inner denying: no CORS header', async () => {
      const answer = await via({ origin: (...args: unknown[]) => peerAllowAll(args), credentials: true }, await make(INNER), 'peer')(PARTNER);
      expect(corsOf(answer.headers)).toEqual({});
      expect([answer.status, answer.seen]).toEqual([200, false]);
    });
  });
});

/**
 * A peer's origin option echoing every origin: `cors` calls it `(origin, callback)`, `@koa/cors` `(ctx)` and takes
 * the returned value.
 */
function peerAllowAll(args: unknown[]): unknown {
  const [first, callback] = args;
  if (typeof callback === 'function') return (callback as (error: null, allow: boolean) => void)(null, true);
  return (first as { get(name: string): string }).get('Origin');
}

describe('a peer CORS middleware outside denying, with credentials (it still sends Access-Control-Allow-Credentials)', () => {
  it.each(INNERS)('Express `cors` then an ampCors in %s allowing the partner without credentials: no Access-Control-Allow-Credentials', async (_name, make) => {
    const peerOnly = express();
    peerOnly.use(peerCors({ origin: [OWN], credentials: true }));
    peerOnly.use((_req, res) => void res.send('x'));
    // The premise: `cors` sends credentials with no Access-Control-Allow-Origin for an origin it denies.
    const alone = await request(peerOnly).get('/').set('Origin', PARTNER);
    expect([alone.headers['access-control-allow-origin'], alone.headers['access-control-allow-credentials']]).toEqual([undefined, 'true']);
    const answer = await viaExpress({ origin: [OWN], credentials: true }, await make({ ...OUTER, credentials: false }), 'peer')(PARTNER);
    expect([answer.status, answer.seen, corsOf(answer.headers)]).toEqual([200, true, allowedFor(PARTNER, false)]);
  });
});

describe('one Koa app, ctx.state replaced between its two ampCors', () => {
  /** ampCors(outer), a middleware replacing ctx.state (a session loader), ampCors(inner), a handler; `throws`: it throws. */
  const app = (outer: Options, inner: Options, throws = false) => {
    const koa = new Koa<AmpCorsState>();
    koa.silent = true;
    koa.use(koaCors(outer as KoaAmpCorsOptions));
    koa.use(async (ctx, next) => {
      ctx.state = { user: 'someone' } as AmpCorsState;
      await next();
    });
    koa.use(koaCors(inner as KoaAmpCorsOptions));
    koa.use((ctx) => {
      if (throws) throw Object.assign(new Error('handler failed'), { status: 500, expose: false });
      ctx.body = body(ctx.state.ampCors);
    });
    return async (origin: string): Promise<Answer> => {
      const r = await request(koa.callback()).get('/admin/secret').set('Origin', origin);
      return { status: r.status, headers: r.headers as Record<string, string>, seen: seenOf(r.text) };
    };
  };

  it.each(['omit', 'reject'] as const)("the inner denies the partner (onDenied '%s'): no CORS header", async (onDenied) => {
    const answer = await app(OUTER, { ...INNER, onDenied })(PARTNER);
    expect(corsOf(answer.headers)).toEqual({});
    expect(answer.status).toBe(onDenied === 'omit' ? 200 : 403);
  });

  it('the inner denies and the handler throws: the outer does not put its allow on the error answer', async () => {
    const answer = await app(OUTER, INNER, true)(PARTNER);
    expect([answer.status, corsOf(answer.headers)]).toEqual([500, {}]);
  });

  it('the inner allows without credentials: no Access-Control-Allow-Credentials', async () => {
    const answer = await app(OUTER, { ...OUTER, credentials: false })(PARTNER);
    expect([answer.status, answer.seen, corsOf(answer.headers)]).toEqual([200, true, allowedFor(PARTNER, false)]);
  });

  it('`@koa/cors` outside allowing every origin with credentials, the inner ampCors denying: no CORS header', async () => {
    const koa = new Koa<AmpCorsState>();
    koa.use(koaPeerCors({ origin: (ctx) => ctx.get('Origin'), credentials: true }));
    koa.use(koaCors(INNER));
    koa.use((ctx) => void (ctx.body = body(ctx.state.ampCors)));
    const r = await request(koa.callback()).get('/admin/secret').set('Origin', PARTNER);
    expect([r.status, corsOf(r.headers as Record<string, string>)]).toEqual([200, {}]);
  });
});

describe('a Koa ampCors, then an Express ampCors run as Koa middleware (koa-connect style), then a handler that throws', () => {
  /** ampCors(OUTER) in Koa, Express's ampCors(`inner`) on the same Node request, a handler answering or throwing (exposed). */
  async function send(inner: Options, throws: boolean): Promise<Answer> {
    const app = new Koa<AmpCorsState>();
    app.silent = true;
    app.use(koaCors(OUTER));
    const middleware = expressCors(inner as ExpressAmpCorsOptions);
    app.use(
      (ctx, next) =>
        new Promise((resolve, reject) => middleware(ctx.req, ctx.res, (error?: unknown) => (error === undefined ? resolve(next()) : reject(error as Error)))),
    );
    app.use((ctx) => {
      if (throws) throw Object.assign(new Error('secret failure'), { status: 500, expose: true });
      ctx.body = 'secret';
    });
    const r = await request(app.callback()).get('/admin/secret').set('Origin', PARTNER);
    return { status: r.status, headers: r.headers as Record<string, string>, seen: undefined };
  }

  it.each([false, true])('the inner denies the partner (the handler throws: %s): no CORS header, not even on the error answer', async (throws) => {
    const answer = await send(INNER, throws);
    expect([answer.status, corsOf(answer.headers)]).toEqual([throws ? 500 : 200, {}]);
  });

  it('the inner allows without credentials and the handler throws: no Access-Control-Allow-Credentials on the error answer', async () => {
    const answer = await send({ ...OUTER, credentials: false }, true);
    expect(answer.status).toBe(500);
    expect(answer.headers['access-control-allow-credentials']).toBeUndefined();
  });
});

describe('one Fastify app: an earlier grant on the reply that no ampCors verdict shows', () => {
  /** `outer` (an ampCors, or `@fastify/cors`) on the app, an ampCors with `inner` in a child context on /admin; `reset`: a hook clears `request.ampCors` between them. */
  async function app(outer: 'peer' | Options, inner: Options, reset = false) {
    const fastify = Fastify();
    if (outer === 'peer') await fastify.register(fastifyPeerCors, { origin: true, credentials: true });
    else await fastify.register(fastifyCors, outer as FastifyAmpCorsOptions);
    await fastify.register(
      async (child) => {
        if (reset) child.addHook('onRequest', async (request) => void (request.ampCors = undefined));
        await child.register(fastifyCors, inner as FastifyAmpCorsOptions);
        child.get('/secret', async (request) => body(request.ampCors));
      },
      { prefix: '/admin' },
    );
    await fastify.ready();
    return async (origin: string): Promise<Answer> => {
      const r = await fastify.inject({ method: 'GET', url: '/admin/secret', headers: { origin } });
      return { status: r.statusCode, headers: r.headers as Record<string, string>, seen: seenOf(r.body) };
    };
  }

  it.each(['omit', 'reject'] as const)(
    "`@fastify/cors` allowing every origin with credentials, the inner ampCors denying (onDenied '%s'): no CORS header",
    async (onDenied) => {
      const answer = await (await app('peer', { ...INNER, onDenied }))(PARTNER);
      expect([answer.status, corsOf(answer.headers)]).toEqual([onDenied === 'omit' ? 200 : 403, {}]);
    },
  );

  it('request.ampCors reset between a parent ampCors and a child one denying: no CORS header', async () => {
    const answer = await (await app(OUTER, INNER, true))(PARTNER);
    expect([answer.status, answer.seen, corsOf(answer.headers)]).toEqual([200, false, {}]);
  });

  it('request.ampCors reset, the child allowing without credentials: no Access-Control-Allow-Credentials', async () => {
    const answer = await (await app(OUTER, { ...OUTER, credentials: false }, true))(PARTNER);
    expect([answer.status, answer.seen, corsOf(answer.headers)]).toEqual([200, true, allowedFor(PARTNER, false)]);
  });
});

describe("one Hono app, the variable 'ampCors' cleared between its two ampCors (the written-Response record decides: the more restrictive)", () => {
  /** ampCors(OUTER) on every path, a middleware clearing `c.get('ampCors')`, ampCors(`inner`) on /admin. */
  async function send(inner: Options): Promise<Answer> {
    const app = new Hono<{ Variables: AmpCorsVariables }>();
    app.use('*', honoCors(OUTER));
    app.use('*', async (c, next) => {
      c.set('ampCors', undefined as never);
      await next();
    });
    app.use('/admin/*', honoCors(inner as HonoAmpCorsOptions));
    app.get('/admin/secret', (c) => c.json(body(c.get('ampCors'))));
    const r = await app.request('/admin/secret', { headers: { origin: PARTNER } });
    return { status: r.status, headers: Object.fromEntries(r.headers), seen: seenOf(await r.text()) };
  }

  it.each(['omit', 'reject'] as const)("the inner denies (onDenied '%s'): no CORS header", async (onDenied) => {
    const answer = await send({ ...INNER, onDenied });
    expect([answer.status, corsOf(answer.headers)]).toEqual([onDenied === 'omit' ? 200 : 403, {}]);
  });

  it('the inner allows without credentials: no Access-Control-Allow-Credentials', async () => {
    const answer = await send({ ...OUTER, credentials: false });
    expect([answer.status, answer.seen, corsOf(answer.headers)]).toEqual([200, true, allowedFor(PARTNER, false)]);
  });
});

describe('controls: layers whose outer grant never reaches the Node response', () => {
  it('Express 5 outside, an Express 4 sub-app inside (both ampCors): the inner denial stands', async () => {
    const inner = express4();
    inner.use(expressCors(INNER));
    inner.use((req, res) => void res.json(body(req.ampCors)));
    const answer = await viaExpress(OUTER, inner as unknown as Listener)(PARTNER);
    expect([answer.status, answer.seen, corsOf(answer.headers)]).toEqual([200, false, {}]);
  });

  it('Fastify outside, an Express app inside through reply.hijack(): the inner denial stands', async () => {
    const inner = express();
    inner.use(expressCors(INNER));
    inner.use((req, res) => void res.json(body(req.ampCors)));
    const app = Fastify();
    await app.register(fastifyCors, OUTER);
    app.get('/admin/*', (req, reply) => {
      reply.hijack();
      inner(req.raw as never, reply.raw as never);
    });
    await app.ready();
    const r = await request(app.server).get('/admin/secret').set('Origin', PARTNER);
    expect([r.status, seenOf(r.text), corsOf(r.headers as Record<string, string>)]).toEqual([200, false, {}]);
    await app.close();
  });

  it("an object passed as the Fetch handler's second argument that is not a Node response is left alone", async () => {
    // A Worker's env whose binding answers any property (an RPC stub): never called.
    const calls: string[] = [];
    const stub = new Proxy(function () {}, {
      get: (_target, name) => (name === 'then' ? undefined : (...args: unknown[]) => void calls.push(`${String(name)}(${args.join()})`)),
    });
    const handler = withAmpCors((_req: Request, _env: unknown) => new Response('ok'), INNER);
    const r = await handler(new Request('https://api.example.com/', { headers: { origin: OWN } }), { outgoing: stub });
    expect([r.status, r.headers.get('access-control-allow-origin'), calls]).toEqual([200, OWN, []]);
  });
});
