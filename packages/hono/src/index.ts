/**
 * @ampcors/hono — AMP-aware CORS middleware for Hono 4 (Node, Bun, Deno, Cloudflare Workers), a drop-in for `hono/cors`.
 * Hono's request → @ampcors/core (`hono/cors`'s options: its drop-in-hono-cors.ts) → Hono's response.
 * @packageDocumentation
 */
import type { EmailSender, Verdict } from '@ampcors/core';
import {
  appendVary,
  type CorsPlan,
  createHonoCorsPolicy,
  fetchRequestFacts,
  type HonoCorsOptions,
  type HonoMethodsFunction as MethodsFunction,
  type HonoOriginFunction as OriginFunction,
  isThenable,
  nodeRequestAbout,
} from '@ampcors/core/adapter';
import { Context, type MiddlewareHandler } from 'hono';

export { ampRedirectTo, AmpCorsError, type CorsOptions, type Verdict } from '@ampcors/core';
export type { AmpCorsConfig, VerdictSource } from '@ampcors/core/adapter';

/** Options of {@link ampCors}: the ampcors configuration, plus the options of `hono/cors` under their own names. */
export type HonoAmpCorsOptions = HonoCorsOptions<Context>;
/** `hono/cors`'s origin function, given Hono's context. */
export type HonoOriginFunction = OriginFunction<Context>;
/** `hono/cors`'s methods function, given Hono's context. */
export type HonoMethodsFunction = MethodsFunction<Context>;

/** What the middleware sets on the context: type the app with it, `new Hono<{ Variables: AmpCorsVariables }>()`. */
export interface AmpCorsVariables {
  /** The ampcors verdict of this request. */
  ampCors: Verdict;
  /** The AMP for Email sender, when `email` is configured and the request is one. */
  ampCorsEmail?: EmailSender;
}

/**
 * A new context like `c` (URL, method, headers, `env`) whose `Origin` is `origin`, for questions about another origin
 * (a canary, the `__amp_source_origin`): an answer cannot change the request's variables or response.
 */
function contextAbout(c: Context, origin: string): Context {
  const raw = c.req.raw;
  return new Context(new Request(raw.url, { method: raw.method, headers: { ...Object.fromEntries(raw.headers), origin } }), { env: envAbout(c.env, origin) });
}

/** `env`, with `@hono/node-server`'s Node request (`env.incoming`) made about `origin` too: an answer reading its headers sees the question's `Origin`. */
function envAbout(env: unknown, origin: string): unknown {
  const incoming = (env as { incoming?: unknown } | null | undefined)?.incoming;
  if (typeof incoming !== 'object' || incoming === null) return env;
  return { ...(env as object), incoming: nodeRequestAbout(incoming, origin) };
}

/** Extends `Vary` and sets the plan's headers on `into`; on immutable headers the first `set` throws, so nothing is half-applied. */
function setPlan(plan: Pick<CorsPlan, 'headers' | 'vary'>, into: Headers): void {
  if (plan.vary.length > 0) into.set('Vary', appendVary(into.get('Vary'), plan.vary));
  for (const [name, value] of plan.headers) into.set(name, value);
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
 * Creates the ampcors middleware for Hono 4. With `publishers` (or `verifier`): trusts the publisher's origins and
 * its AMP cache origins, answers preflights, stops denied origins with 403 before the handler runs (`onDenied:
 * 'omit'` lets them through without CORS headers), and sets `c.get('ampCors')` to the verdict. With `hono/cors`'s
 * options (`origin`, or nothing): behaves as `hono/cors` does, except that, with credentials, an option allowing
 * every origin (`'*'`, `(origin) => origin`) is refused (core's drop-in-hono-cors.ts). Never throws per request:
 * a throwing verifier or origin function becomes a 500 with `Vary: Origin` and no CORS header; the handler's own
 * errors are left to hono's `onError`, and its response gets the CORS headers like any other.
 * @throws AmpCorsError for an invalid configuration.
 * @example app.use('/api/*', ampCors({ publishers: ['example.com'] }))
 */
export function ampCors(options?: HonoAmpCorsOptions): MiddlewareHandler<{ Variables: AmpCorsVariables }> {
  const cors = createHonoCorsPolicy<Context>(
    options,
    { probe: (origin) => new Context(new Request('https://ampcors-probe.invalid/', { headers: { origin } })), about: contextAbout },
    'ampCors (@ampcors/hono)',
  );
  return async function ampCorsMiddleware(c, next) {
    let plan: CorsPlan;
    try {
      const decided = cors.decide(fetchRequestFacts(c.req.raw), c);
      const decision = isThenable(decided) ? await decided : decided;
      plan = decision.plan;
      c.set('ampCors', decision.verdict);
      if (plan.email !== undefined) c.set('ampCorsEmail', plan.email);
      if (plan.handled) return end(c, plan.status, plan.body, plan);
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
      // Immutable headers (a fetch() result, Response.redirect): copied once; Response.error() kept; a body already read: a 500.
      const { body, status, statusText, headers } = c.res;
      if (status < 200) return;
      c.res = undefined;
      try {
        c.res = new Response(body, { status, statusText, headers });
        setPlan(plan, c.res.headers);
      } catch {
        end(c, 500, 'Internal Server Error\n', FAILED);
      }
    }
  };
}
