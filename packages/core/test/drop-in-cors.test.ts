/**
 * drop-in-cors.ts: the `cors` package's option shape → an ampcors policy
 * (issue #15). What `cors` documents, kept where it is safe: the literal `*`
 * for no options and for `origin: '*'` (no `Vary: Origin`), every `OPTIONS`
 * answered as a preflight, `optionsSuccessStatus`, `maxAge` 0, empty lists,
 * configured lists joined with `,`. And, from the attacker's side, what it
 * never does: credentials with an origin nobody listed, a hostile `Origin`
 * reflected, the AMP mode's strict preflight rule loosened.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { isAmpCorsError } from '@ampcors/core';
import {
  type CorsPackageOptions,
  type CorsPackageOriginCallback,
  type CorsPlan,
  type CorsRequest,
  corsPackagePolicies,
  createCorsPackagePolicy,
} from '@ampcors/core/adapter';

const ENTRY = 'ampCors (test)';
const A = 'https://a.example';
const EVIL = 'https://evil.example';
const CACHE = 'https://example-com.cdn.ampproject.org';

const get = (origin?: string, extra: Partial<CorsRequest> = {}): CorsRequest => ({ method: 'GET', origin: origin ?? null, ...extra });
const options = (origin?: string, extra: Partial<CorsRequest> = {}): CorsRequest => ({ method: 'OPTIONS', origin: origin ?? null, ...extra });
const preflight = (origin: string, extra: Partial<CorsRequest> = {}): CorsRequest => options(origin, { requestMethod: 'PUT', ...extra });

/** The plan of one request (synchronous configurations only). */
function planOf(config: CorsPackageOptions | undefined, request: CorsRequest): CorsPlan {
  const decision = createCorsPackagePolicy(config, ENTRY).decide(request);
  if (decision instanceof Promise) throw new Error('expected a synchronous decision');
  return decision.plan;
}
const header = (plan: CorsPlan, name: string) => plan.headers.find(([key]) => key.toLowerCase() === name.toLowerCase())?.[1];
const varies = (plan: CorsPlan, name: string) => plan.vary.some((item) => item.toLowerCase() === name.toLowerCase());

function refusal(config: unknown): { code: string; message: string } | undefined {
  try {
    createCorsPackagePolicy(config as CorsPackageOptions, ENTRY);
  } catch (error) {
    expect(isAmpCorsError(error), String(error)).toBe(true);
    return { code: (error as { code: string }).code, message: (error as Error).message };
  }
  return undefined;
}

describe("the literal * of cors() and origin: '*'", () => {
  for (const [name, config] of [
    ['no options', undefined],
    ["origin: '*'", { origin: '*' }],
    ["origin: '*' with other options", { origin: '*', methods: ['GET'], maxAge: 60 }],
  ] as const) {
    it(`${name}: the same * for every origin, hostile or absent, never credentials, no Vary: Origin`, () => {
      for (const origin of [A, EVIL, 'null', undefined, 'https://a.example, https://b.example']) {
        const plan = planOf(config, get(origin));
        expect(header(plan, 'Access-Control-Allow-Origin'), String(origin)).toBe('*');
        expect(header(plan, 'Access-Control-Allow-Credentials')).toBeUndefined();
        expect(varies(plan, 'Origin')).toBe(false);
        expect(plan.handled).toBe(false);
      }
    });
  }
  it("origin: '*' (or true) with credentials is refused, as every site could read credentialed answers", () => {
    expect(refusal({ origin: '*', credentials: true })?.code).toBe('unsafe-configuration');
    expect(refusal({ origin: true, credentials: true })?.code).toBe('unsafe-configuration');
    expect(refusal({ origin: [A, '*'], credentials: true })?.code).toBe('unsafe-configuration');
  });
  it('origin: true reflects (cors does) with Vary: Origin, and never a hostile Origin that is not one origin', () => {
    const plan = planOf({ origin: true }, get(EVIL));
    expect(header(plan, 'Access-Control-Allow-Origin')).toBe(EVIL);
    expect(varies(plan, 'Origin')).toBe(true);
    for (const hostile of ['null', `${A}, ${EVIL}`, `${A}/`, 'https://A.example', 'javascript:alert(1)']) {
      expect(header(planOf({ origin: true }, get(hostile)), 'Access-Control-Allow-Origin'), hostile).toBeUndefined();
    }
  });
});

