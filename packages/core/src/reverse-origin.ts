import { toASCII, toUnicode } from 'punycode/punycode.es6.js';
import { CACHES, type AmpCache } from './caches.js';
import { canonicalDomain } from './domain-name.js';
import { domainPrefix, type PrefixForm, toolboxPrefix } from './domain-prefix.js';
import { parseOrigin, type OriginSyntaxReason } from './origin-header.js';

/** Why an origin could not be reversed to a publisher domain. */
export type ReverseFailure =
  | OriginSyntaxReason
  | 'insecure-scheme'
  | 'non-default-port'
  | 'unknown-cache'
  | 'cache-root'
  | 'not-a-label'
  | 'invalid-punycode'
  | 'invalid-domain'
  | 'not-reproducible';

/** Options of {@link reverseOrigin}. */
export interface ReverseOriginOptions {
  /** The registered caches (default: the bundled {@link CACHES}). */
  readonly caches?: readonly AmpCache[];
}

/** An origin on a cache whose prefix was reversed to its publisher domain. */
export interface ReversedOrigin {
  readonly ok: true;
  readonly hashed: false;
  /** The cache the origin belongs to. */
  readonly cache: AmpCache;
  /** The domain prefix (the origin's first label). */
  readonly prefix: string;
  /** The publisher domain, canonical ASCII. */
  readonly publisherDomain: string;
  /** Which forward algorithm reproduces the prefix byte for byte. */
  readonly form: Extract<PrefixForm, 'spec' | 'toolbox'>;
}

/** An origin on a cache whose prefix is a hash and cannot be reversed. */
export interface HashedOrigin {
  readonly ok: true;
  readonly hashed: true;
  /** The cache the origin belongs to. */
  readonly cache: AmpCache;
  /** The hashed domain prefix: check it against a precomputed allow-set. */
  readonly prefix: string;
}

/** An origin that is not a reversible cache origin, and why. */
export interface NotReversed {
  readonly ok: false;
  /** The stable reason code. */
  readonly reason: ReverseFailure;
  /** A short human-readable explanation. */
  readonly detail: string;
  /** The cache, when the host is on one. */
  readonly cache?: AmpCache;
  /** The domain prefix, when one was found. */
  readonly prefix?: string;
}

/** What {@link reverseOrigin} returns; it never throws. */
export type ReverseOriginResult = ReversedOrigin | HashedOrigin | NotReversed;

/** Finds the registered cache whose `.cacheDomain` ends `host`, or the cache whose domain it is. */
export function findCacheOfHost(host: string, caches: readonly AmpCache[]): { cache: AmpCache; prefix: string | null } | undefined {
  for (const cache of caches) {
    if (host === cache.cacheDomain) return { cache, prefix: null };
    const suffixLength = cache.cacheDomain.length + 1;
    if (host.length > suffixLength && host.endsWith(cache.cacheDomain) && host.charCodeAt(host.length - suffixLength) === 46) {
      return { cache, prefix: host.slice(0, host.length - suffixLength) };
    }
  }
  return undefined;
}

/**
 * SPEC §4 steps 3–6 on a domain prefix that contains a `-`: the publisher
 * domain it spells, or `undefined` when the label is not valid punycode.
 * No check is made here that the result is canonical: see {@link reverseOrigin}.
 *
 * @example decodePrefix('a--b-example-com') // 'a-b.example.com'
 */
export function decodePrefix(prefix: string): string | undefined {
  let label = prefix;
  // Step 3: an `xn--` label is punycode-decoded.
  if (label.startsWith('xn--')) {
    try {
      label = toUnicode(label);
    } catch {
      return undefined;
    }
  }
  // Step 4: remove the `0-` … `-0` wrap.
  if (label.length >= 4 && label.startsWith('0-') && label.endsWith('-0')) label = label.slice(2, -2);
  // Step 5: left to right, `--` emits `-` and a single `-` emits `.`.
  let out = '';
  for (let i = 0; i < label.length; i++) {
    const ch = label[i] as string;
    if (ch !== '-') out += ch;
    else if (label[i + 1] === '-') {
      out += '-';
      i++;
    } else out += '.';
  }
  // Step 6: IDNA to ASCII.
  try {
    return toASCII(out);
  } catch {
    return undefined;
  }
}

/**
 * Turns a CORS `Origin` back into the publisher domain (SPEC §4), judging the
 * header as sent (SPEC §6). Never throws. A prefix is reversed only if
 * forward-computing the result reproduces it byte for byte — with the
 * guide's algorithm or toolbox-cache-url's — so `example-com-` (the prefix of
 * `example.com.`) or `0-0-en--us-example-com-0-0` never reverse to a domain
 * whose real prefix differs. A prefix with no `-` is a hash (`hashed: true`):
 * it can only be checked against a precomputed allow-set.
 *
 * @example reverseOrigin('https://www-example-com.cdn.ampproject.org')
 *   // { ok: true, hashed: false, publisherDomain: 'www.example.com', prefix: 'www-example-com', form: 'spec', cache: … }
 */
export function reverseOrigin(origin: string, options: ReverseOriginOptions = {}): ReverseOriginResult {
  const caches = options.caches ?? CACHES;
  const parsed = parseOrigin(origin);
  if (!parsed.ok) return parsed;
  // Step 1: remove the scheme and the cache suffix; the rest is the prefix.
  const found = findCacheOfHost(parsed.host, caches);
  if (!found) return { ok: false, reason: 'unknown-cache', detail: `${parsed.host} is not on a registered cache` };
  const { cache, prefix } = found;
  if (parsed.scheme !== 'https') return { ok: false, reason: 'insecure-scheme', detail: 'cache origins are always https', cache };
  if (parsed.port !== null) return { ok: false, reason: 'non-default-port', detail: 'cache origins use the default port', cache };
  if (prefix === null) return { ok: false, reason: 'cache-root', detail: `${cache.cacheDomain} itself has no domain prefix`, cache };
  if (prefix.includes('.')) return { ok: false, reason: 'not-a-label', detail: 'a domain prefix is a single DNS label', cache, prefix };
  // Step 2: no `-` means a hash, which cannot be reversed.
  if (!prefix.includes('-')) return { ok: true, hashed: true, cache, prefix };
  // Steps 3–6.
  const decoded = decodePrefix(prefix);
  if (decoded === undefined) return { ok: false, reason: 'invalid-punycode', detail: 'the prefix is not valid punycode', cache, prefix };
  let publisherDomain: string;
  try {
    publisherDomain = canonicalDomain(decoded);
  } catch {
    return { ok: false, reason: 'invalid-domain', detail: `the prefix spells ${JSON.stringify(decoded.slice(0, 80))}, not a domain`, cache, prefix };
  }
  // SPEC §6: never reverse-then-normalize. The result must reproduce the prefix.
  if (publisherDomain !== decoded) {
    return { ok: false, reason: 'not-reproducible', detail: 'the prefix does not spell a canonical domain', cache, prefix };
  }
  if (domainPrefix(publisherDomain) === prefix) return { ok: true, hashed: false, cache, prefix, publisherDomain, form: 'spec' };
  if (toolboxPrefix(publisherDomain) === prefix) return { ok: true, hashed: false, cache, prefix, publisherDomain, form: 'toolbox' };
  return { ok: false, reason: 'not-reproducible', detail: `${publisherDomain} has a different prefix`, cache, prefix };
}
