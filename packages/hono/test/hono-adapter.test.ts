/**
 * @ampcors/hono: the middleware on Hono 4 (verdict on the context, headers on
 * `c.res`, failures never escaping), and the drop-in for `hono/cors`: the
 * same options and requests sent to an app using `hono/cors` and one using
 * `ampCors`, compared by what a browser would conclude (differential), plus,
 * from the attacker's side, every configuration and answer ampcors refuses.
 */
import { cacheOrigin, isAmpCorsError } from '@ampcors/core';
import { ampCors, type AmpCorsVariables, type HonoAmpCorsOptions } from '@ampcors/hono';
import fc from 'fast-check';
import { Hono, type MiddlewareHandler } from 'hono';
import { cors } from 'hono/cors';
import { describe, expect, expectTypeOf, it } from 'vitest';

const CACHE = cacheOrigin('example.com');
const EVIL_CACHE = cacheOrigin('evil.com');

interface Seen {
  status: number;
  runs: number;
  reason: string | null;
  headers: Record<string, string>;
  text: string;
  /** The handler's own Response object, and the one the app answered with (before hono's final copy, if any). */
  same: boolean;
}

type Handler = (c: Parameters<MiddlewareHandler>[0]) => Response | Promise<Response>;

async function hit(middleware: MiddlewareHandler, method: string, headers: Record<string, string>, handler?: Handler, path = '/r'): Promise<Seen> {
  let runs = 0;
  let reason: string | null = null;
  let answered: Response | undefined;
  let returned: Response | undefined;
  const app = new Hono<{ Variables: AmpCorsVariables }>();
  app.use('*', async (c, next) => {
    c.header('Vary', 'Accept-Encoding');
    await next();
    returned = c.res;
  });
  app.use('*', middleware);
  app.all('*', async (c) => {
    runs += 1;
    reason = c.get('ampCors')?.reason ?? null;
    answered = handler === undefined ? c.text('handler', 200, { 'X-Handler': '1' }) : await handler(c);
    return answered;
  });
  const res = await app.request(`http://api.example.test${path}`, { method, headers });
  return {
    status: res.status,
    runs,
    reason,
    headers: Object.fromEntries(res.headers),
    text: await res.text(),
    same: answered !== undefined && answered === returned,
  };
}

const list = (value: string | undefined) =>
  (value ?? '')
    .split(',')
    .map((item) => item.trim().toLowerCase())
    .filter(Boolean);

/** What a browser concludes from a response to a page at `origin`. */
function browserView(seen: Seen, origin: string | undefined, preflight: boolean) {
  const acao = seen.headers['access-control-allow-origin'];
  const credentials = seen.headers['access-control-allow-credentials'] === 'true';
  const readable = origin !== undefined && (acao === origin || (acao === '*' && !credentials));
  return {
    readable,
    credentials: readable && credentials,
    ...(readable && !preflight && { exposed: list(seen.headers['access-control-expose-headers']).filter((name) => name !== 'amp-redirect-to') }),
    ...(readable &&
      preflight && {
        methods: list(seen.headers['access-control-allow-methods']),
        allowHeaders: list(seen.headers['access-control-allow-headers']),
        maxAge: seen.headers['access-control-max-age'],
      }),
  };
}

function refused(build: () => unknown): string {
  try {
    build();
  } catch (error) {
    expect(isAmpCorsError(error), String(error)).toBe(true);
    return (error as Error).message;
  }
  throw new Error('the configuration was accepted');
}

