/**
 * The adapters under fuzz, in process: each request goes through a real
 * Express 5, Express 4, Koa 3 or Koa 2 application (with real `node:http`
 * IncomingMessage and ServerResponse objects, no socket) or through the
 * Fetch adapter with real `Request`/`Response` objects. Without sockets a
 * request costs tens of microseconds, so a million per adapter fit in
 * minutes on a busy machine.
 *
 * Three modes (issue #6, issue #14):
 * - publisher (`express5` … `fetch`): every response is checked against
 *   @ampcors/core's verifier for the same configuration (status,
 *   `Access-Control-Allow-Origin`, credentials,
 *   `AMP-Access-Control-Allow-Source-Origin`, `Vary`, whether the handler
 *   ran) and every allowed origin against the independent oracle of
 *   fuzz-engine.ts. Any error reaching the framework is a finding.
 * - drop-in (`dropin-express5` … `dropin-koa2`): random `cors` / `@koa/cors`
 *   origin options (strings, RegExps including reflect-all ones, arrays,
 *   origin functions answering now, later or by Promise, credentials on and
 *   off), each with what it allows and what its author named written out
 *   here by hand; a finding is credentials paired with an origin the author
 *   did not name, an origin allowed that the option does not allow, a
 *   reflect-all option accepted with credentials (or a precise one refused),
 *   or an error that is neither the user's function's nor an AmpCorsError.
 * - AMP for Email (`email-express5` … `email-fetch`): email senders
 *   configured, random `AMP-Email-Sender`, `__amp_source_origin` and `Origin`;
 *   a finding is credentials paired with an origin that neither the
 *   independent oracle nor the list of email clients trusts (the latter only
 *   for a trusted v1 sender), a sender echoed that is not configured (ASCII
 *   case only), a denied state-changing request that ran the handler, or an
 *   error.
 */
import { createRequire } from 'node:module';
import { IncomingMessage, ServerResponse } from 'node:http';
import { Socket } from 'node:net';
import { createVerifier, isAmpCorsError, type Verdict } from '@ampcors/core';
import { ampCors as expressAmpCors, type ExpressAmpCorsOptions, type OriginCallback } from '@ampcors/express';
import { ampCorsOf, type FetchAmpCorsOptions, withAmpCors } from '@ampcors/fetch';
import { type AmpCorsState, ampCors as koaAmpCors, type KoaAmpCorsOptions, type KoaOriginFunction } from '@ampcors/koa';
import express5 from 'express';
import Koa3 from 'koa';
import { CORPUS_CONFIG } from './corpus.js';
import { allowedSetOracle, type AsyncFuzzTarget, checkVerdict, CORPUS_ORACLE, mutatedInput, outcome, type Random, randomInput } from './fuzz-engine.js';

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
  /** `AMP-Email-Sender` (email mode), absent when null or undefined. */
  readonly emailSender?: string | null;
}

