/**
 * The adapters under fuzz, in process: each request goes through a real
 * Express 5, Express 4, Koa 3 or Koa 2 application (with real `node:http`
 * IncomingMessage and ServerResponse objects, no socket) or through the
 * Fetch adapter with real `Request`/`Response` objects. Without sockets a
 * request costs tens of microseconds, so a million per adapter fit in
 * minutes on a busy machine.
 *
 * Every response is checked against @ampcors/core's verifier for the same
 * configuration (status, `Access-Control-Allow-Origin`, credentials,
 * `AMP-Access-Control-Allow-Source-Origin`, `Vary`, whether the handler ran)
 * and every allowed origin against the independent oracle of
 * fuzz-engine.ts. Any error reaching the framework is a finding.
 */
import { createRequire } from 'node:module';
import { IncomingMessage, ServerResponse } from 'node:http';
import { Socket } from 'node:net';
import { createVerifier, type Verdict } from '@ampcors/core';
import { ampCors as expressAmpCors } from '@ampcors/express';
import { ampCorsOf, withAmpCors } from '@ampcors/fetch';
import { type AmpCorsState, ampCors as koaAmpCors } from '@ampcors/koa';
import express5 from 'express';
import Koa3 from 'koa';
import { CORPUS_CONFIG } from './corpus.js';
import { type AsyncFuzzTarget, checkVerdict, CORPUS_ORACLE, mutatedInput, outcome, type Random, randomInput } from './fuzz-engine.js';

const require = createRequire(import.meta.url);
const express4 = require('express4') as typeof express5;
const Koa2 = require('koa2') as typeof Koa3;

/** One fuzzed request: the headers ampcors reads (null: absent). */
export interface FuzzRequest {
  readonly method: string;
  readonly origin: string | null;
  readonly ampSameOrigin: string | null;
  readonly requestMethod: string | null;
  readonly requestHeaders: string | null;
  /** The `__amp_source_origin` query value, or null for none. */
  readonly sourceOrigin: string | null;
}

/** What an adapter answered. */
interface Answer {
  readonly status: number;
  /** Response headers, lowercase names. */
  readonly headers: Record<string, string | undefined>;
  readonly handlerRan: boolean;
  /** An error that reached the framework, if any. */
  readonly error?: string;
}

const METHODS = ['GET', 'POST', 'OPTIONS', 'OPTIONS', 'OPTIONS', 'PUT', 'DELETE', 'PATCH', 'HEAD'];

/**
 * What a header value can be after an HTTP/1.1 parser: octets (a UTF-8
 * encoded character arrives as its bytes, read as latin1), no CR, LF or
 * NUL, no leading or trailing space or tab.
 */
export function asHeaderValue(value: string): string {
  const latin1 = /[^\u0000-\u00ff]/.test(value) ? Buffer.from(value, 'utf8').toString('latin1') : value;
  return latin1.replace(/[\r\n\u0000]/g, '').replace(/^[ \t]+|[ \t]+$/g, '');
}

function header(rng: Random, origin: string, choices: readonly (string | null)[]): string | null {
  return rng.int(3) === 0 ? asHeaderValue(rng.int(2) === 0 ? origin : randomInput(rng)) : rng.pick(choices);
}

function request(rng: Random, origin: string): FuzzRequest {
  return {
    method: rng.pick(METHODS),
    origin: rng.int(12) === 0 ? null : asHeaderValue(origin),
    ampSameOrigin: rng.int(4) === 0 ? header(rng, origin, ['true', 'TRUE', 'false', '']) : null,
    requestMethod: header(rng, origin, ['POST', 'GET', 'PUT', null, null]),
    requestHeaders: header(rng, origin, ['content-type', 'Content-Type, X-Requested-With', 'amp-same-origin', 'a, b,, c', null]),
    sourceOrigin: rng.int(5) === 0 ? header(rng, origin, ['https://example.com', 'https://a.example.org', 'https://evil.com', 'x@example.com']) : null,
  };
}

function pathOf(r: FuzzRequest): string {
  return r.sourceOrigin === null ? '/api' : `/api?__amp_source_origin=${encodeURIComponent(r.sourceOrigin)}`;
}

function headerList(r: FuzzRequest): Array<[string, string]> {
  const list: Array<[string, string]> = [['host', '127.0.0.1']];
  if (r.origin !== null) list.push(['origin', r.origin]);
  if (r.ampSameOrigin !== null) list.push(['amp-same-origin', r.ampSameOrigin]);
  if (r.requestMethod !== null) list.push(['access-control-request-method', r.requestMethod]);
  if (r.requestHeaders !== null) list.push(['access-control-request-headers', r.requestHeaders]);
  return list;
}

// ---------------------------------------------------------------------------
// node:http in process.

