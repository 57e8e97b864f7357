/**
 * `pnpm --filter @ampcors/tests run soak`: a soak of each adapter on loopback
 * with autocannon, one adapter after another, at least 1M requests each.
 *
 * The publisher API (test/security/servers.ts) runs in a child process (this
 * script with `--serve <adapter>`), so that the server and autocannon each
 * get a core and the server's heap is measured alone. Requests are HTTP/1.1
 * pipelined; autocannon pairs every response with the request it answers
 * (FIFO per connection), and every response is checked: status,
 * `Access-Control-Allow-Origin`, `Access-Control-Allow-Credentials`, `Vary`,
 * and whether the handler ran (it alone sets `X-Verdict`). The mix, in equal
 * parts: allowed cache-origin POST, denied cache-origin POST, allowed
 * preflight, allowed publisher-origin GET, denied preflight, GET without
 * `Origin`. The server's heap is read after forced GCs after warm-up and at
 * the end.
 *
 * Writes test/security/SOAK.md and test/security/soak.json; exits 1 on any
 * error, timeout, wrong verdict or unchecked response, or when an adapter
 * stops short of the requested count.
 *
 * Usage: tsx test/security/soak.ts [--requests N per adapter] [--seconds S per adapter]
 *        [--connections C] [--pipelining P] [--only adapter[,adapter]] [--no-write]
 */
import { fork, type ChildProcess } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import autocannonModule from 'autocannon';
import { ADAPTERS, type AdapterName, startApi } from './servers.js';

/** The publisher configuration of every adapter in the soak. */
const CONFIG = { publishers: ['example.com', 'www.example.com'] };
const ALLOWED_CACHE = 'https://www-example-com.cdn.ampproject.org';
const DENIED_CACHE = 'https://evil-example-com.cdn.ampproject.org';
const ALLOWED_PUBLISHER = 'https://example.com';
const DENIED_ORIGIN = 'https://example.com.evil.com';

// ---------------------------------------------------------------------------
// Child: serve one adapter and answer the parent's questions over IPC.

/** A question from the parent process to the server process. */
type Question = { readonly ask: 'heap' } | { readonly ask: 'runs' } | { readonly ask: 'close' };

async function serve(adapter: AdapterName): Promise<void> {
  const gc = (globalThis as { gc?: () => void }).gc;
  if (gc === undefined) throw new Error('the soak server needs --expose-gc');
  const api = await startApi(adapter, CONFIG);
  const send = (message: unknown) => process.send?.(message);
  process.on('message', (question: Question) => {
    if (question.ask === 'heap') {
      for (let i = 0; i < 3; i++) gc();
      send({ heapMB: process.memoryUsage().heapUsed / 2 ** 20 });
    } else if (question.ask === 'runs') {
      send({ runs: api.handlerRuns, heapMB: process.memoryUsage().heapUsed / 2 ** 20 });
    } else {
      void api.close().then(() => process.exit(0));
    }
  });
  send({ url: api.url });
}

// ---------------------------------------------------------------------------
// Parent: drive each adapter with autocannon and check every response.

/** The part of autocannon's result this script uses (its bundled types lag behind the API). */
interface CannonResult {
  requests: { total: number; average: number };
  latency: { p99: number; average: number };
  errors: number;
  timeouts: number;
  duration: number;
}
type OnResponse = (status: number, body: string, context: unknown, headers: Record<string, string | string[]>) => void;
type Cannon = { stop(): void };
const start = autocannonModule as unknown as (options: Record<string, unknown>, done: (error: Error | null, result: CannonResult) => void) => Cannon;

/** One row of soak.json (the benchmark report embeds it). */
export interface SoakRow {
  readonly adapter: AdapterName;
  /** Responses received and checked (every one of them). */
  readonly requests: number;
  readonly errors: number;
  readonly timeouts: number;
  readonly wrongVerdicts: number;
  /** Checked responses per second of wall time. */
  readonly rps: number;
  /** 99th percentile latency of the 2xx responses (autocannon counts only those), ms. */
  readonly p99Ms: number;
  /** Server heap after forced GCs, after warm-up and at the end. */
  readonly heapStartMB: number;
  readonly heapEndMB: number;
  readonly seconds: number;
  readonly connections: number;
  readonly pipelining: number;
  /** ISO date and time the adapter's run ended. */
  readonly date: string;
}

function option(name: string, fallback: number): number {
  const index = process.argv.indexOf(name);
  if (index < 0) return fallback;
  const value = Number(process.argv[index + 1]);
  if (!Number.isFinite(value) || value <= 0) throw new Error(`${name} needs a positive number`);
  return value;
}

function headerOf(headers: Record<string, string | string[]>, name: string): string | undefined {
  for (const key in headers) {
    if (key.toLowerCase() === name) {
      const value = headers[key];
      return Array.isArray(value) ? value.join(', ') : value;
    }
  }
  return undefined;
}

