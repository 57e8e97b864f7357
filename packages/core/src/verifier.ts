import { type AllowEntry, buildOriginTable, type CacheOriginAllowSet, createRecentMemo } from './allow-set.js';
import { CACHES, type AmpCache, validateCaches } from './caches.js';
import { checkOptionKeys, ConfigProblems, type OptionKeysSpec } from './config-check.js';
import { isHashedPrefix, type PrefixForm } from './domain-prefix.js';
import { AmpCorsError } from './errors.js';
import { MAX_ORIGIN_LENGTH, type OriginSyntaxReason, parseOrigin } from './origin-header.js';
import { matchesPublisher, parsePublisherRules, wildcardBaseOf } from './publisher-rules.js';
import { cacheIndexOf, findCacheOfHost, plainCacheOriginOf } from './cache-origin.js';
import { plainAsciiReading, type PrefixClaimant, plainPrefixClaimants } from './prefix-claimants.js';
import { reverseOrigin } from './reverse-origin.js';

/** Configuration of {@link createVerifier}. */
export interface VerifierConfig {
  /**
   * Publisher domains: `example.com` trusts that domain; `*.example.com`
   * trusts it and all its subdomains. Rules on public suffixes are refused.
   */
  readonly publishers: readonly string[];
  /**
   * Exact publisher origins such as `https://www.example.com` or
   * `http://localhost:8080`. Default: `https://` + each publisher domain
   * (and, for a wildcard rule, `https://` + any subdomain), default port.
   */
  readonly origins?: readonly string[];
  /** The AMP caches (default: the bundled {@link CACHES}). */
  readonly caches?: readonly AmpCache[];
  /**
   * Also allow the bare cache origins (`https://cdn.ampproject.org`), used by
   * very old AMP viewers. Off by default: such an origin can be any page on
   * the cache, so it does not prove a publisher.
   */
  readonly legacyCacheOrigins?: boolean;
}

/** Request facts besides `Origin` that the AMP CORS protocol uses (SPEC §7). */
export interface VerifyContext {
  /** The `AMP-Same-Origin` request header; only the exact value `true` counts. */
  readonly ampSameOrigin?: string | null | undefined;
  /** The legacy `__amp_source_origin` query parameter, when present. */
  readonly sourceOrigin?: string | null | undefined;
}

/** Why an origin was allowed. */
export type AllowReason =
  'publisher-origin' | 'cache-origin' | 'cache-origin-hashed' | 'cache-origin-wildcard' | 'legacy-cache-origin' | 'same-origin' | 'any-origin';

/** Why an origin was denied: stable codes, safe to log and branch on. */
export type DenyReason =
  | OriginSyntaxReason
  | 'insecure-scheme'
  | 'non-default-port'
  | 'unknown-origin'
  | 'unknown-publisher'
  | 'hashed-unknown'
  | 'legacy-cache-origin'
  | 'not-a-label'
  | 'invalid-punycode'
  | 'invalid-domain'
  | 'not-reproducible'
  | 'source-origin-mismatch'
  | 'source-unavailable';

/** How an allowed request was recognized. */
export type Via = 'publisher' | 'cache' | 'same-origin' | 'any';

/** An allowed request: every field says why, so the decision can be explained. */
export interface AllowedVerdict {
  readonly allowed: true;
  /** The raw `Origin` header, or `null` for a same-origin request without one. */
  readonly origin: string | null;
  /** How it was recognized. */
  readonly via: Via;
  /** The stable reason code. */
  readonly reason: AllowReason;
  /** The publisher domain, for cache origins and publisher origins on a domain. */
  readonly publisherDomain?: string;
  /** The cache, for cache origins. */
  readonly cache?: AmpCache;
  /** The domain prefix, for cache origins. */
  readonly prefix?: string;
  /** The algorithm that produced the prefix, for cache origins. */
  readonly prefixForm?: PrefixForm;
  /** The `__amp_source_origin` value, present only when it was checked and trusted. */
  readonly sourceOrigin?: string;
}

