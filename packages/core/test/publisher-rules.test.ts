// Publisher rules (SPEC §5 "an allow rule never covers a public suffix, nor has
// one at or below its base"; issue 14 item 2; issue 15 "errors that teach").
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { type AmpCache, AmpCorsError, CACHES, createVerifier } from '../src/index.js';
import { matchesPublisher, parsePublisherRules, publisherRuleCheck, wildcardBaseOf } from '../src/algorithms.js';

/** The AmpCorsError that parsing `publishers` throws. */
function refusal(publishers: readonly unknown[], caches: readonly AmpCache[] = CACHES): AmpCorsError {
  try {
    parsePublisherRules(publishers as string[], caches);
  } catch (error) {
    expect(error).toBeInstanceOf(AmpCorsError);
    return error as AmpCorsError;
  }
  throw new Error(`${JSON.stringify(publishers)} was accepted`);
}

describe("a wildcard over other people's subtrees is refused", () => {
  it.each([
    // [rule, a public suffix that lies under its base]
    ['*.amazonaws.com', 's3.amazonaws.com'],
    ['*.fastly.net', 'map.fastly.net'],
    ['*.ssl.fastly.net', 'a.ssl.fastly.net'],
    ['*.appspot.com', 'appspot.com'],
  ])('%s (the suffix %s lies under it)', (rule, suffix) => {
    const error = refusal([rule]);
    expect(error.code).toBe('public-suffix-rule');
    expect(error.message).toContain(JSON.stringify(rule));
    expect(error.message).toContain(suffix);
    expect(error.message).toMatch(/private section/);
  });
  it('a wildcard on a public suffix itself, ICANN or private, says which list', () => {
    expect(refusal(['*.github.io']).message).toBe(
      'publishers: "*.github.io" would trust every domain under the public suffix github.io (Public Suffix List, private section), which anyone can register',
    );
    expect(refusal(['*.blogspot.com']).message).toMatch(/public suffix blogspot\.com \(Public Suffix List, private section\)/);
    expect(refusal(['*.co.uk']).message).toMatch(/public suffix co\.uk \(Public Suffix List, ICANN section\)/);
    expect(refusal(['*.com']).code).toBe('public-suffix-rule');
  });
  it("under a PSL wildcard rule (*.compute.amazonaws.com): every name below is a suffix, and so is its parent's subtree", () => {
    expect(refusal(['*.eu-west-1.compute.amazonaws.com']).code).toBe('public-suffix-rule');
    expect(refusal(['*.compute.amazonaws.com']).code).toBe('public-suffix-rule');
    // A name one label below a `*.` rule is itself a public suffix: refused exactly too.
    expect(refusal(['eu-west-1.compute.amazonaws.com']).code).toBe('public-suffix-rule');
  });
  it("a wildcard below the suffix, on someone's own registrable domain, is accepted", () => {
    const rules = parsePublisherRules(['*.my-bucket.s3.amazonaws.com', '*.example.github.io', '*.example.com', '*.city.kawasaki.jp'], CACHES);
    expect([...rules.wildcard]).toEqual(['my-bucket.s3.amazonaws.com', 'example.github.io', 'example.com', 'city.kawasaki.jp']);
  });
  it('an exact rule on a domain with suffixes under it trusts that one host only, and is accepted', () => {
    const rules = parsePublisherRules(['amazonaws.com', 'fastly.net'], CACHES);
    expect(matchesPublisher('amazonaws.com', rules)).toBe(true);
    expect(matchesPublisher('attacker.s3.amazonaws.com', rules)).toBe(false);
  });
  it("the attacker's bucket and its cache origin are never allowed", () => {
    expect(() => createVerifier({ publishers: ['*.amazonaws.com'] })).toThrow(expect.objectContaining({ code: 'public-suffix-rule' }));
    const verifier = createVerifier({ publishers: ['amazonaws.com', '*.my-bucket.s3.amazonaws.com'] });
    for (const origin of ['https://attacker-bucket.s3.amazonaws.com', 'https://attacker-bucket-s3-amazonaws-com.cdn.ampproject.org']) {
      expect(verifier.verify(origin).allowed, origin).toBe(false);
    }
    expect(verifier.verify('https://www-my--bucket-s3-amazonaws-com.cdn.ampproject.org').allowed).toBe(true);
  });
});

