/**
 * @ampcors/koa — AMP-aware CORS middleware for Koa 2 and 3, and a drop-in
 * replacement for `@koa/cors`. A thin adapter: every decision and every
 * header comes from @ampcors/core.
 *
 * @packageDocumentation
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { AmpCorsConfig, EmailSender, Verdict } from '@ampcors/core';
import {
  type AdapterOptionsSpec,
  appendVary,
  applyHeadersAtomically,
  compileOriginOption,
  type ConfigMode,
  type ConfigProblems,
  type CorsPlan,
  createCorsPolicy,
  isThenable,
  judgeWithOriginMatcher,
  nodeHeader,
  nodeRequestFacts,
  type NormalizedCorsOptions,
  normalizeCorsOptions,
  type OriginMatcher,
  type VerdictSource,
} from '@ampcors/core/adapter';

export { ampRedirectTo, AmpCorsError, type AmpCorsConfig, type CorsOptions, type Verdict } from '@ampcors/core';
export type { VerdictSource } from '@ampcors/core/adapter';

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
export type KoaOriginFunction<C extends KoaContextLike = KoaContextLike> = (
  ctx: C,
) => string | null | undefined | false | Promise<string | null | undefined | false>;

/**
 * Options of {@link ampCors}: the ampcors configuration, plus the options of
 * `@koa/cors` under their own names.
 */
