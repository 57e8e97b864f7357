/**
 * The `@fastify/cors` drop-in (SPEC §7, issue #15): `@fastify/cors`'s option
 * names and defaults mapped onto ampcors's configuration, its `preflight`,
 * `strictPreflight` and `hideOptionsRoute` rules, and its origin function
 * (callback or Promise, called on the Fastify instance) asked through core's
 * guard, so that `@ampcors/fastify` only translates Fastify's request and
 * reply. Pure: generic over the instance type `S` the origin function is
 * called on; no framework is imported.
 */
import type { ConfigMode, ConfigProblems } from './config-check.js';
import { type AdapterOptionsSpec, type AmpCorsConfig, type CorsDecision, type CorsPolicy, createCorsPolicy, type VerdictSource } from './cors-policy.js';
import { compileOriginOption, judgeWithOriginMatcher, type OriginMatcher, type OriginOption } from './legacy-origin-option.js';
import { askOriginCallback } from './origin-callback.js';
import { type NodeHeaders, nodeRequestFacts } from './request-facts.js';

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

/** `strictPreflight`'s answer to an `OPTIONS` that is no CORS preflight (`@fastify/cors`'s, with the same `Vary`). */
export interface InvalidPreflightAnswer {
  readonly status: 400;
  readonly contentType: 'text/plain';
  readonly body: 'Invalid Preflight Request';
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
   * them does.
   */
  decide(request: FastifyCorsRequest): InvalidPreflightAnswer | CorsDecision | Promise<CorsDecision>;
}

/** `@fastify/cors`'s default methods, used when its `origin` option (or nothing) decides. */
const FASTIFY_CORS_METHODS = 'GET,HEAD,POST';

/** `@fastify/cors`'s own keys (the others are ampcors's). */
const FASTIFY_CORS_KEYS: readonly string[] = ['origin', 'optionsSuccessStatus', 'preflight', 'strictPreflight', 'hideOptionsRoute', 'hook', 'logLevel'];

/** Fastify's own registration options, which reach a plugin among its options and are not the plugin's to check (`logLevel` is both). */
const REGISTER_KEYS: readonly string[] = ['prefix', 'logSerializers'];

// `strictPreflight`'s two answers, shared (frozen: adapters only read them). No `Vary: Origin` where the answer is the same for every origin.
const INVALID_PREFLIGHT: InvalidPreflightAnswer = Object.freeze({
  status: 400,
  contentType: 'text/plain',
  body: 'Invalid Preflight Request',
  vary: Object.freeze(['Origin']),
});
const INVALID_PREFLIGHT_ANY: InvalidPreflightAnswer = Object.freeze({ ...INVALID_PREFLIGHT, vary: Object.freeze([]) });

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
    allowAny: 'For a public API that any origin may read without credentials, register ampCors with no options (Access-Control-Allow-Origin: *).',
    map(given: Readonly<Record<string, unknown>>, mode: ConfigMode, problems: ConfigProblems): AmpCorsConfig {
      const { origin, optionsSuccessStatus, preflight, strictPreflight, hideOptionsRoute, hook, logLevel, ...rest } = given as FastifyCorsOptions<unknown>;
      for (const [name, value] of Object.entries({ preflight, strictPreflight, hideOptionsRoute })) {
        if (value !== undefined && typeof value !== 'boolean') problems.add('invalid-option', `${name} must be true or false`);
      }
      if (logLevel !== undefined && typeof logLevel !== 'string') problems.add('invalid-option', "logLevel must be one of Fastify's log levels, e.g. 'info'");
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
 * 5. Per request: `strictPreflight` answers an `OPTIONS` without `Origin`
 *    or `Access-Control-Request-Method` with 400; `preflight: false` reads
 *    an `OPTIONS` as any other request; core decides the rest.
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
  // 2. The options.
  const compiled: { matcher?: OriginMatcher } = {};
  const policy = createCorsPolicy(given as AmpCorsConfig, fastifySpec(entry, compiled));
  const { origin, logLevel, preflight = true, strictPreflight = true, hideOptionsRoute = true } = (given ?? {}) as FastifyCorsOptions<S>;
  // 3. A static origin; 4. an origin function, guarded.
  const matcher = compiled.matcher;
  const source: VerdictSource | null =
    typeof origin === 'function'
      ? policy.guardOriginFunction((asked) => askOriginCallback((answer) => origin.call(self, asked, answer), { promiseAnswers: true }))()
      : matcher === undefined
        ? null
        : { verify: (raw, context) => judgeWithOriginMatcher(matcher, raw, context) };
  const invalidPreflight = policy.mode === 'any-origin' ? INVALID_PREFLIGHT_ANY : INVALID_PREFLIGHT;
  const strict = preflight && strictPreflight;
  // 5. Per request.
  const decide = (request: FastifyCorsRequest): InvalidPreflightAnswer | CorsDecision | Promise<CorsDecision> => {
    const headers = request.headers;
    if (strict && request.method === 'OPTIONS' && (!headers.origin || !headers['access-control-request-method'])) return invalidPreflight;
    return policy.decide(nodeRequestFacts(request, undefined, preflight), source);
  };
  return { policy, hideOptionsRoute, logLevel, decide };
}