describe('AMP publisher mode', () => {
  const middleware = ampCors({ publishers: ['example.com'] });

  it('allows a cache origin: CORS headers on the handler response object itself, Vary kept, verdict on the context', async () => {
    const seen = await hit(middleware, 'GET', { Origin: CACHE });
    expect(seen.status).toBe(200);
    expect(seen.headers['access-control-allow-origin']).toBe(CACHE);
    expect(seen.headers['access-control-allow-credentials']).toBe('true');
    expect(seen.headers['access-control-expose-headers']).toBe('AMP-Redirect-To');
    expect(seen.headers['x-handler']).toBe('1');
    expect(list(seen.headers.vary)).toEqual(['accept-encoding', 'origin']);
    expect(seen.reason).toBe('cache-origin');
    // Mutable headers: set in place, the handler's Response is not copied.
    expect(seen.same).toBe(true);
  });

  it('denies an unknown publisher on a cache with 403 before the handler runs (a POST side effect never happens)', async () => {
    const seen = await hit(middleware, 'POST', { Origin: EVIL_CACHE });
    expect(seen).toMatchObject({ status: 403, runs: 0 });
    expect(seen.text).toContain('unknown-publisher');
    expect(seen.headers['access-control-allow-origin']).toBeUndefined();
    expect(list(seen.headers.vary)).toEqual(['accept-encoding', 'origin']);
  });

  it("onDenied: 'omit' runs the handler without CORS headers", async () => {
    const seen = await hit(ampCors({ publishers: ['example.com'], onDenied: 'omit' }), 'POST', { Origin: EVIL_CACHE });
    expect(seen).toMatchObject({ status: 200, runs: 1, reason: 'unknown-publisher' });
    expect(seen.headers['access-control-allow-origin']).toBeUndefined();
    expect(list(seen.headers.vary)).toContain('origin');
  });

  it('answers a preflight itself (handler not run), upstream Vary extended', async () => {
    const seen = await hit(middleware, 'OPTIONS', {
      Origin: CACHE,
      'Access-Control-Request-Method': 'POST',
      'Access-Control-Request-Headers': 'Content-Type, AMP-Same-Origin',
    });
    expect(seen).toMatchObject({ status: 204, runs: 0, text: '' });
    expect(seen.headers['access-control-allow-origin']).toBe(CACHE);
    expect(seen.headers['access-control-allow-headers']).toBe('Content-Type');
    expect(list(seen.headers.vary)).toEqual(['accept-encoding', 'origin', 'access-control-request-headers']);
  });

  it('a response with immutable headers (Response.redirect) is copied once, status and Location kept', async () => {
    const seen = await hit(middleware, 'GET', { Origin: CACHE }, () => Response.redirect('https://example.com/next', 302));
    expect(seen.status).toBe(302);
    expect(seen.headers.location).toBe('https://example.com/next');
    expect(seen.headers['access-control-allow-origin']).toBe(CACHE);
    expect(list(seen.headers.vary)).toContain('origin');
    expect(seen.same).toBe(false);
  });

  it('a fetch() result whose body was read (immutable headers, cannot be copied) becomes a 500 with Vary: Origin, never an exception', async () => {
    const seen = await hit(middleware, 'GET', { Origin: CACHE }, async () => {
      const upstream = await fetch('data:text/plain,upstream');
      await upstream.text();
      return upstream;
    });
    expect([seen.status, seen.text]).toEqual([500, 'Internal Server Error\n']);
    expect(seen.headers['access-control-allow-origin']).toBeUndefined();
    expect(list(seen.headers.vary)).toContain('origin');
  });

  it('a handler error goes to hono onError; its 500 still carries Vary: Origin', async () => {
    const seen = await hit(middleware, 'GET', { Origin: CACHE }, () => {
      throw new Error('handler exploded');
    });
    expect(seen.status).toBe(500);
    expect(list(seen.headers.vary)).toContain('origin');
  });

  it('Sec-Fetch-Site: same-origin goes through untouched whatever the verifier says', async () => {
    const denyAll = ampCors({ verifier: { verify: (origin) => ({ allowed: false, origin: origin ?? null, reason: 'unknown-origin', detail: 'no' }) } });
    const seen = await hit(denyAll, 'POST', { Origin: 'https://api.example.test', 'Sec-Fetch-Site': 'same-origin' });
    expect(seen).toMatchObject({ status: 200, runs: 1, reason: 'same-origin' });
    expect(seen.headers['access-control-allow-origin']).toBeUndefined();
  });

  it('types the verdict on the context through AmpCorsVariables', () => {
    const app = new Hono<{ Variables: AmpCorsVariables }>();
    app.use('/api/*', ampCors({ publishers: ['example.com'] }));
    app.get('/api/x', (c) => {
      expectTypeOf(c.get('ampCors')).toMatchTypeOf<{ allowed: boolean; reason: string }>();
      return c.text('ok');
    });
    expect(app).toBeInstanceOf(Hono);
  });
});

