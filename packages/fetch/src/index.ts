/**
 * @ampcors/fetch — AMP-aware CORS for Fetch API handlers (`(request: Request) => Response`):
 * Node, Bun, Deno, Cloudflare Workers. Request → core → Response: every decision and header comes from @ampcors/core.
 *
 * @packageDocumentation
 */
import { AmpCorsError, type EmailSender, type Verdict } from '@ampcors/core';
import {
  type AmpCorsConfig,
  appendVary,
  type CorsDecision,
  type CorsPlan,
  type CorsPolicy,
  createCorsPolicy,
  fetchRequestFacts,
  HONO_CORS_NAMES,
  isThenable,
} from '@ampcors/core/adapter';

export { ampRedirectTo, AmpCorsError, type CorsOptions, type Verdict } from '@ampcors/core';
export type { AmpCorsConfig, VerdictSource } from '@ampcors/core/adapter';

/** Options of the Fetch adapter: the core configuration plus an error hook. */
export interface FetchAmpCorsOptions extends AmpCorsConfig {
  /** Answers a request whose verifier or handler threw (default: a plain 500); `Vary: Origin` is added to what it returns. */
  readonly onError?: (error: unknown, request: Request) => Response | Promise<Response>;
}

/** A Fetch API handler; extra arguments (a Worker's `env` and `ctx`) are passed through. */
export type FetchHandler<A extends unknown[] = []> = (request: Request, ...rest: A) => Response | Promise<Response>;

/** A request's verdict, and its AMP for Email sender (for AMP for Email requests, when `email` is configured). */
export interface AmpCorsResult {
  readonly verdict: Verdict;
  readonly email?: EmailSender | undefined;
}

/**
 * What {@link FetchAmpCors.check} says about a request: either the `response` to send now, without running the handler
 * (a preflight's answer, a denial's 403, or `onError`'s after a failure, when `verdict` is `undefined`); or no `response`:
 * run the handler and send `apply(itsResponse)`, which sets the CORS headers and extends `Vary` (on a copy when the
 * headers are immutable) and never throws. The handler may run with a denied verdict (no `Origin`; `onDenied: 'omit'`).
 */
export type CorsCheck =
  | { readonly response: Response; readonly verdict: Verdict | undefined }
  | (AmpCorsResult & { readonly response: undefined; apply(response: Response): Response });

/** A configured Fetch adapter: build it once, use it for every request. */
export interface FetchAmpCors {
  /** The validated policy. */
  readonly policy: CorsPolicy;
  /** Judges a request (synchronously unless the verifier or `onError` is asynchronous); never throws nor rejects. */
  check(request: Request): CorsCheck | Promise<CorsCheck>;
  /** Wraps a handler, see {@link withAmpCors}. */
  wrap<A extends unknown[]>(handler: FetchHandler<A>): (request: Request, ...rest: A) => Promise<Response>;
}

const results = new WeakMap<Request, AmpCorsResult>();
const adapters = new WeakSet<object>();
const SPEC_HINTS = {
  entry: 'withAmpCors (@ampcors/fetch)',
  keys: ['onError'],
  aliases: HONO_CORS_NAMES,
  allowNothing: 'To allow no cross-origin request on purpose, do not wrap the handler (same-origin requests need no CORS).',
  allowAny: 'For a public API that any origin may read without credentials, pass {} (Access-Control-Allow-Origin: *).',
};

/** The verdict (and email sender) of a request that {@link withAmpCors} or {@link FetchAmpCors.check} let through. */
export function ampCorsOf(request: Request): AmpCorsResult | undefined {
  return results.get(request);
}

const FAILED = { headers: [], vary: ['Origin'] };
const failure = () => new Response('Internal Server Error\n', { status: 500, headers: { 'Content-Type': 'text/plain; charset=utf-8', Vary: 'Origin' } });

/** Extends `Vary`, then sets the headers: on immutable headers the first `set` throws, so nothing is half-applied. */
function setPlan(into: Headers, { headers, vary }: Pick<CorsPlan, 'headers' | 'vary'>): Headers {
  if (vary.length > 0) into.set('Vary', appendVary(into.get('Vary'), vary));
  for (const [name, value] of headers) into.set(name, value);
  return into;
}

