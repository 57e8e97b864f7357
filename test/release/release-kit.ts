// The release check's machinery: find the publishable packages, refuse to run
// on missing or stale builds, pack them with pnpm (which rewrites `workspace:`
// ranges as publishing does), and install the tarballs with npm into a fresh
// project outside the workspace. The assertions are in release.test.ts.
import { execFile } from 'node:child_process';
import { createHash } from 'node:crypto';
import { copyFileSync, existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, renameSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';

/** The workspace root. */
export const ROOT = fileURLToPath(new URL('../..', import.meta.url));
/** The pnpm the workspace pins (package.json "packageManager"). */
const PNPM = ['-y', 'pnpm@10.34.9'];
/** The framework majors every adapter is smoke-tested with, installed under aliases. */
export const FRAMEWORKS = {
  express4: 'npm:express@^4',
  express5: 'npm:express@^5',
  koa2: 'npm:koa@^2',
  koa3: 'npm:koa@^3',
} as const;

/** A package the workspace publishes. */
export interface Publishable {
  /** Directory name under packages/. */
  readonly dir: string;
  /** Absolute path of the package directory. */
  readonly path: string;
  /** The package.json of the workspace (not the packed one). */
  readonly manifest: Record<string, unknown> & { name: string; version: string };
}

/** Every package under packages/ that is not private. */
export function publishablePackages(): Publishable[] {
  const base = join(ROOT, 'packages');
  return readdirSync(base)
    .filter((dir) => existsSync(join(base, dir, 'package.json')))
    .map((dir) => {
      const path = join(base, dir);
      const manifest = JSON.parse(readFileSync(join(path, 'package.json'), 'utf8')) as Publishable['manifest'];
      return { dir, path, manifest };
    })
    .filter((p) => p.manifest.private !== true)
    .sort((a, b) => a.dir.localeCompare(b.dir));
}

/** Every relative file a manifest points at: main, module, types, exports leaves, bin. */
export function entryFiles(manifest: Record<string, unknown>): string[] {
  const out = new Set<string>();
  const add = (value: unknown): void => {
    if (typeof value === 'string') {
      if (value.startsWith('./') && !value.endsWith('/package.json')) out.add(value.slice(2));
    } else if (value && typeof value === 'object') {
      for (const inner of Object.values(value)) add(inner);
    }
  };
  for (const field of ['main', 'module', 'types', 'exports', 'bin']) {
    const value = manifest[field];
    // `main: "dist/x.js"` without "./" is valid too.
    if (typeof value === 'string' && !value.startsWith('./')) out.add(value);
    else add(value);
  }
  return [...out].sort();
}

function newestMtime(dir: string): { file: string; mtime: number } {
  let newest = { file: dir, mtime: 0 };
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const full = join(dir, entry.name);
    const candidate = entry.isDirectory() ? newestMtime(full) : { file: full, mtime: statSync(full).mtimeMs };
    if (candidate.mtime > newest.mtime) newest = candidate;
  }
  return newest;
}

/**
 * Throws, naming the command to run, when a package's built entry files are
 * missing or older than its newest source file: packing a stale dist would
 * test (and publish) code that is not in src/.
 */
export function assertBuilt(packages: readonly Publishable[]): void {
  const problems: string[] = [];
  for (const p of packages) {
    const entries = entryFiles(p.manifest);
    const missing = entries.filter((file) => !existsSync(join(p.path, file)));
    if (missing.length > 0) {
      problems.push(`${p.manifest.name} is not built (missing ${missing.join(', ')})`);
      continue;
    }
    const newestSource = newestMtime(join(p.path, 'src'));
    const stale = entries.filter((file) => statSync(join(p.path, file)).mtimeMs < newestSource.mtime);
    if (stale.length > 0) {
      problems.push(`${p.manifest.name} has a stale build (${stale[0]} is older than ${relative(ROOT, newestSource.file)})`);
    }
  }
  if (problems.length > 0) {
    const filters = packages.map((p) => `--filter ${p.manifest.name}`).join(' ');
    throw new Error(
      `The release check packs the built packages, and:\n  - ${problems.join('\n  - ')}\n` +
        `Build first: \`npx -y pnpm@10.34.9 build\` (the full \`npm test\` does), or \`npx -y pnpm@10.34.9 ${filters} run build\`.`,
    );
  }
}

/** The result of a finished child process. */
export interface Ran {
  readonly code: number;
  readonly stdout: string;
  readonly stderr: string;
}

