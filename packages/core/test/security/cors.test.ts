// The CORS response plan, its options, the policy and the drop-in origin
// option at their edges (issue #6, mutation testing): every option refusal
// with its message, every branch of planCors with the exact headers, Vary
// and status it produces, and the order in which verdict sources decide.
import { AMP_REDIRECT_TO, ampRedirectTo, CACHES, createVerifier, DEFAULT_METHODS, type Verdict } from '@ampcors/core';
import {
  AMP_SOURCE_ORIGIN_HEADER,
  appendVary,
  compileOriginOption,
  type CorsPlan,
  type CorsRequest,
  createCorsPolicy,
  isPreflight,
  judgeWithOriginMatcher,
  type NormalizedCorsOptions,
  normalizeCorsOptions,
  planCors,
  reflectableHeaders,
  sourceOriginOfUrl,
  verifyContextOf,
} from '@ampcors/core/adapter';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { expectError } from './ampcors-error.js';

const CACHE = 'https://example-com.cdn.ampproject.org';
const verifier = createVerifier({ publishers: ['example.com'] });
const defaults = normalizeCorsOptions();
const options = (o: Parameters<typeof normalizeCorsOptions>[0]) => normalizeCorsOptions(o);
const allowed = (origin: string | null, extra: Partial<Verdict> = {}): Verdict =>
  ({ allowed: true, origin, via: 'cache', reason: 'cache-origin', ...extra }) as Verdict;
const denied = (origin: string | null, reason = 'unknown-origin'): Verdict => ({ allowed: false, origin, reason, detail: 'x' }) as Verdict;

function plan(request: CorsRequest, opts: NormalizedCorsOptions = defaults): CorsPlan {
  return planCors(request, verifier.verify(request.origin, verifyContextOf(request, opts)), opts);
}

describe('normalizeCorsOptions', () => {
  it('defaults', () => {
    expect(normalizeCorsOptions()).toEqual({
      credentials: true,
      methods: DEFAULT_METHODS,
      allowedHeaders: null,
      exposedHeaders: [AMP_REDIRECT_TO],
      maxAge: null,
      preflightStatus: 204,
      preflightContinue: false,
      privateNetworkAccess: false,
      onDenied: 'reject',
      emailSenders: null,
      emailClientOrigins: null,
      legacySourceOriginHeader: false,
    });
    expect(DEFAULT_METHODS).toBe('GET,HEAD,PUT,PATCH,POST,DELETE');
  });
  it('token lists: strings split on commas, arrays, blanks skipped, whitespace trimmed', () => {
    expect(options({ methods: ' GET , ,POST ' }).methods).toBe('GET,POST');
    expect(options({ methods: ['PUT', ' DELETE'] }).methods).toBe('PUT,DELETE');
    expect(options({ allowedHeaders: 'X-A, X-B' }).allowedHeaders).toEqual(['X-A', 'X-B']);
    expect(options({ allowedHeaders: [] }).allowedHeaders).toEqual([]);
    expect(options({ exposedHeaders: 'X-Total, amp-redirect-to, x-total' }).exposedHeaders).toEqual([AMP_REDIRECT_TO, 'X-Total']);
  });
  it('every other value is kept as given', () => {
    expect(
      options({
        credentials: false,
        maxAge: 0,
        preflightStatus: 200,
        preflightContinue: true,
        privateNetworkAccess: true,
        onDenied: 'omit',
        legacySourceOriginHeader: true,
      }),
    ).toMatchObject({
      legacySourceOriginHeader: true,
      credentials: false,
      maxAge: 0,
      preflightStatus: 200,
      preflightContinue: true,
      privateNetworkAccess: true,
      onDenied: 'omit',
    });
    expect(options({ preflightStatus: 299, maxAge: 86400 })).toMatchObject({ preflightStatus: 299, maxAge: 86400 });
  });
  const refusals: Array<[string, unknown, string, string]> = [
    ['a non-object', 'x', 'invalid-option', 'CORS options must be an object'],
    ['null', null, 'invalid-option', 'CORS options must be an object'],
    ['methods as a number', { methods: 5 }, 'invalid-option', 'methods must be a string or an array of strings'],
    ['a method that is not a string', { methods: ['GET', 5] }, 'invalid-option', 'methods: 5 is not a string'],
    ['a method that is not a token', { methods: 'GE T' }, 'invalid-option', 'methods: "GE T" is not an HTTP token'],
    ['a header with a colon', { allowedHeaders: ['X:Y'] }, 'invalid-option', 'allowedHeaders: "X:Y" is not an HTTP token'],
    [
      'AMP-Same-Origin allowed',
      { allowedHeaders: 'Content-Type, amp-same-origin' },
      'unsafe-configuration',
      'allowedHeaders must not list AMP-Same-Origin: a cross-origin page could then claim to be same-origin',
    ],
    ['an exposed header that is not a token', { exposedHeaders: ['a b'] }, 'invalid-option', 'exposedHeaders: "a b" is not an HTTP token'],
    ['a negative maxAge', { maxAge: -1 }, 'invalid-option', 'maxAge must be a non-negative whole number of seconds'],
    ['a fractional maxAge', { maxAge: 1.5 }, 'invalid-option', 'maxAge must be a non-negative whole number of seconds'],
    ['a string maxAge', { maxAge: '5' }, 'invalid-option', 'maxAge must be a non-negative whole number of seconds'],
    ['status 199', { preflightStatus: 199 }, 'invalid-option', 'preflightStatus must be a 2xx status'],
    ['status 300', { preflightStatus: 300 }, 'invalid-option', 'preflightStatus must be a 2xx status'],
    ['status 204.5', { preflightStatus: 204.5 }, 'invalid-option', 'preflightStatus must be a 2xx status'],
    ['status "204"', { preflightStatus: '204' }, 'invalid-option', 'preflightStatus must be a 2xx status'],
    ['onDenied "drop"', { onDenied: 'drop' }, 'invalid-option', "onDenied must be 'reject' or 'omit'"],
    ['credentials "yes"', { credentials: 'yes' }, 'invalid-option', 'credentials must be true or false'],
    ['preflightContinue 1', { preflightContinue: 1 }, 'invalid-option', 'preflightContinue must be true or false'],
    ['privateNetworkAccess "true"', { privateNetworkAccess: 'true' }, 'invalid-option', 'privateNetworkAccess must be true or false'],
    ['legacySourceOriginHeader 1', { legacySourceOriginHeader: 1 }, 'invalid-option', 'legacySourceOriginHeader must be true or false'],
    ['email without senders', { email: {} }, 'invalid-option', 'email must be { senders: string[], clientOrigins?: string[] }'],
    ['email null', { email: null }, 'invalid-option', 'email must be { senders: string[], clientOrigins?: string[] }'],
    ['a sender without @', { email: { senders: ['nobody'] } }, 'invalid-option', 'email.senders: "nobody" is not an email address'],
    ['a sender with a comma', { email: { senders: ['a,b@x.com'] } }, 'invalid-option', 'email.senders: "a,b@x.com" is not an email address'],
    ['a non-string sender', { email: { senders: [7] } }, 'invalid-option', 'email.senders: "7" is not an email address'],
  ];
  it.each(refusals)('refuses %s', (_, given, code, message) => {
    expectError(() => normalizeCorsOptions(given as never), code, message);
  });
  it('quotes at most 80 characters of a bad token or sender', () => {
    const token = `${'x'.repeat(100)} y`;
    expectError(() => options({ methods: [token] }), 'invalid-option', `methods: ${JSON.stringify(token.slice(0, 80))} is not an HTTP token`);
    const sender = `${'s'.repeat(100)} @example.com`;
    expectError(
      () => options({ email: { senders: [sender] } }),
      'invalid-option',
      `email.senders: ${JSON.stringify(sender.slice(0, 80))} is not an email address`,
    );
  });
  it('email senders: at most 320 characters, stored lowercase', () => {
    const longest = `${'a'.repeat(320 - '@example.com'.length)}@example.com`;
    expect(longest).toHaveLength(320);
    expect(options({ email: { senders: [longest, 'Sender@Example.COM'] } }).emailSenders).toEqual(new Set([longest, 'sender@example.com']));
    expectError(() => options({ email: { senders: [`a${longest}`] } }), 'invalid-option', /is not an email address$/);
  });
});

