/**
 * One harness per adapter and framework major: each builds a small publisher
 * API around the adapter under test and performs one request, returning what
 * a client sees plus how many times the handler ran. The conformance table
 * (scenarios.ts) is asserted against every harness.
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { createRequire } from 'node:module';
import { ampRedirectTo } from '@ampcors/core';
import { ampCors as expressAmpCors, type ExpressAmpCorsOptions } from '@ampcors/express';
import { ampCorsOf, type FetchAmpCorsOptions, withAmpCors } from '@ampcors/fetch';
import { type AmpCorsState, ampCors as koaAmpCors, type KoaAmpCorsOptions } from '@ampcors/koa';
import express5 from 'express';
import Koa3 from 'koa';
import request from 'supertest';

const require = createRequire(import.meta.url);
const express4 = require('express4') as typeof express5;
const Koa2 = require('koa2') as typeof Koa3;

/** A request of the conformance table. */
export interface ConformanceRequest {
  readonly method: 'GET' | 'POST' | 'OPTIONS';
  readonly path: string;
  readonly headers?: Readonly<Record<string, string>>;
}

/** What the client saw, plus whether the publisher's handler ran. */
export interface ConformanceResponse {
  readonly status: number;
  /** Lowercased header names. */
  readonly headers: Readonly<Record<string, string | undefined>>;
  readonly text: string;
  /** How many times a route handler ran (side effects included). */
  readonly handlerRuns: number;
  /** The verdict reason the handler saw, if it ran. */
  readonly seenReason: string | null;
}

/** The adapter configuration of a scenario (a superset accepted by every adapter). */
export type AdapterOptions = ExpressAmpCorsOptions & KoaAmpCorsOptions & FetchAmpCorsOptions;

/** An adapter under test. */
export interface Harness {
  readonly name: string;
  run(options: AdapterOptions, req: ConformanceRequest): Promise<ConformanceResponse>;
}

const THANKS = 'https://example.com/thanks';

interface Counter {
  runs: number;
  reason: string | null;
}

function viaSupertest(target: Parameters<typeof request>[0], req: ConformanceRequest, counter: Counter): Promise<ConformanceResponse> {
  const agent = request(target);
  const pending = req.method === 'GET' ? agent.get(req.path) : req.method === 'POST' ? agent.post(req.path) : agent.options(req.path);
  for (const [name, value] of Object.entries(req.headers ?? {})) pending.set(name, value);
  return pending.then((res) => ({
    status: res.status,
    headers: res.headers as Record<string, string>,
    text: res.text ?? '',
    handlerRuns: counter.runs,
    seenReason: counter.reason,
  }));
}

function expressHarness(name: string, createApp: typeof express5): Harness {
  return {
    name,
    run(options, req) {
      const counter: Counter = { runs: 0, reason: null };
      const app = createApp();
      app.use((_req, res, next) => {
        res.setHeader('Vary', 'Accept-Encoding');
        next();
      });
      app.use('/api', expressAmpCors(options));
      app.get('/api/items', (request, res) => {
        counter.runs += 1;
        counter.reason = request.ampCors?.reason ?? null;
        res.json({ items: [] });
      });
      app.post('/api/subscribe', (request, res) => {
        counter.runs += 1;
        counter.reason = request.ampCors?.reason ?? null;
        res.setHeader('AMP-Redirect-To', ampRedirectTo(THANKS));
        res.json({ subscribed: true });
      });
      app.options('/api/items', (_request, res) => {
        counter.runs += 1;
        res.status(200).send('handler');
      });
      return viaSupertest(app, req, counter);
    },
  };
}

function koaHarness(name: string, KoaClass: typeof Koa3): Harness {
  return {
    name,
    run(options, req) {
      const counter: Counter = { runs: 0, reason: null };
      const app = new KoaClass<AmpCorsState>();
      app.silent = true;
      app.use(async (ctx, next) => {
        ctx.set('Vary', 'Accept-Encoding');
        await next();
      });
      app.use(koaAmpCors(options));
      app.use(async (ctx) => {
        if (ctx.path === '/api/items' && ctx.method === 'GET') {
          counter.runs += 1;
          counter.reason = ctx.state.ampCors?.reason ?? null;
          ctx.body = { items: [] };
        } else if (ctx.path === '/api/subscribe' && ctx.method === 'POST') {
          counter.runs += 1;
          counter.reason = ctx.state.ampCors?.reason ?? null;
          ctx.set('AMP-Redirect-To', ampRedirectTo(THANKS));
          ctx.body = { subscribed: true };
        } else if (ctx.path === '/api/items' && ctx.method === 'OPTIONS') {
          counter.runs += 1;
          ctx.status = 200;
          ctx.body = 'handler';
        }
      });
      return viaSupertest(app.callback(), req, counter);
    },
  };
}

