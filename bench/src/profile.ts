/**
 * Where a benchmark server's CPU goes: starts `dist/http/server.mjs <config>`
 * under `node --cpu-prof`, loads it with autocannon, stops it, and sums the
 * V8 profile's self time by origin (ampcors core, the adapter, the framework,
 * Node internals, GC, idle) and by function. A development tool for the
 * adapters' hot paths; `pnpm bench` does not run it.
 *
 * Usage: node dist/profile.mjs <config> [get|preflight] [seconds] [top]
 */
import { spawn } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import autocannon from 'autocannon';
import { type ConfigName, CONFIGS, REQUEST_PATH, REQUESTS, type RequestKind } from './http/configs.js';

const DIST = dirname(fileURLToPath(import.meta.url));

interface ProfileNode {
  readonly id: number;
  readonly callFrame: { readonly functionName: string; readonly url: string; readonly lineNumber: number };
  readonly children?: readonly number[];
}

interface CpuProfile {
  readonly nodes: readonly ProfileNode[];
  readonly samples: readonly number[];
  readonly timeDeltas: readonly number[];
}

/** The group a frame's self time is charged to. */
function groupOf(url: string, name: string): string {
  if (name === '(garbage collector)') return 'GC';
  if (name === '(idle)') return 'idle';
  if (name === '(program)') return 'V8/native (program)';
  if (url.includes('/packages/core/')) return 'ampcors core';
  if (/\/packages\/(express|koa|fetch)\//.test(url)) return 'ampcors adapter';
  if (url.includes('/bench/dist/')) return 'bench server';
  const pkg = /node_modules\/(?:\.pnpm\/[^/]+\/node_modules\/)?((?:@[^/]+\/)?[^/]+)/.exec(url);
  if (pkg) return `package ${pkg[1]}`;
  if (url.startsWith('node:') || url === '') return 'node internals';
  return url;
}

async function main(): Promise<void> {
  const config = process.argv[2] as ConfigName;
  const kind = (process.argv[3] ?? 'get') as RequestKind;
  const seconds = Number(process.argv[4] ?? 5);
  const top = Number(process.argv[5] ?? 25);
  if (!CONFIGS.includes(config) || !(kind in REQUESTS)) throw new Error(`usage: profile.mjs <${CONFIGS.join('|')}> [get|preflight] [seconds] [top]`);
  const dir = mkdtempSync(join(tmpdir(), 'ampcors-prof-'));
  const port = 18_390;
  const child = spawn(process.execPath, ['--cpu-prof', `--cpu-prof-dir=${dir}`, '--cpu-prof-interval=100', join(DIST, 'http', 'server.mjs'), config, String(port)], {
    stdio: ['pipe', 'pipe', 'inherit'],
  });
  await new Promise<void>((resolve, reject) => {
    child.stdout.once('data', (chunk: Buffer) => (chunk.toString().startsWith('ready') ? resolve() : reject(new Error(chunk.toString()))));
  });
  const { method, headers } = REQUESTS[kind];
  const options = { url: `http://127.0.0.1:${port}${REQUEST_PATH}`, method: method as autocannon.Request['method'], headers: { ...headers }, connections: 32, pipelining: 1 };
  await autocannon({ ...options, duration: 1 });
  const result = await autocannon({ ...options, duration: seconds });
  const exited = new Promise<void>((resolve) => child.on('exit', () => resolve()));
  child.stdin.end();
  await exited;
  const file = readdirSync(dir).find((name) => name.endsWith('.cpuprofile'));
  if (file === undefined) throw new Error('no profile written');
  const profile = JSON.parse(readFileSync(join(dir, file), 'utf8')) as CpuProfile;
  const byId = new Map(profile.nodes.map((n) => [n.id, n]));
  const selfUs = new Map<number, number>();
  profile.samples.forEach((id, i) => selfUs.set(id, (selfUs.get(id) ?? 0) + (profile.timeDeltas[i] ?? 0)));
  const groups = new Map<string, number>();
  const functions = new Map<string, number>();
  let total = 0;
  for (const [id, us] of selfUs) {
    const { functionName, url, lineNumber } = (byId.get(id) as ProfileNode).callFrame;
    const group = groupOf(url, functionName);
    if (group === 'idle') continue;
    total += us;
    groups.set(group, (groups.get(group) ?? 0) + us);
    const key = `${functionName || '(anonymous)'} ${url.replace(/^.*\/(node_modules|packages|bench)\//, '$1/')}:${lineNumber + 1}`;
    functions.set(key, (functions.get(key) ?? 0) + us);
  }
  const requests = result.requests.total;
  const out: string[] = [`${config} ${kind}: ${requests} requests in ${seconds} s (${Math.round(result.requests.average)} req/s); profiled busy time ${(total / 1e3).toFixed(0)} ms = ${(total / requests).toFixed(1)} µs/request (sampling overhead included)`, ''];
  for (const [group, us] of [...groups].sort((a, b) => b[1] - a[1])) out.push(`${((100 * us) / total).toFixed(1).padStart(5)}%  ${(us / requests).toFixed(2).padStart(7)} µs/req  ${group}`);
  out.push('');
  for (const [name, us] of [...functions].sort((a, b) => b[1] - a[1]).slice(0, top)) out.push(`${((100 * us) / total).toFixed(1).padStart(5)}%  ${(us / requests).toFixed(2).padStart(7)} µs/req  ${name}`);
  process.stdout.write(`${out.join('\n')}\n`);
}

await main();
