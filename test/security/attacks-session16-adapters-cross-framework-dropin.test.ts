/**
 * Attacker's review, session 16 (helper-74): the cross-framework nesting of
 * attacks-session16-adapters-cross-framework.test.ts with the drop-in
 * options, whose peers pass a denied origin on without CORS headers (and so
 * serve the body): an app-wide Express ampCors with `cors`'s options
 * (`origin` list, credentials) and, on /admin, a Koa app with `@koa/cors`'s
 * options or a Hono app with `hono/cors`'s, each allowing the publisher
 * only. The partner read /admin with the outer policy's
 * `Access-Control-Allow-Origin` and `-Credentials`; with an AMP-mode inner
 * policy (`onDenied: 'reject'`, the default) its 403 carried them too.
 * Fixed with the rest (core's nested-policies.ts, 4.).
 */
import { ampCors as expressCors } from '@ampcors/express';
import { ampCors as honoCors } from '@ampcors/hono';
import { ampCors as koaCors } from '@ampcors/koa';
import { getRequestListener } from '@hono/node-server';
import express from 'express';
import { Hono } from 'hono';
import Koa from 'koa';
import type { IncomingMessage, ServerResponse } from 'node:http';
import request from 'supertest';
import { describe, expect, it } from 'vitest';
import { corsOf } from './cors-header-names.js';

const PARTNER = 'https://partner.example';
const OWN = 'https://example.com';
/** The application-wide policy, in `cors`'s options: the partner and the publisher, with credentials. */
const OUTER = { origin: [PARTNER, OWN], credentials: true };

/** Express with `ampCors(OUTER)` on every path and `admin` (a Node listener) on /admin; `GET /admin/x` from `origin`. */
async function through(admin: (req: IncomingMessage, res: ServerResponse) => void, origin: string) {
  const app = express();
  app.use(expressCors(OUTER));
  app.use('/admin', admin as express.RequestHandler);
  const r = await request(app).get('/admin/x').set('Origin', origin);
  return { status: r.status, cors: corsOf(r.headers as Record<string, string>), text: r.text };
}

/** A Koa app: `@koa/cors`'s origin function allowing the publisher only, with credentials. */
function koaAdmin() {
  const koa = new Koa();
  koa.use(koaCors({ origin: (ctx) => (ctx.req.headers.origin === OWN ? OWN : ''), credentials: true }));
  koa.use((ctx) => void (ctx.body = 'secret'));
  return koa.callback();
}

/** A Hono app under `@hono/node-server`: `hono/cors`'s origin list, the publisher only, with credentials. */
function honoAdmin() {
  const hono = new Hono();
  hono.use('*', honoCors({ origin: [OWN], credentials: true }));
  hono.get('*', (c) => c.text('secret'));
  return getRequestListener(hono.fetch);
}

describe.each([
  ['a Koa app with `@koa/cors` options', koaAdmin],
  ['a Hono app with `hono/cors` options', honoAdmin],
])('an Express ampCors with `cors` options, and on /admin %s allowing the publisher only', (_name, admin) => {
  it('the partner: the body, without any CORS header (the outer allow is gone)', async () => {
    const answer = await through(admin(), PARTNER);
    expect([answer.status, answer.text, answer.cors]).toEqual([200, 'secret', {}]);
  });

  it('the publisher: the inner headers', async () => {
    const answer = await through(admin(), OWN);
    expect([answer.status, answer.cors['access-control-allow-origin'], answer.cors['access-control-allow-credentials']]).toEqual([200, OWN, 'true']);
  });
});

it("an AMP-mode Koa ampCors on /admin (onDenied 'reject', the default) under an Express ampCors allowing the partner: its 403 carries no CORS header", async () => {
  const koa = new Koa();
  koa.use(koaCors({ publishers: ['example.com'] }));
  koa.use((ctx) => void (ctx.body = 'secret'));
  const app = express();
  app.use(expressCors({ publishers: ['partner.example', 'example.com'] }));
  app.use('/admin', koa.callback());
  const r = await request(app).get('/admin/x').set('Origin', PARTNER);
  expect([r.status, r.text.includes('secret'), corsOf(r.headers as Record<string, string>)]).toEqual([403, false, {}]);
});
