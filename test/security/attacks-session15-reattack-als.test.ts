/**
 * Attacker's review, session 15 (helper-61): async local storage as a path
 * from the guard's question context back to the real `Origin`. With
 * `new Koa({ asyncLocalStorage: true })`, a loose origin function that reads
 * "the current request" through `app.currentContext` (directly, or in a
 * helper, which is what Koa's option is for) saw the real `Origin` in every
 * canary and look-alike question, since the questions ran inside the real
 * request's async context: `https://evilexample.com` read credentialed
 * responses. Questions now run inside Koa's own store with the question
 * context. (Hono's `hono/context-storage` keeps its store private: the
 * limit is documented in SECURITY.md and the Hono README.)
 */
import { createRequire } from 'node:module';
import { ampCors } from '@ampcors/koa';
import Koa3 from 'koa';
import request from 'supertest';
import { describe, expect, it } from 'vitest';

const require = createRequire(import.meta.url);
const Koa2 = require('koa2') as typeof Koa3;

const EVIL = 'https://evilexample.com';
const OWN = 'https://www.example.com';
/** The loose check the attacker exploits: anything ending in example.com. */
const loose = (origin: string | undefined): string => (origin?.endsWith('example.com') ? origin : '');
/** A tight check of the same data. */
const tight = (origin: string | undefined): string => (origin === OWN ? origin : '');

type Read = (app: Koa3, ctx: Koa3.Context) => string | undefined;
const READS: Record<string, Read> = {
  'ctx.app.currentContext': (_app, ctx) => ctx.app.currentContext?.get('Origin'),
  'app.currentContext in a helper': (app) => app.currentContext?.get('Origin'),
  'app.currentContext after an await': (app) => app.currentContext?.get('Origin'),
};

for (const [name, Koa] of [
  ['Koa 3', Koa3],
  ['Koa 2', Koa2],
] as const) {
  describe(`${name} with asyncLocalStorage: an origin function reading app.currentContext`, () => {
    for (const [how, read] of Object.entries(READS)) {
      const awaits = how.endsWith('await');
      const appWith = (check: (origin: string | undefined) => string): Koa3 => {
        const app = new Koa({ asyncLocalStorage: true });
        app.silent = true;
        const origin = awaits
          ? async (ctx: Koa3.Context) => {
              await new Promise((resolve) => setImmediate(resolve));
              return check(read(app, ctx));
            }
          : (ctx: Koa3.Context) => check(read(app, ctx));
        app.use(ampCors({ origin, credentials: true } as never) as never);
        app.use((ctx) => {
          ctx.body = 'secret';
        });
        return app;
      };

      it(`${how}: a loose check is refused with credentials (nothing readable by ${EVIL})`, async () => {
        const response = await request(appWith(loose).callback()).get('/api').set('Origin', EVIL).set('Cookie', 's=victim');
        expect(response.status).toBe(500);
        expect(response.headers['access-control-allow-origin']).toBeUndefined();
        expect(response.headers['access-control-allow-credentials']).toBeUndefined();
      });

      it(`${how}: a tight check keeps its own origin with credentials`, async () => {
        const app = appWith(tight);
        const own = await request(app.callback()).get('/api').set('Origin', OWN);
        expect(own.status).toBe(200);
        expect(own.headers['access-control-allow-origin']).toBe(OWN);
        expect(own.headers['access-control-allow-credentials']).toBe('true');
        const evil = await request(app.callback()).get('/api').set('Origin', EVIL);
        expect(evil.headers['access-control-allow-origin']).toBeUndefined();
      });
    }

    it('after the questions, the real request is the current context again', async () => {
      const app = new Koa({ asyncLocalStorage: true });
      app.silent = true;
      let seen: string | undefined;
      app.use(ampCors({ origin: (ctx: Koa3.Context) => tight(ctx.get('Origin')), credentials: true } as never) as never);
      app.use((ctx) => {
        seen = app.currentContext?.get('Origin');
        ctx.body = 'ok';
      });
      const response = await request(app.callback()).get('/api').set('Origin', OWN);
      expect(response.headers['access-control-allow-origin']).toBe(OWN);
      expect(seen).toBe(OWN);
    });
  });
}