/** A socket that is never connected; IncomingMessage only keeps a reference. */
const NO_SOCKET = new Socket();
const ran = new WeakSet<object>();

interface NodeExchange {
  readonly req: IncomingMessage;
  readonly res: ServerResponse;
  /** Settles when the response is ended. */
  readonly ended: Promise<void>;
  /** True once the response is ended. */
  isEnded(): boolean;
}

function nodeExchange(r: FuzzRequest): NodeExchange {
  const req = new IncomingMessage(NO_SOCKET);
  req.method = r.method;
  req.url = pathOf(r);
  req.httpVersion = '1.1';
  req.httpVersionMajor = 1;
  req.httpVersionMinor = 1;
  const headers: Record<string, string> = {};
  const raw: string[] = [];
  for (const [name, value] of headerList(r)) {
    headers[name] = value;
    raw.push(name, value);
  }
  req.headers = headers;
  req.rawHeaders = raw;
  req.complete = true;
  req.push(null);
  const res = new ServerResponse(req);
  let done = false;
  const ended = new Promise<void>((resolve) => {
    const end = res.end;
    res.end = function (this: ServerResponse, ...args: unknown[]) {
      const result = (end as (...a: unknown[]) => ServerResponse).apply(this, args);
      done = true;
      resolve();
      return result;
    } as typeof res.end;
  });
  return { req, res, ended, isEnded: () => done };
}

function nodeAnswer(exchange: NodeExchange, error: string | undefined): Answer {
  const headers: Record<string, string | undefined> = {};
  for (const [name, value] of Object.entries(exchange.res.getHeaders())) {
    headers[name.toLowerCase()] = Array.isArray(value) ? value.join(', ') : value === undefined ? undefined : String(value);
  }
  return { status: exchange.res.statusCode, headers, handlerRan: ran.has(exchange.req), ...(error !== undefined && { error }) };
}

/** Waits for `ended`, or reports a hang after `ms`. */
async function settled(ended: Promise<void>, ms = 5_000): Promise<boolean> {
  let timer: NodeJS.Timeout | undefined;
  const hang = new Promise<boolean>((resolve) => {
    timer = setTimeout(() => resolve(false), ms);
  });
  const done = await Promise.race([ended.then(() => true), hang]);
  clearTimeout(timer);
  return done;
}

function describe(error: unknown): string {
  return error instanceof Error ? `${error.name}: ${error.message}` : String(error);
}

type Call = (r: FuzzRequest) => Promise<Answer>;

function expressCall(create: typeof express5): Call {
  const app = create();
  app.disable('x-powered-by');
  app.disable('etag');
  let error: string | undefined;
  app.use('/api', expressAmpCors(CORPUS_CONFIG));
  app.all('/api', (req, res) => {
    ran.add(req);
    res.setHeader('X-Verdict', req.ampCors?.reason ?? 'none');
    res.end('ok');
  });
  app.use((failure: unknown, _req: IncomingMessage, res: ServerResponse, _next: unknown) => {
    error = describe(failure);
    if (!res.headersSent) res.statusCode = 500;
    res.end('error');
  });
  const handle = app as unknown as (req: IncomingMessage, res: ServerResponse) => void;
  return async (r) => {
    error = undefined;
    const exchange = nodeExchange(r);
    try {
      handle(exchange.req, exchange.res);
    } catch (failure) {
      return nodeAnswer(exchange, `threw ${describe(failure)}`);
    }
    if (!exchange.isEnded() && !(await settled(exchange.ended))) return nodeAnswer(exchange, 'no response within 5 s');
    return nodeAnswer(exchange, error);
  };
}

function koaCall(Create: typeof Koa3): Call {
  const app = new Create<AmpCorsState>();
  app.silent = true;
  let error: string | undefined;
  app.on('error', (failure: unknown) => {
    error = describe(failure);
  });
  app.use(koaAmpCors(CORPUS_CONFIG));
  app.use((ctx) => {
    if (ctx.path !== '/api') return;
    ran.add(ctx.req);
    ctx.set('X-Verdict', ctx.state.ampCors?.reason ?? 'none');
    ctx.body = 'ok';
  });
  const handle = app.callback();
  return async (r) => {
    error = undefined;
    const exchange = nodeExchange(r);
    try {
      await handle(exchange.req, exchange.res);
    } catch (failure) {
      return nodeAnswer(exchange, `threw ${describe(failure)}`);
    }
    if (!exchange.isEnded() && !(await settled(exchange.ended))) return nodeAnswer(exchange, 'no response within 5 s');
    return nodeAnswer(exchange, error);
  };
}

