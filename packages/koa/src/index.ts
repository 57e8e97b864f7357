/**
 * @ampcors/koa — AMP-aware CORS middleware for Koa 2 and 3, and a drop-in
 * replacement for `@koa/cors`. A thin adapter: Koa's context → core
 * (`createKoaCorsPolicy`, which holds `@koa/cors`'s options and rules) →
 * Koa's response. Every decision and every header comes from @ampcors/core.
 *
 * @packageDocumentation
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { EmailSender, Verdict } from '@ampcors/core';
import {
  appendVary,
  applyHeadersAtomically,
  carriesGrant,
  type CorsPlan,
  CORS_RESPONSE_HEADERS,
  createKoaCorsPolicy,
  earlierGrantLeft,
  grantChangedSince,
  InnermostDecisions,
  isThenable,
  type KoaCorsOptions,
  type KoaCorsOriginFunction,
  lastTakeBack,
  NO_CORS_HEADERS,
  overruledCorsHeaders,
  removeEarlierCorsHeaders,
  type TakeBack,
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
  /** Koa's response object (`Object.create(app.response)`): its `body` setter is where Koa 3 copies a Fetch `Response`'s headers. */
  readonly response?: object;
  readonly originalUrl: string;
  state: object;
  status: number;
  body: unknown;
}

/** `@koa/cors`'s origin function: returns the `Access-Control-Allow-Origin` value for this request, or a falsy value to deny. */
export type KoaOriginFunction<C extends KoaContextLike = KoaContextLike> = KoaCorsOriginFunction<C>;

/**
 * Options of {@link ampCors}: the ampcors configuration (`publishers`,
 * `origins`, `verifier`, …), plus the options of `@koa/cors` under their own
 * names (`origin`, `allowMethods`, `allowHeaders`, `exposeHeaders`,
 * `credentials` as a boolean or a function, `maxAge`, `keepHeadersOnError`,
 * `secureContext`).
 */
export type KoaAmpCorsOptions = KoaCorsOptions<KoaContextLike>;

/** The contexts an inner ampCors decided after an outer one: the outer then leaves the headers of a later error alone (core's nested-policies.ts; one table per realm, shared by every copy of this package, rule 6). */
const innermost = InnermostDecisions.inRealm<KoaContextLike>('@ampcors/koa');

/** A Koa middleware. */
export type AmpCorsKoaMiddleware = (ctx: KoaContextLike, next: () => Promise<unknown>) => Promise<void>;

/**
 * Creates the ampcors middleware for Koa 2 and 3.
 *
 * With `publishers` (or `verifier`): trusts the publisher's origins and its
 * AMP cache origins, answers preflights, stops denied origins with 403 before
 * later middleware runs (`onDenied: 'omit'` lets them through without CORS
 * headers), and sets `ctx.state.ampCors` to the verdict.
 *
 * With `@koa/cors`'s options (`origin`, or nothing): behaves as `@koa/cors`
 * does (its defaults, the literal `*` for `'*'` without credentials, `Vary:
 * Origin` on every response), except that, with credentials, an option
 * allowing every origin is refused: `'*'` and an origin function that allows
 * origins nobody names, such as `(ctx) => ctx.get('Origin')` (see
 * `createKoaCorsPolicy` in @ampcors/core). Options that name no origin
 * source (`{ maxAge: 600 }`) are refused: add `origin: '*'` for
 * `@koa/cors`'s default.
 *
 * Errors (a throwing verifier or hook) are rethrown with `err.headers`
 * carrying `Vary: Origin` (and, after later middleware threw, the CORS
 * headers unless `keepHeadersOnError: false`), so Koa's error response keeps them.
 *
 * Two ampCors on one request (an app-wide one, a stricter one on a path,
 * in Koa or in another framework on the same Node request): the innermost
 * decides; it removes the CORS headers an earlier layer set (an ampCors or
 * any other) and its own plan does not, and an earlier Koa ampCors leaves
 * an error's headers to it (core's nested-policies.ts).
 *
 * @throws AmpCorsError for an invalid configuration.
 * @example app.use(ampCors({ publishers: ['example.com'] }))
 */
