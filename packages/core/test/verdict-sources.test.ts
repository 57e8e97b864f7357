/**
 * Verdict sources (issue #15): the in-memory rules, a compiled allow-set and
 * a custom (asynchronous) verifier, alone or combined, in one fixed order,
 * the first allow winning — written from the attacker's side: every path
 * that can allow is also asked by a hostile Origin, query and source.
 */
import { sha256 } from '@noble/hashes/sha2.js';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  allowSetSource,
  cacheOrigin,
  combineVerdictSources,
  compileAllowSet,
  createAsyncVerifier,
  createVerifier,
  isAmpCorsError,
  loadAllowSet,
  prefixForms,
  type Verdict,
} from '@ampcors/core';
import { allPrefixForms, isHashedPrefix } from '@ampcors/core/algorithms';
import { AMP_CORS_CONFIG_KEYS, createCorsPolicy, type VerdictSource } from '@ampcors/core/adapter';
import { readAllowSetOption } from '../src/verdict-sources.js';

const LONG = 'articles.publisher-with-a-very-long-domain-name.example.net';
/** A domain whose readable cache prefix another domain's reading shares: only its hashed prefix is compiled. */
const SHARED = 'a--b.example';
const COMPILED = ['example.com', LONG, SHARED];
const BYTES = compileAllowSet(COMPILED);
const PAGES = 'https://www.example.com';
const CACHE = cacheOrigin('example.com');
const HASHED = cacheOrigin(LONG);
const EVIL_CACHE = cacheOrigin('evil.com');
/** The hashed cache origin of SHARED (what a cache serves it on). */
const SHARED_HASHED = `https://${prefixForms(SHARED).find((form) => isHashedPrefix(form.prefix))?.prefix}.cdn.ampproject.org`;
/** The readable prefix of SHARED that the set never holds (it has a second claimant). */
const SHARED_READABLE = (() => {
  const kept = new Set(prefixForms(SHARED).map((form) => form.prefix));
  const left = allPrefixForms(SHARED).find((form) => !kept.has(form.prefix));
  if (left === undefined) throw new Error('the fixture lost its shared prefix');
  return `https://${left.prefix}.cdn.ampproject.org`;
})();

function messageOf(run: () => unknown): string {
  try {
    run();
  } catch (error) {
    expect(isAmpCorsError(error), String(error)).toBe(true);
    return (error as Error).message;
  }
  throw new Error('accepted');
}

/** The verdict of a GET (synchronous policies only). */
function judge(config: Parameters<typeof createCorsPolicy>[0], origin: string | undefined, extra: Record<string, string | undefined> = {}): Verdict {
  const decision = createCorsPolicy(config).decide({ method: 'GET', origin, ...extra });
  expect(decision).not.toBeInstanceOf(Promise);
  return (decision as { verdict: Verdict }).verdict;
}

