/**
 * @ampcors/koa as a drop-in for `@koa/cors`: the same options and requests
 * are sent to an app using `@koa/cors` and one using `ampCors`, and what a
 * browser would conclude from each is compared (differential). Plus the
 * configurations ampcors refuses and Koa's error path.
 */
import koaCors from '@koa/cors';
import { isAmpCorsError } from '@ampcors/core';
import { ampCors, type AmpCorsState, type KoaAmpCorsOptions } from '@ampcors/koa';
import Koa from 'koa';
import request from 'supertest';
import { describe, expect, it } from 'vitest';

interface Seen {
  status: number;
  ran: boolean;
  headers: Record<string, string | undefined>;
}

async function hit(middleware: Koa.Middleware, method: 'GET' | 'OPTIONS', headers: Record<string, string>, fail = false): Promise<Seen> {
  let ran = false;
  const app = new Koa<AmpCorsState>();
  app.silent = true;
  app.use(middleware);
  app.use((ctx) => {
    ran = true;
    if (fail) ctx.throw(502, 'upstream failed');
    ctx.status = 200;
    ctx.body = 'handler';
  });
  const pending = method === 'GET' ? request(app.callback()).get('/r') : request(app.callback()).options('/r');
  for (const [name, value] of Object.entries(headers)) pending.set(name, value);
  const res = await pending;
  return { status: res.status, ran, headers: res.headers as Record<string, string> };
}

const list = (value: string | undefined) =>
  (value ?? '')
    .split(',')
    .map((item) => item.trim().toLowerCase())
    .filter(Boolean);

function browserView(seen: Seen, origin: string | undefined, preflight: boolean) {
  const acao = seen.headers['access-control-allow-origin'];
  const credentials = seen.headers['access-control-allow-credentials'] === 'true';
  const readable = origin !== undefined && (acao === origin || (acao === '*' && !credentials));
  return {
    status: seen.status,
    ran: seen.ran,
    readable,
    credentials: readable && credentials,
    varyOrigin: list(seen.headers.vary).includes('origin'),
    coop: seen.headers['cross-origin-opener-policy'],
    ...(readable && preflight
      ? {
          methods: list(seen.headers['access-control-allow-methods']),
          allowHeaders: list(seen.headers['access-control-allow-headers']),
          maxAge: seen.headers['access-control-max-age'],
          privateNetwork: seen.headers['access-control-allow-private-network'],
        }
      : {}),
  };
}

const A = 'https://a.com';
const REQUESTS: ReadonlyArray<{ name: string; method: 'GET' | 'OPTIONS'; origin?: string; extra?: Record<string, string> }> = [
  { name: 'GET from a.com', method: 'GET', origin: A },
  { name: 'GET from evil.com', method: 'GET', origin: 'https://evil.com' },
  { name: 'GET without Origin', method: 'GET' },
  {
    name: 'preflight from a.com',
    method: 'OPTIONS',
    origin: A,
    extra: { 'Access-Control-Request-Method': 'PUT', 'Access-Control-Request-Headers': 'X-A', 'Access-Control-Request-Private-Network': 'true' },
  },
  { name: 'preflight from evil.com', method: 'OPTIONS', origin: 'https://evil.com', extra: { 'Access-Control-Request-Method': 'PUT' } },
  { name: 'OPTIONS without Access-Control-Request-Method', method: 'OPTIONS', origin: A },
];

const NO_OPTIONS: koaCors.Options = {};
const OPTION_SETS: ReadonlyArray<{ name: string; options: koaCors.Options; nextOnDeniedPreflight?: boolean }> = [
  { name: 'defaults (any origin, no credentials)', options: NO_OPTIONS },
  { name: 'exact origin', options: { origin: A } },
  {
    name: 'exact origin with every header option',
    options: {
      origin: A,
      credentials: true,
      allowMethods: ['GET', 'PUT'],
      allowHeaders: 'X-A,X-B',
      exposeHeaders: ['X-Total'],
      maxAge: 60,
      privateNetworkAccess: true,
      secureContext: true,
    },
  },
  {
    name: 'origin function with credentials',
    options: { origin: (ctx) => (ctx.get('Origin') === A ? A : ''), credentials: true },
    nextOnDeniedPreflight: true,
  },
  { name: "async origin function answering '*'", options: { origin: async () => '*' } },
  { name: "origin function answering '*' for a.com only", options: { origin: (ctx) => (ctx.get('Origin') === A ? '*' : '') }, nextOnDeniedPreflight: true },
  { name: 'credentials function', options: { origin: A, credentials: () => true } },
  { name: "origin '*' (the literal *, as @koa/cors's default)", options: { origin: '*' } },
  {
    name: "origin '*' with @koa/cors's empty values (allowMethods null, allowHeaders [], maxAge 0)",
    options: { origin: '*', allowMethods: null as unknown as string, allowHeaders: [], maxAge: 0, exposeHeaders: ['X-Total', 'X-Page'] },
  },
  {
    name: "origin '*' with list options as strings, maxAge as a string",
    options: { origin: '*', allowMethods: 'GET,POST', allowHeaders: 'X-A', maxAge: '600' },
  },
  { name: "origin '*', credentials false, secureContext", options: { origin: '*', credentials: false, secureContext: true } },
];

