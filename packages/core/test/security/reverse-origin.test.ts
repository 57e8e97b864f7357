// reverseOrigin, decodePrefix and findCacheOfHost at their edges (issue #6,
// mutation testing): each failure's reason code and detail, the form that
// reproduces a prefix, custom caches, and hostile input that must come back
// as a result, never as an exception.
import { type AmpCache, CACHES, domainPrefix, reverseOrigin, toolboxPrefix } from '@ampcors/core';
import { decodePrefix, findCacheOfHost } from '@ampcors/core/algorithms';
import { domainToUnicode } from 'node:url';
import { describe, expect, it } from 'vitest';

const GOOGLE = CACHES[0] as AmpCache;
const BING = CACHES[1] as AmpCache;
const TEST_CACHE: AmpCache = { id: 'test', name: 'Test cache', cacheDomain: 'amp.cache.example.net' };

describe('findCacheOfHost', () => {
  it('finds the prefix on each cache, and the cache root itself', () => {
    expect(findCacheOfHost('a-b.cdn.ampproject.org', CACHES)).toEqual({ cache: GOOGLE, prefix: 'a-b' });
    expect(findCacheOfHost('a-b.www.bing-amp.com', CACHES)).toEqual({ cache: BING, prefix: 'a-b' });
    expect(findCacheOfHost('cdn.ampproject.org', CACHES)).toEqual({ cache: GOOGLE, prefix: null });
    expect(findCacheOfHost('x.y.cdn.ampproject.org', CACHES)).toEqual({ cache: GOOGLE, prefix: 'x.y' });
  });
  it('needs a whole label before the cache domain: no empty prefix, no glued suffix', () => {
    // Exactly as long as ".cdn.ampproject.org": the prefix would be empty.
    expect(findCacheOfHost('.cdn.ampproject.org', CACHES)).toBeUndefined();
    expect(findCacheOfHost('xcdn.ampproject.org', CACHES)).toBeUndefined();
    expect(findCacheOfHost('evilcdn.ampproject.org', CACHES)).toBeUndefined();
    expect(findCacheOfHost('ampproject.org', CACHES)).toBeUndefined();
    expect(findCacheOfHost('example.com', CACHES)).toBeUndefined();
    expect(findCacheOfHost('a.cdn.ampproject.org.evil.com', CACHES)).toBeUndefined();
  });
  it('looks only at the caches it is given', () => {
    expect(findCacheOfHost('a-b.cdn.ampproject.org', [TEST_CACHE])).toBeUndefined();
    expect(findCacheOfHost('a-b.amp.cache.example.net', [TEST_CACHE])).toEqual({ cache: TEST_CACHE, prefix: 'a-b' });
  });
});

describe('decodePrefix', () => {
  it('folds hyphens, removes the 0-…-0 wrap, decodes punycode', () => {
    expect(decodePrefix('a--b-example-com')).toBe('a-b.example.com');
    expect(decodePrefix('0-en--us-example-com-0')).toBe('en-us.example.com');
    expect(decodePrefix('xn--bcher-de-65a')).toBe('xn--bcher-kva.de');
  });
  it('keeps a 3-character label that only looks wrapped ("0-0" is "0.0", not "")', () => {
    expect(decodePrefix('0-0')).toBe('0.0');
    expect(decodePrefix('0--0')).toBe('');
  });
  it('leaves a label that is not punycode alone (no decoding without xn--)', () => {
    expect(decodePrefix('ab-cd')).toBe('ab.cd');
  });
  it('returns undefined for an xn-- label that is not punycode', () => {
    expect(decodePrefix('xn--a-ecp.ru-')).toBe(decodePrefix('xn--a-ecp.ru-')); // stable
    expect(decodePrefix('xn--\u00ff')).toBeUndefined();
  });
});

