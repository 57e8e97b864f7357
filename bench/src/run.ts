/**
 * `pnpm bench`: runs the micro benchmarks, the allow-set construction runs
 * and the HTTP comparison, then rewrites bench/RESULTS.md.
 *
 * Usage: node dist/run.mjs [--quick | --rewrite]  (--rewrite: RESULTS.md again from dist/results.json)
 */
import { execFileSync, spawn, spawnSync } from 'node:child_process';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { cpus, totalmem } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import autocannon from 'autocannon';
import type { BuildResult } from './allow-set-build.js';
import { baselineOf, type ConfigName, CONFIGS, REQUEST_ORIGIN, REQUEST_PATH, REQUESTS, type RequestKind } from './http/configs.js';
import type { MicroCase, MicroResult } from './micro.js';
import { median, rotate } from './stats.js';

const DIST = dirname(fileURLToPath(import.meta.url));
const BENCH_ROOT = join(DIST, '..');
const REWRITE = process.argv.includes('--rewrite');
const QUICK = process.argv.includes('--quick');
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
  runNode([join(DIST, 'micro.mjs'), out, ...(QUICK ? ['--quick'] : [])], SERVER_CORE);
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
  stop(): void;
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
  readonly p50LatencyMs: number;
  /** Responses that were not 2xx, or errors, over all rounds (must be 0). */
  readonly failures: number;
  readonly probe: Probe;
}

async function startServer(config: ConfigName, port: number): Promise<Server | string> {
  const [command, argv] = nodeCommand([join(DIST, 'http', 'server.mjs'), config, String(port)], SERVER_CORE);
  const child = spawn(command, argv, { stdio: ['ignore', 'pipe', 'inherit'] });
  const line = await new Promise<string>((resolve) => {
    let buffered = '';
    const timer = setTimeout(() => resolve('unavailable: did not start within 30 s'), 30_000);
    child.stdout.on('data', (chunk: Buffer) => {
      buffered += chunk.toString();
      if (buffered.includes('\n')) {
        clearTimeout(timer);
        resolve(buffered.split('\n')[0] as string);
      }
    });
    child.on('exit', () => {
      clearTimeout(timer);
      resolve(buffered.split('\n')[0] || 'unavailable: exited');
    });
  });
  if (line !== 'ready') {
    child.kill('SIGTERM');
    return line;
  }
  return { config, port, stop: () => child.kill('SIGTERM') };
}

async function probe(server: Server, kind: RequestKind): Promise<Probe> {
  const { method, headers } = REQUESTS[kind];
  const response = await fetch(`http://127.0.0.1:${server.port}${REQUEST_PATH}`, { method, headers });
  await response.arrayBuffer();
  return { status: response.status, allowOrigin: response.headers.get('access-control-allow-origin') };
}

async function load(server: Server, kind: RequestKind, seconds: number): Promise<autocannon.Result> {
  const { method, headers } = REQUESTS[kind];
  return autocannon({
    url: `http://127.0.0.1:${server.port}${REQUEST_PATH}`,
    method: method as autocannon.Request['method'],
    headers: { ...headers },
    connections: 32,
    pipelining: 1,
    duration: seconds,
  });
}

async function runHttp(): Promise<{ cells: HttpCell[]; unavailable: Record<string, string>; seconds: number; rounds: number }> {
  const rounds = QUICK ? 1 : 5;
  const seconds = QUICK ? 2 : 3;
  const servers: Server[] = [];
  const unavailable: Record<string, string> = {};
  let port = 18_400;
  for (const config of CONFIGS) {
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
        // Warm-up: let the JIT settle before any measured run.
        await load(server, kind, 1);
      }
    }
    const samples = new Map<string, { rps: number[]; latency: number[]; failures: number }>();
    for (let round = 0; round < rounds; round++) {
      for (const kind of kinds) {
        // Interleaved: every configuration once per round, in a rotating order.
        for (const server of rotate(servers, round * 3 + (kind === 'get' ? 0 : 1))) {
          const result = await load(server, kind, seconds);
          const key = `${server.config}/${kind}`;
          const cell = samples.get(key) ?? { rps: [], latency: [], failures: 0 };
          cell.rps.push(result.requests.average);
          cell.latency.push(result.latency.p50);
          cell.failures += result.non2xx + result.errors + result.timeouts;
          samples.set(key, cell);
          log(`round ${round + 1}/${rounds} ${kind.padEnd(9)} ${server.config.padEnd(22)} ${Math.round(result.requests.average)} req/s`);
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
        cells.push({ config: server.config, kind, rounds: cell.rps, rps: median(cell.rps), p50LatencyMs: median(cell.latency), failures: cell.failures, probe: probed });
      }
    }
    return { cells, unavailable, seconds, rounds };
  } finally {
    for (const server of servers) server.stop();
  }
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

