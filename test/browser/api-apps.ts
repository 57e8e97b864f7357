/**
 * The publisher API under test, once per adapter: the same two endpoints
 * (`GET /items` like an `amp-list` source, `POST /subscribe` like an
 * `amp-form` action with a redirect) behind `@ampcors/express`,
 * `@ampcors/koa`, `@ampcors/fetch` and `@ampcors/hono` (the last two served
 * from `node:http` through {@link nodeHandlerOf}). Each counts its subscriptions, the side effect a
 * denied origin must never cause.
 */
import type { AmpCorsConfig } from '@ampcors/core';
import { ampCors as expressAmpCors } from '@ampcors/express';
import { withAmpCors } from '@ampcors/fetch';
import { ampCors as honoAmpCors } from '@ampcors/hono';
import { ampCors as koaAmpCors } from '@ampcors/koa';
import express from 'express';
import { Hono } from 'hono';
import Koa from 'koa';
import { nodeHandlerOf } from './fetch-bridge.js';
import { type NodeHandler, SESSION_COOKIE } from './origin-server.js';

/** The adapters under test, as mounted on the API host. */
export const ADAPTERS = ['express', 'koa', 'fetch', 'hono'] as const;

/** One of {@link ADAPTERS}. */
export type Adapter = (typeof ADAPTERS)[number];

/** The API's side effects, as the test observes them. */
export interface ApiState {
  /** How many times the `POST /subscribe` handler ran. */
  subscriptions: number;
}

/** One adapter's API and its state. */
export interface AdapterApi {
  readonly handler: NodeHandler;
  readonly state: ApiState;
}

/** The `AMP-Redirect-To` of a successful subscription. */
export const REDIRECT_TO = 'https://www.example.com/thanks';

const ITEMS = ['first', 'second'];

/** The session cookie's value in a `Cookie` header, or `null`. */
function sessionOf(cookieHeader: string | null | undefined): string | null {
  for (const pair of (cookieHeader ?? '').split(';')) {
    const [name, value] = pair.trim().split('=');
    if (name === SESSION_COOKIE && value !== undefined) return value;
  }
  return null;
}

function expressApi(config: AmpCorsConfig, state: ApiState): NodeHandler {
  const app = express();
  app.use(expressAmpCors(config));
  app.get('/items', (req, res) => {
    res.json({ items: ITEMS, session: sessionOf(req.headers.cookie) });
  });
  app.post('/subscribe', (req, res) => {
    state.subscriptions += 1;
    res.set('AMP-Redirect-To', REDIRECT_TO).json({ subscribed: true, session: sessionOf(req.headers.cookie) });
  });
  return app;
}

function koaApi(config: AmpCorsConfig, state: ApiState): NodeHandler {
  const app = new Koa();
  app.use(koaAmpCors(config));
  app.use((ctx) => {
    const session = sessionOf(ctx.get('Cookie'));
    if (ctx.method === 'GET' && ctx.path === '/items') {
      ctx.body = { items: ITEMS, session };
    } else if (ctx.method === 'POST' && ctx.path === '/subscribe') {
      state.subscriptions += 1;
      ctx.set('AMP-Redirect-To', REDIRECT_TO);
      ctx.body = { subscribed: true, session };
    }
  });
  return app.callback();
}

function fetchApi(config: AmpCorsConfig, state: ApiState): NodeHandler {
  const handler = withAmpCors((request: Request) => {
    const path = new URL(request.url).pathname;
    const session = sessionOf(request.headers.get('Cookie'));
    if (request.method === 'GET' && path === '/items') return Response.json({ items: ITEMS, session });
    if (request.method === 'POST' && path === '/subscribe') {
      state.subscriptions += 1;
      return Response.json({ subscribed: true, session }, { headers: { 'AMP-Redirect-To': REDIRECT_TO } });
    }
    return new Response('not found', { status: 404 });
  }, config);
  return nodeHandlerOf(handler);
}

function honoApi(config: AmpCorsConfig, state: ApiState): NodeHandler {
  const app = new Hono();
  app.use('*', honoAmpCors(config));
  app.get('/items', (c) => c.json({ items: ITEMS, session: sessionOf(c.req.header('Cookie')) }));
  app.post('/subscribe', (c) => {
    state.subscriptions += 1;
    c.header('AMP-Redirect-To', REDIRECT_TO);
    return c.json({ subscribed: true, session: sessionOf(c.req.header('Cookie')) });
  });
  return nodeHandlerOf((request) => app.fetch(request));
}

const MAKERS: Record<Adapter, (config: AmpCorsConfig, state: ApiState) => NodeHandler> = { express: expressApi, koa: koaApi, fetch: fetchApi, hono: honoApi };

/** Builds the API behind one adapter, with its own state. */
export function createApi(adapter: Adapter, config: AmpCorsConfig): AdapterApi {
  const state: ApiState = { subscriptions: 0 };
  return { handler: MAKERS[adapter](config, state), state };
}

/** Builds the API once per adapter, each with its own state, from one configuration. */
export function createApis(config: AmpCorsConfig): Record<Adapter, AdapterApi> {
  return { express: createApi('express', config), koa: createApi('koa', config), fetch: createApi('fetch', config), hono: createApi('hono', config) };
}
