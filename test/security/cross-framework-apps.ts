/**
 * The apps of the cross-framework nesting attacks (attacks-session16-adapters-cross-framework.test.ts,
 * attacks-session17-adapters-email-grant.test.ts): an inner /admin app in each framework, as a Node listener with an
 * ampCors of its own, and the outer Express or Koa apps that mount such a listener on /admin.
 */
import type { EmailSender, Verdict } from '@ampcors/core';
import { ampCors as expressCors, type ExpressAmpCorsOptions } from '@ampcors/express';
import { ampCors as fastifyCors, type FastifyAmpCorsOptions } from '@ampcors/fastify';
import { ampCorsOf, type FetchAmpCorsOptions, withAmpCors } from '@ampcors/fetch';
import { type AmpCorsVariables, ampCors as honoCors, type HonoAmpCorsOptions } from '@ampcors/hono';
import { type AmpCorsState, ampCors as koaCors, type KoaAmpCorsOptions } from '@ampcors/koa';
import { getRequestListener } from '@hono/node-server';
import express from 'express';
import Fastify from 'fastify';
import { Hono } from 'hono';
import Koa from 'koa';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { createRequire } from 'node:module';

const express4 = createRequire(import.meta.url)('express4') as typeof express;

/** The options every adapter takes here (the same shapes are given to each). */
export type Options = Readonly<Record<string, unknown>>;
/** A Node request listener (an app mounted on /admin sees the path below it). */
export type Listener = (req: IncomingMessage, res: ServerResponse) => void;
/** What an inner handler answers (as JSON), from what its framework hands it: the verdict and the AMP for Email sender. */
export type InnerAnswer = (verdict: Verdict | undefined, email: EmailSender | undefined) => unknown;

/** The inner apps: a Node listener of a /admin app in each framework, ampCors with `inner` in it, a handler answering `answer`. */
export function innerApps(answer: InnerAnswer): ReadonlyArray<readonly [string, (inner: Options) => Promise<Listener>]> {
  const expressApp = (make: typeof express) => async (inner: Options) => {
    const app = make();
    app.use(expressCors(inner as ExpressAmpCorsOptions));
    app.use((req, res) => void res.json(answer(req.ampCors, req.ampCorsEmail)));
    return app as unknown as Listener;
  };
  return [
    ['Express 5', expressApp(express)],
    ['Express 4', expressApp(express4)],
    [
      'Koa (callback)',
      async (inner) => {
        const app = new Koa<AmpCorsState>();
        app.silent = true;
        app.use(koaCors(inner as KoaAmpCorsOptions));
        app.use((ctx) => void (ctx.body = answer(ctx.state.ampCors, ctx.state.ampCorsEmail)));
        return app.callback() as Listener;
      },
    ],
    [
      'Hono (@hono/node-server)',
      async (inner) => {
        const app = new Hono<{ Variables: AmpCorsVariables }>();
        app.use('*', honoCors(inner as HonoAmpCorsOptions));
        app.all('*', (c) => c.json(answer(c.get('ampCors'), c.get('ampCorsEmail')) as object));
        return getRequestListener(app.fetch) as Listener;
      },
    ],
    [
      'Fetch (@hono/node-server)',
      async (inner) =>
        getRequestListener(
          withAmpCors((req: Request) => Response.json(answer(ampCorsOf(req)?.verdict, ampCorsOf(req)?.email)), inner as FetchAmpCorsOptions),
        ) as Listener,
    ],
    [
      'Fastify (routing)',
      async (inner) => {
        const app = Fastify();
        await app.register(fastifyCors, inner as FastifyAmpCorsOptions);
        app.get('/secret', async (req) => answer(req.ampCors, req.ampCorsEmail));
        await app.ready();
        return (req, res) => app.routing(req, res);
      },
    ],
  ];
}

/** An Express app with `middleware` on every path and `inner` mounted on /admin. */
export function expressMounting(middleware: express.RequestHandler, inner: Listener): express.Express {
  const app = express();
  app.use(middleware);
  app.use('/admin', inner);
  return app;
}

/** A Koa app with `middleware` on every path, then `inner` taking over the Node request below /admin (the way Koa mounts a foreign app). */
export function koaMounting(middleware: Koa.Middleware, inner: Listener): Koa {
  const app = new Koa();
  app.silent = true;
  app.use(middleware);
  app.use((ctx) => {
    ctx.respond = false;
    ctx.res.statusCode = 200;
    ctx.req.url = (ctx.req.url ?? '').slice('/admin'.length) || '/';
    inner(ctx.req, ctx.res);
  });
  return app;
}