function report(micro: MicroResult, builds: BuildResult[], http: Awaited<ReturnType<typeof runHttp>>, meta: RunMeta): string {
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

  const cell = (config: ConfigName, kind: RequestKind) => http.cells.find((c) => c.config === config && c.kind === kind);
  const httpRatio = (config: ConfigName, kind: RequestKind): number | undefined => {
    const own = cell(config, kind);
    const base = cell(baselineOf(config), kind);
    return own && base ? own.rps / base.rps : undefined;
  };
  const adapterTargets: string[] = [];
  for (const [adapter, peers] of [
    ['express+ampcors', ['express+cors', 'express+toolbox-cors']],
    ['koa+ampcors', ['koa+@koa/cors']],
  ] as [ConfigName, ConfigName[]][]) {
    for (const kind of ['get', 'preflight'] as RequestKind[]) {
      const r = httpRatio(adapter, kind);
      if (r === undefined) {
        adapterTargets.push(`| ${adapter} keeps ≥ 0.97 of hello world, ${kind} | not measured (${http.unavailable[adapter] ?? 'no data'}) | — |`);
        continue;
      }
      adapterTargets.push(`| ${adapter} keeps ≥ 0.97 of hello world, ${kind} | ${fmt(r, 3)} | ${verdictMark(r >= 0.97)} |`);
      for (const peer of peers) {
        const p = httpRatio(peer, kind);
        if (p === undefined) continue;
        adapterTargets.push(`| ${adapter} ahead of ${peer.replace(/^\w+\+/, '')}, ${kind} | ${fmt(r, 3)} vs ${fmt(p, 3)} | ${verdictMark(r > p)} |`);
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

  const buildTable = [
    '| domains | what | cache origins | wall ms | CPU ms | retained heap MB |',
    '|---:|---|---:|---:|---:|---:|',
    ...builds.map((b) => `| ${b.domains.toLocaleString('en')} | ${b.what === 'allow-set' ? '`buildAllowSet`' : '`createVerifier` (rules + allow-set)'} | ${b.origins.toLocaleString('en')} | ${fmt(b.wallMs, 0)} | ${fmt(b.cpuMs, 0)} | ${mb(b.heapBytes)} |`),
  ].join('\n');

  const httpTable = [
    '| configuration | request | answered | req/s (median) | rounds (req/s) | p50 latency ms | × hello world |',
    '|---|---|---|---:|---|---:|---:|',
    ...http.cells.map((c) => {
      const r = httpRatio(c.config, c.kind);
      const answered = `${c.probe.status}${c.probe.allowOrigin === null ? '' : ' + ACAO'}${c.failures > 0 ? `, ${c.failures} failures` : ''}`;
      return `| ${c.config} | ${c.kind} | ${answered} | ${fmt(c.rps, 0)} | ${c.rounds.map((x) => fmt(x, 0)).join(' / ')} | ${fmt(c.p50LatencyMs, 1)} | ${r === undefined ? '' : fmt(r, 3)} |`;
    }),
    ...Object.entries(http.unavailable).map(([config, why]) => `| ${config} | — | not run: ${why} | | | | |`),
  ].join('\n');

  return `# ampcors benchmark results

Generated by \`pnpm bench\`${QUICK ? ' (**--quick**: fewer rounds, shorter runs, no 1M micro set)' : ''} on ${meta.generatedAt}, commit \`${commit}\`, in ${fmt(elapsedS, 0)} s.

Machine: ${cpu.length} × ${cpu[0]?.model ?? 'unknown CPU'}, ${fmt(totalmem() / 2 ** 30, 1)} GiB RAM, Node ${process.version}, ${process.platform}/${process.arch}; load average at the end ${load}${HAS_TASKSET ? '' : '; taskset unavailable, nothing pinned'}.
This machine is shared (other engineers' test and mutation runs): absolute figures drift between runs, ratios measured in the same run hold better.

Rerun: \`pnpm bench\` (builds every package, then the benchmarks; about 8 minutes) or, after a build, \`pnpm --filter @ampcors/bench run bench:quick\` (about 2 minutes).

## Targets

${targets.join('\n')}

## Why targets are missed, and what it would take

- **\`verify\` of a readable allowed cache origin vs 2× the floor**: the allow-set lookup alone stays within 2× of the floor (its own row: one \`Map.get\` on the raw header, no SHA-256, no punycode). The rest is \`verifier.ts\` building a fresh 8-field verdict object per call (plus the \`prefix.includes('-')\` test and \`withSource\`). It would take, in \`verifier.ts\` (not this benchmark's to change): build the \`AllowedVerdict\` once per allow-set entry (each entry belongs to one origin string, so the verdict is the same every time) and return it when there is no \`sourceOrigin\` to check — the cost then is the lookup alone.
- **HTTP ratios**: the machine is shared with other engineers' test and mutation runs (load average often 10+ on 2 cores), so single runs swing by 2× (see the per-round columns) and ratios of a few percent are not resolvable; peers sometimes beat their own hello world. A quiet machine (or \`wrk\` with longer runs) is needed to check the 0.97 target. Beyond noise, the adapters do more per request than \`cors\` (AMP source-origin check, \`Vary\`, credentials, the AMP headers); the Koa and Fetch adapters are the ones to profile first.
- **1M build in 5 s** is met in CPU time; wall time on this machine is about twice the CPU time because the process gets about half a core.

## Micro benchmarks

mitata \`measure\`, every case in ${micro.cases[0]?.rounds.length ?? 0} interleaved rounds; figure = median of the rounds' p50. Time is process CPU time (user + system), so a benchmark is not charged for time it spent descheduled. Inputs cycle through up to 1,024 distinct strings held in an array (V8 caches a string's hash, so the floor and \`verify\` both see cached hashes). The floor is \`Set.has\` of a 45-character string in a \`Set\` of as many strings as the allow-set has publisher domains; "× floor" is the median over rounds of the ratio to the floor measured in the same round. Verifiers trust N exact domains (every tenth one long enough to be hashed) plus \`*.wildcard-publisher.com\`.

${microTable(micro)}

Algorithms (no allow-set):

| function | ns/op (median) | rounds |
|---|---:|---|
${micro.cases
  .filter((c) => c.group === 'algorithm')
  .map((c) => `| ${c.name} | ${fmt(c.ns)} | ${c.rounds.map((r) => fmt(r)).join(' / ')} |`)
  .join('\n')}

## Allow-set construction

Each run in a fresh process (\`node --expose-gc\`); retained heap = heap used after full GCs with the structure, minus heap used after dropping it (the domain list itself is not counted: the caller holds it).

${buildTable}

## HTTP

autocannon on 127.0.0.1, 32 connections, no pipelining, ${http.seconds} s per run, ${http.rounds} interleaved round(s) after a 1 s warm-up per configuration; figure = median req/s. ${HAS_TASKSET ? `Servers pinned with \`taskset -c ${SERVER_CORE}\`, the load generator on core ${LOAD_CORE}.` : ''} Request: \`${REQUESTS.get.method} /api/items?__amp_source_origin=…\` with \`Origin: ${REQUEST_ORIGIN}\` (an allowed cache origin), and the preflight \`OPTIONS\` of a POST with \`content-type\`. "× hello world" divides by the same framework's hello world measured in the same run. "answered" is the status of a probe request (and whether it carried \`Access-Control-Allow-Origin\`).

- **cors**: \`cors({ origin: [30 origins], credentials: true })\`; **@koa/cors**: an origin function over the same list, \`credentials: true\`.
- **toolbox-cors** (2.10.1) fetches \`https://cdn.ampproject.org/caches.json\` on its first request. Made offline through its documented second argument, the cache list: \`toolboxCors({}, { list: async () => CACHES })\` with ampcors's bundled registry, so nothing touches the network. It acts only on requests carrying \`__amp_source_origin\` (hence the query string on every configuration) and does not answer preflights itself (Express's automatic OPTIONS answer does).
- **fetch**: a 20-line \`node:http\` → \`Request\`/\`Response\` bridge (bench/src/http/server.ts) around a hello-world handler, with and without \`withAmpCors\`.

${httpTable}
`;
}

async function main(): Promise<void> {
  if (REWRITE) {
    // Rewrites RESULTS.md from the last run's raw figures (after a template change).
    const saved = JSON.parse(readFileSync(join(DIST, 'results.json'), 'utf8')) as { micro: MicroResult; builds: BuildResult[]; http: Awaited<ReturnType<typeof runHttp>>; meta: RunMeta };
    writeFileSync(join(BENCH_ROOT, 'RESULTS.md'), report(saved.micro, saved.builds, saved.http, saved.meta));
    return;
  }
  const started = performance.now();
  if (HAS_TASKSET) execFileSync('taskset', ['-cp', LOAD_CORE, String(process.pid)], { stdio: 'ignore' });
  log(`micro benchmarks${QUICK ? ' (quick)' : ''}`);
  const micro = runMicro();
  const builds = runBuilds();
  log('HTTP');
  const http = await runHttp();
  const meta = runMeta((performance.now() - started) / 1e3);
  const markdown = report(micro, builds, http, meta);
  mkdirSync(BENCH_ROOT, { recursive: true });
  writeFileSync(join(BENCH_ROOT, 'RESULTS.md'), markdown);
  writeFileSync(join(DIST, 'results.json'), JSON.stringify({ micro, builds, http, meta }, null, 2));
  log(`wrote ${join(BENCH_ROOT, 'RESULTS.md')}`);
}

await main();
