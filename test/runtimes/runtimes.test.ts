/**
 * Every example started as a real process by its own `start` command, then
 * the one shared scenario table over HTTP on 127.0.0.1: the Fetch adapter on
 * Node, Bun, Deno and workerd (miniflare), and the Express and Koa adapters.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ensureBuilt, type ExampleProcess, startExample } from './example-process.js';
import { runScenario, SCENARIOS } from './publisher-api-scenarios.js';

interface Target {
  /** examples/<dir>. */
  readonly example: string;
  readonly title: string;
  /** What `GET /health` reports as its runtime: proof of where the code ran. */
  readonly runtime: RegExp;
  /**
   * Exit status after SIGTERM: 0 for Node; 128 + 15 under miniflare, whose own
   * exit hook stops workerd and exits so. Not asserted for Bun and Deno: the
   * started process is the npm package's launcher (a sh or node shim around
   * the binary), which dies by the signal while the server stops cleanly.
   */
  readonly exit?: number;
}

const TARGETS: readonly Target[] = [
  { example: 'fetch-node', title: '@ampcors/fetch on Node (node:http)', runtime: /^node v\d+/, exit: 0 },
  { example: 'bun', title: '@ampcors/fetch on Bun', runtime: /^bun \d+\.\d+/ },
  { example: 'deno', title: '@ampcors/fetch on Deno', runtime: /^deno \d+\.\d+/ },
  { example: 'cloudflare-worker', title: '@ampcors/fetch on workerd (miniflare)', runtime: /^Cloudflare-Workers$/, exit: 143 },
  { example: 'express', title: '@ampcors/express on Express 5', runtime: /^node v\d+/, exit: 0 },
  { example: 'koa', title: '@ampcors/koa on Koa 3', runtime: /^node v\d+/, exit: 0 },
];

const started = new Map<string, Promise<ExampleProcess>>();

beforeAll(async () => {
  ensureBuilt(['core', 'fetch', 'express', 'koa']);
  // Start them all at once; each describe block awaits its own.
  for (const { example } of TARGETS) {
    const child = startExample(example);
    child.catch(() => undefined); // reported by the tests that use it
    started.set(example, child);
  }
  await Promise.allSettled(started.values());
});

afterAll(async () => {
  const stopping = [...started.values()].map(async (child) => {
    const running = await child.catch(() => undefined);
    await running?.stop();
  });
  await Promise.all(stopping);
});

describe.each(TARGETS)('$title (examples/$example)', ({ example, runtime, exit }) => {
  const server = () => started.get(example)!;

  it('answers GET /health from the expected runtime', async () => {
    const { url } = await server();
    const response = await fetch(`${url}/health`, { signal: AbortSignal.timeout(10_000) });
    expect(response.status).toBe(200);
    const body = (await response.json()) as { runtime: string };
    expect(body.runtime).toMatch(runtime);
  });

  it.each(SCENARIOS)('$name', async (scenario) => {
    const { url } = await server();
    expect(await runScenario(url, scenario)).toEqual([]);
  });

  it('stops cleanly on SIGTERM', async () => {
    const child = await server();
    const stopped = await child.stop(10_000);
    expect(stopped.killed).toBe(false);
    if (exit !== undefined) expect(stopped.exit).toBe(exit);
    expect(child.output()).toMatch(/^stopped$/m);
  });
});
