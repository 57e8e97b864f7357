/**
 * The Debian packages some suites drive as real processes: Chromium (browser
 * and playground suites) and redis-server (the shared registry and its CLI).
 * A fresh machine has neither; the full test command (`npm test`) installs
 * what is missing in one `apt-get` run before vitest starts
 * (install-tools.ts), so two suites never race for dpkg's lock, and the unit
 * loop (`pnpm test:unit`, one test file) never runs apt-get.
 */
import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';

/** A program the suites need and the Debian package that provides it. */
export interface DebianTool {
  /** Absolute path of the program, e.g. `/usr/bin/chromium`. */
  readonly path: string;
  /** The Debian package that installs it. */
  readonly pkg: string;
}

/** Every program a suite of this repository starts. */
export const DEBIAN_TOOLS: readonly DebianTool[] = [
  { path: '/usr/bin/chromium', pkg: 'chromium' },
  { path: '/usr/bin/redis-server', pkg: 'redis-server' },
];

/**
 * Installs the packages of every missing tool with one `apt-get update` and
 * one `apt-get install -y`, printing apt's output. Throws with a clear message
 * when apt-get fails or a program is still missing afterwards.
 */
export function ensureDebianTools(tools: readonly DebianTool[] = DEBIAN_TOOLS): void {
  const missing = tools.filter((tool) => !existsSync(tool.path));
  if (missing.length === 0) return;
  const packages = missing.map((tool) => tool.pkg);
  console.log(`[setup] installing Debian packages: ${packages.join(' ')} (a few minutes on a fresh machine)`);
  const started = Date.now();
  const env = { ...process.env, DEBIAN_FRONTEND: 'noninteractive' };
  for (const args of [
    ['update', '-qq'],
    ['install', '-y', '-qq', ...packages],
  ]) {
    const result = spawnSync('apt-get', args, { stdio: 'inherit', env });
    if (result.error || result.status !== 0) {
      const why = result.error ? result.error.message : `exit status ${result.status}`;
      throw new Error(`apt-get ${args.join(' ')} failed (${why}): these suites need ${packages.join(', ')}; run as root on Debian or install them yourself`);
    }
  }
  const still = missing.filter((tool) => !existsSync(tool.path));
  if (still.length > 0) throw new Error(`apt-get installed ${packages.join(', ')} but ${still.map((t) => t.path).join(', ')} is still missing`);
  console.log(`[setup] installed in ${Math.round((Date.now() - started) / 1000)} s`);
}

/**
 * Throws a clear error when `path` is missing: the suites that start a
 * Debian program call it first, so `pnpm test:unit` on a machine without the
 * program says how to get it instead of failing obscurely.
 */
export function requireTool(path: string): void {
  const tool = DEBIAN_TOOLS.find((t) => t.path === path);
  if (!existsSync(path)) {
    throw new Error(`${path} is missing: run \`npx pnpm@10.34.9 run setup:tools\` (apt-get, as root) or apt-get install -y ${tool?.pkg ?? path}`);
  }
}
