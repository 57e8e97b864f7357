/**
 * The in-process comparison: every configuration in its own process
 * (in-process-worker.ts), real request/response objects, CPU time per
 * request. The configurations run one after another in `passes` passes (a
 * rotating order), each process measuring `roundsPerPass` rounds; round i of
 * one configuration is paired with round i of another (same pass, seconds
 * apart), so that "what a middleware adds" is a per-round difference from
 * its framework's bare hello world, and its median and spread are over all
 * rounds. Also the V8 profile of the measured rounds of the Koa and Fetch
 * ampcors cases.
 */
import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DIST, lastJsonLine, log, runNode } from './cli.js';
import { type CpuProfile, type ProfileSummary, summarize } from './cpu-profile.js';
import { baselineOf, type ConfigName, type RequestKind } from './http/configs.js';
import type { KindFigures, WorkerResult } from './in-process-worker.js';
import type { Answer } from './requests.js';
import { differences, rotate, type Spread, spread } from './stats.js';

/** How much to measure. */
export interface InProcessPlan {
  readonly configs: readonly ConfigName[];
  readonly passes: number;
  readonly roundsPerPass: number;
  readonly warmUpOps: number;
  readonly warmUpMs: number;
  readonly roundMs: number;
}

/** One configuration and request kind: CPU ns per request of every round. */
export interface InProcessCell {
  readonly config: ConfigName;
  readonly kind: RequestKind;
  readonly answer: Answer;
  readonly warmUpOps: number;
  readonly rounds: number[];
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

function workerArgs(config: ConfigName, plan: InProcessPlan, rounds: number): string[] {
  return [join(DIST, 'in-process-worker.mjs'), config, String(rounds), String(plan.warmUpOps), String(plan.warmUpMs), String(plan.roundMs)];
}

/** Runs every configuration `plan.passes` times, in its own process each time. */
export function runInProcess(plan: InProcessPlan, profiled: readonly ConfigName[]): InProcessResult {
  const unavailable: Partial<Record<ConfigName, string>> = {};
  const cells = new Map<string, InProcessCell>();
  let available = [...plan.configs];
  for (let pass = 0; pass < plan.passes; pass++) {
    for (const config of rotate(available, pass)) {
      const result = lastJsonLine<WorkerResult>(runNode(workerArgs(config, plan, plan.roundsPerPass)));
      if ('unavailable' in result) {
        unavailable[config] = result.unavailable;
        available = available.filter((c) => c !== config);
        log(`in-process ${config}: unavailable (${result.unavailable})`);
        continue;
      }
      for (const figures of result.kinds) addRounds(cells, config, figures);
      log(`in-process pass ${pass + 1}/${plan.passes} ${config.padEnd(22)} ${result.kinds.map((k) => `${k.kind} ${(spread(k.rounds).median / 1e3).toFixed(2)} µs`).join(', ')}`);
    }
  }
  const profiles: ProfiledCase[] = [];
  for (const config of profiled.filter((c) => available.includes(c))) {
    const file = join(mkdtempSync(join(tmpdir(), 'ampcors-inproc-prof-')), 'profile.cpuprofile');
    runNode([...workerArgs(config, plan, plan.roundsPerPass), `--profile=${file}`]);
    profiles.push({ config, summary: summarize(JSON.parse(readFileSync(file, 'utf8')) as CpuProfile, 12) });
    log(`in-process profile of ${config} done`);
  }
  return { plan, cells: [...cells.values()], unavailable, profiles };
}

function addRounds(cells: Map<string, InProcessCell>, config: ConfigName, figures: KindFigures): void {
  const key = `${config}/${figures.kind}`;
  const cell = cells.get(key);
  if (cell === undefined) cells.set(key, { config, kind: figures.kind, answer: figures.answer, warmUpOps: figures.warmUpOps, rounds: [...figures.rounds] });
  else cell.rounds.push(...figures.rounds);
}

/** The cell of a configuration and kind. */
export function cellOf(result: InProcessResult, config: ConfigName, kind: RequestKind): InProcessCell | undefined {
  return result.cells.find((c) => c.config === config && c.kind === kind);
}

/** What a configuration adds over its framework's bare hello world, µs per request: per-round differences. */
export function added(result: InProcessResult, config: ConfigName, kind: RequestKind): Spread | undefined {
  const own = cellOf(result, config, kind);
  const bare = cellOf(result, baselineOf(config), kind);
  if (own === undefined || bare === undefined) return undefined;
  return spread(differences(own.rounds, bare.rounds).map((ns) => ns / 1e3));
}

/**
 * `a` adds minus `b` adds, µs per request, per round (each configuration's
 * bare hello world subtracted round by round first, so that two frameworks
 * can be compared too), with the share of rounds in which `a` added less.
 */
export function versus(result: InProcessResult, a: ConfigName, b: ConfigName, kind: RequestKind): (Spread & { readonly aheadShare: number }) | undefined {
  const ownA = cellOf(result, a, kind);
  const ownB = cellOf(result, b, kind);
  const bareA = cellOf(result, baselineOf(a), kind);
  const bareB = cellOf(result, baselineOf(b), kind);
  if (ownA === undefined || ownB === undefined || bareA === undefined || bareB === undefined) return undefined;
  const addsA = differences(ownA.rounds, bareA.rounds);
  const addsB = differences(ownB.rounds, bareB.rounds);
  const diff = differences(addsA, addsB).map((ns) => ns / 1e3);
  return { ...spread(diff), aheadShare: diff.filter((d) => d < 0).length / diff.length };
}

