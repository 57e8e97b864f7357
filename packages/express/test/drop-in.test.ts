/**
 * @ampcors/express as a drop-in for the `cors` package: the same options and
 * requests are sent to an app using `cors` and one using `ampCors`, and what
 * a browser would conclude from each is compared (differential). Plus the
 * configurations ampcors refuses, and the Express error path.
 */
import { createVerifier, isAmpCorsError } from '@ampcors/core';
import { ampCors, type ExpressAmpCorsOptions, type OriginCallback } from '@ampcors/express';
import cors from 'cors';
import express from 'express';
import request from 'supertest';
import { describe, expect, it } from 'vitest';

type Middleware = express.RequestHandler;

interface Seen {
  status: number;
  ran: boolean;
  headers: Record<string, string | undefined>;
}

async function hit(middleware: Middleware, method: 'GET' | 'OPTIONS', headers: Record<string, string>): Promise<Seen> {
  let ran = false;
  const app = express();
  app.use(middleware);
  app.all('/r', (_req, res) => {
    ran = true;
    res.status(200).send('handler');
  });
  const pending = method === 'GET' ? request(app).get('/r') : request(app).options('/r');
  for (const [name, value] of Object.entries(headers)) pending.set(name, value);
  const res = await pending;
  return { status: res.status, ran, headers: res.headers as Record<string, string> };
}

const list = (value: string | undefined) =>
  (value ?? '')
    .split(',')
    .map((item) => item.trim().toLowerCase())
    .filter(Boolean);

/** What a browser concludes from a response to a request from `origin`. */
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
    ...(readable && preflight
      ? {
          methods: list(seen.headers['access-control-allow-methods']),
          allowHeaders: list(seen.headers['access-control-allow-headers']),
          maxAge: seen.headers['access-control-max-age'],
        }
      : {}),
  };
}

const A = 'https://a.com';
const REQUESTS: ReadonlyArray<{ name: string; method: 'GET' | 'OPTIONS'; origin?: string; extra?: Record<string, string> }> = [
  { name: 'GET from a.com', method: 'GET', origin: A },
  { name: 'GET from x.a.com', method: 'GET', origin: 'https://x.a.com' },
  { name: 'GET from evil.com', method: 'GET', origin: 'https://evil.com' },
  { name: 'GET without Origin', method: 'GET' },
  {
    name: 'preflight from a.com',
    method: 'OPTIONS',
    origin: A,
    extra: { 'Access-Control-Request-Method': 'PUT', 'Access-Control-Request-Headers': 'X-A, Content-Type' },
  },
  { name: 'preflight from evil.com', method: 'OPTIONS', origin: 'https://evil.com', extra: { 'Access-Control-Request-Method': 'PUT' } },
  // cors answers every OPTIONS as a preflight, with or without Access-Control-Request-Method or Origin.
  { name: 'OPTIONS without Access-Control-Request-Method from a.com', method: 'OPTIONS', origin: A },
  { name: 'OPTIONS without Access-Control-Request-Method from evil.com', method: 'OPTIONS', origin: 'https://evil.com' },
  { name: 'OPTIONS without Origin', method: 'OPTIONS' },
];

const OPTION_SETS: ReadonlyArray<{ name: string; options: cors.CorsOptions | cors.CorsOptionsDelegate; nextOnDeniedPreflight?: boolean }> = [
  { name: 'defaults (any origin, no credentials)', options: {} },
  { name: "origin: '*' (the literal *)", options: { origin: '*' } },
  {
    name: "origin: '*' with maxAge 0, empty allowedHeaders and exposedHeaders, status 200",
    options: { origin: '*', maxAge: 0, allowedHeaders: [], exposedHeaders: [], optionsSuccessStatus: 200 },
  },
  { name: 'exact origin', options: { origin: A } },
  { name: 'exact origin with credentials', options: { origin: A, credentials: true } },
  { name: 'RegExp with credentials', options: { origin: /\.a\.com$/, credentials: true } },
  {
    name: 'array with methods, headers, exposed, maxAge',
    options: { origin: [A, /^https:\/\/x\./], methods: ['GET', 'PUT'], allowedHeaders: ['X-A', 'Content-Type'], exposedHeaders: ['X-Total'], maxAge: 60 },
  },
  { name: 'reflect (true) without credentials', options: { origin: true } },
  { name: 'origin callback with credentials', options: { origin: (origin, cb) => cb(null, origin === A), credentials: true }, nextOnDeniedPreflight: true },
  { name: 'preflightContinue and optionsSuccessStatus', options: { origin: A, preflightContinue: true, optionsSuccessStatus: 200 } },
  { name: 'origin false', options: { origin: false }, nextOnDeniedPreflight: true },
  { name: "'headers' alias and string maxAge", options: { origin: [A], headers: 'X-B', maxAge: '120' } as unknown as cors.CorsOptions },
  { name: 'options delegate', options: (req, cb) => cb(null, { origin: req.headers['x-tenant'] === undefined ? A : false, credentials: true }) },
];

