// The memos on core's per-request decision path (issue 16), from the attacker's side: the recent queries of
// sourceOriginOfUrl, a policy's recent verdicts of its in-memory rules, and planCors's remembered plans. Each is
// keyed by what the attacker sends (the query, the Origin, the requested headers): filled with hostile entries,
// made to collide, and compared with the same decision made without any memo.
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { type CorsOptions, createVerifier, domainPrefix, type Verdict } from '@ampcors/core';
import { type CorsPlan, type CorsRequest, createCorsPolicy, normalizeCorsOptions, planCors, sourceOriginOfUrl, verifyContextOf } from '@ampcors/core/adapter';

const PUBLISHERS = Array.from({ length: 40 }, (_, i) => `www.publisher${i}.com`);
const cacheOrigin = (domain: string, cache = 'cdn.ampproject.org') => `https://${domainPrefix(domain)}.${cache}`;
const GOOD = cacheOrigin('www.publisher0.com');
const GOOD_SOURCE = 'https://www.publisher0.com';
/** A copy of `text` that is another string object (a fresh request's header is never the remembered string itself). */
const copy = (text: string) => (' ' + text).slice(1);
/** `text` with the character at `i` replaced (same length: the same memo slot whenever `i` is not one the slot reads). */
const changedAt = (text: string, i: number) => `${text.slice(0, i)}${text[i] === 'q' ? 'z' : 'q'}${text.slice(i + 1)}`;

/** The parameter as the WHATWG URL reads it (repeats joined with ','). */
function reference(url: string): string | null {
  const values = new URL(url, 'https://api.example').searchParams.getAll('__amp_source_origin');
  return values.length === 0 ? null : values.join(',');
}

describe('sourceOriginOfUrl: recent queries', () => {
  it('queries that share a slot (one character changed, same length) each get their own answer, alternately', () => {
    const query = `__amp_source_origin=${encodeURIComponent(GOOD_SOURCE)}`;
    for (let i = 0; i < query.length; i++) {
      const other = changedAt(query, i);
      for (let round = 0; round < 3; round++) {
        for (const q of [query, other]) {
          const url = copy(`/api/items?${q}`);
          expect(sourceOriginOfUrl(url), url).toBe(reference(url));
        }
      }
    }
  });

  it('filled with hostile queries, a remembered good query is still exact, and a hostile one never answers as it', () => {
    const good = `/api/items?__amp_source_origin=${encodeURIComponent(GOOD_SOURCE)}`;
    expect(sourceOriginOfUrl(good)).toBe(GOOD_SOURCE);
    const hostile: string[] = [];
    for (let i = 0; i < 3000; i++) {
      // Same length as the good query where possible, evil sources, escapes, repeats, '+', fragments.
      const forms = [
        `__amp_source_origin=${encodeURIComponent(`https://www.publisher0.co${i % 10}`)}`,
        `__amp_source_origin=https%3A%2F%2Fevil${i}.example`,
        `__amp_source_origin=${encodeURIComponent(GOOD_SOURCE)}&__amp_source_origin=https%3A%2F%2Fevil${i}.example`,
        `%5F_amp_source_origin=https%3A%2F%2Fevil${i}.example#__amp_source_origin=${encodeURIComponent(GOOD_SOURCE)}`,
        `a=${i}&__amp_source_origin=https%3A%2F%2Fevil.example+${i}`,
      ];
      hostile.push(`/api/items?${forms[i % forms.length]}`);
    }
    for (const url of hostile) expect(sourceOriginOfUrl(copy(url)), url).toBe(reference(url));
    for (const url of hostile) expect(sourceOriginOfUrl(copy(url)), url).not.toBe(GOOD_SOURCE);
    expect(sourceOriginOfUrl(copy(good))).toBe(GOOD_SOURCE);
  });

  it('equals URLSearchParams for random queries, whatever was remembered before (paths with ?, long queries)', () => {
    const piece = fc.constantFrom(
      '__amp_source_origin=',
      '__amp_source_origin',
      '%5F_amp_source_origin=',
      'https%3A%2F%2F',
      'www.publisher0.com',
      'evil.example',
      '&',
      '#',
      '?',
      '+',
      '%',
      '%FF',
      '=',
      'a',
      'x'.repeat(120),
    );
    const url = fc.tuple(fc.constantFrom('/api', '/a?b', '/'), fc.array(piece, { maxLength: 10 })).map(([path, pieces]) => `${path}?${pieces.join('')}`);
    fc.assert(
      fc.property(fc.array(url, { minLength: 1, maxLength: 12 }), (urls) => {
        // Each URL twice, interleaved: the second reading may come from the memo.
        for (const u of [...urls, ...urls.reverse()]) expect(sourceOriginOfUrl(copy(u)), u).toBe(reference(u));
      }),
      { numRuns: 1500 },
    );
  });
});

