/**
 * @ampcors/fetch — AMP-aware CORS for Fetch API handlers on Node, Bun, Deno, Workers: request → @ampcors/core → response.
 * @packageDocumentation
 */
import { AmpCorsError, type EmailSender, type Verdict } from '@ampcors/core';
import type { AmpCorsConfig, CorsDecision, CorsPlan, CorsPolicy } from '@ampcors/core/adapter';
import { appendVary, createFetchCorsPolicy, fetchRequestFacts, InnermostDecisions, isThenable } from '@ampcors/core/adapter';
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

/** A base whose constructor returns the object it is given, so that a subclass's private fields land on that object. */
class Carrier {
  constructor(target: object) {
    return target;
  }
}

/**
 * The result of each request let through, held by the request itself in a field private to this class (the base
 * constructor returns the request, which gets the field): no code outside can read, write or forge it, nothing
 * enumerates or copies it, and it lives as long as the request. About 0.3 µs less per request than a `WeakMap` write
 * (an entry in a table of weak keys). A request that takes no new property (frozen, sealed: engines may refuse it a new
 * private field too) keeps its result in {@link results} instead.
 */
class Stamped extends Carrier {
  #result: AmpCorsResult;
  private constructor(request: object, result: AmpCorsResult) {
    super(request);
    this.#result = result;
  }
  /** Gives `request` its result; a later one replaces it (then true: an earlier ampCors let the request through). */
  static give(request: object, result: AmpCorsResult): boolean {
    if (#result in request) {
      (request as Stamped).#result = result;
      return true;
    }
    if (Object.isExtensible(request)) new Stamped(request, result);
    else {
      const earlier = results.has(request);
      results.set(request, result);
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
/** The requests an inner ampCors decided after an outer one (a router's `withAmpCors` inside an app-wide one): the outer leaves the answer alone (core's nested-policies.ts). */
const innermost = new InnermostDecisions<object>();
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
 * for a response that has none yet, and an ended answer's pairs. Made once per frozen plan (core shares and remembers
 * those, bounded: a `WeakMap` entry goes with its plan), else per request.
 */
interface HeaderLists {
  /** The plan's headers; their names differ from each other and from `vary` (core's plans). */
  readonly pairs: ReadonlyArray<readonly [string, string]>;
  /** The plan's `Vary` names, and their value when there is no `Vary` yet (`null` for none to add). */
  readonly varyNames: readonly string[];
  readonly vary: string | null;
  /** An ended answer's headers as `new Response` takes them: `vary` first, then the pairs. */
  readonly end: [string, string][];
}
const listsOfPlans = new WeakMap<Pick<CorsPlan, 'headers' | 'vary'>, HeaderLists>();
/** The {@link HeaderLists} of a plan: remembered for a frozen plan, made afresh for any other. */
function listsOf(plan: Pick<CorsPlan, 'headers' | 'vary'>): HeaderLists {
  let lists = listsOfPlans.get(plan);
  if (lists !== undefined) return lists;
  const pairs = plan.headers;
  const vary = plan.vary.length === 0 ? null : appendVary(null, plan.vary);
  const end: [string, string][] = vary === null ? [] : [['vary', vary]];
  for (const [name, value] of pairs) end.push([name, value]);
  lists = { pairs, varyNames: plan.vary, vary, end };
  // Only a plan that cannot change may be remembered: frozen, with its header list, each pair and its Vary names.
  if (Object.isFrozen(plan) && Object.isFrozen(plan.headers) && plan.headers.every((pair) => Object.isFrozen(pair)) && Object.isFrozen(plan.vary)) {
    listsOfPlans.set(plan, lists);
  }
  return lists;
}

/**
 * What ampcors wrote into a Response in place: the headers it set (`pairs`, as {@link HeaderLists} has them: usually
 * the plan's own list, shared), and `Vary` as it was and as ampcors left it (`undefined`: not written). Held by the
 * Response ({@link Written}): a Response returned again (a handler's cached 404) is recognised. One request writes
 * once: of two ampcors layers on it, the innermost decides and the outer leaves its answer alone (`innermost`).
 */
interface Note {
  readonly pairs: ReadonlyArray<readonly [string, string]>;
  readonly varyBefore: string | null | undefined;
  readonly varyWritten: string | undefined;
}

/**
 * Twin of `Written` in packages/hono/src/index.ts: keep in step.
 * The {@link Note} of a Response ampcors wrote into, in a field private to this class, as {@link Stamped} does (no
 * code outside can read or forge it). Objects that take no new property keep theirs in {@link notes}.
 */
class Written extends Carrier {
  #note: Note;
  private constructor(target: object, note: Note) {
    super(target);
    this.#note = note;
  }
  /** Gives `target` its note. */
  static give(target: object, note: Note): void {
    if (#note in target) (target as Written).#note = note;
    else if (Object.isExtensible(target)) new Written(target, note);
    else notes.set(target, note);
  }
  /** The note given to `target`, if any. */
  static of(target: object): Note | undefined {
    return #note in target ? (target as Written).#note : notes.get(target);
  }
}
/** Notes of objects that take no new property. */
const notes = new WeakMap<object, Note>();

/**
 * Extends `Vary`, then sets the headers: on immutable headers the first `set` throws, so nothing is half-applied.
 * Returns what it wrote ({@link Note}).
 */
function writePlan(into: Headers, { pairs, varyNames, vary }: HeaderLists): Note {
  let varyBefore: string | null | undefined;
  let varyWritten: string | undefined;
  if (vary !== null) {
    varyBefore = into.get('vary');
    varyWritten = varyBefore === null ? vary : appendVary(varyBefore, varyNames);
    into.set('vary', varyWritten);
  }
  for (const [name, value] of pairs) into.set(name, value);
  return { pairs, varyBefore, varyWritten };
}

/**
 * Twin of `unwrite` in packages/hono/src/index.ts: keep in step.
 * `headers` without what ampcors wrote (`note`): each header still holding what ampcors set is removed (a value the
 * handler had set under the same name, which ampcors replaced, is not put back: ampcors's plan decides that name), and
 * `Vary`, if still as ampcors left it, is put back as it was; a name the handler changed since is left as it is.
 */
function unwrite(headers: Headers, { pairs, varyBefore, varyWritten }: Note): Headers {
  for (const [name, written] of pairs) if (headers.get(name) === written) headers.delete(name);
  if (varyWritten !== undefined && headers.get('vary') === varyWritten) {
    if (typeof varyBefore === 'string') headers.set('vary', varyBefore);
    else headers.delete('vary');
  }
  return headers;
}

/**
 * Twin of `bodyOfLightweight` in packages/hono/src/index.ts: keep in step.
 * The body of an `@hono/node-server` Response made with a string, bytes or a Blob, which that server sends again on
 * every request without reading a stream (it keeps `[status, body, headers]` under a symbol of its own, described
 * `cache`); `undefined` for any other Response. Reading such a Response's `body` would make it a stream, read once.
 */
function bodyOfLightweight(response: Response): BodyInit | undefined {
  for (const symbol of Object.getOwnPropertySymbols(response)) {
    if (symbol.description !== 'cache') continue;
    const cached: unknown = (response as unknown as Record<symbol, unknown>)[symbol];
    const body: unknown = Array.isArray(cached) && cached.length === 3 ? cached[1] : undefined;
    if (typeof body === 'string' || body instanceof Uint8Array || body instanceof Blob) return body as BodyInit;
  }
  return undefined;
}

/**
 * Twin of `copyOf` in packages/hono/src/index.ts: keep in step.
 * A new Response with `response`'s status, status text, headers (every `Set-Cookie`) and body, `response` left able to
 * be sent: no body, a body `@hono/node-server` sends again ({@link bodyOfLightweight}), or one branch of its stream
 * (`clone()`). Throws when it cannot be copied (a body already read, a status `new Response` refuses).
 */
function copyOf(response: Response): Response {
  const headers = new Headers(response.headers);
  const { status } = response;
  const constant = bodyOfLightweight(response);
  if (constant !== undefined) return new Response(constant, { status, headers });
  const { body, statusText } = response;
  return new Response(body === null ? null : response.clone().body, { status, statusText, headers });
}

/**
 * `response` with the plan applied:
 * 1. A Response ampcors has not written into: the plan is written in place, and what was written is noted on the
 *    Response (no copy: the common case).
 * 2. A Response ampcors wrote into before, for another request (one object returned for several requests: a cached
 *    404): a copy, without what ampcors wrote (`Vary` as it was), with this plan on it; the object itself is never
 *    written again, so no request's headers reach another's answer, and requests in flight at the same time do not
 *    race on it. Even a plan without headers gets the copy.
 * 3. Immutable headers (a `fetch()` result, `Response.redirect`): a copy; `Response.error()` is kept (no page can read
 *    it); not a Response, or a body that cannot be copied (already read): a plain 500 with `Vary: Origin`.
 */
function applyPlan(response: Response, plan: Pick<CorsPlan, 'headers' | 'vary'>): Response {
  const seen = typeof response === 'object' && response !== null ? Written.of(response) : undefined;
  if (seen !== undefined) return copied(response, seen, listsOf(plan));
  if (plan.headers.length === 0 && plan.vary.length === 0) return response;
  const lists = listsOf(plan);
  try {
    // 1. In place.
    Written.give(response, writePlan(response.headers, lists));
    return response;
  } catch {
    // 3. Response.error() is kept; not a Response, or a body already read: a plain 500.
    if (response?.type === 'error') return response;
    try {
      const { body, status, statusText, headers } = response;
      if (typeof status !== 'number') return failure();
      const copy = new Response(body, { status, statusText, headers });
      writePlan(copy.headers, lists);
      return copy;
    } catch {
      return failure();
    }
  }
}

/** 2. A copy of `response` as it was before ampcors wrote `note` into it, with the plan written on the copy; else a plain 500. */
function copied(response: Response, note: Note, lists: HeaderLists): Response {
  try {
    const copy = copyOf(response);
    writePlan(unwrite(copy.headers, note), lists);
    return copy;
  } catch {
    return failure();
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
      response: applyPlan(await new Promise<Response>((resolve) => resolve(onError(error, request))).catch(failure), FAILED),
      verdict: undefined,
    };
  };
  // 2. The plan: ended here (preflight, denial), or the handler's response, to be finished by apply().
  const settle = ({ verdict, plan }: CorsDecision, request: Request): CorsCheck => {
    if (plan.handled) {
      // An earlier ampCors let the request through: this answer, more specific, stands, and its verdict replaces the earlier one's.
      if (Stamped.has(request)) {
        innermost.decidesAgain(request, policy);
        Stamped.give(request, { verdict, email: plan.email });
      }
      return { response: new Response(plan.body || null, { status: plan.status, headers: listsOf(plan).end }), verdict };
    }
    // An inner ampCors that decided the request after this one wrote its answer: that answer stands.
    const pass = {
      response: undefined,
      verdict,
      email: plan.email,
      apply: (response: Response) => (innermost.overruled(request, policy) ? response : applyPlan(response, plan)),
    };
    if (Stamped.give(request, pass)) innermost.decidesAgain(request, policy);
    return pass;
  };
  const later = async (decided: PromiseLike<CorsDecision>, request: Request) => settle(await decided, request);
  // 3. The check: core's decision on the request's facts, settled; never a throw nor a rejection.
  const check = (request: Request): CorsCheck | Promise<CorsCheck> => {
    try {
      const decided = policy.decide(fetchRequestFacts(request, decidedUnder));
      return isThenable(decided) ? later(decided, request).catch((error: unknown) => fail(error, request)) : settle(decided, request);
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