describe('reverseOrigin: failures name their reason', () => {
  const cases: Array<[string, string, string, RegExp]> = [
    ['not an origin', 'garbage', 'malformed', /scheme:\/\/host/],
    ['a missing origin', '', 'missing', /no Origin header/],
    ['a publisher origin', 'https://example.com', 'unknown-cache', /example\.com is not on a registered cache/],
    ['http on a cache', 'http://example-com.cdn.ampproject.org', 'insecure-scheme', /always https/],
    ['a port on a cache', 'https://example-com.cdn.ampproject.org:8443', 'non-default-port', /default port/],
    ['the cache root', 'https://cdn.ampproject.org', 'cache-root', /cdn\.ampproject\.org itself has no domain prefix/],
    ['two labels before the cache', 'https://a.example-com.cdn.ampproject.org', 'not-a-label', /single DNS label/],
    ['bad punycode', 'https://xn--a-9999999999.cdn.ampproject.org', 'invalid-punycode', /not valid punycode/],
    ['a numeric domain', 'https://0-0.cdn.ampproject.org', 'invalid-domain', /spells "0\.0", not a domain/],
    // Unwrapped, "example-com-" spells "example.com." (a trailing dot): never normalized away.
    ['a trailing dot', 'https://0-example-com--0.cdn.ampproject.org', 'not-reproducible', /does not spell a canonical domain/],
    ['an unneeded wrap', 'https://0-example-com-0.cdn.ampproject.org', 'not-reproducible', /example\.com has a different prefix/],
  ];
  it.each(cases)('%s', (_, origin, reason, detail) => {
    const result = reverseOrigin(origin);
    expect(result).toMatchObject({ ok: false, reason });
    expect(result.ok === false && result.detail).toMatch(detail);
  });
  it('says which cache and prefix, once they are known', () => {
    expect(reverseOrigin('http://example-com.cdn.ampproject.org')).toMatchObject({ cache: GOOGLE });
    expect(reverseOrigin('https://cdn.ampproject.org')).toMatchObject({ cache: GOOGLE });
    expect(reverseOrigin('https://0-example-com-0.www.bing-amp.com')).toMatchObject({ cache: BING, prefix: '0-example-com-0' });
    expect(reverseOrigin('https://0-example-com--0.cdn.ampproject.org')).toMatchObject({ cache: GOOGLE, prefix: '0-example-com--0' });
    expect(reverseOrigin('https://0-0.cdn.ampproject.org')).toMatchObject({ cache: GOOGLE, prefix: '0-0' });
    expect(reverseOrigin('https://xn--a-9999999999.cdn.ampproject.org')).toMatchObject({ cache: GOOGLE, prefix: 'xn--a-9999999999' });
  });
  it('shows at most 80 characters of what a long prefix spells', () => {
    const prefix = Array.from({ length: 30 }, () => '1').join('-'); // 1.1.1…: an all-numeric last label
    const result = reverseOrigin(`https://${prefix}.cdn.ampproject.org`);
    expect(result).toMatchObject({ ok: false, reason: 'invalid-domain' });
    const spelled = prefix.replaceAll('-', '.');
    expect(spelled.length).toBeGreaterThan(50);
    // A prefix of at most 67 octets can spell more than 80: 24 labels ü (xn--tda) and a numeric last label.
    const long = 'xn--------------------------1-ewcbbbbbbbbbbbbbbbbbbbbbbb';
    expect(domainToUnicode(long)).toBe(`${Array.from({ length: 24 }, () => 'ü').join('-')}-1`);
    expect(long.length).toBeLessThanOrEqual(67);
    const spelledLong = `${Array.from({ length: 24 }, () => 'xn--tda').join('.')}.1`;
    const longResult = reverseOrigin(`https://${long}.cdn.ampproject.org`);
    expect(longResult).toMatchObject({ ok: false, reason: 'invalid-domain' });
    const detail = longResult.ok === false ? longResult.detail : '';
    expect(detail).toContain(JSON.stringify(spelledLong.slice(0, 80)));
    expect(detail).not.toContain(spelledLong.slice(0, 81));
  });
});

