import type { AmpCache } from './caches.js';
import { fallbackPrefix, type PrefixForm, type PrefixFormEntry, prefixForms } from './domain-prefix.js';

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
 * real cache may use for a known publisher domain, matched against the exact
 * origin string a browser sends. An allowed cache origin costs hash-table
 * lookups on the raw header, with no SHA-256 or punycode at request time; it
 * can only match a header that is byte for byte canonical.
 */
export interface CacheOriginAllowSet {
  /** The entry for a raw `Origin` header, if it is an accepted cache origin. */
  get(origin: string): AllowEntry | undefined;
  /** Number of accepted cache origins. */
  readonly size: number;
  /** Every accepted cache origin with its entry (for tools and tests). */
  entries(): IterableIterator<[string, AllowEntry]>;
}

/** Order of {@link PrefixForm} codes packed into the prefix table. */
const FORMS: readonly PrefixForm[] = ['spec', 'toolbox', 'hash-ascii', 'hash-unicode'];
const FORM_CODE: Readonly<Record<PrefixForm, number>> = { spec: 0, toolbox: 1, 'hash-ascii': 2, 'hash-unicode': 3 };
const SCHEME = 'https://';
/** Longest DNS label: the guide's prefix falls back to the hash beyond it. */
const MAX_PREFIX_LENGTH = 63;
/**
 * Entries remembered per generation of the recent-origin memo: two
 * generations bound it to twice this many (about 10 MB at most).
 */
const MEMO_GENERATION_SIZE = 32_768;

/**
 * A domain that is already canonical and plain ASCII (lowercase
 * letters-digits-hyphens labels of at most 63 octets, at most 253 octets in
 * all, no `xn--` label, no all-numeric last label): its Unicode form is
 * itself and no punycode step changes it, so its prefix forms follow from
 * string replacements alone.
 */