describe("cors's preflight rule: every OPTIONS is answered", () => {
  it('an OPTIONS without Access-Control-Request-Method (or without Origin) is answered 204 with cors() and origin lists', () => {
    for (const [config, origin, acao] of [
      [undefined, A, '*'],
      [undefined, undefined, '*'],
      [{ origin: A }, A, A],
      [{ origin: [A] }, undefined, undefined],
    ] as const) {
      const plan = planOf(config, options(origin));
      expect(plan.handled, JSON.stringify([config, origin])).toBe(true);
      expect(plan.status).toBe(204);
      expect(header(plan, 'Access-Control-Allow-Origin')).toBe(acao);
      if (acao !== undefined) expect(header(plan, 'Access-Control-Allow-Methods')).toBe('GET,HEAD,PUT,PATCH,POST,DELETE');
    }
    expect(planOf({ origin: A }, { method: 'options', origin: A }).handled).toBe(true);
  });
  it('attacker: a hostile OPTIONS, with or without Access-Control-Request-Method, is stopped without one CORS header', () => {
    for (const request of [options(EVIL), preflight(EVIL), preflight(EVIL, { requestPrivateNetwork: 'true' })]) {
      const plan = planOf({ origin: [A], credentials: true, privateNetworkAccess: true }, request);
      expect(plan.handled).toBe(true);
      expect(plan.headers).toEqual([]);
    }
  });
  it('optionsSuccessStatus and preflightContinue apply to it', () => {
    expect(planOf({ origin: A, optionsSuccessStatus: 200 }, options(A)).status).toBe(200);
    const continued = planOf({ origin: A, preflightContinue: true }, options(A));
    expect(continued.handled).toBe(false);
    expect(header(continued, 'Access-Control-Allow-Origin')).toBe(A);
    expect(planOf({ origin: [A], preflightContinue: true }, options()).handled).toBe(false);
  });
  it('the AMP publisher mode keeps the strict rule: an OPTIONS without Access-Control-Request-Method reaches the handler', () => {
    const plan = planOf({ publishers: ['example.com'] }, options(CACHE));
    expect(plan.handled).toBe(false);
    expect(header(plan, 'Access-Control-Allow-Methods')).toBeUndefined();
    expect(planOf({ publishers: ['example.com'], origin: A }, options(A)).handled).toBe(false);
  });
});

