/**
 * The `@koa/cors` drop-in (issue #15): `@koa/cors`'s option names and
 * defaults mapped onto ampcors's configuration, its credentials,
 * `keepHeadersOnError` and `secureContext` rules, and its `origin(ctx)`
 * function asked through core's guard, so that the Koa adapter only
 * translates Koa's context and response. Pure: a Koa context is read as the
 * plain object {@link KoaCorsContext} describes, never imported.
 */
import { originRewriter } from './asked-origin.js';
import { checkPeerAliases, type ConfigMode, type ConfigProblems } from './config-check.js';
import type { NormalizedCorsOptions } from './cors-options.js';
import { normalizeCorsOptions } from './cors-options.js';
import type { CorsPlan } from './cors-plan.js';
import { type AdapterOptionsSpec, type AmpCorsConfig, type CorsDecision, createCorsPolicy, type VerdictSource } from './cors-policy.js';
import { compileOriginOption, judgeWithOriginMatcher, type OriginMatcher } from './legacy-origin-option.js';
import { isThenable, nodeHeader, type NodeHeaders, nodeRequestAbout, nodeRequestFacts } from './request-facts.js';
import { appendVary } from './vary.js';

/** The part of a Koa context (Koa 2 and 3) the drop-in reads. */
export interface KoaCorsContext {
  /** Node's request: its method, URL and header map. */
  readonly req: { readonly method?: string; readonly url?: string; readonly headers: NodeHeaders };
  /** The URL as the client sent it (before a mounted router rewrote `req.url`). */
  readonly originalUrl?: string;
  /** The context's state, where the adapter puts the verdict. */
  state: object;
}

/** `@koa/cors`'s origin function: the `Access-Control-Allow-Origin` value for this request, or a falsy value to deny. */
export type KoaCorsOriginFunction<C> = (ctx: C) => string | null | undefined | false | PromiseLike<string | null | undefined | false>;

/**
 * The options of the Koa adapter: the ampcors configuration, plus the
 * options of `@koa/cors` under their own names.
 */
export interface KoaCorsOptions<C = KoaCorsContext> extends Omit<AmpCorsConfig, 'credentials' | 'maxAge'> {
  /**
   * `@koa/cors`'s `origin`: an exact origin, `'*'`, or a {@link KoaCorsOriginFunction}. With `publishers` or `verifier` it adds origins; alone, it decides.
   * With credentials, an option allowing origins nobody names (`'*'`, `(ctx) => ctx.get('Origin')`) is refused.
   */
  readonly origin?: string | KoaCorsOriginFunction<C>;
  /** Alias of `methods`; `null`, `''` or `[]` sends no `Access-Control-Allow-Methods` (as `@koa/cors`). */
  readonly allowMethods?: string | readonly string[] | null;
  /** Alias of `allowedHeaders`; `''` or `[]` answers each preflight with the headers it asks for (as `@koa/cors`). */
  readonly allowHeaders?: string | readonly string[];
  /** Alias of `exposedHeaders`. */
  readonly exposeHeaders?: string | readonly string[];
  /** `Access-Control-Allow-Credentials`, or a function deciding it per request. */
  readonly credentials?: boolean | ((ctx: C) => boolean | PromiseLike<boolean>);
  /** `Access-Control-Max-Age` in seconds (a numeric string is accepted, and `0` sends none, as `@koa/cors` does). */
  readonly maxAge?: number | string;
  /** Keep the CORS headers (and `Vary: Origin`) on errors thrown by later middleware (default `true`, as `@koa/cors`). */
  readonly keepHeadersOnError?: boolean;
  /** Also send `Cross-Origin-Opener-Policy: same-origin` and `Cross-Origin-Embedder-Policy: require-corp` (default `false`). */
  readonly secureContext?: boolean;
}

