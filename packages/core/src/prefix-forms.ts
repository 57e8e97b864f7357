import { canonicalDomain } from './domain-name.js';
import { allPrefixForms, isHashedPrefix, type PrefixFormEntry, readablePrefixForms } from './domain-prefix.js';
import { searchClaimants } from './prefix-claimants.js';

/**
 * True when a canonical domain's readable prefixes read back only as itself
 * (and as `0.….0`, which ends in a number): no label starting `xn-` (so no
 * `xn--` to decode, literally or Go's lenient way) and no `--` (so every run
 * of hyphens in its prefix is one `-`, a dot, or two, a hyphen: `a--b-c`
 * reads only as `a-b.c`, since two dots in a row would be an empty label).
 * Canonical domains have no label that starts or ends with `-`, which would
 * make runs of three (`a---b-c` is `a-.b.c` and `a.-b.c`).
 */
function readsOnlyAsItself(domain: string): boolean {
  return !domain.includes('xn-') && !domain.includes('--');
}

/**
 * True when `prefix`, a readable form of the canonical `domain`, is also the
 * form of a domain that could exist and is neither `domain` nor `covered`
 * by the configuration (SPEC §6 "no form another domain can claim"), or
 * when too many domains could have it to check them all (fail-closed).
 */
export function claimedByAnother(domain: string, prefix: string, covered: (domain: string) => boolean = () => false): boolean {
  if (isHashedPrefix(prefix) || readsOnlyAsItself(domain)) return false;
  return !searchClaimants(prefix, (claimant) => claimant.publisherDomain !== domain && !covered(claimant.publisherDomain)).complete;
}

/**
 * The readable prefixes of a canonical domain that the allow-set accepts:
 * those every claimant of which is `covered` by the configuration (the
 * configured exact domains and wildcard rules). No SHA-256; no punycode for
 * a plain domain.
 */
// Twin of buildReadableIndex's filter in allow-set.ts (keeps each form's position): keep in step.
export function acceptedReadableForms(domain: string, covered: (domain: string) => boolean): PrefixFormEntry[] {
  const forms = readablePrefixForms(domain);
  return readsOnlyAsItself(domain) ? forms : forms.filter(({ prefix }) => !claimedByAnother(domain, prefix, covered));
}

/**
 * Every prefix a real AMP cache may use for a publisher domain and no other
 * domain can claim (SPEC §6): the guide's prefix, toolbox-cache-url's of the
 * ASCII and of the Unicode form, amppackager's (non-transitional input), and
 * the SHA-256 hash of the ASCII and of the Unicode form (for every domain);
 * then a readable form is dropped when another domain that could exist has
 * it under any of these algorithms (toolbox's `xn--shop-example-org-fun` of
 * `xn-shop.example.org.fun` is also `shopђ.example.org`'s; the guide's
 * `xn---com-fxl` of `ன.com` is also toolbox's of `xn-.com.fxl`). Duplicates
 * are removed, first form wins. Each is derived from the domain alone, so
 * none widens trust; transitional forms (`fass-de` for `faß.de`) are never
 * listed.
 *
 * @throws AmpCorsError `invalid-domain` for a malformed domain.
 * @example prefixForms('example.com').map((f) => f.prefix) // ['example-com', '<hash of example.com>']
 */
export function prefixForms(publisherDomain: string): PrefixFormEntry[] {
  const ascii = canonicalDomain(publisherDomain);
  return allPrefixForms(ascii).filter(({ prefix }) => !claimedByAnother(ascii, prefix));
}
