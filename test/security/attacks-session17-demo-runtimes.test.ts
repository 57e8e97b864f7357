/**
 * Attacker-side: the Bun and Deno example servers (examples/bun, examples/deno, and the Hono app on each), run
 * by the `bun` and `deno` binaries the workspace installs from npm, meet the same hostile requests as the
 * Node examples (attacks-session17-demo-examples.test.ts): none may crash, hang, grant an untrusted origin,
 * run the subscription handler for it, echo the request or write a 7-bit terminal control to its console.
 * Bun resolves @ampcors/* to the sources (tsconfig paths); Deno to the built dist (deno.json:
 * `nodeModulesDir: manual`), so Deno checks the last build.
 */
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { ATTACKS, expectSurvives } from './attacks-session17-demo-battery.js';
import { ROOT, type RunningExample, startExample } from './example-server.js';

const BUN = join(ROOT, 'node_modules', '.bin', 'bun');
const DENO = join(ROOT, 'node_modules', '.bin', 'deno');
const DENO_RUN = [DENO, 'run', '--allow-net', '--allow-env', '--allow-read', '--unstable-sloppy-imports'];

const RUNTIMES = [
  { example: 'bun', entry: 'src/server.ts', command: [BUN, 'run'] },
  { example: 'hono', entry: 'src/bun.ts', command: [BUN, 'run'] },
  { example: 'deno', entry: 'src/main.ts', command: DENO_RUN },
  { example: 'hono', entry: 'src/deno.ts', command: DENO_RUN },
] as const;

let running: RunningExample | undefined;
afterEach(async () => {
  await running?.stop();
  running = undefined;
});

describe.each(RUNTIMES)('examples/$example $entry', ({ example, entry, command }) => {
  it('survives the hostile requests', { timeout: 30_000 }, async () => {
    // The binaries come with the workspace's devDependencies; a missing one is a failed install, not a skip.
    expect(existsSync(command[0]), command[0]).toBe(true);
    running = await startExample(example, entry, {}, command, 25_000);
    await expectSurvives(running, `${example}/${entry}`, ATTACKS);
  });
});
