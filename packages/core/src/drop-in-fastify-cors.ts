/**
 * The `@fastify/cors` drop-in (SPEC §7, issue #15): `@fastify/cors`'s option
 * names and defaults mapped onto ampcors's configuration, its `preflight`,
 * `strictPreflight` and `hideOptionsRoute` rules, and its origin function
 * (callback or Promise, called on the Fastify instance) asked through core's
 * guard, and its per-route `config.cors`, so that `@ampcors/fastify` only
 * translates Fastify's request and reply. Pure: generic over the instance
 * type `S` the origin function is called on; no framework is imported.
 */
import { type ConfigMode, ConfigProblems } from './config-check.js';
import type { NormalizedCorsOptions } from './cors-options.js';
import { type AdapterOptionsSpec, type AmpCorsConfig, type CorsDecision, type CorsPolicy, createCorsPolicy, type VerdictSource } from './cors-policy.js';
import { AmpCorsError } from './errors.js';
import { compileOriginOption, judgeWithOriginMatcher, type OriginMatcher, type OriginOption } from './legacy-origin-option.js';
import { askOriginCallback } from './origin-callback.js';
import { isThenable, type NodeHeaders, nodeRequestFacts } from './request-facts.js';

/** `@fastify/cors`'s origin function: calls back with an {@link OriginOption}, or returns a Promise of it; `this` is the Fastify instance. */
export type FastifyCorsOriginFunction<S> = (
  this: S,
  origin: string | undefined,
  callback: (error: Error | null, allow?: OriginOption) => void,
) => void | Promise<OriginOption | void>;

/** The ampcors configuration plus `@fastify/cors`'s options under their own names; `S` is the instance an origin function is called on. */
export interface FastifyCorsOptions<S> extends AmpCorsConfig {
  /**
   * `@fastify/cors`'s `origin`: an exact origin, `'*'`, a RegExp, an array,
   * `true` (any), `false` (none) or a {@link FastifyCorsOriginFunction}.
   * With `publishers` or `verifier` it adds origins; alone, it decides. With
   * credentials, an option allowing origins nobody names is refused.
   */
  readonly origin?: OriginOption | FastifyCorsOriginFunction<S>;
  /** Alias of `preflightStatus` (`@fastify/cors`'s name). */
  readonly optionsSuccessStatus?: number;
  /** `Cache-Control` of preflight answers: seconds (`max-age=N`) or the header's value. */
  readonly cacheControl?: number | string;
  /** Answer preflights (default `true`); `false` treats an `OPTIONS` as any other request. */
  readonly preflight?: boolean;
  /** Answer an `OPTIONS` without `Origin` or `Access-Control-Request-Method` with 400 (default `true`). */
  readonly strictPreflight?: boolean;
  /** Hide the `OPTIONS *` route from documentation generators (default `true`). */
  readonly hideOptionsRoute?: boolean;
  /** Only `'onRequest'` (the default): a denied request never reaches a later hook or the route. */
  readonly hook?: 'onRequest';
  /** The log level of the `OPTIONS *` route. */
  readonly logLevel?: string;
}

/** The part of a Node request (Fastify's `request.raw`) the drop-in reads. */
export interface FastifyCorsRequest {
  readonly method?: string;
  readonly url?: string;
  readonly headers: NodeHeaders;
}

/**
 * An answer of the drop-in's own, not core's: `strictPreflight`'s 400 to an
 * `OPTIONS` that is no CORS preflight, or (`status` 0) a route whose
 * `config.cors` is `false`, passed on with no CORS header.
 */
export interface FastifyCorsOwnAnswer {
  /** The status to end the request with; 0 to pass it on. */
  readonly status: number;
  readonly contentType: string;
  readonly body: string;
  /** Header names to append to `Vary`. */
  readonly vary: readonly string[];
}

