import { describe, expect, it, vi } from 'vitest';
import { MAX_CACHES, MAX_CACHES_JSON_BYTES } from '../src/caches.js';
import { CACHES, CACHES_URL, fetchCaches, findCache, validateCaches } from '../src/index.js';

const ok =
  (body: unknown, status = 200) =>
  async () =>
    new Response(typeof body === 'string' ? body : JSON.stringify(body), { status });
const LIVE = { caches: CACHES.map((c) => ({ ...c })) };

describe('validateCaches', () => {
  it('accepts the bundled snapshot and freezes the copy', () => {
    const caches = validateCaches(LIVE.caches);
    expect(caches).toEqual(CACHES);
    expect(Object.isFrozen(caches) && Object.isFrozen(caches[0])).toBe(true);
  });
  it.each([
    ['not an array', {}],
    ['empty', []],
    ['a public suffix', [{ id: 'x', name: 'x', cacheDomain: 'com' }]],
    ['an empty cache domain', [{ id: 'x', name: 'x', cacheDomain: '' }]],
    ['an untrusted operator', [{ id: 'x', name: 'x', cacheDomain: 'ampproject.org.evil.com' }]],
    ['a non-canonical domain', [{ id: 'x', name: 'x', cacheDomain: 'CDN.ampproject.org' }]],
    ['duplicate ids', [CACHES[0], CACHES[0]]],
    ['overlapping domains', [CACHES[0], { id: 'y', name: 'y', cacheDomain: 'x.cdn.ampproject.org' }]],
    ['a missing name', [{ id: 'x', cacheDomain: 'a.ampproject.org' }]],
    ['a bad id', [{ id: '', name: 'x', cacheDomain: 'a.ampproject.org' }]],
    ['more than MAX_CACHES entries', Array.from({ length: MAX_CACHES + 1 }, (_, i) => ({ id: `c${i}`, name: 'c', cacheDomain: `c${i}.ampproject.org` }))],
    ['a frame domain on a public suffix', [{ ...CACHES[0], thirdPartyFrameDomainSuffix: 'net' }]],
    ['an update-cache domain not canonical', [{ ...CACHES[0], updateCacheApiDomainSuffix: 'CDN.ampproject.org' }]],
  ])('refuses %s', (_, list) => {
    expect(() => validateCaches(list)).toThrow(expect.objectContaining({ code: 'invalid-cache' }));
  });
  it('accepts any registrable operator when trustedOperators is null', () => {
    expect(validateCaches([{ id: 'x', name: 'x', cacheDomain: 'amp.example.net' }], { trustedOperators: null })[0]?.cacheDomain).toBe('amp.example.net');
  });
  it('findCache', () => {
    expect(findCache('bing')?.cacheDomain).toBe('www.bing-amp.com');
    expect(findCache('nope')).toBeUndefined();
  });
});

describe('fetchCaches never fails open', () => {
  it('returns the validated live list', async () => {
    const fetch = vi.fn(ok(LIVE));
    const result = await fetchCaches({ fetch });
    expect(result).toMatchObject({ ok: true });
    expect(result.caches).toEqual(CACHES);
    expect(fetch).toHaveBeenCalledWith(CACHES_URL, expect.objectContaining({ redirect: 'error' }));
  });
  const faults: Array<[string, Parameters<typeof fetchCaches>[0]]> = [
    ['HTTP 500', { fetch: ok('oops', 500) }],
    ['invalid JSON', { fetch: ok('{not json') }],
    ['no caches key', { fetch: ok({ other: [] }) }],
    ['cacheDomain "com"', { fetch: ok({ caches: [{ id: 'x', name: 'x', cacheDomain: 'com' }] }) }],
    ['an empty cacheDomain', { fetch: ok({ caches: [{ id: 'x', name: 'x', cacheDomain: '' }] }) }],
    ['ampproject.org.evil.com', { fetch: ok({ caches: [...LIVE.caches, { id: 'e', name: 'e', cacheDomain: 'ampproject.org.evil.com' }] }) }],
    ['a network error', { fetch: async () => Promise.reject(new TypeError('fetch failed')) }],
    [
      'a throwing fetch',
      {
        fetch: () => {
          throw new Error('boom');
        },
      },
    ],
    ['a timeout', { fetch: () => new Promise<Response>(() => {}), timeoutMs: 20 }],
    ['a body over the cap', { fetch: ok(JSON.stringify(LIVE).replace('{', `{"pad":"${'x'.repeat(MAX_CACHES_JSON_BYTES)}",`)) }],
    [
      'a Content-Length over the cap',
      { fetch: async () => new Response(JSON.stringify(LIVE), { headers: { 'content-length': String(MAX_CACHES_JSON_BYTES + 1) } }) },
    ],
  ];
  it.each(faults)('%s keeps the last good list', async (_, options) => {
    const fallback = [CACHES[0]!];
    const result = await fetchCaches({ ...options, fallback });
    expect(result.ok).toBe(false);
    expect(result.caches).toBe(fallback);
    if (!result.ok) expect(result.error).toBeInstanceOf(Error);
  });
});
