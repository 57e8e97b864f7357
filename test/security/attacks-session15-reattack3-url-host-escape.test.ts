/**
 * Attacker's review (session 15; found by helper-66, fixed by helper-68): an options delegate (Express 4 and 5) or
 * an origin function (Koa, Hono) with credentials that reads the origin of a URL taken from the query
 * (`new URL(req.query.return_to).origin`). The attacker escapes a letter of its host once more than the framework
 * decodes: `?return_to=https://%2565vil.example.net/welcome` reaches the function as `https://%65vil.example.net/…`,
 * and the URL parser percent-decodes a host, so the function answers `https://evil.example.net`. The guard's
 * question rewrite found the host only after two decodings, replaced it there and encoded the whole value back
 * twice: the function read `https%3A%2F%2F<canary>…`, no URL, threw, which counts as "not allowed", so every question
 * passed and any website read credentialed responses. A question now has only the characters showing the real host
 * replaced, by the asked host written literally: each question's `new URL(…)` reads the asked origin.
 * Each attack is the attacker's read: GET from https://evil.example.net with the victim's cookie.
 * The last block checks the other side: a function checking that origin against a list stays allowed.
 */
import { ampCors as expressAmpCors } from '@ampcors/express';
import { ampCors as honoAmpCors } from '@ampcors/hono';
import { ampCors as koaAmpCors } from '@ampcors/koa';
import { createRequire } from 'node:module';
import express5 from 'express';
import { Hono } from 'hono';
import Koa from 'koa';
import request from 'supertest';
import { describe, expect, it } from 'vitest';

const express4 = createRequire(import.meta.url)('express4') as typeof express5;
const EVIL = 'https://evil.example.net';
const TRUSTED = 'https://www.example.com';
type Seen = { status: number; acao: string | undefined; credentials: string | undefined };
type Callback = (error: null, options: object) => void;
/** What the origin is read as: the origin of the URL the function is given, or nothing when it is no URL. */
type Read = (url: string | undefined) => string | false;

/** The origin of a URL, or `false` when it is none (the delegate's own try/catch). */
const originOfUrl: Read = (url) => {
  try {
    return typeof url === 'string' ? new URL(url).origin : false;
  } catch {
    return false;
  }
};

/** The attacker's spellings of its origin in `return_to`, each reaching the function as a URL whose origin is the attacker's. */
const SPELLINGS = [
  'https://%2565vil.example.net/welcome',
  'https:%2F%2F%2565vil.example.net/welcome',
  'HTTPS://%2545VIL.example.NET:443/welcome',
  'https://evil%252Eexample.net/welcome',
  'https://%25EF%25BD%2585vil.example.net/welcome',
  'https://ev%25C2%25ADil.example.net/welcome',
  'https://evil.ex%2561mple.net/welcome%3Fnext%3D%252F',
];

/** Whether the response lets the attacker read it with the victim's cookie. */
const readable = (seen: Seen) => seen.acao === EVIL && seen.credentials === 'true';
const seenOf = (status: number, acao: string | null | undefined, credentials: string | null | undefined): Seen => ({
  status,
  acao: acao ?? undefined,
  credentials: credentials ?? undefined,
});

async function expressReads(express: typeof express5, read: Read, path: string, origin: string): Promise<Seen> {
  const app = express();
  app.use(
    expressAmpCors(((req: express5.Request, cb: Callback) =>
      cb(null, { origin: read((req.query as Record<string, string>)['return_to']), credentials: true })) as never),
  );
  app.get('/api', (_req, res) => void res.json({ secret: 1 }));
  app.use((_e: unknown, _q: unknown, res: express5.Response, _n: unknown) => void res.status(500).end());
  const res = await request(app).get(path).set({ Origin: origin, Cookie: 'session=victim' });
  return seenOf(res.status, res.headers['access-control-allow-origin'], res.headers['access-control-allow-credentials']);
}

async function koaReads(read: Read, path: string, origin: string): Promise<Seen> {
  const app = new Koa();
  app.silent = true;
  app.use(koaAmpCors({ origin: ((ctx: Koa.Context) => read(ctx.query['return_to'] as string) || '') as never, credentials: true }) as never);
  app.use((ctx) => {
    ctx.body = { secret: 1 };
  });
  const res = await request(app.callback()).get(path).set({ Origin: origin, Cookie: 'session=victim' });
  return seenOf(res.status, res.headers['access-control-allow-origin'], res.headers['access-control-allow-credentials']);
}

async function honoReads(read: Read, path: string, origin: string): Promise<Seen> {
  const app = new Hono();
  app.use(
    '/api/*',
    honoAmpCors({ origin: ((_o: string, c: import('hono').Context) => read(c.req.query('return_to')) || null) as never, credentials: true }) as never,
  );
  app.get('/api/*', (c) => c.json({ secret: 1 }));
  const res = await app.request(`http://api.example.test${path.replace('/api', '/api/x')}`, { headers: { Origin: origin, Cookie: 'session=victim' } });
  return seenOf(res.status, res.headers.get('access-control-allow-origin'), res.headers.get('access-control-allow-credentials'));
}

const READERS: ReadonlyArray<readonly [string, (read: Read, path: string, origin: string) => Promise<Seen>]> = [
  ['express 4', (read, path, origin) => expressReads(express4, read, path, origin)],
  ['express 5', (read, path, origin) => expressReads(express5, read, path, origin)],
  ['koa', koaReads],
  ['hono', honoReads],
];

describe('an origin read as new URL(return_to).origin, its host escaped once more than the framework decodes', () => {
  for (const [name, reads] of READERS) {
    it(`${name}: every spelling the function reads as the attacker's origin is refused`, async () => {
      for (const spelling of SPELLINGS) {
        // The control: the real request's value does read as the attacker's origin after the framework's decoding.
        expect(originOfUrl(new URLSearchParams(`return_to=${spelling}`).get('return_to') ?? undefined), spelling).toBe(EVIL);
        const seen = await reads(originOfUrl, `/api?return_to=${spelling}`, EVIL);
        expect.soft(readable(seen), `${spelling}: ${JSON.stringify(seen)}`).toBe(false);
        expect.soft(seen.status, `${spelling}: the guard's refusal`).not.toBe(200);
      }
    });
  }
});

describe('a function checking that origin against a list stays allowed, however the trusted origin is escaped', () => {
  const TRUSTED_LIST = new Set([TRUSTED, 'https://amp.example.com']);
  const listed: Read = (url) => {
    const origin = originOfUrl(url);
    return origin !== false && TRUSTED_LIST.has(origin) ? origin : false;
  };
  for (const [name, reads] of READERS) {
    it(`${name}: allowed, named exactly, with credentials`, async () => {
      for (const spelling of ['https://%2577ww.example.com/welcome', 'https://www.example.com/welcome', 'https%3A%2F%2Fwww.example.com%2Fwelcome']) {
        const seen = await reads(listed, `/api?return_to=${spelling}`, TRUSTED);
        expect(seen, `${spelling}: ${JSON.stringify(seen)}`).toMatchObject({ status: 200, acao: TRUSTED, credentials: 'true' });
      }
    });
  }
});
