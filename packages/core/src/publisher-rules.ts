import { getDomain, parse } from 'tldts';
import type { AmpCache } from './caches.js';
import { canonicalDomain } from './domain-name.js';
import { AmpCorsError, type AmpCorsErrorCode, isAmpCorsError } from './errors.js';
import { listedProblems } from './problem-list.js';
import { PSL_ANCESTORS } from './psl-ancestors.js';

/** Publisher rules after validation: exact domains and wildcard bases, canonical ASCII. */
export interface PublisherRules {
  /** Domains trusted exactly (`example.com`). */
  readonly exact: ReadonlySet<string>;
  /** Bases of `*.base` rules: the base and every subdomain are trusted. */
  readonly wildcard: ReadonlySet<string>;
}

/** One refused entry: the error code and the sentence that explains it. */
interface Problem {
  readonly code: AmpCorsErrorCode;
  readonly text: string;
}

const PSL_OPTIONS = { allowPrivateDomains: true } as const;
/**
 * The same question of a canonical domain (canonicalDomain's output: a valid
 * host name, never an IP address, which notADomain refuses first): tldts
 * neither extracts nor validates it again.
 */
const PSL_CANONICAL_OPTIONS = {
  allowPrivateDomains: true,
  extractHostname: false,
  validateHostname: false,
  detectIp: false,
  mixedInputs: false,
} as const;

/** What was typed, quoted (control characters escaped) and cut to 100 characters. */
function quote(entry: string): string {
  return JSON.stringify(entry.length > 100 ? `${entry.slice(0, 100)}…` : entry);
}

/** A non-string entry, named without calling any of its methods (a hostile `toString` cannot throw here). */
function shown(value: unknown): string {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'an array';
  if (typeof value === 'object') return 'an object';
  if (typeof value === 'function') return 'a function';
  return String(value as number | boolean | bigint | symbol | undefined).slice(0, 100);
}

/** `(Public Suffix List, private section)` for a name that is a public suffix, per tldts. */
function listOf(suffix: string): string {
  // A `*` label stands for any label: ask about a name it matches.
  const probe = suffix.replace(/^\*(?=\.)/, 'x');
  const result = parse(probe, PSL_OPTIONS);
  if (result.publicSuffix !== probe || (!result.isIcann && !result.isPrivate)) return 'Public Suffix List';
  return `Public Suffix List, ${result.isPrivate ? 'private' : 'ICANN'} section`;
}

let ancestors: Map<string, string> | undefined;

/**
 * The public suffix lying strictly under `domain`, if any (`amazonaws.com` →
 * `s3.amazonaws.com`; `kawasaki.jp` → `*.kawasaki.jp`): from the data derived
 * from tldts's list at build time (src/psl-ancestors.ts), since tldts has no
 * API that lists the rules under a name.
 */
function suffixUnder(domain: string): string | undefined {
  if (ancestors === undefined) {
    ancestors = new Map();
    for (const pair of PSL_ANCESTORS.split(' ')) {
      const slash = pair.indexOf('/');
      ancestors.set(pair.slice(0, slash), pair.slice(slash + 1));
    }
  }
  const labels = ancestors.get(domain);
  return labels === undefined ? undefined : `${labels}.${domain}`;
}

/** A cache-operated domain no rule may reach, with what it serves. */
interface Guarded {
  readonly domain: string;
  readonly what: string;
}

/**
 * Every cache-operated domain (`cacheDomain`, `updateCacheApiDomainSuffix`,
 * `thirdPartyFrameDomainSuffix`) by name, and by each of its ancestors: one map
 * look-up per label of a rule, whatever the number of caches.
 */
