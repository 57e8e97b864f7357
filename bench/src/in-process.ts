/**
 * The in-process comparison: every configuration in its own process
 * (in-process-worker.ts --serve), real request/response objects, CPU time
 * per request. All processes are started and warmed up one after another,
 * then kept alive while the orchestrator asks each in turn for one round of
 * one request kind (a rotating order), so that round i of every
 * configuration is measured within seconds of round i of every other: "what
 * a middleware adds" is a per-round difference from its framework's bare
 * hello world, and its median and spread are over all rounds.
 *
 * Every worker runs with V8's `--single-threaded-gc`: the collector's work
 * (marking, sweeping) is done on the main thread, inside the round whose
 * garbage it is. With helper threads, marking and sweeping begun in a round
 * went on after its last batch, while the process waited for its next round:
 * CPU time charged to no round (measured by idling 10 ms after each round:
 * 0.07–6.7 ms of CPU after a 200–350 ms Express round, varying by round;
 * about 0.07 ms, the timer itself, with the flag). The work is the same and
 * the flag the same for every configuration; it only moves the collector's
 * work onto the thread that is measured, so it is charged where it belongs.
 * Also the V8
 * profile of the measured rounds of the Koa and Fetch ampcors cases, each in
 * a process of its own afterwards (the profiler's overhead stays out of the
 * compared figures).
 */
import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DIST, type LineChild, log, runNode, spawnLines } from './cli.js';
import { type CpuProfile, type ProfileSummary, summarize } from './cpu-profile.js';
import { baselineOf, type ConfigName, frameworkOf, KINDS, type RequestKind } from './http/configs.js';
import type { ReadyLine } from './in-process-worker.js';
import type { Answer } from './requests.js';
import { differences, rotate, type Spread, spread } from './stats.js';

/** How much to measure. */
export interface InProcessPlan {
  readonly configs: readonly ConfigName[];
  readonly rounds: number;
  readonly warmUpOps: number;
  readonly warmUpMs: number;
  readonly roundMs: number;
  /**
   * Interleaved passes per round (absent: 1): each round of a request kind is
   * this many sub-rounds per configuration, the configurations taking turns
   * (ABCD ABCD …), each sub-round 1/passes of the round's minimum length; a
   * round's figure is its sub-rounds' total CPU ÷ their total requests. The
   * configurations compared then share the same stretch of time more closely.
   */
  readonly passes?: number;
}

/** One configuration and request kind: CPU ns per request of every round. */
export interface InProcessCell {
  readonly config: ConfigName;
  readonly kind: RequestKind;
  readonly answer: Answer;
  readonly warmUpOps: number;
  readonly rounds: number[];
  /** Whether the process's rounds were aligned to its major collections (absent in results of older runs). */
  readonly aligned?: boolean;
}

/** A profiled case. */
export interface ProfiledCase {
  readonly config: ConfigName;
  readonly summary: ProfileSummary;
}

/** What the in-process part reports. */
export interface InProcessResult {
  readonly plan: InProcessPlan;
  readonly cells: InProcessCell[];
  readonly unavailable: Partial<Record<ConfigName, string>>;
  readonly profiles: ProfiledCase[];
}

/**
 * Minimum round length of a configuration, in ms of CPU: Express's × 8, the
 * Fetch API's (Fetch, Hono) and Fastify's × 2. An Express hello world runs a
 * full collection every 100–200 ms of CPU, undici's `Request`/`Response`
 * (streams, an `AbortSignal`) every few hundred: such a process's rounds are
 * also aligned to its collections (in-process-worker.ts, measure.ts), so a
 * round runs on past this minimum to the end of a collection cycle. Express's
 * request costs 30–40 µs, and on a shared machine its per-round figure moves
 * by about 1 µs at 200 ms rounds (interquartile range of per-round paired
 * differences; 0.3–0.6 µs at 400 ms), too much to resolve a difference of a
 * few tenths of a µs between two middlewares.
 */
export function roundMsOf(config: ConfigName, plan: InProcessPlan): number {
  const framework = frameworkOf(config);
  return framework === 'express' ? plan.roundMs * 8 : framework === 'koa' ? plan.roundMs : plan.roundMs * 2;
}

/** V8 flags of every in-process worker (see the module comment). */
export const WORKER_V8_FLAGS: readonly string[] = ['--single-threaded-gc'];

function workerArgs(config: ConfigName, plan: InProcessPlan): string[] {
  const subRoundMs = roundMsOf(config, plan) / (plan.passes ?? 1);
  return [
    ...WORKER_V8_FLAGS,
    join(DIST, 'in-process-worker.mjs'),
    config,
    String(plan.rounds),
    String(plan.warmUpOps),
    String(plan.warmUpMs),
    String(subRoundMs),
  ];
}

