import { canonicalDomain } from './domain-name.js';
import { allPrefixForms, isHashedPrefix, type PrefixFormEntry, readablePrefixForms } from './domain-prefix.js';
import { prefixClaimants } from './prefix-claimants.js';

/**
 * The other domains that claim `prefix`, a readable form of the canonical
 * `domain` (SPEC §6 "no form another domain can claim"). Fast path: a domain
 * with no label starting `xn-` has readable forms that are its own label,
 * maybe wrapped in `0-…-0`, with no `xn--` to decode; their only readings
 * are the domain itself and `0.….0`, which ends in a number.
 */
export function otherClaimants(domain: string, prefix: string): string[] {
  if (isHashedPrefix(prefix) || !domain.includes('xn-')) return [];
  return prefixClaimants(prefix)
    .map((claimant) => claimant.publisherDomain)
    .filter((claimant) => claimant !== domain);
}

/**
 * The readable prefixes of a canonical domain that the allow-set accepts:
 * those every claimant of which is `covered` by the configuration (the
 * configured exact domains and wildcard rules). No SHA-256; no punycode for
 * a plain domain.
 */
export function acceptedReadableForms(domain: string, covered: (domain: string) => boolean): PrefixFormEntry[] {
  const forms = readablePrefixForms(domain);
  return domain.includes('xn-') ? forms.filter(({ prefix }) => otherClaimants(domain, prefix).every(covered)) : forms;
}

/**
 * Every prefix a real AMP cache may use for a publisher domain and no other
 * domain can claim (SPEC §6): the guide's prefix, toolbox-cache-url's of the
 * ASCII and of the Unicode form, amppackager's (non-transitional input), and
 * the SHA-256 hash of the ASCII and of the Unicode form (for every domain);
 * then a readable form is dropped when another domain that could exist has
 * it under any of these algorithms (toolbox's `xn--shop-example-org-fun` of
 * `xn-shop.example.org.fun` is also `shopђ.example.org`'s). Duplicates are
 * removed, first form wins. Each is derived from the domain alone, so none
 * widens trust; transitional forms (`fass-de` for `faß.de`) are never listed.
 *
 * @throws AmpCorsError `invalid-domain` for a malformed domain.
 * @example prefixForms('example.com').map((f) => f.prefix) // ['example-com', '<hash of example.com>']
 */
export function prefixForms(publisherDomain: string): PrefixFormEntry[] {
  const ascii = canonicalDomain(publisherDomain);
  return allPrefixForms(ascii).filter(({ prefix }) => otherClaimants(ascii, prefix).length === 0);
}
