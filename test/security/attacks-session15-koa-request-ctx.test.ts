/**
 * Attacker's review (session 15; lead seen by helper-48, tested and fixed by helper-51): the look-alike guard of a
 * Koa origin function asks it about canaries and look-alikes through a context made about another `Origin`
 * (drop-in-koa-cors.ts `contextAbout`). Koa links its objects to each other: `ctx.request.ctx` and
 * `ctx.response.ctx` are the context, `ctx.response.request` and `ctx.request.response` each other, and
 * `ctx.response.req` the Node request. A question context whose `request` and `response` inherit those links
 * from the real ones answers every question with the real `Origin` through them: the function never allows the
 * canary or look-alike it is asked about, the guard passes, and `https://evilexample.com` reads credentialed
 * responses. Each test is the attacker's read: GET /api from the look-alike, with the victim's cookie.
 */
import { ampCors } from '@ampcors/koa';
import Koa from 'koa';
import request from 'supertest';
import { describe, expect, it } from 'vitest';

const EVIL = 'https://evilexample.com';

async function attack(origin: (ctx: Koa.Context) => string | Promise<string>) {
  const app = new Koa();
  app.silent = true;
  app.use(ampCors({ origin, credentials: true } as never) as never);
  app.use((ctx) => {
    ctx.body = { secret: 'user data' };
  });
  return request(app.callback()).get('/api').set('Origin', EVIL).set('Cookie', 'session=victim');
}

const readable = (res: request.Response) => res.headers['access-control-allow-origin'] === EVIL || res.headers['access-control-allow-credentials'] === 'true';
/** The suffix check without its dot, which the guard exists to catch. */
const suffix = (o: string | undefined) => (o?.endsWith('example.com') ? o : '');

/** Every path from a Koa context back to its `Origin` header that Koa's own links offer. */
const PATHS: ReadonlyArray<readonly [string, (ctx: Koa.Context) => string | undefined]> = [
  ['ctx.get (control)', (ctx) => ctx.get('Origin')],
  ['ctx.request.ctx.get', (ctx) => ctx.request.ctx.get('Origin')],
  ['ctx.request.ctx.request.headers', (ctx) => ctx.request.ctx.request.headers.origin],
  ['ctx.request.ctx.req.headers', (ctx) => ctx.request.ctx.req.headers.origin],
  ['ctx.response.ctx.get', (ctx) => ctx.response.ctx.get('Origin')],
  ['ctx.response.request.get', (ctx) => ctx.response.request.get('Origin')],
  ['ctx.response.req.headers', (ctx) => ctx.response.req.headers.origin],
  ['ctx.request.response.ctx.get', (ctx) => ctx.request.response.ctx.get('Origin')],
  ['ctx.request.response.req.headers', (ctx) => ctx.request.response.req.headers.origin],
  [
    'ctx.response.request.req.rawHeaders',
    (ctx) =>
      ctx.response.request.req.rawHeaders[ctx.response.request.req.rawHeaders.findIndex((line, i) => i % 2 === 0 && line.toLowerCase() === 'origin') + 1],
  ],
  ['ctx.request.origin is not the Origin header: ctx.request.ctx.header', (ctx) => ctx.request.ctx.header.origin],
];

describe("attack: a Koa origin function reading the Origin through Koa's links between context, request and response", () => {
  it.each(PATHS)('%s: evilexample.com cannot read the credentialed answer', async (_name, read) => {
    const res = await attack((ctx) => suffix(read(ctx)));
    expect(readable(res)).toBe(false);
    // Refused as a look-alike (500), not merely missed.
    expect(res.status).toBe(500);
  });

  it.each(PATHS)('%s, asynchronously: evilexample.com cannot read the credentialed answer', async (_name, read) => {
    const res = await attack(async (ctx) => suffix(read(ctx)));
    expect(readable(res)).toBe(false);
    expect(res.status).toBe(500);
  });

  it('a tight function reading the same paths still answers its own origin with credentials', async () => {
    for (const [, read] of PATHS) {
      const app = new Koa();
      app.silent = true;
      app.use(
        ampCors({
          origin: (ctx: Koa.Context) => (read(ctx) === 'https://www.example.com' ? 'https://www.example.com' : ''),
          credentials: true,
        } as never) as never,
      );
      app.use((ctx) => {
        ctx.body = 'ok';
      });
      const res = await request(app.callback()).get('/api').set('Origin', 'https://www.example.com');
      expect([res.status, res.headers['access-control-allow-origin'], res.headers['access-control-allow-credentials']]).toEqual([
        200,
        'https://www.example.com',
        'true',
      ]);
    }
  });

  it('every Koa link of the real context and of each question context leads back to the context asked', async () => {
    const seen: unknown[] = [];
    const res = await attack((ctx) => {
      seen.push(ctx.request.ctx === ctx, ctx.response.ctx === ctx, ctx.response.request === ctx.request, ctx.request.response === ctx.response);
      return suffix(ctx.get('Origin'));
    });
    expect(res.status).toBe(500);
    // The real context and every question context are consistent: each link leads back to the context asked.
    expect(seen.length).toBeGreaterThan(4);
    expect(seen.every((linked) => linked === true)).toBe(true);
  });
});