/** What one kind of request must get back. */
interface Expectation {
  readonly status: number;
  /** The `Access-Control-Allow-Origin` value, or undefined for none. */
  readonly acao: string | undefined;
  /** The handler's `X-Verdict`, or undefined when the handler must not run. */
  readonly verdict: string | undefined;
}

/** Checks one response against `want`; returns a description of what is wrong, or undefined. */
function wrongness(want: Expectation, status: number, headers: Record<string, string | string[]>): string | undefined {
  if (status !== want.status) return `status ${status}, want ${want.status}`;
  const acao = headerOf(headers, 'access-control-allow-origin');
  if (acao !== want.acao) return `Access-Control-Allow-Origin ${String(acao)}, want ${String(want.acao)}`;
  const acac = headerOf(headers, 'access-control-allow-credentials');
  if (acac !== (want.acao === undefined ? undefined : 'true')) return `Access-Control-Allow-Credentials ${String(acac)}`;
  const verdict = headerOf(headers, 'x-verdict');
  if (verdict !== want.verdict) return `handler ${verdict === undefined ? 'did not run' : `ran (${verdict})`}, want ${want.verdict ?? 'no run'}`;
  const vary = headerOf(headers, 'vary') ?? '';
  if (!vary.split(',').some((name) => name.trim().toLowerCase() === 'origin')) return `Vary ${JSON.stringify(vary)} without Origin`;
  return undefined;
}

interface Counters {
  checked: number;
  wrong: number;
  /** Handler runs the responses show (X-Verdict present). */
  handlerRuns: number;
  firstWrong: string | undefined;
}

function requestsFor(counters: Counters): Record<string, unknown>[] {
  const preflightHeaders = (origin: string) => ({ origin, 'access-control-request-method': 'POST', 'access-control-request-headers': 'content-type' });
  const kinds: Array<{ name: string; request: Record<string, unknown>; want: Expectation }> = [
    {
      name: 'allowed cache POST',
      request: { method: 'POST', path: '/api', headers: { origin: ALLOWED_CACHE, 'content-type': 'application/json' }, body: '{}' },
      want: { status: 200, acao: ALLOWED_CACHE, verdict: 'cache-origin' },
    },
    {
      name: 'denied cache POST',
      request: { method: 'POST', path: '/api', headers: { origin: DENIED_CACHE, 'content-type': 'application/json' }, body: '{}' },
      want: { status: 403, acao: undefined, verdict: undefined },
    },
    {
      name: 'allowed preflight',
      request: { method: 'OPTIONS', path: '/api', headers: preflightHeaders(ALLOWED_CACHE) },
      want: { status: 204, acao: ALLOWED_CACHE, verdict: undefined },
    },
    {
      name: 'allowed publisher GET',
      request: { method: 'GET', path: '/api', headers: { origin: ALLOWED_PUBLISHER } },
      want: { status: 200, acao: ALLOWED_PUBLISHER, verdict: 'publisher-origin' },
    },
    {
      name: 'denied preflight',
      request: { method: 'OPTIONS', path: '/api', headers: preflightHeaders(DENIED_ORIGIN) },
      want: { status: 403, acao: undefined, verdict: undefined },
    },
    { name: 'GET without Origin', request: { method: 'GET', path: '/api', headers: {} }, want: { status: 200, acao: undefined, verdict: 'missing' } },
  ];
  return kinds.map(({ name, request, want }) => {
    const onResponse: OnResponse = (status, _body, _context, headers) => {
      counters.checked++;
      if (headerOf(headers, 'x-verdict') !== undefined) counters.handlerRuns++;
      const wrong = wrongness(want, status, headers);
      if (wrong !== undefined) {
        counters.wrong++;
        counters.firstWrong ??= `${name}: ${wrong}`;
      }
    };
    return { ...request, onResponse };
  });
}

/** The server process of one adapter. */
interface Served {
  readonly url: string;
  ask<T>(question: Question): Promise<T>;
  close(): Promise<void>;
}

function startServer(adapter: AdapterName): Promise<Served> {
  const child: ChildProcess = fork(fileURLToPath(import.meta.url), ['--serve', adapter], {
    execArgv: [...process.execArgv, '--expose-gc'],
    stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
  });
  let pending: ((message: unknown) => void) | undefined;
  child.on('message', (message) => {
    const resolve = pending;
    pending = undefined;
    resolve?.(message);
  });
  const ask = <T>(question: Question): Promise<T> =>
    new Promise<T>((resolve, reject) => {
      if (pending !== undefined) return reject(new Error('one question at a time'));
      pending = resolve as (message: unknown) => void;
      child.send(question);
    });
  return new Promise((resolve, reject) => {
    child.once('error', reject);
    child.once('exit', (code) => reject(new Error(`${adapter} server exited with ${code}`)));
    pending = (message) => {
      const { url } = message as { url: string };
      resolve({
        url,
        ask,
        close: () =>
          new Promise<void>((done) => {
            child.removeAllListeners('exit');
            child.once('exit', () => done());
            child.send({ ask: 'close' });
          }),
      });
    };
  });
}

