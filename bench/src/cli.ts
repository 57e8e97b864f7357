/**
 * Command-line flags and child-process helpers shared by the orchestrating
 * modules (run, micro, in-process, HTTP, scale).
 */
import { execFileSync, spawn, spawnSync } from 'node:child_process';
import { cpus } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

/** bench/dist, where the bundled scripts live. */
export const DIST = dirname(fileURLToPath(import.meta.url));
/** bench/. */
export const BENCH_ROOT = join(DIST, '..');

/** `--quick`: a smoke run of a few minutes at most; RESULTS.md says so. */
export const QUICK = process.argv.includes('--quick');
/** `--full`: also the 10M-domain compact allow-set build (minutes). */
export const FULL = process.argv.includes('--full');

/** The value of `--name=value`, if given. */
export function flagValue(name: string): string | undefined {
  const prefix = `--${name}=`;
  return process.argv.find((arg) => arg.startsWith(prefix))?.slice(prefix.length);
}

/** A positive whole number from `--name=N`, or `fallback`. */
export function countFlag(name: string, fallback: number): number {
  const raw = flagValue(name);
  if (raw === undefined) return fallback;
  const value = Number(raw);
  if (!Number.isInteger(value) || value < 1) throw new Error(`--${name} needs a positive whole number, got ${JSON.stringify(raw)}`);
  return value;
}

/** A positive number from `--name=X` (fractions allowed: `--seconds=0.5`), or `fallback`. */
export function numberFlag(name: string, fallback: number): number {
  const raw = flagValue(name);
  if (raw === undefined) return fallback;
  const value = Number(raw);
  if (!Number.isFinite(value) || value <= 0) throw new Error(`--${name} needs a positive number, got ${JSON.stringify(raw)}`);
  return value;
}

/** Whether processes can be pinned to a core. */
export const HAS_TASKSET = spawnSync('taskset', ['-V']).status === 0 && cpus().length >= 2;
/** Core of the load generator (the orchestrating process). */
export const LOAD_CORE = '0';
/** Core of every measured process. */
export const SERVER_CORE = '1';

/** A progress line on stderr. */
export function log(message: string): void {
  process.stderr.write(`[bench] ${message}\n`);
}

/** `node …args`, pinned to `core` when taskset is available. */
export function nodeCommand(args: readonly string[], core: string | null): [string, string[]] {
  return HAS_TASKSET && core !== null ? ['taskset', ['-c', core, process.execPath, ...args]] : [process.execPath, [...args]];
}

/** Runs `node …args` on the measuring core; returns its stdout. */
export function runNode(args: readonly string[]): string {
  const [command, argv] = nodeCommand(args, SERVER_CORE);
  return execFileSync(command, argv, { encoding: 'utf8', stdio: ['ignore', 'pipe', 'inherit'], maxBuffer: 64 << 20 });
}

/** The last line of a worker's stdout, parsed as JSON. */
export function lastJsonLine<T>(stdout: string): T {
  const lines = stdout.trim().split('\n');
  return JSON.parse(lines[lines.length - 1] as string) as T;
}

/** A child process spoken to in lines: a request on its stdin, an answer on its stdout. */
export interface LineChild {
  /** The next line the child prints (or `unavailable: …` when it exits or times out first). */
  next(timeoutMs: number): Promise<string>;
  /** Writes one line to the child's stdin. */
  send(line: string): void;
  /** Ends the child's stdin and terminates it. */
  stop(): void;
  /** Moves the child, every thread of it, to `core` (nothing without taskset). */
  pin(core: string): void;
}

/** Starts `node …args` on `core` (by default the measuring core), its stdout read line by line. */
export function spawnLines(args: readonly string[], core: string = SERVER_CORE): LineChild {
  const [command, argv] = nodeCommand(args, core);
  const child = spawn(command, argv, { stdio: ['pipe', 'pipe', 'inherit'] });
  const lines: string[] = [];
  const waiting: ((line: string) => void)[] = [];
  let buffered = '';
  let exited = false;
  child.stdout.setEncoding('utf8');
  child.stdout.on('data', (chunk: string) => {
    buffered += chunk;
    for (let end = buffered.indexOf('\n'); end >= 0; end = buffered.indexOf('\n')) {
      const line = buffered.slice(0, end);
      buffered = buffered.slice(end + 1);
      const resolve = waiting.shift();
      if (resolve === undefined) lines.push(line);
      else resolve(line);
    }
  });
  child.on('exit', () => {
    exited = true;
    for (const resolve of waiting.splice(0)) resolve('unavailable: exited');
  });
  return {
    next: (timeoutMs) =>
      new Promise<string>((resolve) => {
        const ready = lines.shift();
        if (ready !== undefined) return resolve(ready);
        if (exited) return resolve('unavailable: exited');
        const timer = setTimeout(() => resolve(`unavailable: no answer within ${timeoutMs / 1000} s`), timeoutMs);
        waiting.push((line) => {
          clearTimeout(timer);
          resolve(line);
        });
      }),
    send: (line) => {
      if (!exited) child.stdin.write(`${line}\n`);
    },
    stop: () => {
      child.stdin.end();
      child.kill('SIGTERM');
    },
    pin: (to) => {
      // taskset execs node: the child's pid is node's; -a moves its every thread.
      if (HAS_TASKSET && !exited && child.pid !== undefined) execFileSync('taskset', ['-a', '-cp', to, String(child.pid)], { stdio: 'ignore' });
    },
  };
}
