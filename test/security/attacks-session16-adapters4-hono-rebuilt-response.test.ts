/**
 * HOLE (attacker's review, session 16, attack-adapters4): nested ampCors where a layer between them REBUILDS the
 * Response (`hono/compress`, `hono/etag`'s 304, Hono's own HEAD handling `new Response(null, res)`, any
 * `c.res = new Response(c.res.body, c.res)`). The rebuilt Response carries no written-response note (core's
 * written-responses.ts), so the outer layer (a Fetch `withAmpCors` around `app.fetch`, or an app-wide Hono ampCors
 * around `app.mount`) takes it for a fresh handler answer and writes ITS allow with credentials over the inner denial:
 * the partner reads /admin (gzip body) with cookies. Each case asserts the SAFE behaviour (all but the publisher's
 * control failed before the fix).
 *
 * Fixed (core's nested-policies.ts, 5., `pairsOverUnnoted`): a layer meeting a Response without a note, after ampcors
 * wrote while its handler ran, that looks like an answer of ampcors (`Vary` naming `Origin`, or an
 * `Access-Control-Allow-Origin` or `-Credentials`) adds no grant beyond what it already holds.
 */
import { withAmpCors } from '@ampcors/fetch';
import { pairsOverUnnoted } from '@ampcors/core/adapter';
import { ampCors } from '@ampcors/hono';
import { Hono } from 'hono';
import { compress } from 'hono/compress';
import { etag } from 'hono/etag';
import { describe, expect, it } from 'vitest';

const PARTNER = 'https://partner.example';
const OWN = 'https://example.com';
const SECRET = 'secret '.repeat(400); // over compress's 1 KiB threshold
const OUTER = { publishers: ['partner.example', 'example.com'] };
const INNER = { publishers: ['example.com'] };

describe('Fetch withAmpCors (partner allowed) around a Hono app whose ampCors on /admin denies the partner', () => {
  for (const between of ['hono/compress', 'hono/etag 304', 'c.res rebuilt', 'nothing (HEAD only)'] as const)
    for (const onDenied of ['omit', 'reject'] as const)
      for (const method of ['GET', 'HEAD'] as const) {
        if (between === 'nothing (HEAD only)' && method === 'GET') continue;
        it(`${between}, onDenied ${onDenied}, ${method}: no grant for the partner`, async () => {
          const app = new Hono();
          if (between === 'hono/compress') app.use(compress());
          if (between === 'hono/etag 304') app.use(etag());
          if (between === 'c.res rebuilt')
            app.use(async (c, next) => {
              await next();
              c.res = new Response(c.res.body, c.res);
            });
          app.use('/admin/*', ampCors({ ...INNER, onDenied }));
          app.get('/admin/secret', (c) => c.text(SECRET));
          const outer = withAmpCors((req: Request) => app.fetch(req), OUTER);
          const headers: Record<string, string> = { origin: PARTNER, 'accept-encoding': 'gzip' };
          if (between === 'hono/etag 304')
            headers['if-none-match'] = (await app.request('/admin/secret', { headers: { origin: OWN } })).headers.get('etag') ?? '';
          const r = await outer(new Request('https://api.example.com/admin/secret', { method, headers }));
          expect([r.headers.get('access-control-allow-origin'), r.headers.get('access-control-allow-credentials')]).toEqual([null, null]);
        });
      }
  it('control: the publisher still gets its grant through compress', async () => {
    const app = new Hono();
    app.use(compress());
    app.use('/admin/*', ampCors(INNER));
    app.get('/admin/secret', (c) => c.text(SECRET));
    const r = await withAmpCors(
      (req: Request) => app.fetch(req),
      OUTER,
    )(new Request('https://api.example.com/admin/secret', { headers: { origin: OWN, 'accept-encoding': 'gzip' } }));
    expect([r.status, r.headers.get('access-control-allow-origin'), r.headers.get('content-encoding')]).toEqual([200, OWN, 'gzip']);
  });
});

