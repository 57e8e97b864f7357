/**
 * Two ampCors policies on one request: the innermost decides (attacker's
 * review, session 15: an application-wide policy allowing a partner and a
 * stricter one on `/admin` denying it answered `/admin` with the outer
 * policy's `Access-Control-Allow-Origin` and `-Credentials`, so the partner
 * read it with the user's cookies). The more specific policy decides:
 *
 * 1. An adapter that writes its headers before the handler runs (Express,
 *    Koa, Fastify) and sees that an earlier ampCors decided the request
 *    (the verdict it already keeps: `req.ampCors`, `ctx.state.ampCors`,
 *    `request.ampCors`) removes every CORS response header its own plan
 *    does not set ({@link removeEarlierCorsHeaders}); `Vary` is kept, merged.
 *    A failing ampCors removes all of them (a failure never allows).
 * 2. An adapter whose outer layer writes after the handler (Hono, Fetch;
 *    Koa's headers of an error thrown later) notes that an inner ampCors
 *    decided again ({@link InnermostDecisions}); the outer layers then leave
 *    the answer alone.
 * 3. The same adapters when the layers see different request objects (a
 *    router that rebuilds the Request, `new Request(url, req)`; Hono's
 *    `app.mount`): neither layer can tell the other's request from its own
 *    (attacker's review, session 15: the outer took the inner's noted
 *    Response for a cached one written for another request and put its
 *    allow, with credentials, on the inner's denial). Every Response
 *    ampcors writes into, or makes (a preflight's answer, a 403), is noted
 *    with the policy that wrote it and a count of writes
 *    (written-responses.ts); a layer reads the count before its handler
 *    runs. A layer meeting a Response noted by ANOTHER policy AFTER that
 *    (written while its handler ran: an inner layer's, or another request's
 *    in flight on one cached Response, which no rule can tell apart) gives
 *    the MORE RESTRICTIVE of the two: the Response itself when each CORS
 *    header the note set is one its own plan sets with the same value (an
 *    inner denial stays a denial), else a copy without the CORS headers its
 *    plan does not set (a looser inner answer, or an open policy's answer
 *    met by a strict one, loses what the outer would not grant). A note by
 *    the SAME policy, or one written before its handler ran, is a cached
 *    Response written for another request: a copy as it was before, with
 *    this plan. The request's Origin and source origin are deliberately not
 *    compared: a router that drops the query (or a header) would let the
 *    attacker make them differ between the layers and get the outer's
 *    allow. A failure's answer is always the copy without CORS headers.
 *    The cost of the rule: two policies answering one cached Response
 *    object at the same moment may both answer the stricter one's headers.
 *
 * 4. The layers are in different frameworks on one Node request (Express
 *    with a Koa app's `callback()` or an `@hono/node-server` listener
 *    mounted on `/admin`, Koa handing `ctx.req`/`ctx.res` to an Express
 *    app), or a framework's own record was lost between them (Koa's
 *    `ctx.state` replaced): none of the records above is shared (attacker's
 *    review, session 16: the outer allow with credentials reached `/admin`
 *    the inner policy denied). What every layer writes on a Node response
 *    is in its one header store, whatever framework wrote it, so the
 *    response itself tells that an earlier layer (an ampCors, or another
 *    CORS middleware) granted: a CORS grant there ({@link CORS_GRANTS}, the
 *    AMP ones too: attacker's review, session 17, an AMP for Email v2 allow
 *    is `AMP-Email-Allow-Sender` alone) that this layer's plan does not
 *    make ({@link earlierGrantLeft}; for an allowed plan, also a
 *    header of the plan that had a value before it was set, which
 *    `applyHeadersAtomically` reports at no cost). This layer then removes
 *    every CORS header its plan does not set, as in 1. An adapter whose
 *    answer does not go through that store (Fastify's reply, merged into it
 *    when sent; a Fetch `Response` that `@hono/node-server` writes over it)
 *    removes every CORS header found there ({@link clearEarlierCorsHeaders}):
 *    its own answer carries all of its own. Whatever was before ampCors,
 *    the later (inner) ampCors decides. Each removal is noted on the
 *    response ({@link lastTakeBack}): an earlier Koa ampCors that puts its
 *    plan back over a Fetch `Response` body after its handler ran puts back
 *    the later layer's headers instead (attacker's review, session 17: it
 *    put its allow, with credentials, over an inner Express ampCors's
 *    denial when the body carried a grant of its own).
 * 5. A layer between two ampCors rebuilt the inner's answer (a new Response
 *    without its note: `hono/compress`, `hono/etag`'s 304, Hono's `HEAD`
 *    answer): a layer meeting a Response without a note adds no grant
 *    beyond what it already holds ({@link pairsOverUnnoted}) when
 *    a. another layer marked this very Request as decided while the
 *       handler ran (written-responses.ts's `DecidedRequest`: the Request
 *       kept, as by compress, etag, HEAD); or
 *    b. the Request may have been rebuilt too (`app.mount`, `new
 *       Request(url, req)`: no mark reaches this layer): ampcors wrote,
 *       while the handler ran, an answer to a request with the same
 *       `Origin` (`writesFor`; or one sharing its slot), and the Response
 *       looks like an answer of ampcors. The one false denial left: a
 *       handler's own Response varying on `Origin` or holding a grant (a
 *       proxied upstream's) while a request with the same `Origin` (or one
 *       sharing its slot of 64) is answered by ampcors's Fetch or Hono
 *       adapter in this process. The one gap left: a layer between that
 *       rebuilds the Request and also drops every CORS header and `Vary`
 *       of the inner's answer.
 * 6. ampcors loaded twice in one realm (the dual-package hazard: its ESM
 *    build imported, its CommonJS build required by a router built on it;
 *    each with its own core): what one layer leaves for another (the notes
 *    and marks of written-responses.ts, its counts of writes, the tables
 *    of 2. and 4.) is kept once per realm ({@link sharedInRealm}), by the
 *    first copy loaded; each later copy of the same {@link REALM_VERSION}
 *    uses it (attacker's review, session 17: kept per copy, an outer layer
 *    of one copy met the inner answer of the other as a Response nobody
 *    wrote into, and put its allow, with credentials, over the denial). A
 *    copy that meets the state of another version keeps its own, and both
 *    treat every answer as one an inner layer may have written (5.b:
 *    written-responses.ts's `writesFor` grows at every read): fail closed.
 *
 * The names and the rule live here once; the adapters only say where their
 * verdict is kept and how their response removes a header.
 */