/** What the Fastify adapter builds once, when Fastify loads the plugin. */
export interface FastifyCorsPolicy {
  /** The validated policy. */
  readonly policy: CorsPolicy;
  /** Whether the `OPTIONS *` route is hidden from documentation generators. */
  readonly hideOptionsRoute: boolean;
  /** The log level of the `OPTIONS *` route, when one was given. */
  readonly logLevel: string | undefined;
  /**
   * Judges one request: `strictPreflight`'s 400 for an `OPTIONS` that is no
   * CORS preflight, or core's decision (the origin option or function asked
   * as `@fastify/cors` asks it). Synchronous unless a verifier or the
   * origin function answers with a Promise; may throw or reject when one of
   * them does, or when the route's `config.cors` is invalid.
   *
   * @param routeConfig - the route's `config`, whose `cors` is `undefined` (the plugin's options), `false` (no CORS on this route) or options merged over the plugin's
   */
  decide(request: FastifyCorsRequest, routeConfig?: unknown): FastifyCorsOwnAnswer | CorsDecision | Promise<CorsDecision>;
}

/** `@fastify/cors`'s default methods, used when its `origin` option (or nothing) decides. */
const FASTIFY_CORS_METHODS = 'GET,HEAD,POST';

/** `@fastify/cors`'s own keys (the others are ampcors's). */
const FASTIFY_CORS_KEYS: readonly string[] = ['origin', 'optionsSuccessStatus', 'cacheControl', 'preflight', 'strictPreflight', 'hideOptionsRoute', 'hook'];

/** Fastify's own registration options, which reach a plugin among its options: not counted as options (`logLevel` also sets the `OPTIONS *` route's). */
const REGISTER_KEYS: readonly string[] = ['prefix', 'logLevel', 'logSerializers'];

// The drop-in's own answers, shared (frozen: adapters only read them). No `Vary: Origin` where the answer is the same for every origin.
const VARY_ORIGIN: readonly string[] = Object.freeze(['Origin']);
const VARY_NONE: readonly string[] = Object.freeze([]);
const INVALID_PREFLIGHT: FastifyCorsOwnAnswer = Object.freeze({ status: 400, contentType: 'text/plain', body: 'Invalid Preflight Request', vary: VARY_ORIGIN });
const INVALID_PREFLIGHT_ANY: FastifyCorsOwnAnswer = Object.freeze({ ...INVALID_PREFLIGHT, vary: VARY_NONE });
const ROUTE_OFF: FastifyCorsOwnAnswer = Object.freeze({ status: 0, contentType: '', body: '', vary: VARY_ORIGIN });
const ROUTE_OFF_ANY: FastifyCorsOwnAnswer = Object.freeze({ ...ROUTE_OFF, vary: VARY_NONE });

/** A `Cache-Control` value every runtime accepts (visible ASCII, space, tab), as a plan's values are. */
const HEADER_VALUE = /^[\t\x20-\x7e]+$/;

/** `@fastify/cors`'s `cacheControl`: whole seconds as `max-age=N`, a string as it is; `null` when not given. */
function cacheControlOf(value: unknown, problems: ConfigProblems): string | null {
  if (value === undefined) return null;
  if (typeof value === 'number' && Number.isSafeInteger(value) && value >= 0) return `max-age=${value}`;
  if (typeof value === 'string' && HEADER_VALUE.test(value)) return value;
  problems.add('invalid-option', 'cacheControl must be whole seconds (max-age) or a Cache-Control header value');
  return null;
}

/** Whether `origin` is `@fastify/cors`'s literal `*`: `'*'`, or an array holding it. */
function isStar(origin: unknown): boolean {
  return origin === '*' || (Array.isArray(origin) && origin.includes('*'));
}

/**
 * The configuration check (issue #15): unknown keys name the closest known
 * one, the mode is named by keys only, `@fastify/cors`'s names are mapped
 * onto ampcors's with its defaults when its `origin` decides (methods
 * `GET,HEAD,POST`, credentials off, denied origins passed on), and a static
 * `origin` is compiled into `compiled`, so that its problems are listed with
 * the others.
 */
