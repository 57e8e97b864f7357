// The request path's recognizer of plain cache origins (issue 16): whatever
// it recognizes, the general path (parse the header as sent, https, default
// port, find the cache, one label) reads the same way; hostile lookalikes of
// a cache domain are never recognized.
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { type AmpCache, CACHES, parseOrigin, validateCaches } from '../src/index.js';
import { findCacheOfHost } from '../src/algorithms.js';
import { cacheIndexOf, plainCacheOriginOf } from '../src/cache-origin.js';

/** Two custom caches whose domains have the same length (the map is asked), beside the bundled ones. */
const CUSTOM: readonly AmpCache[] = validateCaches(
  [
    ...CACHES,
    { id: 'one', name: 'One', docs: 'https://one.example/', cacheDomain: 'amp-one.example', updateCacheApiDomainSuffix: 'amp-one.example' },
    { id: 'two', name: 'Two', docs: 'https://two.example/', cacheDomain: 'amp-two.example', updateCacheApiDomainSuffix: 'amp-two.example' },
  ] as never,
  { trustedOperators: null },
);

function general(origin: string, caches: readonly AmpCache[]): { cache: AmpCache; prefix: string } | undefined {
  const parsed = parseOrigin(origin);
  if (!parsed.ok || parsed.scheme !== 'https' || parsed.port !== null) return undefined;
  const found = findCacheOfHost(parsed.host, caches);
  return found === undefined || found.prefix === null || found.prefix.includes('.') ? undefined : { cache: found.cache, prefix: found.prefix };
}

describe('plainCacheOriginOf', () => {
  it('recognizes only what the general path reads the same way (bundled and custom caches)', () => {
    const domains = [...CUSTOM.map((c) => c.cacheDomain), 'xcdn.ampproject.org', 'cdn.ampproject.org.evil.com', 'CDN.ampproject.org', 'amp-one.exampl'];
    const label = fc.oneof(fc.stringMatching(/^[a-z0-9](?:[a-z0-9-]{0,6}[a-z0-9])?$/), fc.stringMatching(/^[a-zA-Z0-9-]{0,8}$/));
    const origin = fc
      .tuple(
        fc.constantFrom('https://', 'http://', 'HTTPS://', 'https:/'),
        label,
        fc.constantFrom('.', '..', ''),
        fc.constantFrom(...domains),
        fc.constantFrom('', ':443', '/', '.'),
      )
      .map(([scheme, l, dot, domain, tail]) => `${scheme}${l}${dot}${domain}${tail}`);
    const wellFormed = fc
      .tuple(fc.stringMatching(/^[a-z0-9](?:[a-z0-9-]{0,6}[a-z0-9])?$/), fc.constantFrom(...domains))
      .map(([l, domain]) => `https://${l}.${domain}`);
    let recognized = 0;
    fc.assert(
      fc.property(fc.oneof(origin, wellFormed), (o) => {
        for (const caches of [CACHES, CUSTOM]) {
          const plain = plainCacheOriginOf(o, cacheIndexOf(caches));
          if (plain === undefined) continue;
          recognized++;
          expect(general(o, caches)).toEqual({ cache: plain.cache, prefix: plain.prefix });
        }
      }),
      { numRuns: 5000 },
    );
    expect(recognized).toBeGreaterThan(500);
  });

  it('attacker: lookalikes of a cache domain are not cache origins', () => {
    const index = cacheIndexOf(CACHES);
    for (const o of [
      'https://a-com.xcdn.ampproject.org',
      'https://a-com.cdn.ampproject.org.evil.com',
      'https://a-com.cdn-ampproject.org',
      'https://a-com.cdnXampproject.org',
      'https://a-com.ampproject.org',
      'https://a-com.cdn.ampproject.orgx',
      'https://-a.cdn.ampproject.org',
      'https://a-.cdn.ampproject.org',
      'https://A-com.cdn.ampproject.org',
      'https://a-com.cdn.ampproject.org:443',
      'http://a-com.cdn.ampproject.org',
    ]) {
      expect(plainCacheOriginOf(o, index), o).toBeUndefined();
    }
    expect(plainCacheOriginOf('https://a-com.cdn.ampproject.org', index)).toMatchObject({ prefix: 'a-com', cache: { cacheDomain: 'cdn.ampproject.org' } });
  });
});
