// The cache registry, cache URLs, hash prefixes and errors at their edges
// (issue #6, mutation testing): every refusal of validateCaches and cacheUrl
// names the entry or value at fault, fetchCaches's failures carry a useful
// error and never widen trust, and the optional fields survive validation.
import { AmpCorsError, type AmpCache, CACHES, CACHES_URL, cacheOrigin, cacheUrl, fetchCaches, findCache, isAmpCorsError, validateCaches } from '@ampcors/core';
import { hashPrefix, hashPrefixHex, sha256Utf8 } from '@ampcors/core/safe-browsing';
import { describe, expect, it, vi } from 'vitest';
import { MAX_CACHES, MAX_CACHES_JSON_BYTES } from '../../src/caches.js';
import { errorOf } from './ampcors-error.js';

const json =
  (body: unknown, status = 200) =>
  async () =>
    new Response(JSON.stringify(body), { status });
const entry = (extra: Record<string, unknown> = {}) => ({ id: 'x', name: 'X', cacheDomain: 'amp.example.net', ...extra });

describe('validateCaches: refusals name the entry and the problem', () => {
  const cases: Array<[string, unknown, RegExp]> = [
    ['not an array', { caches: [] }, /^caches must be an array$/],
    ['empty', [], /^caches must not be empty$/],
    ['a null entry', [null], /^caches\[0\]: not an object$/],
    ['a string entry', ['amp.example.net'], /^caches\[0\]: not an object$/],
    ['a missing id', [{ name: 'X', cacheDomain: 'amp.example.net' }], /^caches\[0\]: id must be a short identifier$/],
    ['an id with a space', [entry({ id: 'a b' })], /^caches\[0\]: id must be a short identifier$/],
    ['an id of 66 characters', [entry({ id: 'a'.repeat(66) })], /^caches\[0\]: id must be a short identifier$/],
    ['a duplicate id, second entry', [entry(), entry({ cacheDomain: 'amp2.example.net' })], /^caches\[1\]: duplicate id "x"$/],
    ['a numeric name', [entry({ name: 1 })], /^caches\[0\]: name must be a string$/],
    ['a numeric cacheDomain', [entry({ cacheDomain: 1 })], /^caches\[0\]: cacheDomain must be a non-empty string$/],
    ['an empty cacheDomain', [entry({ cacheDomain: '' })], /^caches\[0\]: cacheDomain must be a non-empty string$/],
    ['an invalid cacheDomain', [entry({ cacheDomain: 'a..net' })], /^caches\[0\]: Invalid domain "a\.\.net": empty label$/],
    [
      'an uppercase cacheDomain',
      [entry({ cacheDomain: 'AMP.example.net' })],
      /^caches\[0\]: cacheDomain "AMP\.example\.net" is not canonical \(expected amp\.example\.net\)$/,
    ],
    ['a public suffix', [entry({ cacheDomain: 'github.io' })], /^caches\[0\]: cacheDomain "github\.io" is a public suffix$/],
    ['a numeric docs', [entry({ docs: 1 })], /^caches\[0\]: docs must be a string$/],
    ['a numeric update suffix', [entry({ updateCacheApiDomainSuffix: 1 })], /^caches\[0\]: updateCacheApiDomainSuffix must be a string$/],
    ['a numeric frame suffix', [entry({ thirdPartyFrameDomainSuffix: 1 })], /^caches\[0\]: thirdPartyFrameDomainSuffix must be a string$/],
    ['the same domain twice', [entry(), entry({ id: 'y' })], /^cacheDomain amp\.example\.net overlaps amp\.example\.net$/],
    [
      'a domain below another',
      [entry(), entry({ id: 'y', cacheDomain: 'a.amp.example.net' })],
      /^cacheDomain a\.amp\.example\.net overlaps amp\.example\.net$/,
    ],
  ];
  it.each(cases)('%s', (_, list, message) => {
    const error = errorOf(() => validateCaches(list, { trustedOperators: null }));
    expect(error.code).toBe('invalid-cache');
    expect(error.message).toMatch(message);
  });
  it('by default only the bundled operators are trusted, and the message lists them', () => {
    const error = errorOf(() => validateCaches([entry()]));
    expect(error.message).toBe('caches[0]: cacheDomain "amp.example.net" is not under a trusted operator (ampproject.org, bing-amp.com)');
    expect(validateCaches([{ id: 'g2', name: 'G2', cacheDomain: 'other.ampproject.org' }])[0]?.cacheDomain).toBe('other.ampproject.org');
  });
  it('an explicit operator list replaces the default', () => {
    expect(validateCaches([entry()], { trustedOperators: ['example.net'] })[0]?.cacheDomain).toBe('amp.example.net');
    expect(errorOf(() => validateCaches([{ id: 'g', name: 'G', cacheDomain: 'cdn.ampproject.org' }], { trustedOperators: ['example.net'] })).message).toMatch(
      /not under a trusted operator \(example\.net\)$/,
    );
  });
  it('ids: 1 to 64 characters, letters, digits, _ and -, first a letter or digit', () => {
    for (const id of ['a', 'A', '0', 'a_b-c', 'a'.repeat(64)]) expect(validateCaches([entry({ id })], { trustedOperators: null })[0]?.id).toBe(id);
    for (const id of ['', '-a', '_a', 'a'.repeat(65), 'a.b', 'a\nb'])
      expect(() => validateCaches([entry({ id })], { trustedOperators: null })).toThrow(/id must be a short identifier/);
  });
  it('keeps the optional fields that are given, and only those, frozen', () => {
    const [full] = validateCaches(
      [entry({ docs: 'https://d', updateCacheApiDomainSuffix: 'u.example.net', thirdPartyFrameDomainSuffix: 'f.example.net', extra: 1 })],
      {
        trustedOperators: null,
      },
    );
    expect(full).toEqual({
      id: 'x',
      name: 'X',
      cacheDomain: 'amp.example.net',
      docs: 'https://d',
      updateCacheApiDomainSuffix: 'u.example.net',
      thirdPartyFrameDomainSuffix: 'f.example.net',
    });
    expect(Object.isFrozen(full)).toBe(true);
    const [bare] = validateCaches([entry()], { trustedOperators: null });
    expect(Object.keys(bare as object).sort()).toEqual(['cacheDomain', 'id', 'name']);
  });
  it('two caches of the same operator that do not overlap are fine', () => {
    expect(
      validateCaches([entry(), entry({ id: 'y', cacheDomain: 'amp2.example.net' }), entry({ id: 'z', cacheDomain: 'xamp.example.net' })], {
        trustedOperators: null,
      }),
    ).toHaveLength(3);
  });
});

