import type { AmpCache } from './caches.js';
import { type ParsedOrigin, parseOrigin } from './origin-header.js';

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
  /** The caches of {@link CacheIndex.unique} by the length of their domain (read by {@link cacheEndingAt}). */
  readonly byLength: readonly (readonly AmpCache[] | undefined)[];
  /**
   * True when every cache domain is canonical (a label before it makes a
   * canonical origin) and none lies under another, as `validateCaches` ensures. Only a
   * raw list given to the lower-level functions can fail this; then
   * {@link plainCacheOriginOf} answers nothing and the general path decides.
   */
  readonly simple: boolean;
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
  let simple = true;
  for (const domain of byDomain.keys()) {
    // A label before the cache domain makes an origin parseOrigin accepts as sent.
    simple &&= parseOrigin(`https://a.${domain}`).ok;
    for (let dot = domain.indexOf('.'); dot >= 0 && simple; dot = domain.indexOf('.', dot + 1)) simple = !byDomain.has(domain.slice(dot + 1));
  }
  const byLength: AmpCache[][] = [];
  for (const cache of byDomain.values()) (byLength[cache.cacheDomain.length] ??= []).push(cache);
  const index: CacheIndex = { byDomain, unique: [...byDomain.values()], longestDomain, byLength, simple };
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

/**
 * The cache whose domain is exactly `text` from `start` to its end: when one
 * cache domain has that length (the usual case) it is compared in place (no
 * slice, no hashing: the request path's cache lookup), else the map is asked,
 * so the cost never grows with the number of caches.
 */
export function cacheEndingAt(text: string, start: number, index: CacheIndex): AmpCache | undefined {
  const candidates = index.byLength[text.length - start];
  if (candidates === undefined) return undefined;
  if (candidates.length > 1) return index.byDomain.get(text.slice(start));
  const only = candidates[0] as AmpCache;
  // Of the same length as the rest of `text`: ending `text` is being it from `start` (endsWith costs V8 less than startsWith at a position).
  return text.endsWith(only.cacheDomain) ? only : undefined;
}

/** A cache origin recognized by {@link plainCacheOriginOf}. */
export interface PlainCacheOrigin {
  /** The cache of the origin. */
  readonly cache: AmpCache;
  /** The domain prefix: one label of `a`–`z`, `0`–`9` and inner `-`, at most 63 octets. */
  readonly prefix: string;
  /** The 32-bit FNV-1a hash of the prefix, made in the scan that recognized it (the table's and the verifier's memo slot): not for security. */
  readonly hash: number;
}

/** Longest host name (RFC 1035), as origin-header.ts caps it: twin of its check, keep in step. */
const MAX_HOST_LENGTH = 253;

/**
 * The request path's fast recognizer of the commonest cache origin (SPEC §4.3
 * checks 1–6 by construction, without parsing): `https://` + one label of
 * lowercase letters, digits and inner hyphens (at most 63 octets) + `.` + a
 * cache domain of `index`, with nothing else. Such a header is one
 * `parseOrigin` accepts as sent (https, default port, a canonical host of
 * at most 253 octets: the cache domain is canonical, validated) and
 * `findCacheOfHost` reads as (cache, prefix) — provided the cache domains
 * are canonical and none lies under another (`index.simple`, what validation
 * ensures). Anything else, and every list that is not simple, gives `undefined`: the general path then decides, with
 * its reason codes. No allocation beyond the prefix and the result.
 */
export function plainCacheOriginOf(origin: string, index: CacheIndex): PlainCacheOrigin | undefined {
  if (!index.simple || !origin.startsWith('https://')) return undefined;
  const dot = origin.indexOf('.', 8);
  // 8 + at most 63 octets of label; the host (label, dot, cache domain) at most 253.
  if (dot <= 8 || dot > 8 + 63 || origin.length - 8 > MAX_HOST_LENGTH) return undefined;
  const cache = cacheEndingAt(origin, dot + 1, index);
  if (cache === undefined) return undefined;
  let hash = 0x811c9dc5;
  for (let i = 8; i < dot; i++) {
    const c = origin.charCodeAt(i);
    const alnum = (c >= 97 && c <= 122) || (c >= 48 && c <= 57);
    // Inner hyphens only (origin-header.ts's HOST_NAME: no label starts or ends with '-').
    if (!alnum && (c !== 45 || i === 8 || i === dot - 1)) return undefined;
    // Twin of stringHash's FNV-1a (allow-set.ts): keep in step.
    hash = Math.imul(hash ^ c, 0x01000193);
  }
  return { cache, prefix: origin.slice(8, dot), hash: hash >>> 0 };
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