describe("cors's values", () => {
  it('maxAge 0 is sent as 0, a string of digits as its number', () => {
    expect(header(planOf({ origin: A, maxAge: 0 }, preflight(A)), 'Access-Control-Max-Age')).toBe('0');
    expect(header(planOf({ origin: A, maxAge: '0' }, preflight(A)), 'Access-Control-Max-Age')).toBe('0');
    expect(header(planOf({ origin: '*', maxAge: '600' }, options(A)), 'Access-Control-Max-Age')).toBe('600');
    expect(refusal({ origin: A, maxAge: '10s' })?.code).toBe('invalid-option');
  });
  it('configured lists are joined with "," as cors joins them; requested headers are reflected as asked, minus AMP-Same-Origin', () => {
    const plan = planOf({ origin: A, methods: ['FOO', 'bar'], headers: ['FIZZ', 'buzz'] }, options(A));
    expect(header(plan, 'Access-Control-Allow-Methods')).toBe('FOO,bar');
    expect(header(plan, 'Access-Control-Allow-Headers')).toBe('FIZZ,buzz');
    const reflected = planOf(undefined, options(A, { requestHeaders: 'x-header-1, AMP-Same-Origin, x-header-2' }));
    expect(header(reflected, 'Access-Control-Allow-Headers')).toBe('x-header-1, x-header-2');
    expect(varies(reflected, 'Access-Control-Request-Headers')).toBe(true);
  });
  it('empty lists send no header, and an empty allowedHeaders does not vary on the request headers', () => {
    const plan = planOf({ origin: '*', allowedHeaders: [], methods: [] }, options(A, { requestHeaders: 'X-A' }));
    expect(header(plan, 'Access-Control-Allow-Headers')).toBeUndefined();
    expect(header(plan, 'Access-Control-Allow-Methods')).toBeUndefined();
    expect(plan.vary).toEqual([]);
    expect(header(planOf({ origin: A, headers: '' }, options(A, { requestHeaders: 'X-A' })), 'Access-Control-Allow-Headers')).toBeUndefined();
  });
  it("cors's defaults with origin alone: credentials off, a denied origin passed on without CORS headers", () => {
    const allowed = planOf({ origin: A }, get(A));
    expect(header(allowed, 'Access-Control-Allow-Credentials')).toBeUndefined();
    const denied = planOf({ origin: A }, get(EVIL));
    expect(denied.handled).toBe(false);
    expect(denied.headers).toEqual([]);
    expect(varies(denied, 'Origin')).toBe(true);
    expect(header(planOf({ origin: A, credentials: true }, get(A)), 'Access-Control-Allow-Credentials')).toBe('true');
  });
  it('exposedHeaders are added to AMP-Redirect-To, which every mode exposes', () => {
    expect(header(planOf({ origin: A, exposedHeaders: ['X-Total'] }, get(A)), 'Access-Control-Expose-Headers')).toBe('AMP-Redirect-To, X-Total');
    expect(header(planOf({ origin: '*', exposedHeaders: [] }, get(A)), 'Access-Control-Expose-Headers')).toBe('AMP-Redirect-To');
  });
});

describe('configurations the drop-in refuses, with what to write instead', () => {
  it("cors's tuning options without any origin source name no mode: the message says to add origin: '*'", () => {
    for (const config of [{ methods: ['GET'] }, { maxAge: 0 }, { optionsSuccessStatus: 200 }, { credentials: true }]) {
      const found = refusal(config);
      expect(found?.code, JSON.stringify(config)).toBe('invalid-option');
      expect(found?.message).toMatch(/name no origin to trust/);
      expect(found?.message).toMatch(/origin: '\*'/);
    }
  });
  it('strings that are no canonical origin never match a browser and are refused', () => {
    for (const origin of ['custom-origin', 'delegate.com', `${A}/`, ['bar.com', A]]) expect(refusal({ origin })?.code).toBe('invalid-origin');
  });
  it('unknown keys and aliases given twice are named', () => {
    expect(refusal({ origin: A, credentails: true })?.message).toMatch(/did you mean `credentials`/);
    expect(refusal({ origin: A, headers: 'X-A', allowedHeaders: 'X-B' })?.message).toMatch(/not both/);
    expect(refusal({ origin: A, optionsSuccessStatus: 200, preflightStatus: 204 })?.message).toMatch(/not both/);
  });
});