describe('drop-in for @koa/cors: same browser-visible behaviour (differential)', () => {
  for (const set of OPTION_SETS) {
    it(set.name, async () => {
      const theirs = koaCors(set.options);
      const ours = ampCors(set.options as KoaAmpCorsOptions) as unknown as Koa.Middleware;
      for (const req of REQUESTS) {
        const preflight = req.method === 'OPTIONS' && req.extra !== undefined;
        // Documented difference: a denied preflight never reaches the application (@koa/cors calls next() when its origin function says no).
        if (set.nextOnDeniedPreflight && preflight && req.origin !== A) continue;
        const headers = { ...(req.origin ? { Origin: req.origin } : {}), ...req.extra };
        const [a, b] = await Promise.all([hit(theirs, req.method, headers), hit(ours, req.method, headers)]);
        const want = browserView(a, req.origin, preflight);
        const got = browserView(b, req.origin, preflight);
        // @koa/cors sends COOP/COEP even on responses a browser will refuse; ampcors only on answered ones.
        if (req.method === 'OPTIONS' && !preflight) {
          // Documented difference: an OPTIONS request that is no preflight is an actual request for ampcors (CORS headers when allowed); @koa/cors sends none.
          expect([got.status, got.ran], req.name).toEqual([want.status, want.ran]);
          continue;
        }
        // The literal * and @koa/cors's Vary policy (Vary: Origin on every response) included.
        expect(got, req.name).toEqual({ ...want, coop: want.readable || !req.origin ? want.coop : got.coop });
        // Documented difference: an origin function is not asked about a request without Origin (no browser reads its answer).
        if (req.origin !== undefined || typeof set.options.origin !== 'function')
          expect(b.headers['access-control-allow-origin'] === '*', req.name).toBe(a.headers['access-control-allow-origin'] === '*');
        if (want.readable && !preflight) {
          const exposed = list(b.headers['access-control-expose-headers']);
          expect(exposed).toEqual(expect.arrayContaining(list(a.headers['access-control-expose-headers'])));
          expect(exposed).toContain('amp-redirect-to');
        }
      }
    });
  }
});

describe('configurations ampcors refuses', () => {
  const code = (options: KoaAmpCorsOptions) => {
    try {
      ampCors(options);
    } catch (error) {
      return isAmpCorsError(error) ? error.code : 'other';
    }
    return 'accepted';
  };
  it("refuses '*' with credentials, which @koa/cors turns into reflecting every origin", async () => {
    // Names no origin to trust (issue #15), and @koa/cors would reflect every Origin with credentials: refused as unsafe.
    expect(code({ credentials: true })).toBe('unsafe-configuration');
    expect(code({ credentials: false })).toBe('invalid-option');
    expect(code({ origin: '*', credentials: true })).toBe('unsafe-configuration');
    expect(code({ origin: '*', credentials: () => false })).toBe('unsafe-configuration');
    expect(code({ origin: 'https://a.com/' })).toBe('invalid-origin');
    expect(code({ origin: A, maxAge: 'later' })).toBe('invalid-option');
    // What @koa/cors does with the same configuration: any site can read credentialed responses.
    const theirs = await hit(koaCors({ credentials: true }), 'GET', { Origin: 'https://evil.com' });
    expect([theirs.headers['access-control-allow-origin'], theirs.headers['access-control-allow-credentials']]).toEqual(['https://evil.com', 'true']);
  });
  it("refuses, with credentials, an origin function that reflects every origin (the README's 4.0 snippet included), as it refuses '*'", async () => {
    const reflectors: Array<KoaAmpCorsOptions['origin']> = [
      () => '*',
      (ctx) => (ctx as unknown as Koa.Context).get('Origin'),
      (ctx) => (ctx as unknown as Koa.Context).get('Origin') || '*',
    ];
    for (const origin of reflectors) {
      expect(code({ origin, credentials: true })).toBe('unsafe-configuration');
      expect(code({ origin, credentials: () => false })).toBe('unsafe-configuration');
      expect(code({ origin })).toBe('accepted');
      // What @koa/cors does with the same configuration.
      const theirs = await hit(koaCors({ origin: origin as koaCors.Options['origin'], credentials: true }), 'GET', { Origin: 'https://evil.com' });
      expect([theirs.headers['access-control-allow-origin'], theirs.headers['access-control-allow-credentials']]).toEqual(['https://evil.com', 'true']);
    }
  });
  it('asks a function about canaries with a stand-in context that a typical function can read', () => {
    const seen: string[] = [];
    const origin = (ctx: Koa.Context) => {
      seen.push(`${ctx.method} ${ctx.path} ${ctx.get('Origin')} ${ctx.request.header.origin}`);
      return ctx.get('Origin') === A ? A : '';
    };
    expect(code({ origin: origin as KoaAmpCorsOptions['origin'], credentials: true })).toBe('accepted');
    expect(seen.length).toBeGreaterThan(0);
    for (const line of seen) expect(line).toMatch(/^GET \/ (https?:\/\/\S+) \1$/);
  });
  it('a function that throws on, or never answers, a canary does not hold construction', async () => {
    const silent = (ctx: Koa.Context) => (ctx.get('Origin') === A ? A : new Promise<string>(() => undefined));
    const throwing = (ctx: Koa.Context) => {
      if (ctx.get('Origin') !== A) throw new Error('unknown origin');
      return A;
    };
    for (const origin of [silent, throwing]) {
      const middleware = ampCors({ origin: origin as KoaAmpCorsOptions['origin'], credentials: true }) as unknown as Koa.Middleware;
      expect(typeof middleware).toBe('function');
      // A throw is "not allowed": its listed origin reads with credentials. Silence is unknown, and unknown never
      // yields credentials: the request fails once the questions' 2 s bound has passed (attacker's review, session 15).
      const seen = await hit(middleware, 'GET', { Origin: A });
      const expected = origin === silent ? [500, undefined, undefined] : [200, A, 'true'];
      expect([seen.status, seen.headers['access-control-allow-origin'], seen.headers['access-control-allow-credentials']]).toEqual(expected);
    }
  });
  it("an origin function answering '*' with credentials for a listed origin reflects that origin only, as @koa/cors does", async () => {
    const options = { origin: (ctx: Koa.Context) => (ctx.get('Origin') === A ? '*' : ''), credentials: true };
    const ours = ampCors(options as KoaAmpCorsOptions) as unknown as Koa.Middleware;
    const listed = await hit(ours, 'GET', { Origin: A });
    expect([listed.status, listed.headers['access-control-allow-origin'], listed.headers['access-control-allow-credentials']]).toEqual([200, A, 'true']);
    const evil = await hit(ours, 'GET', { Origin: 'https://evil.com' });
    expect([evil.status, evil.headers['access-control-allow-origin'], evil.headers['access-control-allow-credentials']]).toEqual([200, undefined, undefined]);
    const none = await hit(ours, 'GET', {});
    expect([none.status, none.ran]).toEqual([200, true]);
  });
});

