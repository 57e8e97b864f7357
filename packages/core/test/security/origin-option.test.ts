// Drop-in origin options at the core level (issue #14 item 3), so that the
// mutation run (packages/core/test/security) covers legacy-origin-option.ts: RegExps asked
// about canary origins, and the origin-function guard behind the Express and
// Koa adapters (construction probe, per-request questions, canary re-check).
import { isAmpCorsError, type Verdict } from '@ampcors/core';
import { compileOriginOption, createCorsPolicy } from '@ampcors/core/adapter';
import { afterEach, describe, expect, it, vi } from 'vitest';

const A = 'https://a.example';
const TAIL = 'together with credentials lets every site read credentialed responses; list the trusted origins or set credentials: false';

function refusal(build: () => unknown): string {
  try {
    build();
  } catch (error) {
    return isAmpCorsError(error) ? `${error.code}: ${error.message}` : `other: ${String(error)}`;
  }
  return 'accepted';
}

describe('compileOriginOption: a RegExp that matches a canary origin is refused with credentials, like true', () => {
  // Each pattern matches exactly one kind of canary: dropping any canary lets one through.
  it.each([
    ['.invalid (the reserved TLD)', /\.invalid$/],
    ['a .com host', /^https:\/\/[a-z]+\.com$/],
    ['every AMP cache origin', /\.cdn\.ampproject\.org$/],
    ['a www. host under .org', /^https:\/\/www\./],
    ['http', /^http:/],
    ['a port', /:8443$/],
  ])('%s', (_name, pattern) => {
    const message = refusal(() => compileOriginOption(pattern, { credentials: true }));
    expect(message.startsWith(`unsafe-configuration: origin ${String(pattern)} (it allowed `)).toBe(true);
    expect(message.endsWith(TAIL)).toBe(true);
    expect(refusal(() => compileOriginOption([A, pattern], { credentials: true, perRequest: true }))).toContain('an origin no configuration names');
    expect(compileOriginOption(pattern, { credentials: false })(A)).toBe(false);
  });

  it('names the canary it matched and keeps the wording of true', () => {
    const byTrue = refusal(() => compileOriginOption(true, { credentials: true }));
    const byPattern = refusal(() => compileOriginOption(/.*/, { credentials: true }));
    expect(byTrue.endsWith(TAIL)).toBe(true);
    expect(byPattern.endsWith(TAIL)).toBe(true);
    expect(byPattern).toMatch(
      /^unsafe-configuration: origin \/\.\*\/ \(it allowed https:\/\/ampcorscanary[a-z]{12}\.invalid, an origin no configuration names\) together/,
    );
  });

  it('keeps precise patterns, and clones g and y patterns before asking them', () => {
    const sticky = /^https:\/\/a\.example$/gy;
    const matcher = compileOriginOption(sticky, { credentials: true });
    expect([matcher(A), matcher(A), matcher(A)]).toEqual([true, true, true]);
    expect(sticky.lastIndex).toBe(0);
    expect(compileOriginOption(/^https:\/\/([a-z0-9-]+\.)*example\.com$/, { credentials: true })('https://evil.com')).toBe(false);
  });
});

/** A guard built the way the adapters build it, and the questions its function was asked. */
function guarded(answer: (origin: string) => unknown, credentials = true) {
  const asked: string[] = [];
  const ask = (origin: string) => {
    asked.push(origin);
    return answer(origin);
  };
  const policy = createCorsPolicy({}, true);
  const source = policy.guardOriginFunction(ask, credentials);
  return { asked, source, ask };
}

