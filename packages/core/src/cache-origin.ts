import type { AmpCache } from './caches.js';
import type { ParsedOrigin } from './origin-header.js';

/**
 * The registered caches keyed by `cacheDomain` (SPEC §1): finding the cache
 * of a host walks the host's dots, so its cost depends on the number of
 * labels, never on the number of caches. A cache domain listed twice names
 * the same origins: the first entry wins.
 */
export interface CacheIndex {
  /** The first cache listed for each cache domain. */
  readonly byDomain: ReadonlyMap<string, AmpCache>;
  /** One cache per cache domain, in list order. */
  readonly unique: readonly AmpCache[];
  /** Length of the longest cache domain: longer host suffixes are never looked up. */
  readonly longestDomain: number;
}

const INDEXES = new WeakMap<readonly AmpCache[], CacheIndex>();

/** The {@link CacheIndex} of a caches list, built once per frozen list (validated lists are frozen). */
export function cacheIndexOf(caches: readonly AmpCache[]): CacheIndex {
  const known = INDEXES.get(caches);
  if (known) return known;
  const byDomain = new Map<string, AmpCache>();
  let longestDomain = 0;
  for (const cache of caches) {
    if (byDomain.has(cache.cacheDomain)) continue;
    byDomain.set(cache.cacheDomain, cache);
    longestDomain = Math.max(longestDomain, cache.cacheDomain.length);
  }
  const index: CacheIndex = { byDomain, unique: [...byDomain.values()], longestDomain };
  // A list that may still change is indexed afresh on every call.
  if (Object.isFrozen(caches)) INDEXES.set(caches, index);
  return index;
}

/**
 * SPEC §4 step 1: the registered cache whose `.cacheDomain` ends `host`
 * (then `prefix` is the rest), or whose domain `host` is (`prefix` null).
 * O(labels of host) map lookups; of nested cache domains, the longest wins.
 */
export function findCacheOfHost(host: string, caches: readonly AmpCache[]): { cache: AmpCache; prefix: string | null } | undefined {
  const { byDomain, longestDomain } = cacheIndexOf(caches);
  const root = byDomain.get(host);
  if (root) return { cache: root, prefix: null };
  // A whole label before the cache domain: never an empty prefix (dot at 0).
  for (let dot = host.indexOf('.', 1); dot >= 0; dot = host.indexOf('.', dot + 1)) {
    if (host.length - dot - 1 > longestDomain) continue;
    const cache = byDomain.get(host.slice(dot + 1));
    if (cache) return { cache, prefix: host.slice(0, dot) };
  }
  return undefined;
}

/** Why an origin is not a cache origin with a domain prefix. */
export type CacheOriginFailure = 'unknown-cache' | 'insecure-scheme' | 'non-default-port' | 'cache-root' | 'not-a-label';

/** What {@link checkCacheOrigin} returns. */
export type CacheOriginCheck =
  | { readonly ok: true; readonly cache: AmpCache; readonly prefix: string }
  | { readonly ok: false; readonly reason: CacheOriginFailure; readonly detail: string; readonly cache?: AmpCache; readonly prefix?: string };

/**
 * The cache-origin checks, written once (SPEC §1, §4 step 1): the host is on
 * a registered cache, the origin is https on the default port, and what is
 * left of the host once `.cacheDomain` is removed is one DNS label (TLS
 * wildcard certificates match one label). In that order, so the first
 * failure names the cache when there is one.
 */
export function checkCacheOrigin(parsed: ParsedOrigin, caches: readonly AmpCache[]): CacheOriginCheck {
  const found = findCacheOfHost(parsed.host, caches);
  if (!found) return { ok: false, reason: 'unknown-cache', detail: `${parsed.host} is not on a registered cache` };
  const { cache, prefix } = found;
  if (parsed.scheme !== 'https') return { ok: false, reason: 'insecure-scheme', detail: 'cache origins are always https', cache };
  if (parsed.port !== null) return { ok: false, reason: 'non-default-port', detail: 'cache origins use the default port', cache };
  if (prefix === null) return { ok: false, reason: 'cache-root', detail: `${cache.cacheDomain} itself has no domain prefix`, cache };
  if (prefix.includes('.')) return { ok: false, reason: 'not-a-label', detail: 'a domain prefix is a single DNS label', cache, prefix };
  return { ok: true, cache, prefix };
}
