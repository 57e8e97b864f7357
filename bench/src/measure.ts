/**
 * The CPU clock every in-process and micro case is measured with.
 *
 * Method (issue 16): no forced garbage collection anywhere near a measured
 * case (a full GC makes V8 discard optimized code and re-optimize, which
 * inflated a Koa hello world from about 5 µs to 17–37 µs); a warm-up counted
 * in operations (at least {@link WarmUp.ops}, and at least
 * {@link WarmUp.cpuMs} of CPU time) whose time is discarded; then rounds, each
 * a run of batches lasting about {@link Plan.roundCpuMs} of CPU time, whose
 * figure is total CPU time ÷ operations — the garbage a case makes is
 * collected by V8 on its own schedule and charged to it, as in production.
 * Time is the process's CPU time (user + system, `process.cpuUsage()`), so a
 * case is not charged for time it spent descheduled on a shared machine.
 *
 * A process whose garbage reaches the old generation (an Express hello world:
 * its per-request `Object.setPrototypeOf` on `req` and `res` makes about half
 * of what a request allocates survive scavenges) runs a full mark-compact
 * every 100–200 ms of CPU, each 10–20 ms: a round of fixed length then holds
 * one more or one fewer of them by chance (±5 % per round). Its rounds are
 * therefore aligned to those collections ({@link MajorGcCount}, `round`'s
 * third argument): a round ends at the first batch after a major collection
 * once it has run its minimum length, so each round is a whole number of
 * collection cycles — the same expected cost per operation, without the
 * lottery.
 */
import { constants, PerformanceObserver } from 'node:perf_hooks';

/** Process CPU time in nanoseconds (microsecond resolution: batches make it fine enough). */
export function cpuNowNs(): number {
  const usage = process.cpuUsage();
  return (usage.user + usage.system) * 1e3;
}

/** One operation; `async` when it returns a Promise to wait for. */
export interface Operation {
  readonly fn: () => unknown;
  readonly async: boolean;
}

/** The warm-up before any round: counted, timed only to stop, discarded. */
export interface WarmUp {
  readonly ops: number;
  readonly cpuMs: number;
}

/** How long each round of a case runs. */
export interface Plan {
  readonly warmUp: WarmUp;
  /** CPU time of one round of one case. */
  readonly roundCpuMs: number;
}

/** Where results go, so that no call is optimized away (a module-level store V8 keeps). */
let _sink: unknown;

/** Resolves on the event loop's next check phase, after every `process.nextTick` and microtask queued before. */
const nextTurn = (): Promise<void> => new Promise((resolve) => setImmediate(resolve));

/**
 * Runs `op` `count` times, then lets the event loop turn once; returns the
 * CPU ns it all took. The turn is timed with the batch: what the requests
 * deferred (`process.nextTick`, `setImmediate`: `finish` handlers and the
 * like) runs there and is charged to them. Without it a batch of awaited
 * operations would starve those queues, and every request of a round would
 * stay reachable from them until the round ends (V8 then promotes it all
 * and runs full collections a real server never needs).
 */
export async function runBatch(op: Operation, count: number): Promise<number> {
  const { fn } = op;
  const start = cpuNowNs();
  if (op.async) for (let i = 0; i < count; i++) _sink = await fn();
  else for (let i = 0; i < count; i++) _sink = fn();
  await nextTurn();
  return cpuNowNs() - start;
}

/** A warmed-up case: its batch size (operations per ~1 ms of CPU) and the warm-up it had. */
export interface Prepared {
  readonly op: Operation;
  readonly batch: number;
  readonly warmUpOps: number;
}

/**
 * Warms every operation up — each at least `plan.warmUp.ops` operations and
 * `plan.warmUp.cpuMs` of CPU — in interleaved chunks, so that code the
 * operations share sees all of them before any round (a case warmed alone
 * would be deoptimized by the next one's warm-up, then re-optimized inside a
 * round). Sizes each one's batches from its last chunk: about 1 ms of CPU,
 * at least 16 operations.
 */
export async function warmUp(ops: readonly Operation[], plan: Plan): Promise<Prepared[]> {
  const state = ops.map(() => ({ done: 0, spent: 0, chunk: 16, nsPerOp: 0 }));
  const pending = (i: number): boolean => {
    const s = state[i] as (typeof state)[number];
    return s.done < plan.warmUp.ops || s.spent < plan.warmUp.cpuMs * 1e6;
  };
  while (ops.some((_, i) => pending(i))) {
    for (let i = 0; i < ops.length; i++) {
      if (!pending(i)) continue;
      const s = state[i] as (typeof state)[number];
      const ns = await runBatch(ops[i] as Operation, s.chunk);
      s.done += s.chunk;
      s.spent += ns;
      s.nsPerOp = ns / s.chunk;
      // Chunks of up to ~5 ms, so that the operations alternate often.
      if (ns < 2.5e6) s.chunk = Math.min(s.chunk * 2, 1 << 20);
    }
  }
  return ops.map((op, i) => {
    const s = state[i] as (typeof state)[number];
    return { op, batch: Math.max(16, Math.round(1e6 / Math.max(s.nsPerOp, 1))), warmUpOps: s.done };
  });
}

