// StrykerJS over @ampcors/core (issue #6). Run with `pnpm mutation`
// (test/security/mutation.ts), which runs one group of source files at a time
// and sets, per group:
//   AMPCORS_MUTATE                 comma-separated files to mutate
//   AMPCORS_MUTATION_REPORT        the JSON report path
//   AMPCORS_MUTATION_TMP           the sandbox directory
//   AMPCORS_MUTATION_INCREMENTAL   the incremental file, when --incremental is given
//   AMPCORS_MUTATION_CONCURRENCY   test runner processes (default 2: the machine has 2 cores)
// Without them (plain `npx stryker run`), every source file of core is mutated at once.
const mutate = process.env.AMPCORS_MUTATE?.split(',') ?? [
  'packages/core/src/**/*.ts',
  '!packages/core/src/**/*.d.ts',
  '!packages/core/src/index.ts',
  '!packages/core/src/psl-ancestors.ts',
];
const incrementalFile = process.env.AMPCORS_MUTATION_INCREMENTAL;
/** @type {import('@stryker-mutator/api/core').PartialStrykerOptions} */
export default {
  testRunner: 'vitest',
  vitest: { configFile: 'test/security/vitest.mutation.config.ts', related: false },
  plugins: ['@stryker-mutator/vitest-runner'],
  mutate,
  ignorePatterns: [
    'bench',
    'examples',
    'reports',
    'coverage',
    '**/dist',
    '.stryker-tmp*',
    'packages/express',
    'packages/koa',
    'packages/fetch',
    'packages/cli',
    'packages/redis',
    'packages/playground',
    'test/browser',
    'test/runtimes',
  ],
  // Each mutant runs only the tests that cover it.
  coverageAnalysis: 'perTest',
  // Mutants in module-level constants would need every test file re-imported per mutant.
  ignoreStatic: true,
  concurrency: Number(process.env.AMPCORS_MUTATION_CONCURRENCY ?? 2),
  // A mutant's time limit is its tests' own time × 1.5 + this: an infinite loop
  // (common in the Rice coder's bit loops) costs seconds, not minutes.
  timeoutMS: 5_000,
  ...(incrementalFile ? { incremental: true, incrementalFile } : {}),
  reporters: ['json', 'clear-text', 'progress-append-only'],
  jsonReporter: { fileName: process.env.AMPCORS_MUTATION_REPORT ?? 'reports/mutation/mutation.json' },
  cleanTempDir: 'always',
  tempDirName: process.env.AMPCORS_MUTATION_TMP ?? '.stryker-tmp',
};
