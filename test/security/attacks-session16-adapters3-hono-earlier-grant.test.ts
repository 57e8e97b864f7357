/**
 * Attacker's review, session 16 (attack-adapters3): one Hono app, an
 * application-wide CORS layer that is not ampcors (`hono/cors` allowing a
 * partner with credentials, `hono/cors()` with `*`, or any middleware
 * writing `Access-Control-Allow-Origin` before `next()`) and a stricter
 * ampCors on `/admin` (`publishers: ['example.com']`). The partner asked
 * `GET /admin/secret`: ampCors denied it, yet the answer (the handler's body
 * with `onDenied: 'omit'`, the 403 with `'reject'`) kept the earlier layer's
 * `Access-Control-Allow-Origin: https://partner.example` and `-Credentials:
 * true`, so the partner read `/admin` with the user's cookies. `hono/cors`
 * writes on hono's placeholder response before `next()`, hono merges that
 * into the handler's Response, and ampCors's own answers (403, preflight,
 * 500) were built from it too. Express with `cors` and Koa with `@koa/cors`
 * in the same arrangement already removed the earlier grant (core's
 * nested-policies.ts, 4.).
 *
 * Fixed in @ampcors/hono: an answer ampCors makes carries no CORS header
 * its plan does not set, and a handler's Response carrying an
 * `Access-Control-Allow-Origin` or `-Credentials` loses every CORS header
 * the plan does not set before the plan is written. Each case compares the
 * answer's CORS headers with those the same ampCors gives alone.
 */
import { withAmpCors } from '@ampcors/fetch';
import { ampCors, type HonoAmpCorsOptions } from '@ampcors/hono';
import fc from 'fast-check';
import { Hono, type MiddlewareHandler } from 'hono';
import { cors } from 'hono/cors';
import { describe, expect, it } from 'vitest';
import { CORS_HEADERS, corsOf } from './cors-header-names.js';

const PARTNER = 'https://partner.example';
const OWN = 'https://example.com';
const CACHE = 'https://example-com.cdn.ampproject.org';
const STRICT: HonoAmpCorsOptions = { publishers: ['example.com'] };

/** The earlier layers an application may put before ampCors. */
const EARLIER: Record<string, () => MiddlewareHandler> = {
  'hono/cors with credentials': () => cors({ origin: [PARTNER, OWN, CACHE], credentials: true, exposeHeaders: ['X-Secret'], maxAge: 86400 }),
  'hono/cors *': () => cors(),
  "a middleware's c.header before next()": () => async (c, next) => {
    c.header('Access-Control-Allow-Origin', c.req.header('origin') ?? '*');
    c.header('Access-Control-Allow-Credentials', 'true');
    c.header('Access-Control-Expose-Headers', 'X-Secret');
    await next();
  },
  "a middleware's c.res.headers.set before next()": () => async (c, next) => {
    c.res.headers.set('Access-Control-Allow-Origin', c.req.header('origin') ?? '*');
    c.res.headers.set('Access-Control-Allow-Credentials', 'true');
    c.res.headers.set('Access-Control-Allow-Methods', 'GET, PUT, DELETE');
    c.res.headers.set('Access-Control-Allow-Headers', '*');
    c.res.headers.set('Access-Control-Max-Age', '86400');
    await next();
  },
};

/** The ways the `/admin` handler answers (each goes through a different path of hono's merge or of ampCors). */
const HANDLERS: Record<string, (app: Hono) => void> = {
  'c.text': (app) => app.get('/admin/secret', (c) => c.text('secret')),
  'a new Response': (app) => app.get('/admin/secret', () => new Response('secret')),
  'an immutable Response (Response.redirect)': (app) => app.get('/admin/secret', () => Response.redirect('https://example.com/elsewhere', 302)),
  'a thrown error (onError)': (app) =>
    app.get('/admin/secret', () => {
      throw new Error('boom');
    }),
};

