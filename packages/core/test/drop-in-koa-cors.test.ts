/**
 * The `@koa/cors` drop-in in core (createKoaCorsPolicy, issue #15), with
 * plain objects for Koa's context: `@koa/cors`'s answers where they are
 * safe (the literal `*`, its `Vary` policy, its empty values, maxAge 0,
 * keepHeadersOnError, secureContext, credentials and origin functions),
 * and, from the attacker's side, no configuration or request that pairs
 * credentials with an origin nobody named.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { isAmpCorsError } from '@ampcors/core';
import { type CorsDecision, type CorsPlan, createKoaCorsPolicy, isThenable, type KoaCorsContext, type KoaCorsOptions } from '@ampcors/core/adapter';

/** A Koa-like context: the request, `originalUrl`, `state`, and `get` as Koa's (what an origin function reads). */
interface Ctx extends KoaCorsContext {
  get(name: string): string;
  readonly url: string;
}

function ctxOf(headers: Record<string, string>, method = 'GET', url = '/r'): Ctx {
  const lower = Object.fromEntries(Object.entries(headers).map(([name, value]) => [name.toLowerCase(), value]));
  return { req: { method, url, headers: lower }, originalUrl: url, url, state: {}, get: (name) => lower[name.toLowerCase()] ?? '' };
}

const A = 'https://a.example';
const EVIL = 'https://evil.example';
const ENTRY = 'test entry';

/** Decides a request: an OPTIONS when it carries Access-Control-Request-Method (a preflight), else a GET. */
async function decide(options: KoaCorsOptions<Ctx> | undefined, headers: Record<string, string>, url = '/r'): Promise<CorsDecision> {
  const method = headers['Access-Control-Request-Method'] === undefined ? 'GET' : 'OPTIONS';
  const decided = createKoaCorsPolicy<Ctx>(options, ENTRY).decide(ctxOf(headers, method, url));
  return isThenable(decided) ? await decided : decided;
}
const header = (plan: CorsPlan, name: string) => plan.headers.find(([key]) => key.toLowerCase() === name.toLowerCase())?.[1];
const preflight = (origin: string, extra: Record<string, string> = {}) => ({ Origin: origin, 'Access-Control-Request-Method': 'PUT', ...extra });

function refusal(options: unknown): string {
  try {
    createKoaCorsPolicy(options as KoaCorsOptions<Ctx>, ENTRY);
  } catch (error) {
    expect(isAmpCorsError(error), String(error)).toBe(true);
    return `${(error as { code: string }).code}: ${(error as Error).message}`;
  }
  return 'accepted';
}

