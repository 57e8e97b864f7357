import { describe, expect, it } from 'vitest';
import { HARNESSES } from './harnesses.js';
import { NO_OPTIONS, SCENARIOS } from './scenarios.js';

function varyNames(value: string | undefined): string[] {
  return (value ?? '')
    .split(',')
    .map((name) => name.trim().toLowerCase())
    .filter((name) => name !== '');
}

describe.each(HARNESSES.map((harness) => [harness.name, harness] as const))('conformance: %s', (_name, harness) => {
  it.each(SCENARIOS.map((scenario) => [scenario.name, scenario] as const))('%s', async (_scenario, { options, request, expect: want }) => {
    const got = await harness.run(options, request);
    expect(got.status).toBe(want.status);
    for (const [name, value] of Object.entries(want.headers ?? {})) {
      expect(got.headers[name], name).toBe(value === null ? undefined : value);
    }
    const vary = varyNames(got.headers.vary);
    for (const name of want.vary) expect(vary, `Vary: ${got.headers.vary}`).toContain(name.toLowerCase());
    expect(new Set(vary).size, 'Vary lists each name once').toBe(vary.length);
    expect(got.handlerRuns > 0, 'handler ran').toBe(want.handlerRan);
    if (want.bodyIncludes !== undefined) expect(got.text).toContain(want.bodyIncludes);
    if (want.seenReason !== undefined) expect(got.seenReason).toBe(want.seenReason);
    // Invariants of every response: the literal * only with no options at all (issue #15), and never with credentials.
    if (options !== NO_OPTIONS) expect(got.headers['access-control-allow-origin']).not.toBe('*');
    if (got.headers['access-control-allow-origin'] === '*') expect(got.headers['access-control-allow-credentials']).toBeUndefined();
    expect(got.headers['access-control-allow-origin']).not.toBe('null');
    expect(varyNames(got.headers['access-control-allow-headers'])).not.toContain('amp-same-origin');
  });
});