describe('fetchCaches', () => {
  const LIVE = { caches: CACHES.map((c) => ({ ...c })) };
  it('asks the given URL, with an abort signal and redirects refused', async () => {
    const calls: Array<[string, unknown]> = [];
    const result = await fetchCaches({
      url: 'https://example.net/caches.json',
      fetch: async (url, init) => {
        calls.push([url, init]);
        return new Response(JSON.stringify(LIVE));
      },
    });
    expect(result).toEqual({ ok: true, caches: CACHES });
    expect(calls).toHaveLength(1);
    expect(calls[0]![0]).toBe('https://example.net/caches.json');
    expect(calls[0]![1]).toMatchObject({ redirect: 'error', signal: expect.any(AbortSignal) });
    expect(CACHES_URL).toBe('https://cdn.ampproject.org/caches.json');
  });
  it('a finished fetch is never aborted afterwards: its timer is cleared', async () => {
    let signal: AbortSignal | undefined;
    const result = await fetchCaches({
      timeoutMs: 20,
      fetch: async (_, init) => {
        signal = init?.signal;
        return new Response(JSON.stringify(LIVE));
      },
    });
    expect(result.ok).toBe(true);
    await new Promise((resolve) => setTimeout(resolve, 60));
    expect(signal?.aborted).toBe(false);
    // The same after a failure.
    const failed = await fetchCaches({
      timeoutMs: 20,
      fetch: async (_, init) => {
        signal = init?.signal;
        return new Response('nope', { status: 500 });
      },
    });
    expect(failed.ok).toBe(false);
    await new Promise((resolve) => setTimeout(resolve, 60));
    expect(signal?.aborted).toBe(false);
  });
  it('names the HTTP status of a failed answer', async () => {
    const result = await fetchCaches({ fetch: json(LIVE, 404) });
    expect(result.ok).toBe(false);
    expect(!result.ok && result.error.message).toBe('caches.json answered HTTP 404');
    expect(result.caches).toBe(CACHES);
  });
  it('names the timeout and aborts the request', async () => {
    let signal: AbortSignal | undefined;
    const result = await fetchCaches({
      timeoutMs: 5,
      fetch: (_, init) => {
        signal = init?.signal;
        return new Promise<Response>(() => {});
      },
    });
    expect(!result.ok && result.error.message).toBe('caches.json fetch timed out after 5 ms');
    expect(signal?.aborted).toBe(true);
  });
  it('a body that is not an object with caches is an invalid list', async () => {
    for (const body of [null, 42, 'caches', { caches: 'x' }, []]) {
      const result = await fetchCaches({ fetch: json(body) });
      expect(result.ok).toBe(false);
      expect(!result.ok && isAmpCorsError(result.error) && result.error.code).toBe('invalid-cache');
    }
  });
  it('a validated list from an untrusted operator is refused by default; trustedOperators widens it knowingly', async () => {
    const list = { caches: [{ id: 'x', name: 'X', cacheDomain: 'amp.example.net' }] };
    const refused = await fetchCaches({ fetch: json(list) });
    expect(refused.ok).toBe(false);
    const accepted = await fetchCaches({ fetch: json(list), trustedOperators: ['example.net'] });
    expect(accepted).toMatchObject({ ok: true, caches: [{ cacheDomain: 'amp.example.net' }] });
  });
  it('a thrown non-Error becomes an Error with its text', async () => {
    const result = await fetchCaches({
      fetch: () => {
        throw 'plain string';
      },
    });
    expect(!result.ok && result.error).toBeInstanceOf(Error);
    expect(!result.ok && result.error.message).toBe('plain string');
  });
  it('without any fetch, it says so and keeps the fallback', async () => {
    const saved = globalThis.fetch;
    try {
      (globalThis as { fetch?: unknown }).fetch = undefined;
      const result = await fetchCaches({ fallback: [CACHES[1]!] });
      expect(result.ok).toBe(false);
      expect(!result.ok && result.error.message).toBe('no fetch available in this runtime');
      expect(result.caches).toEqual([CACHES[1]]);
    } finally {
      globalThis.fetch = saved;
    }
  });
  it('uses the global fetch by default', async () => {
    const saved = globalThis.fetch;
    let asked = '';
    try {
      globalThis.fetch = (async (url: string) => {
        asked = url;
        return new Response(JSON.stringify(LIVE));
      }) as typeof fetch;
      expect(await fetchCaches()).toEqual({ ok: true, caches: CACHES });
      expect(asked).toBe(CACHES_URL);
    } finally {
      globalThis.fetch = saved;
    }
  });
});

