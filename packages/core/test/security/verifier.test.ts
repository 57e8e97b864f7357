// createVerifier at its edges (issue #6, mutation testing): what each verdict
// says (reason, detail, cache, prefix, publisher domain), explicit origins,
// __amp_source_origin, legacy cache origins, custom caches, configuration
// errors, and a hostile context that makes verify deny instead of throw.
import { AmpCorsError, type AmpCache, CACHES, cacheOrigin, createVerifier, fallbackPrefix, prefixForms, type Verdict } from '@ampcors/core';
import { describe, expect, it } from 'vitest';

const GOOGLE = CACHES[0] as AmpCache;
const BING = CACHES[1] as AmpCache;
const TEST_CACHE: AmpCache = { id: 'test', name: 'Test cache', cacheDomain: 'amp.cache.example.net' };

const verifier = createVerifier({ publishers: ['example.com', '*.example.org'] });
const exactOnly = createVerifier({ publishers: ['example.com'] });

function detailOf(verdict: Verdict): string {
  return verdict.allowed ? '' : verdict.detail;
}

describe('verify: denials say what was wrong', () => {
  it('no Origin and no AMP-Same-Origin', () => {
    for (const origin of [undefined, null, '']) {
      const verdict = verifier.verify(origin);
      expect(verdict).toMatchObject({ allowed: false, origin: null, reason: 'missing' });
      expect(detailOf(verdict)).toMatch(/no Origin header and no AMP-Same-Origin: true/);
    }
  });
  it('an Origin that is not a string (a hostile adapter) is malformed, with no origin echoed', () => {
    for (const origin of [42, {}, ['https://example.com'], true]) {
      const verdict = verifier.verify(origin as never);
      expect(verdict).toMatchObject({ allowed: false, origin: null, reason: 'malformed' });
      expect(detailOf(verdict)).toMatch(/not a string/);
    }
  });
  it("a syntax refusal passes on parseOrigin's reason and detail", () => {
    const verdict = verifier.verify('https://Example.com');
    expect(verdict).toMatchObject({ allowed: false, origin: 'https://Example.com', reason: 'not-canonical' });
    expect(detailOf(verdict)).toMatch(/lowercase/);
  });
  it('an unknown origin is quoted in full when short', () => {
    const verdict = verifier.verify('https://evil.com');
    expect(verdict).toMatchObject({ allowed: false, reason: 'unknown-origin' });
    expect(detailOf(verdict)).toBe('"https://evil.com" is neither a publisher origin nor a cache origin');
  });
  it('an unknown origin is cut at 80 characters in the detail', () => {
    const origin = `https://${'a'.repeat(100)}.com`;
    const verdict = verifier.verify(origin);
    expect(verdict).toMatchObject({ allowed: false, origin, reason: 'unknown-origin' });
    expect(detailOf(verdict)).toContain(JSON.stringify(`${origin.slice(0, 80)}…`));
    expect(detailOf(verdict)).not.toContain(origin.slice(0, 81));
    // Exactly 80 characters: shown whole, without an ellipsis.
    const eighty = `https://${'b'.repeat(68)}.com`;
    expect(eighty).toHaveLength(80);
    expect(detailOf(verifier.verify(eighty))).toContain(JSON.stringify(eighty));
    expect(detailOf(verifier.verify(eighty))).not.toContain('…');
  });
  it('the bare cache origin, naming the cache and the option that allows it', () => {
    const verdict = verifier.verify('https://cdn.ampproject.org');
    expect(verdict).toMatchObject({ allowed: false, reason: 'legacy-cache-origin', cache: GOOGLE });
    expect(detailOf(verdict)).toMatch(/bare Google AMP Cache origin.*legacyCacheOrigins/);
  });
  it('a cache origin that does not reverse keeps the cache and prefix', () => {
    const verdict = verifier.verify('https://0-example-com-0.www.bing-amp.com');
    expect(verdict).toMatchObject({ allowed: false, reason: 'not-reproducible', cache: BING, prefix: '0-example-com-0' });
    expect(detailOf(verdict)).toMatch(/different prefix/);
    expect(verifier.verify('http://example-com.cdn.ampproject.org')).toMatchObject({ allowed: false, reason: 'insecure-scheme', cache: GOOGLE });
  });
  it('an unknown hashed prefix: the hint about wildcards only when there are wildcard rules', () => {
    const hashed = `https://${fallbackPrefix('other.example.net')}.cdn.ampproject.org`;
    const withWildcard = verifier.verify(hashed);
    expect(withWildcard).toMatchObject({ allowed: false, reason: 'hashed-unknown', cache: GOOGLE, prefix: fallbackPrefix('other.example.net') });
    expect(detailOf(withWildcard)).toMatch(/^hashed prefix of no configured publisher domain; .*wildcard rule.*list the domain exactly/);
    const withoutWildcard = exactOnly.verify(hashed);
    expect(withoutWildcard).toMatchObject({ allowed: false, reason: 'hashed-unknown', cache: GOOGLE });
    expect(detailOf(withoutWildcard)).toBe('hashed prefix of no configured publisher domain');
  });
  it("an unknown publisher's readable prefix names the publisher domain it spells", () => {
    const verdict = verifier.verify('https://www-other-net.www.bing-amp.com');
    expect(verdict).toMatchObject({ allowed: false, reason: 'unknown-publisher', cache: BING, prefix: 'www-other-net', publisherDomain: 'www.other.net' });
    expect(detailOf(verdict)).toBe('www.other.net is not a configured publisher');
  });
});