// ---------------------------------------------------------------------------
// A policy's decision against the same decision made without any memo.

/** What a policy decides, made without its memos: a fresh verifier, and a verdict copy that is not frozen (planned each time). */
function unremembered(config: CorsOptions): (request: CorsRequest) => { verdict: Verdict; plan: CorsPlan } {
  const verifier = createVerifier({ publishers: PUBLISHERS });
  const options = normalizeCorsOptions(config);
  return (request) => {
    const verdict: Verdict =
      request.secFetchSite === 'same-origin'
        ? {
            allowed: true,
            origin: typeof request.origin === 'string' && request.origin !== '' ? request.origin : null,
            via: 'same-origin',
            reason: 'same-origin',
          }
        : verifier.verify(request.origin, verifyContextOf(request, options));
    return { verdict, plan: planCors(request, { ...verdict }, options) };
  };
}

const ORIGINS = [
  GOOD,
  cacheOrigin('www.publisher1.com'),
  cacheOrigin('www.publisher7.com', 'www.bing-amp.com'),
  'https://www.publisher0.com',
  'https://www.publisher2.com',
  changedAt(GOOD, 9), // same length as GOOD: possibly its slot
  changedAt(GOOD, 20),
  `${GOOD}.evil.example`,
  GOOD.toUpperCase(),
  `${GOOD}.`,
  'https://evil-com.cdn.ampproject.org',
  `${GOOD}\r\nSet-Cookie: a=b`,
  `https://${'a'.repeat(280)}.cdn.ampproject.org`,
  'null',
  '',
];
const SOURCES = [
  GOOD_SOURCE,
  'https://www.publisher1.com',
  'https://evil.example',
  `${GOOD_SOURCE}.evil.example`,
  changedAt(GOOD_SOURCE, 12),
  's@e.example',
  'x'.repeat(300),
];
const facts: fc.Arbitrary<CorsRequest> = fc.record({
  method: fc.constantFrom('GET', 'POST', 'OPTIONS', 'options', 'OPTIONZ'),
  origin: fc.oneof({ weight: 6, arbitrary: fc.constantFrom(...ORIGINS).map(copy) }, fc.constant(null)),
  ampSameOrigin: fc.constantFrom(null, null, 'true'),
  requestMethod: fc.constantFrom(null, 'POST'),
  requestHeaders: fc.constantFrom(null, 'content-type', 'Content-Type, x-a', 'amp-same-origin, *', 'a\r\nb', `${'x-long, '.repeat(40)}x`),
  requestPrivateNetwork: fc.constantFrom(null, 'true'),
  emailSender: fc.constantFrom(null, null, 's@e.example', 'evil@e.example'),
  sourceOrigin: fc.oneof({ weight: 4, arbitrary: fc.constantFrom(...SOURCES).map(copy) }, fc.constant(null)),
  secFetchSite: fc.constantFrom(null, null, null, 'same-origin', 'cross-site'),
});
const CONFIGS: CorsOptions[] = [
  {},
  { legacySourceOriginHeader: true },
  { email: { senders: ['s@e.example'] } },
  { privateNetworkAccess: true, maxAge: 600, onDenied: 'omit' },
  { allowedHeaders: ['Content-Type'], preflightContinue: true },
];

