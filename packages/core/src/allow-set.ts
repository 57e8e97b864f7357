import { cacheEndingAt, cacheIndexOf } from './cache-origin.js';
import type { AmpCache } from './caches.js';
import { canonicalDomain, MAX_LABEL_LENGTH, unicodeDomain } from './domain-name.js';
import {
  basicPrefix,
  fallbackDigest,
  HASHED_PREFIX_LENGTH,
  type HashForms,
  hashedPrefixForms,
  hashFormsOf,
  isHashedPrefix,
  MAX_PREFIX_LENGTH,
  type PrefixForm,
} from './domain-prefix.js';
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

/** A bounded memo of values by key (see {@link createRecentMemo}). */
export interface RecentMemo<T> {
  /** The value remembered for `key`, if any (a hit in the older generation is promoted). */
  get(key: string): T | undefined;
  /** Remembers `value` for `key` and returns it. */
  set(key: string, value: T): T;
  /** Entries held now: never more than twice the generation size. */
  readonly size: number;
}

/**
 * A memo of recent values in two generations: a hit in the older one is
 * promoted; when the newer one holds `generationSize` entries, the older one
 * is dropped. So it holds at most twice that many, whatever the requests,
 * and a value asked for again within a generation stays.
 */
export function createRecentMemo<T>(generationSize: number = MEMO_GENERATION_SIZE): RecentMemo<T> {
  let recent = new Map<string, T>();
  let older = new Map<string, T>();
  const set = (key: string, value: T): T => {
    if (recent.size >= generationSize) {
      older = recent;
      recent = new Map();
    }
    recent.set(key, value);
    return value;
  };
  return {
    get(key) {
      const hit = recent.get(key);
      if (hit !== undefined) return hit;
      const old = older.get(key);
      return old === undefined ? undefined : set(key, old);
    },
    set,
    get size() {
      return recent.size + older.size;
    },
  };
}

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
 * prefixes are indexed at construction by the first 64 bits of their
 * SHA-256 ({@link buildHashIndex}): one SHA-256 per domain (two for an IDN)
 * while building, about 1.5 µs each, so that no request ever waits for the
 * whole list to be hashed (a million domains: seconds); `size` and
 * `entries` list every hashed prefix in full on first need (tools, tests).
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
  const isCovered =
    covered ??
    (
      (set) => (domain: string) =>
        set.has(domain)
    )(new Set(publisherDomains));
  // Readable prefix → index of its publisher domain × FORM_SLOTS + form code.
  const prefixes = new Map<string, number>();
  for (let i = 0; i < publisherDomains.length; i++) {
    for (const { prefix, form } of acceptedReadableForms(publisherDomains[i] as string, isCovered)) {
      if (!prefixes.has(prefix)) prefixes.set(prefix, i * FORM_SLOTS + FORM_CODE[form]);
    }
  }
  // Hashed prefix → the same packing, in a compact index built now (no stall on the first hashed request).
  const hashes = buildHashIndex(publisherDomains);
  // Every hashed prefix with its packing, for `size` and `entries` (tools and tests; one SHA-256 per form), made on first need.
  let hashList: Map<string, number> | undefined;
  const allHashes = (): Map<string, number> => {
    if (hashList) return hashList;
    hashList = new Map();
    for (let i = 0; i < publisherDomains.length; i++) {
      for (const { prefix, form } of hashedPrefixForms(publisherDomains[i] as string)) {
        if (!hashList.has(prefix)) hashList.set(prefix, i * FORM_SLOTS + FORM_CODE[form]);
      }
    }
    return hashList;
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

  const memo = createRecentMemo<T>();

  const lookup = (origin: string): T | undefined => {
    if (!origin.startsWith(SCHEME)) return undefined;
    // The prefix is one label: the cache domain is everything after the first dot.
    const dot = origin.indexOf('.', SCHEME.length);
    if (dot <= SCHEME.length) return undefined;
    const cache = cacheEndingAt(origin, dot + 1, index);
    if (cache === undefined) return undefined;
    const prefix = origin.slice(SCHEME.length, dot);
    const packed = isHashedPrefix(prefix) ? hashes.find(prefix) : prefixes.get(prefix);
    return packed === undefined ? undefined : memo.set(origin, valueOf(origin, prefix, packed, cache));
  };

  return {
    get: (origin) => {
      if (typeof origin !== 'string' || origin.length > maxOriginLength) return undefined;
      return memo.get(origin) ?? lookup(origin);
    },
    get size() {
      return (prefixes.size + allHashes().size) * index.unique.length;
    },
    *entries() {
      for (const table of [prefixes, allHashes()]) {
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

/** The dash-free prefixes of the configured domains, found by digest without a string per prefix. */
interface HashIndex {
  /** The packing (domain index × FORM_SLOTS + form code) of a dash-free prefix, if it is one of the domains'. */
  find(prefix: string): number | undefined;
}

/** Value of a base32 (RFC 4648, lowercase) digit, or -1. */
function base32Digit(code: number): number {
  if (code >= 97 && code <= 122) return code - 97;
  if (code >= 50 && code <= 55) return code - 24;
  return -1;
}

/** 32-bit words of a SHA-256 digest. */
const DIGEST_WORDS = 8;
/** The request's digest, decoded in place (the request path allocates nothing for it). */
const wanted = new Uint32Array(DIGEST_WORDS);

/**
 * Decodes a hashed prefix (52 lowercase base32 digits) into `wanted`: the
 * SHA-256 digest it spells. False when it is not exactly what
 * `fallbackPrefix` writes for some digest (a digit outside base32, or any of
 * the 4 padding bits of the last digit set).
 */
function decodeHashedPrefix(prefix: string): boolean {
  if (prefix.length !== HASHED_PREFIX_LENGTH) return false;
  let bits = 0;
  let value = 0;
  let word = 0;
  for (let c = 0; c < HASHED_PREFIX_LENGTH; c++) {
    const digit = base32Digit(prefix.charCodeAt(c));
    if (digit < 0) return false;
    // At most 36 bits pending: exact in a double.
    value = value * 32 + digit;
    bits += 5;
    if (bits >= 32) {
      bits -= 32;
      const scale = 2 ** bits;
      wanted[word++] = Math.floor(value / scale);
      value %= scale;
    }
  }
  return value === 0;
}

/**
 * The dash-free prefixes of `domains` (the SHA-256 hash of each ASCII and
 * Unicode form, SPEC §2.2, and the guide's dash-free prefix of a one-label
 * name), indexed without one string per prefix: each SHA-256 digest as 8
 * words in one Uint32Array, sorted by its first 64 bits, with its domain in
 * a second (36 bytes per hash, computed once here: one SHA-256 per domain,
 * two for an IDN). A request's 52-digit prefix is decoded to its digest,
 * found by binary search on the first 64 bits and matched on all 256 (a
 * prefix anyone can write is never taken for a domain's by its first bits),
 * with no SHA-256, punycode or UTS #46 for a domain without `xn` (the form
 * names of the others are computed here). Equal digests keep list order:
 * the first domain listed wins, as in the readable table.
 */
function buildHashIndex(domains: readonly string[]): HashIndex {
  // Built apart, so that the closures below keep only the sorted tables (not the unsorted copies).
  const { sorted, sortedOwners, count, others, named } = sortedDigests(domains);
  const matches = (k: number): boolean => {
    for (let w = 2; w < DIGEST_WORDS; w++) if (sorted[k * DIGEST_WORDS + w] !== wanted[w]) return false;
    return true;
  };
  return {
    find(prefix) {
      const other = others.get(prefix);
      if (other !== undefined) return other;
      if (!decodeHashedPrefix(prefix)) return undefined;
      const wantHigh = wanted[0] as number;
      const wantLow = wanted[1] as number;
      // The first entry whose first 64 bits are not below the wanted ones, then every entry with those bits.
      let from = 0;
      let to = count;
      while (from < to) {
        const mid = (from + to) >>> 1;
        const h = sorted[mid * DIGEST_WORDS] as number;
        if (h < wantHigh || (h === wantHigh && (sorted[mid * DIGEST_WORDS + 1] as number) < wantLow)) from = mid + 1;
        else to = mid;
      }
      for (let k = from; k < count && sorted[k * DIGEST_WORDS] === wantHigh && sorted[k * DIGEST_WORDS + 1] === wantLow; k++) {
        if (!matches(k)) continue;
        const owner = sortedOwners[k] as number;
        const i = owner >>> 1;
        const forms = named.get(i) ?? hashFormsOf(domains[i] as string);
        const form = owner % 2 === 1 ? forms.unicode : forms.ascii;
        return i * FORM_SLOTS + FORM_CODE[form ?? 'hash-unicode'];
      }
      return undefined;
    },
  };
}

/** The tables of {@link buildHashIndex}. */
interface SortedDigests {
  /** Every digest, 8 words each, sorted by its first 64 bits (stable: list order among equals). */
  readonly sorted: Uint32Array;
  /** The owner of each: domain index × 2, + 1 for the hash of its Unicode form. */
  readonly sortedOwners: Uint32Array;
  /** Number of digests. */
  readonly count: number;
  /** The guide's dash-free prefix of one-label names, with its packing. */
  readonly others: ReadonlyMap<string, number>;
  /** The hash form names of the domains with `xn`. */
  readonly named: ReadonlyMap<number, HashForms>;
}

function sortedDigests(domains: readonly string[]): SortedDigests {
  let digests: Uint32Array = new Uint32Array((domains.length + 16) * DIGEST_WORDS);
  // Domain index × 2, + 1 for the hash of its Unicode form.
  let owners: Uint32Array = new Uint32Array(domains.length + 16);
  let count = 0;
  const add = (digest: Uint8Array, owner: number): void => {
    if (count === owners.length) {
      const more = new Uint32Array(owners.length * 2);
      more.set(owners);
      owners = more;
      const moreDigests = new Uint32Array(digests.length * 2);
      moreDigests.set(digests);
      digests = moreDigests;
    }
    for (let w = 0; w < DIGEST_WORDS; w++) {
      const b = w * 4;
      digests[count * DIGEST_WORDS + w] =
        (((digest[b] as number) << 24) | ((digest[b + 1] as number) << 16) | ((digest[b + 2] as number) << 8) | (digest[b + 3] as number)) >>> 0;
    }
    owners[count] = owner;
    count++;
  };
  // The guide's dash-free prefix of a one-label name (rare: a publisher rule has a dot) is kept as a string.
  const others = new Map<string, number>();
  // The form names of the hashes of domains with `xn`, whose names would need punycode or UTS #46 on a request.
  const named = new Map<number, HashForms>();
  for (let i = 0; i < domains.length; i++) {
    const ascii = domains[i] as string;
    // Twin of hashedPrefixForms' candidates (every form it lists is one of these): keep in step.
    add(fallbackDigest(ascii), i * 2);
    const unicode = unicodeDomain(ascii);
    if (unicode !== ascii) add(fallbackDigest(unicode), i * 2 + 1);
    if (ascii.includes('xn')) named.set(i, hashFormsOf(ascii));
    if (!ascii.includes('.')) {
      const basic = basicPrefix(ascii);
      if (isHashedPrefix(basic) && basic.length <= MAX_LABEL_LENGTH && !others.has(basic)) others.set(basic, i * FORM_SLOTS + FORM_CODE.spec);
    }
  }
  const high = new Uint32Array(count);
  const low = new Uint32Array(count);
  for (let k = 0; k < count; k++) {
    high[k] = digests[k * DIGEST_WORDS] as number;
    low[k] = digests[k * DIGEST_WORDS + 1] as number;
  }
  const order = sortByKey(high, low, count);
  const sorted = new Uint32Array(count * DIGEST_WORDS);
  const sortedOwners = new Uint32Array(count);
  for (let k = 0; k < count; k++) {
    const from = order[k] as number;
    for (let w = 0; w < DIGEST_WORDS; w++) sorted[k * DIGEST_WORDS + w] = digests[from * DIGEST_WORDS + w] as number;
    sortedOwners[k] = owners[from] as number;
  }
  return { sorted, sortedOwners, count, others, named };
}

/**
 * The order of `count` 64-bit keys (`high`, `low`), ascending and stable: an
 * LSD radix sort, four passes of 16 bits (linear in `count`).
 */
function sortByKey(high: Uint32Array, low: Uint32Array, count: number): Uint32Array {
  let order: Uint32Array = new Uint32Array(count);
  let scratch: Uint32Array = new Uint32Array(count);
  for (let i = 0; i < count; i++) order[i] = i;
  const buckets = new Uint32Array(65536);
  const passes: readonly (readonly [Uint32Array, number])[] = [
    [low, 0],
    [low, 16],
    [high, 0],
    [high, 16],
  ];
  for (const [words, shift] of passes) {
    buckets.fill(0);
    for (let i = 0; i < count; i++) {
      const key = ((words[i] as number) >>> shift) & 0xffff;
      buckets[key] = (buckets[key] as number) + 1;
    }
    let sum = 0;
    for (let b = 0; b < 65536; b++) {
      const size = buckets[b] as number;
      buckets[b] = sum;
      sum += size;
    }
    for (let i = 0; i < count; i++) {
      const item = order[i] as number;
      const key = ((words[item] as number) >>> shift) & 0xffff;
      const slot = buckets[key] as number;
      buckets[key] = slot + 1;
      scratch[slot] = item;
    }
    [order, scratch] = [scratch, order];
  }
  return order;
}
