/**
 * Micro benchmarks, one group per process (measure.ts: CPU time, counted
 * warm-up, no forced GC, rounds interleaved in a rotating order):
 *
 * - `size:<N>`: `verify` on a verifier of N publisher domains (every tenth
 *   one hashed) plus `*.wildcard-publisher.com`, beside the floor (`Set.has`
 *   of a 45-character string in a Set of N strings) and the yardstick of the
 *   slow paths: `asciiReverse` (yardstick.ts), a minimal hand-written readable-ASCII
 *   reverse and lookup. Every ratio is taken per round, within the process.
 *   The slow-path rows come twice: at first sight ({@link FIRST_SIGHT}
 *   distinct origins, walked in order, more than any memo holds: no verdict
 *   is remembered from a previous visit) and repeated (a few origins over and
 *   over: what a memo serves); the yardstick walks the same inputs.
 * - `algorithms`: the prefix algorithms, `reverseOrigin`, `canonicalizeUrl`.
 * - `ascii-path`: the ASCII slow paths run under the V8 CPU profiler; reports
 *   every sampled frame of punycode, tr46 or SHA-256 (there should be none).
 *
 * Usage: node dist/micro-worker.mjs <group> <rounds> <warm-up ops> <warm-up ms> <round ms>
 * Prints one JSON line: a {@link MicroGroupResult} (or, for `ascii-path`, an {@link AsciiPathResult}).
 */
import { Session } from 'node:inspector/promises';
import { domainToASCII } from 'node:url';
import { CACHES, createVerifier, domainPrefix, reverseOrigin, type Verifier } from '@ampcors/core';
import { canonicalizeUrl } from '@ampcors/core/safe-browsing';
import type { CpuProfile } from './cpu-profile.js';
import { cacheOrigins, floorStrings, publisherDomains, WILDCARD_BASE } from './fixtures.js';
import { type Operation, type Plan, round, warmUp } from './measure.js';
import { rotate } from './stats.js';
import { asciiReverse } from './yardstick.js';

/** One measured case. */
export interface MicroCase {
  /** `floor`, `verify`, `lookup` (the allow-set alone), `yardstick` or `algorithm`. */
  readonly group: 'verify' | 'lookup' | 'floor' | 'yardstick' | 'algorithm';
  readonly name: string;
  /** Allow-set size in publisher domains (size groups). */
  readonly size?: number;
  /** Verdict reason of the case's first input (verify rows): shows what was exercised. */
  readonly reason?: string;
  /** Operations of the warm-up (discarded). */
  readonly warmUpOps: number;
  /** CPU ns per operation of each round. */
  readonly rounds: number[];
}

/** What one size or algorithm group reports. */
export interface MicroGroupResult {
  readonly group: string;
  readonly cases: MicroCase[];
}

/** What the `ascii-path` group reports. */
export interface AsciiPathResult {
  readonly group: 'ascii-path';
  /** Profiler samples taken while only the ASCII slow paths ran. */
  readonly samples: number;
  /** Frames (function and file) of punycode, tr46 or SHA-256 seen, with their sample counts. */
  readonly offending: Record<string, number>;
}

interface Runnable {
  readonly group: MicroCase['group'];
  readonly name: string;
  readonly size?: number;
  readonly reason?: string;
  readonly fn: () => unknown;
}

/**
 * Distinct origins of each slow-path row at first sight: 65,536, eight times
 * the verifier's verdict memo (2 × 4,096) and more than a round consumes
 * (a round of 20 ms at about 1 µs per call is some 20,000), so an origin comes
 * back only after every memo has forgotten it.
 */
const FIRST_SIGHT = 65_536;
/** Origins of each slow-path row when repeated: few enough that every memo keeps them. */
const REPEATED = 256;

/** A closure walking through all of `inputs` in order, then again (a power-of-two count, so the index costs one AND). */
function walking(inputs: readonly string[], body: (input: string) => unknown): () => unknown {
  let size = 1;
  while (size * 2 <= inputs.length) size *= 2;
  const ring = inputs.slice(0, size);
  const mask = size - 1;
  let i = 0;
  return () => {
    i = (i + 1) & mask;
    return body(ring[i] as string);
  };
}

/** A closure cycling through `inputs` (a power-of-two window of at most 1,024, so the index costs one AND). */
function cycling(inputs: readonly string[], body: (input: string) => unknown): () => unknown {
  let window = 1;
  while (window * 2 <= Math.min(inputs.length, 1024)) window *= 2;
  const ring = inputs.slice(0, window);
  const mask = window - 1;
  let i = 0;
  return () => {
    i = (i + 1) & mask;
    return body(ring[i] as string);
  };
}

const SIZE_LABEL: Record<number, string> = { 10: '10', 10_000: '10k', 1_000_000: '1M' };

