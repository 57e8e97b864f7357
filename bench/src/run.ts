/**
 * `pnpm bench`: runs the micro benchmarks, the allow-set construction runs
 * and the HTTP comparison, then rewrites bench/RESULTS.md.
 *
 * Usage: node dist/run.mjs [--quick | --full | --rewrite | --http-only] [--only=a,b] [--rounds=N] [--seconds=N] [--pipelining=N]
 *   --quick       fewer rounds, shorter runs, no 1M micro set
 *   --full        also builds the 10M-domain compact allow-set (minutes) and records it in bench/compact-allow-set-10m.json
 *   --rewrite     RESULTS.md again from dist/results.json (after a template change)
 *   --http-only   the HTTP comparison alone, printed; RESULTS.md untouched (with --only, --rounds, --seconds, --pipelining)
 */
import { execFileSync, spawn, spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { cpus, totalmem } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import autocannon from 'autocannon';
import type { BuildResult } from './allow-set-build.js';
import type { CompactResult } from './compact-allow-set.js';
import { baselineOf, type ConfigName, CONFIGS, REQUEST_ORIGIN, REQUEST_PATH, REQUESTS, type RequestKind } from './http/configs.js';
import type { MicroCase, MicroResult } from './micro.js';
import { median, rotate } from './stats.js';

const DIST = dirname(fileURLToPath(import.meta.url));
const BENCH_ROOT = join(DIST, '..');
const REWRITE = process.argv.includes('--rewrite');
const QUICK = process.argv.includes('--quick');
/** `--full`: also the 10M-domain compact allow-set build (minutes); otherwise its last recorded figure is shown. */
const FULL = process.argv.includes('--full');
/** `--http-only`: the HTTP comparison alone, printed as a table; RESULTS.md is left alone. */
const HTTP_ONLY = process.argv.includes('--http-only');

/** The value of `--name=value`, if given. */
function flagValue(name: string): string | undefined {
  const prefix = `--${name}=`;
  return process.argv.find((arg) => arg.startsWith(prefix))?.slice(prefix.length);
}

/** A positive whole number from `--name=N`, or `fallback`. */
function countFlag(name: string, fallback: number): number {
  const raw = flagValue(name);
  if (raw === undefined) return fallback;
  const value = Number(raw);
  if (!Number.isInteger(value) || value < 1) throw new Error(`--${name} needs a positive whole number, got ${JSON.stringify(raw)}`);
  return value;
}

/** `--only=express,express+ampcors`: a subset of the HTTP configurations (development runs). */
function onlyConfigs(): readonly ConfigName[] {
  const raw = flagValue('only');
  if (raw === undefined) return CONFIGS;
  const names = raw.split(',').filter((name) => name !== '');
  for (const name of names) if (!(CONFIGS as readonly string[]).includes(name)) throw new Error(`--only: unknown configuration ${name} (known: ${CONFIGS.join(', ')})`);
  return names as ConfigName[];
}
const HAS_TASKSET = spawnSync('taskset', ['-V']).status === 0 && cpus().length >= 2;
/** Core of the load generator (this process); the servers run on the other one. */
const LOAD_CORE = '0';
const SERVER_CORE = '1';

function log(message: string): void {
  process.stderr.write(`[bench] ${message}\n`);
}

/** `node …args`, pinned to `core` when taskset is available. */
function nodeCommand(args: readonly string[], core: string | null): [string, string[]] {
  return HAS_TASKSET && core !== null ? ['taskset', ['-c', core, process.execPath, ...args]] : [process.execPath, [...args]];
}

function runNode(args: readonly string[], core: string | null): string {
  const [command, argv] = nodeCommand(args, core);
  return execFileSync(command, argv, { encoding: 'utf8', stdio: ['ignore', 'pipe', 'inherit'], maxBuffer: 16 << 20 });
}

// ---------------------------------------------------------------- micro

function runMicro(): MicroResult {
  const out = join(DIST, 'micro.json');
  runNode(['--expose-gc', join(DIST, 'micro.mjs'), out, ...(QUICK ? ['--quick'] : [])], SERVER_CORE);
  return JSON.parse(readFileSync(out, 'utf8')) as MicroResult;
}

function runBuilds(): BuildResult[] {
  const plan: [number, BuildResult['what']][] = QUICK
    ? [
        [10_000, 'allow-set'],
        [1_000_000, 'allow-set'],
      ]
    : [
        [10_000, 'allow-set'],
        [10_000, 'verifier'],
        [1_000_000, 'allow-set'],
        [1_000_000, 'verifier'],
      ];
  return plan.map(([count, what]) => {
    log(`allow-set construction: ${count} domains (${what})`);
    return JSON.parse(runNode(['--expose-gc', join(DIST, 'allow-set-build.mjs'), String(count), what], SERVER_CORE)) as BuildResult;
  });
}

// ---------------------------------------------------------------- HTTP

interface Server {
  readonly config: ConfigName;
  readonly port: number;
  /** The server process's CPU time so far, in µs (asked over its stdin, outside the measured load). */
  cpu(): Promise<CpuTime>;
  stop(): void;
}

/** A process's CPU time, µs. */
interface CpuTime {
  readonly user: number;
  readonly system: number;
}

interface Probe {
  readonly status: number;
  readonly allowOrigin: string | null;
}

interface HttpCell {
  readonly config: ConfigName;
  readonly kind: RequestKind;
  /** Requests per second of each round. */
  readonly rounds: number[];
  readonly rps: number;
  /** Server CPU µs per completed request, of each round. */
  readonly cpuRounds: number[];
  /** Median of {@link cpuRounds}. */
  readonly cpuUsPerRequest: number;
  /** Median share of one core the server used during a run (CPU time / wall time): below ~0.9 it was not saturated. */
  readonly serverCpuShare: number;
  /** Median share of the server's CPU time spent in the kernel (system time: syscalls, loopback TCP). */
  readonly systemShare: number;
  readonly p50LatencyMs: number;
  /** Responses that were not 2xx, or errors, over all rounds (must be 0). */
  readonly failures: number;
  readonly probe: Probe;
}

/** Options of an HTTP run: which configurations, how many rounds of how many seconds. */
interface HttpPlan {
  readonly configs: readonly ConfigName[];
  readonly rounds: number;
  readonly seconds: number;
}

/** What the HTTP part reports. */
interface HttpResult {
  readonly cells: HttpCell[];
  readonly unavailable: Record<string, string>;
  readonly seconds: number;
  readonly rounds: number;
  /** Requests in flight per connection. */
  readonly pipelining: number;
}

async function startServer(config: ConfigName, port: number): Promise<Server | string> {
  const [command, argv] = nodeCommand([join(DIST, 'http', 'server.mjs'), config, String(port)], SERVER_CORE);
  const child = spawn(command, argv, { stdio: ['pipe', 'pipe', 'inherit'] });
  const waiting: ((line: string) => void)[] = [];
  let buffered = '';
  let exited = false;
  child.stdout.setEncoding('utf8');
  child.stdout.on('data', (chunk: string) => {
    buffered += chunk;
    for (let end = buffered.indexOf('\n'); end >= 0; end = buffered.indexOf('\n')) {
      const line = buffered.slice(0, end);
      buffered = buffered.slice(end + 1);
      waiting.shift()?.(line);
    }
  });
  child.on('exit', () => {
    exited = true;
    for (const resolve of waiting.splice(0)) resolve('unavailable: exited');
  });
  const nextLine = (timeoutMs: number, what: string): Promise<string> =>
    new Promise<string>((resolve) => {
      if (exited) return resolve('unavailable: exited');
      const timer = setTimeout(() => resolve(`unavailable: ${what} within ${timeoutMs / 1000} s`), timeoutMs);
      waiting.push((line) => {
        clearTimeout(timer);
        resolve(line);
      });
    });
  const line = await nextLine(30_000, 'did not start');
  if (line !== 'ready') {
    child.kill('SIGTERM');
    return line;
  }
  const cpu = async (): Promise<CpuTime> => {
    const answer = nextLine(10_000, 'no CPU answer');
    child.stdin.write('cpu\n');
    const reply = await answer;
    const [tag, user, system] = reply.split(' ');
    const time = { user: Number(user), system: Number(system) };
    if (tag !== 'cpu' || !Number.isFinite(time.user) || !Number.isFinite(time.system)) throw new Error(`${config}: bad CPU answer ${JSON.stringify(reply)}`);
    return time;
  };
  return { config, port, cpu, stop: () => child.kill('SIGTERM') };
}

async function probe(server: Server, kind: RequestKind): Promise<Probe> {
  const { method, headers } = REQUESTS[kind];
  const response = await fetch(`http://127.0.0.1:${server.port}${REQUEST_PATH}`, { method, headers });
  await response.arrayBuffer();
  return { status: response.status, allowOrigin: response.headers.get('access-control-allow-origin') };
}

/**
 * Requests in flight per connection (`--pipelining=N`, default 10). With one
 * (as browsers send them) a server given a fraction of a core handles about
 * one request per wake-up, and its CPU per request then depends on when the
 * load generator — on the other, equally busy core — gets to send: rounds
 * of the same configuration differed by 40 %. With ten, every read brings a
 * batch, as on a saturated server, and the CPU per request is the server's
 * own work (per-round ranges of a few %). It is the stricter measure for a
 * middleware: the hello world gets cheaper, the middleware's cost does not.
 */
const PIPELINING = countFlag('pipelining', 10);

/** Requests each configuration serves, per request kind, before anything is measured. */
const WARM_UP_REQUESTS = QUICK ? 5_000 : 15_000;

/** One autocannon run: for `seconds`, or for `amount` requests when given. */
async function load(server: Server, kind: RequestKind, seconds: number, amount?: number): Promise<autocannon.Result> {
  const { method, headers } = REQUESTS[kind];
  return autocannon({
    url: `http://127.0.0.1:${server.port}${REQUEST_PATH}`,
    method: method as autocannon.Request['method'],
    headers: { ...headers },
    connections: 32,
    pipelining: PIPELINING,
    ...(amount === undefined ? { duration: seconds } : { amount }),
  });
}

/** One measured run: autocannon's figures plus the server's CPU time over it. */
async function measuredLoad(server: Server, kind: RequestKind, seconds: number): Promise<{ result: autocannon.Result; cpuUs: number; systemUs: number; wallUs: number }> {
  const before = await server.cpu();
  const wallBefore = performance.now();
  const result = await load(server, kind, seconds);
  const after = await server.cpu();
  const systemUs = after.system - before.system;
  return { result, cpuUs: after.user - before.user + systemUs, systemUs, wallUs: (performance.now() - wallBefore) * 1e3 };
}

async function runHttp(plan: HttpPlan): Promise<HttpResult> {
  const { rounds, seconds } = plan;
  const servers: Server[] = [];
  const unavailable: Record<string, string> = {};
  let port = 18_400;
  for (const config of plan.configs) {
    const started = await startServer(config, port++);
    if (typeof started === 'string') unavailable[config] = started;
    else servers.push(started);
  }
  try {
    const kinds: RequestKind[] = ['get', 'preflight'];
    const probes = new Map<string, Probe>();
    for (const server of servers) {
      for (const kind of kinds) {
        probes.set(`${server.config}/${kind}`, await probe(server, kind));
        // Warm-up by count, not time: a server given a fifth of a core runs
        // its first few thousand requests at 3-5× the settled CPU cost (not
        // yet optimized by V8), whatever the wall time.
        const warmed = await load(server, kind, 0, WARM_UP_REQUESTS);
        log(`warm-up ${kind.padEnd(9)} ${server.config.padEnd(22)} ${warmed.requests.total} requests`);
      }
    }
    const samples = new Map<string, { rps: number[]; cpu: number[]; share: number[]; system: number[]; latency: number[]; failures: number }>();
    for (let round = 0; round < rounds; round++) {
      for (const kind of kinds) {
        // Interleaved: every configuration once per round, in a rotating order.
        for (const server of rotate(servers, round * 3 + (kind === 'get' ? 0 : 1))) {
          const { result, cpuUs, systemUs, wallUs } = await measuredLoad(server, kind, seconds);
          const key = `${server.config}/${kind}`;
          const cell = samples.get(key) ?? { rps: [], cpu: [], share: [], system: [], latency: [], failures: 0 };
          cell.system.push(systemUs / Math.max(cpuUs, 1));
          const completed = Math.max(result.requests.total, 1);
          cell.rps.push(result.requests.average);
          cell.cpu.push(cpuUs / completed);
          cell.share.push(cpuUs / wallUs);
          cell.latency.push(result.latency.p50);
          cell.failures += result.non2xx + result.errors + result.timeouts;
          samples.set(key, cell);
          log(
            `round ${round + 1}/${rounds} ${kind.padEnd(9)} ${server.config.padEnd(22)} ${String(Math.round(result.requests.average)).padStart(6)} req/s ${(cpuUs / completed).toFixed(1).padStart(7)} µs CPU/req (server at ${Math.round((100 * cpuUs) / wallUs)}% of a core, ${Math.round((100 * systemUs) / Math.max(cpuUs, 1))}% system)`,
          );
        }
      }
    }
    const cells: HttpCell[] = [];
    for (const server of servers) {
      for (const kind of kinds) {
        const key = `${server.config}/${kind}`;
        const cell = samples.get(key);
        const probed = probes.get(key);
        if (cell === undefined || probed === undefined) continue;
        cells.push({
          config: server.config,
          kind,
          rounds: cell.rps,
          rps: median(cell.rps),
          cpuRounds: cell.cpu,
          cpuUsPerRequest: median(cell.cpu),
          serverCpuShare: median(cell.share),
          systemShare: median(cell.system),
          p50LatencyMs: median(cell.latency),
          failures: cell.failures,
          probe: probed,
        });
      }
    }
    return { cells, unavailable, seconds, rounds, pipelining: PIPELINING };
  } finally {
    for (const server of servers) server.stop();
  }
}

/** A configuration's standing against its framework's hello world, from rounds measured side by side. */
interface HttpRatio {
  /** Median over rounds of own req/s ÷ hello world req/s. */
  readonly rps: number;
  /** Median over rounds of hello world CPU µs/request ÷ own CPU µs/request (1 = costs nothing). */
  readonly cpu: number;
  /** Lowest and highest per-round CPU ratio: how well the median is resolved. */
  readonly cpuLow: number;
  readonly cpuHigh: number;
}

function cellOf(http: HttpResult, config: ConfigName, kind: RequestKind): HttpCell | undefined {
  return http.cells.find((c) => c.config === config && c.kind === kind);
}

function httpRatio(http: HttpResult, config: ConfigName, kind: RequestKind): HttpRatio | undefined {
  const own = cellOf(http, config, kind);
  const base = cellOf(http, baselineOf(config), kind);
  if (own === undefined || base === undefined) return undefined;
  const cpu = own.cpuRounds.map((c, i) => (base.cpuRounds[i] ?? base.cpuUsPerRequest) / c);
  return {
    rps: median(own.rounds.map((r, i) => r / (base.rounds[i] ?? base.rps))),
    cpu: median(cpu),
    cpuLow: Math.min(...cpu),
    cpuHigh: Math.max(...cpu),
  };
}

/** The HTTP table (also printed by `--http-only`). */
function httpTable(http: HttpResult): string {
  return [
    '| configuration | request | answered | CPU µs/request (median) | rounds (CPU µs/request) | × hello world (CPU) | per-round range | req/s (median) | rounds (req/s) | × hello world (req/s) | server core use | kernel share of CPU | p50 latency ms |',
    '|---|---|---|---:|---|---:|---|---:|---|---:|---:|---:|---:|',
    ...http.cells.map((c) => {
      const r = httpRatio(http, c.config, c.kind);
      const answered = `${c.probe.status}${c.probe.allowOrigin === null ? '' : ' + ACAO'}${c.failures > 0 ? `, ${c.failures} failures` : ''}`;
      return [
        '',
        c.config,
        c.kind,
        answered,
        fmt(c.cpuUsPerRequest, 1),
        c.cpuRounds.map((x) => fmt(x, 1)).join(' / '),
        r === undefined ? '' : `**${fmt(r.cpu, 3)}**`,
        r === undefined ? '' : `${fmt(r.cpuLow, 3)}–${fmt(r.cpuHigh, 3)}`,
        fmt(c.rps, 0),
        c.rounds.map((x) => fmt(x, 0)).join(' / '),
        r === undefined ? '' : fmt(r.rps, 3),
        `${fmt(100 * c.serverCpuShare, 0)}%`,
        `${fmt(100 * c.systemShare, 0)}%`,
        fmt(c.p50LatencyMs, 1),
        '',
      ].join(' | ').trim();
    }),
    ...Object.entries(http.unavailable).map(([config, why]) => `| ${config} | — | not run: ${why} | | | | | | | | | | |`),
  ].join('\n');
}

// ---------------------------------------------------------------- report

const fmt = (value: number, digits = 1): string => value.toFixed(digits);
const mb = (bytes: number): string => fmt(bytes / 1e6, 1);
const verdictMark = (met: boolean): string => (met ? '**met**' : '**missed**');

function microTable(micro: MicroResult): string {
  const floors = micro.cases.filter((c) => c.group === 'floor');
  const lines = ['| allow-set | case | verdict | ns/op (median) | rounds (p50 ns/op) | × floor |', '|---|---|---|---:|---|---:|'];
  for (const floor of floors) {
    const size = floor.size as number;
    lines.push(`| ${size.toLocaleString('en')} | floor: ${floor.name} | | ${fmt(floor.ns)} | ${floor.rounds.map((r) => fmt(r)).join(' / ')} | 1.0 |`);
    for (const c of micro.cases.filter((x) => x.size === size && x.group !== 'floor')) {
      lines.push(`| ${size.toLocaleString('en')} | ${c.name} | ${c.reason ?? ''} | ${fmt(c.ns)} | ${c.rounds.map((r) => fmt(r)).join(' / ')} | ${fmt(ratioToFloor(c, floor), 2)} |`);
    }
  }
  return lines.join('\n');
}

/** Median over rounds of (case p50 / floor p50 of the same round). */
function ratioToFloor(c: MicroCase, floor: MicroCase): number {
  return median(c.rounds.map((r, i) => r / (floor.rounds[i] ?? floor.ns)));
}

function find(micro: MicroResult, name: string, size: number): MicroCase | undefined {
  return micro.cases.find((c) => c.name === name && c.size === size);
}

/** When and where a run happened. */
interface RunMeta {
  readonly generatedAt: string;
  readonly commit: string;
  readonly load: string;
  readonly elapsedS: number;
}

function runMeta(elapsedS: number): RunMeta {
  return {
    generatedAt: new Date().toISOString(),
    commit: spawnSync('git', ['rev-parse', '--short', 'HEAD'], { encoding: 'utf8' }).stdout.trim(),
    load: readFileSync('/proc/loadavg', 'utf8').split(' ').slice(0, 3).join(' '),
    elapsedS,
  };
}

/** In-process adapter cost of one framework and request kind (from the micro run's `adapter` rows). */
interface AdapterCost {
  readonly framework: 'express' | 'koa' | 'fetch';
  readonly kind: RequestKind;
  /** µs per request of the bare request object, and with ampcors (medians of rounds). */
  readonly baselineUs: number;
  readonly ampcorsUs: number;
  /** Median over rounds of (ampcors − baseline), µs. */
  readonly addedUs: number;
  /** False unless most rounds' differences agree with the median and it is positive (otherwise the difference is noise). */
  readonly resolved: boolean;
  /** Each round's difference, µs. */
  readonly spread: string;
}

function adapterCosts(micro: MicroResult): AdapterCost[] {
  const costs: AdapterCost[] = [];
  for (const framework of ['express', 'koa', 'fetch'] as const) {
    for (const kind of ['get', 'preflight'] as RequestKind[]) {
      const base = micro.cases.find((c) => c.group === 'adapter' && c.name === `${framework} ${kind} baseline`);
      const own = micro.cases.find((c) => c.group === 'adapter' && c.name === `${framework} ${kind} ampcors`);
      if (base === undefined || own === undefined) continue;
      // Per round: what ampcors added. Resolved when most rounds agree with the median (within 25 %, or 1 µs) and it is positive.
      const differences = own.rounds.map((r, i) => r - (base.rounds[i] ?? base.ns));
      const added = median(differences);
      const agreeing = differences.filter((d) => Math.abs(d - added) <= Math.max(0.25 * Math.abs(added), 1_000)).length;
      costs.push({
        framework,
        kind,
        baselineUs: base.ns / 1e3,
        ampcorsUs: own.ns / 1e3,
        addedUs: added / 1e3,
        resolved: added > 0 && 2 * agreeing > differences.length,
        spread: differences.map((d) => fmt(d / 1e3, 1)).join(' / '),
      });
    }
  }
  return costs;
}

/** The soak figures another tool wrote (test/security/soak.json), if present. */
interface Soak {
  readonly path: string;
  readonly date: string;
  readonly rows: Record<string, unknown>[];
  readonly notes: string[];
}

const SOAK_FILE = join(BENCH_ROOT, '..', 'test', 'security', 'soak.json');

function readSoak(): Soak | string {
  if (!existsSync(SOAK_FILE)) return 'not run (test/security/soak.json does not exist)';
  try {
    const raw = JSON.parse(readFileSync(SOAK_FILE, 'utf8')) as unknown;
    const record = (typeof raw === 'object' && raw !== null && !Array.isArray(raw) ? raw : {}) as Record<string, unknown>;
    const list = Array.isArray(raw) ? raw : Object.values(record).find((value) => Array.isArray(value) && value.every((row) => typeof row === 'object' && row !== null));
    if (!Array.isArray(list) || list.length === 0) return 'test/security/soak.json holds no per-adapter rows';
    const dated = ['generatedAt', 'date', 'measuredAt', 'finishedAt', 'startedAt'].map((key) => record[key]).find((value) => typeof value === 'string');
    const notes = Object.entries(record)
      .filter(([, value]) => typeof value === 'string' || typeof value === 'number' || typeof value === 'boolean')
      .map(([key, value]) => `${key}: ${String(value)}`);
    const rows = list as Record<string, unknown>[];
    const rowDates = rows.map((row) => row.date ?? row.generatedAt).filter((value): value is string => typeof value === 'string').sort();
    const date =
      (dated as string | undefined) ??
      (rowDates.length > 0 ? `${rowDates[0]}${rowDates.length > 1 ? ` to ${rowDates[rowDates.length - 1]}` : ''}` : `${statSync(SOAK_FILE).mtime.toISOString()} (file time)`);
    return { path: 'test/security/soak.json', date, rows, notes };
  } catch (error) {
    return `test/security/soak.json is unreadable: ${error instanceof Error ? error.message : String(error)}`;
  }
}

function soakSection(soak: Soak | string): string {
  if (typeof soak === 'string') return `Soak: ${soak}.`;
  const columns = [...new Set(soak.rows.flatMap((row) => Object.keys(row)))].filter((key) => soak.rows.some((row) => typeof row[key] !== 'object' || row[key] === null));
  const cellText = (value: unknown): string => (typeof value === 'number' ? (Number.isInteger(value) ? String(value) : value.toFixed(1)) : value === undefined || value === null ? '' : String(value));
  return [
    `From \`${soak.path}\` (written by the soak run, test/security/soak.ts; dated ${soak.date}), embedded as found:${soak.notes.length > 0 ? ` ${soak.notes.join('; ')}.` : ''}`,
    '',
    `| ${columns.join(' | ')} |`,
    `|${columns.map(() => '---').join('|')}|`,
    ...soak.rows.map((row) => `| ${columns.map((key) => cellText(row[key])).join(' | ')} |`),
  ].join('\n');
}

/** The compact allow-set figures: this run's, and the 10M one (this run's with --full, else the recorded file). */
interface CompactFigures {
  readonly runs: CompactResult[];
  /** Where the 10M figure came from, when it was not measured in this run. */
  readonly recorded?: string;
}

const COMPACT_10M_FILE = join(BENCH_ROOT, 'compact-allow-set-10m.json');

function runCompact(): CompactFigures {
  const counts = QUICK ? [100_000] : FULL ? [1_000_000, 10_000_000] : [1_000_000];
  const runs = counts.map((count) => {
    log(`compact allow-set: ${count.toLocaleString('en')} domains`);
    return JSON.parse(runNode(['--expose-gc', join(DIST, 'compact-allow-set.mjs'), String(count)], SERVER_CORE)) as CompactResult;
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

function compactTable(compact: CompactFigures): string {
  return [
    '| domains | prefixes | file bytes | bytes/domain | build CPU s | build wall s | load CPU ms | loaded set MB | `has(prefix)` ns | `verifyOrigin` allowed ns | `verifyOrigin` denied ns | measured |',
    '|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---|',
    ...compact.runs.map(
      (r) =>
        `| ${r.domains.toLocaleString('en')} | ${r.prefixes.toLocaleString('en')} | ${r.bytes.toLocaleString('en')} | ${fmt(r.bytesPerDomain, 2)} | ${fmt(r.buildCpuMs / 1e3, 1)} | ${fmt(r.buildWallMs / 1e3, 1)} | ${fmt(r.loadCpuMs, 0)} | ${mb(r.loadedBytes)} | ${fmt(r.hasNs, 0)} | ${fmt(r.allowedNs, 0)} | ${fmt(r.deniedNs, 0)} | ${r.domains === 10_000_000 && compact.recorded !== undefined ? `recorded ${r.measuredAt.slice(0, 10)}` : 'this run'} |`,
    ),
  ].join('\n');
}

/** Everything one run measured. */
interface RunResults {
  readonly micro: MicroResult;
  readonly builds: BuildResult[];
  readonly compact: CompactFigures;
  readonly http: HttpResult;
  readonly soak: Soak | string;
  readonly meta: RunMeta;
}

function report(results: RunResults): string {
  const { micro, builds, compact, http, soak, meta } = results;
  const cpu = cpus();
  const { commit, load, elapsedS } = meta;
  const floor10k = micro.cases.find((c) => c.group === 'floor' && c.size === 10_000);
  const ratio = (name: string): number | undefined => {
    const c = find(micro, name, 10_000);
    return c && floor10k ? ratioToFloor(c, floor10k) : undefined;
  };
  const allowed = ratio('allowed cache origin');
  const hashed = ratio('allowed hashed cache origin');
  const hostile = ratio('hostile 10 kB header');
  const lookup = ratio('allowSet.get of an allowed cache origin (lookup alone)');
  const big = builds.find((b) => b.domains === 1_000_000 && b.what === 'allow-set');
  const costs = adapterCosts(micro);
  const costOf = (framework: string, kind: RequestKind) => costs.find((c) => c.framework === framework && c.kind === kind);

  const missed: string[] = [];
  const adapterTargets: string[] = [];
  for (const [adapter, peers] of [
    ['express+ampcors', ['express+cors', 'express+toolbox-cors']],
    ['koa+ampcors', ['koa+@koa/cors']],
  ] as [ConfigName, ConfigName[]][]) {
    for (const kind of ['get', 'preflight'] as RequestKind[]) {
      const r = httpRatio(http, adapter, kind);
      if (r === undefined) {
        adapterTargets.push(`| ${adapter} keeps ≥ 0.97 of hello world, ${kind} | not measured (${http.unavailable[adapter] ?? 'no data'}) | — |`);
        continue;
      }
      const within = r.cpuLow < 0.97 && r.cpuHigh >= 0.97 ? ' (rounds straddle 0.97: not resolved)' : '';
      adapterTargets.push(`| ${adapter} keeps ≥ 0.97 of hello world, ${kind} | CPU ${fmt(r.cpu, 3)} (rounds ${fmt(r.cpuLow, 2)}–${fmt(r.cpuHigh, 2)}); req/s ${fmt(r.rps, 3)} | ${verdictMark(r.cpu >= 0.97)}${within} |`);
      if (r.cpu < 0.97) missed.push(`${adapter} ${kind}`);
      for (const peer of peers) {
        const p = httpRatio(http, peer, kind);
        if (p === undefined) continue;
        const overlap = r.cpuLow <= p.cpuHigh && p.cpuLow <= r.cpuHigh ? ' (per-round ranges overlap: not resolved)' : '';
        adapterTargets.push(
          `| ${adapter} ahead of ${peer.replace(/^\w+\+/, '')}, ${kind} | CPU ${fmt(r.cpu, 3)} (${fmt(r.cpuLow, 2)}–${fmt(r.cpuHigh, 2)}) vs ${fmt(p.cpu, 3)} (${fmt(p.cpuLow, 2)}–${fmt(p.cpuHigh, 2)}); req/s ${fmt(r.rps, 3)} vs ${fmt(p.rps, 3)} | ${verdictMark(r.cpu > p.cpu)}${overlap} |`,
        );
        if (r.cpu <= p.cpu) missed.push(`${adapter} behind ${peer} (${kind})`);
      }
    }
  }

  const targets = [
    '| target | measured | |',
    '|---|---|---|',
    ...adapterTargets,
    allowed === undefined ? '' : `| verify, allowed cache origin ≤ 2× floor (10k set) | ${fmt(allowed, 2)}× (lookup alone ${lookup === undefined ? '?' : fmt(lookup, 2)}×) | ${verdictMark(allowed <= 2)} |`,
    hashed === undefined ? '' : `| verify, allowed hashed cache origin ≤ 2× floor (10k set) | ${fmt(hashed, 2)}× | ${verdictMark(hashed <= 2)} |`,
    hostile === undefined ? '' : `| verify, hostile 10 kB header ≤ 20× floor (10k set) | ${fmt(hostile, 2)}× | ${verdictMark(hostile <= 20)} |`,
    '| no SHA-256 or punycode on the allowed path | asserted by packages/core/test/allowed-path.test.ts (spies on both) | **met** |',
    big === undefined
      ? ''
      : `| 1M domains × 2 caches built in ≤ 5 s | ${fmt(big.cpuMs / 1e3, 2)} s CPU, ${fmt(big.wallMs / 1e3, 2)} s wall | ${verdictMark(big.cpuMs <= 5_000)} (CPU)${big.wallMs <= 5_000 ? '' : ', wall over: shared machine'} |`,
    big === undefined ? '' : `| 1M domains × 2 caches in ≤ 150 MB heap | ${mb(big.heapBytes)} MB | ${verdictMark(big.heapBytes <= 150e6)} |`,
  ].filter((line) => line !== '');

  // A framework whose hello world's CPU per request swings by more than 30 % between rounds cannot resolve a 3 % target.
  const unresolved = (['express', 'koa', 'fetch'] as const).filter((framework) => {
    const hello = http.cells.filter((c) => c.config === framework);
    return hello.some((c) => Math.max(...c.cpuRounds) > 1.3 * Math.min(...c.cpuRounds));
  });

  // Why: from this run's figures.
  const why: string[] = [];
  for (const framework of unresolved) {
    const spans = http.cells
      .filter((c) => c.config === framework)
      .map((c) => `${c.kind} ${fmt(Math.min(...c.cpuRounds), 0)}–${fmt(Math.max(...c.cpuRounds), 0)} µs`)
      .join(', ');
    const koaSpans = http.cells
      .filter((c) => c.config === 'koa')
      .map((c) => `${fmt(Math.min(...c.cpuRounds), 0)}–${fmt(Math.max(...c.cpuRounds), 0)}`)
      .join(' and ');
    why.push(
      `- **${framework} is not resolved on this machine**: its hello world's CPU per request ranged ${spans} between rounds${framework === 'koa' || koaSpans === '' ? '' : ` (Koa's: ${koaSpans} µs)`}, and its configurations swing alike, so a single round's ratio is off by up to ±40 % and even the median of ${http.rounds} rounds cannot tell 0.97 from 0.87 (peers come out "faster than hello world"). Its rows are reported, and marked met or missed by the median as the issue asks, but they do not show whether the target is met; the in-process rows (next point) do: what ampcors adds to a request, against what the hello world costs.`,
    );
  }
  if (allowed !== undefined && allowed > 2) {
    why.push(
      `- **\`verify\` of a readable allowed cache origin, ${fmt(allowed, 2)}× the floor**: the allow-set lookup alone is ${lookup === undefined ? '?' : fmt(lookup, 2)}× (one \`Map.get\` of the raw header returning a frozen verdict made at construction). The rest is the call itself and \`withSource\`; the floor is one \`Set.has\`, so at these sizes (tens of ns) a few ns of call overhead already move the ratio. It would take inlining the lookup into the caller (not possible through the \`verify\` interface) or a quieter machine to tell apart.`,
    );
  }
  if (missed.length > 0) {
    const predicted = (framework: 'express' | 'koa', kind: RequestKind): string => {
      const cost = costOf(framework, kind);
      const hello = cellOf(http, framework, kind);
      if (cost === undefined || hello === undefined || !cost.resolved) return '';
      return `${framework} ${kind}: ampcors adds ${fmt(cost.addedUs, 2)} µs in-process to a hello world that costs ${fmt(hello.cpuUsPerRequest, 1)} µs over HTTP → expected ${fmt(hello.cpuUsPerRequest / (hello.cpuUsPerRequest + cost.addedUs), 3)}`;
    };
    const expectations = (['express', 'koa'] as const).flatMap((f) => (['get', 'preflight'] as RequestKind[]).map((k) => predicted(f, k))).filter((x) => x !== '');
    why.push(
      `- **HTTP (${missed.join('; ')})**: the in-process rows below (Adapters, one request) measure what ampcors adds to a request without the network stack: ${expectations.join('; ')}. The in-process figure covers deciding and \`setHeader\`, not serializing and sending the extra headers; the static-headers reference below measures that part over HTTP. What is left between those and the HTTP figure is the machine (the per-round ranges show how far single rounds swing). Where the in-process expectation itself is below 0.97, the decision's cost is real: the adapters' own code is now a small part of it (V8 CPU profile of the in-process Koa case, 2026-11-23, after the adapter's hot-path commit — adapter frames ~7 % of the middleware's time, core \`decide\` + \`sourceOriginOfUrl\` ~58 %, Node's \`setHeader\` validation ~27 %). What it would take, in core (not this benchmark's to change): read \`__amp_source_origin\` without \`URLSearchParams\` (a scan for the one parameter, decoding only its value), check it in \`withSource\` without a full \`parseOrigin\` per request (the set of publisher origins is known at construction), and plan the common allowed GET from a precomputed header list instead of building arrays per request. Node's \`setHeader\` (name and value validation, one call per header) stays; \`cors\` pays it too, for fewer headers (it sends no \`AMP-Access-Control-Allow-Source-Origin\` or \`Access-Control-Expose-Headers\`).`,
    );
  }
  const headerFloor = (['express', 'koa'] as const)
    .filter((framework) => !unresolved.includes(framework))
    .flatMap((framework) =>
      (['get', 'preflight'] as RequestKind[]).map((kind) => {
        const own = httpRatio(http, `${framework}+ampcors`, kind);
        const replayed = httpRatio(http, `${framework}+static-headers`, kind);
        const hello = cellOf(http, framework, kind);
        if (own === undefined || replayed === undefined || hello === undefined) return '';
        const headersUs = hello.cpuUsPerRequest / replayed.cpu - hello.cpuUsPerRequest;
        const decidingUs = hello.cpuUsPerRequest / own.cpu - hello.cpuUsPerRequest / replayed.cpu;
        const peer = httpRatio(http, framework === 'koa' ? 'koa+@koa/cors' : 'express+cors', kind);
        const versus = peer === undefined ? '' : `; ${framework === 'koa' ? '@koa/cors' : 'cors'} ${fmt(peer.cpu, 3)}${peer.cpu > replayed.cpu ? ', ahead of the headers alone' : ''}`;
        return `${framework} ${kind}: static headers ${fmt(replayed.cpu, 3)} (≈ ${fmt(headersUs, 1)} µs for the headers), ampcors ${fmt(own.cpu, 3)} (≈ ${fmt(decidingUs, 1)} µs more for deciding)${versus}`;
      }),
    )
    .filter((line) => line !== '');
  if (headerFloor.length > 0) {
    why.push(
      `- **Headers vs deciding** (× hello world (CPU) of the static-headers reference, which sends ampcors's exact headers without deciding anything): ${headerFloor.join('; ')}. The answer to this AMP GET carries five headers (\`Access-Control-Allow-Origin\`, \`-Allow-Credentials\`, \`-Expose-Headers\`, \`AMP-Access-Control-Allow-Source-Origin\`, \`Vary\`) where \`cors\` and \`@koa/cors\` send three (preflights: about as many on both sides, and Koa's explicit empty body); what those cost over HTTP is not ampcors's to remove, and where a peer is ahead of the headers alone, no decision, however cheap, would put ampcors ahead of it: that target would take sending fewer headers (dropping the legacy \`AMP-Access-Control-Allow-Source-Origin\` and its \`Expose-Headers\` entry when the request has no \`__amp_source_origin\` is already done; this benchmark's request has one).`,
    );
  }
  if (big !== undefined && big.wallMs > 5_000) why.push('- **1M build in 5 s** is met in CPU time; wall time on this machine is well above the CPU time because the process gets a fraction of a core.');
  if (why.length === 0) why.push('- None: every target is met in this run.');

  const adapterTable = [
    '| framework | request | bare request µs | with ampcors µs | ampcors adds µs (median of rounds) | hello world over HTTP, CPU µs/request (this run) | expected × hello world (CPU) |',
    '|---|---|---:|---:|---:|---:|---:|',
    ...costs.map((c) => {
      const hello = cellOf(http, c.framework, c.kind);
      const added = c.resolved ? `**${fmt(c.addedUs, 2)}**` : `${fmt(c.addedUs, 2)}: not resolved (rounds: ${c.spread} µs)`;
      const expected = hello === undefined || !c.resolved ? '' : fmt(hello.cpuUsPerRequest / (hello.cpuUsPerRequest + c.addedUs), 3);
      return `| ${c.framework} | ${c.kind} | ${fmt(c.baselineUs, 2)} | ${fmt(c.ampcorsUs, 2)} | ${added} | ${hello === undefined ? '' : fmt(hello.cpuUsPerRequest, 1)} | ${expected} |`;
    }),
  ].join('\n');

  const buildTable = [
    '| domains | what | cache origins | wall ms | CPU ms | retained heap MB |',
    '|---:|---|---:|---:|---:|---:|',
    ...builds.map((b) => `| ${b.domains.toLocaleString('en')} | ${b.what === 'allow-set' ? '`buildAllowSet`' : '`createVerifier` (rules + allow-set)'} | ${b.origins.toLocaleString('en')} | ${fmt(b.wallMs, 0)} | ${fmt(b.cpuMs, 0)} | ${mb(b.heapBytes)} |`),
  ].join('\n');

  return `# ampcors benchmark results

Generated by \`pnpm bench\`${QUICK ? ' (**--quick**: fewer rounds, shorter runs, no 1M micro set)' : ''}${FULL ? ' (**--full**: with the 10M compact allow-set)' : ''} on ${meta.generatedAt}, commit \`${commit}\`, in ${fmt(elapsedS, 0)} s.

Machine: ${cpu.length} × ${cpu[0]?.model ?? 'unknown CPU'}, ${fmt(totalmem() / 2 ** 30, 1)} GiB RAM, Node ${process.version}, ${process.platform}/${process.arch}; load average at the end ${load}${HAS_TASKSET ? '' : '; taskset unavailable, nothing pinned'}.
This machine is shared (other engineers' test and mutation runs): absolute figures drift between runs, so every comparison below is a ratio of figures measured side by side in the same run, and time is CPU time where possible.

Rerun: \`pnpm bench\` (builds every package, then the benchmarks; about 17 minutes on this machine), \`pnpm --filter @ampcors/bench run bench -- --full\` (adds the 10M-domain compact allow-set, several minutes more), or, after a build, \`pnpm --filter @ampcors/bench run bench:quick\`. The HTTP part alone: \`node bench/dist/run.mjs --http-only [--only=koa,koa+ampcors] [--rounds=N] [--seconds=N] [--pipelining=N]\`; where a server's CPU goes: \`node bench/dist/profile.mjs <configuration> [get|preflight]\`.

## Targets

HTTP targets are judged on **× hello world (CPU)**: the hello world's server CPU time per request divided by the configuration's, median of the per-round ratios (see [HTTP](#http) for why and how); the req/s ratio is shown beside it.

${targets.join('\n')}

## Why targets are missed, and what it would take

${why.join('\n')}

## Micro benchmarks

mitata \`measure\`, every case in ${micro.cases[0]?.rounds.length ?? 0} interleaved rounds, each case after a forced garbage collection (so no case pays for another's garbage); figure = median of the rounds' p50. Time is process CPU time (user + system), so a benchmark is not charged for time it spent descheduled; every sample is a batch of at least 256 operations (about 2 ms of CPU), so neither the clock's microsecond granularity nor a single interruption shows as an outlier. Inputs cycle through up to 1,024 distinct strings held in an array (V8 caches a string's hash, so the floor and \`verify\` both see cached hashes). The floor is \`Set.has\` of a 45-character string in a \`Set\` of as many strings as the allow-set has publisher domains; "× floor" is the median over rounds of the ratio to the floor measured in the same round. Verifiers trust N exact domains (every tenth one long enough to be hashed) plus \`*.wildcard-publisher.com\`.

${microTable(micro)}

Algorithms (no allow-set):

| function | ns/op (median) | rounds |
|---|---:|---|
${micro.cases
  .filter((c) => c.group === 'algorithm')
  .map((c) => `| ${c.name} | ${fmt(c.ns)} | ${c.rounds.map((r) => fmt(r)).join(' / ')} |`)
  .join('\n')}

### Adapters, one request in-process

What each adapter adds to one request, without sockets (bench/src/adapter-cases.ts): the HTTP benchmark's request (same path, same headers as autocannon sends) built as a real \`IncomingMessage\`/\`ServerResponse\` (Express; Koa through \`app.createContext\`) or a real \`Request\` + hello-world \`Response\` (Fetch), alone ("bare") and through the ampcors middleware; same CPU clock and rounds as above. "Expected × hello world" = hello world's CPU µs/request over HTTP (this run) ÷ (that + what ampcors adds): the HTTP ratio a quiet machine should show. It slightly overstates Koa's cost: building Node's \`req.headers\` object (lazy) is charged to ampcors, while Express and the Fetch bridge build it anyway. The Fetch rows are mostly undici building a \`Request\` and a \`Response\` (streams, an \`AbortSignal\`: tens of µs and much garbage), so their rounds swing with garbage collection. A difference is shown as not resolved unless it is positive and most rounds' differences agree with the median (within 25 %, or 1 µs). For a preflight, "with ampcors" includes answering it (status, empty body), which over HTTP replaces the hello-world handler's answer, so the preflight rows overstate what ampcors adds.

${adapterTable}

## Allow-set construction

Each run in a fresh process (\`node --expose-gc\`); retained heap = heap used after full GCs with the structure, minus heap used after dropping it (the domain list itself is not counted: the caller holds it).

${buildTable}

## Compact allow-set

\`compileAllowSet\`/\`loadAllowSet\` (SPEC §5: 16-byte SHA-256 prefix hashes, Rice-delta coded, checksummed), in a fresh process per size (bench/src/compact-allow-set.ts). Domains are generated on the fly, never held as a list: 90 % plain ASCII names, 5 % IDNs (several prefix forms each), 5 % names too long for a readable prefix. "Loaded set MB" is the decoded hashes' ArrayBuffer memory. Lookups: CPU ns per call over 4,096 origins spread over the whole list (median of 5 passes of 65,536 calls); \`has\` and \`verifyOrigin\` hash the prefix (SHA-256) on every call, unlike the in-memory allow-set.${compact.recorded === undefined ? '' : ` The 10M row is not from this run (it takes minutes): ${compact.recorded}.`}

${compactTable(compact)}

## HTTP

autocannon on 127.0.0.1, 32 connections, ${http.pipelining === 1 ? 'no pipelining' : `**pipelining ${http.pipelining}**`}, ${http.seconds} s per run, ${http.rounds} interleaved round(s) (every configuration once per round, in a rotating order) after a warm-up of ${WARM_UP_REQUESTS.toLocaleString('en')} requests per configuration and request kind (counted, not timed: a server given a fraction of a core runs its first few thousand requests at 3–5× the settled CPU cost, before V8 has optimized them). ${HAS_TASKSET ? `Servers pinned with \`taskset -c ${SERVER_CORE}\`, the load generator on core ${LOAD_CORE}.` : ''} Request: \`${REQUESTS.get.method} /api/items?__amp_source_origin=…\` with \`Origin: ${REQUEST_ORIGIN}\` (an allowed cache origin), and the preflight \`OPTIONS\` of a POST with \`content-type\`. "answered" is the status of a probe request (and whether it carried \`Access-Control-Allow-Origin\`).

**Pipelining.** ${http.pipelining === 1 ? 'None, as browsers send requests.' : `${http.pipelining} requests in flight per connection. Browsers do not pipeline, so the req/s columns are not browser throughput; but without it a server given a fraction of a core handles about one request per wake-up, and its CPU per request then depends on when the load generator (on the other, equally busy core) gets to send: rounds of one configuration differed by 40 % and ratios swung from 0.68 to 1.13. With pipelining every read brings a batch, as on a saturated server, and the CPU per request is the server's own work (per-round ranges of a few %). It is the stricter measure for a middleware: the hello world gets cheaper (about half the CPU per request), what the middleware adds does not. \`--pipelining=1\` measures without it.`}

**CPU per request.** On a shared 2-core machine req/s mostly measures how much of a core the server was given: a round's req/s swings by 2× with other people's jobs. So the server also reports its own CPU time (\`process.cpuUsage()\`: user + system, all its threads, GC and JIT included) over a control channel that is not part of the load (a line on its stdin, answered on its stdout, read just before and just after each run); divided by the requests autocannon completed in that run, that is **CPU µs/request**. A descheduled server loses throughput but not CPU time, so this figure moves far less. **× hello world (CPU)** = the same framework's hello world CPU µs/request ÷ this configuration's, computed per round (the two ran minutes apart at most) and the median taken; 1.000 means "costs nothing". The per-round range shows how well that median is resolved. Caveats: CPU time still rises when caches are shared with other processes; and a server that is not saturated (**server core use**: CPU time ÷ wall time of the run, well under 100 % here because the machine is shared) pays more per request for waking up, which affects the hello world and the configuration alike. × hello world (req/s) is the same per-round median on req/s.

- **cors**: \`cors({ origin: [30 origins], credentials: true })\`; **@koa/cors**: an origin function over the same list, \`credentials: true\`.
- **toolbox-cors** (2.10.1) fetches \`https://cdn.ampproject.org/caches.json\` on its first request. Made offline through its documented second argument, the cache list: \`toolboxCors({}, { list: async () => CACHES })\` with ampcors's bundled registry, so nothing touches the network. It acts only on requests carrying \`__amp_source_origin\` (hence the query string on every configuration) and does not answer preflights itself (Express's automatic OPTIONS answer does).
- **static-headers** (reference, no target): a middleware that replays the headers ampcors sends for these two requests, decided once at start-up (bench/src/http/server.ts). It pays for the headers themselves — setting, serializing, sending — but decides nothing, so ampcors minus static-headers is the cost of deciding.
- **fetch**: a 20-line \`node:http\` → \`Request\`/\`Response\` bridge (bench/src/http/server.ts) around a hello-world handler, with and without \`withAmpCors\` (no target: reported for comparison).

${httpTable(http)}

## Soak

${soakSection(soak)}

## Redis

Not measured here: loading publishers into Redis needs a redis-server, which the benchmark does not start. \`packages/redis/test/redis-registry.test.ts\` loads 1M domains in one pipelined run and logs its time (\`[redis test] loaded 1000000 domains in … s\`).
`;
}

async function main(): Promise<void> {
  if (REWRITE) {
    // Rewrites RESULTS.md from the last run's raw figures (after a template change).
    const saved = JSON.parse(readFileSync(join(DIST, 'results.json'), 'utf8')) as RunResults;
    writeFileSync(join(BENCH_ROOT, 'RESULTS.md'), report({ ...saved, soak: readSoak() }));
    return;
  }
  const started = performance.now();
  if (HAS_TASKSET) execFileSync('taskset', ['-cp', LOAD_CORE, String(process.pid)], { stdio: 'ignore' });
  const plan: HttpPlan = { configs: onlyConfigs(), rounds: countFlag('rounds', QUICK ? 2 : 9), seconds: countFlag('seconds', 2) };
  if (HTTP_ONLY) {
    const http = await runHttp(plan);
    writeFileSync(join(DIST, 'http-only.json'), JSON.stringify(http, null, 2));
    process.stdout.write(`${httpTable(http)}\n`);
    return;
  }
  log(`micro benchmarks${QUICK ? ' (quick)' : ''}`);
  const micro = runMicro();
  const builds = runBuilds();
  const compact = runCompact();
  log('HTTP');
  const http = await runHttp(plan);
  const results: RunResults = { micro, builds, compact, http, soak: readSoak(), meta: runMeta((performance.now() - started) / 1e3) };
  mkdirSync(BENCH_ROOT, { recursive: true });
  writeFileSync(join(BENCH_ROOT, 'RESULTS.md'), report(results));
  writeFileSync(join(DIST, 'results.json'), JSON.stringify(results, null, 2));
  log(`wrote ${join(BENCH_ROOT, 'RESULTS.md')}`);
}

await main();
