/**
 * @ampcors/hono — AMP-aware CORS middleware for Hono 4 (Node, Bun, Deno, Cloudflare Workers), a drop-in for `hono/cors`.
 * Hono's request → @ampcors/core (`hono/cors`'s options: its drop-in-hono-cors.ts) → Hono's response.
 * @packageDocumentation
 */
import type { EmailSender, Verdict } from '@ampcors/core';
import {
  answerOver,
  clearEarlierCorsHeaders,
  CORS_RESPONSE_HEADERS,
  type CorsPlan,
  createHonoCorsPolicy,
  DecidedRequest,
  fetchRequestFacts,
  type HonoCorsOptions,
  type HonoMethodsFunction as MethodsFunction,
  type HonoOriginFunction as OriginFunction,
  InnermostDecisions,
  isThenable,
  nodeRequestAbout,
  lazyProperty,
  nodeResponseIn,
  noteWritten,
  type OriginRewriter,
  originRewriter,
  pairsOverUnnoted,
  removeOwnGrant,
  unwrite,
  writableResponse,
  writePlan,
  writesFor,
  writesSoFar,
  writtenNoteOf,
} from '@ampcors/core/adapter';
import { Context, type MiddlewareHandler } from 'hono';

export { ampRedirectTo, AmpCorsError, type CorsOptions, type Verdict } from '@ampcors/core';
export type { AmpCorsConfig, VerdictSource } from '@ampcors/core/adapter';

/** Options of {@link ampCors}: the ampcors configuration, plus the options of `hono/cors` under their own names. */
export type HonoAmpCorsOptions = HonoCorsOptions<Context>;
/** `hono/cors`'s origin function, given Hono's context. */
export type HonoOriginFunction = OriginFunction<Context>;
/** `hono/cors`'s methods function, given Hono's context. */
export type HonoMethodsFunction = MethodsFunction<Context>;

/** What the middleware sets on the context: type the app with it, `new Hono<{ Variables: AmpCorsVariables }>()`. */
export interface AmpCorsVariables {
  /** The ampcors verdict of this request. */
  ampCors: Verdict;
  /** The AMP for Email sender, when `email` is configured and the request is one. */
  ampCorsEmail?: EmailSender;
}

/** The validation targets of `hono/validator` (`c.req.valid(target)`). */
const VALIDATED: readonly string[] = ['json', 'form', 'query', 'param', 'header', 'cookie'];

/** A request class's key of its route match (hono's `GET_MATCH_RESULT`, not exported), per `HonoRequest` prototype; `null` when it has none. */
const matchKeys = new WeakMap<object, symbol | null>();

/**
 * The key under which `req`'s class shows the route match it was made with
 * (hono 4.8 and later: a getter under a symbol hono does not export), or
 * `null`. Found once per class, by making a request of that class with a
 * match of our own and keeping the symbol-keyed getter (of its prototype
 * chain) that returns it.
 */
function matchKeyOf(req: object): symbol | null {
  const proto = Object.getPrototypeOf(req) as object | null;
  if (proto === null) return null;
  let key = matchKeys.get(proto);
  if (key !== undefined) return key;
  key = null;
  const mine: unknown = [[]];
  const made = readOr(
    () => new (proto.constructor as new (raw: Request, path: string, match: unknown) => object)(new Request('https://ampcors-probe.invalid/'), '/', mine),
    null,
  );
  if (made !== null) {
    for (let at: object | null = proto; at !== null && at !== Object.prototype && key === null; at = Object.getPrototypeOf(at) as object | null) {
      for (const symbol of Object.getOwnPropertySymbols(at)) {
        const getter = Object.getOwnPropertyDescriptor(at, symbol)?.get;
        if (getter !== undefined && readOr(() => getter.call(made) as unknown, undefined) === mine) key = symbol;
      }
    }
  }
  matchKeys.set(proto, key);
  return key;
}

/** What `read` returns, or `otherwise` when it throws. */
function readOr<T, U>(read: () => T, otherwise: U): T | U {
  try {
    return read();
  } catch {
    return otherwise;
  }
}

/** Contexts whose question contexts could not carry the route match (hono before 4.8): their credentialed allows fail. */
const routeLost = new WeakSet<Context>();
/** Whether {@link routeLost} ever received a context (so that hono 4.8 and later never look it up). */
let anyRouteLost = false;