/** Runs a command to completion (never rejects on a non-zero exit). */
export function run(
  file: string,
  args: readonly string[],
  options: { cwd: string; env?: NodeJS.ProcessEnv; timeoutMs?: number; input?: string },
): Promise<Ran> {
  return new Promise((resolve, reject) => {
    const child = execFile(
      file,
      [...args],
      {
        cwd: options.cwd,
        env: options.env ?? process.env,
        timeout: options.timeoutMs ?? 120_000,
        maxBuffer: 64 * 1024 * 1024,
        // npm and npx are .cmd scripts on Windows.
        shell: process.platform === 'win32' && /^np[mx]$/.test(file),
      },
      (error, stdout, stderr) => {
        if (error && typeof error.code !== 'number') {
          reject(new Error(`${file} ${args.join(' ')} failed to run: ${error.message}\n${stderr}`));
          return;
        }
        resolve({ code: typeof error?.code === 'number' ? error.code : 0, stdout, stderr });
      },
    );
    if (options.input !== undefined) child.stdin?.end(options.input);
  });
}

/** The environment for npm in the fresh project: no pnpm- or workspace-injected npm settings. */
export function cleanEnv(): NodeJS.ProcessEnv {
  const keep = new Set([
    'npm_config_registry',
    'npm_config_cache',
    'npm_config_userconfig',
    'npm_config_https_proxy',
    'npm_config_proxy',
    'npm_config_noproxy',
  ]);
  const env: NodeJS.ProcessEnv = {};
  for (const [key, value] of Object.entries(process.env)) {
    const lower = key.toLowerCase();
    if ((lower.startsWith('npm_') || lower.startsWith('pnpm_')) && !keep.has(lower)) continue;
    if (key === 'NODE_OPTIONS' || key === 'VITEST' || key.startsWith('VITEST_')) continue;
    env[key] = value;
  }
  return env;
}

/** A packed tarball. */
export interface Tarball {
  readonly pkg: Publishable;
  readonly file: string;
  /** Paths inside the tarball, without the leading `package/`. */
  readonly files: readonly string[];
  /** Reads one file of the tarball. */
  read(path: string): Promise<string>;
}

/** Packs every package with pnpm into a new temporary directory. */
export async function packAll(packages: readonly Publishable[]): Promise<Tarball[]> {
  const dest = mkdtempSync(join(tmpdir(), 'ampcors-pack-'));
  const filters = packages.flatMap((p) => ['--filter', p.manifest.name]);
  const packed = await run('npx', [...PNPM, ...filters, 'pack', '--pack-destination', dest], { cwd: ROOT, timeoutMs: 120_000 });
  if (packed.code !== 0) throw new Error(`pnpm pack failed (exit ${packed.code}):\n${packed.stderr}\n${packed.stdout}`);
  const tarballs: Tarball[] = [];
  for (const pkg of packages) {
    const bare = pkg.manifest.name.replace(/^@/, '').replace('/', '-');
    const file = join(dest, `${bare}-${pkg.manifest.version}.tgz`);
    if (!existsSync(file)) throw new Error(`pnpm pack wrote no ${file} for ${pkg.manifest.name}`);
    // Unpacked once, so the checks read files instead of running tar per file.
    const unpacked = join(dest, 'unpacked', bare);
    mkdirSync(unpacked, { recursive: true });
    const untar = await run('tar', ['-xzf', file, '-C', unpacked], { cwd: dest });
    if (untar.code !== 0) throw new Error(`cannot unpack ${file}: ${untar.stderr}`);
    const root = join(unpacked, 'package');
    const files = readdirSync(root, { recursive: true, withFileTypes: true })
      .filter((entry) => entry.isFile())
      .map((entry) => relative(root, join(entry.parentPath, entry.name)).split(/[\\/]/).join('/'))
      .sort();
    tarballs.push({
      pkg,
      file,
      files,
      read: async (path) => {
        if (!files.includes(path)) throw new Error(`${path} is not in ${file}`);
        return readFileSync(join(root, path), 'utf8');
      },
    });
  }
  return tarballs;
}

/** The fresh consumer project. */
export interface FreshProject {
  readonly dir: string;
  /** Where node_modules came from: an earlier run with the same tarballs, or npm offline (its cache) or online. */
  readonly install: 'cached-project' | 'offline' | 'online';
}

/**
 * Creates (or reuses) a project in the OS temporary directory that installs
 * every tarball and the four framework majors with npm, keyed by the
 * tarballs' hashes: an unchanged build reuses the installed node_modules.
 */