/** Cache origins of `domains` on the Google AMP cache (their spec prefix). */
function googleCacheOrigins(domains: readonly string[]): string[] {
  return domains.map((d) => `https://${domainPrefix(d)}.${(CACHES[0] as (typeof CACHES)[number]).cacheDomain}`);
}

/** `i` in letters (a, b, …, z, ba, …): IDN labels with digits can read two ways, letters cannot. */
function letters(i: number): string {
  let out = '';
  do {
    out = String.fromCharCode(97 + (i % 26)) + out;
    i = Math.floor(i / 26);
  } while (i > 0);
  return out;
}

/** Simple non-ASCII letters of the IDN inputs: with their place in the name, they vary the punycode deltas. */
const IDN_LETTERS = [...'üöäéèñçøåжд'];

/**
 * `count` IDN domain labels joined the guide's way (`.` → `-`, `-` → `--`), as
 * the prefix of `name.suffix`: one of {@link IDN_LETTERS} before, inside or
 * after a name in letters (IDN labels with digits can read two ways).
 */
function idnPrefixes(count: number, suffix: string): string[] {
  const joined = suffix.replaceAll('-', '--').replaceAll('.', '-');
  return Array.from({ length: count }, (_, i) => {
    const letter = IDN_LETTERS[i % IDN_LETTERS.length] as string;
    const word = letters(Math.floor(i / IDN_LETTERS.length));
    const name = i % 3 === 0 ? `${letter}${word}` : i % 3 === 1 ? `news${letter}${word}` : `${word}${letter}`;
    return domainToASCII(`${name}-${joined}`);
  });
}

/** The slow-path inputs (reverse path) at first sight, {@link FIRST_SIGHT} distinct origins each; shared by the size groups and `ascii-path`. */
function slowPathInputs(): Record<string, string[]> {
  const probe = createVerifier({ publishers: [`*.${WILDCARD_BASE}`] });
  const range = Array.from({ length: FIRST_SIGHT }, (_, i) => i);
  const cache = (CACHES[0] as (typeof CACHES)[number]).cacheDomain;
  const onCache = (prefixes: readonly string[]): string[] => prefixes.map((prefix) => `https://${prefix}.${cache}`);
  // Only prefixes with one reading (an IDN prefix whose punycode ends in letters also reads as another domain, denied).
  const wildcardIdn = onCache(idnPrefixes(FIRST_SIGHT * 3, WILDCARD_BASE))
    .filter((origin) => probe.verify(origin).reason === 'cache-origin-wildcard')
    .slice(0, FIRST_SIGHT);
  if (wildcardIdn.length < FIRST_SIGHT) throw new Error(`only ${wildcardIdn.length} IDN wildcard origins`);
  return {
    'wildcard-rule cache origin (ASCII)': googleCacheOrigins(range.map((i) => `news${i}.${WILDCARD_BASE}`)),
    "unknown publisher's cache origin (ASCII)": googleCacheOrigins(range.map((i) => `www.unknown${i}.com`)),
    'wildcard-rule cache origin (IDN)': wildcardIdn,
    "unknown publisher's cache origin (IDN)": onCache(idnPrefixes(FIRST_SIGHT, 'de')),
  };
}

function verifierOf(size: number): { verifier: Verifier; domains: string[] } {
  const domains = publisherDomains(size);
  return { verifier: createVerifier({ publishers: [...domains, `*.${WILDCARD_BASE}`] }), domains };
}

