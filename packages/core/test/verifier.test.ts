import { describe, expect, it } from 'vitest';
import { AmpCorsError, cacheOrigin, createVerifier, domainPrefix, fallbackPrefix, MAX_CACHES, reverseOrigin, type AmpCache } from '../src/index.js';
import { buildAllowSet } from '../src/algorithms.js';

const LONG = `${'long-publisher-domain-name'.repeat(2)}.example.net`; // hashed prefix
const verifier = createVerifier({ publishers: ['example.com', 'www.example.com', '*.example.org', LONG] });

describe('createVerifier: configuration', () => {
  const refused: Array<[string, unknown, string]> = [
    ['a public suffix wildcard', { publishers: ['*.co.uk'] }, 'public-suffix-rule'],
    ['a private public suffix wildcard', { publishers: ['*.github.io'] }, 'public-suffix-rule'],
    ['an exact public suffix', { publishers: ['com'] }, 'public-suffix-rule'],
    ['a rule covering a cache', { publishers: ['*.ampproject.org'] }, 'publisher-covers-cache'],
    ['a cache domain as publisher', { publishers: ['foo.cdn.ampproject.org'] }, 'publisher-covers-cache'],
    ['an invalid domain', { publishers: ['exa mple.com'] }, 'invalid-domain'],
    ['an IP address', { publishers: ['127.0.0.1'] }, 'invalid-domain'],
    ['a non-canonical origin', { publishers: ['example.com'], origins: ['https://Example.com'] }, 'invalid-origin'],
    ['an origin with a path', { publishers: ['example.com'], origins: ['https://example.com/'] }, 'invalid-origin'],
    ['publishers not an array', { publishers: 'example.com' }, 'invalid-option'],
    ['a cache on a public suffix', { publishers: ['example.com'], caches: [{ id: 'x', name: 'X', cacheDomain: 'com' }] }, 'invalid-cache'],
  ];
  it.each(refused)('refuses %s', (_, config, code) => {
    expect(() => createVerifier(config as never)).toThrow(expect.objectContaining({ name: 'AmpCorsError', code }));
  });
  it('refuses a missing configuration with an AmpCorsError', () => {
    expect(() => createVerifier(undefined as never)).toThrow(AmpCorsError);
  });
});

describe('verify: allowed', () => {
  it('a cache origin of an exact publisher, on every cache', () => {
    expect(verifier.verify('https://example-com.cdn.ampproject.org')).toMatchObject({
      allowed: true,
      via: 'cache',
      reason: 'cache-origin',
      publisherDomain: 'example.com',
      prefix: 'example-com',
      prefixForm: 'spec',
      cache: { id: 'google' },
    });
    expect(verifier.verify('https://www-example-com.www.bing-amp.com')).toMatchObject({
      allowed: true,
      cache: { id: 'bing' },
      publisherDomain: 'www.example.com',
    });
  });
  it('a hashed cache origin from the precomputed allow-set', () => {
    const origin = cacheOrigin(LONG);
    expect(origin).toBe(`https://${fallbackPrefix(LONG)}.cdn.ampproject.org`);
    expect(verifier.verify(origin)).toMatchObject({ allowed: true, reason: 'cache-origin-hashed', publisherDomain: LONG });
  });
  it('a cache origin under a wildcard rule, by reversing the prefix', () => {
    expect(verifier.verify('https://a--b-news-example-org.cdn.ampproject.org')).toMatchObject({
      allowed: true,
      reason: 'cache-origin-wildcard',
      publisherDomain: 'a-b.news.example.org',
    });
    expect(verifier.verify('https://example-org.cdn.ampproject.org')).toMatchObject({ allowed: true, publisherDomain: 'example.org' });
  });
  it('the publisher origins by the default rule: https, default port, a publisher domain', () => {
    expect(verifier.verify('https://www.example.com')).toMatchObject({ allowed: true, via: 'publisher', reason: 'publisher-origin' });
    expect(verifier.verify('https://deep.sub.example.org')).toMatchObject({ allowed: true, via: 'publisher' });
    expect(verifier.verify('http://www.example.com')).toMatchObject({ allowed: false, reason: 'unknown-origin' });
    expect(verifier.verify('https://www.example.com:8443')).toMatchObject({ allowed: false, reason: 'unknown-origin' });
    expect(verifier.verify('https://api.example.com')).toMatchObject({ allowed: false, reason: 'unknown-origin' });
  });
  it('explicit origins replace the default rule', () => {
    const explicit = createVerifier({ publishers: ['example.com'], origins: ['http://localhost:8080', 'https://www.example.com'] });
    expect(explicit.verify('http://localhost:8080')).toMatchObject({ allowed: true, via: 'publisher' });
    expect(explicit.verify('https://example.com')).toMatchObject({ allowed: false, reason: 'unknown-origin' });
    expect(explicit.verify('https://example-com.cdn.ampproject.org').allowed).toBe(true);
  });
  it('AMP-Same-Origin: true without Origin; only the exact value counts', () => {
    expect(verifier.verify(undefined, { ampSameOrigin: 'true' })).toMatchObject({ allowed: true, via: 'same-origin', origin: null });
    for (const value of ['TRUE', 'True', ' true', 'true ', '1', 'yes', '']) {
      expect(verifier.verify(undefined, { ampSameOrigin: value })).toMatchObject({ allowed: false, reason: 'missing' });
    }
    expect(verifier.verify('', { ampSameOrigin: 'true' }).allowed).toBe(true);
    // With an Origin present, the Origin decides.
    expect(verifier.verify('https://evil.com', { ampSameOrigin: 'true' })).toMatchObject({ allowed: false, reason: 'unknown-origin' });
  });
});

