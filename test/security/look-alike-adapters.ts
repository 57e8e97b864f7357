// The four drop-ins (Express `cors`, Koa `@koa/cors`, Hono `hono/cors`, Fastify `@fastify/cors`) as the look-alike
// attack tables drive them: each given an origin option with credentials, each asked for GET /api from one origin.
// Shared by attacks-h37-regexp.test.ts and attacks-session14-label-wildcards.test.ts.
import { ampCors as expressAmpCors } from '@ampcors/express';
import { ampCors as fastifyAmpCors } from '@ampcors/fastify';
import { ampCors as honoAmpCors } from '@ampcors/hono';
import { ampCors as koaAmpCors } from '@ampcors/koa';
import express from 'express';
import fastify from 'fastify';
import { Hono } from 'hono';
import Koa from 'koa';
import request from 'supertest';
import { expect } from 'vitest';

type Callback = (error: Error | null, allow?: unknown) => void;
/** What a response let the browser read. */
export type Seen = { status: number; acao: string | undefined; credentials: string | undefined };

/** How an adapter is given an origin test: a static RegExp (where its peer accepts one) or its own function shape. */
export interface Adapter {
  readonly name: string;
  /** Whether the peer's `origin` option accepts a RegExp. */
  readonly patterns: boolean;
  /** The peer's origin function answering `allows(origin)`, synchronously or not. */
  originFunction(allows: (origin: string) => boolean, async: boolean): unknown;
  /** GET /api with `Origin: from` through the adapter configured with `origin` and credentials (throws when refused at construction). */
  reads(origin: unknown, from: string): Promise<Seen>;
}

/** Every drop-in, with the option shapes its peer accepts. */
export const ADAPTERS: readonly Adapter[] = [
  {
    name: 'express (cors)',
    patterns: true,
    originFunction: (allows, async) =>
      async ? (o: string, cb: Callback) => void Promise.resolve().then(() => cb(null, allows(o))) : (o: string, cb: Callback) => cb(null, allows(o)),
    async reads(origin, from) {
      const app = express();
      app.use(expressAmpCors({ origin, credentials: true } as never));
      app.get('/api', (_req, res) => void res.json({ secret: 1 }));
      app.use((_error: unknown, _req: unknown, res: express.Response, _next: unknown) => void res.status(500).end());
      const res = await request(app).get('/api').set('Origin', from);
      return { status: res.status, acao: res.headers['access-control-allow-origin'], credentials: res.headers['access-control-allow-credentials'] };
    },
  },
  {
    name: 'koa (@koa/cors)',
    patterns: false,
    originFunction: (allows, async) =>
      async
        ? async (ctx: { get(name: string): string }) => (allows(ctx.get('Origin')) ? ctx.get('Origin') : '')
        : (ctx: { get(name: string): string }) => (allows(ctx.get('Origin')) ? ctx.get('Origin') : ''),
    async reads(origin, from) {
      const app = new Koa();
      app.silent = true;
      app.use(koaAmpCors({ origin, credentials: true } as never) as never);
      app.use((ctx) => {
        ctx.body = { secret: 1 };
      });
      const res = await request(app.callback()).get('/api').set('Origin', from);
      return { status: res.status, acao: res.headers['access-control-allow-origin'], credentials: res.headers['access-control-allow-credentials'] };
    },
  },
  {
    name: 'hono (hono/cors)',
    patterns: false,
    originFunction: (allows, async) => (async ? async (o: string) => (allows(o) ? o : null) : (o: string) => (allows(o) ? o : null)),
    async reads(origin, from) {
      const app = new Hono();
      app.use('/api/*', honoAmpCors({ origin, credentials: true } as never) as never);
      app.get('/api/data', (c) => c.json({ secret: 1 }));
      const res = await app.request('http://api.example.test/api/data', { headers: { Origin: from } });
      return {
        status: res.status,
        acao: res.headers.get('access-control-allow-origin') ?? undefined,
        credentials: res.headers.get('access-control-allow-credentials') ?? undefined,
      };
    },
  },
  {
    name: 'fastify (@fastify/cors)',
    patterns: true,
    originFunction: (allows, async) => (async ? async (o: string) => allows(o) : (o: string, cb: Callback) => cb(null, allows(o))),
    async reads(origin, from) {
      const app = fastify({ logger: false });
      try {
        await app.register(fastifyAmpCors, { origin, credentials: true } as never);
        app.get('/api', async () => ({ secret: 1 }));
        const res = await app.inject({ method: 'GET', url: '/api', headers: { origin: from } });
        const header = (name: string) => (res.headers[name] === undefined ? undefined : String(res.headers[name]));
        return { status: res.statusCode, acao: header('access-control-allow-origin'), credentials: header('access-control-allow-credentials') };
      } finally {
        await app.close();
      }
    },
  },
];

/** What the attacker's browser can read: never the look-alike with credentials. */
export async function attackerReads(adapter: Adapter, origin: unknown, from: string): Promise<Seen | 'refused at construction'> {
  try {
    return await adapter.reads(origin, from);
  } catch (error) {
    expect(String(error)).toMatch(/unsafe-configuration|together with credentials/);
    return 'refused at construction';
  }
}

/** The host a browser sends for a Unicode name (its punycode form). */
export const ascii = (unicode: string): string => new URL(`https://${unicode}`).hostname;

/** Whether the response let the browser read it with credentials as `origin`. */
export const readsWithCredentials = (seen: Seen | 'refused at construction', origin: string): boolean =>
  seen !== 'refused at construction' && seen.acao === origin && seen.credentials === 'true';