describe('sourceOriginOfUrl', () => {
  it('reads the query parameter, decoded', () => {
    expect(sourceOriginOfUrl('/api?__amp_source_origin=https%3A%2F%2Fexample.com')).toBe('https://example.com');
    expect(sourceOriginOfUrl('/api?a=1&__amp_source_origin=https://example.com&b=2')).toBe('https://example.com');
  });
  it('a query starting the text counts; text without "?" has no query', () => {
    expect(sourceOriginOfUrl('?__amp_source_origin=https://example.com')).toBe('https://example.com');
    expect(sourceOriginOfUrl('__amp_source_origin=https://evil.com')).toBeNull();
  });
  it('null when absent, including in the path or only in the fragment', () => {
    expect(sourceOriginOfUrl('/api')).toBeNull();
    expect(sourceOriginOfUrl('/__amp_source_origin/x?a=1')).toBeNull();
    expect(sourceOriginOfUrl('/api?a=1#__amp_source_origin=https://evil.com')).toBeNull();
    expect(sourceOriginOfUrl('/api?x__amp_source_origin=1')).toBeNull();
  });
  it('stops at the fragment, and joins repeated values so that no verifier accepts them', () => {
    expect(sourceOriginOfUrl('/api?__amp_source_origin=https://example.com#__amp_source_origin=https://evil.com')).toBe('https://example.com');
    expect(sourceOriginOfUrl('/api?__amp_source_origin=a&__amp_source_origin=b')).toBe('a,b');
    expect(sourceOriginOfUrl('/api?__amp_source_origin=')).toBe('');
  });
});

describe('sourceOriginOfUrl agrees with URL.searchParams', () => {
  /** The reference: the WHATWG URL's query parameters (fragment excluded). */
  const reference = (path: string): string | null => {
    if (!path.includes('?')) return null;
    const values = new URL(path, 'http://host.example').searchParams.getAll('__amp_source_origin');
    return values.length === 0 ? null : values.join(',');
  };
  it.each([
    '/a?__amp_source_origin=https%3A%2F%2Fexample.com',
    '/a?__amp_source_origin=https://example.com&x=1',
    '/a?x=1&__amp_source_origin=a+b',
    '/a?__amp_source_origin=%E2%9C%93',
    '/a?__amp_source_origin=%FF',
    '/a?__amp_source_origin=%zz',
    '/a?__amp_source_origin',
    '/a?__amp_source_origin&__amp_source_origin=x',
    '/a?%5F_amp_source_origin=encoded-name',
    '/a?__amp_source_origi%6E=encoded-end',
    '/a?x%3D1=y&__amp_source_origin=z',
    '/a?__amp_source_origin==x',
    '/a?__amp_source_origin=x=y',
    '/a?__amp_source_originx=1',
    '/a?x__amp_source_origin=1',
    '/a?&&__amp_source_origin=x&&',
    '/a?__amp_source_origin=x#__amp_source_origin=y',
    '/a?=x&__amp_source_origin=',
    '/a?__amp_source_origin=a&__amp_source_origin=b',
    '/a?__AMP_SOURCE_ORIGIN=x',
    '/a?q=%&__amp_source_origin=v',
    '/a?__amp_source_origin=x#frag&more=1',
    '/a?__amp_source_origin#x=1&y',
    '/a?%5F_amp_source_origin=a&__amp_source_origin=b',
  ])('%s', (path) => {
    expect(sourceOriginOfUrl(path)).toBe(reference(path));
  });
});

describe('request helpers', () => {
  it('isPreflight: OPTIONS in any case, with Origin and Access-Control-Request-Method', () => {
    expect(isPreflight({ method: 'options', origin: CACHE, requestMethod: 'POST' })).toBe(true);
    expect(isPreflight({ method: 'OPTIONS', origin: CACHE })).toBe(false);
    expect(isPreflight({ method: 'OPTIONS', requestMethod: 'POST' })).toBe(false);
    expect(isPreflight({ method: 'OPTIONS', origin: '', requestMethod: 'POST' })).toBe(false);
    expect(isPreflight({ method: 'POST', origin: CACHE, requestMethod: 'POST' })).toBe(false);
  });
  it('reflectableHeaders: clean token lists only, at most 2048 characters, never AMP-Same-Origin', () => {
    expect(reflectableHeaders(' Content-Type ,, AMP-Same-Origin, x-a ')).toEqual(['Content-Type', 'x-a']);
    expect(reflectableHeaders('')).toEqual([]);
    expect(reflectableHeaders(null)).toBeNull();
    expect(reflectableHeaders(42 as never)).toBeNull();
    expect(reflectableHeaders('x-a, x b')).toBeNull();
    const longest = `x-${'a'.repeat(2046)}`;
    expect(reflectableHeaders(longest)).toEqual([longest]);
    expect(reflectableHeaders(`${longest}a`)).toBeNull();
  });
  it('verifyContextOf passes AMP-Same-Origin and __amp_source_origin, null when absent', () => {
    expect(verifyContextOf({ method: 'GET' }, defaults)).toEqual({ ampSameOrigin: null, sourceOrigin: null });
    expect(verifyContextOf({ method: 'GET', ampSameOrigin: 'true', sourceOrigin: 'https://example.com' }, defaults)).toEqual({
      ampSameOrigin: 'true',
      sourceOrigin: 'https://example.com',
    });
  });
  it('verifyContextOf with AMP for Email: a v1 sender address is not a source origin; a v2 header leaves it', () => {
    const email = options({ email: { senders: ['a@b.com'] } });
    expect(verifyContextOf({ method: 'GET', sourceOrigin: 'a@b.com' }, email).sourceOrigin).toBeNull();
    expect(verifyContextOf({ method: 'GET', sourceOrigin: 'https://x/a@b.com' }, email).sourceOrigin).toBe('https://x/a@b.com');
    expect(verifyContextOf({ method: 'GET', sourceOrigin: 'a@b.com', emailSender: 'a@b.com' }, email).sourceOrigin).toBe('a@b.com');
    expect(verifyContextOf({ method: 'GET', sourceOrigin: 'a@b.com' }, defaults).sourceOrigin).toBe('a@b.com');
  });
});

describe('planCors: denied', () => {
  it('no Origin: outside CORS, the handler runs with Vary: Origin', () => {
    expect(plan({ method: 'POST' })).toEqual({ kind: 'actual', handled: false, status: 0, body: '', headers: [], vary: ['Origin'] });
    expect(plan({ method: 'POST' }, options({ onDenied: 'omit' }))).toMatchObject({ kind: 'actual', handled: false });
  });
  it('reject: 403 naming the reason, plain text', () => {
    expect(plan({ method: 'POST', origin: 'https://evil.com' })).toEqual({
      kind: 'reject',
      handled: true,
      status: 403,
      body: 'Forbidden: CORS origin denied (unknown-origin)\n',
      headers: [['content-type', 'text/plain; charset=utf-8']],
      vary: ['Origin'],
    });
    expect(plan({ method: 'OPTIONS', origin: 'https://evil.com', requestMethod: 'POST' })).toMatchObject({
      kind: 'reject',
      status: 403,
      vary: ['Origin', 'Access-Control-Request-Headers'],
    });
  });
  it('omit: no CORS headers; a preflight is answered empty unless it continues', () => {
    const omit = options({ onDenied: 'omit' });
    expect(plan({ method: 'POST', origin: 'https://evil.com' }, omit)).toEqual({
      kind: 'actual',
      handled: false,
      status: 0,
      body: '',
      headers: [],
      vary: ['Origin'],
    });
    expect(plan({ method: 'OPTIONS', origin: 'https://evil.com', requestMethod: 'POST' }, omit)).toEqual({
      kind: 'preflight',
      handled: true,
      status: 204,
      body: '',
      headers: [],
      vary: ['Origin', 'Access-Control-Request-Headers'],
    });
    const omitContinue = options({ onDenied: 'omit', preflightContinue: true, preflightStatus: 200 });
    expect(plan({ method: 'OPTIONS', origin: 'https://evil.com', requestMethod: 'POST' }, omitContinue)).toEqual({
      kind: 'preflight',
      handled: false,
      status: 0,
      body: '',
      headers: [],
      vary: ['Origin', 'Access-Control-Request-Headers'],
    });
  });
});