function guardIndex(caches: readonly AmpCache[]): {
  readonly at: Map<string, Guarded>;
  readonly above: Map<string, Guarded>;
  /** `lengths[n]`: a guarded domain has `n` characters. */
  readonly lengths: readonly boolean[];
} {
  const at = new Map<string, Guarded>();
  const above = new Map<string, Guarded>();
  const lengths: boolean[] = [];
  const add = (domain: string | undefined, what: string): void => {
    if (domain === undefined || at.has(domain)) return;
    const guarded = { domain, what };
    at.set(domain, guarded);
    lengths[domain.length] = true;
    for (let dot = domain.indexOf('.'); dot >= 0; dot = domain.indexOf('.', dot + 1)) {
      const ancestor = domain.slice(dot + 1);
      if (!above.has(ancestor)) above.set(ancestor, guarded);
    }
  };
  for (const cache of caches) {
    add(cache.cacheDomain, `${cache.name} domain ${cache.cacheDomain}, where every publisher's cache documents are served`);
    add(cache.thirdPartyFrameDomainSuffix, `${cache.name} third-party frame domain ${cache.thirdPartyFrameDomainSuffix}, which serves anyone's iframes`);
    add(cache.updateCacheApiDomainSuffix, `${cache.name} update-cache API domain ${cache.updateCacheApiDomainSuffix}`);
  }
  return { at, above, lengths };
}

/**
 * The guarded domain that `domain` is, or lies under: its suffixes at label
 * boundaries looked up by name, only those of a guarded domain's length
 * (`lengths`), so a rule costs a slice only where a guard could be.
 */
function guardOf(domain: string, at: ReadonlyMap<string, Guarded>, lengths: readonly boolean[]): Guarded | undefined {
  for (let start = 0; start >= 0;) {
    if (lengths[domain.length - start] === true) {
      const guarded = at.get(start === 0 ? domain : domain.slice(start));
      if (guarded !== undefined) return guarded;
    }
    const dot = domain.indexOf('.', start);
    start = dot < 0 ? -1 : dot + 1;
  }
  return undefined;
}

const SCHEME = /^[a-z][a-z0-9+.-]*:\/\//i;
/** An entry that is nothing but a lowercase name ending in a letter (no scheme, port, path, IP or trailing dot), maybe after `*.`. */
const PLAIN_NAME = /^(?:\*\.)?[a-z0-9.-]*[a-z]$/;
const IPV4 = /^[0-9]+(?:\.[0-9]+){0,3}$/;

/**
 * A hint for entries that are not domains at all: a URL, a host with a port,
 * `localhost`, an IP address. They belong in `origins`, which lists exact
 * origins; `publishers` lists domains whose cache origins are trusted.
 */
function notADomain(entry: string): string | undefined {
  // The common case first: a plain name is none of these unless it is `localhost` or under it.
  if (PLAIN_NAME.test(entry) && !entry.endsWith('localhost')) return undefined;
  const bare = entry.startsWith('*.') ? entry.slice(2) : entry;
  if (SCHEME.test(bare) || bare.includes('/')) {
    let url: URL | undefined;
    try {
      url = new URL(bare);
    } catch {
      url = undefined;
    }
    const domain = url?.hostname ? `, such as ${JSON.stringify(url.hostname)}` : '';
    const origin = url?.hostname && url.origin !== 'null' ? url.origin : 'https://www.example.com';
    return `${quote(entry)} is a URL; publishers takes a domain${domain}, not a URL — origins go in \`origins\`: origins: [${JSON.stringify(origin)}]`;
  }
  const port = /:([0-9]*)$/.exec(bare);
  const host = (port === null ? bare : bare.slice(0, port.index)).replace(/\.$/, '').toLowerCase();
  if (host === 'localhost' || host.endsWith('.localhost')) {
    return `${quote(entry)} is a local development host, not a publisher domain — list its origin in \`origins\`: origins: [${JSON.stringify(`http://localhost:${port?.[1] || '3000'}`)}]`;
  }
  if (IPV4.test(host) || bare.startsWith('[') || host.includes(':')) {
    const ip = IPV4.test(host) ? host : '127.0.0.1';
    return `${quote(entry)} is an IP address, not a domain — list the origin in \`origins\`: origins: [${JSON.stringify(`http://${ip}:${port?.[1] || '3000'}`)}]`;
  }
  if (port !== null) {
    return `${quote(entry)} has a port; publishers takes a domain — origins with a port go in \`origins\`: origins: [${JSON.stringify(`https://${host}:${port[1] || '8443'}`.slice(0, 120))}]`;
  }
  return undefined;
}

