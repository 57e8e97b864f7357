/**
 * The `hono/cors` drop-in (SPEC §7, issue #15): `hono/cors`'s option names
 * mapped onto ampcors's, its defaults when its `origin` decides, its origin
 * and methods functions asked per request. Written once here so that an
 * adapter (`@ampcors/hono`) only translates Hono's request and response; the
 * Fetch adapter uses the names as hints. Generic over the framework's context
 * type `C`: no framework is imported.
 */
import { checkPeerAliases, type ConfigMode, type ConfigProblems } from './config-check.js';
import { AmpCorsError } from './errors.js';
import { normalizeCorsOptions, type NormalizedCorsOptions } from './cors-options.js';
import { type AdapterOptionsSpec, type AmpCorsConfig, type CorsDecision, type CorsPolicy, createCorsPolicy, type VerdictSource } from './cors-policy.js';
import { type CorsRequest, isPreflight } from './cors-plan.js';
import { compileOriginOption, judgeWithOriginMatcher, type OriginMatcher } from './legacy-origin-option.js';
import { isThenable } from './request-facts.js';

/** `hono/cors`'s option names, and the names users bring from other CORS packages, each with the ampcors option it means. */
export const HONO_CORS_NAMES: Readonly<Record<string, string>> = {
  allowMethods: 'methods',
  allowHeaders: 'allowedHeaders',
  exposeHeaders: 'exposedHeaders',
  origin: 'origins',
  allowOrigin: 'origins',
  allowedOrigins: 'origins',
};

/**
 * The configuration check of a Fetch API adapter (`@ampcors/fetch`): the
 * ampcors keys plus its `onError` hook, `hono/cors`'s names (which users of
 * Fetch handlers bring) named as hints, and no options (`undefined`, an unset
 * variable) refused rather than read as the public mode (issue #15).
 *
 * @param entry - the entry point named in error messages
 * @throws AmpCorsError for an invalid configuration, listing every problem.
 */
export function createFetchCorsPolicy(options: AmpCorsConfig & { readonly onError?: unknown }, entry: string): CorsPolicy {
  const allowAny = 'For a public API that any origin may read without credentials, pass {} (Access-Control-Allow-Origin: *).';
  if (options === undefined) throw new AmpCorsError('invalid-option', `${entry} needs options (got undefined, an unset variable?): ${allowAny}`);
  return createCorsPolicy(options, {
    entry,
    keys: ['onError'],
    aliases: HONO_CORS_NAMES,
    allowNothing: 'To allow no cross-origin request on purpose, do not wrap the handler (same-origin requests need no CORS).',
    allowAny,
    map({ onError, ...rest }, _mode, problems) {
      if (onError !== undefined && typeof onError !== 'function') problems.add('invalid-option', 'onError must be a function (error, request) => Response');
      return rest;
    },
  });
}

/** `hono/cors`'s default `Access-Control-Allow-Methods`, kept in drop-in mode. */
export const HONO_CORS_METHODS = 'GET,HEAD,PUT,POST,DELETE,PATCH,QUERY';

/** `hono/cors`'s origin function: the `Access-Control-Allow-Origin` value for `origin` (`''` without one), or nothing to deny. */
export type HonoOriginFunction<C> = (origin: string, c: C) => string | null | undefined | Promise<string | null | undefined>;

/** `hono/cors`'s methods function: the `Access-Control-Allow-Methods` of a preflight from `origin`. */
export type HonoMethodsFunction<C> = (origin: string, c: C) => readonly string[] | Promise<readonly string[]>;

/** The ampcors configuration plus `hono/cors`'s options under their own names, for a framework whose context is `C`. */
export interface HonoCorsOptions<C> extends AmpCorsConfig {
  /**
   * `hono/cors`'s `origin`: an exact origin, `'*'`, an array of exact origins, or a
   * {@link HonoOriginFunction}. With `publishers` or `verifier` it adds origins; alone, it decides.
   * With credentials, an option allowing origins nobody names (`'*'`, `(origin) => origin`) is refused.
   */
  readonly origin?: string | readonly string[] | HonoOriginFunction<C>;
  /** Alias of `methods`, or a {@link HonoMethodsFunction} asked on each preflight. */
  readonly allowMethods?: string | readonly string[] | HonoMethodsFunction<C>;
  /** Alias of `allowedHeaders` (`[]`, `hono/cors`'s default, reflects the requested headers). */
  readonly allowHeaders?: string | readonly string[];
  /** Alias of `exposedHeaders`. */
  readonly exposeHeaders?: string | readonly string[];
}

/** The contexts the functions of {@link HonoCorsOptions} are given besides the request's own. */
export interface HonoContexts<C> {
  /** A context outside any request whose `Origin` is `origin` (the construction probe of an origin function). */
  probe(origin: string): C;
  /** A context like `c` whose `Origin` is `origin` (a question about a canary or the `__amp_source_origin`). */
  about(c: C, origin: string): C;
}

/** A validated `hono/cors`-compatible configuration: the policy, and the decision for one request. */
export interface HonoCorsPolicy<C> {
  /** The validated policy. */
  readonly policy: CorsPolicy;
  /** Judges a request whose context is `c`, asking the origin and methods functions as `hono/cors` does. May throw or reject when they do. */
  decide(request: CorsRequest, c: C): CorsDecision | Promise<CorsDecision>;
}

/** An origin function's answer as an origin option: a non-empty string as is, anything else none. */
function honoAnswer(answer: unknown): unknown {
  const read = (value: unknown) => (typeof value === 'string' && value !== '' ? value : false);
  return isThenable(answer) ? Promise.resolve(answer).then(read) : read(answer);
}