/**
 * A context like `c` whose `Origin` is `origin`, for the guard's questions
 * about another origin (a canary, a look-alike, the `__amp_source_origin`).
 * It carries everything the real context carries except the `Origin`
 * (attacker's review, session 15: a bare context made a loose function that
 * reads its data from the context throw on every question, which counts as
 * "not allowed", so the guard passed), and an answer cannot change the
 * request's variables, body or response (objects inside the variables are
 * shared, not copied). The asked origin shows wherever the real one did
 * (core's asked-origin.ts; attacker's review, session 15: a question that
 * replaced only the `Origin` let a function echoing
 * `c.req.query('__amp_source_origin')` or the `Referer`'s origin pass):
 *
 * 1. The raw request: URL (its path segments and query parameters
 *    rewritten: `c.req.url`, `c.req.query()`, `c.req.queries()`), method,
 *    headers (the `Origin` replaced, the others rewritten: the `Referer`,
 *    `X-Forwarded-*`, custom ones; never `Host` nor `Cookie`), and
 *    Cloudflare's `cf`, made when first read (most functions read only the
 *    origin they are given).
 * 2. `env` ({@link envAbout}) and the execution context
 *    ({@link executionAbout}), their views of the request made about `origin`.
 * 3. The route: path, match (its parameters, matched routes and route
 *    path; the path and parameters rewritten) and route index. When the
 *    match cannot be read (hono before 4.8), the context is noted in
 *    {@link routeLost}: the request's credentialed allow fails.
 * 4. The variables (`c.get`, `c.var`), copied: a `c.set` stays on the copy.
 * 5. The body already read (`c.req.json()` …), read through, and
 *    `hono/validator`'s data, its `query`, `param` and `header` targets
 *    rewritten (the `Origin` replaced).
 *
 * Not carried: the response so far (reading `c.res` would create it and
 * change how hono merges the handler's headers), and a body the real
 * answer read from `c.req.raw` itself (the question's raw request has
 * none). Not replaced: a body, cookies, and what earlier middleware derived
 * from the real `Origin` and stored (a variable holding it), which
 * questions read as is.
 *
 * @param shared - what the questions about `c` share ({@link questionContexts})
 */
function contextAbout(c: Context, origin: string, shared: Shared): Context {
  const real = c.req;
  const rewrite = originRewriter(shared.headers['origin'], origin);
  // 1. The raw request, made when first read.
  let raw: Request | undefined;
  const rawOf = (): Request => (raw ??= rawAbout(real.raw, shared.headers, origin, rewrite));
  // 2. and 3. The environment, the execution context and the route.
  const options = {
    env: envAbout(c.env, origin, rawOf, rewrite),
    executionCtx: executionAbout(shared.executionCtx, rawOf),
    path: real.path,
    matchResult: rewrite === null ? shared.matchResult : matchAbout(shared.matchResult, shared.headers['origin'] as string, rewrite),
  } as ConstructorParameters<typeof Context>[1];
  const question = new (c.constructor as typeof Context)(questionPlaceholder(), options);
  const asked = question.req;
  if (rewrite !== null)
    Object.defineProperty(
      asked,
      'path',
      lazyProperty(() => rewrite.url(real.path)),
    );
  Object.defineProperty(asked, 'raw', {
    get: rawOf,
    set: (value: Request) => void (raw = value),
    enumerable: true,
    configurable: true,
  });
  asked.routeIndex = real.routeIndex;
  // 4. The variables.
  for (const [name, value] of shared.variables) question.set(name as never, value as never);
  // 5. The body read so far, and the validated data.
  asked.bodyCache = Object.create(real.bodyCache) as typeof asked.bodyCache;
  for (const target of VALIDATED) {
    const data: unknown = real.valid(target as never);
    if (data !== undefined) asked.addValidatedData(target as never, validatedAbout(target, data, origin, rewrite) as never);
  }
  return question;
}

/** Route matches found to show nothing of an origin (hono's router may return one match object for many requests): match → that origin. */
const cleanMatches = new WeakMap<object, string>();

/** 3. The route match about the asked origin (`rewrite`): `matchResult` itself when it shows nothing of `real`, noted once per match and origin. */
function matchAbout(matchResult: unknown, real: string, rewrite: OriginRewriter): unknown {
  if (!isObject(matchResult) || cleanMatches.get(matchResult) === real) return matchResult;
  const about = rewrite.deep(matchResult);
  if (about === matchResult) cleanMatches.set(matchResult, real);
  return about;
}

