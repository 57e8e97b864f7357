/**
 * Attacker's review (session 15, helper-48; fixed by helper-51): with credentials, the drop-ins' guard asks a
 * user's origin function (Express `cors`, Koa `@koa/cors`, Hono `hono/cors`, Fastify `@fastify/cors`) or Express
 * options delegate about a canary and the allowed origin's look-alikes, each bounded by QUESTION_TIMEOUT_MS (2 s).
 * A question still unanswered then counted as "not allowed", while the real answer had no bound: a loose function
 * answering after more than 2 s (a remote allow-list under load; every allowed credentialed request adds about nine
 * questions, so the attacker can cause the load) was never checked, and https://evilexample.com read credentialed
 * responses through every drop-in. Now an unanswered question is unknown, and unknown never yields credentials: the
 * request fails (this one only, so a slow spell does not refuse the application for good). Real time, ~4.4 s a test
 * (2.2 s answer + 2 s bound), run concurrently.
 */
import { ampCors as expressAmpCors } from '@ampcors/express';
import { ampCors as fastifyAmpCors } from '@ampcors/fastify';
import { ampCors as honoAmpCors } from '@ampcors/hono';
import { ampCors as koaAmpCors } from '@ampcors/koa';
import express from 'express';
import fastify from 'fastify';
import { Hono } from 'hono';
import Koa from 'koa';
import request from 'supertest';
import { describe, expect, test } from 'vitest';

const SLOW_MS = 2200; // just past the 2 s bound: a remote allow-list lookup under load
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const ATTACKER = 'https://evilexample.com'; // anyone can register it
const OWN = 'https://www.example.com';
const loose = (o: string) => o.endsWith('example.com'); // the suffix check without its dot, which the guard exists to catch

type Seen = { status: number; acao?: string; credentials?: string; message?: string };
type Callback = (e: Error | null, a?: unknown) => void;

async function viaExpress(options: unknown, from = ATTACKER, query = ''): Promise<Seen> {
  const app = express();
  app.use(expressAmpCors(options as never));
  app.get('/api', (_q, r) => void r.json({ secret: 1 }));
  app.use((error: Error, _q: unknown, r: express.Response, _n: unknown) => void r.status(500).send(error.message));
  const res = await request(app).get(`/api${query}`).set('Origin', from).set('Cookie', 'session=victim');
  return {
    status: res.status,
    acao: res.headers['access-control-allow-origin'],
    credentials: res.headers['access-control-allow-credentials'],
    message: res.text,
  };
}

/** Neither header a browser needs to hand the credentialed response to the page. */
const unreadable = (seen: Seen) => expect([seen.acao, seen.credentials]).toEqual([undefined, undefined]);
const UNKNOWN =
  /did not answer about https?:\/\/\S+ \((a canary origin no configuration names|a look-alike of \S+ anyone could register)\) within 2 s; credentials withheld/;

