// The allow-set's definition, written from the spec without the allow-set's
// indexes: every form of allPrefixForms × caches whose claimants
// (searchClaimants, complete) are all configured, the first listed domain
// winning. Shared by the allow-set and verifier tests.
import { type AllowEntry, type AmpCache, canonicalDomain } from '../src/index.js';
import { allPrefixForms } from '../src/algorithms.js';
import { searchClaimants } from '../src/prefix-claimants.js';

/** The reference: one entry per origin string. */
export function referenceMap(domains: readonly string[], caches: readonly AmpCache[]): Map<string, AllowEntry> {
  const configured = new Set(domains.map((d) => canonicalDomain(d)));
  const map = new Map<string, AllowEntry>();
  for (const raw of domains) {
    const domain = canonicalDomain(raw);
    for (const { prefix, form } of allPrefixForms(domain)) {
      const search = prefix.includes('-') ? searchClaimants(prefix) : { complete: true, claimants: [] };
      if (!search.complete || !search.claimants.every((claimant) => configured.has(claimant.publisherDomain))) continue;
      for (const cache of caches) {
        const origin = `https://${prefix}.${cache.cacheDomain}`;
        if (!map.has(origin)) map.set(origin, { publisherDomain: domain, cache, prefix, form });
      }
    }
  }
  return map;
}