describe('an exception never escapes', () => {
  const broken: Array<[string, HonoAmpCorsOptions]> = [
    [
      'a throwing verifier',
      {
        verifier: {
          verify: () => {
            throw new Error('verifier exploded');
          },
        },
      },
    ],
    ['a rejecting verifier', { verifier: { verify: () => Promise.reject(new Error('store down')) } }],
    [
      'a throwing origin function',
      {
        origin: () => {
          throw new Error('origin exploded');
        },
      },
    ],
    ['a rejecting origin function', { origin: () => Promise.reject(new Error('origin down')) }],
    ['an origin function answering a URL, not an origin', { origin: () => 'https://example.com/path' }],
    [
      'a throwing methods function',
      {
        origin: CACHE,
        allowMethods: () => {
          throw new Error('methods exploded');
        },
      },
    ],
    ['a methods function answering a header injection', { origin: CACHE, allowMethods: () => ['GET\r\nSet-Cookie: a=b'] }],
  ];

  it.each(broken)('%s → 500, Vary: Origin, no CORS header, handler not run', async (_name, options) => {
    const seen = await hit(ampCors(options), 'OPTIONS', { Origin: CACHE, 'Access-Control-Request-Method': 'POST' });
    // An origin function's failure is a denial for canaries but a 500 for the request itself.
    expect(seen.status).toBe(500);
    expect(seen.runs).toBe(0);
    expect(seen.headers['access-control-allow-origin']).toBeUndefined();
    expect(seen.headers['access-control-allow-credentials']).toBeUndefined();
    expect(seen.headers['set-cookie']).toBeUndefined();
    expect(list(seen.headers.vary)).toEqual(['accept-encoding', 'origin']);
  });
});