describe('Koa specifics', () => {
  const publisher = ampCors({ publishers: ['example.com'] }) as unknown as Koa.Middleware;
  const CACHE = 'https://example-com.cdn.ampproject.org';
  it('keeps CORS headers and Vary on errors thrown downstream (keepHeadersOnError)', async () => {
    const seen = await hit(publisher, 'GET', { Origin: CACHE }, true);
    expect([seen.status, seen.headers['access-control-allow-origin'], seen.headers.vary]).toEqual([502, CACHE, 'Origin']);
    // keepHeadersOnError: false drops them all, Vary included, as @koa/cors does: Koa's error response is the same for every Origin.
    const dropped = await hit(ampCors({ publishers: ['example.com'], keepHeadersOnError: false }) as unknown as Koa.Middleware, 'GET', { Origin: CACHE }, true);
    expect([dropped.status, dropped.headers['access-control-allow-origin'], dropped.headers.vary]).toEqual([502, undefined, undefined]);
  });
  it('answers errors thrown downstream as @koa/cors does, with and without keepHeadersOnError (differential)', async () => {
    for (const options of [
      { origin: '*' },
      { origin: A },
      { origin: '*', keepHeadersOnError: false },
      { origin: A, keepHeadersOnError: false, secureContext: true },
    ]) {
      for (const origin of [A, 'https://evil.com']) {
        const theirs = await hit(koaCors(options), 'GET', { Origin: origin }, true);
        const ours = await hit(ampCors(options as KoaAmpCorsOptions) as unknown as Koa.Middleware, 'GET', { Origin: origin }, true);
        const view = (seen: Seen) => [seen.status, browserView(seen, origin, false).readable, seen.headers.vary, seen.headers['cross-origin-opener-policy']];
        expect(view(ours), `${JSON.stringify(options)} from ${origin}`).toEqual(view(theirs));
      }
    }
  });
  it('rethrows a throwing verifier with err.headers carrying Vary', async () => {
    const failing = ampCors({
      verifier: {
        verify: () => {
          throw new Error('verifier down');
        },
      },
    }) as unknown as Koa.Middleware;
    const seen = await hit(failing, 'GET', { Origin: CACHE });
    expect([seen.status, seen.ran, seen.headers.vary]).toEqual([500, false, 'Origin']);
  });
  it('exposes the verdict on ctx.state', async () => {
    let reason: string | undefined;
    const app = new Koa<AmpCorsState>();
    app.use(ampCors({ publishers: ['example.com'] }));
    app.use((ctx) => {
      reason = ctx.state.ampCors?.reason;
      ctx.body = 'ok';
    });
    await request(app.callback()).get('/').set('Origin', CACHE);
    expect(reason).toBe('cache-origin');
  });
});
