import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { ampRedirectTo, createVerifier, isAmpCorsError, type Verdict } from '@ampcors/core';
import {
  appendVary,
  compileOriginOption,
  type CorsPlan,
  type CorsRequest,
  createCorsPolicy,
  judgeWithOriginMatcher,
  normalizeCorsOptions,
  planCors,
  reflectableHeaders,
  sourceOriginOfUrl,
  verifyContextOf,
} from '@ampcors/core/adapter';

const verifier = createVerifier({ publishers: ['example.com'] });
const CACHE = 'https://example-com.cdn.ampproject.org';
const defaults = normalizeCorsOptions();
const legacy = normalizeCorsOptions({ legacySourceOriginHeader: true });

function plan(request: CorsRequest, options = defaults): CorsPlan {
  return planCors(request, verifier.verify(request.origin, verifyContextOf(request, options)), options);
}
const header = (p: CorsPlan, name: string) => p.headers.find(([key]) => key.toLowerCase() === name.toLowerCase())?.[1];

function errorCode(fn: () => unknown): string | undefined {
  try {
    fn();
  } catch (error) {
    return isAmpCorsError(error) ? error.code : 'not-an-AmpCorsError';
  }
  return undefined;
}

describe('normalizeCorsOptions', () => {
  it('fills in the documented defaults', () => {
    expect(defaults).toMatchObject({
      credentials: true,
      methods: 'GET,HEAD,PUT,PATCH,POST,DELETE',
      allowedHeaders: null,
      exposedHeaders: ['AMP-Redirect-To'],
      maxAge: null,
      preflightStatus: 204,
      preflightContinue: false,
      privateNetworkAccess: false,
      onDenied: 'reject',
      emailSenders: null,
    });
  });
  it('refuses bad options with a clear code', () => {
    expect(errorCode(() => normalizeCorsOptions({ allowedHeaders: ['Content-Type', 'amp-same-origin'] }))).toBe('unsafe-configuration');
    expect(errorCode(() => normalizeCorsOptions({ methods: 'GET, P OST' }))).toBe('invalid-option');
    expect(errorCode(() => normalizeCorsOptions({ allowedHeaders: '*' }))).toBe('unsafe-configuration');
    expect(errorCode(() => normalizeCorsOptions({ exposedHeaders: ['X-A\r\nX-B'] }))).toBe('invalid-option');
    expect(errorCode(() => normalizeCorsOptions({ maxAge: -1 }))).toBe('invalid-option');
    expect(errorCode(() => normalizeCorsOptions({ maxAge: 1.5 }))).toBe('invalid-option');
    expect(errorCode(() => normalizeCorsOptions({ preflightStatus: 302 }))).toBe('invalid-option');
    expect(errorCode(() => normalizeCorsOptions({ onDenied: 'ignore' as never }))).toBe('invalid-option');
    expect(errorCode(() => normalizeCorsOptions({ credentials: 'yes' as never }))).toBe('invalid-option');
    expect(errorCode(() => normalizeCorsOptions({ email: { senders: ['not an address'] } }))).toBe('invalid-option');
    expect(errorCode(() => normalizeCorsOptions(null as never))).toBe('invalid-option');
  });
  it('keeps AMP-Redirect-To exposed once, whatever else is exposed', () => {
    expect(normalizeCorsOptions({ exposedHeaders: 'X-Total, amp-redirect-to' }).exposedHeaders).toEqual(['AMP-Redirect-To', 'X-Total']);
  });
});

