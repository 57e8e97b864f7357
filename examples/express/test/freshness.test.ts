// `npm run demo` installs and builds only what is out of date: freshness.mjs
// on a small workspace in a temporary folder, with file times set by hand.
import { mkdirSync, mkdtempSync, rmSync, utimesSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { demoPackages, type DemoWork, demoWork, INSTALL_STAMP } from '../scripts/freshness.mjs';

const T0 = new Date('2026-01-01T00:00:00Z').getTime();
let root: string;

/** Writes a file whose modification time is T0 + `minutes`. */
function put(path: string, minutes: number, content = ''): void {
  const file = join(root, path);
  mkdirSync(dirname(file), { recursive: true });
  writeFileSync(file, content);
  at(path, minutes);
}

function at(path: string, minutes: number): void {
  const time = new Date(T0 + minutes * 60_000);
  utimesSync(join(root, path), time, time);
}

const json = (value: unknown) => JSON.stringify(value);
const work = (): DemoWork => demoWork(root, join(root, 'examples', 'demo'));
const built = (w: DemoWork) => w.builds.map((b) => b.name);

// Sources at minute 0, the install at 1, builds at 2.
beforeEach(() => {
  root = mkdtempSync(join(tmpdir(), 'ampcors-freshness-'));
  put('pnpm-workspace.yaml', 0, 'packages:\n  - packages/*\n  - examples/*\nonlyBuiltDependencies:\n  - esbuild\n');
  put('package.json', 0, json({ name: 'root', private: true }));
  put('pnpm-lock.yaml', 0, 'lockfileVersion: 9.0\n');
  put('tsconfig.base.json', 0, '{}');
  put('node_modules/.modules.yaml', 1, '{}');
  // core: built by tsup into dist/; page: built by its own build.mjs into dist/ and lib/, from its and core's sources.
  put(
    'packages/core/package.json',
    0,
    json({
      name: 'core',
      scripts: { build: 'tsup src/index.ts' },
      exports: { '.': { import: './dist/index.js', require: './dist/index.cjs' }, './package.json': './package.json' },
    }),
  );
  put('packages/core/src/index.ts', 0);
  put('packages/core/test/core.test.ts', 5);
  put('packages/core/dist/index.js', 2);
  put('packages/core/dist/index.cjs', 2);
  put(
    'packages/page/package.json',
    0,
    json({ name: 'page', scripts: { build: 'node build.mjs' }, dependencies: { core: 'workspace:^' }, exports: { '.': './lib/index.js' } }),
  );
  put('packages/page/build.mjs', 0);
  put('packages/page/src/app.ts', 0);
  put('packages/page/dist/index.html', 2);
  put('packages/page/lib/index.js', 2);
  // Not used by the demo: its changes never cost the demo a build.
  put('packages/other/package.json', 0, json({ name: 'other', scripts: { build: 'tsup' }, exports: './dist/index.js' }));
  put('packages/other/src/index.ts', 9);
  put('examples/demo/package.json', 0, json({ name: 'demo', dependencies: { page: 'workspace:^', express: '^5.1.0' } }));
  put('examples/demo/src/server.ts', 9);
});

afterEach(() => {
  rmSync(root, { recursive: true, force: true });
});

describe('what npm run demo must do first', () => {
  it("finds the demo's workspace packages, each after its dependencies", () => {
    expect(demoPackages(root, join(root, 'examples', 'demo')).map((p) => p.json.name)).toEqual(['core', 'page']);
  });

  it('nothing, when everything was installed and built after the last change (tests and unused packages do not count)', () => {
    expect(work()).toEqual({ install: undefined, builds: [] });
  });

  it('rebuilds a package whose source changed, and every package built from it, in order', () => {
    at('packages/core/src/index.ts', 3);
    expect(work().builds).toEqual([
      { name: 'core', why: 'packages/core/src/index.ts changed since the last build' },
      { name: 'page', why: 'packages/core/src/index.ts changed since the last build' },
    ]);
  });

  it('rebuilds only the package whose own source or build script changed', () => {
    at('packages/page/src/app.ts', 3);
    expect(built(work())).toEqual(['page']);
    at('packages/page/src/app.ts', 0);
    at('packages/page/build.mjs', 3);
    expect(built(work())).toEqual(['page']);
  });

  it('judges by the oldest built file, and rebuilds when one is missing', () => {
    // (page is built from core's sources, not its dist/, so it stays.)
    at('packages/core/dist/index.cjs', -1);
    expect(work().builds).toEqual([{ name: 'core', why: 'packages/core/src/index.ts changed since the last build' }]);
    at('packages/core/dist/index.cjs', 2);
    rmSync(join(root, 'packages/page/lib/index.js'));
    expect(work().builds).toEqual([{ name: 'page', why: 'packages/page/lib/index.js is missing' }]);
  });

  it('installs when the lockfile or a package.json of the demo changed since the last install, not for another package', () => {
    at('packages/other/package.json', 3);
    expect(work().install).toBeUndefined();
    at('packages/page/package.json', 3);
    expect(work().install).toBe('packages/page/package.json changed since the last install');
    at('packages/page/package.json', 0);
    at('pnpm-lock.yaml', 3);
    expect(work()).toMatchObject({ install: 'pnpm-lock.yaml changed since the last install', builds: [{ name: 'core' }, { name: 'page' }] });
    // demo.mjs stamps a successful install: pnpm leaves .modules.yaml alone when nothing changed.
    put(INSTALL_STAMP, 4);
    expect(work().install).toBeUndefined();
  });

  it('installs when nothing is installed', () => {
    rmSync(join(root, 'node_modules'), { recursive: true });
    expect(work().install).toBe('nothing is installed yet');
  });
});
