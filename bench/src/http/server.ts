/**
 * Starts one benchmark server on 127.0.0.1 (a configuration of apps.ts) and
 * prints `ready` (or `unavailable: <why>` and exits 3 when a package cannot
 * be loaded).
 *
 * Control channel, outside the measured load: every line `cpu` read on stdin
 * is answered on stdout with `cpu <user µs> <system µs>`, the process's CPU
 * time so far (all threads: JIT, GC and libuv included; system time includes
 * the kernel's loopback TCP work done on the server's behalf). The harness reads it
 * before and after a load run and divides by the requests autocannon
 * completed: CPU µs per request, which a busy machine disturbs far less than
 * requests per second (a descheduled server loses throughput, not CPU time).
 *
 * Usage: node dist/http/server.mjs <config> <port>
 */
import { createServer, type IncomingMessage, type RequestListener, type ServerResponse } from 'node:http';
import { ampcorsAnswers, buildApp, type FetchHandler, whyUnavailable } from '../apps.js';
import { type ConfigName, CONFIGS } from './configs.js';

/** A minimal node:http → Fetch API bridge (GET/OPTIONS bodies are not read). */
function fetchListener(handler: FetchHandler): RequestListener {
  return (req: IncomingMessage, res: ServerResponse) => {
    const headers = new Headers();
    for (let i = 0; i < req.rawHeaders.length; i += 2) headers.append(req.rawHeaders[i] as string, req.rawHeaders[i + 1] as string);
    const request = new Request(`http://${req.headers.host ?? '127.0.0.1'}${req.url ?? '/'}`, { method: req.method ?? 'GET', headers });
    Promise.resolve(handler(request))
      .then(async (response) => {
        res.statusCode = response.status;
        response.headers.forEach((value, name) => res.setHeader(name, value));
        res.end(Buffer.from(await response.arrayBuffer()));
      })
      .catch(() => {
        res.statusCode = 500;
        res.end();
      });
  };
}

async function main(): Promise<void> {
  const config = process.argv[2] as ConfigName;
  const port = Number(process.argv[3]);
  if (!CONFIGS.includes(config) || !Number.isInteger(port)) throw new Error(`usage: server.mjs <${CONFIGS.join('|')}> <port>`);
  let listener: RequestListener;
  try {
    const app = await buildApp(config, await ampcorsAnswers());
    listener = app.type === 'node' ? app.listener : fetchListener(app.handler);
  } catch (error) {
    process.stdout.write(`unavailable: ${whyUnavailable(error)}\n`);
    process.exit(3);
  }
  const server = createServer({ keepAliveTimeout: 60_000 }, listener);
  server.listen(port, '127.0.0.1', () => process.stdout.write('ready\n'));
  let pending = '';
  process.stdin.setEncoding('utf8');
  process.stdin.on('data', (chunk: string) => {
    pending += chunk;
    for (let end = pending.indexOf('\n'); end >= 0; end = pending.indexOf('\n')) {
      const command = pending.slice(0, end).trim();
      pending = pending.slice(end + 1);
      if (command === 'cpu') {
        const usage = process.cpuUsage();
        process.stdout.write(`cpu ${usage.user} ${usage.system}\n`);
      }
    }
  });
  // The harness went away: do not linger.
  process.stdin.on('end', () => server.close(() => process.exit(0)));
  process.on('SIGTERM', () => server.close(() => process.exit(0)));
}

await main();
