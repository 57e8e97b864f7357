import { createVerifier, isAmpCorsError } from '@ampcors/core';
import { ampCorsOf, type CorsCheck, createAmpCors, withAmpCors } from '@ampcors/fetch';
import { describe, expect, it } from 'vitest';

const CACHE = 'https://example-com.cdn.ampproject.org';
const options = { publishers: ['example.com'] };
const get = (origin?: string, extra: Record<string, string> = {}) =>
  new Request('https://api.example.com/items', { headers: { ...(origin ? { Origin: origin } : {}), ...extra } });

describe('withAmpCors', () => {
  it('keeps status and body and adds the CORS headers', async () => {
    const handler = withAmpCors(() => new Response('created', { status: 201, headers: { Vary: 'Accept-Encoding' } }), options);
    const response = await handler(get(CACHE));
    expect(response.status).toBe(201);
    expect(await response.text()).toBe('created');
    expect(response.headers.get('access-control-allow-origin')).toBe(CACHE);
    expect(response.headers.get('vary')).toBe('Accept-Encoding, Origin');
  });
  it('copies responses with immutable headers (Response.redirect)', async () => {
    const handler = withAmpCors(() => Response.redirect('https://www.example.com/next', 302), options);
    const response = await handler(get(CACHE));
    expect(response.status).toBe(302);
    expect(response.headers.get('location')).toBe('https://www.example.com/next');
    expect(response.headers.get('access-control-allow-origin')).toBe(CACHE);
    expect(response.headers.get('vary')).toBe('Origin');
  });
  it('gives the handler its verdict and passes extra arguments through', async () => {
    const handler = withAmpCors(
      (request: Request, env: { name: string }) =>
        Response.json({ reason: ampCorsOf(request)?.verdict.allowed && ampCorsOf(request)?.verdict.reason, env: env.name }),
      options,
    );
    const response = await handler(get(CACHE), { name: 'worker-env' });
    expect(await response.json()).toEqual({ reason: 'cache-origin', env: 'worker-env' });
  });
  it('turns a throwing handler, verifier or onError into a 500 with Vary', async () => {
    const boom = withAmpCors(() => {
      throw new Error('handler failed');
    }, options);
    const response = await boom(get(CACHE));
    expect(response.status).toBe(500);
    expect(response.headers.get('vary')).toBe('Origin');
    expect(response.headers.get('access-control-allow-origin')).toBeNull();
    const badVerifier = withAmpCors(() => new Response('never'), {
      verifier: {
        verify: () => {
          throw new Error('verifier down');
        },
      },
      onError: () => {
        throw new Error('hook failed too');
      },
    });
    const second = await badVerifier(get(CACHE));
    expect([second.status, second.headers.get('vary')]).toEqual([500, 'Origin']);
    const custom = withAmpCors(() => new Response('never'), {
      verifier: { verify: async () => Promise.reject(new Error('redis down')) },
      onError: () => new Response('try later', { status: 503 }),
    });
    const third = await custom(get(CACHE));
    expect([third.status, await third.text(), third.headers.get('vary')]).toEqual([503, 'try later', 'Origin']);
  });
  it('refuses a bad configuration when wrapping', () => {
    expect(() => withAmpCors(() => new Response(''), { publishers: ['com'] })).toThrow(/public suffix|com/);
    expect(() => withAmpCors(() => new Response(''), { publishers: ['example.com'], onDenied: 'maybe' as never })).toThrow(/onDenied/);
  });
  it('refuses every problem of a configuration at once, as AmpCorsErrors (never a TypeError)', () => {
    const errorOf = (run: () => unknown): Error => {
      try {
        run();
      } catch (error) {
        return error as Error;
      }
      throw new Error('accepted');
    };
    const all = errorOf(() =>
      withAmpCors(() => new Response(''), { publishers: ['example.com'], onError: 'log' as never, onDenied: 'maybe' as never, orgins: [] } as never),
    );
    expect(isAmpCorsError(all)).toBe(true);
    expect(all.message).toMatch(/3 configuration problems/);
    expect(all.message).toMatch(/onError must be a function/);
    expect(all.message).toMatch(/onDenied/);
    expect(all.message).toMatch(/unknown option `orgins` \(did you mean `origins`\?\)/);
    for (const run of [
      () => withAmpCors(() => new Response(''), undefined as never),
      () => withAmpCors('handler' as never, options),
      () => createAmpCors(null as never),
    ]) {
      expect(isAmpCorsError(errorOf(run)), String(errorOf(run))).toBe(true);
    }
  });
  it('{} is the public mode: the literal *, no credentials, no Vary: Origin, and a verdict that claims no check', async () => {
    const handler = withAmpCors((request: Request) => Response.json(ampCorsOf(request)?.verdict ?? null), {});
    const response = await handler(get('https://evil.example', { Cookie: 'session=1' }));
    expect([
      response.headers.get('access-control-allow-origin'),
      response.headers.get('access-control-allow-credentials'),
      response.headers.get('vary'),
    ]).toEqual(['*', null, null]);
    expect(await response.json()).toMatchObject({ allowed: true, reason: 'any-origin', via: 'any' });
  });
  it('a request the browser marks Sec-Fetch-Site: same-origin runs untouched; same-site and cross-site are judged', async () => {
    let runs = 0;
    const handler = withAmpCors(() => {
      runs += 1;
      return new Response('ran');
    }, options);
    const own = 'https://api.example.net';
    const same = await handler(new Request('https://api.example.net/subscribe', { method: 'POST', headers: { Origin: own, 'Sec-Fetch-Site': 'same-origin' } }));
    expect([same.status, same.headers.get('access-control-allow-origin'), runs]).toEqual([200, null, 1]);
    for (const site of ['same-site', 'cross-site', 'none', 'SAME-ORIGIN']) {
      const other = await handler(new Request('https://api.example.net/subscribe', { method: 'POST', headers: { Origin: own, 'Sec-Fetch-Site': site } }));
      expect([other.status, runs], site).toEqual([403, 1]);
    }
  });
});

