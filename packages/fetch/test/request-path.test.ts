/**
 * The Fetch adapter's per-request path (issue 16), from the attacker's side:
 *
 * - the request facts read with the policy's options (headers the options
 *   make core ignore are not read) equal the straightforward `headers.get`
 *   facts, and give the very same decision, for hostile header sets
 *   (duplicated and odd-cased names, near-miss names, huge values);
 * - the verdict a request carries (a private class field instead of a
 *   `WeakMap`) is its own: never another request's, never carried over to a
 *   copy, a derived object or a forgery, and invisible on the request;
 * - the header lists made once per frozen plan answer exactly what setting
 *   the plan's headers one by one would, whatever `Vary` the handler set,
 *   and never serve one origin's answer to another.
 */
import { cacheOrigin, createVerifier, type Verdict } from '@ampcors/core';
import { appendVary, type CorsPlan, type CorsRequest, fetchRequestFacts, sourceOriginOfUrl } from '@ampcors/core/adapter';
import { ampCorsOf, createAmpCors, type FetchAmpCorsOptions, withAmpCors } from '@ampcors/fetch';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';

const PUBLISHER = 'example.com';
const OTHER = 'other.example';
const CACHE = cacheOrigin(PUBLISHER);
const OTHER_CACHE = cacheOrigin(OTHER);
const honest = createVerifier({ publishers: [PUBLISHER, OTHER] });

/** The headers core reads, and names an attacker may hope are taken for them. */
const NAMES = [
  'origin',
  'amp-same-origin',
  'access-control-request-method',
  'access-control-request-headers',
  'access-control-request-private-network',
  'amp-email-sender',
  'sec-fetch-site',
  'x-origin',
  'origin2',
  'amp-email-senders',
  'access-control-request-private-networks',
  'sec-fetch-sites',
];
const VALUES = [
  CACHE,
  OTHER_CACHE,
  'https://evil.example',
  'https://example.com',
  'null',
  '',
  'true',
  'TRUE',
  'false',
  'same-origin',
  'cross-site',
  'POST',
  'GET',
  'content-type',
  'content-type, amp-same-origin, *',
  'news@example.com',
  'attacker@evil.example',
  ' padded\tvalue ',
  '\u00e9vil.example',
  'a'.repeat(20_000),
  `${CACHE}, https://evil.example`,
];

/** A name in random letter case (HTTP names are case-insensitive; Headers lower-cases them). */
const oddCased = fc
  .tuple(fc.constantFrom(...NAMES), fc.array(fc.boolean(), { minLength: 40, maxLength: 40 }))
  .map(([name, upper]) => [...name].map((c, i) => (upper[i] ? c.toUpperCase() : c)).join(''));
/** A hostile header list: names may repeat (appended: joined with ", "), in any case, with any value. */
const headerLists = fc.array(fc.tuple(oddCased, fc.constantFrom(...VALUES)), { maxLength: 12 });
const methods = fc.constantFrom('GET', 'POST', 'OPTIONS', 'options', 'PUT', 'DELETE', 'HEAD', 'PATCH');
const queries = fc.constantFrom(
  '',
  '?__amp_source_origin=https%3A%2F%2Fexample.com',
  '?__amp_source_origin=https%3A%2F%2Fevil.example',
  '?a=1&__amp_source_origin=x',
);

function requestOf(method: string, query: string, list: readonly (readonly [string, string])[]): Request {
  const headers = new Headers();
  for (const [name, value] of list) headers.append(name, value);
  return new Request(`https://api.example.net/items${query}`, { method, headers });
}

/** The facts as the straightforward reading gives them: one `headers.get` per fact. */
function straightFacts(request: Request): CorsRequest {
  const headers = request.headers;
  const options = request.method.toUpperCase() === 'OPTIONS';
  return {
    method: request.method,
    origin: headers.get('origin'),
    ampSameOrigin: headers.get('amp-same-origin'),
    requestMethod: options ? headers.get('access-control-request-method') : null,
    requestHeaders: options ? headers.get('access-control-request-headers') : null,
    requestPrivateNetwork: options ? headers.get('access-control-request-private-network') : null,
    emailSender: headers.get('amp-email-sender'),
    sourceOrigin: sourceOriginOfUrl(request.url),
    secFetchSite: headers.get('sec-fetch-site'),
  };
}

