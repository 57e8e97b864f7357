// The short fuzz run of the test suite: 10k random and mutated inputs per
// entry point of @ampcors/core (the full run is `pnpm fuzz`, ≥ 1M each).
import { describe, expect, it } from 'vitest';
import { fuzz, fuzzTargets } from './fuzz-engine.js';

const SEED = Number(process.env.AMPCORS_FUZZ_SEED ?? Date.now() & 0x7fffffff);

describe(`fuzz (short run, seed ${SEED})`, () => {
  it.each(fuzzTargets().map((target) => [target.name, target] as const))('%s: 10k inputs, no crash, no unexplained allow', (_name, target) => {
    const result = fuzz(target, 10_000, 15, SEED);
    expect(result.findings).toEqual([]);
    expect(result.random).toBeGreaterThan(1_000);
    expect(result.mutated).toBeGreaterThan(1_000);
  });
});