export async function freshProject(tarballs: readonly Tarball[]): Promise<FreshProject> {
  const dependencies: Record<string, string> = {};
  for (const t of tarballs) dependencies[t.pkg.manifest.name] = `file:tarballs/${t.file.split(/[\\/]/).pop()}`;
  Object.assign(dependencies, FRAMEWORKS);
  // One copy of each workspace package: the tarballs' own dependencies on
  // @ampcors/* resolve to the tarballs, never to a registry release.
  const overrides = Object.fromEntries(tarballs.map((t) => [t.pkg.manifest.name, `$${t.pkg.manifest.name}`]));
  const manifest = `${JSON.stringify({ name: 'ampcors-release-check', version: '0.0.0', private: true, dependencies, overrides }, null, 2)}\n`;

  const hash = createHash('sha256').update(manifest).update(process.version);
  for (const t of [...tarballs].sort((a, b) => a.file.localeCompare(b.file))) hash.update(readFileSync(t.file));
  const key = hash.digest('hex').slice(0, 20);
  const base = join(tmpdir(), 'ampcors-release-check');
  const dir = join(base, key);
  mkdirSync(base, { recursive: true });
  // Older projects (other tarballs) are dropped after an hour.
  for (const entry of readdirSync(base)) {
    const full = join(base, entry);
    if (entry !== key && Date.now() - statSync(full).mtimeMs > 3_600_000) rmSync(full, { recursive: true, force: true });
  }
  if (existsSync(join(dir, '.installed'))) return { dir, install: 'cached-project' };

  const work = mkdtempSync(join(base, `${key}.tmp-`));
  mkdirSync(join(work, 'tarballs'));
  for (const t of tarballs) copyFileSync(t.file, join(work, 'tarballs', t.file.split(/[\\/]/).pop()!));
  writeFileSync(join(work, 'package.json'), manifest);
  const npmArgs = ['install', '--no-audit', '--no-fund', '--loglevel=error', '--no-update-notifier'];
  let install: FreshProject['install'] = 'offline';
  let result = await run('npm', [...npmArgs, '--offline'], { cwd: work, env: cleanEnv(), timeoutMs: 120_000 });
  if (result.code !== 0) {
    install = 'online';
    result = await run('npm', [...npmArgs, '--prefer-offline'], { cwd: work, env: cleanEnv(), timeoutMs: 120_000 });
  }
  if (result.code !== 0) {
    rmSync(work, { recursive: true, force: true });
    throw new Error(`npm install of the tarballs failed (exit ${result.code}):\n${result.stderr}\n${result.stdout}`);
  }
  writeFileSync(join(work, '.installed'), `${new Date().toISOString()}\n`);
  try {
    renameSync(work, dir);
  } catch {
    // A concurrent run installed the same key first: use it.
    rmSync(work, { recursive: true, force: true });
  }
  return { dir, install };
}

/** Copies the smoke fixtures into the project (every run: they are not part of the cache key). */
export function copyFixtures(project: string): void {
  const fixtures = fileURLToPath(new URL('./fixture/', import.meta.url));
  for (const name of readdirSync(fixtures)) copyFileSync(join(fixtures, name), join(project, name));
}

/** Every `node_modules/@ampcors/<name>` directory under `dir`, nested ones included. */
export function installedCopies(dir: string, name: string): string[] {
  const found: string[] = [];
  const walk = (modules: string): void => {
    if (!existsSync(modules)) return;
    if (existsSync(join(modules, name, 'package.json'))) found.push(relative(dir, join(modules, name)));
    for (const entry of readdirSync(modules)) {
      if (entry.startsWith('.')) continue;
      const scoped = entry.startsWith('@') ? readdirSync(join(modules, entry)).map((n) => join(modules, entry, n)) : [join(modules, entry)];
      for (const pkgDir of scoped) walk(join(pkgDir, 'node_modules'));
    }
  };
  walk(join(dir, 'node_modules'));
  return found;
}

/** Every link target in Markdown (inline and reference links) or HTML (href, src). */
export function linkTargets(markdown: string): string[] {
  return [
    ...[...markdown.matchAll(/\]\(\s*<?([^)\s>]+)/g)].map((m) => m[1]!),
    ...[...markdown.matchAll(/^\s*\[[^\]]+\]:\s*<?(\S+?)>?(?:\s|$)/gm)].map((m) => m[1]!),
    ...[...markdown.matchAll(/\b(?:href|src)\s*=\s*["']([^"']+)["']/g)].map((m) => m[1]!),
  ];
}

/** Relative links, which a registry page cannot follow. */
export function relativeLinks(markdown: string): string[] {
  return linkTargets(markdown).filter((target) => !/^(?:https?:|mailto:|#)/i.test(target));
}

/** The repository's own GitHub address. */
export const GITHUB = 'https://github.com/ampcors/ampcors';

/** Links into this repository's main branch whose file or directory does not exist in the workspace. */
export function brokenRepositoryLinks(markdown: string): string[] {
  const prefix = new RegExp(`^${GITHUB.replace(/[.]/g, '\\.')}/(?:blob|tree)/main/([^#?]*)`);
  return linkTargets(markdown).filter((target) => {
    const path = prefix.exec(target)?.[1];
    return path !== undefined && !existsSync(join(ROOT, decodeURIComponent(path)));
  });
}

/** The directory of a file inside a tarball (posix, '' for the root). */
export function dirOf(path: string): string {
  const d = dirname(path);
  return d === '.' ? '' : d;
}