describe('reverseOrigin: successes', () => {
  it("reports the guide's form", () => {
    expect(reverseOrigin('https://a--b-example-com.cdn.ampproject.org')).toEqual({
      ok: true,
      hashed: false,
      cache: GOOGLE,
      prefix: 'a--b-example-com',
      publisherDomain: 'a-b.example.com',
      form: 'spec',
      claimants: [{ publisherDomain: 'a-b.example.com', form: 'spec' }],
      claimantsComplete: true,
    });
    expect(reverseOrigin('https://0-en--us-example-com-0.cdn.ampproject.org')).toMatchObject({ ok: true, publisherDomain: 'en-us.example.com', form: 'spec' });
  });
  it('reports the toolbox form where only toolbox-cache-url reproduces the prefix', () => {
    const domain = 'xn--b-c-pla.de';
    const toolbox = toolboxPrefix(domain);
    expect(toolbox).not.toBe(domainPrefix(domain));
    expect(toolbox).toContain('-');
    expect(reverseOrigin(`https://${toolbox}.cdn.ampproject.org`)).toEqual({
      ok: true,
      hashed: false,
      cache: GOOGLE,
      prefix: toolbox,
      publisherDomain: domain,
      form: 'toolbox',
      claimants: [{ publisherDomain: domain, form: 'toolbox' }],
      claimantsComplete: true,
    });
    expect(reverseOrigin(`https://${domainPrefix(domain)}.cdn.ampproject.org`)).toMatchObject({ ok: true, form: 'spec', publisherDomain: domain });
  });
  it("lists every claimant when algorithms collide (SPEC §6): the guide's reading first", () => {
    // äb-c.com's toolbox prefix is also toolbox's prefix of the plain xn-b-c.com.zza.
    expect(reverseOrigin('https://xn--b--c-com-zza.cdn.ampproject.org')).toMatchObject({
      ok: true,
      publisherDomain: 'xn--b-c-pla.com',
      form: 'toolbox',
      claimants: [
        { publisherDomain: 'xn--b-c-pla.com', form: 'toolbox' },
        { publisherDomain: 'xn-b-c.com.zza', form: 'toolbox' },
      ],
    });
    // Not valid punycode, but the plain reading is a possible domain.
    expect(reverseOrigin('https://xn--a-b.cdn.ampproject.org')).toMatchObject({ ok: true, publisherDomain: 'xn-a.b', form: 'toolbox' });
  });
  it('reports a prefix without "-" as a hash, on the right cache', () => {
    expect(reverseOrigin('https://abcdef.www.bing-amp.com')).toEqual({ ok: true, hashed: true, cache: BING, prefix: 'abcdef' });
  });
  it('uses the caches it is given, and only those', () => {
    expect(reverseOrigin('https://a--b-example-com.amp.cache.example.net', { caches: [TEST_CACHE] })).toMatchObject({
      ok: true,
      cache: TEST_CACHE,
      publisherDomain: 'a-b.example.com',
    });
    expect(reverseOrigin('https://a--b-example-com.amp.cache.example.net')).toMatchObject({ ok: false, reason: 'unknown-cache' });
    expect(reverseOrigin('https://a--b-example-com.cdn.ampproject.org', { caches: [TEST_CACHE] })).toMatchObject({ ok: false, reason: 'unknown-cache' });
  });
  it('never throws on hostile input', () => {
    for (const input of [undefined, null, 42, {}, [], 'https://[::1]', 'https://%', 'https://xn--.cdn.ampproject.org', 'https://xn---.cdn.ampproject.org']) {
      expect(() => reverseOrigin(input as string)).not.toThrow();
      expect(reverseOrigin(input as string).ok).toBe(false);
    }
  });
});

describe('reverseOrigin: a prefix longer than any accepted form is refused first (issue 13 complexity review)', () => {
  it('67 octets is the longest accepted prefix (toolbox wraps after its 63-octet check); 68 is not-a-label, before decoding or hashing', () => {
    // 67 a's: a hash-like prefix, judged as one.
    expect(reverseOrigin(`https://${'a'.repeat(67)}.cdn.ampproject.org`)).toMatchObject({ ok: true, hashed: true });
    for (const prefix of ['a'.repeat(68), 'a'.repeat(234), `${'xn--'.repeat(17)}a`, `${'xn--'.repeat(58)}a`]) {
      const result = reverseOrigin(`https://${prefix}.cdn.ampproject.org`);
      expect(result, prefix).toMatchObject({ ok: false, reason: 'not-a-label', prefix, cache: GOOGLE });
      expect(result.ok ? '' : result.detail).toBe(`the domain prefix is ${prefix.length} octets; no cache prefix is longer than 67`);
    }
    // A 67-octet readable prefix is still read (here: it spells no domain).
    expect(reverseOrigin(`https://${'xn--'.repeat(16)}abc.cdn.ampproject.org`)).toMatchObject({ ok: false, reason: 'invalid-domain' });
  });
});
