/**
 * @ampcors/fetch — AMP-aware CORS for Fetch API handlers on Node, Bun, Deno, Workers: request → @ampcors/core → response.
 * @packageDocumentation
 */
import { AmpCorsError, type EmailSender, type Verdict } from '@ampcors/core';
import type { AmpCorsConfig, CorsDecision, CorsPlan, CorsPolicy } from '@ampcors/core/adapter';
import {
  answerOver,
  appendVary,
  carriesGrant,
  clearEarlierCorsHeaders,
  createFetchCorsPolicy,
  DecidedRequest,
  fetchRequestFacts,
  InnermostDecisions,
  isThenable,
  nodeResponseIn,
  noteMade,
  noteWritten,
  pairsOverUnnoted,
  removeOwnGrant,
  writableResponse,
  writePlan,
  writesFor,
  writesSoFar,
  writtenNoteOf,
} from '@ampcors/core/adapter';
export { ampRedirectTo, AmpCorsError, type CorsOptions, type Verdict } from '@ampcors/core';
export type { AmpCorsConfig, VerdictSource } from '@ampcors/core/adapter';

/** Options of the Fetch adapter: the core configuration, plus `onError` to answer a failure (a verifier's or handler's throw). */
export interface FetchAmpCorsOptions extends AmpCorsConfig {
  readonly onError?: (error: unknown, request: Request) => Response | Promise<Response>;
}

/** A Fetch API handler; extra arguments (a Worker's `env` and `ctx`) are passed through. */
export type FetchHandler<A extends unknown[] = []> = (request: Request, ...rest: A) => Response | Promise<Response>;
/** A request's verdict, and its AMP for Email sender (for AMP for Email requests, when `email` is configured). */
export type AmpCorsResult = { readonly verdict: Verdict; readonly email?: EmailSender | undefined };
/**
 * What {@link FetchAmpCors.check} says: the `response` to send now, the handler not run (a preflight's answer, a 403, or
 * after a failure `onError`'s, `verdict` `undefined`); or none: run the handler, send `apply(itsResponse)` (CORS headers
 * set, `Vary` extended, copied if immutable; never throws). A denied verdict may come here: no `Origin`, `onDenied: 'omit'`.
 */
export type CorsCheck =
  | { readonly response: Response; readonly verdict: Verdict | undefined }
  | (AmpCorsResult & { readonly response: undefined; apply(response: Response): Response });

/** A configured Fetch adapter: build it once, use it for every request. */
export interface FetchAmpCors {
  /** The validated policy. */
  readonly policy: CorsPolicy;
  /** Judges a request, synchronously unless the verifier or `onError` answers with a Promise; never throws nor rejects. */
  check(request: Request): CorsCheck | Promise<CorsCheck>;
}

/**
 * The result of each request let through, held by the request itself in a field private to this class (the base
 * constructor returns the request, which gets the field): no code outside can read, write or forge it, nothing
 * enumerates or copies it, and it lives as long as the request. About 0.3 µs less per request than a `WeakMap` write
 * (an entry in a table of weak keys). A request that takes no new property (frozen, sealed: engines may refuse it a new
 * private field too) keeps its result in {@link results} instead.
 */
