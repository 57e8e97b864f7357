/**
 * Micro benchmarks (mitata): `verify` on allow-sets of 10, 10k and 1M
 * publisher domains, the prefix algorithms, `reverseOrigin`,
 * `canonicalizeUrl`, and beside them the floor — `Set.has` of a 45-character
 * string in a set of the same size. Each case is measured in several
 * interleaved rounds; the figure is the median of the rounds' p50 ns/op.
 * Time is the process's CPU time (user + system), not wall time: on a shared
 * machine a descheduled benchmark would otherwise be charged for other
 * processes' work. Every case, the floor included, uses the same clock.
 *
 * Usage: node --import tsx src/micro.ts <out.json> [--quick]
 */
import { writeFileSync } from 'node:fs';
import { canonicalizeUrl, createVerifier, domainPrefix, reverseOrigin, type Verifier } from '@ampcors/core';
import { do_not_optimize, measure } from 'mitata';
import { adapterCases } from './adapter-cases.js';
import { cacheOrigins, floorStrings, publisherDomains, WILDCARD_BASE } from './fixtures.js';
import { median, rotate } from './stats.js';

/** One measured case. */
export interface MicroCase {
  /** Group: `verify`, `lookup` (the allow-set alone), `floor`, `algorithm` or `adapter` (one request in-process, see adapter-cases.ts). */
  readonly group: 'verify' | 'lookup' | 'floor' | 'algorithm' | 'adapter';
  /** What is measured. */
  readonly name: string;
  /** Allow-set size in publisher domains (verify and floor rows). */
  readonly size?: number;
  /** Median over rounds of the p50 time per operation, in ns. */
  readonly ns: number;
  /** Each round's p50 (ns/op). */
  readonly rounds: number[];
  /** Verdict reason of the case's first input (verify rows): shows what was exercised. */
  readonly reason?: string;
}

/** What micro.ts writes. */
export interface MicroResult {
  readonly cases: MicroCase[];
  readonly quick: boolean;
}

interface Runnable {
  readonly group: MicroCase['group'];
  readonly name: string;
  readonly size?: number;
  readonly reason?: string;
  /** True when `fn` returns a Promise to wait for. */
  readonly async?: boolean;
  readonly fn: () => unknown;
}

/** A closure cycling through `inputs` (a power-of-two window, so the index costs one AND). */
/** Process CPU time in nanoseconds (microsecond resolution; mitata batches fast cases). */
function cpuNow(): number {
  const usage = process.cpuUsage();
  return (usage.user + usage.system) * 1e3;
}

/** Fewest operations per mitata sample: a sample of fewer would let clock granularity and single interruptions through. */
const MIN_BATCH = 256;

/**
 * Iterations per mitata sample such that one sample lasts about 2 ms: long
 * enough for the microsecond clock, short enough for many samples; never
 * fewer than {@link MIN_BATCH}.
 */
async function batchSize(runnable: Runnable): Promise<number> {
  const { fn } = runnable;
  let iterations = 16;
  for (;;) {
    const start = cpuNow();
    if (runnable.async) for (let i = 0; i < iterations; i++) await fn();
    else for (let i = 0; i < iterations; i++) fn();
    const elapsed = cpuNow() - start;
    if (elapsed >= 200_000 || iterations >= 1 << 20) return Math.max(MIN_BATCH, Math.min(1 << 16, Math.round((iterations * 2e6) / Math.max(elapsed, 1))));
    iterations *= 4;
  }
}

function cycling(inputs: readonly string[], body: (input: string) => unknown): () => void {
  let window = 1;
  while (window * 2 <= Math.min(inputs.length, 1024)) window *= 2;
  const ring = inputs.slice(0, window);
  const mask = window - 1;
  let i = 0;
  return () => {
    i = (i + 1) & mask;
    do_not_optimize(body(ring[i] as string));
  };
}

const SIZE_LABEL: Record<number, string> = { 10: '10', 10_000: '10k', 1_000_000: '1M' };