describe('a policy decides as it would without its memos', () => {
  for (const config of CONFIGS) {
    it(`for random request facts, in random order (${JSON.stringify(config)})`, () => {
      const policy = createCorsPolicy({ publishers: PUBLISHERS, ...config });
      const expected = unremembered(config);
      fc.assert(
        fc.property(fc.array(facts, { minLength: 1, maxLength: 25 }), (requests) => {
          for (const request of [...requests, ...requests]) expect(policy.decide(request), JSON.stringify(request)).toEqual(expected(request));
        }),
        { numRuns: 300 },
      );
    });
  }

  it('filled with hostile and evicting origins, a trusted origin is allowed, a forged or colliding one denied', () => {
    const policy = createCorsPolicy({ publishers: PUBLISHERS });
    const decide = (origin: string, sourceOrigin: string | null = null) =>
      policy.decide({ method: 'GET', origin: copy(origin), sourceOrigin }) as { verdict: Verdict };
    expect(decide(GOOD).verdict.allowed).toBe(true);
    expect(decide(GOOD, GOOD_SOURCE).verdict.allowed).toBe(true);
    // Every allowed cache origin of every publisher (they evict each other), and thousands of hostile ones.
    for (const domain of PUBLISHERS) {
      for (const cache of ['cdn.ampproject.org', 'www.bing-amp.com']) expect(decide(cacheOrigin(domain, cache)).verdict.allowed).toBe(true);
    }
    for (let i = 0; i < 5000; i++) {
      const hostile = [`https://evil${i}.cdn.ampproject.org`, changedAt(GOOD, 8 + (i % 38)), `${GOOD}:${i}`][i % 3] as string;
      expect(decide(hostile).verdict.allowed, hostile).toBe(false);
    }
    expect(decide(GOOD).verdict.allowed).toBe(true);
    expect(decide(GOOD, GOOD_SOURCE)).toMatchObject({ verdict: { allowed: true, sourceOrigin: GOOD_SOURCE } });
    // Right after the allowed entries were remembered: every one-character change of the origin, and forged sources.
    for (let i = 0; i < GOOD.length; i++) {
      expect(decide(GOOD).verdict.allowed).toBe(true);
      expect(decide(changedAt(GOOD, i)).verdict.allowed, changedAt(GOOD, i)).toBe(false);
    }
    for (const forged of ['https://evil.example', `${GOOD_SOURCE}.evil.example`, changedAt(GOOD_SOURCE, 12), `${GOOD_SOURCE}/`]) {
      expect(decide(GOOD, GOOD_SOURCE).verdict.allowed).toBe(true);
      expect(decide(GOOD, forged).verdict).toMatchObject({ allowed: false, reason: 'source-origin-mismatch' });
    }
  });

  it('a handler cannot alter a remembered verdict or plan for the next request', () => {
    const policy = createCorsPolicy({ publishers: PUBLISHERS });
    const first = policy.decide({ method: 'GET', origin: copy(GOOD) }) as { verdict: Verdict; plan: CorsPlan };
    const before = structuredClone(first.plan);
    expect(() => ((first.verdict as { origin: string | null }).origin = 'https://evil.example')).toThrow(TypeError);
    expect(() => (first.plan.headers as Array<readonly [string, string]>).push(['access-control-allow-origin', 'https://evil.example'])).toThrow(TypeError);
    expect(() => ((first.plan.headers[0] as unknown as string[])[1] = 'https://evil.example')).toThrow(TypeError);
    expect(() => ((first.plan as { handled: boolean }).handled = true)).toThrow(TypeError);
    const next = policy.decide({ method: 'GET', origin: copy(GOOD) }) as { verdict: Verdict; plan: CorsPlan };
    expect(next.plan).toEqual(before);
    expect(next.verdict.origin).toBe(GOOD);
  });

  it('a custom verifier is asked every time (it may revoke an origin): nothing of its verdicts is remembered', () => {
    let allowed = true;
    const verifier = {
      verify: (origin: string | null | undefined): Verdict =>
        Object.freeze(
          allowed
            ? { allowed: true, origin: origin ?? null, via: 'cache', reason: 'cache-origin' }
            : { allowed: false, origin: origin ?? null, reason: 'unknown-origin', detail: 'revoked' },
        ) as Verdict,
    };
    const policy = createCorsPolicy({ verifier });
    const decide = () => policy.decide({ method: 'GET', origin: copy(GOOD) }) as { verdict: Verdict; plan: CorsPlan };
    expect(decide().verdict.allowed).toBe(true);
    expect(decide().plan.headers[0]).toEqual(['access-control-allow-origin', GOOD]);
    allowed = false;
    expect(decide().verdict.allowed).toBe(false);
    expect(decide().plan.kind).toBe('reject');
  });
});

