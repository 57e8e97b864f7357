/**
 * @ampcors/fetch — AMP-aware CORS for Fetch API handlers
 * (`(request: Request) => Response`): Node, Bun, Deno, Cloudflare Workers.
 * A thin adapter: every decision and every header comes from @ampcors/core.
 *
 * @packageDocumentation
 */
import { AmpCorsError, type EmailSender, type Verdict } from '@ampcors/core';
import {
  type AmpCorsConfig,
  appendVary,
  type CorsPlan,
  type CorsPolicy,
  createCorsPolicy,
  fetchRequestFacts,
  isThenable,
  planCors,
} from '@ampcors/core/adapter';

export { ampRedirectTo, AmpCorsError, type CorsOptions, type Verdict } from '@ampcors/core';
export { type AmpCorsConfig, type VerdictSource } from '@ampcors/core/adapter';

/** Options of the Fetch adapter: the core configuration plus an error hook. */
export interface FetchAmpCorsOptions extends AmpCorsConfig {
  /**
   * Answers a request whose verifier or handler threw. Default: a plain 500.
   * `Vary: Origin` is added to whatever it returns.
   */
  readonly onError?: (error: unknown, request: Request) => Response | Promise<Response>;
}

/** A configured Fetch adapter: build it once, use it for every request. */
export interface FetchAmpCors {
  /** The validated policy. */
  readonly policy: CorsPolicy;
  /** Judges a request (synchronous unless the verifier is asynchronous). */
  verifyRequest(request: Request): Verdict | Promise<Verdict>;
  /** The CORS response headers for a request and its verdict (including `Vary`). */
  corsHeaders(verdict: Verdict, request: Request): Headers;
  /** Wraps a handler, see {@link withAmpCors}. */
  wrap<A extends unknown[]>(handler: FetchHandler<A>): (request: Request, ...rest: A) => Promise<Response>;
}

/** A Fetch API handler; extra arguments (a Worker's `env` and `ctx`) are passed through. */
export type FetchHandler<A extends unknown[] = []> = (request: Request, ...rest: A) => Response | Promise<Response>;

/** What {@link ampCorsOf} returns for a request that went through {@link withAmpCors}. */
export interface AmpCorsResult {
  /** The core verdict. */
  readonly verdict: Verdict;
  /** The AMP for Email sender, for AMP for Email requests (when `email` is configured). */
  readonly email?: EmailSender;
}

const results = new WeakMap<Request, AmpCorsResult>();
const adapters = new WeakMap<object, FetchAmpCors>();

/**
 * The verdict (and email sender) of a request inside a handler wrapped by
 * {@link withAmpCors}; `undefined` for any other request.
 */
export function ampCorsOf(request: Request): AmpCorsResult | undefined {
  return results.get(request);
}

function setAll(headers: ReadonlyArray<readonly [string, string]>, into: Headers): void {
  for (let i = 0; i < headers.length; i++) {
    const header = headers[i] as readonly [string, string];
    into.set(header[0], header[1]);
  }
}

function planHeaders(plan: CorsPlan, into: Headers): Headers {
  setAll(plan.headers, into);
  if (plan.vary.length > 0) into.set('Vary', appendVary(into.get('Vary'), plan.vary));
  return into;
}

function defaultOnError(): Response {
  return new Response('Internal Server Error\n', { status: 500, headers: { 'Content-Type': 'text/plain; charset=utf-8' } });
}

/** Returns `response` with `Vary` extended and `headers` set, copying it when its headers are immutable. */
function withHeaders(response: Response, headers: ReadonlyArray<readonly [string, string]>, vary: readonly string[]): Response {
  if (headers.length === 0 && vary.length === 0) return response;
  const applyTo = (target: Headers) => {
    if (vary.length > 0) target.set('Vary', appendVary(target.get('Vary'), vary));
    setAll(headers, target);
  };
  try {
    applyTo(response.headers);
    return response;
  } catch {
    // Immutable headers (a fetch() result, Response.redirect, Response.error): copy (values were checked before the handler ran).
    if (response.status < 200 || response.status > 599) return response;
    const copy = new Response(response.body, { status: response.status, statusText: response.statusText, headers: new Headers(response.headers) });
    applyTo(copy.headers);
    return copy;
  }
}

/** How an adapter's options are checked and mapped (core's `AdapterOptionsSpec`). */
type AdapterOptionsSpec = Exclude<Parameters<typeof createCorsPolicy>[1], boolean | undefined>;

/** The configuration check of {@link createAmpCors} (issue #15): unknown keys name the closest known one (hono's `cors` names included). */
const FETCH_SPEC: AdapterOptionsSpec = {
  entry: 'withAmpCors (@ampcors/fetch)',
  keys: ['onError'],
  aliases: {
    allowMethods: 'methods',
    allowHeaders: 'allowedHeaders',
    exposeHeaders: 'exposedHeaders',
    origin: 'origins',
    allowOrigin: 'origins',
    allowedOrigins: 'origins',
  },
  allowNothing: 'To allow no cross-origin request on purpose, do not wrap the handler (same-origin requests need no CORS).',
  allowAny: 'For a public API that any origin may read without credentials, pass {} (Access-Control-Allow-Origin: *).',
  map(given, _mode, problems) {
    const { onError, ...rest } = given as FetchAmpCorsOptions;
    if (onError !== undefined && typeof onError !== 'function') problems.add('invalid-option', 'onError must be a function (error, request) => Response');
    return rest;
  },
};