/** What the questions about one request share, read once per request ({@link questionContexts}). */
interface Shared {
  /** The request's headers as `{ name: value }`. */
  readonly headers: Readonly<Record<string, string>>;
  /** Its execution context, or `undefined`. */
  readonly executionCtx: unknown;
  /** Its route match, or `undefined` when hono does not show it. */
  readonly matchResult: unknown;
  /** Its variables. */
  readonly variables: ReadonlyArray<readonly [string | symbol, unknown]>;
}

/**
 * The question contexts of one middleware ({@link contextAbout}), with what
 * the questions about one request share read at its first question: its
 * headers, execution context (whose getter throws, at some cost, when there
 * is none), route match (when hono does not show it, the request is noted
 * in {@link routeLost}) and variables. A middleware asks its questions
 * about a request together, after the function answered the request
 * itself and before any later middleware runs, so these do not change
 * between them (another ampCors middleware has its own).
 */
function questionContexts(): (c: Context, origin: string) => Context {
  // The ten or so questions about one allowed credentialed request share one read.
  const sharedByContext = new WeakMap<Context, Shared>();
  return (c, origin) => contextAbout(c, origin, sharedOf(c, sharedByContext));
}

/** {@link Shared} of `c`, read once into `sharedByContext`. */
function sharedOf(c: Context, sharedByContext: WeakMap<Context, Shared>): Shared {
  let shared = sharedByContext.get(c);
  if (shared !== undefined) return shared;
  const real = c.req;
  const key = matchKeyOf(real);
  const matchResult: unknown = key === null ? undefined : (real as unknown as Record<symbol, unknown>)[key];
  if (matchResult === undefined) {
    routeLost.add(c);
    anyRouteLost = true;
  }
  const variables = c.var as Record<string | symbol, unknown>;
  shared = {
    headers: Object.fromEntries(real.raw.headers),
    // The getter throws when the context has none.
    executionCtx: readOr(() => c.executionCtx, undefined),
    matchResult,
    variables: Reflect.ownKeys(variables).map((name) => [name, variables[name]] as const),
  };
  sharedByContext.set(c, shared);
  return shared;
}

/** The raw request of a question: `real`'s URL, method and headers about `origin` (`rewrite`), and Cloudflare's `cf`. */
function rawAbout(real: Request, headers: Readonly<Record<string, string>>, origin: string, rewrite: OriginRewriter | null): Request {
  const raw = new Request(rewrite === null ? real.url : rewrite.url(real.url), {
    method: real.method,
    headers: { ...(headerMapAbout(headers, origin, false, rewrite) as Record<string, string>), origin },
  });
  const cf: unknown = (real as { cf?: unknown }).cf;
  if (cf !== undefined) Object.defineProperty(raw, 'cf', { value: cf, enumerable: true });
  return raw;
}

let placeholder: Request | undefined;

/** What a question context is made with before its request's `raw` is replaced by the question's (hono reads it only to make `c.req`): a request without headers. */
function questionPlaceholder(): Request {
  return (placeholder ??= new Request('https://ampcors-question.invalid/'));
}

/** 5. `hono/validator`'s data of `target` about `origin`: its `header` data as a header map, its `query` and `param` data rewritten, the others as they are. */
function validatedAbout(target: string, data: unknown, origin: string, rewrite: OriginRewriter | null): unknown {
  if (target === 'header') return headerMapAbout(data, origin, false, rewrite);
  return rewrite !== null && (target === 'query' || target === 'param') ? rewrite.deep(data) : data;
}

/** True for a non-null object. */
function isObject(value: unknown): value is object {
  return typeof value === 'object' && value !== null;
}

/** An own, writable, enumerable property of `value` (as a copy's own properties are). */
function own(value: unknown): PropertyDescriptor {
  return { value, writable: true, enumerable: true, configurable: true };
}

/** A copy of `value` (its own properties and prototype) with `replaced` over them. */
function copyWith(value: object, replaced: PropertyDescriptorMap): object {
  return Object.create(Object.getPrototypeOf(value) as object | null, { ...Object.getOwnPropertyDescriptors(value), ...replaced }) as object;
}

/**
 * A header map (`{ name: value }` or `{ name: [values] }`) with every
 * `Origin` entry, in any case, made `origin`, and every other value
 * rewritten by `rewrite` (core's asked-origin.ts).
 */
