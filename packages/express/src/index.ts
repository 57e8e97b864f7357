/**
 * @ampcors/express — AMP-aware CORS middleware for Express 4 and 5, and a
 * drop-in replacement for the `cors` package. A thin adapter: every decision
 * and every header comes from @ampcors/core.
 *
 * @packageDocumentation
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { EmailSender, Verdict } from '@ampcors/core';
import {
  type AdapterOptionsSpec,
  type AmpCorsConfig,
  appendVary,
  applyHeadersAtomically,
  askOriginCallback,
  compileOriginOption,
  type CorsDecision,
  type CorsPolicy,
  createCorsPolicy,
  isThenable,
  judgeWithOriginMatcher,
  nodeRequestFacts,
  type OriginMatcher,
  type OriginOption,
  type VerdictSource,
} from '@ampcors/core/adapter';

export { ampRedirectTo, AmpCorsError, type AmpCorsConfig, type CorsOptions, type OriginOption, type Verdict, type VerdictSource } from '@ampcors/core';

declare global {
  namespace Express {
    interface Request {
      /** The ampcors verdict of this request (set by the `ampCors` middleware). */
      ampCors?: Verdict;
      /** The AMP for Email sender of this request, when `email` is configured and the request is one. */
      ampCorsEmail?: EmailSender;
    }
  }
}

/** The `cors` package's origin function: calls back with an {@link OriginOption} for this request's `Origin`. */
export type OriginCallback = (origin: string | undefined, callback: (error: Error | null, allow?: OriginOption) => void) => void;

/**
 * Options of {@link ampCors}: the ampcors configuration, plus the options of
 * the `cors` package under their own names (`origin`, `headers`,
 * `optionsSuccessStatus`, a string `maxAge`).
 */
export interface ExpressAmpCorsOptions extends Omit<AmpCorsConfig, 'maxAge'> {
  /**
   * The `cors` package's `origin`: an exact origin, `'*'`, a RegExp, an
   * array, `true` (any), `false` (none) or an {@link OriginCallback}. With
   * `publishers` or `verifier` it adds origins; alone, it decides. With
   * credentials, an option allowing origins nobody names (`true`, `'*'`,
   * catch-all patterns, `cb(null, true)` for every origin) is refused.
   */
  readonly origin?: OriginOption | OriginCallback;
  /** Alias of `allowedHeaders` (the `cors` package's name). */
  readonly headers?: string | readonly string[];
  /** Alias of `preflightStatus` (the `cors` package's name). */
  readonly optionsSuccessStatus?: number;
  /** `Access-Control-Max-Age` in seconds; a numeric string is accepted as `cors` does. */
  readonly maxAge?: number | string;
}

/** The `cors` package's per-request options delegate. */
export type OptionsDelegate = (req: IncomingMessage, callback: (error: Error | null, options?: ExpressAmpCorsOptions) => void) => void;

/** A middleware usable with Express 4 and 5 (and plain `node:http` with a `next`). */
export type AmpCorsMiddleware = (req: IncomingMessage, res: ServerResponse, next: (error?: unknown) => void) => void;

interface Configured {
  readonly policy: CorsPolicy;
  /** The origin source of the `origin` option (static, or a guarded origin callback). */
  readonly origin: VerdictSource | null;
}

/**
 * The configuration check of {@link ampCors} (issue #15): unknown keys name
 * the closest known one, and the mode is named by keys only. `map` maps the
 * `cors` package's names onto ampcors's, with `cors`'s defaults (credentials
 * off, denied origins passed on) when its `origin` option decides, and
 * compiles a static `origin` option into `compiled`, so that its problems
 * are listed with all the others.
 */
