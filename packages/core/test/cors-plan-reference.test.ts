/**
 * The optimized plan (cors-plan.ts: constants made and checked once per
 * options object, per-request checks only for what comes from the request or
 * a verifier, reflected headers returned as sent) against a straightforward
 * reference that builds, joins and checks every header of every plan with a
 * regular expression, for random requests, verdicts and options, hostile
 * values included (issue 16).
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import type { Verdict } from '@ampcors/core';
import {
  appendVary,
  type CorsPlan,
  type CorsRequest,
  type NormalizedCorsOptions,
  normalizeCorsOptions,
  planCors,
  reflectableHeaders,
} from '@ampcors/core/adapter';
import { emailSenderOf } from '../src/amp-email.js';

// ---------------------------------------------------------------------------
// The reference: every header built, joined and checked per plan.

const VALUE = /^[\t\x20-\x7e]*$/;
const TOKEN = /^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/;
const SOURCE_HEADER = 'AMP-Access-Control-Allow-Source-Origin';
type Pair = readonly [string, string];

function referenceReflectable(requested: string | null | undefined): string[] | null {
  if (typeof requested !== 'string' || requested.length > 2048) return null;
  const out: string[] = [];
  for (const item of requested.split(',')) {
    const name = item.trim();
    if (name === '') continue;
    if (!TOKEN.test(name)) return null;
    if (name === '*' || name.toLowerCase() === 'amp-same-origin') continue;
    out.push(name);
  }
  return out;
}

const isOptions = (request: CorsRequest) => request.method.toUpperCase() === 'OPTIONS';
const preflightOf = (request: CorsRequest, o: NormalizedCorsOptions) =>
  o.everyOptionsIsPreflight === true ? isOptions(request) : isOptions(request) && !!request.origin && !!request.requestMethod;

function referencePlan(request: CorsRequest, verdict: Verdict, o: NormalizedCorsOptions): CorsPlan {
  // The reference builds plans field by field; the type's union (EndPlan | PassPlan) is what planCors must honour.
  const plan = (kind: CorsPlan['kind'], handled: boolean, status: number, headers: Pair[], vary: readonly string[], body = ''): CorsPlan =>
    ({ kind, handled, status, body, headers, vary }) as CorsPlan;
  const pass = (kind: 'actual' | 'preflight', headers: Pair[], vary: readonly string[]) => plan(kind, false, 0, headers, vary);
  const end = (headers: Pair[], vary: readonly string[]) => plan('preflight', true, o.preflightStatus, headers, vary);
  const denial = (reason: string, preflight: boolean, vary: readonly string[]): CorsPlan => {
    if (reason === 'missing') return preflight && o.everyOptionsIsPreflight === true && !o.preflightContinue ? end([], vary) : pass('actual', [], vary);
    if (o.onDenied === 'reject')
      return plan('reject', true, 403, [['content-type', 'text/plain; charset=utf-8']], vary, `Forbidden: CORS origin denied (${reason})\n`);
    return preflight && !o.preflightContinue ? end([], vary) : pass(preflight ? 'preflight' : 'actual', [], vary);
  };
  const checked = (p: CorsPlan, preflight: boolean) =>
    p.headers.every(([, value]) => typeof value === 'string' && VALUE.test(value)) ? p : denial('malformed', preflight, p.vary);
  const preflightPart = (headers: Pair[]) => {
    if (o.methods !== '') headers.push(['access-control-allow-methods', o.methods]);
    const names = o.allowedHeaders ?? referenceReflectable(request.requestHeaders);
    if (names !== null && names.length > 0)
      headers.push(['access-control-allow-headers', names.join(o.allowedHeaders === null ? ', ' : (o.allowedHeadersSeparator ?? ', '))]);
    if (o.maxAge !== null) headers.push(['access-control-max-age', String(o.maxAge)]);
  };
  const finish = (headers: Pair[], vary: readonly string[]) => checked(o.preflightContinue ? pass('preflight', headers, vary) : end(headers, vary), true);
  const anyOrigin = (): CorsPlan => {
    const headers: Pair[] = [['access-control-allow-origin', '*']];
    if (!preflightOf(request, o)) {
      headers.push(['access-control-expose-headers', o.exposedHeaders.join(', ')]);
      return checked(pass('actual', headers, o.alwaysVaryOrigin === true ? ['Origin'] : []), false);
    }
    preflightPart(headers);
    const reflect = o.allowedHeaders === null;
    return finish(
      headers,
      o.alwaysVaryOrigin === true ? (reflect ? ['Origin', 'Access-Control-Request-Headers'] : ['Origin']) : reflect ? ['Access-Control-Request-Headers'] : [],
    );
  };
  const allowed = (origin: string | null, source: string | undefined, preflight: boolean, vary: readonly string[]): CorsPlan => {
    const headers: Pair[] = [];
    if (origin !== null) {
      headers.push(['access-control-allow-origin', origin]);
      if (o.credentials) headers.push(['access-control-allow-credentials', 'true']);
    }
    if (!preflight) {
      if (source !== undefined) headers.push(['amp-access-control-allow-source-origin', source]);
      if (origin !== null) headers.push(['access-control-expose-headers', [...o.exposedHeaders, ...(source !== undefined ? [SOURCE_HEADER] : [])].join(', ')]);
      return checked(pass('actual', headers, vary), false);
    }
    preflightPart(headers);
    if (o.privateNetworkAccess && request.requestPrivateNetwork === 'true') headers.push(['access-control-allow-private-network', 'true']);
    return finish(headers, vary);
  };
  const ofVerdict = (source: string | undefined, preflight: boolean, vary: readonly string[]): CorsPlan => {
    if (!verdict.allowed) return denial(verdict.reason, preflight, vary);
    if (verdict.origin !== null && verdict.origin !== request.origin) return denial('malformed', preflight, vary);
    if (verdict.via === 'any' && o.starForAnyOrigin === true && !o.credentials) return anyOrigin();
    return allowed(verdict.origin, source, preflight, vary);
  };

  if (o.anyOrigin === true) return anyOrigin();
  const email = o.emailSenders !== null;
  if (verdict.allowed && verdict.via === 'same-origin' && verdict.origin !== null)
    return pass('actual', [], email ? ['Origin', 'AMP-Email-Sender'] : ['Origin']);
  const preflight = preflightOf(request, o);
  const sender = !email || preflight ? undefined : emailSenderOf(request, o);
  const vary = [...['Origin'], ...(preflight ? ['Access-Control-Request-Headers'] : []), ...(email ? ['AMP-Email-Sender'] : [])];
  const source = verdict.allowed && o.legacySourceOriginHeader ? verdict.sourceOrigin : undefined;
  if (sender === undefined) return ofVerdict(source, preflight, vary);
  let p: CorsPlan;
  if (!sender.trusted) p = denial('email-sender-denied', false, vary);
  else if (sender.version === 2) p = checked(pass('actual', [['amp-email-allow-sender', sender.sender]], vary), false);
  else if (typeof request.origin === 'string' && o.emailClientOrigins?.has(request.origin) === true) p = allowed(request.origin, sender.sender, false, vary);
  else p = ofVerdict(sender.sender, false, vary);
  return { ...p, email: sender };
}

// ---------------------------------------------------------------------------
// Arbitraries, from the attacker's side: hostile origins, header lists, sources, senders, separators.

const CACHE_ORIGIN = 'https://example-com.cdn.ampproject.org';
const hostile = ['https://evil.example\r\nSet-Cookie: a=b', 'https://é.example', 'https://a.example\u0000', 'https://a.example\u0100', ' https://a.example\t'];
const originValue = fc.oneof(
  fc.constantFrom(CACHE_ORIGIN, 'https://example.com', 'https://mail.google.com', '', ...hostile),
  fc.constant(null),
  fc.constant(undefined),
  fc.string({ maxLength: 12 }).map((s) => `https://${s}`),
);
const headerName = fc.constantFrom('content-type', 'X-Requested-With', '*', 'AMP-Same-Origin', 'amp-same-origin', 'x-a', 'a b', 'a\r\nb', 'é');
const gap = fc.constantFrom('', ' ', '  ', '\t', '\u00a0', '\u2028', '\n');
const requestHeaders = fc.oneof(
  fc.constant(null),
  fc
    .array(fc.tuple(gap, headerName, gap), { maxLength: 5 })
    .chain((items) => fc.constantFrom(', ', ',', ' , ', ',,').map((sep) => items.map(([a, name, b]) => `${a}${name}${b}`).join(sep))),
  fc.string({ maxLength: 20 }),
  fc.constant(`${'x-long-header-name, '.repeat(110)}x`),
);
const request: fc.Arbitrary<CorsRequest> = fc.record({
  method: fc.constantFrom('GET', 'POST', 'OPTIONS', 'options', 'Options'),
  origin: originValue,
  ampSameOrigin: fc.constantFrom(null, 'true'),
  requestMethod: fc.constantFrom(null, '', 'POST'),
  requestHeaders,
  requestPrivateNetwork: fc.constantFrom(null, 'true', 'false'),
  emailSender: fc.constantFrom(null, '', 'sender@example.com', 'SENDER@example.com', 'evil@example.com', 'a\r\n@example.com'),
  sourceOrigin: fc.constantFrom(null, 'https://example.com', 'sender@example.com', 'evil@example.com', 'https://x.example\r\nA: b'),
  secFetchSite: fc.constantFrom(null, 'same-origin', 'cross-site'),
});

const verdictFor = (r: CorsRequest): fc.Arbitrary<Verdict> =>
  fc.oneof(
    fc.record({
      allowed: fc.constant(true as const),
      origin: fc.oneof(
        fc.constant(typeof r.origin === 'string' ? r.origin : null),
        fc.constant(null),
        originValue.map((o) => o ?? null),
      ),
      via: fc.constantFrom('cache', 'publisher', 'same-origin', 'any'),
      reason: fc.constant('cache-origin'),
      sourceOrigin: fc.constantFrom(undefined, 'https://example.com', 'https://x.example\r\nA: b', 'https://é.example'),
    }) as fc.Arbitrary<Verdict>,
    fc.record({
      allowed: fc.constant(false as const),
      origin: fc.constant(null),
      reason: fc.constantFrom('missing', 'unknown-origin', 'malformed'),
      detail: fc.constant('denied'),
    }) as fc.Arbitrary<Verdict>,
  );

const tokens = fc.array(fc.constantFrom('GET', 'POST', 'X-Custom', 'Content-Type', 'x-b'), { maxLength: 3 });
const options: fc.Arbitrary<NormalizedCorsOptions> = fc
  .record({
    credentials: fc.boolean(),
    methods: fc.option(tokens, { nil: undefined }),
    allowedHeaders: fc.option(tokens, { nil: undefined }),
    exposedHeaders: fc.option(tokens, { nil: undefined }),
    maxAge: fc.option(fc.nat(100_000), { nil: undefined }),
    preflightStatus: fc.constantFrom(200, 204),
    preflightContinue: fc.boolean(),
    privateNetworkAccess: fc.boolean(),
    onDenied: fc.constantFrom('reject' as const, 'omit' as const),
    email: fc.option(fc.constant({ senders: ['sender@example.com'] }), { nil: undefined }),
    legacySourceOriginHeader: fc.boolean(),
  })
  .chain((given) =>
    fc
      .record({
        anyOrigin: fc.option(fc.constant(true), { nil: undefined }),
        starForAnyOrigin: fc.option(fc.constant(true), { nil: undefined }),
        alwaysVaryOrigin: fc.option(fc.constant(true), { nil: undefined }),
        everyOptionsIsPreflight: fc.option(fc.constant(true), { nil: undefined }),
        // A drop-in's separator; a hostile one must deny (malformed) as the reference does.
        allowedHeadersSeparator: fc.option(fc.constantFrom(',', ', ', '\r\n'), { nil: undefined }),
      })
      .map((dropIn) => {
        const normalized = normalizeCorsOptions(Object.fromEntries(Object.entries(given).filter(([, v]) => v !== undefined)));
        return { ...normalized, ...Object.fromEntries(Object.entries(dropIn).filter(([, v]) => v !== undefined)) } as NormalizedCorsOptions;
      }),
  );

describe('the optimized plan equals the straightforward reference', () => {
  it('for random requests, verdicts and options (hostile values included)', () => {
    fc.assert(
      fc.property(
        request.chain((r) => fc.tuple(fc.constant(r), verdictFor(r))),
        options,
        ([r, verdict], o) => {
          // Twice with the same options: the second plan uses the constants made by the first.
          expect(planCors(r, verdict, o)).toEqual(referencePlan(r, verdict, o));
          expect(planCors(r, verdict, o)).toEqual(referencePlan(r, verdict, o));
        },
      ),
      { numRuns: 3000 },
    );
  });

  it('reflectableHeaders equals split, trim and filter, and never reflects AMP-Same-Origin or *', () => {
    fc.assert(
      fc.property(requestHeaders, (value) => {
        const names = reflectableHeaders(value);
        expect(names).toEqual(referenceReflectable(value));
        for (const name of names ?? []) expect(['*', 'amp-same-origin']).not.toContain(name.toLowerCase());
      }),
      { numRuns: 3000 },
    );
  });

  it('a value that is already the joined list is sent as it is; anything else is rebuilt', () => {
    const o = normalizeCorsOptions();
    const allowed: Verdict = { allowed: true, origin: CACHE_ORIGIN, via: 'cache', reason: 'cache-origin' };
    const allowHeaders = (requested: string) =>
      planCors({ method: 'OPTIONS', origin: CACHE_ORIGIN, requestMethod: 'POST', requestHeaders: requested }, allowed, o).headers.find(
        ([name]) => name === 'access-control-allow-headers',
      )?.[1];
    expect(allowHeaders('content-type, x-a')).toBe('content-type, x-a');
    expect(allowHeaders(' content-type ,x-a,')).toBe('content-type, x-a');
    expect(allowHeaders('content-type, AMP-Same-Origin, x-a')).toBe('content-type, x-a');
    expect(allowHeaders('*, amp-same-origin')).toBeUndefined();
    expect(allowHeaders('content-type,\r\nx-a')).toBe('content-type, x-a');
    expect(allowHeaders('content-type, x\r\na')).toBeUndefined();
  });
});

describe('shared header pairs cannot carry one request into the next', () => {
  it("a handler that tries to rewrite a plan's shared pairs fails, and the next plan is unchanged", () => {
    const o = normalizeCorsOptions({ maxAge: 600, allowedHeaders: ['Content-Type'] });
    const allowed: Verdict = { allowed: true, origin: CACHE_ORIGIN, via: 'cache', reason: 'cache-origin' };
    const preflight: CorsRequest = { method: 'OPTIONS', origin: CACHE_ORIGIN, requestMethod: 'POST' };
    const first = planCors(preflight, allowed, o);
    const before = structuredClone(first.headers);
    for (const pair of first.headers.slice(1)) {
      expect(() => {
        (pair as unknown as string[])[1] = 'https://evil.example';
      }).toThrow(TypeError);
    }
    const actual = planCors({ method: 'GET', origin: CACHE_ORIGIN }, allowed, o);
    for (const pair of actual.headers.slice(1)) expect(Object.isFrozen(pair)).toBe(true);
    expect(planCors(preflight, allowed, o).headers).toEqual(before);
  });

  it("a verifier's origin with CR/LF, or outside visible ASCII, is never sent, however often the options were used", () => {
    const o = normalizeCorsOptions();
    // (Space and tab are valid header values: the last hostile origin is sent as it is, as any runtime accepts it.)
    for (const origin of hostile.slice(0, 4)) {
      for (const method of ['GET', 'OPTIONS']) {
        const r: CorsRequest = { method, origin, requestMethod: 'POST' };
        const plan = planCors(r, { allowed: true, origin, via: 'cache', reason: 'cache-origin' }, o);
        expect(plan.kind).toBe('reject');
        expect(plan.body).toContain('malformed');
      }
    }
  });
});

describe('Vary of a frozen name list, joined once', () => {
  it('equals the Vary of the same names in a list that is not frozen, however often asked', () => {
    const name = fc.constantFrom('Origin', 'origin', ' Origin ', '', ' ', '*', 'Access-Control-Request-Headers', 'AMP-Email-Sender');
    fc.assert(
      fc.property(fc.array(name, { maxLength: 4 }), fc.constantFrom(undefined, null, ''), (names, existing) => {
        const frozen = Object.freeze([...names]);
        const expected = appendVary(existing, [...names]);
        expect(appendVary(existing, frozen)).toBe(expected);
        expect(appendVary(existing, frozen)).toBe(expected);
        // An existing Vary is never skipped by the frozen path.
        expect(appendVary('Accept-Encoding', frozen)).toBe(appendVary('Accept-Encoding', [...names]));
      }),
      { numRuns: 500 },
    );
  });
});