const configs: fc.Arbitrary<FetchAmpCorsOptions> = fc
  .record({
    source: fc.constantFrom('rules', 'verifier', 'public'),
    email: fc.boolean(),
    privateNetworkAccess: fc.constantFrom(undefined, true, false),
    preflightContinue: fc.constantFrom(undefined, true),
    onDenied: fc.constantFrom(undefined, 'reject', 'omit'),
    credentials: fc.constantFrom(undefined, false),
  })
  .map(({ source, email, privateNetworkAccess, preflightContinue, onDenied, credentials }) => {
    if (source === 'public') return {};
    return {
      ...(source === 'rules' ? { publishers: [PUBLISHER, OTHER] } : { verifier: honest }),
      ...(email && { email: { senders: ['news@example.com'] } }),
      ...(privateNetworkAccess !== undefined && { privateNetworkAccess }),
      ...(preflightContinue !== undefined && { preflightContinue }),
      ...(onDenied !== undefined && { onDenied }),
      ...(credentials !== undefined && { credentials }),
    } as FetchAmpCorsOptions;
  });

describe('request facts read under the policy options', () => {
  it('equal the straightforward headers.get facts, less only what the options make core ignore', () => {
    fc.assert(
      fc.property(
        methods,
        queries,
        headerLists,
        fc.record({ email: fc.boolean(), privateNetworkAccess: fc.boolean() }),
        (method, query, list, { email, privateNetworkAccess }) => {
          const request = requestOf(method, query, list);
          const straight = straightFacts(request);
          expect(fetchRequestFacts(request)).toEqual(straight);
          const options = { emailSenders: email ? new Set(['news@example.com']) : null, privateNetworkAccess };
          expect(fetchRequestFacts(request, options)).toEqual({
            ...straight,
            emailSender: email ? straight.emailSender : null,
            requestPrivateNetwork: privateNetworkAccess ? straight.requestPrivateNetwork : null,
          });
        },
      ),
      { numRuns: 600 },
    );
  });

  it('give the same decision as the straightforward facts, for every configuration and hostile request', () => {
    fc.assert(
      fc.property(configs, methods, queries, headerLists, (config, method, query, list) => {
        const { policy } = createAmpCors(config);
        const request = requestOf(method, query, list);
        expect(policy.decide(fetchRequestFacts(request, policy.options))).toEqual(policy.decide(straightFacts(request)));
      }),
      { numRuns: 600 },
    );
  });

  it('answer Private Network Access and AMP for Email only when configured, whatever the attacker sends', async () => {
    const preflight = (options: FetchAmpCorsOptions) =>
      withAmpCors(
        () => new Response('never'),
        options,
      )(
        new Request('https://api.example.net/items', {
          method: 'OPTIONS',
          headers: { Origin: CACHE, 'Access-Control-Request-Method': 'POST', 'Access-Control-Request-Private-Network': 'true' },
        }),
      );
    const off = await preflight({ publishers: [PUBLISHER] });
    const on = await preflight({ publishers: [PUBLISHER], privateNetworkAccess: true });
    expect([off.status, off.headers.get('access-control-allow-private-network')]).toEqual([204, null]);
    expect([on.status, on.headers.get('access-control-allow-private-network')]).toEqual([204, 'true']);

    const mail = (options: FetchAmpCorsOptions, sender: string) =>
      withAmpCors(
        () => new Response('ran'),
        options,
      )(new Request('https://api.example.net/items', { headers: { Origin: 'https://mail.google.com', 'AMP-Email-Sender': sender } }));
    const ignored = await mail({ publishers: [PUBLISHER] }, 'news@example.com');
    expect([ignored.status, ignored.headers.get('amp-email-allow-sender'), ignored.headers.get('access-control-allow-origin')]).toEqual([403, null, null]);
    const trusted = await mail({ publishers: [PUBLISHER], email: { senders: ['news@example.com'] } }, 'news@example.com');
    expect([trusted.status, trusted.headers.get('amp-email-allow-sender')]).toEqual([200, 'news@example.com']);
    const forged = await mail({ publishers: [PUBLISHER], email: { senders: ['news@example.com'] } }, 'attacker@evil.example');
    expect([forged.status, forged.headers.get('amp-email-allow-sender')]).toEqual([403, null]);
  });
});

