/**
 * The drivers of the attacks on origins read from a value (a header or a query value, the attacker's JSON or URL):
 * an Express 4 or 5 options delegate and a Koa or Hono origin function, each with credentials, reading the origin with
 * `read`, asked for GET /api with the victim's cookie. Shared by attacks-session16-dropin4-json-escape.test.ts and
 * attacks-session17-json-ipv4-dot.test.ts.
 */
import { ampCors as expressAmpCors } from '@ampcors/express';
import { ampCors as honoAmpCors } from '@ampcors/hono';
import { ampCors as koaAmpCors } from '@ampcors/koa';
import { createRequire } from 'node:module';
import express5 from 'express';
import { Hono } from 'hono';
import Koa from 'koa';
import request from 'supertest';

const express4 = createRequire(import.meta.url)('express4') as typeof express5;
/** What the browser would let the page read. */
export type Seen = { status: number; acao: string | undefined; credentials: string | undefined };
type Callback = (error: null, options: object) => void;
/** What the function reads as the origin from the header or query value (`false` when it reads none). */
export type Read = (value: string | undefined) => string | false;
/** Where the attacker puts the value: a header (`X-Data`) or a query value (`state`). */
export type Where = 'header' | 'query';

const seenOf = (status: number, acao: string | null | undefined, credentials: string | null | undefined): Seen => ({
  status,
  acao: acao ?? undefined,
  credentials: credentials ?? undefined,
});
/** The request's path, with the value as `state` when it goes in the query. */
export const path = (where: Where, value: string) => (where === 'query' ? `/api?state=${encodeURIComponent(value)}` : '/api');
const headers = (where: Where, origin: string, value: string) => ({
  Origin: origin,
  Cookie: 'session=victim',
  ...(where === 'header' ? { 'X-Data': value } : {}),
});

async function expressReads(express: typeof express5, read: Read, origin: string, where: Where, value: string): Promise<Seen> {
  const app = express();
  app.use(
    expressAmpCors(((req: express5.Request, cb: Callback) =>
      cb(null, {
        origin: read(where === 'header' ? (req.headers['x-data'] as string | undefined) : ((req.query as Record<string, string>)['state'] as string)),
        credentials: true,
      })) as never),
  );
  app.get('/api', (_req, res) => void res.json({ secret: 1 }));
  app.use((_e: unknown, _q: unknown, res: express5.Response, _n: unknown) => void res.status(500).end());
  const res = await request(app)
    .get(path(where, value))
    .set(headers(where, origin, value));
  return seenOf(res.status, res.headers['access-control-allow-origin'], res.headers['access-control-allow-credentials']);
}

async function koaReads(read: Read, origin: string, where: Where, value: string): Promise<Seen> {
  const app = new Koa();
  app.silent = true;
  const origins = (ctx: Koa.Context) => read(where === 'header' ? ctx.get('x-data') : (ctx.query['state'] as string)) || '';
  app.use(koaAmpCors({ origin: origins as never, credentials: true }) as never);
  app.use((ctx) => {
    ctx.body = { secret: 1 };
  });
  const res = await request(app.callback())
    .get(path(where, value))
    .set(headers(where, origin, value));
  return seenOf(res.status, res.headers['access-control-allow-origin'], res.headers['access-control-allow-credentials']);
}

async function honoReads(read: Read, origin: string, where: Where, value: string): Promise<Seen> {
  const app = new Hono();
  const origins = (_o: string, c: import('hono').Context) => read(where === 'header' ? c.req.header('x-data') : c.req.query('state')) || null;
  app.use('/api/*', honoAmpCors({ origin: origins as never, credentials: true }) as never);
  app.get('/api/*', (c) => c.json({ secret: 1 }));
  const res = await app.request(`http://api.example.test${path(where, value).replace('/api', '/api/x')}`, { headers: headers(where, origin, value) });
  return seenOf(res.status, res.headers.get('access-control-allow-origin'), res.headers.get('access-control-allow-credentials'));
}

/** Each framework's driver, by name. */
export const READERS: ReadonlyArray<readonly [string, (read: Read, origin: string, where: Where, value: string) => Promise<Seen>]> = [
  ['express 4', (read, origin, where, value) => expressReads(express4, read, origin, where, value)],
  ['express 5', (read, origin, where, value) => expressReads(express5, read, origin, where, value)],
  ['koa', koaReads],
  ['hono', honoReads],
];
