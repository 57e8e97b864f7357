/**
 * Attacker's review, session 16 (attack-adapters3/4): Koa answers that do
 * not come from `ctx.body` — `ctx.throw` with `headers` (mixed-case and
 * lower-case `Vary`), `throw null`, a thrown string, an error whose `headers`
 * getter throws, a `Headers` object as `err.headers`, a 405 with `Allow`,
 * a bare 304, `ctx.fresh`'s 304, `ctx.respond = false` with a raw
 * `writeHead`, `ctx.redirect` and `ctx.vary`, with GET,
 * HEAD, POST and a plain OPTIONS. The attacker sends any `Origin`. A hostile
 * origin never gets a CORS header (403 with `'reject'`); an allowed one gets
 * its grant and `Vary: Origin` on every answer that carries ampcors's
 * headers; without `Origin` nothing is granted. (A handler's own
 * `ctx.set('Vary', …)` replaces `Origin`, as in Express and the peers:
 * SECURITY.md, "A `Vary` the handler replaces".) (Koa's own hangs — a stream failing before
 * its first byte, a frozen thrown error — are Koa's, with or without
 * ampcors, and are not tested here.)
 */
import { ampCors } from '@ampcors/koa';
import Koa from 'koa';
import request from 'supertest';
import { describe, expect, it } from 'vitest';
import { CORS_HEADERS } from './cors-header-names.js';

const OWN = 'https://example.com';
const HOSTILE = ['https://evil.example', 'https://example.com.evil.example', 'null'];

function build(onDenied: 'reject' | 'omit') {
  const app = new Koa();
  app.silent = true;
  app.use(ampCors({ publishers: ['example.com'], onDenied }));
  app.use(async (ctx, next) => {
    switch (ctx.path) {
      case '/respond-false':
        ctx.respond = false;
        ctx.res.writeHead(200, { 'content-type': 'text/plain' });
        ctx.res.end('raw');
        return;
      case '/redirect':
        ctx.redirect('/x');
        return;
      case '/throw-headers':
        ctx.throw(401, 'no', { headers: { 'WWW-Authenticate': 'Basic', Vary: 'Accept', 'X-A': '1' } });
        return;
      case '/throw-headers-lc':
        ctx.throw(401, 'no', { headers: { vary: 'Accept' } });
        return;
      case '/throw-null':
        throw null;
      case '/throw-str':
        throw 'str';
      case '/throw-getter': {
        const e = new Error('g');
        Object.defineProperty(e, 'headers', {
          get() {
            throw new Error('getter');
          },
        });
        throw e;
      }
      case '/throw-headers-obj':
        throw Object.assign(new Error('h'), { status: 400, headers: new Headers({ 'X-A': '3' }) });
      case '/vary':
        ctx.vary('Accept');
        ctx.body = 'v';
        return;
      case '/allowed-methods':
        if (ctx.method === 'OPTIONS') {
          ctx.status = 200;
          ctx.set('Allow', 'GET');
          ctx.body = '';
          return;
        }
        ctx.throw(405, { headers: { Allow: 'GET' } });
        return;
      case '/304':
        ctx.status = 304;
        return;
      case '/fresh':
        ctx.set('ETag', '"e"');
        ctx.body = 'x';
        if (ctx.fresh) ctx.status = 304;
        return;
    }
    await next();
  });
  return app.callback();
}

type Method = 'get' | 'head' | 'post' | 'options';
/** Path → the status the handler answers with for a method; `cors: false` when its answer carries no ampcors header for anyone. */
const PATHS: ReadonlyArray<{ path: string; status: (m: Method) => number; cors?: false; extra?: Record<string, string> }> = [
  { path: '/respond-false', status: () => 200 },
  { path: '/redirect', status: () => 302 },
  { path: '/throw-headers', status: () => 401, extra: { 'x-a': '1', 'www-authenticate': 'Basic' } },
  { path: '/throw-headers-lc', status: () => 401 },
  { path: '/throw-null', status: () => 500 },
  { path: '/throw-str', status: () => 500 },
  { path: '/throw-getter', status: () => 500, cors: false },
  { path: '/throw-headers-obj', status: () => 400 },
  { path: '/vary', status: () => 200 },
  { path: '/allowed-methods', status: (m) => (m === 'options' ? 200 : 405), extra: { allow: 'GET' } },
  { path: '/304', status: () => 304 },
  { path: '/fresh', status: (m) => (m === 'get' || m === 'head' ? 304 : 200) },
  { path: '/none', status: () => 404 },
];

const varyList = (v: string | undefined): string[] => (v ?? '').split(',').map((s) => s.trim().toLowerCase());

function expectNoCors(headers: Record<string, string | undefined>, label: string): void {
  for (const name of CORS_HEADERS) expect(headers[name], `${label} ${name}`).toBeUndefined();
}

describe('Koa answers outside ctx.body keep the request decision', () => {
  for (const onDenied of ['reject', 'omit'] as const)
    for (const { path, status, cors, extra } of PATHS)
      it(`${onDenied} ${path}: the allowed origin's grant, nothing for hostile origins or no Origin`, async () => {
        const cb = build(onDenied);
        for (const method of ['get', 'head', 'post', 'options'] as const) {
          const label = `${method} ${path}`;
          const send = (origin?: string) => {
            let r = request(cb)[method](path);
            if (origin !== undefined) r = r.set('Origin', origin);
            if (path === '/fresh') r = r.set('If-None-Match', '"e"');
            return r;
          };
          const own = await send(OWN);
          expect(own.status, label).toBe(status(method));
          if (cors === false) expectNoCors(own.headers, label);
          else {
            expect(own.headers['access-control-allow-origin'], label).toBe(OWN);
            expect(own.headers['access-control-allow-credentials'], label).toBe('true');
            expect(varyList(own.headers.vary), label).toContain('origin');
          }
          for (const [name, value] of Object.entries(extra ?? {})) expect(own.headers[name], `${label} ${name}`).toBe(value);
          for (const origin of HOSTILE) {
            const res = await send(origin);
            expect(res.status, `${label} ${origin}`).toBe(onDenied === 'reject' ? 403 : status(method));
            expectNoCors(res.headers, `${label} ${origin}`);
            if (cors !== false || onDenied === 'reject') expect(varyList(res.headers.vary), label).toContain('origin');
          }
          const bare = await send();
          expect(bare.status, label).toBe(status(method));
          expectNoCors(bare.headers, label);
        }
      });

  it('an error thrown with a Headers object keeps no header from an earlier request', async () => {
    const cb = build('omit');
    const first = await request(cb).get('/throw-headers-obj').set('Origin', OWN);
    expect(first.headers['access-control-allow-origin']).toBe(OWN);
    for (const origin of HOSTILE) {
      const res = await request(cb).get('/throw-headers-obj').set('Origin', origin);
      expect(res.status).toBe(400);
      expectNoCors(res.headers, origin);
    }
  });
});