describe('planCors', () => {
  it('allows a cache origin: echo, credentials, exposed AMP-Redirect-To, Vary', () => {
    const p = plan({ method: 'GET', origin: CACHE });
    expect(p).toMatchObject({ kind: 'actual', handled: false, vary: ['Origin'] });
    expect(header(p, 'Access-Control-Allow-Origin')).toBe(CACHE);
    expect(header(p, 'Access-Control-Allow-Credentials')).toBe('true');
    expect(header(p, 'Access-Control-Expose-Headers')).toBe('AMP-Redirect-To');
  });
  it('leaves credentials off when configured', () => {
    const p = plan({ method: 'GET', origin: CACHE }, normalizeCorsOptions({ credentials: false }));
    expect(header(p, 'Access-Control-Allow-Credentials')).toBeUndefined();
  });
  it('rejects a denied origin with 403 naming the reason, or omits headers', () => {
    const rejected = plan({ method: 'POST', origin: 'https://evil-com.cdn.ampproject.org' });
    expect(rejected).toMatchObject({ kind: 'reject', handled: true, status: 403, vary: ['Origin'] });
    expect(rejected.body).toContain('unknown-publisher');
    const omitted = plan({ method: 'POST', origin: 'https://evil.com' }, normalizeCorsOptions({ onDenied: 'omit' }));
    expect(omitted).toMatchObject({ kind: 'actual', handled: false, headers: [], vary: ['Origin'] });
  });
  it('lets requests without Origin through without CORS headers', () => {
    expect(plan({ method: 'GET' })).toMatchObject({ kind: 'actual', handled: false, headers: [] });
  });
  it('answers AMP-Same-Origin without ACAO, and the trusted source origin when legacySourceOriginHeader is set', () => {
    const p = plan({ method: 'POST', ampSameOrigin: 'true', sourceOrigin: 'https://example.com' }, legacy);
    expect(p.kind).toBe('actual');
    expect(header(p, 'Access-Control-Allow-Origin')).toBeUndefined();
    expect(header(p, 'AMP-Access-Control-Allow-Source-Origin')).toBe('https://example.com');
    expect(
      header(plan({ method: 'POST', ampSameOrigin: 'true', sourceOrigin: 'https://example.com' }), 'AMP-Access-Control-Allow-Source-Origin'),
    ).toBeUndefined();
  });
  it('sends and exposes the legacy source-origin header only when configured and checked', () => {
    const quiet = plan({ method: 'GET', origin: CACHE, sourceOrigin: 'https://example.com' });
    expect(header(quiet, 'Access-Control-Expose-Headers')).toBe('AMP-Redirect-To');
    expect(header(quiet, 'AMP-Access-Control-Allow-Source-Origin')).toBeUndefined();
    const trusted = plan({ method: 'GET', origin: CACHE, sourceOrigin: 'https://example.com' }, legacy);
    expect(header(trusted, 'Access-Control-Expose-Headers')).toBe('AMP-Redirect-To, AMP-Access-Control-Allow-Source-Origin');
    expect(header(trusted, 'AMP-Access-Control-Allow-Source-Origin')).toBe('https://example.com');
    const untrusted = plan({ method: 'GET', origin: 'https://evil-com.cdn.ampproject.org', sourceOrigin: 'https://evil.com' });
    expect(untrusted.kind).toBe('reject');
  });
  it('answers a preflight, never listing AMP-Same-Origin', () => {
    const options = normalizeCorsOptions({ maxAge: 600, privateNetworkAccess: true });
    const p = plan(
      { method: 'OPTIONS', origin: CACHE, requestMethod: 'POST', requestHeaders: 'Content-Type, AMP-Same-Origin,X-Foo', requestPrivateNetwork: 'true' },
      options,
    );
    expect(p).toMatchObject({ kind: 'preflight', handled: true, status: 204, vary: ['Origin', 'Access-Control-Request-Headers'] });
    expect(header(p, 'Access-Control-Allow-Headers')).toBe('Content-Type, X-Foo');
    expect(header(p, 'Access-Control-Allow-Methods')).toBe('GET,HEAD,PUT,PATCH,POST,DELETE');
    expect(header(p, 'Access-Control-Max-Age')).toBe('600');
    expect(header(p, 'Access-Control-Allow-Private-Network')).toBe('true');
    const noPna = plan({ method: 'OPTIONS', origin: CACHE, requestMethod: 'POST', requestPrivateNetwork: 'true' });
    expect(header(noPna, 'Access-Control-Allow-Private-Network')).toBeUndefined();
  });
  it('never reflects requested headers carrying control characters', () => {
    const p = plan({ method: 'OPTIONS', origin: CACHE, requestMethod: 'POST', requestHeaders: 'X-A\r\nSet-Cookie: a=b' });
    expect(header(p, 'Access-Control-Allow-Headers')).toBeUndefined();
    expect(reflectableHeaders('a, b ,,c')).toEqual(['a', 'b', 'c']);
    expect(reflectableHeaders('x'.repeat(5000))).toBeNull();
  });
  it('passes an allowed preflight on with preflightContinue', () => {
    const p = plan({ method: 'OPTIONS', origin: CACHE, requestMethod: 'PUT' }, normalizeCorsOptions({ preflightContinue: true }));
    expect(p).toMatchObject({ kind: 'preflight', handled: false });
    expect(header(p, 'Access-Control-Allow-Origin')).toBe(CACHE);
  });
  it('does not trust a verdict about another origin or with unsafe values', () => {
    const forged: Verdict = { allowed: true, origin: 'https://evil.com', via: 'publisher', reason: 'publisher-origin' };
    expect(planCors({ method: 'GET', origin: CACHE }, forged, defaults).kind).toBe('reject');
    const unsafe: Verdict = { allowed: true, origin: CACHE, via: 'cache', reason: 'cache-origin', sourceOrigin: 'https://a\r\nb' };
    expect(planCors({ method: 'GET', origin: CACHE }, unsafe, legacy).kind).toBe('reject');
  });
});