describe('planCors: remembered plans of frozen verdicts', () => {
  it('equal the plans of the same verdict not frozen, for any requests in any order', () => {
    const options = [
      normalizeCorsOptions(),
      normalizeCorsOptions({ privateNetworkAccess: true, maxAge: 5, legacySourceOriginHeader: true }),
      normalizeCorsOptions({ preflightContinue: true, onDenied: 'omit' }),
    ];
    const verdicts: Verdict[] = [
      Object.freeze({ allowed: true, origin: GOOD, via: 'cache', reason: 'cache-origin' }),
      Object.freeze({ allowed: true, origin: GOOD, via: 'cache', reason: 'cache-origin', sourceOrigin: GOOD_SOURCE }),
      Object.freeze({ allowed: true, origin: GOOD, via: 'cache', reason: 'cache-origin', sourceOrigin: 'https://x.example\r\nA: b' }),
      Object.freeze({ allowed: true, origin: `${GOOD}\r\nA: b`, via: 'cache', reason: 'cache-origin' }),
      Object.freeze({ allowed: true, origin: 'https://www.publisher0.com', via: 'publisher', reason: 'publisher-origin' }),
      Object.freeze({ allowed: false, origin: GOOD, reason: 'unknown-origin', detail: 'no' }),
    ];
    const request = fc.record({
      method: fc.constantFrom('GET', 'OPTIONS', 'options'),
      origin: fc.constantFrom(GOOD, 'https://www.publisher0.com', `${GOOD}\r\nA: b`, changedAt(GOOD, 9), null).map((o) => (o === null ? o : copy(o))),
      requestMethod: fc.constantFrom(null, 'POST'),
      requestHeaders: fc.constantFrom(null, 'content-type', 'x-a,  x-b', 'amp-same-origin', 'a\r\nb', `${'x-long, '.repeat(40)}x`),
      requestPrivateNetwork: fc.constantFrom(null, 'true', 'false'),
    });
    fc.assert(
      fc.property(fc.array(fc.tuple(request, fc.nat(verdicts.length - 1), fc.nat(options.length - 1)), { minLength: 1, maxLength: 30 }), (cases) => {
        for (const [r, v, o] of [...cases, ...cases]) {
          const verdict = verdicts[v] as Verdict;
          const opts = options[o] as (typeof options)[number];
          expect(planCors(r, verdict, opts), JSON.stringify([r, v, o])).toEqual(planCors(r, { ...verdict }, opts));
        }
      }),
      { numRuns: 1000 },
    );
  });

  it('more verdicts than the memo holds: each still gets its own origin', () => {
    const options = normalizeCorsOptions();
    const origins = Array.from({ length: 3000 }, (_, i) => `https://p${i}.example`);
    const verdicts = origins.map((origin) => Object.freeze({ allowed: true, origin, via: 'publisher', reason: 'publisher-origin' }) as Verdict);
    for (let round = 0; round < 2; round++) {
      origins.forEach((origin, i) => {
        const plan = planCors({ method: 'GET', origin: copy(origin) }, verdicts[i] as Verdict, options);
        expect(plan.headers[0]).toEqual(['access-control-allow-origin', origin]);
      });
    }
  });
});
