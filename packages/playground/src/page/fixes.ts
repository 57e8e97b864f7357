/**
 * "How to fix" for every reason the verifier denies an origin with: one plain
 * sentence per `DenyReason` of @ampcors/core, shown under the verdict. The
 * `Record` type makes the list exhaustive: a reason code core adds (or drops)
 * fails the typecheck here until it has its sentence.
 */
import type { DenyReason } from '@ampcors/core';

/** One plain sentence per deny reason code: what to change so the request is allowed (or why nothing should). */
export const DENY_FIXES: Readonly<Record<DenyReason, string>> = Object.freeze({
  missing:
    'The request has no Origin header: a cross-origin fetch from a browser always sends one, and a same-origin AMP request must send AMP-Same-Origin: true (when testing with curl, add -H "Origin: …").',
  'too-long': 'No browser sends an Origin this long: find the client or proxy that built this header; no configuration should allow it.',
  'null-origin':
    'Origin "null" comes from sandboxed frames, file:// pages and some redirects: load the page from its real https address; ampcors never trusts "null".',
  list: 'The header holds several origins, and a browser sends exactly one: fix the proxy or client that joins them.',
  'control-character': 'The header contains whitespace or a control character, which a browser never sends: fix the client or proxy that altered it.',
  malformed: 'This is not an origin: send only scheme://host[:port], for example https://example-com.cdn.ampproject.org.',
  'unsupported-scheme': 'Only http and https origins can be trusted: serve the page over https.',
  userinfo: 'Remove the user:password@ part: a browser never puts credentials in an Origin.',
  path: 'An Origin has no path, query or trailing slash: keep only scheme://host[:port].',
  'not-canonical':
    "Browsers send the host in lowercase and in punycode (xn--…), without a default port or trailing dot: use the origin exactly as the browser's Network panel shows it.",
  'insecure-scheme':
    "AMP caches serve only over https, and by default so do your own origins: load the page over https; a local http development origin must be listed exactly in the verifier's origins option.",
  'non-default-port':
    "Only the default port is trusted by default: add the exact origin with its port (e.g. https://example.com:8443) to the verifier's origins option; cache origins never use another port.",
  'unknown-origin':
    'This origin is neither an AMP cache origin nor one of your sites: if it is your site, add its domain to the publisher list (or the exact origin to the origins option).',
  'unknown-publisher':
    'The AMP cache serves this page for a domain that is not on your list: if you own that publisher domain (shown below), add it, or *.its-parent for all its subdomains.',
  'hashed-unknown':
    "The cache used a hashed prefix (the domain is too long or unusual to spell out) and none of your exact domains produces it: list the page's domain exactly, since a *. rule cannot match a hashed prefix.",
  'legacy-cache-origin':
    'A bare cache origin (https://cdn.ampproject.org) names no publisher, so any page on the cache could send it: only very old AMP viewers do; set legacyCacheOrigins: true only if you must serve them.',
  'not-a-label':
    'A cache prefix is a single DNS label (no dots before the cache domain): no AMP cache serves this host; take the cache URL from the cache-URL tool below.',
  'invalid-punycode': 'The prefix is not valid punycode, so no AMP cache made it: take the cache URL from the cache-URL tool below.',
  'invalid-domain': 'The prefix does not spell a valid domain, so no publisher can own it: take the cache URL from the cache-URL tool below.',
  'not-reproducible':
    'The prefix decodes to a domain whose real cache prefix is different (a hand-made or look-alike URL): use the cache URL the cache itself gives, shown by the cache-URL tool below.',
  'source-origin-mismatch':
    'The __amp_source_origin query parameter does not name one of your own origins: the AMP page must come from your publisher domain, or the parameter was tampered with.',
  'source-unavailable':
    'The shared publisher registry (e.g. Redis) could not be read, so everything it would allow is denied: fix the registry connection; nothing in the origin is wrong.',
});
