// Two ampCors policies on one request (attacker's review, session 15: helper-63): core's nested-policies.ts, the
// names an inner policy removes and which layer decided a request. The adapters' behaviour is tested over HTTP in
// test/security/attacks-session15-adapters4-nested-policies.test.ts; these tests pin the rule itself.
import { IncomingMessage, ServerResponse } from 'node:http';
import { Socket } from 'node:net';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  applyHeadersAtomically,
  clearEarlierCorsHeaders,
  CORS_RESPONSE_HEADERS,
  type CorsPlan,
  type CorsRequest,
  earlierGrantLeft,
  grantChangedSince,
  InnermostDecisions,
  NO_CORS_HEADERS,
  nodeResponseIn,
  normalizeCorsOptions,
  pairsOverUnnoted,
  planCors,
  removeEarlierCorsHeaders,
} from '@ampcors/core/adapter';
import { createVerifier } from '@ampcors/core';

/** A header map with Node's removeHeader (names case-insensitive, as Node's). */
class Headers {
  readonly map = new Map<string, string>();
  constructor(entries: ReadonlyArray<readonly [string, string]>) {
    for (const [name, value] of entries) this.map.set(name.toLowerCase(), value);
  }
  removeHeader(name: string): void {
    this.map.delete(name.toLowerCase());
  }
}

const PARTNER = 'https://partner.example';
/**
 * The headers that grant by themselves (core's CORS_GRANTS, written out again: a test does not trust the list it
 * checks). AMP for Email v2's allow is `AMP-Email-Allow-Sender` alone (attacker's review, session 17: helper-97).
 */
const GRANTS = ['access-control-allow-origin', 'access-control-allow-credentials', 'amp-access-control-allow-source-origin', 'amp-email-allow-sender'];
/** Every header any plan of a wide-open policy sets, for an allowed preflight and an allowed actual request with the source origin. */
function everyPlanHeader(): Set<string> {
  const options = normalizeCorsOptions({
    exposedHeaders: ['X-Out'],
    legacySourceOriginHeader: true,
    maxAge: 60,
    privateNetworkAccess: true,
    allowedHeaders: ['X-Custom'],
    email: { senders: ['news@partner.example'] },
  });
  const verifier = createVerifier({ publishers: ['partner.example'] });
  const names = new Set<string>();
  const requests: CorsRequest[] = [
    { method: 'GET', origin: PARTNER, sourceOrigin: PARTNER },
    { method: 'OPTIONS', origin: PARTNER, requestMethod: 'PUT', requestHeaders: 'x-custom', requestPrivateNetwork: 'true' },
    { method: 'POST', emailSender: 'news@partner.example' },
  ];
  for (const request of requests) {
    const verdict = verifier.verify(request.origin ?? null, { sourceOrigin: request.sourceOrigin ?? null });
    const plan: CorsPlan = planCors(request, verdict as never, options);
    for (const [name] of plan.headers) names.add(name);
  }
  return names;
}

describe('removeEarlierCorsHeaders', () => {
  it('names every header that lets a page read the answer or send a request, as plans name them (lower case)', () => {
    for (const name of CORS_RESPONSE_HEADERS) expect(name).toBe(name.toLowerCase());
    // Every CORS header a plan can set is on the list (content-type of a 403 is not a CORS header).
    const planned = [...everyPlanHeader()].filter((name) => name !== 'content-type');
    expect(planned.length).toBeGreaterThanOrEqual(8);
    for (const name of planned) expect(CORS_RESPONSE_HEADERS).toContain(name);
    expect(CORS_RESPONSE_HEADERS).not.toContain('vary');
    expect(Object.isFrozen(CORS_RESPONSE_HEADERS)).toBe(true);
  });

  it("removes each listed header the inner plan does not set, keeps the plan's own, Vary and every other header", () => {
    const earlier = CORS_RESPONSE_HEADERS.map((name) => [name, 'outer'] as const);
    const target = new Headers([...earlier, ['vary', 'Origin'], ['x-app', '1'], ['Content-Type', 'text/plain']]);
    const inner: ReadonlyArray<readonly [string, string]> = [
      ['access-control-allow-origin', PARTNER],
      ['access-control-expose-headers', 'AMP-Redirect-To'],
    ];
    for (const [name, value] of inner) target.map.set(name, value);
    removeEarlierCorsHeaders(target, inner);
    expect(Object.fromEntries(target.map)).toEqual({
      'access-control-allow-origin': PARTNER,
      'access-control-expose-headers': 'AMP-Redirect-To',
      vary: 'Origin',
      'x-app': '1',
      'content-type': 'text/plain',
    });
  });

  it('with no header (a failure, a denial): removes every CORS header, whatever the case it was set in', () => {
    const target = new Headers([...CORS_RESPONSE_HEADERS.map((name) => [name.toUpperCase(), 'outer'] as const), ['vary', 'Origin']]);
    removeEarlierCorsHeaders(target, NO_CORS_HEADERS);
    expect(Object.fromEntries(target.map)).toEqual({ vary: 'Origin' });
    expect(Object.isFrozen(NO_CORS_HEADERS)).toBe(true);
  });
});

