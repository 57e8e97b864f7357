import { fileURLToPath } from 'node:url';
import { defineConfig } from 'vitest/config';

const src = (pkg: string) => fileURLToPath(new URL(`../packages/${pkg}/src/index.ts`, import.meta.url));

// The harness's own tests (`npx vitest run --config bench/vitest.config.ts` from the root):
// they import the TypeScript sources, like the root unit tests.
export default defineConfig({
  resolve: {
    alias: {
      '@ampcors/core': src('core'),
      '@ampcors/express': src('express'),
      '@ampcors/koa': src('koa'),
      '@ampcors/fetch': src('fetch'),
    },
  },
  test: {
    root: fileURLToPath(new URL('.', import.meta.url)),
    include: ['test/**/*.test.ts'],
    testTimeout: 20_000,
    pool: 'forks',
  },
});