class Stamped extends DecidedRequest {
  #result: AmpCorsResult;
  private constructor(request: object, result: AmpCorsResult, policy: object) {
    super(request, policy);
    this.#result = result;
  }
  /**
   * Gives `request` its result, and marks it as decided by `policy` (core's DecidedRequest, in the same construction: an
   * outer layer then knows an inner one decided it, nested-policies.ts, 5.a); a later one replaces it (then true: an
   * earlier ampCors let the request through; its mark is replaced by the caller).
   */
  static give(request: object, result: AmpCorsResult, policy: object): boolean {
    if (#result in request) {
      (request as Stamped).#result = result;
      return true;
    }
    // A Request marked without a result (a denial stopped here earlier: settle) cannot take the class's fields again.
    if (Object.isExtensible(request) && DecidedRequest.by(request) === undefined) new Stamped(request, result, policy);
    else {
      const earlier = results.has(request);
      results.set(request, result);
      DecidedRequest.mark(request, policy);
      return earlier;
    }
    return false;
  }
  /** Whether `request` was given a result (by an earlier ampCors); the table of {@link results} is read only for a request that takes no new property. */
  static has(request: object): boolean {
    if (#result in request) return true;
    try {
      return !Object.isExtensible(request) && results.has(request);
    } catch {
      // A Proxy whose trap throws (a revoked one): it was never given a result.
      return false;
    }
  }
  /** The result given to `request`, if any. */
  static of(request: object): AmpCorsResult | undefined {
    return #result in request ? (request as Stamped).#result : results.get(request);
  }
}
/** Results of requests that take no new property. */
const results = new WeakMap<object, AmpCorsResult>();
/** The requests an inner ampCors decided after an outer one (a router's `withAmpCors` inside an app-wide one): the outer leaves the answer alone (core's nested-policies.ts; one table per realm, 6.). */
const innermost = InnermostDecisions.inRealm<object>('@ampcors/fetch');
const failures = new WeakMap<FetchAmpCors, (error: unknown, request: Request) => Promise<{ response: Response }>>();
/** What a failure's answer gets: `Vary: Origin`, never a CORS header. */
const FAILED = Object.freeze({ headers: Object.freeze([]), vary: Object.freeze(['Origin']) });
const failure = () => new Response('Internal Server Error\n', { status: 500, headers: { 'Content-Type': 'text/plain; charset=utf-8', Vary: 'Origin' } });
/** The verdict (and email sender) of a request that {@link withAmpCors} or {@link FetchAmpCors.check} let through. */
export function ampCorsOf(request: Request): AmpCorsResult | undefined {
  if (typeof request !== 'object' || request === null) return undefined;
  return Stamped.of(request);
}
/**
 * A plan's headers as this adapter sends them: core's pairs (names in lower case, as undici stores them), `Vary`'s value
 * for a response that has none yet, and an ended answer's headers. Made once per frozen plan (core shares and remembers
 * those, bounded: a `WeakMap` entry goes with its plan), else per request.
 */
interface HeaderLists {
  /** The plan's headers; their names differ from each other and from `vary` (core's plans). */
  readonly pairs: ReadonlyArray<readonly [string, string]>;
  /** The plan's `Vary` names, and their value when there is no `Vary` yet (`null` for none to add). */
  readonly varyNames: readonly string[];
  readonly vary: string | null;
  /** Whether these lists are remembered with their plan (which cannot change). */
  readonly remembered: boolean;
  /** An ended answer's headers as `new Response` takes them ({@link endOf}), once made for a remembered plan. */
  end: Headers | undefined;
}
const listsOfPlans = new WeakMap<Pick<CorsPlan, 'headers' | 'vary'>, HeaderLists>();
/** The {@link HeaderLists} of a plan: remembered for a frozen plan, made afresh for any other. */
function listsOf(plan: Pick<CorsPlan, 'headers' | 'vary'>): HeaderLists {
  let lists = listsOfPlans.get(plan);
  if (lists !== undefined) return lists;
  const pairs = plan.headers;
  const vary = plan.vary.length === 0 ? null : appendVary(null, plan.vary);
  // Only a plan that cannot change may be remembered: frozen, with its header list, each pair and its Vary names.
  const remembered =
    Object.isFrozen(plan) && Object.isFrozen(plan.headers) && plan.headers.every((pair) => Object.isFrozen(pair)) && Object.isFrozen(plan.vary);
  lists = { pairs, varyNames: plan.vary, vary, remembered, end: undefined };
  if (remembered) listsOfPlans.set(plan, lists);
  return lists;
}

/**
 * An ended answer's headers as `new Response` takes them: `Vary` first, then the pairs. For a remembered plan, a `Headers`
 * made once and kept here (never handed out, never written into again): `new Response` copies a `Headers` without
 * converting each pair as a sequence of strings again, about 0.7 µs less per preflight on Node's undici.
 */
function endOf(lists: HeaderLists): HeadersInit {
  if (lists.end !== undefined) return lists.end;
  const end: [string, string][] = lists.vary === null ? [] : [['vary', lists.vary]];
  for (const [name, value] of lists.pairs) end.push([name, value]);
  return lists.remembered ? (lists.end = new Headers(end)) : end;
}

/**
 * `response` with the plan of `policy` applied (`since`: {@link writesSoFar} before the handler ran; `Infinity` for a
 * failure's answer, which never keeps another's CORS headers; `inner`: another layer marked the Request as decided while
 * the handler ran; `sinceOrigin`: core's `writesFor(origin)` before it ran). What ampcors writes is noted on the Response (core's
 * written-responses.ts): a Response returned again (a handler's cached 404) or one an inner ampCors wrote into for a
 * rebuilt Request is recognised.
 * 1. A Response ampcors has not written into: the plan is written in place, and noted (no copy: the common case; an
 *    `@hono/node-server` Response not yet made real is written in a copy, core's writableResponse).
 * 2. A Response ampcors wrote into (core's `answerOver`, rule in nested-policies.ts, 3.): left alone, or a copy (never
 *    written again, so no request's headers reach another's answer, and requests in flight do not race on it).
 *    A Response ampcors has not written into, met after an inner layer decided this Request or ampcors wrote for this
 *    Origin while the handler ran (an inner answer rebuilt without its note: `hono/compress`, a HEAD request), gets no
 *    grant beyond its own (core's `pairsOverUnnoted`, 5.).
 * 3. Immutable headers (a `fetch()` result, `Response.redirect`): a copy; `Response.error()` is kept (no page can read
 *    it); not a Response, or a body that cannot be copied (already read): a plain 500 with `Vary: Origin`.
 */
function applyPlan(
  response: Response,
  plan: Pick<CorsPlan, 'headers' | 'vary'>,
  policy: object,
  since: number,
  origin: string | null,
  inner = false,
  sinceOrigin = Infinity,
): Response {
  const seen = writtenNoteOf(response);
  if (seen !== undefined) {
    const lists = listsOf(plan);
    try {
      return answerOver(response, seen, policy, since, origin, lists.pairs, lists.varyNames, lists.vary);
    } catch {
      return failure();
    }
  }
  if (plan.headers.length === 0 && plan.vary.length === 0 && !carriesGrant(response.headers)) return response;
  const lists = listsOf(plan);
  const { varyNames, vary } = lists;
  let { pairs } = lists;
  // An inner layer decided this Request (`inner`), or ampcors wrote for this Origin while the handler ran: an inner answer
  // rebuilt without its note gets no grant beyond its own (core's nested-policies.ts, 5.a, 5.b).
  const moved = inner || sinceOrigin < writesFor(origin);
  try {
    // 1. In place; in a copy for an `@hono/node-server` Response not yet made real, whose headers it would make again
    // without what ampcors wrote (core's writableResponse).
    response = writableResponse(response);
    if (moved) pairs = pairsOverUnnoted(response.headers, pairs, inner);
    // A grant of the handler's own (an upstream's echo of a denied Origin, an `AMP-Email-Allow-Sender`, on every path): its
    // CORS headers the plan does not set go.
    removeOwnGrant(response.headers, pairs);
    noteWritten(response, writePlan(response.headers, pairs, varyNames, vary, policy, origin));
    return response;
  } catch {
    // 3. Response.error() is kept; not a Response, or a body already read: a plain 500.
    if (response?.type === 'error') return response;
    try {
      const { body, status, statusText, headers } = response;
      if (typeof status !== 'number') return failure();
      const copy = new Response(body, { status, statusText, headers });
      if (moved) pairs = pairsOverUnnoted(copy.headers, lists.pairs, inner);
      removeOwnGrant(copy.headers, pairs);
      noteWritten(copy, writePlan(copy.headers, pairs, varyNames, vary, policy, origin));
      return copy;
    } catch {
      return failure();
    }
  }
}

/** An answer ampcors ends itself (a preflight's, a 403) with the plan of `policy`, noted as written for `origin` (an outer layer leaves it alone). */
function ended(plan: CorsPlan & { readonly handled: true }, policy: object, origin: string | null): Response {
  const lists = listsOf(plan);
  const response = new Response(plan.body || null, { status: plan.status, headers: endOf(lists) });
  noteMade(response, lists.pairs, lists.vary, policy, origin);
  return response;
}

/** The `Origin` of a request whose answer is a failure's (read again there only), or `null` (none, or a request that throws). */
function originOf(request: Request): string | null {
  try {
    return request.headers.get('origin');
  } catch {
    return null;
  }
}

/** Builds a Fetch adapter; every problem of the options is listed in one `AmpCorsError` (core's createFetchCorsPolicy). */
export function createAmpCors(options: FetchAmpCorsOptions): FetchAmpCors {
  const policy = createFetchCorsPolicy(options, 'withAmpCors (@ampcors/fetch)');
  const { options: decidedUnder } = policy;
  const onError = options.onError ?? failure;
  // 1. A failure (verifier, handler): onError's answer, else a plain 500; with Vary: Origin, never a CORS header.
  const fail = async (error: unknown, request: Request) => {
    // After an earlier ampCors let the request through, this failure is the answer (core's nested-policies.ts).
    if (Stamped.has(request)) innermost.decidesAgain(request, policy);
    return {
      response: applyPlan(
        await new Promise<Response>((resolve) => resolve(onError(error, request))).catch(failure),
        FAILED,
        policy,
        Infinity,
        originOf(request),
      ),
      verdict: undefined,
    };
  };
  // 2. The plan: ended here (preflight, denial), or the handler's response, to be finished by apply().
  const settle = ({ verdict, plan }: CorsDecision, request: Request, origin: string | null): CorsCheck => {
    // A Request an outer layer marked as decided (core's DecidedRequest) is marked by this one too: that layer then knows an
    // inner one decided it (core's nested-policies.ts, 5.a). An unmarked one gets its mark with its result (Stamped.give).
    // Twin of the mark in hono's index.ts: keep in step.
    if (DecidedRequest.by(request) !== undefined) DecidedRequest.mark(request, policy);
    if (plan.handled) {
      // A denial stopped here is marked in any case (an outer Hono ampCors marks no Request itself); a preflight's answer is
      // not (an outer layer answers preflights before its handler runs).
      if (plan.kind === 'reject') DecidedRequest.mark(request, policy);
      // An earlier ampCors let the request through: this answer, more specific, stands, and its verdict replaces the earlier one's.
      if (Stamped.has(request)) {
        innermost.decidesAgain(request, policy);
        Stamped.give(request, { verdict, email: plan.email }, policy);
      }
      return { response: ended(plan, policy, origin), verdict };
    }
    // An inner ampCors that decided the request after this one wrote its answer: that answer stands.
    const since = writesSoFar();
    // This Origin's writes before the handler ran; another mark after it ran is an inner layer's (core's nested-policies.ts, 5.).
    const sinceOrigin = writesFor(origin);
    const pass = {
      response: undefined,
      verdict,
      email: plan.email,
      apply: (response: Response) =>
        innermost.overruled(request, policy) ? response : applyPlan(response, plan, policy, since, origin, DecidedRequest.by(request) !== policy, sinceOrigin),
    };
    if (Stamped.give(request, pass, policy)) innermost.decidesAgain(request, policy);
    return pass;
  };
  const later = async (decided: PromiseLike<CorsDecision>, request: Request, origin: string | null) => settle(await decided, request, origin);
  // 3. The check: core's decision on the request's facts, settled; never a throw nor a rejection.
  const check = (request: Request): CorsCheck | Promise<CorsCheck> => {
    try {
      const facts = fetchRequestFacts(request, decidedUnder);
      const decided = policy.decide(facts);
      const origin = facts.origin ?? null;
      return isThenable(decided) ? later(decided, request, origin).catch((error: unknown) => fail(error, request)) : settle(decided, request, origin);
    } catch (error) {
      return fail(error, request);
    }
  };
  const adapter = { policy, check };
  failures.set(adapter, fail);
  return adapter;
}

/**
 * Wraps a Fetch API handler with {@link FetchAmpCors.check}: the same answers, and {@link ampCorsOf} gives the handler its
 * verdict; a throw of the handler is a failure too. `options` may be a {@link createAmpCors} result. Never throws per request.
 * @example export default { fetch: withAmpCors((request) => Response.json({ ok: true }), { publishers: ['example.com'] }) };
 */
export function withAmpCors<A extends unknown[] = []>(handler: FetchHandler<A>, options: FetchAmpCorsOptions | FetchAmpCors) {
  const adapter = failures.has(options as FetchAmpCors) ? (options as FetchAmpCors) : createAmpCors(options as FetchAmpCorsOptions);
  const fail = failures.get(adapter) as (error: unknown, request: Request) => Promise<{ response: Response }>;
  if (typeof handler !== 'function') throw new AmpCorsError('invalid-option', `withAmpCors needs a handler function, not ${typeof handler}`);
  // The check, then the handler: one async frame, Promises awaited only when returned.
  return async (request: Request, ...rest: A): Promise<Response> => {
    // Under `@hono/node-server` (`rest[0]` is `{ incoming, outgoing }`), CORS headers a layer of another framework left on the
    // Node response would be sent under this answer's: this one decides instead (core's nested-policies.ts, 4.).
    if (rest.length !== 0) {
      const outgoing = nodeResponseIn(rest[0]);
      if (outgoing !== undefined) clearEarlierCorsHeaders(outgoing);
    }
    const checked = adapter.check(request);
    const now = isThenable(checked) ? await checked : checked;
    if (now.response !== undefined) return now.response;
    try {
      const answered = handler(request, ...rest);
      return now.apply(isThenable(answered) ? await answered : answered);
    } catch (error) {
      return (await fail(error, request)).response;
    }
  };
}