/** A denied request and why. */
export interface DeniedVerdict {
  readonly allowed: false;
  /** The raw `Origin` header as sent (`null` when missing). */
  readonly origin: string | null;
  /** The stable reason code. */
  readonly reason: DenyReason;
  /** A short human-readable explanation (never echoes more than 80 chars of input). */
  readonly detail: string;
  /** The cache, when the origin is on one. */
  readonly cache?: AmpCache;
  /** The domain prefix, when one was found. */
  readonly prefix?: string;
  /** The publisher domain the prefix spells, when one was found. */
  readonly publisherDomain?: string;
}

/** The typed result of {@link Verifier.verify}. */
export type Verdict = AllowedVerdict | DeniedVerdict;

/** A configured origin verifier. */
export interface Verifier {
  /**
   * Judges a raw `Origin` header (and, optionally, the request's AMP facts).
   * Never throws, whatever the input.
   */
  verify(origin: string | null | undefined, context?: VerifyContext): Verdict;
  /** True when `origin` is one of the publisher's own origins. */
  isPublisherOrigin(origin: string): boolean;
  /** The caches in use. */
  readonly caches: readonly AmpCache[];
  /** The precomputed cache-origin allow-set. */
  readonly allowSet: CacheOriginAllowSet;
}

const SCHEME = 'https://';
/** Publisher-origin verdicts remembered per memo generation (two generations: at most twice this many). */
const PUBLISHER_MEMO_GENERATION_SIZE = 4096;
/** Verdicts of cache origins outside the allow-set remembered per memo generation (at most twice this many). */
const CACHE_MEMO_GENERATION_SIZE = 4096;
/** Slots of the direct-mapped memo of plain cache origins' verdicts (a power of two). */
const PLAIN_MEMO_SLOTS = 1024;

function shown(value: string): string {
  return JSON.stringify(value.length > 80 ? `${value.slice(0, 80)}…` : value);
}

/** The verdict of an allowed cache origin of the allow-set, frozen: it is shared by every request with that origin. */
function cacheVerdict(origin: string, entry: AllowEntry): AllowedVerdict {
  const hashed = isHashedPrefix(entry.prefix);
  return Object.freeze({
    allowed: true,
    origin,
    via: 'cache',
    reason: hashed ? 'cache-origin-hashed' : 'cache-origin',
    publisherDomain: entry.publisherDomain,
    cache: entry.cache,
    prefix: entry.prefix,
    prefixForm: entry.form,
  });
}

function deny(origin: string | null, reason: DenyReason, detail: string, extra?: Partial<DeniedVerdict>): DeniedVerdict {
  return { allowed: false, origin, reason, detail, ...extra };
}

/**
 * Creates a verifier for a publisher's configuration. All validation and all
 * precomputation happens here, so that `verify` is a hash-table lookup for
 * every allowed cache origin of an exact publisher domain. No verdict is
 * stored per origin: it is made on demand from the compact allow-set and
 * shared while recent (a bounded memo). The hashed prefixes are indexed here
 * too (one SHA-256 per domain, two for an IDN, about 0.4 µs each: a million
 * domains add about 0.5 s to the build), so that no request — which any
 * client can send — waits for the whole list to be hashed. A plain readable
 * cache origin that is not in the table (a wildcard rule's, an unknown
 * publisher's) is judged in one scan of its prefix, without parsing,
 * punycode, UTS #46 or SHA-256.
 *
 * Decision order of `verify`:
 * 1. no `Origin`: allowed only with `AMP-Same-Origin: true` (SPEC §7);
 * 2. the raw header is one of the allow-set's cache origins, or a configured
 *    publisher origin: allowed;
 * 3. the header is parsed as sent and refused if not canonical (SPEC §6);
 * 4. on a cache: https and default port only; the bare cache origin only
 *    with `legacyCacheOrigins`; a hashed prefix not in the allow-set is
 *    denied; otherwise it is reversed (SPEC §4) and allowed only if every
 *    domain that could exist with that prefix, under any accepted algorithm,
 *    is trusted, one of them by a wildcard rule (SPEC §6);
 * 5. elsewhere: allowed by the default origins rule (https, default port, a
 *    publisher domain) when `origins` was not given;
 * 6. a present `__amp_source_origin` must be a publisher origin, else the
 *    request is denied; it never decides what is allowed.
 *
 * @throws AmpCorsError for an invalid configuration, listing every problem: an unknown key
 *   names the closest known one (`orgins`: did you mean `origins`?), as the adapters do.
 * @example
 * const verifier = createVerifier({ publishers: ['example.com', '*.example.org'] });
 * verifier.verify('https://example-com.cdn.ampproject.org').allowed // true
 */