describe.concurrent('attack: a slow, loose origin answer with credentials', () => {
  test('express (cors): origin callback answering after 2.2 s', async () => {
    const origin = (o: string, cb: Callback) => void sleep(SLOW_MS).then(() => cb(null, loose(o)));
    const seen = await viaExpress({ origin, credentials: true });
    unreadable(seen);
    expect(seen.status).toBe(500);
    expect(seen.message).toMatch(UNKNOWN);
  });
  test('express (cors): origin function answering everything with true after 2.2 s', async () => {
    const origin = async (_o: string) => {
      await sleep(SLOW_MS);
      return true;
    };
    const seen = await viaExpress({ origin, credentials: true });
    unreadable(seen);
    expect(seen.status).toBe(500);
  });
  test('express (cors): options delegate answering after 2.2 s', async () => {
    const delegate = (req: { headers: Record<string, string | undefined> }, cb: Callback) => {
      const o = req.headers.origin ?? '';
      void sleep(SLOW_MS).then(() => cb(null, { origin: loose(o) ? o : false, credentials: true }));
    };
    const seen = await viaExpress(delegate);
    unreadable(seen);
    expect(seen.status).toBe(500);
    expect(seen.message).toMatch(UNKNOWN);
  });
  test('express (cors): options delegate answering at once about the real request, after 2.2 s about every other', async () => {
    const delegate = (req: { headers: Record<string, string | undefined> }, cb: Callback) => {
      const o = req.headers.origin ?? '';
      const answer = () => cb(null, { origin: loose(o) ? o : false, credentials: true });
      if (o === ATTACKER) answer();
      else void sleep(SLOW_MS).then(answer);
    };
    const seen = await viaExpress(delegate);
    unreadable(seen);
    expect(seen.message).toMatch(UNKNOWN);
  });
  test('koa (@koa/cors): origin(ctx) answering after 2.2 s', async () => {
    const app = new Koa();
    app.silent = true;
    const origin = async (ctx: { get(n: string): string }) => {
      await sleep(SLOW_MS);
      const o = ctx.get('Origin');
      return loose(o) ? o : '';
    };
    app.use(koaAmpCors({ origin, credentials: true } as never) as never);
    app.use((ctx) => {
      ctx.body = { secret: 1 };
    });
    const res = await request(app.callback()).get('/api').set('Origin', ATTACKER);
    unreadable({ status: res.status, acao: res.headers['access-control-allow-origin'], credentials: res.headers['access-control-allow-credentials'] });
    expect(res.status).toBe(500);
  });
  test('hono (hono/cors): origin(o, c) answering after 2.2 s', async () => {
    const app = new Hono();
    const origin = async (o: string) => {
      await sleep(SLOW_MS);
      return loose(o) ? o : null;
    };
    app.use('/api/*', honoAmpCors({ origin, credentials: true } as never) as never);
    app.get('/api/data', (c) => c.json({ secret: 1 }));
    const res = await app.request('http://api.example.test/api/data', { headers: { Origin: ATTACKER } });
    expect([res.headers.get('access-control-allow-origin'), res.headers.get('access-control-allow-credentials')]).toEqual([null, null]);
    expect(res.status).toBe(500);
  });
  test('fastify (@fastify/cors): async origin answering after 2.2 s', async () => {
    const app = fastify({ logger: false });
    try {
      const origin = async (o: string) => {
        await sleep(SLOW_MS);
        return loose(o);
      };
      await app.register(fastifyAmpCors, { origin, credentials: true } as never);
      app.get('/api', async () => ({ secret: 1 }));
      const res = await app.inject({ method: 'GET', url: '/api', headers: { origin: ATTACKER } });
      expect([res.headers['access-control-allow-origin'], res.headers['access-control-allow-credentials']]).toEqual([undefined, undefined]);
      expect(res.statusCode).toBe(500);
    } finally {
      await app.close();
    }
  });
  test('a slow __amp_source_origin answer is not allowed: the request is denied', async () => {
    const origin = (o: string, cb: Callback) => (o === OWN ? cb(null, true) : void sleep(SLOW_MS).then(() => cb(null, true)));
    const seen = await viaExpress({ origin, credentials: true }, OWN, `?__amp_source_origin=${encodeURIComponent(ATTACKER)}`);
    unreadable(seen);
  });
  test('control: the same loose function answering at once is caught (every adapter shares the guard)', async () => {
    const origin = (o: string, cb: Callback) => cb(null, loose(o));
    const seen = await viaExpress({ origin, credentials: true });
    unreadable(seen);
    expect(seen.status).toBe(500);
    expect(seen.message).toMatch(/a look-alike anyone could register/);
  });
});

describe.concurrent('what a slow spell costs a tight function: this request only', () => {
  test('a tight function answering in 0.5 s keeps its origin readable with credentials', async () => {
    const origin = (o: string, cb: Callback) => void sleep(500).then(() => cb(null, o === OWN));
    const seen = await viaExpress({ origin, credentials: true }, OWN);
    expect([seen.status, seen.acao, seen.credentials]).toEqual([200, OWN, 'true']);
  });
  test('a tight function slow for one request fails that request, and answers the next once it is fast again', async () => {
    let delay = SLOW_MS;
    const origin = (o: string, cb: Callback) => void sleep(delay).then(() => cb(null, o === OWN));
    const app = express();
    app.use(expressAmpCors({ origin, credentials: true } as never));
    app.get('/api', (_q, r) => void r.json({ secret: 1 }));
    app.use((_e: unknown, _q: unknown, r: express.Response, _n: unknown) => void r.status(500).end());
    const slow = await request(app).get('/api').set('Origin', OWN);
    expect([slow.status, slow.headers['access-control-allow-origin']]).toEqual([500, undefined]);
    delay = 5;
    const fast = await request(app).get('/api').set('Origin', OWN);
    expect([fast.status, fast.headers['access-control-allow-origin'], fast.headers['access-control-allow-credentials']]).toEqual([200, OWN, 'true']);
  });
});