describe('verify: __amp_source_origin (SPEC §7)', () => {
  it('a trusted source origin is passed on; an untrusted one denies', () => {
    expect(verifier.verify('https://example-com.cdn.ampproject.org', { sourceOrigin: 'https://example.com' })).toMatchObject({
      allowed: true,
      sourceOrigin: 'https://example.com',
    });
    expect(verifier.verify('https://example-com.cdn.ampproject.org', { sourceOrigin: 'https://evil.com' })).toMatchObject({
      allowed: false,
      reason: 'source-origin-mismatch',
    });
  });
  it('never derives what is allowed (toolbox-cors allows evil-com with __amp_source_origin=https://evil.com)', () => {
    expect(verifier.verify('https://evil-com.cdn.ampproject.org', { sourceOrigin: 'https://evil.com' })).toMatchObject({
      allowed: false,
      reason: 'unknown-publisher',
    });
  });
});

describe('verify: denied with a reason', () => {
  const denied: Array<[string, string]> = [
    ['https://evil-com.cdn.ampproject.org', 'unknown-publisher'],
    ['https://evil-example-com.cdn.ampproject.org', 'unknown-publisher'],
    ['https://example-com-evil-com.cdn.ampproject.org', 'unknown-publisher'],
    ['https://example-com.cdn.ampproject.org.evil.com', 'unknown-origin'],
    ['https://example-comcdn.ampproject.org', 'unknown-origin'],
    ['https://abcdefghijklmnopqrstuvwxyzabcdefghijklmnopqrstuvwxyz.cdn.ampproject.org', 'hashed-unknown'],
    ['https://a.example-com.cdn.ampproject.org', 'not-a-label'],
    ['https://cdn.ampproject.org', 'legacy-cache-origin'],
    ['http://example-com.cdn.ampproject.org', 'insecure-scheme'],
    ['https://example-com.cdn.ampproject.org:8443', 'non-default-port'],
    ['https://example-com.cdn.ampproject.org:443', 'not-canonical'],
    ['https://EXAMPLE-COM.cdn.ampproject.org', 'not-canonical'],
    ['HTTPS://example-com.cdn.ampproject.org', 'not-canonical'],
    ['https://example-com.cdn.ampproject.org.', 'not-canonical'],
    ['https://example-com.cdn.ampproject.org/', 'path'],
    ['https://user@example-com.cdn.ampproject.org', 'userinfo'],
    ['https://example-com.cdn.ampproject.org https://x', 'control-character'],
    ['https://example-com.cdn.ampproject.org,https://x', 'list'],
    ['null', 'null-origin'],
    ['file://', 'unsupported-scheme'],
    ['chrome-extension://abc', 'unsupported-scheme'],
    ['https://0-0-en--us-example-com-0-0.cdn.ampproject.org', 'invalid-domain'],
    ['https://0-en--us-example-com-0.cdn.ampproject.org', 'unknown-publisher'],
    ['https://xn--example-com-.cdn.ampproject.org', 'malformed'],
    ['https://example.com@evil.com', 'userinfo'],
    ['https://exämple-com.cdn.ampproject.org', 'not-canonical'],
    ['https://0x7f.0.0.1', 'not-canonical'],
    ['https://127.1', 'not-canonical'],
    ['https://1.2.3.0x4', 'not-canonical'],
  ];
  it.each(denied)('%s → %s', (origin, reason) => {
    expect(verifier.verify(origin)).toMatchObject({ allowed: false, reason });
  });
  it('prefix of a trailing-dot domain is not the domain (SPEC §6)', () => {
    expect(verifier.verify('https://example-com-.cdn.ampproject.org').allowed).toBe(false);
  });
  it('a host starting with 0x is a name, not an IPv4 address', () => {
    const hex = createVerifier({ publishers: ['0xbeef.example.com', '*.example.net'] });
    expect(hex.verify('https://0xbeef.example.com')).toMatchObject({ allowed: true, via: 'publisher' });
    expect(hex.verify('https://0xa-example-net.cdn.ampproject.org')).toMatchObject({ allowed: true, publisherDomain: '0xa.example.net' });
  });
  it('a missing Origin', () => {
    expect(verifier.verify(undefined)).toMatchObject({ allowed: false, reason: 'missing', origin: null });
    expect(verifier.verify(null)).toMatchObject({ allowed: false, reason: 'missing' });
  });
  it('the bare cache origin only with legacyCacheOrigins', () => {
    const legacy = createVerifier({ publishers: ['example.com'], legacyCacheOrigins: true });
    expect(legacy.verify('https://cdn.ampproject.org')).toMatchObject({ allowed: true, reason: 'legacy-cache-origin' });
    expect(legacy.verify('http://cdn.ampproject.org').allowed).toBe(false);
  });
  it('details never echo more than 80 characters of input', () => {
    const verdict = verifier.verify(`https://${'x'.repeat(200)}.com`);
    expect(verdict.allowed).toBe(false);
    if (!verdict.allowed) expect(verdict.detail.length).toBeLessThan(160);
  });
});