describe('InnermostDecisions', () => {
  it('a request one policy decided is never overruled, and nothing is looked up until a request is decided twice', () => {
    const decisions = new InnermostDecisions<object>();
    const request = {};
    expect(decisions.overruled(request, {})).toBe(false);
  });

  it('two layers: the inner one (noted) decides, the outer one (never noted: the first) is overruled on that request only', () => {
    const decisions = new InnermostDecisions<object>();
    const [outer, inner] = [{}, {}];
    const [nested, other] = [{}, {}];
    decisions.decidesAgain(nested, inner);
    expect(decisions.overruled(nested, outer)).toBe(true);
    expect(decisions.overruled(nested, inner)).toBe(false);
    // Another request (outside the inner policy's path) is the outer one's.
    expect(decisions.overruled(other, outer)).toBe(false);
  });

  it('three layers: only the innermost writes; the same policy used twice is never overruled by itself', () => {
    const decisions = new InnermostDecisions<object>();
    const [outer, middle, inner] = [{}, {}, {}];
    const request = {};
    decisions.decidesAgain(request, middle);
    decisions.decidesAgain(request, inner);
    expect([decisions.overruled(request, inner), decisions.overruled(request, middle), decisions.overruled(request, outer)]).toEqual([false, true, true]);
    const again = {};
    decisions.decidesAgain(again, outer);
    expect(decisions.overruled(again, outer)).toBe(false);
  });

  it('instances are independent (one per adapter)', () => {
    const [a, b] = [new InnermostDecisions<object>(), new InnermostDecisions<object>()];
    const request = {};
    a.decidesAgain(request, {});
    expect(b.overruled(request, {})).toBe(false);
    expect(a.overruled(request, {})).toBe(true);
  });
});

// Attacker's review, session 16 (helper-74): the layers in different frameworks on one Node request share no verdict,
// only the Node response's header store (nested-policies.ts, 4.). Over HTTP:
// test/security/attacks-session16-adapters-cross-framework*.test.ts.

/** A fresh Node response (not sent), as every Node framework hands its layers. */
function nodeResponse(): ServerResponse {
  return new ServerResponse(new IncomingMessage(new Socket()));
}