export function createVerifier(config: VerifierConfig): Verifier {
  return checkedVerifier(config, VERIFIER_KEYS_SPEC, 'publishers', (checked) => buildVerifier(checked));
}

/** The keys of {@link VerifierConfig}, checked as the adapters check theirs. */
const VERIFIER_KEYS_SPEC: OptionKeysSpec = {
  entry: 'createVerifier',
  keys: ['publishers', 'origins', 'caches', 'legacyCacheOrigins'],
  allowNothing: 'A verifier that allows no origin is not needed: deny without one.',
  allowAny: 'To allow any origin, use no verifier (an adapter given no options sends Access-Control-Allow-Origin: *).',
};

/**
 * Checks a verifier configuration as the adapters check theirs, then builds
 * with it: a key `spec` does not list (`publisher`, `orgins`) names the
 * closest known one, a key present without a value and an empty list that
 * would allow nothing are refused, the `required` key must be there, and the
 * values are validated by `build` — every problem reported at once in one
 * {@link AmpCorsError} (config-check.ts). A typo never yields a verifier
 * that silently allows nothing, or everything.
 *
 * @param spec - the entry point's keys (`createAsyncVerifier` adds its own)
 * @param required - the key that must be present (with a value, for `build` to be asked)
 * @param build - validates the values and builds (throws an AmpCorsError for a bad value)
 * @throws AmpCorsError listing every problem.
 */
export function checkedVerifier<C extends object, V>(config: C, spec: OptionKeysSpec, required: string, build: (config: C) => V): V {
  if (typeof config !== 'object' || config === null || Array.isArray(config)) {
    throw new AmpCorsError('invalid-option', `${spec.entry} needs a configuration object, for example { publishers: ['example.com'] }`);
  }
  const problems = new ConfigProblems();
  // 1. The keys (an unknown key, a key without a value, an empty list), then the required one.
  checkOptionKeys(config, spec, problems, false);
  if (!Object.hasOwn(config, required)) problems.add('invalid-option', `\`${required}\` is missing`);
  const keyProblems = problems.failed;
  // 2. The values (not without the required one: its absence is said once, above).
  const built = (config as Record<string, unknown>)[required] === undefined ? undefined : problems.attempt(() => build(config));
  // A value's own error stands alone (its wording is relied on); a key problem names the entry point.
  problems.throwIfAny(spec.entry, keyProblems);
  return built as V;
}

/**
 * Builds a verifier from a configuration whose keys were checked
 * ({@link checkedVerifier}); its values are validated here.
 *
 * @throws AmpCorsError for an invalid value.
 */