describe('AMP for Email', () => {
  const email = normalizeCorsOptions({ email: { senders: ['News@Example.com'] } });
  const client = 'https://mail.google.com';
  it('v2: echoes a trusted AMP-Email-Sender', () => {
    const p = plan({ method: 'POST', origin: client, emailSender: 'news@example.com' }, email);
    expect(p.email).toEqual({ version: 2, sender: 'news@example.com', trusted: true });
    expect(header(p, 'AMP-Email-Allow-Sender')).toBe('news@example.com');
    expect(p.vary).toContain('AMP-Email-Sender');
  });
  it('v2: rejects an untrusted sender', () => {
    expect(plan({ method: 'POST', origin: client, emailSender: 'spam@evil.com' }, email).body).toContain('email-sender-denied');
  });
  it('v1: ACAO, source-origin header and expose for a trusted sender', () => {
    const p = plan({ method: 'POST', origin: client, sourceOrigin: 'news@example.com' }, email);
    expect(header(p, 'Access-Control-Allow-Origin')).toBe(client);
    expect(header(p, 'AMP-Access-Control-Allow-Source-Origin')).toBe('news@example.com');
    expect(header(p, 'Access-Control-Expose-Headers')).toContain('AMP-Access-Control-Allow-Source-Origin');
  });
  it('v2 wins when both are present', () => {
    const p = plan({ method: 'POST', origin: client, emailSender: 'news@example.com', sourceOrigin: 'spam@evil.com' }, email);
    expect(p.email?.version).toBe(2);
    expect(header(p, 'AMP-Email-Allow-Sender')).toBe('news@example.com');
    expect(header(p, 'Access-Control-Allow-Origin')).toBeUndefined();
  });
  it('v1: an untrusted Origin is denied whatever the query says (issue #14)', () => {
    const p = plan({ method: 'POST', origin: 'https://evil.example', sourceOrigin: 'news@example.com' }, email);
    expect(p).toMatchObject({ kind: 'reject', status: 403, email: { version: 1, trusted: true } });
    expect(header(p, 'Access-Control-Allow-Origin')).toBeUndefined();
    const ownClient = normalizeCorsOptions({ email: { senders: ['news@example.com'], clientOrigins: ['https://webmail.example'] } });
    expect(
      header(plan({ method: 'POST', origin: 'https://webmail.example', sourceOrigin: 'news@example.com' }, ownClient), 'Access-Control-Allow-Origin'),
    ).toBe('https://webmail.example');
    expect(plan({ method: 'POST', origin: client, sourceOrigin: 'news@example.com' }, ownClient).kind).toBe('reject');
  });
  it('compares senders in ASCII case only: KELVIN SIGN is not K', () => {
    expect(errorCode(() => normalizeCorsOptions({ email: { senders: ['\u212Aate@example.com'] } }))).toBe('invalid-option');
    const kate = normalizeCorsOptions({ email: { senders: ['kate@example.com'] } });
    expect(plan({ method: 'POST', origin: client, emailSender: '\u212Aate@example.com' }, kate)).toMatchObject({ kind: 'reject', email: { trusted: false } });
  });
  it('is ignored when not configured', () => {
    const p = plan({ method: 'POST', origin: client, emailSender: 'news@example.com' });
    expect(p.kind).toBe('reject');
    expect(p.email).toBeUndefined();
  });
});