describe('planCors: allowed', () => {
  it('an actual request: echo, credentials, exposed headers, in this order', () => {
    expect(plan({ method: 'GET', origin: CACHE })).toEqual({
      kind: 'actual',
      handled: false,
      status: 0,
      body: '',
      headers: [
        ['access-control-allow-origin', CACHE],
        ['access-control-allow-credentials', 'true'],
        ['access-control-expose-headers', AMP_REDIRECT_TO],
      ],
      vary: ['Origin'],
    });
    expect(plan({ method: 'GET', origin: CACHE }, options({ credentials: false, exposedHeaders: 'X-A' })).headers).toEqual([
      ['access-control-allow-origin', CACHE],
      ['access-control-expose-headers', `${AMP_REDIRECT_TO}, X-A`],
    ]);
  });
  it('a checked __amp_source_origin: no legacy header by default, the same headers as without it (issue 16)', () => {
    const without = plan({ method: 'POST', origin: CACHE }).headers;
    expect(plan({ method: 'POST', origin: CACHE, sourceOrigin: 'https://example.com' }).headers).toEqual(without);
    expect(without).toEqual([
      ['access-control-allow-origin', CACHE],
      ['access-control-allow-credentials', 'true'],
      ['access-control-expose-headers', AMP_REDIRECT_TO],
    ]);
  });
  it('a checked __amp_source_origin with legacySourceOriginHeader: its header, exposed', () => {
    expect(plan({ method: 'POST', origin: CACHE, sourceOrigin: 'https://example.com' }, options({ legacySourceOriginHeader: true })).headers).toEqual([
      ['access-control-allow-origin', CACHE],
      ['access-control-allow-credentials', 'true'],
      ['amp-access-control-allow-source-origin', 'https://example.com'],
      ['access-control-expose-headers', `${AMP_REDIRECT_TO}, ${AMP_SOURCE_ORIGIN_HEADER}`],
    ]);
    // Without a source origin, the option adds nothing.
    expect(plan({ method: 'POST', origin: CACHE }, options({ legacySourceOriginHeader: true })).headers).toEqual(
      plan({ method: 'POST', origin: CACHE }).headers,
    );
  });
  it("attacker: a source origin that is not the publisher's is denied whether or not the legacy header is sent", () => {
    for (const opts of [defaults, options({ legacySourceOriginHeader: true })]) {
      for (const sourceOrigin of ['https://evil.com', 'https://example.com.evil.com', 'https://example.com, https://evil.com', 'null']) {
        const p = plan({ method: 'POST', origin: CACHE, sourceOrigin }, opts);
        expect(p).toMatchObject({ kind: 'reject', status: 403, body: 'Forbidden: CORS origin denied (source-origin-mismatch)\n' });
        expect(p.headers.map(([name]) => name)).not.toContain('amp-access-control-allow-source-origin');
      }
    }
  });
  it('same-origin: no Access-Control-Allow-Origin, credentials or exposed headers', () => {
    expect(plan({ method: 'POST', ampSameOrigin: 'true' }).headers).toEqual([]);
    expect(plan({ method: 'POST', ampSameOrigin: 'true', sourceOrigin: 'https://example.com' }).headers).toEqual([]);
    expect(plan({ method: 'POST', ampSameOrigin: 'true', sourceOrigin: 'https://example.com' }, options({ legacySourceOriginHeader: true })).headers).toEqual([
      ['amp-access-control-allow-source-origin', 'https://example.com'],
    ]);
  });
  it('a preflight: methods, reflected headers, and nothing optional by default', () => {
    expect(plan({ method: 'OPTIONS', origin: CACHE, requestMethod: 'POST', requestHeaders: 'Content-Type, AMP-Same-Origin' })).toEqual({
      kind: 'preflight',
      handled: true,
      status: 204,
      body: '',
      headers: [
        ['access-control-allow-origin', CACHE],
        ['access-control-allow-credentials', 'true'],
        ['access-control-allow-methods', DEFAULT_METHODS],
        ['access-control-allow-headers', 'Content-Type'],
      ],
      vary: ['Origin', 'Access-Control-Request-Headers'],
    });
  });
  it('a preflight: no Allow-Headers when nothing (clean) was asked or configured', () => {
    const names = (p: CorsPlan) => p.headers.map(([name]) => name);
    expect(names(plan({ method: 'OPTIONS', origin: CACHE, requestMethod: 'POST' }))).not.toContain('access-control-allow-headers');
    expect(names(plan({ method: 'OPTIONS', origin: CACHE, requestMethod: 'POST', requestHeaders: 'AMP-Same-Origin' }))).not.toContain(
      'access-control-allow-headers',
    );
    expect(names(plan({ method: 'OPTIONS', origin: CACHE, requestMethod: 'POST', requestHeaders: 'a\r\nb' }))).not.toContain('access-control-allow-headers');
    expect(names(plan({ method: 'OPTIONS', origin: CACHE, requestMethod: 'POST', requestHeaders: 'X-A' }, options({ allowedHeaders: [] })))).not.toContain(
      'access-control-allow-headers',
    );
  });
  it('a preflight with every option: configured headers, max-age 0, private network, status, continue', () => {
    const all = options({ allowedHeaders: 'X-A', maxAge: 0, privateNetworkAccess: true, preflightStatus: 200, methods: 'GET' });
    const request: CorsRequest = { method: 'OPTIONS', origin: CACHE, requestMethod: 'GET', requestHeaders: 'X-B', requestPrivateNetwork: 'true' };
    expect(plan(request, all)).toMatchObject({ kind: 'preflight', handled: true, status: 200 });
    expect(plan(request, all).headers).toEqual([
      ['access-control-allow-origin', CACHE],
      ['access-control-allow-credentials', 'true'],
      ['access-control-allow-methods', 'GET'],
      ['access-control-allow-headers', 'X-A'],
      ['access-control-max-age', '0'],
      ['access-control-allow-private-network', 'true'],
    ]);
    expect(plan({ ...request, requestPrivateNetwork: 'TRUE' }, all).headers.map(([n]) => n)).not.toContain('access-control-allow-private-network');
    expect(plan(request, options({ privateNetworkAccess: false })).headers.map(([n]) => n)).not.toContain('access-control-allow-private-network');
    expect(plan(request, options({ preflightContinue: true }))).toMatchObject({ kind: 'preflight', handled: false, status: 0 });
  });
  it('a verdict about another origin, or with unsafe values, is not trusted', () => {
    const request: CorsRequest = { method: 'GET', origin: CACHE };
    expect(planCors(request, allowed('https://other.example'), defaults)).toMatchObject({
      kind: 'reject',
      body: 'Forbidden: CORS origin denied (malformed)\n',
    });
    const legacy = options({ legacySourceOriginHeader: true });
    expect(planCors(request, allowed(CACHE, { sourceOrigin: 'https://a\r\nb' }), legacy)).toMatchObject({ kind: 'reject', status: 403 });
    // Without the legacy header, the verdict's source value is never written anywhere.
    const quiet = planCors(request, allowed(CACHE, { sourceOrigin: 'https://a\r\nb' }), defaults);
    expect(quiet.headers.flat().join(' ')).not.toContain('https://a');
    expect(planCors({ method: 'GET', origin: 'https://a\nb' }, allowed('https://a\nb'), defaults)).toMatchObject({ kind: 'reject' });
    expect(planCors(request, allowed('https://other.example'), options({ onDenied: 'omit' }))).toEqual({
      kind: 'actual',
      handled: false,
      status: 0,
      body: '',
      headers: [],
      vary: ['Origin'],
    });
    // Denied like any other denial: with 'omit', a preflight is answered empty.
    expect(planCors({ method: 'OPTIONS', origin: CACHE, requestMethod: 'GET' }, allowed('https://other.example'), options({ onDenied: 'omit' }))).toMatchObject(
      {
        kind: 'preflight',
        handled: true,
        status: 204,
        headers: [],
      },
    );
    // A non-string value in a custom verdict is not header-safe either.
    expect(planCors(request, allowed(CACHE, { sourceOrigin: 42 as never }), legacy)).toMatchObject({
      kind: 'reject',
      body: 'Forbidden: CORS origin denied (malformed)\n',
    });
    // A same-origin verdict (origin null) about a request with an Origin is fine: nothing is echoed.
    expect(planCors(request, allowed(null), defaults).headers).toEqual([]);
  });
});

