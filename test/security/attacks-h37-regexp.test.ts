// Attacker's view of the drop-ins' guard against options that allow origins nobody named (issue 14 item 3), with the
// classic allow-list mistakes of CORS configurations: a suffix match without its dot (`cors`'s own README example,
// /example\.com$/), an unescaped dot, a prefix match without an end anchor, and the same as origin functions
// (endsWith, startsWith). Each trusts a host anyone can register (evilexample.com, wwwxexample.com,
// example.com.evil.net) with the users' credentials. The attacker's look-alike must never read with credentials:
// the configuration is refused, or the request fails or is denied. One table, through every drop-in: Express (`cors`),
// Koa (`@koa/cors`), Hono (`hono/cors`) and Fastify (`@fastify/cors`), each with the option shapes it accepts.
// Found by helper-37's independent attack; the core-level suite is packages/core/test/security/origin-lookalikes.test.ts.
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

/** How an adapter is given an origin test: a static RegExp (where its peer accepts one) or its own function shape. */
interface Adapter {
  readonly name: string;
  /** Whether the peer's `origin` option accepts a RegExp. */
  readonly patterns: boolean;
  /** The peer's origin function answering `allows(origin)`, synchronously or not. */
  originFunction(allows: (origin: string) => boolean, async: boolean): unknown;
  /** GET /api with `Origin: from` through the adapter configured with `origin` and credentials (throws when refused at construction). */
  reads(origin: unknown, from: string): Promise<Seen>;
}

const ADAPTERS: readonly Adapter[] = [
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

/**
 * [name, a RegExp (or null: a function only), the test as a function, the publisher origin it was written for, a
 * look-alike anyone can register that it allows].
 */
const LOOSE: ReadonlyArray<readonly [string, RegExp | null, (origin: string) => boolean, string, string]> = [
  ["cors's README pattern /example\\.com$/", /example\.com$/, (o) => /example\.com$/.test(o), 'https://example.com', 'https://evilexample.com'],
  [
    'no end anchor /^https:\\/\\/example\\.com/',
    /^https:\/\/example\.com/,
    (o) => /^https:\/\/example\.com/.test(o),
    'https://example.com',
    'https://example.com.evil.net',
  ],
  ["endsWith('example.com')", null, (o) => o.endsWith('example.com'), 'https://example.com', 'https://evilexample.com'],
  ["startsWith('https://example.com')", null, (o) => o.startsWith('https://example.com'), 'https://example.com', 'https://example.com.evil.net'],
  ["includes('example.com')", null, (o) => o.includes('example.com'), 'https://www.example.com', 'https://www.example.com.evil.net'],
  [
    'a wildcard over a shared suffix /^https:\\/\\/[a-z0-9-]+\\.github\\.io$/',
    /^https:\/\/[a-z0-9-]+\.github\.io$/,
    (o) => /^https:\/\/[a-z0-9-]+\.github\.io$/.test(o),
    'https://me.github.io',
    'https://attacker.github.io',
  ],
];

/** Patterns only (an unescaped dot: a function is caught once the publisher's own origin shows it, see the core suite). */
const LOOSE_PATTERNS: ReadonlyArray<readonly [string, RegExp, string, string]> = [
  ['an unescaped dot /^https:\\/\\/www.example.com$/', /^https:\/\/www.example.com$/, 'https://www.example.com', 'https://wwwxexample.com'],
  ['an unescaped dot in an alternation', /^https:\/\/(app|api).example\.com$/, 'https://app.example.com', 'https://appxexample.com'],
  ['no end anchor after an alternation', /^https:\/\/(app|api)\.example\.com/, 'https://app.example.com', 'https://app.example.com.evil.net'],
];

/** What the attacker's browser can read: never the look-alike with credentials. */
async function attackerReads(adapter: Adapter, origin: unknown, from: string): Promise<Seen | 'refused at construction'> {
  try {
    return await adapter.reads(origin, from);
  } catch (error) {
    expect(String(error)).toMatch(/unsafe-configuration|together with credentials/);
    return 'refused at construction';
  }
}

function neverReadable(seen: Seen | 'refused at construction', evil: string) {
  if (seen === 'refused at construction') return;
  expect(seen.acao === evil && seen.credentials === 'true', JSON.stringify(seen)).toBe(false);
  // A failed request carries no CORS header at all.
  expect(seen.acao, JSON.stringify(seen)).toBeUndefined();
}

it('every hole of the tables is real: the option allows the publisher origin and the look-alike alike', () => {
  for (const [, pattern, allows, own, evil] of LOOSE) {
    expect([allows(own), allows(evil), pattern === null || (pattern.test(own) && pattern.test(evil))]).toEqual([true, true, true]);
  }
  for (const [, pattern, own, evil] of LOOSE_PATTERNS) expect([pattern.test(own), pattern.test(evil)]).toEqual([true, true]);
});

describe.each(ADAPTERS)('attacker, through $name: an origin option that also trusts registrable look-alikes, with credentials', (adapter) => {
  const rows = LOOSE.flatMap(([name, pattern, allows, own, evil]) => [
    ...(pattern !== null && adapter.patterns ? [[`${name} (RegExp)`, pattern, own, evil] as const] : []),
    [`${name} (function)`, adapter.originFunction(allows, false), own, evil] as const,
    [`${name} (async function)`, adapter.originFunction(allows, true), own, evil] as const,
  ]);
  const patternRows = adapter.patterns ? LOOSE_PATTERNS.map(([name, pattern, own, evil]) => [name, pattern, own, evil] as const) : [];

  it.each([...rows, ...patternRows])('%s: the look-alike never reads with credentials, nor does the publisher', async (_name, origin, own, evil) => {
    neverReadable(await attackerReads(adapter, origin, evil), evil);
    // The option is unsafe for the publisher's origin too: refused, or the request fails (no credentialed answer).
    const publisher = await attackerReads(adapter, origin, own);
    if (publisher !== 'refused at construction') expect(publisher.credentials === 'true' && publisher.acao === own, JSON.stringify(publisher)).toBe(false);
  });

  it('a tightly written option keeps working: the publisher origins read, look-alikes do not', async () => {
    const tight = /^https:\/\/([a-z0-9-]+\.)*example\.com$/;
    const options = [
      ...(adapter.patterns ? [tight] : []),
      adapter.originFunction((o) => tight.test(o), false),
      adapter.originFunction((o) => o === 'https://example.com' || o.endsWith('.example.com'), true),
    ];
    for (const origin of options) {
      for (const own of ['https://example.com', 'https://www.example.com', 'https://a.b.example.com'])
        expect(await adapter.reads(origin, own)).toEqual({ status: 200, acao: own, credentials: 'true' });
      for (const evil of ['https://evilexample.com', 'https://example.com.evil.net', 'https://wwwxexample.com'])
        expect((await adapter.reads(origin, evil)).acao).toBeUndefined();
    }
  });
});
