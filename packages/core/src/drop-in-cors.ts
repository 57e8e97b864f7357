/**
 * The `cors` package's options (expressjs/cors) → an ampcors policy and its
 * origin source (SPEC §7, issue #15): `cors`'s option names mapped onto
 * ampcors's, its defaults when its `origin` option decides, its static
 * origin compiled and its origin callback asked per request. Written once
 * here so that `@ampcors/express` only translates Express's request and
 * response. Generic over the framework's request type: nothing is imported
 * from a framework.
 *
 * 1. Names: `headers` is `allowedHeaders`, `optionsSuccessStatus` is
 *    `preflightStatus`, and a `maxAge` string of digits is its number.
 * 2. The mode is named by keys only (config-check.ts). With `cors`'s
 *    `origin` alone (the compatible mode) `cors`'s defaults hold:
 *    credentials off, a denied origin passed on without CORS headers
 *    (`onDenied: 'omit'`), and every `OPTIONS` answered as a preflight.
 *    With `publishers`, `origins` or `verifier`, `origin` adds origins and
 *    ampcors's defaults stay (credentials on).
 * 3. A static `origin` is compiled with the other options, so that its
 *    problems are listed with theirs; `origin: '*'` without credentials is
 *    `cors`'s literal `*` (no `Vary: Origin`), as `ampCors()` with no
 *    options is.
 * 4. An origin callback is asked about canary origins at construction (one
 *    allowing every origin is refused with credentials, like `true`), then
 *    per request through `askOriginCallback`, synchronously when it answers
 *    synchronously.
 */
import type { ConfigMode, ConfigProblems } from './config-check.js';
import type { NormalizedCorsOptions } from './cors-options.js';
import { type AdapterOptionsSpec, type AmpCorsConfig, type CorsDecision, type CorsPolicy, createCorsPolicy, type VerdictSource } from './cors-policy.js';
import type { CorsRequest } from './cors-plan.js';
import { compileOriginOption, judgeWithOriginMatcher, type OriginMatcher, type OriginOption } from './legacy-origin-option.js';
import { askOriginCallback } from './origin-callback.js';

/** The `cors` package's origin function: calls back with an {@link OriginOption} for this request's `Origin`. */
export type CorsPackageOriginCallback = (origin: string | undefined, callback: (error: Error | null, allow?: OriginOption) => void) => void;

/**
 * The ampcors configuration, plus the options of the `cors` package under
 * their own names (`origin`, `headers`, `optionsSuccessStatus`, a string
 * `maxAge`).
 */
export interface CorsPackageOptions extends Omit<AmpCorsConfig, 'maxAge'> {
  /**
   * The `cors` package's `origin`: an exact origin, `'*'`, a RegExp, an
   * array, `true` (any), `false` (none) or a {@link CorsPackageOriginCallback}.
   * With `publishers` or `verifier` it adds origins; alone, it decides. With
   * credentials, an option allowing origins nobody names (`true`, `'*'`,
   * catch-all patterns, `cb(null, true)` for every origin) is refused.
   */
  readonly origin?: OriginOption | CorsPackageOriginCallback;
  /** Alias of `allowedHeaders` (the `cors` package's name). */
  readonly headers?: string | readonly string[];
  /** Alias of `preflightStatus` (the `cors` package's name). */
  readonly optionsSuccessStatus?: number;
  /** `Access-Control-Max-Age` in seconds; a string of digits is accepted, as `cors` accepts it. */
  readonly maxAge?: number | string;
}

/** The `cors` package's per-request options delegate, for a framework whose request is `R`. */
export type CorsPackageDelegate<R> = (req: R, callback: (error: Error | null, options?: CorsPackageOptions) => void) => void;

/** A validated `cors`-compatible configuration: the policy, and the decision for one request. */
export interface CorsPackagePolicy {
  /** The validated policy. */
  readonly policy: CorsPolicy;
  /** Judges a request, asking the origin callback as `cors` does. May throw or reject when the callback or a verifier does. */
  decide(request: CorsRequest): CorsDecision | Promise<CorsDecision>;
}