describe('verify: what an allowed verdict says', () => {
  it("a cache origin under a wildcard rule: via cache, with the reversal's form", () => {
    expect(verifier.verify('https://news-example-org.www.bing-amp.com')).toEqual({
      allowed: true,
      origin: 'https://news-example-org.www.bing-amp.com',
      via: 'cache',
      reason: 'cache-origin-wildcard',
      publisherDomain: 'news.example.org',
      cache: BING,
      prefix: 'news-example-org',
      prefixForm: 'spec',
    });
  });
  it('hashed entries of the allow-set are reported as hashed, whatever form produced them', () => {
    // An IDN: its Unicode-form hash is listed (form hash-unicode).
    const idn = createVerifier({ publishers: ['bücher.de'] });
    const forms = prefixForms('bücher.de');
    const unicodeHash = forms.find((f) => f.form === 'hash-unicode');
    const asciiHash = forms.find((f) => f.form === 'hash-ascii');
    expect(unicodeHash && asciiHash).toBeTruthy();
    expect(idn.verify(`https://${unicodeHash!.prefix}.cdn.ampproject.org`)).toMatchObject({
      allowed: true,
      reason: 'cache-origin-hashed',
      prefixForm: 'hash-unicode',
    });
    expect(idn.verify(`https://${asciiHash!.prefix}.cdn.ampproject.org`)).toMatchObject({
      allowed: true,
      reason: 'cache-origin-hashed',
      prefixForm: 'hash-ascii',
    });
    // toolbox-cache-url hashes a name with "--" at positions 3–4: form toolbox, but a hash.
    const dashes = createVerifier({ publishers: ['in--trouble.com'] });
    const toolbox = prefixForms('in--trouble.com').find((f) => f.form === 'toolbox');
    expect(toolbox?.prefix).not.toContain('-');
    expect(dashes.verify(`https://${toolbox!.prefix}.cdn.ampproject.org`)).toMatchObject({
      allowed: true,
      reason: 'cache-origin-hashed',
      prefixForm: 'toolbox',
    });
    // Its readable prefix 0-in----trouble-com-0 is also in.-.trouble.com's (an edge-hyphen label): denied, naming it.
    expect(dashes.verify(cacheOrigin('in--trouble.com'))).toMatchObject({ allowed: false, reason: 'unknown-publisher', publisherDomain: 'in.-.trouble.com' });
    // A readable prefix is not hashed.
    expect(createVerifier({ publishers: ['in-trouble.com'] }).verify(cacheOrigin('in-trouble.com'))).toMatchObject({
      allowed: true,
      reason: 'cache-origin',
      prefixForm: 'spec',
    });
    expect(idn.verify(cacheOrigin('bücher.de'))).toMatchObject({ allowed: true, reason: 'cache-origin', prefixForm: 'spec' });
  });
  it('a publisher origin by the default rule names its domain', () => {
    expect(verifier.verify('https://example.com')).toEqual({
      allowed: true,
      origin: 'https://example.com',
      via: 'publisher',
      reason: 'publisher-origin',
      publisherDomain: 'example.com',
    });
  });
  it('an explicit origin: via publisher, and nothing else allowed by the default rule', () => {
    const explicit = createVerifier({ publishers: ['example.com'], origins: ['http://localhost:8080'] });
    expect(explicit.verify('http://localhost:8080')).toEqual({ allowed: true, origin: 'http://localhost:8080', via: 'publisher', reason: 'publisher-origin' });
    expect(explicit.isPublisherOrigin('http://localhost:8080')).toBe(true);
    expect(explicit.isPublisherOrigin('https://example.com')).toBe(false);
    expect(explicit.verify('https://example.com')).toMatchObject({ allowed: false, reason: 'unknown-origin' });
  });
  it('isPublisherOrigin by the default rule: https, default port, a publisher domain, canonical', () => {
    expect(verifier.isPublisherOrigin('https://example.com')).toBe(true);
    expect(verifier.isPublisherOrigin('https://a.b.example.org')).toBe(true);
    expect(verifier.isPublisherOrigin('http://example.com')).toBe(false);
    expect(verifier.isPublisherOrigin('https://example.com:8443')).toBe(false);
    expect(verifier.isPublisherOrigin('https://Example.com')).toBe(false);
    expect(verifier.isPublisherOrigin('https://www.example.com')).toBe(false);
    expect(verifier.isPublisherOrigin('not an origin')).toBe(false);
  });
});