describe('cache-operated domains: cacheDomain, thirdPartyFrameDomainSuffix, updateCacheApiDomainSuffix', () => {
  it("a wildcard on the third-party frame domain (anyone's iframes) is refused", () => {
    const error = refusal(['*.ampproject.net']);
    expect(error.code).toBe('publisher-covers-cache');
    expect(error.message).toBe(
      'publishers: "*.ampproject.net" covers the Google AMP Cache third-party frame domain ampproject.net, which serves anyone\'s iframes',
    );
    expect(refusal(['*.bing-amp.net']).message).toMatch(/Bing AMP Cache third-party frame domain www\.bing-amp\.net/);
  });
  it('an exact rule at or under a frame domain is refused too', () => {
    for (const rule of ['ampproject.net', 'd-1234.ampproject.net', 'www.bing-amp.net', 'x.www.bing-amp.net']) {
      expect(refusal([rule]).code, rule).toBe('publisher-covers-cache');
    }
    // Above a frame domain, an exact rule names one other host: fine.
    expect(parsePublisherRules(['bing-amp.net'], CACHES).exact).toEqual(new Set(['bing-amp.net']));
  });
  it('cache domains, as before: at, under, or a wildcard above', () => {
    for (const rule of ['cdn.ampproject.org', 'x.cdn.ampproject.org', '*.cdn.ampproject.org', '*.ampproject.org', '*.bing-amp.com', 'a.www.bing-amp.com']) {
      const error = refusal([rule]);
      expect(error.code, rule).toBe('publisher-covers-cache');
      expect(error.message, rule).toContain(JSON.stringify(rule));
    }
  });
  it("a custom cache's update-cache API domain is guarded", () => {
    const custom: AmpCache[] = [
      {
        id: 't',
        name: 'Test Cache',
        cacheDomain: 'amp.example.net',
        updateCacheApiDomainSuffix: 'update.example.org',
        thirdPartyFrameDomainSuffix: 'frames.example.io',
      },
    ];
    expect(refusal(['*.example.org'], custom).message).toMatch(/Test Cache update-cache API domain update\.example\.org/);
    expect(refusal(['x.frames.example.io'], custom).message).toMatch(/Test Cache third-party frame domain frames\.example\.io/);
    expect(parsePublisherRules(['*.example.com'], custom).wildcard).toEqual(new Set(['example.com']));
  });
  it('the guard look-up does not depend on the order or number of caches', () => {
    const many: AmpCache[] = Array.from({ length: 60 }, (_, i) => ({
      id: `c${i}`,
      name: `Cache ${i}`,
      cacheDomain: `c${i}.example.net`,
      thirdPartyFrameDomainSuffix: `f${i}.example.io`,
    }));
    expect(refusal(['*.f59.example.io'], many).message).toMatch(/Cache 59 third-party frame domain/);
    expect(refusal(['*.f0.example.io'], [...many].reverse()).message).toMatch(/Cache 0 third-party frame domain/);
  });
});

describe('errors that teach (issue 15)', () => {
  it.each([
    [
      'http://example.com/',
      /^publishers: "http:\/\/example\.com\/" is a URL; publishers takes a domain, such as "example\.com", not a URL — origins go in `origins`: origins: \["http:\/\/example\.com"\]$/,
    ],
    ['https://www.example.com', /a domain, such as "www\.example\.com", not a URL — origins go in `origins`: origins: \["https:\/\/www\.example\.com"\]$/],
    ['example.com/amp', /is a URL; publishers takes a domain, not a URL — origins go in `origins`/],
    [
      'localhost',
      /^publishers: "localhost" is a local development host, not a publisher domain — list its origin in `origins`: origins: \["http:\/\/localhost:3000"\]$/,
    ],
    ['localhost:8080', /origins: \["http:\/\/localhost:8080"\]$/],
    ['app.localhost', /local development host/],
    ['127.0.0.1', /is an IP address, not a domain — list the origin in `origins`: origins: \["http:\/\/127\.0\.0\.1:3000"\]$/],
    ['[::1]', /is an IP address/],
    ['example.com:8443', /has a port; publishers takes a domain — origins with a port go in `origins`: origins: \["https:\/\/example\.com:8443"\]$/],
  ])('%s', (entry, message) => {
    const error = refusal([entry]);
    expect(error.code).toBe('invalid-domain');
    expect(error.message).toMatch(message);
  });
  it("every refused entry is reported at once, in order, with the first one's code", () => {
    const error = refusal(['example.com', 'http://a.example/', '*.amazonaws.com', 'b.example', 'localhost', 42]);
    expect(error.code).toBe('invalid-domain');
    const lines = error.message.split('\n');
    expect(lines[0]).toBe('publishers: 4 entries are refused:');
    expect(lines).toHaveLength(5);
    for (const [i, start] of ['"http://a.example/" is a URL', '"*.amazonaws.com" would trust', '"localhost" is a local', '42 is not a string'].entries()) {
      expect(lines[i + 1]?.startsWith(`  - ${start}`), lines[i + 1]).toBe(true);
    }
  });
  it('a long list of bad entries is counted in full and listed up to 20', () => {
    const error = refusal(Array.from({ length: 1000 }, (_, i) => `http://site${i}.example/`));
    const lines = error.message.split('\n');
    expect(lines[0]).toBe('publishers: 1000 entries are refused:');
    expect(lines).toHaveLength(22);
    expect(lines[20]).toMatch(/^ {2}- "http:\/\/site19\.example\/"/);
    expect(lines[21]).toBe('  … and 980 more');
  });
  it('non-strings are named without calling their methods', () => {
    const hostile = {
      toString: () => {
        throw new Error('called');
      },
    };
    const error = refusal([null, hostile, Object.create(null), ['example.com'], () => 'example.com', Symbol('s'), undefined, 1n]);
    expect(error.message.split('\n').slice(1)).toEqual(
      ['null', 'an object', 'an object', 'an array', 'a function', 'Symbol(s)', 'undefined', '1'].map((name) => `  - ${name} is not a string`),
    );
  });
  it("a name on the list's implicit rule (an unknown top-level name) is a public suffix too", () => {
    expect(refusal(['intranet']).message).toBe(
      'publishers: "intranet" is a public suffix (Public Suffix List), not a publisher\'s domain; a rule may not cover every domain under it',
    );
    expect(refusal(['*.corp']).code).toBe('public-suffix-rule');
  });
  it('quotes what was typed: control characters escaped, long input cut', () => {
    expect(refusal(['*.\u001b]0;x\u0007evil.com']).message).toContain('"*.\\u001b]0;x\\u0007evil.com"');
    const long = `*.${'a'.repeat(300)}.com`;
    const message = refusal([long]).message;
    expect(message.length).toBeLessThan(400);
    expect(message).not.toContain('\u001b');
  });
});

