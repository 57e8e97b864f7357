/**
 * `@ampcors/core/algorithms` — the steps the verifier is built from, one by
 * one: every prefix form and reading of a domain (SPEC §2, §6), the search
 * for the domains that could claim a prefix (SPEC §4, §6), the hyphen and
 * punycode steps of the reverse algorithm, the host a browser writes, the
 * publisher rules, the plain allow-set and the cache-origin check. For audits,
 * differential tests and tools that inspect or reimplement a step; an
 * application needs only the main entry (`prefixForms`, `reverseOrigin`,
 * `createVerifier`), which applies these steps in the order the spec gives.
 *
 * @packageDocumentation
 */
export { browserHost, MAX_DOMAIN_LENGTH, MAX_LABEL_LENGTH } from './domain-name.js';
export {
  allPrefixForms,
  HASHED_PREFIX_LENGTH,
  hashedPrefixForms,
  isHashedPrefix,
  MAX_PREFIX_LENGTH,
  readableFormOf,
  readableFormsOf,
  readablePrefixForms,
} from './domain-prefix.js';
export {
  type ClaimantSearch,
  decodeXnLabel,
  foldHyphens,
  MAX_CLAIMANT_CANDIDATES,
  type PrefixClaimant,
  prefixClaimants,
  prefixReadings,
  searchClaimants,
  unwrapLabel,
} from './prefix-claimants.js';
export { decodePrefix } from './reverse-origin.js';
export { type CacheIndex, cacheIndexOf, type CacheOriginCheck, checkCacheOrigin, findCacheOfHost } from './cache-origin.js';
export { matchesPublisher, parsePublisherRules, publisherRuleCheck, type PublisherRules, wildcardBaseOf } from './publisher-rules.js';
export { buildAllowSet } from './allow-set.js';