function expressSpec(compiled: { matcher?: OriginMatcher }): AdapterOptionsSpec {
  return {
    entry: 'ampCors (@ampcors/express)',
    keys: ['origin', 'headers', 'optionsSuccessStatus'],
    originKey: 'origin',
    aliases: { allowMethods: 'methods', allowHeaders: 'allowedHeaders', exposeHeaders: 'exposedHeaders', allowOrigin: 'origin', allowedOrigins: 'origin' },
    allowNothing: 'To allow no cross-origin request on purpose, pass origin: false (or leave ampCors out: same-origin requests need no CORS).',
    allowAny: 'For a public API that any origin may read without credentials, call ampCors() with no options (Access-Control-Allow-Origin: *).',
    map(given, mode, problems) {
      const { origin, headers, optionsSuccessStatus, maxAge, ...rest } = given as ExpressAmpCorsOptions;
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
      // Configured through cors's own `origin` option: cors's defaults (credentials stay on when publishers or a verifier are given).
      const dropIn = origin !== undefined;
      const credentials = rest.credentials ?? (mode === 'amp' || !dropIn);
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

/** Validates the options (every problem at once) and builds the policy and the source of the `origin` option. */
function configure(options: unknown): Configured {
  const compiled: { matcher?: OriginMatcher } = {};
  const policy = createCorsPolicy(options as AmpCorsConfig, expressSpec(compiled));
  const origin = (options as ExpressAmpCorsOptions | undefined)?.origin;
  if (typeof origin === 'function') {
    // Asked about canary origins now (a callback allowing every origin is refused with credentials, like `true`), then per request.
    const callback = origin;
    return { policy, origin: policy.guardOriginFunction((asked) => askOriginCallback((answer) => callback(asked, answer)), policy.options.credentials)() };
  }
  const matcher = compiled.matcher;
  return { policy, origin: matcher === undefined ? null : { verify: (raw, context) => judgeWithOriginMatcher(matcher, raw, context) } };
}

function apply(decision: CorsDecision, req: IncomingMessage, res: ServerResponse, next: (error?: unknown) => void): void {
  const { verdict, plan } = decision;
  applyHeadersAtomically(res, plan.headers, plan.vary);
  const target = req as IncomingMessage & { ampCors?: Verdict; ampCorsEmail?: EmailSender };
  target.ampCors = verdict;
  if (plan.email !== undefined) target.ampCorsEmail = plan.email;
  if (!plan.handled) return next();
  res.statusCode = plan.status;
  res.setHeader('Content-Length', String(Buffer.byteLength(plan.body)));
  res.end(plan.body);
}

function fail(error: unknown, res: ServerResponse, next: (error?: unknown) => void): void {
  if (!res.headersSent) res.setHeader('Vary', appendVary(res.getHeader('Vary'), ['Origin']));
  next(error);
}

function run(configured: Configured, req: IncomingMessage, res: ServerResponse, next: (error?: unknown) => void): void {
  try {
    const decision = configured.policy.decide(nodeRequestFacts(req, (req as { originalUrl?: string }).originalUrl), configured.origin);
    if (isThenable(decision)) {
      decision.then(
        (settled) => {
          try {
            apply(settled, req, res, next);
          } catch (error) {
            fail(error, res, next);
          }
        },
        (error: unknown) => fail(error, res, next),
      );
    } else {
      apply(decision, req, res, next);
    }
  } catch (error) {
    fail(error, res, next);
  }
}

/**
 * Creates the ampcors middleware for Express 4 and 5.
 *
 * With `publishers` (or `verifier`): trusts the publisher's origins and its
 * AMP cache origins, answers preflights, stops denied origins with 403 before
 * later handlers run (`onDenied: 'omit'` lets them through without CORS
 * headers), and sets `req.ampCors` to the verdict.
 *
 * With the `cors` package's options (`origin`, or nothing): behaves as `cors`
 * does, including its defaults (credentials off, denied origins passed on
 * without headers), except that, with credentials, any option allowing every
 * origin is refused: `'*'`, `true`, a RegExp matching origins nobody names
 * (a `.*` pattern), and an origin callback that allows them (`cb(null, true)`,
 * `cb(null, origin)`; asked about canary origins at construction, and once
 * more per allowed credentialed request). The callback is not called for a
 * request without `Origin` (nor `__amp_source_origin`), nor for an `Origin`
 * that is not one canonical origin. An options delegate `(req, callback)` is
 * accepted as well.
 *
 * Errors (a throwing verifier, origin callback or delegate) go to `next(err)`
 * with `Vary: Origin` already set.
 *
 * @throws AmpCorsError for an invalid configuration.
 * @example app.use('/api', ampCors({ publishers: ['example.com'] }))
 */
export function ampCors(options?: ExpressAmpCorsOptions | OptionsDelegate): AmpCorsMiddleware {
  if (typeof options === 'function') {
    const delegate = options;
    const cache = new WeakMap<object, Configured>();
    return function ampCorsMiddleware(req, res, next) {
      try {
        delegate(req, (error, perRequest) => {
          if (error) return fail(error, res, next);
          try {
            // A delegate's `undefined` is "no options" (the literal *), as ampCors() is.
            let configured = perRequest === undefined ? undefined : cache.get(perRequest);
            if (configured === undefined) {
              configured = configure(perRequest);
              if (typeof perRequest === 'object' && perRequest !== null) cache.set(perRequest, configured);
            }
            run(configured, req, res, next);
          } catch (failure) {
            fail(failure, res, next);
          }
        });
      } catch (error) {
        fail(error, res, next);
      }
    };
  }
  const configured = configure(options);
  return function ampCorsMiddleware(req, res, next) {
    run(configured, req, res, next);
  };
}