describe('planCors: AMP for Email', () => {
  const email = options({ email: { senders: ['sender@example.com'] } });
  it('adds AMP-Email-Sender to Vary once AMP for Email is on', () => {
    expect(plan({ method: 'GET', origin: CACHE }, email).vary).toEqual(['Origin', 'AMP-Email-Sender']);
    expect(plan({ method: 'OPTIONS', origin: CACHE, requestMethod: 'GET' }, email).vary).toEqual([
      'Origin',
      'Access-Control-Request-Headers',
      'AMP-Email-Sender',
    ]);
  });
  it('v2: a trusted sender (any case) is echoed; an untrusted one is rejected or omitted', () => {
    expect(plan({ method: 'POST', origin: 'https://mail.example', emailSender: 'Sender@Example.com' }, email)).toEqual({
      kind: 'actual',
      handled: false,
      status: 0,
      body: '',
      headers: [['amp-email-allow-sender', 'Sender@Example.com']],
      vary: ['Origin', 'AMP-Email-Sender'],
      email: { version: 2, sender: 'Sender@Example.com', trusted: true },
    });
    expect(plan({ method: 'POST', emailSender: 'evil@example.com' }, email)).toMatchObject({
      kind: 'reject',
      body: 'Forbidden: CORS origin denied (email-sender-denied)\n',
      email: { version: 2, trusted: false },
    });
    expect(plan({ method: 'POST', emailSender: 'evil@example.com' }, options({ email: { senders: ['sender@example.com'] }, onDenied: 'omit' }))).toMatchObject({
      kind: 'actual',
      handled: false,
      headers: [],
      email: { trusted: false },
    });
    expect(plan({ method: 'POST', emailSender: `${'a'.repeat(320)}@example.com` }, options({ email: { senders: ['sender@example.com'] } }))).toMatchObject({
      email: { trusted: false },
    });
    expect(plan({ method: 'POST', emailSender: 'not an address' }, email)).toMatchObject({ kind: 'reject', email: { trusted: false } });
  });
  it('v1: the address in __amp_source_origin; the Origin echoed only when it is a configured email client', () => {
    // (Before issue #14 any canonical Origin was echoed here: see the attacker-side tests below.)
    const email = options({ email: { senders: ['sender@example.com'], clientOrigins: ['https://mail.example'] } });
    expect(plan({ method: 'POST', origin: 'https://mail.example', sourceOrigin: 'sender@example.com' }, email)).toEqual({
      kind: 'actual',
      handled: false,
      status: 0,
      body: '',
      headers: [
        ['access-control-allow-origin', 'https://mail.example'],
        ['access-control-allow-credentials', 'true'],
        ['amp-access-control-allow-source-origin', 'sender@example.com'],
        ['access-control-expose-headers', `${AMP_REDIRECT_TO}, ${AMP_SOURCE_ORIGIN_HEADER}`],
      ],
      vary: ['Origin', 'AMP-Email-Sender'],
      email: { version: 1, sender: 'sender@example.com', trusted: true },
    });
    const noCredentials = options({ email: { senders: ['sender@example.com'], clientOrigins: ['https://mail.example'] }, credentials: false });
    expect(plan({ method: 'POST', origin: 'https://mail.example', sourceOrigin: 'sender@example.com' }, noCredentials).headers.map(([n]) => n)).not.toContain(
      'access-control-allow-credentials',
    );
    expect(plan({ method: 'POST', origin: 'https://Mail.example', sourceOrigin: 'sender@example.com' }, email)).toMatchObject({
      kind: 'reject',
      body: 'Forbidden: CORS origin denied (not-canonical)\n',
      email: { version: 1 },
    });
    expect(plan({ method: 'POST', sourceOrigin: 'sender@example.com' }, email)).toMatchObject({
      kind: 'actual',
      handled: false,
      headers: [],
      email: { version: 1, trusted: true },
    });
    const omit = options({ email: { senders: ['sender@example.com'], clientOrigins: ['https://mail.example'] }, onDenied: 'omit' });
    expect(plan({ method: 'POST', origin: 'https://Mail.example', sourceOrigin: 'sender@example.com' }, omit)).toMatchObject({
      kind: 'actual',
      handled: false,
      headers: [],
    });
  });
  it('a configured sender of the longest length is trusted', () => {
    const longest = `${'a'.repeat(320 - '@example.com'.length)}@example.com`;
    const withLongest = options({ email: { senders: [longest] } });
    expect(plan({ method: 'POST', emailSender: longest.toUpperCase() }, withLongest)).toMatchObject({ kind: 'actual', email: { version: 2, trusted: true } });
  });
  it('a source origin without "@" is not a v1 sender: it is judged as an origin', () => {
    expect(plan({ method: 'POST', origin: CACHE, sourceOrigin: 'not-an-address' }, email)).toMatchObject({
      kind: 'reject',
      body: 'Forbidden: CORS origin denied (source-origin-mismatch)\n',
    });
    expect(plan({ method: 'POST', origin: CACHE, sourceOrigin: 'not-an-address' }, email).email).toBeUndefined();
  });
  it('a source origin with a slash is an origin, not a v1 sender; v2 wins over v1; a preflight is plain CORS', () => {
    expect(plan({ method: 'POST', origin: CACHE, sourceOrigin: 'https://example.com' }, email).email).toBeUndefined();
    expect(plan({ method: 'POST', emailSender: 'sender@example.com', sourceOrigin: 'evil@example.com' }, email).email).toEqual({
      version: 2,
      sender: 'sender@example.com',
      trusted: true,
    });
    expect(plan({ method: 'POST', emailSender: '', sourceOrigin: 'sender@example.com' }, email).email).toEqual({
      version: 1,
      sender: 'sender@example.com',
      trusted: true,
    });
    expect(plan({ method: 'OPTIONS', origin: CACHE, requestMethod: 'POST', emailSender: 'evil@example.com' }, email)).toMatchObject({
      kind: 'preflight',
      handled: true,
      status: 204,
    });
    expect(plan({ method: 'POST', emailSender: 'sender@example.com' }).email).toBeUndefined();
  });
});