describe('the allowSet option', () => {
  it('is a key of every adapter (the config fuzz tests use this list)', () => {
    expect(AMP_CORS_CONFIG_KEYS).toContain('allowSet');
  });
  it('takes the bytes (Uint8Array, a view into a larger buffer, an ArrayBuffer) or a loaded set', () => {
    const padded = new Uint8Array(BYTES.length + 16);
    padded.set(BYTES, 8);
    const loaded = loadAllowSet(BYTES);
    for (const given of [BYTES, padded.subarray(8, 8 + BYTES.length), BYTES.slice().buffer, loaded]) {
      const set = readAllowSetOption(given);
      expect(set.verifyOrigin(HASHED)).toMatchObject({ allowed: true, reason: 'cache-origin-hashed' });
    }
    expect(readAllowSetOption(loaded)).toBe(loaded);
  });
  it('a path is refused with how to read it: the bytes, at start-up', () => {
    const message = messageOf(() => createCorsPolicy({ allowSet: 'publishers.acs' as never, origins: [PAGES] }));
    expect(message).toMatch(/"publishers\.acs" is a string/);
    expect(message).toMatch(/read the file and pass its bytes/);
    expect(message).toMatch(/readFileSync\("publishers\.acs"\)/);
  });
  it.each([
    ['a number', 42, /not number/],
    ['null', null, /not null/],
    ['a domain list', ['example.com'], /not an array/],
    ['a verifier', createVerifier({ publishers: ['example.com'] }), /a verifier goes in `verifier`/],
    ['an object', { has: () => true }, /not an object without verifyOrigin/],
  ])('%s is refused, naming what it takes', (_name, value, why) => {
    const message = messageOf(() => createCorsPolicy({ allowSet: value as never, origins: [PAGES] }));
    expect(message).toMatch(/allowSet must be the bytes of a compiled allow-set/);
    expect(message).toMatch(why);
  });
  it('a value whose properties throw when read is refused with an AmpCorsError, not a crash', () => {
    const hostile = new Proxy(
      {},
      {
        get() {
          throw new Error('boom');
        },
      },
    );
    expect(messageOf(() => createCorsPolicy({ allowSet: hostile as never, origins: [PAGES] }))).toMatch(/allowSet must be the bytes/);
  });
  it('verifier: loadAllowSet(bytes), the old way that could not work, points to allowSet', () => {
    expect(messageOf(() => createCorsPolicy({ verifier: loadAllowSet(BYTES) as never }))).toMatch(/a loaded allow-set goes in allowSet/);
  });
  it('corrupt bytes are refused at start-up, never a partial set', () => {
    const flipped = BYTES.slice();
    flipped[BYTES.length - 40] = (flipped[BYTES.length - 40] as number) ^ 1;
    const error = (() => {
      try {
        createCorsPolicy({ allowSet: flipped, origins: [PAGES] });
      } catch (caught) {
        return caught;
      }
      return undefined;
    })();
    expect(isAmpCorsError(error)).toBe(true);
    expect((error as { code: string }).code).toBe('invalid-allow-set');
    expect((error as Error).message).toMatch(/^allowSet: Invalid allow-set: checksum mismatch/);
  });
  it("alone it is refused: the set holds no publisher origin, the publisher's pages would be denied", () => {
    const message = messageOf(() => createCorsPolicy({ allowSet: BYTES }));
    expect(message).toMatch(/allowSet holds only cache origins/);
    expect(message).toMatch(/origins: \['https:\/\/www\.example\.com'\]/);
  });
  it('caches or legacyCacheOrigins without the rules they configure are refused, not ignored', () => {
    const verifier = createVerifier({ publishers: ['example.org'] });
    expect(messageOf(() => createCorsPolicy({ allowSet: BYTES, verifier, legacyCacheOrigins: true }))).toMatch(
      /legacyCacheOrigins would be ignored: they configure publishers and origins/,
    );
    // With the rules present, they configure them.
    expect(judge({ allowSet: BYTES, origins: [PAGES], legacyCacheOrigins: true }, 'https://cdn.ampproject.org')).toMatchObject({
      allowed: true,
      reason: 'legacy-cache-origin',
    });
  });
});

