import { checkCacheOrigin } from './cache-origin.js';
import { canonicalDomain } from './domain-name.js';
import { isHashedPrefix } from './domain-prefix.js';
import { AmpCorsError } from './errors.js';
import { parseOrigin } from './origin-header.js';
import { prefixForms } from './prefix-forms.js';
import { publisherRuleCheck } from './publisher-rules.js';
import type { OptionKeysSpec } from './config-check.js';
import { buildVerifier, checkedVerifier, type DeniedVerdict, type Verdict, type Verifier, type VerifierConfig, type VerifyContext } from './verifier.js';

/**
 * An asynchronous registry of publisher domains, too large or too changeable
 * to hold in memory (a Redis set shared by a fleet, a database). It answers
 * two questions; both may be asked with any string from a request, so a
 * source must treat them as untrusted keys, never as patterns.
 */
export interface PublisherSource {
  /**
   * The configured publisher domain (canonical ASCII) that owns this cache
   * domain prefix in any accepted form (SPEC §6: the guide's, toolbox's, the
   * ASCII and Unicode hashes), or `undefined`.
   */
  publisherOfPrefix(prefix: string): Promise<string | undefined>;
  /** True when `domain` (canonical ASCII) is a configured publisher domain. */
  hasPublisher(domain: string): Promise<boolean>;
}

/** Configuration of {@link createAsyncVerifier}: the verifier's, plus the source. */
export interface AsyncVerifierConfig extends Omit<VerifierConfig, 'publishers'> {
  /** Publisher rules held in memory (checked first, synchronously). Default: none. */
  readonly publishers?: readonly string[];
  /** The shared registry consulted for origins the in-memory rules do not allow. */
  readonly source: PublisherSource;
}

/** A verifier whose answer is synchronous when memory decides, a promise when the source must be asked. */
export interface AsyncVerifier {
  /** Judges an `Origin`; never throws and never rejects. */
  verify(origin: string | null | undefined, context?: VerifyContext): Verdict | Promise<Verdict>;
  /** The in-memory verifier consulted first. */
  readonly memory: Verifier;
}

// Denials the source may overturn: an unknown publisher's readable prefix, an
// unknown hashed prefix, and a https origin on the default port that is no
// configured publisher origin. Every other denial (syntax, scheme, port,
// source-origin mismatch…) stands whatever the source says.
const SOURCE_CAN_DECIDE: ReadonlySet<string> = new Set(['unknown-publisher', 'hashed-unknown', 'unknown-origin']);

/** The keys of {@link AsyncVerifierConfig}: createVerifier's, and the source. */
const ASYNC_VERIFIER_KEYS_SPEC: OptionKeysSpec = {
  entry: 'createAsyncVerifier',
  keys: ['publishers', 'origins', 'caches', 'legacyCacheOrigins', 'source'],
  originKey: 'source',
  allowNothing: 'A verifier that allows no origin is not needed: deny without one.',
  allowAny: 'To allow any origin, use no verifier (an adapter given no options sends Access-Control-Allow-Origin: *).',
};

function isCanonicalDomain(domain: unknown): boolean {
  try {
    return typeof domain === 'string' && canonicalDomain(domain) === domain;
  } catch {
    return false;
  }
}

/**
 * True when `prefix` is one of the forms ampcors accepts for `domain` (SPEC
 * §6): a source's answer is a claim, checked like a configured domain, so a
 * store filled by an older version (or by hand) can never make a prefix that
 * another domain claims, or no form of the domain at all, allowed.
 */
function isAcceptedFormOf(prefix: string, domain: string): boolean {
  return prefixForms(domain).some((form) => form.prefix === prefix);
}

/**
 * Creates a verifier backed by an asynchronous {@link PublisherSource}: the
 * in-memory rules answer first, with no promise; only an origin they deny as
 * unknown is looked up in the source. A source that fails (throws or
 * rejects) denies with reason `source-unavailable` — never allows.
 *
 * @example
 * const verifier = createAsyncVerifier({ source: redisSource });
 * const verdict = await verifier.verify('https://shop-example-com.cdn.ampproject.org');
 */
