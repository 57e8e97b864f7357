import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  type AmpCache,
  CACHES,
  cacheOrigin,
  canonicalDomain,
  createVerifier,
  domainPrefix,
  EXPLAIN_MAX_SHOWN,
  explainOrigin,
  type OriginExplanation,
  parseOrigin,
  prefixForms,
  reverseOrigin,
  toolboxPrefix,
} from '../src/index.js';
import { decodePrefix, findCacheOfHost } from '../src/algorithms.js';

const BING = CACHES[1] as AmpCache;
const LONG_DOMAIN = `${'a'.repeat(40)}.${'b'.repeat(30)}.example.com`;

function step(explanation: OriginExplanation, name: string) {
  const found = explanation.steps.find((s) => s.name === name);
  if (!found) throw new Error(`no step ${name} in ${explanation.steps.map((s) => s.name).join(', ')}`);
  return found;
}

function lastStep(explanation: OriginExplanation) {
  return explanation.steps[explanation.steps.length - 1];
}

/** Every step of a reversible origin; the trace's values checked against the core functions themselves. */
function expectReversedTrace(origin: string): OriginExplanation {
  const explanation = explainOrigin(origin);
  const parsed = parseOrigin(origin);
  if (!parsed.ok) throw new Error('test origin must parse');
  const found = findCacheOfHost(parsed.host, CACHES);
  expect(step(explanation, 'parse-origin').output).toBe(parsed.host);
  expect(step(explanation, 'find-cache').output).toBe(found?.cache.cacheDomain);
  expect(step(explanation, 'remove-suffix').output).toBe(found?.prefix);
  const prefix = found?.prefix as string;
  expect(step(explanation, 're-encode').output).toBe(decodePrefix(prefix));
  const domain = canonicalDomain(decodePrefix(prefix) as string);
  expect(step(explanation, 'canonical-domain').output).toBe(domain);
  expect([domainPrefix(domain), toolboxPrefix(domain)]).toContain(step(explanation, 'forward-check').output);
  expect(explanation.steps.every((s) => s.status !== 'failed')).toBe(true);
  expect(explanation.result).toEqual(reverseOrigin(origin));
  return explanation;
}

describe('explainOrigin: reversible cache origins', () => {
  it('traces www-example-com on Google and on Bing', () => {
    for (const cache of CACHES) {
      const origin = cacheOrigin('www.example.com', cache);
      const explanation = expectReversedTrace(origin);
      expect(step(explanation, 'find-cache').note).toContain(cache.name);
      expect(step(explanation, 'punycode-decode').status).toBe('skipped');
      expect(step(explanation, 'remove-wrap').status).toBe('skipped');
      expect(step(explanation, 'fold-hyphens')).toMatchObject({ input: 'www-example-com', output: 'www.example.com', status: 'done' });
      expect(explanation.result).toMatchObject({ ok: true, hashed: false, publisherDomain: 'www.example.com', form: 'spec', cache });
    }
  });

  it('shows the punycode-decoded label of an IDN prefix', () => {
    const explanation = expectReversedTrace(cacheOrigin('xn--57hw060o.com'));
    expect(step(explanation, 'remove-suffix').output).toBe('xn---com-p33b41770a');
    expect(step(explanation, 'punycode-decode')).toMatchObject({ output: '⚡😊-com', status: 'done' });
    expect(step(explanation, 'fold-hyphens').output).toBe('⚡😊.com');
    expect(step(explanation, 're-encode').output).toBe('xn--57hw060o.com');
  });

  it('shows the 0-…-0 wrap being removed and -- folded to -', () => {
    const explanation = expectReversedTrace(cacheOrigin('en-us.example.com', BING));
    expect(step(explanation, 'remove-wrap')).toMatchObject({ input: '0-en--us-example-com-0', output: 'en--us-example-com', status: 'done' });
    expect(step(explanation, 'fold-hyphens').output).toBe('en-us.example.com');
  });

  it('names the toolbox form when only toolbox-cache-url reproduces the prefix', () => {
    const domain = canonicalDomain('äb-c.de');
    const toolbox = toolboxPrefix(domain);
    expect(toolbox).not.toBe(domainPrefix(domain));
    const explanation = expectReversedTrace(`https://${toolbox}.cdn.ampproject.org`);
    expect(explanation.result).toMatchObject({ ok: true, form: 'toolbox', publisherDomain: domain });
    expect(step(explanation, 'forward-check').note).toContain(domainPrefix(domain));
  });
});

