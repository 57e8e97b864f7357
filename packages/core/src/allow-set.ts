import { cacheEndingAt, cacheIndexOf } from './cache-origin.js';
import type { AmpCache } from './caches.js';
import { canonicalDomain, MAX_LABEL_LENGTH, unicodeDomain } from './domain-name.js';
import {
  basicPrefix,
  HASHED_PREFIX_LENGTH,
  type HashForms,
  hashedPrefixForms,
  hashFormsOf,
  isHashedPrefix,
  MAX_PREFIX_LENGTH,
  type PrefixForm,
  type PrefixFormEntry,
  readablePrefixForms,
} from './domain-prefix.js';
import { claimedByAnother } from './prefix-forms.js';
import { digestOrder } from './digest-order.js';
import { sha256Words } from './sha256-words.js';

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
  /** The value for a raw `Origin` header, if it is an accepted cache origin: {@link OriginTable.recall}, else {@link OriginTable.find}. */
  get(origin: string): T | undefined;
  /** The value of a recently accepted origin, from the memo alone (no index searched). */
  recall(origin: string): T | undefined;
  /** The value for an origin, from the indexes alone (remembered when found): what `get` asks when `recall` answers nothing. */
  find(origin: string): T | undefined;
  /**
   * {@link OriginTable.find} of a plain cache origin that plainCacheOriginOf (cache-origin.ts) read
   * as `cache` and `prefix`, with the FNV-1a hash of the prefix it made in the same scan: nothing
   * parsed or hashed again.
   */
  findPlain(origin: string, prefix: string, cache: AmpCache, fnv: number): T | undefined;
  /** Number of accepted cache origins. */
  readonly size: number;
  /** Every accepted cache origin with its value. */
  entries(): IterableIterator<[string, T]>;
}

/** Options of {@link buildOriginTable}. */
export interface OriginTableOptions {
  /**
   * Whether a domain is trusted by the configuration (default: it is one of
   * the domains); a readable form that some other domain also has is
   * accepted only when every such domain is covered (SPEC §6).
   */
  readonly covered?: (domain: string) => boolean;
  /** The domains are canonical already (the verifier's parsed rules): they are not canonicalized again. */
  readonly canonical?: boolean;
}

/**
 * The table behind {@link buildAllowSet}, with the value remembered per
 * recent origin made by `make` (once per origin and memo generation): the
 * verifier stores its ready-made verdict there, so a repeated allowed origin
 * costs one lookup and no allocation. Nothing is stored per origin: values
 * are made on demand from the compact indexes below and kept only while
 * recent (bounded).
 *
 * Layout: an index of the readable prefixes ({@link buildReadableIndex})
 * shared by all caches — a prefix is a single label, so `https://` + prefix
 * + `.` + cache domain names one cache (found in a map by cache domain: the
 * cost does not grow with the number of caches) and one prefix. The hashed
 * prefixes are indexed at construction by their SHA-256
 * ({@link buildHashIndex}): one SHA-256 per domain (two for an IDN) while
 * building, about 0.4 µs each, so that no request ever waits for the whole
 * list to be hashed; `entries` lists every hashed prefix in full on first
 * need (tools, tests).
 *
 * @throws AmpCorsError `invalid-domain` for a malformed domain.
 */
