/**
 * @ampcors/fastify — AMP-aware CORS plugin for Fastify 4 and 5, and a
 * drop-in replacement for `@fastify/cors`. A thin adapter: Fastify's request
 * → @ampcors/core (every decision, every header) → Fastify's reply.
 *
 * @packageDocumentation
 */
import type { EmailSender, Verdict } from '@ampcors/core';
import {
  appendVary,
  clearEarlierCorsHeaders,
  createFastifyCorsPolicy,
  earlierGrantLeft,
  isThenable,
  NO_CORS_HEADERS,
  overruledCorsHeaders,
  removeEarlierCorsHeaders,
} from '@ampcors/core/adapter';
import type { CorsDecision, FastifyCorsOptions, FastifyCorsOriginFunction, FastifyCorsPolicy } from '@ampcors/core/adapter';
import type { HookHandlerDoneFunction as Done, FastifyInstance, FastifyPluginCallback, FastifyReply, FastifyRequest, FastifySchema, LogLevel } from 'fastify';
import fp from 'fastify-plugin';

export { ampRedirectTo, AmpCorsError, type CorsOptions, type Verdict } from '@ampcors/core';
export type { AmpCorsConfig, OriginOption, VerdictSource } from '@ampcors/core/adapter';

declare module 'fastify' {
  interface FastifyRequest {
    /** The ampcors verdict of this request (set by the `ampCors` plugin; `undefined` outside its scope). */
    ampCors?: Verdict;
    /** The AMP for Email sender of this request, when `email` is configured and the request is one. */
    ampCorsEmail?: EmailSender;
  }
}

/** `@fastify/cors`'s origin function: calls back with an `OriginOption`, or returns a Promise of it (`this` is the Fastify instance). */
export type OriginFunction = FastifyCorsOriginFunction<FastifyInstance>;

/** Options of {@link ampCors}: the ampcors configuration, plus `@fastify/cors`'s options under their own names (core's `FastifyCorsOptions`). */
export interface FastifyAmpCorsOptions extends FastifyCorsOptions<FastifyInstance> {
  /** The log level of the `OPTIONS *` route. */
  readonly logLevel?: LogLevel;
}

/**
 * The route's `config` (`request.routeOptions.config`), without the cost of
 * `routeOptions`: Fastify 5's getter builds a new object of every route
 * option on each access. Fastify keeps the route's context, whose `config`
 * that getter returns, under its own `Symbol('fastify.context')`. The key is
 * found on an instance's first request (`key.found`), and used only if it
 * gives the same `config` as `routeOptions` there; a request without a
 * context under it (another copy of Fastify) reads `routeOptions`, as does
 * every request when no such key was found (and `routeConfig` on Fastify 4
 * before 4.10, which has no `routeOptions`).
 */
function routeConfigOf(request: FastifyRequest, key: { found?: symbol | null }): unknown {
  if (key.found === undefined) key.found = routeContextKey(request);
  const context = key.found === null ? undefined : (request as unknown as Record<symbol, { config?: unknown } | undefined>)[key.found];
  if (context !== undefined) return context.config;
  return request.routeOptions?.config ?? (request as { routeConfig?: unknown }).routeConfig;
}
/** Fastify's route-context key, if it gives this request's `routeOptions.config` (see {@link routeConfigOf}). */
function routeContextKey(request: FastifyRequest): symbol | null {
  const config = (request.routeOptions as { config?: unknown } | undefined)?.config;
  if (typeof config !== 'object' || config === null) return null;
  for (const key of Object.getOwnPropertySymbols(request)) {
    if (key.description !== 'fastify.context') continue;
    const context = (request as unknown as Record<symbol, unknown>)[key];
    return typeof context === 'object' && context !== null && (context as { config?: unknown }).config === config ? key : null;
  }
  return null;
}
/** Adds `names` to the reply's `Vary`, keeping what is there. */
function vary(reply: FastifyReply, names: readonly string[]): void {
  if (names.length > 0) reply.header('vary', appendVary(reply.getHeader('vary'), names));
}
/** An error goes to Fastify's error handler (500) with `Vary: Origin`, no CORS header (not even an earlier ampCors's: core's nested-policies.ts). */
function fail(error: unknown, reply: FastifyReply, done: Done): void {
  removeEarlierCorsHeaders(reply, NO_CORS_HEADERS);
  vary(reply, ['Origin']);
  done(error instanceof Error ? error : new Error(String(error)));
}
/**
 * The payload to send for `payload`, which an `onSend` hook is given: a Fetch `Response` (`reply.send(response)`, one a
 * handler returns), whose headers Fastify copies over the reply's after the hooks, becomes a copy whose `Vary` keeps the
 * reply's names and that carries none of its CORS headers that overrule the reply's (core's response-bodies.ts); the
 * Response itself when it has none of them; anything else as it is (a `typeof`). Throws when the Response cannot be
 * copied (a body already read).
 */
