/**
 * One-off differential run of the oracle against a real build of amppackager's
 * `ToCacheURLSubdomain` (not part of the test command: it needs Go). Build
 * the reference OUTSIDE this repository (see test/differential/README.md), then:
 *
 *   AMPPKG_BIN=/tmp/amppkg/amppkg npx tsx --tsconfig tsconfig.json test/differential/compare-with-amppackager.ts [count]
 *
 * The binary reads one JSON string per line and prints one JSON string per
 * line (the prefix, or `PANIC:…` when the Go code panics). The inputs are
 * the generated domains as written, their WHATWG host (Node's
 * `url.domainToASCII`) and their ampcors canonical form (what the tests
 * feed the oracle). Run with `--tsconfig tsconfig.json` so that
 * `@ampcors/core` resolves to the sources.
 * Prints the agreement counts and up to 5 disagreements per class.
 */
import { spawnSync } from 'node:child_process';
import { domainToASCII } from 'node:url';
import { canonicalDomain } from '@ampcors/core';
import { amppackagerPrefix } from './amppackager-oracle.js';
import { sampleDomains } from './domains.js';

const bin = process.env.AMPPKG_BIN;
if (!bin) throw new Error('set AMPPKG_BIN to the amppackager reference binary');
const count = Number(process.argv[2] ?? 120_000);

const raw = sampleDomains(count);
const canonical = [...new Set(raw.map((d) => domainToASCII(d)).filter((d) => d !== ''))];
const ampcors = [
  ...new Set(
    raw.flatMap((d) => {
      try {
        return [canonicalDomain(d)];
      } catch {
        return [];
      }
    }),
  ),
];
for (const [name, inputs] of [
  ['as written', raw],
  ['canonical (WHATWG host)', canonical],
  ['canonical (ampcors canonicalDomain, what the tests feed the oracle)', ampcors],
] as const) {
  const run = spawnSync(bin, { input: inputs.map((d) => JSON.stringify(d)).join('\n') + '\n', maxBuffer: 1 << 30 });
  if (run.status !== 0) throw new Error(`amppackager reference failed: ${run.stderr.toString()}`);
  const go = run.stdout
    .toString()
    .trimEnd()
    .split('\n')
    .map((line) => JSON.parse(line) as string);
  if (go.length !== inputs.length) throw new Error(`expected ${inputs.length} answers, got ${go.length}`);
  let agree = 0;
  const classes = new Map<string, string[]>();
  inputs.forEach((input, i) => {
    const mine = amppackagerPrefix(input);
    const theirs = go[i]!;
    const same = theirs.startsWith('PANIC:') ? mine.path === 'panic' : mine.prefix === theirs;
    if (same) {
      agree++;
      return;
    }
    const goKind = theirs.startsWith('PANIC:') ? 'panic' : theirs.includes('-') ? 'readable' : 'hash';
    const key = `oracle ${mine.path} / go ${goKind}`;
    const list = classes.get(key) ?? [];
    list.push(`${JSON.stringify(input)} oracle=${mine.prefix} go=${theirs}`);
    classes.set(key, list);
  });
  console.log(`${name}: ${agree} / ${inputs.length} agree`);
  for (const [key, list] of classes) console.log(`  ${key}: ${list.length}\n    ${list.slice(0, 5).join('\n    ')}`);
}
