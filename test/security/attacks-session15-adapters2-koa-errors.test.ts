/**
 * Attacker's review, session 15 (helper-56): one Error object thrown by
 * later Koa middleware on several requests (a module-level promise that
 * rejected once, a library's error constant). ampcors hands Koa's error
 * handler the CORS headers of the request through the error's `headers`;
 * written into the shared object itself (as `@koa/cors` does), they stayed
 * there, and a later request — denied for that origin, answered without
 * credentials, or on a route with no CORS middleware at all — was answered
 * with an earlier request's `Access-Control-Allow-Origin` and
 * `-Credentials`. The attacker is a page on an origin allowed somewhere
 * (a partner widget) reading what it was never allowed to read.
 */
import { createRequire } from 'node:module';
import { ampCors } from '@ampcors/koa';
import Koa3 from 'koa';
import request from 'supertest';
import { describe, expect, it } from 'vitest';

const require = createRequire(import.meta.url);
const Koa2 = require('koa2') as typeof Koa3;

const PARTNER = 'https://partner.example';
type Middleware = Koa3.Middleware;

/** A promise that rejected once, as a module-level `const db = connect()` whose connection failed. */
function failedConnection(): { readonly db: Promise<never>; readonly error: Error } {
  const error = Object.assign(new Error('database unavailable'), { expose: true, status: 503 });
  const db = Promise.reject(error);
  db.catch(() => undefined);
  return { db, error };
}