describe('drop-in for cors: same browser-visible behaviour (differential)', () => {
  for (const set of OPTION_SETS) {
    it(set.name, async () => {
      const theirs = cors(set.options as cors.CorsOptions);
      const ours = ampCors(set.options as ExpressAmpCorsOptions);
      for (const req of REQUESTS) {
        // Documented difference: a denied preflight never reaches the application (cors calls next() when its origin option or function says false).
        if (set.nextOnDeniedPreflight && req.method === 'OPTIONS' && (req.origin !== A || set.name === 'origin false')) continue;
        const headers = { ...(req.origin ? { Origin: req.origin } : {}), ...req.extra };
        const preflight = req.method === 'OPTIONS';
        const [a, b] = await Promise.all([hit(theirs, req.method, headers), hit(ours as Middleware, req.method, headers)]);
        const want = browserView(a, req.origin, preflight);
        const got = browserView(b, req.origin, preflight);
        expect(got, `${req.name}`).toEqual({ ...want, varyOrigin: got.varyOrigin });
        if (want.varyOrigin) expect(got.varyOrigin, `${req.name}: Vary`).toBe(true);
        // The literal * is the same answer for every origin: neither package varies it on Origin (shared caches keep one copy).
        if (b.headers['access-control-allow-origin'] === '*')
          expect([a.headers['access-control-allow-origin'], got.varyOrigin]).toEqual(['*', want.varyOrigin]);
        if (want.readable && !preflight) {
          const exposed = list(b.headers['access-control-expose-headers']);
          expect(exposed).toEqual(expect.arrayContaining(list(a.headers['access-control-expose-headers'])));
          expect(exposed).toContain('amp-redirect-to');
        }
      }
    });
  }

  it('a global RegExp alternates in cors, never in ampcors', async () => {
    const regex = () => /^https:\/\/a\.com$/g;
    const theirs = cors({ origin: regex(), credentials: true });
    const ours = ampCors({ origin: regex(), credentials: true }) as Middleware;
    const answers = async (middleware: Middleware) => {
      const out: boolean[] = [];
      for (let i = 0; i < 4; i++) out.push((await hit(middleware, 'GET', { Origin: A })).headers['access-control-allow-origin'] === A);
      return out;
    };
    expect(await answers(theirs)).toEqual([true, false, true, false]);
    expect(await answers(ours)).toEqual([true, true, true, true]);
  });
});

