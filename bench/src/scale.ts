/**
 * Scale: allow-set and verifier construction (allow-set-build.ts) and the
 * compact allow-set (compact-allow-set.ts), each run in a fresh process.
 */
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { BuildResult } from './allow-set-build.js';
import { BENCH_ROOT, DIST, lastJsonLine, log, runNode } from './cli.js';
import type { CompactResult } from './compact-allow-set.js';

/** The compact allow-set figures: this run's, and the 10M one (this run's with --full, else the recorded file). */
export interface CompactFigures {
  readonly runs: CompactResult[];
  /** Where the 10M figure came from, when it was not measured in this run. */
  readonly recorded?: string;
}

/** Construction runs: `[domains, what]`. */
export function runBuilds(plan: readonly (readonly [number, BuildResult['what']])[]): BuildResult[] {
  return plan.map(([count, what]) => {
    log(`construction: ${count.toLocaleString('en')} domains (${what})`);
    return lastJsonLine<BuildResult>(runNode(['--expose-gc', join(DIST, 'allow-set-build.mjs'), String(count), what]));
  });
}

const COMPACT_10M_FILE = join(BENCH_ROOT, 'compact-allow-set-10m.json');

/** Compact allow-set runs of `counts` domains; a 10M run is recorded in bench/compact-allow-set-10m.json, and shown from there otherwise. */
export function runCompact(counts: readonly number[]): CompactFigures {
  const runs = counts.map((count) => {
    log(`compact allow-set: ${count.toLocaleString('en')} domains`);
    return lastJsonLine<CompactResult>(runNode(['--expose-gc', join(DIST, 'compact-allow-set.mjs'), String(count)]));
  });
  const tenMillion = runs.find((r) => r.domains === 10_000_000);
  if (tenMillion !== undefined) {
    writeFileSync(COMPACT_10M_FILE, `${JSON.stringify(tenMillion, null, 2)}\n`);
    return { runs };
  }
  if (existsSync(COMPACT_10M_FILE)) {
    const recorded = JSON.parse(readFileSync(COMPACT_10M_FILE, 'utf8')) as CompactResult;
    return { runs: [...runs, recorded], recorded: `bench/compact-allow-set-10m.json, measured ${recorded.measuredAt} by \`node dist/run.mjs --full\`` };
  }
  return { runs };
}