describe('appendVary', () => {
  it('appends without replacing or duplicating, case-insensitively', () => {
    expect(appendVary(undefined, ['Origin'])).toBe('Origin');
    expect(appendVary(null, ['Origin', 'origin'])).toBe('Origin');
    expect(appendVary('', ['Origin'])).toBe('Origin');
    expect(appendVary('Accept-Encoding, ORIGIN', ['Origin', 'AMP-Email-Sender'])).toBe('Accept-Encoding, ORIGIN, AMP-Email-Sender');
    expect(appendVary(['Accept', ' Cookie '], ['Origin'])).toBe('Accept, Cookie, Origin');
    expect(appendVary(' , Accept ,', [])).toBe('Accept');
    expect(appendVary(5, ['Origin'])).toBe('5, Origin');
  });
  it('no existing value: names trimmed, a lone blank name dropped, duplicates once', () => {
    expect(appendVary(undefined, [])).toBe('');
    expect(appendVary('', [' Origin '])).toBe('Origin');
    expect(appendVary(null, [' '])).toBe('');
    expect(appendVary(undefined, [' Origin ', ' AMP-Email-Sender '])).toBe('Origin, AMP-Email-Sender');
    expect(appendVary(undefined, ['Origin', 'ORIGIN'])).toBe('Origin');
    expect(appendVary(undefined, ['Origin', 'Access-Control-Request-Headers', 'AMP-Email-Sender'])).toBe(
      'Origin, Access-Control-Request-Headers, AMP-Email-Sender',
    );
    expect(appendVary('Accept', ['Origin', 'Cookie'])).toBe('Accept, Origin, Cookie');
  });
  it('* already covers everything', () => {
    expect(appendVary('*', ['Origin'])).toBe('*');
    expect(appendVary('Accept, *', ['Origin'])).toBe('*');
  });
});

describe('ampRedirectTo', () => {
  it('accepts an absolute https URL and returns it normalized', () => {
    expect(ampRedirectTo('https://example.com/thanks')).toBe('https://example.com/thanks');
    expect(ampRedirectTo('HTTPS://Example.com')).toBe('https://example.com/');
    const longest = `https://example.com/${'a'.repeat(8192 - 'https://example.com/'.length)}`;
    expect(ampRedirectTo(longest)).toBe(longest);
  });
  it('refuses everything else', () => {
    const message = 'AMP-Redirect-To needs an absolute https URL without whitespace or control characters';
    for (const url of [
      42,
      'http://example.com/',
      '/thanks',
      'https://example.com/a b',
      'https://example.com/\u007f',
      `https://example.com/${'a'.repeat(8192)}`,
      ' https://example.com/',
    ]) {
      expectError(() => ampRedirectTo(url as string), 'invalid-url', message);
    }
    expectError(() => ampRedirectTo('xhttps://example.com/'), 'invalid-url', message);
    expectError(() => ampRedirectTo('https://'), 'invalid-url', 'AMP-Redirect-To needs an absolute https URL');
    expectError(() => ampRedirectTo('https://[::1'), 'invalid-url', 'AMP-Redirect-To needs an absolute https URL');
  });
});

describe('createCorsPolicy', () => {
  const refusals: Array<[string, unknown, boolean, string]> = [
    ['no configuration', undefined, false, 'ampcors needs a configuration object'],
    ['null', null, false, 'ampcors needs a configuration object'],
    [
      'caches with only a verifier',
      { verifier, caches: [] },
      false,
      'caches would be ignored: they configure publishers and origins (the in-memory rules); a verifier is configured where it is built, an allow-set when it is compiled',
    ],
    ['a verifier without verify', { verifier: {} }, false, 'verifier must be an object with a verify(origin, context) method'],
    ['a verifier that is a function', { verifier: () => undefined }, false, 'verifier must be an object with a verify(origin, context) method'],
    [
      'a function with a verify method',
      { verifier: Object.assign(() => undefined, { verify: () => undefined }) },
      false,
      'verifier must be an object with a verify(origin, context) method',
    ],
    ['a null verifier', { verifier: null }, false, 'verifier must be an object with a verify(origin, context) method'],
    ['neither', {}, false, 'ampcors needs publishers (the publisher domains) or a verifier'],
  ];
  it.each(refusals)('refuses %s', (_, config, hasOriginOption, message) => {
    expectError(() => createCorsPolicy(config as never, hasOriginOption), 'invalid-option', message);
  });
  it('passes origins, caches and legacyCacheOrigins on to the verifier it builds', () => {
    const policy = createCorsPolicy({ publishers: ['example.com'], origins: ['http://localhost:8080'], caches: [CACHES[1]!], legacyCacheOrigins: true });
    const judge = (origin: string) => (policy.decide({ method: 'GET', origin }) as { verdict: Verdict }).verdict;
    expect(judge('http://localhost:8080')).toMatchObject({ allowed: true, via: 'publisher' });
    expect(judge('https://example.com')).toMatchObject({ allowed: false });
    expect(judge('https://www.bing-amp.com')).toMatchObject({ allowed: true, reason: 'legacy-cache-origin' });
    expect(judge(CACHE)).toMatchObject({ allowed: false });
    expect(judge('https://example-com.www.bing-amp.com')).toMatchObject({ allowed: true });
    expect(policy.options).toEqual(defaults);
  });
  it('with only an adapter origin source: no verifier, and a denial when no source is given', () => {
    const policy = createCorsPolicy({}, true);
    expect(policy.verifier).toBeNull();
    expect(policy.decide({ method: 'GET', origin: CACHE })).toEqual({
      verdict: { allowed: false, origin: CACHE, reason: 'unknown-origin', detail: 'no origin source is configured' },
      plan: expect.objectContaining({ kind: 'reject' }),
    });
    expect((policy.decide({ method: 'GET' }) as { verdict: Verdict }).verdict).toMatchObject({ allowed: false, origin: null });
    const extra = { verify: () => allowed(CACHE) };
    expect(policy.decide({ method: 'GET', origin: CACHE }, extra)).toMatchObject({ verdict: { allowed: true }, plan: { kind: 'actual' } });
  });
  it('sources decide in order: the first allow wins, else the first denial explains', () => {
    const calls: string[] = [];
    const source = (name: string, verdict: Verdict) => ({
      verify: () => {
        calls.push(name);
        return verdict;
      },
    });
    const policy = createCorsPolicy({ verifier: source('main', denied(CACHE, 'hashed-unknown')) });
    expect((policy.decide({ method: 'GET', origin: CACHE }, source('extra', denied(CACHE, 'unknown-origin'))) as { verdict: Verdict }).verdict).toMatchObject({
      reason: 'hashed-unknown',
    });
    expect(calls).toEqual(['main', 'extra']);
    calls.length = 0;
    expect((policy.decide({ method: 'GET', origin: CACHE }, source('extra', allowed(CACHE))) as { verdict: Verdict }).verdict).toMatchObject({ allowed: true });
    const first = createCorsPolicy({ verifier: source('main', allowed(CACHE)) });
    calls.length = 0;
    first.decide({ method: 'GET', origin: CACHE }, source('extra', denied(CACHE)));
    expect(calls).toEqual(['main']);
    expect((first.decide({ method: 'GET', origin: CACHE }, null) as { verdict: Verdict }).verdict).toMatchObject({ allowed: true });
  });
  it('asynchronous sources: awaited in order, the first denial explains', async () => {
    const later = (verdict: Verdict) => ({ verify: async () => verdict });
    const policy = createCorsPolicy({ verifier: later(denied(CACHE, 'hashed-unknown')) });
    const both = policy.decide({ method: 'GET', origin: CACHE }, later(denied(CACHE, 'unknown-origin')));
    expect(both).toBeInstanceOf(Promise);
    expect((await both).verdict).toMatchObject({ reason: 'hashed-unknown' });
    expect((await policy.decide({ method: 'GET', origin: CACHE }, { verify: () => allowed(CACHE) })).verdict).toMatchObject({ allowed: true });
    expect((await policy.decide({ method: 'GET', origin: CACHE }, later(allowed(CACHE)))).verdict).toMatchObject({ allowed: true });
    expect((await policy.decide({ method: 'GET', origin: CACHE })).verdict).toMatchObject({ reason: 'hashed-unknown' });
    // A synchronous denial, then an asynchronous allow.
    const mixed = createCorsPolicy({ verifier: { verify: () => denied(CACHE, 'hashed-unknown') } });
    expect((await mixed.decide({ method: 'GET', origin: CACHE }, later(allowed(CACHE)))).verdict).toMatchObject({ allowed: true });
    expect((await mixed.decide({ method: 'GET', origin: CACHE }, later(denied(CACHE, 'unknown-origin')))).verdict).toMatchObject({ reason: 'hashed-unknown' });
  });
  it('a verdict with a then that is not a function is a plain verdict', () => {
    const odd = { ...denied(CACHE, 'hashed-unknown'), then: 1 } as unknown as Verdict;
    const policy = createCorsPolicy({ verifier: { verify: () => odd } });
    expect((policy.decide({ method: 'GET', origin: CACHE }) as { verdict: Verdict }).verdict).toMatchObject({ reason: 'hashed-unknown' });
  });
  it('uses the options given to decide, else its own', () => {
    const policy = createCorsPolicy({ publishers: ['example.com'], credentials: false });
    expect((policy.decide({ method: 'GET', origin: CACHE }) as { plan: CorsPlan }).plan.headers.map(([n]) => n)).not.toContain(
      'access-control-allow-credentials',
    );
    expect((policy.decide({ method: 'GET', origin: CACHE }, null, defaults) as { plan: CorsPlan }).plan.headers.map(([n]) => n)).toContain(
      'access-control-allow-credentials',
    );
  });
});