describe('verify: claimants with edge-hyphen labels under a wildcard rule (SPEC §6.6)', () => {
  it('allows a prefix every reading of which is under the rule, and names the first claimant outside it', () => {
    const wildcard = createVerifier({ publishers: ['*.example.com'] });
    // ab--cd.example.com and ab.-.cd.example.com share 0-ab----cd-example-com-0: both are under *.example.com.
    expect(wildcard.verify('https://0-ab----cd-example-com-0.cdn.ampproject.org')).toMatchObject({ allowed: true, reason: 'cache-origin-wildcard' });
    // An exact rule trusts only ab--cd.example.com: the twin is outside.
    const exact = createVerifier({ publishers: ['ab--cd.example.com'] });
    expect(exact.verify('https://0-ab----cd-example-com-0.cdn.ampproject.org')).toMatchObject({
      allowed: false,
      reason: 'unknown-publisher',
      publisherDomain: 'ab.-.cd.example.com',
    });
    // a-.example.com and a.-example.com: the second is under *.example.com only if -example.com is… it is not.
    expect(wildcard.verify('https://0-a---example-com-0.cdn.ampproject.org')).toMatchObject({
      allowed: false,
      reason: 'unknown-publisher',
      publisherDomain: 'a.-example.com',
    });
  });
  it('denies a prefix with more readings than the claimant search examines, even when every reading found is trusted', () => {
    const wildcard = createVerifier({ publishers: ['*.example.com'] });
    // Nine runs of three hyphens: 2^9 = 512 readings.
    const prefix = `0-a${'---a'.repeat(9)}-example-com-0`;
    const verdict = wildcard.verify(`https://${prefix}.cdn.ampproject.org`);
    expect(verdict).toMatchObject({ allowed: false, reason: 'unknown-publisher' });
    expect(detailOf(verdict)).toContain('too many possible domains');
  });
});

