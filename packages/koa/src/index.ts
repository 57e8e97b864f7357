/**
 * @ampcors/koa — AMP-aware CORS middleware for Koa 2 and 3, and a drop-in
 * replacement for `@koa/cors`. A thin adapter: every decision and every
 * header comes from @ampcors/core.
 *
 * @packageDocumentation
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import {
  type AmpCorsConfig,
  AmpCorsError,
  appendVary,
  compileOriginOption,
  type CorsPlan,
  type CorsRequest,
  createCorsPolicy,
  type EmailSender,
  judgeWithOriginMatcher,
  type NormalizedCorsOptions,
  normalizeCorsOptions,
  type OriginMatcher,
  sourceOriginOfUrl,
  type Verdict,
  type VerdictSource,
} from '@ampcors/core';

export { ampRedirectTo, AmpCorsError, type AmpCorsConfig, type CorsOptions, type Verdict, type VerdictSource } from '@ampcors/core';

/** What the middleware puts in `ctx.state`; use it as the app's state type: `new Koa<AmpCorsState>()`. */
export interface AmpCorsState {
  /** The ampcors verdict of this request. */
  ampCors?: Verdict;
  /** The AMP for Email sender, when `email` is configured and the request is one. */
  ampCorsEmail?: EmailSender;
}

/** The part of a Koa context the middleware uses (Koa 2 and 3 contexts fit it). */
export interface KoaContextLike {
  readonly req: IncomingMessage;
  readonly res: ServerResponse;
  readonly originalUrl: string;
  state: object;
  status: number;
  body: unknown;
  set(field: string, value: string): void;
}

/** `@koa/cors`'s origin function: returns the `Access-Control-Allow-Origin` value for this request, or a falsy value to deny. */
export type KoaOriginFunction<C extends KoaContextLike = KoaContextLike> = (ctx: C) => string | null | undefined | false | Promise<string | null | undefined | false>;

/**
 * Options of {@link ampCors}: the ampcors configuration, plus the options of
 * `@koa/cors` under their own names.
 */
export interface KoaAmpCorsOptions extends Omit<AmpCorsConfig, 'credentials' | 'maxAge'> {
  /** `@koa/cors`'s `origin`: an exact origin, `'*'`, or a {@link KoaOriginFunction}. With `publishers` or `verifier` it adds origins; alone, it decides. */
  readonly origin?: string | KoaOriginFunction;
  /** Alias of `methods`. */
  readonly allowMethods?: string | readonly string[];
  /** Alias of `allowedHeaders`. */
  readonly allowHeaders?: string | readonly string[];
  /** Alias of `exposedHeaders`. */
  readonly exposeHeaders?: string | readonly string[];
  /** `Access-Control-Allow-Credentials`, or a function deciding it per request. */
  readonly credentials?: boolean | ((ctx: KoaContextLike) => boolean | Promise<boolean>);
  /** `Access-Control-Max-Age` in seconds (a numeric string is accepted as `@koa/cors` does). */
  readonly maxAge?: number | string;
  /** Keep the CORS headers on errors thrown by later middleware (default `true`, as `@koa/cors`); `Vary: Origin` is kept either way. */
  readonly keepHeadersOnError?: boolean;
  /** Also send `Cross-Origin-Opener-Policy: same-origin` and `Cross-Origin-Embedder-Policy: require-corp` (default `false`). */
  readonly secureContext?: boolean;
}

/** A Koa middleware. */
export type AmpCorsKoaMiddleware = (ctx: KoaContextLike, next: () => Promise<unknown>) => Promise<void>;

/** `@koa/cors`'s default `Access-Control-Allow-Methods`, kept in drop-in mode. */
const KOA_CORS_METHODS = 'GET,HEAD,PUT,POST,DELETE,PATCH';

const SECURE_CONTEXT = [
  ['Cross-Origin-Opener-Policy', 'same-origin'],
  ['Cross-Origin-Embedder-Policy', 'require-corp'],
] as const;

function headerOf(req: IncomingMessage, name: string): string | null {
  const value = req.headers[name];
  if (value === undefined) return null;
  return Array.isArray(value) ? value.join(', ') : value;
}

function factsOf(ctx: KoaContextLike): CorsRequest {
  const req = ctx.req;
  return {
    method: req.method ?? 'GET',
    origin: headerOf(req, 'origin'),
    ampSameOrigin: headerOf(req, 'amp-same-origin'),
    requestMethod: headerOf(req, 'access-control-request-method'),
    requestHeaders: headerOf(req, 'access-control-request-headers'),
    requestPrivateNetwork: headerOf(req, 'access-control-request-private-network'),
    emailSender: headerOf(req, 'amp-email-sender'),
    sourceOrigin: sourceOriginOfUrl(ctx.originalUrl ?? req.url ?? '/'),
  };
}

function matcherSource(matcher: OriginMatcher): VerdictSource {
  return { verify: (raw, context) => judgeWithOriginMatcher(matcher, raw, context) };
}

/** Attaches `Vary` (and, when kept, the CORS headers) to an error for Koa's error path, which resets the response headers. */
function withErrorHeaders(error: unknown, headers: Record<string, string>): unknown {
  const target = error instanceof Error ? error : new Error(String(error));
  const carried = (target as { headers?: Record<string, string> }).headers ?? {};
  const vary = appendVary(carried.vary ?? carried.Vary, ['Origin']);
  const { Vary: _dropped, ...others } = carried;
  try {
    (target as { headers?: Record<string, string> }).headers = { ...others, ...headers, vary };
  } catch {
    // A frozen error keeps its headers; Koa still answers 500.
  }
  return target;
}