/**
 * 6. The version of what {@link sharedInRealm} keeps: raised whenever a part's shape or meaning changes (its name, its
 * fields, written-responses.ts's hash of an `Origin` to its slot), so that a copy never uses a part it does not speak.
 */
const REALM_VERSION = 1;
/** 6. Where the first copy of this module in a realm puts {@link RealmState} (`Symbol.for`: the same symbol in every copy). */
const REALM_KEY = Symbol.for('@ampcors/core/nested-state');

/** 6. What the copies of ampcors in one realm share. */
export interface RealmState {
  readonly version: number;
  /** Whether a copy of another version was met (by either): then every answer may be an inner layer's. */
  mixed: boolean;
  /** The shared parts, by name. */
  readonly parts: Map<string, unknown>;
}

/**
 * 6. The state of this realm: the first copy's (defined on `globalThis`, neither enumerable, writable nor configurable),
 * or this copy's own, `mixed`, when the one found is of another version (the one found is marked `mixed` too); or this
 * copy's own when `globalThis` takes no new property (a frozen realm: each copy then stands alone, as before 6.).
 */
export const realm: RealmState = joinRealm();
/** Finds or makes {@link realm}. */
function joinRealm(): RealmState {
  const own: RealmState = { version: REALM_VERSION, mixed: false, parts: new Map() };
  const found: unknown = (globalThis as Record<symbol, unknown>)[REALM_KEY];
  if (found === undefined) {
    try {
      Object.defineProperty(globalThis, REALM_KEY, { value: own });
    } catch {
      // A frozen realm: this copy's own state.
    }
    return own;
  }
  if (typeof found === 'object' && found !== null && (found as RealmState).version === REALM_VERSION && (found as RealmState).parts instanceof Map)
    return found as RealmState;
  // Another version's (or something else under the key): neither copy can read the other's notes; both fail closed.
  own.mixed = true;
  try {
    (found as RealmState).mixed = true;
  } catch {
    // Not an object that takes the mark: this copy is marked.
  }
  return own;
}

/**
 * 6. The part of {@link realm} named `name`: the one a copy of this version made first, else `make()`'s, kept. Called
 * once per part when a module loads (never per request). An adapter names its parts after its package
 * (`'@ampcors/fetch/innermost'`).
 */