export function buildOriginTable<T>(
  domains: Iterable<string>,
  caches: readonly AmpCache[],
  make: (origin: string, entry: AllowEntry) => T,
  options: OriginTableOptions = {},
): OriginTable<T> {
  const index = cacheIndexOf(caches);
  const publisherDomains: string[] = [];
  for (const domain of domains) publisherDomains.push(options.canonical === true ? domain : canonicalDomain(domain));
  // The default coverage (the listed domains) is asked only for a domain whose forms another can share: made on first need.
  let listed: Set<string> | undefined;
  const isCovered = options.covered ?? ((domain: string) => (listed ??= new Set(publisherDomains)).has(domain));
  const readable = buildReadableIndex(publisherDomains, isCovered);
  listed = undefined;
  // Hashed prefixes, in a compact index built now (no stall on the first hashed request).
  const hashes = buildHashIndex(publisherDomains);
  // Every hashed prefix with its packing, for `entries` (tools and tests; one SHA-256 per form), made on first need.
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
    const packed = isHashedPrefix(prefix) ? hashes.find(prefix) : readable.find(prefix);
    return packed === undefined ? undefined : memo.set(origin, valueOf(origin, prefix, packed, cache));
  };

  let hashedCount: number | undefined;
  return {
    get: (origin) => {
      if (typeof origin !== 'string' || origin.length > maxOriginLength) return undefined;
      return memo.get(origin) ?? lookup(origin);
    },
    recall: (origin) => (typeof origin !== 'string' || origin.length > maxOriginLength ? undefined : memo.get(origin)),
    find: (origin) => (typeof origin !== 'string' || origin.length > maxOriginLength ? undefined : lookup(origin)),
    findPlain: (origin, prefix, cache, fnv) => {
      // A plain prefix has a `-` (or is too short to be hashed: 52 characters without one): a readable one.
      const packed = isHashedPrefix(prefix) ? hashes.find(prefix) : readable.findHashed(prefix, mixHash(fnv));
      return packed === undefined ? undefined : memo.set(origin, valueOf(origin, prefix, packed, cache));
    },
    get size() {
      hashedCount ??= hashes.count();
      return (readable.size + hashedCount) * index.unique.length;
    },
    *entries() {
      for (const table of [readable.entries(), allHashes().entries()]) {
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

/** The accepted readable prefixes of the configured domains (see {@link buildReadableIndex}). */
interface ReadableIndex {
  /** The packing (domain index × FORM_SLOTS + form code) of an accepted readable prefix, if it is one. */
  find(prefix: string): number | undefined;
  /** {@link ReadableIndex.find} of a prefix whose {@link stringHash} is `hash`, already known. */
  findHashed(prefix: string, hash: number): number | undefined;
  /** Number of accepted readable prefixes. */
  readonly size: number;
  /** Every accepted readable prefix with its packing (tools and tests). */
  entries(): IterableIterator<[string, number]>;
}

/** Positions in {@link readablePrefixForms}' list: spec, toolbox of the ASCII and of the Unicode form, amppackager. */
const READABLE_SLOTS = 4;

/** An unsigned 32-bit hash of a string's code units (FNV-1a, then MurmurHash3's finalizer to spread the low bits); exported for the tests, which look for colliding prefixes. */
export function stringHash(text: string): number {
  let hash = 0x811c9dc5;
  // Twin of plainCacheOriginOf's FNV-1a (cache-origin.ts), whose hash mixHash finishes: keep in step.
  for (let i = 0; i < text.length; i++) hash = Math.imul(hash ^ text.charCodeAt(i), 0x01000193);
  return mixHash(hash);
}

/** The end of {@link stringHash}: MurmurHash3's finalizer applied to a string's FNV-1a hash. */
export function mixHash(fnv: number): number {
  let hash = fnv;
  hash ^= hash >>> 16;
  hash = Math.imul(hash, 0x85ebca6b);
  hash ^= hash >>> 13;
  hash = Math.imul(hash, 0xc2b2ae35);
  return (hash ^ (hash >>> 16)) >>> 0;
}

/**
 * The readable prefixes of `domains` that the allow-set accepts
 * (`acceptedReadableForms`), the first listed domain winning a prefix
 * two share. The prefixes of a domain without `xn` — nearly every domain —
 * are not kept as strings: an open-addressing table (linear probing, at
 * most half full, 16 bytes a domain or less) holds a 32-bit hash of each and where it comes from (the
 * domain's index and the form's position in {@link readablePrefixForms}'
 * list), 8 bytes a slot; a slot whose hash matches is confirmed by computing
 * that form again (string work for such a domain: no punycode, no hashing)
 * and comparing all of it with the prefix asked for. The prefixes of domains
 * with `xn` (IDNs, whose forms need punycode and UTS #46) are kept in a map
 * by string.
 */
function buildReadableIndex(domains: readonly string[], covered: (domain: string) => boolean): ReadableIndex {
  // At most one form per domain without `xn` (readablePrefixForms' plain path gives spec and toolbox alike):
  // a table sized for the domains, doubled whenever it is more than half full.
  let capacity = 16;
  while (capacity < domains.length) capacity *= 2;
  // Slot k: the prefix's hash at 2k, and at 2k + 1 domain index × READABLE_SLOTS + position, plus 1 (0: an empty
  // slot) — side by side, so that a probe touches one cache line.
  let table = new Uint32Array(capacity * 2);
  let used = 0;
  // Prefix → domain index × FORM_SLOTS + form code, for the domains with `xn`.
  const named = new Map<string, number>();
  const formAt = (entry: number): PrefixFormEntry =>
    readablePrefixForms(domains[Math.floor(entry / READABLE_SLOTS)] as string)[entry % READABLE_SLOTS] as PrefixFormEntry;
  // The form that slotOf last confirmed (read by find: the form is made once a request).
  let confirmed: PrefixFormEntry | undefined;
  // The slot holding `prefix` (whose hash is `hash`), or the empty slot where it would go.
  const slotOf = (prefix: string, hash: number): number => {
    const mask = capacity - 1;
    for (let k = hash & mask; ; k = (k + 1) & mask) {
      const entry = table[2 * k + 1] as number;
      if (entry === 0) return k;
      if (table[2 * k] !== hash) continue;
      const form = formAt(entry - 1);
      if (form.prefix === prefix) {
        confirmed = form;
        return k;
      }
    }
  };
  const grow = (): void => {
    const old = table;
    capacity *= 2;
    table = new Uint32Array(capacity * 2);
    for (let k = 0; k < old.length; k += 2) {
      if (old[k + 1] === 0) continue;
      let at = (old[k] as number) & (capacity - 1);
      while (table[2 * at + 1] !== 0) at = (at + 1) & (capacity - 1);
      table[2 * at] = old[k] as number;
      table[2 * at + 1] = old[k + 1] as number;
    }
  };
  for (let i = 0; i < domains.length; i++) {
    const domain = domains[i] as string;
    const forms = readablePrefixForms(domain);
    for (let position = 0; position < forms.length; position++) {
      const { prefix, form } = forms[position] as PrefixFormEntry;
      // Twin of acceptedReadableForms (the same filter, keeping each form's position in the list): keep in step.
      if (claimedByAnother(domain, prefix, covered) || (named.size > 0 && named.has(prefix))) continue;
      const hash = stringHash(prefix);
      const k = slotOf(prefix, hash);
      if (table[2 * k + 1] !== 0) continue;
      if (domain.includes('xn')) {
        named.set(prefix, i * FORM_SLOTS + FORM_CODE[form]);
        continue;
      }
      table[2 * k] = hash;
      table[2 * k + 1] = i * READABLE_SLOTS + position + 1;
      if (++used * 2 > capacity) grow();
    }
  }
  const packingOf = (entry: number): number => Math.floor(entry / READABLE_SLOTS) * FORM_SLOTS + FORM_CODE[formAt(entry).form];
  return {
    find(prefix) {
      return this.findHashed(prefix, stringHash(prefix));
    },
    findHashed(prefix, hash) {
      const entry = table[2 * slotOf(prefix, hash) + 1] as number;
      // (Hashing the prefix for the map only when it holds something.)
      if (entry === 0) return named.size === 0 ? undefined : named.get(prefix);
      return Math.floor((entry - 1) / READABLE_SLOTS) * FORM_SLOTS + FORM_CODE[(confirmed as PrefixFormEntry).form];
    },
    get size() {
      return used + named.size;
    },
    *entries() {
      yield* named;
      for (let k = 0; k < capacity; k++) {
        const entry = table[2 * k + 1] as number;
        if (entry !== 0) yield [formAt(entry - 1).prefix, packingOf(entry - 1)];
      }
    },
  };
}

/** The dash-free prefixes of the configured domains, found by digest without a string per prefix. */
interface HashIndex {
  /** The packing (domain index × FORM_SLOTS + form code) of a dash-free prefix, if it is one of the domains'. */
  find(prefix: string): number | undefined;
  /** Number of distinct dash-free prefixes (counted without making their strings). */
  count(): number;
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
 * words in one Uint32Array — domain i's ASCII form at position i, the
 * Unicode forms of IDNs after them — and their order by first 64 bits in a
 * second (36 bytes per hash, computed once here: one SHA-256 per domain,
 * two for an IDN). A request's 52-digit prefix is decoded to its digest,
 * found by binary search on the first 64 bits and matched on all 256 (a
 * prefix anyone can write is never taken for a domain's by its first bits),
 * with no SHA-256, punycode or UTS #46 for a domain without `xn` (the form
 * names of the others are computed here). Among equal digests the first
 * domain listed wins (its ASCII form first), as in the readable table.
 */
function buildHashIndex(domains: readonly string[]): HashIndex {
  // Built apart, so that the closures below keep only the tables they need.
  const { digests, order, count, unicodeOwners, others, named } = hashDigests(domains);
  const domainCount = domains.length;
  /** Domain index × 2, + 1 for the hash of its Unicode form, of the digest at `position`. */
  const ownerOf = (position: number): number => (position < domainCount ? position * 2 : (unicodeOwners[position - domainCount] as number) * 2 + 1);
  const wordOf = (k: number, w: number): number => digests[(order[k] as number) * DIGEST_WORDS + w] as number;
  const sameDigest = (j: number, k: number): boolean => {
    for (let w = 0; w < DIGEST_WORDS; w++) if (wordOf(j, w) !== wordOf(k, w)) return false;
    return true;
  };
  const sameBits = (j: number, k: number): boolean => wordOf(j, 0) === wordOf(k, 0) && wordOf(j, 1) === wordOf(k, 1);
  // The first owner (see ownerOf) of a digest equal to `wanted`, or -1: binary search on the first 64 bits, then all 256 compared.
  const findWanted = (): number => {
    const wantHigh = wanted[0] as number;
    const wantLow = wanted[1] as number;
    let from = 0;
    let to = count;
    while (from < to) {
      const mid = (from + to) >>> 1;
      const h = wordOf(mid, 0);
      if (h < wantHigh || (h === wantHigh && wordOf(mid, 1) < wantLow)) from = mid + 1;
      else to = mid;
    }
    let first = -1;
    for (let k = from; k < count && wordOf(k, 0) === wantHigh && wordOf(k, 1) === wantLow; k++) {
      let all = true;
      for (let w = 2; w < DIGEST_WORDS && all; w++) all = wordOf(k, w) === wanted[w];
      const owner = ownerOf(order[k] as number);
      if (all && (first < 0 || owner < first)) first = owner;
    }
    return first;
  };
  return {
    find(prefix) {
      const other = others.get(prefix);
      if (other !== undefined) return other;
      if (!decodeHashedPrefix(prefix)) return undefined;
      const owner = findWanted();
      if (owner < 0) return undefined;
      const i = owner >>> 1;
      const forms = named.get(i) ?? hashFormsOf(domains[i] as string);
      const form = owner % 2 === 1 ? forms.unicode : forms.ascii;
      return i * FORM_SLOTS + FORM_CODE[form ?? 'hash-unicode'];
    },
    count() {
      let distinct = 0;
      for (let k = 0; k < count; k++) {
        // Counted unless an earlier digest of its run (the same first 64 bits) is equal to it.
        let seen = false;
        for (let j = k - 1; j >= 0 && !seen && sameBits(j, k); j--) seen = sameDigest(j, k);
        if (!seen) distinct++;
      }
      for (const prefix of others.keys()) if (!decodeHashedPrefix(prefix) || findWanted() < 0) distinct++;
      return distinct;
    },
  };
}

/** The tables of {@link buildHashIndex}. */
interface HashDigests {
  /** Every digest, 8 words each: domain i's ASCII form at position i, then the Unicode forms. */
  readonly digests: Uint32Array;
  /** The positions of the digests sorted by their first 64 bits (stable). */
  readonly order: Uint32Array;
  /** Number of digests. */
  readonly count: number;
  /** The domain index of each Unicode form's digest (position − number of domains). */
  readonly unicodeOwners: Uint32Array;
  /** The guide's dash-free prefix of one-label names, with its packing. */
  readonly others: ReadonlyMap<string, number>;
  /** The hash form names of the domains with `xn`. */
  readonly named: ReadonlyMap<number, HashForms>;
}

function hashDigests(domains: readonly string[]): HashDigests {
  // Only a domain with an `xn--` label has a Unicode form apart (unicodeDomain).
  let idns = 0;
  for (const domain of domains) if (domain.includes('xn--')) idns++;
  const digests = new Uint32Array((domains.length + idns) * DIGEST_WORDS);
  const unicodeOwners = new Uint32Array(idns);
  let count = domains.length;
  // The guide's dash-free prefix of a one-label name (rare: a publisher rule has a dot) is kept as a string.
  const others = new Map<string, number>();
  // The form names of the hashes of domains with `xn`, whose names would need punycode or UTS #46 on a request.
  const named = new Map<number, HashForms>();
  for (let i = 0; i < domains.length; i++) {
    const ascii = domains[i] as string;
    // Twin of hashedPrefixForms' candidates (every form it lists is one of these): keep in step.
    // Twin of fallbackDigest (SPEC §2 fallback, step 1), written into the table: keep in step.
    sha256Words(ascii, digests, i * DIGEST_WORDS);
    const unicode = unicodeDomain(ascii);
    if (unicode !== ascii) {
      sha256Words(unicode, digests, count * DIGEST_WORDS);
      unicodeOwners[count - domains.length] = i;
      count++;
    }
    if (ascii.includes('xn')) named.set(i, hashFormsOf(ascii));
    if (!ascii.includes('.')) {
      const basic = basicPrefix(ascii);
      if (isHashedPrefix(basic) && basic.length <= MAX_LABEL_LENGTH && !others.has(basic)) others.set(basic, i * FORM_SLOTS + FORM_CODE.spec);
    }
  }
  return { digests, order: digestOrder(digests, count, DIGEST_WORDS, 2), count, unicodeOwners, others, named };
}