describe('Hono app-wide ampCors (partner allowed), hono/compress, and app.mount of a withAmpCors denying the partner', () => {
  it('GET /admin/secret from the partner: no grant', async () => {
    const app = new Hono();
    app.use(ampCors(OUTER));
    app.use(compress());
    app.mount(
      '/admin',
      withAmpCors(() => new Response(SECRET, { headers: { 'content-type': 'text/plain' } }), { ...INNER, onDenied: 'omit' }),
    );
    const r = await app.request('/admin/secret', { headers: { origin: PARTNER, 'accept-encoding': 'gzip' } });
    expect(r.headers.get('content-encoding')).toBe('gzip');
    expect([r.headers.get('access-control-allow-origin'), r.headers.get('access-control-allow-credentials')]).toEqual([null, null]);
  });
});

describe('more layers that rebuild the answer between two ampCors', () => {
  const grantOf = (r: Response) => [r.headers.get('access-control-allow-origin'), r.headers.get('access-control-allow-credentials')];

  for (const onDenied of ['omit', 'reject'] as const)
    for (const method of ['GET', 'HEAD'] as const)
      it(`app-wide Hono ampCors, compress, app.mount(withAmpCors) with onDenied ${onDenied}, ${method}: no grant`, async () => {
        const app = new Hono();
        app.use(ampCors(OUTER));
        app.use(compress());
        app.mount(
          '/admin',
          withAmpCors(() => new Response(SECRET, { headers: { 'content-type': 'text/plain' } }), { ...INNER, onDenied }),
        );
        const r = await app.request('/admin/secret', { method, headers: { origin: PARTNER, 'accept-encoding': 'gzip' } });
        expect(grantOf(r)).toEqual([null, null]);
        if (onDenied === 'reject') expect(r.status).toBe(403);
      });

  for (const onDenied of ['omit', 'reject'] as const)
    it(`app-wide Hono ampCors, app.mount of a Hono sub-app (etag, ampCors on /admin onDenied ${onDenied}), HEAD and etag 304: no grant`, async () => {
      const sub = new Hono();
      sub.use(etag());
      sub.use('*', ampCors({ ...INNER, onDenied }));
      sub.get('*', (c) => c.text(SECRET));
      const app = new Hono();
      app.use(ampCors(OUTER));
      app.mount('/admin', sub.fetch);
      const tag = (await sub.request('/secret', { headers: { origin: OWN } })).headers.get('etag') ?? '';
      expect(tag).not.toBe('');
      for (const init of [{ method: 'HEAD' }, { headers: { 'if-none-match': tag } }, { method: 'HEAD', headers: { 'if-none-match': tag } }]) {
        const r = await app.request('/admin/secret', { ...init, headers: { origin: PARTNER, ...(init.headers ?? {}) } });
        expect(grantOf(r)).toEqual([null, null]);
      }
    });

  it('withAmpCors in withAmpCors with a layer between that rebuilds the Request and the Response: no grant; the publisher keeps its own', async () => {
    const inner = withAmpCors(() => new Response(SECRET), INNER);
    const rebuild = async (req: Request) => {
      const res = await inner(new Request(req.url.replace('/admin', ''), req));
      return new Response(res.body, res);
    };
    const outer = withAmpCors(rebuild, OUTER);
    for (const method of ['GET', 'HEAD']) {
      const denied = await outer(new Request('https://api.example.com/admin/secret', { method, headers: { origin: PARTNER } }));
      expect(grantOf(denied)).toEqual([null, null]);
      const allowed = await outer(new Request('https://api.example.com/admin/secret', { method, headers: { origin: OWN } }));
      expect(grantOf(allowed)).toEqual([OWN, 'true']);
    }
  });

  it('app-wide Hono ampCors, compress, a route handing its own Request to a withAmpCors denying the partner: no grant; the publisher keeps its own', async () => {
    const inner = withAmpCors(() => new Response(SECRET), { ...INNER, onDenied: 'omit' });
    const app = new Hono();
    app.use(ampCors(OUTER));
    app.use(compress());
    app.all('/admin/*', (c) => inner(c.req.raw));
    const denied = await app.request('/admin/secret', { headers: { origin: PARTNER, 'accept-encoding': 'gzip' } });
    expect(denied.headers.get('content-encoding')).toBe('gzip');
    expect(grantOf(denied)).toEqual([null, null]);
    const allowed = await app.request('/admin/secret', { headers: { origin: OWN, 'accept-encoding': 'gzip' } });
    expect(grantOf(allowed)).toEqual([OWN, 'true']);
  });

  it('an inner allow without credentials, rebuilt: the outer adds no credentials and no exposed header of its own', async () => {
    const app = new Hono();
    app.use(compress());
    app.use('/admin/*', ampCors({ origin: PARTNER }));
    app.get('/admin/secret', (c) => c.text(SECRET));
    const r = await withAmpCors(
      (req: Request) => app.fetch(req),
      OUTER,
    )(new Request('https://api.example.com/admin/secret', { headers: { origin: PARTNER, 'accept-encoding': 'gzip' } }));
    expect(r.headers.get('content-encoding')).toBe('gzip');
    expect(grantOf(r)).toEqual([PARTNER, null]);
    const alone = await app.request('/admin/secret', { headers: { origin: PARTNER } });
    expect(grantOf(alone)).toEqual([PARTNER, null]);
    expect(r.headers.get('access-control-expose-headers')).toBe(alone.headers.get('access-control-expose-headers'));
  });

  it('control: one ampCors, nothing written while the handler ran: a handler answer with Vary: Origin gets the grant', async () => {
    const r = await withAmpCors(
      () => new Response('ok', { headers: { vary: 'Origin' } }),
      OUTER,
    )(new Request('https://api.example.com/x', { headers: { origin: PARTNER } }));
    expect(grantOf(r)).toEqual([PARTNER, 'true']);
    const app = new Hono();
    app.use(ampCors(OUTER));
    app.get('/x', (c) => c.text('ok', 200, { vary: 'Origin' }));
    expect(grantOf(await app.request('/x', { headers: { origin: PARTNER } }))).toEqual([PARTNER, 'true']);
  });
});