describe('allowSet with origins (or publishers): serving from a compiled set', () => {
  const config = { allowSet: BYTES, origins: [PAGES] };
  it("allows the set's cache origins, readable and hashed", () => {
    expect(judge(config, CACHE)).toMatchObject({ allowed: true, reason: 'cache-origin', publisherDomain: 'example.com' });
    expect(judge(config, HASHED)).toMatchObject({ allowed: true, reason: 'cache-origin-hashed' });
    expect(judge(config, SHARED_HASHED)).toMatchObject({ allowed: true, reason: 'cache-origin-hashed' });
  });
  it("still allows the publisher's own origins", () => {
    expect(judge(config, PAGES)).toMatchObject({ allowed: true, reason: 'publisher-origin' });
    expect(judge({ allowSet: BYTES, publishers: ['example.org'] }, 'https://example.org')).toMatchObject({ allowed: true, reason: 'publisher-origin' });
  });
  it('attack: a prefix another domain also claims is denied even though its domain was compiled', () => {
    expect(judge(config, SHARED_READABLE)).toMatchObject({ allowed: false, reason: 'unknown-publisher' });
  });
  it('attack: a hand-made (or stale) set file holding a claimed prefix still never allows it', () => {
    // A raw version-1 file, as the format comment of compact-allow-set.ts describes, holding the hash of SHARED's readable prefix.
    const prefix = new URL(SHARED_READABLE).hostname.split('.')[0] as string;
    const encoder = new TextEncoder();
    const cache = [...[6], ...encoder.encode('google'), ...[18], ...encoder.encode('cdn.ampproject.org')];
    const header = [...encoder.encode('AMPCAS\r\n'), 0, 1, 0, 16, 0, 0, 0, 1, 0, 0, 0, 1, 0, 1, 0, 0];
    const body = Uint8Array.from([...header, ...cache, 0, 0, 0, 16, ...sha256(encoder.encode(prefix)).subarray(0, 16)]);
    const file = Uint8Array.from([...body, ...sha256(body)]);
    expect(loadAllowSet(file).has(prefix)).toBe(true);
    expect(judge({ allowSet: file, origins: [PAGES] }, SHARED_READABLE)).toMatchObject({ allowed: false, reason: 'unknown-publisher' });
  });
  it('attack: foreign, hashed-unknown, http, non-default port, bare cache, null, non-canonical', () => {
    expect(judge(config, EVIL_CACHE)).toMatchObject({ allowed: false, reason: 'unknown-publisher' });
    expect(judge(config, `https://${'a'.repeat(52)}.cdn.ampproject.org`)).toMatchObject({ allowed: false, reason: 'hashed-unknown' });
    expect(judge(config, CACHE.replace('https:', 'http:'))).toMatchObject({ allowed: false });
    expect(judge(config, `${CACHE}:8443`)).toMatchObject({ allowed: false });
    expect(judge(config, 'https://cdn.ampproject.org')).toMatchObject({ allowed: false });
    expect(judge(config, 'null')).toMatchObject({ allowed: false });
    expect(judge(config, CACHE.replace('example', 'Example'))).toMatchObject({ allowed: false });
    expect(judge(config, 'https://example.com')).toMatchObject({ allowed: false, reason: 'unknown-origin' });
  });
  it('attack: __amp_source_origin on an origin the set allows must be a publisher origin', () => {
    expect(judge(config, CACHE, { sourceOrigin: PAGES })).toMatchObject({ allowed: true, sourceOrigin: PAGES });
    expect(judge(config, HASHED, { sourceOrigin: 'https://evil.example' })).toMatchObject({ allowed: false, reason: 'source-origin-mismatch' });
    expect(judge(config, CACHE, { sourceOrigin: 'https://example.com' })).toMatchObject({ allowed: false, reason: 'source-origin-mismatch' });
  });
  it('no Origin: same-origin only with AMP-Same-Origin: true (and a hostile AMP-Same-Origin beside an Origin changes nothing)', () => {
    expect(judge(config, undefined, { ampSameOrigin: 'true' })).toMatchObject({ allowed: true, reason: 'same-origin' });
    expect(judge(config, undefined)).toMatchObject({ allowed: false, reason: 'missing' });
    expect(judge(config, EVIL_CACHE, { ampSameOrigin: 'true' })).toMatchObject({ allowed: false });
  });
  it('property: an origin is allowed exactly when the set or the origins allow it', () => {
    const set = loadAllowSet(BYTES);
    const pages = createVerifier({ publishers: [], origins: [PAGES] });
    const label = fc.stringMatching(/^[a-z0-9-]{1,20}$/);
    const origin = fc.oneof(
      fc.constantFrom(CACHE, HASHED, SHARED_READABLE, EVIL_CACHE, PAGES, SHARED_HASHED),
      label.map((l) => `https://${l}.cdn.ampproject.org`),
      label.map((l) => `https://${l}.example.com`),
      fc.string({ maxLength: 40 }),
    );
    fc.assert(
      fc.property(origin, (value) => {
        const allowed = judge(config, value).allowed;
        expect(allowed).toBe(set.verifyOrigin(value).allowed || pages.verify(value).allowed);
      }),
      { numRuns: 400 },
    );
  });
});

