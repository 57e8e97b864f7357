/**
 * Whether `npm run demo` must install or build anything first, decided from
 * file times so that a machine that already built the demo starts it at once:
 *
 * 1. install is needed when `node_modules/.modules.yaml` (pnpm's record of an
 *    install) is missing, or older than the lockfile, the workspace file or a
 *    package.json of the demo's packages, unless `demo.mjs` installed since;
 * 2. a workspace package the demo uses (its `workspace:` dependencies,
 *    transitively) is rebuilt when one of its built files is missing, or one
 *    of its inputs is newer than its oldest built file. Inputs: its `src/`,
 *    package.json, tsconfig.json, the files its build script names (such as
 *    `build.mjs`), the root tsconfig.base.json, pnpm-lock.yaml (dependency
 *    versions: the playground bundles its dependencies), and the
 *    inputs of the workspace packages it depends on (the playground bundles
 *    core's sources). Built files: the targets of its `exports` and every
 *    file under `dist/`.
 *
 * Plain JavaScript with only `node:` imports: it runs before anything is installed.
 */
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { join, relative } from 'node:path';

/** The file demo.mjs touches after a successful install (pnpm leaves `.modules.yaml` alone when nothing changed). */
export const INSTALL_STAMP = join('node_modules', '.ampcors-demo-installed');

/** A workspace package: its name, directory and package.json. */
function readPackage(dir) {
  return { dir, json: JSON.parse(readFileSync(join(dir, 'package.json'), 'utf8')) };
}

/** The workspace's package directories, from the `packages:` globs of pnpm-workspace.yaml (`dir` or `dir/*`). */
function workspaceDirs(root) {
  const lines = readFileSync(join(root, 'pnpm-workspace.yaml'), 'utf8').split('\n');
  const start = lines.findIndex((line) => /^packages:\s*$/u.test(line));
  const dirs = [];
  for (const line of lines.slice(start + 1)) {
    const entry = /^\s+-\s+['"]?([^'"\s]+)['"]?\s*$/u.exec(line);
    if (!entry) break;
    const glob = entry[1];
    if (glob.endsWith('/*')) {
      const parent = join(root, glob.slice(0, -2));
      if (!existsSync(parent)) continue;
      for (const child of readdirSync(parent, { withFileTypes: true })) if (child.isDirectory()) dirs.push(join(parent, child.name));
    } else dirs.push(join(root, glob));
  }
  return dirs.filter((dir) => existsSync(join(dir, 'package.json')));
}

/**
 * The workspace packages `exampleDir` depends on through `workspace:`
 * versions, transitively, each after its own dependencies.
 */
export function demoPackages(root, exampleDir) {
  const byName = new Map(workspaceDirs(root).map((dir) => [readPackage(dir).json.name, dir]));
  const ordered = [];
  const visit = (pkg, path) => {
    for (const [name, version] of Object.entries(pkg.json.dependencies ?? {})) {
      if (!String(version).startsWith('workspace:') || ordered.some((p) => p.json.name === name)) continue;
      const dir = byName.get(name);
      if (dir === undefined) throw new Error(`${pkg.json.name} depends on ${name}, which is not in pnpm-workspace.yaml`);
      if (path.includes(name)) throw new Error(`workspace dependency cycle: ${[...path, name].join(' → ')}`);
      const dependency = readPackage(dir);
      visit(dependency, [...path, name]);
      ordered.push(dependency);
    }
  };
  visit(readPackage(exampleDir), []);
  return ordered;
}

/** Every file under `path` (or `path` itself), skipping node_modules. */
function filesUnder(path) {
  if (!existsSync(path)) return [];
  if (!statSync(path).isDirectory()) return [path];
  return readdirSync(path, { withFileTypes: true }).flatMap((entry) => (entry.name === 'node_modules' ? [] : filesUnder(join(path, entry.name))));
}

const mtime = (file) => statSync(file).mtimeMs;

/** The files a package's build reads, its dependencies' included. */
function inputsOf(root, pkg, packages) {
  const own = ['src', 'package.json', 'tsconfig.json'].map((name) => join(pkg.dir, name));
  // Files the build script names, e.g. `node build.mjs`.
  for (const word of (pkg.json.scripts?.build ?? '').split(/\s+/u)) {
    if (/\.[cm]?[jt]s$/u.test(word) && existsSync(join(pkg.dir, word))) own.push(join(pkg.dir, word));
  }
  const shared = [join(root, 'tsconfig.base.json'), join(root, 'pnpm-lock.yaml')];
  const deps = Object.entries(pkg.json.dependencies ?? {})
    .filter(([, version]) => String(version).startsWith('workspace:'))
    .flatMap(([name]) => {
      const dependency = packages.find((p) => p.json.name === name);
      return dependency ? inputsOf(root, dependency, packages) : [];
    });
  return [...own, ...shared, ...deps].flatMap(filesUnder);
}

/** The `exports` targets of a package.json (its own package.json excepted). */
function exportTargets(exports) {
  if (typeof exports === 'string') return [exports];
  if (typeof exports !== 'object' || exports === null) return [];
  return Object.entries(exports).flatMap(([key, value]) => (key === './package.json' ? [] : exportTargets(value)));
}

/** Why `pkg` must be built, or undefined when its build is newer than every input. */
function buildReason(root, pkg, packages) {
  if (!pkg.json.scripts?.build) return undefined;
  const targets = exportTargets(pkg.json.exports).map((target) => join(pkg.dir, target));
  const missing = targets.find((file) => !existsSync(file));
  if (missing !== undefined) return `${relative(root, missing)} is missing`;
  const built = [...targets, ...filesUnder(join(pkg.dir, 'dist'))];
  if (built.length === 0) return 'never built';
  const oldestBuilt = built.reduce((oldest, file) => Math.min(oldest, mtime(file)), Infinity);
  const changed = inputsOf(root, pkg, packages).find((file) => mtime(file) > oldestBuilt);
  return changed === undefined ? undefined : `${relative(root, changed)} changed since the last build`;
}

/**
 * What `npm run demo` must do before starting `exampleDir`: `install` (why,
 * or undefined) and `builds` (the packages to build, in dependency order, each
 * with why).
 */
export function demoWork(root, exampleDir) {
  const packages = demoPackages(root, exampleDir);
  const record = join(root, 'node_modules', '.modules.yaml');
  let install;
  if (!existsSync(record)) install = 'nothing is installed yet';
  else {
    const stamp = join(root, INSTALL_STAMP);
    const installed = Math.max(mtime(record), existsSync(stamp) ? mtime(stamp) : 0);
    const manifests = [join(root, 'pnpm-lock.yaml'), join(root, 'pnpm-workspace.yaml'), join(root, 'package.json'), join(exampleDir, 'package.json')];
    for (const pkg of packages) manifests.push(join(pkg.dir, 'package.json'));
    const changed = manifests.find((file) => existsSync(file) && mtime(file) > installed);
    if (changed !== undefined) install = `${relative(root, changed)} changed since the last install`;
  }
  const builds = packages.flatMap((pkg) => {
    const why = buildReason(root, pkg, packages);
    return why === undefined ? [] : [{ name: pkg.json.name, why }];
  });
  return { install, builds };
}
