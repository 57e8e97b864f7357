// The short fuzz run of the adapters in the test suite: 2k random and mutated
// requests per adapter, in process (the full run is `pnpm fuzz`, ≥ 1M each).
import { describe, expect, it } from 'vitest';
import { adapterFuzzTargets, asHeaderValue, checkAnswer } from './fuzz-adapters.js';
import { fuzzAsync } from './fuzz-engine.js';

const SEED = Number(process.env.AMPCORS_FUZZ_SEED ?? Date.now() & 0x7fffffff);

describe(`adapter fuzz (short run, seed ${SEED})`, () => {
  it.each(adapterFuzzTargets().map((target) => [target.name, target] as const))('%s: 2k requests, every answer matches the core verdict', async (_name, target) => {
    const result = await fuzzAsync(target, 2_000, 15, SEED);
    expect(result.findings).toEqual([]);
    expect(result.random).toBeGreaterThan(500);
    expect(result.mutated).toBeGreaterThan(500);
    // The run reached both sides of the decision, not only early refusals.
    expect(result.outcomes.denied).toBeGreaterThan(0);
    expect(result.outcomes['no Origin']).toBeGreaterThan(0);
  });

  it('the answer check catches a denied origin that got through', () => {
    const request = { method: 'POST', origin: 'https://evil-example-com.cdn.ampproject.org', ampSameOrigin: null, requestMethod: null, requestHeaders: null, sourceOrigin: null };
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
