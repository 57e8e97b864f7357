import { fileURLToPath } from 'node:url';
import { defineConfig } from 'vitest/config';

const src = (pkg: string) => fileURLToPath(new URL(`../packages/${pkg}/src/index.ts`, import.meta.url));
const coreSubpath = fileURLToPath(new URL('../packages/core/src/', import.meta.url));

// The harness's own tests (`npx vitest run --config bench/vitest.config.ts` from the root):
// they import the TypeScript sources, like the root unit tests.
export default defineConfig({
  resolve: {
    alias: [
      // Core's subpath entries (`@ampcors/core/adapter`, …) are files of its src/; matched before the package itself.
      { find: /^@ampcors\/core\/([a-z-]+)$/, replacement: `${coreSubpath}$1.ts` },
      { find: '@ampcors/core', replacement: src('core') },
      { find: '@ampcors/express', replacement: src('express') },
      { find: '@ampcors/koa', replacement: src('koa') },
      { find: '@ampcors/fetch', replacement: src('fetch') },
    ],
  },
  test: {
    root: fileURLToPath(new URL('.', import.meta.url)),
    include: ['test/**/*.test.ts'],
    testTimeout: 20_000,
    pool: 'forks',
  },
});
