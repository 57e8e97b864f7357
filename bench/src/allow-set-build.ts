/**
 * Allow-set construction, measured in a fresh process started with
 * `--expose-gc` (forced collections only after the timed build). The heap figure is the retained size of the built
 * structure: heap used after full collections with it, minus heap used after
 * dropping it and collecting again (a before/after difference is unreliable:
 * V8 may still hold garbage of the domain list's construction).
 *
 * Usage: node --expose-gc --import tsx src/allow-set-build.ts <domains> <allow-set|verifier>
 * Prints one JSON line: { domains, what, origins, wallMs, cpuMs, heapBytes }.
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
  /** Heap retained by the built structure (heapUsed after GC with it, minus without it). */
  readonly heapBytes: number;
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
const origins = 'allowSet' in built ? built.allowSet.size : built.size;
collect();
const heapWith = process.memoryUsage().heapUsed;
built = null;
collect();
const heapBytes = heapWith - process.memoryUsage().heapUsed;
const result: BuildResult = { domains: count, what, origins, wallMs, cpuMs: (cpu.user + cpu.system) / 1e3, heapBytes };
process.stdout.write(`${JSON.stringify(result)}\n`);
