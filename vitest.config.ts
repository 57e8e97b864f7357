import { fileURLToPath } from 'node:url';
import { defineConfig } from 'vitest/config';

const src = (pkg: string) => fileURLToPath(new URL(`./packages/${pkg}/src/index.ts`, import.meta.url));

// Unit tests import the TypeScript sources directly; the runtime, example and
// package checks exercise the built `dist/` output instead.
export default defineConfig({
  resolve: {
    alias: {
      '@ampcors/core': src('core'),
      '@ampcors/express': src('express'),
      '@ampcors/koa': src('koa'),
      '@ampcors/fetch': src('fetch'),
      '@ampcors/hono': src('hono'),
      '@ampcors/fastify': src('fastify'),
      '@ampcors/redis': src('redis'),
      '@ampcors/cli': src('cli'),
      playground: src('playground'),
    },
  },
  test: {
    include: ['packages/*/test/**/*.test.ts', 'test/**/*.test.ts', 'examples/*/test/**/*.test.ts', 'bench/test/**/*.test.ts'],
    testTimeout: 20_000,
    hookTimeout: 120_000,
    pool: 'forks',
  },
});
