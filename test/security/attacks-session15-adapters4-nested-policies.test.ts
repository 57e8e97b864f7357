/**
 * Attacker's review, session 15 (helper-63): two ampCors policies on one
 * request — an application-wide one and a stricter one on a sub-path
 * (an Express router, Koa middleware mounted on a path, Hono
 * `app.use('/admin/*')`, a Fastify plugin registered under a prefix, a Fetch
 * `withAmpCors` inside another). The partner origin is allowed by the outer
 * policy only; the inner one denied it (`req.ampCors.allowed` was false), yet
 * the answer carried the outer policy's `Access-Control-Allow-Origin` and
 * `-Credentials` (the 403 of `onDenied: 'reject'` too): the partner's page
 * read /admin with the user's cookies. `cors` does the same (two `cors()`
 * on one request), so nothing a user would expect warned them.
 *
 * Fixed: the innermost decision wins (core's nested-policies.ts). An inner
 * ampCors removes every CORS header an earlier one set that its own plan
 * does not set (Express, Koa, Fastify: they write before the handler);
 * Hono's and Fetch's outer layers, which write after it, leave an answer an
 * inner ampCors decided alone; Koa's outer layer leaves an error's headers
 * to the inner one. `Vary` stays merged. A preflight is decided by the first
 * ampCors that meets it, unless that one passes it on (`preflightContinue`).
 */
import { type Verdict } from '@ampcors/core';
import { ampCors as expressCors, type ExpressAmpCorsOptions } from '@ampcors/express';
import { ampCors as fastifyCors, type FastifyAmpCorsOptions } from '@ampcors/fastify';
import { ampCorsOf, type FetchAmpCorsOptions, withAmpCors } from '@ampcors/fetch';
import { type AmpCorsVariables, ampCors as honoCors, type HonoAmpCorsOptions } from '@ampcors/hono';
import { type AmpCorsState, ampCors as koaCors, type KoaAmpCorsOptions } from '@ampcors/koa';
import express from 'express';
import Fastify, { type FastifyInstance } from 'fastify';
import { Hono } from 'hono';
import Koa from 'koa';
import request from 'supertest';
import { describe, expect, it } from 'vitest';
import { allowedFor, corsOf } from './cors-header-names.js';

const PARTNER = 'https://partner.example';
const OWN = 'https://example.com';
/** The application-wide policy: the partner and the publisher. */
const OUTER = { publishers: ['partner.example', 'example.com'] };
/** The stricter policy of /admin: the publisher only. */
const INNER = { publishers: ['example.com'] };

type Options = ExpressAmpCorsOptions & KoaAmpCorsOptions & HonoAmpCorsOptions & FastifyAmpCorsOptions & FetchAmpCorsOptions;

interface Answer {
  readonly status: number;
  readonly headers: Readonly<Record<string, string | undefined>>;
  /** What the handler saw: its verdict's `allowed`, or `null` when it had none; `undefined` when it did not run. */
  readonly seen: boolean | null | undefined;
}

interface Sent {
  readonly method?: string;
  readonly path?: string;
  readonly headers: Readonly<Record<string, string>>;
}

/** What the /admin handler does: answer with the verdict it sees, or throw after reading it. */
interface Handler {
  readonly throws?: boolean;
}

/** An app with `layers[0]` on every path and each later layer on /admin (in order: the last is the innermost), and a /public route. */
type Build = (layers: readonly Options[], handler?: Handler) => Promise<(sent: Sent) => Promise<Answer>>;

/** The verdict's `allowed` as a JSON body: null without a verdict. */
const body = (verdict: Verdict | undefined) => ({ seen: verdict === undefined ? null : verdict.allowed });
/** The `seen` of a response body, if the handler wrote it. */
function seenOf(text: string): boolean | null | undefined {
  try {
    const parsed = JSON.parse(text) as { seen?: boolean | null };
    return parsed.seen;
  } catch {
    return undefined;
  }
}
const lowerCased = (headers: Iterable<[string, string]>) => Object.fromEntries([...headers].map(([name, value]) => [name.toLowerCase(), value]));