function fetchCall(): Call {
  const handler = withAmpCors((req: Request) => {
    ran.add(req);
    return new Response('ok', { headers: { 'X-Verdict': ampCorsOf(req)?.verdict.reason ?? 'none' } });
  }, CORPUS_CONFIG);
  return async (r) => {
    // A header value here is what a parser delivers (asHeaderValue), which Headers accepts.
    const req = new Request(`http://127.0.0.1${pathOf(r)}`, { method: r.method, headers: headerList(r).filter(([name]) => name !== 'host') });
    let response: Response;
    try {
      response = await handler(req);
    } catch (failure) {
      return { status: 0, headers: {}, handlerRan: ran.has(req), error: `threw ${describe(failure)}` };
    }
    const headers: Record<string, string | undefined> = {};
    response.headers.forEach((value, name) => {
      headers[name] = value;
    });
    return { status: response.status, headers, handlerRan: ran.has(req), ...(response.status === 500 && { error: 'answered 500' }) };
  };
}

// ---------------------------------------------------------------------------
// The oracle.

const reference = createVerifier(CORPUS_CONFIG);

/** Checks an adapter's answer to `r`; returns a finding or undefined. */
export function checkAnswer(r: FuzzRequest, answer: Answer): string | undefined {
  if (answer.error !== undefined) return `error: ${answer.error}`;
  const context = { ampSameOrigin: r.ampSameOrigin, sourceOrigin: r.sourceOrigin };
  const verdict: Verdict = reference.verify(r.origin, context);
  const core = checkVerdict(CORPUS_ORACLE, r.origin, context, verdict);
  if (core !== undefined) return `core verdict: ${core}`;
  const preflight = r.method === 'OPTIONS' && !!r.origin && !!r.requestMethod;
  const acao = answer.headers['access-control-allow-origin'];
  const vary = answer.headers.vary ?? '';
  if (!vary.split(',').some((name) => name.trim().toLowerCase() === 'origin')) return `Vary ${JSON.stringify(vary)} without Origin`;
  let want: { status: number; acao: string | undefined; handler: boolean };
  if (verdict.allowed) want = { status: preflight ? 204 : 200, acao: verdict.origin ?? undefined, handler: !preflight };
  else if (verdict.reason === 'missing') want = { status: 200, acao: undefined, handler: true };
  else want = { status: 403, acao: undefined, handler: false };
  outcome(verdict.allowed ? (preflight ? 'allowed preflight' : 'allowed') : verdict.reason === 'missing' ? 'no Origin' : 'denied');
  if (answer.status !== want.status) return `status ${answer.status}, want ${want.status} (${verdict.allowed ? 'allowed' : 'denied'} ${verdict.reason}${preflight ? ', preflight' : ''})`;
  if (acao !== want.acao) return `Access-Control-Allow-Origin ${JSON.stringify(acao)}, want ${JSON.stringify(want.acao)}`;
  if (answer.handlerRan !== want.handler) return `handler ${answer.handlerRan ? 'ran' : 'did not run'} (${verdict.allowed ? 'allowed' : 'denied'} ${verdict.reason})`;
  if (acao !== undefined) {
    // The echoed origin, judged by the independent oracle as well.
    const why = CORPUS_ORACLE.explain(acao, verdict);
    if (why !== undefined) return `echoed ${why}`;
    if (answer.headers['access-control-allow-credentials'] !== 'true') return 'allowed without Access-Control-Allow-Credentials: true';
  } else if (answer.headers['access-control-allow-credentials'] !== undefined) {
    return 'Access-Control-Allow-Credentials without Access-Control-Allow-Origin';
  }
  const source = answer.headers['amp-access-control-allow-source-origin'];
  const wantSource = verdict.allowed && !preflight ? verdict.sourceOrigin : undefined;
  if (source !== wantSource) return `AMP-Access-Control-Allow-Source-Origin ${JSON.stringify(source)}, want ${JSON.stringify(wantSource)}`;
  if (source !== undefined && !CORPUS_ORACLE.isPublisherOrigin(source)) return 'AMP-Access-Control-Allow-Source-Origin is not an allowed publisher origin';
  return undefined;
}

/** The adapters' in-process paths, as fuzz targets: one FuzzRequest per input. */
export function adapterFuzzTargets(): AsyncFuzzTarget<FuzzRequest>[] {
  const calls: Array<[string, Call]> = [
    ['express5', expressCall(express5)],
    ['express4', expressCall(express4)],
    ['koa3', koaCall(Koa3)],
    ['koa2', koaCall(Koa2)],
    ['fetch', fetchCall()],
  ];
  return calls.map(([name, call]) => ({
    name,
    random: (rng) => request(rng, randomInput(rng)),
    mutated: (rng) => request(rng, mutatedInput(rng)),
    run: async (r) => checkAnswer(r, await call(r)),
  }));
}
