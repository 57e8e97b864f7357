// Attacker's view of the drop-ins' look-alike guard (helper-38's fix, 177bc34) with wildcards INSIDE the registrable
// domain rather than before it: a pattern continuing the publisher's label under a shared suffix (Vercel's
// `myapp-*.vercel.app`, the notorious preview-deployment allow-list), a TLD wildcard (`example\.[a-z]+`), a
// second-level ccTLD wildcard (`example\.co\.[a-z]{2}`). Each trusts registrable domains anyone can create (a Vercel project named
// myapp-attacker, example.xyz, example.co.ws) with the users' credentials. The look-alike must never read with
// credentials: the configuration is refused, or the request fails or is denied. Found by helper-42 (session 14).
import { ampCors as expressAmpCors } from '@ampcors/express';
import { ampCors as fastifyAmpCors } from '@ampcors/fastify';
import { ampCors as honoAmpCors } from '@ampcors/hono';
import { ampCors as koaAmpCors } from '@ampcors/koa';
import express from 'express';
import fastify from 'fastify';
import { Hono } from 'hono';
import Koa from 'koa';
import request from 'supertest';
import { describe, expect, it } from 'vitest';

type Callback = (error: Error | null, allow?: unknown) => void;
type Seen = { status: number; acao: string | undefined; credentials: string | undefined };

interface Adapter {
  readonly name: string;
  readonly patterns: boolean;
  originFunction(allows: (origin: string) => boolean): unknown;
  reads(origin: unknown, from: string): Promise<Seen>;
}

const ADAPTERS: readonly Adapter[] = [
  {
    name: 'express (cors)',
    patterns: true,
    originFunction: (allows) => (o: string, cb: Callback) => cb(null, allows(o)),
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
    originFunction: (allows) => (ctx: { get(name: string): string }) => (allows(ctx.get('Origin')) ? ctx.get('Origin') : ''),
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
    originFunction: (allows) => (o: string) => (allows(o) ? o : null),
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
    originFunction: (allows) => (o: string, cb: Callback) => cb(null, allows(o)),
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

/** [name, pattern, the publisher origin it was written for, a registrable domain anyone can create that it allows]. */
const WILDCARDS: ReadonlyArray<readonly [string, RegExp, string, string]> = [
  [
    'a label continued under a shared suffix (Vercel)',
    /^https:\/\/myapp-[a-z0-9-]+\.vercel\.app$/,
    'https://myapp-git-main.vercel.app',
    'https://myapp-attacker.vercel.app',
  ],
  [
    'a preview pattern with .* under a shared suffix',
    /^https:\/\/myapp-.*\.vercel\.app$/,
    'https://myapp-git-main.vercel.app',
    'https://myapp-attacker.vercel.app',
  ],
  ['a label continued at its end', /^https:\/\/(www\.)?example[a-z0-9-]*\.com$/, 'https://example.com', 'https://example-attacker.com'],
  ['a TLD wildcard', /^https:\/\/(www\.)?example\.[a-z]+$/, 'https://example.com', 'https://example.xyz'],
  ['a bounded TLD wildcard', /^https:\/\/(www\.)?example\.[a-z]{2,6}$/, 'https://example.com', 'https://example.xyz'],
  ['a digit wildcard in the label', /^https:\/\/shop[0-9]*\.example\.com$|^https:\/\/example[0-9]*\.com$/, 'https://example.com', 'https://example1337.com'],
  [
    'a fixed-length preview hash under a shared suffix',
    /^https:\/\/myapp-[a-z0-9]{9}-team\.vercel\.app$/,
    'https://myapp-abc123xyz-team.vercel.app',
    'https://myapp-attackerx-team.vercel.app',
  ],
  ['a second-level ccTLD wildcard', /^https:\/\/(www\.)?example\.co\.[a-z]{2}$/, 'https://example.co.uk', 'https://example.co.ws'],
];

async function attackerReads(adapter: Adapter, origin: unknown, from: string): Promise<Seen | 'refused at construction'> {
  try {
    return await adapter.reads(origin, from);
  } catch (error) {
    expect(String(error)).toMatch(/unsafe-configuration|together with credentials/);
    return 'refused at construction';
  }
}

it('every row is a real hole: the pattern allows the publisher origin and a registrable domain anyone can create', () => {
  for (const [, pattern, own, evil] of WILDCARDS) expect([pattern.test(own), pattern.test(evil)]).toEqual([true, true]);
});

describe.each(ADAPTERS)('attacker, through $name: a wildcard inside the registrable domain, with credentials', (adapter) => {
  const rows = WILDCARDS.flatMap(([name, pattern, own, evil]) => [
    ...(adapter.patterns ? [[`${name} ${String(pattern)} (RegExp)`, pattern, own, evil] as const] : []),
    [`${name} ${String(pattern)} (function)`, adapter.originFunction((o) => pattern.test(o)), own, evil] as const,
  ]);
  it.each(rows)('%s: the attacker never reads with credentials, whatever came first', async (_name, origin, own, evil) => {
    // The attacker first (a fresh app), then after the publisher's own request (the request-time memo warmed).
    const first = await attackerReads(adapter, origin, evil);
    if (first !== 'refused at construction') expect(first.acao, JSON.stringify(first)).toBeUndefined();
    const publisher = await attackerReads(adapter, origin, own);
    if (publisher !== 'refused at construction') expect(publisher.credentials === 'true' && publisher.acao === own, JSON.stringify(publisher)).toBe(false);
  });
});
