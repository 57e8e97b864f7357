/**
 * The in-process comparison: every configuration in worker processes of its
 * own (in-process-worker.ts --serve; {@link InProcessPlan.processes} of them),
 * real request/response objects, CPU time per request. All processes are
 * started and warmed up (two at a time, one per core), then kept alive while
 * the orchestrator asks each configuration in turn for one round of one
 * request kind (a rotating order), the rounds dealt out among a
 * configuration's processes ({@link roundSchedule}), so that round i of every
 * configuration is measured within seconds of round i of every other and no
 * figure rests on one process's JIT and heap state: "what a middleware adds"
 * is a per-round difference from its framework's bare hello world, and its
 * median and spread are over all rounds of all processes.
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
 *
 * A worker waits, idle, while the others run their rounds: seconds with one
 * process per configuration, 15–35 s with three. V8 takes such a pause for
 * an idle process and resizes its heap: the memory reducer (8 s after a full
 * collection, when allocation has nearly stopped) compacts the heap and
 * lowers the old generation's limit, and the first scavenge after a pause
 * longer than about as many seconds as the young generation holds MB sees
 * an allocation rate under 1 MB/s and shrinks the young generation to 1–4
 * MB. The next round then paid for growing it all back: measured after a
 * 12–20 s pause, a Koa hello world's round ran 22–35 % slower (after 12 s:
 * 123 scavenges instead of 20), Fetch's 22–38 % (after 20 s: three
 * mark-compacts instead of one); after 0.3–6 s, as before. That, not the parked processes themselves (30
 * idle workers parked on the measuring core or on the other changed a Koa
 * hello world by less than its rounds' noise), is what made three processes
 * per configuration inflate every hello world. So every worker also runs
 * with `--no-memory-reducer` (a server under load never pauses 8 s, so it
 * never runs one), and each worker of a configuration measured by several
 * processes (whose pauses are that many times as long) runs the round's
 * request kind unmeasured for {@link InProcessPlan.settleMs} of CPU before
 * each round (`settle` in measure.ts), which grows a shrunk young generation
 * back before the round's clock starts.
 *
 * Also the V8 profile of the measured rounds of the Koa and Fetch ampcors cases, each in
 * a process of its own afterwards (the profiler's overhead stays out of the
 * compared figures).
 */
import { mkdtempSync, readFileSync } from 'node:fs';
import { cpus, tmpdir } from 'node:os';
import { join } from 'node:path';
import { DIST, type LineChild, LOAD_CORE, log, runNode, SERVER_CORE, spawnLines } from './cli.js';
import { type CpuProfile, type ProfileSummary, summarize } from './cpu-profile.js';
import { baselineOf, type ConfigName, type Framework, frameworkOf, KINDS, type RequestKind } from './http/configs.js';
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
  /**
   * Worker processes per configuration (absent: 1): the rounds are dealt out
   * among them in turn ({@link roundSchedule}), so that no figure rests on the
   * JIT and heap state one process happened to reach.
   */
  readonly processes?: number;
  /**
   * Worker processes per configuration of a framework, where it differs from
   * {@link processes} (absent: none differ). A configuration with fewer
   * processes starts its rounds later in the schedule ({@link globalSchedule}),
   * so that round i of every configuration is still measured side by side.
   */
  readonly processesByFramework?: Readonly<Partial<Record<Framework, number>>>;
  /** CPU ms each worker of a configuration with several processes runs a round's request kind unmeasured before the round (absent: 0; see the module comment). */
  readonly settleMs?: number;
}

/** The worker processes of `config` in `plan`. */
export function processesOf(config: ConfigName, plan: InProcessPlan): number {
  return plan.processesByFramework?.[frameworkOf(config)] ?? plan.processes ?? 1;
}