describe('compileOriginOption', () => {
  it('any origin with credentials is refused, naming the option', () => {
    expectError(
      () => compileOriginOption(true, { credentials: true }),
      'unsafe-configuration',
      /^origin true \(reflect any origin\) together with credentials lets every site read credentialed responses/,
    );
    expectError(() => compileOriginOption('*', { credentials: true }), 'unsafe-configuration', /^origin '\*' together with credentials/);
    expectError(() => compileOriginOption('*', { credentials: true, perRequest: true }), 'unsafe-configuration', /^origin '\*'/);
    expectError(() => compileOriginOption(['https://a.com', true], { credentials: true }), 'unsafe-configuration', /reflect any origin/);
  });
  it('true from an origin function with credentials means "checked": allowed', () => {
    expect(compileOriginOption(true, { credentials: true, perRequest: true })('https://anything.example')).toBe(true);
  });
  it('any origin without credentials matches everything', () => {
    expect(compileOriginOption(true, { credentials: false })('https://x.example')).toBe(true);
    expect(compileOriginOption(['*'], { credentials: false })('https://y.example')).toBe(true);
  });
  it('false matches nothing; strings match exactly; RegExps match', () => {
    expect(compileOriginOption(false, { credentials: true })('https://a.com')).toBe(false);
    const matcher = compileOriginOption([false, 'https://a.com', /^https:\/\/[a-z]+\.b\.com$/], { credentials: true });
    expect(matcher('https://a.com')).toBe(true);
    expect(matcher('https://x.b.com')).toBe(true);
    expect(matcher('https://a.com.evil')).toBe(false);
    expect(matcher('https://b.com')).toBe(false);
  });
  it('refuses a string that is not a canonical origin, and other values', () => {
    expectError(
      () => compileOriginOption('https://a.com/', { credentials: false }),
      'invalid-origin',
      'origin "https://a.com/" is not a canonical origin (path)',
    );
    expectError(
      () => compileOriginOption(['https://A.com'], { credentials: false }),
      'invalid-origin',
      'origin "https://A.com" is not a canonical origin (not-canonical)',
    );
    expectError(
      () => compileOriginOption(5 as never, { credentials: false }),
      'invalid-option',
      'origin must be a string, a RegExp, a boolean or an array of strings and RegExps',
    );
    const long = `https://${'a'.repeat(100)}.com/`;
    expectError(
      () => compileOriginOption(long, { credentials: false }),
      'invalid-origin',
      `origin ${JSON.stringify(long.slice(0, 80))} is not a canonical origin (path)`,
    );
    expectError(() => compileOriginOption([null] as never, { credentials: false }), 'invalid-option', /^origin must be/);
  });
  it('global and sticky RegExps are cloned without g and y; other flags are kept', () => {
    const matcher = compileOriginOption([/^https:\/\/A\.com$/gi], { credentials: false });
    for (let i = 0; i < 4; i++) expect(matcher('https://a.com')).toBe(true);
    const sticky = compileOriginOption(/b\.com$/y, { credentials: false });
    // Without y the pattern searches the whole string, every time.
    for (let i = 0; i < 4; i++) expect(sticky('https://b.com')).toBe(true);
    const plain = /c\.com$/;
    expect(compileOriginOption(plain, { credentials: false })('https://c.com')).toBe(true);
  });
});

describe('judgeWithOriginMatcher', () => {
  const matcher = compileOriginOption(['https://a.com', 'https://src.com'], { credentials: true });
  it('a matching canonical origin is a publisher origin', () => {
    expect(judgeWithOriginMatcher(matcher, 'https://a.com')).toEqual({ allowed: true, origin: 'https://a.com', via: 'publisher', reason: 'publisher-origin' });
  });
  it('a non-matching origin, or an unparsable one, is denied with the reason', () => {
    expect(judgeWithOriginMatcher(matcher, 'https://b.com')).toEqual({
      allowed: false,
      origin: 'https://b.com',
      reason: 'unknown-origin',
      detail: 'not allowed by the origin option',
    });
    expect(judgeWithOriginMatcher(() => true, 'https://a.com/')).toMatchObject({ allowed: false, origin: 'https://a.com/', reason: 'path' });
  });
  it('no Origin: same-origin only with AMP-Same-Origin: true', () => {
    expect(judgeWithOriginMatcher(matcher, undefined, { ampSameOrigin: 'true' })).toEqual({
      allowed: true,
      origin: null,
      via: 'same-origin',
      reason: 'same-origin',
    });
    expect(judgeWithOriginMatcher(matcher, undefined)).toEqual({
      allowed: false,
      origin: null,
      reason: 'missing',
      detail: 'no Origin header and no AMP-Same-Origin: true',
    });
    for (const origin of [undefined, null, '']) {
      expect(judgeWithOriginMatcher(matcher, origin, { ampSameOrigin: 'TRUE' })).toEqual({
        allowed: false,
        origin: null,
        reason: 'missing',
        detail: 'no Origin header and no AMP-Same-Origin: true',
      });
    }
  });
  it('a present __amp_source_origin must itself be allowed and canonical', () => {
    expect(judgeWithOriginMatcher(matcher, 'https://a.com', { sourceOrigin: 'https://src.com' })).toMatchObject({
      allowed: true,
      sourceOrigin: 'https://src.com',
    });
    expect(judgeWithOriginMatcher(matcher, undefined, { ampSameOrigin: 'true', sourceOrigin: 'https://src.com' })).toMatchObject({
      allowed: true,
      via: 'same-origin',
      sourceOrigin: 'https://src.com',
    });
    expect(judgeWithOriginMatcher(matcher, 'https://a.com', { sourceOrigin: null })).toEqual({
      allowed: true,
      origin: 'https://a.com',
      via: 'publisher',
      reason: 'publisher-origin',
    });
    const mismatch = { allowed: false, reason: 'source-origin-mismatch', detail: '__amp_source_origin is not an allowed origin' };
    expect(judgeWithOriginMatcher(matcher, 'https://a.com', { sourceOrigin: 'https://evil.com' })).toEqual({ ...mismatch, origin: 'https://a.com' });
    expect(judgeWithOriginMatcher(() => true, 'https://a.com', { sourceOrigin: 'https://src.com/' })).toEqual({ ...mismatch, origin: 'https://a.com' });
    expect(judgeWithOriginMatcher(() => true, '', { sourceOrigin: 5 as never })).toEqual({ ...mismatch, origin: null });
    expect(judgeWithOriginMatcher(() => true, 7 as never, { sourceOrigin: 'x' })).toEqual({ ...mismatch, origin: null });
  });
});

