/**
 * @ampcors/fastify — AMP-aware CORS plugin for Fastify 4 and 5, and a
 * drop-in replacement for `@fastify/cors`. A thin adapter: every decision
 * and every header comes from @ampcors/core.
 *
 * @packageDocumentation
 */
import type { EmailSender, Verdict } from '@ampcors/core';
import {
  type AmpCorsConfig,
  appendVary,
  askOriginCallback,
  compileOriginOption,
  type CorsDecision,
  createCorsPolicy,
  judgeWithOriginMatcher,
  nodeRequestFacts,
  type OriginMatcher,
  type OriginOption,
  type VerdictSource,
} from '@ampcors/core/adapter';
import type { FastifyInstance, FastifyPluginCallback, FastifyReply, FastifyRequest, FastifySchema, LogLevel } from 'fastify';
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

/** `@fastify/cors`'s origin function: calls back with an {@link OriginOption}, or returns a Promise of it (`this` is the Fastify instance). */
export type OriginFunction = (
  this: FastifyInstance,
  origin: string | undefined,
  callback: (error: Error | null, allow?: OriginOption) => void,
) => void | Promise<OriginOption>;

/**
 * Options of {@link ampCors}: the ampcors configuration, plus the options of
 * `@fastify/cors` under their own names.
 */
export interface FastifyAmpCorsOptions extends AmpCorsConfig {
  /**
   * `@fastify/cors`'s `origin`: an exact origin, `'*'`, a RegExp, an array,
   * `true` (any), `false` (none) or an {@link OriginFunction}. With
   * `publishers` or `verifier` it adds origins; alone, it decides. With
   * credentials, an option allowing origins nobody names is refused.
   */
  readonly origin?: OriginOption | OriginFunction;
  /** Alias of `preflightStatus` (`@fastify/cors`'s name). */
  readonly optionsSuccessStatus?: number;
  /** Answer preflights (default `true`); `false` treats an `OPTIONS` as any other request. */
  readonly preflight?: boolean;
  /** Answer an `OPTIONS` without `Origin` or `Access-Control-Request-Method` with 400 (default `true`). */
  readonly strictPreflight?: boolean;
  /** Hide the `OPTIONS *` route from documentation generators (default `true`). */
  readonly hideOptionsRoute?: boolean;
  /** Only `'onRequest'` (the default): a denied request never reaches a later hook or the route. */
  readonly hook?: 'onRequest';
  /** The log level of the `OPTIONS *` route. */
  readonly logLevel?: LogLevel;
}

/** How an adapter's options are checked and mapped (core's `AdapterOptionsSpec`). */
type AdapterOptionsSpec = Exclude<Parameters<typeof createCorsPolicy>[1], boolean | undefined>;

/** `@fastify/cors`'s default methods, used when its `origin` option (or nothing) decides. */
const FASTIFY_CORS_METHODS = 'GET,HEAD,POST';

/** Fastify's own registration options, which reach a plugin among its options. */
const REGISTER_KEYS = ['prefix', 'logLevel', 'logSerializers'];