describe('verify: __amp_source_origin', () => {
  const cache = 'https://example-com.cdn.ampproject.org';
  it('absent (undefined or null): the verdict is unchanged and carries no sourceOrigin', () => {
    for (const sourceOrigin of [undefined, null]) {
      const verdict = verifier.verify(cache, { sourceOrigin });
      expect(verdict).toMatchObject({ allowed: true, reason: 'cache-origin' });
      expect(verdict).not.toHaveProperty('sourceOrigin');
    }
  });
  it('a publisher origin is passed on', () => {
    expect(verifier.verify(cache, { sourceOrigin: 'https://example.com' })).toMatchObject({ allowed: true, sourceOrigin: 'https://example.com' });
    expect(verifier.verify(undefined, { ampSameOrigin: 'true', sourceOrigin: 'https://x.example.org' })).toMatchObject({
      allowed: true,
      via: 'same-origin',
      sourceOrigin: 'https://x.example.org',
    });
  });
  it('anything else denies, quoting the value', () => {
    for (const sourceOrigin of ['https://evil.com', 'http://example.com', '', 'https://example.com/']) {
      const verdict = verifier.verify(cache, { sourceOrigin });
      expect(verdict).toMatchObject({ allowed: false, origin: cache, reason: 'source-origin-mismatch' });
      expect(detailOf(verdict)).toBe(`__amp_source_origin ${JSON.stringify(sourceOrigin)} is not a publisher origin`);
    }
    const notAString = verifier.verify(cache, { sourceOrigin: 42 as never });
    expect(notAString).toMatchObject({ allowed: false, reason: 'source-origin-mismatch' });
    expect(detailOf(notAString)).toContain('"42"');
  });
});

describe('verify: legacy cache origins', () => {
  const legacy = createVerifier({ publishers: ['example.com'], legacyCacheOrigins: true });
  it('allows the bare cache origin only with the option, naming the cache', () => {
    expect(legacy.verify('https://cdn.ampproject.org')).toEqual({
      allowed: true,
      origin: 'https://cdn.ampproject.org',
      via: 'cache',
      reason: 'legacy-cache-origin',
      cache: GOOGLE,
    });
    expect(legacy.verify('https://www.bing-amp.com')).toMatchObject({ allowed: true, reason: 'legacy-cache-origin', cache: BING });
  });
  it('still refuses it over http or on a port', () => {
    expect(legacy.verify('http://cdn.ampproject.org')).toMatchObject({ allowed: false, reason: 'legacy-cache-origin' });
    expect(legacy.verify('https://cdn.ampproject.org:8443')).toMatchObject({ allowed: false, reason: 'legacy-cache-origin' });
  });
  it('only the value true turns it on', () => {
    const truthy = createVerifier({ publishers: ['example.com'], legacyCacheOrigins: 'yes' as never });
    expect(truthy.verify('https://cdn.ampproject.org')).toMatchObject({ allowed: false, reason: 'legacy-cache-origin' });
  });
});

describe('verify: custom caches', () => {
  const custom = createVerifier({ publishers: ['example.com', '*.example.org'], caches: [TEST_CACHE] });
  it('accepts a cache outside the bundled operators, and uses only it', () => {
    expect(custom.caches).toHaveLength(1);
    expect(custom.caches[0]).toMatchObject({ id: 'test', cacheDomain: 'amp.cache.example.net' });
    expect(custom.verify('https://example-com.amp.cache.example.net')).toMatchObject({ allowed: true, reason: 'cache-origin', cache: { id: 'test' } });
    expect(custom.verify('https://example-com.cdn.ampproject.org')).toMatchObject({ allowed: false, reason: 'unknown-origin' });
  });
  it('reverses prefixes on the custom cache for wildcard rules', () => {
    expect(custom.verify('https://a--b-example-org.amp.cache.example.net')).toMatchObject({
      allowed: true,
      reason: 'cache-origin-wildcard',
      publisherDomain: 'a-b.example.org',
      cache: { id: 'test' },
    });
    expect(custom.verify('https://a--b-other-net.amp.cache.example.net')).toMatchObject({ allowed: false, reason: 'unknown-publisher', cache: { id: 'test' } });
  });
});

