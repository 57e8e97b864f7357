/**
 * Attacker's review, session 16 (attack-adapters3/4): Fastify answers that
 * do not come from a plain handler — a `preHandler` answering early or
 * throwing, a handler throwing with its own status, `setErrorHandler` and
 * `setNotFoundHandler` of a child plugin, Fastify's automatic HEAD,
 * `reply.redirect`, streamed bodies (one failing), `reply.hijack()`, a route
 * with `config.cors: false`, and a route's `config.cors` narrowing the
 * plugin's policy (drop-in and AMP modes, in a child plugin, on a route of
 * several methods). The attacker sends any `Origin`. A hostile origin never
 * gets a CORS header (403 with `'reject'`); an allowed one gets its grant
 * and `Vary: Origin` wherever the reply's headers are sent; a route's narrower
 * policy is the one applied. Documented exceptions: a handler or `onSend` hook
 * replacing `Vary` loses `Origin` (nothing granted), and a hijacked reply
 * sends only what the handler writes.
 */
import { ampCors } from '@ampcors/fastify';
import Fastify, { type FastifyInstance, type LightMyRequestResponse } from 'fastify';
import { Readable } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { CORS_HEADERS } from './cors-header-names.js';

const OWN = 'https://example.com';
const PARTNER = 'https://partner.example';
const HOSTILE = ['https://evil.example', 'https://partner.example.evil.example', 'null'];

async function build(onDenied: 'reject' | 'omit'): Promise<FastifyInstance> {
  const app = Fastify();
  await app.register(ampCors, { publishers: ['example.com', 'partner.example'], onDenied });
  app.addHook('onSend', async (req, reply, payload) => {
    if (req.url === '/onsend-strip') reply.removeHeader('vary');
    return payload;
  });
  app.get('/ok', async () => ({ ok: 1 }));
  app.get('/off', { config: { cors: false } }, async () => 'off');
  app.get('/hijack', (_req, reply) => {
    reply.hijack();
    reply.raw.writeHead(200, { 'content-type': 'text/plain' });
    reply.raw.end('raw');
  });
  app.get('/hijack-copy', (_req, reply) => {
    reply.hijack();
    reply.raw.writeHead(200, reply.getHeaders() as Record<string, string>);
    reply.raw.end('raw');
  });
  app.get('/throw', async () => {
    throw Object.assign(new Error('x'), { statusCode: 418 });
  });
  app.get(
    '/prehandler',
    {
      preHandler: async () => {
        throw new Error('pre');
      },
    },
    async () => 'never',
  );
  app.get(
    '/early',
    {
      preHandler: (_req, reply) => {
        void reply.code(401).send('no');
      },
    },
    async () => 'never',
  );
  app.get('/headers', async (_req, reply) => {
    reply.headers({ vary: 'Accept' });
    return 'h';
  });
  app.get('/onsend-strip', async () => 'strip');
  app.get('/redirect', async (_req, reply) => reply.redirect('/ok'));
  app.get('/stream', async (_req, reply) => reply.send(Readable.from(['a', 'b'])));
  app.get('/errstream', async (_req, reply) =>
    reply.send(
      new Readable({
        read() {
          this.destroy(new Error('boom'));
        },
      }),
    ),
  );
  app.register(
    async (child) => {
      child.setErrorHandler(async (_err, _req, reply) => {
        reply.code(503);
        return { custom: true };
      });
      child.setNotFoundHandler(async (_req, reply) => {
        reply.code(404);
        return { nf: true };
      });
      child.get('/err', async () => {
        throw new Error('child');
      });
    },
    { prefix: '/child' },
  );
  await app.ready();
  return app;
}

/** Path, status of the handler's answer for GET (and HEAD when different), and what the reply sends of ampcors's headers. */
const ROUTES: ReadonlyArray<{ path: string; get: number; head?: number; cors: 'sent' | 'never'; varyKept: boolean }> = [
  { path: '/ok', get: 200, cors: 'sent', varyKept: true },
  { path: '/off', get: 200, cors: 'never', varyKept: true },
  { path: '/hijack', get: 200, cors: 'never', varyKept: false },
  { path: '/hijack-copy', get: 200, cors: 'sent', varyKept: true },
  { path: '/throw', get: 418, cors: 'sent', varyKept: true },
  { path: '/prehandler', get: 500, cors: 'sent', varyKept: true },
  { path: '/early', get: 401, cors: 'sent', varyKept: true },
  { path: '/headers', get: 200, cors: 'sent', varyKept: false },
  { path: '/onsend-strip', get: 200, cors: 'sent', varyKept: false },
  { path: '/redirect', get: 302, cors: 'sent', varyKept: true },
  { path: '/stream', get: 200, cors: 'sent', varyKept: true },
  { path: '/errstream', get: 500, head: 200, cors: 'sent', varyKept: true },
  { path: '/child/err', get: 503, cors: 'sent', varyKept: true },
  { path: '/child/none', get: 404, cors: 'sent', varyKept: true },
  { path: '/none', get: 404, cors: 'sent', varyKept: true },
];