describe('wildcardBaseOf looks up only the suffixes that can be a base', () => {
  // The plain walk over every suffix: the definition the bounded walk must keep.
  const everySuffix = (domain: string, wildcard: ReadonlySet<string>): string | undefined => {
    for (let candidate = domain; ; candidate = candidate.slice(candidate.indexOf('.') + 1)) {
      if (wildcard.has(candidate)) return candidate;
      if (!candidate.includes('.')) return undefined;
    }
  };
  const domain = fc.array(fc.stringMatching(/^[a-c]{1,3}$/), { minLength: 1, maxLength: 8 }).map((labels) => labels.join('.'));

  it('finds the same base as a walk over every suffix, for any host and any bases (small sets compared in place, larger ones looked up)', () => {
    fc.assert(
      fc.property(domain, fc.array(domain, { maxLength: 20 }), (host, bases) => {
        const wildcard = new Set(bases);
        const expected = wildcard.size === 0 ? undefined : everySuffix(host, wildcard);
        expect(wildcardBaseOf(host, { exact: new Set(), wildcard })).toBe(expected);
      }),
      { numRuns: 5000, seed: 1414 },
    );
  });

  it('attacker: a base that the host merely ends with, not at a dot, is no match (both set sizes)', () => {
    for (const extra of [[], Array.from({ length: 12 }, (_, i) => `filler${i}.net`)]) {
      const rules = { exact: new Set<string>(), wildcard: new Set(['example.com', ...extra]) };
      expect(wildcardBaseOf('evilexample.com', rules)).toBeUndefined();
      expect(wildcardBaseOf('xample.com', rules)).toBeUndefined();
      expect(wildcardBaseOf('example.com.evil.net', rules)).toBeUndefined();
      expect(wildcardBaseOf('example.com', rules)).toBe('example.com');
      expect(wildcardBaseOf('a.b.example.com', rules)).toBe('example.com');
    }
  });

  it('finds a base at the far end of a 253-octet host of one-letter labels', () => {
    const rules = parsePublisherRules(['*.example.org'], CACHES);
    const host = `${'a.'.repeat(120)}example.org`;
    expect(wildcardBaseOf(host, rules)).toBe('example.org');
    expect(wildcardBaseOf(`${'a.'.repeat(120)}example.com`, rules)).toBeUndefined();
  });
});

describe('publisherRuleCheck: the check of parsePublisherRules, one entry at a time', () => {
  it('refuses exactly what parsePublisherRules refuses for that entry alone, with the same code and message', () => {
    const check = publisherRuleCheck(CACHES);
    const entries = [
      'example.com',
      '*.example.org',
      'github.io',
      'co.uk',
      '*.amazonaws.com',
      's3.amazonaws.com',
      'cdn.ampproject.org',
      'www.bing-amp.com',
      'https://example.com',
      '127.0.0.1',
      'exa mple.com',
      'bücher.de',
    ];
    for (const entry of entries) {
      let thrown: unknown;
      try {
        parsePublisherRules([entry], CACHES);
      } catch (error) {
        thrown = error;
      }
      const refusal = check(entry);
      expect(refusal === undefined, entry).toBe(thrown === undefined);
      if (refusal !== undefined) {
        expect(refusal).toBeInstanceOf(AmpCorsError);
        expect([refusal.code, refusal.message], entry).toEqual([(thrown as AmpCorsError).code, (thrown as AmpCorsError).message]);
      }
    }
  });
});