function bodyOf(reply: FastifyReply, payload: unknown): unknown {
  // Fastify's own test for a Response (any Fetch implementation's).
  if (typeof payload !== 'object' || payload === null || Object.prototype.toString.call(payload) !== '[object Response]') return payload;
  const response = payload as Response;
  const ours = reply.getHeader('vary');
  const own = response.headers.get('vary');
  const vary = own === null || ours === undefined ? own : appendVary(own, (Array.isArray(ours) ? ours.join(',') : String(ours)).split(','));
  const overruled = overruledCorsHeaders(response.headers, (name) => reply.hasHeader(name));
  if (overruled.length === 0 && vary === own) return response;
  const headers = new Headers(response.headers);
  for (const name of overruled) headers.delete(name);
  if (vary !== null) headers.set('vary', vary);
  return new Response(response.body, { status: response.status, statusText: response.statusText, headers });
}
/**
 * The preflights an ampCors handed over to the `OPTIONS *` route (preflightContinue): only those are answered there.
 * Shared by every installation: with two ampCors on one path (an app-wide one, a stricter one in a child context), the
 * route of the first answers what either hands over.
 */
const passedOn = new WeakSet<FastifyRequest>();

/** Installs the hook and the `OPTIONS *` route of a validated configuration. */
function install(fastify: FastifyInstance, cors: FastifyCorsPolicy): void {
  const contextKey: { found?: symbol | null } = {}; // Fastify's route-context key (see routeConfigOf)
  /** 3. Applies a decision: headers, verdict, and the answer when core ends the request here. */
  const settle = ({ verdict, plan }: CorsDecision, request: FastifyRequest, reply: FastifyReply, done: Done): void => {
    // An earlier ampCors (a parent context's plugin) decided this request: this one, more specific, decides instead.
    const earlier = request.ampCors !== undefined;
    try {
      // Core's values are checked header values and `reply.header` only records them: all are sent, or (on an error) none.
      // Core's names are in lower case, as Fastify stores them (its own lowering of each then copies nothing).
      const headers = plan.headers;
      for (let i = 0; i < headers.length; i++) {
        const header = headers[i] as readonly [string, string];
        reply.header(header[0], header[1]);
      }
      vary(reply, plan.vary);
      // Its CORS headers that this plan does not set go, as those of any earlier layer that left a grant on the reply
      // (`@fastify/cors`, a hook; a parent's ampCors whose `request.ampCors` was reset): core's nested-policies.ts, 1. and 4.
      if (earlier || earlierGrantLeft(reply, headers)) removeEarlierCorsHeaders(reply, headers);
    } catch (error) {
      return fail(error, reply, done);
    }
    request.ampCors = verdict;
    if (plan.email !== undefined) request.ampCorsEmail = plan.email;
    if (!plan.handled) {
      if (plan.kind === 'preflight') passedOn.add(request);
      return done();
    }
    if (plan.body === '') void reply.code(plan.status).header('content-length', '0').send();
    else void reply.code(plan.status).send(plan.body);
  };
  // In onRequest, so that a denied request (and a preflight) never reaches a later hook or the route.
  fastify.addHook('onRequest', (request, reply, done) => {
    // A layer of another framework on this Node request (Fastify's `routing` mounted in an Express app) may have left CORS
    // headers on the Node response, which Fastify merges under the reply's when it sends them: this one decides instead,
    // and its answer, on the reply, carries all of its own (core's nested-policies.ts, 4.).
    clearEarlierCorsHeaders(reply.raw);
    let decided: ReturnType<FastifyCorsPolicy['decide']>;
    try {
      // 1. Core decides, from the raw request and the route's config (Fastify 4 before 4.10 has no routeOptions; 5, no routeConfig).
      decided = cors.decide(request.raw, routeConfigOf(request, contextKey));
    } catch (error) {
      return fail(error, reply, done);
    }
    if (isThenable(decided))
      decided.then(
        (d) => settle(d, request, reply, done),
        (error: unknown) => fail(error, reply, done),
      );
    else if ('plan' in decided) settle(decided, request, reply, done);
    else {
      // 2. The drop-in's own answers: strictPreflight's 400, or a route with CORS off (status 0: passed on); no CORS header, not even an earlier layer's.
      removeEarlierCorsHeaders(reply, NO_CORS_HEADERS);
      vary(reply, decided.vary);
      if (decided.status === 0) done();
      else void reply.code(decided.status).type(decided.contentType).send(decided.body);
    }
  });
  // A handler's Fetch `Response`: Fastify copies its headers over the reply after this hook (see bodyOf).
  fastify.addHook('onSend', (_request, reply, payload, done) => {
    let body: unknown;
    try {
      body = bodyOf(reply, payload);
    } catch (error) {
      return fail(error, reply, done);
    }
    done(null, body);
  });
  // Lets Fastify route a preflight to a path whose routes define no OPTIONS (answered by the hook, or handed over by preflightContinue).
  const logLevel = cors.logLevel as LogLevel | undefined;
  const routeOptions = { schema: { hide: cors.hideOptionsRoute } as FastifySchema, ...(logLevel !== undefined && { logLevel }) };
  try {
    fastify.options('*', routeOptions, (request, reply) => void (passedOn.has(request) ? reply.send() : reply.callNotFound()));
  } catch (error) {
    // A route already there (an earlier ampCors on the same path, or the application's own) serves instead.
    if ((error as { code?: unknown } | null)?.code !== 'FST_ERR_DUPLICATED_ROUTE') throw error;
  }
  for (const name of ['ampCors', 'ampCorsEmail']) if (!fastify.hasRequestDecorator(name)) fastify.decorateRequest(name, undefined); // Request shape kept stable.
}

/** The plugin: a configuration error goes to Fastify (`register`/`ready` rejects), never thrown out of the loader. */
const plugin: FastifyPluginCallback<FastifyAmpCorsOptions> = (fastify, options, next) => {
  try {
    install(fastify, createFastifyCorsPolicy(options, fastify, 'ampCors (@ampcors/fastify)'));
  } catch (error) {
    return next(error instanceof Error ? error : new Error(String(error)));
  }
  next();
};

/**
 * The ampcors plugin for Fastify 4 and 5 (`fastify-plugin`: its context and the children). With `publishers` (or `verifier`): trusts
 * the publisher's origins and AMP cache origins, answers preflights, stops denied origins with 403 in `onRequest`, sets `request.ampCors`.
 * With `@fastify/cors`'s options (`origin`, or none): behaves as `@fastify/cors`, except its unsafe cases (see the README). Errors: 500.
 * @throws AmpCorsError for an invalid configuration (when Fastify loads the plugin).
 * @example await app.register(ampCors, { publishers: ['example.com'] })
 */
export const ampCors = fp(plugin, { fastify: '4.x || 5.x', name: '@ampcors/fastify' });
export default ampCors;
