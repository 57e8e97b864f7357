/**
 * @ampcors/fastify under Fastify 5 and 4: the plugin's own behaviour (hook
 * order, the OPTIONS route, encapsulation, errors, typing), the
 * configurations it refuses, and a differential against `@fastify/cors`
 * for the configurations both accept (what a browser concludes must match).
 */
import { createRequire } from 'node:module';
import fastifyCors from '@fastify/cors';
import { cacheOrigin, isAmpCorsError } from '@ampcors/core';
import { ampCors, type FastifyAmpCorsOptions, type Verdict } from '@ampcors/fastify';
import fastify5, { type FastifyInstance } from 'fastify';
import { describe, expect, it } from 'vitest';

const require = createRequire(import.meta.url);
const fastify4 = require('fastify4') as typeof fastify5;

const CACHE = cacheOrigin('example.com');
const EVIL = 'https://evil.example';

interface Probe {
  runs: number;
  hooks: number;
  verdicts: Array<Verdict | undefined>;
}

/** An API with the plugin in an `/api` context (GET /api/items, POST-only /api/subscribe) and a sibling `/public` context without it. */
async function build(create: typeof fastify5, options: FastifyAmpCorsOptions | undefined, probe: Probe): Promise<FastifyInstance> {
  const app = create({ logger: false });
  await app.register(
    async (api) => {
      await (options === undefined ? api.register(ampCors) : api.register(ampCors, options));
      // A later hook (an authentication check, for example): a denied request must not reach it.
      api.addHook('preHandler', async () => {
        probe.hooks += 1;
      });
      api.get('/items', async (request) => {
        probe.runs += 1;
        probe.verdicts.push(request.ampCors);
        return { items: [] };
      });
      api.post('/subscribe', async (request) => {
        probe.runs += 1;
        probe.verdicts.push(request.ampCors);
        return { ok: true };
      });
    },
    { prefix: '/api' },
  );
  await app.register(
    async (pub) => {
      pub.post('/form', async (request) => {
        probe.runs += 1;
        probe.verdicts.push(request.ampCors);
        return { ok: true };
      });
    },
    { prefix: '/public' },
  );
  await app.ready();
  return app;
}

const fresh = (): Probe => ({ runs: 0, hooks: 0, verdicts: [] });

async function refusal(create: typeof fastify5, options: unknown): Promise<unknown> {
  const app = create({ logger: false });
  try {
    await app.register(ampCors, options as FastifyAmpCorsOptions);
    await app.ready();
    return undefined;
  } catch (error) {
    return error;
  } finally {
    await app.close().catch(() => undefined);
  }
}