const expressApp: Build = async (layers, handler = {}) => {
  const app = express();
  app.use(expressCors(layers[0]));
  const admin = express.Router();
  for (const layer of layers.slice(1)) admin.use(expressCors(layer));
  admin.all('/secret', (req, res) => {
    if (handler.throws) throw new Error('handler failed');
    res.json(body(req.ampCors));
  });
  app.use('/admin', admin);
  app.all('/public', (req, res) => res.json(body(req.ampCors)));
  return async ({ method = 'GET', path = '/admin/secret', headers }) => {
    const r = await request(app)[method.toLowerCase() as 'get'](path).set(headers);
    return { status: r.status, headers: r.headers as Record<string, string>, seen: seenOf(r.text) };
  };
};

const koaApp: Build = async (layers, handler = {}) => {
  const app = new Koa<AmpCorsState>();
  app.silent = true;
  app.use(koaCors(layers[0]));
  for (const layer of layers.slice(1)) {
    const inner = koaCors(layer);
    app.use(async (ctx, next) => (ctx.path.startsWith('/admin') ? inner(ctx, next) : next()));
  }
  app.use((ctx) => {
    if (handler.throws && ctx.path.startsWith('/admin')) throw new Error('handler failed');
    ctx.body = body(ctx.state.ampCors);
  });
  return async ({ method = 'GET', path = '/admin/secret', headers }) => {
    const r = await request(app.callback())[method.toLowerCase() as 'get'](path).set(headers);
    return { status: r.status, headers: r.headers as Record<string, string>, seen: seenOf(r.text) };
  };
};

const honoApp: Build = async (layers, handler = {}) => {
  const app = new Hono<{ Variables: AmpCorsVariables }>();
  app.use('*', honoCors(layers[0]));
  for (const layer of layers.slice(1)) app.use('/admin/*', honoCors(layer));
  app.all('/admin/secret', (c) => {
    if (handler.throws) throw new Error('handler failed');
    return c.json(body(c.get('ampCors')));
  });
  app.all('/public', (c) => c.json(body(c.get('ampCors'))));
  return async ({ method = 'GET', path = '/admin/secret', headers }) => {
    const r = await app.request(path, { method, headers });
    return { status: r.status, headers: lowerCased(r.headers), seen: seenOf(await r.text()) };
  };
};

const fastifyApp: Build = async (layers, handler = {}) => {
  const app = Fastify();
  await app.register(fastifyCors, layers[0] as Options);
  app.all('/public', async (req) => body(req.ampCors));
  /** Each later layer in a child context of the one before, under /admin: the route in the innermost. */
  const nest = async (context: FastifyInstance, rest: readonly Options[]): Promise<void> => {
    await context.register(fastifyCors, rest[0] as Options);
    if (rest.length > 1) await context.register(async (child) => nest(child, rest.slice(1)));
    else
      context.all('/secret', async (req) => {
        if (handler.throws) throw new Error('handler failed');
        return body(req.ampCors);
      });
  };
  await app.register(async (child) => nest(child, layers.slice(1)), { prefix: '/admin' });
  await app.ready();
  return async ({ method = 'GET', path = '/admin/secret', headers }) => {
    const r = await app.inject({ method: method as 'GET', url: path, headers });
    return { status: r.statusCode, headers: r.headers as Record<string, string>, seen: seenOf(r.body) };
  };
};

const fetchApp: Build = async (layers, handler = {}) => {
  let app = withAmpCors(
    (req: Request) => {
      if (handler.throws) throw new Error('handler failed');
      return Response.json(body(ampCorsOf(req)?.verdict));
    },
    layers[layers.length - 1] as Options,
  );
  for (const layer of layers.slice(0, -1).reverse()) {
    const inner = app;
    app = withAmpCors((req: Request) => (new URL(req.url).pathname.startsWith('/admin') ? inner(req) : Response.json(body(ampCorsOf(req)?.verdict))), layer);
  }
  return async ({ method = 'GET', path = '/admin/secret', headers }) => {
    const r = await app(new Request(`https://api.example.com${path}`, { method, headers }));
    return { status: r.status, headers: lowerCased(r.headers), seen: seenOf(await r.text()) };
  };
};

const ADAPTERS: ReadonlyArray<readonly [string, Build]> = [
  ['Express', expressApp],
  ['Koa', koaApp],
  ['Hono', honoApp],
  ['Fastify', fastifyApp],
  ['Fetch', fetchApp],
];

/** `Vary`'s names in lower case. */
const varyOf = (answer: Answer) => (answer.headers['vary'] ?? '').split(',').map((name) => name.trim().toLowerCase());

