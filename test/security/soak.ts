/**
 * `pnpm --filter @ampcors/tests run soak`: a bounded soak of each adapter on
 * loopback with autocannon — allowed POSTs (cache origin), denied POSTs and
 * preflights, in equal parts — checking every response's status and
 * `Access-Control-Allow-Origin`, and the server's heap after a forced GC
 * before and after. Writes test/security/SOAK.md; exits 1 on any error or
 * wrong verdict.
 * Usage: tsx test/security/soak.ts [--requests N per adapter] [--seconds S per adapter] [--connections C] [--only adapter]
 */
import { writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import autocannonModule from 'autocannon';

/** The part of autocannon's options and result this script uses (its bundled types lag behind the API). */
interface SoakResult {
  requests: { total: number; average: number };
  latency: { p99: number };
  errors: number;
  timeouts: number;
}
type OnResponse = (status: number, body: string, context: unknown, headers: Record<string, string | string[]>) => void;
const start = autocannonModule as unknown as (options: Record<string, unknown>, done: (error: Error | null, result: SoakResult) => void) => { stop(): void };

/** Runs autocannon until `amount` requests are done (its `amount` ignores `duration`) or `limitSeconds` have passed. */
function autocannon(options: Record<string, unknown>, limitSeconds = seconds): Promise<SoakResult> {
  return new Promise((resolve, reject) => {
    const instance = start(options, (error, result) => {
      clearTimeout(timer);
      if (error) reject(error);
      else resolve(result);
    });
    const timer = setTimeout(() => instance.stop(), limitSeconds * 1000);
  });
}
import { ADAPTERS, startApi } from './servers.js';

setFlagsFromString('--expose-gc');
const gc = runInNewContext('gc') as () => void;

function option(name: string, fallback: number): number {
  const index = process.argv.indexOf(name);
  return index < 0 ? fallback : Number(process.argv[index + 1]);
}
const amount = option('--requests', 1_000_000);
const seconds = option('--seconds', 600);
const connections = option('--connections', 32);
const onlyIndex = process.argv.indexOf('--only');
const only = onlyIndex < 0 ? undefined : process.argv[onlyIndex + 1];

const ALLOWED = 'https://www-example-com.cdn.ampproject.org';
const DENIED = 'https://evil-example-com.cdn.ampproject.org';

function heapMb(): number {
  for (let i = 0; i < 3; i++) gc();
  return process.memoryUsage().heapUsed / 2 ** 20;
}

interface Row {
  adapter: string;
  requests: number;
  errors: number;
  timeouts: number;
  wrong: number;
  rps: number;
  p99: number;
  heapStart: number;
  heapEnd: number;
  handlerRuns: number;
}

const rows: Row[] = [];
for (const adapter of ADAPTERS) {
  if (only !== undefined && adapter !== only) continue;
  const api = await startApi(adapter, { publishers: ['example.com', 'www.example.com'] });
  // Warm up, then measure the heap the soak starts from.
  await autocannon({ url: `${api.url}/api`, amount: 5_000, connections });
  const heapStart = heapMb();
  const runsBefore = api.handlerRuns;
  let wrong = 0;
  let allowedSent = 0;
  const check = (want: number, acao: string | undefined): OnResponse => (status, _body, _context, headers) => {
    const name = Object.keys(headers).find((key) => key.toLowerCase() === 'access-control-allow-origin');
    if (status !== want || (name === undefined ? undefined : headers[name]) !== acao) wrong++;
  };
  const allowedCheck = check(200, ALLOWED);
  const allowedPost: OnResponse = (...args) => {
    allowedSent++;
    allowedCheck(...args);
  };
  const result = await autocannon({
    url: api.url,
    connections,
    amount,
    timeout: 10,
    requests: [
      { method: 'POST', path: '/api', headers: { origin: ALLOWED, 'content-type': 'application/json' }, body: '{}', onResponse: allowedPost },
      { method: 'POST', path: '/api', headers: { origin: DENIED, 'content-type': 'application/json' }, body: '{}', onResponse: check(403, undefined) },
      { method: 'OPTIONS', path: '/api', headers: { origin: ALLOWED, 'access-control-request-method': 'POST', 'access-control-request-headers': 'content-type' }, onResponse: check(204, ALLOWED) },
    ],
  });
  const heapEnd = heapMb();
  // Each allowed POST ran the handler exactly once; denied POSTs and preflights never did. When the time
  // bound stops the run, up to one request per connection was in flight and its response is not counted.
  const extraRuns = api.handlerRuns - runsBefore - allowedSent;
  const inFlight = result.requests.total < amount ? connections : 0;
  if (extraRuns < 0 || extraRuns > inFlight) wrong += Math.abs(extraRuns);
  await api.close();
  const row: Row = {
    adapter,
    requests: result.requests.total,
    errors: result.errors,
    timeouts: result.timeouts,
    wrong,
    rps: Math.round(result.requests.average),
    p99: result.latency.p99,
    heapStart,
    heapEnd,
    handlerRuns: api.handlerRuns - runsBefore,
  };
  rows.push(row);
  console.log(
    `${adapter.padEnd(9)} ${row.requests} requests, ${row.errors} errors, ${row.timeouts} timeouts, ${row.wrong} wrong, ${row.rps} req/s, p99 ${row.p99} ms, heap ${heapStart.toFixed(1)} → ${heapEnd.toFixed(1)} MB`,
  );
}

const md = [
  '# Soak of the ampcors adapters',
  '',
  `Generated by \`pnpm --filter @ampcors/tests run soak\` (test/security/soak.ts) on ${new Date().toISOString().slice(0, 10)}, Node ${process.version}, ${connections} connections on loopback,`,
  `requests asked per adapter: ${amount} (bounded to ${seconds} s). Mix: allowed POST (\`${ALLOWED}\`), denied POST (\`${DENIED}\`), preflight, in equal parts.`,
  'A wrong verdict is a response whose status or `Access-Control-Allow-Origin` differs from the expected one (200 + echo, 403 + none, 204 + echo),',
  'or a handler run by anything but an allowed POST. Heap: `heapUsed` of the server process after a forced GC, after warm-up and at the end.',
  '',
  '| adapter | requests | errors | timeouts | wrong verdicts | req/s | p99 ms | heap start MB | heap end MB |',
  '|---|---|---|---|---|---|---|---|---|',
  ...rows.map((r) => `| ${r.adapter} | ${r.requests} | ${r.errors} | ${r.timeouts} | ${r.wrong} | ${r.rps} | ${r.p99} | ${r.heapStart.toFixed(1)} | ${r.heapEnd.toFixed(1)} |`),
  '',
].join('\n');
writeFileSync(fileURLToPath(new URL('./SOAK.md', import.meta.url)), md);
process.exit(rows.some((r) => r.errors > 0 || r.timeouts > 0 || r.wrong > 0) ? 1 : 0);
