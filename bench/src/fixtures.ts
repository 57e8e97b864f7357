/**
 * Synthetic publisher configurations shared by the micro and HTTP benchmarks.
 * Domains are realistic in shape and length; every tenth one is long enough
 * that its domain prefix falls back to the SHA-256 hash (SPEC §2).
 */
import { CACHES, domainPrefix } from '@ampcors/core';

/** The wildcard rule every benchmark verifier carries (for the reverse-path row). */
export const WILDCARD_BASE = 'wildcard-publisher.com';

/** Publisher domain number `i`: short, or (every tenth) one whose prefix is a hash. */
export function publisherDomain(i: number): string {
  return i % 10 === 9 ? `publisher-with-a-rather-long-name-${i}.regional-news-network-group.com` : `www.publisher${i}.com`;
}

/** The first `count` publisher domains. */
export function publisherDomains(count: number): string[] {
  return Array.from({ length: count }, (_, i) => publisherDomain(i));
}

/** Accepted cache origins (alternating Google and Bing) of up to `limit` domains, readable or hashed. */
export function cacheOrigins(domains: readonly string[], hashed: boolean, limit: number): string[] {
  const origins: string[] = [];
  for (let i = 0; i < domains.length && origins.length < limit; i++) {
    const prefix = domainPrefix(domains[i] as string);
    if (prefix.includes('-') === hashed) continue;
    origins.push(`https://${prefix}.${(CACHES[origins.length % CACHES.length] as (typeof CACHES)[number]).cacheDomain}`);
  }
  return origins;
}

/**
 * `count` distinct strings of exactly `length` characters, shaped like
 * origins: the members of the `Set.has` floor.
 */
export function floorStrings(count: number, length = 45): string[] {
  return Array.from({ length: count }, (_, i) => {
    const head = `https://www.floor-${i}.`;
    return `${head}${'example-publisher-domain.com'.padEnd(length - head.length, 'x')}`.slice(0, length);
  });
}

const MIX_WORDS = ['news', 'shop', 'daily', 'media', 'travel', 'recipes', 'sport', 'tech'];
const MIX_SUFFIXES = ['com', 'org', 'net', 'de', 'fr', 'co.uk', 'com.br', 'io'];
const MIX_IDN = ['münchen', 'crème', 'ελληνικά', '日本語', 'россия', 'español'];

/**
 * Publisher domain number `i` of a mixed list, for the compact allow-set:
 * 90 % plain ASCII names, 5 % IDNs (they have several prefix forms) and 5 %
 * names too long for a readable prefix (hashed forms only).
 */
export function mixedPublisherDomain(i: number): string {
  const word = MIX_WORDS[i % MIX_WORDS.length] as string;
  const suffix = MIX_SUFFIXES[(i >>> 3) % MIX_SUFFIXES.length] as string;
  switch (i % 20) {
    case 3:
      return `${MIX_IDN[(i >>> 2) % MIX_IDN.length]}-${i}.${suffix}`;
    case 11:
      return `${word}-portal-${i}-${'regional'.repeat(4)}.${'network-group-'.repeat(2)}${i % 997}.${suffix}`;
    default:
      return i % 3 === 0 ? `www.${word}${i}.${suffix}` : `${word}${i}.${suffix}`;
  }
}
