/**
 * The compact allow-set (`compileAllowSet` / `loadAllowSet`, SPEC §5), in a
 * fresh process: build time (CPU and wall) for N publisher domains generated
 * on the fly (never held as a list: {@link mixedPublisherDomain}), the file's
 * bytes per domain, load time (CPU: checksum, Rice decoding, order check),
 * the loaded set's memory, and the lookup time of `has(prefix)` and of
 * `verifyOrigin` for allowed and denied origins — CPU time over a ring of
 * up to 65,536 distinct origins (half as many prefixes, on both caches),
 * always more than the verdict memo holds (2 × 8,192), so each
 * `verifyOrigin` is judged afresh (reverse, SHA-256, binary search) — median
 * of 5 passes, and of one allowed origin asked repeatedly (what the memo
 * serves). Collections are forced only after the timed parts, for the
 * memory figure (ArrayBuffer memory with the set, minus without it).
 *
 * Usage: node --expose-gc dist/compact-allow-set.mjs <domains>
 * Prints one JSON line (a {@link CompactResult}).
 */
import { createAllowSetBuilder, loadAllowSet, prefixForms } from '@ampcors/core';
import { mixedPublisherDomain } from './fixtures.js';
import { median } from './stats.js';

/** What one run reports. */
export interface CompactResult {
  readonly domains: number;
  /** Distinct prefix hashes in the set (IDNs have several forms). */
  readonly prefixes: number;
  readonly bytes: number;
  readonly bytesPerDomain: number;
  readonly buildCpuMs: number;
  readonly buildWallMs: number;
  readonly loadCpuMs: number;
  /** ArrayBuffer memory the loaded set holds (its decoded hashes). */
  readonly loadedBytes: number;
  /** ns/op (CPU) of `has(prefix)`, `verifyOrigin` of an allowed cache origin, and of a denied one. */
  readonly hasNs: number;
  readonly allowedNs: number;
  readonly deniedNs: number;
  /** ns/op (CPU) of `verifyOrigin` of one allowed origin asked again and again (what a memo in front of SHA-256 serves). */
  readonly repeatedNs: number;
  /** When the run happened (ISO 8601). */
  readonly measuredAt: string;
  readonly node: string;
}

const cpuMs = (): number => {
  const usage = process.cpuUsage();
  return (usage.user + usage.system) / 1e3;
};

function collect(): void {
  const gc = (globalThis as { gc?: () => void }).gc;
  if (gc === undefined) throw new Error('run with --expose-gc');
  for (let i = 0; i < 3; i++) gc();
}

/** The verdict memo's capacity: two generations of COMPACT_MEMO_GENERATION_SIZE (8,192). */
const MEMO_CAPACITY = 2 * 8_192;

/** Median CPU ns per call of `fn` over `inputs` (a power of 2 of them), 5 passes of 65,536 calls each. */
function timeLookups(inputs: readonly string[], fn: (input: string) => boolean, expected: boolean): number {
  const passes: number[] = [];
  const mask = inputs.length - 1;
  const calls = 65_536;
  for (let i = 0; i < 8_192; i++) if (fn(inputs[i & mask] as string) !== expected) throw new Error(`lookup of ${inputs[i & mask]} is not ${expected}`);
  for (let pass = 0; pass < 5; pass++) {
    let hits = 0;
    const start = cpuMs();
    for (let i = 0; i < calls; i++) if (fn(inputs[i & mask] as string)) hits++;
    passes.push(((cpuMs() - start) * 1e6) / calls);
    if (hits !== (expected ? calls : 0)) throw new Error('lookup results changed between passes');
  }
  return median(passes);
}

const count = Number(process.argv[2]);
if (!Number.isSafeInteger(count) || count < MEMO_CAPACITY) throw new Error(`usage: compact-allow-set.mjs <domains ≥ ${MEMO_CAPACITY}>`);
// Distinct origins per lookup ring (both caches): a power of 2, at most 65,536, always more than the memo holds.
let ring = 65_536;
while (ring > 2 * count) ring /= 2;
// No forced collection before a timed section (issue 16): collections are
// forced only for the loaded set's memory, with it and without it, at the end.
const wallStart = performance.now();
const cpuStart = cpuMs();
const builder = createAllowSetBuilder();
for (let i = 0; i < count; i++) builder.add(mixedPublisherDomain(i));
const bytes = builder.build();
const buildCpuMs = cpuMs() - cpuStart;
const buildWallMs = performance.now() - wallStart;
// ring / 2 domains spread over the whole list; each one's first prefix form (the one caches use), on each cache.
const prefixes: string[] = [];
for (let k = 0; k < ring / 2; k++) prefixes.push((prefixForms(mixedPublisherDomain(Math.floor((k * count) / (ring / 2))))[0] as { prefix: string }).prefix);
const onCaches = (label: string): string[] => [`https://${label}.cdn.ampproject.org`, `https://${label}.www.bing-amp.com`];
const allowed = prefixes.flatMap((prefix) => onCaches(prefix));
const denied = prefixes.flatMap((prefix) => onCaches(`${prefix}-x`));
/** Loads the set and times its lookups; returns the figures and the ArrayBuffer memory with the set alive (after full collections). */
function loadAndLookUp() {
  const loadStart = cpuMs();
  const set = loadAllowSet(bytes);
  const loadCpuMs = cpuMs() - loadStart;
  const figures = {
    loadCpuMs,
    prefixes: set.size,
    hasNs: timeLookups(prefixes, (p) => set.has(p), true),
    allowedNs: timeLookups(allowed, (o) => set.verifyOrigin(o).allowed, true),
    deniedNs: timeLookups(denied, (o) => set.verifyOrigin(o).allowed, false),
    repeatedNs: timeLookups(allowed.slice(0, 1), (o) => set.verifyOrigin(o).allowed, true),
  };
  collect();
  return { figures, buffersWith: process.memoryUsage().arrayBuffers };
}

const { figures, buffersWith } = loadAndLookUp();
// The set is unreachable now: what it held is the difference.
collect();
const result: CompactResult = {
  domains: count,
  bytes: bytes.length,
  bytesPerDomain: bytes.length / count,
  buildCpuMs,
  buildWallMs,
  loadedBytes: buffersWith - process.memoryUsage().arrayBuffers,
  ...figures,
  measuredAt: new Date().toISOString(),
  node: process.version,
};
process.stdout.write(`${JSON.stringify(result)}\n`);