function headerMapAbout(headers: unknown, origin: string, many: boolean, rewrite: OriginRewriter | null): unknown {
  if (!isObject(headers)) return headers;
  const replaced: PropertyDescriptorMap = {};
  for (const name of Object.keys(headers)) {
    const lower = name.toLowerCase();
    if (lower === 'origin') {
      replaced[name] = own(many ? [origin] : origin);
      continue;
    }
    if (rewrite === null) continue;
    const value: unknown = (headers as Record<string, unknown>)[name];
    const about =
      typeof value === 'string'
        ? rewrite.header(lower, value)
        : Array.isArray(value)
          ? value.map((item: unknown) => (typeof item === 'string' ? rewrite.header(lower, item) : item))
          : value;
    if (about !== value) replaced[name] = own(about);
  }
  return copyWith(headers, replaced);
}

/**
 * `env` with the platform's own views of the request made about `origin`,
 * so that an answer reading their headers sees the question's `Origin`;
 * `env` itself when it has none (a copy keeps its other properties and
 * prototype):
 *
 * 1. `@hono/node-server`: the Node request (`env.incoming`), and the Node
 *    response (`env.outgoing`) leading to it (Node's `res.req`).
 * 2. AWS Lambda (`hono/aws-lambda`): the event's `headers` and
 *    `multiValueHeaders`, and its `queryStringParameters` and
 *    `multiValueQueryStringParameters` rewritten.
 * 3. Cloudflare Pages (`hono/cloudflare-pages`): the event context's
 *    `request`, the question's raw request (`rawOf`).
 *
 * Not replaced: Lambda@Edge's `event.Records[…].cf.request`.
 */
function envAbout(env: unknown, origin: string, rawOf: () => Request, rewrite: OriginRewriter | null): unknown {
  if (!isObject(env)) return env;
  const { incoming, outgoing, event, eventContext } = env as { incoming?: unknown; outgoing?: unknown; event?: unknown; eventContext?: unknown };
  const views: PropertyDescriptorMap = {};
  // 1. Node's request and response.
  if (isObject(incoming)) {
    const req = nodeRequestAbout(incoming, origin);
    views['incoming'] = own(req);
    if (isObject(outgoing)) views['outgoing'] = own(Object.create(outgoing, { req: { value: req } }));
  }
  // 2. Lambda's event.
  if (isObject(event) && ('headers' in event || 'multiValueHeaders' in event)) {
    const { headers, multiValueHeaders, queryStringParameters, multiValueQueryStringParameters } = event as Record<string, unknown>;
    const lambda: PropertyDescriptorMap = {
      headers: own(headerMapAbout(headers, origin, false, rewrite)),
      multiValueHeaders: own(headerMapAbout(multiValueHeaders, origin, true, rewrite)),
    };
    if (rewrite !== null) {
      if (isObject(queryStringParameters)) lambda['queryStringParameters'] = own(rewrite.deep(queryStringParameters));
      if (isObject(multiValueQueryStringParameters)) lambda['multiValueQueryStringParameters'] = own(rewrite.deep(multiValueQueryStringParameters));
    }
    views['event'] = own(copyWith(event, lambda));
  }
  // 3. The Pages event context's request.
  if (isObject(eventContext) && 'request' in eventContext) views['eventContext'] = own(Object.create(eventContext, { request: { get: rawOf } }));
  return Object.keys(views).length === 0 ? env : copyWith(env, views);
}

/**
 * The execution context of a question: `executionCtx` itself, or, for a
 * `FetchEvent` (a service worker's, Cloudflare's service-worker format),
 * a view whose `request` is the question's raw request (`rawOf`), its `waitUntil` and
 * `passThroughOnException` those of the real event.
 */
function executionAbout(executionCtx: unknown, rawOf: () => Request): unknown {
  if (!isObject(executionCtx) || !('request' in executionCtx)) return executionCtx;
  const view: PropertyDescriptorMap = { request: { get: rawOf } };
  for (const name of ['waitUntil', 'passThroughOnException']) {
    const method: unknown = (executionCtx as Record<string, unknown>)[name];
    if (typeof method === 'function') view[name] = { value: (method as (...args: unknown[]) => unknown).bind(executionCtx) };
  }
  return Object.create(executionCtx, view) as unknown;
}

/** Whether `pairs` (a plan's headers) set `name` (lower case; a few pairs: a loop, no closure). */
function plans(pairs: ReadonlyArray<readonly [string, string]>, name: string): boolean {
  for (let i = 0; i < pairs.length; i++) if ((pairs[i] as readonly [string, string])[0] === name) return true;
  return false;
}

