/**
 * One configuration, in its own process (so that no other configuration's
 * type feedback shares its optimized code): builds it (apps.ts), records
 * what it answers to each request kind, warms the three request kinds up
 * together, then measures `rounds` rounds, the kinds interleaved in a
 * rotating order (measure.ts: CPU time, no forced GC).
 *
 * With `--profile=<file>`, the rounds (not the warm-up) run under the V8
 * CPU profiler (node:inspector, the profiler `node --cpu-prof` uses), and
 * the profile is written to <file>.
 *
 * Usage: node dist/in-process-worker.mjs <config> <rounds> <warm-up ops> <warm-up ms> <round ms> [--profile=<file>]
 * Prints one JSON line: a {@link WorkerResult}.
 */
import { writeFileSync } from 'node:fs';
import { Session } from 'node:inspector/promises';
import { ampcorsAnswers, buildApp } from './apps.js';
import { type ConfigName, CONFIGS, KINDS, type RequestKind } from './http/configs.js';
import { type Operation, type Plan, round, warmUp } from './measure.js';
import { type Answer, fetchOperation, nodeOperation } from './requests.js';
import { rotate } from './stats.js';

/** One request kind's figures in one process. */
export interface KindFigures {
  readonly kind: RequestKind;
  /** What the configuration answered (checked before measuring). */
  readonly answer: Answer;
  readonly warmUpOps: number;
  /** CPU ns per request of each round. */
  readonly rounds: number[];
}

/** What one worker process reports. */
export type WorkerResult = { readonly config: ConfigName; readonly kinds: KindFigures[] } | { readonly config: ConfigName; readonly unavailable: string };

async function main(): Promise<void> {
  const [config, roundsArg, opsArg, warmMsArg, roundMsArg] = process.argv.slice(2) as [ConfigName, string, string, string, string];
  if (!CONFIGS.includes(config)) throw new Error(`usage: in-process-worker.mjs <${CONFIGS.join('|')}> <rounds> <warm-up ops> <warm-up ms> <round ms>`);
  const rounds = Number(roundsArg);
  const plan: Plan = { warmUp: { ops: Number(opsArg), cpuMs: Number(warmMsArg) }, roundCpuMs: Number(roundMsArg) };
  let app;
  try {
    app = await buildApp(config, await ampcorsAnswers());
  } catch (error) {
    const result: WorkerResult = { config, unavailable: error instanceof Error ? (error.message.split('\n')[0] as string) : String(error) };
    process.stdout.write(`${JSON.stringify(result)}\n`);
    return;
  }
  const built = app;
  const operations = await Promise.all(KINDS.map((kind) => (built.type === 'node' ? nodeOperation(built.listener, kind) : fetchOperation(built.handler, kind))));
  const ops: Operation[] = operations.map((o) => ({ fn: o.op, async: o.async }));
  const prepared = await warmUp(ops, plan);
  const samples: number[][] = KINDS.map(() => []);
  const profileFile = process.argv.find((arg) => arg.startsWith('--profile='))?.slice('--profile='.length);
  const session = profileFile === undefined ? null : new Session();
  if (session !== null) {
    session.connect();
    await session.post('Profiler.enable');
    await session.post('Profiler.setSamplingInterval', { interval: 50 });
    await session.post('Profiler.start');
  }
  for (let r = 0; r < rounds; r++) {
    for (const index of rotate(
      KINDS.map((_, i) => i),
      r,
    )) {
      (samples[index] as number[]).push(await round(prepared[index] as (typeof prepared)[number], plan));
    }
  }
  if (session !== null && profileFile !== undefined) {
    const { profile } = await session.post('Profiler.stop');
    writeFileSync(profileFile, JSON.stringify(profile));
    session.disconnect();
  }
  const result: WorkerResult = {
    config,
    kinds: KINDS.map((kind, i) => ({
      kind,
      answer: (operations[i] as (typeof operations)[number]).answer,
      warmUpOps: (prepared[i] as (typeof prepared)[number]).warmUpOps,
      rounds: samples[i] as number[],
    })),
  };
  process.stdout.write(`${JSON.stringify(result)}\n`);
}

await main();