describe('verify never throws: a hostile context is denied', () => {
  const throwing = (value: unknown) => ({
    get sourceOrigin(): string {
      throw value;
    },
    get ampSameOrigin(): string {
      throw value;
    },
  });
  it('an Error while reading the context: malformed, with its message', () => {
    const verdict = verifier.verify('https://example-com.cdn.ampproject.org', throwing(new Error('boom')));
    expect(verdict).toEqual({ allowed: false, origin: 'https://example-com.cdn.ampproject.org', reason: 'malformed', detail: 'internal error: boom' });
  });
  it('a non-Error thrown, and no Origin: origin null, "unknown"', () => {
    const verdict = verifier.verify(undefined, throwing('x'));
    expect(verdict).toEqual({ allowed: false, origin: null, reason: 'malformed', detail: 'internal error: unknown' });
  });
});

describe('createVerifier: configuration errors name the problem', () => {
  const cases: Array<[string, unknown, string, RegExp]> = [
    ['no configuration', undefined, 'invalid-option', /createVerifier needs a configuration object/],
    ['null', null, 'invalid-option', /createVerifier needs a configuration object/],
    ['a string', 'example.com', 'invalid-option', /createVerifier needs a configuration object/],
    ['origins as a string', { publishers: ['example.com'], origins: 'https://example.com' }, 'invalid-option', /origins must be an array/],
    [
      'a non-canonical origin',
      { publishers: ['example.com'], origins: ['https://example.com:443'] },
      'invalid-origin',
      /origins: "https:\/\/example.com:443" is not a canonical http\(s\) origin \(not-canonical: default port written out\)/,
    ],
    ['a non-string origin', { publishers: ['example.com'], origins: [42] }, 'invalid-origin', /origins: "42" is not a canonical/],
  ];
  it.each(cases)('%s', (_, config, code, message) => {
    let error: unknown;
    try {
      createVerifier(config as never);
    } catch (caught) {
      error = caught;
    }
    expect(error).toBeInstanceOf(AmpCorsError);
    expect(error).toMatchObject({ code });
    expect((error as Error).message).toMatch(message);
  });
  it('a long bad origin is cut at 80 characters in the message', () => {
    const origin = `https://${'a'.repeat(100)}.com/`;
    expect(() => createVerifier({ publishers: ['example.com'], origins: [origin] })).toThrow(JSON.stringify(`${origin.slice(0, 80)}…`));
  });
  it('exposes the caches and the allow-set it built', () => {
    // Built inside the test: the allow-set's accessors are made when the verifier is.
    const built = createVerifier({ publishers: ['example.com', 'bücher.de', '*.example.org'] });
    expect(built.caches).toBe(CACHES);
    expect(built.allowSet.get('https://example-com.cdn.ampproject.org')).toMatchObject({
      publisherDomain: 'example.com',
      form: 'spec',
      cache: GOOGLE,
      prefix: 'example-com',
    });
    expect(built.allowSet.get('https://example-org.cdn.ampproject.org')).toBeUndefined(); // wildcard bases are reversed, not listed
    const expected = (prefixForms('example.com').length + prefixForms('bücher.de').length) * CACHES.length;
    expect(built.allowSet.size).toBe(expected);
    const entries = [...built.allowSet.entries()];
    expect(entries).toHaveLength(expected);
    for (const [origin, entry] of entries) expect(built.allowSet.get(origin)).toEqual(entry);
  });
});
