/**
 * `pnpm bench`: runs the micro benchmarks, the in-process comparison, the
 * construction and compact allow-set runs and the HTTP comparison, each part
 * in child processes, then writes bench/RESULTS.md (report.ts) and the raw
 * figures to bench/dist/results.json.
 *
 * Usage: node dist/run.mjs [--quick | --full | --rewrite | --http-only | --in-process-only] [--only=a,b] [--rounds=N] [--seconds=N] [--pipelining=N]
 *   --quick            a smoke run (about half a minute): few, short rounds, small sets, HTTP on Koa only; RESULTS.md says so
 *   --full             then also builds the 10M-domain compact allow-set (minutes), recorded in bench/compact-allow-set-10m.json; RESULTS.md is written before and after it
 *   --rewrite          RESULTS.md again from dist/results.json (after a template change)
 *   --http-only        the HTTP comparison alone, printed (with --only, --rounds, --seconds, --pipelining); RESULTS.md untouched
 *   --in-process-only  the in-process comparison alone, printed (with --only, --rounds=N, --processes=N: worker processes of every configuration, --passes=N: interleaved sub-rounds per round, --settle=MS: unmeasured CPU ms before each round of a configuration with several processes, 0 for none); RESULTS.md untouched
 */
import { execFileSync, spawnSync } from 'node:child_process';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { cpus, totalmem } from 'node:os';
import { join } from 'node:path';
import type { BuildResult } from './allow-set-build.js';
import { BENCH_ROOT, countFlag, DIST, FULL, flagValue, HAS_TASKSET, LOAD_CORE, log, numberFlag, QUICK } from './cli.js';
import { type HttpPlan, runHttp } from './http.js';
import { type ConfigName, CONFIGS } from './http/configs.js';
import { type InProcessPlan, runInProcess } from './in-process.js';
import { type MicroPlan, runMicro } from './micro.js';
import { httpTable, type ProfileBaseline, type RunMeta, type RunResults, readSoak, report } from './report.js';
import { runBuilds, runCompact } from './scale.js';

const REWRITE = process.argv.includes('--rewrite');
const HTTP_ONLY = process.argv.includes('--http-only');
const IN_PROCESS_ONLY = process.argv.includes('--in-process-only');

/** `--only=koa,koa+ampcors`: a subset of the configurations (development runs). */
function onlyConfigs(fallback: readonly ConfigName[]): readonly ConfigName[] {
  const raw = flagValue('only');
  if (raw === undefined) return fallback;
  const names = raw.split(',').filter((name) => name !== '');
  for (const name of names)
    if (!(CONFIGS as readonly string[]).includes(name)) throw new Error(`--only: unknown configuration ${name} (known: ${CONFIGS.join(', ')})`);
  return names as ConfigName[];
}

/** In process: every configuration but toolbox-cors (it sends other headers and no credentials: not equal work). */
const IN_PROCESS_CONFIGS = CONFIGS.filter((c) => c !== 'express+toolbox-cors');
/** Over HTTP: the hello worlds, ampcors, the peers and the static references of Express and Koa. */
const HTTP_CONFIGS = CONFIGS.filter((c) => c !== 'express+toolbox-cors' && c !== 'fetch+static-headers');

/** `--settle=MS` (0 allowed: no settling), or `fallback`. */
function settleFlag(fallback: number): number {
  const raw = flagValue('settle');
  if (raw === undefined) return fallback;
  const value = Number(raw);
  if (!Number.isFinite(value) || value < 0) throw new Error(`--settle needs a number of ms, 0 or more, got ${JSON.stringify(raw)}`);
  return value;
}

const MICRO_PLAN: MicroPlan = QUICK
  ? { sizes: [10_000], rounds: 3, warmUpOps: 1_000, warmUpMs: 10, roundMs: 3 }
  : { sizes: [10, 10_000, 1_000_000], rounds: 11, warmUpOps: 20_000, warmUpMs: 200, roundMs: 20 };

const IN_PROCESS_PLAN: InProcessPlan = QUICK
  ? { configs: onlyConfigs(IN_PROCESS_CONFIGS), rounds: 3, warmUpOps: 1_000, warmUpMs: 20, roundMs: 5, processes: 2, settleMs: 5 }
  : {
      configs: onlyConfigs(IN_PROCESS_CONFIGS),
      rounds: IN_PROCESS_ONLY ? countFlag('rounds', 15) : 15,
      warmUpOps: 20_000,
      warmUpMs: 300,
      roundMs: 50,
      passes: countFlag('passes', 1),
      // Express: three processes (its figures' per-process bias is the question); the others one. `--processes=N` sets every configuration's.
      processes: countFlag('processes', 1),
      processesByFramework: flagValue('processes') === undefined ? { express: 3 } : {},
      // Unmeasured CPU ms of the request kind before each round of a configuration with several processes: regrows a young generation V8 shrank while the worker waited (in-process.ts).
      settleMs: settleFlag(50),
    };

const BUILD_PLAN: readonly (readonly [number, BuildResult['what']])[] = QUICK
  ? [[10_000, 'verifier']]
  : [
      [10_000, 'allow-set'],
      [10_000, 'verifier'],
      [1_000_000, 'allow-set'],
      [1_000_000, 'verifier'],
    ];

const COMPACT_COUNTS = QUICK ? [20_000] : [1_000_000];