export function sharedInRealm<T>(name: string, make: () => T): T {
  if (realm.parts.has(name)) return realm.parts.get(name) as T;
  const part = make();
  realm.parts.set(name, part);
  return part;
}

/**
 * Every response header a CORS plan (or a drop-in's) may set that lets a
 * page read the response or send a request: those an inner policy must not
 * inherit from an outer one. `Vary` is not one (it only widens caching).
 * Written out again, on purpose, as `CORS_HEADERS` in
 * test/security/cors-header-names.ts (a test does not trust the list it
 * checks): keep in step.
 */
export const CORS_RESPONSE_HEADERS: readonly string[] = Object.freeze([
  'access-control-allow-origin',
  'access-control-allow-credentials',
  'access-control-expose-headers',
  'amp-access-control-allow-source-origin',
  'amp-email-allow-sender',
  'access-control-allow-methods',
  'access-control-allow-headers',
  'access-control-max-age',
  'access-control-allow-private-network',
]);

/**
 * The CORS response headers that grant a page access by themselves (the
 * others of {@link CORS_RESPONSE_HEADERS} only widen a grant): what counts
 * as a grant an earlier layer left (4.), one a later layer changed, one a
 * handler's own Response carries (response-bodies.ts), one a rebuilt
 * Response kept (5.). Each a few header reads where it is asked.
 */
export const CORS_GRANTS: readonly string[] = Object.freeze([
  'access-control-allow-origin',
  'access-control-allow-credentials',
  'amp-access-control-allow-source-origin',
  'amp-email-allow-sender',
]);

/** A response whose headers can be removed by name (Node's `ServerResponse`, Koa's `ctx.res`, Fastify's reply). */
export interface HeaderRemover {
  removeHeader(name: string): unknown;
}

/** No header: {@link removeEarlierCorsHeaders} given it removes every CORS header (a failure's answer). */
export const NO_CORS_HEADERS: ReadonlyArray<readonly [string, string]> = Object.freeze([]);

/**
 * 1. Removes from `target` each of {@link CORS_RESPONSE_HEADERS} that
 * `headers` (a plan's) does not set (those are set, or already were, by the
 * adapter): called only when an earlier ampCors decided the same request,
 * or when deciding failed (with {@link NO_CORS_HEADERS}), never on the usual
 * path. `Vary` is left as it is.
 *
 * @param headers - the headers the adapter sets for its plan (`plan.headers`, or a drop-in's with its own added); names in lower case
 */
export function removeEarlierCorsHeaders(target: HeaderRemover, headers: ReadonlyArray<readonly [string, string]>): void {
  removeCorsHeadersBeyond(target, headers);
  // 4. Noted on `target`, so that an earlier layer knows, after its handler ran, that a later one decided (lastTakeBack).
  takeBacks.last.set(target, { headers });
  takeBacks.any = true;
}

/** Removes from `target` each of {@link CORS_RESPONSE_HEADERS} that `headers` does not set, noting nothing (a handler's own Response: response-bodies.ts). */
export function removeCorsHeadersBeyond(target: HeaderRemover, headers: ReadonlyArray<readonly [string, string]>): void {
  for (const name of CORS_RESPONSE_HEADERS) if (!headers.some((header) => header[0] === name)) target.removeHeader(name);
}

/** 4. A call of {@link removeEarlierCorsHeaders}: the headers the layer that made it sets (its plan's; none for a failure). A new object each time. */
export interface TakeBack {
  readonly headers: ReadonlyArray<readonly [string, string]>;
}

/**
 * The record of 4., one per realm (6.): whether any layer took CORS headers back (until then, {@link lastTakeBack} looks
 * nothing up), and the last {@link TakeBack} made on each response.
 */
const takeBacks = sharedInRealm('take-backs', () => ({ any: false, last: new WeakMap<object, TakeBack>() }));

/**
 * 4. The last {@link removeEarlierCorsHeaders} made on `target` (a Node
 * response), if any. An adapter that writes before its handler runs and
 * looks at the answer again after it (Koa's Fetch `Response` body:
 * response-bodies.ts) reads it before and after: another one after means a
 * later layer on the same Node response (another framework's ampCors, which
 * no record of its own framework shows: Express run as Koa middleware, an
 * `@hono/node-server` listener) took the grant back, and its headers, not
 * the adapter's plan, decide the answer. A property read and nothing else
 * in a process where no layer ever took a header back.
 */
export function lastTakeBack(target: object): TakeBack | undefined {
  return takeBacks.any ? takeBacks.last.get(target) : undefined;
}

