/**
 * Attacker's review (session 17, helper-114; fixed by fix-budget): the drop-in credentials guard asks an options
 * delegate (Express) or origin function (Koa) about copies of the request in which every value showing the real
 * origin is rewritten (asked-origin.ts). A value packed with escapes of every kind (percent, string, legacy `%u`)
 * has hundreds of readings: 16 kB cost ~100-200 ms per question, and a credentialed allow asks ~15 questions, so
 * one request forging an allowed `Origin` cost seconds of CPU. The rewrite now has a work budget per value; past
 * it, the questions are unknown and the request gets no credentials (failing closed: a garbled or half-rewritten
 * copy would make the function say "no" to every look-alike, which passes the guard), this request only: the
 * next ordinary request from the allowed origin gets its credentials.
 */
import { exhaustedRewrites, originRewriter, type OriginRewriter } from '@ampcors/core/adapter';
import { ampCors as expressAmpCors } from '@ampcors/express';
import { ampCors as honoAmpCors } from '@ampcors/hono';
import { ampCors as koaAmpCors } from '@ampcors/koa';
import express from 'express';
import { Hono } from 'hono';
import Koa from 'koa';
import request from 'supertest';
import { describe, expect, it } from 'vitest';

const ALLOWED = 'https://www.example.com';
/** Mixed escapes around the allowed host (each kind of decoding, nested), repeated. */
const UNIT = 'https://www%u002eexample.com%25u%5C%E4\\%25%u0025u0025%25255C%25u0025\\%25u0025%25255C%255C%5C%u0065';
const hostile = (length: number): string => UNIT.repeat(Math.ceil(length / UNIT.length)).slice(0, length);
type Seen = { acao: string | undefined; credentials: string | undefined };
type Callback = (error: null, options: object) => void;

/** An exact-list delegate that reads the query too (as a function logging or checking a return URL does). */
function expressApp(): express.Express {
  const app = express();
  app.use(
    expressAmpCors(((req: express.Request, cb: Callback) => {
      void String((req.query as Record<string, unknown>)['q']);
      cb(null, { origin: req.headers.origin === ALLOWED ? ALLOWED : false, credentials: true });
    }) as never),
  );
  app.get('/api', (_req, res) => void res.json({ secret: 1 }));
  return app;
}
function koaApp(): Koa {
  const app = new Koa();
  app.silent = true;
  app.use(
    koaAmpCors({
      origin: ((ctx: Koa.Context) => {
        void String(ctx.query['q']);
        return ctx.get('Origin') === ALLOWED ? ALLOWED : '';
      }) as never,
      credentials: true,
    }) as never,
  );
  app.use((ctx) => {
    ctx.body = { secret: 1 };
  });
  return app;
}
function honoApp(): Hono {
  const app = new Hono();
  app.use(
    '/api',
    honoAmpCors({
      origin: ((origin: string, c: import('hono').Context) => {
        void String(c.req.query('q'));
        return origin === ALLOWED ? ALLOWED : null;
      }) as never,
      credentials: true,
    }) as never,
  );
  app.get('/api', (c) => c.json({ secret: 1 }));
  return app;
}
const APPS: ReadonlyArray<readonly [string, () => (target: string) => Promise<Seen>]> = [
  [
    'express',
    () => {
      const app = expressApp();
      return async (target) => {
        const res = await request(app).get(target).set({ Origin: ALLOWED, Cookie: 'session=victim' });
        return { acao: res.headers['access-control-allow-origin'], credentials: res.headers['access-control-allow-credentials'] };
      };
    },
  ],
  [
    'koa',
    () => {
      const app = koaApp().callback();
      return async (target) => {
        const res = await request(app).get(target).set({ Origin: ALLOWED, Cookie: 'session=victim' });
        return { acao: res.headers['access-control-allow-origin'], credentials: res.headers['access-control-allow-credentials'] };
      };
    },
  ],
  [
    'hono',
    () => {
      const app = honoApp();
      return async (target) => {
        const res = await app.request(`http://api.example.test${target}`, { headers: { Origin: ALLOWED, Cookie: 'session=victim' } });
        return {
          acao: res.headers.get('access-control-allow-origin') ?? undefined,
          credentials: res.headers.get('access-control-allow-credentials') ?? undefined,
        };
      };
    },
  ],
];

describe('a value too costly to rewrite for the guard questions (forged allowed Origin)', () => {
  for (const [name, make] of APPS) {
    it(`${name}: no credentials for that request, bounded work, and the next ordinary request is answered`, async () => {
      const send = make();
      // The value stays under Node's 16 kB header limit once percent-encoded on the wire.
      const target = `/api?q=${encodeURIComponent(hostile(5000))}`;
      expect(target.length).toBeLessThan(15000);
      const before = exhaustedRewrites();
      const attacked = await send(target);
      // The budget ran out (the work stopped there) ...
      expect(exhaustedRewrites()).toBeGreaterThan(before);
      // ... and the request failed closed: no credentials.
      expect(attacked.credentials).toBeUndefined();
      // Not remembered: the allowed origin's next request gets credentials (one hostile request cannot disable them).
      const next = await send('/api?q=ordinary');
      expect(next).toEqual({ acao: ALLOWED, credentials: 'true' });
    });
  }
});

describe('the work of one rewrite is bounded per character', () => {
  it('a 16 kB value of mixed escapes costs a bounded multiple of a mildly escaped one of the same length', () => {
    const rewrite = originRewriter(ALLOWED, 'https://ampcorscanaryabc.invalid') as OriginRewriter;
    const mild = 'https://www.example.com/%20a%2Fb '.repeat(500).slice(0, 16384);
    /** The shortest of five timings (a fresh suffix each: nothing is cached by value). */
    const timed = (value: string): number => {
      let best = Number.POSITIVE_INFINITY;
      for (let round = 0; round < 5; round++) {
        const start = performance.now();
        rewrite.text(`${value}${round}`);
        best = Math.min(best, performance.now() - start);
      }
      return best;
    };
    timed(mild);
    const before = exhaustedRewrites();
    const ratio = timed(hostile(16384)) / Math.max(timed(mild), 0.01);
    expect(exhaustedRewrites() - before).toBe(5);
    // Measured ~150 with the budget (~30 ms against ~0.2 ms); ~500 without it (~100 ms).
    expect(ratio).toBeLessThan(300);
  });
});
