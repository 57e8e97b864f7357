/**
 * A handler written by hand on `check` answers exactly as `withAmpCors`
 * (issue #15): random requests — hostile, forged, malformed Origins,
 * preflights, Sec-Fetch-Site and AMP-Same-Origin forgeries, hostile
 * `__amp_source_origin`, AMP for Email senders — against random
 * configurations (onDenied, preflightContinue, the public mode, AMP for
 * Email, synchronous, asynchronous, throwing and rejecting verifiers, an
 * onError hook) give the same status, headers and body both ways. From the
 * attacker's side, every answer also obeys the rules neither path may break:
 * an Access-Control-Allow-Origin is the request's own Origin and comes only
 * with an allowing verdict (or, in the public mode only, `*` without credentials), never after a
 * failure; a preflight never reaches the handler unless preflightContinue
 * lets one through (an allowed one, or any under onDenied: 'omit'; a request
 * marked Sec-Fetch-Site: same-origin is no preflight); `Vary` names `Origin` whenever the answer
 * depends on it.
 */
import { cacheOrigin, createVerifier } from '@ampcors/core';
import { ampCorsOf, createAmpCors, type FetchAmpCorsOptions, withAmpCors } from '@ampcors/fetch';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';

const PUBLISHER = 'example.com';
const CACHE = cacheOrigin(PUBLISHER);
const honest = createVerifier({ publishers: [PUBLISHER] });

const origins = fc.constantFrom(
  undefined,
  CACHE,
  'https://example.com',
  'https://www.example.com',
  'https://evil-com.cdn.ampproject.org',
  'https://example-com.cdn.ampproject.org.evil.example',
  'https://evil.example',
  'http://example.com',
  'https://EXAMPLE.com',
  'null',
  '',
  'https://example.com, https://evil.example',
  'https://api.example.net',
  'https://xn--example-com.cdn.ampproject.org',
);
const headerValues = fc.constantFrom(
  undefined,
  'true',
  'false',
  'content-type',
  'x-custom, amp-same-origin',
  '*',
  'POST',
  'GET',
  'same-origin',
  'same-site',
  'cross-site',
);
const sources = fc.constantFrom(undefined, 'https://example.com', 'https://evil.example', 'https%3A%2F%2Fexample.com', '');

interface RequestSpec {
  method: string;
  origin: string | undefined;
  requestMethod: string | undefined;
  requestHeaders: string | undefined;
  secFetchSite: string | undefined;
  ampSameOrigin: string | undefined;
  emailSender: string | undefined;
  source: string | undefined;
}
const requests: fc.Arbitrary<RequestSpec> = fc.record({
  method: fc.constantFrom('GET', 'POST', 'OPTIONS', 'PUT', 'DELETE', 'HEAD', 'options'),
  origin: origins,
  requestMethod: headerValues,
  requestHeaders: headerValues,
  secFetchSite: headerValues,
  ampSameOrigin: headerValues,
  emailSender: fc.constantFrom(undefined, 'news@example.com', 'attacker@evil.example', 'not an address'),
  source: sources,
});

function requestOf(spec: RequestSpec): Request {
  const headers: Record<string, string> = {};
  const set = (name: string, value: string | undefined) => {
    if (value !== undefined) headers[name] = value;
  };
  set('Origin', spec.origin);
  set('Access-Control-Request-Method', spec.requestMethod);
  set('Access-Control-Request-Headers', spec.requestHeaders);
  set('Sec-Fetch-Site', spec.secFetchSite);
  set('AMP-Same-Origin', spec.ampSameOrigin);
  set('AMP-Email-Sender', spec.emailSender);
  const query = spec.source === undefined ? '' : `?__amp_source_origin=${spec.source}`;
  return new Request(`https://api.example.net/items${query}`, { method: spec.method, headers });
}

type VerifierKind = 'rules' | 'sync' | 'async' | 'throws' | 'rejects';
const verifierOf = (kind: Exclude<VerifierKind, 'rules'>) =>
  ({
    sync: { verify: honest.verify.bind(honest) },
    async: { verify: async (...args: Parameters<typeof honest.verify>) => honest.verify(...args) },
    throws: {
      verify: () => {
        throw new Error('registry down');
      },
    },
    rejects: { verify: async () => Promise.reject(new Error('registry down')) },
  })[kind];