// Issue #14, from the attacker's side. Each block failed on the code before
// its fix: a v1 answer to any Origin (item 1), `*` in Allow-Headers (item 4),
// a non-ASCII sender matching through toLowerCase and failing as a header
// value (item 8).
describe('issue #14: AMP for Email v1 never trusts an Origin because of the query (item 1)', () => {
  const senders = ['news@example.com'];
  const policy = createCorsPolicy({ publishers: ['example.com'], email: { senders } });
  const decide = (request: CorsRequest, p = policy) => (p.decide(request) as { plan: CorsPlan }).plan;
  const headerNames = (p: CorsPlan) => p.headers.map(([name]) => name.toLowerCase());
  it('a trusted sender in the query from an untrusted Origin: 403 before the handler, no ACAO, no credentials', () => {
    for (const method of ['POST', 'GET', 'PUT', 'DELETE']) {
      const p = decide({ method, origin: 'https://evil.example', sourceOrigin: 'news@example.com' });
      expect(p).toMatchObject({ kind: 'reject', handled: true, status: 403, body: 'Forbidden: CORS origin denied (unknown-origin)\n' });
      expect(headerNames(p)).not.toContain('access-control-allow-origin');
      expect(headerNames(p)).not.toContain('access-control-allow-credentials');
    }
  });
  it("with onDenied 'omit': no CORS header at all", () => {
    const omit = createCorsPolicy({ publishers: ['example.com'], email: { senders }, onDenied: 'omit' });
    expect(decide({ method: 'POST', origin: 'https://evil.example', sourceOrigin: 'news@example.com' }, omit)).toMatchObject({
      kind: 'actual',
      handled: false,
      headers: [],
    });
  });
  it('the query never decides: for any Origin outside the allowed and email-client origins, any query value gives the same denial', () => {
    const host = fc.stringMatching(/^[a-z0-9-]{1,20}(\.[a-z0-9-]{1,20}){0,3}$/);
    const origin = fc.oneof(
      host.map((h) => `https://${h}`),
      host.map((h) => `http://${h}`),
      host.map((h) => `https://${h}.cdn.ampproject.org`),
      fc.constantFrom(
        'https://mail.google.com.evil.example',
        'https://mail.google.com:8443',
        'http://mail.google.com',
        'https://evil-com.cdn.ampproject.org',
        'null',
        'https://Mail.google.com',
      ),
    );
    const sender = fc.constantFrom('news@example.com', 'NEWS@EXAMPLE.COM', 'evil@example.com', '\u212Aate@example.com', 'https://example.com', '');
    const verifier = createVerifier({ publishers: ['example.com'] });
    fc.assert(
      fc.property(origin, sender, fc.constantFrom('GET', 'POST'), (o, s, method) => {
        fc.pre(!verifier.verify(o).allowed && o !== 'https://mail.google.com');
        const withQuery = decide({ method, origin: o, sourceOrigin: s });
        expect(headerNames(withQuery)).not.toContain('access-control-allow-origin');
        expect(headerNames(withQuery)).not.toContain('access-control-allow-credentials');
        expect(withQuery.kind).toBe('reject');
        expect(decide({ method, origin: o }).kind).toBe('reject');
      }),
      { numRuns: 500 },
    );
  });
  it('answers the known email client (Gmail, https://mail.google.com) by default, and an Origin the verifier allows', () => {
    expect(decide({ method: 'POST', origin: 'https://mail.google.com', sourceOrigin: 'News@Example.com' }).headers).toEqual([
      ['access-control-allow-origin', 'https://mail.google.com'],
      ['access-control-allow-credentials', 'true'],
      ['amp-access-control-allow-source-origin', 'News@Example.com'],
      ['access-control-expose-headers', `${AMP_REDIRECT_TO}, ${AMP_SOURCE_ORIGIN_HEADER}`],
    ]);
    expect(decide({ method: 'GET', origin: CACHE, sourceOrigin: 'news@example.com' }).headers).toEqual([
      ['access-control-allow-origin', CACHE],
      ['access-control-allow-credentials', 'true'],
      ['amp-access-control-allow-source-origin', 'news@example.com'],
      ['access-control-expose-headers', `${AMP_REDIRECT_TO}, ${AMP_SOURCE_ORIGIN_HEADER}`],
    ]);
    // The email client with a sender it does not vouch for: still refused.
    expect(decide({ method: 'POST', origin: 'https://mail.google.com', sourceOrigin: 'evil@example.com' })).toMatchObject({
      kind: 'reject',
      body: 'Forbidden: CORS origin denied (email-sender-denied)\n',
    });
    // The email client outside AMP for Email is an ordinary unknown origin.
    expect(decide({ method: 'POST', origin: 'https://mail.google.com' })).toMatchObject({
      kind: 'reject',
      body: 'Forbidden: CORS origin denied (unknown-origin)\n',
    });
  });
  it('clientOrigins replaces the default list; [] leaves only the origins the verifier allows', () => {
    const none = createCorsPolicy({ publishers: ['example.com'], email: { senders, clientOrigins: [] } });
    expect(decide({ method: 'POST', origin: 'https://mail.google.com', sourceOrigin: 'news@example.com' }, none)).toMatchObject({
      kind: 'reject',
      status: 403,
    });
    expect(headerNames(decide({ method: 'POST', origin: CACHE, sourceOrigin: 'news@example.com' }, none))).toContain('access-control-allow-origin');
    const own = createCorsPolicy({ publishers: ['example.com'], email: { senders, clientOrigins: ['https://webmail.example.net'] } });
    expect(decide({ method: 'POST', origin: 'https://webmail.example.net', sourceOrigin: 'news@example.com' }, own).headers[0]).toEqual([
      'access-control-allow-origin',
      'https://webmail.example.net',
    ]);
    expect(decide({ method: 'POST', origin: 'https://mail.google.com', sourceOrigin: 'news@example.com' }, own)).toMatchObject({ kind: 'reject' });
    expect(options({ email: { senders } }).emailClientOrigins).toEqual(new Set(['https://mail.google.com']));
    expect(options({}).emailClientOrigins).toBeNull();
  });
  it.each([
    ['not an array', 'https://mail.google.com', 'email.clientOrigins must be an array of origins'],
    ['a wildcard', ['*'], 'email.clientOrigins: "*" is not a canonical http(s) origin (malformed)'],
    ['null', ['null'], 'email.clientOrigins: "null" is not a canonical http(s) origin (null-origin)'],
    ['uppercase', ['https://Mail.google.com'], 'email.clientOrigins: "https://Mail.google.com" is not a canonical http(s) origin (not-canonical)'],
    ['a path', ['https://mail.google.com/'], 'email.clientOrigins: "https://mail.google.com/" is not a canonical http(s) origin (path)'],
    ['a non-string', [7], 'email.clientOrigins: "7" is not a canonical http(s) origin (malformed)'],
  ])('refuses clientOrigins: %s', (_, clientOrigins, message) => {
    expectError(() => options({ email: { senders, clientOrigins: clientOrigins as never } }), 'invalid-option', message);
  });
  it('v2 wins over v1: a trusted AMP-Email-Sender from any Origin gets AMP-Email-Allow-Sender only, never ACAO', () => {
    const p = decide({ method: 'POST', origin: 'https://evil.example', emailSender: 'news@example.com', sourceOrigin: 'news@example.com' });
    expect(p).toMatchObject({ kind: 'actual', headers: [['amp-email-allow-sender', 'news@example.com']], email: { version: 2 } });
  });
});

