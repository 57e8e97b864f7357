/**
 * @ampcors/hono — AMP-aware CORS middleware for Hono 4 (Node, Bun, Deno,
 * Cloudflare Workers), and a drop-in replacement for `hono/cors`. A thin
 * adapter: every decision and every header comes from @ampcors/core.
 *
 * @packageDocumentation
 */
import type { EmailSender, Verdict } from '@ampcors/core';
import {
  type AdapterOptionsSpec,
  type AmpCorsConfig,
  appendVary,
  compileOriginOption,
  type CorsPlan,
  type CorsRequest,
  createCorsPolicy,
  fetchRequestFacts,
  isPreflight,
  isThenable,
  judgeWithOriginMatcher,
  normalizeCorsOptions,
  type NormalizedCorsOptions,
  type OriginMatcher,
  type VerdictSource,
} from '@ampcors/core/adapter';
import { Context, type MiddlewareHandler } from 'hono';

export { ampRedirectTo, AmpCorsError, type CorsOptions, type Verdict } from '@ampcors/core';
export { type AmpCorsConfig, type VerdictSource } from '@ampcors/core/adapter';

/**
 * What the middleware sets on the context: type the app with it,
 * `new Hono<{ Variables: AmpCorsVariables }>()`, and read `c.get('ampCors')`.
 */
export interface AmpCorsVariables {
  /** The ampcors verdict of this request. */
  ampCors: Verdict;
  /** The AMP for Email sender, when `email` is configured and the request is one. */
  ampCorsEmail?: EmailSender;
}

/** `hono/cors`'s origin function: returns the `Access-Control-Allow-Origin` value for `origin` (`''` without one), or nothing to deny. */
export type HonoOriginFunction = (origin: string, c: Context) => string | null | undefined | Promise<string | null | undefined>;

/** `hono/cors`'s methods function: the `Access-Control-Allow-Methods` of a preflight from `origin`. */
export type HonoMethodsFunction = (origin: string, c: Context) => readonly string[] | Promise<readonly string[]>;

/**
 * Options of {@link ampCors}: the ampcors configuration, plus the options of
 * `hono/cors` under their own names.
 */
export interface HonoAmpCorsOptions extends AmpCorsConfig {
  /**
   * `hono/cors`'s `origin`: an exact origin, `'*'`, an array of exact origins, or a
   * {@link HonoOriginFunction}. With `publishers` or `verifier` it adds origins; alone, it decides.
   * With credentials, an option allowing origins nobody names (`'*'`, `(origin) => origin`) is refused.
   */
  readonly origin?: string | readonly string[] | HonoOriginFunction;
  /** Alias of `methods`, or a {@link HonoMethodsFunction} asked on each preflight. */
  readonly allowMethods?: string | readonly string[] | HonoMethodsFunction;
  /** Alias of `allowedHeaders` (`[]`, `hono/cors`'s default, reflects the requested headers). */
  readonly allowHeaders?: string | readonly string[];
  /** Alias of `exposedHeaders`. */
  readonly exposeHeaders?: string | readonly string[];
}

/** `hono/cors`'s default `Access-Control-Allow-Methods`, kept in drop-in mode. */
const HONO_CORS_METHODS = 'GET,HEAD,PUT,POST,DELETE,PATCH,QUERY';

/** What the configuration check leaves for {@link ampCors}: the compiled static `origin`. */
interface Compiled {
  matcher?: OriginMatcher;
}

/**
 * The configuration check of {@link ampCors} (issue #15): unknown keys name
 * the closest known one, the mode is named by keys only, `hono/cors`'s names
 * are mapped onto ampcors's with its defaults when its `origin` decides
 * (its methods, credentials off, denied origins passed on), and a static
 * `origin` is compiled into `compiled`, so that its problems are listed with
 * all the others.
 */