describe("pairsOverUnnoted (core), from the attacker's side", () => {
  const PLAN: ReadonlyArray<readonly [string, string]> = [
    ['access-control-allow-origin', PARTNER],
    ['access-control-allow-credentials', 'true'],
    ['access-control-expose-headers', 'AMP-Redirect-To'],
  ];
  it('a Response naming no Origin in Vary and holding no grant: the plan itself, the headers untouched', () => {
    const headers = new Headers({ vary: 'Accept-Encoding', 'access-control-max-age': '600' });
    expect(pairsOverUnnoted(headers, PLAN)).toBe(PLAN);
    expect([...headers]).toEqual([
      ['access-control-max-age', '600'],
      ['vary', 'Accept-Encoding'],
    ]);
  });
  for (const vary of ['Origin', 'accept-encoding, ORIGIN', ' origin ', '*'])
    it(`Vary "${vary}" and no grant (an inner denial): nothing kept, every CORS header removed`, () => {
      const headers = new Headers({ vary, 'access-control-allow-methods': 'PUT', 'access-control-max-age': '600' });
      expect(pairsOverUnnoted(headers, PLAN)).toEqual([]);
      expect([...headers].map(([name]) => name)).toEqual(['vary']);
    });
  it('a grant other than the plan\'s (another origin, "*", credentials without an origin): removed, nothing added', () => {
    const inits: Record<string, string>[] = [
      { 'access-control-allow-origin': 'https://evil.example', 'access-control-allow-credentials': 'true' },
      { 'access-control-allow-origin': '*' },
      { 'access-control-allow-credentials': 'true' },
    ];
    for (const init of inits) {
      const headers = new Headers(init);
      const kept = pairsOverUnnoted(headers, PLAN);
      // No Allow-Origin is kept or added; only a header the plan sets with the same value stays (credentials alone grant nothing).
      expect(kept.filter(([name]) => name === 'access-control-allow-origin')).toEqual([]);
      expect([...headers]).toEqual(kept.map(([name, value]) => [name, value]));
    }
  });
  it("only the plan's own values already there are kept", () => {
    const headers = new Headers({ vary: 'Origin', 'access-control-allow-origin': PARTNER, 'access-control-expose-headers': 'X-Secret' });
    expect(pairsOverUnnoted(headers, PLAN)).toEqual([PLAN[0]]);
    expect(headers.get('access-control-expose-headers')).toBeNull();
    expect(headers.get('access-control-allow-credentials')).toBeNull();
  });
});