describe('configurations ampcors refuses', () => {
  const code = (options: ExpressAmpCorsOptions) => {
    try {
      ampCors(options);
    } catch (error) {
      return isAmpCorsError(error) ? error.code : 'other';
    }
    return 'accepted';
  };
  it("refuses '*' or reflection with credentials", () => {
    expect(code({ origin: '*', credentials: true })).toBe('unsafe-configuration');
    expect(code({ origin: true, credentials: true })).toBe('unsafe-configuration');
    // Names no origin to trust: refused for that, before any mode is guessed (issue #15).
    expect(code({ credentials: true })).toBe('invalid-option');
    expect(code({ origin: [A, '*'], credentials: true })).toBe('unsafe-configuration');
    expect(code({ publishers: ['example.com'], origin: '*' })).toBe('unsafe-configuration');
  });
  it('refuses origins that could never match and malformed options', () => {
    expect(code({ origin: 'https://a.com/' })).toBe('invalid-origin');
    expect(code({ origin: 'https://A.com' })).toBe('invalid-origin');
    expect(code({ origin: A, maxAge: 'soon' })).toBe('invalid-option');
    expect(code({ publishers: ['example.com'], allowedHeaders: ['AMP-Same-Origin'] })).toBe('unsafe-configuration');
  });
  it('refuses, with credentials, a RegExp or a callback that allows origins nobody names, as it refuses true', () => {
    const message = (options: ExpressAmpCorsOptions) => {
      try {
        ampCors(options);
      } catch (error) {
        return (error as Error).message.replace(/^.*?together with/, 'together with');
      }
      return 'accepted';
    };
    const reference = message({ origin: true, credentials: true });
    expect(reference).toMatch(/^together with credentials/);
    for (const origin of [/.*/, /^https?:\/\//, /[a-z]/, /\.com$/, /\.cdn\.ampproject\.org$/, [A, /:8443$/]]) {
      expect(code({ origin, credentials: true }), String(origin)).toBe('unsafe-configuration');
      expect(message({ origin, credentials: true })).toBe(reference);
      expect(code({ origin, credentials: false }), String(origin)).toBe('accepted');
    }
    for (const origin of [
      (_o, cb) => cb(null, true),
      (o, cb) => cb(null, o),
      (_o, cb) => cb(null, '*'),
      (_o, cb) => cb(null, [/.*/]),
    ] satisfies OriginCallback[]) {
      expect(code({ origin, credentials: true })).toBe('unsafe-configuration');
      expect(message({ origin, credentials: true })).toBe(reference);
    }
    // Precise patterns and callbacks are kept.
    expect(code({ origin: /^https:\/\/([a-z0-9-]+\.)?a\.com$/, credentials: true })).toBe('accepted');
    expect(code({ origin: (o, cb) => cb(null, o === A), credentials: true })).toBe('accepted');
  });
  it("a callback answering '*' with credentials for a listed origin only is an error at request time", async () => {
    const seen = await hit(ampCors({ origin: (o, cb) => cb(null, o === A ? '*' : false), credentials: true }) as Middleware, 'GET', { Origin: A });
    expect(seen.status).toBe(500);
    expect(seen.headers['access-control-allow-origin']).toBeUndefined();
    expect(list(seen.headers.vary)).toContain('origin');
  });
  it('a callback that throws on, or never answers, a canary does not hold construction', async () => {
    const pending: string[] = [];
    const silent: OriginCallback = (o, cb) => {
      if (o === A) cb(null, true);
      else pending.push(String(o));
    };
    const middleware = ampCors({ origin: silent, credentials: true }) as Middleware;
    expect(typeof middleware).toBe('function');
    expect(pending.length).toBeGreaterThan(0);
    // Silence is unknown, and unknown never yields credentials: its listed origin's request fails once the questions'
    // 2 s bound has passed (attacker's review, session 15); a throw below is "not allowed".
    const seen = await hit(middleware, 'GET', { Origin: A });
    expect([seen.status, seen.headers['access-control-allow-origin'], seen.headers['access-control-allow-credentials']]).toEqual([500, undefined, undefined]);
    const throwing: OriginCallback = (o, cb) => {
      if (o !== A) throw new Error(`unknown origin ${o}`);
      cb(null, true);
    };
    const strict = await hit(ampCors({ origin: throwing, credentials: true }) as Middleware, 'GET', { Origin: A });
    expect([strict.status, strict.headers['access-control-allow-origin']]).toEqual([200, A]);
  });
});

describe("cors's answers, header by header, where the browser view is the same but a cache or a test would see the difference", () => {
  const exact = async (options: cors.CorsOptions, method: 'GET' | 'OPTIONS', headers: Record<string, string>) => {
    const pick = (seen: Seen) =>
      Object.fromEntries(
        [
          'access-control-allow-origin',
          'access-control-allow-methods',
          'access-control-allow-headers',
          'access-control-max-age',
          'access-control-allow-credentials',
        ]
          .map((name) => [name, seen.headers[name]] as const)
          .concat([['status', String(seen.status)]]),
      );
    const [a, b] = await Promise.all([hit(cors(options), method, headers), hit(ampCors(options as ExpressAmpCorsOptions) as Middleware, method, headers)]);
    expect(pick(b)).toEqual(pick(a));
  };
  it('an OPTIONS without Access-Control-Request-Method, status, methods, configured headers joined with ",", maxAge 0', async () => {
    await exact({ origin: A, methods: ['FOO', 'bar'], allowedHeaders: ['FIZZ', 'buzz'], credentials: true, maxAge: 0 }, 'OPTIONS', { Origin: A });
    await exact({ origin: '*', optionsSuccessStatus: 200, maxAge: 456 }, 'OPTIONS', { Origin: A, 'Access-Control-Request-Headers': 'x-header-1, x-header-2' });
    await exact({}, 'OPTIONS', {});
    await exact({ origin: '*' }, 'GET', { Origin: 'https://evil.com' });
  });
  it('attacker: the literal * never carries credentials, and a hostile OPTIONS never reaches a route or gets a CORS header', async () => {
    for (const options of [{ origin: '*' }, {}] as const) {
      const seen = await hit(ampCors(options) as Middleware, 'GET', { Origin: 'https://evil.com', Cookie: 'session=victim' });
      expect([seen.headers['access-control-allow-origin'], seen.headers['access-control-allow-credentials']]).toEqual(['*', undefined]);
    }
    const guarded = ampCors({ origin: [A], credentials: true }) as Middleware;
    for (const extra of [{}, { 'Access-Control-Request-Method': 'DELETE' }] as Record<string, string>[]) {
      const seen = await hit(guarded, 'OPTIONS', { Origin: 'https://evil.com', ...extra });
      expect([seen.status, seen.ran, seen.headers['access-control-allow-origin'], seen.headers['access-control-allow-credentials']]).toEqual([
        204,
        false,
        undefined,
        undefined,
      ]);
    }
  });
  it('the AMP publisher mode keeps the strict preflight rule: an OPTIONS without Access-Control-Request-Method reaches the route', async () => {
    const seen = await hit(ampCors({ publishers: ['example.com'] }) as Middleware, 'OPTIONS', { Origin: 'https://example-com.cdn.ampproject.org' });
    expect([seen.status, seen.ran, seen.headers['access-control-allow-methods']]).toEqual([200, true, undefined]);
  });
});

describe('Express specifics', () => {
  it('sends callback and delegate errors to next(err) with Vary: Origin', async () => {
    let caught: unknown;
    const app = express();
    app.use(ampCors({ origin: (_o, cb) => cb(new Error('lookup failed')) }));
    app.get('/r', (_req, res) => {
      res.send('never');
    });
    app.use((error: unknown, _req: express.Request, res: express.Response, _next: express.NextFunction) => {
      caught = error;
      res.status(503).send('handled');
    });
    const res = await request(app).get('/r').set('Origin', A);
    expect(res.status).toBe(503);
    expect((caught as Error).message).toBe('lookup failed');
    expect(res.headers.vary).toBe('Origin');
    const delegateError = await hit(ampCors((_req, cb) => cb(new Error('no tenant'))) as Middleware, 'GET', { Origin: A });
    expect([delegateError.status, delegateError.headers.vary]).toEqual([500, 'Origin']);
  });
  it('adds drop-in origins to publishers, keeping ampcors credentials', async () => {
    const middleware = ampCors({ verifier: createVerifier({ publishers: ['example.com'] }), origin: ['https://partner.com'] }) as Middleware;
    const partner = await hit(middleware, 'GET', { Origin: 'https://partner.com' });
    expect(partner.headers['access-control-allow-origin']).toBe('https://partner.com');
    expect(partner.headers['access-control-allow-credentials']).toBe('true');
    const cache = await hit(middleware, 'GET', { Origin: 'https://example-com.cdn.ampproject.org' });
    expect(cache.headers['access-control-allow-origin']).toBe('https://example-com.cdn.ampproject.org');
    const evil = await hit(middleware, 'GET', { Origin: 'https://evil.com' });
    expect([evil.status, evil.ran, evil.headers['access-control-allow-origin']]).toEqual([200, true, undefined]);
  });
  it('a delegate answering no options is ampCors(): the literal *; one answering a typo goes to next(err) as an AmpCorsError', async () => {
    const none = await hit(ampCors((_req, cb) => cb(null)) as Middleware, 'GET', { Origin: 'https://evil.com' });
    expect([none.status, none.headers['access-control-allow-origin'], none.headers['access-control-allow-credentials']]).toEqual([200, '*', undefined]);
    let caught: unknown;
    const app = express();
    app.use(ampCors((_req, cb) => cb(null, { publisher: ['example.com'] } as never)));
    app.get('/r', (_req, res) => {
      res.send('never');
    });
    app.use((error: unknown, _req: express.Request, res: express.Response, _next: express.NextFunction) => {
      caught = error;
      res.status(500).send('handled');
    });
    const res = await request(app).get('/r').set('Origin', 'https://evil.com');
    expect(res.status).toBe(500);
    expect(isAmpCorsError(caught) && caught.message).toMatch(/did you mean `publishers`\?/);
  });
  it('an origin: true without credentials allows any origin and its verdict says any-origin, not publisher-origin', async () => {
    let reason: string | undefined;
    const app = express();
    app.use(ampCors({ origin: true }));
    app.get('/r', (req, res) => {
      reason = req.ampCors?.reason;
      res.send('ran');
    });
    const res = await request(app).get('/r').set('Origin', 'https://evil.com');
    expect([res.headers['access-control-allow-origin'], res.headers['access-control-allow-credentials'], reason]).toEqual([
      'https://evil.com',
      undefined,
      'any-origin',
    ]);
  });
});