describe('combined sources: fixed order, first allow wins', () => {
  it('in-memory rules answer first: a source after them is never asked for what they allow', () => {
    let asked = 0;
    const counting: VerdictSource = {
      verify: (origin) => {
        asked += 1;
        return { allowed: false, origin: origin ?? null, reason: 'unknown-origin', detail: 'counting' };
      },
    };
    const policy = createCorsPolicy({ publishers: ['example.com'], allowSet: BYTES, verifier: counting });
    expect((policy.decide({ method: 'GET', origin: CACHE }) as { verdict: Verdict }).verdict.reason).toBe('cache-origin');
    expect((policy.decide({ method: 'GET', origin: HASHED }) as { verdict: Verdict }).verdict.reason).toBe('cache-origin-hashed');
    expect(asked).toBe(0);
    expect((policy.decide({ method: 'GET', origin: EVIL_CACHE }) as { verdict: Verdict }).verdict).toMatchObject({ allowed: false });
    expect(asked).toBe(1);
  });
  it('all deny: a source that knew the origin but refused it explains (a forged __amp_source_origin, a registry down)', async () => {
    const config = { publishers: ['example.com'], allowSet: BYTES };
    expect(judge(config, HASHED, { sourceOrigin: 'https://evil.example' })).toMatchObject({ allowed: false, reason: 'source-origin-mismatch' });
    const down = createAsyncVerifier({ source: { publisherOfPrefix: () => Promise.reject(new Error('ECONNREFUSED')), hasPublisher: async () => false } });
    const policy = createCorsPolicy({ ...config, verifier: down });
    expect((await policy.decide({ method: 'GET', origin: EVIL_CACHE })).verdict).toMatchObject({ allowed: false, reason: 'source-unavailable' });
  });
  it('all deny: the first source explains, the same reason every time', () => {
    const config = {
      publishers: ['example.com'],
      allowSet: BYTES,
      verifier: { verify: () => ({ allowed: false, origin: null, reason: 'unknown-origin', detail: 'x' }) as Verdict },
    };
    const first = judge(config, EVIL_CACHE);
    expect(first).toMatchObject({ allowed: false, reason: createVerifier({ publishers: ['example.com'] }).verify(EVIL_CACHE).reason });
    expect(judge(config, EVIL_CACHE)).toEqual(first);
  });
  it('publishers, allowSet and an async registry together: each allows its own, nothing else', async () => {
    const registry = createAsyncVerifier({
      source: {
        publisherOfPrefix: async (prefix) => (prefixForms('registry.example').some((form) => form.prefix === prefix) ? 'registry.example' : undefined),
        hasPublisher: async (domain) => domain === 'registry.example',
      },
    });
    const policy = createCorsPolicy({ publishers: ['example.org'], allowSet: BYTES, verifier: registry });
    const verdictOf = async (origin: string) => (await policy.decide({ method: 'GET', origin })).verdict;
    expect(await verdictOf(cacheOrigin('example.org'))).toMatchObject({ allowed: true, reason: 'cache-origin' });
    expect(await verdictOf(HASHED)).toMatchObject({ allowed: true, reason: 'cache-origin-hashed' });
    expect(await verdictOf(cacheOrigin('registry.example'))).toMatchObject({ allowed: true, publisherDomain: 'registry.example' });
    expect(await verdictOf(EVIL_CACHE)).toMatchObject({ allowed: false, reason: 'unknown-publisher' });
    expect(await verdictOf(SHARED_READABLE)).toMatchObject({ allowed: false });
  });
  it('a throwing or rejecting source fails closed: the error reaches the adapter, never an allow', async () => {
    const throwing = createCorsPolicy({
      origins: [PAGES],
      allowSet: BYTES,
      verifier: {
        verify: () => {
          throw new Error('down');
        },
      },
    });
    expect(() => throwing.decide({ method: 'GET', origin: EVIL_CACHE })).toThrow('down');
    // Earlier sources still answer for their own origins.
    expect((throwing.decide({ method: 'GET', origin: HASHED }) as { verdict: Verdict }).verdict.allowed).toBe(true);
    const rejecting = createCorsPolicy({ origins: [PAGES], verifier: { verify: () => Promise.reject(new Error('down')) } });
    await expect(rejecting.decide({ method: 'GET', origin: EVIL_CACHE })).rejects.toThrow('down');
  });
  it('attack: a source that answers something other than a verdict is a denial, never an allow', async () => {
    for (const answer of [undefined, null, {}, { allowed: 'true' }, { allowed: 1 }, 'allowed']) {
      const policy = createCorsPolicy({ origins: [PAGES], verifier: { verify: () => answer as never } });
      const decision = policy.decide({ method: 'GET', origin: EVIL_CACHE }) as { verdict: Verdict; plan: { kind?: string } };
      expect(decision.verdict).toMatchObject({ allowed: false });
      const asyncPolicy = createCorsPolicy({ verifier: { verify: async () => answer as never } });
      expect((await asyncPolicy.decide({ method: 'GET', origin: EVIL_CACHE })).verdict).toMatchObject({ allowed: false, reason: 'source-unavailable' });
    }
  });
  it('attack: a source that allows another origin than the request sent is answered as a denial', () => {
    const liar: VerdictSource = { verify: () => ({ allowed: true, origin: PAGES, via: 'publisher', reason: 'publisher-origin' }) };
    const decision = createCorsPolicy({ verifier: liar }).decide({ method: 'GET', origin: EVIL_CACHE }) as { plan: unknown };
    expect(JSON.stringify(decision.plan)).not.toContain(EVIL_CACHE);
  });
  it('property: the combination allows exactly what one of its sources allows alone, with the same request facts', () => {
    const rules = createVerifier({ publishers: ['example.org'], origins: [PAGES] });
    const set = allowSetSource(loadAllowSet(BYTES), (origin) => rules.isPublisherOrigin(origin));
    const custom = createVerifier({ publishers: ['registry.example'] });
    const policy = createCorsPolicy({ publishers: ['example.org'], origins: [PAGES], allowSet: BYTES, verifier: custom });
    const label = fc.stringMatching(/^[a-z0-9-]{1,24}$/);
    const origin = fc.oneof(
      fc.constantFrom<string | undefined>(undefined, '', 'null', CACHE, HASHED, SHARED_HASHED, SHARED_READABLE, EVIL_CACHE, PAGES),
      fc.constantFrom(cacheOrigin('example.org'), cacheOrigin('registry.example'), 'https://registry.example', 'https://example.org'),
      label.map((l) => `https://${l}.cdn.ampproject.org`),
      label.map((l) => `https://${l}.bing-amp.com`),
      fc.string({ maxLength: 30 }),
    );
    const source = fc.constantFrom<string | undefined>(
      undefined,
      PAGES,
      'https://example.org',
      'https://registry.example',
      'https://evil.example',
      'news@example.com',
    );
    fc.assert(
      fc.property(origin, source, fc.boolean(), (value, sourceOrigin, same) => {
        const facts = { ...(sourceOrigin !== undefined && { sourceOrigin }), ...(same && { ampSameOrigin: 'true' }) };
        const decision = policy.decide({ method: 'GET', origin: value, ...facts }) as { verdict: Verdict };
        const alone = [rules, set, custom].map((s) => (s.verify(value, facts) as Verdict).allowed);
        expect(decision.verdict.allowed).toBe(alone.includes(true));
        if (decision.verdict.allowed) expect(decision.verdict.origin).toBe(value === undefined || value === '' ? null : value);
      }),
      { numRuns: 1500 },
    );
  });
  it('combineVerdictSources is the same rule for a hand-built list', () => {
    const combined = combineVerdictSources([createVerifier({ publishers: [], origins: [PAGES] }), allowSetSource(loadAllowSet(BYTES))]);
    expect(combined.verify(PAGES)).toMatchObject({ allowed: true, reason: 'publisher-origin' });
    expect(combined.verify(HASHED)).toMatchObject({ allowed: true, reason: 'cache-origin-hashed' });
    expect(combined.verify(EVIL_CACHE)).toMatchObject({ allowed: false, reason: 'unknown-publisher' });
    // With no publisher origins given to allowSetSource, a present __amp_source_origin is always denied.
    expect(allowSetSource(loadAllowSet(BYTES)).verify(HASHED, { sourceOrigin: PAGES })).toMatchObject({ allowed: false, reason: 'source-origin-mismatch' });
  });
  it('verifier with publishers is a combination now, not a refusal; caches without rules is refused', () => {
    const verifier = createVerifier({ publishers: ['example.org'] });
    expect(judge({ publishers: ['example.com'], verifier }, cacheOrigin('example.org'))).toMatchObject({ allowed: true });
    expect(judge({ publishers: ['example.com'], verifier }, CACHE)).toMatchObject({ allowed: true });
    expect(messageOf(() => createCorsPolicy({ verifier, caches: [] as never }))).toMatch(/caches would be ignored/);
    expect(messageOf(() => createCorsPolicy({ verifier, legacyCacheOrigins: true }))).toMatch(/legacyCacheOrigins would be ignored/);
    expect(messageOf(() => createCorsPolicy({ verifier: { verify: 1 } as never, allowSet: 'x' as never }))).toMatch(
      /2 configuration problems|verifier must be/,
    );
  });
});