function sizeCases(size: number): Runnable[] {
  const { verifier, domains } = verifierOf(size);
  const floorSet = new Set(floorStrings(size));
  const floorInputs = [...floorSet].slice(0, 1024);
  const slow = slowPathInputs();
  const inputs: Record<string, string[]> = {
    'allowed cache origin': cacheOrigins(domains, false, 1024),
    'allowed hashed cache origin': cacheOrigins(domains, true, 1024),
    "publisher's own origin": domains.slice(0, 1024).map((d) => `https://${d}`),
    ...slow,
    'malformed origin': [
      'https://Example.com',
      'https://www.example.com:443',
      'https://a.com/path',
      'ftp://example.com',
      'https://www.example.com.',
      'https://user@example.com',
      'https:/example.com',
      'https://a.com, https://b.com',
    ],
    'hostile 10 kB header': [`https://${'a-'.repeat(5_116)}.cdn.ampproject.org`],
    '`null`': ['null'],
  };
  const label = SIZE_LABEL[size] ?? String(size);
  const runnables: Runnable[] = [{ group: 'floor', name: `Set.has, 45 chars, ${label} members`, size, fn: cycling(floorInputs, (s) => floorSet.has(s)) }];
  for (const [name, list] of Object.entries(inputs)) {
    const fn = name in slow ? walking(list, (origin) => verifier.verify(origin)) : cycling(list, (origin) => verifier.verify(origin));
    runnables.push({ group: 'verify', name, size, reason: verifier.verify(list[0]).reason, fn });
  }
  for (const [name, list] of Object.entries(slow)) {
    const few = list.slice(0, REPEATED);
    runnables.push({
      group: 'verify',
      name: `${name}, repeated`,
      size,
      reason: verifier.verify(few[0]).reason,
      fn: cycling(few, (origin) => verifier.verify(origin)),
    });
  }
  const allowed = inputs['allowed cache origin'] as string[];
  runnables.push({
    group: 'lookup',
    name: 'allowSet.get of an allowed cache origin (lookup alone)',
    size,
    fn: cycling(allowed, (origin) => verifier.allowSet.get(origin)),
  });
  const known = new Set(domains);
  const wildcardSuffix = `.${WILDCARD_BASE}`;
  for (const name of ['wildcard-rule cache origin (ASCII)', "unknown publisher's cache origin (ASCII)"]) {
    const list = slow[name] as string[];
    runnables.push({
      group: 'yardstick',
      name: `hand-written ASCII reverse: ${name}`,
      size,
      fn: walking(list, (origin) => asciiReverse(origin, known, wildcardSuffix)),
    });
    runnables.push({
      group: 'yardstick',
      name: `hand-written ASCII reverse: ${name}, repeated`,
      size,
      fn: cycling(list.slice(0, REPEATED), (origin) => asciiReverse(origin, known, wildcardSuffix)),
    });
  }
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

/** Frames that must not appear on the ASCII path: punycode, tr46, SHA-256. */
const FORBIDDEN = /punycode|tr46|@noble\/hashes|sha256|sha2/i;

async function asciiPath(plan: Plan): Promise<AsciiPathResult> {
  const { verifier } = verifierOf(10);
  const slow = slowPathInputs();
  const ops: Operation[] = ['wildcard-rule cache origin (ASCII)', "unknown publisher's cache origin (ASCII)"].map((name) => ({
    fn: walking(slow[name] as string[], (origin) => verifier.verify(origin)),
    async: false,
  }));
  const prepared = await warmUp(ops, plan);
  const session = new Session();
  session.connect();
  await session.post('Profiler.enable');
  await session.post('Profiler.setSamplingInterval', { interval: 20 });
  await session.post('Profiler.start');
  for (const p of prepared) await round(p, { ...plan, roundCpuMs: Math.max(plan.roundCpuMs * 10, 200) });
  const { profile } = (await session.post('Profiler.stop')) as { profile: CpuProfile };
  session.disconnect();
  const byId = new Map(profile.nodes.map((n) => [n.id, n.callFrame]));
  const offending: Record<string, number> = {};
  for (const id of profile.samples) {
    const frame = byId.get(id);
    if (frame === undefined || !FORBIDDEN.test(`${frame.url} ${frame.functionName}`)) continue;
    const key = `${frame.functionName || '(anonymous)'} ${frame.url.replace(/^.*node_modules\//, '')}`;
    offending[key] = (offending[key] ?? 0) + 1;
  }
  return { group: 'ascii-path', samples: profile.samples.length, offending };
}

async function main(): Promise<void> {
  const [group, roundsArg, opsArg, warmMsArg, roundMsArg] = process.argv.slice(2) as [string, string, string, string, string];
  const plan: Plan = { warmUp: { ops: Number(opsArg), cpuMs: Number(warmMsArg) }, roundCpuMs: Number(roundMsArg) };
  if (group === 'ascii-path') {
    process.stdout.write(`${JSON.stringify(await asciiPath(plan))}\n`);
    return;
  }
  const runnables = group === 'algorithms' ? algorithmCases() : group.startsWith('size:') ? sizeCases(Number(group.slice('size:'.length))) : null;
  if (runnables === null) throw new Error('usage: micro-worker.mjs <size:N|algorithms|ascii-path> <rounds> <warm-up ops> <warm-up ms> <round ms>');
  const prepared = await warmUp(
    runnables.map((r) => ({ fn: r.fn, async: false })),
    plan,
  );
  const samples = runnables.map(() => [] as number[]);
  const rounds = Number(roundsArg);
  for (let r = 0; r < rounds; r++) {
    for (const index of rotate(
      runnables.map((_, i) => i),
      r * 3,
    )) {
      (samples[index] as number[]).push(await round(prepared[index] as (typeof prepared)[number], plan));
    }
  }
  const result: MicroGroupResult = {
    group,
    cases: runnables.map((r, i) => ({
      group: r.group,
      name: r.name,
      ...(r.size === undefined ? {} : { size: r.size }),
      ...(r.reason === undefined ? {} : { reason: r.reason }),
      warmUpOps: (prepared[i] as (typeof prepared)[number]).warmUpOps,
      rounds: samples[i] as number[],
    })),
  };
  process.stdout.write(`${JSON.stringify(result)}\n`);
}

await main();