describe('explainOrigin: where the trace stops', () => {
  it('stops at a hashed prefix, which cannot be reversed', () => {
    const origin = cacheOrigin(LONG_DOMAIN);
    const explanation = explainOrigin(origin);
    expect(lastStep(explanation)).toMatchObject({ name: 'check-hashed', input: domainPrefix(LONG_DOMAIN), output: null, status: 'done' });
    expect(explanation.result).toEqual(reverseOrigin(origin));
    expect(explanation.result).toMatchObject({ ok: true, hashed: true });
  });

  const failures: Array<[string, string, string]> = [
    ['', 'missing', 'parse-origin'],
    ['null', 'null-origin', 'parse-origin'],
    ['https://Example-com.cdn.ampproject.org', 'not-canonical', 'parse-origin'],
    ['https://a.com, https://b.com', 'list', 'parse-origin'],
    ['https://example.com', 'unknown-cache', 'find-cache'],
    ['https://example-com.cdn.ampproject.org.evil.com', 'unknown-cache', 'find-cache'],
    ['http://example-com.cdn.ampproject.org', 'insecure-scheme', 'check-scheme-port'],
    ['https://example-com.cdn.ampproject.org:8443', 'non-default-port', 'check-scheme-port'],
    ['https://cdn.ampproject.org', 'cache-root', 'remove-suffix'],
    ['https://a.example-com.cdn.ampproject.org', 'not-a-label', 'remove-suffix'],
    ['https://xn--a-9999999999.cdn.ampproject.org', 'invalid-punycode', 'punycode-decode'],
    ['https://a-b-1.cdn.ampproject.org', 'invalid-domain', 'canonical-domain'],
    [`https://${'xn--'.repeat(17)}a.cdn.ampproject.org`, 'not-a-label', 'remove-suffix'],
    ['https://www-example-com-.cdn.ampproject.org', 'malformed', 'parse-origin'],
    ['https://0-0-en--us-example-com-0-0.cdn.ampproject.org', 'invalid-domain', 'canonical-domain'],
    ['https://0-example-com-0.cdn.ampproject.org', 'not-reproducible', 'forward-check'],
    ['https://en--us-example-com.cdn.ampproject.org', 'not-reproducible', 'forward-check'],
  ];

  it.each(failures)('%j stops with %s at %s, as reverseOrigin says', (origin, reason, at) => {
    const explanation = explainOrigin(origin);
    expect(explanation.result).toEqual(reverseOrigin(origin));
    expect(explanation.result).toMatchObject({ ok: false, reason });
    expect(lastStep(explanation)).toMatchObject({ name: at, status: 'failed', reason, output: null });
    expect(explanation.steps.slice(0, -1).every((s) => s.status !== 'failed')).toBe(true);
  });

  it('never throws on hostile input, and never shows more than EXPLAIN_MAX_SHOWN characters', () => {
    const hostile: unknown[] = [
      null,
      undefined,
      42,
      {},
      'x'.repeat(65_536),
      `https://${'a-'.repeat(40_000)}b.cdn.ampproject.org`,
      'https://a\u0000b.cdn.ampproject.org',
      'https://\u202eexample.com',
      '\r\n\t',
    ];
    for (const input of hostile) {
      const started = performance.now();
      const explanation = explainOrigin(input as string, { publishers: ['example.com'] });
      expect(performance.now() - started).toBeLessThan(500);
      expect(explanation.result).toEqual(reverseOrigin(input as string));
      expect(explanation.verdict).toEqual(createVerifier({ publishers: ['example.com'] }).verify(input as string));
      for (const s of explanation.steps) {
        expect(s.input.length).toBeLessThanOrEqual(EXPLAIN_MAX_SHOWN);
        expect((s.output ?? '').length).toBeLessThanOrEqual(EXPLAIN_MAX_SHOWN);
      }
    }
  });
});

