/**
 * fast-check as seen by the tests during mutation testing
 * (test/security/vitest.mutation.config.ts aliases `fast-check` here): the
 * same API, but `assert` runs at most AMPCORS_PROPERTY_RUNS runs (default
 * 100) and, when a property gives no seed, uses AMPCORS_PROPERTY_SEED
 * (default 1), so that every mutant meets the same generated inputs and a
 * run is repeatable. Outside mutation testing nothing imports this module.
 */
// The real module, by path: an import of `fast-check` would come back here.
import * as real from '../../node_modules/fast-check/lib/fast-check.js';

export * from '../../node_modules/fast-check/lib/fast-check.js';

function positive(name: string, fallback: number): number {
  const value = Number(process.env[name] ?? fallback);
  return Number.isSafeInteger(value) && value > 0 ? value : fallback;
}

/** Most runs of one property under mutation testing. */
export const PROPERTY_RUNS = positive('AMPCORS_PROPERTY_RUNS', 100);
/** Seed of a property that does not choose its own. */
export const PROPERTY_SEED = positive('AMPCORS_PROPERTY_SEED', 1);

/** `fc.assert`, with at most {@link PROPERTY_RUNS} runs and a fixed default seed. */
export const assert: typeof real.assert = ((property: Parameters<typeof real.assert>[0], params?: Parameters<typeof real.assert>[1]) =>
  real.assert(property as never, {
    ...params,
    numRuns: Math.min(params?.numRuns ?? PROPERTY_RUNS, PROPERTY_RUNS),
    seed: params?.seed ?? PROPERTY_SEED,
  })) as typeof real.assert;

const capped: typeof real = { ...real, assert };
export default capped;
