/**
 * The request facts every adapter hands to core (SPEC §7): read once from
 * the framework's request, the same way in every adapter, so that no adapter
 * can read a header another one ignores.
 */
import type { CorsRequest } from './cors-plan.js';
import { sourceOriginOfUrl } from './source-origin.js';

/** Reads one request header by its lower-case name: its value, or `null`/`undefined` when absent. */
export type HeaderLookup = (name: string) => string | null | undefined;

/** The header map of a Node `IncomingMessage` (and of Fastify's request): repeated headers may be arrays. */
export type NodeHeaders = Readonly<Record<string, string | readonly string[] | undefined>>;

/**
 * The {@link CorsRequest} of a request, from its method, its URL (a path
 * with its query, or an absolute URL) and a header lookup.
 *
 * @param preflight - `false` answers an `OPTIONS` as any other request (Fastify's `preflight: false`): `Access-Control-Request-Method` is not read.
 */
export function requestFacts(method: string, url: string, header: HeaderLookup, preflight = true): CorsRequest {
  return factsOf(method, url, header, callLookup, preflight);
}

/** A {@link HeaderLookup} asked for one header. */
function callLookup(lookup: HeaderLookup, name: string): string | null | undefined {
  return lookup(name);
}

/**
 * The facts of a request whose headers `read(headers, name)` reads: a plain
 * function and its headers, not a closure made per request.
 */
function factsOf<H>(method: string, url: string, headers: H, read: (headers: H, name: string) => string | null | undefined, preflight: boolean): CorsRequest {
  // Only an OPTIONS request is ever answered as a preflight (SPEC §7): the preflight headers of any other are never read.
  const options = method === 'OPTIONS' || method.toUpperCase() === 'OPTIONS';
  return {
    method,
    origin: read(headers, 'origin') ?? null,
    ampSameOrigin: read(headers, 'amp-same-origin') ?? null,
    requestMethod: preflight && options ? (read(headers, 'access-control-request-method') ?? null) : null,
    requestHeaders: options ? (read(headers, 'access-control-request-headers') ?? null) : null,
    requestPrivateNetwork: options ? (read(headers, 'access-control-request-private-network') ?? null) : null,
    emailSender: read(headers, 'amp-email-sender') ?? null,
    sourceOrigin: sourceOriginOfUrl(url),
    secFetchSite: read(headers, 'sec-fetch-site') ?? null,
  };
}

/**
 * A header of a Node header map, a repeated header's values joined with
 * `, ` (as HTTP folds them), or `null`.
 */
export function nodeHeader(headers: NodeHeaders, name: string): string | null {
  const value = headers[name];
  if (value === undefined) return null;
  return typeof value === 'string' ? value : value.join(', ');
}

/**
 * The {@link CorsRequest} of a Node request (Express, Koa, Fastify's raw
 * request). `url` is the URL as the client sent it (Express's `originalUrl`,
 * Koa's `ctx.originalUrl`): a mounted router's rewritten `req.url` may have
 * lost nothing of the query, but the original is what the client signed.
 */
export function nodeRequestFacts(
  req: { readonly method?: string; readonly url?: string; readonly headers: NodeHeaders },
  url?: string,
  preflight = true,
): CorsRequest {
  return factsOf(req.method ?? 'GET', url ?? req.url ?? '/', req.headers, nodeHeader, preflight);
}

/** The {@link CorsRequest} of a Fetch API `Request` (the Fetch adapter, Hono). */
export function fetchRequestFacts(request: {
  readonly method: string;
  readonly url: string;
  readonly headers: { get(name: string): string | null };
}): CorsRequest {
  return factsOf(request.method, request.url, request.headers, fetchHeader, true);
}

/** A header of a Fetch API `Headers`. */
function fetchHeader(headers: { get(name: string): string | null }, name: string): string | null {
  return headers.get(name);
}

/** True when `value` is a Promise or any other thenable (a verdict source or a callback may answer either way). */
export function isThenable<T>(value: T | PromiseLike<T>): value is PromiseLike<T> {
  return typeof (value as { then?: unknown } | null)?.then === 'function';
}
