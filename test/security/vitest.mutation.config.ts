// The vitest configuration StrykerJS runs for each mutant of @ampcors/core:
// core's example-based tests of the verification path and the core-level
// security tests. Property tests (fast-check), the fuzzer and HTTP tests are
// left out: at thousands of runs per mutant they made a run last hours.
import { fileURLToPath } from 'node:url';
import { defineConfig } from 'vitest/config';

export default defineConfig({
  root: fileURLToPath(new URL('../..', import.meta.url)),
  resolve: { alias: { '@ampcors/core': fileURLToPath(new URL('../../packages/core/src/index.ts', import.meta.url)) } },
  test: {
    include: [
      ...['verifier', 'origin-header', 'published-vectors', 'caches', 'cache-url', 'allow-set'].map(
        (name) => `packages/core/test/${name}.test.ts`,
      ),
      'test/security/corpus-verify.test.ts',
      'test/security/caches-faults.test.ts',
      'test/security/core-*.test.ts',
    ],
    testTimeout: 60_000,
  },
});
