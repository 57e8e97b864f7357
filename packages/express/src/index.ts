/**
 * @ampcors/express — AMP-aware CORS middleware for Express 4 and 5, and a
 * drop-in replacement for the `cors` package. A thin adapter: every decision
 * and every header comes from @ampcors/core.
 *
 * @packageDocumentation
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import {
  type AmpCorsConfig,
  AmpCorsError,
  appendVary,
  compileOriginOption,
  type CorsDecision,
  type CorsPolicy,
  type CorsRequest,
  createCorsPolicy,
  type EmailSender,
  judgeWithOriginMatcher,
  type OriginOption,
  sourceOriginOfUrl,
  type Verdict,
  type VerdictSource,
} from '@ampcors/core';

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
   * `publishers` or `verifier` it adds origins; alone, it decides.
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
  /** The origin source of a static `origin` option, or a factory for an origin callback. */
  readonly origin: VerdictSource | ((req: IncomingMessage) => VerdictSource) | null;
}

function isThenable<T>(value: T | Promise<T>): value is Promise<T> {
  return typeof (value as { then?: unknown } | null)?.then === 'function';
}

/** Maps the `cors` package's option names onto ampcors's, with `cors`'s defaults when its `origin` option decides. */
function configure(options: ExpressAmpCorsOptions): Configured {
  if (typeof options !== 'object' || options === null) throw new AmpCorsError('invalid-option', 'ampCors options must be an object');
  const { origin: originOption, headers, optionsSuccessStatus, maxAge, ...rest } = options;
  const ownSource = options.publishers !== undefined || options.verifier !== undefined;
  const dropIn = originOption !== undefined || !ownSource;
  const origin = originOption ?? '*';
  let seconds: number | undefined;
  if (typeof maxAge === 'string') {
    if (!/^[0-9]+$/.test(maxAge)) throw new AmpCorsError('invalid-option', 'maxAge must be a non-negative whole number of seconds');
    seconds = Number(maxAge);
  } else {
    seconds = maxAge;
  }
  const config: AmpCorsConfig = {
    ...rest,
    ...(rest.allowedHeaders === undefined && headers !== undefined && { allowedHeaders: headers }),
    ...(rest.preflightStatus === undefined && optionsSuccessStatus !== undefined && { preflightStatus: optionsSuccessStatus }),
    ...(seconds !== undefined && { maxAge: seconds }),
    // Configured through cors's own `origin` option: cors's defaults (credentials stay on when publishers or a verifier are given).
    ...(dropIn && { credentials: rest.credentials ?? ownSource, onDenied: rest.onDenied ?? 'omit' }),
  };
  const policy = createCorsPolicy(config, dropIn);
  if (!dropIn) return { policy, origin: null };
  const credentials = policy.options.credentials;
  if (typeof origin === 'function') {
    const callback = origin;
    return {
      policy,
      origin: (req) => ({
        verify: (raw, context) =>
          new Promise<Verdict>((resolve, reject) => {
            callback(headerOf(req, 'origin') ?? undefined, (error, allow) => {
              if (error) return reject(error);
              try {
                resolve(judgeWithOriginMatcher(compileOriginOption(allow ?? false, { credentials, perRequest: true }), raw, context));
              } catch (failure) {
                reject(failure);
              }
            });
          }),
      }),
    };
  }
  const matcher = compileOriginOption(origin, { credentials });
  return { policy, origin: { verify: (raw, context) => judgeWithOriginMatcher(matcher, raw, context) } };
}

function headerOf(req: IncomingMessage, name: string): string | null {
  const value = req.headers[name];
  if (value === undefined) return null;
  return Array.isArray(value) ? value.join(', ') : value;
}

function factsOf(req: IncomingMessage & { originalUrl?: string }): CorsRequest {
  return {
    method: req.method ?? 'GET',
    origin: headerOf(req, 'origin'),
    ampSameOrigin: headerOf(req, 'amp-same-origin'),
    requestMethod: headerOf(req, 'access-control-request-method'),
    requestHeaders: headerOf(req, 'access-control-request-headers'),
    requestPrivateNetwork: headerOf(req, 'access-control-request-private-network'),
    emailSender: headerOf(req, 'amp-email-sender'),
    sourceOrigin: sourceOriginOfUrl(req.originalUrl ?? req.url ?? '/'),
  };
}

function apply(decision: CorsDecision, req: IncomingMessage, res: ServerResponse, next: (error?: unknown) => void): void {
  const { verdict, plan } = decision;
  const target = req as IncomingMessage & { ampCors?: Verdict; ampCorsEmail?: EmailSender };
  target.ampCors = verdict;
  if (plan.email !== undefined) target.ampCorsEmail = plan.email;
  const headers = plan.headers;
  for (let i = 0; i < headers.length; i++) {
    const header = headers[i] as readonly [string, string];
    res.setHeader(header[0], header[1]);
  }
  res.setHeader('Vary', appendVary(res.getHeader('Vary'), plan.vary));
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
    const extra = typeof configured.origin === 'function' ? configured.origin(req) : configured.origin;
    const decision = configured.policy.decide(factsOf(req), extra);
    if (isThenable(decision)) {
      decision.then(
        (settled) => apply(settled, req, res, next),
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
 * without headers), except that `'*'` or `true` with credentials is refused.
 * An options delegate `(req, callback)` is accepted as well.
 *
 * Errors (a throwing verifier, origin callback or delegate) go to `next(err)`
 * with `Vary: Origin` already set.
 *
 * @throws AmpCorsError for an invalid configuration.
 * @example app.use('/api', ampCors({ publishers: ['example.com'] }))
 */
export function ampCors(options: ExpressAmpCorsOptions | OptionsDelegate = {}): AmpCorsMiddleware {
  if (typeof options === 'function') {
    const delegate = options;
    const cache = new WeakMap<object, Configured>();
    return function ampCorsMiddleware(req, res, next) {
      try {
        delegate(req, (error, perRequest) => {
          if (error) return fail(error, res, next);
          try {
            const given = perRequest ?? {};
            let configured = cache.get(given);
            if (configured === undefined) {
              configured = configure(given);
              cache.set(given, configured);
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
