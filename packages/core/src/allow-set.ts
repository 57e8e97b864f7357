import type { AmpCache } from './caches.js';
import { type PrefixForm, prefixForms } from './domain-prefix.js';

/** What the allow-set knows of one accepted cache origin. */
export interface AllowEntry {
  /** The configured publisher domain (canonical ASCII) the origin belongs to. */
  readonly publisherDomain: string;
  /** The cache of the origin. */
  readonly cache: AmpCache;
  /** The origin's domain prefix. */
  readonly prefix: string;
  /** The algorithm that produced the prefix from the publisher domain. */
  readonly form: PrefixForm;
}

/**
 * The precomputed allow-set (SPEC §4 step 2, §6): every cache origin that a
 * real cache may use for a known publisher domain, keyed by the exact origin
 * string a browser sends. An allowed cache origin costs one hash-table lookup
 * on the raw header, with no SHA-256 or punycode at request time; a key can
 * only match a header that is byte for byte canonical.
 */
export interface CacheOriginAllowSet {
  /** The entry for a raw `Origin` header, if it is an accepted cache origin. */
  get(origin: string): AllowEntry | undefined;
  /** Number of accepted cache origins. */
  readonly size: number;
  /** Every accepted cache origin with its entry (for tools and tests). */
  entries(): IterableIterator<[string, AllowEntry]>;
}

/**
 * Builds the allow-set for canonical publisher domains and caches: for each
 * domain, every form of {@link prefixForms} (the guide's, toolbox's, the
 * ASCII and Unicode hashes), on every cache. When two configured domains
 * share an origin (possible only across algorithms), the first one listed is
 * reported; both are configured, so either answer allows correctly.
 */
export function buildAllowSet(domains: Iterable<string>, caches: readonly AmpCache[]): CacheOriginAllowSet {
  const map = new Map<string, AllowEntry>();
  for (const publisherDomain of domains) {
    for (const { prefix, form } of prefixForms(publisherDomain)) {
      for (const cache of caches) {
        const origin = `https://${prefix}.${cache.cacheDomain}`;
        if (!map.has(origin)) map.set(origin, { publisherDomain, cache, prefix, form });
      }
    }
  }
  return {
    get: (origin) => map.get(origin),
    get size() {
      return map.size;
    },
    entries: () => map.entries(),
  };
}
