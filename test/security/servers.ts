/**
 * The publisher API of the security suite, once per adapter and framework
 * major, each a real `node:http` server on loopback: `ALL /api` runs a
 * handler with a side effect (a counter) that echoes the verdict reason in
 * `X-Verdict`. Used by the HTTP corpus, the adapter faults and the soak.
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { createRequire } from 'node:module';
import { ampCors as expressAmpCors, type ExpressAmpCorsOptions } from '@ampcors/express';
import { ampCorsOf, type FetchAmpCorsOptions, withAmpCors } from '@ampcors/fetch';
import { type AmpCorsState, ampCors as koaAmpCors, type KoaAmpCorsOptions } from '@ampcors/koa';
import express5 from 'express';
import Koa3 from 'koa';

const require = createRequire(import.meta.url);
const express4 = require('express4') as typeof express5;
const Koa2 = require('koa2') as typeof Koa3;

/** Options every adapter accepts. */
export type AdapterOptions = ExpressAmpCorsOptions & KoaAmpCorsOptions & FetchAmpCorsOptions;

/** A running publisher API. */
export interface ApiServer {
  readonly adapter: AdapterName;
  readonly server: Server;
  /** `http://127.0.0.1:<port>` */
  readonly url: string;
  /** How many times the handler (with its side effect) ran. */
  handlerRuns: number;
  close(): Promise<void>;
}

/** The adapters under test. */
export const ADAPTERS = ['express5', 'express4', 'koa3', 'koa2', 'fetch'] as const;
/** One of {@link ADAPTERS}. */
export type AdapterName = (typeof ADAPTERS)[number];

/** Hooks a test may install around the adapter. */
export interface ServerHooks {
  /** Runs before the adapter (e.g. sends the response). */
  readonly before?: (res: ServerResponse) => void;
  /**
   * A `Vary` value present before the adapter adds its own: set by an earlier
   * middleware (Express, Koa) or on the handler's Response (Fetch).
   */
  readonly vary?: string;
}

function expressApp(create: typeof express5, options: AdapterOptions, api: ApiServer, hooks: ServerHooks): (req: IncomingMessage, res: ServerResponse) => void {
  const app = create();
  if (hooks.vary !== undefined) {
    const vary = hooks.vary;
    app.use((_req, res, next) => {
      res.setHeader('Vary', vary);
      next();
    });
  }
  if (hooks.before) {
    const before = hooks.before;
    app.use((_req, res, next) => {
      before(res);
      next();
    });
  }
  app.use('/api', expressAmpCors(options));
  app.all('/api', (req, res) => {
    api.handlerRuns++;
    res.setHeader('X-Verdict', req.ampCors?.reason ?? 'none');
    res.send('ok');
  });
  // Errors are answered without echoing anything of the request.
  app.use((_error: unknown, _req: IncomingMessage, res: ServerResponse, _next: unknown) => {
    if (res.headersSent) return;
    res.statusCode = 500;
    res.end('error');
  });
  return app as unknown as (req: IncomingMessage, res: ServerResponse) => void;
}

function koaApp(Create: typeof Koa3, options: AdapterOptions, api: ApiServer, hooks: ServerHooks): (req: IncomingMessage, res: ServerResponse) => void {
  const app = new Create<AmpCorsState>();
  app.silent = true;
  if (hooks.vary !== undefined) {
    const vary = hooks.vary;
    app.use(async (ctx, next) => {
      ctx.set('Vary', vary);
      await next();
    });
  }
  if (hooks.before) {
    const before = hooks.before;
    app.use(async (ctx, next) => {
      before(ctx.res);
      if (ctx.res.headersSent) ctx.respond = false;
      await next();
    });
  }
  app.use(koaAmpCors(options));
  app.use((ctx) => {
    if (ctx.path !== '/api') return;
    api.handlerRuns++;
    ctx.set('X-Verdict', ctx.state.ampCors?.reason ?? 'none');
    ctx.body = 'ok';
  });
  return app.callback();
}

function fetchApp(options: AdapterOptions, api: ApiServer, hooks: ServerHooks): (req: IncomingMessage, res: ServerResponse) => void {
  const handler = withAmpCors((request: Request) => {
    api.handlerRuns++;
    const headers = new Headers({ 'X-Verdict': ampCorsOf(request)?.verdict.reason ?? 'none' });
    if (hooks.vary !== undefined) headers.set('Vary', hooks.vary);
    return new Response('ok', { headers });
  }, options);
  return (req, res) => {
    hooks.before?.(res);
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      const headers = new Headers();
      for (let i = 0; i < req.rawHeaders.length; i += 2) headers.append(req.rawHeaders[i] as string, req.rawHeaders[i + 1] as string);
      const method = req.method ?? 'GET';
      const body = method === 'GET' || method === 'HEAD' ? undefined : Buffer.concat(chunks);
      handler(new Request(`http://127.0.0.1${req.url ?? '/'}`, { method, headers, body }))
        .then(async (response) => {
          if (res.headersSent) return;
          const out: Record<string, string | string[]> = {};
          response.headers.forEach((value, name) => {
            out[name] = value;
          });
          res.writeHead(response.status, out);
          res.end(Buffer.from(await response.arrayBuffer()));
        })
        .catch(() => {
          if (res.headersSent) return;
          res.statusCode = 500;
          res.end('error');
        });
    });
  };
}

/** Starts the publisher API for `adapter` on 127.0.0.1 (a free port). */
export async function startApi(adapter: AdapterName, options: AdapterOptions, hooks: ServerHooks = {}): Promise<ApiServer> {
  const api = { adapter, handlerRuns: 0 } as ApiServer & { server: Server; url: string; close: () => Promise<void> };
  const listener =
    adapter === 'express5'
      ? expressApp(express5, options, api, hooks)
      : adapter === 'express4'
        ? expressApp(express4, options, api, hooks)
        : adapter === 'koa3'
          ? koaApp(Koa3, options, api, hooks)
          : adapter === 'koa2'
            ? koaApp(Koa2, options, api, hooks)
            : fetchApp(options, api, hooks);
  const server = createServer({ keepAliveTimeout: 10_000 }, listener);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  api.server = server;
  api.url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  api.close = () =>
    new Promise<void>((resolve) => {
      server.closeAllConnections();
      server.close(() => resolve());
    });
  return api;
}