const PLAIN_DOMAIN = /^(?=.{1,253}$)(?:[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?\.)*[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?$/;
const NUMERIC_LAST_LABEL = /(?:^|\.)[0-9]+$/;

function isPlainDomain(domain: string): boolean {
  return PLAIN_DOMAIN.test(domain) && !domain.includes('xn--') && !NUMERIC_LAST_LABEL.test(domain);
}

function hyphensAt3And4(label: string): boolean {
  return label.charCodeAt(2) === 45 && label.charCodeAt(3) === 45;
}

/**
 * {@link prefixForms} of a plain domain (see {@link isPlainDomain}), without
 * punycode and with SHA-256 only when some algorithm falls back to the hash.
 * Same prefixes, forms and order as `prefixForms` (checked by the tests):
 * the guide's prefix, then toolbox-cache-url's when it differs (ASCII and
 * Unicode forms coincide); a hash appears as the form of the algorithm that
 * fell back to it.
 */
function plainPrefixForms(domain: string): PrefixFormEntry[] {
  const label = domain.replaceAll('-', '--').replaceAll('.', '-');
  let hash: string | undefined;
  const hashOf = (): string => (hash ??= fallbackPrefix(domain));
  const wrapped = hyphensAt3And4(label) ? `0-${label}-0` : label;
  const spec = wrapped.length <= MAX_PREFIX_LENGTH ? wrapped : hashOf();
  let toolbox: string;
  const toolboxBasic = !(hyphensAt3And4(domain) && !domain.startsWith('xn')) && domain.length <= MAX_PREFIX_LENGTH && domain.includes('.');
  if (!toolboxBasic || label.length > MAX_PREFIX_LENGTH) toolbox = hashOf();
  else toolbox = hyphensAt3And4(label) && !label.startsWith('xn') ? `0-${label}-0` : label;
  // The hash is among the forms exactly when an algorithm fell back to it,
  // and then it is that algorithm's form: no separate `hash-ascii` entry.
  const forms: PrefixFormEntry[] = [{ prefix: spec, form: 'spec' }];
  if (toolbox !== spec) forms.push({ prefix: toolbox, form: 'toolbox' });
  return forms;
}

/** Every accepted prefix of one publisher domain (SPEC §6), as {@link prefixForms} lists them. */
function formsOf(domain: string): PrefixFormEntry[] {
  return isPlainDomain(domain) ? plainPrefixForms(domain) : prefixForms(domain);
}

/**
 * Builds the allow-set for canonical publisher domains and caches: for each
 * domain, every form of {@link prefixForms} (the guide's, toolbox's, the
 * ASCII and Unicode hashes), on every cache. When two configured domains
 * share an origin (possible only across algorithms), the first one listed is
 * reported; both are configured, so either answer allows correctly.
 *
 * Layout: one table from domain prefix to (publisher domain, form), shared
 * by all caches — a prefix is a single label, so `https://` + prefix + `.` +
 * cache domain names one cache and one prefix. Entries are made on demand
 * and the most recent ones are remembered (bounded), so a repeated origin
 * costs one hash-table lookup on the raw header. 1M domains on 2 caches take
 * about a third of the memory of one string key and one entry per origin.
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
 * @throws AmpCorsError `invalid-domain` for a malformed domain.
 */
export function buildOriginTable<T>(domains: Iterable<string>, caches: readonly AmpCache[], make: (origin: string, entry: AllowEntry) => T): OriginTable<T> {
  // A cache domain listed twice names the same origins: the first cache wins.
  const uniqueCaches = caches.filter((cache, index) => caches.findIndex((other) => other.cacheDomain === cache.cacheDomain) === index);
  const suffixes = uniqueCaches.map((cache) => `.${cache.cacheDomain}`);
  const publisherDomains: string[] = [];
  // Prefix → index of its publisher domain × 4 + form code.
  const prefixes = new Map<string, number>();
  let longestPrefix = 0;
  for (const publisherDomain of domains) {
    const index = publisherDomains.length;
    let claimed = false;
    for (const { prefix, form } of formsOf(publisherDomain)) {
      if (prefixes.has(prefix)) continue;
      prefixes.set(prefix, index * 4 + FORM_CODE[form]);
      longestPrefix = Math.max(longestPrefix, prefix.length);
      claimed = true;
    }
    if (claimed) publisherDomains.push(publisherDomain);
  }
  const longestSuffix = suffixes.reduce((longest, suffix) => Math.max(longest, suffix.length), 0);
  // Longer headers (toolbox's prefix may reach 67 octets) are refused before any hashing.
  const maxOriginLength = SCHEME.length + longestPrefix + longestSuffix;

  const valueOf = (origin: string, prefix: string, packed: number, cache: AmpCache): T =>
    make(origin, {
      publisherDomain: publisherDomains[Math.floor(packed / 4)] as string,
      cache,
      prefix,
      form: FORMS[packed % 4] as PrefixForm,
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
    for (let i = 0; i < suffixes.length; i++) {
      const suffix = suffixes[i] as string;
      const prefixLength = origin.length - SCHEME.length - suffix.length;
      // Cheap tests before endsWith: room for a prefix, and the suffix's dot in place.
      if (prefixLength <= 0 || origin.charCodeAt(SCHEME.length + prefixLength) !== 46 || !origin.endsWith(suffix)) continue;
      const remembered = older.get(origin);
      if (remembered !== undefined) return remember(origin, remembered);
      const prefix = origin.slice(SCHEME.length, SCHEME.length + prefixLength);
      const packed = prefixes.get(prefix);
      if (packed !== undefined) return remember(origin, valueOf(origin, prefix, packed, uniqueCaches[i] as AmpCache));
    }
    return undefined;
  };

  return {
    get: (origin) => {
      if (typeof origin !== 'string' || origin.length > maxOriginLength) return undefined;
      return recent.get(origin) ?? lookup(origin);
    },
    get size() {
      return prefixes.size * uniqueCaches.length;
    },
    *entries() {
      for (const [prefix, packed] of prefixes) {
        for (const cache of uniqueCaches) {
          const origin = `${SCHEME}${prefix}.${cache.cacheDomain}`;
          yield [origin, valueOf(origin, prefix, packed, cache)];
        }
      }
    },
  };
}