export interface KoaAmpCorsOptions extends Omit<AmpCorsConfig, 'credentials' | 'maxAge'> {
  /**
   * `@koa/cors`'s `origin`: an exact origin, `'*'`, or a {@link KoaOriginFunction}. With `publishers` or `verifier` it adds origins; alone, it decides.
   * With credentials, an option allowing origins nobody names (`'*'`, `(ctx) => ctx.get('Origin')`) is refused.
   */
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

function matcherSource(matcher: OriginMatcher): VerdictSource {
  return { verify: (raw, context) => judgeWithOriginMatcher(matcher, raw, context) };
}

/**
 * An origin function's answer as an origin option: a non-empty string as is,
 * anything else none. `'*'` with credentials is `@koa/cors`'s "reflect this
 * request's Origin", so it is an allow of the origin asked about (`true`),
 * guarded like any other.
 */
function koaAnswer(answer: unknown, withCredentials: boolean): unknown {
  const read = (value: unknown) => (typeof value === 'string' && value !== '' ? (value === '*' && withCredentials ? true : value) : false);
  return isThenable(answer) ? Promise.resolve(answer).then(read) : read(answer);
}

const PROBE_HOST = 'ampcors-probe.invalid';

/** A stand-in context for asking an origin function about `origin` outside any request (at construction). */
function probeContext(origin: string): object {
  const headers: Record<string, string> = { host: PROBE_HOST, origin };
  const get = (name: string) => headers[name.toLowerCase()] ?? '';
  const req = { method: 'GET', url: '/', headers };
  const request = {
    method: 'GET',
    url: '/',
    path: '/',
    href: `https://${PROBE_HOST}/`,
    origin: `https://${PROBE_HOST}`,
    host: PROBE_HOST,
    hostname: PROBE_HOST,
    header: headers,
    headers,
    query: {},
    querystring: '',
    get,
    req,
  };
  return { ...request, originalUrl: '/', request, req, state: {}, method: 'GET' };
}

/**
 * A view of `ctx` in which the `Origin` request header is `origin`, for the
 * guard's questions about another origin than the request's (a canary, the
 * `__amp_source_origin`). It has its own `state`, so an answer cannot write
 * into the request's.
 */
function contextAbout(ctx: KoaContextLike, origin: string): object {
  const real = ctx as KoaContextLike & { request?: object };
  const headers: Record<string, string | string[] | undefined> = { ...real.req.headers, origin };
  const get = (name: string) => {
    const value = headers[name.toLowerCase()];
    return Array.isArray(value) ? value.join(', ') : (value ?? '');
  };
  const req = Object.create(real.req, { headers: { value: headers } }) as object;
  const request = Object.create(real.request ?? null, {
    get: { value: get },
    header: { value: headers },
    headers: { value: headers },
    req: { value: req },
  }) as object;
  return Object.create(real, {
    get: { value: get },
    header: { value: headers },
    headers: { value: headers },
    request: { value: request },
    req: { value: req },
    state: { value: {} },
  }) as object;
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

/** What the configuration check leaves for {@link ampCors}: the mapped configuration and the compiled static `origin`. */
interface Compiled {
  config?: AmpCorsConfig;
  matcher?: OriginMatcher;
}

/**
 * Maps `@koa/cors`'s option names onto ampcors's, with `@koa/cors`'s
 * defaults (its methods, credentials off, denied origins passed on) when its
 * `origin` option decides; the problems of its own keys go to `problems`.
 */
function koaConfig(given: KoaAmpCorsOptions, mode: ConfigMode, problems: ConfigProblems): AmpCorsConfig {
  const { origin, allowMethods, allowHeaders, exposeHeaders, credentials, maxAge, keepHeadersOnError, secureContext, ...rest } = given;
  const dropIn = origin !== undefined;
  if (typeof maxAge === 'string' && !/^[0-9]+$/.test(maxAge)) problems.add('invalid-option', 'maxAge must be a non-negative whole number of seconds');
  if (credentials !== undefined && typeof credentials !== 'boolean' && typeof credentials !== 'function')
    problems.add('invalid-option', 'credentials must be a boolean or a function');
  if (keepHeadersOnError !== undefined && typeof keepHeadersOnError !== 'boolean') problems.add('invalid-option', 'keepHeadersOnError must be true or false');
  if (secureContext !== undefined && typeof secureContext !== 'boolean') problems.add('invalid-option', 'secureContext must be true or false');
  for (const [alias, name] of [
    ['allowMethods', 'methods'],
    ['allowHeaders', 'allowedHeaders'],
    ['exposeHeaders', 'exposedHeaders'],
  ] as const) {
    if (given[alias] !== undefined && rest[name] !== undefined) problems.add('invalid-option', `give ${name} or its alias ${alias}, not both`);
  }
  return {
    ...rest,
    ...(rest.methods === undefined && (allowMethods !== undefined || mode !== 'amp') && { methods: allowMethods ?? KOA_CORS_METHODS }),
    ...(allowHeaders !== undefined && { allowedHeaders: allowHeaders }),
    ...(exposeHeaders !== undefined && { exposedHeaders: exposeHeaders }),
    ...(maxAge !== undefined && { maxAge: typeof maxAge === 'string' ? Number(maxAge) : maxAge }),
    ...(mode !== 'any-origin' && { credentials: typeof credentials === 'boolean' ? credentials : credentials === undefined ? mode === 'amp' : true }),
    ...(dropIn && { onDenied: rest.onDenied ?? 'omit' }),
  };
}

/**
 * The configuration check of {@link ampCors} (issue #15): unknown keys name
 * the closest known one, the mode is named by keys only, and a static
 * `origin` is compiled into `compiled`, so that its problems are listed with
 * all the others.
 */
function koaSpec(compiled: Compiled): AdapterOptionsSpec {
  return {
    entry: 'ampCors (@ampcors/koa)',
    keys: ['origin', 'allowMethods', 'allowHeaders', 'exposeHeaders', 'keepHeadersOnError', 'secureContext'],
    originKey: 'origin',
    aliases: { allowedOrigins: 'origin', allowOrigin: 'origin', optionsSuccessStatus: 'preflightStatus' },
    allowNothing: 'To allow no cross-origin request on purpose, pass origin: () => false (or leave ampCors out: same-origin requests need no CORS).',
    allowAny: 'For a public API that any origin may read without credentials, call ampCors() with no options (Access-Control-Allow-Origin: *).',
    map(given, mode, problems) {
      const options = given as KoaAmpCorsOptions;
      const config = koaConfig(options, mode, problems);
      compiled.config = config;
      const origin = options.origin;
      if (origin !== undefined && typeof origin !== 'function' && typeof origin !== 'string') {
        problems.add('invalid-option', "origin must be an exact origin string, '*' or a function (ctx) => string, as in @koa/cors");
      } else if (typeof origin === 'string') {
        compiled.matcher = problems.attempt(() => compileOriginOption(origin, { credentials: config.credentials === true }));
      }
      return config;
    },
  };
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
 * without headers), except that, with credentials, an option allowing every
 * origin is refused: `'*'` (which `@koa/cors` turns into reflecting every
 * origin), and an origin function that allows origins nobody names, such as
 * `(ctx) => ctx.get('Origin')` or the `@koa/cors` README's
 * `ctx.get('Origin') || '*'` (asked about canary origins at construction,
 * and once more per allowed credentialed request). An origin function's
 * `'*'` with credentials allows the request's own `Origin`, under that
 * guard. The function is not called for a request without `Origin` (nor
 * `__amp_source_origin`), nor for an `Origin` that is not one canonical
 * origin.
 *
 * Errors (a throwing verifier or hook) are rethrown with `err.headers`
 * carrying `Vary: Origin`, so Koa's error response keeps it.
 *
 * @throws AmpCorsError for an invalid configuration.
 * @example app.use(ampCors({ publishers: ['example.com'] }))
 */
export function ampCors(options?: KoaAmpCorsOptions): AmpCorsKoaMiddleware {
  const compiled: Compiled = {};
  const policy = createCorsPolicy(options as AmpCorsConfig, koaSpec(compiled));
  const given: KoaAmpCorsOptions = policy.mode === 'any-origin' ? {} : (options as KoaAmpCorsOptions);
  const { origin: originOption, credentials, keepHeadersOnError, secureContext } = given;
  const staticCredentials = policy.options.credentials;
  const config = compiled.config ?? {};
  // With a credentials function, both variants are prepared once.
  const withoutCredentials: NormalizedCorsOptions =
    typeof credentials === 'function' ? normalizeCorsOptions({ ...config, credentials: false }) : policy.options;
  const keep = keepHeadersOnError === undefined || !!keepHeadersOnError;
  const secure = typeof secureContext === 'boolean' ? secureContext : !!secureContext;

  const origin = originOption;
  // A static origin was compiled once, by the configuration check ('*' refused whenever credentials may be on).
  const staticSource = compiled.matcher === undefined ? null : matcherSource(compiled.matcher);

  // An origin function is asked about canary origins now: one allowing every origin is refused with credentials, like '*'.
  const guarded =
    typeof origin === 'function'
      ? policy.guardOriginFunction((asked) => koaAnswer(origin(probeContext(asked) as KoaContextLike), staticCredentials), staticCredentials)
      : null;

  const sourceFor = (ctx: KoaContextLike, withCredentials: boolean): VerdictSource | null => {
    if (typeof origin !== 'function' || guarded === null) return staticSource;
    const own = nodeHeader(ctx.req.headers, 'origin');
    return guarded((asked) => koaAnswer(origin(asked === own ? ctx : (contextAbout(ctx, asked) as KoaContextLike)), withCredentials), withCredentials);
  };

  // Headers go straight to `ctx.res.setHeader`, as Koa's `ctx.set` does for a
  // string value (it skips once the headers are sent), without its per-call
  // arrays and argument handling; all of them or none.
  const apply = (ctx: KoaContextLike, plan: CorsPlan): void => {
    if (!ctx.res.headersSent)
      applyHeadersAtomically(ctx.res, secure && plan.kind !== 'reject' ? [...plan.headers, ...SECURE_CONTEXT] : plan.headers, plan.vary);
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
      const decided = policy.decide(nodeRequestFacts(ctx.req, ctx.originalUrl), sourceFor(ctx, withCredentials), withCredentials ? policy.options : withoutCredentials);
      const { verdict, plan: planned } = decided instanceof Promise ? await decided : decided;
      plan = planned;
      apply(ctx, plan);
      const state = ctx.state as AmpCorsState;
      state.ampCors = verdict;
      if (plan.email !== undefined) state.ampCorsEmail = plan.email;
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
