/**
 * Where a benchmark server's CPU goes: starts `dist/http/server.mjs <config>`
 * under `node --cpu-prof`, loads it with autocannon, stops it, and sums the
 * V8 profile's self time by origin (ampcors core, the adapter, the framework,
 * Node internals, GC, idle) and by function. A development tool for the
 * adapters' hot paths; `pnpm bench` does not run it.
 *
 * Usage: node dist/profile.mjs <config> [get|get-source|preflight] [seconds] [top]
 */
import { spawn } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import autocannon from 'autocannon';
import { type CpuProfile, summarize } from './cpu-profile.js';
import { type ConfigName, CONFIGS, REQUESTS, type RequestKind } from './http/configs.js';

const DIST = dirname(fileURLToPath(import.meta.url));

async function main(): Promise<void> {
  const config = process.argv[2] as ConfigName;
  const kind = (process.argv[3] ?? 'get') as RequestKind;
  const seconds = Number(process.argv[4] ?? 5);
  const top = Number(process.argv[5] ?? 25);
  if (!CONFIGS.includes(config) || !(kind in REQUESTS)) throw new Error(`usage: profile.mjs <${CONFIGS.join('|')}> [get|get-source|preflight] [seconds] [top]`);
  const dir = mkdtempSync(join(tmpdir(), 'ampcors-prof-'));
  const port = 18_390;
  const child = spawn(
    process.execPath,
    ['--cpu-prof', `--cpu-prof-dir=${dir}`, '--cpu-prof-interval=100', join(DIST, 'http', 'server.mjs'), config, String(port)],
    {
      stdio: ['pipe', 'pipe', 'inherit'],
    },
  );
  await new Promise<void>((resolve, reject) => {
    child.stdout.once('data', (chunk: Buffer) => (chunk.toString().startsWith('ready') ? resolve() : reject(new Error(chunk.toString()))));
  });
  const { method, path, headers } = REQUESTS[kind];
  const options = {
    url: `http://127.0.0.1:${port}${path}`,
    method: method as autocannon.Request['method'],
    headers: { ...headers },
    connections: 32,
    pipelining: 1,
  };
  await autocannon({ ...options, duration: 1 });
  const result = await autocannon({ ...options, duration: seconds });
  const exited = new Promise<void>((resolve) => child.on('exit', () => resolve()));
  child.stdin.end();
  await exited;
  const file = readdirSync(dir).find((name) => name.endsWith('.cpuprofile'));
  if (file === undefined) throw new Error('no profile written');
  const profile = JSON.parse(readFileSync(join(dir, file), 'utf8')) as CpuProfile;
  const summary = summarize(profile, top);
  const requests = result.requests.total;
  const perRequest = (share: number): string => ((share * summary.busyUs) / requests).toFixed(2).padStart(7);
  const out: string[] = [
    `${config} ${kind}: ${requests} requests in ${seconds} s (${Math.round(result.requests.average)} req/s); profiled busy time ${(summary.busyUs / 1e3).toFixed(0)} ms = ${(summary.busyUs / requests).toFixed(1)} µs/request (sampling overhead included)`,
    '',
  ];
  for (const row of summary.groups) out.push(`${(100 * row.share).toFixed(1).padStart(5)}%  ${perRequest(row.share)} µs/req  ${row.name}`);
  out.push('');
  for (const row of summary.functions) out.push(`${(100 * row.share).toFixed(1).padStart(5)}%  ${perRequest(row.share)} µs/req  ${row.name}`);
  process.stdout.write(`${out.join('\n')}\n`);
}

await main();
