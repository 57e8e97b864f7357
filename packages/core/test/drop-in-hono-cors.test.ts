/**
 * The `hono/cors` drop-in written once in core (drop-in-hono-cors.ts), tested
 * without Hono: the context type is a plain object that records which
 * context each function was given. From the attacker's side: an option or a
 * function allowing every origin is refused with credentials; a function's
 * answer allows only the origin it was asked about; a methods function is
 * asked on preflights only and its answer is checked like the option.
 */
import { cacheOrigin, isAmpCorsError } from '@ampcors/core';
import {
  type CorsRequest,
  createFetchCorsPolicy,
  createHonoCorsPolicy,
  HONO_CORS_METHODS,
  type HonoContexts,
  type HonoCorsOptions,
} from '@ampcors/core/adapter';
import { describe, expect, it } from 'vitest';

interface Ctx {
  readonly kind: 'request' | 'probe' | 'about';
  readonly origin: string;
}
const contexts: HonoContexts<Ctx> = { probe: (origin) => ({ kind: 'probe', origin }), about: (_c, origin) => ({ kind: 'about', origin }) };
const entry = 'ampCors (test)';
const policyOf = (options?: HonoCorsOptions<Ctx>) => createHonoCorsPolicy<Ctx>(options, contexts, entry);
const EVIL = 'https://evil.example';
const PARTNER = 'https://partner.example';

const get = (origin?: string, extra: Partial<CorsRequest> = {}): CorsRequest => ({ method: 'GET', origin: origin ?? null, ...extra });
const preflight = (origin: string, method = 'DELETE'): CorsRequest => ({ method: 'OPTIONS', origin, requestMethod: method });
const headersOf = async (decided: ReturnType<ReturnType<typeof policyOf>['decide']>) => {
  const { verdict, plan } = await decided;
  return { verdict, status: plan.handled ? plan.status : 0, headers: Object.fromEntries(plan.headers.map(([name, value]) => [name.toLowerCase(), value])) };
};
const errorOf = (run: () => unknown): Error => {
  try {
    run();
  } catch (error) {
    return error as Error;
  }
  throw new Error('accepted');
};

