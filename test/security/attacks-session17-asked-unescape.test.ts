/**
 * Attacker's review (session 17, helper attack-asked): an options delegate (Express 4 and 5) or an origin function
 * (Koa, Hono) with credentials reading the origin of a return URL in the query through the global `unescape` (a
 * legacy decoder still in every runtime: it decodes `%uXXXX` and reads `%XX` as Latin-1), with a loose check:
 * `new URL(unescape(req.query.return_to)).origin`, allowed when it ends with `example.com`. The attacker
 * (`https://evilexample.com`) writes `https://evil%u0065xample.com/x` (`%25u0065` on the wire). No reading of the
 * guard's questions decodes `%u` escapes, so no question replaces the origin: every question reads the attacker's.
 */
import { ampCors as expressAmpCors } from '@ampcors/express';
import { originRewriter, type OriginRewriter } from '@ampcors/core/adapter';
import { ampCors as honoAmpCors } from '@ampcors/hono';
import { ampCors as koaAmpCors } from '@ampcors/koa';
import { createRequire } from 'node:module';
import express5 from 'express';
import { Hono } from 'hono';
import Koa from 'koa';
import request from 'supertest';
import { describe, expect, it } from 'vitest';

const express4 = createRequire(import.meta.url)('express4') as typeof express5;
type Seen = { status: number; acao: string | undefined; credentials: string | undefined };
type Callback = (error: null, options: object) => void;

/** The developer's function: the return URL's origin through `unescape`, any subdomain-ish of example.com. */
const read = (value: unknown): string | false => {
  try {
    const origin = new URL(unescape(String(value))).origin;
    // Loose: any host ending with example.com or exämple.com (evilexample.com, evilexämple.com pass).
    return origin.endsWith('example.com') || origin.endsWith('exmple-cua.com') ? origin : false;
  } catch {
    return false;
  }
};

async function expressReads(express: typeof express5, origin: string, target: string): Promise<Seen> {
  const app = express();
  app.use(
    expressAmpCors(((req: express5.Request, cb: Callback) =>
      cb(null, { origin: read((req.query as Record<string, string>)['return_to']), credentials: true })) as never),
  );
  app.get('/api', (_req, res) => void res.json({ secret: 1 }));
  const res = await request(app).get(target).set({ Origin: origin, Cookie: 'session=victim' });
  return { status: res.status, acao: res.headers['access-control-allow-origin'], credentials: res.headers['access-control-allow-credentials'] };
}
async function koaReads(origin: string, target: string): Promise<Seen> {
  const app = new Koa();
  app.silent = true;
  app.use(koaAmpCors({ origin: ((ctx: Koa.Context) => read(ctx.query['return_to']) || '') as never, credentials: true }) as never);
  app.use((ctx) => {
    ctx.body = { secret: 1 };
  });
  const res = await request(app.callback()).get(target).set({ Origin: origin, Cookie: 'session=victim' });
  return { status: res.status, acao: res.headers['access-control-allow-origin'], credentials: res.headers['access-control-allow-credentials'] };
}
async function honoReads(origin: string, target: string): Promise<Seen> {
  const app = new Hono();
  app.use(
    '/api',
    honoAmpCors({ origin: ((_o: string, c: import('hono').Context) => read(c.req.query('return_to')) || null) as never, credentials: true }) as never,
  );
  app.get('/api', (c) => c.json({ secret: 1 }));
  const res = await app.request(`http://api.example.test${target}`, { headers: { Origin: origin, Cookie: 'session=victim' } });
  return {
    status: res.status,
    acao: res.headers.get('access-control-allow-origin') ?? undefined,
    credentials: res.headers.get('access-control-allow-credentials') ?? undefined,
  };
}
const READERS: ReadonlyArray<readonly [string, (origin: string, target: string) => Promise<Seen>]> = [
  ['express 4', (o, t) => expressReads(express4, o, t)],
  ['express 5', (o, t) => expressReads(express5, o, t)],
  ['koa', koaReads],
  ['hono', honoReads],
];

/** [what, the attacker's Origin, the request target] */
const CASES: ReadonlyArray<readonly [string, string, string]> = [
  ['a %u escape of one letter', 'https://evilexample.com', '/api?return_to=https://evil%25u0065xample.com/x'],
  ['a %u escape of the dot', 'https://evilexample.com', '/api?return_to=https://evilexample%25u002ecom/x'],
  ['an IDN host, its letter as a Latin-1 %XX escape', 'https://xn--exmple-cua.com', '/api?return_to=https://ex%25E4mple.com/x'],
  ['an IDN host, its letter as a %u escape', 'https://xn--exmple-cua.com', '/api?return_to=https://ex%25u00e4mple.com/x'],
];

describe('a return URL read through unescape (%uXXXX, Latin-1 %XX)', () => {
  for (const [what, origin, target] of CASES) {
    it(`control: ${what}: the function reads ${origin}`, () => {
      expect(read(new URLSearchParams(target.split('?')[1]).get('return_to'))).toBe(origin);
    });
    it(`the question rewriter: ${what}: the question reads the canary`, () => {
      const value = new URLSearchParams(target.split('?')[1]).get('return_to') as string;
      const rewrite = originRewriter(origin, 'https://canary.invalid') as OriginRewriter;
      let question = '';
      try {
        question = new URL(unescape(rewrite.text(value))).origin;
      } catch {
        question = 'none';
      }
      expect(question, rewrite.text(value)).toBe('https://canary.invalid');
    });
    for (const [name, reads] of READERS)
      it(`${name}: ${what}: refused`, async () => {
        const seen = await reads(origin, target);
        expect(seen.acao === origin && seen.credentials === 'true', JSON.stringify(seen)).toBe(false);
      });
  }
});