const varyList = (v: unknown): string[] =>
  String(v ?? '')
    .split(',')
    .map((s) => s.trim().toLowerCase());

function expectNoCors(r: LightMyRequestResponse): void {
  for (const name of CORS_HEADERS) expect(r.headers[name], name).toBeUndefined();
}

describe('Fastify hooks, handlers and child contexts keep the request decision', () => {
  for (const onDenied of ['reject', 'omit'] as const)
    it(`${onDenied}: allowed origins get their grant, hostile ones and no Origin get none`, async () => {
      const app = await build(onDenied);
      try {
        for (const route of ROUTES)
          for (const method of ['GET', 'HEAD'] as const) {
            const status = method === 'HEAD' ? (route.head ?? route.get) : route.get;
            const label = `${method} ${route.path}`;
            for (const origin of [OWN, PARTNER]) {
              const r = await app.inject({ method, url: route.path, headers: { origin } });
              expect(r.statusCode, label).toBe(status);
              if (route.cors === 'sent') {
                expect(r.headers['access-control-allow-origin'], label).toBe(origin);
                expect(r.headers['access-control-allow-credentials'], label).toBe('true');
              } else expectNoCors(r);
              if (route.varyKept) expect(varyList(r.headers.vary), label).toContain('origin');
            }
            for (const origin of HOSTILE) {
              const r = await app.inject({ method, url: route.path, headers: { origin } });
              const cut = onDenied === 'reject' && route.path !== '/off';
              expect(r.statusCode, `${label} ${origin}`).toBe(cut ? 403 : status);
              expectNoCors(r);
              if (route.path !== '/onsend-strip' && (cut || route.varyKept)) expect(varyList(r.headers.vary), label).toContain('origin');
            }
            const bare = await app.inject({ method, url: route.path });
            expect(bare.statusCode, label).toBe(status);
            expectNoCors(bare);
          }
        for (const origin of HOSTILE)
          for (const path of ['/ok', '/off', '/child/none', '/none']) {
            const r = await app.inject({ method: 'OPTIONS', url: path, headers: { origin, 'access-control-request-method': 'GET' } });
            expectNoCors(r);
          }
      } finally {
        await app.close();
      }
    });

  const NARROWING = [
    ['drop-in origin list', { origin: [OWN, PARTNER], credentials: true }, { origin: [OWN] }],
    [
      'drop-in origin function',
      { origin: [OWN, PARTNER], credentials: true },
      { origin: (o: string, cb: (e: null, ok: boolean) => void) => cb(null, o === OWN) },
    ],
    ['AMP publishers', { publishers: ['example.com', 'partner.example'] }, { publishers: ['example.com'] }],
  ] as const;
  for (const [name, plugin, route] of NARROWING)
    it(`a route's config.cors narrows the plugin (${name}): the partner loses its grant on every method, in a child plugin too`, async () => {
      const app = Fastify();
      await app.register(ampCors, plugin as Parameters<typeof ampCors>[1]);
      app.get('/narrow', { config: { cors: route } }, async () => 'narrow');
      app.register(
        async (child) => {
          child.get('/narrow', { config: { cors: route } }, async () => 'narrow');
          child.route({ method: ['GET', 'POST'], url: '/multi', config: { cors: route }, handler: async () => 'm' });
        },
        { prefix: '/c' },
      );
      await app.ready();
      try {
        for (const url of ['/narrow', '/c/narrow', '/c/multi'])
          for (const method of url === '/c/multi' ? (['GET', 'HEAD', 'POST'] as const) : (['GET', 'HEAD'] as const)) {
            const own = await app.inject({ method, url, headers: { origin: OWN } });
            expect(own.statusCode).toBe(200);
            expect(own.headers['access-control-allow-origin']).toBe(OWN);
            expect(own.headers['access-control-allow-credentials']).toBe('true');
            for (const origin of [PARTNER, ...HOSTILE]) {
              const r = await app.inject({ method, url, headers: { origin } });
              expectNoCors(r);
              expect(varyList(r.headers.vary)).toContain('origin');
            }
          }
      } finally {
        await app.close();
      }
    });
});