/**
 * Ends the request now: the headers set so far by earlier middleware, plus the plan's (a response ampcors wrote into
 * for another request, set by earlier middleware, without what ampcors wrote). An answer ampcors makes carries no CORS
 * header of another layer that its plan does not set (attacker's review, session 16: `hono/cors` app-wide, or a
 * middleware's `c.header('Access-Control-Allow-Origin', …)` before `next()`, put its grant on the 403 of an ampCors on
 * `/admin` denying that origin): core's nested-policies.ts, 4.
 */
function end(c: Context, status: number, body: string, plan: Pick<CorsPlan, 'headers' | 'vary'>, policy: object, origin: string | null): Response {
  const res = c.res;
  const seen = writtenNoteOf(res);
  // A copy (every Set-Cookie kept) without the body's Content-Length and -Type and without the CORS headers the plan does not set.
  const headers = new Headers();
  for (const [name, value] of res.headers)
    if (name !== 'content-length' && name !== 'content-type' && (!CORS_RESPONSE_HEADERS.includes(name) || plans(plan.headers, name)))
      headers.append(name, value);
  if (seen !== undefined) unwrite(headers, seen);
  const note = writePlan(headers, plan.headers, plan.vary, null, policy, origin);
  // Not merged with the placeholder response (hono would put its Vary back over ours).
  c.res = undefined;
  c.res = new Response(body === '' ? null : body, { status, headers });
  // Noted: an outer ampCors meeting this answer through a rebuilt Request leaves it alone (core's nested-policies.ts, 3.).
  noteWritten(c.res, note);
  return c.res;
}

const FAILED = { headers: [['Content-Type', 'text/plain; charset=utf-8']], vary: ['Origin'] } as const;

/** The contexts an inner ampCors decided after an outer one (app-wide, then on a path): the outer then leaves the answer alone (core's nested-policies.ts; one table per realm, 6.). */
const innermost = InnermostDecisions.inRealm<Context>('@ampcors/hono');

/**
 * Creates the ampcors middleware for Hono 4. With `publishers` (or `verifier`): trusts the publisher's origins and
 * its AMP cache origins, answers preflights, stops denied origins with 403 before the handler runs (`onDenied:
 * 'omit'` lets them through without CORS headers), and sets `c.get('ampCors')` to the verdict. With `hono/cors`'s
 * options (`origin`, or nothing): behaves as `hono/cors` does, except that, with credentials, an option allowing
 * every origin (`'*'`, `(origin) => origin`) is refused (core's drop-in-hono-cors.ts). Never throws per request:
 * a throwing verifier or origin function becomes a 500 with `Vary: Origin` and no CORS header; the handler's own
 * errors are left to hono's `onError`, and its response gets the CORS headers like any other. Two ampCors on one
 * request (`app.use('*', …)` and `app.use('/admin/*', …)`): the innermost decides, and the outer leaves its answer alone;
 * with the Request rebuilt between them (`app.mount`), the more restrictive of the two answers (core's nested-policies.ts, 3.);
 * with the answer rebuilt between them (`hono/compress`, `hono/etag`, a HEAD request), no grant beyond the inner's (5.);
 * under `@hono/node-server`, CORS headers another framework's layer left on the Node response are removed (4.), as are
 * those of an earlier CORS middleware of this app (`hono/cors`) that ampCors's answer does not set (a response reaching
 * it with an `Access-Control-Allow-Origin` or `-Credentials` loses every CORS header its plan does not set).
 * @throws AmpCorsError for an invalid configuration.
 * @example app.use('/api/*', ampCors({ publishers: ['example.com'] }))
 */