/** The plans an inner policy makes for `PARTNER`: allowed with and without credentials, with the source origin, a preflight, denied (omit, reject), same-origin. */
function innerPlans(): ReadonlyArray<readonly [string, CorsPlan]> {
  const allowing = createVerifier({ publishers: ['partner.example'] });
  const denying = createVerifier({ publishers: ['example.com'] });
  const plan = (request: CorsRequest, verifier: typeof allowing, options: Parameters<typeof normalizeCorsOptions>[0]) =>
    planCors(request, verifier.verify(request.origin ?? null, { sourceOrigin: request.sourceOrigin ?? null }) as never, normalizeCorsOptions(options));
  const get: CorsRequest = { method: 'GET', origin: PARTNER };
  const email: CorsRequest = { method: 'GET', origin: 'https://mail.google.com' };
  return [
    ['allowed, credentials', plan(get, allowing, {})],
    ['allowed, no credentials', plan(get, allowing, { credentials: false })],
    ['allowed with the source origin, no credentials', plan({ ...get, sourceOrigin: PARTNER }, allowing, { credentials: false })],
    ['preflight allowed, no credentials', plan({ method: 'OPTIONS', origin: PARTNER, requestMethod: 'PUT' }, allowing, { credentials: false, maxAge: 5 })],
    ['denied, omit', plan(get, denying, { onDenied: 'omit' })],
    ['denied, reject', plan(get, denying, {})],
    ['same-origin with the source origin', plan({ method: 'GET', sourceOrigin: PARTNER }, allowing, {})],
    ['same-origin, the source origin answered', plan({ method: 'GET', sourceOrigin: PARTNER }, allowing, { legacySourceOriginHeader: true })],
    ['AMP for Email v2, sender trusted', plan({ ...email, emailSender: 'news@partner.example' }, allowing, { email: { senders: ['news@partner.example'] } })],
    ['AMP for Email v2, sender denied', plan({ ...email, emailSender: 'news@partner.example' }, allowing, { email: { senders: ['admin@partner.example'] } })],
    ['AMP for Email v1, sender trusted', plan({ ...email, sourceOrigin: 'news@partner.example' }, allowing, { email: { senders: ['news@partner.example'] } })],
  ];
}

