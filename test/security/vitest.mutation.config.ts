// The vitest configuration StrykerJS runs for each mutant of @ampcors/core:
// core's tests of the verification path and the core-level security tests
// (no HTTP, no fuzzer, no SPEC §5 tests: those files are not mutated).
import { fileURLToPath } from 'node:url';
import { defineConfig } from 'vitest/config';

export default defineConfig({
  root: fileURLToPath(new URL('../..', import.meta.url)),
  resolve: { alias: { '@ampcors/core': fileURLToPath(new URL('../../packages/core/src/index.ts', import.meta.url)) } },
  test: {
    include: [
      ...['verifier', 'origin-header', 'properties', 'published-vectors', 'differential', 'caches', 'cache-url', 'explain-origin'].map(
        (name) => `packages/core/test/${name}.test.ts`,
      ),
      'test/security/corpus-verify.test.ts',
      'test/security/attack-properties.test.ts',
      'test/security/caches-faults.test.ts',
      'test/security/core-*.test.ts',
    ],
    testTimeout: 60_000,
  },
});