describe('drop-in for hono/cors: the same browser view for safe configurations', () => {
  const configurations: Array<[string, HonoAmpCorsOptions]> = [
    [
      'an exact origin with credentials and every option',
      {
        origin: 'https://a.example',
        allowHeaders: ['X-Custom-Header'],
        allowMethods: ['POST', 'GET'],
        exposeHeaders: ['X-Total'],
        maxAge: 600,
        credentials: true,
      },
    ],
    ['an array of origins', { origin: ['https://a.example', 'https://b.example'] }],
    ['an array of origins with credentials', { origin: ['https://a.example', 'https://b.example'], credentials: true }],
    ['an origin function', { origin: (origin) => (origin.endsWith('.a.example') ? origin : null) }],
    ['an async origin function with credentials', { origin: async (origin) => (origin === 'https://b.example' ? origin : undefined), credentials: true }],
    ['a function answering another origin', { origin: (origin) => (origin === 'https://a.example' ? origin : 'https://a.example') }],
    ["'*' without credentials", { origin: '*' }],
    ['a methods function', { origin: ['https://a.example'], allowMethods: (origin) => (origin === 'https://a.example' ? ['GET', 'DELETE'] : ['GET']) }],
  ];
  const origins = [
    undefined,
    'https://a.example',
    'https://b.example',
    'https://x.a.example',
    'https://evil.example',
    'null',
    'https://a.example.evil.example',
  ];

  for (const [name, options] of configurations) {
    it(name, async () => {
      for (const origin of origins) {
        for (const preflight of [false, true]) {
          const headers: Record<string, string> = origin === undefined ? {} : { Origin: origin };
          if (preflight) Object.assign(headers, { 'Access-Control-Request-Method': 'DELETE', 'Access-Control-Request-Headers': 'X-Custom-Header' });
          const method = preflight ? 'OPTIONS' : 'GET';
          const theirs = await hit(cors(options as Parameters<typeof cors>[0]), method, headers);
          const ours = await hit(ampCors(options), method, headers);
          const label = `${origin ?? '(no Origin)'} ${method}`;
          if (origin === 'null' && options.origin === '*') {
            // The one difference, on the safe side: an opaque (sandboxed, file:) origin is never allowed, not even by '*'.
            expect(browserView(ours, origin, preflight).readable, label).toBe(false);
            expect(browserView(theirs, origin, preflight).readable, label).toBe(true);
            continue;
          }
          expect(browserView(ours, origin, preflight), label).toEqual(browserView(theirs, origin, preflight));
          // The handler runs exactly when hono/cors runs it, except for preflights without Origin (not CORS; see the README).
          if (origin !== undefined || !preflight) expect(ours.runs, label).toBe(theirs.runs);
          // Never an origin the browser did not send, never a reflected null.
          const acao = ours.headers['access-control-allow-origin'];
          if (acao !== undefined) expect(acao, label).toBe(origin);
        }
      }
    });
  }

  it('no options at all: the literal *, no credentials, no Vary: Origin, as cors()', async () => {
    for (const origin of ['https://evil.example', undefined]) {
      const seen = await hit(ampCors(), 'GET', origin === undefined ? {} : { Origin: origin });
      const theirs = await hit(cors(), 'GET', origin === undefined ? {} : { Origin: origin });
      expect(seen.headers['access-control-allow-origin']).toBe('*');
      expect(seen.headers['access-control-allow-credentials']).toBeUndefined();
      expect(list(seen.headers.vary)).not.toContain('origin');
      expect(seen.headers['access-control-allow-origin']).toBe(theirs.headers['access-control-allow-origin']);
    }
  });

  it('the origin function gets the request context for its own Origin, another context for the guard questions', async () => {
    const asked: Array<[string, string | undefined, boolean]> = [];
    let requestContext: unknown;
    const middleware = ampCors({
      origin: (origin, c) => {
        asked.push([origin, c.req.header('origin'), c === requestContext]);
        c.set('leak' as never, 'x' as never);
        return origin === 'https://a.example' ? origin : null;
      },
      credentials: true,
    });
    const app = new Hono();
    app.use('*', async (c, next) => {
      requestContext = c;
      await next();
    });
    app.use('*', middleware);
    let leaked: unknown;
    app.get('*', (c) => {
      leaked = c.get('leak' as never);
      return c.text('ok');
    });
    asked.length = 0;
    const res = await app.request('http://api.example.test/r', { headers: { Origin: 'https://a.example' } });
    expect(res.headers.get('access-control-allow-origin')).toBe('https://a.example');
    // Its own question with the real context; the guard's (a canary, then the look-alikes), each with a context that says the origin asked about.
    expect(asked[0]).toEqual(['https://a.example', 'https://a.example', true]);
    expect(asked.length).toBeGreaterThanOrEqual(2);
    for (const [about, header, real] of asked.slice(1)) expect([header, real]).toEqual([about, false]);
    expect(leaked).toBe('x');
  });
});

