/**
 * Attacker's review (session 14, helper-45; the Hono case added by the lead):
 * the look-alike guard of a Koa (or Hono) origin function asks it about canaries and look-alikes through a context
 * made about another `Origin` (drop-in-koa-cors.ts `contextAbout`). Node
 * keeps the `Origin` in more places than `headers`: `req.rawHeaders`, and
 * `req.headersDistinct` (computed from `rawHeaders`, cached on the request
 * once read). A view that only replaces `headers` lets a function reading
 * those places answer every question with the real `Origin`, so it never
 * allows the canary or the look-alike it was asked about: the guard passes
 * and `https://evilexample.com` reads credentialed responses.
 */
import { ampCors as honoCors } from '@ampcors/hono';
import { ampCors } from '@ampcors/koa';
import { getRequestListener } from '@hono/node-server';
import { Hono } from 'hono';
import Koa from 'koa';
import request from 'supertest';
import { describe, expect, it } from 'vitest';

const EVIL = 'https://evilexample.com';

type OriginFunction = (ctx: Koa.Context) => string;

async function attack(origin: OriginFunction) {
  const app = new Koa();
  app.silent = true;
  app.use(ampCors({ origin, credentials: true } as never) as never);
  app.use((ctx) => {
    ctx.body = { secret: 'user data' };
  });
  return request(app.callback()).get('/api').set('Origin', EVIL).set('Cookie', 'session=victim');
}

const readable = (res: request.Response) => res.headers['access-control-allow-origin'] === EVIL && res.headers['access-control-allow-credentials'] === 'true';
const suffix = (o: string) => (o.endsWith('example.com') ? o : '');

describe('attack: a Koa origin function reading the Origin from Node request fields the guard view does not replace', () => {
  it('control: read with ctx.get, the suffix check without its dot is caught', async () => {
    expect(readable(await attack((ctx) => suffix(ctx.get('Origin'))))).toBe(false);
  });
  it('read from ctx.req.headersDistinct, evilexample.com cannot read the credentialed answer', async () => {
    const distinct = (ctx: Koa.Context) =>
      (ctx.req as unknown as { headersDistinct?: Record<string, string[] | undefined> }).headersDistinct?.origin?.[0] ?? '';
    expect(readable(await attack((ctx) => suffix(distinct(ctx))))).toBe(false);
  });
  it('read from ctx.req.rawHeaders, evilexample.com cannot read the credentialed answer', async () => {
    const raw = (ctx: Koa.Context) => {
      const lines = (ctx.req as { rawHeaders?: string[] }).rawHeaders ?? [];
      const at = lines.findIndex((line, i) => i % 2 === 0 && line.toLowerCase() === 'origin');
      return at < 0 ? '' : (lines[at + 1] ?? '');
    };
    expect(readable(await attack((ctx) => suffix(raw(ctx))))).toBe(false);
  });
});

describe("attack: a Hono origin function reading the Origin from @hono/node-server's Node request (c.env.incoming)", () => {
  async function honoAttack(read: (incoming: { headers: Record<string, unknown>; rawHeaders: string[] }) => string) {
    const app = new Hono<{ Bindings: { incoming: { headers: Record<string, unknown>; rawHeaders: string[] } } }>();
    app.use(honoCors({ origin: (_origin, c) => suffix(read(c.env.incoming)), credentials: true }));
    app.get('/api', (c) => c.json({ secret: 'user data' }));
    return request(getRequestListener(app.fetch)).get('/api').set('Origin', EVIL).set('Cookie', 'session=victim');
  }
  it('control: the Origin the function is given, checked without its dot, is caught', async () => {
    const app = new Hono();
    app.use(honoCors({ origin: (origin) => suffix(origin), credentials: true }));
    app.get('/api', (c) => c.json({ secret: 'user data' }));
    expect(readable(await request(getRequestListener(app.fetch)).get('/api').set('Origin', EVIL))).toBe(false);
  });
  it('read from c.env.incoming.headers, evilexample.com cannot read the credentialed answer', async () => {
    expect(readable(await honoAttack((incoming) => String(incoming.headers['origin'] ?? '')))).toBe(false);
  });
  it('read from c.env.incoming.rawHeaders, evilexample.com cannot read the credentialed answer', async () => {
    expect(
      readable(
        await honoAttack(
          (incoming) => incoming.rawHeaders[incoming.rawHeaders.findIndex((line, i) => i % 2 === 0 && line.toLowerCase() === 'origin') + 1] ?? '',
        ),
      ),
    ).toBe(false);
  });
});