/** The process's canaries: the random label, and the documentation IP addresses (192.0.2.0/24, 198.51.100.0/24, 203.0.113.0/24, 2001:db8::/32). */
const isCanary = (origin: string) => /ampcorscanary[a-z]{12}|\/\/(192\.0\.2|198\.51\.100|203\.0\.113)\.[0-9]+|\/\/\[2001:db8:/.test(origin);
/** `origin` with the canary label written L, a documentation IPv4 address V4 and an IPv6 one V6. */
const canaryShape = (origin: string) =>
  origin
    .replace(/ampcorscanary[a-z]{12}/, 'L')
    .replace(/(192\.0\.2|198\.51\.100|203\.0\.113)\.[0-9]+/, 'V4')
    .replace(/\[2001:db8:[0-9a-f:]+\]/, 'V6');
const allowed = (verdict: Verdict) => [verdict.allowed, verdict.origin, verdict.allowed ? verdict.sourceOrigin : undefined];

describe('guardOriginFunction: construction', () => {
  afterEach(() => {
    vi.useRealTimers();
  });

  it('refuses, with credentials, a function that allows a canary synchronously, in every answer shape', () => {
    for (const answer of [() => true, (o: string) => o, () => '*', () => /.*/, () => [/ampcorscanary/], (o: string) => (o.endsWith('.invalid') ? o : false)]) {
      const message = refusal(() => guarded(answer));
      expect(message).toMatch(/^unsafe-configuration: the origin function \(it allowed https?:\/\/ampcorscanary[a-z]{12}\./);
      expect(message.endsWith(TAIL)).toBe(true);
    }
  });

  it('asks every canary shape, and nothing without credentials', () => {
    const { asked } = guarded(() => false);
    // Six names, three IPv4 addresses (their confirmations asked only once one is allowed) and three IPv6 ones.
    expect(asked.length).toBe(12);
    expect(asked.every(isCanary)).toBe(true);
    expect(new Set(asked.map(canaryShape))).toEqual(
      new Set([
        'https://L.invalid',
        'https://L.com',
        'https://L.cdn.ampproject.org',
        'https://www.L.org',
        'http://L.invalid',
        'https://L.invalid:8443',
        'https://V4',
        'http://V4',
        'https://V4:8443',
        'https://V6',
        'http://V6',
        'https://V6:8443',
      ]),
    );
    expect(guarded(() => true, false).asked).toEqual([]);
  });

  // Attacker's review, session 15 (helper-55's lead, fixed by helper-58): every canary was a domain name.
  it('refuses, with credentials, a function allowing every IPv4 or every IPv6 address, naming the address it allowed', () => {
    for (const [answer, shown] of [
      [(o: string) => /^https:\/\/\d/.test(o), /it allowed https:\/\/192\.0\.2\.[0-9]+,/],
      [(o: string) => /^https?:\/\/\d+\.\d+\.\d+\.\d+(:\d+)?$/.test(o), /it allowed https:\/\/192\.0\.2\.[0-9]+,/],
      [(o: string) => /^http:\/\/(\d{1,3}\.){3}\d{1,3}$/.test(o), /it allowed http:\/\/198\.51\.100\.[0-9]+,/],
      [(o: string) => o.includes('//['), /it allowed https:\/\/\[2001:db8:[0-9a-f:]+\],/],
      [(o: string) => (/^https?:\/\/\[[0-9a-f:]+\](:\d+)?$/.test(o) ? o : false), /it allowed https:\/\/\[2001:db8:[0-9a-f:]+\],/],
    ] as const) {
      const message = refusal(() => guarded(answer));
      expect(message).toMatch(shown);
      expect(message.endsWith(TAIL)).toBe(true);
    }
  });

  it('accepts a function naming documentation addresses, even a whole documentation range: an IPv4 canary counts only with its confirmation', () => {
    for (const range of ['192.0.2', '198.51.100', '203.0.113']) {
      const all = new Set(
        Array.from({ length: 254 }, (_, i) => [`https://${range}.${i + 1}`, `http://${range}.${i + 1}`, `https://${range}.${i + 1}:8443`]).flat(),
      );
      const { asked } = guarded((o) => all.has(o));
      // The canary of that range was allowed, so its confirmation (another range) was asked, denied, and asked once more (a "no" right after a "yes").
      expect(asked.length).toBe(14);
    }
    expect(refusal(() => guarded((o) => ['http://127.0.0.1:3000', 'https://[2001:db8::5]', 'https://192.0.2.1'].includes(o)))).toBe('accepted');
  });

  it('accepts a function that throws, rejects, answers garbage or a different origin for the canaries', () => {
    for (const answer of [
      () => {
        throw new Error('unknown');
      },
      () => Promise.reject(new Error('unknown')),
      () => 'not an origin',
      () => A,
      () => [false, 'https://b.example'],
      () => null,
    ]) {
      expect(refusal(() => guarded(answer))).toBe('accepted');
    }
  });

  it('fails every request once a late answer allows a canary', async () => {
    const { source } = guarded((o) => Promise.resolve(o === A || isCanary(o)));
    await new Promise((resolve) => setTimeout(resolve, 0));
    expect(() => source().verify(A)).toThrow(TAIL);
  });

  it('does not hold construction on silence, nor refuse for it; a credentialed allow left unknown after two seconds fails, that request only', async () => {
    vi.useFakeTimers();
    let answering = false;
    const { source } = guarded((o) => (o === A ? true : answering ? false : new Promise(() => undefined)));
    const pending = source().verify(A);
    expect(pending).toBeInstanceOf(Promise);
    let settled: string | undefined;
    void (pending as Promise<Verdict>).then(
      (verdict) => (settled = `allowed ${String(verdict.allowed)}`),
      (error: unknown) => (settled = isAmpCorsError(error) ? `${error.code}: ${error.message}` : `other: ${String(error)}`),
    );
    await vi.advanceTimersByTimeAsync(1_999);
    expect(settled).toBeUndefined();
    await vi.advanceTimersByTimeAsync(1);
    // Unknown never yields credentials: the request fails, naming the question it waited on and the bound.
    expect(settled).toMatch(
      /^unsafe-configuration: the origin function allowed https:\/\/a\.example with credentials but did not answer about https:\/\/[a-z.]*ampcorscanary[a-z]{12}\.[a-z.]+ \(a canary origin no configuration names\) within 2 s; credentials withheld/,
    );
    // Not remembered: once the function answers again, the next request is answered.
    answering = true;
    expect(allowed(source().verify(A) as Verdict)).toEqual([true, A, undefined]);
  });

  it('counts a canary allowed after the two seconds at construction: every later request fails', async () => {
    vi.useFakeTimers();
    const { source } = guarded((o) => (o === A ? true : new Promise((resolve) => setTimeout(() => resolve(isCanary(o)), 2_500))));
    await vi.advanceTimersByTimeAsync(2_499);
    // Not refused yet: the request is asked about (and its own questions wait).
    const early = source().verify(A);
    expect(early).toBeInstanceOf(Promise);
    const earlyOutcome = (early as Promise<Verdict>).then(
      () => 'answered',
      (error: unknown) => (error as Error).message,
    );
    await vi.advanceTimersByTimeAsync(1);
    // The construction probe's late yes: refused from now on, like a synchronous one.
    expect(() => source().verify(A)).toThrow(TAIL);
    // The request asked before it waited 2 s for its own questions (answered only after 2.5 s): unknown, no credentials.
    await vi.advanceTimersByTimeAsync(2_000);
    expect(await earlyOutcome).toMatch(/did not answer about .* within 2 s; credentials withheld/);
  });
});

describe('guardOriginFunction: per request', () => {
  it('asks nothing without an Origin, for a malformed one, or without AMP-Same-Origin', () => {
    const { asked, source } = guarded((o) => o === A);
    asked.length = 0;
    expect(source().verify(null)).toMatchObject({ allowed: false, reason: 'missing' });
    expect(source().verify('https://A.example')).toMatchObject({ allowed: false, reason: 'not-canonical' });
    expect(source().verify(undefined, { sourceOrigin: A })).toMatchObject({ allowed: false, reason: 'source-origin-mismatch' });
    expect(source().verify('', { ampSameOrigin: 'true' })).toMatchObject({ allowed: true, via: 'same-origin' });
    expect(asked).toEqual([]);
  });

  it('asks about a same-origin request source origin itself', () => {
    const { asked, source } = guarded((o) => o === A);
    asked.length = 0;
    expect(allowed(source().verify(null, { ampSameOrigin: 'true', sourceOrigin: A }) as Verdict)).toEqual([true, null, A]);
    expect(source().verify(null, { ampSameOrigin: 'true', sourceOrigin: 'https://evil.com' })).toMatchObject({
      allowed: false,
      reason: 'source-origin-mismatch',
    });
    expect(asked).toEqual([A, 'https://evil.com']);
  });

  it('asks about a different __amp_source_origin separately: true vouches only for the origin asked about', () => {
    const { asked, source } = guarded((o) => o === A);
    asked.length = 0;
    expect(source().verify(A, { sourceOrigin: 'https://evil.com' })).toMatchObject({ allowed: false, reason: 'source-origin-mismatch' });
    expect(asked.slice(0, 2)).toEqual([A, 'https://evil.com']);
    asked.length = 0;
    expect(allowed(source().verify(A, { sourceOrigin: A }) as Verdict)).toEqual([true, A, A]);
    // Once about the origin itself; the rest are the canary and its look-alikes (one dot made a letter, the label continued
    // by the canary digits, the label and the TLD made others of their shape: no canary label).
    expect(asked.filter((o) => !isCanary(o))).toEqual([
      A,
      'https://aqexample',
      expect.stringMatching(/^https:\/\/a[0-9]{12}\.example$/),
      'https://f.example',
      'https://a.qqqqqqq',
    ]);
  });

  it('re-checks an allow with credentials against one canary of the same scheme and port, and fails when it is allowed too', () => {
    let open = false;
    const { asked, source } = guarded((o) => open || o === 'http://a.example:8080');
    asked.length = 0;
    expect(allowed(source().verify('http://a.example:8080') as Verdict)).toEqual([true, 'http://a.example:8080', undefined]);
    // The origin, then a canary (asked twice: a "no" right after the origin's "yes") and the look-alikes, all of the same scheme and port.
    expect(asked[2]).toBe(asked[1]);
    expect(asked.map(canaryShape)).toEqual([
      'http://a.example:8080',
      expect.stringMatching(/^http:\/\/(www\.)?L\.[a-z.]+:8080$/),
      expect.stringMatching(/^http:\/\/(www\.)?L\.[a-z.]+:8080$/),
      'http://a.example.L.invalid:8080',
      'http://La.example:8080',
      'http://aqexample:8080',
      'http://aL.example:8080',
      expect.stringMatching(/^http:\/\/a[0-9]{12}\.example:8080$/),
      'http://f.example:8080',
      'http://a.qqqqqqq:8080',
      'http://V4:8080',
    ]);
    open = true;
    expect(() => source().verify('http://a.example:8080')).toThrow(TAIL);
    // Without credentials (the construction's or this request's) the function is trusted as it answers.
    expect(allowed(source(undefined, false).verify('https://evil.com') as Verdict)).toEqual([true, 'https://evil.com', undefined]);
  });

  it("answers of '*' or a catch-all pattern with credentials are errors; without credentials they allow the origin asked about", () => {
    for (const answer of ['*', /.*/]) {
      const { source } = guarded((o) => (o === A ? answer : false));
      expect(() => source().verify(A)).toThrow(TAIL);
      expect(allowed(source(undefined, false).verify(A) as Verdict)).toEqual([true, A, undefined]);
    }
  });

  it("asks in the request's own way when given one, and denies what it does not allow", async () => {
    const { source } = guarded(() => false);
    const perRequest = source(async (o) => (o === A ? [A] : undefined));
    expect(allowed(await perRequest.verify(A))).toEqual([true, A, undefined]);
    expect(await perRequest.verify('https://evil.com')).toMatchObject({ allowed: false, reason: 'unknown-origin' });
  });
});