/** Maps `@fastify/cors`'s names onto ampcors's, with its defaults when its `origin` option decides; a static `origin` is compiled into `compiled`. */
function fastifySpec(compiled: { matcher?: OriginMatcher }): AdapterOptionsSpec {
  return {
    entry: 'ampCors (@ampcors/fastify)',
    keys: ['origin', 'optionsSuccessStatus', 'preflight', 'strictPreflight', 'hideOptionsRoute', 'hook'],
    originKey: 'origin',
    aliases: { allowMethods: 'methods', allowHeaders: 'allowedHeaders', exposeHeaders: 'exposedHeaders', allowOrigin: 'origin', allowedOrigins: 'origin' },
    allowNothing: 'To allow no cross-origin request on purpose, pass origin: false (or leave ampCors out: same-origin requests need no CORS).',
    allowAny: 'For a public API that any origin may read without credentials, register ampCors with no options (Access-Control-Allow-Origin: *).',
    map(given, mode, problems) {
      const { origin, optionsSuccessStatus, preflight, strictPreflight, hideOptionsRoute, hook, ...rest } = given as FastifyAmpCorsOptions;
      for (const [name, value] of Object.entries({ preflight, strictPreflight, hideOptionsRoute })) {
        if (value !== undefined && typeof value !== 'boolean') problems.add('invalid-option', `${name} must be true or false`);
      }
      if (hook !== undefined && hook !== 'onRequest')
        problems.add('invalid-option', "hook must be 'onRequest': a later hook would let a denied request run earlier hooks, or the route itself");
      if (rest.preflightStatus !== undefined && optionsSuccessStatus !== undefined)
        problems.add('invalid-option', 'give preflightStatus or its alias optionsSuccessStatus, not both');
      const dropIn = origin !== undefined;
      const credentials = rest.credentials ?? mode === 'amp';
      if (dropIn && typeof origin !== 'function') compiled.matcher = problems.attempt(() => compileOriginOption(origin, { credentials }));
      return {
        ...rest,
        ...(rest.methods === undefined && mode !== 'amp' && { methods: FASTIFY_CORS_METHODS }),
        ...(optionsSuccessStatus !== undefined && { preflightStatus: optionsSuccessStatus }),
        ...(mode !== 'any-origin' && { credentials }),
        ...(dropIn && { onDenied: rest.onDenied ?? 'omit' }),
      };
    },
  };
}

/** Validates the options and installs the hook, the decorators and the `OPTIONS *` route. */
function install(fastify: FastifyInstance, options: FastifyAmpCorsOptions): void {
  // Anything but an object (`@fastify/cors`'s options delegator, a function) is left for core to refuse, never read as "no options".
  const given: unknown =
    typeof options === 'object' && options !== null && !Array.isArray(options)
      ? Object.fromEntries(Object.entries(options).filter(([key]) => !REGISTER_KEYS.includes(key)))
      : options;
  const compiled: { matcher?: OriginMatcher } = {};
  const policy = createCorsPolicy(given as AmpCorsConfig, fastifySpec(compiled));
  const { origin, preflight = true, strictPreflight = true, hideOptionsRoute = true } = given as FastifyAmpCorsOptions;
  const matcher = compiled.matcher;
  // An origin function is asked about canary origins now: one allowing every origin is refused with credentials, like `true`.
  const source: VerdictSource | null =
    typeof origin === 'function'
      ? policy.guardOriginFunction((asked) =>
          // A Promise's value is the answer, even `undefined` (as @fastify/cors reads it): never a wait for a callback nobody calls.
          askOriginCallback((answer) => origin.call(fastify, asked, answer), { promiseAnswers: true }),
        )()
      : matcher === undefined
        ? null
        : { verify: (raw, context) => judgeWithOriginMatcher(matcher, raw, context) };
  const preflights = new WeakSet<FastifyRequest>();
  // Declared up front (Fastify keeps the request's shape stable); `undefined` until the hook runs.
  if (!fastify.hasRequestDecorator('ampCors')) fastify.decorateRequest('ampCors', undefined);
  if (!fastify.hasRequestDecorator('ampCorsEmail')) fastify.decorateRequest('ampCorsEmail', undefined);

  /** Applies a decision; true when the response was ended here. */
  const apply = ({ verdict, plan }: CorsDecision, request: FastifyRequest, reply: FastifyReply): boolean => {
    // Core's values are checked header values and `reply.header` only records them: all are sent, or (on an error) none.
    for (const [name, value] of plan.headers) reply.header(name, value);
    if (plan.vary.length > 0) reply.header('Vary', appendVary(reply.getHeader('vary'), plan.vary));
    request.ampCors = verdict;
    if (plan.email !== undefined) request.ampCorsEmail = plan.email;
    if (plan.kind === 'preflight') preflights.add(request);
    if (!plan.handled) return false;
    if (plan.body === '') void reply.code(plan.status).header('Content-Length', '0').send();
    else void reply.code(plan.status).send(plan.body);
    return true;
  };
  /** An error goes to Fastify's error handler (500) with `Vary: Origin`, no CORS header. */
  const fail = (error: unknown, reply: FastifyReply, done: (error?: Error) => void): void => {
    reply.header('Vary', appendVary(reply.getHeader('vary'), ['Origin']));
    done(error instanceof Error ? error : new Error(String(error)));
  };
  const settle = (decision: CorsDecision, request: FastifyRequest, reply: FastifyReply, done: (error?: Error) => void): void => {
    let handled: boolean;
    try {
      handled = apply(decision, request, reply);
    } catch (error) {
      return fail(error, reply, done);
    }
    if (!handled) done();
  };

  // In onRequest, so that a denied request (and a preflight) never reaches a later hook or the route.
  fastify.addHook('onRequest', (request, reply, done) => {
    let decided: CorsDecision | Promise<CorsDecision>;
    try {
      // 1. `@fastify/cors`'s strict preflight: an OPTIONS that is no CORS preflight is a 400.
      if (preflight && strictPreflight && request.method === 'OPTIONS' && (!request.headers.origin || !request.headers['access-control-request-method'])) {
        if (policy.mode !== 'any-origin') reply.header('Vary', appendVary(reply.getHeader('vary'), ['Origin']));
        void reply.code(400).type('text/plain').send('Invalid Preflight Request');
        return;
      }
      // 2. Core decides, from the request's facts.
      decided = policy.decide(nodeRequestFacts(request.raw, undefined, preflight), source);
    } catch (error) {
      return fail(error, reply, done);
    }
    // 3. Its plan is applied: headers, verdict, and the answer when core ends the request here.
    if (decided instanceof Promise)
      decided.then(
        (settled) => settle(settled, request, reply, done),
        (error: unknown) => fail(error, reply, done),
      );
    else settle(decided, request, reply, done);
  });
  // Lets Fastify route a preflight to a path whose routes define no OPTIONS (answered by the hook, or handed over by preflightContinue).
  fastify.options(
    '*',
    { schema: { hide: hideOptionsRoute } as FastifySchema, ...(options.logLevel !== undefined && { logLevel: options.logLevel }) },
    (request, reply) => {
      if (preflights.has(request)) void reply.send();
      else void reply.callNotFound();
    },
  );
}