/** Runs every configuration, rounds interleaved across live processes; then the profiles. */
export async function runInProcess(plan: InProcessPlan, profiled: readonly ConfigName[]): Promise<InProcessResult> {
  const unavailable: Partial<Record<ConfigName, string>> = {};
  const live: { config: ConfigName; child: LineChild; cells: InProcessCell[] }[] = [];
  try {
    for (const config of plan.configs) {
      const child = spawnLines([...workerArgs(config, plan), '--serve']);
      const line = await child.next(300_000);
      if (!line.startsWith('ready ')) {
        unavailable[config] = line.replace(/^unavailable:? /, '');
        child.stop();
        log(`in-process ${config}: unavailable (${unavailable[config]})`);
        continue;
      }
      const ready = JSON.parse(line.slice('ready '.length)) as ReadyLine;
      live.push({
        config,
        child,
        cells: ready.kinds.map((k) => ({ config, kind: k.kind, answer: k.answer, warmUpOps: k.warmUpOps, rounds: [], aligned: ready.aligned })),
      });
      log(
        `in-process ${config}: warmed up (${ready.kinds.map((k) => `${k.kind} ${k.warmUpOps.toLocaleString('en')}`).join(', ')} requests; ${ready.majorGcs} major collections${ready.aligned ? ': rounds aligned to them' : ''})`,
      );
    }
    // Round -1 is one more warm-up round, discarded: each process's first
    // round after the others' warm-ups runs with cold caches.
    for (let r = -1; r < plan.rounds; r++) {
      for (let k = 0; k < KINDS.length; k++) {
        const totals = new Map(live.map((worker) => [worker, { ns: 0, ops: 0 }]));
        for (let pass = 0; pass < (plan.passes ?? 1); pass++) {
          for (const worker of rotate(live, r * KINDS.length + k + pass)) {
            worker.child.send(`round ${k}`);
            const answer = await worker.child.next(120_000);
            const fields = answer.split(' ');
            const ns = Number(fields[2]);
            const ops = Number(fields[3]);
            if (fields[0] !== 'round' || !Number.isFinite(ns) || !(ops > 0))
              throw new Error(`in-process ${worker.config}: bad answer ${JSON.stringify(answer)}`);
            const total = totals.get(worker) as { ns: number; ops: number };
            total.ns += ns;
            total.ops += ops;
          }
        }
        if (r >= 0) for (const [worker, total] of totals) (worker.cells[k] as InProcessCell).rounds.push(total.ns / total.ops);
      }
      if (r >= 0)
        log(
          `in-process round ${r + 1}/${plan.rounds}: ${live.map((w) => `${w.config} ${(((w.cells[0] as InProcessCell).rounds[r] as number) / 1e3).toFixed(2)}`).join(', ')} µs (get)`,
        );
    }
  } finally {
    for (const worker of live) worker.child.stop();
  }
  const profiles: ProfiledCase[] = [];
  for (const config of profiled.filter((c) => live.some((w) => w.config === c))) {
    const file = join(mkdtempSync(join(tmpdir(), 'ampcors-inproc-prof-')), 'profile.cpuprofile');
    runNode([...workerArgs(config, plan), `--profile=${file}`]);
    profiles.push({ config, summary: summarize(JSON.parse(readFileSync(file, 'utf8')) as CpuProfile, 12) });
    log(`in-process profile of ${config} done`);
  }
  return { plan, cells: live.flatMap((w) => w.cells), unavailable, profiles };
}

/** The cell of a configuration and kind. */
export function cellOf(result: InProcessResult, config: ConfigName, kind: RequestKind): InProcessCell | undefined {
  return result.cells.find((c) => c.config === config && c.kind === kind);
}

/** What a configuration adds over its framework's bare hello world, µs per request, round by round. */
export function addedRounds(result: InProcessResult, config: ConfigName, kind: RequestKind): number[] | undefined {
  const own = cellOf(result, config, kind);
  const bare = cellOf(result, baselineOf(config), kind);
  if (own === undefined || bare === undefined) return undefined;
  return differences(own.rounds, bare.rounds).map((ns) => ns / 1e3);
}

/** {@link addedRounds} summarized: median, lowest and highest round. */
export function added(result: InProcessResult, config: ConfigName, kind: RequestKind): Spread | undefined {
  const rounds = addedRounds(result, config, kind);
  return rounds === undefined ? undefined : spread(rounds);
}

/**
 * `a` adds minus `b` adds, µs per request, per round: each configuration's
 * bare hello world is subtracted round by round first, so that
 * configurations of two frameworks can be compared too.
 */
export function addsDifference(result: InProcessResult, a: ConfigName, b: ConfigName, kind: RequestKind): number[] | undefined {
  const ownA = cellOf(result, a, kind);
  const ownB = cellOf(result, b, kind);
  const bareA = cellOf(result, baselineOf(a), kind);
  const bareB = cellOf(result, baselineOf(b), kind);
  if (ownA === undefined || ownB === undefined || bareA === undefined || bareB === undefined) return undefined;
  return differences(differences(ownA.rounds, bareA.rounds), differences(ownB.rounds, bareB.rounds)).map((ns) => ns / 1e3);
}
