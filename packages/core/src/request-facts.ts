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
  // Only an OPTIONS request is ever answered as a preflight (SPEC §7): the preflight headers of any other are never read.
  const options = method === 'OPTIONS' || method.toUpperCase() === 'OPTIONS';
  return {
    method,
    origin: header('origin') ?? null,
    ampSameOrigin: header('amp-same-origin') ?? null,
    requestMethod: preflight && options ? (header('access-control-request-method') ?? null) : null,
    requestHeaders: options ? (header('access-control-request-headers') ?? null) : null,
    requestPrivateNetwork: options ? (header('access-control-request-private-network') ?? null) : null,
    emailSender: header('amp-email-sender') ?? null,
    sourceOrigin: sourceOriginOfUrl(url),
    secFetchSite: header('sec-fetch-site') ?? null,
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
  const headers = req.headers;
  return requestFacts(req.method ?? 'GET', url ?? req.url ?? '/', (name) => nodeHeader(headers, name), preflight);
}

/** The {@link CorsRequest} of a Fetch API `Request` (the Fetch adapter, Hono). */
export function fetchRequestFacts(request: {
  readonly method: string;
  readonly url: string;
  readonly headers: { get(name: string): string | null };
}): CorsRequest {
  const headers = request.headers;
  return requestFacts(request.method, request.url, (name) => headers.get(name));
}

/** True when `value` is a Promise or any other thenable (a verdict source or a callback may answer either way). */
export function isThenable<T>(value: T | PromiseLike<T>): value is PromiseLike<T> {
  return typeof (value as { then?: unknown } | null)?.then === 'function';
}