describe('createHonoCorsPolicy', () => {
  it('no options is hono/cors()’s default: the literal *, never credentials', async () => {
    for (const options of [undefined, {}]) {
      const answer = await headersOf(policyOf(options).decide(get(EVIL), { kind: 'request', origin: EVIL }));
      expect(answer.headers['access-control-allow-origin']).toBe('*');
      expect(answer.headers['access-control-allow-credentials']).toBeUndefined();
    }
  });

  it("origin alone takes hono/cors's defaults: its methods, no credentials, a denied origin passed on without headers", async () => {
    const cors = policyOf({ origin: PARTNER });
    expect(cors.policy.options.methods).toBe(HONO_CORS_METHODS);
    expect(cors.policy.options.credentials).toBe(false);
    const allowed = await headersOf(cors.decide(get(PARTNER), { kind: 'request', origin: PARTNER }));
    expect([allowed.headers['access-control-allow-origin'], allowed.headers['access-control-allow-credentials']]).toEqual([PARTNER, undefined]);
    const denied = await headersOf(cors.decide(get(EVIL), { kind: 'request', origin: EVIL }));
    expect([denied.status, denied.headers['access-control-allow-origin']]).toEqual([0, undefined]);
  });

  it('with publishers, a static origin adds origins; the AMP mode keeps credentials, and denied origins get no header', async () => {
    const cors = policyOf({ publishers: ['example.com'], origin: [PARTNER] });
    const c = (origin: string): Ctx => ({ kind: 'request', origin });
    for (const origin of [cacheOrigin('example.com'), PARTNER]) {
      const answer = await headersOf(cors.decide(get(origin), c(origin)));
      expect([answer.headers['access-control-allow-origin'], answer.headers['access-control-allow-credentials']]).toEqual([origin, 'true']);
    }
    // With an origin option, a denied origin is passed on without headers, as hono/cors does (onDenied: 'omit').
    const denied = await headersOf(cors.decide(get(EVIL), c(EVIL)));
    expect([denied.verdict.allowed, denied.status, denied.headers['access-control-allow-origin']]).toEqual([false, 0, undefined]);
    expect((await headersOf(policyOf({ publishers: ['example.com'], origin: [PARTNER], onDenied: 'reject' }).decide(get(EVIL), c(EVIL)))).status).toBe(403);
  });

  it('refuses, all at once, what would allow every origin with credentials or deny everything without a word', () => {
    const refused = [
      { origin: '*', credentials: true },
      { origin: (origin: string) => origin, credentials: true },
      { publishers: ['example.com'], origin: (origin: string) => origin },
      { origin: [] },
      { origin: 42 as never },
      { origin: ['https://a.example', 7] as never },
      { allowMethods: ['GET'], methods: ['GET'], origin: PARTNER },
      { allowOrigin: PARTNER } as never,
    ];
    for (const options of refused) expect(isAmpCorsError(errorOf(() => policyOf(options as HonoCorsOptions<Ctx>))), JSON.stringify(options)).toBe(true);
    const all = errorOf(() => policyOf({ origin: [], allowHeaders: ['x'], allowedHeaders: ['y'] } as never));
    expect(all.message).toMatch(/origin is empty/);
    expect(all.message).toMatch(/give allowedHeaders or its alias allowHeaders, not both/);
  });

  it("asks an origin function with the request's context about the request's Origin only, and allows only that origin", async () => {
    const asked: Array<[string, Ctx['kind']]> = [];
    const cors = policyOf({
      origin: (origin, c) => {
        asked.push([origin, c.kind]);
        return origin === PARTNER ? origin : origin === EVIL ? PARTNER : null;
      },
    });
    expect(asked.every(([, kind]) => kind === 'probe')).toBe(true);
    asked.length = 0;
    const request: Ctx = { kind: 'request', origin: PARTNER };
    expect((await headersOf(cors.decide(get(PARTNER), request))).headers['access-control-allow-origin']).toBe(PARTNER);
    expect(asked).toEqual([[PARTNER, 'request']]);
    // The function names another origin than the one asked: nothing is allowed.
    const evil = await headersOf(cors.decide(get(EVIL), { kind: 'request', origin: EVIL }));
    expect([evil.verdict.allowed, evil.headers['access-control-allow-origin']]).toEqual([false, undefined]);
    // No Origin: not asked.
    asked.length = 0;
    await headersOf(cors.decide(get(), { kind: 'request', origin: '' }));
    expect(asked).toEqual([]);
  });

  it('asks a methods function on preflights only, with the origin and the context, and checks its answer', async () => {
    const asked: string[] = [];
    const cors = policyOf({
      origin: PARTNER,
      allowMethods: (origin, c) => {
        asked.push(`${origin} ${c.kind}`);
        return origin === PARTNER ? ['GET', 'DELETE'] : ['GET'];
      },
    });
    await headersOf(cors.decide(get(PARTNER), { kind: 'request', origin: PARTNER }));
    expect(asked).toEqual([]);
    const answer = await headersOf(cors.decide(preflight(PARTNER), { kind: 'request', origin: PARTNER }));
    expect(answer.headers['access-control-allow-methods']).toBe('GET,DELETE');
    expect(asked).toEqual([`${PARTNER} request`]);
    const hostile = policyOf({ origin: PARTNER, allowMethods: () => ['GET\r\nSet-Cookie: a=b'] });
    await expect(Promise.resolve(hostile.decide(preflight(PARTNER), { kind: 'request', origin: PARTNER }))).rejects.toSatisfy(isAmpCorsError);
  });
});

describe('createFetchCorsPolicy', () => {
  it('refuses undefined, unknown keys (hono/cors’s names named), and an onError that is not a function, all at once', () => {
    expect(errorOf(() => createFetchCorsPolicy(undefined as never, 'withAmpCors (test)')).message).toMatch(/needs options .*unset variable/);
    const all = errorOf(() => createFetchCorsPolicy({ publishers: ['example.com'], allowMethods: ['GET'], onError: 'log' } as never, 'withAmpCors (test)'));
    expect(isAmpCorsError(all)).toBe(true);
    expect(all.message).toMatch(/allowMethods.*`methods`/);
    expect(all.message).toMatch(/onError must be a function/);
  });
  it('names the mode by its keys: {} is the public mode, publishers the AMP mode', () => {
    expect(createFetchCorsPolicy({}, 'withAmpCors (test)').mode).toBe('any-origin');
    expect(createFetchCorsPolicy({ publishers: ['example.com'], onError: () => null }, 'withAmpCors (test)').mode).toBe('amp');
  });
});
