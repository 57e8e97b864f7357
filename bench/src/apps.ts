/**
 * Builds every configuration of configs.ts, the same way for the in-process
 * cases and the HTTP servers: a hello-world app per framework, alone or
 * behind a CORS middleware.
 *
 * Equal work: the peers are configured from what ampcors itself sends for
 * the measured requests, found once at start-up by asking the ampcors Fetch
 * adapter (so a change of ampcors's headers changes the peers' options too):
 * credentials, the same `Access-Control-Expose-Headers` (`AMP-Redirect-To`
 * included), the same `Access-Control-Allow-Methods`, `Access-Control-Max-Age`
 * and preflight status; every peer reflects the requested headers like
 * ampcors. The report compares the headers each configuration actually sent.
 *
 * The static-headers reference replays ampcors's answers (the same headers,
 * decided once at start-up): what sending them costs, without deciding.
 */
import { createServer, type RequestListener, type ServerResponse } from 'node:http';
import { pathToFileURL } from 'node:url';
import { CACHES } from '@ampcors/core';
import { BODY, type ConfigName, frameworkOf, KINDS, ORIGIN_LIST, PUBLISHERS, type RequestKind } from './http/configs.js';
import { fetchRequest } from './requests.js';

/** A Fetch API handler. */
export type FetchHandler = (request: Request) => Response | Promise<Response>;

/** A built configuration: a Node listener (Express, Koa) or a Fetch handler (Fetch, Hono). */
export type App = { readonly type: 'node'; readonly listener: RequestListener } | { readonly type: 'fetch'; readonly handler: FetchHandler };

/** What ampcors answers to one request kind: status and the headers it adds (names lowercased). */
export interface AmpcorsAnswer {
  readonly status: number;
  readonly headers: ReadonlyArray<readonly [string, string]>;
}

const TEXT = { 'content-type': 'text/plain; charset=utf-8' };

/** The hello world of the Fetch configurations. */
const hello: FetchHandler = () => new Response(BODY, { headers: TEXT });

/** What ampcors answers to each request kind (asked once, through the Fetch adapter over the hello world). */
export async function ampcorsAnswers(): Promise<Record<RequestKind, AmpcorsAnswer>> {
  const { withAmpCors } = await import('@ampcors/fetch');
  const wrapped = withAmpCors(hello, { publishers: PUBLISHERS });
  const answers = {} as Record<RequestKind, AmpcorsAnswer>;
  for (const kind of KINDS) {
    const response = await wrapped(fetchRequest(kind)());
    const headers: [string, string][] = [];
    response.headers.forEach((value, name) => {
      if (name !== 'content-type' && name !== 'content-length') headers.push([name, value]);
    });
    answers[kind] = { status: response.status, headers };
  }
  return answers;
}

/** The peers' options, from ampcors's answers. */
interface PeerOptions {
  readonly credentials: boolean;
  readonly exposed: string[];
  readonly methods: string[];
  readonly maxAge: number | undefined;
  readonly preflightStatus: number;
}

function peerOptions(answers: Record<RequestKind, AmpcorsAnswer>): PeerOptions {
  const header = (kind: RequestKind, name: string): string | undefined => answers[kind].headers.find(([n]) => n === name)?.[1];
  const list = (value: string | undefined): string[] =>
    value === undefined
      ? []
      : value
          .split(',')
          .map((v) => v.trim())
          .filter((v) => v !== '');
  const maxAge = header('preflight', 'access-control-max-age');
  return {
    credentials: header('get', 'access-control-allow-credentials') === 'true',
    exposed: list(header('get', 'access-control-expose-headers')),
    methods: list(header('preflight', 'access-control-allow-methods')),
    maxAge: maxAge === undefined ? undefined : Number(maxAge),
    preflightStatus: answers.preflight.status,
  };
}

/** The answer the static reference replays for a request (by method, and by the query for the two GETs). */
function pick(answers: Record<RequestKind, AmpcorsAnswer>, method: string | undefined, url: string | undefined): AmpcorsAnswer {
  if (method === 'OPTIONS') return answers.preflight;
  return url !== undefined && url.includes('__amp_source_origin=') ? answers['get-source'] : answers.get;
}

function replay(answer: AmpcorsAnswer, res: ServerResponse): void {
  for (const [name, value] of answer.headers) res.setHeader(name, value);
}