/** What the Koa adapter builds once, at construction, from its options. */
export interface KoaCorsPolicy<C extends KoaCorsContext> {
  /** The mode the options' keys named. */
  readonly mode: ConfigMode;
  /**
   * Judges one request: reads its facts (`ctx.originalUrl` for the
   * `__amp_source_origin`), asks the credentials and origin functions, and
   * plans the response. Synchronous unless a function or verifier answers
   * with a Promise. May throw or reject when one of them does.
   */
  decide(ctx: C): CorsDecision | Promise<CorsDecision>;
  /** The headers to set for a plan: the plan's, plus `secureContext`'s when configured (never on a 403); names in lower case, as a plan's. */
  headersOf(plan: CorsPlan): ReadonlyArray<readonly [string, string]>;
  /** The error to rethrow when deciding failed: it carries `Vary: Origin` for Koa's error response. */
  errorWhileDeciding(error: unknown): unknown;
  /** The error to rethrow when later middleware threw: it carries the plan's headers and `Vary` unless `keepHeadersOnError: false`. */
  errorAfter(error: unknown, plan: CorsPlan): unknown;
}

/** `@koa/cors`'s default `Access-Control-Allow-Methods`, kept in the compatible mode. */
const KOA_CORS_METHODS = 'GET,HEAD,PUT,POST,DELETE,PATCH';

/** `@koa/cors`'s own keys (the others are ampcors's). */
const KOA_CORS_KEYS: readonly string[] = ['origin', 'allowMethods', 'allowHeaders', 'exposeHeaders', 'keepHeadersOnError', 'secureContext'];

/** The headers of `secureContext: true`. */
const SECURE_CONTEXT: ReadonlyArray<readonly [string, string]> = [
  ['cross-origin-opener-policy', 'same-origin'],
  ['cross-origin-embedder-policy', 'require-corp'],
];

/** True for what `@koa/cors` reads as "no list": `null`, `''`, `[]`. */
function isEmptyList(value: unknown): boolean {
  return value === null || value === '' || (Array.isArray(value) && value.length === 0);
}

/**
 * Maps `@koa/cors`'s option names onto ampcors's, with `@koa/cors`'s
 * defaults when its `origin` option decides (its methods, credentials off,
 * a denied origin passed on without headers); the problems of its own keys
 * go to `problems`.
 *
 * 1. Values: `maxAge` a whole number (or its digits), `credentials` a
 *    boolean or a function, the flags booleans; an alias and its ampcors
 *    name not both.
 * 2. Refused as unsafe: credentials without any origin source (`@koa/cors`
 *    reflects every `Origin` with them), and `'*'` with
 *    `privateNetworkAccess` (every website could read a server on a private
 *    network, which is what Private Network Access exists to prevent).
 * 3. `@koa/cors`'s empty values: no methods header for `allowMethods:
 *    null`/`''`/`[]`, the asked headers for an empty `allowHeaders`, no
 *    `Access-Control-Max-Age` for `maxAge: 0`.
 */
function koaConfig(given: KoaCorsOptions<unknown>, mode: ConfigMode, problems: ConfigProblems): AmpCorsConfig {
  const { origin, allowMethods, allowHeaders, exposeHeaders, credentials, maxAge, keepHeadersOnError, secureContext, ...rest } = given;
  // 1. Values.
  if (typeof maxAge === 'string' && !/^[0-9]+$/.test(maxAge)) problems.add('invalid-option', 'maxAge must be a non-negative whole number of seconds');
  if (credentials !== undefined && typeof credentials !== 'boolean' && typeof credentials !== 'function')
    problems.add('invalid-option', 'credentials must be a boolean or a function');
  if (keepHeadersOnError !== undefined && typeof keepHeadersOnError !== 'boolean') problems.add('invalid-option', 'keepHeadersOnError must be true or false');
  if (secureContext !== undefined && typeof secureContext !== 'boolean') problems.add('invalid-option', 'secureContext must be true or false');
  checkPeerAliases(given, problems);
  // 2. What @koa/cors's default origin would make of credentials: every Origin reflected with them.
  const namesOrigins = ['origin', 'publishers', 'origins', 'verifier', 'allowSet'].some((key) => Object.hasOwn(given, key));
  if (!namesOrigins && credentials !== undefined && credentials !== false)
    problems.add(
      'unsafe-configuration',
      "credentials without origin: @koa/cors would reflect every request's Origin with credentials, so any website could read your users' data; name the trusted origins (origin: 'https://app.example' or an origin function) or the publishers",
    );
  // Every website reading a private-network server.
  if (origin === '*' && rest.privateNetworkAccess === true)
    problems.add(
      'unsafe-configuration',
      "origin '*' with privateNetworkAccess would let every website read this server on a private network; name the origins that may (an origin function), or leave privateNetworkAccess out",
    );
  // 3. The mapping, with @koa/cors's empty values.
  const methods = allowMethods === undefined ? (mode === 'amp' ? undefined : KOA_CORS_METHODS) : isEmptyList(allowMethods) ? [] : allowMethods;
  const seconds = typeof maxAge === 'string' ? Number(maxAge) : maxAge;
  return {
    ...rest,
    ...(rest.methods === undefined && methods !== undefined && { methods: methods as string | readonly string[] }),
    ...(allowHeaders !== undefined && !isEmptyList(allowHeaders) && { allowedHeaders: allowHeaders }),
    ...(exposeHeaders !== undefined && { exposedHeaders: exposeHeaders }),
    ...(seconds !== undefined && !(seconds === 0 && typeof maxAge === 'number') && { maxAge: seconds }),
    ...(mode !== 'any-origin' && { credentials: typeof credentials === 'boolean' ? credentials : credentials === undefined ? mode === 'amp' : true }),
    ...(origin !== undefined && { onDenied: rest.onDenied ?? 'omit' }),
  };
}