/** Why `entry` may not be a rule, or undefined when it may (its canonical domain then in `out`). */
function problemOf(entry: unknown, guards: ReturnType<typeof guardIndex>, out: { domain: string; wildcard: boolean }): Problem | undefined {
  if (typeof entry !== 'string') return { code: 'invalid-domain', text: `${shown(entry)} is not a string` };
  const hint = notADomain(entry);
  if (hint !== undefined) return { code: 'invalid-domain', text: hint };
  const wildcard = entry.startsWith('*.');
  let domain: string;
  try {
    domain = canonicalDomain(wildcard ? entry.slice(2) : entry);
  } catch (error) {
    const why = isAmpCorsError(error) ? error.message : String(error);
    // canonicalDomain quotes the base; a wildcard is quoted as typed too.
    return { code: 'invalid-domain', text: wildcard ? `${quote(entry)}: ${why}` : why };
  }
  // 1. The rule's own name is a public suffix (`co.uk`, `*.github.io`), or a
  //    single label that has no registrable domain (`*.com`).
  if (getDomain(domain, PSL_CANONICAL_OPTIONS) === null) {
    const text = wildcard
      ? `${quote(entry)} would trust every domain under the public suffix ${domain} (${listOf(domain)}), which anyone can register`
      : `${quote(entry)} is a public suffix (${listOf(domain)}), not a publisher's domain; a rule may not cover every domain under it`;
    return { code: 'public-suffix-rule', text };
  }
  // 2. The rule is a cache-operated domain or under one (exact or wildcard),
  //    or, as a wildcard, covers one.
  const guarded = guardOf(domain, guards.at, guards.lengths) ?? (wildcard ? guards.above.get(domain) : undefined);
  if (guarded !== undefined) return { code: 'publisher-covers-cache', text: `${quote(entry)} covers the ${guarded.what}` };
  // 3. A wildcard over a name with public suffixes under it (`*.amazonaws.com`
  //    covers `s3.amazonaws.com`, where anyone can create a bucket).
  const under = wildcard ? suffixUnder(domain) : undefined;
  if (under !== undefined) {
    return {
      code: 'public-suffix-rule',
      text: `${quote(entry)} would trust other people's sites: the public suffix ${under} (${listOf(under)}) lies under ${domain}, and anyone can register a name there — list your own domains exactly, or a wildcard on a domain you control`,
    };
  }
  out.domain = domain;
  out.wildcard = wildcard;
  return undefined;
}

/**
 * Validates the `publishers` option: each entry is a domain (`example.com`,
 * trusted exactly) or `*.` + a domain (the domain and all its subdomains).
 * Refused at construction (SPEC §5, "an allow rule never covers a public
 * suffix, nor has one at or below its base"):
 * - a rule on a public suffix of the Public Suffix List, ICANN or private
 *   section (`co.uk`, `*.github.io`);
 * - a wildcard with a public suffix under its base (`*.amazonaws.com`:
 *   `s3.amazonaws.com`; `*.fastly.net`: `map.fastly.net`);
 * - a rule at or under a cache's `cacheDomain`, `thirdPartyFrameDomainSuffix`
 *   or `updateCacheApiDomainSuffix`, or a wildcard above one (`*.ampproject.net`,
 *   the Google cache's third-party frame domain);
 * - what is not a domain: a URL, a host with a port, `localhost`, an IP
 *   address, with a pointer to the `origins` option.
 * Every refused entry is reported at once, each quoted as typed (the first
 * 20 listed, the count naming all).
 *
 * @throws AmpCorsError `invalid-option` when `publishers` is not an array;
 *   otherwise `invalid-domain`, `public-suffix-rule` or `publisher-covers-cache`
 *   (the code of the first refused entry), the message listing each.
 */