describe('custom caches', () => {
  const test: AmpCache = { id: 'test', name: 'Test cache', cacheDomain: 'amp.cache.example' };
  const custom = createVerifier({ publishers: ['example.com'], caches: [test] });
  it('allow on the configured caches only', () => {
    expect(custom.verify('https://example-com.amp.cache.example')).toMatchObject({ allowed: true, cache: { id: 'test' } });
    expect(custom.verify('https://example-com.cdn.ampproject.org')).toMatchObject({ allowed: false, reason: 'unknown-origin' });
  });
});

describe('shared verdicts', () => {
  it("an allowed cache origin gets the same frozen verdict each time; a handler cannot alter the next request's", () => {
    const verifier = createVerifier({ publishers: ['example.com'] });
    const origin = 'https://example-com.cdn.ampproject.org';
    const first = verifier.verify(origin);
    expect(Object.isFrozen(first)).toBe(true);
    expect(() => {
      (first as { publisherDomain?: string }).publisherDomain = 'evil.com';
    }).toThrow(TypeError);
    const second = verifier.verify(origin);
    expect(second).toBe(first);
    expect(second).toMatchObject({ allowed: true, publisherDomain: 'example.com', reason: 'cache-origin' });
    // With __amp_source_origin checked, the verdict is a copy carrying it.
    const withSource = verifier.verify(origin, { sourceOrigin: 'https://example.com' });
    expect(withSource).not.toBe(first);
    expect(withSource).toMatchObject({ allowed: true, sourceOrigin: 'https://example.com' });
    expect(verifier.verify(origin)).not.toHaveProperty('sourceOrigin');
    const publisher = verifier.verify('https://example.com');
    expect(publisher).toEqual({ allowed: true, origin: 'https://example.com', via: 'publisher', reason: 'publisher-origin', publisherDomain: 'example.com' });
    expect(Object.isFrozen(publisher)).toBe(true);
    expect(verifier.verify('https://example.com')).toBe(publisher);
  });
});