describe.each(ADAPTERS)('%s: two ampCors on one request, the innermost decides', (_name, build) => {
  describe.each(['omit', 'reject'] as const)("an inner policy denying the partner (onDenied '%s') under an outer one allowing it", (onDenied) => {
    // The outer one says all it can: exposed headers, the legacy source-origin header.
    const outer = { ...OUTER, exposedHeaders: ['X-Outer'], legacySourceOriginHeader: true };

    it('answers without any CORS header of the outer policy, Vary kept; the handler (omit) sees the inner verdict', async () => {
      const send = await build([outer, { ...INNER, onDenied }]);
      const answer = await send({ path: `/admin/secret?__amp_source_origin=${encodeURIComponent(PARTNER)}`, headers: { origin: PARTNER } });
      expect(corsOf(answer.headers)).toEqual({});
      expect(varyOf(answer)).toContain('origin');
      if (onDenied === 'reject') expect({ status: answer.status, seen: answer.seen }).toEqual({ status: 403, seen: undefined });
      else expect({ status: answer.status, seen: answer.seen }).toEqual({ status: 200, seen: false });
    });

    it('the outer policy still answers the partner outside /admin (control), and the inner one its own publisher on /admin', async () => {
      const send = await build([outer, { ...INNER, onDenied }]);
      const outside = await send({ path: '/public', headers: { origin: PARTNER } });
      expect([outside.status, outside.headers['access-control-allow-origin'], outside.headers['access-control-allow-credentials']]).toEqual([
        200,
        PARTNER,
        'true',
      ]);
      expect(outside.headers['access-control-expose-headers']).toContain('X-Outer');
      const own = await send({ headers: { origin: OWN } });
      expect({ status: own.status, seen: own.seen, cors: corsOf(own.headers) }).toEqual({
        status: 200,
        seen: true,
        cors: allowedFor(OWN),
      });
    });

    it('a three-layer chain (allow, deny, allow): the innermost allow stands, with only its own headers', async () => {
      const send = await build([outer, { ...INNER, onDenied: 'omit' }, { ...OUTER, credentials: false }]);
      const answer = await send({ headers: { origin: PARTNER } });
      expect({ status: answer.status, seen: answer.seen, cors: corsOf(answer.headers) }).toEqual({
        status: 200,
        seen: true,
        cors: allowedFor(PARTNER, false),
      });
    });
  });

  it('the reverse: an outer policy passing the partner on denied (omit) and an inner one allowing it: the inner allow stands', async () => {
    const send = await build([{ ...INNER, onDenied: 'omit' }, OUTER]);
    const answer = await send({ headers: { origin: PARTNER } });
    expect({ status: answer.status, seen: answer.seen, cors: corsOf(answer.headers) }).toEqual({
      status: 200,
      seen: true,
      cors: allowedFor(PARTNER),
    });
  });

  it('the reverse with an outer policy that rejects: the outer stops the request first (403, no CORS header, handler not run)', async () => {
    const send = await build([INNER, OUTER]);
    const answer = await send({ headers: { origin: PARTNER } });
    expect({ status: answer.status, seen: answer.seen, cors: corsOf(answer.headers) }).toEqual({ status: 403, seen: undefined, cors: {} });
  });

  it.each([
    ['outer with credentials, inner without', true, false],
    ['outer without credentials, inner with', false, true],
  ])('credentials switched between layers (%s): the inner policy says whether credentials go', async (_what, outerCredentials, innerCredentials) => {
    const send = await build([
      { ...OUTER, credentials: outerCredentials },
      { ...OUTER, credentials: innerCredentials },
    ]);
    const answer = await send({ headers: { origin: PARTNER } });
    expect(answer.status).toBe(200);
    expect(corsOf(answer.headers)).toEqual(allowedFor(PARTNER, innerCredentials));
  });

  it('one verifier shared by both layers (the same verdict object) with credentials only outside: no credentials on /admin', async () => {
    // Telling the layers apart by their verdict would fail here: both policies answer the very same frozen verdict.
    const { createVerifier } = await import('@ampcors/core');
    const verifier = createVerifier(OUTER);
    const send = await build([{ verifier }, { verifier, credentials: false }]);
    const answer = await send({ headers: { origin: PARTNER } });
    expect({ status: answer.status, cors: corsOf(answer.headers) }).toEqual({ status: 200, cors: allowedFor(PARTNER, false) });
  });

  describe('preflights', () => {
    const preflight = {
      method: 'OPTIONS',
      headers: {
        origin: PARTNER,
        'access-control-request-method': 'PUT',
        'access-control-request-headers': 'x-custom',
        'access-control-request-private-network': 'true',
      },
    };
    // The outer policy passes preflights on with everything a preflight answer can say.
    const outer = { ...OUTER, preflightContinue: true, methods: ['GET', 'PUT'], maxAge: 600, privateNetworkAccess: true, allowedHeaders: ['X-Custom'] };

    it.each(['omit', 'reject'] as const)(
      "passed on to an inner policy denying the partner (onDenied '%s'): no allow-methods, -headers, -max-age, -private-network",
      async (onDenied) => {
        const send = await build([outer, { ...INNER, onDenied }]);
        const answer = await send(preflight);
        expect(corsOf(answer.headers)).toEqual({});
        expect(varyOf(answer)).toContain('origin');
      },
    );

    it('passed on to an inner policy allowing the partner with its own methods and no max-age: only the inner answer', async () => {
      const send = await build([outer, { ...OUTER, methods: ['GET'], credentials: false }]);
      const answer = await send(preflight);
      expect(answer.status).toBeLessThan(300);
      const cors = corsOf(answer.headers);
      expect(cors['access-control-allow-origin']).toBe(PARTNER);
      expect(cors['access-control-allow-methods']).toBe('GET');
      for (const name of ['access-control-allow-credentials', 'access-control-max-age', 'access-control-allow-private-network'])
        expect(cors[name]).toBeUndefined();
    });

    it('not passed on: the first ampCors that meets a preflight answers it (a rejecting inner policy still stops the request itself)', async () => {
      const send = await build([OUTER, INNER]);
      const answer = await send(preflight);
      expect(answer.headers['access-control-allow-origin']).toBe(PARTNER);
      const actual = await send({ method: 'PUT', headers: { origin: PARTNER } });
      expect({ status: actual.status, seen: actual.seen, cors: corsOf(actual.headers) }).toEqual({ status: 403, seen: undefined, cors: {} });
    });
  });

  it('an inner policy whose verifier throws: a 500 without the outer policy allow', async () => {
    const verifier = {
      verify(): Verdict {
        throw new Error('verifier down');
      },
    };
    const send = await build([OUTER, { verifier } as Options]);
    const answer = await send({ headers: { origin: PARTNER } });
    expect({ status: answer.status, cors: corsOf(answer.headers) }).toEqual({ status: 500, cors: {} });
    expect(varyOf(answer)).toContain('origin');
  });

  it.each([
    ['denies (omit)', { ...INNER, onDenied: 'omit' as const }, {}],
    ['allows without credentials', { ...OUTER, credentials: false }, { 'access-control-allow-origin': PARTNER }],
  ])('a handler throwing after an inner policy that %s: the error answer carries only the inner headers', async (_what, inner, expected) => {
    const send = await build([OUTER, inner], { throws: true });
    const answer = await send({ headers: { origin: PARTNER } });
    expect(answer.status).toBe(500);
    // Koa carries the CORS headers of the innermost policy into the error (keepHeadersOnError); the others answer the error without them or with them.
    const cors = corsOf(answer.headers);
    expect(cors['access-control-allow-credentials']).toBeUndefined();
    if (Object.keys(expected).length === 0) expect(cors).toEqual({});
    else expect([undefined, PARTNER]).toContain(cors['access-control-allow-origin']);
  });
});