describe.each([
  ['fastify 5', fastify5],
  ['fastify 4', fastify4],
] as const)('@ampcors/fastify on %s', (_name, create) => {
  it('allows a publisher cache origin, with the verdict typed on request.ampCors', async () => {
    const probe = fresh();
    const app = await build(create, { publishers: ['example.com'] }, probe);
    const res = await app.inject({ method: 'GET', url: '/api/items', headers: { origin: CACHE } });
    expect(res.statusCode).toBe(200);
    expect(res.headers['access-control-allow-origin']).toBe(CACHE);
    expect(res.headers['access-control-allow-credentials']).toBe('true');
    const verdict: Verdict | undefined = probe.verdicts[0];
    expect(verdict?.reason).toBe('cache-origin');
  });

  it('attacker: a denied POST is stopped in onRequest (403): no later hook, no route, no CORS header', async () => {
    const probe = fresh();
    const app = await build(create, { publishers: ['example.com'] }, probe);
    const res = await app.inject({ method: 'POST', url: '/api/subscribe', headers: { origin: cacheOrigin('evil.com'), cookie: 'session=1' } });
    expect(res.statusCode).toBe(403);
    expect(res.body).toContain('unknown-publisher');
    expect(res.headers['access-control-allow-origin']).toBeUndefined();
    expect(res.headers['access-control-allow-credentials']).toBeUndefined();
    expect(probe).toEqual({ runs: 0, hooks: 0, verdicts: [] });
  });

  it('answers the preflight of a POST-only route (the OPTIONS * route), never listing AMP-Same-Origin', async () => {
    const probe = fresh();
    const app = await build(create, { publishers: ['example.com'] }, probe);
    const res = await app.inject({
      method: 'OPTIONS',
      url: '/api/subscribe',
      headers: { origin: CACHE, 'access-control-request-method': 'POST', 'access-control-request-headers': 'content-type, amp-same-origin' },
    });
    expect(res.statusCode).toBe(204);
    expect(res.headers['access-control-allow-origin']).toBe(CACHE);
    expect(res.headers['access-control-allow-headers']).toBe('content-type');
    expect(probe.runs + probe.hooks).toBe(0);
    const denied = await app.inject({ method: 'OPTIONS', url: '/api/subscribe', headers: { origin: EVIL, 'access-control-request-method': 'POST' } });
    expect(denied.statusCode).toBe(403);
    expect(denied.headers['access-control-allow-origin']).toBeUndefined();
  });

  it('preflightContinue: an allowed preflight of a POST-only route reaches the OPTIONS * route (200, headers kept); a denied one gets no header', async () => {
    const probe = fresh();
    const app = await build(create, { publishers: ['example.com'], preflightContinue: true, onDenied: 'omit' }, probe);
    const ok = await app.inject({ method: 'OPTIONS', url: '/api/subscribe', headers: { origin: CACHE, 'access-control-request-method': 'POST' } });
    expect(ok.statusCode).toBe(200);
    expect(ok.headers['access-control-allow-origin']).toBe(CACHE);
    const denied = await app.inject({ method: 'OPTIONS', url: '/api/subscribe', headers: { origin: EVIL, 'access-control-request-method': 'POST' } });
    expect(denied.headers['access-control-allow-origin']).toBeUndefined();
    expect(denied.headers['access-control-allow-credentials']).toBeUndefined();
    expect(probe.runs).toBe(0);
  });

  it('respects encapsulation: a sibling context is untouched (no headers, no verdict, no 403)', async () => {
    const probe = fresh();
    const app = await build(create, { publishers: ['example.com'] }, probe);
    const res = await app.inject({ method: 'POST', url: '/public/form', headers: { origin: EVIL } });
    expect(res.statusCode).toBe(200);
    expect(res.headers['access-control-allow-origin']).toBeUndefined();
    expect(res.headers.vary).toBeUndefined();
    expect(probe.verdicts).toEqual([undefined]);
    // The OPTIONS * route is the /api context's own.
    const preflight = await app.inject({ method: 'OPTIONS', url: '/public/form', headers: { origin: CACHE, 'access-control-request-method': 'POST' } });
    expect(preflight.statusCode).toBe(404);
    expect(preflight.headers['access-control-allow-origin']).toBeUndefined();
  });

  it.each([
    [
      'throwing verifier',
      {
        verifier: {
          verify: () => {
            throw new Error('verifier exploded');
          },
        },
      },
    ],
    ['rejecting verifier', { verifier: { verify: () => Promise.reject(new Error('store down')) } }],
    ['origin callback error', { origin: (_o: string | undefined, cb: (error: Error | null) => void) => cb(new Error('ouch')) }],
    [
      'throwing origin function',
      {
        origin: () => {
          throw new Error('ouch');
        },
      },
    ],
    ['rejecting origin function', { origin: () => Promise.reject(new Error('ouch')) }],
  ] as const)('a %s → 500 without CORS headers, Vary: Origin, the route not run', async (_case, options) => {
    const probe = fresh();
    const app = await build(create, options as FastifyAmpCorsOptions, probe);
    const res = await app.inject({ method: 'POST', url: '/api/subscribe', headers: { origin: CACHE } });
    expect(res.statusCode).toBe(500);
    expect(res.headers['access-control-allow-origin']).toBeUndefined();
    expect(res.headers['access-control-allow-credentials']).toBeUndefined();
    expect(String(res.headers.vary)).toMatch(/Origin/);
    expect(probe.runs + probe.hooks).toBe(0);
  });

  it('origin function (callback and Promise forms, `this` is Fastify): credentials off by default, as @fastify/cors', async () => {
    for (const origin of [
      function (this: unknown, value: string | undefined, cb: (error: Error | null, allow?: boolean) => void) {
        cb(null, this !== undefined && value === 'https://app.example');
      },
      async (value: string | undefined) => value === 'https://app.example',
    ]) {
      const probe = fresh();
      const app = await build(create, { origin }, probe);
      const ok = await app.inject({ method: 'GET', url: '/api/items', headers: { origin: 'https://app.example' } });
      expect(ok.headers['access-control-allow-origin']).toBe('https://app.example');
      expect(ok.headers['access-control-allow-credentials']).toBeUndefined();
      const no = await app.inject({ method: 'POST', url: '/api/subscribe', headers: { origin: EVIL } });
      // @fastify/cors's behaviour: the route runs, the browser gets no CORS header.
      expect(no.statusCode).toBe(200);
      expect(no.headers['access-control-allow-origin']).toBeUndefined();
    }
  });

  it('attacker: an async origin function that resolves undefined has answered "no": the request neither hangs nor is allowed', async () => {
    const late: Array<() => void> = [];
    for (const [origin, credentials] of [
      // Returns nothing for a foreign origin (an `if` without `else`).
      [
        async (value: string | undefined) => {
          if (value === 'https://app.example') return true;
        },
        true,
      ],
      // Resolves before it calls back: @fastify/cors reads the Promise first too; the late `true` must not allow.
      [
        async (_value: string | undefined, cb: (error: Error | null, allow?: boolean) => void) => {
          late.push(() => cb(null, true));
        },
        false,
      ],
    ] as const) {
      const probe = fresh();
      const app = await build(create, { origin, credentials }, probe);
      const res = await app.inject({ method: 'GET', url: '/api/items', headers: { origin: EVIL, cookie: 'session=1' } });
      for (const answer of late.splice(0)) answer();
      expect(res.statusCode).toBe(200);
      expect(res.headers['access-control-allow-origin']).toBeUndefined();
      expect(res.headers['access-control-allow-credentials']).toBeUndefined();
      const preflight = await app.inject({ method: 'OPTIONS', url: '/api/subscribe', headers: { origin: EVIL, 'access-control-request-method': 'POST' } });
      for (const answer of late.splice(0)) answer();
      expect(preflight.headers['access-control-allow-origin']).toBeUndefined();
      expect(probe.runs).toBe(1);
    }
  });

  it('no options: the literal *, no credentials; strict preflight (400) and preflight: false (not answered)', async () => {
    const probe = fresh();
    const app = await build(create, undefined, probe);
    const res = await app.inject({ method: 'GET', url: '/api/items', headers: { origin: EVIL, cookie: 'a=1' } });
    expect(res.headers['access-control-allow-origin']).toBe('*');
    expect(res.headers['access-control-allow-credentials']).toBeUndefined();
    const strict = await app.inject({ method: 'OPTIONS', url: '/api/items', headers: { origin: EVIL } });
    expect([strict.statusCode, strict.body]).toEqual([400, 'Invalid Preflight Request']);
    const loose = await build(create, { origin: ['https://app.example'], preflight: false }, fresh());
    const passed = await loose.inject({
      method: 'OPTIONS',
      url: '/api/items',
      headers: { origin: 'https://app.example', 'access-control-request-method': 'PUT' },
    });
    expect(passed.statusCode).toBe(404);
    expect(passed.headers['access-control-allow-methods']).toBeUndefined();
  });

  it("attacker: a route's config.cors — false sends no CORS header there; options are merged and checked like the plugin's (an unsafe one is a 500, never an allow)", async () => {
    const app = create({ logger: false });
    await app.register(ampCors, { origin: ['https://app.example'], credentials: true });
    let runs = 0;
    const handler = async () => {
      runs += 1;
      return 'ok';
    };
    app.get('/open', handler);
    app.get('/closed', { config: { cors: false } }, handler);
    app.get('/other', { config: { cors: { origin: ['https://other.example'] } } }, handler);
    app.get('/unsafe', { config: { cors: { origin: true } } }, handler);
    app.get('/typo', { config: { cors: { orign: ['https://app.example'] } } }, handler);
    await app.ready();
    const get = (url: string, origin: string) => app.inject({ method: 'GET', url, headers: { origin, cookie: 'session=1' } });
    expect((await get('/open', 'https://app.example')).headers['access-control-allow-origin']).toBe('https://app.example');
    const closed = await get('/closed', 'https://app.example');
    expect([closed.statusCode, closed.headers['access-control-allow-origin'], closed.headers['access-control-allow-credentials']]).toEqual([
      200,
      undefined,
      undefined,
    ]);
    expect((await get('/other', 'https://other.example')).headers['access-control-allow-origin']).toBe('https://other.example');
    expect((await get('/other', 'https://app.example')).headers['access-control-allow-origin']).toBeUndefined();
    runs = 0;
    for (const url of ['/unsafe', '/typo']) {
      const res = await get(url, EVIL);
      expect([res.statusCode, res.headers['access-control-allow-origin'], res.headers['access-control-allow-credentials']]).toEqual([
        500,
        undefined,
        undefined,
      ]);
    }
    expect(runs).toBe(0);
  });

  it("@fastify/cors's literal * for origin: '*' (no Vary: Origin, never credentials), cacheControl on preflights, and its preflight rules", async () => {
    const app = create({ logger: false });
    await app.register(ampCors, { origin: '*', cacheControl: 321, strictPreflight: false });
    app.get('/r', async () => 'ok');
    await app.ready();
    const get = await app.inject({ method: 'GET', url: '/r' });
    expect([get.headers['access-control-allow-origin'], get.headers.vary, get.headers['cache-control']]).toEqual(['*', undefined, undefined]);
    const preflight = await app.inject({ method: 'OPTIONS', url: '/r', headers: { origin: EVIL, 'access-control-request-method': 'GET' } });
    expect([preflight.statusCode, preflight.headers['access-control-allow-origin'], preflight.headers['cache-control']]).toEqual([204, '*', 'max-age=321']);
    // Without strictPreflight, an OPTIONS without Origin is answered as a preflight too.
    const bare = await app.inject({ method: 'OPTIONS', url: '/r' });
    expect([bare.statusCode, bare.headers['access-control-allow-methods']]).toEqual([204, 'GET,HEAD,POST']);
    // origin: false is CORS off: every request passed on untouched (no Vary either), an OPTIONS left to the routes (404), not answered 400.
    const off = await build(create, { origin: false }, fresh());
    expect((await off.inject({ method: 'OPTIONS', url: '/api/items' })).statusCode).toBe(404);
    const untouched = await off.inject({ method: 'GET', url: '/api/items', headers: { origin: EVIL } });
    expect([untouched.statusCode, untouched.headers['access-control-allow-origin'], untouched.headers.vary]).toEqual([200, undefined, undefined]);
    for (const cacheControl of ['max-age=1\r\nSet-Cookie: a=1', true, -1]) {
      expect(isAmpCorsError(await refusal(create, { origin: ['https://app.example'], cacheControl }))).toBe(true);
    }
  });

  it('hideOptionsRoute: the OPTIONS * route is hidden by default and shown on request', async () => {
    for (const [hideOptionsRoute, hidden] of [
      [undefined, true],
      [false, false],
    ] as const) {
      const app = create({ logger: false });
      const seen: unknown[] = [];
      app.addHook('onRoute', (route) => {
        if (route.method === 'OPTIONS') seen.push((route.schema as { hide?: boolean } | undefined)?.hide);
      });
      await app.register(ampCors, { origin: ['https://app.example'], ...(hideOptionsRoute !== undefined && { hideOptionsRoute }) });
      await app.ready();
      expect(seen).toEqual([hidden]);
    }
  });

  it.each([
    ['reflect-all with credentials', { origin: true, credentials: true }, 'unsafe-configuration'],
    ["'*' with credentials", { origin: '*', credentials: true }, 'unsafe-configuration'],
    ['a catch-all RegExp with credentials', { origin: /.*/, credentials: true }, 'unsafe-configuration'],
    [
      'an origin function reflecting every origin, with credentials',
      { origin: (o: string | undefined, cb: (e: null, a: string | undefined) => void) => cb(null, o), credentials: true },
      'unsafe-configuration',
    ],
    ["allowedHeaders '*'", { origin: ['https://app.example'], allowedHeaders: '*' }, 'unsafe-configuration'],
    ['a hook after onRequest', { publishers: ['example.com'], hook: 'preHandler' }, 'invalid-option'],
    ['a misspelled key', { orgin: ['https://app.example'] }, 'invalid-option'],
    ['publishers: undefined', { publishers: undefined }, 'invalid-option'],
    ['options naming no origin to trust', { methods: ['GET'] }, 'invalid-option'],
    // Fastify calls a function given as options with the instance: @fastify/cors's delegator arrives as a function, never as "no options" (the literal *).
    [
      "@fastify/cors's options delegator",
      () => (_request: unknown, cb: (e: null, o: object) => void) => cb(null, { origin: true, credentials: true }),
      'invalid-option',
    ],
  ] as const)('refuses %s at registration', async (_case, options, code) => {
    const error = await refusal(create, options);
    expect(isAmpCorsError(error), String(error)).toBe(true);
    expect((error as { code: string }).code).toBe(code);
  });

  it('names the closest key of a typo', async () => {
    expect(String(await refusal(create, { orgin: ['https://app.example'] }))).toMatch(/did you mean `origin`/);
  });
});