/** Runs autocannon to `amount` responses or `limitSeconds`, printing progress every `progressSeconds`. */
function cannon(options: Record<string, unknown>, limitSeconds: number, onProgress?: () => void, progressSeconds = 15): Promise<CannonResult> {
  return new Promise((resolve, reject) => {
    const progress = onProgress === undefined ? undefined : setInterval(onProgress, progressSeconds * 1000);
    const instance = start(options, (error, result) => {
      clearTimeout(timer);
      if (progress !== undefined) clearInterval(progress);
      if (error) reject(error);
      else resolve(result);
    });
    const timer = setTimeout(() => instance.stop(), limitSeconds * 1000);
  });
}

async function soakOne(
  adapter: AdapterName,
  amount: number,
  seconds: number,
  connections: number,
  pipelining: number,
): Promise<SoakRow & { handlerRunsSeen: number; handlerRunsServer: number; firstWrong?: string; shortBy: number }> {
  const server = await startServer(adapter);
  try {
    // Warm-up (checked as well, not counted), then the heap the soak starts from.
    const warm: Counters = { checked: 0, wrong: 0, handlerRuns: 0, firstWrong: undefined };
    await cannon({ url: server.url, amount: 6_000, connections, pipelining, requests: requestsFor(warm) }, 120);
    const { heapMB: heapStartMB } = await server.ask<{ heapMB: number }>({ ask: 'heap' });
    const { runs: runsBefore } = await server.ask<{ runs: number }>({ ask: 'runs' });

    const counters: Counters = { checked: 0, wrong: 0, handlerRuns: 0, firstWrong: undefined };
    const began = performance.now();
    let last = { at: began, checked: 0 };
    const progress = () => {
      const now = performance.now();
      const rate = ((counters.checked - last.checked) * 1000) / (now - last.at);
      last = { at: now, checked: counters.checked };
      console.log(
        `  ${adapter.padEnd(9)} ${String(counters.checked).padStart(8)} checked (${((100 * counters.checked) / amount).toFixed(0)}%), ${Math.round(rate)} req/s now, ${counters.wrong} wrong, ${((now - began) / 1000).toFixed(0)} s`,
      );
    };
    // autocannon stops a connection when its share is sent, dropping up to `pipelining - 1` answers in
    // flight on it: ask for that much more, so that at least `amount` responses are received and checked.
    const result = await cannon(
      { url: server.url, connections, pipelining, amount: amount + connections * pipelining, timeout: 10, requests: requestsFor(counters) },
      seconds,
      progress,
    );
    const elapsed = (performance.now() - began) / 1000;
    const { runs: runsAfter } = await server.ask<{ runs: number }>({ ask: 'runs' });
    const { heapMB: heapEndMB } = await server.ask<{ heapMB: number }>({ ask: 'heap' });
    let wrongVerdicts = counters.wrong;
    // Every counted response was checked; the server's own count of handler runs must match the responses,
    // give or take the requests sent but not answered when autocannon closed the connections.
    const runsServer = runsAfter - runsBefore;
    const slack = connections * pipelining;
    if (runsServer < counters.handlerRuns || runsServer > counters.handlerRuns + slack) wrongVerdicts += Math.abs(runsServer - counters.handlerRuns);
    if (counters.checked !== result.requests.total) wrongVerdicts += Math.abs(result.requests.total - counters.checked);
    return {
      adapter,
      requests: counters.checked,
      errors: result.errors,
      timeouts: result.timeouts,
      wrongVerdicts,
      rps: Math.round(counters.checked / elapsed),
      p99Ms: result.latency.p99,
      heapStartMB: Math.round(heapStartMB * 10) / 10,
      heapEndMB: Math.round(heapEndMB * 10) / 10,
      seconds: Math.round(elapsed),
      connections,
      pipelining,
      date: new Date().toISOString(),
      handlerRunsSeen: counters.handlerRuns,
      handlerRunsServer: runsServer,
      shortBy: Math.max(0, amount - counters.checked),
      ...(counters.firstWrong !== undefined && { firstWrong: counters.firstWrong }),
    };
  } finally {
    await server.close();
  }
}

