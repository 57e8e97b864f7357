/**
 * The configurations compared (in process and over HTTP), and the requests
 * sent to them. Every configuration trusts the same publishers; the requests
 * come from the Google AMP cache origin of the first one: a GET without and
 * with the legacy `__amp_source_origin` the AMP runtime appends, and the
 * preflight of a POST with `content-type`.
 */
import { CACHES, domainPrefix } from '@ampcors/core';
import { publisherDomains } from '../fixtures.js';

/** Names of the configurations `apps.ts` builds. */
export const CONFIGS = [
  'express',
  'express+cors',
  'express+toolbox-cors',
  'express+ampcors',
  'express+static-headers',
  'koa',
  'koa+@koa/cors',
  'koa+ampcors',
  'koa+static-headers',
  'fetch',
  'fetch+ampcors',
  'fetch+static-headers',
  'hono',
  'hono+hono/cors',
  'hono+ampcors',
  'fastify',
  'fastify+@fastify/cors',
  'fastify+ampcors',
  'fastify+static-headers',
] as const;

/** One configuration name. */
export type ConfigName = (typeof CONFIGS)[number];

/** The framework (hello-world app) a configuration is built on. */
export type Framework = 'express' | 'koa' | 'fetch' | 'hono' | 'fastify';

/** The framework of a configuration: its part before `+`. */
export function frameworkOf(config: ConfigName): Framework {
  return config.split('+')[0] as Framework;
}

/** The hello-world baseline of each configuration's framework. */
export function baselineOf(config: ConfigName): ConfigName {
  return frameworkOf(config);
}

/** The peer CORS middleware measured against ampcors on each framework (equal work: see apps.ts). */
export const PEER_OF: Readonly<Record<Framework, ConfigName | null>> = {
  express: 'express+cors',
  koa: 'koa+@koa/cors',
  fetch: 'hono+hono/cors',
  hono: 'hono+hono/cors',
  fastify: 'fastify+@fastify/cors',
};

/** The publishers every configuration trusts (hashed-prefix ones excluded: the request's prefix is readable). */
export const PUBLISHERS = publisherDomains(10).filter((d) => domainPrefix(d).includes('-'));

/** Origins for the peers' origin lists: each publisher's own and its cache origins. */
export const ORIGIN_LIST: readonly string[] = PUBLISHERS.flatMap((domain) => [
  `https://${domain}`,
  ...CACHES.map((cache) => `https://${domainPrefix(domain)}.${cache.cacheDomain}`),
]);

/** The request origin: the first publisher's page on the Google AMP cache. */
export const REQUEST_ORIGIN = `https://${domainPrefix(PUBLISHERS[0] as string)}.${(CACHES[0] as (typeof CACHES)[number]).cacheDomain}`;

/** The legacy source origin the AMP runtime appends (the first publisher's own origin). */
export const SOURCE_ORIGIN = `https://${PUBLISHERS[0] as string}`;

/** The path of every request. */
export const BASE_PATH = '/api/items';

/** The path with `__amp_source_origin`. */
export const SOURCE_PATH = `${BASE_PATH}?__amp_source_origin=${encodeURIComponent(SOURCE_ORIGIN)}`;

/** One request template. */
export interface RequestTemplate {
  readonly method: 'GET' | 'OPTIONS';
  readonly path: string;
  readonly headers: Readonly<Record<string, string>>;
  /** What the report calls it. */
  readonly label: string;
}

/** The three request kinds measured. */
export const REQUESTS = {
  get: { method: 'GET', path: BASE_PATH, headers: { origin: REQUEST_ORIGIN }, label: 'AMP cache origin GET' },
  'get-source': { method: 'GET', path: SOURCE_PATH, headers: { origin: REQUEST_ORIGIN }, label: 'GET with `__amp_source_origin`' },
  preflight: {
    method: 'OPTIONS',
    path: SOURCE_PATH,
    headers: { origin: REQUEST_ORIGIN, 'access-control-request-method': 'POST', 'access-control-request-headers': 'content-type' },
    label: 'preflight (POST, `content-type`)',
  },
} as const satisfies Record<string, RequestTemplate>;

/** A request kind. */
export type RequestKind = keyof typeof REQUESTS;

/** Every request kind, in report order. */
export const KINDS: readonly RequestKind[] = ['get', 'get-source', 'preflight'];

/** The `Host` the requests carry. */
export const HOST = '127.0.0.1:18400';

/** The response body of every hello world. */
export const BODY = 'hello world';
