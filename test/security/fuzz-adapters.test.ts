// The short fuzz run of the adapters in the test suite: 2k random and mutated
// requests per adapter, in process, and 1k per adapter in the drop-in and
// AMP for Email modes (the full run is `pnpm fuzz`, ≥ 1M each).
import { describe, expect, it } from 'vitest';
import { adapterFuzzTargets, asHeaderValue, checkAnswer, checkEmailAnswer, dropInFuzzTargets, emailFuzzTargets, trustedSender } from './fuzz-adapters.js';
import { fuzzAsync } from './fuzz-engine.js';

const SEED = Number(process.env.AMPCORS_FUZZ_SEED ?? Date.now() & 0x7fffffff);

describe(`adapter fuzz (short run, seed ${SEED})`, () => {
  it.each(adapterFuzzTargets().map((target) => [target.name, target] as const))(
    '%s: 2k requests, every answer matches the core verdict',
    async (_name, target) => {
      const result = await fuzzAsync(target, 2_000, 15, SEED);
      expect(result.findings).toEqual([]);
      expect(result.random).toBeGreaterThan(500);
      expect(result.mutated).toBeGreaterThan(500);
      // The run reached both sides of the decision, not only early refusals.
      expect(result.outcomes.denied).toBeGreaterThan(0);
      expect(result.outcomes['no Origin']).toBeGreaterThan(0);
    },
  );

  it('the answer check catches a denied origin that got through', () => {
    const request = {
      method: 'POST',
      origin: 'https://evil-example-com.cdn.ampproject.org',
      ampSameOrigin: null,
      requestMethod: null,
      requestHeaders: null,
      sourceOrigin: null,
    };
    const echoed = { vary: 'Origin', 'access-control-allow-origin': request.origin, 'access-control-allow-credentials': 'true' };
    expect(checkAnswer(request, { status: 200, headers: echoed, handlerRan: true })).toMatch(/status 200, want 403/);
    expect(checkAnswer(request, { status: 403, headers: { vary: 'Origin' }, handlerRan: true })).toMatch(/handler ran/);
    expect(checkAnswer(request, { status: 403, headers: { vary: 'Origin' }, handlerRan: false })).toBeUndefined();
  });

  it('header values are what an HTTP parser delivers', () => {
    expect(asHeaderValue(' https://a.example\r\n ')).toBe('https://a.example');
    // A character above U+00FF arrives as its UTF-8 octets, read as latin1; latin1 ones arrive as sent.
    expect(asHeaderValue('aש')).toBe('a\u00d7\u00a9');
    expect(asHeaderValue('ü')).toBe('ü');
  });
});

describe(`drop-in option fuzz (short run, seed ${SEED})`, () => {
  it.each(dropInFuzzTargets().map((target) => [target.name, target] as const))(
    '%s: 1k random options and requests, credentials only for named origins',
    async (_name, target) => {
      const result = await fuzzAsync(target, 1_000, 15, SEED);
      expect(result.findings).toEqual([]);
      // Both sides were reached: refusals, guarded errors and credentialed allows.
      expect(result.outcomes['refused at construction']).toBeGreaterThan(0);
      expect(result.outcomes['allowed with credentials']).toBeGreaterThan(0);
      expect(result.outcomes['allowed without credentials']).toBeGreaterThan(0);
    },
  );
});

describe(`AMP for Email fuzz (short run, seed ${SEED})`, () => {
  it.each(emailFuzzTargets().map((target) => [target.name, target] as const))('%s: 1k requests, no wrong allow', async (_name, target) => {
    const result = await fuzzAsync(target, 1_000, 15, SEED);
    expect(result.findings).toEqual([]);
    expect(result.outcomes['v1 trusted sender']).toBeGreaterThan(0);
    expect(result.outcomes['v2 trusted sender']).toBeGreaterThan(0);
  });

  it('the email check catches the v1 hole: credentials to any Origin because of the query string', () => {
    const hole = {
      method: 'POST',
      origin: 'https://evil.example',
      ampSameOrigin: null,
      requestMethod: null,
      requestHeaders: null,
      sourceOrigin: 'news@example.com',
      emailSender: null,
    };
    const answer = {
      status: 200,
      headers: { vary: 'Origin', 'access-control-allow-origin': hole.origin, 'access-control-allow-credentials': 'true' },
      handlerRan: true,
    };
    expect(checkEmailAnswer(hole, answer)).toMatch(/^wrong allow/);
    expect(
      checkEmailAnswer(
        { ...hole, origin: 'https://mail.google.com' },
        { ...answer, headers: { ...answer.headers, 'access-control-allow-origin': 'https://mail.google.com' } },
      ),
    ).toBeUndefined();
    expect(checkEmailAnswer(hole, { status: 403, headers: { vary: 'Origin' }, handlerRan: true })).toMatch(/ran the handler/);
  });

  it('senders compare in ASCII case only', () => {
    expect(trustedSender('NEWS@example.COM')).toBe(true);
    expect(trustedSender('\u212Aate@example.com')).toBe(false);
    expect(trustedSender('kate@example.com ')).toBe(false);
  });
});