export function ampCors(options?: KoaAmpCorsOptions): AmpCorsKoaMiddleware {
  const cors = createKoaCorsPolicy<KoaContextLike>(options, 'ampCors (@ampcors/koa)');
  return async function ampCorsMiddleware(ctx, next) {
    let plan: CorsPlan;
    const state = ctx.state as AmpCorsState;
    // An earlier ampCors decided this request: this one decides instead (core's nested-policies.ts).
    const earlier = state.ampCors !== undefined;
    if (earlier) innermost.decidesAgain(ctx, cors);
    try {
      const decided = cors.decide(ctx);
      const { verdict, plan: planned } = isThenable(decided) ? await decided : decided;
      plan = planned;
      // Straight to Node's response, as Koa's `ctx.set` does for a string (it skips once the headers are sent): all of them or none.
      if (!ctx.res.headersSent) {
        const headers = cors.headersOf(plan);
        const replaced = applyHeadersAtomically(ctx.res, headers, plan.vary);
        // An earlier layer (another framework on this Node request, an ampCors whose `ctx.state` was replaced since, another
        // CORS middleware) left a grant on the response: this one decides instead (core's nested-policies.ts, 4.).
        if (earlier || replaced || earlierGrantLeft(ctx.res, headers)) {
          removeEarlierCorsHeaders(ctx.res, headers);
          if (!earlier) innermost.decidesAgain(ctx, cors);
        }
      }
      state.ampCors = verdict;
      if (plan.email !== undefined) state.ampCorsEmail = plan.email;
    } catch (error) {
      // A failure never allows: not even with an earlier layer's headers (for an error handler that keeps them).
      if (!ctx.res.headersSent) removeEarlierCorsHeaders(ctx.res, NO_CORS_HEADERS);
      throw cors.errorWhileDeciding(error);
    }
    if (plan.handled) {
      ctx.status = plan.status;
      // An empty 204 needs no body: Koa would set and then remove its Content-Type and Content-Length.
      if (plan.body !== '' || plan.status !== 204) ctx.body = plan.body;
      return;
    }
    // Koa 3 copies a Response body's headers when it is set: its app's setter notes them, whatever replaces the body later.
    const response = ctx.response;
    if (response !== undefined) {
      const prototype: unknown = Object.getPrototypeOf(response);
      if (prototype !== lastWatched) watchResponseBodies((lastWatched = prototype));
    }
    // What a later layer of another framework on this Node response took back is noted there (core's nested-policies.ts, 4.).
    const takenBack = lastTakeBack(ctx.res);
    try {
      await next();
    } catch (error) {
      // An inner ampCors decided this request (in Koa, or another framework's on the Node response): its error headers stand.
      if (innermost.overruled(ctx, cors) || lastTakeBack(ctx.res) !== takenBack) throw error;
      // A Fetch `Response` body set before the throw: the grant Koa 3 copied from it is not a later layer's decision, and an
      // error handler before ampCors keeps the response's headers, so this plan is put back first (attacker's review,
      // session 17: the upstream's echo of a denied Origin, with credentials, stayed on the error answer).
      const copied = responseBodiesSet ? copiedHeaders.get(ctx.res) : undefined;
      (ctx.res as Decided)[DECIDED] = plan;
      if (copied !== undefined && !ctx.res.headersSent && !grantedLater(ctx.res, copied, plan.headers)) {
        keepDecision(ctx.res, copied, plan.headers, plan.vary);
        throw cors.errorAfter(error, plan);
      }
      throw grantChangedSince(ctx.res, cors.headersOf(plan)) ? error : cors.errorAfter(error, plan);
    }
    // A Fetch `Response` was set as the body (it may have been replaced since: a 304's `null`, its stream, its text) and Koa 3
    // copied its headers over what was written: put back what decided (see keepDecision). Else a boolean and a `typeof`.
    const copied = responseBodiesSet ? copiedHeaders.get(ctx.res) : undefined;
    const body = copied === undefined ? ctx.body : undefined;
    const brought = copied ?? (typeof body === 'object' && body !== null && body instanceof Response ? body.headers : undefined);
    if (innermost.overruled(ctx, cors)) return;
    const later = lastTakeBack(ctx.res);
    if (brought !== undefined && !ctx.res.headersSent) {
      // A later layer of another framework on ctx.res (an Express ampCors run on ctx.req/ctx.res, an @hono/node-server listener)
      // decided: its headers, not this plan, are put back when it took a grant back; when it granted where this plan did not
      // (seen on the response while the body brings no grant), none of the body's CORS headers stay (core's nested-policies.ts, 4.).
      keepDecision(
        ctx.res,
        brought,
        later !== takenBack ? (later as TakeBack).headers : grantedLater(ctx.res, brought, plan.headers) ? null : plan.headers,
        plan.vary,
      );
    }
    // A Response an outer middleware sets after this one returned (a fallback proxy after `next()`) is met by the setter.
    if (responseBodiesWatched) (ctx.res as Decided)[DECIDED] = later !== takenBack ? { headers: (later as TakeBack).headers, vary: plan.vary } : plan;
  };
}

/**
 * The CORS headers of every Fetch `Response` set as the body of a Koa response (keyed by its Node response), as they were
 * when it was set: Koa 3 copies a Response's headers over the Node response then (`ctx.body = await fetch(upstream)`), and
 * they stay when later middleware replaces the body (koa-conditional-get's 304 `ctx.body = null`, `ctx.body = ctx.body.body`,
 * its text; attacker's review, session 17) or changes the Response's headers. Later Responses add theirs; an empty
 * `Headers` still says that one was set (its `Vary` replaced ampCors's).
 */
const copiedHeaders = new WeakMap<object, Headers>();
/**
 * What decided a Koa response's CORS headers when its ampCors returned (its plan, or a later layer's headers that took the
 * grant back), kept on its Node response: a Fetch `Response` that a middleware before ampCors sets as the body after
 * ampCors returned (a fallback proxy after `next()`, an error page in a `catch`; attacker's review, session 17) has its
 * CORS headers put back over by the watched setter. A property of the response, set to the remembered plan: no object
 * and no table entry per request. Kept only once a prototype is watched.
 */