describe('validateCaches: bounded and linear (issue 14 item 6)', () => {
  const many = (count: number) => Array.from({ length: count }, (_, i) => entry({ id: `c${i}`, cacheDomain: `c${i}.example.net` }));
  it(`accepts ${MAX_CACHES} entries and refuses ${MAX_CACHES + 1}, before looking at any entry`, () => {
    expect(validateCaches(many(MAX_CACHES), { trustedOperators: null })).toHaveLength(MAX_CACHES);
    const error = errorOf(() => validateCaches([...many(MAX_CACHES), null], { trustedOperators: null }));
    expect(error.code).toBe('invalid-cache');
    expect(error.message).toBe(`caches has ${MAX_CACHES + 1} entries; at most ${MAX_CACHES} are accepted (the AMP registry lists 2)`);
  });
  it('a hole in a sparse array is an entry, not skipped', () => {
    const sparse: unknown[] = [entry()];
    sparse[2] = entry({ id: 'y', cacheDomain: 'other.example.net' });
    expect(errorOf(() => validateCaches(sparse, { trustedOperators: null })).message).toBe('caches[1]: not an object');
  });
  it('finds an overlap wherever it is in the list (a Set of names, each ancestor looked up)', () => {
    const list = many(MAX_CACHES - 1);
    expect(errorOf(() => validateCaches([...list, entry({ id: 'deep', cacheDomain: 'a.b.c7.example.net' })], { trustedOperators: null })).message).toBe(
      'cacheDomain a.b.c7.example.net overlaps c7.example.net',
    );
    const under = errorOf(() => validateCaches([entry({ id: 'top', cacheDomain: 'example.net' }), ...list], { trustedOperators: null })).message.split('\n');
    expect(under[0]).toBe(`caches: ${MAX_CACHES - 1} entries are refused:`);
    expect(under[1]).toBe('  - cacheDomain c0.example.net overlaps example.net');
    expect(under.at(-1)).toBe(`  … and ${MAX_CACHES - 1 - 20} more`);
    expect(errorOf(() => validateCaches([...list, entry({ id: 'again', cacheDomain: 'c3.example.net' })], { trustedOperators: null })).message).toBe(
      'cacheDomain c3.example.net overlaps c3.example.net',
    );
  });
  it("by default a fetched list may only name frame and update-cache domains of the bundled operators (a hostile list cannot claim a publisher's domain)", () => {
    const google = { ...CACHES[0]! };
    expect(validateCaches([google])[0]).toEqual(CACHES[0]);
    expect(validateCaches([{ ...CACHES[1]! }])[0]).toEqual(CACHES[1]);
    for (const key of ['thirdPartyFrameDomainSuffix', 'updateCacheApiDomainSuffix']) {
      const error = errorOf(() => validateCaches([{ ...google, [key]: 'www.example.com' }]));
      expect(error.message).toBe(
        `caches[0]: ${key} "www.example.com" is not under a trusted operator (ampproject.org, ampproject.net, bing-amp.com, bing-amp.net)`,
      );
      expect(errorOf(() => validateCaches([{ ...google, [key]: 'frames.ampproject.org' }], { trustedOperators: ['example.com'] })).message).toMatch(
        /not under a trusted operator \(example\.com\)$/,
      );
      const own = { id: 'own', name: 'Own', cacheDomain: 'amp.example.com', [key]: 'f.example.com' };
      expect(validateCaches([own], { trustedOperators: ['example.com'] })[0]).toEqual(own);
    }
  });
  it('every bad entry is reported at once, each with its first problem, then the overlaps', () => {
    const error = errorOf(() =>
      validateCaches(
        [
          entry(),
          null,
          entry({ id: 'y', name: 1 }),
          entry({ id: 'x', cacheDomain: 'other.example.net' }),
          entry({ id: 'z', cacheDomain: 'a.amp.example.net', docs: 1 }),
        ],
        { trustedOperators: null },
      ),
    );
    expect(error.code).toBe('invalid-cache');
    expect(error.message).toBe(
      [
        'caches: 4 entries are refused:',
        '  - caches[1]: not an object',
        '  - caches[2]: name must be a string',
        '  - caches[3]: duplicate id "x"',
        '  - caches[4]: docs must be a string',
      ].join('\n'),
    );
    const overlapping = errorOf(() => validateCaches([entry(), entry({ id: 'y', cacheDomain: 'a.amp.example.net' }), null], { trustedOperators: null }));
    expect(overlapping.message).toBe(
      'caches: 2 entries are refused:\n  - caches[2]: not an object\n  - cacheDomain a.amp.example.net overlaps amp.example.net',
    );
  });
  it('names are short and free of control characters (they are shown in error messages)', () => {
    for (const name of ['\u001b]0;PWNED\u0007', 'a\nb', 'right\u202eleft', 'x'.repeat(101)]) {
      expect(errorOf(() => validateCaches([entry({ name })], { trustedOperators: null })).message, JSON.stringify(name)).toBe(
        'caches[0]: name must be at most 100 characters, with no control characters',
      );
    }
    for (const name of ['', 'Google AMP Cache', 'Bing AMP Cache', 'Caché ⚡', 'x'.repeat(100)])
      expect(validateCaches([entry({ name })], { trustedOperators: null })[0]?.name).toBe(name);
  });
  it('an entry whose getters throw is refused, not a crash', () => {
    const hostile = Object.defineProperty({ id: 'h', name: 'H' }, 'cacheDomain', {
      get() {
        throw new RangeError('boom');
      },
    });
    expect(errorOf(() => validateCaches([hostile], { trustedOperators: null })).message).toBe('caches[0]: could not be read');
  });
  it('the frame and update-cache domains must be canonical domains below a registrable domain (publisher rules are checked against them)', () => {
    const cases: Array<[Record<string, unknown>, RegExp]> = [
      [{ thirdPartyFrameDomainSuffix: 'net' }, /^caches\[0\]: thirdPartyFrameDomainSuffix "net" is a public suffix$/],
      [{ thirdPartyFrameDomainSuffix: 'github.io' }, /^caches\[0\]: thirdPartyFrameDomainSuffix "github\.io" is a public suffix$/],
      [
        { thirdPartyFrameDomainSuffix: 'Frames.example.net' },
        /^caches\[0\]: thirdPartyFrameDomainSuffix "Frames\.example\.net" is not canonical \(expected frames\.example\.net\)$/,
      ],
      [{ updateCacheApiDomainSuffix: 'co.uk' }, /^caches\[0\]: updateCacheApiDomainSuffix "co\.uk" is a public suffix$/],
      [{ updateCacheApiDomainSuffix: 'a..b' }, /^caches\[0\]: Invalid domain "a\.\.b": empty label$/],
    ];
    for (const [extra, message] of cases) {
      const error = errorOf(() => validateCaches([entry(extra)], { trustedOperators: null }));
      expect(error.code).toBe('invalid-cache');
      expect(error.message).toMatch(message);
    }
  });
});