function fetchHandler(options: AdapterOptions, counter: Counter) {
  return withAmpCors((request: Request) => {
    const { pathname } = new URL(request.url);
    const reason = ampCorsOf(request)?.verdict.reason ?? null;
    if (pathname === '/api/items' && request.method === 'GET') {
      counter.runs += 1;
      counter.reason = reason;
      return Response.json({ items: [] }, { headers: { Vary: 'Accept-Encoding' } });
    }
    if (pathname === '/api/subscribe' && request.method === 'POST') {
      counter.runs += 1;
      counter.reason = reason;
      return Response.json({ subscribed: true }, { headers: { Vary: 'Accept-Encoding', 'AMP-Redirect-To': ampRedirectTo(THANKS) } });
    }
    if (pathname === '/api/items' && request.method === 'OPTIONS') {
      counter.runs += 1;
      return new Response('handler', { status: 200, headers: { Vary: 'Accept-Encoding' } });
    }
    return new Response('not found', { status: 404, headers: { Vary: 'Accept-Encoding' } });
  }, options);
}

const fetchDirect: Harness = {
  name: 'fetch (Request → Response)',
  async run(options, req) {
    const counter: Counter = { runs: 0, reason: null };
    const response = await fetchHandler(
      options,
      counter,
    )(new Request(`http://api.example.test${req.path}`, { method: req.method, headers: req.headers ?? {} }));
    return {
      status: response.status,
      headers: Object.fromEntries(response.headers),
      text: await response.text(),
      handlerRuns: counter.runs,
      seenReason: counter.reason,
    };
  },
};

/** Bridges node:http to a Fetch handler, the way a Node deployment of @ampcors/fetch would. */
function nodeBridge(handler: (request: Request) => Promise<Response>): (req: IncomingMessage, res: ServerResponse) => void {
  return (req, res) => {
    const headers = new Headers();
    for (const [name, value] of Object.entries(req.headers)) if (typeof value === 'string') headers.set(name, value);
    handler(new Request(`http://${req.headers.host ?? 'localhost'}${req.url ?? '/'}`, { method: req.method ?? 'GET', headers }))
      .then(async (response) => {
        res.writeHead(response.status, Object.fromEntries(response.headers));
        res.end(Buffer.from(await response.arrayBuffer()));
      })
      .catch(() => {
        res.writeHead(502);
        res.end();
      });
  };
}

const fetchOverHttp: Harness = {
  name: 'fetch (node:http server)',
  async run(options, req) {
    const counter: Counter = { runs: 0, reason: null };
    const server: Server = createServer(nodeBridge(fetchHandler(options, counter)));
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    try {
      const { port } = server.address() as AddressInfo;
      return await viaSupertest(`http://127.0.0.1:${port}`, req, counter);
    } finally {
      await new Promise<void>((resolve) => server.close(() => resolve()));
    }
  },
};

/** Every adapter under test: Express 5 and 4, Koa 3 and 2, Fetch direct and over node:http. */
export const HARNESSES: readonly Harness[] = [
  expressHarness('express 5', express5),
  expressHarness('express 4', express4),
  koaHarness('koa 3', Koa3),
  koaHarness('koa 2', Koa2),
  fetchDirect,
  fetchOverHttp,
  // Fastify 5 and 4 (harness-fastify.ts; an import is hoisted, so it may stand here).
  ...FASTIFY_HARNESSES,
  // Hono 4 in process and on @hono/node-server (harness-hono.ts; an import is hoisted, so it may stand here).
  ...HONO_HARNESSES,
];
import { HONO_HARNESSES } from './harness-hono.js';
import { FASTIFY_HARNESSES } from './harness-fastify.js';