/** An app: `earlier` app-wide (none: ampCors alone, the reference), ampCors with `options` on `/admin`, the handler. */
function appOf(earlier: string | null, options: HonoAmpCorsOptions, handler = 'c.text'): Hono {
  const app = new Hono();
  app.onError((_error, c) => c.text('error', 500));
  if (earlier !== null) app.use('*', (EARLIER[earlier] as () => MiddlewareHandler)());
  app.use('/admin/*', ampCors(options) as unknown as MiddlewareHandler);
  (HANDLERS[handler] as (app: Hono) => void)(app);
  app.options('/admin/secret', (c) => c.body(null, 204));
  return app;
}

/** The request `init` sent to `/admin/secret`, to the app with `earlier` and to ampCors alone: both answers. */
async function both(earlier: string, options: HonoAmpCorsOptions, init: RequestInit, handler = 'c.text'): Promise<[Response, Response]> {
  return [await appOf(earlier, options, handler).request('/admin/secret', init), await appOf(null, options, handler).request('/admin/secret', init)];
}

describe('Hono: a CORS layer before ampCors in the same app never adds to what ampCors answers', () => {
  for (const earlier of Object.keys(EARLIER))
    for (const onDenied of ['reject', 'omit'] as const)
      for (const handler of Object.keys(HANDLERS))
        it(`${earlier}, onDenied ${onDenied}, ${handler}: the partner ampCors denies gets no CORS header`, async () => {
          const [r, alone] = await both(earlier, { ...STRICT, onDenied }, { headers: { origin: PARTNER } }, handler);
          expect(corsOf(r.headers)).toEqual({});
          expect(r.status).toBe(alone.status);
          expect(r.headers.get('vary') ?? '').toMatch(/\bOrigin\b/i);
          if (onDenied === 'reject') expect(await r.text()).not.toContain('secret');
        });

  for (const earlier of Object.keys(EARLIER))
    for (const origin of [OWN, CACHE])
      it(`${earlier}: ${origin}, which ampCors allows, gets ampCors's CORS headers and no other`, async () => {
        const [r, alone] = await both(earlier, STRICT, { headers: { origin } });
        expect(corsOf(alone.headers)['access-control-allow-origin']).toBe(origin);
        expect(corsOf(r.headers)).toEqual(corsOf(alone.headers));
        expect(await r.text()).toBe('secret');
      });

  it('hono/cors with credentials, ampCors allowing the partner without credentials: no -Credentials, no hono/cors Expose-Headers', async () => {
    const [r, alone] = await both('hono/cors with credentials', { origin: [PARTNER] }, { headers: { origin: PARTNER } });
    expect([alone.headers.get('access-control-allow-origin'), alone.headers.get('access-control-allow-credentials')]).toEqual([PARTNER, null]);
    expect(corsOf(r.headers)).toEqual(corsOf(alone.headers));
    expect(r.headers.get('access-control-expose-headers') ?? '').not.toMatch(/x-secret/i);
    expect(r.headers.get('access-control-max-age')).toBeNull();
  });

  for (const earlier of ["a middleware's c.header before next()", "a middleware's c.res.headers.set before next()"])
    for (const origin of [PARTNER, OWN])
      for (const onDenied of ['reject', 'omit'] as const)
        it(`${earlier}: a preflight from ${origin} (onDenied ${onDenied}) is answered with ampCors's CORS headers alone`, async () => {
          const init = { method: 'OPTIONS', headers: { origin, 'access-control-request-method': 'PUT', 'access-control-request-headers': 'x-evil' } };
          const [r, alone] = await both(earlier, { ...STRICT, onDenied }, init);
          expect(corsOf(r.headers)).toEqual(corsOf(alone.headers));
          expect(r.status).toBe(alone.status);
          if (origin === PARTNER) expect(r.headers.get('access-control-allow-origin')).toBeNull();
        });

  it('a verifier that throws: the 500 carries no CORS header of the earlier layer', async () => {
    const failing = {
      verifier: {
        verify: () => {
          throw new Error('down');
        },
      },
    } as unknown as HonoAmpCorsOptions;
    for (const earlier of Object.keys(EARLIER)) {
      const r = await appOf(earlier, failing).request('/admin/secret', { headers: { origin: PARTNER } });
      expect(r.status).toBe(500);
      expect(corsOf(r.headers)).toEqual({});
    }
  });

  it('property: any CORS headers set before ampCors, any origin and method: the answer has exactly the CORS headers ampCors gives alone', async () => {
    const name = fc.constantFrom(...CORS_HEADERS);
    const value = fc.constantFrom(PARTNER, OWN, '*', 'true', 'GET, PUT', 'x-secret', '600', 'null');
    await fc.assert(
      fc.asyncProperty(
        fc.array(fc.tuple(name, value), { maxLength: 6 }),
        fc.boolean(),
        fc.constantFrom(PARTNER, OWN, CACHE, 'https://example-com.evil.example', null),
        fc.boolean(),
        fc.constantFrom('reject', 'omit'),
        async (earlier, onPlaceholder, origin, preflight, onDenied) => {
          const make = (withEarlier: boolean): Hono => {
            const app = new Hono();
            if (withEarlier)
              app.use('*', async (c, next) => {
                for (const [n, v] of earlier)
                  if (onPlaceholder) c.res.headers.set(n, v);
                  else c.header(n, v);
                await next();
              });
            app.use('/admin/*', ampCors({ ...STRICT, onDenied: onDenied as 'reject' | 'omit' }) as unknown as MiddlewareHandler);
            app.get('/admin/secret', (c) => c.text('secret'));
            app.options('/admin/secret', (c) => c.body(null, 204));
            return app;
          };
          const headers: Record<string, string> = {};
          if (origin !== null) headers['origin'] = origin;
          if (preflight) headers['access-control-request-method'] = 'PUT';
          const init = { method: preflight ? 'OPTIONS' : 'GET', headers };
          const r = await make(true).request('/admin/secret', init);
          const alone = await make(false).request('/admin/secret', init);
          // An answer ampCors makes itself (a preflight's, a 403), or one where an earlier grant was: exactly ampCors's CORS
          // headers. Else the handler's Response may keep a non-granting header set before (an Expose-Headers of its own).
          const earlierGrant = earlier.some(([n]) => n === 'access-control-allow-origin' || n === 'access-control-allow-credentials');
          if (earlierGrant || (preflight && origin !== null) || alone.status === 403) expect(corsOf(r.headers)).toEqual(corsOf(alone.headers));
          // Never a grant ampCors does not make.
          expect(r.headers.get('access-control-allow-origin')).toBe(alone.headers.get('access-control-allow-origin'));
          expect(r.headers.get('access-control-allow-credentials')).toBe(alone.headers.get('access-control-allow-credentials'));
          expect(r.status).toBe(alone.status);
        },
      ),
      { numRuns: 150 },
    );
  });

  it('hono/cors app-wide, a withAmpCors handler mounted on /admin behind an @ampcors/hono ampCors on /admin/*: the partner gets no grant', async () => {
    for (const onDenied of ['reject', 'omit'] as const) {
      const app = new Hono();
      app.use('*', cors({ origin: [PARTNER, OWN], credentials: true }));
      app.use('/admin/*', ampCors({ ...STRICT, onDenied }) as unknown as MiddlewareHandler);
      app.mount(
        '/admin',
        withAmpCors(() => new Response('secret'), { ...STRICT, onDenied }),
      );
      const r = await app.request('/admin/secret', { headers: { origin: PARTNER } });
      expect(corsOf(r.headers)).toEqual({});
      const own = await app.request('/admin/secret', { headers: { origin: OWN } });
      expect([own.headers.get('access-control-allow-origin'), own.headers.get('access-control-allow-credentials')]).toEqual([OWN, 'true']);
    }
  });
});
