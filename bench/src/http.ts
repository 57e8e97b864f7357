/**
 * The HTTP comparison (the method of the previous harness, kept): every
 * configuration as a server (http/server.ts) pinned to one core, autocannon
 * on the other, interleaved rounds after a counted warm-up; the figure is the
 * server's own CPU time per completed request, read over a control channel
 * outside the load.
 */
import { spawn } from 'node:child_process';
import { join } from 'node:path';
import autocannon from 'autocannon';
import { DIST, log, nodeCommand, SERVER_CORE } from './cli.js';
import { baselineOf, type ConfigName, KINDS, REQUESTS, type RequestKind } from './http/configs.js';
import { differences, median, rotate } from './stats.js';

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

export interface Probe {
  readonly status: number;
  readonly allowOrigin: string | null;
}

export interface HttpCell {
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
export interface HttpPlan {
  readonly configs: readonly ConfigName[];
  readonly rounds: number;
  readonly seconds: number;
  /**
   * Requests in flight per connection: with one, a server given a fraction
   * of a core handles about one request per wake-up and its CPU per request
   * depends on when the load generator gets to send; with ten every read
   * brings a batch, as on a saturated server.
   */
  readonly pipelining: number;
  /** Requests each configuration serves, per request kind, before anything is measured. */
  readonly warmUpRequests: number;
}

/** What the HTTP part reports. */
export interface HttpResult {
  readonly cells: HttpCell[];
  readonly unavailable: Record<string, string>;
  readonly seconds: number;
  readonly rounds: number;
  /** Requests in flight per connection. */
  readonly pipelining: number;
  readonly warmUpRequests: number;
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
  const response = await fetch(`http://127.0.0.1:${server.port}${REQUESTS[kind].path}`, { method, headers });
  await response.arrayBuffer();
  return { status: response.status, allowOrigin: response.headers.get('access-control-allow-origin') };
}

/** One autocannon run: for `seconds`, or for `amount` requests when given. */
async function load(server: Server, kind: RequestKind, pipelining: number, seconds: number, amount?: number): Promise<autocannon.Result> {
  const { method, headers } = REQUESTS[kind];
  return autocannon({
    url: `http://127.0.0.1:${server.port}${REQUESTS[kind].path}`,
    method: method as autocannon.Request['method'],
    headers: { ...headers },
    connections: 32,
    pipelining,
    ...(amount === undefined ? { duration: seconds } : { amount }),
  });
}

/** One measured run: autocannon's figures plus the server's CPU time over it. */
async function measuredLoad(
  server: Server,
  kind: RequestKind,
  pipelining: number,
  seconds: number,
): Promise<{ result: autocannon.Result; cpuUs: number; systemUs: number; wallUs: number }> {
  const before = await server.cpu();
  const wallBefore = performance.now();
  const result = await load(server, kind, pipelining, seconds);
  const after = await server.cpu();
  const systemUs = after.system - before.system;
  return { result, cpuUs: after.user - before.user + systemUs, systemUs, wallUs: (performance.now() - wallBefore) * 1e3 };
}

/** Runs the HTTP comparison. */
export async function runHttp(plan: HttpPlan): Promise<HttpResult> {
  const { rounds, seconds } = plan;
  const servers: Server[] = [];
  const unavailable: Record<string, string> = {};
  let port = 18_400;
  for (const config of plan.configs) {
    const started = await startServer(config, port++);
    if (typeof started === 'string') unavailable[config] = started.replace(/^unavailable: /, '');
    else servers.push(started);
  }
  try {
    const kinds = KINDS;
    const probes = new Map<string, Probe>();
    for (const server of servers) {
      for (const kind of kinds) {
        probes.set(`${server.config}/${kind}`, await probe(server, kind));
        // Warm-up by count, not time: a server given a fifth of a core runs
        // its first few thousand requests at 3-5× the settled CPU cost (not
        // yet optimized by V8), whatever the wall time.
        const warmed = await load(server, kind, plan.pipelining, 0, plan.warmUpRequests);
        log(`HTTP warm-up ${kind.padEnd(10)} ${server.config.padEnd(22)} ${warmed.requests.total} requests`);
      }
    }
    const samples = new Map<string, { rps: number[]; cpu: number[]; share: number[]; system: number[]; latency: number[]; failures: number }>();
    for (let round = 0; round < rounds; round++) {
      for (const kind of kinds) {
        // Interleaved: every configuration once per round, in a rotating order.
        for (const server of rotate(servers, round * 3 + kinds.indexOf(kind))) {
          const { result, cpuUs, systemUs, wallUs } = await measuredLoad(server, kind, plan.pipelining, seconds);
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
            `HTTP round ${round + 1}/${rounds} ${kind.padEnd(10)} ${server.config.padEnd(22)} ${String(Math.round(result.requests.average)).padStart(6)} req/s ${(cpuUs / completed).toFixed(1).padStart(7)} µs CPU/req (server at ${Math.round((100 * cpuUs) / wallUs)}% of a core, ${Math.round((100 * systemUs) / Math.max(cpuUs, 1))}% system)`,
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
    return { cells, unavailable, seconds, rounds, pipelining: plan.pipelining, warmUpRequests: plan.warmUpRequests };
  } finally {
    for (const server of servers) server.stop();
  }
}

/** A configuration's standing against its framework's hello world, from rounds measured side by side. */
export interface HttpRatio {
  /** Median over rounds of own req/s ÷ hello world req/s. */
  readonly rps: number;
  /** Median over rounds of hello world CPU µs/request ÷ own CPU µs/request (1 = costs nothing). */
  readonly cpu: number;
  /** Lowest and highest per-round CPU ratio: how well the median is resolved. */
  readonly cpuLow: number;
  readonly cpuHigh: number;
}

/** The cell of a configuration and kind. */
export function httpCellOf(http: HttpResult, config: ConfigName, kind: RequestKind): HttpCell | undefined {
  return http.cells.find((c) => c.config === config && c.kind === kind);
}

/** A configuration's standing against its framework's hello world. */
export function httpRatio(http: HttpResult, config: ConfigName, kind: RequestKind): HttpRatio | undefined {
  const own = httpCellOf(http, config, kind);
  const base = httpCellOf(http, baselineOf(config), kind);
  if (own === undefined || base === undefined) return undefined;
  const cpu = own.cpuRounds.map((c, i) => (base.cpuRounds[i] ?? base.cpuUsPerRequest) / c);
  return {
    rps: median(own.rounds.map((r, i) => r / (base.rounds[i] ?? base.rps))),
    cpu: median(cpu),
    cpuLow: Math.min(...cpu),
    cpuHigh: Math.max(...cpu),
  };
}

/**
 * Server CPU µs/request of `a` minus that of `b`, round by round (the HTTP
 * rounds are interleaved: in each round every configuration runs once per
 * request kind, seconds apart). For two configurations of one framework this
 * is also the difference of what they add to its hello world.
 */
export function httpCpuDifference(http: HttpResult, a: ConfigName, b: ConfigName, kind: RequestKind): number[] | undefined {
  const own = httpCellOf(http, a, kind);
  const other = httpCellOf(http, b, kind);
  if (own === undefined || other === undefined) return undefined;
  return differences(own.cpuRounds, other.cpuRounds);
}