describe('helpers', () => {
  it('appendVary appends without replacing or duplicating', () => {
    expect(appendVary('Accept-Encoding', ['Origin'])).toBe('Accept-Encoding, Origin');
    expect(appendVary('origin', ['Origin'])).toBe('origin');
    expect(appendVary(undefined, ['Origin', 'Access-Control-Request-Headers'])).toBe('Origin, Access-Control-Request-Headers');
    expect(appendVary('*', ['Origin'])).toBe('*');
    expect(appendVary(['A', 'B'], ['Origin'])).toBe('A, B, Origin');
  });
  it('ampRedirectTo accepts absolute https URLs only', () => {
    expect(ampRedirectTo('https://example.com/thanks?x=1')).toBe('https://example.com/thanks?x=1');
    for (const bad of ['http://example.com/', '/thanks', 'javascript:alert(1)', 'https://example.com/\r\nSet-Cookie: a', 'https://', '']) {
      expect(errorCode(() => ampRedirectTo(bad))).toBe('invalid-url');
    }
  });
  it('sourceOriginOfUrl reads the query parameter, and marks repeats as ambiguous', () => {
    expect(sourceOriginOfUrl('/api?a=1&__amp_source_origin=https%3A%2F%2Fexample.com')).toBe('https://example.com');
    expect(sourceOriginOfUrl('/api?a=1')).toBeNull();
    expect(sourceOriginOfUrl('/api#__amp_source_origin=x')).toBeNull();
    const twice = sourceOriginOfUrl('/api?__amp_source_origin=https://example.com&__amp_source_origin=https://evil.com');
    expect(verifier.verify(CACHE, { sourceOrigin: twice }).allowed).toBe(false);
  });
  it('sourceOriginOfUrl reads the parameter exactly as URL.searchParams does (encoded names, +, bad escapes, fragments)', () => {
    // Request URLs are ASCII on the wire. The WHATWG URL's own query parameters, as a Fetch handler reads them
    // (a second leading '?' belongs to the first name, unlike the
    // URLSearchParams constructor, which strips one).
    const reference = (url: string): string | null => {
      const values = new URL(url, 'http://publisher.example').searchParams.getAll('__amp_source_origin');
      return values.length === 0 ? null : values.join(',');
    };
    expect(sourceOriginOfUrl('/api??__amp_source_origin=x')).toBeNull();
    expect(sourceOriginOfUrl('/api?%5F_amp_source_origin=https://evil.com')).toBe('https://evil.com');
    expect(sourceOriginOfUrl('/api?__amp_source_origin=a+b%zz')).toBe('a b%zz');
    expect(sourceOriginOfUrl('/api?__amp_source_origin=%FF')).toBe('\ufffd');
    expect(sourceOriginOfUrl('/api?__amp_source_origin')).toBe('');
    const piece = fc.constantFrom(
      '__amp_source_origin',
      '%5F_amp_source_origin',
      '__amp%5Fsource%5Forigin',
      '__amp_source_origin+',
      '_amp_source_origin',
      'a',
      '',
      '=',
      '&',
      '#',
      '?',
      '+',
      '%',
      '%2',
      '%3A',
      '%2F',
      '%FF',
      '%E2%9A%A1',
      '%ED%A0%80',
      'https:',
      '//',
      'example.com',
      '%C3%A9',
    );
    fc.assert(
      fc.property(fc.array(piece, { maxLength: 12 }), (pieces) => {
        const url = `/api?${pieces.join('')}`;
        expect(sourceOriginOfUrl(url), url).toBe(reference(url));
      }),
      { numRuns: 5000 },
    );
  });
});

