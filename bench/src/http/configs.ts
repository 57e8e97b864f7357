/**
 * The HTTP configurations compared, and the requests sent to them. Every
 * configuration trusts the same ten publishers; the requests come from the
 * Google AMP cache origin of the first one, with its `__amp_source_origin`
 * (toolbox-cors acts only on requests that carry it).
 */
import { CACHES, domainPrefix } from '@ampcors/core';
import { publisherDomains } from '../fixtures.js';

/** Names of the servers `server.ts` can start. */
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
] as const;

/** One configuration name. */
export type ConfigName = (typeof CONFIGS)[number];

/** The hello-world baseline of each configuration's framework. */
export function baselineOf(config: ConfigName): ConfigName {
  return config.startsWith('express') ? 'express' : config.startsWith('koa') ? 'koa' : 'fetch';
}

/** The publishers every configuration trusts. */
export const PUBLISHERS = publisherDomains(10).filter((d) => domainPrefix(d).includes('-'));

/** Origins for the `cors` and `@koa/cors` origin lists: each publisher's own and its cache origins. */
export const ORIGIN_LIST: readonly string[] = PUBLISHERS.flatMap((domain) => [
  `https://${domain}`,
  ...CACHES.map((cache) => `https://${domainPrefix(domain)}.${cache.cacheDomain}`),
]);

/** The request origin: the first publisher's page on the Google AMP cache. */
export const REQUEST_ORIGIN = `https://${domainPrefix(PUBLISHERS[0] as string)}.${(CACHES[0] as (typeof CACHES)[number]).cacheDomain}`;

/** The request path, with the legacy source origin the AMP runtime appends. */
export const REQUEST_PATH = `/api/items?__amp_source_origin=${encodeURIComponent(`https://${PUBLISHERS[0] as string}`)}`;

/** The two request kinds measured. */
export const REQUESTS = {
  get: { method: 'GET', headers: { origin: REQUEST_ORIGIN } },
  preflight: {
    method: 'OPTIONS',
    headers: { origin: REQUEST_ORIGIN, 'access-control-request-method': 'POST', 'access-control-request-headers': 'content-type' },
  },
} as const;

/** A request kind. */
export type RequestKind = keyof typeof REQUESTS;
