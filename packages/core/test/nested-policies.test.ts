// Two ampCors policies on one request (attacker's review, session 15: helper-63): core's nested-policies.ts, the
// names an inner policy removes and which layer decided a request. The adapters' behaviour is tested over HTTP in
// test/security/attacks-session15-adapters4-nested-policies.test.ts; these tests pin the rule itself.
import { describe, expect, it } from 'vitest';
import {
  CORS_RESPONSE_HEADERS,
  type CorsPlan,
  type CorsRequest,
  InnermostDecisions,
  NO_CORS_HEADERS,
  normalizeCorsOptions,
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