describe('origin callbacks', () => {
  it('a synchronous callback keeps a synchronous decision; an asynchronous one is awaited', async () => {
    const sync = createCorsPackagePolicy({ origin: (origin, cb) => cb(null, origin === A) }, ENTRY);
    const now = sync.decide(get(A));
    expect(now).not.toBeInstanceOf(Promise);
    expect(header((now as { plan: CorsPlan }).plan, 'Access-Control-Allow-Origin')).toBe(A);
    const later = createCorsPackagePolicy({ origin: (origin, cb) => setTimeout(() => cb(null, origin === A), 1) }, ENTRY);
    const decision = later.decide(get(A));
    expect(decision).toBeInstanceOf(Promise);
    expect(header((await decision).plan, 'Access-Control-Allow-Origin')).toBe(A);
    expect(header((await later.decide(get(EVIL))).plan, 'Access-Control-Allow-Origin')).toBeUndefined();
  });
  it('attacker: a callback allowing every origin is refused with credentials, at construction', () => {
    const allowAll: CorsPackageOriginCallback = (_origin, cb) => cb(null, true);
    const echo: CorsPackageOriginCallback = (origin, cb) => cb(null, origin);
    expect(refusal({ origin: allowAll, credentials: true })?.code).toBe('unsafe-configuration');
    expect(refusal({ origin: echo, credentials: true })?.code).toBe('unsafe-configuration');
  });
});

describe('options delegate policies', () => {
  it('one policy per options object; undefined is the literal *', () => {
    const policyOf = corsPackagePolicies(ENTRY);
    const config = { origin: A };
    expect(policyOf(config)).toBe(policyOf(config));
    expect(policyOf(undefined)).toBe(policyOf(undefined));
    const decision = policyOf(undefined).decide(get(EVIL));
    expect(header((decision as { plan: CorsPlan }).plan, 'Access-Control-Allow-Origin')).toBe('*');
    expect(() => policyOf({ origin: 'delegate.com' })).toThrow(/canonical origin/);
  });
});

describe('property: the compatible mode never pairs credentials with an origin nobody listed', () => {
  const origin = fc.oneof(
    fc.constantFrom(A, EVIL, CACHE, 'null', `${A}, ${EVIL}`, `${A}:443`, 'https://a.example.evil.example', `http://${A.slice(8)}`),
    fc.webUrl().map((url) => new URL(url).origin),
    fc.string({ maxLength: 30 }),
  );
  const config = fc.record(
    {
      origin: fc.constantFrom<CorsPackageOptions['origin']>(
        '*',
        true,
        false,
        A,
        [A],
        [A, /^https:\/\/[a-z]+\.a\.example$/],
        /^https:\/\/a\.example$/,
        (o, cb) => cb(null, o === A),
      ),
      credentials: fc.boolean(),
      preflightContinue: fc.boolean(),
      optionsSuccessStatus: fc.constantFrom(200, 204),
      allowedHeaders: fc.constantFrom<string[]>([], ['X-A']),
    },
    { requiredKeys: ['origin'] },
  );
  const request = fc.record({
    method: fc.constantFrom('GET', 'POST', 'OPTIONS', 'options'),
    origin: fc.option(origin, { nil: null }),
    requestMethod: fc.option(fc.constantFrom('PUT', 'GET'), { nil: null }),
    requestHeaders: fc.option(fc.constantFrom('X-A', 'AMP-Same-Origin', '*'), { nil: null }),
  });
  it('credentials only for a listed origin, echoed as sent; * only without credentials; AMP-Same-Origin never allowed', () => {
    fc.assert(
      fc.property(config, request, (given, req) => {
        let plan: CorsPlan;
        try {
          plan = planOf(given, req);
        } catch (error) {
          expect(isAmpCorsError(error), String(error)).toBe(true);
          return;
        }
        const acao = header(plan, 'Access-Control-Allow-Origin');
        const acac = header(plan, 'Access-Control-Allow-Credentials');
        if (acao === '*') expect(acac).toBeUndefined();
        if (acac !== undefined) {
          expect(acao).toBe(req.origin);
          expect(acao === A || /^https:\/\/[a-z]+\.a\.example$/.test(acao as string), String(acao)).toBe(true);
        }
        if (acao !== undefined && acao !== '*') expect(acao).toBe(req.origin);
        expect((header(plan, 'Access-Control-Allow-Headers') ?? '').toLowerCase()).not.toMatch(/amp-same-origin|\*/);
      }),
      { numRuns: 400 },
    );
  });
});