describe("hono/cors's unsafe cases are refused (attacker's side)", () => {
  it("origin '*' with credentials: hono/cors sends * + credentials; ampcors refuses to start", () => {
    expect(refused(() => ampCors({ origin: '*', credentials: true }))).toMatch(/credentials/);
  });

  it('an origin function reflecting every origin with credentials is refused at construction', () => {
    expect(refused(() => ampCors({ origin: (origin) => origin, credentials: true }))).toMatch(/ampcors-canary|no configuration names/);
    expect(refused(() => ampCors({ origin: (origin) => (origin === 'https://a.example' ? origin : '*'), credentials: true }))).toMatch(/credentials/);
  });

  it('an async reflecting function with credentials never answers a foreign origin with credentials', async () => {
    const middleware = ampCors({ origin: async (origin) => origin, credentials: true });
    await new Promise((resolve) => setTimeout(resolve, 20));
    const seen = await hit(middleware, 'GET', { Origin: 'https://evil.example', Cookie: 'session=1' });
    expect(seen.runs).toBe(0);
    expect(seen.headers['access-control-allow-origin']).toBeUndefined();
    expect(seen.headers['access-control-allow-credentials']).toBeUndefined();
  });

  it("allowHeaders '*' or AMP-Same-Origin is refused (it would let a page send AMP-Same-Origin)", () => {
    expect(refused(() => ampCors({ origin: 'https://a.example', allowHeaders: ['*'] }))).toMatch(/AMP-Same-Origin/);
    expect(refused(() => ampCors({ publishers: ['example.com'], allowHeaders: ['amp-same-origin'] }))).toMatch(/AMP-Same-Origin/);
  });

  it('strict configuration: typos, options naming no origin, undefined values, both a name and its alias — all at once', () => {
    expect(refused(() => ampCors({ orgin: 'https://a.example' } as HonoAmpCorsOptions))).toMatch(/did you mean `origin`\?/);
    expect(refused(() => ampCors({ allowMethods: ['GET', 'POST'] }))).toMatch(/name no origin/);
    expect(refused(() => ampCors({ publishers: undefined } as unknown as HonoAmpCorsOptions))).toMatch(/present but undefined/);
    const message = refused(() => ampCors({ origin: 'https://a.example', methods: ['GET'], allowMethods: ['POST'], credentails: true } as HonoAmpCorsOptions));
    expect(message).toMatch(/2 configuration problems/);
    expect(message).toMatch(/methods or its alias allowMethods/);
    expect(message).toMatch(/did you mean `credentials`\?/);
    expect(refused(() => ampCors({ origin: 'https://a.example/' }))).toMatch(/canonical origin/);
    expect(refused(() => ampCors({ origin: [/a\.example$/ as unknown as string] }))).toMatch(/exact origin strings/);
    expect(refused(() => ampCors({ origin: 42 as unknown as string }))).toMatch(/origin must be/);
    expect(refused(() => ampCors({ origin: [] }))).toMatch(/origin is empty/);
    // On purpose, it is said so: nothing is allowed, the handler still runs (hono/cors's default onDenied).
    expect(() => ampCors({ origin: () => null })).not.toThrow();
  });

  it('a function answering another origin never makes the response readable by the asking origin', async () => {
    const middleware = ampCors({ origin: () => 'https://a.example', credentials: true, onDenied: 'reject' });
    const seen = await hit(middleware, 'POST', { Origin: 'https://evil.example' });
    expect(seen).toMatchObject({ status: 403, runs: 0 });
  });

  it('property: with an origin list and credentials, an allowed response names exactly the listed origin the request sent', async () => {
    const listed = ['https://a.example', 'https://b.example:8443'];
    const middleware = ampCors({ origin: listed, credentials: true });
    const near = fc.oneof(
      fc.constantFrom(...listed),
      fc.tuple(fc.constantFrom(...listed), fc.constantFrom('.', '/', 'x', ':1', '.evil.example', '%00', ' ', '\t')).map(([origin, extra]) => origin + extra),
      fc
        .tuple(fc.constantFrom('http://', 'https://', 'HTTPS://', 'https://x.'), fc.constantFrom('a.example', 'b.example:8443', 'A.example'))
        .map(([scheme, host]) => scheme + host),
      fc.webUrl().map((url) => new URL(url).origin),
    );
    await fc.assert(
      fc.asyncProperty(near, async (typed) => {
        // What the server receives: HTTP strips a header value's surrounding whitespace.
        const origin = new Headers({ Origin: typed }).get('origin') as string;
        const seen = await hit(middleware, 'GET', { Origin: origin });
        const acao = seen.headers['access-control-allow-origin'];
        if (listed.includes(origin)) expect(acao).toBe(origin);
        else expect(acao).toBeUndefined();
        if (acao === undefined) expect(seen.headers['access-control-allow-credentials']).toBeUndefined();
      }),
      { numRuns: 200 },
    );
  });
});