describe('explainOrigin with publishers', () => {
  it('gives the verifier verdict and names the listed domain behind a hashed prefix', () => {
    const publishers = ['example.org', LONG_DOMAIN, '*.example.net'];
    const origin = cacheOrigin(LONG_DOMAIN, 'bing');
    const explanation = explainOrigin(origin, { publishers });
    expect(explanation.verdict).toEqual(createVerifier({ publishers }).verify(origin));
    expect(explanation.verdict).toMatchObject({ allowed: true, reason: 'cache-origin-hashed', publisherDomain: LONG_DOMAIN });
    const form = prefixForms(LONG_DOMAIN).find((f) => f.prefix === domainPrefix(LONG_DOMAIN))?.form;
    expect(explanation.producedBy).toEqual([{ listed: LONG_DOMAIN, publisherDomain: LONG_DOMAIN, form }]);
  });

  it('explains a denied hashed prefix under a wildcard rule, naming the rule that produces it', () => {
    const publishers = [`*.${LONG_DOMAIN}`];
    const origin = cacheOrigin(LONG_DOMAIN);
    const explanation = explainOrigin(origin, { publishers });
    expect(explanation.verdict).toEqual(createVerifier({ publishers }).verify(origin));
    expect(explanation.verdict).toMatchObject({ allowed: false, reason: 'hashed-unknown' });
    expect(explanation.producedBy?.map((p) => p.listed)).toEqual(publishers);
  });

  it('reports no source for a hashed prefix of no listed domain', () => {
    const origin = cacheOrigin(LONG_DOMAIN);
    const explanation = explainOrigin(origin, { publishers: ['example.com'] });
    expect(explanation.verdict).toMatchObject({ allowed: false, reason: 'hashed-unknown' });
    expect(explanation.producedBy).toEqual([]);
  });

  it('returns a refused configuration as configError, without a verdict', () => {
    const suffix = explainOrigin('https://example-com.cdn.ampproject.org', { publishers: ['co.uk'] });
    expect(suffix.configError?.code).toBe('public-suffix-rule');
    expect(suffix.verdict).toBeUndefined();
    expect(suffix.result).toEqual(reverseOrigin('https://example-com.cdn.ampproject.org'));
    const badDomain = explainOrigin('https://example-com.cdn.ampproject.org', { publishers: ['exa mple.com'] });
    expect(badDomain.configError?.code).toBe('invalid-domain');
    const badCaches = explainOrigin('https://example-com.cdn.ampproject.org', { caches: [{ id: 'x' } as unknown as AmpCache] });
    expect(badCaches.configError?.code).toBe('invalid-cache');
    expect(badCaches.steps).toEqual([]);
    expect(badCaches.result.ok).toBe(false);
  });

  it('uses the given caches for both the trace and the verdict', () => {
    const caches: AmpCache[] = [{ id: 'test', name: 'Test Cache', cacheDomain: 'amp.cache.test' }];
    const origin = 'https://www-example-com.amp.cache.test';
    const explanation = explainOrigin(origin, { caches, publishers: ['www.example.com'] });
    expect(explanation.result).toEqual(reverseOrigin(origin, { caches }));
    expect(step(explanation, 'find-cache').note).toContain('Test Cache');
    expect(explanation.verdict).toEqual(createVerifier({ publishers: ['www.example.com'], caches }).verify(origin));
    expect(explanation.verdict?.allowed).toBe(true);
    expect(explainOrigin(cacheOrigin('www.example.com'), { caches }).result).toMatchObject({ ok: false, reason: 'unknown-cache' });
  });
});

describe('explainOrigin agrees with reverseOrigin and the verifier (property)', () => {
  const label = fc.array(fc.constantFrom(...'abcxyz019-ä⚡'.split('')), { minLength: 1, maxLength: 24 }).map((chars) => chars.join(''));
  const domain = fc
    .tuple(fc.array(label, { minLength: 1, maxLength: 4 }), fc.constantFrom('com', 'co.uk', 'de'))
    .map(([labels, tld]) => {
      try {
        return canonicalDomain(`${labels.join('.')}.${tld}`);
      } catch {
        return undefined;
      }
    })
    .filter((d): d is string => d !== undefined);

  it('for every prefix form of generated domains, and for generated prefixes', () => {
    fc.assert(
      fc.property(domain, fc.constantFrom(...CACHES), label, (publisher, cache, junk) => {
        const publishers = [publisher];
        const verifier = createVerifier({ publishers });
        const origins = [...prefixForms(publisher).map((f) => `https://${f.prefix}.${cache.cacheDomain}`), `https://${junk}.${cache.cacheDomain}`];
        for (const origin of origins) {
          const explanation = explainOrigin(origin, { publishers });
          expect(explanation.result).toEqual(reverseOrigin(origin));
          expect(explanation.verdict).toEqual(verifier.verify(origin));
          const prefix = findCacheOfHost(origin.slice('https://'.length), CACHES)?.prefix;
          const decoded = prefix?.includes('-') ? decodePrefix(prefix) : undefined;
          if (decoded !== undefined && explanation.steps.some((s) => s.name === 're-encode' && s.status === 'done')) {
            expect(step(explanation, 're-encode').output).toBe(decoded);
          }
        }
        const ownOrigin = cacheOrigin(publisher, cache);
        // parseOrigin refuses some real hosts (a first label starting 0x): no prefix is found then.
        if (!parseOrigin(ownOrigin).ok) return;
        // The guide's prefix is produced by the rule unless another domain also has it (then it is no accepted form).
        const own = prefixForms(publisher).find((f) => f.prefix === domainPrefix(publisher));
        const producedBy = explainOrigin(ownOrigin, { publishers }).producedBy;
        if (own) expect(producedBy?.[0]).toMatchObject({ listed: publisher, publisherDomain: publisher, form: own.form });
        else expect(producedBy).toEqual([]);
      }),
      { numRuns: 150, seed: 8 },
    );
  });
});