export function createAsyncVerifier(config: AsyncVerifierConfig): AsyncVerifier {
  // Its keys checked as createVerifier's (the source is an origin source: no publishers is no problem here).
  const memory = checkedVerifier(config, ASYNC_VERIFIER_KEYS_SPEC, 'source', ({ source: given, publishers = [], ...rest }) => {
    if (typeof given !== 'object' || given === null || typeof given.publisherOfPrefix !== 'function' || typeof given.hasPublisher !== 'function') {
      throw new AmpCorsError('invalid-option', 'createAsyncVerifier: source must have publisherOfPrefix and hasPublisher methods');
    }
    return buildVerifier({ ...rest, publishers });
  });
  const { source } = config;
  const explicitOrigins = config.origins !== undefined;
  // A source's answer is a claim: a domain the `publishers` option refuses as an exact rule (SPEC §5: a public suffix such
  // as `github.io`, a domain at or under a cache's own domains) grants nothing, whatever a store filled by an older
  // version or by hand holds.
  const refusedPublisher = publisherRuleCheck(memory.caches);
  const isPublisherDomain = (domain: string): boolean => refusedPublisher(domain) === undefined;

  const fromSource = async (verdict: DeniedVerdict, origin: string, context: VerifyContext | undefined): Promise<Verdict> => {
    try {
      const parsed = parseOrigin(origin);
      if (!parsed.ok) return verdict;
      const onCache = checkCacheOrigin(parsed, memory.caches);
      let allowed: Verdict;
      if (onCache.ok) {
        // A cache origin (https, default port, one label, checked once in cache-origin.ts).
        const publisherDomain = await source.publisherOfPrefix(onCache.prefix);
        if (publisherDomain === undefined || !isCanonicalDomain(publisherDomain) || !isAcceptedFormOf(onCache.prefix, publisherDomain)) return verdict;
        if (!isPublisherDomain(publisherDomain)) return verdict;
        const reason = isHashedPrefix(onCache.prefix) ? 'cache-origin-hashed' : 'cache-origin';
        allowed = { allowed: true, origin, via: 'cache', reason, publisherDomain, cache: onCache.cache, prefix: onCache.prefix };
      } else if (onCache.reason === 'unknown-cache' && !explicitOrigins && parsed.scheme === 'https' && parsed.port === null) {
        // A publisher origin by the default rule: https://<configured domain>.
        if (!isCanonicalDomain(parsed.host) || !isPublisherDomain(parsed.host) || !(await source.hasPublisher(parsed.host))) return verdict;
        allowed = { allowed: true, origin, via: 'publisher', reason: 'publisher-origin', publisherDomain: parsed.host };
      } else {
        return verdict;
      }
      const source_ = context?.sourceOrigin;
      if (source_ === undefined || source_ === null) return allowed;
      if (memory.isPublisherOrigin(source_)) return { ...allowed, sourceOrigin: source_ };
      const host = parseOrigin(source_);
      if (
        !explicitOrigins &&
        host.ok &&
        host.scheme === 'https' &&
        host.port === null &&
        isPublisherDomain(host.host) &&
        (await source.hasPublisher(host.host))
      ) {
        return { ...allowed, sourceOrigin: source_ };
      }
      return { allowed: false, origin, reason: 'source-origin-mismatch', detail: '__amp_source_origin is not a publisher origin' };
    } catch (error) {
      return {
        allowed: false,
        origin,
        reason: 'source-unavailable',
        detail: `publisher source failed: ${error instanceof Error ? error.message.slice(0, 80) : 'unknown error'}`,
      };
    }
  };

  return {
    memory,
    verify(origin, context) {
      const verdict = memory.verify(origin, context);
      if (verdict.allowed || !SOURCE_CAN_DECIDE.has(verdict.reason) || typeof origin !== 'string') return verdict;
      return fromSource(verdict, origin, context);
    },
  };
}