/** What a browser concludes from a response to `origin`. */
function browserView(res: { statusCode: number; headers: Record<string, unknown> }, origin: string) {
  const acao = res.headers['access-control-allow-origin'];
  const credentials = res.headers['access-control-allow-credentials'] === 'true';
  const readable = acao === origin || (acao === '*' && !credentials);
  return { status: res.statusCode, readable, credentials: readable && credentials };
}

describe('differential against @fastify/cors (configurations both accept)', () => {
  const configs: ReadonlyArray<Record<string, unknown>> = [
    { origin: ['https://app.example', /^https:\/\/[a-z]+\.b\.example$/] },
    { origin: ['https://app.example'], credentials: true, methods: ['GET', 'PUT'], maxAge: 600 },
    { origin: (o: string | undefined, cb: (e: null, a: boolean) => void) => cb(null, o === 'https://app.example') },
    { origin: false },
  ];
  const origins = ['https://app.example', 'https://x.b.example', EVIL, 'https://app.example.evil.example', 'null'];
  it.each(configs.map((config, index) => [index, config] as const))('config #%d: same browser view for GET and preflight', async (_index, config) => {
    const theirs = fastify5({ logger: false });
    await theirs.register(fastifyCors, config as never);
    theirs.get('/r', async () => 'ok');
    const ours = fastify5({ logger: false });
    await ours.register(ampCors, config as FastifyAmpCorsOptions);
    ours.get('/r', async () => 'ok');
    for (const origin of origins) {
      for (const headers of [{ origin }, { origin, 'access-control-request-method': 'PUT' }]) {
        const method = 'access-control-request-method' in headers ? 'OPTIONS' : 'GET';
        const [a, b] = await Promise.all([theirs.inject({ method, url: '/r', headers }), ours.inject({ method, url: '/r', headers })]);
        const viewA = browserView(a, origin);
        const viewB = browserView(b, origin);
        // Same conclusion; a preflight @fastify/cors leaves to 404 (origin: false) ampcors ends with no CORS header either.
        expect({ readable: viewB.readable, credentials: viewB.credentials }, `${origin} ${method}`).toEqual({
          readable: viewA.readable,
          credentials: viewA.credentials,
        });
        if (method === 'GET') expect(b.statusCode).toBe(a.statusCode);
      }
    }
  });
});
