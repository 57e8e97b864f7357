/**
 * Starts an example exactly as its README says (its package.json `start`
 * script, run by `sh`), on a free port, and stops it again. Shared by the
 * runtime and example tests; every wait is bounded and fails with the
 * process output attached, never hangs.
 */
import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, rmdirSync, statSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { join } from 'node:path';

/** The workspace root. */
export const ROOT = fileURLToPath(new URL('../../', import.meta.url));

/** A running example process. */
export interface ExampleProcess {
  /** The base URL it printed, e.g. `http://127.0.0.1:41234`. */
  readonly url: string;
  /** Everything it wrote so far (stdout and stderr interleaved). */
  output(): string;
  /**
   * Stops the whole process group: `signal` (default SIGTERM; SIGINT is what
   * Ctrl-C sends), then SIGKILL after `graceMs`. Resolves with the exit code
   * or signal of the started shell and whether SIGKILL was needed.
   */
  stop(graceMs?: number, signal?: NodeJS.Signals): Promise<Stopped>;
}

/** How an example process ended. */
export interface Stopped {
  /** Exit code, or the name of the signal that ended it. */
  readonly exit: number | string | null;
  /** True when it ignored SIGTERM for the whole grace period. */
  readonly killed: boolean;
}

/** Options of {@link startExample}. */
export interface StartExampleOptions {
  /** Extra environment variables (PORT defaults to `0`, HOST to `127.0.0.1`). */
  readonly env?: Record<string, string>;
  /** Give up waiting for the URL after this long (default 60 s). */
  readonly timeoutMs?: number;
}

const LISTENING = /listening on (http:\/\/[^\s]+?)\/?(?:\s|$)/;

/**
 * Makes sure the built `dist/` of the given workspace packages exists,
 * running the root `pnpm build` once if any is missing (the root test command
 * builds first, so this only matters for a test run on its own). A directory
 * lock keeps parallel test files from building at the same time.
 */
export function ensureBuilt(packages: readonly string[]): void {
  // The playground builds a static page (dist/index.html) and a Node entry (lib/index.js).
  const built = (name: string) =>
    name === 'playground'
      ? existsSync(join(ROOT, 'packages', name, 'dist', 'index.html')) && existsSync(join(ROOT, 'packages', name, 'lib', 'index.js'))
      : existsSync(join(ROOT, 'packages', name, 'dist', 'index.js'));
  const missing = () => packages.some((name) => !built(name));
  if (!missing()) return;
  const lock = join(ROOT, 'node_modules', '.ampcors-build.lock');
  const deadline = Date.now() + 300_000;
  for (;;) {
    try {
      mkdirSync(lock);
      break;
    } catch {
      if (Date.now() > deadline) throw new Error(`ensureBuilt: ${lock} held for over 5 minutes; remove it if no build is running`);
      // A lock older than 5 minutes belongs to a build that died.
      if (Date.now() - statSync(lock, { throwIfNoEntry: false })!.mtimeMs > 300_000) rmdirSync(lock);
      execFileSync('sleep', ['1']);
    }
  }
  try {
    if (missing()) execFileSync('pnpm', ['build'], { cwd: ROOT, stdio: 'inherit', timeout: 300_000 });
  } finally {
    rmdirSync(lock);
  }
  if (missing()) throw new Error(`ensureBuilt: pnpm build did not produce dist/ for ${packages.join(', ')}`);
}

/** The `start` script of an example's package.json. */
export function startScript(example: string): string {
  const pkg = JSON.parse(readFileSync(join(ROOT, 'examples', example, 'package.json'), 'utf8')) as { scripts?: Record<string, string> };
  const script = pkg.scripts?.start;
  if (!script) throw new Error(`examples/${example}/package.json has no start script`);
  return script;
}

/**
 * Runs `examples/<example>`'s `start` script with `sh` in its directory, with
 * the example's and the root's `node_modules/.bin` on PATH (as `pnpm start`
 * does), and resolves once it prints `listening on <url>`.
 */
export function startExample(example: string, options: StartExampleOptions = {}): Promise<ExampleProcess> {
  const cwd = join(ROOT, 'examples', example);
  const path = [join(cwd, 'node_modules', '.bin'), join(ROOT, 'node_modules', '.bin'), process.env.PATH ?? ''].join(':');
  const child = spawn('sh', ['-c', startScript(example)], {
    cwd,
    env: { ...process.env, PORT: '0', HOST: '127.0.0.1', NO_COLOR: '1', PATH: path, ...options.env },
    stdio: ['ignore', 'pipe', 'pipe'],
    detached: true,
  });
  let output = '';
  const exited = new Promise<number | string | null>((resolve) => child.once('exit', (code, signal) => resolve(code ?? signal)));
  const stop = (graceMs = 5_000, signal: NodeJS.Signals = 'SIGTERM') => stopGroup(child, exited, graceMs, signal);
  const timeoutMs = options.timeoutMs ?? 60_000;
  let settled = false;
  return new Promise<ExampleProcess>((resolve, reject) => {
    const fail = (why: string) => {
      clearTimeout(timer);
      if (settled) return;
      settled = true;
      void stop(1_000).then(() => reject(new Error(`examples/${example}: ${why}\n--- output ---\n${output}`)));
    };
    const timer = setTimeout(() => fail(`no "listening on <url>" line within ${timeoutMs} ms`), timeoutMs);
    const onData = (chunk: Buffer) => {
      output += chunk.toString('utf8');
      const match = LISTENING.exec(output);
      if (match?.[1] && !settled) {
        settled = true;
        clearTimeout(timer);
        resolve({ url: match[1], output: () => output, stop });
      }
    };
    child.stdout!.on('data', onData);
    child.stderr!.on('data', onData);
    void exited.then((code) => fail(`exited (${String(code)}) before listening`));
    child.once('error', (error) => fail(`could not start: ${error.message}`));
  });
}

async function stopGroup(child: ChildProcess, exited: Promise<number | string | null>, graceMs: number, first: NodeJS.Signals): Promise<Stopped> {
  const group = -child.pid!;
  const alive = () => {
    try {
      process.kill(group, 0);
      return true;
    } catch {
      return false;
    }
  };
  const signal = (name: NodeJS.Signals) => {
    try {
      process.kill(group, name);
    } catch {
      // The group is already gone.
    }
  };
  signal(first);
  // Wait for every process of the group (the shell and the server it started).
  const deadline = Date.now() + graceMs;
  while (alive() && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 50));
  const killed = alive();
  if (killed) signal('SIGKILL');
  return { exit: await exited, killed };
}