// Issue 16: a plain readable cache origin outside the allow-set (a wildcard
// rule's, an unknown publisher's, a simple IDN's) is judged in one scan, each
// time (judging costs what remembering would); the verdict of every other
// cache origin outside the table is remembered in a bounded memo, shared and
// frozen like the allow-set's.
describe('remembered verdicts of cache origins outside the table (issue 16)', () => {
  it('a frozen verdict each time, a copy with __amp_source_origin; the general path remembered, and forgotten after two generations', () => {
    const verifier = createVerifier({ publishers: ['example.com', '*.example.org'] });
    const wildcard = 'https://shop-example-org.cdn.ampproject.org';
    const first = verifier.verify(wildcard);
    expect(first).toMatchObject({ allowed: true, reason: 'cache-origin-wildcard', publisherDomain: 'shop.example.org', prefixForm: 'spec' });
    expect(Object.isFrozen(first)).toBe(true);
    expect(verifier.verify(wildcard)).toEqual(first);
    expect(Object.isFrozen(verifier.verify(wildcard))).toBe(true);
    const sourced = verifier.verify(wildcard, { sourceOrigin: 'https://example.com' });
    expect(sourced).toMatchObject({ allowed: true, sourceOrigin: 'https://example.com' });
    expect(verifier.verify(wildcard)).not.toHaveProperty('sourceOrigin');
    // The attacker's side: a remembered denial stays a denial, whatever the handler does with it, and a bad source still denies.
    const denied = verifier.verify('https://shop-example-org-evil-com.cdn.ampproject.org');
    expect(denied).toMatchObject({ allowed: false, reason: 'unknown-publisher', publisherDomain: 'shop.example.org.evil.com' });
    expect(() => {
      (denied as { allowed: boolean }).allowed = true;
    }).toThrow(TypeError);
    expect(verifier.verify('https://shop-example-org-evil-com.cdn.ampproject.org').allowed).toBe(false);
    expect(verifier.verify(wildcard, { sourceOrigin: 'https://evil.com' })).toMatchObject({ allowed: false, reason: 'source-origin-mismatch' });
    // The general path's verdicts (an IDN prefix with four non-ASCII letters, a hashed one, an edge-hyphen twin) are remembered.
    const general = `https://${domainPrefix('zażółć.pl')}.cdn.ampproject.org`;
    for (const origin of [general, `https://${'a'.repeat(52)}.cdn.ampproject.org`, 'https://xn---org-zxs.cdn.ampproject.org']) {
      const verdict = verifier.verify(origin);
      expect(verdict.allowed).toBe(false);
      expect(Object.isFrozen(verdict)).toBe(true);
      expect(verifier.verify(origin)).toBe(verdict);
    }
    // Bounded: 2 × 4,096 other hashed origins push it out; judged again, the same answer.
    const remembered = verifier.verify(general);
    for (let i = 0; i < 2 * 4096 + 1; i++) verifier.verify(`https://h${i.toString(36).padStart(4, '0').padEnd(51, 'x')}.cdn.ampproject.org`);
    const again = verifier.verify(general);
    expect(again).not.toBe(remembered);
    expect(again).toEqual(remembered);
  });
});