async function main(): Promise<void> {
  const amount = option('--requests', 1_000_000);
  const seconds = option('--seconds', 900);
  const connections = option('--connections', 32);
  const pipelining = option('--pipelining', 10);
  const onlyIndex = process.argv.indexOf('--only');
  const only = onlyIndex < 0 ? undefined : (process.argv[onlyIndex + 1] ?? '').split(',');
  const write = !process.argv.includes('--no-write');
  const adapters = ADAPTERS.filter((adapter) => only === undefined || only.includes(adapter));
  if (adapters.length === 0) throw new Error(`--only names none of ${ADAPTERS.join(', ')}`);
  console.log(
    `soak: ${amount} requests per adapter (${adapters.join(', ')}), at most ${seconds} s each, ${connections} connections × pipelining ${pipelining}, Node ${process.version}`,
  );
  const started = Date.now();
  const rows: Awaited<ReturnType<typeof soakOne>>[] = [];
  for (const adapter of adapters) {
    const row = await soakOne(adapter, amount, seconds, connections, pipelining);
    rows.push(row);
    console.log(
      `${adapter.padEnd(9)} ${row.requests} requests checked in ${row.seconds} s, ${row.errors} errors, ${row.timeouts} timeouts, ${row.wrongVerdicts} wrong, ${row.rps} req/s, p99 ${row.p99Ms} ms, heap ${row.heapStartMB} → ${row.heapEndMB} MB, handler runs ${row.handlerRunsSeen} seen / ${row.handlerRunsServer} on the server${row.shortBy > 0 ? ` — time bound reached, ${row.shortBy} short` : ''}`,
    );
    if (row.firstWrong !== undefined) console.log(`  first wrong response: ${row.firstWrong}`);
  }
  const minutes = (Date.now() - started) / 60_000;
  const json: SoakRow[] = rows.map(({ handlerRunsSeen: _seen, handlerRunsServer: _server, firstWrong: _first, shortBy: _short, ...row }) => row);
  const date = new Date().toISOString().slice(0, 10);
  const md = [
    '# Soak of the ampcors adapters',
    '',
    `Generated by \`pnpm --filter @ampcors/tests run soak\` (test/security/soak.ts) on ${date}, Node ${process.version}, ${process.platform}/${process.arch},`,
    `on a shared 2-core machine (other jobs were running). Total duration ${minutes.toFixed(1)} min; the adapters ran one after another.`,
    '',
    `- Requests asked per adapter: ${amount} checked responses, each adapter bounded to ${seconds} s.`,
    `- Load: autocannon in this process, the server in a child process, ${connections} connections on loopback, HTTP/1.1 pipelining ${pipelining}`,
    '  (autocannon pairs each response with its request, first in first out per connection, so every response is checked).',
    `- Configuration: \`${JSON.stringify(CONFIG)}\`, default options (denied origins answered 403).`,
    `- Mix, in equal parts: allowed cache-origin POST (\`${ALLOWED_CACHE}\`: 200 + echo), denied cache-origin POST (\`${DENIED_CACHE}\`: 403),`,
    `  allowed preflight (204 + echo), allowed publisher-origin GET (\`${ALLOWED_PUBLISHER}\`: 200 + echo), denied preflight (\`${DENIED_ORIGIN}\`: 403),`,
    '  GET without `Origin` (200, no CORS headers).',
    '- A wrong verdict: a status, `Access-Control-Allow-Origin`, `Access-Control-Allow-Credentials` or handler run (`X-Verdict`, set only by the',
    '  handler) other than expected, `Vary` without `Origin`, or a server-side count of handler runs that the responses do not explain.',
    '- Heap: `heapUsed` of the server process after three forced GCs, after a 6,000-request warm-up and at the end.',
    '',
    '| adapter | requests | errors | timeouts | wrong verdicts | seconds | req/s | p99 ms (2xx) | heap start MB | heap end MB |',
    '|---|---|---|---|---|---|---|---|---|---|',
    ...rows.map(
      (r) =>
        `| ${r.adapter} | ${r.requests} | ${r.errors} | ${r.timeouts} | ${r.wrongVerdicts} | ${r.seconds} | ${r.rps} | ${r.p99Ms} | ${r.heapStartMB.toFixed(1)} | ${r.heapEndMB.toFixed(1)} |`,
    ),
    '',
    'The same figures, machine-readable: [soak.json](soak.json).',
    '',
  ].join('\n');
  if (write) {
    writeFileSync(fileURLToPath(new URL('./SOAK.md', import.meta.url)), md);
    writeFileSync(fileURLToPath(new URL('./soak.json', import.meta.url)), `${JSON.stringify(json, null, 2)}\n`);
  }
  const failed = rows.some((r) => r.errors > 0 || r.timeouts > 0 || r.wrongVerdicts > 0 || r.shortBy > 0);
  process.exit(failed ? 1 : 0);
}

const serveIndex = process.argv.indexOf('--serve');
if (serveIndex >= 0) {
  await serve(process.argv[serveIndex + 1] as AdapterName);
} else {
  await main();
}