/** `response` with the plan applied; copied when its headers are immutable (a `fetch()` result, `Response.redirect`); never throws. */
function applyPlan(response: Response, plan: Pick<CorsPlan, 'headers' | 'vary'>): Response {
  if (plan.headers.length === 0 && plan.vary.length === 0) return response;
  try {
    setPlan(response.headers, plan);
    return response;
  } catch {
    try {
      if (response.type === 'error') return response; // Response.error(): a network error, readable by no page.
      if (typeof response.status !== 'number') return failure(); // not a Response
      const copy = new Response(response.body, { status: response.status, statusText: response.statusText, headers: response.headers });
      setPlan(copy.headers, plan);
      return copy;
    } catch {
      return failure(); // a body already read
    }
  }
}

/**
 * Builds a configured Fetch adapter; every problem of the options is listed in one `AmpCorsError`. `{}` is the
 * public mode (`Access-Control-Allow-Origin: *`, no credentials); `undefined` and unknown keys are refused.
 */
export function createAmpCors(options: FetchAmpCorsOptions): FetchAmpCors {
  if (options === undefined)
    throw new AmpCorsError('invalid-option', `${SPEC_HINTS.entry} needs options (got undefined, an unset variable?): ${SPEC_HINTS.allowAny}`);
  const policy = createCorsPolicy(options, {
    ...SPEC_HINTS,
    map({ onError, ...rest }, _mode, problems) {
      if (onError !== undefined && typeof onError !== 'function') problems.add('invalid-option', 'onError must be a function (error, request) => Response');
      return rest;
    },
  });
  const onError = options.onError;
  // 1. A failure (verifier, handler): onError's answer, else a plain 500; always with Vary: Origin, never a CORS header.
  const fail = (error: unknown, request: Request) =>
    Promise.resolve(request)
      .then((failed) => (onError === undefined ? failure() : onError(error, failed)))
      .catch(failure)
      .then((response) => ({ response: applyPlan(response, FAILED), verdict: undefined }));
  // 2. The plan: ended here (preflight, denial), or the handler's response to finish with apply().
  const settle = ({ verdict, plan }: CorsDecision, request: Request): CorsCheck => {
    if (plan.handled)
      return { response: new Response(plan.body === '' ? null : plan.body, { status: plan.status, headers: setPlan(new Headers(), plan) }), verdict };
    const pass = { response: undefined, verdict, email: plan.email, apply: (response: Response) => applyPlan(response, plan) };
    results.set(request, pass);
    return pass;
  };
  const check = (request: Request): CorsCheck | Promise<CorsCheck> => {
    try {
      const decided = policy.decide(fetchRequestFacts(request));
      return isThenable(decided)
        ? Promise.resolve(decided)
            .then((d) => settle(d, request))
            .catch((error: unknown) => fail(error, request))
        : settle(decided, request);
    } catch (error) {
      return fail(error, request);
    }
  };
  // 3. withAmpCors: check, then the handler (one async frame; Promises awaited only when returned).
  const wrap = <A extends unknown[]>(handler: FetchHandler<A>) => {
    if (typeof handler !== 'function')
      throw new AmpCorsError('invalid-option', `withAmpCors needs a handler (request) => Response, not ${handler === null ? 'null' : typeof handler}`);
    return async (request: Request, ...rest: A): Promise<Response> => {
      const checked = check(request);
      const now = isThenable(checked) ? await checked : checked;
      if (now.response !== undefined) return now.response;
      try {
        const answered = handler(request, ...rest);
        return now.apply(isThenable(answered) ? await answered : answered);
      } catch (error) {
        return (await fail(error, request)).response;
      }
    };
  };
  const adapter = { policy, check, wrap };
  adapters.add(adapter);
  return adapter;
}

/**
 * Wraps a Fetch API handler with AMP-aware CORS: preflights are answered and denied origins get 403 (or, with
 * `onDenied: 'omit'`, no CORS headers) before the handler runs; the handler's response keeps its status and body and
 * gets the CORS headers and `Vary`. Inside the handler, {@link ampCorsOf} gives the verdict. Never throws per request:
 * a failure becomes `onError`'s response (default 500) with `Vary: Origin` and no CORS header.
 *
 * @throws AmpCorsError for an invalid configuration (at wrap time).
 * @example export default { fetch: withAmpCors((request) => Response.json({ ok: true }), { publishers: ['example.com'] }) };
 */
export function withAmpCors<A extends unknown[] = []>(
  handler: FetchHandler<A>,
  options: FetchAmpCorsOptions | FetchAmpCors,
): (request: Request, ...rest: A) => Promise<Response> {
  return (adapters.has(options) ? (options as FetchAmpCors) : createAmpCors(options as FetchAmpCorsOptions)).wrap(handler);
}