/**
 * Builds a configured Fetch adapter. All validation happens here: every
 * problem of the options is listed in one error. `{}` is the public mode
 * (`Access-Control-Allow-Origin: *`, no credentials); `undefined` is refused
 * (an unset variable), as is every unknown key.
 *
 * @throws AmpCorsError for an invalid configuration.
 */
export function createAmpCors(options: FetchAmpCorsOptions): FetchAmpCors {
  if (options === undefined) {
    throw new AmpCorsError(
      'invalid-option',
      "withAmpCors (@ampcors/fetch) needs options (got undefined, an unset variable?): for example { publishers: ['example.com'] }; for a public API that any origin may read without credentials, pass {} (Access-Control-Allow-Origin: *)",
    );
  }
  const policy = createCorsPolicy(options, FETCH_SPEC);
  const onError = options.onError ?? defaultOnError;

  const failed = async (error: unknown, request: Request): Promise<Response> => {
    let response: Response;
    try {
      response = await onError(error, request);
    } catch {
      response = defaultOnError();
    }
    return withHeaders(response, [], ['Origin']);
  };

  // One async frame per request: the decision and the handler are awaited only when they return Promises.
  const wrap = <A extends unknown[]>(handler: FetchHandler<A>) => {
    if (typeof handler !== 'function')
      throw new AmpCorsError(
        'invalid-option',
        `withAmpCors needs a handler function (request) => Response as its first argument, not ${handler === null ? 'null' : typeof handler}`,
      );
    return async (request: Request, ...rest: A): Promise<Response> => {
      try {
        const decided = policy.decide(fetchRequestFacts(request));
        const { verdict, plan } = isThenable(decided) ? await decided : decided;
        results.set(request, plan.email === undefined ? { verdict } : { verdict, email: plan.email });
        if (plan.handled) {
          const headers = planHeaders(plan, new Headers());
          return new Response(plan.body === '' ? null : plan.body, { status: plan.status, headers });
        }
        // All or nothing, before any side effect: a value the runtime refuses fails the request here, before the handler runs.
        if (plan.headers.length > 0) setAll(plan.headers, new Headers());
        const answered = handler(request, ...rest);
        return withHeaders(isThenable(answered) ? await answered : answered, plan.headers, plan.vary);
      } catch (error) {
        return failed(error, request);
      }
    };
  };

  const verifyRequest = (request: Request): Verdict | Promise<Verdict> => {
    const decision = policy.decide(fetchRequestFacts(request));
    return isThenable(decision) ? decision.then((d) => d.verdict) : decision.verdict;
  };

  const corsHeaders = (verdict: Verdict, request: Request): Headers => {
    const plan = planCors(fetchRequestFacts(request), verdict, policy.options);
    return planHeaders(plan.kind === 'reject' ? { ...plan, headers: [] } : plan, new Headers());
  };

  return { policy, verifyRequest, corsHeaders, wrap };
}

function adapterOf(options: FetchAmpCorsOptions | FetchAmpCors): FetchAmpCors {
  if (typeof options !== 'object' || options === null) return createAmpCors(options);
  if (typeof (options as FetchAmpCors).wrap === 'function' && 'policy' in options) return options as FetchAmpCors;
  let adapter = adapters.get(options);
  if (adapter === undefined) {
    adapter = createAmpCors(options as FetchAmpCorsOptions);
    adapters.set(options, adapter);
  }
  return adapter;
}

/**
 * Wraps a Fetch API handler with AMP-aware CORS: preflights are answered,
 * denied origins get 403 before the handler runs (or no CORS headers with
 * `onDenied: 'omit'`), allowed responses get the CORS headers. The handler's
 * status and body are kept; immutable response headers are handled by
 * copying the response. Inside the handler, {@link ampCorsOf} gives the
 * verdict. Never throws: failures become `onError`'s response (default 500),
 * with `Vary: Origin` and none of the CORS headers; a CORS header value the
 * runtime refuses is such a failure, found before the handler runs.
 *
 * @throws AmpCorsError for an invalid configuration (at wrap time).
 * @example
 * export default { fetch: withAmpCors((request) => Response.json({ ok: true }), { publishers: ['example.com'] }) };
 */
export function withAmpCors<A extends unknown[] = []>(
  handler: FetchHandler<A>,
  options: FetchAmpCorsOptions | FetchAmpCors,
): (request: Request, ...rest: A) => Promise<Response> {
  return adapterOf(options).wrap(handler);
}

/**
 * Judges a request for a handler written by hand. The adapter built for an
 * `options` object is cached, so pass the same object every time (or a
 * {@link createAmpCors} result). May throw when a custom verifier throws.
 */
export function verifyRequest(request: Request, options: FetchAmpCorsOptions | FetchAmpCors): Verdict | Promise<Verdict> {
  return adapterOf(options).verifyRequest(request);
}

/**
 * The CORS headers (with `Vary`) to put on the response to `request`, given
 * its verdict from {@link verifyRequest}. For a denied request only `Vary`.
 */
export function corsHeaders(verdict: Verdict, request: Request, options: FetchAmpCorsOptions | FetchAmpCors): Headers {
  return adapterOf(options).corsHeaders(verdict, request);
}