// Issue 14 item 6: a hostile caches.json of thousands of entries must not
// make each request slower (caches are found in a map by cache domain, by
// walking the host's dots) nor the build quadratic. Ratios measured in one
// run, with generous bounds: a linear scan over 8,000 caches costs hundreds
// of times more than over 2, a quadratic build 16× more for 4× the caches.
describe('cost independent of the number of caches (issue 14 item 6)', () => {
  const cachesOf = (n: number): readonly AmpCache[] =>
    Object.freeze(Array.from({ length: n }, (_, i) => Object.freeze({ id: `c${i}`, name: `C${i}`, cacheDomain: `amp${i}.cache${i % 7}.example` })));
  /** Fastest of `rounds` runs of `fn`, in ms: the cost without the garbage collector's and the other processes' pauses. */
  const fastest = (rounds: number, fn: () => void): number => {
    let best = Number.POSITIVE_INFINITY;
    for (let r = 0; r < rounds; r++) {
      const start = performance.now();
      fn();
      best = Math.min(best, performance.now() - start);
    }
    return best;
  };
  const domains = Array.from({ length: 3000 }, (_, i) => `shop${i}.example.com`);

  it('allow-set lookups and reverseOrigin cost about the same with 8,000 caches as with 2', () => {
    const few = cachesOf(2);
    const many = cachesOf(8000);
    const last = (caches: readonly AmpCache[]) => (caches[caches.length - 1] as AmpCache).cacheDomain;
    const setFew = buildAllowSet(domains, few);
    const setMany = buildAllowSet(domains, many);
    // Distinct origins on the last cache listed (a linear scan's worst case), so the recent-origin memo does not answer.
    let round = 0;
    const lookups = (set: typeof setFew, caches: readonly AmpCache[]) => () => {
      round++;
      for (let i = 0; i < 500; i++) {
        if (set.get(`https://shop${(i + round * 500) % 3000}-example-com.${last(caches)}`) === undefined) throw new Error('not allowed');
        set.get(`https://denied${i}-example-com.${last(caches)}`);
      }
    };
    lookups(setFew, few)();
    lookups(setMany, many)();
    const lookupRatio = fastest(9, lookups(setMany, many)) / fastest(9, lookups(setFew, few));
    expect(lookupRatio).toBeLessThan(3);
    const reverses = (caches: readonly AmpCache[]) => () => {
      for (let i = 0; i < 300; i++) if (!reverseOrigin(`https://a${i}-example-com.${last(caches)}`, { caches }).ok) throw new Error('not reversed');
    };
    reverses(few)();
    reverses(many)();
    const reverseRatio = fastest(9, reverses(many)) / fastest(9, reverses(few));
    expect(reverseRatio).toBeLessThan(3);
  });

  it('a verifier with the most caches validateCaches accepts verifies as fast as with 2', () => {
    const few = createVerifier({ publishers: ['*.example.org', 'example.com'], caches: cachesOf(2) });
    const most = cachesOf(MAX_CACHES);
    const many = createVerifier({ publishers: ['*.example.org', 'example.com'], caches: most });
    const last = (most[most.length - 1] as AmpCache).cacheDomain;
    const run = (v: typeof few, cacheDomain: string) => () => {
      for (let i = 0; i < 300; i++) {
        if (!v.verify(`https://w${i}-example-org.${cacheDomain}`).allowed) throw new Error('wildcard not allowed');
        v.verify(`https://w${i}-example-net.${cacheDomain}`);
      }
    };
    run(few, 'amp1.cache1.example')();
    run(many, last)();
    expect(fastest(9, run(many, last)) / fastest(9, run(few, 'amp1.cache1.example'))).toBeLessThan(3);
  });

  it('building is not quadratic in the number of caches', () => {
    const small = cachesOf(4000);
    const large = cachesOf(16000);
    buildAllowSet(['example.com'], small);
    const ratio =
      fastest(7, () => buildAllowSet(['example.com'], Object.freeze([...large]))) / fastest(7, () => buildAllowSet(['example.com'], Object.freeze([...small])));
    // Linear: about 4×; quadratic: about 16×.
    expect(ratio).toBeLessThan(8);
  });
});