function honoSpec(compiled: Compiled): AdapterOptionsSpec {
  return {
    entry: 'ampCors (@ampcors/hono)',
    keys: ['origin', 'allowMethods', 'allowHeaders', 'exposeHeaders'],
    originKey: 'origin',
    aliases: { allowedOrigins: 'origin', allowOrigin: 'origin', optionsSuccessStatus: 'preflightStatus' },
    allowNothing: 'To allow no cross-origin request on purpose, pass origin: () => null (or leave ampCors out: same-origin requests need no CORS).',
    allowAny: 'For a public API that any origin may read without credentials, call ampCors() with no options (Access-Control-Allow-Origin: *).',
    map(given, mode, problems) {
      const { origin, allowMethods, allowHeaders, exposeHeaders, ...rest } = given as HonoAmpCorsOptions;
      for (const [alias, name] of [
        ['allowMethods', 'methods'],
        ['allowHeaders', 'allowedHeaders'],
        ['exposeHeaders', 'exposedHeaders'],
      ] as const) {
        if (given[alias] !== undefined && rest[name] !== undefined) problems.add('invalid-option', `give ${name} or its alias ${alias}, not both`);
      }
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

/** An origin function's answer as an origin option: a non-empty string as is, anything else none. */
function honoAnswer(answer: unknown): unknown {
  const read = (value: unknown) => (typeof value === 'string' && value !== '' ? value : false);
  return isThenable(answer) ? Promise.resolve(answer).then(read) : read(answer);
}

/**
 * A context like `c` (same URL, method, headers and `env`) whose `Origin`
 * request header is `origin`, for the guard's questions about another origin
 * than the request's (a canary, the `__amp_source_origin`). It is a new
 * context, so an answer cannot change the request's variables or response.
 */
function contextAbout(c: Context, origin: string): Context {
  const raw = c.req.raw;
  return new Context(new Request(raw.url, { method: raw.method, headers: { ...Object.fromEntries(raw.headers), origin } }), { env: c.env });
}

/** Sets every header of a plan (never `Vary`) on `into`. */
function setAll(headers: CorsPlan['headers'], into: Headers): void {
  for (let i = 0; i < headers.length; i++) {
    const header = headers[i] as readonly [string, string];
    into.set(header[0], header[1]);
  }
}

/** Extends `Vary` and sets the plan's headers on `into`; on immutable headers the first `set` throws, so nothing is half-applied. */
function setPlan(plan: Pick<CorsPlan, 'headers' | 'vary'>, into: Headers): void {
  if (plan.vary.length > 0) into.set('Vary', appendVary(into.get('Vary'), plan.vary));
  setAll(plan.headers, into);
}

/** Ends the request now: the headers set so far by earlier middleware, plus the plan's. */
function end(c: Context, status: number, body: string, plan: Pick<CorsPlan, 'headers' | 'vary'>): Response {
  const headers = new Headers(c.res.headers);
  headers.delete('Content-Length');
  headers.delete('Content-Type');
  setPlan(plan, headers);
  // Not merged with the placeholder response (hono would put its Vary back over ours).
  c.res = undefined;
  c.res = new Response(body === '' ? null : body, { status, headers });
  return c.res;
}

const FAILED = { headers: [['Content-Type', 'text/plain; charset=utf-8']], vary: ['Origin'] } as const;

/**
 * Creates the ampcors middleware for Hono 4.
 *
 * With `publishers` (or `verifier`): trusts the publisher's origins and its
 * AMP cache origins, answers preflights, stops denied origins with 403 before
 * the handler runs (`onDenied: 'omit'` lets them through without CORS
 * headers), and sets `c.get('ampCors')` to the verdict.
 *
 * With `hono/cors`'s options (`origin`, or nothing): behaves as `hono/cors`
 * does, including its defaults (its methods, credentials off, a denied origin
 * passed on without headers), except that, with credentials, an option
 * allowing every origin is refused: `'*'` and an origin function that allows
 * origins nobody names (`(origin) => origin`; asked about canary origins at
 * construction, and once more per allowed credentialed request). The
 * function is not called for a request without `Origin` (nor
 * `__amp_source_origin`), nor for an `Origin` that is not one canonical
 * origin; its answer allows the request's `Origin` only when it is that
 * origin (or `'*'` without credentials).
 *
 * Never throws per request: a throwing verifier or origin function becomes a
 * 500 with `Vary: Origin` and no CORS header. The handler's own errors are
 * left to hono's `onError`; its response gets the CORS headers like any other.
 *
 * @throws AmpCorsError for an invalid configuration.
 * @example app.use('/api/*', ampCors({ publishers: ['example.com'] }))
 */
export function ampCors(options?: HonoAmpCorsOptions): MiddlewareHandler<{ Variables: AmpCorsVariables }> {
  const compiled: Compiled = {};
  const policy = createCorsPolicy(options as AmpCorsConfig, honoSpec(compiled));
  const { origin, allowMethods } = policy.mode === 'any-origin' ? {} : (options as HonoAmpCorsOptions);
  const credentials = policy.options.credentials;
  const matcher = compiled.matcher;
  const staticSource: VerdictSource | null = matcher === undefined ? null : { verify: (raw, context) => judgeWithOriginMatcher(matcher, raw, context) };
  // An origin function is asked about canary origins now: one allowing every origin is refused with credentials, like '*'.
  const guarded =
    typeof origin === 'function'
      ? policy.guardOriginFunction(
          (asked) => honoAnswer(origin(asked, new Context(new Request('https://ampcors-probe.invalid/', { headers: { origin: asked } })))),
          credentials,
        )
      : null;
  const sourceFor = (c: Context, own: string | null | undefined): VerdictSource | null =>
    typeof origin !== 'function' || guarded === null ? staticSource : guarded((asked) => honoAnswer(origin(asked, asked === own ? c : contextAbout(c, asked))));
  // hono/cors's methods function, asked on preflights only; its answer is checked as the `methods` option is.
  const optionsFor = async (c: Context, facts: CorsRequest): Promise<NormalizedCorsOptions> => {
    if (typeof allowMethods !== 'function' || !isPreflight(facts)) return policy.options;
    const methods = await allowMethods(facts.origin ?? '', c);
    return { ...policy.options, methods: normalizeCorsOptions({ methods }).methods };
  };

  return async function ampCorsMiddleware(c, next) {
    let plan: CorsPlan;
    try {
      const facts = fetchRequestFacts(c.req.raw);
      const opts = typeof allowMethods === 'function' ? await optionsFor(c, facts) : policy.options;
      const decided = policy.decide(facts, sourceFor(c, facts.origin), opts);
      const decision = isThenable(decided) ? await decided : decided;
      plan = decision.plan;
      c.set('ampCors', decision.verdict);
      if (plan.email !== undefined) c.set('ampCorsEmail', plan.email);
      if (plan.handled) return end(c, plan.status, plan.body, plan);
      // All or nothing, before any side effect: a value the runtime refuses fails the request here, before the handler runs.
      if (plan.headers.length > 0) setAll(plan.headers, new Headers());
    } catch {
      try {
        return end(c, 500, 'Internal Server Error\n', FAILED);
      } catch {
        return new Response('Internal Server Error\n', { status: 500, headers: { 'Content-Type': 'text/plain; charset=utf-8', Vary: 'Origin' } });
      }
    }
    await next();
    if (plan.headers.length === 0 && plan.vary.length === 0) return;
    try {
      setPlan(plan, c.res.headers);
    } catch {
      // Immutable headers (a fetch() result, Response.redirect): copy once (values were checked before the handler ran).
      const res = c.res;
      if (res.status < 200 || res.status > 599) return;
      c.res = undefined;
      c.res = new Response(res.body, { status: res.status, statusText: res.statusText, headers: new Headers(res.headers) });
      setPlan(plan, c.res.headers);
    }
  };
}
