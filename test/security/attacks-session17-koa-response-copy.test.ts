/**
 * Attacker's review, session 17 (helper-104): Koa 3 copies a Fetch `Response` body's headers onto the Node response when
 * the body is set. Two ways that copy outlived ampCors's decision:
 * - the handler sets an upstream's Response, then throws, and an error-handling middleware placed before ampCors answers
 *   the error itself (keeping the response's headers): ampCors took the copied grant for a later layer's decision and
 *   rethrew untouched;
 * - the upstream's Response has an empty status (304, 204): Koa nulls the body before copying its headers, so after
 *   `next()` the body was no longer a Response.
 * Each from the attacker's side: a denied Origin (and the partner with a narrower grant) gets nothing the upstream echoed,
 * and `Vary` keeps `Origin`. Koa 2 copies nothing: the same assertions hold there too.
 */
import { ampCors } from '@ampcors/koa';
import Koa from 'koa';
import request from 'supertest';
import { describe, expect, it } from 'vitest';

const EVIL = 'https://evil.example';
const PARTNER = 'https://partner.example';

/** An upstream that echoes whatever Origin it is sent, with credentials and its own Vary. */
function upstream(origin: string, status = 200, body: string | null = '{"x":1}'): Response {
  return new Response(body, {
    status,
    headers: { 'access-control-allow-origin': origin, 'access-control-allow-credentials': 'true', vary: 'Accept-Encoding', etag: '"a"' },
  });
}

describe('Koa: a Response body, then a throw answered by an error middleware placed before ampCors', () => {
  for (const origin of [EVIL, PARTNER]) {
    it(`${origin}: the 500 carries no grant the policy does not make, and Vary names Origin`, async () => {
      const app = new Koa();
      app.use(async (ctx, next) => {
        try {
          await next();
        } catch (error) {
          ctx.status = 500;
          ctx.body = { error: String(error), user: 'alice@example.com' };
        }
      });
      // The partner is allowed without credentials: the upstream's -Credentials is not this policy's either.
      app.use(ampCors({ publishers: ['partner.example'], origins: [PARTNER], onDenied: 'omit' }));
      app.use(async (ctx) => {
        ctx.body = upstream(ctx.get('origin'));
        throw new Error('render failed');
      });
      const res = await request(app.callback()).get('/x').set('Origin', origin);
      expect(res.status).toBe(500);
      expect(res.headers['access-control-allow-origin']).toBe(origin === PARTNER ? PARTNER : undefined);
      if (origin === EVIL) expect(res.headers['access-control-allow-credentials']).toBeUndefined();
      expect(String(res.headers.vary)).toMatch(/origin/i);
    });
  }
});

describe('Koa: an upstream Response with an empty status as the body', () => {
  for (const status of [304, 204]) {
    it(`${status}: a denied Origin gets no grant, and Vary keeps Origin`, async () => {
      const app = new Koa();
      app.use(ampCors({ publishers: ['partner.example'], onDenied: 'omit' }));
      app.use(async (ctx) => {
        ctx.body = upstream(EVIL, status, null);
      });
      const res = await request(app.callback()).get('/x').set('Origin', EVIL);
      expect(res.status).toBe(status);
      expect([res.headers['access-control-allow-origin'], res.headers['access-control-allow-credentials']]).toEqual([undefined, undefined]);
      expect(String(res.headers.vary)).toMatch(/origin/i);
    });
  }
});