describe('issue #14: Access-Control-Allow-Headers is never * (item 4)', () => {
  it('a preflight asking for "*, amp-same-origin" is not answered with *', () => {
    const p = plan({ method: 'OPTIONS', origin: CACHE, requestMethod: 'POST', requestHeaders: '*, amp-same-origin' });
    expect(p.headers.map(([name]) => name)).not.toContain('access-control-allow-headers');
    expect(reflectableHeaders('*, amp-same-origin')).toEqual([]);
    expect(reflectableHeaders(' X-A ,*,x-b')).toEqual(['X-A', 'x-b']);
  });
  it('reflectableHeaders (one pass) agrees with split, trim and the token rule', () => {
    const reference = (requested: string): string[] | null => {
      if (requested.length > 2048) return null;
      const out: string[] = [];
      for (const item of requested.split(',')) {
        const name = item.trim();
        if (name === '') continue;
        if (!/^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/.test(name)) return null;
        if (name !== '*' && name.toLowerCase() !== 'amp-same-origin') out.push(name);
      }
      return out;
    };
    const piece = fc.constantFrom(
      ',',
      ' ',
      '\t',
      '\r\n',
      '\u00a0',
      '\ufeff',
      '\u2028',
      '\u0000',
      'x',
      'X-A',
      '*',
      '**',
      'amp-same-origin',
      'AMP-Same-Origin',
      'é',
      ':',
      '"',
      'a b',
      '\u180e',
    );
    fc.assert(
      fc.property(fc.array(piece, { maxLength: 10 }), (pieces) => {
        const requested = pieces.join('');
        expect(reflectableHeaders(requested), JSON.stringify(requested)).toEqual(reference(requested));
      }),
      { numRuns: 5000 },
    );
  });
  it('no requested list reflects * or AMP-Same-Origin', () => {
    const name = fc.constantFrom('*', ' * ', 'AMP-Same-Origin', 'amp-same-origin', 'Content-Type', 'X-A', '', '**', 'x*');
    fc.assert(
      fc.property(fc.array(name, { maxLength: 6 }), (names) => {
        const p = plan({ method: 'OPTIONS', origin: CACHE, requestMethod: 'POST', requestHeaders: names.join(',') });
        const allow = (p.headers.find(([n]) => n === 'access-control-allow-headers')?.[1] ?? '').split(',').map((n) => n.trim().toLowerCase());
        expect(allow).not.toContain('*');
        expect(allow).not.toContain('amp-same-origin');
      }),
      { numRuns: 500 },
    );
  });
  it.each([['*'], [['Content-Type', '*']], ['X-A, *']])('refuses allowedHeaders %j, saying how to list headers instead', (allowedHeaders) => {
    expectError(
      () => options({ allowedHeaders }),
      'unsafe-configuration',
      "allowedHeaders must not be '*': it would let a page send AMP-Same-Origin; list the header names your endpoints read (for example ['Content-Type', 'X-Requested-With']), or leave allowedHeaders out to answer each preflight with the headers it asks for, minus AMP-Same-Origin",
    );
  });
});

describe('issue #14: email senders are compared in ASCII, and no plan holds a value that is not a valid header (item 8)', () => {
  const kelvin = '\u212Aate@example.com';
  it('refuses a non-ASCII sender in the configuration', () => {
    for (const sender of [kelvin, 'news@exämple.com', 'new\u00a0s@example.com', 'news@example.com\u0085']) {
      expectError(
        () => options({ email: { senders: [sender] } }),
        'invalid-option',
        `email.senders: ${JSON.stringify(sender)} is not an email address in ASCII (write an internationalized domain in punycode)`,
      );
    }
  });
  it('KELVIN SIGN does not match kate@example.com, in v2 or v1', () => {
    const email = options({ email: { senders: ['kate@example.com'] } });
    expect(plan({ method: 'POST', origin: 'https://mail.google.com', emailSender: kelvin }, email)).toMatchObject({
      kind: 'reject',
      email: { version: 2, trusted: false },
    });
    expect(plan({ method: 'POST', origin: 'https://mail.google.com', sourceOrigin: kelvin }, email)).toMatchObject({
      kind: 'reject',
      email: { version: 1, trusted: false },
    });
    expect(plan({ method: 'POST', origin: 'https://mail.google.com', emailSender: 'KATE@example.com' }, email).headers).toEqual([
      ['amp-email-allow-sender', 'KATE@example.com'],
    ]);
  });
  it('every header value of every plan is visible ASCII, space or tab: Node and undici accept it (a value that is not is denied)', async () => {
    const { validateHeaderValue } = await import('node:http');
    const text = fc.oneof(
      fc.string({ unit: 'binary', maxLength: 30 }),
      fc.constantFrom(CACHE, 'https://mail.google.com', kelvin, 'https://a\r\nb', 'https://é', 'x\u0000y', ' ', '\t'),
    );
    const maybe = fc.option(text, { nil: undefined });
    const request = fc.record({
      method: fc.constantFrom('GET', 'POST', 'OPTIONS'),
      origin: maybe,
      ampSameOrigin: maybe,
      requestMethod: maybe,
      requestHeaders: maybe,
      requestPrivateNetwork: maybe,
      emailSender: maybe,
      sourceOrigin: maybe,
    });
    const verdict = fc.oneof(
      fc
        .record({ origin: fc.option(text, { nil: null }), sourceOrigin: maybe })
        .map((v): Verdict => ({ allowed: true, via: 'cache', reason: 'cache-origin', ...v }) as Verdict),
      fc.record({ reason: fc.constantFrom('unknown-origin', 'missing') }).map((v): Verdict => ({ allowed: false, origin: null, detail: '', ...v }) as Verdict),
    );
    const configs = [
      defaults,
      options({ email: { senders: ['kate@example.com', 'a@b.c'] }, privateNetworkAccess: true, maxAge: 5 }),
      options({ onDenied: 'omit', credentials: false, email: { senders: ['a@b.c'], clientOrigins: [] } }),
    ];
    fc.assert(
      fc.property(request, verdict, fc.constantFrom(...configs), (req, v, opts) => {
        // A verdict about this request's Origin, as a custom verifier could return.
        const about = v.allowed && v.origin !== null && req.origin !== undefined ? ({ ...v, origin: req.origin } as Verdict) : v;
        for (const candidate of [v, about]) {
          const p = planCors(req as CorsRequest, candidate, opts);
          for (const [name, value] of p.headers) {
            expect(value, name).toMatch(/^[\t\x20-\x7e]*$/);
            expect(() => validateHeaderValue(name, value)).not.toThrow();
            expect(() => new Headers([[name, value]])).not.toThrow();
          }
        }
      }),
      { numRuns: 3000 },
    );
  });
  it('a verdict allowing an Origin that is not a valid header value is denied, not sent', () => {
    for (const origin of ['https://é.example', `https://${'\u212A'}.example`, 'https://a\u0085b']) {
      expect(planCors({ method: 'GET', origin }, allowed(origin), defaults)).toMatchObject({
        kind: 'reject',
        status: 403,
        body: 'Forbidden: CORS origin denied (malformed)\n',
      });
      expect(planCors({ method: 'GET', origin }, allowed(origin), options({ onDenied: 'omit' }))).toMatchObject({ kind: 'actual', headers: [] });
    }
  });
});