/** What the configuration check leaves: the mapped configuration and the compiled static `origin`. */
interface Compiled {
  config?: AmpCorsConfig;
  matcher?: OriginMatcher;
}

/**
 * The configuration check of the Koa adapter (issue #15): unknown keys name
 * the closest known one, the mode is named by keys only, and a static
 * `origin` is compiled into `compiled`, so that its problems are listed
 * with all the others.
 */
function koaSpec(entry: string, compiled: Compiled): AdapterOptionsSpec {
  return {
    entry,
    keys: KOA_CORS_KEYS,
    originKey: 'origin',
    aliases: { allowedOrigins: 'origin', allowOrigin: 'origin', optionsSuccessStatus: 'preflightStatus' },
    allowNothing: 'To allow no cross-origin request on purpose, pass origin: () => false (or leave ampCors out: same-origin requests need no CORS).',
    allowAny:
      "For a public API that any origin may read without credentials, call ampCors() with no options, or add origin: '*' to @koa/cors's other options (Access-Control-Allow-Origin: *, @koa/cors's default).",
    map(given, mode, problems) {
      const options = given as KoaCorsOptions<unknown>;
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
 * An origin function's answer as an origin option: a non-empty string as
 * is, anything else none. `'*'` with credentials is `@koa/cors`'s "reflect
 * this request's Origin", so it is an allow of the origin asked about
 * (`true`), guarded like any other.
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

/** 5. Koa's caches of a request's URL (`ctx.URL`, `ctx.query`), empty on a view. */
const URL_CACHES: PropertyDescriptorMap = { memoizedURL: { value: undefined, writable: true }, _querycache: { value: undefined, writable: true } };

/**
 * A view of `ctx` in which the `Origin` request header is `origin`, for the
 * guard's questions about another origin than the request's (a canary, a
 * look-alike, the `__amp_source_origin`). It carries everything the real
 * context carries, the asked origin wherever the real one showed
 * (attacker's review, session 15: a question context without what earlier
 * middleware had put on the real one made a loose function throw, which
 * counts as "not allowed", so the guard passed; one that replaced only the
 * `Origin` let a function echoing `ctx.query.__amp_source_origin` or the
 * `Referer`'s origin pass):
 *
 * 1. Everything Koa or earlier middleware put on the context, its request
 *    and its response (`ctx.request.body`, `ctx.app`, …) is read through
 *    from the real ones.
 * 2. `state` is a copy of the real state (its own properties and
 *    prototype), made when the question is asked: an answer reads what
 *    earlier middleware put there, and what it writes on `state` stays on
 *    the copy, so the request's state never holds a question's answer
 *    (objects inside the state are shared, not copied).
 * 3. Koa's links between its objects lead back to the view, never to the
 *    real request (attacker's review, session 15): the view's `request.ctx`
 *    and `response.ctx` are the view, its `request.response` and
 *    `response.request` each other.
 * 4. Node's request is the one about `origin` (request-facts.ts's
 *    `nodeRequestAbout`: its headers, `Referer` and others included, and its
 *    URL), as `ctx.req`, `request.req` and `response.req`, and as `req` of
 *    Node's response (`ctx.res.req`, which Node links back to the real
 *    request): the view's `res` inherits from the real one, so a status or
 *    header an answer sets before Node's header map exists stays on the
 *    view.
 * 5. Koa's views of the URL follow from it: `ctx.originalUrl` (and the
 *    request's) is rewritten (asked-origin.ts), so are `ctx.href`,
 *    `ctx.URL`, `ctx.path`, `ctx.querystring` and `ctx.query` (their caches,
 *    `memoizedURL` and `_querycache`, start empty on the view), and a
 *    router's `params` and `captures`, each replaced only where it shows
 *    the real origin.
 *
 * Not replaced: Node's internals (`req.socket._httpMessage`), a body, and
 * what earlier middleware derived from the real `Origin` and stored (a
 * `ctx.state.origin`), or what the function stored there itself while
 * answering the real request: questions read it as the request left it.
 */
function contextAbout(ctx: KoaCorsContext, origin: string): object {
  const real = ctx as KoaCorsContext & { request?: object; response?: object; res?: object };
  // 4. The Node request about `origin`, and a Node response leading to it.
  const req = nodeRequestAbout(real.req, origin);
  const res: object | undefined = typeof real.res === 'object' && real.res !== null ? (Object.create(real.res, { req: { value: req } }) as object) : undefined;
  const headers: PropertyDescriptor = { get: () => req.headers };
  // 1. Views inheriting from the real objects.
  const view: object = Object.create(real) as object;
  const request: object = Object.create(real.request ?? null) as object;
  const response: object | undefined = real.response === undefined ? undefined : (Object.create(real.response) as object);
  // 2. The state, copied.
  const given: unknown = real.state;
  const state: object =
    typeof given === 'object' && given !== null
      ? (Object.create(Object.getPrototypeOf(given) as object | null, Object.getOwnPropertyDescriptors(given)) as object)
      : {};
  // 4. `ctx.get` reads the one header asked for (the usual `ctx.get('Origin')` needs no copy of the others).
  const realHeaders = real.req.headers;
  const rewrite = originRewriter(nodeHeader(realHeaders, 'origin'), origin);
  const get = (name: string): string => {
    const lower = name.toLowerCase();
    if (lower === 'origin') return origin;
    const value = nodeHeader(realHeaders, lower);
    return value === null ? '' : rewrite === null ? value : rewrite.header(lower, value);
  };
  // 3. and 4. Koa's links, and Node's objects.
  const node: PropertyDescriptorMap = { req: { value: req }, ...(res !== undefined && { res: { value: res } }) };
  const about: PropertyDescriptorMap = { get: { value: get }, header: headers, headers, ...node };
  const toResponse: PropertyDescriptorMap = response === undefined ? {} : { response: { value: response } };
  // 5. The URL as Koa shows it, and a router's parameters.
  const urls = (of: object | undefined, caches: boolean): PropertyDescriptorMap => {
    const views: PropertyDescriptorMap = {};
    if (rewrite === null || of === undefined) return views;
    const originalUrl: unknown = (of as { originalUrl?: unknown }).originalUrl;
    const url = typeof originalUrl === 'string' ? rewrite.url(originalUrl) : originalUrl;
    // Koa's caches of the URL start empty on a view whose URL differs.
    if (url !== originalUrl) Object.assign(views, { originalUrl: { value: url, writable: true }, ...(caches && URL_CACHES) });
    for (const name of ['params', 'captures']) {
      const value: unknown = Object.hasOwn(of, name) ? (of as Record<string, unknown>)[name] : undefined;
      const rewritten = rewrite.deep(value);
      if (rewritten !== value) views[name] = { value: rewritten, writable: true };
    }
    return views;
  };
  Object.defineProperties(view, { ...about, request: { value: request }, ...toResponse, state: { value: state }, ...urls(real, false) });
  Object.defineProperties(request, { ...about, ctx: { value: view }, ...toResponse, ...urls(real.request, true) });
  if (response !== undefined) Object.defineProperties(response, { ctx: { value: view }, request: { value: request }, ...node });
  return view;
}

/**
 * The error Koa answers for `error`: a new object inheriting from it (its
 * message, status, `expose`, stack, class) whose own `headers` are the
 * thrown error's `headers` with `headers` merged in and `vary` appended to
 * its `Vary`, as `@koa/cors` does. The thrown object itself is never
 * changed (`@koa/cors` writes into it): one error thrown on several
 * requests (a module-level promise that rejected once, a library's error
 * constant) would otherwise carry one request's CORS headers into every
 * later answer built from it, on routes that deny the origin or send no
 * credentials, and between requests in flight at once (SECURITY.md,
 * attacker's review, session 15). A thrown value that is not an Error
 * (of this realm or another) becomes one.
 */
function withErrorHeaders(error: unknown, headers: Readonly<Record<string, string>>, vary: readonly string[]): unknown {
  // An Error of another realm (a `vm` context, a test runner's sandbox) is one for Koa too, which checks the internal
  // Error slot (`Object.prototype.toString`), not `instanceof`: it keeps its status, `expose` and headers.
  const foreign = !(error instanceof Error) && typeof error === 'object' && error !== null && Object.prototype.toString.call(error) === '[object Error]';
  const thrown = error instanceof Error || foreign ? (error as Error) : new Error(String(error));
  const carried = (thrown as { headers?: Record<string, string> }).headers ?? {};
  const merged = appendVary(carried.vary ?? carried.Vary, vary);
  const { Vary: _dropped, ...others } = carried;
  // Defined, not assigned: an inherited read-only `headers` (a frozen error) does not stop this request's own.
  const own = { headers: { value: { ...others, ...headers, vary: merged }, writable: true, enumerable: true, configurable: true } };
  if (!foreign) return Object.create(thrown, own) as Error;
  // Koa's check needs the internal Error slot, which only an Error made here has: one inheriting from the thrown one,
  // without its own `stack` (the thrown one's is inherited).
  const derived = Object.setPrototypeOf(new Error(), thrown) as Error;
  delete (derived as { stack?: string }).stack;
  return Object.defineProperties(derived, own);
}

const VARY_ORIGIN: readonly string[] = ['Origin'];

/** Koa's async-local store of contexts (`new Koa({ asyncLocalStorage: true })`; `app.currentContext` reads it). */
interface ContextStorage {
  run<R>(store: unknown, callback: () => R): R;
}

/**
 * Asks an origin function about `asked` with a question context
 * ({@link contextAbout}), inside the application's async-local store of
 * contexts when it keeps one, so that `app.currentContext` (and a helper
 * reading it instead of its argument) is the question context too, awaited
 * continuations included; otherwise every question would see the real
 * `Origin` there (attacker's review, session 15). A store of the
 * application's own making is not known here (SECURITY.md).
 */
function askAbout<C extends KoaCorsContext>(ctx: C, asked: string, origin: KoaCorsOriginFunction<C>): ReturnType<KoaCorsOriginFunction<C>> {
  const view = contextAbout(ctx, asked) as C;
  const storage = (ctx as { readonly app?: { readonly ctxStorage?: unknown } }).app?.ctxStorage;
  if (typeof storage !== 'object' || storage === null || typeof (storage as ContextStorage).run !== 'function') return origin(view);
  return (storage as ContextStorage).run(view, () => origin(view));
}

/**
 * Builds the Koa adapter's policy from its options, once (issue #15).
 *
 * With `publishers` (or `verifier`): the AMP mode, ampcors's defaults.
 *
 * With `@koa/cors`'s options (`origin`, or none): `@koa/cors`'s behaviour,
 * including its defaults (credentials off, its methods, a denied origin
 * passed on without headers), the literal `*` for `origin: '*'` (and for
 * an origin function's `'*'`) without credentials, and its `Vary` policy
 * (`Vary: Origin` on every response, the `*` ones included), except where
 * it is unsafe: with credentials, an option allowing every origin is
 * refused (`'*'`, which `@koa/cors` turns into reflecting every origin, and
 * an origin function that allows origins nobody names, such as `(ctx) =>
 * ctx.get('Origin')`, asked about canary origins at construction and once
 * more per allowed credentialed request). An origin function is not called
 * for a request without `Origin` (nor `__amp_source_origin`), nor for an
 * `Origin` that is not one canonical origin.
 *
 * @param options - the adapter's options as the user gave them
 * @param entry - the entry point, as errors name it
 * @throws AmpCorsError for an invalid configuration, listing every problem.
 */
export function createKoaCorsPolicy<C extends KoaCorsContext>(options: KoaCorsOptions<C> | undefined, entry: string): KoaCorsPolicy<C> {
  const compiled: Compiled = {};
  const policy = createCorsPolicy(options as AmpCorsConfig, koaSpec(entry, compiled));
  const given: KoaCorsOptions<C> = policy.mode === 'any-origin' ? {} : (options as KoaCorsOptions<C>);
  const { origin, credentials, keepHeadersOnError, secureContext } = given;
  const staticCredentials = policy.options.credentials;
  // @koa/cors's answers (the compatible modes only): its `*` and its Vary policy; `origin: '*'` answers * to every request.
  const koa = (normalized: NormalizedCorsOptions): NormalizedCorsOptions =>
    policy.mode === 'amp'
      ? normalized
      : { ...normalized, starForAnyOrigin: true, alwaysVaryOrigin: true, ...(origin === '*' && !normalized.credentials && { anyOrigin: true }) };
  const withCredentials = koa(policy.options);
  // With a credentials function, both variants are prepared once.
  const withoutCredentials = typeof credentials === 'function' ? koa(normalizeCorsOptions({ ...compiled.config, credentials: false })) : withCredentials;
  const keep = keepHeadersOnError !== false;
  const secure = secureContext === true;
  // A static origin was compiled once, by the configuration check ('*' refused whenever credentials may be on).
  const matcher = compiled.matcher;
  const staticSource: VerdictSource | null = matcher === undefined ? null : { verify: (raw, context) => judgeWithOriginMatcher(matcher, raw, context) };
  // An origin function is asked about canary origins now: one allowing every origin is refused with credentials, like '*'.
  const guarded =
    typeof origin === 'function'
      ? policy.guardOriginFunction((asked) => koaAnswer(origin(probeContext(asked) as C), staticCredentials), staticCredentials)
      : null;

  const judge = (ctx: C, credentialed: boolean): CorsDecision | Promise<CorsDecision> => {
    let source = staticSource;
    if (guarded !== null && typeof origin === 'function') {
      const own = nodeHeader(ctx.req.headers, 'origin');
      source = guarded((asked) => koaAnswer(asked === own ? origin(ctx) : askAbout(ctx, asked, origin), credentialed), credentialed);
    }
    return policy.decide(nodeRequestFacts(ctx.req, ctx.originalUrl), source, credentialed ? withCredentials : withoutCredentials);
  };

  return {
    mode: policy.mode,
    decide(ctx) {
      if (typeof credentials !== 'function') return judge(ctx, staticCredentials);
      const asked = credentials(ctx);
      return isThenable(asked) ? Promise.resolve(asked).then((yes) => judge(ctx, !!yes)) : judge(ctx, !!asked);
    },
    headersOf: secure ? (plan) => (plan.kind === 'reject' ? plan.headers : [...plan.headers, ...SECURE_CONTEXT]) : (plan) => plan.headers,
    errorWhileDeciding: (error) => withErrorHeaders(error, {}, VARY_ORIGIN),
    errorAfter(error, plan) {
      if (!keep) return error;
      const kept: Record<string, string> = {};
      for (const [name, value] of plan.headers) kept[name] = value;
      if (secure && plan.kind !== 'reject') for (const [name, value] of SECURE_CONTEXT) kept[name] = value;
      return withErrorHeaders(error, kept, plan.vary.length > 0 ? plan.vary : VARY_ORIGIN);
    },
  };
}
