// The vitest configuration StrykerJS runs for each mutant of @ampcors/core
// (stryker.config.mjs, driven group by group by test/security/mutation.ts):
// every test of core except the two slow differential/property suites, the
// core-level security tests (corpus, registry faults; not attack-properties,
// whose whole-verifier properties made every verifier mutant cost seconds on a
// shared 2-core machine), and the mutation-focused packages/core/test/security suites.
// Property tests (fast-check) stay in, but `fast-check` is aliased to
// ./fast-check-capped.ts: at most AMPCORS_PROPERTY_RUNS runs per property
// (default 100) and a fixed seed, so a run is fast and repeatable.
import { fileURLToPath } from 'node:url';
import { defineConfig } from 'vitest/config';

const here = (path: string) => fileURLToPath(new URL(path, import.meta.url));

/** Core test files left out: slow, and they test other libraries as much as core. */
export const EXCLUDED_CORE_TESTS = [
  // fast-check against @ampproject/toolbox-cache-url (network-free but slow, and
  // it measures the divergence catalogue, not core's own decisions)
  'differential',
  // thousands of runs of whole-verifier properties; test/security/attack-properties
  // and the packages/core/test/security suites cover the same decisions with fewer inputs
  'properties',
];

export default defineConfig({
  root: here('../..'),
  resolve: {
    alias: [
      // Core's subpath entries (`@ampcors/core/adapter`, …) are files of its src/; matched before the package itself.
      { find: /^@ampcors\/core\/([a-z-]+)$/, replacement: `${here('../../packages/core/src/')}$1.ts` },
      { find: '@ampcors/core', replacement: here('../../packages/core/src/index.ts') },
      { find: /^fast-check$/, replacement: here('./fast-check-capped.ts') },
    ],
  },
  test: {
    include: [
      'packages/core/test/*.test.ts',
      'test/security/corpus-verify.test.ts',
      'test/security/caches-faults.test.ts',
      'packages/core/test/security/*.test.ts',
    ],
    exclude: EXCLUDED_CORE_TESTS.map((name) => `packages/core/test/${name}.test.ts`),
    testTimeout: 30_000,
    env: { AMPCORS_PROPERTY_RUNS: process.env.AMPCORS_PROPERTY_RUNS ?? '100' },
  },
});