const configs: fc.Arbitrary<FetchAmpCorsOptions> = fc
  .record({
    source: fc.constantFrom<VerifierKind | 'public'>('rules', 'sync', 'async', 'throws', 'rejects', 'public'),
    onDenied: fc.constantFrom(undefined, 'reject', 'omit'),
    preflightContinue: fc.constantFrom(undefined, true),
    email: fc.boolean(),
    onError: fc.boolean(),
    credentials: fc.constantFrom(undefined, false),
  })
  .map(({ source, onDenied, preflightContinue, email, onError, credentials }) => {
    if (source === 'public') return {};
    return {
      ...(source === 'rules' ? { publishers: [PUBLISHER] } : { verifier: verifierOf(source) }),
      ...(onDenied !== undefined && { onDenied }),
      ...(preflightContinue !== undefined && { preflightContinue }),
      ...(credentials !== undefined && { credentials }),
      ...(email && { email: { senders: ['news@example.com'] } }),
      ...(onError && { onError: () => new Response('try later', { status: 503, headers: { 'Retry-After': '1' } }) }),
    } as FetchAmpCorsOptions;
  });

/** The handler both paths run: it says it ran, with the verdict it saw, and sets its own Vary. */
const body = (reason: string | undefined) => new Response(`handler ran: ${reason}`, { status: 200, headers: { Vary: 'Accept-Encoding' } });

interface Seen {
  status: number;
  headers: [string, string][];
  body: string;
}
const seen = async (response: Response): Promise<Seen> => ({ status: response.status, headers: [...response.headers], body: await response.text() });

describe('check by hand and withAmpCors', () => {
  it('give the same status, headers and body for every request, and break no CORS rule', async () => {
    await fc.assert(
      fc.asyncProperty(configs, requests, async (options, spec) => {
        const cors = createAmpCors(options);
        const wrapped = withAmpCors((request) => body(ampCorsOf(request)?.verdict.reason), cors);
        const byHand = async (request: Request): Promise<Response> => {
          const check = await cors.check(request);
          if (check.response) return check.response;
          return check.apply(body(check.verdict.reason));
        };
        const hand = await seen(await byHand(requestOf(spec)));
        expect(hand).toEqual(await seen(await wrapped(requestOf(spec))));

        // The rules, from the attacker's side.
        const headers = new Map(hand.headers);
        const allowOrigin = headers.get('access-control-allow-origin');
        const ran = hand.body.startsWith('handler ran: ');
        const verdict = (await cors.check(requestOf(spec))).verdict;
        const isPreflight = spec.method.toUpperCase() === 'OPTIONS' && !!spec.origin && !!spec.requestMethod;
        if (allowOrigin !== undefined) {
          if (allowOrigin === '*') {
            // The public mode's literal `*` (sent as cors() sends it, even without Origin): never with credentials.
            expect(headers.get('access-control-allow-credentials')).toBeUndefined();
            expect(options).toEqual({});
          } else {
            expect(allowOrigin).toBe(spec.origin);
            expect(verdict?.allowed).toBe(true);
          }
          expect(hand.status).not.toBe(500);
        }
        if (verdict === undefined) {
          expect(ran).toBe(false);
          expect(headers.get('vary')).toBe('Origin');
          expect([...headers.keys()].filter((name) => name.startsWith('access-control-'))).toEqual([]);
        }
        if (isPreflight && ran && spec.secFetchSite !== 'same-origin') {
          expect(options.preflightContinue).toBe(true);
          if (options.onDenied !== 'omit') expect(allowOrigin).toBeDefined();
        }
        if (allowOrigin !== undefined && allowOrigin !== '*') expect(headers.get('vary')?.split(', ')).toContain('Origin');
        if (spec.origin !== undefined && spec.origin !== '' && verdict?.allowed !== true) expect(allowOrigin).toBeUndefined();
      }),
      { numRuns: 400 },
    );
  });
});