describe("Koa's error headers with nested policies", () => {
  it('an error middleware between the layers that answers itself after the inner verifier threw: no outer allow on that answer', async () => {
    const app = new Koa();
    app.silent = true;
    app.use(koaCors(OUTER));
    app.use(async (ctx, next) => {
      try {
        await next();
      } catch {
        ctx.status = 502;
        ctx.body = 'upstream';
      }
    });
    const inner = koaCors({
      verifier: {
        verify(): Verdict {
          throw new Error('verifier down');
        },
      },
    });
    app.use(async (ctx, next) => (ctx.path.startsWith('/admin') ? inner(ctx, next) : next()));
    app.use((ctx) => void (ctx.body = 'secret'));
    const r = await request(app.callback()).get('/admin/secret').set('Origin', PARTNER);
    expect({ status: r.status, acao: r.headers['access-control-allow-origin'], acac: r.headers['access-control-allow-credentials'] }).toEqual({
      status: 502,
      acao: undefined,
      acac: undefined,
    });
  });

  it('an error thrown after an inner policy denying the partner: the outer policy does not add its allow to the error headers', async () => {
    const app = new Koa();
    app.silent = true;
    app.use(koaCors(OUTER));
    const inner = koaCors({ ...INNER, onDenied: 'omit' });
    app.use(async (ctx, next) => (ctx.path.startsWith('/admin') ? inner(ctx, next) : next()));
    app.use(() => {
      throw Object.assign(new Error('gone'), { status: 410, expose: true });
    });
    const admin = await request(app.callback()).get('/admin/secret').set('Origin', PARTNER);
    expect({ status: admin.status, acao: admin.headers['access-control-allow-origin'], acac: admin.headers['access-control-allow-credentials'] }).toEqual({
      status: 410,
      acao: undefined,
      acac: undefined,
    });
    expect(admin.headers['vary']).toMatch(/origin/i);
    // Control: outside /admin, the outer policy's headers reach the error answer (keepHeadersOnError).
    const outside = await request(app.callback()).get('/public').set('Origin', PARTNER);
    expect([outside.status, outside.headers['access-control-allow-origin'], outside.headers['access-control-allow-credentials']]).toEqual([
      410,
      PARTNER,
      'true',
    ]);
  });
});

