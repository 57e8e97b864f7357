/**
 * Attacker-side: every example server that runs on Node (Koa, Hono on @hono/node-server, Fastify, the Fetch
 * adapter behind node:http and its compiled allow-set variant, Express with verdict sources), started on the
 * current sources, meets TRACE, CONNECT and other methods Node accepts, broken framing, oversized and
 * duplicated headers, and an untrusted origin's state-changing requests. None may crash, hang, grant an
 * untrusted origin, run the subscription handler for it, echo the request (cross-site tracing) or write a
 * 7-bit terminal control into its console; each still grants a trusted origin afterwards.
 */
import { afterEach, describe, it } from 'vitest';
import { ATTACKS, expectSurvives } from './attacks-session17-demo-battery.js';
import { type RunningExample, startExample } from './example-server.js';

/** The examples that run on Node, with the entry their `start` script runs. */
const EXAMPLES = [
  { example: 'koa', entry: 'src/server.ts', env: {} },
  { example: 'hono', entry: 'src/node.ts', env: {} },
  { example: 'fastify', entry: 'src/server.ts', env: {} },
  { example: 'fetch-node', entry: 'src/server.ts', env: {} },
  { example: 'fetch-node', entry: 'src/allow-set.ts', env: {} },
  { example: 'express', entry: 'src/verdict-sources.ts', env: { PUBLISHERS: 'example.com,www.example.com' } },
] as const;

let running: RunningExample | undefined;
afterEach(async () => {
  await running?.stop();
  running = undefined;
});

describe.each(EXAMPLES)('examples/$example $entry', ({ example, entry, env }) => {
  it('survives the hostile requests without a grant, a side effect, an echo or a terminal control', async () => {
    running = await startExample(example, entry, env);
    await expectSurvives(running, `${example}/${entry}`, ATTACKS);
  });
});