/**
 * 2. Which ampCors decided a request last, for adapters whose outer layer
 * writes after the handler (one instance per adapter module; `K` is what
 * identifies the request there: Hono's context, Fetch's `Request`, Koa's
 * context). Only an ampCors that finds an earlier one's verdict notes
 * itself ({@link decidesAgain}): a request one policy decides costs a
 * property read, and a process without nested policies never looks a
 * request up ({@link overruled}).
 */
export class InnermostDecisions<K extends object> {
  /** Whether any request was decided twice in this process (until then, {@link overruled} looks nothing up). */
  private nested = false;
  /** The last ampCors (its policy, as the adapter names it) that decided each request decided before. */
  private readonly last = new WeakMap<K, object>();

  /** Notes that `policy` decides `request` after an earlier ampCors did (its verdict was there): it, or a later one, decides. */
  decidesAgain(request: K, policy: object): void {
    this.nested = true;
    this.last.set(request, policy);
  }

  /** Whether an ampCors other than `policy`, inside it, decided `request` after it: then `policy` leaves the answer alone. */
  overruled(request: K, policy: object): boolean {
    if (!this.nested) return false;
    const last = this.last.get(request);
    return last !== undefined && last !== policy;
  }

  /** The table named `name` (the adapter's package: `'@ampcors/hono'`), one per realm: every copy of that adapter decides in it (6.). */
  static inRealm<K extends object>(name: string): InnermostDecisions<K> {
    return sharedInRealm(`${name}/innermost`, () => new InnermostDecisions<K>());
  }
}

/** A response whose headers can be read and removed by name (Node's `ServerResponse`: Express's `res`, Koa's `ctx.res`, Fastify's `reply.raw`). */
export interface HeaderStore extends HeaderRemover {
  getHeader(name: string): unknown;
}

/** Whether `headers` (a plan's) sets `name` (a few pairs: a loop, no closure). */
function sets(headers: ReadonlyArray<readonly [string, string]>, name: string): boolean {
  for (let i = 0; i < headers.length; i++) if ((headers[i] as readonly [string, string])[0] === name) return true;
  return false;
}

/**
 * 4. Whether the Node response `target`, into which an adapter has just set
 * `headers` (its plan's), holds a CORS grant an earlier layer left and this
 * plan does not make: one of {@link CORS_GRANTS} the plan does not set (the
 * `cors` package sends `-Credentials` even for an origin it denies; an AMP
 * for Email v2 allow is `AMP-Email-Allow-Sender` alone). One header read
 * per grant the plan does not set: two for AMP's usual allowed plan, four
 * for a denial. An earlier value of a header the plan sets is what
 * `applyHeadersAtomically` reports; the adapter asks both, then
 * {@link removeEarlierCorsHeaders}.
 *
 * @param read - how a header is read (without it, `target.getHeader`): as for `applyHeadersAtomically`, the Express adapter reads Node's header store
 */
export function earlierGrantLeft<T extends HeaderStore>(
  target: T,
  headers: ReadonlyArray<readonly [string, string]>,
  read?: (target: T, name: string) => unknown,
): boolean {
  for (let i = 0; i < CORS_GRANTS.length; i++) {
    const name = CORS_GRANTS[i] as string;
    if (!sets(headers, name) && (read === undefined ? target.getHeader(name) : read(target, name)) !== undefined) return true;
  }
  return false;
}

/** The value `headers` (a plan's) gives `name`, or `undefined`. */
function valueIn(headers: ReadonlyArray<readonly [string, string]>, name: string): string | undefined {
  for (let i = 0; i < headers.length; i++) {
    const header = headers[i] as readonly [string, string];
    if (header[0] === name) return header[1];
  }
  return undefined;
}

/**
 * 4. Whether a later layer on the Node response `target` changed the grant
 * an adapter set there with `headers` (its plan's): one of
 * {@link CORS_GRANTS} is no longer the plan's, or is there without the plan
 * setting it (an ampCors of another framework inside, Express middleware
 * run by Koa, took it back or replaced it: attacker's review, session 17,
 * Koa put back an `AMP-Email-Allow-Sender` an inner layer took back). That
 * layer decided: the adapter does not put its plan back (Koa's headers of
 * an error thrown later). Four header reads, on that error path only.
 */
