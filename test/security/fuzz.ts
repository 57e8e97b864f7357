/**
 * `pnpm fuzz`: at least 1M random and mutated inputs per entry point of
 * @ampcors/core, each entry point bounded in time; prints counts and
 * findings, exits 1 on any finding.
 * Usage: tsx test/security/fuzz.ts [--count N] [--seconds S] [--seed N] [--only name]
 */
import { fuzz, fuzzTargets } from './fuzz-engine.js';

function option(name: string, fallback: number): number {
  const index = process.argv.indexOf(name);
  return index < 0 ? fallback : Number(process.argv[index + 1]);
}

const count = option('--count', 1_000_000);
const seconds = option('--seconds', 300);
const seed = option('--seed', Date.now() & 0x7fffffff);
const onlyIndex = process.argv.indexOf('--only');
const only = onlyIndex < 0 ? undefined : process.argv[onlyIndex + 1];
console.log(`fuzz: up to ${count} inputs per entry point, at most ${seconds} s each, seed ${seed}`);
let failed = false;
for (const target of fuzzTargets()) {
  if (only !== undefined && target.name !== only) continue;
  const result = fuzz(target, count, seconds, seed);
  const rate = Math.round(result.inputs / result.seconds);
  console.log(
    `${result.name.padEnd(16)} ${String(result.inputs).padStart(9)} inputs (${result.random} random, ${result.mutated} mutated) in ${result.seconds.toFixed(1)} s, ${rate}/s, ${result.findings.length} findings${result.inputs < count ? ' — time bound reached' : ''}`,
  );
  for (const { finding, input } of result.findings) {
    failed = true;
    console.log(`  FINDING ${finding}\n    input ${JSON.stringify(input)}`);
  }
}
process.exit(failed ? 1 : 0);