function fastifySpec(entry: string, compiled: { matcher?: OriginMatcher }): AdapterOptionsSpec {
  return {
    entry,
    keys: FASTIFY_CORS_KEYS,
    originKey: 'origin',
    aliases: { allowMethods: 'methods', allowHeaders: 'allowedHeaders', exposeHeaders: 'exposedHeaders', allowOrigin: 'origin', allowedOrigins: 'origin' },
    allowNothing: 'To allow no cross-origin request on purpose, pass origin: false (or leave ampCors out: same-origin requests need no CORS).',
    allowAny:
      "For a public API that any origin may read without credentials, register ampCors with no options, or add origin: '*' (@fastify/cors's default) to the other options (Access-Control-Allow-Origin: *).",
    map(given: Readonly<Record<string, unknown>>, mode: ConfigMode, problems: ConfigProblems): AmpCorsConfig {
      const { origin, optionsSuccessStatus, cacheControl, preflight, strictPreflight, hideOptionsRoute, hook, ...rest } = given as FastifyCorsOptions<unknown>;
      cacheControlOf(cacheControl, problems);
      for (const [name, value] of Object.entries({ preflight, strictPreflight, hideOptionsRoute })) {
        if (value !== undefined && typeof value !== 'boolean') problems.add('invalid-option', `${name} must be true or false`);
      }
      if (hook !== undefined && hook !== 'onRequest')
        problems.add('invalid-option', "hook must be 'onRequest': a later hook would let a denied request run earlier hooks, or the route itself");
      if (rest.preflightStatus !== undefined && optionsSuccessStatus !== undefined)
        problems.add('invalid-option', 'give preflightStatus or its alias optionsSuccessStatus, not both');
      const dropIn = origin !== undefined;
      const credentials = rest.credentials ?? mode === 'amp';
      if (dropIn && typeof origin !== 'function') compiled.matcher = problems.attempt(() => compileOriginOption(origin, { credentials }));
      return {
        ...rest,
        ...(rest.methods === undefined && mode !== 'amp' && { methods: FASTIFY_CORS_METHODS }),
        ...(optionsSuccessStatus !== undefined && { preflightStatus: optionsSuccessStatus }),
        ...(mode !== 'any-origin' && { credentials }),
        ...(dropIn && { onDenied: rest.onDenied ?? 'omit' }),
      };
    },
  };
}

/**
 * Validates a `@fastify/cors`-compatible configuration once (every problem
 * in one `AmpCorsError`) and returns its per-request decision.
 *
 * 1. Fastify's own registration options are set aside; anything but an
 *    object (`@fastify/cors`'s options delegator, a function) is left for
 *    the check to refuse, never read as "no options" (the literal `*`).
 * 2. The options are checked and mapped (see `fastifySpec`); no options at
 *    all is `@fastify/cors`'s default, the literal `*` without credentials.
 * 3. A static `origin` is one more verdict source after the configuration's.
 * 4. An origin function is asked about canary origins now: one allowing
 *    every origin is refused with credentials, like `true`. A Promise's
 *    value is its answer, even `undefined` (as `@fastify/cors` reads it):
 *    no request waits for a callback nobody will call.
 * 5. Per request: `origin: false` alone passes every request on untouched
 *    (`@fastify/cors`'s "CORS off"); `strictPreflight` answers an `OPTIONS`
 *    without `Origin` or `Access-Control-Request-Method` with 400 (without
 *    it, every `OPTIONS` is answered as a preflight); `preflight: false`
 *    reads an `OPTIONS` as any other request; core decides the rest;
 *    `cacheControl` is added to preflight answers.
 * 6. A route's `config.cors` (as `@fastify/cors` reads it): `false` sends no
 *    CORS header on that route; an object of options is merged over the
 *    plugin's and checked like them, once per route (an invalid one makes
 *    each of the route's requests fail with its `AmpCorsError`: a 500).
 *
 * @param options - the plugin's options as Fastify passed them
 * @param self - what an origin function is called on (the Fastify instance)
 * @param entry - the entry point named in error messages, e.g. `ampCors (@ampcors/fastify)`
 * @throws AmpCorsError for an invalid configuration.
 */