async function expressApp(config: ConfigName, answers: Record<RequestKind, AmpcorsAnswer>): Promise<RequestListener> {
  const { default: express } = await import('express');
  const app = express();
  const peer = peerOptions(answers);
  if (config === 'express+cors') {
    const { default: cors } = await import('cors');
    app.use(
      cors({
        origin: [...ORIGIN_LIST],
        credentials: peer.credentials,
        ...(peer.exposed.length > 0 && { exposedHeaders: peer.exposed }),
        methods: peer.methods,
        ...(peer.maxAge !== undefined && { maxAge: peer.maxAge }),
        optionsSuccessStatus: peer.preflightStatus,
      }),
    );
  } else if (config === 'express+toolbox-cors') {
    const { default: toolboxCors } = await import('@ampproject/toolbox-cors');
    // Offline: its documented second argument is the cache list; a local one
    // answers with the bundled registry instead of fetching caches.json.
    const caches = { list: async () => CACHES, get: async (id: string) => CACHES.find((cache) => cache.id === id) };
    app.use(toolboxCors({}, caches));
  } else if (config === 'express+ampcors') {
    const { ampCors } = await import('@ampcors/express');
    app.use(ampCors({ publishers: PUBLISHERS }));
  } else if (config === 'express+static-headers') {
    app.use((req, res, next) => {
      const answer = pick(answers, req.method, req.url);
      replay(answer, res);
      if (req.method !== 'OPTIONS') return next();
      res.statusCode = answer.status;
      res.end();
    });
  }
  app.all('/api/items', (_req, res) => {
    res.send(BODY);
  });
  return app as unknown as RequestListener;
}

async function koaApp(config: ConfigName, answers: Record<RequestKind, AmpcorsAnswer>): Promise<RequestListener> {
  const { default: Koa } = await import('koa');
  const app = new Koa();
  // A load generator that stops with pipelined requests in flight makes Koa log
  // EPIPE for each; failures still show as autocannon's errors and non-2xx.
  app.silent = true;
  const peer = peerOptions(answers);
  if (config === 'koa+@koa/cors') {
    const { default: koaCors } = await import('@koa/cors');
    const allowed = new Set(ORIGIN_LIST);
    app.use(
      koaCors({
        origin: (ctx) => (allowed.has(ctx.get('Origin')) ? ctx.get('Origin') : ''),
        credentials: peer.credentials,
        ...(peer.exposed.length > 0 && { exposeHeaders: peer.exposed }),
        allowMethods: peer.methods,
        ...(peer.maxAge !== undefined && { maxAge: peer.maxAge }),
      }),
    );
  } else if (config === 'koa+ampcors') {
    const { ampCors } = await import('@ampcors/koa');
    app.use(ampCors({ publishers: PUBLISHERS }) as unknown as Parameters<typeof app.use>[0]);
  } else if (config === 'koa+static-headers') {
    app.use(async (ctx, next) => {
      const answer = pick(answers, ctx.method, ctx.url);
      replay(answer, ctx.res);
      if (ctx.method !== 'OPTIONS') return next();
      ctx.status = answer.status;
    });
  }
  app.use((ctx) => {
    ctx.body = BODY;
  });
  return app.callback() as RequestListener;
}

/** The static reference around a Fetch handler: ampcors's answers replayed, nothing decided. */
function staticFetch(handler: FetchHandler, answers: Record<RequestKind, AmpcorsAnswer>): FetchHandler {
  return async (request) => {
    const answer = pick(answers, request.method, request.url);
    if (request.method === 'OPTIONS') return new Response(null, { status: answer.status, headers: answer.headers as [string, string][] });
    const response = await handler(request);
    for (const [name, value] of answer.headers) response.headers.set(name, value);
    return response;
  };
}

async function fetchApp(config: ConfigName, answers: Record<RequestKind, AmpcorsAnswer>): Promise<FetchHandler> {
  if (config === 'fetch') return hello;
  if (config === 'fetch+static-headers') return staticFetch(hello, answers);
  const { withAmpCors } = await import('@ampcors/fetch');
  return withAmpCors(hello, { publishers: PUBLISHERS });
}

/** The part of Hono 4 the benchmark uses (hono is optional: imported by a computed name, typed here). */
interface HonoApp {
  use(middleware: unknown): unknown;
  all(path: string, handler: (c: { text(body: string, status: number, headers: Record<string, string>): Response }) => Response): unknown;
  fetch(request: Request): Response | Promise<Response>;
}

/** The part of `hono/cors` the benchmark uses. */
type HonoCors = (options: {
  origin: (origin: string) => string | null;
  credentials: boolean;
  exposeHeaders: string[];
  allowMethods: string[];
  maxAge?: number;
}) => unknown;

/** Imports an optional package by a computed name (so that neither TypeScript nor the bundler needs it installed). */
async function optionalImport<T>(name: string): Promise<T> {
  return (await import(name)) as T;
}

/**
 * An ampcors adapter that is not a dependency of the bench package
 * (`@ampcors/hono`, `@ampcors/fastify`): its built `dist/index.js`, loaded by
 * path from the repository (it resolves `@ampcors/core` to the same file as
 * the bench does).
 */
async function workspaceAdapter<T>(name: string): Promise<T> {
  const here = new URL(import.meta.url).pathname;
  const root = here.slice(0, here.lastIndexOf('/bench/'));
  try {
    return await optionalImport<T>(pathToFileURL(`${root}/packages/${name}/dist/index.js`).href);
  } catch (error) {
    throw new Error(`@ampcors/${name} is not built (${whyUnavailable(error)})`);
  }
}

