/**
 * The "try it" lines the demo prints at start: ready-to-paste curl commands
 * for an allowed cache origin, an allowed hashed cache origin, a denied
 * origin and a preflight, each labelled with the status and reason code the
 * server will answer (computed by @ampcors/core with the server's own
 * configuration, so the labels cannot drift from the behaviour).
 */
import { cacheOrigin, createVerifier, domainPrefix, fallbackPrefix, type VerifierConfig } from '@ampcors/core';

/** One suggested request. */
export interface TryIt {
  /** What it shows, with the expected status and reason code. */
  readonly comment: string;
  /** The curl command line. */
  readonly curl: string;
}

/** A cache origin of an attacker's domain: what a page of evil.com on Google's AMP cache sends. */
const FOREIGN_CACHE_ORIGIN = 'https://evil-com.cdn.ampproject.org';

const quote = (value: string) => `'${value.replaceAll("'", `'\\''`)}'`;

function label(verifier: ReturnType<typeof createVerifier>, origin: string, method: 'GET' | 'POST'): string {
  const verdict = verifier.verify(origin);
  if (verdict.allowed) return `allowed, 200 (${verdict.reason})`;
  return `denied, 403 ${verdict.reason}${method === 'POST' ? ' — the handler never runs' : ''} (${verdict.detail})`;
}

/**
 * The suggested requests for a server at `baseUrl` configured with `config`.
 * The hashed example needs an exact publisher domain whose prefix is hashed
 * (basic prefix over 63 characters); it is left out when there is none.
 */
export function tryItLines(baseUrl: string, config: VerifierConfig): TryIt[] {
  const verifier = createVerifier(config);
  const exact = config.publishers.filter((rule) => !rule.startsWith('*.'));
  const readable = exact.find((domain) => domainPrefix(domain) !== fallbackPrefix(domain));
  const hashed = exact.find((domain) => domainPrefix(domain) === fallbackPrefix(domain));
  const lines: TryIt[] = [];
  const get = (origin: string) => `curl -i -H ${quote(`Origin: ${origin}`)} ${baseUrl}/api/items`;
  if (readable !== undefined) {
    const origin = cacheOrigin(readable);
    lines.push({ comment: `Google AMP Cache origin of ${readable}: ${label(verifier, origin, 'GET')}`, curl: get(origin) });
  }
  if (hashed !== undefined) {
    const origin = cacheOrigin(hashed);
    lines.push({ comment: `hashed Google AMP Cache origin of ${hashed}: ${label(verifier, origin, 'GET')}`, curl: get(origin) });
  }
  lines.push({
    comment: `amp-form POST from a page of evil.com on the AMP cache: ${label(verifier, FOREIGN_CACHE_ORIGIN, 'POST')}`,
    curl: `curl -i -X POST -H ${quote(`Origin: ${FOREIGN_CACHE_ORIGIN}`)} -d email=reader@example.com ${baseUrl}/api/subscribe`,
  });
  if (readable !== undefined) {
    const origin = cacheOrigin(readable);
    lines.push({
      comment: `CORS preflight from the cache origin of ${readable}: answered 204`,
      curl: `curl -i -X OPTIONS -H ${quote(`Origin: ${origin}`)} -H 'Access-Control-Request-Method: POST' -H 'Access-Control-Request-Headers: content-type' ${baseUrl}/api/subscribe`,
    });
  }
  return lines;
}