/**
 * The configuration check (issue #15): unknown keys name the closest known
 * one, the mode is named by keys only, `hono/cors`'s names are mapped onto
 * ampcors's with its defaults when its `origin` decides (its methods,
 * credentials off, denied origins passed on), and a static `origin` is
 * compiled into `compiled`, so that its problems are listed with the others.
 */
function honoSpec(entry: string, compiled: { matcher?: OriginMatcher }): AdapterOptionsSpec {
  return {
    entry,
    keys: ['origin', 'allowMethods', 'allowHeaders', 'exposeHeaders'],
    originKey: 'origin',
    aliases: { allowedOrigins: 'origin', allowOrigin: 'origin', optionsSuccessStatus: 'preflightStatus' },
    allowNothing: 'To allow no cross-origin request on purpose, pass origin: () => null (or leave ampCors out: same-origin requests need no CORS).',
    allowAny: 'For a public API that any origin may read without credentials, call ampCors() with no options (Access-Control-Allow-Origin: *).',
    map(given: Readonly<Record<string, unknown>>, mode: ConfigMode, problems: ConfigProblems): AmpCorsConfig {
      const { origin, allowMethods, allowHeaders, exposeHeaders, ...rest } = given as HonoCorsOptions<unknown>;
      checkPeerAliases(given, problems);
      const staticMethods = typeof allowMethods === 'function' ? undefined : allowMethods;
      const credentials = rest.credentials ?? mode === 'amp';
      if (typeof origin === 'string' || Array.isArray(origin)) {
        if (Array.isArray(origin) && origin.length === 0)
          problems.add(
            'invalid-option',
            'origin is empty, which would deny every cross-origin request without a word. To allow none on purpose, pass origin: () => null',
          );
        else if (Array.isArray(origin) && origin.some((item) => typeof item !== 'string'))
          problems.add('invalid-option', 'origin must list exact origin strings, as in hono/cors');
        else compiled.matcher = problems.attempt(() => compileOriginOption(origin as string | string[], { credentials: credentials === true }));
      } else if (origin !== undefined && typeof origin !== 'function') {
        problems.add('invalid-option', "origin must be an exact origin string, '*', an array of origins or a function (origin, c) => string, as in hono/cors");
      }
      return {
        ...rest,
        ...(rest.methods === undefined && (staticMethods !== undefined || mode !== 'amp') && { methods: staticMethods ?? HONO_CORS_METHODS }),
        // hono/cors's `[]` (its default) reflects the requested headers, as core's `undefined` does.
        ...(allowHeaders !== undefined && !(Array.isArray(allowHeaders) && allowHeaders.length === 0) && { allowedHeaders: allowHeaders }),
        ...(exposeHeaders !== undefined && { exposedHeaders: exposeHeaders }),
        ...(mode !== 'any-origin' && { credentials }),
        ...(origin !== undefined && { onDenied: rest.onDenied ?? 'omit' }),
      };
    },
  };
}

/**
 * Validates a `hono/cors`-compatible configuration once (every problem in one
 * `AmpCorsError`) and returns its per-request decision.
 *
 * 1. The options are checked and mapped (see `honoSpec`); no options at all
 *    is `hono/cors()`'s default, the literal `*` without credentials.
 * 2. A static `origin` is one more verdict source after the configuration's.
 * 3. An origin function is asked about canary origins now: one allowing every
 *    origin is refused with credentials, like `'*'`. Per request it is asked
 *    with the request's context about the request's `Origin`, and with a
 *    context `about` another origin for any other question.
 * 4. A methods function is asked on preflights only; its answer is checked
 *    as the `methods` option is.
 *
 * @param entry - the entry point named in error messages, e.g. `ampCors (@ampcors/hono)`
 * @throws AmpCorsError for an invalid configuration.
 */
export function createHonoCorsPolicy<C>(options: HonoCorsOptions<C> | undefined, contexts: HonoContexts<C>, entry: string): HonoCorsPolicy<C> {
  // 1. The options.
  const compiled: { matcher?: OriginMatcher } = {};
  const policy = createCorsPolicy(options as AmpCorsConfig, honoSpec(entry, compiled));
  const { origin, allowMethods } = policy.mode === 'any-origin' ? {} : (options as HonoCorsOptions<C>);
  // 2. A static origin.
  const matcher = compiled.matcher;
  const staticSource: VerdictSource | null = matcher === undefined ? null : { verify: (raw, context) => judgeWithOriginMatcher(matcher, raw, context) };
  // 3. An origin function, guarded.
  const guarded = typeof origin === 'function' ? policy.guardOriginFunction((asked) => honoAnswer(origin(asked, contexts.probe(asked)))) : null;
  const sourceFor = (c: C, own: string | null | undefined): VerdictSource | null =>
    typeof origin !== 'function' || guarded === null
      ? staticSource
      : guarded((asked) => honoAnswer(origin(asked, asked === own ? c : contexts.about(c, asked))));
  // 4. A methods function.
  const methodsOf = async (request: CorsRequest, c: C, ask: HonoMethodsFunction<C>): Promise<NormalizedCorsOptions> => ({
    ...policy.options,
    methods: normalizeCorsOptions({ methods: await ask(request.origin ?? '', c) }).methods,
  });
  const decide = (request: CorsRequest, c: C): CorsDecision | Promise<CorsDecision> => {
    const source = sourceFor(c, request.origin);
    if (typeof allowMethods !== 'function' || !isPreflight(request)) return policy.decide(request, source);
    return methodsOf(request, c, allowMethods).then((opts) => policy.decide(request, source, opts));
  };
  return { policy, decide };
}