describe('the verdict a request carries (ampCorsOf)', () => {
  const cors = createAmpCors({ publishers: [PUBLISHER, OTHER] });
  const get = (origin: string) => new Request('https://api.example.net/items', { headers: { Origin: origin } });
  const passed = (request: Request) => {
    const check = cors.check(request);
    if (check instanceof Promise || check.response !== undefined) throw new Error('expected a synchronous pass');
    return check;
  };

  it('is each request’s own, among many in flight answered out of order', async () => {
    const verifier = {
      verify: async (origin: string | null | undefined, context?: Parameters<typeof honest.verify>[1]) => {
        await new Promise((resolve) => setTimeout(resolve, Math.random() * 5));
        return honest.verify(origin, context);
      },
    };
    const handler = withAmpCors(
      async (request: Request) => {
        await new Promise((resolve) => setTimeout(resolve, Math.random() * 5));
        const verdict = ampCorsOf(request)?.verdict;
        return Response.json({ asked: request.headers.get('origin'), seen: verdict?.allowed ? verdict.origin : null });
      },
      { verifier },
    );
    const origins = Array.from({ length: 60 }, (_, i) => (i % 3 === 0 ? CACHE : i % 3 === 1 ? OTHER_CACHE : 'https://example.com'));
    const answers = await Promise.all(origins.map(async (origin) => (await handler(get(origin))).json()));
    for (const answer of answers) expect(answer.seen).toBe(answer.asked);
  });

  it('leaves no trace on the request: no own key, nothing enumerable, nothing a copy takes along', () => {
    const request = get(CACHE);
    const keys = Reflect.ownKeys(request);
    const check = passed(request);
    expect(ampCorsOf(request)).toBe(check);
    expect(Reflect.ownKeys(request)).toEqual(keys);
    expect(Object.getOwnPropertySymbols(request)).toEqual(Object.getOwnPropertySymbols(get(CACHE)));
    expect(ampCorsOf({ ...request } as Request)).toBeUndefined();
    expect(ampCorsOf(Object.assign(Object.create(Request.prototype), request) as Request)).toBeUndefined();
  });

  it('is never carried over to a copy, a derived object or a forgery', () => {
    const request = get(CACHE);
    passed(request);
    expect(ampCorsOf(new Request(request))).toBeUndefined();
    expect(ampCorsOf(request.clone())).toBeUndefined();
    expect(ampCorsOf(Object.create(request) as Request)).toBeUndefined();
    expect(ampCorsOf(new Proxy(request, {}))).toBeUndefined();
    const forged = { ...request, verdict: { allowed: true, origin: 'https://evil.example' } } as unknown as Request;
    expect(ampCorsOf(forged)).toBeUndefined();
    for (const junk of [undefined, null, 'request', 42, () => request]) expect(ampCorsOf(junk as never)).toBeUndefined();
  });

  it('is kept for a frozen or sealed request, and never given to a request that was denied or ended', async () => {
    for (const seal of [Object.freeze, Object.seal, Object.preventExtensions]) {
      const request = seal(get(CACHE));
      const check = passed(request);
      expect(ampCorsOf(request)).toBe(check);
    }
    const denied = get('https://evil.example');
    expect((await cors.check(denied)).response?.status).toBe(403);
    expect(ampCorsOf(denied)).toBeUndefined();
    const preflight = new Request('https://api.example.net/items', { method: 'OPTIONS', headers: { Origin: CACHE, 'Access-Control-Request-Method': 'POST' } });
    expect((await cors.check(preflight)).response?.status).toBe(204);
    expect(ampCorsOf(preflight)).toBeUndefined();
  });

  it('is replaced by a later check of the same request, as before', () => {
    const request = get(CACHE);
    const first = passed(request);
    const second = createAmpCors({ publishers: [PUBLISHER], exposedHeaders: ['X-Total'] }).check(request);
    expect(ampCorsOf(request)).toBe(second);
    expect(ampCorsOf(request)).not.toBe(first);
  });
});