describe('an earlier layer of another framework on the same Node response (nested-policies.ts, 4.)', () => {
  const earlierHeaders = fc.uniqueArray(
    fc.tuple(fc.constantFrom(...CORS_RESPONSE_HEADERS), fc.constantFrom('https://outer.example', 'true', '*', 'X-Secret')),
    { selector: ([name]) => name, maxLength: CORS_RESPONSE_HEADERS.length },
  );

  it.each(innerPlans())(
    'an inner plan (%s) applied as Express and Koa apply it: no grant but its own; after an earlier grant, exactly its own CORS headers',
    (_what, plan) => {
      const own = new Map(plan.headers.filter(([name]) => CORS_RESPONSE_HEADERS.includes(name)));
      fc.assert(
        fc.property(earlierHeaders, (earlier) => {
          const res = nodeResponse();
          res.setHeader('x-powered-by', 'Express');
          for (const [name, value] of earlier) res.setHeader(name, value);
          const replaced = applyHeadersAtomically(res, plan.headers, plan.vary);
          if (replaced || earlierGrantLeft(res, plan.headers)) removeEarlierCorsHeaders(res, plan.headers);
          const left = new Map(CORS_RESPONSE_HEADERS.filter((name) => res.hasHeader(name)).map((name) => [name, String(res.getHeader(name))]));
          // The grants are the plan's, value for value: none of the earlier layer's.
          for (const name of GRANTS) expect(left.get(name), name).toBe(own.get(name));
          // An earlier grant is gone whole: only the plan's CORS headers remain.
          if (earlier.some(([name]) => GRANTS.includes(name))) expect(left).toEqual(own);
          expect(res.getHeader('x-powered-by')).toBe('Express');
        }),
      );
    },
  );

  it('applyHeadersAtomically tells whether one of the headers it set had a value before', () => {
    const [, plan] = innerPlans()[0] as readonly [string, CorsPlan];
    const fresh = nodeResponse();
    expect(applyHeadersAtomically(fresh, plan.headers, plan.vary)).toBe(false);
    const earlier = nodeResponse();
    earlier.setHeader('Access-Control-Allow-Origin', 'https://outer.example');
    expect(applyHeadersAtomically(earlier, plan.headers, plan.vary)).toBe(true);
    expect(earlier.getHeader('access-control-allow-origin')).toBe(PARTNER);
  });

  it('grantChangedSince: a later layer that took back, replaced or added a grant (any of the four) decided', () => {
    for (const [what, plan] of innerPlans()) {
      const res = nodeResponse();
      applyHeadersAtomically(res, plan.headers, plan.vary);
      expect(grantChangedSince(res, plan.headers), what).toBe(false);
      for (const [name, change] of GRANTS.flatMap((grant) => [
        [grant, 'remove'] as const,
        [grant, 'https://other.example'] as const,
        [grant, 'true'] as const,
      ])) {
        const later = nodeResponse();
        applyHeadersAtomically(later, plan.headers, plan.vary);
        const before = later.getHeader(name);
        if (change === 'remove') later.removeHeader(name);
        else later.setHeader(name, change);
        expect(grantChangedSince(later, plan.headers), `${what}: ${name} ${change}`).toBe(later.getHeader(name) !== before);
      }
    }
  });

  it('clearEarlierCorsHeaders: an earlier grant (any of the four) takes every CORS header with it, Vary and the rest kept', () => {
    for (const grant of GRANTS) {
      const res = nodeResponse();
      for (const name of CORS_RESPONSE_HEADERS) if (name !== grant) res.setHeader(name, 'outer');
      res.setHeader(grant, 'true');
      res.setHeader('vary', 'Origin');
      res.setHeader('x-powered-by', 'Express');
      clearEarlierCorsHeaders(res);
      expect(res.getHeaderNames().sort()).toEqual(['vary', 'x-powered-by']);
    }
  });

  it('clearEarlierCorsHeaders: without a grant, the other CORS headers stay (Access-Control-Expose-Headers alone widens nothing)', () => {
    const res = nodeResponse();
    for (const name of CORS_RESPONSE_HEADERS) if (!GRANTS.includes(name)) res.setHeader(name, 'outer');
    const before = res.getHeaderNames().sort();
    clearEarlierCorsHeaders(res);
    expect(res.getHeaderNames().sort()).toEqual(before);
  });

  it('pairsOverUnnoted: a rebuilt Response keeping only an AMP grant (no Vary) is met as an answer of ampcors: no grant beyond the plan', () => {
    for (const grant of GRANTS) {
      const headers = new globalThis.Headers({ [grant]: 'news@partner.example', 'access-control-expose-headers': 'X-Secret' });
      expect(pairsOverUnnoted(headers, [['access-control-allow-origin', PARTNER]]), grant).toEqual([]);
      expect([...headers.keys()], grant).toEqual([]);
    }
    // The usual handler's Response (no grant, no Vary: Origin): the plan as it is.
    const plain = new globalThis.Headers({ 'content-type': 'text/plain' });
    const pairs = [['access-control-allow-origin', PARTNER]] as const;
    expect(pairsOverUnnoted(plain, pairs)).toBe(pairs);
  });

  it('clearEarlierCorsHeaders never throws, its headers sent or not a real response', () => {
    const res = nodeResponse();
    res.setHeader('access-control-allow-origin', '*');
    Object.defineProperty(res, 'headersSent', { value: true });
    expect(() => clearEarlierCorsHeaders(res)).not.toThrow();
    const refusing = {
      headersSent: false,
      getHeader: () => 'x',
      removeHeader: () => {
        throw new Error('sent');
      },
    };
    expect(() => clearEarlierCorsHeaders(refusing)).not.toThrow();
  });

  it("nodeResponseIn: @hono/node-server's { incoming, outgoing } gives the Node response; anything else nothing, and nothing is called", () => {
    const outgoing = nodeResponse();
    expect(nodeResponseIn({ incoming: outgoing.req, outgoing })).toBe(outgoing);
    const sent = nodeResponse();
    Object.defineProperty(sent, 'headersSent', { value: true });
    const calls: string[] = [];
    // A Worker's binding answers every property with a function (an RPC stub).
    const stub = new Proxy(() => undefined, {
      get:
        (_target, name) =>
        (...args: unknown[]) =>
          void calls.push(`${String(name)}(${args.join()})`),
    });
    const throwing = Object.defineProperty({}, 'outgoing', {
      get() {
        throw new Error('no');
      },
    });
    for (const carrier of [
      undefined,
      null,
      'outgoing',
      {},
      { outgoing: null },
      { outgoing: sent },
      { outgoing: stub },
      stub,
      throwing,
      { outgoing: { getHeader() {}, removeHeader() {} } },
    ])
      expect(nodeResponseIn(carrier)).toBeUndefined();
    expect(calls).toEqual([]);
  });
});