describe("@koa/cors's answers in the compatible mode", () => {
  it('no options: the literal * to every request, no credentials even with a cookie, Vary: Origin as @koa/cors', async () => {
    for (const headers of [{ Origin: EVIL, Cookie: 'session=1' }, {}, { Origin: 'null' }] as Array<Record<string, string>>) {
      const { plan, verdict } = await decide(undefined, headers);
      expect([header(plan, 'Access-Control-Allow-Origin'), header(plan, 'Access-Control-Allow-Credentials')]).toEqual(['*', undefined]);
      expect(plan.vary).toContain('Origin');
      expect(verdict.allowed ? verdict.reason : 'denied').toBe(headers.Origin === undefined ? 'denied' : 'any-origin');
    }
  });
  it("origin '*' is the literal * (with or without Origin), never with credentials; a preflight never allows AMP-Same-Origin", async () => {
    for (const headers of [{ Origin: EVIL }, {}, { Origin: 'https://a.example, https://evil.example' }] as Array<Record<string, string>>) {
      const { plan } = await decide({ origin: '*' }, headers);
      expect([plan.handled, header(plan, 'Access-Control-Allow-Origin'), header(plan, 'Access-Control-Allow-Credentials')]).toEqual([false, '*', undefined]);
      expect(plan.vary).toEqual(['Origin']);
    }
    const { plan } = await decide({ origin: '*' }, preflight(EVIL, { 'Access-Control-Request-Headers': 'X-A, AMP-Same-Origin' }));
    expect([plan.status, header(plan, 'Access-Control-Allow-Origin'), header(plan, 'Access-Control-Allow-Methods')]).toEqual([
      204,
      '*',
      'GET,HEAD,PUT,POST,DELETE,PATCH',
    ]);
    expect(header(plan, 'Access-Control-Allow-Headers')).toBe('X-A');
    expect(plan.vary).toEqual(['Origin', 'Access-Control-Request-Headers']);
  });
  it("an origin function's '*' is the literal * without credentials, and its verdict says nothing was checked", async () => {
    for (const origin of [() => '*', async () => '*', () => ({ then: (resolve: (value: string) => void) => resolve('*') }) as unknown as string]) {
      const { plan, verdict } = await decide({ origin }, { Origin: EVIL });
      expect([header(plan, 'Access-Control-Allow-Origin'), header(plan, 'Access-Control-Allow-Credentials')]).toEqual(['*', undefined]);
      expect(verdict.allowed && verdict.reason).toBe('any-origin');
    }
    // A falsy answer: no CORS headers, the request passes on (as @koa/cors calls next()).
    const { plan } = await decide({ origin: (ctx) => (ctx.url === '/forbin' ? false : '*') }, { Origin: EVIL }, '/forbin');
    expect([plan.handled, header(plan, 'Access-Control-Allow-Origin'), plan.vary]).toEqual([false, undefined, ['Origin']]);
  });
  it("@koa/cors's empty values: no methods header, the asked headers, no Max-Age for the number 0", async () => {
    for (const allowMethods of [null, '', []]) {
      const { plan } = await decide({ origin: '*', allowMethods }, preflight(EVIL));
      expect(header(plan, 'Access-Control-Allow-Methods')).toBeUndefined();
    }
    const asked = await decide({ origin: '*', allowHeaders: [] }, preflight(EVIL, { 'Access-Control-Request-Headers': 'X-Ping, amp-same-origin' }));
    expect(header(asked.plan, 'Access-Control-Allow-Headers')).toBe('X-Ping');
    expect(header((await decide({ origin: '*', maxAge: 0 }, preflight(EVIL))).plan, 'Access-Control-Max-Age')).toBeUndefined();
    expect(header((await decide({ origin: '*', maxAge: '0' }, preflight(EVIL))).plan, 'Access-Control-Max-Age')).toBe('0');
    expect(header((await decide({ origin: '*', maxAge: 600 }, preflight(EVIL))).plan, 'Access-Control-Max-Age')).toBe('600');
    const lists = await decide({ origin: '*', allowMethods: ['GET', 'POST'], allowHeaders: ['X-A'] }, preflight(EVIL));
    expect([header(lists.plan, 'Access-Control-Allow-Methods'), header(lists.plan, 'Access-Control-Allow-Headers')]).toEqual(['GET,POST', 'X-A']);
  });
  it('credentials as a function (sync, async, thenable) decides per request, for the named origin only', async () => {
    for (const credentials of [(ctx: Ctx) => ctx.url !== '/forbin', async (ctx: Ctx) => ctx.url !== '/forbin']) {
      const on = await decide({ origin: A, credentials }, { Origin: A });
      const off = await decide({ origin: A, credentials }, { Origin: A }, '/forbin');
      const evil = await decide({ origin: A, credentials }, { Origin: EVIL });
      expect([header(on.plan, 'Access-Control-Allow-Credentials'), header(off.plan, 'Access-Control-Allow-Credentials')]).toEqual(['true', undefined]);
      expect([header(on.plan, 'Access-Control-Allow-Origin'), header(off.plan, 'Access-Control-Allow-Origin')]).toEqual([A, A]);
      expect([header(evil.plan, 'Access-Control-Allow-Origin'), header(evil.plan, 'Access-Control-Allow-Credentials')]).toEqual([undefined, undefined]);
    }
  });
  it('privateNetworkAccess answers a named origin only', async () => {
    const ask = { 'Access-Control-Request-Private-Network': 'true' };
    expect(header((await decide({ origin: A, privateNetworkAccess: true }, preflight(A, ask))).plan, 'Access-Control-Allow-Private-Network')).toBe('true');
    expect(
      header((await decide({ origin: A, privateNetworkAccess: true }, preflight(EVIL, ask))).plan, 'Access-Control-Allow-Private-Network'),
    ).toBeUndefined();
    expect(header((await decide({ origin: A }, preflight(A, ask))).plan, 'Access-Control-Allow-Private-Network')).toBeUndefined();
    // An origin function's '*' (the literal *) never opens the private network.
    expect(
      header((await decide({ origin: () => '*', privateNetworkAccess: true }, preflight(EVIL, ask))).plan, 'Access-Control-Allow-Private-Network'),
    ).toBeUndefined();
  });
  it('the AMP mode keeps ampcors defaults: credentials, 403 for a foreign origin, no literal *', async () => {
    const cache = 'https://example-com.cdn.ampproject.org';
    const allowed = await decide({ publishers: ['example.com'] }, { Origin: cache });
    expect([header(allowed.plan, 'Access-Control-Allow-Origin'), header(allowed.plan, 'Access-Control-Allow-Credentials')]).toEqual([cache, 'true']);
    expect((await decide({ publishers: ['example.com'] }, { Origin: EVIL })).plan.status).toBe(403);
    const extra = await decide({ publishers: ['example.com'], origin: '*', credentials: false }, { Origin: EVIL });
    expect(header(extra.plan, 'Access-Control-Allow-Origin')).toBe(EVIL);
  });
});