describe('origin option (drop-in)', () => {
  it('refuses any-origin with credentials', () => {
    expect(errorCode(() => compileOriginOption('*', { credentials: true }))).toBe('unsafe-configuration');
    expect(errorCode(() => compileOriginOption(true, { credentials: true }))).toBe('unsafe-configuration');
    expect(errorCode(() => compileOriginOption(['https://a.com', '*'], { credentials: true }))).toBe('unsafe-configuration');
    expect(errorCode(() => compileOriginOption('*', { credentials: true, perRequest: true }))).toBe('unsafe-configuration');
    expect(compileOriginOption(true, { credentials: true, perRequest: true })('https://a.com')).toBe(true);
    expect(errorCode(() => compileOriginOption('https://a.com/', { credentials: false }))).toBe('invalid-origin');
    expect(errorCode(() => compileOriginOption(42 as never, { credentials: false }))).toBe('invalid-option');
  });
  it('a global or sticky RegExp never alternates', () => {
    for (const re of [/^https:\/\/a\.com$/g, /^https:\/\/a\.com$/y]) {
      const match = compileOriginOption(re, { credentials: true });
      expect([1, 2, 3, 4].map(() => match('https://a.com'))).toEqual([true, true, true, true]);
    }
  });
  it('judges with the matcher and never reflects an unparsed origin', () => {
    const match = compileOriginOption(true, { credentials: false });
    expect(judgeWithOriginMatcher(match, 'https://a.com').allowed).toBe(true);
    expect(judgeWithOriginMatcher(match, 'https://a.com\r\nX: y')).toMatchObject({ allowed: false, reason: 'control-character' });
    expect(judgeWithOriginMatcher(match, 'null')).toMatchObject({ allowed: false, reason: 'null-origin' });
    const list = compileOriginOption(['https://a.com', /\.b\.com$/], { credentials: true });
    expect(judgeWithOriginMatcher(list, 'https://x.b.com').allowed).toBe(true);
    expect(judgeWithOriginMatcher(list, 'https://c.com')).toMatchObject({ allowed: false, reason: 'unknown-origin' });
    expect(judgeWithOriginMatcher(list, 'https://a.com', { sourceOrigin: 'https://c.com' })).toMatchObject({ reason: 'source-origin-mismatch' });
  });
});

describe('createCorsPolicy', () => {
  it('needs publishers or a verifier; combines both', () => {
    expect(errorCode(() => createCorsPolicy({}))).toBe('invalid-option');
    expect(createCorsPolicy({ publishers: ['example.com'], verifier }).verifier).not.toBeNull();
    expect(errorCode(() => createCorsPolicy({ verifier: {} as never }))).toBe('invalid-option');
  });
  it('stays synchronous with a synchronous verifier', () => {
    const decision = createCorsPolicy({ publishers: ['example.com'] }).decide({ method: 'GET', origin: CACHE });
    expect(decision).not.toBeInstanceOf(Promise);
  });
  it('awaits an asynchronous verifier and falls back to the extra source', async () => {
    const policy = createCorsPolicy({ verifier: { verify: async (origin, context) => verifier.verify(origin, context) } });
    const extra = {
      verify: (origin: string | null | undefined) => judgeWithOriginMatcher(compileOriginOption('https://partner.com', { credentials: true }), origin),
    };
    const allowed = await policy.decide({ method: 'GET', origin: 'https://partner.com' }, extra);
    expect(allowed.verdict).toMatchObject({ allowed: true, reason: 'publisher-origin' });
    const denied = await policy.decide({ method: 'GET', origin: 'https://evil.com' }, extra);
    expect(denied.verdict).toMatchObject({ allowed: false, reason: 'unknown-origin' });
    expect(denied.plan.kind).toBe('reject');
  });
});

describe('appendVary', () => {
  it('drops blank names and trims, with or without an existing value', () => {
    expect(appendVary(undefined, ['', 'Origin'])).toBe('Origin');
    expect(appendVary(undefined, [' Origin ', 'origin'])).toBe('Origin');
    expect(appendVary('Accept-Encoding', ['', ' Origin'])).toBe('Accept-Encoding, Origin');
    expect(appendVary(undefined, ['Origin', 'Access-Control-Request-Headers', 'ORIGIN'])).toBe('Origin, Access-Control-Request-Headers');
    expect(appendVary('*', ['Origin'])).toBe('*');
  });
});