export function ampCors(options?: HonoAmpCorsOptions): MiddlewareHandler<{ Variables: AmpCorsVariables }> {
  const cors = createHonoCorsPolicy<Context>(
    options,
    { probe: (origin) => new Context(new Request('https://ampcors-probe.invalid/', { headers: { origin } })), about: questionContexts() },
    'ampCors (@ampcors/hono)',
  );
  return async function ampCorsMiddleware(c, next) {
    let plan: CorsPlan;
    // The request's Origin, noted with what this ampCors writes (core's written-responses.ts); read again only after a failure to read it.
    let origin: string | null | undefined;
    // The layer that marked the Request as decided last, as this one left it (5.a): another after the handler is an inner one.
    let decider: object | undefined;
    // An earlier ampCors decided this request: this one, more specific, decides instead (its verdict replaces the earlier one's).
    if (c.get('ampCors') !== undefined) innermost.decidesAgain(c, cors);
    // Under `@hono/node-server`, a layer of another framework on the Node request (an Express app mounting this one) may
    // have left CORS headers on the Node response, under which the answer's are written: this one decides instead (core's
    // nested-policies.ts, 4.).
    const outgoing = nodeResponseIn(c.env);
    if (outgoing !== undefined) clearEarlierCorsHeaders(outgoing);
    try {
      const facts = fetchRequestFacts(c.req.raw);
      origin = facts.origin ?? null;
      // A Request an outer layer marked as decided (core's DecidedRequest: Fetch's withAmpCors marks every one) is marked
      // by this one too: that layer then knows an inner one decided it (core's nested-policies.ts, 5.a). Twin of the mark in
      // fetch's index.ts: keep in step.
      decider = DecidedRequest.by(c.req.raw);
      if (decider !== undefined) DecidedRequest.mark(c.req.raw, (decider = cors));
      const decided = cors.decide(facts, c);
      const decision = isThenable(decided) ? await decided : decided;
      plan = decision.plan;
      // A question context without the request's route (hono before 4.8): unknown never yields credentials.
      if (anyRouteLost && routeLost.has(c) && plan.headers.some(([name]) => name === 'access-control-allow-credentials'))
        return end(c, 500, 'Internal Server Error\n', FAILED, cors, origin);
      c.set('ampCors', decision.verdict);
      if (plan.email !== undefined) c.set('ampCorsEmail', plan.email);
      if (plan.handled) return end(c, plan.status, plan.body, plan, cors, origin);
    } catch {
      try {
        return end(c, 500, 'Internal Server Error\n', FAILED, cors, origin ?? readOr(() => c.req.raw.headers.get('origin'), null));
      } catch {
        return new Response('Internal Server Error\n', { status: 500, headers: { 'Content-Type': 'text/plain; charset=utf-8', Vary: 'Origin' } });
      }
    }
    const since = writesSoFar();
    const sinceOrigin = writesFor(origin);
    await next();
    // An inner ampCors decided this request: its answer stands.
    if (innermost.overruled(c, cors)) return;
    // The handler's response: written in place when ampcors has not written into it; else left alone or a copy (core's
    // answerOver: rule in nested-policies.ts, 3.), the Response itself never written again.
    let res = c.res;
    const seen = writtenNoteOf(res);
    if (seen !== undefined) {
      let answer: Response;
      try {
        answer = answerOver(res, seen, cors, since, origin, plan.headers, plan.vary, null);
      } catch {
        end(c, 500, 'Internal Server Error\n', FAILED, cors, origin);
        return;
      }
      if (answer === res) return;
      c.res = undefined;
      c.res = answer;
      return;
    }
    // An inner layer decided this Request, or ampcors wrote for this Origin while the handler ran: an inner answer rebuilt
    // without its note (`hono/compress`, `hono/etag`, a HEAD request, `app.mount`) gets no grant beyond its own (core's
    // nested-policies.ts, 5.a, 5.b).
    const inner = DecidedRequest.by(c.req.raw) !== decider;
    const moved = inner || sinceOrigin < writesFor(origin);
    let pairs = plan.headers;
    try {
      // An `@hono/node-server` Response not yet made real would make its headers again without what ampcors wrote (a later
      // `new Response(c.res.body, c.res)`): written in a copy instead (core's writableResponse).
      const target = writableResponse(res);
      if (target !== res) {
        c.res = undefined;
        c.res = res = target;
      }
      if (moved) pairs = pairsOverUnnoted(res.headers, pairs, inner);
      // A grant on it that another layer or the handler made: its CORS headers the plan does not set go (core's response-bodies.ts, 3.).
      if (!removeOwnGrant(res.headers, pairs) && pairs.length === 0 && plan.vary.length === 0) return;
      noteWritten(res, writePlan(res.headers, pairs, plan.vary, null, cors, origin));
    } catch {
      // Immutable headers (a fetch() result, Response.redirect): copied once; Response.error() kept; a body already read: a 500.
      const { body, status, statusText, headers } = c.res;
      if (status < 200) return;
      c.res = undefined;
      try {
        const copy = new Response(body, { status, statusText, headers });
        if (moved) pairs = pairsOverUnnoted(copy.headers, plan.headers, inner);
        removeOwnGrant(copy.headers, pairs);
        noteWritten(copy, writePlan(copy.headers, pairs, plan.vary, null, cors, origin));
        c.res = copy;
      } catch {
        end(c, 500, 'Internal Server Error\n', FAILED, cors, origin);
      }
    }
  };
}