describe('refused configurations', () => {
  it('options naming no origin source are refused, and the error says how to ask for the literal *', () => {
    for (const options of [{ exposeHeaders: 'X' }, { maxAge: 600 }, { secureContext: true }, { credentials: false }, { keepHeadersOnError: false }]) {
      expect(refusal(options)).toMatch(/^invalid-option: .*name no origin to trust.*origin: '\*'/s);
    }
    // Credentials without an origin: @koa/cors reflects every Origin with them; the error says that first, not only "add origin: '*'".
    for (const credentials of [true, () => false, async () => true]) {
      expect(refusal({ credentials, maxAge: 60 })).toMatch(
        /^unsafe-configuration: .*name no origin to trust.*credentials without origin: @koa\/cors would reflect/s,
      );
    }
  });
  it("'*' (or a reflect-all function) with credentials, and '*' with privateNetworkAccess, are refused as unsafe", () => {
    for (const options of [
      { origin: '*', credentials: true },
      { origin: '*', credentials: () => false },
      { origin: () => '*', credentials: true },
      { origin: (ctx: Ctx) => ctx.get('Origin') || '*', credentials: true },
      { origin: '*', privateNetworkAccess: true },
    ]) {
      expect(refusal(options)).toMatch(/^unsafe-configuration: /);
    }
    expect(refusal({ origin: '*', privateNetworkAccess: true })).toMatch(/private network/);
  });
  it('bad values are named, all at once', () => {
    const message = refusal({ origin: A, maxAge: 'soon', keepHeadersOnError: 'no', secureContext: 1, credentials: 'yes', allowMethods: 'GET', methods: 'GET' });
    for (const name of ['maxAge', 'keepHeadersOnError', 'secureContext', 'credentials', 'methods or its alias allowMethods']) expect(message).toContain(name);
  });
});