const DECIDED = Symbol('ampcors.koa.decided');
/** A Node response carrying {@link DECIDED}. */
type Decided = { [DECIDED]?: { readonly headers: ReadonlyArray<readonly [string, string]> | null; readonly vary: readonly string[] } };
/** Whether any app's response prototype has its `body` setter watched (until then, no decision is kept). */
let responseBodiesWatched = false;
/** Whether a Fetch `Response` was ever set as a Koa body in this process (until then, the middleware looks nothing up). */
let responseBodiesSet = false;
/** The prototype (an app's `app.response`) of the last Koa response seen: the common path compares it and does nothing else. */
let lastWatched: unknown;
/** The prototypes whose `body` setter notes Response bodies (each wrapped once). */
const watched = new WeakSet<object>();

/**
 * Wraps, once, the `body` setter that Koa responses made from `prototype` (an app's `app.response`, which Koa lets an app
 * extend) inherit: a Fetch `Response` set as the body has its CORS headers noted in {@link copiedHeaders} before Koa's
 * setter runs; every other value goes straight to Koa's setter. A prototype without a `body` setter (not Koa's), or one
 * that cannot be changed (frozen), is left as it is: the middleware then sees a Response body only while it is the body.
 */
function watchResponseBodies(prototype: unknown): void {
  if (typeof prototype !== 'object' || prototype === null || watched.has(prototype)) return;
  watched.add(prototype);
  let owner: object | null = prototype;
  let descriptor: PropertyDescriptor | undefined;
  while (owner !== null && (descriptor = Object.getOwnPropertyDescriptor(owner, 'body')) === undefined) owner = Object.getPrototypeOf(owner) as object | null;
  const set = descriptor?.set;
  if (descriptor === undefined || set === undefined || (owner === prototype && descriptor.configurable !== true)) return;
  try {
    responseBodiesWatched = true;
    Object.defineProperty(prototype, 'body', {
      configurable: true,
      enumerable: descriptor.enumerable === true,
      get: descriptor.get,
      set(this: { readonly res?: unknown }, value: unknown) {
        if (!(typeof value === 'object' && value !== null && value instanceof Response)) return set.call(this, value);
        noteCopied(this.res, value.headers);
        set.call(this, value);
        // Set after ampCors returned (by a middleware before it: a fallback proxy, an error page): what decided is put back now.
        const res = this.res as ServerResponse;
        const decided = (res as Decided | undefined)?.[DECIDED];
        if (decided !== undefined && !res.headersSent) keepDecision(res, value.headers, decided.headers, decided.vary);
      },
    });
  } catch {
    // A frozen or non-extensible prototype: nothing is noted, as before.
  }
}

/** Notes the CORS headers of a Response set as the body of the Koa response whose Node response is `res` (see {@link copiedHeaders}). */
function noteCopied(res: unknown, headers: Headers): void {
  if (typeof res !== 'object' || res === null) return;
  let copied = copiedHeaders.get(res);
  if (copied === undefined) copiedHeaders.set(res, (copied = new Headers()));
  for (const name of CORS_RESPONSE_HEADERS) {
    const value = headers.get(name);
    if (value !== null) copied.set(name, value);
  }
  responseBodiesSet = true;
}

/**
 * Whether a later layer granted on `res` where `headers` (this middleware's plan) did not, without taking a grant back
 * (an inner ampCors of another framework allowing what this one denied): `res` holds a grant other than the plan's
 * (`grantChangedSince`) while the headers `brought` by Response bodies (those Koa 3 copied over `res`) carry none
 * (`carriesGrant`), so that grant is not theirs. A few `has` and header reads, after a Response body only.
 */
function grantedLater(res: ServerResponse, brought: Headers, headers: ReadonlyArray<readonly [string, string]>): boolean {
  return !carriesGrant(brought) && grantChangedSince(res, headers);
}

/**
 * Puts back on `res` what Fetch `Response` bodies (their CORS headers `brought`) replaced of `headers`, the CORS headers of
 * the layer that decided (this middleware's plan, or a later layer's that took the grant back; `null`: a later layer's,
 * not known, so every CORS header they brought goes): Koa 3 copies a body's headers over the response when it is set,
 * `ctx.body = await fetch(upstream)`, and Koa 2 leaves what was written (core's response-bodies.ts). None of their CORS
 * headers that overrule those stay, and the `Vary` names `vary` are merged into its `Vary`.
 */
function keepDecision(res: ServerResponse, brought: Headers, headers: ReadonlyArray<readonly [string, string]> | null, vary: readonly string[]): void {
  const decided = (name: string) => headers?.find((header) => header[0] === name)?.[1];
  for (const name of overruledCorsHeaders(brought, (name) => headers === null || decided(name) !== undefined)) {
    const value = decided(name);
    if (value === undefined) res.removeHeader(name);
    else res.setHeader(name, value);
  }
  if (vary.length === 0) return;
  const current = res.getHeader('vary');
  const merged = appendVary(current, vary);
  if (merged !== current) res.setHeader('vary', merged);
}
