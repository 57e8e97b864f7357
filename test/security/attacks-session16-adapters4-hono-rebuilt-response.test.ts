/**
 * HOLE (attacker's review, session 16, attack-adapters4): nested ampCors where a layer between them REBUILDS the
 * Response (`hono/compress`, `hono/etag`'s 304, Hono's own HEAD handling `new Response(null, res)`, any
 * `c.res = new Response(c.res.body, c.res)`). The rebuilt Response carries no written-response note (core's
 * written-responses.ts), so the outer layer (a Fetch `withAmpCors` around `app.fetch`, or an app-wide Hono ampCors
 * around `app.mount`) takes it for a fresh handler answer and writes ITS allow with credentials over the inner denial:
 * the partner reads /admin (gzip body) with cookies. Each case asserts the SAFE behaviour, so it fails today.
 */
import { withAmpCors } from '@ampcors/fetch';
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
          if (between === 'hono/etag 304') headers['if-none-match'] = (await app.request('/admin/secret', { headers: { origin: OWN } })).headers.get('etag') ?? '';
          const r = await outer(new Request('https://api.example.com/admin/secret', { method, headers }));
          expect([r.headers.get('access-control-allow-origin'), r.headers.get('access-control-allow-credentials')]).toEqual([null, null]);
        });
      }
  it('control: the publisher still gets its grant through compress', async () => {
    const app = new Hono();
    app.use(compress());
    app.use('/admin/*', ampCors(INNER));
    app.get('/admin/secret', (c) => c.text(SECRET));
    const r = await withAmpCors((req: Request) => app.fetch(req), OUTER)(new Request('https://api.example.com/admin/secret', { headers: { origin: OWN, 'accept-encoding': 'gzip' } }));
    expect([r.status, r.headers.get('access-control-allow-origin'), r.headers.get('content-encoding')]).toEqual([200, OWN, 'gzip']);
  });
});

describe('Hono app-wide ampCors (partner allowed), hono/compress, and app.mount of a withAmpCors denying the partner', () => {
  it('GET /admin/secret from the partner: no grant', async () => {
    const app = new Hono();
    app.use(ampCors(OUTER));
    app.use(compress());
    app.mount('/admin', withAmpCors(() => new Response(SECRET, { headers: { 'content-type': 'text/plain' } }), { ...INNER, onDenied: 'omit' }));
    const r = await app.request('/admin/secret', { headers: { origin: PARTNER, 'accept-encoding': 'gzip' } });
    expect(r.headers.get('content-encoding')).toBe('gzip');
    expect([r.headers.get('access-control-allow-origin'), r.headers.get('access-control-allow-credentials')]).toEqual([null, null]);
  });
});