/** The plugin: a configuration error goes to Fastify (`register`/`ready` rejects), never thrown out of the loader. */
const plugin: FastifyPluginCallback<FastifyAmpCorsOptions> = (fastify, options, next) => {
  try {
    install(fastify, options);
  } catch (error) {
    return next(error instanceof Error ? error : new Error(String(error)));
  }
  next();
};

/**
 * The ampcors plugin for Fastify 4 and 5 (`fastify-plugin`: it applies to
 * the context it is registered in and its children).
 *
 * With `publishers` (or `verifier`): trusts the publisher's origins and its
 * AMP cache origins, answers preflights (an `OPTIONS *` route lets Fastify
 * route them), stops denied origins with 403 in `onRequest`, before any
 * later hook or the route (`onDenied: 'omit'` lets them through without
 * CORS headers), and sets `request.ampCors` to the verdict.
 *
 * With `@fastify/cors`'s options (`origin`, or nothing): behaves as
 * `@fastify/cors` does, including its defaults (credentials off, methods
 * `GET,HEAD,POST`, denied origins passed on without headers, strict
 * preflights), except its unsafe cases: with credentials, an option or
 * origin function allowing every origin is refused, and `allowedHeaders`
 * `'*'` is refused.
 *
 * Errors (a throwing verifier or origin function) go to Fastify's error
 * handler (500) with `Vary: Origin` and no CORS header.
 *
 * @throws AmpCorsError for an invalid configuration (when Fastify loads the plugin).
 * @example await app.register(ampCors, { publishers: ['example.com'] })
 */
export const ampCors = fp(plugin, { fastify: '4.x || 5.x', name: '@ampcors/fastify' });
export default ampCors;