describe('check (a handler written by hand)', () => {
  const adapter = createAmpCors({ verifier: createVerifier(options), exposedHeaders: ['X-Total'] });
  const passed = (check: CorsCheck | Promise<CorsCheck>) => {
    if (check instanceof Promise || check.response !== undefined) throw new Error('expected a synchronous pass');
    return check;
  };
  it('is synchronous with a synchronous verifier, and gives the verdict and the headers to add', () => {
    const request = get(CACHE);
    const check = passed(adapter.check(request));
    expect(check.verdict).toMatchObject({ allowed: true, via: 'cache' });
    expect(ampCorsOf(request)?.verdict).toBe(check.verdict);
    const response = check.apply(new Response('ok', { headers: { Vary: 'Accept-Encoding' } }));
    expect(Object.fromEntries(response.headers)).toEqual({
      'access-control-allow-origin': CACHE,
      'access-control-allow-credentials': 'true',
      'access-control-expose-headers': 'AMP-Redirect-To, X-Total',
      'content-type': 'text/plain;charset=UTF-8',
      vary: 'Accept-Encoding, Origin',
    });
  });
  it('apply copies a response whose headers are immutable, and never throws (not a Response: a 500 with Vary: Origin)', async () => {
    const check = passed(adapter.check(get(CACHE)));
    const redirect = Response.redirect('https://www.example.com/next', 302);
    const copied = check.apply(redirect);
    expect(copied).not.toBe(redirect);
    expect([copied.status, copied.headers.get('location'), copied.headers.get('access-control-allow-origin')]).toEqual([
      302,
      'https://www.example.com/next',
      CACHE,
    ]);
    expect(redirect.headers.get('access-control-allow-origin')).toBeNull();
    // A fetch() result has immutable headers; once its body is read it cannot be copied either: a 500, never a throw.
    const upstream = await fetch('data:text/plain,upstream');
    await upstream.text();
    const unread = check.apply(upstream);
    expect([unread.status, unread.headers.get('vary'), unread.headers.get('access-control-allow-origin')]).toEqual([500, 'Origin', null]);
    const fresh = check.apply(await fetch('data:text/plain,upstream'));
    expect([fresh.status, await fresh.text(), fresh.headers.get('access-control-allow-origin')]).toEqual([200, 'upstream', CACHE]);
    const error = Response.error();
    expect(check.apply(error)).toBe(error);
    for (const junk of [undefined, null, 'ok', {}]) {
      const answer = check.apply(junk as never);
      expect([answer.status, answer.headers.get('vary'), answer.headers.get('access-control-allow-origin')]).toEqual([500, 'Origin', null]);
    }
  });
  it('answers a denial and a preflight itself, and never throws nor rejects for a failing verifier', async () => {
    const denied = await adapter.check(get('https://evil.com'));
    expect([denied.response?.status, denied.verdict?.allowed]).toEqual([403, false]);
    const failing = createAmpCors({
      verifier: {
        verify: () => {
          throw new Error('down');
        },
      },
    });
    const failed = failing.check(get(CACHE));
    expect(failed).toBeInstanceOf(Promise);
    const settled = await failed;
    expect([settled.response?.status, settled.response?.headers.get('vary'), settled.verdict]).toEqual([500, 'Origin', undefined]);
  });
  it('awaits an asynchronous verifier', async () => {
    const sync = createVerifier(options);
    const check = await createAmpCors({ verifier: { verify: async (origin, context) => sync.verify(origin, context) } }).check(get('https://example.com'));
    expect(check.verdict).toMatchObject({ allowed: true, via: 'publisher' });
  });
  it('withAmpCors takes a createAmpCors result (one adapter for several handlers)', async () => {
    const response = await withAmpCors(() => new Response('ok'), adapter)(get(CACHE));
    expect(response.headers.get('access-control-expose-headers')).toBe('AMP-Redirect-To, X-Total');
  });
});