export function buildVerifier(config: VerifierConfig): Verifier {
  const caches = config.caches === undefined ? CACHES : validateCaches(config.caches, { trustedOperators: null });
  const rules = parsePublisherRules(config.publishers, caches);
  const explicitOrigins = config.origins === undefined ? undefined : parseOrigins(config.origins);
  const legacy = config.legacyCacheOrigins === true;
  const cacheIndex = cacheIndexOf(caches);
  // A readable form another domain also has is accepted only if that domain is trusted too (SPEC §6).
  const table = buildOriginTable(rules.exact, caches, (origin, entry) => ({ entry, verdict: cacheVerdict(origin, entry) }), {
    covered: (domain) => matchesPublisher(domain, rules),
    canonical: true,
  });
  const allowSet: CacheOriginAllowSet = {
    get: (origin) => table.get(origin)?.entry,
    get size() {
      return table.size;
    },
    *entries() {
      for (const [origin, { entry }] of table.entries()) yield [origin, entry];
    },
  };

  // The publisher origins known at construction: the configured origins, or
  // https:// + each exact domain (looked up in the rules themselves, its
  // verdict made on demand: no table of one object per origin).
  let longestPublisherOrigin = 0;
  for (const origin of explicitOrigins ?? []) longestPublisherOrigin = Math.max(longestPublisherOrigin, origin.length);
  if (!explicitOrigins) for (const domain of rules.exact) longestPublisherOrigin = Math.max(longestPublisherOrigin, SCHEME.length + domain.length);
  const knownPublisherOrigin = (origin: string): boolean => {
    // (Length first: hashing a hostile 10 kB header for a set lookup would cost more than refusing it.)
    if (origin.length > longestPublisherOrigin) return false;
    if (explicitOrigins) return explicitOrigins.has(origin);
    return origin.startsWith(SCHEME) && rules.exact.has(origin.slice(SCHEME.length));
  };
  // Their verdicts, made on demand and shared while remembered (frozen: a handler cannot alter the next request's).
  const publisherVerdicts = createRecentMemo<AllowedVerdict>(PUBLISHER_MEMO_GENERATION_SIZE);
  const publisherVerdict = (origin: string): AllowedVerdict =>
    Object.freeze(
      explicitOrigins
        ? { allowed: true, origin, via: 'publisher', reason: 'publisher-origin' }
        : { allowed: true, origin, via: 'publisher', reason: 'publisher-origin', publisherDomain: origin.slice(SCHEME.length) },
    );
  const isPublisherOrigin = (origin: string): boolean => {
    const known = typeof origin === 'string' && knownPublisherOrigin(origin);
    if (explicitOrigins || known) return known;
    const parsed = parseOrigin(origin);
    return parsed.ok && parsed.scheme === 'https' && parsed.port === null && matchesPublisher(parsed.host, rules);
  };

  // Twin of allowSetSource (step 1, withSource) in verdict-sources.ts: keep in step.
  const lastWithSource = new WeakMap<Verdict, AllowedVerdict>();
  const withSource = (verdict: AllowedVerdict, context: VerifyContext | undefined): Verdict => {
    const source = context?.sourceOrigin;
    if (source === undefined || source === null) return verdict;
    if (typeof source === 'string') {
      const last = lastWithSource.get(verdict);
      if (last !== undefined && last.sourceOrigin === source) return last;
      if (isPublisherOrigin(source)) {
        const allowed = { ...verdict, sourceOrigin: source };
        if (Object.isFrozen(verdict)) lastWithSource.set(verdict, Object.freeze(allowed));
        return allowed;
      }
    }
    return deny(verdict.origin, 'source-origin-mismatch', `__amp_source_origin ${shown(String(source))} is not a publisher origin`);
  };

  const verify = (origin: string | null | undefined, context?: VerifyContext): Verdict => {
    try {
      return judge(origin, context);
    } catch (error) {
      // Defence in depth: judge() is written not to throw; if it ever does, deny.
      return deny(typeof origin === 'string' ? origin : null, 'malformed', `internal error: ${error instanceof Error ? error.message : 'unknown'}`);
    }
  };

  const judge = (origin: string | null | undefined, context?: VerifyContext): Verdict => {
    // 1. No Origin: a same-origin request from the publisher's own page.
    if (origin === undefined || origin === null || origin === '') {
      if (context?.ampSameOrigin === 'true') return withSource({ allowed: true, origin: null, via: 'same-origin', reason: 'same-origin' }, context);
      return deny(null, 'missing', 'no Origin header and no AMP-Same-Origin: true');
    }
    if (typeof origin !== 'string') return deny(null, 'malformed', 'Origin is not a string');
    // 2. Fast path: the exact bytes of a recently accepted origin, its verdict made once.
    const recalled = table.recall(origin);
    if (recalled !== undefined) return withSource(recalled.verdict, context);
    const plain = plainCacheOriginOf(origin, cacheIndex);
    // 4, recent: a plain cache origin judged lately (outside the table, which never changes), in its
    // slot of a direct-mapped memo (the whole origin compared: a slot shared by two origins only
    // costs a judging again).
    const slot = plain === undefined ? -1 : (plain.hash ^ plain.cache.cacheDomain.length) & (PLAIN_MEMO_SLOTS - 1);
    if (slot >= 0 && plainMemoOrigins[slot] === origin) {
      const recent = plainMemoVerdicts[slot] as Verdict;
      return recent.allowed ? withSource(recent, context) : recent;
    }
    // 2, searched: the table's indexes (for a plain origin, with the prefix and hash read above).
    const known = plain === undefined ? table.find(origin) : table.findPlain(origin, plain.prefix, plain.cache, plain.hash);
    if (known !== undefined) return withSource(known.verdict, context);
    // A plain readable cache origin (one label of letters, digits and inner hyphens: canonical by
    // construction) is a publisher origin only if `origins` lists it (no publisher rule lies at or
    // under a cache domain): without `origins`, it is not looked up as one.
    const publisher =
      (plain === undefined || explicitOrigins) && knownPublisherOrigin(origin)
        ? (publisherVerdicts.get(origin) ?? publisherVerdicts.set(origin, publisherVerdict(origin)))
        : undefined;
    if (publisher !== undefined) return withSource(publisher, context);
    // 4, fast: when its prefix is plain too, its claimants are found in one scan (a plain ASCII
    // prefix has one, its one reading): judged without parsing or a reading list.
    const reading = plain === undefined ? undefined : plainAsciiReading(plain.prefix);
    const claimants: readonly PrefixClaimant[] | undefined =
      plain === undefined ? undefined : reading !== undefined ? [{ publisherDomain: reading, form: 'spec' }] : plainPrefixClaimants(plain.prefix);
    if (plain !== undefined && claimants !== undefined) {
      const verdict = judgePlainCacheOrigin(origin, plain.cache, plain.prefix, claimants);
      // Kept on second sight only: a verdict kept costs the garbage collector more than judging (it outlives
      // the young generation), so an origin seen once leaves only its prefix's hash behind.
      if (plainMemoSeen[slot] === plain.hash) {
        plainMemoOrigins[slot] = origin;
        plainMemoVerdicts[slot] = verdict;
      } else {
        plainMemoSeen[slot] = plain.hash;
      }
      return verdict.allowed ? withSource(verdict, context) : verdict;
    }
    // 4, remembered: the verdict of a recent cache origin outside the table (the length cap first:
    // a hostile long header is not hashed for it).
    const remembered = origin.length <= MAX_ORIGIN_LENGTH ? cacheVerdicts.get(origin) : undefined;
    if (remembered !== undefined) return remembered.allowed ? withSource(remembered, context) : remembered;
    // 3. Judge the header as sent.
    const parsed = parseOrigin(origin);
    if (!parsed.ok) return deny(origin, parsed.reason, parsed.detail);
    // 4. Cache origins.
    const onCache = findCacheOfHost(parsed.host, caches);
    if (onCache) {
      const verdict = cacheVerdicts.set(origin, Object.freeze(judgeCacheOrigin(origin, onCache.cache, onCache.prefix)));
      return verdict.allowed ? withSource(verdict, context) : verdict;
    }
    // 5. The publisher's own origins by the default rule.
    if (!explicitOrigins && parsed.scheme === 'https' && parsed.port === null && matchesPublisher(parsed.host, rules)) {
      return withSource({ allowed: true, origin, via: 'publisher', reason: 'publisher-origin', publisherDomain: parsed.host }, context);
    }
    return deny(origin, 'unknown-origin', `${shown(origin)} is neither a publisher origin nor a cache origin`);
  };

  // The direct-mapped memo of plain cache origins' verdicts (frozen, shared): an origin and its verdict per slot,
  // and the hash of the prefix last seen there.
  const plainMemoSeen = new Uint32Array(PLAIN_MEMO_SLOTS);
  const plainMemoOrigins: (string | undefined)[] = new Array<string | undefined>(PLAIN_MEMO_SLOTS).fill(undefined);
  const plainMemoVerdicts: (Verdict | undefined)[] = new Array<Verdict | undefined>(PLAIN_MEMO_SLOTS).fill(undefined);
  // The verdicts of recent cache origins outside the table (a wildcard rule's, an unknown publisher's, …), shared and frozen.
  const cacheVerdicts = createRecentMemo<Verdict>(CACHE_MEMO_GENERATION_SIZE);
  // Twin of judgeCacheOrigin's readable branch for a prefix whose claimants are all known (plainPrefixClaimants): keep in step.
  const judgePlainCacheOrigin = (origin: string, cache: AmpCache, prefix: string, claimants: readonly PrefixClaimant[]): Verdict => {
    let covering: PrefixClaimant | undefined;
    for (let i = 0; i < claimants.length; i++) {
      const claimant = claimants[i] as PrefixClaimant;
      const publisherDomain = claimant.publisherDomain;
      // matchesPublisher, its wildcard half kept for the covering claimant below. A sole claimant
      // is not looked up among the exact domains: one that is has this prefix in the table, searched
      // before (SPEC §6: no other claimant to refuse it), so only a wildcard can cover it here.
      const base = wildcardBaseOf(publisherDomain, rules);
      if (base === undefined && (claimants.length === 1 || !rules.exact.has(publisherDomain))) {
        const detail =
          i > 0
            ? `${prefix} is also the prefix of ${publisherDomain} (${claimant.form} algorithm), which is not a configured publisher`
            : `${publisherDomain} is not a configured publisher`;
        return Object.freeze({ allowed: false, origin, reason: 'unknown-publisher', detail, cache, prefix, publisherDomain });
      }
      if (covering === undefined && base !== undefined) covering = claimant;
    }
    const { publisherDomain, form } = covering ?? (claimants[0] as PrefixClaimant);
    return Object.freeze({ allowed: true, origin, via: 'cache', reason: 'cache-origin-wildcard', publisherDomain, cache, prefix, prefixForm: form });
  };

  // The verdict of a cache origin outside the table, without __amp_source_origin (judge applies it).
  const judgeCacheOrigin = (origin: string, cache: AmpCache, prefix: string | null): Verdict => {
    if (prefix === null) {
      if (legacy && origin === `https://${cache.cacheDomain}`) {
        return { allowed: true, origin, via: 'cache', reason: 'legacy-cache-origin', cache };
      }
      return deny(origin, 'legacy-cache-origin', `the bare ${cache.name} origin does not identify a publisher (enable legacyCacheOrigins to allow it)`, {
        cache,
      });
    }
    const outsideRules = (claimant: { readonly publisherDomain: string }): boolean => !matchesPublisher(claimant.publisherDomain, rules);
    const reversed = reverseOrigin(origin, { caches, stopAtClaimant: outsideRules });
    if (!reversed.ok) return deny(origin, reversed.reason as DenyReason, reversed.detail, { cache, prefix });
    if (reversed.hashed) {
      const why = rules.wildcard.size > 0 ? '; a hashed prefix under a wildcard rule cannot be verified: list the domain exactly' : '';
      return deny(origin, 'hashed-unknown', `hashed prefix of no configured publisher domain${why}`, { cache, prefix });
    }
    // SPEC §6: allowed only when every domain that has this prefix, under any
    // accepted algorithm, is trusted (here: under a wildcard rule, since the
    // exact domains' origins are all in the table).
    // The search stops at the first claimant outside the rules; stopped without one, it had too many readings.
    const outside = reversed.claimants.find(outsideRules);
    if (outside === undefined && !reversed.claimantsComplete) {
      return deny(origin, 'unknown-publisher', `${prefix} reads as too many possible domains to check that each is a configured publisher`, {
        cache,
        prefix,
        publisherDomain: reversed.publisherDomain,
      });
    }
    if (outside === undefined) {
      const claimant = reversed.claimants.find((c) => wildcardBaseOf(c.publisherDomain, rules) !== undefined) ?? reversed.claimants[0];
      return {
        allowed: true,
        origin,
        via: 'cache',
        reason: 'cache-origin-wildcard',
        publisherDomain: claimant?.publisherDomain ?? reversed.publisherDomain,
        cache,
        prefix,
        prefixForm: claimant?.form ?? reversed.form,
      };
    }
    const shared = outside.publisherDomain !== reversed.publisherDomain || reversed.claimants.length > 1;
    const detail = shared
      ? `${prefix} is also the prefix of ${outside.publisherDomain} (${outside.form} algorithm), which is not a configured publisher`
      : `${outside.publisherDomain} is not a configured publisher`;
    return deny(origin, 'unknown-publisher', detail, { cache, prefix, publisherDomain: outside.publisherDomain });
  };

  return { verify, isPublisherOrigin, caches, allowSet };
}

function parseOrigins(origins: readonly string[]): ReadonlySet<string> {
  if (!Array.isArray(origins)) throw new AmpCorsError('invalid-option', 'origins must be an array of origins');
  const set = new Set<string>();
  for (const origin of origins) {
    const parsed = parseOrigin(origin);
    if (!parsed.ok) {
      throw new AmpCorsError('invalid-origin', `origins: ${shown(String(origin))} is not a canonical http(s) origin (${parsed.reason}: ${parsed.detail})`);
    }
    set.add(origin);
  }
  return set;
}