export function parsePublisherRules(publishers: readonly string[], caches: readonly AmpCache[]): PublisherRules {
  if (!Array.isArray(publishers)) throw new AmpCorsError('invalid-option', 'publishers must be an array of domains');
  const guards = guardIndex(caches);
  const exact = new Set<string>();
  const wildcard = new Set<string>();
  const problems: Problem[] = [];
  const out = { domain: '', wildcard: false };
  for (const entry of publishers as readonly unknown[]) {
    const problem = problemOf(entry, guards, out);
    if (problem !== undefined) problems.push(problem);
    else (out.wildcard ? wildcard : exact).add(out.domain);
  }
  const [first] = problems;
  if (first !== undefined) {
    const message =
      problems.length === 1
        ? `publishers: ${first.text}`
        : listedProblems(
            'publishers',
            problems.map((problem) => problem.text),
          );
    throw new AmpCorsError(first.code, message);
  }
  return { exact, wildcard };
}

/**
 * The check {@link parsePublisherRules} makes of each entry, with the guards of
 * `caches` built once: for an entry it refuses, the `AmpCorsError` it would
 * throw for that entry alone (`publishers: …`), else `undefined`. For callers
 * that check domains one at a time against the same caches (a registry's
 * answers, a list read line by line).
 */
export function publisherRuleCheck(caches: readonly AmpCache[]): (entry: string) => AmpCorsError | undefined {
  const guards = guardIndex(caches);
  const out = { domain: '', wildcard: false };
  return (entry) => {
    const problem = problemOf(entry, guards, out);
    return problem === undefined ? undefined : new AmpCorsError(problem.code, `publishers: ${problem.text}`);
  };
}

/**
 * True when `domain` (canonical ASCII) is an exact rule or under a wildcard
 * rule. The wildcard rules are asked first: a small set is compared in place,
 * so a domain they cover is never hashed.
 */
export function matchesPublisher(domain: string, rules: PublisherRules): boolean {
  return wildcardBaseOf(domain, rules) !== undefined || rules.exact.has(domain);
}

/**
 * What {@link wildcardBaseOf} needs of a wildcard set, computed once per set:
 * the length of its longest base, and, for a small set, its bases longest
 * first (compared in place, no slice and no hashing).
 */
interface WildcardShape {
  /** The set's size when the shape was made: a set that changed size since is shaped again. */
  readonly size: number;
  readonly longest: number;
  readonly small: readonly string[] | undefined;
}

/** Sets of at most this many bases are compared base by base; larger ones are looked up by suffix. */
const SMALL_WILDCARD_SET = 8;

const wildcardShapes = new WeakMap<ReadonlySet<string>, WildcardShape>();

function wildcardShape(wildcard: ReadonlySet<string>): WildcardShape {
  let shape = wildcardShapes.get(wildcard);
  if (shape === undefined || shape.size !== wildcard.size) {
    let longest = 0;
    for (const base of wildcard) longest = Math.max(longest, base.length);
    const small = wildcard.size <= SMALL_WILDCARD_SET ? [...wildcard].sort((a, b) => b.length - a.length) : undefined;
    shape = { size: wildcard.size, longest, small };
    wildcardShapes.set(wildcard, shape);
  }
  return shape;
}

/**
 * The wildcard base covering `domain`, if any: the longest one (the base
 * nearest the domain). A small set is compared base by base, in place; a
 * larger one is looked up by suffix, only the suffixes no longer than the
 * longest base, so a hostile 253-octet host of one-letter labels costs no
 * more than a normal one.
 */
export function wildcardBaseOf(domain: string, rules: PublisherRules): string | undefined {
  if (rules.wildcard.size === 0) return undefined;
  const { longest, small } = wildcardShape(rules.wildcard);
  if (small !== undefined) {
    for (const base of small) {
      const dot = domain.length - base.length - 1;
      // The base itself, or the base after a dot.
      if (dot === -1 ? domain === base : dot >= 0 && domain.charCodeAt(dot) === 46 && domain.endsWith(base)) return base;
    }
    return undefined;
  }
  const reach = domain.length - longest;
  let start = 0;
  if (reach > 0) {
    // The first label boundary from which the rest fits in the longest base.
    const dot = domain.indexOf('.', reach - 1);
    if (dot < 0) return undefined;
    start = dot + 1;
  }
  for (;;) {
    const candidate = start === 0 ? domain : domain.slice(start);
    if (rules.wildcard.has(candidate)) return candidate;
    const dot = domain.indexOf('.', start);
    if (dot < 0) return undefined;
    start = dot + 1;
  }
}