describe('fetchCaches: the body is read capped, and the whole refresh is bounded (issue 14 items 6 and 7)', () => {
  const LIVE = JSON.stringify({ caches: CACHES.map((c) => ({ ...c })) });
  /** A Response whose body never ends: 16 kB chunks on every pull, and a record of its cancellation. */
  const endless = (chunk: unknown = new Uint8Array(16 * 1024).fill(0x20)) => {
    const state = { pulled: 0, cancelled: false };
    const body = new ReadableStream({
      pull(controller) {
        state.pulled += 1;
        controller.enqueue(chunk);
      },
      cancel() {
        state.cancelled = true;
      },
    });
    return { state, response: new Response(body, { status: 200 }) };
  };
  it('an endless body stops after the cap: the download is aborted and the stream cancelled', async () => {
    const { state, response } = endless();
    let signal: AbortSignal | undefined;
    const result = await fetchCaches({
      timeoutMs: 60_000,
      fetch: async (_, init) => {
        signal = init?.signal;
        return response;
      },
    });
    expect(!result.ok && result.error.message).toBe(`caches.json is larger than ${MAX_CACHES_JSON_BYTES} bytes (decoded); the AMP registry is under 1 kB`);
    expect(result.caches).toBe(CACHES);
    expect(state.pulled * 16 * 1024).toBeLessThanOrEqual(MAX_CACHES_JSON_BYTES + 3 * 16 * 1024);
    expect(signal?.aborted).toBe(true);
    expect(state.cancelled).toBe(true);
  });
  it('a body of exactly the cap is read; one byte more is refused', async () => {
    const padded = (size: number) => LIVE.slice(0, -1) + ' '.repeat(size - LIVE.length) + '}';
    expect((await fetchCaches({ fetch: async () => new Response(padded(MAX_CACHES_JSON_BYTES)) })).ok).toBe(true);
    const over = await fetchCaches({ fetch: async () => new Response(padded(MAX_CACHES_JSON_BYTES + 1)) });
    expect(!over.ok && over.error.message).toMatch(/^caches\.json is larger than 65536 bytes \(decoded\)/);
  });
  it('a Content-Length over the cap is refused before the body is read', async () => {
    const { state, response } = endless();
    response.headers.set('content-length', String(MAX_CACHES_JSON_BYTES + 1));
    const result = await fetchCaches({ fetch: async () => response });
    expect(!result.ok && result.error.message).toBe(
      `caches.json is larger than ${MAX_CACHES_JSON_BYTES} bytes (Content-Length ${MAX_CACHES_JSON_BYTES + 1}); the AMP registry is under 1 kB`,
    );
    expect(state.pulled).toBeLessThanOrEqual(1); // a ReadableStream may pull once on its own; nothing is read
  });
  it('a body that is not bytes, not UTF-8, or missing is refused', async () => {
    const notBytes = await fetchCaches({ fetch: async () => endless('text chunk').response });
    expect(!notBytes.ok && notBytes.error.message).toBe('caches.json body is not bytes');
    const latin1 = await fetchCaches({ fetch: async () => new Response(new Uint8Array([0x7b, 0xff, 0x7d])) });
    expect(latin1.ok).toBe(false);
    expect(!latin1.ok && latin1.error).toBeInstanceOf(TypeError);
    const bodiless = await fetchCaches({ fetch: async () => ({ status: 200, body: null, headers: new Headers() }) as unknown as Response });
    expect(!bodiless.ok && bodiless.error.message).toBe('caches.json answered without a readable body');
  });
  it("a non-200 answer's body is released, not read", async () => {
    const { state, response } = endless();
    const unread = new Response(response.body, { status: 503 });
    const result = await fetchCaches({ fetch: async () => unread });
    expect(!result.ok && result.error.message).toBe('caches.json answered HTTP 503');
    await new Promise((resolve) => setTimeout(resolve, 0));
    expect(state.cancelled).toBe(true);
  });
  it('on timeout, a body stream that ignores the abort signal is cancelled', async () => {
    const state = { cancelled: false };
    const stalled = new ReadableStream({
      start(controller) {
        controller.enqueue(new TextEncoder().encode('{"caches":['));
      },
      pull: () => new Promise<void>(() => {}),
      cancel() {
        state.cancelled = true;
      },
    });
    const result = await fetchCaches({ timeoutMs: 30, fetch: async () => new Response(stalled) });
    expect(!result.ok && result.error.message).toBe('caches.json fetch timed out after 30 ms');
    expect(state.cancelled).toBe(true);
  });
  it('a list validated after the deadline is a timeout, not a late success', async () => {
    const real = Date.now();
    const now = vi.spyOn(Date, 'now');
    // The deadline is computed from the first reading; every later reading is past it.
    now.mockReturnValueOnce(real).mockReturnValue(real + 1001);
    try {
      const result = await fetchCaches({ timeoutMs: 1000, fallback: [CACHES[1]!], fetch: async () => new Response(LIVE) });
      expect(!result.ok && result.error.message).toBe('caches.json fetch timed out after 1000 ms');
      expect(result.caches).toEqual([CACHES[1]]);
    } finally {
      now.mockRestore();
    }
  });
  it('refuses a timeout that is not a usable number of milliseconds, without fetching', async () => {
    let asked = 0;
    for (const timeoutMs of [0, -1, Number.NaN, Number.POSITIVE_INFINITY, 2 ** 31, '100']) {
      const result = await fetchCaches({
        timeoutMs: timeoutMs as number,
        fetch: async () => {
          asked += 1;
          return new Response(LIVE);
        },
      });
      expect(result.ok, String(timeoutMs)).toBe(false);
      expect(!result.ok && isAmpCorsError(result.error) && result.error.code).toBe('invalid-option');
    }
    expect(asked).toBe(0);
    expect((await fetchCaches({ timeoutMs: 2 ** 31 - 1, fetch: async () => new Response(LIVE) })).ok).toBe(true);
  });
});