/**
 * Creates the ampcors middleware for Koa 2 and 3.
 *
 * With `publishers` (or `verifier`): trusts the publisher's origins and its
 * AMP cache origins, answers preflights, stops denied origins with 403 before
 * later middleware runs (`onDenied: 'omit'` lets them through without CORS
 * headers), and sets `ctx.state.ampCors` to the verdict.
 *
 * With `@koa/cors`'s options (`origin`, or nothing): behaves as `@koa/cors`
 * does, including its defaults (credentials off, a denied origin passed on
 * without headers), except that `'*'` with credentials (which `@koa/cors`
 * turns into reflecting every origin) is refused.
 *
 * Errors (a throwing verifier or hook) are rethrown with `err.headers`
 * carrying `Vary: Origin`, so Koa's error response keeps it.
 *
 * @throws AmpCorsError for an invalid configuration.
 * @example app.use(ampCors({ publishers: ['example.com'] }))
 */
export function ampCors(options: KoaAmpCorsOptions = {}): AmpCorsKoaMiddleware {
  if (typeof options !== 'object' || options === null) throw new AmpCorsError('invalid-option', 'ampCors options must be an object');
  const { origin: originOption, allowMethods, allowHeaders, exposeHeaders, credentials, maxAge, keepHeadersOnError, secureContext, ...rest } = options;
  const ownSource = options.publishers !== undefined || options.verifier !== undefined;
  const dropIn = originOption !== undefined || !ownSource;
  if (maxAge !== undefined && typeof maxAge === 'string' && !/^[0-9]+$/.test(maxAge)) {
    throw new AmpCorsError('invalid-option', 'maxAge must be a non-negative whole number of seconds');
  }
  if (credentials !== undefined && typeof credentials !== 'boolean' && typeof credentials !== 'function') {
    throw new AmpCorsError('invalid-option', 'credentials must be a boolean or a function');
  }
  const staticCredentials = typeof credentials === 'boolean' ? credentials : credentials === undefined ? ownSource : true;
  const config: AmpCorsConfig = {
    ...rest,
    ...(rest.methods === undefined && { methods: allowMethods ?? (dropIn ? KOA_CORS_METHODS : undefined) }),
    ...(rest.allowedHeaders === undefined && allowHeaders !== undefined && { allowedHeaders: allowHeaders }),
    ...(rest.exposedHeaders === undefined && exposeHeaders !== undefined && { exposedHeaders: exposeHeaders }),
    ...(maxAge !== undefined && { maxAge: Number(maxAge) }),
    credentials: staticCredentials,
    ...(dropIn && { onDenied: rest.onDenied ?? 'omit' }),
  };
  const policy = createCorsPolicy(config, dropIn);
  // With a credentials function, both variants are prepared once.
  const withoutCredentials: NormalizedCorsOptions = typeof credentials === 'function' ? normalizeCorsOptions({ ...config, credentials: false }) : policy.options;
  const keep = keepHeadersOnError === undefined || !!keepHeadersOnError;
  const secure = typeof secureContext === 'boolean' ? secureContext : !!secureContext;

  const origin = dropIn ? (originOption ?? '*') : undefined;
  // A static origin is compiled once; '*' is refused here whenever credentials may be on.
  const staticSource = typeof origin === 'string' ? matcherSource(compileOriginOption(origin, { credentials: staticCredentials })) : null;

  const sourceFor = (ctx: KoaContextLike, withCredentials: boolean): VerdictSource | null => {
    if (typeof origin !== 'function') return staticSource;
    return {
      verify: async (raw, context) => {
        const answer = await origin(ctx);
        const allowed = typeof answer === 'string' && answer !== '' ? answer : false;
        return judgeWithOriginMatcher(compileOriginOption(allowed, { credentials: withCredentials, perRequest: true }), raw, context);
      },
    };
  };

  // Headers go straight to `ctx.res.setHeader`, as Koa's `ctx.set` does for a
  // string value (it skips once the headers are sent), without its per-call
  // arrays and argument handling.
  const apply = (ctx: KoaContextLike, plan: CorsPlan): void => {
    const res = ctx.res;
    if (res.headersSent) return;
    const headers = plan.headers;
    for (let i = 0; i < headers.length; i++) {
      const header = headers[i] as readonly [string, string];
      res.setHeader(header[0], header[1]);
    }
    if (secure && plan.kind !== 'reject') {
      for (const [name, value] of SECURE_CONTEXT) res.setHeader(name, value);
    }
    res.setHeader('Vary', appendVary(res.getHeader('Vary'), plan.vary));
  };

  /** The CORS headers `apply` set, for an error thrown by later middleware (built only then). */
  const keptHeaders = (plan: CorsPlan): Record<string, string> => {
    const set: Record<string, string> = {};
    for (const [name, value] of plan.headers) set[name] = value;
    if (secure && plan.kind !== 'reject') for (const [name, value] of SECURE_CONTEXT) set[name] = value;
    return set;
  };

  return async function ampCorsMiddleware(ctx, next) {
    let plan: CorsPlan;
    try {
      const withCredentials = typeof credentials === 'function' ? !!(await credentials(ctx)) : staticCredentials;
      const decided = policy.decide(factsOf(ctx), sourceFor(ctx, withCredentials), withCredentials ? policy.options : withoutCredentials);
      const { verdict, plan: planned } = decided instanceof Promise ? await decided : decided;
      plan = planned;
      const state = ctx.state as AmpCorsState;
      state.ampCors = verdict;
      if (plan.email !== undefined) state.ampCorsEmail = plan.email;
      apply(ctx, plan);
    } catch (error) {
      throw withErrorHeaders(error, {});
    }
    if (plan.handled) {
      ctx.status = plan.status;
      ctx.body = plan.body;
      return;
    }
    try {
      await next();
    } catch (error) {
      throw withErrorHeaders(error, keep ? keptHeaders(plan) : {});
    }
  };
}
