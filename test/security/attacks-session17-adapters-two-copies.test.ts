/**
 * Attacker's review, session 17 (helper-115): ampcors loaded twice in one
 * process (the dual-package hazard: `import '@ampcors/fetch'` in the app and
 * `require` of a router built on it load its ESM and its CommonJS build,
 * each with its own core). Everything one ampCors layer leaves for another
 * (the note on a Response it wrote into, the mark on a Request it decided,
 * the count of writes per `Origin`, the adapters' tables of innermost
 * decisions) was kept per copy: an outer layer of one copy met the answer
 * of an inner layer of the other as a Response nobody wrote into, and put
 * its allow, with `Access-Control-Allow-Credentials`, over the inner
 * policy's denial. Fixed in core's nested-policies.ts, 6.: the copies of
 * one realm share that state; a copy that meets the state of another
 * version treats every answer as possibly an inner layer's (fail closed).
 * Two copies are made here with `vi.resetModules()` (a second load of every
 * module, core included), under the runtime's Response and under
 * `@hono/node-server`'s.
 */
import { getRequestListener } from '@hono/node-server';
import express from 'express';
import { Hono } from 'hono';
import Koa from 'koa';
import request from 'supertest';
import { describe, expect, it, vi } from 'vitest';

const PARTNER = 'https://partner.example';
/** The application-wide policy: the partner and the publisher (credentials, as every ampCors allow). */
const OUTER = { publishers: ['partner.example', 'example.com'] };
/** The stricter policy on /admin: the publisher only; a denied Origin passes on without CORS headers. */
const INNER = { publishers: ['example.com'], onDenied: 'omit' as const };
const fromPartner = (path = '/admin/secret') => new Request(`https://api.example.com${path}`, { headers: { origin: PARTNER } });
const fromPublisher = (path = '/admin/secret') => new Request(`https://api.example.com${path}`, { headers: { origin: 'https://example.com' } });
const REALM = Symbol.for('@ampcors/core/nested-state');

/** Two loads of the Fetch and Hono adapters, each with its own core. */
async function twoCopies() {
  const a = { fetch: await import('@ampcors/fetch'), hono: await import('@ampcors/hono') };
  vi.resetModules();
  const b = { fetch: await import('@ampcors/fetch'), hono: await import('@ampcors/hono') };
  expect(a.fetch.withAmpCors).not.toBe(b.fetch.withAmpCors);
  return { a, b };
}

/** Each way two copies nest: the outer copy's layer over the inner copy's denying one. */
type Copy = Awaited<ReturnType<typeof twoCopies>>['a'];
const nestings: ReadonlyArray<readonly [string, (outer: Copy, inner: Copy) => (request: Request) => Promise<Response> | Response]> = [
  [
    'Fetch withAmpCors over Fetch withAmpCors',
    (outer, inner) =>
      outer.fetch.withAmpCors(
        inner.fetch.withAmpCors(() => new Response('secret'), INNER),
        OUTER,
      ),
  ],
  [
    'Hono ampCors app-wide, app.mount of a Fetch withAmpCors',
    (outer, inner) => {
      const app = new Hono();
      app.use(outer.hono.ampCors(OUTER));
      app.mount(
        '/admin',
        inner.fetch.withAmpCors(() => new Response('secret'), INNER),
      );
      return (request) => app.fetch(request);
    },
  ],
  [
    'Hono ampCors app-wide, Hono ampCors on /admin',
    (outer, inner) => {
      const app = new Hono();
      app.use(outer.hono.ampCors(OUTER));
      app.use('/admin/*', inner.hono.ampCors(INNER));
      app.get('/admin/secret', (c) => c.text('secret'));
      return (request) => app.fetch(request);
    },
  ],
  [
    'Fetch withAmpCors over a Hono app with Hono ampCors',
    (outer, inner) => {
      const app = new Hono();
      app.use(inner.hono.ampCors(INNER));
      app.get('/admin/secret', (c) => c.text('secret'));
      return outer.fetch.withAmpCors((request: Request) => app.fetch(request), OUTER);
    },
  ],
];

describe('a copy that meets the shared state of another version', () => {
  it('treats an unnoted answer for the same Origin as an inner layer might have: no grant over a denial', async () => {
    // A copy of another (future) version was loaded first: its state is not this version's.
    const foreign = { version: 0, mixed: false, parts: new Map() };
    Object.defineProperty(globalThis, REALM, { value: foreign, configurable: true });
    vi.resetModules();
    const a = { fetch: await import('@ampcors/fetch'), hono: await import('@ampcors/hono') };
    expect(foreign.mixed).toBe(true);
    delete (globalThis as Record<symbol, unknown>)[REALM];
    vi.resetModules();
    const b = { fetch: await import('@ampcors/fetch'), hono: await import('@ampcors/hono') };
    const response = await a.fetch.withAmpCors(
      b.fetch.withAmpCors(() => new Response('secret'), INNER),
      OUTER,
    )(fromPartner());
    expect(response.headers.get('access-control-allow-origin')).toBeNull();
    expect(response.headers.get('access-control-allow-credentials')).toBeNull();
    // The publisher, allowed by both, is still allowed.
    const allowed = await a.fetch.withAmpCors(
      b.fetch.withAmpCors(() => new Response('secret'), INNER),
      OUTER,
    )(fromPublisher());
    expect(allowed.headers.get('access-control-allow-origin')).toBe('https://example.com');
  });
});