describe('findCache', () => {
  const custom: AmpCache[] = [{ id: 'test', name: 'T', cacheDomain: 'amp.example.net' }];
  it('searches the given list, by default the bundled one', () => {
    expect(findCache('google')).toBe(CACHES[0]);
    expect(findCache('test', custom)).toBe(custom[0]);
    expect(findCache('google', custom)).toBeUndefined();
  });
});

describe('cacheUrl and cacheOrigin: refusals name the value', () => {
  const cases: Array<[string, () => unknown, string, RegExp]> = [
    ['a relative URL', () => cacheUrl('/a'), 'invalid-url', /^Not an absolute http\(s\) URL: "\/a"$/],
    ['a non-string', () => cacheUrl(42 as never), 'invalid-url', /^Not an absolute http\(s\) URL: "42"$/],
    ['an unparsable URL', () => cacheUrl('https://exa mple.com/'), 'invalid-url', /^Not a valid URL: "https:\/\/exa mple\.com\/"$/],
    ['userinfo', () => cacheUrl('https://u@example.com/'), 'invalid-url', /^A publisher URL with userinfo has no cache URL$/],
    ['a password only', () => cacheUrl('https://:p@example.com/'), 'invalid-url', /userinfo/],
    ['a port', () => cacheUrl('https://example.com:8443/'), 'invalid-url', /^A publisher URL on a non-default port \(8443\) has no cache URL$/],
    ['an unknown serving type', () => cacheUrl('https://example.com/', { servingType: 'x' as never }), 'invalid-option', /^Unknown serving type "x"$/],
    ['ii without width', () => cacheUrl('https://example.com/', { servingType: 'ii' }), 'invalid-option', /^Serving type ii needs a positive integer width$/],
    ['ii with width 0', () => cacheUrl('https://example.com/', { servingType: 'ii', width: 0 }), 'invalid-option', /positive integer width/],
    ['ii with width 1.5', () => cacheUrl('https://example.com/', { servingType: 'ii', width: 1.5 }), 'invalid-option', /positive integer width/],
    ['a width without ii', () => cacheUrl('https://example.com/', { width: 10 }), 'invalid-option', /^width applies only to serving type ii$/],
    ['an unknown cache id', () => cacheOrigin('example.com', 'nope'), 'invalid-cache', /^Unknown cache id "nope" \(known: google, bing\)$/],
  ];
  it.each(cases)('%s', (_, run, code, message) => {
    const error = errorOf(run);
    expect(error.code).toBe(code);
    expect(error.message).toMatch(message);
  });
  it('quotes at most 200 characters of a bad URL', () => {
    const url = `/${'a'.repeat(300)}`;
    expect(errorOf(() => cacheUrl(url)).message).toBe(`Not an absolute http(s) URL: ${JSON.stringify(url.slice(0, 200))}`);
    const unparsable = `https://exa mple.com/${'a'.repeat(300)}`;
    expect(errorOf(() => cacheUrl(unparsable)).message).toBe(`Not a valid URL: ${JSON.stringify(unparsable.slice(0, 200))}`);
  });
  it('the scheme must start the URL', () => {
    for (const url of ['xhttps://example.com/', ' https://example.com/', 'web+https://example.com/']) {
      expect(errorOf(() => cacheUrl(url)).message).toMatch(/^Not an absolute http\(s\) URL/);
    }
  });
  it('the serving type follows the file extension (case-insensitive), never a directory name', () => {
    const type = (path: string) => cacheUrl(`https://example.com${path}`).split('/')[3];
    expect(type('/a.JPG')).toBe('i');
    expect(type('/a.webp')).toBe('i');
    expect(type('/font.TTF')).toBe('r');
    expect(type('/a.html')).toBe('c');
    expect(type('/a')).toBe('c');
    expect(type('/img.png/page')).toBe('c');
    expect(type('/')).toBe('c');
    expect(type('/.png')).toBe('i');
  });
  it('a custom cache entry, http URLs without /s, query and fragment kept', () => {
    const custom: AmpCache = { id: 'test', name: 'T', cacheDomain: 'amp.example.net' };
    expect(cacheUrl('http://example.com/a?b=1#c', { cache: custom })).toBe('https://example-com.amp.example.net/c/example.com/a?b=1#c');
    expect(cacheOrigin('example.com', custom)).toBe('https://example-com.amp.example.net');
    expect(cacheUrl('https://example.com', { servingType: 'ii', width: 1 })).toBe('https://example-com.cdn.ampproject.org/ii/w1/s/example.com');
  });
});