export function createFastifyCorsPolicy<S>(options: FastifyCorsOptions<S> | undefined, self: S, entry: string): FastifyCorsPolicy {
  // 1. Fastify's registration options.
  const given: unknown =
    typeof options === 'object' && options !== null && !Array.isArray(options)
      ? Object.fromEntries(Object.entries(options).filter(([key]) => !REGISTER_KEYS.includes(key)))
      : options;
  // 2. The options; `origin: '*'` without credentials is @fastify/cors's literal * on every response.
  const compiled: { matcher?: OriginMatcher } = {};
  const policy = createCorsPolicy(given as AmpCorsConfig, fastifySpec(entry, compiled));
  const read = (given ?? {}) as FastifyCorsOptions<S>;
  const { origin, preflight = true, strictPreflight = true, hideOptionsRoute = true } = read;
  const logLevel = typeof options === 'object' && options !== null && typeof options.logLevel === 'string' ? options.logLevel : undefined;
  const star = policy.mode === 'any-origin' || (policy.mode === 'origin-option' && isStar(origin) && !policy.options.credentials);
  // Without strictPreflight, @fastify/cors answers every OPTIONS as a preflight.
  const everyOptions = policy.mode !== 'amp' && preflight && !strictPreflight;
  const opts: NormalizedCorsOptions =
    (star && policy.mode !== 'any-origin') || everyOptions
      ? { ...policy.options, ...(star && { anyOrigin: true }), ...(everyOptions && { everyOptionsIsPreflight: true }) }
      : policy.options;
  const cacheControl = cacheControlOf(read.cacheControl, new ConfigProblems());
  // 3. A static origin; 4. an origin function, guarded.
  const matcher = compiled.matcher;
  const source: VerdictSource | null =
    typeof origin === 'function'
      ? policy.guardOriginFunction((asked) => askOriginCallback((answer) => origin.call(self, asked, answer), { promiseAnswers: true }))()
      : matcher === undefined
        ? null
        : { verify: (raw, context) => judgeWithOriginMatcher(matcher, raw, context) };
  // 5. Per request. @fastify/cors never answers 400 when its origin is false (CORS off).
  const strict = preflight && strictPreflight && origin !== false;
  const invalidPreflight = star ? INVALID_PREFLIGHT_ANY : INVALID_PREFLIGHT;
  const routeOff = star ? ROUTE_OFF_ANY : ROUTE_OFF;
  // `origin: false` alone (denied origins passed on) is @fastify/cors's "CORS off": every request passed on untouched, no `Vary` either.
  const off = policy.mode === 'origin-option' && origin === false && policy.options.onDenied === 'omit';
  const withCacheControl = ({ verdict, plan }: CorsDecision): CorsDecision =>
    plan.kind === 'preflight' ? { verdict, plan: { ...plan, headers: [...plan.headers, ['cache-control', cacheControl as string]] } } : { verdict, plan };
  const routes = new WeakMap<object, FastifyCorsPolicy | AmpCorsError>();
  const decide = (request: FastifyCorsRequest, routeConfig?: unknown): FastifyCorsOwnAnswer | CorsDecision | Promise<CorsDecision> => {
    const route = typeof routeConfig === 'object' && routeConfig !== null ? (routeConfig as { cors?: unknown }).cors : undefined;
    if (route !== undefined) return decideForRoute(request, route);
    if (off) return ROUTE_OFF_ANY;
    const headers = request.headers;
    if (strict && request.method === 'OPTIONS' && (!headers.origin || !headers['access-control-request-method'])) return invalidPreflight;
    const decided = policy.decide(nodeRequestFacts(request, undefined, preflight), source, opts);
    if (cacheControl === null) return decided;
    return isThenable(decided) ? decided.then(withCacheControl) : withCacheControl(decided);
  };
  // 6. A route's `config.cors`: `false` turns CORS off on it; options are merged over the plugin's, checked once per route.
  const decideForRoute = (request: FastifyCorsRequest, route: unknown): FastifyCorsOwnAnswer | CorsDecision | Promise<CorsDecision> => {
    if (route === false) return routeOff;
    if (typeof route !== 'object' || route === null || Array.isArray(route))
      throw new AmpCorsError('invalid-option', `${entry}: a route's config.cors must be false or an object of options`);
    let own = routes.get(route);
    if (own === undefined) {
      try {
        own = createFastifyCorsPolicy({ ...(given as object), ...route } as FastifyCorsOptions<S>, self, `${entry}, a route's config.cors`);
      } catch (error) {
        own = error instanceof AmpCorsError ? error : new AmpCorsError('invalid-option', String(error));
      }
      routes.set(route, own);
    }
    if (own instanceof AmpCorsError) throw own;
    return own.decide(request);
  };
  return { policy, hideOptionsRoute, logLevel, decide };
}
