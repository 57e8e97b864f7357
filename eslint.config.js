// The project's lint rules: few and deliberate, each guarding a promise of the
// developers' guide. `pnpm lint` runs them; the full test command includes it.
import tseslint from 'typescript-eslint';

const NODE_BUILTINS = [
  'assert',
  'buffer',
  'child_process',
  'crypto',
  'dns',
  'events',
  'fs',
  'fs/promises',
  'http',
  'http2',
  'https',
  'module',
  'net',
  'os',
  'path',
  'perf_hooks',
  'process',
  'stream',
  'tls',
  'url',
  'util',
  'worker_threads',
  'zlib',
];

export default tseslint.config(
  { ignores: ['**/node_modules/**', '**/dist/**', '**/lib/**', 'reports/**', '.stryker-tmp*/**', 'examples/cloudflare-worker/dist/**'] },
  {
    files: ['**/*.ts', '**/*.mts', '**/*.cts'],
    languageOptions: { parser: tseslint.parser },
    plugins: { '@typescript-eslint': tseslint.plugin },
    rules: {
      // Dead code is not left behind.
      '@typescript-eslint/no-unused-vars': [
        'error',
        { args: 'after-used', argsIgnorePattern: '^_', varsIgnorePattern: '^_', caughtErrors: 'none', ignoreRestSiblings: true },
      ],
      'no-unreachable': 'error',
      'no-debugger': 'error',
      'no-dupe-keys': 'error',
      'no-duplicate-case': 'error',
      'no-self-compare': 'error',
      'no-unsafe-finally': 'error',
      'no-var': 'error',
      'prefer-const': 'error',
      eqeqeq: ['error', 'smart'],
    },
  },
  {
    // "Pure core" is checked, not claimed: no Node built-ins in @ampcors/core.
    files: ['packages/core/src/**/*.ts'],
    rules: {
      'no-restricted-imports': [
        'error',
        {
          patterns: [{ group: ['node:*'], message: '@ampcors/core is runtime-agnostic: no Node built-ins (see the developers\u2019 guide).' }],
          paths: NODE_BUILTINS.map((name) => ({ name, message: '@ampcors/core is runtime-agnostic: no Node built-ins.' })),
        },
      ],
      'no-restricted-globals': [
        'error',
        { name: 'process', message: '@ampcors/core is runtime-agnostic.' },
        { name: 'Buffer', message: '@ampcors/core is runtime-agnostic: use Uint8Array.' },
        { name: 'require', message: 'ESM only.' },
      ],
    },
  },
);