describe('hashPrefix', () => {
  it('the first 4, 8, 16 or 32 bytes of SHA-256, and nothing else', () => {
    const full = sha256Utf8('foo.com/');
    expect(full).toHaveLength(32);
    for (const bytes of [4, 8, 16, 32] as const) {
      expect(hashPrefix('foo.com/', bytes)).toEqual(full.slice(0, bytes));
      expect(hashPrefixHex('foo.com/', bytes)).toHaveLength(bytes * 2);
    }
    expect(hashPrefixHex('foo.com/', 4)).toBe('af30010e');
    for (const bytes of [0, 1, 5, 31, 33, 64, '4', undefined]) {
      const error = errorOf(() => hashPrefix('foo.com/', bytes as never));
      expect(error.code).toBe('invalid-option');
      expect(error.message).toBe(`Invalid hash prefix length ${String(bytes)}: must be 4, 8, 16 or 32`);
    }
  });
});

describe('AmpCorsError and isAmpCorsError', () => {
  it('carries its name, code and message', () => {
    const error = new AmpCorsError('invalid-url', 'bad');
    expect(error).toBeInstanceOf(Error);
    expect(error.name).toBe('AmpCorsError');
    expect(error.code).toBe('invalid-url');
    expect(error.message).toBe('bad');
  });
  it('recognizes copies from another module instance by name and code, and nothing else', () => {
    const copy = Object.assign(new Error('x'), { name: 'AmpCorsError', code: 'invalid-url' });
    expect(isAmpCorsError(copy)).toBe(true);
    expect(isAmpCorsError(new AmpCorsError('invalid-url', 'x'))).toBe(true);
    expect(isAmpCorsError(Object.assign(new Error('x'), { name: 'AmpCorsError' }))).toBe(false);
    expect(isAmpCorsError(Object.assign(new Error('x'), { code: 'invalid-url' }))).toBe(false);
    expect(isAmpCorsError({ name: 'AmpCorsError', code: 'invalid-url', message: 'x' })).toBe(false);
    expect(isAmpCorsError(null)).toBe(false);
  });
});
