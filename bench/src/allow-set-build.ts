/**
 * Allow-set construction, measured in a fresh process started with
 * `--expose-gc` (forced collections only after the timed build). The memory
 * figure is what the built structure retains: JS heap used plus ArrayBuffer
 * memory (its typed-array indexes live outside the JS heap) after full
 * collections with it, minus the same after dropping it and collecting
 * again (a before/after difference is unreliable: V8 may still hold garbage
 * of the domain list's construction). The domain list itself is the
 * caller's and is not counted. The count of origins is taken from the
 * indexes and makes no origin strings (before issue 16 it listed every
 * hashed prefix, a table of about 100 MB at a million domains, which this
 * script then counted as retained).
 *
 * Usage: node --expose-gc --import tsx src/allow-set-build.ts <domains> <allow-set|verifier>
 * Prints one JSON line: { domains, what, origins, wallMs, cpuMs, heapBytes, arrayBufferBytes }.
 */
import { CACHES, createVerifier } from '@ampcors/core';
import { buildAllowSet } from '@ampcors/core/algorithms';
import { publisherDomains } from './fixtures.js';

/** What one construction run reports. */
export interface BuildResult {
  readonly domains: number;
  readonly what: 'allow-set' | 'verifier';
  /** Accepted cache origins in the set. */
  readonly origins: number;
  readonly wallMs: number;
  readonly cpuMs: number;
  /** Memory retained by the built structure: JS heap plus ArrayBuffers (each after GC with it, minus without it). */
  readonly heapBytes: number;
  /** The ArrayBuffer part of `heapBytes` (the typed-array indexes). */
  readonly arrayBufferBytes?: number;
}

function collect(): void {
  const gc = (globalThis as { gc?: () => void }).gc;
  if (gc === undefined) throw new Error('run with --expose-gc');
  for (let i = 0; i < 3; i++) gc();
}

const count = Number(process.argv[2]);
const what = process.argv[3];
if (!Number.isInteger(count) || count <= 0 || (what !== 'allow-set' && what !== 'verifier')) {
  throw new Error('usage: allow-set-build.ts <domains> <allow-set|verifier>');
}
// Flatten every string now, so that no lazy string work is charged to the build.
const domains = publisherDomains(count).map((d) => d.split('').join(''));
// The caller's domain list stays alive (a configuration holds it), so that
// its release is not subtracted from the allow-set's heap.
(globalThis as { benchDomains?: string[] }).benchDomains = domains;
// No forced collection before the timed build (issue 16): only after it, for the heap figure.
const cpuBefore = process.cpuUsage();
const start = performance.now();
let built: { readonly size: number } | { readonly allowSet: { readonly size: number } } | null =
  what === 'allow-set' ? buildAllowSet(domains, CACHES) : createVerifier({ publishers: domains });
const wallMs = performance.now() - start;
const cpu = process.cpuUsage(cpuBefore);
// Counted from the indexes (no origin strings are made for it), before the memory is measured.
const origins = 'allowSet' in built ? built.allowSet.size : built.size;
collect();
const alive = process.memoryUsage();
built = null;
collect();
const dropped = process.memoryUsage();
const arrayBufferBytes = alive.arrayBuffers - dropped.arrayBuffers;
const heapBytes = alive.heapUsed - dropped.heapUsed + arrayBufferBytes;
const result: BuildResult = { domains: count, what, origins, wallMs, cpuMs: (cpu.user + cpu.system) / 1e3, heapBytes, arrayBufferBytes };
process.stdout.write(`${JSON.stringify(result)}\n`);
