/**
 * Attacker's review, session 17 (helper-117): a Fetch `Response` set as the Koa 3 body by middleware OUTSIDE ampCors after ampCors returned
 * (a fallback proxy after `await next()`, or an error handler answering with an upstream page) has its headers copied by
 * Koa 3's body setter when ampCors is no longer on the stack: the upstream's echo of a denied Origin with credentials
 * reaches the browser, and its `Vary: Accept-Encoding` replaces `Vary: Origin` on an allowed answer.
 */
import { ampCors } from '@ampcors/koa';
import Koa from 'koa';
import request from 'supertest';
import { describe, expect, it } from 'vitest';

const EVIL = 'https://evil.example';
const PARTNER = 'https://partner.example';
const upstream = (origin: string) =>
  new Response('secret of the user', {
    headers: { vary: 'Accept-Encoding', 'access-control-allow-origin': origin, 'access-control-allow-credentials': 'true' },
  });
type MW = (ctx: Koa.Context, next: Koa.Next) => unknown;

function appWith(outer: MW, inner?: MW): Koa {
  const app = new Koa();
  app.silent = true;
  app.use(outer as never);
  app.use(ampCors({ publishers: ['partner.example'], onDenied: 'omit' }) as never);
  if (inner) app.use(inner as never);
  return app;
}
const fallbackProxy: MW = async (ctx, next) => {
  await next();
  if (ctx.status === 404) ctx.body = upstream(ctx.get('Origin')); // the legacy backend answers what the app does not
};
const errorPage: MW = async (ctx, next) => {
  try {
    await next();
  } catch {
    ctx.body = upstream(ctx.get('Origin')); // an error page fetched from a CMS
  }
};
const boom: MW = () => {
  throw new Error('boom');
};

describe('a Response set outside ampCors after it returned (Koa 3)', () => {
  for (const [name, outer, inner] of [
    ['fallback proxy after next()', fallbackProxy, undefined],
    ['error page after a throw', errorPage, boom],
  ] as const) {
    it(`${name}: a denied Origin gets no grant`, async () => {
      const res = await request(appWith(outer, inner).callback()).get('/x').set('Origin', EVIL);
      expect(res.headers['access-control-allow-origin']).toBeUndefined();
      expect(res.headers['access-control-allow-credentials']).toBeUndefined();
      expect(res.headers.vary ?? '').toMatch(/origin/i);
    });
    it(`${name}: an upstream AMP grant for a denied sender goes too`, async () => {
      const app = new Koa();
      app.silent = true;
      app.use(async (ctx, next) => {
        await next().catch(() => undefined);
        if (ctx.status === 404 || ctx.status === 500 || inner !== undefined)
          ctx.body = new Response('x', { headers: { 'amp-email-allow-sender': 'evil@evil.example', 'amp-access-control-allow-source-origin': EVIL } });
      });
      app.use(ampCors({ publishers: ['partner.example'], email: { senders: ['news@partner.example'] }, onDenied: 'omit' }));
      if (inner) app.use(inner as never);
      const res = await request(app.callback()).get('/x').set('Origin', 'https://mail.google.com').set('AMP-Email-Sender', 'evil@evil.example');
      expect(res.headers['amp-email-allow-sender']).toBeUndefined();
      expect(res.headers['amp-access-control-allow-source-origin']).toBeUndefined();
    });
    it(`${name}: the allowed partner keeps Vary: Origin`, async () => {
      const res = await request(appWith(outer, inner).callback()).get('/x').set('Origin', PARTNER);
      expect(res.headers['access-control-allow-origin']).toBe(PARTNER);
      expect(res.headers.vary ?? '').toMatch(/origin/i);
    });
  }
});
