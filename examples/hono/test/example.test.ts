/**
 * examples/hono started as a real process by each of its start scripts —
 * Node (@hono/node-server), Bun, Deno and workerd (miniflare) — then the one shared scenario table
 * of every example publisher API over HTTP on 127.0.0.1, the runtime proven by
 * `GET /health`, and a clean stop on SIGTERM.
 */
import { spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ensureBuilt, ROOT } from '../../../test/runtimes/example-process.js';
import { runScenario, SCENARIOS } from '../../../test/runtimes/publisher-api-scenarios.js';

const DIR = join(ROOT, 'examples', 'hono');
const SCRIPTS = (JSON.parse(readFileSync(join(DIR, 'package.json'), 'utf8')) as { scripts: Record<string, string> }).scripts;

interface Running {
  readonly url: string;
  output(): string;
  stop(): Promise<{ exit: number | string | null; killed: boolean }>;
}

/** Runs one start script with `sh` as `pnpm run` would; resolves once it prints `listening on <url>` (bounded). */
function start(script: string): Promise<Running> {
  const child = spawn('sh', ['-c', SCRIPTS[script] as string], {
    cwd: DIR,
    env: { ...process.env, PORT: '0', HOST: '127.0.0.1', NO_COLOR: '1', PATH: `${join(ROOT, 'node_modules', '.bin')}:${process.env.PATH ?? ''}` },
    stdio: ['ignore', 'pipe', 'pipe'],
    detached: true,
  });
  let output = '';
  const exited = new Promise<number | string | null>((resolve) => child.once('exit', (code, signal) => resolve(code ?? signal)));
  const stop = async () => {
    const signal = (name: NodeJS.Signals) => {
      try {
        process.kill(-child.pid!, name);
        return true;
      } catch {
        return false; // the group is gone
      }
    };
    signal('SIGTERM');
    const deadline = Date.now() + 10_000;
    while (signal(0 as unknown as NodeJS.Signals) && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 50));
    const killed = signal('SIGKILL');
    return { exit: await exited, killed };
  };
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => void stop().then(() => reject(new Error(`${script}: not listening within 60 s\n${output}`))), 60_000);
    const onData = (chunk: Buffer) => {
      output += chunk.toString('utf8');
      const match = /listening on (http:\/\/\S+)/.exec(output);
      if (match?.[1]) {
        clearTimeout(timer);
        resolve({ url: match[1], output: () => output, stop });
      }
    };
    child.stdout!.on('data', onData);
    child.stderr!.on('data', onData);
    void exited.then((code) => {
      clearTimeout(timer);
      reject(new Error(`${script}: exited (${String(code)}) before listening\n${output}`));
    });
  });
}

const TARGETS = [
  { script: 'start', title: 'Node (@hono/node-server)', runtime: /^node v\d+/ },
  { script: 'start:bun', title: 'Bun', runtime: /^bun \d+\.\d+/ },
  { script: 'start:deno', title: 'Deno', runtime: /^deno \d+\.\d+/ },
  { script: 'start:workerd', title: 'workerd (miniflare)', runtime: /^Cloudflare-Workers$/ },
] as const;

const started = new Map<string, Promise<Running>>();

beforeAll(async () => {
  ensureBuilt(['core', 'hono']);
  for (const { script } of TARGETS) {
    const running = start(script);
    running.catch(() => undefined); // reported by the tests that use it
    started.set(script, running);
  }
  await Promise.allSettled(started.values());
});

afterAll(async () => {
  await Promise.all([...started.values()].map(async (running) => (await running.catch(() => undefined))?.stop()));
});

describe.each(TARGETS)('@ampcors/hono on $title (examples/hono, pnpm $script)', ({ script, runtime }) => {
  const server = () => started.get(script)!;

  it('answers GET /health from the expected runtime', async () => {
    const { url } = await server();
    const response = await fetch(`${url}/health`, { signal: AbortSignal.timeout(10_000) });
    expect(response.status).toBe(200);
    expect(((await response.json()) as { runtime: string }).runtime).toMatch(runtime);
  });

  it.each(SCENARIOS)('$name', async (scenario) => {
    const { url } = await server();
    expect(await runScenario(url, scenario)).toEqual([]);
  });

  it('stops cleanly on SIGTERM', async () => {
    const running = await server();
    const stopped = await running.stop();
    expect(stopped.killed).toBe(false);
    expect(running.output()).toMatch(/^stopped$/m);
  });
});
