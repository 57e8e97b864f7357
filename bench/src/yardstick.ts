/**
 * The yardstick of the slow paths (issue 16): what deciding a readable ASCII
 * cache origin needs when nothing about it is unusual, written by hand.
 */
import { CACHES } from '@ampcors/core';

const CACHE_SUFFIXES = new Set(CACHES.map((cache) => `.${cache.cacheDomain}`));

/**
 * The yardstick of the slow paths: a minimal hand-written reverse of a
 * readable ASCII cache origin (`-` → `.`, `--` → `-`, the `0-…-0` wrapping
 * undone), no IDN, no hash, no
 * canonicalization, then the lookup a verifier needs (exact domain, or under
 * the wildcard base). What `verify` of such an origin should cost, give or take.
 */
export function asciiReverse(origin: string, known: ReadonlySet<string>, wildcardSuffix: string): boolean {
  if (!origin.startsWith('https://')) return false;
  const dot = origin.indexOf('.', 8);
  if (dot < 0 || !CACHE_SUFFIXES.has(origin.slice(dot))) return false;
  // A prefix with `--` at its third and fourth characters comes wrapped in `0-` … `-0`.
  const wrapped = origin.startsWith('0-', 8) && origin.startsWith('--', 12) && origin.endsWith('-0', dot);
  const end = wrapped ? dot - 2 : dot;
  let domain = '';
  let from = wrapped ? 10 : 8;
  for (let i = from; i < end; i++) {
    const c = origin.charCodeAt(i);
    if (c === 45) {
      const escaped = origin.charCodeAt(i + 1) === 45;
      domain += origin.slice(from, i) + (escaped ? '-' : '.');
      if (escaped) i++;
      from = i + 1;
    } else if (!((c >= 97 && c <= 122) || (c >= 48 && c <= 57))) return false;
  }
  domain += origin.slice(from, end);
  return known.has(domain) || domain.endsWith(wildcardSuffix);
}
