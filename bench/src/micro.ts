/**
 * The micro benchmarks: each group in its own process (micro-worker.ts),
 * and the ratios the targets are judged on (per round, within a process).
 */
import { join } from 'node:path';
import { DIST, lastJsonLine, log, runNode } from './cli.js';
import type { AsciiPathResult, MicroCase, MicroGroupResult } from './micro-worker.js';
import { median, type Spread, spread } from './stats.js';

/** How much to measure. */
export interface MicroPlan {
  readonly sizes: readonly number[];
  readonly rounds: number;
  readonly warmUpOps: number;
  readonly warmUpMs: number;
  readonly roundMs: number;
}

/** What the micro part reports. */
export interface MicroResult {
  readonly plan: MicroPlan;
  readonly cases: MicroCase[];
  readonly asciiPath: AsciiPathResult;
}

function workerArgs(group: string, plan: MicroPlan): string[] {
  return [join(DIST, 'micro-worker.mjs'), group, String(plan.rounds), String(plan.warmUpOps), String(plan.warmUpMs), String(plan.roundMs)];
}

/** Runs the algorithm group, each size group and the ASCII-path profile, each in a fresh process. */
export function runMicro(plan: MicroPlan): MicroResult {
  const cases: MicroCase[] = [];
  for (const group of ['algorithms', ...plan.sizes.map((size) => `size:${size}`)]) {
    log(`micro ${group}`);
    cases.push(...lastJsonLine<MicroGroupResult>(runNode(workerArgs(group, plan))).cases);
  }
  log('micro ascii-path profile');
  const asciiPath = lastJsonLine<AsciiPathResult>(runNode(workerArgs('ascii-path', plan)));
  return { plan, cases, asciiPath };
}

/** A case by name (and allow-set size). */
export function findCase(micro: MicroResult, name: string, size?: number): MicroCase | undefined {
  return micro.cases.find((c) => c.name === name && c.size === size);
}

/** The floor of an allow-set size. */
export function floorOf(micro: MicroResult, size: number): MicroCase | undefined {
  return micro.cases.find((c) => c.group === 'floor' && c.size === size);
}

/** Per-round ratio of `c` to `reference` (same process, same round): median and spread. */
export function ratio(c: MicroCase, reference: MicroCase): Spread {
  return spread(ratios(c, reference));
}

/** The per-round ratios of a case to a reference measured in the same rounds. */
export function ratios(c: MicroCase, reference: MicroCase): number[] {
  return c.rounds.map((r, i) => r / (reference.rounds[i] ?? median(reference.rounds)));
}

/** The median ns/op of a case. */
export function nsOf(c: MicroCase): number {
  return median(c.rounds);
}