const HTTP_PLAN: HttpPlan = {
  // Quick: one framework, enough to see that the servers answer and the CPU channel works.
  configs: onlyConfigs(QUICK ? ['koa', 'koa+@koa/cors', 'koa+ampcors'] : HTTP_CONFIGS),
  rounds: countFlag('rounds', QUICK ? 1 : 5),
  seconds: numberFlag('seconds', 1),
  pipelining: countFlag('pipelining', 10),
  warmUpRequests: QUICK ? 500 : 10_000,
};

/**
 * A full run's time budget (issue 16's run must stay within 15 minutes on this machine), seconds. The HTTP
 * estimate below is conservative (51 runs: 102 s of warm-up and 76.5 s per round estimated, about 300 s for
 * all five rounds measured), so a run that keeps its five HTTP rounds takes about 11 minutes.
 */
const BUDGET_S = 14 * 60;

/**
 * The HTTP plan, its rounds cut (never below 3) when what is left of
 * {@link BUDGET_S} after `elapsedS` would not hold them: on a loaded machine
 * the CPU-timed parts before it take longer in wall time. `--rounds` is kept as given.
 */
function httpPlanWithin(elapsedS: number): HttpPlan {
  if (QUICK || flagValue('rounds') !== undefined) return HTTP_PLAN;
  const runs = HTTP_PLAN.configs.length * 3;
  const warmUpS = runs * 2;
  const perRoundS = runs * (HTTP_PLAN.seconds + 0.5);
  const fits = Math.floor((BUDGET_S - elapsedS - warmUpS) / perRoundS);
  const rounds = Math.max(3, Math.min(HTTP_PLAN.rounds, fits));
  log(
    `HTTP: ${rounds} rounds (${elapsedS.toFixed(0)} s elapsed${rounds < HTTP_PLAN.rounds ? `, cut from ${HTTP_PLAN.rounds} to stay within ${BUDGET_S / 60} minutes` : ''})`,
  );
  return { ...HTTP_PLAN, rounds };
}

/** The in-process cases profiled for the report. */
const PROFILED: readonly ConfigName[] = ['koa+ampcors', 'fetch+ampcors'];

const PROFILE_BEFORE_FILE = join(BENCH_ROOT, 'profile-before.json');

function loadAverage(): string {
  return readFileSync('/proc/loadavg', 'utf8').split(' ').slice(0, 3).join(' ');
}

function machine(): string {
  const cpu = cpus();
  return `${cpu.length} × ${cpu[0]?.model.trim() ?? 'unknown CPU'}, ${(totalmem() / 2 ** 30).toFixed(1)} GiB RAM, Node ${process.version}, ${process.platform}/${process.arch}`;
}

async function main(): Promise<void> {
  if (REWRITE) {
    const saved = JSON.parse(readFileSync(join(DIST, 'results.json'), 'utf8')) as RunResults;
    writeFileSync(join(BENCH_ROOT, 'RESULTS.md'), report(saved));
    return;
  }
  const started = performance.now();
  const loadStart = loadAverage();
  if (HAS_TASKSET) execFileSync('taskset', ['-cp', LOAD_CORE, String(process.pid)], { stdio: 'ignore' });
  if (HTTP_ONLY) {
    const http = await runHttp(HTTP_PLAN);
    writeFileSync(join(DIST, 'http-only.json'), JSON.stringify(http, null, 2));
    process.stdout.write(`${httpTable(http)}\n`);
    return;
  }
  if (IN_PROCESS_ONLY) {
    const inProcess = await runInProcess(IN_PROCESS_PLAN, []);
    writeFileSync(join(DIST, 'in-process-only.json'), JSON.stringify(inProcess, null, 2));
    return;
  }
  log(`load average at the start: ${loadStart}${QUICK ? ' (quick mode)' : ''}`);
  const micro = runMicro(MICRO_PLAN);
  const inProcess = await runInProcess(IN_PROCESS_PLAN, PROFILED);
  const builds = runBuilds(BUILD_PLAN);
  const compact = runCompact(COMPACT_COUNTS);
  const http = await runHttp(httpPlanWithin((performance.now() - started) / 1e3));
  const meta: RunMeta = {
    generatedAt: new Date().toISOString(),
    commit: spawnSync('git', ['rev-parse', '--short', 'HEAD'], { encoding: 'utf8' }).stdout.trim(),
    machine: machine(),
    loadStart,
    loadEnd: loadAverage(),
    elapsedS: (performance.now() - started) / 1e3,
    quick: QUICK,
    full: false,
    pinned: HAS_TASKSET,
  };
  const before = existsSync(PROFILE_BEFORE_FILE) ? (JSON.parse(readFileSync(PROFILE_BEFORE_FILE, 'utf8')) as ProfileBaseline) : null;
  const results: RunResults = { meta, micro, inProcess, builds, compact, http, soak: readSoak(), before };
  write(results);
  if (!FULL) return;
  // --full: the 10M-domain compact allow-set last (minutes), RESULTS.md written before and again after it.
  const tenMillion = runCompact([10_000_000]);
  const elapsedS = (performance.now() - started) / 1e3;
  write({
    ...results,
    meta: { ...meta, elapsedS, loadEnd: loadAverage(), full: true },
    compact: { runs: [...compact.runs.filter((r) => r.domains !== 10_000_000), ...tenMillion.runs] },
  });
}

function write(results: RunResults): void {
  writeFileSync(join(DIST, 'results.json'), JSON.stringify(results, null, 2));
  writeFileSync(join(BENCH_ROOT, 'RESULTS.md'), report(results));
  log(`wrote ${join(BENCH_ROOT, 'RESULTS.md')} after ${results.meta.elapsedS.toFixed(0)} s`);
}

await main();