/** One configuration and request kind: CPU ns per request of every round. */
export interface InProcessCell {
  readonly config: ConfigName;
  readonly kind: RequestKind;
  readonly answer: Answer;
  readonly warmUpOps: number;
  readonly rounds: number[];
  /** Whether every process's rounds were aligned to its major collections (absent in results of older runs). */
  readonly aligned?: boolean;
  /** The worker process (0 …) that measured each round, index for index with {@link rounds} (absent in results of older runs: one process). */
  readonly processes?: number[];
  /** Each process's discarded first round, CPU ns per request (absent in results of older runs). */
  readonly discarded?: number[];
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
export const WORKER_V8_FLAGS: readonly string[] = ['--single-threaded-gc', '--no-memory-reducer'];

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

/** One round of the schedule: which worker process of every configuration measures it; a negative round is discarded. */
export interface ScheduledRound {
  readonly round: number;
  readonly process: number;
}

/**
 * The order in which the rounds are measured: each of the `processes` worker
 * processes of a configuration first runs one discarded round (rounds
 * −processes … −1: its caches are cold after the other processes' warm-ups),
 * then measured round `i` (0 … `rounds` − 1) is run by process `i` mod
 * `processes`. The rounds are dealt out in turn, so every process's rounds
 * are spread over the whole run, process counts differ by at most one, and
 * round `i` of every configuration is run by that configuration's process of
 * the same index, within seconds of the others.
 */
export function roundSchedule(rounds: number, processes: number): ScheduledRound[] {
  if (!Number.isInteger(processes) || processes < 1) throw new Error(`processes must be a positive whole number, got ${processes}`);
  return Array.from({ length: rounds + processes }, (_, i) => {
    const round = i - processes;
    return { round, process: ((round % processes) + processes) % processes };
  });
}

/**
 * The whole run's schedule for configurations of `processes[c]` processes
 * each: step s holds, for each configuration c, its round
 * `roundSchedule(rounds, processes[c])[s − (max − processes[c])]`, or null
 * where that index is negative (max: the largest process count). Every
 * configuration's discarded rounds thus end at the same step, and measured
 * round i of every configuration falls on the same step, max + i.
 */
export function globalSchedule(rounds: number, processes: readonly number[]): (ScheduledRound | null)[][] {
  const max = Math.max(1, ...processes);
  const own = processes.map((n) => roundSchedule(rounds, n));
  return Array.from({ length: rounds + max }, (_, step) => own.map((schedule, c) => schedule[step - (max - (processes[c] as number))] ?? null));
}

/** A configuration's live worker processes and the cells their rounds fill. */
interface LiveConfig {
  readonly config: ConfigName;
  readonly children: LineChild[];
  readonly cells: InProcessCell[];
}

/** A worker started and warmed up: its line channel and ready line, or why it is unavailable. */
type Started = { readonly child: LineChild; readonly ready: ReadyLine } | string;

/** Starts and warms up one worker of `config` on `core` (added to `all` at once), then moves it to the measuring core. */
async function startWorker(config: ConfigName, plan: InProcessPlan, core: string, all: LineChild[]): Promise<Started> {
  const child = spawnLines([...workerArgs(config, plan), '--serve'], core);
  all.push(child);
  const line = await child.next(300_000);
  if (!line.startsWith('ready ')) {
    child.stop();
    return line.replace(/^unavailable:? /, '');
  }
  if (core !== SERVER_CORE) child.pin(SERVER_CORE);
  return { child, ready: JSON.parse(line.slice('ready '.length)) as ReadyLine };
}

/**
 * The cores the workers warm up on, one worker at a time on each: the
 * measuring core and the orchestrator's, idle until the rounds begin (a
 * warm-up is counted in requests and CPU time, not measured, so where it runs
 * changes nothing but the wall time). Every round runs on the measuring core.
 */
const WARM_UP_CORES: readonly string[] = cpus().length >= 2 ? [SERVER_CORE, LOAD_CORE] : [SERVER_CORE];

/** Starts every process of every configuration, {@link WARM_UP_CORES} at a time; `started[c][p]` is configuration c's process p. */
async function startAll(plan: InProcessPlan, all: LineChild[]): Promise<Started[][]> {
  const counts = plan.configs.map((config) => processesOf(config, plan));
  const jobs = Array.from({ length: Math.max(1, ...counts) }, (_, p) => plan.configs.flatMap((_, c) => (p < (counts[c] as number) ? [{ c, p }] : []))).flat();
  const started: Started[][] = plan.configs.map(() => []);
  let next = 0;
  await Promise.all(
    WARM_UP_CORES.map(async (core) => {
      for (let job = jobs[next++]; job !== undefined; job = jobs[next++]) {
        const config = plan.configs[job.c] as ConfigName;
        const worker = await startWorker(config, plan, core, all);
        const processes = counts[job.c] as number;
        (started[job.c] as Started[])[job.p] = worker;
        log(
          typeof worker === 'string'
            ? `in-process ${config} (process ${job.p + 1}/${processes}): unavailable (${worker})`
            : `in-process ${config} (process ${job.p + 1}/${processes}): warmed up (${worker.ready.kinds.map((k) => `${k.kind} ${k.warmUpOps.toLocaleString('en')}`).join(', ')} requests; ${worker.ready.majorGcs} major collections${worker.ready.aligned ? ': rounds aligned to them' : ''})`,
        );
      }
    }),
  );
  return started;
}

/** Asks a worker for one round of request kind `k`, after `settleMs` of it unmeasured: CPU ns and requests. */
async function askRound(config: ConfigName, child: LineChild, k: number, settleMs: number): Promise<{ ns: number; ops: number }> {
  child.send(`round ${k} ${settleMs}`);
  const answer = await child.next(120_000);
  const fields = answer.split(' ');
  const ns = Number(fields[2]);
  const ops = Number(fields[3]);
  if (fields[0] !== 'round' || !Number.isFinite(ns) || !(ops > 0)) throw new Error(`in-process ${config}: bad answer ${JSON.stringify(answer)}`);
  return { ns, ops };
}

/**
 * Runs every configuration in its worker processes ({@link processesOf}),
 * rounds interleaved across all of them ({@link globalSchedule}); then the
 * profiles.
 */
export async function runInProcess(plan: InProcessPlan, profiled: readonly ConfigName[]): Promise<InProcessResult> {
  const unavailable: Partial<Record<ConfigName, string>> = {};
  const live: LiveConfig[] = [];
  /** Every worker started, stopped at the end whatever happens. */
  const all: LineChild[] = [];
  const startedAt = performance.now();
  try {
    const workers = await startAll(plan, all);
    plan.configs.forEach((config, c) => {
      const mine = workers[c] as Started[];
      const children = mine.flatMap((w) => (typeof w === 'string' ? [] : [w.child]));
      const why = mine.find((w) => typeof w === 'string');
      if (why !== undefined) {
        // A configuration is measured in all its processes or not at all.
        unavailable[config] = why;
        for (const child of children) child.stop();
        return;
      }
      const readies = mine.map((w) => (w as Exclude<Started, string>).ready);
      const first = readies[0] as ReadyLine;
      live.push({
        config,
        children,
        cells: first.kinds.map((k, i) => {
          // Every process must answer alike; the cell keeps the smallest warm-up (each had at least the plan's).
          for (const ready of readies)
            if (JSON.stringify(ready.kinds[i]?.answer) !== JSON.stringify(k.answer))
              throw new Error(`in-process ${config}: its processes answered ${k.kind} differently`);
          return {
            config,
            kind: k.kind,
            answer: k.answer,
            warmUpOps: Math.min(...readies.map((r) => r.kinds[i]?.warmUpOps ?? 0)),
            rounds: [],
            processes: [],
            discarded: [],
            aligned: readies.every((r) => r.aligned),
          };
        }),
      });
    });
    const warmedAt = performance.now();
    const counts = live.map((entry) => entry.children.length);
    const layout = [...new Set(counts)].sort((a, b) => b - a).map((n) => `${counts.filter((m) => m === n).length} × ${n}`);
    log(`in-process: ${live.length} configurations (${layout.join(', ')} processes) started and warmed up in ${((warmedAt - startedAt) / 1e3).toFixed(0)} s`);
    const settleMs = plan.settleMs ?? 0;
    const steps = globalSchedule(plan.rounds, counts);
    for (const [step, scheduled] of steps.entries()) {
      const active = live.flatMap((entry, c) => {
        const at = scheduled[c];
        return at === null || at === undefined ? [] : [{ entry, ...at }];
      });
      for (let k = 0; k < KINDS.length; k++) {
        const totals = new Map(active.map((a) => [a, { ns: 0, ops: 0 }]));
        for (let pass = 0; pass < (plan.passes ?? 1); pass++) {
          for (const a of rotate(active, step * KINDS.length + k + pass)) {
            // Only a configuration of several processes settles: one process pauses a few seconds between its rounds, several that many times as long.
            const { ns, ops } = await askRound(a.entry.config, a.entry.children[a.process] as LineChild, k, a.entry.children.length > 1 ? settleMs : 0);
            const total = totals.get(a) as { ns: number; ops: number };
            total.ns += ns;
            total.ops += ops;
          }
        }
        for (const [a, total] of totals) {
          const cell = a.entry.cells[k] as InProcessCell;
          if (a.round < 0) cell.discarded?.push(total.ns / total.ops);
          else {
            cell.rounds.push(total.ns / total.ops);
            cell.processes?.push(a.process);
          }
        }
      }
      const r = step - (steps.length - plan.rounds);
      if (r >= 0)
        log(
          `in-process round ${r + 1}/${plan.rounds}: ${active.map((a) => `${a.entry.config}${a.entry.children.length > 1 ? ` (${a.process + 1}/${a.entry.children.length})` : ''} ${(((a.entry.cells[0] as InProcessCell).rounds[r] as number) / 1e3).toFixed(2)}`).join(', ')} µs (get)`,
        );
    }
    log(`in-process: ${plan.rounds} rounds (and ${Math.max(...counts)} discarded) in ${((performance.now() - warmedAt) / 1e3).toFixed(0)} s`);
  } finally {
    for (const child of all) child.stop();
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

/**
 * The worker process that measured each round of `config`'s cell of `kind`,
 * index for index with its rounds (and with every per-round figure taken from
 * it: every configuration follows the same {@link roundSchedule}); undefined
 * for results of older runs, which had one process per configuration.
 */
export function roundProcesses(result: InProcessResult, config: ConfigName, kind: RequestKind): number[] | undefined {
  const cell = cellOf(result, config, kind);
  return cell?.processes !== undefined && cell.processes.length === cell.rounds.length ? cell.processes : undefined;
}
