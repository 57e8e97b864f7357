/**
 * One configuration, in its own process (so that no other configuration's
 * type feedback shares its optimized code): builds it (apps.ts), records
 * what it answers to each request kind, and warms the three request kinds
 * up together (measure.ts: counted warm-up, CPU time, no forced GC).
 *
 * With `--serve` it then prints `ready <json>` (the answers and warm-up
 * counts) and measures one round of a request kind for each line
 * `round <kind index>` it reads, answering `round <CPU ns per request> <CPU ns> <requests>`:
 * the orchestrator (in-process.ts) keeps every configuration's processes
 * (several per configuration) alive at once and interleaves their rounds, so
 * that rounds of different configurations are measured seconds apart. Without it, it measures `rounds` rounds itself
 * (the kinds interleaved) and prints a {@link WorkerResult}; with
 * `--profile=<file>` those rounds (not the warm-up) run under the V8 CPU
 * profiler (node:inspector, the profiler `node --cpu-prof` uses).
 *
 * A process whose warm-up needed at least {@link ALIGN_AFTER_MAJOR_GCS} major
 * collections has its rounds aligned to them (measure.ts: each round a whole
 * number of collection cycles); the rule is the same for every configuration.
 * The orchestrator starts it with `--single-threaded-gc` (in-process.ts).
 *
 * Usage: node dist/in-process-worker.mjs <config> <rounds> <warm-up ops> <warm-up ms> <round ms> [--serve | --profile=<file>]
 * Prints `unavailable <why>` and exits when a package it needs is not installed.
 */
import { writeFileSync } from 'node:fs';
import { Session } from 'node:inspector/promises';
import { createInterface } from 'node:readline';
import { ampcorsAnswers, buildApp, whyUnavailable } from './apps.js';
import { type ConfigName, CONFIGS, KINDS, type RequestKind } from './http/configs.js';
import { MajorGcCount, type Operation, type Plan, round, roundTotals, settle, warmUp } from './measure.js';
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

/** What one worker process reports (without `--serve`). */
export interface WorkerResult {
  readonly config: ConfigName;
  readonly kinds: KindFigures[];
}

/** What `--serve` prints after its warm-up, after `ready `. */
export interface ReadyLine {
  readonly kinds: Omit<KindFigures, 'rounds'>[];
  /** Major collections during the warm-up. */
  readonly majorGcs: number;
  /** Whether the rounds are aligned to major collections. */
  readonly aligned: boolean;
}

/** Major collections a warm-up must have needed for the rounds to be aligned to them. */
export const ALIGN_AFTER_MAJOR_GCS = 2;

async function main(): Promise<void> {
  const [config, roundsArg, opsArg, warmMsArg, roundMsArg] = process.argv.slice(2) as [ConfigName, string, string, string, string];
  if (!CONFIGS.includes(config))
    throw new Error(`usage: in-process-worker.mjs <${CONFIGS.join('|')}> <rounds> <warm-up ops> <warm-up ms> <round ms> [--serve | --profile=<file>]`);
  const plan: Plan = { warmUp: { ops: Number(opsArg), cpuMs: Number(warmMsArg) }, roundCpuMs: Number(roundMsArg) };
  let app;
  try {
    app = await buildApp(config, await ampcorsAnswers());
  } catch (error) {
    process.stdout.write(`unavailable ${whyUnavailable(error)}\n`);
    return;
  }
  const built = app;
  const operations = await Promise.all(
    KINDS.map((kind) => (built.type === 'node' ? nodeOperation(built.listener, kind) : fetchOperation(built.handler, kind))),
  );
  const ops: Operation[] = operations.map((o) => ({ fn: o.op, async: o.async }));
  const collections = new MajorGcCount();
  const prepared = await warmUp(ops, plan);
  const majorGcs = collections.count;
  const gc = majorGcs >= ALIGN_AFTER_MAJOR_GCS ? collections : undefined;
  if (gc === undefined) collections.stop();
  const figures = KINDS.map((kind, i) => ({
    kind,
    answer: (operations[i] as (typeof operations)[number]).answer,
    warmUpOps: (prepared[i] as (typeof prepared)[number]).warmUpOps,
  }));
  if (process.argv.includes('--serve')) {
    const ready: ReadyLine = { kinds: figures, majorGcs, aligned: gc !== undefined };
    process.stdout.write(`ready ${JSON.stringify(ready)}\n`);
    const lines = createInterface({ input: process.stdin });
    for await (const line of lines) {
      const [command, kindArg, settleArg = '0'] = line.split(' ');
      const p = prepared[Number(kindArg)];
      const settleMs = Number(settleArg);
      if (command !== 'round' || p === undefined || !(settleMs >= 0)) throw new Error(`in-process worker: unknown command ${JSON.stringify(line)}`);
      await settle(p, settleMs);
      const { ns, ops } = await roundTotals(p, plan, gc);
      process.stdout.write(`round ${ns / ops} ${ns} ${ops}\n`);
    }
    return;
  }
  const samples: number[][] = KINDS.map(() => []);
  const profileFile = process.argv.find((arg) => arg.startsWith('--profile='))?.slice('--profile='.length);
  const session = profileFile === undefined ? null : new Session();
  if (session !== null) {
    session.connect();
    await session.post('Profiler.enable');
    await session.post('Profiler.setSamplingInterval', { interval: 50 });
    await session.post('Profiler.start');
  }
  for (let r = 0; r < Number(roundsArg); r++) {
    for (const index of rotate(
      KINDS.map((_, i) => i),
      r,
    )) {
      (samples[index] as number[]).push(await round(prepared[index] as (typeof prepared)[number], plan, gc));
    }
  }
  if (session !== null && profileFile !== undefined) {
    const { profile } = await session.post('Profiler.stop');
    writeFileSync(profileFile, JSON.stringify(profile));
    session.disconnect();
  }
  const result: WorkerResult = { config, kinds: figures.map((f, i) => ({ ...f, rounds: samples[i] as number[] })) };
  process.stdout.write(`${JSON.stringify(result)}\n`);
}

await main();