describe('Koa response parts: secureContext, keepHeadersOnError', () => {
  it('secureContext adds COOP and COEP to every answer but a 403', async () => {
    const secure = createKoaCorsPolicy<Ctx>({ origin: '*', secureContext: true }, ENTRY);
    const decided = secure.decide(ctxOf({ Origin: EVIL })) as CorsDecision;
    expect(secure.headersOf(decided.plan)).toEqual(
      expect.arrayContaining([
        ['cross-origin-opener-policy', 'same-origin'],
        ['cross-origin-embedder-policy', 'require-corp'],
      ]),
    );
    const amp = createKoaCorsPolicy<Ctx>({ publishers: ['example.com'], secureContext: true }, ENTRY);
    const rejected = amp.decide(ctxOf({ Origin: EVIL })) as CorsDecision;
    expect(rejected.plan.kind).toBe('reject');
    expect(amp.headersOf(rejected.plan).map(([name]) => name)).not.toContain('cross-origin-opener-policy');
  });
  it("an error thrown later carries the plan's headers and Vary (merged with its own, * kept), or nothing with keepHeadersOnError: false", () => {
    const kept = createKoaCorsPolicy<Ctx>({ origin: A }, ENTRY);
    const plan = (kept.decide(ctxOf({ Origin: A })) as CorsDecision).plan;
    const withVary = Object.assign(new Error('x'), { headers: { Vary: 'Accept-Encoding', 'X-Own': '1' } });
    expect((kept.errorAfter(withVary, plan) as { headers: object }).headers).toEqual({
      'X-Own': '1',
      'access-control-allow-origin': A,
      'access-control-expose-headers': 'AMP-Redirect-To',
      vary: 'Accept-Encoding, Origin',
    });
    const star = Object.assign(new Error('x'), { headers: { vary: '*' } });
    expect((kept.errorAfter(star, plan) as { headers: { vary: string } }).headers.vary).toBe('*');
    expect(kept.errorAfter('a string', plan)).toBeInstanceOf(Error);
    const dropped = createKoaCorsPolicy<Ctx>({ origin: A, keepHeadersOnError: false }, ENTRY);
    const error = new Error('y');
    expect(dropped.errorAfter(error, plan)).toBe(error);
    expect((error as { headers?: unknown }).headers).toBeUndefined();
    // An error while deciding (a verifier that throws) always carries Vary: Origin.
    expect((dropped.errorWhileDeciding(new Error('z')) as { headers: { vary: string } }).headers.vary).toBe('Origin');
  });
});

describe('from the attacker side (property)', () => {
  const hostileOrigin = fc.oneof(
    fc.constantFrom(EVIL, 'null', `${A}, ${EVIL}`, `${A}\r\nSet-Cookie: x=1`, `${A}.evil.example`, 'https://A.EXAMPLE', `${A}/`, ''),
    fc.webUrl().map((url) => new URL(url).origin),
    fc.string({ maxLength: 40 }),
  );
  const configurations: ReadonlyArray<KoaCorsOptions<Ctx>> = [
    {},
    { origin: '*' },
    { origin: () => '*' },
    { origin: A, credentials: true },
    { origin: (ctx) => (ctx.get('Origin') === A ? A : ''), credentials: true },
    { origin: (ctx) => (ctx.get('Origin') === A ? '*' : ''), credentials: true },
    { origin: A, credentials: async () => true },
  ];
  it('credentials never go with * or with an origin other than the one named; the function is never asked about a malformed Origin', async () => {
    await fc.assert(
      fc.asyncProperty(fc.constantFrom(...configurations), hostileOrigin, fc.boolean(), async (options, origin, isPreflight) => {
        fc.pre(origin !== A);
        const asked: string[] = [];
        const watched: KoaCorsOptions<Ctx> =
          typeof options.origin === 'function'
            ? {
                ...options,
                origin: (ctx) => {
                  asked.push(ctx.get('Origin'));
                  return (options.origin as (c: Ctx) => string)(ctx);
                },
              }
            : options;
        const policy = createKoaCorsPolicy<Ctx>(watched, ENTRY);
        asked.length = 0; // the construction's canary questions
        const headers: Record<string, string> = origin === '' ? {} : isPreflight ? preflight(origin) : { Origin: origin, Cookie: 'session=victim' };
        const decided = policy.decide(ctxOf(headers, isPreflight ? 'OPTIONS' : 'GET'));
        const { plan } = isThenable(decided) ? await decided : decided;
        const acao = header(plan, 'Access-Control-Allow-Origin');
        if (header(plan, 'Access-Control-Allow-Credentials') === 'true') expect(acao).toBe(A);
        if (acao !== undefined && acao !== '*') expect(acao).toBe(origin);
        for (const question of asked) expect(question === origin || question.includes('ampcorscanary')).toBe(true);
        if (!/^https?:\/\/[a-z0-9.-]+(:\d+)?$/.test(origin)) expect(asked.filter((question) => question === origin)).toEqual([]);
      }),
      { numRuns: 300 },
    );
  });
});
