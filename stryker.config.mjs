// StrykerJS over @ampcors/core (issue #6). Run with `pnpm mutation`
// (test/security/mutation.ts), which runs one group of files at a time
// (AMPCORS_MUTATE, comma-separated globs; AMPCORS_MUTATION_REPORT, the JSON
// report path), bounds each in time and writes test/security/MUTATION.md.
const mutate = process.env.AMPCORS_MUTATE?.split(',') ?? ['packages/core/src/**/*.ts', '!packages/core/src/**/*.d.ts', '!packages/core/src/index.ts'];
/** @type {import('@stryker-mutator/api/core').PartialStrykerOptions} */
export default {
  testRunner: 'vitest',
  vitest: { configFile: 'test/security/vitest.mutation.config.ts', related: false },
  plugins: ['@stryker-mutator/vitest-runner'],
  mutate,
  ignorePatterns: [
    'bench', 'examples', 'reports', 'coverage', '**/dist',
    'packages/express', 'packages/koa', 'packages/fetch', 'packages/cli', 'packages/redis', 'packages/playground',
    'test/browser', 'test/runtimes',
  ],
  coverageAnalysis: 'perTest',
  ignoreStatic: true,
  concurrency: 2,
  timeoutMS: 20_000,
  reporters: ['json', 'clear-text', 'progress-append-only'],
  jsonReporter: { fileName: process.env.AMPCORS_MUTATION_REPORT ?? 'reports/mutation/mutation.json' },
  cleanTempDir: 'always',
  tempDirName: process.env.AMPCORS_MUTATION_TMP ?? '.stryker-tmp',
};