function verifyCases(size: number): Runnable[] {
  const domains = publisherDomains(size);
  const verifier: Verifier = createVerifier({ publishers: [...domains, `*.${WILDCARD_BASE}`] });
  const floorSet = new Set(floorStrings(size));
  const floorInputs = [...floorSet].slice(0, 1024);
  const sub = (i: number) => `news${i}.${WILDCARD_BASE}`;
  const inputs: Record<string, string[]> = {
    'allowed cache origin': cacheOrigins(domains, false, 1024),
    'allowed hashed cache origin': cacheOrigins(domains, true, 1024),
    "publisher's own origin": domains.slice(0, 1024).map((d) => `https://${d}`),
    'wildcard-rule cache origin (reverse path)': Array.from({ length: 1024 }, (_, i) => `https://${domainPrefix(sub(i))}.cdn.ampproject.org`),
    "unknown publisher's cache origin": Array.from({ length: 1024 }, (_, i) => `https://www-unknown${i}-com.cdn.ampproject.org`),
    'malformed origin': ['https://Example.com', 'https://www.example.com:443', 'https://a.com/path', 'ftp://example.com', 'https://www.example.com.', 'https://user@example.com', 'https:/example.com', 'https://a.com, https://b.com'],
    'hostile 10 kB header': [`https://${'a-'.repeat(5_116)}.cdn.ampproject.org`],
    '`null`': ['null'],
  };
  const label = SIZE_LABEL[size] ?? String(size);
  const runnables: Runnable[] = [
    { group: 'floor', name: `Set.has, 45 chars, ${label} members`, size, fn: cycling(floorInputs, (s) => floorSet.has(s)) },
  ];
  for (const [name, list] of Object.entries(inputs)) {
    const first = verifier.verify(list[0]);
    runnables.push({ group: 'verify', name, size, reason: first.reason, fn: cycling(list, (origin) => verifier.verify(origin)) });
  }
  // Where the allowed path's time goes: the allow-set lookup alone.
  const allowed = inputs['allowed cache origin'] as string[];
  runnables.push({ group: 'lookup', name: 'allowSet.get of an allowed cache origin (lookup alone)', size, fn: cycling(allowed, (origin) => verifier.allowSet.get(origin)) });
  return runnables;
}

function algorithmCases(): Runnable[] {
  return [
    { group: 'algorithm', name: 'domainPrefix, ASCII (www.example.com)', fn: cycling(['www.example.com'], domainPrefix) },
    { group: 'algorithm', name: 'domainPrefix, IDN (xn--57hw060o.com)', fn: cycling(['xn--57hw060o.com'], domainPrefix) },
    { group: 'algorithm', name: 'domainPrefix, fallback (SHA-256, 67-char domain)', fn: cycling([`${'a'.repeat(60)}.example`], domainPrefix) },
    { group: 'algorithm', name: 'reverseOrigin (readable prefix)', fn: cycling(['https://www-example-com.cdn.ampproject.org'], (o) => reverseOrigin(o)) },
    { group: 'algorithm', name: 'canonicalizeUrl', fn: cycling(['http://www.GOOgle.com/a/../b/%2e/c?q=1#frag'], canonicalizeUrl) },
  ];
}

async function main(): Promise<void> {
  const out = process.argv[2];
  if (out === undefined) throw new Error('usage: micro.ts <out.json> [--quick]');
  const quick = process.argv.includes('--quick');
  const sizes = quick || process.argv.includes('--group=adapter') ? [10, 10_000] : [10, 10_000, 1_000_000];
  const roundsCount = quick ? 2 : 5;
  const minCpuTime = (quick ? 120 : 300) * 1e6;
  const runnables: Runnable[] = [...algorithmCases()];
  for (const c of await adapterCases()) {
    runnables.push({ group: 'adapter', name: `${c.framework} ${c.kind} ${c.variant}`, async: c.framework !== 'express', fn: c.fn });
  }
  for (const size of sizes) runnables.push(...verifyCases(size));
  // `--group=adapter` (development runs): one group only.
  const group = process.argv.find((arg) => arg.startsWith('--group='))?.slice('--group='.length);
  if (group !== undefined) runnables.splice(0, runnables.length, ...runnables.filter((r) => r.group === group));
  const samples = runnables.map(() => [] as number[]);
  for (let round = 0; round < roundsCount; round++) {
    // Interleave: each round measures every case, starting at a different one.
    const order = rotate(
      runnables.map((_, index) => index),
      round * 7,
    );
    for (const index of order) {
      const runnable = runnables[index] as Runnable;
      const fn = runnable.fn;
      // Collect the previous case's garbage now, so no case pays for another's.
      (globalThis as { gc?: () => void }).gc?.();
      // Always batch (mitata decides by one wall-clock call otherwise, which a
      // busy machine makes random), with a batch sized for the CPU clock.
      const stats = await measure(fn, {
        min_cpu_time: minCpuTime,
        now: cpuNow,
        warmup_threshold: Infinity,
        batch_threshold: Infinity,
        batch_samples: await batchSize(runnable),
      });
      (samples[index] as number[]).push(stats.p50);
    }
    process.stderr.write(`micro: round ${round + 1}/${roundsCount} done\n`);
  }
  const cases: MicroCase[] = runnables.map((r, index) => ({
    group: r.group,
    name: r.name,
    ...(r.size === undefined ? {} : { size: r.size }),
    ...(r.reason === undefined ? {} : { reason: r.reason }),
    ns: median(samples[index] as number[]),
    rounds: samples[index] as number[],
  }));
  const result: MicroResult = { cases, quick };
  writeFileSync(out, JSON.stringify(result, null, 2));
}

await main();