async function honoApp(config: ConfigName, answers: Record<RequestKind, AmpcorsAnswer>): Promise<FetchHandler> {
  const { Hono } = await optionalImport<{ Hono: new () => HonoApp }>('hono');
  const app = new Hono();
  const peer = peerOptions(answers);
  if (config === 'hono+hono/cors') {
    const { cors } = await optionalImport<{ cors: HonoCors }>('hono/cors');
    const allowed = new Set(ORIGIN_LIST);
    app.use(
      cors({
        origin: (origin) => (allowed.has(origin) ? origin : null),
        credentials: peer.credentials,
        exposeHeaders: peer.exposed,
        allowMethods: peer.methods,
        ...(peer.maxAge !== undefined && { maxAge: peer.maxAge }),
      }),
    );
  } else if (config === 'hono+ampcors') {
    const { ampCors } = await workspaceAdapter<{ ampCors: (options: { publishers: readonly string[] }) => unknown }>('hono');
    app.use(ampCors({ publishers: PUBLISHERS }));
  }
  app.all('/api/items', (c) => c.text(BODY, 200, TEXT));
  return (request) => app.fetch(request);
}

/** The part of Fastify 5 the benchmark uses. */
interface FastifyApp {
  register(plugin: unknown, options?: unknown): Promise<unknown>;
  addHook(name: 'onRequest', hook: (request: { method: string; url: string }, reply: FastifyReply, done: () => void) => void): void;
  route(options: { method: string[]; url: string; handler: (request: unknown, reply: FastifyReply) => void }): void;
  ready(): Promise<unknown>;
}

/** The part of a Fastify reply the benchmark uses. */
interface FastifyReply {
  raw: ServerResponse;
  code(status: number): FastifyReply;
  type(contentType: string): FastifyReply;
  send(body?: string): void;
}

async function fastifyApp(config: ConfigName, answers: Record<RequestKind, AmpcorsAnswer>): Promise<RequestListener> {
  const { default: Fastify } = await optionalImport<{ default: (options: { serverFactory: (handler: RequestListener) => unknown }) => FastifyApp }>('fastify');
  let listener: RequestListener | undefined;
  // The request listener Fastify hands its server, kept for the in-process cases and the HTTP server.
  const app = Fastify({
    serverFactory: (handler) => {
      listener = handler;
      return createServer(handler);
    },
  });
  const peer = peerOptions(answers);
  if (config === 'fastify+@fastify/cors') {
    const { default: fastifyCors } = await optionalImport<{ default: unknown }>('@fastify/cors');
    await app.register(fastifyCors, {
      origin: [...ORIGIN_LIST],
      credentials: peer.credentials,
      ...(peer.exposed.length > 0 && { exposedHeaders: peer.exposed }),
      methods: peer.methods,
      ...(peer.maxAge !== undefined && { maxAge: peer.maxAge }),
      optionsSuccessStatus: peer.preflightStatus,
    });
  } else if (config === 'fastify+ampcors') {
    const { ampCors } = await workspaceAdapter<{ ampCors: unknown }>('fastify');
    await app.register(ampCors, { publishers: PUBLISHERS });
  } else if (config === 'fastify+static-headers') {
    app.addHook('onRequest', (request, reply, done) => {
      const answer = pick(answers, request.method, request.url);
      replay(answer, reply.raw);
      if (request.method !== 'OPTIONS') return done();
      reply.code(answer.status).send();
    });
  }
  app.route({ method: ['GET', 'OPTIONS'], url: '/api/items', handler: (_request, reply) => reply.type(TEXT['content-type']).send(BODY) });
  await app.ready();
  if (listener === undefined) throw new Error('fastify did not hand its request listener to serverFactory');
  return listener;
}

/** Why a configuration could not be built, in one line ("hono is not installed" for a missing package). */
export function whyUnavailable(error: unknown): string {
  const message = error instanceof Error ? (error.message.split('\n')[0] as string) : String(error);
  const missing = /Cannot find (?:package|module) '([^']+)'/.exec(message);
  return missing === null ? message : `${missing[1]} is not installed`;
}

/** Builds one configuration (throws when a package it needs is not installed). */
export async function buildApp(config: ConfigName, answers: Record<RequestKind, AmpcorsAnswer>): Promise<App> {
  switch (frameworkOf(config)) {
    case 'express':
      return { type: 'node', listener: await expressApp(config, answers) };
    case 'koa':
      return { type: 'node', listener: await koaApp(config, answers) };
    case 'fetch':
      return { type: 'fetch', handler: await fetchApp(config, answers) };
    case 'hono':
      return { type: 'fetch', handler: await honoApp(config, answers) };
    case 'fastify':
      return { type: 'node', listener: await fastifyApp(config, answers) };
  }
}