/** What an adapter answered. */
interface Answer {
  readonly status: number;
  /** Response headers, lowercase names. */
  readonly headers: Record<string, string | undefined>;
  readonly handlerRan: boolean;
  /** An error that reached the framework, if any. */
  readonly error?: string;
  /** That error itself (for the drop-in mode, which tells the user's errors from ampcors's). */
  readonly failure?: unknown;
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
  if (r.emailSender !== null && r.emailSender !== undefined) list.push(['amp-email-sender', r.emailSender]);
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

function nodeAnswer(exchange: NodeExchange, failure: unknown): Answer {
  const headers: Record<string, string | undefined> = {};
  for (const [name, value] of Object.entries(exchange.res.getHeaders())) {
    headers[name.toLowerCase()] = Array.isArray(value) ? value.join(', ') : value === undefined ? undefined : String(value);
  }
  return {
    status: exchange.res.statusCode,
    headers,
    handlerRan: ran.has(exchange.req),
    ...(failure !== undefined && { error: typeof failure === 'string' ? failure : describe(failure), failure }),
  };
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

function expressCall(create: typeof express5, options: ExpressAmpCorsOptions = CORPUS_CONFIG): Call {
  const app = create();
  app.disable('x-powered-by');
  app.disable('etag');
  let error: unknown;
  app.use('/api', expressAmpCors(options));
  app.all('/api', (req, res) => {
    ran.add(req);
    res.setHeader('X-Verdict', req.ampCors?.reason ?? 'none');
    res.end('ok');
  });
  app.use((failure: unknown, _req: IncomingMessage, res: ServerResponse, _next: unknown) => {
    error = failure ?? 'next(falsy error)';
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

function koaCall(Create: typeof Koa3, options: KoaAmpCorsOptions = CORPUS_CONFIG): Call {
  const app = new Create<AmpCorsState>();
  app.silent = true;
  let error: unknown;
  app.on('error', (failure: unknown) => {
    error = failure ?? 'falsy error';
  });
  app.use(koaAmpCors(options));
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

function fetchCall(options: FetchAmpCorsOptions = CORPUS_CONFIG): Call {
  let failure: unknown;
  const handler = withAmpCors(
    (req: Request) => {
      ran.add(req);
      return new Response('ok', { headers: { 'X-Verdict': ampCorsOf(req)?.verdict.reason ?? 'none' } });
    },
    {
      ...options,
      onError: (error) => {
        failure = error;
        return new Response('error', { status: 500 });
      },
    },
  );
  return async (r) => {
    // A header value here is what a parser delivers (asHeaderValue), which Headers accepts.
    const req = new Request(`http://127.0.0.1${pathOf(r)}`, { method: r.method, headers: headerList(r).filter(([name]) => name !== 'host') });
    failure = undefined;
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
    return {
      status: response.status,
      headers,
      handlerRan: ran.has(req),
      ...(response.status === 500 && { error: failure === undefined ? 'answered 500' : describe(failure), failure }),
    };
  };
}

// ---------------------------------------------------------------------------
// The oracle.

const reference = createVerifier(CORPUS_CONFIG);

/**
 * Checks an adapter's answer to `r`; returns a finding or undefined.
 * `legacySource`: the adapter was configured with `legacySourceOriginHeader: true`
 * (without it, a checked source origin is never echoed).
 */
export function checkAnswer(r: FuzzRequest, answer: Answer, legacySource = false): string | undefined {
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
  if (answer.status !== want.status)
    return `status ${answer.status}, want ${want.status} (${verdict.allowed ? 'allowed' : 'denied'} ${verdict.reason}${preflight ? ', preflight' : ''})`;
  if (acao !== want.acao) return `Access-Control-Allow-Origin ${JSON.stringify(acao)}, want ${JSON.stringify(want.acao)}`;
  if (answer.handlerRan !== want.handler)
    return `handler ${answer.handlerRan ? 'ran' : 'did not run'} (${verdict.allowed ? 'allowed' : 'denied'} ${verdict.reason})`;
  if (acao !== undefined) {
    // The echoed origin, judged by the independent oracle as well.
    const why = CORPUS_ORACLE.explain(acao, verdict);
    if (why !== undefined) return `echoed ${why}`;
    if (answer.headers['access-control-allow-credentials'] !== 'true') return 'allowed without Access-Control-Allow-Credentials: true';
  } else if (answer.headers['access-control-allow-credentials'] !== undefined) {
    return 'Access-Control-Allow-Credentials without Access-Control-Allow-Origin';
  }
  const source = answer.headers['amp-access-control-allow-source-origin'];
  const wantSource = legacySource && verdict.allowed && !preflight ? verdict.sourceOrigin : undefined;
  if (source !== wantSource) return `AMP-Access-Control-Allow-Source-Origin ${JSON.stringify(source)}, want ${JSON.stringify(wantSource)}`;
  if (source !== undefined && !CORPUS_ORACLE.isPublisherOrigin(source)) return 'AMP-Access-Control-Allow-Source-Origin is not an allowed publisher origin';
  return undefined;
}

/** The adapters' in-process paths, as fuzz targets: one FuzzRequest per input. */
export function adapterFuzzTargets(): AsyncFuzzTarget<FuzzRequest>[] {
  // Half the targets echo the legacy source-origin header, so that both answers are fuzzed.
  const legacy = { ...CORPUS_CONFIG, legacySourceOriginHeader: true };
  const calls: Array<[string, Call, boolean]> = [
    ['express5', expressCall(express5, legacy), true],
    ['express4', expressCall(express4), false],
    ['koa3', koaCall(Koa3), false],
    ['koa2', koaCall(Koa2, legacy), true],
    ['fetch', fetchCall(legacy), true],
  ];
  return calls.map(([name, call, legacySource]) => ({
    name,
    random: (rng) => request(rng, randomInput(rng)),
    mutated: (rng) => request(rng, mutatedInput(rng)),
    run: async (r) => checkAnswer(r, await call(r), legacySource),
  }));
}

// ---------------------------------------------------------------------------
// Drop-in mode (issue #14 item 3): random origin options of `cors` and `@koa/cors`.

/** The origins the precise options name. */
const LISTED = ['https://a.example', 'https://b.example', 'https://x.example.com'];
const isListed = (origin: string) => LISTED.includes(origin);

/** How an origin function answers: now, on the next turn, or through a Promise (Koa: now, Promise, next turn). */
type Form = 0 | 1 | 2 | 3;

/** Switched on after the configuration is built: a "late" function then allows every origin. */
interface Late {
  armed: boolean;
}

/** A building block of an origin option, with its meaning written out independently of ampcors. */
interface Block {
  readonly id: string;
  /** The value in the option (an origin function for the given form). */
  value(form: Form, late: Late): unknown;
  /** True when the option allows `origin` (credentials off: anything the option says). */
  allows(origin: string): boolean;
  /** True when the option's author named `origin`: the only origins credentials may be paired with. */
  names(origin: string): boolean;
  /** It allows origins nobody named; refused with credentials when known at construction. */
  readonly reflectAll: boolean;
  /** An origin function; `errs`: it fails for origins it does not list (that 500 is the user's). */
  readonly fn?: { readonly errs: boolean };
}

const never = () => false;
const always = () => true;

function staticBlock(id: string, value: unknown, allows: (origin: string) => boolean, reflectAll = false): Block {
  return { id, value: () => value, allows, names: reflectAll ? never : allows, reflectAll };
}

/** A RegExp block: the pattern is the option, so it is its own meaning (without `g`, as ampcors and the author intend). */
function patternBlock(id: string, pattern: RegExp, reflectAll: boolean): Block {
  const meaning = new RegExp(pattern.source, pattern.flags.replace(/[gy]/g, ''));
  return staticBlock(id, pattern, (origin) => meaning.test(origin), reflectAll);
}

type Decision = { readonly answer: unknown } | { readonly error: Error } | { readonly throws: Error };

/** An Express origin callback answering `decide(origin)` in the given form. */
function expressFunction(decide: (origin: string | undefined) => Decision, form: Form): OriginCallback {
  const deliver = (decision: Decision, cb: Parameters<OriginCallback>[1]) => {
    if ('throws' in decision) throw decision.throws;
    if ('error' in decision) cb(decision.error);
    else cb(null, decision.answer as never);
  };
  switch (form) {
    case 0:
      return (origin, cb) => deliver(decide(origin), cb);
    case 1:
      return (origin, cb) => {
        const decision = decide(origin);
        setImmediate(() => {
          if ('throws' in decision) cb(decision.throws);
          else deliver(decision, cb);
        });
      };
    case 2:
      return (async (origin: string | undefined) => {
        const decision = decide(origin);
        if ('answer' in decision) return decision.answer;
        throw 'error' in decision ? decision.error : decision.throws;
      }) as unknown as OriginCallback;
    default:
      return (async (origin: string | undefined, cb: Parameters<OriginCallback>[1]) => {
        await null;
        const decision = decide(origin);
        if ('throws' in decision) cb(decision.throws);
        else deliver(decision, cb);
      }) as unknown as OriginCallback;
  }
}

function expressFunctionBlock(
  id: string,
  decide: (origin: string | undefined, late: Late) => Decision,
  meaning: Pick<Block, 'allows' | 'names' | 'reflectAll'>,
  errs = false,
): Block {
  return { id, value: (form, late) => expressFunction((origin) => decide(origin, late), form), ...meaning, fn: { errs } };
}

const NOT_LISTED = new Error('not allowed by CORS');

/** Whether `failure` is `error` or, as Koa's adapter rethrows an error with this request's CORS headers, an object inheriting from it. */
function isOrInherits(failure: unknown, error: Error): boolean {
  return failure === error || (typeof failure === 'object' && failure !== null && Object.getPrototypeOf(failure) === error);
}

const EXPRESS_BLOCKS: readonly Block[] = [
  staticBlock('"https://a.example"', 'https://a.example', (o) => o === 'https://a.example'),
  staticBlock('"http://localhost:3000"', 'http://localhost:3000', (o) => o === 'http://localhost:3000'),
  staticBlock('"https://xn--bcher-kva.example"', 'https://xn--bcher-kva.example', (o) => o === 'https://xn--bcher-kva.example'),
  patternBlock('/^https:\\/\\/([a-z0-9-]+\\.)*example\\.com$/', /^https:\/\/([a-z0-9-]+\.)*example\.com$/, false),
  patternBlock('/^https:\\/\\/b\\.example$/g', /^https:\/\/b\.example$/g, false),
  patternBlock('/example\\.org/', /example\.org/, true),
  patternBlock('/.*/', /.*/, true),
  patternBlock('/^https:\\/\\//', /^https:\/\//, true),
  patternBlock('/./', /./, true),
  patternBlock('/\\.com$/', /\.com$/, true),
  patternBlock('/\\.cdn\\.ampproject\\.org$/', /\.cdn\.ampproject\.org$/, true),
  staticBlock('true', true, always, true),
  staticBlock('false', false, never),
  staticBlock('"*"', '*', always, true),
];

const EXPRESS_FUNCTIONS: readonly Block[] = [
  expressFunctionBlock('cb(null, listed)', (o) => ({ answer: o !== undefined && isListed(o) }), { allows: isListed, names: isListed, reflectAll: false }),
  expressFunctionBlock('cb(null, listed ? origin : false)', (o) => ({ answer: o !== undefined && isListed(o) ? o : false }), {
    allows: isListed,
    names: isListed,
    reflectAll: false,
  }),
  expressFunctionBlock(
    'cb(listed ? null : error, true)',
    (o) => (o !== undefined && isListed(o) ? { answer: true } : { error: NOT_LISTED }),
    { allows: isListed, names: isListed, reflectAll: false },
    true,
  ),
  expressFunctionBlock(
    'throws unless listed',
    (o) => (o !== undefined && isListed(o) ? { answer: true } : { throws: NOT_LISTED }),
    { allows: isListed, names: isListed, reflectAll: false },
    true,
  ),
  expressFunctionBlock("cb(null, listed ? '*' : false)", (o) => ({ answer: o !== undefined && isListed(o) ? '*' : false }), {
    allows: isListed,
    names: isListed,
    reflectAll: false,
  }),
  expressFunctionBlock('cb(null, [listed origins])', () => ({ answer: [...LISTED] }), { allows: isListed, names: isListed, reflectAll: false }),
  expressFunctionBlock('cb(null, true)', () => ({ answer: true }), { allows: always, names: never, reflectAll: true }),
  expressFunctionBlock('cb(null, origin)', (o) => ({ answer: o }), { allows: always, names: never, reflectAll: true }),
  expressFunctionBlock("cb(null, '*')", () => ({ answer: '*' }), { allows: always, names: never, reflectAll: true }),
  expressFunctionBlock('cb(null, /.*/)', () => ({ answer: /.*/ }), { allows: always, names: never, reflectAll: true }),
  expressFunctionBlock('listed, then every origin once armed', (o, late) => ({ answer: late.armed || (o !== undefined && isListed(o)) }), {
    allows: always,
    names: isListed,
    reflectAll: false,
  }),
];

function koaFunction(answer: (ctx: { get(name: string): string }) => string, form: Form): KoaOriginFunction {
  const read = (ctx: unknown) => answer(ctx as { get(name: string): string });
  if (form === 0) return (ctx) => read(ctx);
  if (form === 1) return async (ctx) => read(ctx);
  return (ctx) =>
    new Promise((resolve, reject) =>
      setImmediate(() => {
        try {
          resolve(read(ctx));
        } catch (error) {
          reject(error);
        }
      }),
    );
}

function koaFunctionBlock(
  id: string,
  answer: (origin: string, late: Late) => string,
  meaning: Pick<Block, 'allows' | 'names' | 'reflectAll'>,
  errs = false,
): Block {
  return { id, value: (form, late) => koaFunction((ctx) => answer(ctx.get('Origin'), late), form), ...meaning, fn: { errs } };
}

const KOA_BLOCKS: readonly Block[] = [
  staticBlock('"https://a.example"', 'https://a.example', (o) => o === 'https://a.example'),
  staticBlock('"*"', '*', always, true),
  koaFunctionBlock('listed ? origin : ""', (o) => (isListed(o) ? o : ''), { allows: isListed, names: isListed, reflectAll: false }),
  koaFunctionBlock('listed ? "*" : ""', (o) => (isListed(o) ? '*' : ''), { allows: isListed, names: isListed, reflectAll: false }),
  koaFunctionBlock(
    'throws unless listed',
    (o) => {
      if (!isListed(o)) throw NOT_LISTED;
      return o;
    },
    { allows: isListed, names: isListed, reflectAll: false },
    true,
  ),
  koaFunctionBlock("ctx.get('Origin')", (o) => o, { allows: always, names: never, reflectAll: true }),
  koaFunctionBlock("ctx.get('Origin') || '*' (the @koa/cors README)", (o) => o || '*', { allows: always, names: never, reflectAll: true }),
  koaFunctionBlock("'*'", () => '*', { allows: always, names: never, reflectAll: true }),
  koaFunctionBlock('listed, then every origin once armed', (o, late) => (late.armed || isListed(o) ? o : ''), {
    allows: always,
    names: isListed,
    reflectAll: false,
  }),
];

/** One random drop-in configuration: blocks (one for Koa, a function or 1–2 static ones for Express), a form and credentials. */
export interface DropInConfig {
  /** With `publishers: ['example.com']` too: the option then adds origins to the verifier's. */
  readonly publishers: boolean;
  readonly blocks: readonly Block[];
  /** An array of blocks even for one (Express). */
  readonly array: boolean;
  readonly form: Form;
  readonly credentials: boolean | 'function';
}

/** One drop-in input: a configuration and a request. */
export interface DropInInput {
  readonly config: DropInConfig;
  readonly request: FuzzRequest;
}

function randomConfig(rng: Random, koa: boolean): DropInConfig {
  const credentials = koa ? rng.pick([true, false, 'function'] as const) : rng.pick([true, false] as const);
  const publishers = rng.int(4) === 0;
  if (koa) return { publishers, blocks: [rng.pick(KOA_BLOCKS)], array: false, form: rng.int(3) as Form, credentials };
  if (rng.int(2) === 0) return { publishers, blocks: [rng.pick(EXPRESS_FUNCTIONS)], array: false, form: rng.int(4) as Form, credentials };
  const blocks = rng.int(2) === 0 ? [rng.pick(EXPRESS_BLOCKS)] : [rng.pick(EXPRESS_BLOCKS), rng.pick(EXPRESS_BLOCKS)];
  return { publishers, blocks, array: blocks.length > 1 || rng.int(3) === 0, form: 0, credentials };
}

function configKey(config: DropInConfig): string {
  return JSON.stringify([config.publishers, config.blocks.map((b) => b.id), config.array, config.form, config.credentials]);
}

const DROP_IN_PUBLISHERS = ['example.com'];
const publisherOracle = allowedSetOracle(DROP_IN_PUBLISHERS);
const publisherReference = createVerifier({ publishers: DROP_IN_PUBLISHERS });

/** True when the configuration's publishers make `origin` a publisher or cache origin, as the independent oracle confirms. */
function publisherTrusts(config: DropInConfig, origin: string): boolean {
  if (!config.publishers) return false;
  const verdict = publisherReference.verify(origin);
  return verdict.allowed && verdict.via !== 'same-origin' && publisherOracle.explain(origin, verdict) === undefined;
}

const DROP_IN_ORIGINS = [
  ...LISTED,
  'https://sub.example.com',
  'https://example.com',
  'https://example-com.cdn.ampproject.org',
  'https://www-example-com.cdn.ampproject.org',
  'https://evil.com',
  'https://evil-com.cdn.ampproject.org',
  'http://localhost:3000',
  'https://example.org.evil.net',
  'https://xn--bcher-kva.example',
  'http://a.example',
  'https://a.example:8443',
  'https://A.example',
  'https://a.example.',
  'null',
  'https://b.example.evil.com',
];

function dropInOrigin(rng: Random, mutate: boolean): string {
  if (!mutate) return rng.int(2) === 0 ? randomInput(rng) : rng.pick(DROP_IN_ORIGINS);
  if (rng.int(3) === 0) return mutatedInput(rng);
  // A listed or look-alike origin with one edit.
  let s = rng.pick(DROP_IN_ORIGINS);
  if (rng.int(3) === 0) return s;
  const at = rng.int(s.length + 1);
  switch (rng.int(4)) {
    case 0:
      s = s.slice(0, at) + String.fromCharCode(33 + rng.int(94)) + s.slice(at);
      break;
    case 1:
      s = s.slice(0, at) + s.slice(at + 1);
      break;
    case 2:
      s = s + rng.pick(['.evil.com', '.', ':443', '/', 'x', '.example.com']);
      break;
    default:
      s = rng.pick(['https://', 'http://', 'https://evil.', 'https://x.']) + s.replace(/^https?:\/\//, '');
  }
  return s;
}

function dropInRequest(rng: Random, origin: string): FuzzRequest {
  const base = request(rng, origin);
  // The source origin, when present, from the same pool (a listed one, or not).
  return { ...base, sourceOrigin: base.sourceOrigin === null ? null : rng.int(2) === 0 ? rng.pick(DROP_IN_ORIGINS) : base.sourceOrigin };
}

/** A built drop-in configuration: its call, or why it was refused. */
interface Built {
  readonly call?: Call;
  readonly refused?: unknown;
  readonly late: Late;
}

/** True when the oracle expects the configuration to be refused at construction: credentials with a reflect-all block known synchronously. */
function expectRefusal(config: DropInConfig): boolean {
  return config.credentials !== false && config.blocks.some((block) => block.reflectAll && (block.fn === undefined || config.form === 0));
}

/** Checks a drop-in answer against the blocks' meaning; returns a finding or undefined. */
export function checkDropIn(config: DropInConfig, r: FuzzRequest, answer: Answer): string | undefined {
  const allows = (origin: string) => config.blocks.some((block) => block.allows(origin)) || publisherTrusts(config, origin);
  const names = (origin: string) => config.blocks.some((block) => block.names(origin)) || publisherTrusts(config, origin);
  const acao = answer.headers['access-control-allow-origin'];
  const credentials = answer.headers['access-control-allow-credentials'];
  if (answer.error !== undefined) {
    const failure = answer.failure;
    if (isAmpCorsError(failure)) {
      outcome(`error ${failure.code}`);
      if (failure.code !== 'unsafe-configuration') return `error: ${answer.error}`;
    } else if (isOrInherits(failure, NOT_LISTED) && config.blocks.some((block) => block.fn?.errs)) {
      outcome("error from the user's function");
    } else {
      return `error: ${answer.error}`;
    }
    if (acao !== undefined || credentials !== undefined) return 'an error response carries CORS headers';
    return answer.handlerRan ? 'the handler ran for a request that failed' : undefined;
  }
  if (acao === undefined) {
    outcome(r.origin === null ? 'no Origin' : 'not allowed');
    return credentials === undefined ? undefined : 'Access-Control-Allow-Credentials without Access-Control-Allow-Origin';
  }
  if (acao === '*') {
    // The peers' literal * (issue #15): an option or a function's answer allowing every origin, in the compatible mode, never with credentials.
    if (credentials !== undefined) return 'Access-Control-Allow-Credentials with the literal *';
    if (config.publishers) return 'the literal * beside publishers (the AMP mode echoes the Origin)';
    if (!config.blocks.some((block) => block.id === '"*"') && !(r.origin !== null && allows(r.origin)))
      return `the literal * for ${JSON.stringify(r.origin)}, which the option does not allow`;
    outcome('the literal *');
    return undefined;
  }
  if (acao !== r.origin) return `Access-Control-Allow-Origin ${JSON.stringify(acao)} is not the Origin as sent`;
  if (!allows(acao)) return `allowed ${acao}, which the option does not allow`;
  if (credentials !== undefined) {
    if (credentials !== 'true' || config.credentials === false)
      return `Access-Control-Allow-Credentials ${JSON.stringify(credentials)} with credentials ${String(config.credentials)}`;
    if (!names(acao)) return `wrong allow: credentials paired with ${acao}, which the option's author never named`;
    outcome('allowed with credentials');
  } else {
    if (config.credentials === true) return 'allowed without credentials although credentials are on';
    outcome('allowed without credentials');
  }
  const source = answer.headers['amp-access-control-allow-source-origin'];
  if (source !== undefined && (source !== r.sourceOrigin || !(credentials === undefined ? allows(source) : names(source)))) {
    return `AMP-Access-Control-Allow-Source-Origin ${JSON.stringify(source)} that the option does not vouch for`;
  }
  return undefined;
}

function dropInTarget(name: string, build: (config: DropInConfig, late: Late) => Call, koa: boolean): AsyncFuzzTarget<DropInInput> {
  const built = new Map<string, Built>();
  const construct = (config: DropInConfig): Built => {
    const key = configKey(config);
    let entry = built.get(key);
    if (entry === undefined) {
      const late: Late = { armed: false };
      try {
        entry = { call: build(config, late), late };
      } catch (error) {
        entry = { refused: error, late };
      }
      late.armed = true;
      built.set(key, entry);
    }
    return entry;
  };
  return {
    name,
    random: (rng) => ({ config: randomConfig(rng, koa), request: dropInRequest(rng, dropInOrigin(rng, false)) }),
    mutated: (rng) => ({ config: randomConfig(rng, koa), request: dropInRequest(rng, dropInOrigin(rng, true)) }),
    run: async ({ config, request: r }) => {
      const entry = construct(config);
      const refuse = expectRefusal(config);
      if (entry.call === undefined) {
        if (!isAmpCorsError(entry.refused)) return `construction threw ${describe(entry.refused)}`;
        if (entry.refused.code !== 'unsafe-configuration') return `construction refused with ${entry.refused.code}: ${entry.refused.message}`;
        if (!refuse) return `refused a configuration that names its origins: ${entry.refused.message}`;
        outcome('refused at construction');
        return undefined;
      }
      if (refuse) return 'accepted a reflect-all option with credentials';
      return checkDropIn(config, r, await entry.call(r));
    },
    show: ({ config, request: r }) =>
      JSON.stringify({
        publishers: config.publishers,
        blocks: config.blocks.map((b) => b.id),
        array: config.array,
        form: config.form,
        credentials: config.credentials,
        request: r,
      }),
  };
}

function expressDropIn(create: typeof express5) {
  return (config: DropInConfig, late: Late): Call => {
    const values = config.blocks.map((block) => block.value(config.form, late));
    const origin = config.array ? values : values[0];
    return expressCall(create, {
      origin,
      credentials: config.credentials === true,
      ...(config.publishers && { publishers: DROP_IN_PUBLISHERS }),
    } as ExpressAmpCorsOptions);
  };
}

function koaDropIn(Create: typeof Koa3) {
  return (config: DropInConfig, late: Late): Call => {
    const credentials = config.credentials === 'function' ? () => true : config.credentials;
    return koaCall(Create, {
      origin: (config.blocks[0] as Block).value(config.form, late),
      credentials,
      ...(config.publishers && { publishers: DROP_IN_PUBLISHERS }),
    } as KoaAmpCorsOptions);
  };
}

/** The drop-in mode: random origin options of `cors` (Express 5 and 4) and `@koa/cors` (Koa 3 and 2). */
export function dropInFuzzTargets(): AsyncFuzzTarget<DropInInput>[] {
  return [
    dropInTarget('dropin-express5', expressDropIn(express5), false),
    dropInTarget('dropin-express4', expressDropIn(express4), false),
    dropInTarget('dropin-koa3', koaDropIn(Koa3), true),
    dropInTarget('dropin-koa2', koaDropIn(Koa2), true),
  ];
}

// ---------------------------------------------------------------------------
// AMP for Email mode (issue #14 items 1 and 8).

/** The configured senders; `kate@` so that `\u212Aate@` (KELVIN SIGN, lowercased to `k`) is tried. */
export const EMAIL_SENDERS = ['news@example.com', 'Alerts@Example.org', 'kate@example.com'];
const EMAIL_CONFIG = { ...CORPUS_CONFIG, email: { senders: EMAIL_SENDERS } };

/**
 * The email client origin the oracle trusts for a v1 answer (with a trusted
 * sender): Gmail's, the one whose v1 `Origin` Google documents (AMP for Email
 * security requirements, "CORS Headers"). Written here, not read from
 * ampcors; other webmail origins are sent as look-alikes.
 */
export const EMAIL_CLIENT_ORIGINS: ReadonlySet<string> = new Set(['https://mail.google.com']);

const SENDER_POOL = [
  ...EMAIL_SENDERS,
  'NEWS@EXAMPLE.COM',
  'alerts@example.org',
  'Kate@Example.com',
  '\u212Aate@example.com',
  'news@example.com ',
  ' news@example.com',
  'news@example.com,evil@evil.com',
  'evil@evil.com',
  'news@evil.com',
  'news@example.com.evil.com',
  'news\u0000@example.com',
  '*',
  '',
  'news@exampl\u0435.com',
  'n\u00e9ws@example.com',
  'https://example.com',
];
const EMAIL_ORIGINS = [
  ...EMAIL_CLIENT_ORIGINS,
  'https://mail.yahoo.com',
  'https://e.mail.ru',
  'https://outlook.live.com',
  'https://playground.amp.dev',
  'https://amp.gmail.dev',
  'https://example.com',
  'https://example-com.cdn.ampproject.org',
  'https://a.example.org',
  'https://evil.example',
  'https://evil.com',
  'https://mail.google.com.evil.com',
  'https://evil-mail.google.com',
  'http://mail.google.com',
  'null',
];

function emailRequest(rng: Random, origin: string): FuzzRequest {
  const base = request(rng, origin);
  const v1 = rng.int(2) === 0 ? rng.pick([...SENDER_POOL, ...EMAIL_ORIGINS]) : null;
  const v2 = rng.int(2) === 0 ? asHeaderValue(rng.int(4) === 0 ? randomInput(rng) : rng.pick(SENDER_POOL)) : null;
  return { ...base, method: rng.pick(['POST', 'POST', 'GET', 'PUT', 'OPTIONS']), sourceOrigin: v1, emailSender: v2 === '' ? null : v2 };
}

/** A configured sender, compared in ASCII case only (the sender must be ASCII). */
export function trustedSender(sender: string | null | undefined): boolean {
  if (typeof sender !== 'string' || !/^[\x21-\x7e]+$/.test(sender)) return false;
  const lower = sender.toLowerCase();
  return EMAIL_SENDERS.some((configured) => configured.toLowerCase() === lower);
}

const emailReference = createVerifier(CORPUS_CONFIG);

/** True when the independent oracle trusts `origin` as a publisher or cache origin (the verifier's verdict, checked by it). */
function oracleTrusts(origin: string): boolean {
  const verdict = emailReference.verify(origin);
  return verdict.allowed && checkVerdict(CORPUS_ORACLE, origin, undefined, verdict) === undefined;
}

/** Checks an email-mode answer; returns a finding or undefined. */
export function checkEmailAnswer(r: FuzzRequest, answer: Answer): string | undefined {
  if (answer.error !== undefined) return `error: ${answer.error}`;
  const v2 = typeof r.emailSender === 'string' && r.emailSender !== '' ? r.emailSender : null;
  const v1 = v2 === null && typeof r.sourceOrigin === 'string' && r.sourceOrigin.includes('@') ? r.sourceOrigin : null;
  const origin = r.origin === '' ? null : r.origin;
  const clientTrusted = origin !== null && EMAIL_CLIENT_ORIGINS.has(origin) && trustedSender(v1);
  const originTrusted = origin !== null && oracleTrusts(origin);
  outcome(
    v2 !== null
      ? trustedSender(v2)
        ? 'v2 trusted sender'
        : 'v2 other sender'
      : v1 !== null
        ? trustedSender(v1)
          ? 'v1 trusted sender'
          : 'v1 other sender'
        : originTrusted
          ? 'trusted origin'
          : origin === null
            ? 'no Origin'
            : 'other origin',
  );
  const acao = answer.headers['access-control-allow-origin'];
  const credentials = answer.headers['access-control-allow-credentials'];
  if (acao !== undefined) {
    if (acao !== origin) return `Access-Control-Allow-Origin ${JSON.stringify(acao)} is not the Origin as sent`;
    if (credentials === 'true' && !originTrusted && !clientTrusted)
      return `wrong allow: Access-Control-Allow-Origin ${acao} with credentials, an origin the oracle does not trust${v1 !== null ? ` (v1 sender ${JSON.stringify(v1)})` : ''}`;
  } else if (credentials !== undefined) {
    return 'Access-Control-Allow-Credentials without Access-Control-Allow-Origin';
  }
  const allowSender = answer.headers['amp-email-allow-sender'];
  if (allowSender !== undefined && (allowSender !== v2 || !trustedSender(allowSender)))
    return `AMP-Email-Allow-Sender ${JSON.stringify(allowSender)} for sender ${JSON.stringify(v2)}`;
  const source = answer.headers['amp-access-control-allow-source-origin'];
  if (source !== undefined) {
    // With or without Access-Control-Allow-Origin (a same-origin request gets the source header alone).
    const asSender = source === v1 && trustedSender(source);
    const asPublisher = source === r.sourceOrigin && CORPUS_ORACLE.isPublisherOrigin(source);
    if (!asSender && !asPublisher)
      return `AMP-Access-Control-Allow-Source-Origin ${JSON.stringify(source)} for __amp_source_origin ${JSON.stringify(r.sourceOrigin)}`;
  }
  const stateChanging = r.method === 'POST' || r.method === 'PUT';
  if (stateChanging && answer.handlerRan && origin !== null && !originTrusted && !clientTrusted && !trustedSender(v2)) {
    return `a denied ${r.method} from ${origin} ran the handler`;
  }
  return undefined;
}

/** The AMP for Email mode, through every adapter. */
export function emailFuzzTargets(): AsyncFuzzTarget<FuzzRequest>[] {
  const calls: Array<[string, Call]> = [
    ['email-express5', expressCall(express5, EMAIL_CONFIG)],
    ['email-express4', expressCall(express4, EMAIL_CONFIG)],
    ['email-koa3', koaCall(Koa3, EMAIL_CONFIG)],
    ['email-koa2', koaCall(Koa2, EMAIL_CONFIG)],
    ['email-fetch', fetchCall(EMAIL_CONFIG)],
  ];
  return calls.map(([name, call]) => ({
    name,
    random: (rng) => emailRequest(rng, rng.int(2) === 0 ? randomInput(rng) : rng.pick(EMAIL_ORIGINS)),
    mutated: (rng) => emailRequest(rng, rng.int(2) === 0 ? mutatedInput(rng) : dropInOrigin(rng, true).replace(/a\.example|b\.example/, 'mail.google.com')),
    run: async (r) => checkEmailAnswer(r, await call(r)),
  }));
}