describe('the header lists of a plan', () => {
  /** What the adapter answered before the lists: `Vary` extended, then each plan header set, one by one. */
  function setOneByOne(into: Headers, plan: Pick<CorsPlan, 'headers' | 'vary'>): Headers {
    if (plan.vary.length > 0) into.set('Vary', appendVary(into.get('Vary'), plan.vary));
    for (const [name, value] of plan.headers) into.set(name, value);
    return into;
  }
  const varies = fc.array(fc.constantFrom('Accept-Encoding', 'origin', 'ORIGIN', '*', ' Origin , accept ', '', 'Access-Control-Request-Headers', 'x-a,x-b'), {
    maxLength: 3,
  });
  const handlerResponse = (vary: readonly string[]) => {
    const headers = new Headers({ 'Content-Type': 'text/plain', 'Access-Control-Allow-Origin': 'https://stale.example' });
    for (const value of vary) headers.append('Vary', value);
    return new Response('ran', { status: 200, headers });
  };

  it('answer exactly what setting the plan one header at a time answers, whatever Vary the handler set', async () => {
    await fc.assert(
      fc.asyncProperty(configs, methods, queries, headerLists, varies, async (config, method, query, list, vary) => {
        const cors = createAmpCors(config);
        // Twice: the second answer comes from the lists remembered for a frozen plan.
        for (let round = 0; round < 2; round++) {
          const request = requestOf(method, query, list);
          const decided = await cors.policy.decide(straightFacts(request));
          const check = await cors.check(request);
          if (decided.plan.handled) {
            expect(check.response).toBeDefined();
            expect([...(check.response as Response).headers]).toEqual([...setOneByOne(new Headers(), decided.plan)]);
            expect(check.response?.status).toBe(decided.plan.status);
          } else {
            expect(check.response).toBeUndefined();
            if (check.response !== undefined) return;
            const answered = check.apply(handlerResponse(vary));
            // The handler's stale Access-Control-Allow-Origin is a grant of its own: it never outlives a plan that does not
            // set one (core's response-bodies.ts, 3.), and a plan that does overwrites it.
            const expected = handlerResponse(vary).headers;
            if (!decided.plan.headers.some(([name]) => name === 'access-control-allow-origin')) expected.delete('access-control-allow-origin');
            expect([...answered.headers]).toEqual([...setOneByOne(expected, decided.plan)]);
          }
        }
      }),
      { numRuns: 400 },
    );
  });

  it('never answer one origin with another’s headers, the remembered lists interleaved', async () => {
    const handler = withAmpCors(() => new Response('ok'), { publishers: [PUBLISHER, OTHER] });
    const sequence = [CACHE, OTHER_CACHE, 'https://evil.example', CACHE, 'https://example.com', OTHER_CACHE, 'https://other.example'];
    for (let round = 0; round < 3; round++) {
      for (const origin of sequence) {
        const response = await handler(new Request('https://api.example.net/items', { headers: { Origin: origin } }));
        const allowed = origin !== 'https://evil.example';
        expect([response.status, response.headers.get('access-control-allow-origin')], origin).toEqual(allowed ? [200, origin] : [403, null]);
      }
    }
  });

  it('are made per request for a plan that may change (a verifier whose verdict object is reused and rewritten)', async () => {
    const shared: { allowed: boolean; origin: string | null; via: string; reason: string } = {
      allowed: true,
      origin: null,
      via: 'cache',
      reason: 'cache-origin',
    };
    const verifier = {
      verify: (origin: string | null | undefined): Verdict => {
        shared.origin = origin ?? null;
        shared.allowed = origin !== 'https://evil.example';
        return shared as Verdict;
      },
    };
    const handler = withAmpCors(() => new Response('ok'), { verifier });
    for (const origin of [CACHE, OTHER_CACHE, CACHE, 'https://evil.example', OTHER_CACHE]) {
      const response = await handler(new Request('https://api.example.net/items', { headers: { Origin: origin } }));
      expect(response.headers.get('access-control-allow-origin'), origin).toBe(origin === 'https://evil.example' ? null : origin);
    }
  });
});