for (const server of ['runtime', 'node-server'] as const)
  describe(`two copies, ${server === 'runtime' ? "the runtime's Response" : "@hono/node-server's Response"}`, () => {
    for (const [name, nest] of nestings)
      for (const [outerName, innerName] of [
        ['A', 'B'],
        ['B', 'A'],
        ['A', 'A'],
      ] as const)
        it(`${name} (outer copy ${outerName}, inner ${innerName}): the inner denial stands, the publisher is allowed`, async () => {
          if (server === 'node-server') getRequestListener(() => new Response('x'));
          const copies = await twoCopies();
          const handler = nest(copies[outerName.toLowerCase() as 'a'], copies[innerName.toLowerCase() as 'a']);
          const denied = await handler(fromPartner());
          expect(denied.headers.get('access-control-allow-origin')).toBeNull();
          expect(denied.headers.get('access-control-allow-credentials')).toBeNull();
          expect(await denied.text()).toBe('secret');
          const allowed = await handler(fromPublisher());
          expect(allowed.headers.get('access-control-allow-origin')).toBe('https://example.com');
          expect(allowed.headers.get('access-control-allow-credentials')).toBe('true');
        });
  });

/** Two loads of the Express and Koa adapters, each with its own core. */
async function twoNodeCopies() {
  const a = { express: await import('@ampcors/express'), koa: await import('@ampcors/koa') };
  vi.resetModules();
  const b = { express: await import('@ampcors/express'), koa: await import('@ampcors/koa') };
  expect(a.koa.ampCors).not.toBe(b.koa.ampCors);
  return { a, b };
}
type NodeCopy = Awaited<ReturnType<typeof twoNodeCopies>>['a'];
/** What the handler on /admin answers: a string, a Fetch Response (Koa 3 copies its headers), an error. */
const koaBodies = [
  ['a string', (ctx: Koa.Context) => void (ctx.body = 'secret')],
  ['a Fetch Response', (ctx: Koa.Context) => void (ctx.body = new Response('secret'))],
  [
    'a Fetch Response with a grant of its own',
    (ctx: Koa.Context) =>
      void (ctx.body = new Response('secret', { headers: { 'Access-Control-Allow-Origin': PARTNER, 'Access-Control-Allow-Credentials': 'true' } })),
  ],
  [
    'an error',
    () => {
      throw Object.assign(new Error('secret'), { status: 418, expose: true });
    },
  ],
] as const;
const nodeNestings: ReadonlyArray<readonly [string, (outer: NodeCopy, inner: NodeCopy, body: (typeof koaBodies)[number][1]) => Parameters<typeof request>[0]]> =
  [
    [
      'Express ampCors app-wide, Express ampCors on /admin',
      (outer, inner) => {
        const app = express();
        app.use(outer.express.ampCors(OUTER));
        app.use('/admin', inner.express.ampCors(INNER));
        app.get('/admin/secret', (_req, res) => void res.send('secret'));
        return app;
      },
    ],
    [
      'Koa ampCors app-wide, Koa ampCors on /admin',
      (outer, inner, body) => {
        const app = new Koa();
        const admin = inner.koa.ampCors(INNER);
        app.use(outer.koa.ampCors(OUTER));
        app.use((ctx, next) => (ctx.path.startsWith('/admin') ? admin(ctx, () => Promise.resolve(body(ctx))) : next()));
        return app.callback();
      },
    ],
  ];

for (const [name, nest] of nodeNestings)
  for (const [bodyName, body] of name.startsWith('Koa') ? koaBodies : koaBodies.slice(0, 1))
    for (const [outerName, innerName] of [
      ['A', 'B'],
      ['B', 'A'],
      ['A', 'A'],
    ] as const)
      it(`two copies: ${name}, the handler answering ${bodyName} (outer copy ${outerName}, inner ${innerName}): the inner denial stands, the publisher is allowed`, async () => {
        const copies = await twoNodeCopies();
        const app = nest(copies[outerName.toLowerCase() as 'a'], copies[innerName.toLowerCase() as 'a'], body);
        const denied = await request(app).get('/admin/secret').set('Origin', PARTNER);
        expect(denied.headers['access-control-allow-origin']).toBeUndefined();
        expect(denied.headers['access-control-allow-credentials']).toBeUndefined();
        const allowed = await request(app).get('/admin/secret').set('Origin', 'https://example.com');
        expect(allowed.headers['access-control-allow-origin']).toBe('https://example.com');
        expect(allowed.headers['access-control-allow-credentials']).toBe('true');
      });