describe('Fastify: two ampCors in contexts of one path (no prefix between them)', () => {
  it('both load (one OPTIONS * route serves both), the inner one decides, and a preflight the inner one passes on is answered', async () => {
    const app = Fastify();
    await app.register(fastifyCors, OUTER);
    await app.register(async (child) => {
      await child.register(fastifyCors, { ...INNER, onDenied: 'omit', preflightContinue: true });
      child.get('/admin/secret', async (req) => body(req.ampCors));
    });
    await app.ready();
    const denied = await app.inject({ url: '/admin/secret', headers: { origin: PARTNER } });
    expect({ status: denied.statusCode, acao: denied.headers['access-control-allow-origin'], seen: seenOf(denied.body) }).toEqual({
      status: 200,
      acao: undefined,
      seen: false,
    });
    // The outer policy answers preflights first (it does not pass them on); the inner one's own publisher:
    const preflight = await app.inject({ method: 'OPTIONS', url: '/admin/secret', headers: { origin: OWN, 'access-control-request-method': 'GET' } });
    expect([preflight.statusCode, preflight.headers['access-control-allow-origin']]).toEqual([204, OWN]);
    await app.close();
  });

  it("a preflight both pass on to the inner context's own OPTIONS route: the inner headers only", async () => {
    const app = Fastify();
    await app.register(fastifyCors, { ...OUTER, preflightContinue: true, maxAge: 600 });
    await app.register(async (child) => {
      await child.register(fastifyCors, { ...OUTER, preflightContinue: true, credentials: false });
      child.get('/admin/secret', async () => 'secret');
      // (A path without a route of the inner context goes to the outer context's OPTIONS * route: the inner one never sees it.)
      child.options('/admin/secret', async (_req, reply) => reply.send());
    });
    await app.ready();
    const r = await app.inject({ method: 'OPTIONS', url: '/admin/secret', headers: { origin: PARTNER, 'access-control-request-method': 'GET' } });
    expect(r.statusCode).toBe(200);
    expect([r.headers['access-control-allow-origin'], r.headers['access-control-allow-credentials'], r.headers['access-control-max-age']]).toEqual([
      PARTNER,
      undefined,
      undefined,
    ]);
    await app.close();
  });
});

describe("the cors package's option shape (Express drop-in): the example that leaves cors itself open", () => {
  it('cors({ origin: [partner, own], credentials: true }) app-wide and cors({ origin: [own], credentials: true }) on /admin: no allow for the partner on /admin', async () => {
    const app = express();
    app.use(expressCors({ origin: [PARTNER, OWN], credentials: true }));
    const admin = express.Router();
    admin.use(expressCors({ origin: [OWN], credentials: true }));
    admin.get('/secret', (_req, res) => res.json({ secret: 1 }));
    app.use('/admin', admin);
    const r = await request(app).get('/admin/secret').set('Origin', PARTNER);
    expect([r.headers['access-control-allow-origin'], r.headers['access-control-allow-credentials']]).toEqual([undefined, undefined]);
    const own = await request(app).get('/admin/secret').set('Origin', OWN);
    expect([own.headers['access-control-allow-origin'], own.headers['access-control-allow-credentials']]).toEqual([OWN, 'true']);
  });
});