/**
 * Counts the major (mark-compact) collections of this process as V8 reports
 * them to `perf_hooks` (delivered on the event loop, a batch or two after the
 * collection: every batch ends with a turn of the loop).
 */
export class MajorGcCount {
  /** Major collections reported so far. */
  count = 0;
  private readonly observer = new PerformanceObserver((list) => {
    for (const entry of list.getEntries())
      if ((entry as { readonly detail?: { readonly kind?: number } | null }).detail?.kind === constants.NODE_PERFORMANCE_GC_MAJOR) this.count++;
  });
  constructor() {
    this.observer.observe({ entryTypes: ['gc'] });
  }
  /** Stops counting. */
  stop(): void {
    this.observer.disconnect();
  }
}

/**
 * Runs a prepared case unmeasured for at least `cpuMs` of CPU (whole
 * batches; nothing when `cpuMs` is 0); returns the operations run. An
 * in-process worker does this before each round it is asked for
 * (in-process-worker.ts): a worker left idle for seconds between its rounds
 * finds its heap resized for an idle process (V8 shrinks the young
 * generation when the allocation rate it last sampled is low, and the memory
 * reducer compacts an idle heap), and the requests that grow it back would
 * otherwise be charged to the round.
 */
export async function settle(prepared: Prepared, cpuMs: number): Promise<number> {
  let ns = 0;
  let ops = 0;
  while (ns < cpuMs * 1e6) {
    ns += await runBatch(prepared.op, prepared.batch);
    ops += prepared.batch;
  }
  return ops;
}

/**
 * A round of collection cycles may run at most this many times its minimum
 * length (when no major collection comes). Well above the longest cycle of
 * any configuration's rounds, so that a round ends at a collection, not at
 * the cap: with 3 (until session 17), a Fetch round (minimum 100 ms of CPU;
 * undici's `Request`/`Response` make a mark-compact every 350–700 ms) often
 * reached the cap with no collection in it, and the next held one or two,
 * so its figures took two levels 2–3 µs apart, which a run mixed by chance
 * (bench/README.md, "Rounds of whole collection cycles").
 */
export const ALIGNED_ROUND_CAP = 10;

/**
 * One round of a prepared case: CPU ns per operation over about
 * `plan.roundCpuMs` of batches. With `gc` (a process that runs major
 * collections, see the module comment) the round runs at least
 * `plan.roundCpuMs`, then on to the end of the first batch in which a major
 * collection was reported, or to {@link ALIGNED_ROUND_CAP} × its minimum.
 */
export async function round(prepared: Prepared, plan: Plan, gc?: { readonly count: number }): Promise<number> {
  const { ns, ops } = await roundTotals(prepared, plan, gc);
  return ns / ops;
}

/** {@link round}'s totals: CPU ns and operations. */
export async function roundTotals(prepared: Prepared, plan: Plan, gc?: { readonly count: number }): Promise<{ ns: number; ops: number }> {
  const minNs = plan.roundCpuMs * 1e6;
  let ns = 0;
  let ops = 0;
  let step: RoundStep = { done: false, seen: -1 };
  while (!step.done) {
    ns += await runBatch(prepared.op, prepared.batch);
    ops += prepared.batch;
    step = nextRoundStep(ns, minNs, gc?.count, step.seen);
  }
  return { ns, ops };
}

/** Where a round stands after a batch: over, or not, with the collection count seen when its minimum was reached (-1: not yet). */
export interface RoundStep {
  readonly done: boolean;
  readonly seen: number;
}

/**
 * Whether a round is over after a batch, `ns` of CPU into it: not before its
 * minimum `minNs`; without a collection count (`collections` undefined) at
 * it; with one, at the first batch after the minimum whose count exceeds the
 * count seen when the minimum was reached, or at {@link ALIGNED_ROUND_CAP} ×
 * the minimum.
 */
export function nextRoundStep(ns: number, minNs: number, collections: number | undefined, seen: number): RoundStep {
  if (ns < minNs) return { done: false, seen };
  if (collections === undefined || ns >= ALIGNED_ROUND_CAP * minNs) return { done: true, seen };
  if (seen < 0) return { done: false, seen: collections };
  return { done: collections > seen, seen };
}
