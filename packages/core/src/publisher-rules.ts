import { getDomain } from 'tldts';
import type { AmpCache } from './caches.js';
import { canonicalDomain } from './domain-name.js';
import { AmpCorsError, isAmpCorsError } from './errors.js';

/** Publisher rules after validation: exact domains and wildcard bases, canonical ASCII. */
export interface PublisherRules {
  /** Domains trusted exactly (`example.com`). */
  readonly exact: ReadonlySet<string>;
  /** Bases of `*.base` rules: the base and every subdomain are trusted. */
  readonly wildcard: ReadonlySet<string>;
}

function coversCache(domain: string, wildcard: boolean, caches: readonly AmpCache[]): AmpCache | undefined {
  return caches.find(
    (cache) =>
      domain === cache.cacheDomain ||
      domain.endsWith(`.${cache.cacheDomain}`) ||
      (wildcard && cache.cacheDomain.endsWith(`.${domain}`)),
  );
}

/**
 * Validates the `publishers` option: each entry is a domain (`example.com`,
 * trusted exactly) or `*.` + a domain (the domain and all its subdomains).
 * Refused at construction (SPEC §5, "an allow rule never covers a public
 * suffix"): a rule on a public suffix, ICANN or private (`co.uk`,
 * `*.github.io`), and a rule covering a cache domain (it would trust every
 * publisher's cache origin).
 *
 * @throws AmpCorsError `invalid-domain`, `public-suffix-rule` or `publisher-covers-cache`.
 */
export function parsePublisherRules(publishers: readonly string[], caches: readonly AmpCache[]): PublisherRules {
  if (!Array.isArray(publishers)) throw new AmpCorsError('invalid-option', 'publishers must be an array of domains');
  const exact = new Set<string>();
  const wildcard = new Set<string>();
  for (const entry of publishers) {
    if (typeof entry !== 'string') throw new AmpCorsError('invalid-domain', `publishers: ${String(entry)} is not a string`);
    const isWildcard = entry.startsWith('*.');
    let domain: string;
    try {
      domain = canonicalDomain(isWildcard ? entry.slice(2) : entry);
    } catch (error) {
      throw new AmpCorsError('invalid-domain', `publishers: ${isAmpCorsError(error) ? error.message : String(error)}`);
    }
    if (getDomain(domain, { allowPrivateDomains: true }) === null) {
      throw new AmpCorsError('public-suffix-rule', `publishers: ${entry} is a public suffix; a rule may not cover every domain under it`);
    }
    const cache = coversCache(domain, isWildcard, caches);
    if (cache) throw new AmpCorsError('publisher-covers-cache', `publishers: ${entry} covers the ${cache.name} domain ${cache.cacheDomain}`);
    (isWildcard ? wildcard : exact).add(domain);
  }
  return { exact, wildcard };
}

/** True when `domain` (canonical ASCII) is an exact rule or under a wildcard rule. */
export function matchesPublisher(domain: string, rules: PublisherRules): boolean {
  if (rules.exact.has(domain)) return true;
  return wildcardBaseOf(domain, rules) !== undefined;
}

/** The wildcard base covering `domain`, if any. */
export function wildcardBaseOf(domain: string, rules: PublisherRules): string | undefined {
  if (rules.wildcard.size === 0) return undefined;
  let candidate = domain;
  for (;;) {
    if (rules.wildcard.has(candidate)) return candidate;
    const dot = candidate.indexOf('.');
    if (dot < 0) return undefined;
    candidate = candidate.slice(dot + 1);
  }
}
