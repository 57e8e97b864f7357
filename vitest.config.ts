import { fileURLToPath } from 'node:url';
import { defineConfig } from 'vitest/config';

const src = (pkg: string) => fileURLToPath(new URL(`./packages/${pkg}/src/index.ts`, import.meta.url));
const coreSubpath = fileURLToPath(new URL('./packages/core/src/', import.meta.url));

// Unit tests import the TypeScript sources directly; the runtime, example and
// package checks exercise the built `dist/` output instead.
export default defineConfig({
  resolve: {
    alias: [
      // Core's subpath entries (`@ampcors/core/adapter`, …) are files of its src/; matched before the package itself.
      { find: /^@ampcors\/core\/([a-z-]+)$/, replacement: `${coreSubpath}$1.ts` },
      { find: '@ampcors/core', replacement: src('core') },
      { find: '@ampcors/express', replacement: src('express') },
      { find: '@ampcors/koa', replacement: src('koa') },
      { find: '@ampcors/fetch', replacement: src('fetch') },
      { find: '@ampcors/hono', replacement: src('hono') },
      { find: '@ampcors/fastify', replacement: src('fastify') },
      { find: '@ampcors/redis', replacement: src('redis') },
      { find: '@ampcors/cli', replacement: src('cli') },
      { find: 'playground', replacement: src('playground') },
    ],
  },
  test: {
    include: ['packages/*/test/**/*.test.ts', 'test/**/*.test.ts', 'examples/*/test/**/*.test.ts', 'bench/test/**/*.test.ts'],
    testTimeout: 20_000,
    hookTimeout: 120_000,
    pool: 'forks',
  },
});