for (const [name, Koa] of [
  ['Koa 3', Koa3],
  ['Koa 2', Koa2],
] as const) {
  describe(`${name}: an Error object thrown on several requests carries no request's CORS headers into another's answer`, () => {
    it('drop-in (onDenied omit): after an allowed /widget error, a denied /account error is not readable by the partner', async () => {
      const { db } = failedConnection();
      const app = new Koa();
      app.silent = true;
      app.use(ampCors({ origin: (ctx: Koa3.Context) => (ctx.path === '/widget' ? PARTNER : ''), credentials: true } as never) as never as Middleware);
      app.use(async () => {
        await db;
      });
      const server = app.callback();
      const widget = await request(server).get('/widget').set('Origin', PARTNER);
      expect(widget.status).toBe(503);
      expect(widget.headers['access-control-allow-origin']).toBe(PARTNER);
      const account = await request(server).get('/account').set('Origin', PARTNER);
      expect(account.status).toBe(503);
      expect(account.text).toBe('database unavailable');
      expect(account.headers['access-control-allow-origin']).toBeUndefined();
      expect(account.headers['access-control-allow-credentials']).toBeUndefined();
    });

    it('AMP mode: two policies on one app; the stricter one never answers with the other one`s allow', async () => {
      const { db } = failedConnection();
      const open = ampCors({ publishers: ['example.com', 'partner.example'] }) as never as Middleware;
      const strict = ampCors({ publishers: ['example.com'], onDenied: 'omit' }) as never as Middleware;
      const app = new Koa();
      app.silent = true;
      app.use((ctx, next) => (ctx.path.startsWith('/public') ? open(ctx, next) : strict(ctx, next)));
      app.use(async () => {
        await db;
      });
      const server = app.callback();
      for (let round = 0; round < 3; round += 1) {
        const allowed = await request(server).get('/public/widget').set('Origin', PARTNER);
        expect(allowed.headers['access-control-allow-origin']).toBe(PARTNER);
        const denied = await request(server).get('/private/account').set('Origin', PARTNER);
        expect(denied.headers['access-control-allow-origin']).toBeUndefined();
        expect(denied.headers['access-control-allow-credentials']).toBeUndefined();
      }
    });

    it('a credentials function: the request it answers false for gets no Access-Control-Allow-Credentials', async () => {
      const shared = new Error('unavailable');
      const app = new Koa();
      app.silent = true;
      app.use(ampCors({ publishers: ['example.com'], credentials: (ctx: Koa3.Context) => ctx.path.startsWith('/auth') } as never) as never as Middleware);
      app.use(() => {
        throw shared;
      });
      const server = app.callback();
      const auth = await request(server).get('/auth/me').set('Origin', 'https://example.com');
      expect(auth.headers['access-control-allow-credentials']).toBe('true');
      const open = await request(server).get('/public').set('Origin', 'https://example.com');
      expect(open.headers['access-control-allow-origin']).toBe('https://example.com');
      expect(open.headers['access-control-allow-credentials']).toBeUndefined();
    });

    it('a route with no CORS middleware that throws the same error sends no CORS header at all', async () => {
      const { db } = failedConnection();
      const cors = ampCors({ publishers: ['partner.example'] }) as never as Middleware;
      const app = new Koa();
      app.silent = true;
      app.use((ctx, next) => (ctx.path.startsWith('/public') ? cors(ctx, next) : next()));
      app.use(async () => {
        await db;
      });
      const server = app.callback();
      expect((await request(server).get('/public/widget').set('Origin', PARTNER)).headers['access-control-allow-origin']).toBe(PARTNER);
      const bare = await request(server).get('/private').set('Origin', PARTNER);
      expect(bare.status).toBe(503);
      expect(Object.keys(bare.headers).filter((header) => header.startsWith('access-control-'))).toEqual([]);
    });

    it('requests in flight at once, awaiting one rejected promise, each get their own answer', async () => {
      let fail: (error: Error) => void = () => undefined;
      const db = new Promise<never>((_resolve, reject) => {
        fail = reject;
      });
      db.catch(() => undefined);
      const app = new Koa();
      app.silent = true;
      app.use(ampCors({ origin: (ctx: Koa3.Context) => (ctx.path === '/widget' ? PARTNER : ''), credentials: true } as never) as never as Middleware);
      let waiting = 0;
      let allWaiting: () => void = () => undefined;
      const ready = new Promise<void>((resolve) => {
        allWaiting = resolve;
      });
      app.use(async () => {
        waiting += 1;
        if (waiting === 8) allWaiting();
        await db;
      });
      const server = app.listen(0);
      try {
        const paths = ['/widget', '/account', '/widget', '/account', '/account', '/widget', '/account', '/widget'];
        const answers = paths.map((path) =>
          request(server)
            .get(path)
            .set('Origin', PARTNER)
            .then((response) => ({ path, response })),
        );
        await ready;
        fail(new Error('database unavailable'));
        for (const { path, response } of await Promise.all(answers)) {
          expect(response.status).toBe(500);
          expect(response.headers['access-control-allow-origin']).toBe(path === '/widget' ? PARTNER : undefined);
          expect(response.headers['access-control-allow-credentials']).toBe(path === '/widget' ? 'true' : undefined);
        }
      } finally {
        server.close();
      }
    });

    it('the thrown object itself is never changed; what earlier middleware catches inherits from it', async () => {
      const { db, error } = failedConnection();
      let caught: unknown;
      const app = new Koa();
      app.silent = true;
      app.use(async (_ctx, next) => {
        try {
          await next();
        } catch (failure) {
          caught = failure;
          throw failure;
        }
      });
      app.use(ampCors({ origin: PARTNER, credentials: true } as never) as never as Middleware);
      app.use(async () => {
        await db;
      });
      const response = await request(app.callback()).get('/').set('Origin', PARTNER);
      expect(response.headers['access-control-allow-origin']).toBe(PARTNER);
      expect(Object.hasOwn(error, 'headers')).toBe(false);
      expect(caught).toBeInstanceOf(Error);
      expect(Object.getPrototypeOf(caught)).toBe(error);
      expect((caught as Error).message).toBe('database unavailable');
    });

    it('Vary stays one Origin however often one error is thrown', async () => {
      const shared = new Error('x');
      const app = new Koa();
      app.silent = true;
      app.use(ampCors({ publishers: ['example.com'] }) as never as Middleware);
      app.use(() => {
        throw shared;
      });
      const server = app.callback();
      for (let round = 0; round < 5; round += 1) {
        const preflight = await request(server).options('/').set('Origin', 'https://example.com').set('Access-Control-Request-Method', 'POST');
        expect(preflight.status).toBe(204);
        const get = await request(server).get('/').set('Origin', 'https://example.com');
        expect(get.headers.vary).toBe('Origin');
      }
    });
  });
}