export function grantChangedSince(target: HeaderStore, headers: ReadonlyArray<readonly [string, string]>): boolean {
  for (let i = 0; i < CORS_GRANTS.length; i++) {
    const name = CORS_GRANTS[i] as string;
    if (target.getHeader(name) !== valueIn(headers, name)) return true;
  }
  return false;
}

/** A Node `ServerResponse` as {@link nodeResponseIn} recognises it, its headers not sent. */
export interface NodeResponseLike extends HeaderStore {
  readonly headersSent: boolean;
}

/**
 * 4. The Node response `carrier.outgoing` when it looks like one whose
 * headers are not sent yet (`getHeader` and `removeHeader` functions,
 * `headersSent` exactly `false`): `@hono/node-server` gives a Fetch handler
 * `{ incoming, outgoing }` (Hono's `c.env`, `withAmpCors`'s second
 * argument). `undefined` for anything else (a Worker's `env`, whose
 * bindings may answer any property with a function; a getter that throws).
 */
export function nodeResponseIn(carrier: unknown): NodeResponseLike | undefined {
  if (typeof carrier !== 'object' || carrier === null) return undefined;
  try {
    const outgoing: unknown = (carrier as { outgoing?: unknown }).outgoing;
    if (typeof outgoing !== 'object' || outgoing === null) return undefined;
    const { getHeader, removeHeader, headersSent } = outgoing as Record<string, unknown>;
    return typeof getHeader === 'function' && typeof removeHeader === 'function' && headersSent === false ? (outgoing as NodeResponseLike) : undefined;
  } catch {
    return undefined;
  }
}

/**
 * 4. Removes every CORS header from the Node response `target` when it holds
 * a grant (one of {@link CORS_GRANTS}) an earlier layer set: for an adapter
 * whose own answer does not go through `target`'s header store but is
 * merged over it when sent (Fastify's reply; the `Response` of Hono or
 * Fetch under `@hono/node-server`), so the answer carries only its own CORS
 * headers. Four header reads when there is none. Never throws (a
 * response that refuses, its headers sent meanwhile, is left as it is).
 */
export function clearEarlierCorsHeaders(target: NodeResponseLike): void {
  try {
    if (target.headersSent) return;
    for (let i = 0; i < CORS_GRANTS.length; i++)
      if (target.getHeader(CORS_GRANTS[i] as string) !== undefined) return removeEarlierCorsHeaders(target, NO_CORS_HEADERS);
  } catch {
    // Nothing can be removed from it: its headers were sent, and the answer ampcors makes is not.
  }
}

/** Whether a `Vary` value names `Origin` (or is `*`), in any case. */
function variesOnOrigin(vary: string | null): boolean {
  if (vary === null) return false;
  for (const name of vary.split(',')) {
    const trimmed = name.trim().toLowerCase();
    if (trimmed === 'origin' || trimmed === '*') return true;
  }
  return false;
}

/**
 * 5. The answer to a Response that carries no note (written-responses.ts)
 * but may be an inner layer's answer rebuilt by a layer between the two
 * (`hono/compress`, `hono/etag`'s 304, Hono's `HEAD` answer `new
 * Response(null, res)`, `c.res = new Response(c.res.body, c.res)`: a new
 * Response without the note; attacker's review, session 16: the outer then
 * wrote its allow, with credentials, over the inner's denial). With
 * `inner` (another layer marked this very Request as decided while the
 * handler ran: 5.a), or when `headers` look like an answer ampcors wrote
 * (`Vary` naming `Origin`, or one of {@link CORS_GRANTS}; the adapter asks
 * only after a write for the request's `Origin` while the handler ran:
 * 5.b), the layer gives the more
 * restrictive answer, as for a noted Response (3.): every CORS header that
 * is not one its plan `pairs` sets with the same value is removed, and the
 * pairs returned are those of the plan already there with that value (the
 * adapter writes those, and its `Vary`): no grant beyond what the Response
 * already holds. Else `pairs` itself (the usual answer). Five header
 * reads; none on the usual path.
 */
export function pairsOverUnnoted(headers: Headers, pairs: ReadonlyArray<readonly [string, string]>, inner = false): ReadonlyArray<readonly [string, string]> {
  if (!inner && !CORS_GRANTS.some((name) => headers.has(name)) && !variesOnOrigin(headers.get('vary'))) return pairs;
  const kept = pairs.filter(([name, value]) => headers.get(name) === value);
  for (const name of CORS_RESPONSE_HEADERS) if (headers.has(name) && !sets(kept, name)) headers.delete(name);
  return kept;
}
