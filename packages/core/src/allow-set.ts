import { cacheIndexOf } from './cache-origin.js';
import type { AmpCache } from './caches.js';
import { canonicalDomain } from './domain-name.js';
import { hashedPrefixForms, isHashedPrefix, MAX_PREFIX_LENGTH, type PrefixForm } from './domain-prefix.js';
import { acceptedReadableForms } from './prefix-forms.js';

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
 * real cache may use for a known publisher domain and that no unconfigured
 * domain can claim, matched against the exact origin string a browser sends.
 * An allowed cache origin costs hash-table lookups on the raw header, with no
 * SHA-256 or punycode at request time; it can only match a header that is
 * byte for byte canonical.
 */
export interface CacheOriginAllowSet {
  /** The entry for a raw `Origin` header, if it is an accepted cache origin. */
  get(origin: string): AllowEntry | undefined;
  /** Number of accepted cache origins (counting them hashes every domain once). */
  readonly size: number;
  /** Every accepted cache origin with its entry (for tools and tests). */
  entries(): IterableIterator<[string, AllowEntry]>;
}

/** Order of {@link PrefixForm} codes packed into the prefix tables. */
const FORMS: readonly PrefixForm[] = ['spec', 'toolbox', 'amppackager', 'hash-ascii', 'hash-unicode'];
const FORM_CODE: Readonly<Record<PrefixForm, number>> = { spec: 0, toolbox: 1, amppackager: 2, 'hash-ascii': 3, 'hash-unicode': 4 };
const FORM_SLOTS = 8;
const SCHEME = 'https://';
/**
 * Entries remembered per generation of the recent-origin memo: two
 * generations bound it to twice this many (about 10 MB at most).
 */
const MEMO_GENERATION_SIZE = 32_768;

/**
 * Builds the allow-set for publisher domains and caches: for each domain,
 * every accepted form (SPEC §6: the guide's, toolbox's, amppackager's and the
 * ASCII and Unicode hashes) on every cache, except readable forms that a
 * domain outside the list also has. When two configured domains share an
 * origin, the first one listed is reported; both are configured, so either
 * answer allows correctly.
 *
 * @throws AmpCorsError `invalid-domain` for a malformed domain.
 */
export function buildAllowSet(domains: Iterable<string>, caches: readonly AmpCache[]): CacheOriginAllowSet {
  return buildOriginTable(domains, caches, (_origin, entry) => entry);
}

/** {@link CacheOriginAllowSet} whose values are made by the caller from each entry. */
export interface OriginTable<T> {
  /** The value for a raw `Origin` header, if it is an accepted cache origin. */
  get(origin: string): T | undefined;
  /** Number of accepted cache origins. */
  readonly size: number;
  /** Every accepted cache origin with its value. */
  entries(): IterableIterator<[string, T]>;
}

/**
 * The table behind {@link buildAllowSet}, with the value remembered per
 * recent origin made by `make` (once per origin and memo generation): the
 * verifier stores its ready-made verdict there, so a repeated allowed origin
 * costs one lookup and no allocation.
 *
 * Layout: one table from readable prefix to (publisher domain, form), shared
 * by all caches — a prefix is a single label, so `https://` + prefix + `.` +
 * cache domain names one cache (found in a map by cache domain: the cost
 * does not grow with the number of caches) and one prefix. The hashed
 * prefixes of every domain are computed on first need (the first hashed
 * origin asked for, or `size`/`entries`): building stays free of SHA-256.
 *
 * @param covered - whether a domain is trusted by the configuration (default:
 *   it is one of `domains`); a readable form that some other domain also has
 *   is accepted only when every such domain is covered (SPEC §6).
 * @throws AmpCorsError `invalid-domain` for a malformed domain.
 */
export function buildOriginTable<T>(
  domains: Iterable<string>,
  caches: readonly AmpCache[],
  make: (origin: string, entry: AllowEntry) => T,
  covered?: (domain: string) => boolean,
): OriginTable<T> {
  const index = cacheIndexOf(caches);
  const publisherDomains: string[] = [];
  for (const domain of domains) publisherDomains.push(canonicalDomain(domain));
  const isCovered = covered ?? ((set) => (domain: string) => set.has(domain))(new Set(publisherDomains));
  // Readable prefix → index of its publisher domain × FORM_SLOTS + form code.
  const prefixes = new Map<string, number>();
  for (let i = 0; i < publisherDomains.length; i++) {
    for (const { prefix, form } of acceptedReadableForms(publisherDomains[i] as string, isCovered)) {
      if (!prefixes.has(prefix)) prefixes.set(prefix, i * FORM_SLOTS + FORM_CODE[form]);
    }
  }
  // Hashed prefix → the same packing; made on first need.
  let hashes: Map<string, number> | undefined;
  const hashTable = (): Map<string, number> => {
    if (hashes) return hashes;
    hashes = new Map();
    for (let i = 0; i < publisherDomains.length; i++) {
      for (const { prefix, form } of hashedPrefixForms(publisherDomains[i] as string)) {
        if (!hashes.has(prefix)) hashes.set(prefix, i * FORM_SLOTS + FORM_CODE[form]);
      }
    }
    return hashes;
  };
  // Longer headers are refused before any hashing.
  const maxOriginLength = SCHEME.length + MAX_PREFIX_LENGTH + 1 + index.longestDomain;

  const valueOf = (origin: string, prefix: string, packed: number, cache: AmpCache): T =>
    make(origin, {
      publisherDomain: publisherDomains[Math.floor(packed / FORM_SLOTS)] as string,
      cache,
      prefix,
      form: FORMS[packed % FORM_SLOTS] as PrefixForm,
    });

  // Recent-origin memo in two generations: a hit in the older one is
  // promoted; when the newer one is full, the older one is dropped.
  let recent = new Map<string, T>();
  let older = new Map<string, T>();
  const remember = (origin: string, entry: T): T => {
    if (recent.size >= MEMO_GENERATION_SIZE) {
      older = recent;
      recent = new Map();
    }
    recent.set(origin, entry);
    return entry;
  };

  const lookup = (origin: string): T | undefined => {
    if (!origin.startsWith(SCHEME)) return undefined;
    // The prefix is one label: the cache domain is everything after the first dot.
    const dot = origin.indexOf('.', SCHEME.length);
    if (dot <= SCHEME.length) return undefined;
    const cache = index.byDomain.get(origin.slice(dot + 1));
    if (cache === undefined) return undefined;
    const remembered = older.get(origin);
    if (remembered !== undefined) return remember(origin, remembered);
    const prefix = origin.slice(SCHEME.length, dot);
    const packed = isHashedPrefix(prefix) ? hashTable().get(prefix) : prefixes.get(prefix);
    return packed === undefined ? undefined : remember(origin, valueOf(origin, prefix, packed, cache));
  };

  return {
    get: (origin) => {
      if (typeof origin !== 'string' || origin.length > maxOriginLength) return undefined;
      return recent.get(origin) ?? lookup(origin);
    },
    get size() {
      return (prefixes.size + hashTable().size) * index.unique.length;
    },
    *entries() {
      for (const table of [prefixes, hashTable()]) {
        for (const [prefix, packed] of table) {
          for (const cache of index.unique) {
            const origin = `${SCHEME}${prefix}.${cache.cacheDomain}`;
            yield [origin, valueOf(origin, prefix, packed, cache)];
          }
        }
      }
    },
  };
}