/** 1–3. The configuration check and mapping (see the file comment); a static `origin` is compiled into `compiled`. */
function corsSpec(entry: string, compiled: { matcher?: OriginMatcher }): AdapterOptionsSpec {
  return {
    entry,
    keys: ['origin', 'headers', 'optionsSuccessStatus'],
    originKey: 'origin',
    aliases: { allowMethods: 'methods', allowHeaders: 'allowedHeaders', exposeHeaders: 'exposedHeaders', allowOrigin: 'origin', allowedOrigins: 'origin' },
    allowNothing: 'To allow no cross-origin request on purpose, pass origin: false (or leave ampCors out: same-origin requests need no CORS).',
    allowAny:
      "For a public API that any origin may read without credentials, call ampCors() with no options, or add origin: '*' (cors's default) to the other options (Access-Control-Allow-Origin: *).",
    map(given: Readonly<Record<string, unknown>>, mode: ConfigMode, problems: ConfigProblems): AmpCorsConfig {
      const { origin, headers, optionsSuccessStatus, maxAge, ...rest } = given as CorsPackageOptions;
      // 1. Names.
      let seconds: number | undefined;
      if (typeof maxAge === 'string') {
        if (/^[0-9]+$/.test(maxAge)) seconds = Number(maxAge);
        else problems.add('invalid-option', 'maxAge must be a non-negative whole number of seconds');
      } else {
        seconds = maxAge;
      }
      if (rest.allowedHeaders !== undefined && headers !== undefined) problems.add('invalid-option', 'give allowedHeaders or its alias headers, not both');
      if (rest.preflightStatus !== undefined && optionsSuccessStatus !== undefined)
        problems.add('invalid-option', 'give preflightStatus or its alias optionsSuccessStatus, not both');
      // 2. cors's defaults when its origin option is given (credentials stay on with publishers or a verifier).
      const dropIn = origin !== undefined;
      const credentials = rest.credentials ?? (mode === 'amp' || !dropIn);
      // 3. A static origin.
      if (dropIn && typeof origin !== 'function') compiled.matcher = problems.attempt(() => compileOriginOption(origin, { credentials: credentials === true }));
      return {
        ...rest,
        ...(headers !== undefined && { allowedHeaders: headers }),
        ...(optionsSuccessStatus !== undefined && { preflightStatus: optionsSuccessStatus }),
        ...(seconds !== undefined && { maxAge: seconds }),
        ...(dropIn && { credentials, onDenied: rest.onDenied ?? 'omit' }),
      };
    },
  };
}

/**
 * Validates a `cors`-compatible configuration once (every problem in one
 * `AmpCorsError`) and returns its per-request decision (see the file
 * comment for the rules).
 *
 * @param options - the options as the user gave them (`undefined` for none: the literal `*`, as `cors()`)
 * @param entry - the entry point named in error messages, e.g. `ampCors (@ampcors/express)`
 * @throws AmpCorsError for an invalid configuration.
 */
export function createCorsPackagePolicy(options: CorsPackageOptions | undefined, entry: string): CorsPackagePolicy {
  const compiled: { matcher?: OriginMatcher } = {};
  const policy = createCorsPolicy(options as AmpCorsConfig, corsSpec(entry, compiled));
  const origin = policy.mode === 'any-origin' ? undefined : (options as CorsPackageOptions).origin;
  // 2. cors's answers in the compatible mode; 3. its literal * for origin: '*' without credentials.
  const opts: NormalizedCorsOptions =
    policy.mode === 'amp'
      ? policy.options
      : {
          ...policy.options,
          everyOptionsIsPreflight: true,
          allowedHeadersSeparator: ',',
          ...(origin === '*' && !policy.options.credentials && { anyOrigin: true }),
        };
  let source: VerdictSource | null = null;
  if (typeof origin === 'function') {
    // 4. Asked about canary origins now, then per request.
    source = policy.guardOriginFunction((asked) => askOriginCallback((answer) => origin(asked, answer)), policy.options.credentials)();
  } else if (compiled.matcher !== undefined) {
    const matcher = compiled.matcher;
    source = { verify: (raw, context) => judgeWithOriginMatcher(matcher, raw, context) };
  }
  return { policy, decide: (request) => policy.decide(request, source, opts) };
}

/**
 * The policies of an options delegate's answers: one per options object,
 * built on first use (a delegate answering the same object each time is
 * configured once); `undefined` is no options, as `ampCors()`.
 *
 * @param entry - the entry point named in error messages
 * @returns the policy of a delegate's answer; throws AmpCorsError for an invalid one
 */
export function corsPackagePolicies(entry: string): (options: CorsPackageOptions | undefined) => CorsPackagePolicy {
  const cache = new WeakMap<object, CorsPackagePolicy>();
  let none: CorsPackagePolicy | undefined;
  return (options) => {
    if (typeof options !== 'object' || options === null)
      return options === undefined ? (none ??= createCorsPackagePolicy(undefined, entry)) : createCorsPackagePolicy(options, entry);
    let configured = cache.get(options);
    if (configured === undefined) {
      configured = createCorsPackagePolicy(options, entry);
      cache.set(options, configured);
    }
    return configured;
  };
}
