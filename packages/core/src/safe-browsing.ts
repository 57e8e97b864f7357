/**
 * `@ampcors/core/safe-browsing` — the Safe Browsing canonicalization and
 * matching steps core is built on (SPEC §5): host and URL canonicalization,
 * the host-suffix/path-prefix expressions of a URL, and their SHA-256 hash
 * prefixes. Useful to check a list against Safe Browsing's rules; an
 * application deciding CORS needs only the main entry.
 *
 * @packageDocumentation
 */
export { canonicalHost, isIpHost } from './canonical-host.js';
export { type CanonicalUrlParts, canonicalizeUrl, canonicalUrlParts } from './canonical-url.js';
export { urlExpressions } from './url-expressions.js';
export { hashPrefix, hashPrefixHex, type HashPrefixLength, sha256Utf8 } from './hash-prefix.js';
