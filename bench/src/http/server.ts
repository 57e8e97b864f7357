/**
 * Starts one benchmark server on 127.0.0.1 and prints `ready` (or
 * `unavailable: <why>` and exits 3 when a package cannot be loaded).
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
import { CACHES, type CorsPlan, createCorsPolicy } from '@ampcors/core';
import { type ConfigName, CONFIGS, ORIGIN_LIST, PUBLISHERS, REQUEST_ORIGIN } from './configs.js';

const BODY = 'hello world';

type FetchHandler = (request: Request) => Response | Promise<Response>;

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

/**
 * The `static-headers` reference: the plans ampcors makes for the measured
 * GET and preflight, decided once at start-up. A middleware replaying them
 * sends the same response headers as ampcors without deciding anything: the
 * cost of the headers themselves (setting, serializing, sending), which any
 * CORS middleware answering AMP requests pays.
 */
function staticPlans(): { readonly get: CorsPlan; readonly preflight: CorsPlan } {
  const policy = createCorsPolicy({ publishers: PUBLISHERS });
  const sourceOrigin = `https://${PUBLISHERS[0] as string}`;
  const plan = (request: Parameters<typeof policy.decide>[0]): CorsPlan => {
    const decided = policy.decide(request);
    if (decided instanceof Promise) throw new Error('the core verifier is synchronous');
    return decided.plan;
  };
  return {
    get: plan({ method: 'GET', origin: REQUEST_ORIGIN, sourceOrigin }),
    preflight: plan({ method: 'OPTIONS', origin: REQUEST_ORIGIN, requestMethod: 'POST', requestHeaders: 'content-type', sourceOrigin }),
  };
}

function replay(plan: CorsPlan, res: ServerResponse): void {
  for (const [name, value] of plan.headers) res.setHeader(name, value);
  res.setHeader('Vary', plan.vary.join(', '));
}

async function expressListener(config: ConfigName): Promise<RequestListener> {
  const { default: express } = await import('express');
  const app = express();
  if (config === 'express+cors') {
    const { default: cors } = await import('cors');
    app.use(cors({ origin: [...ORIGIN_LIST], credentials: true }));
  } else if (config === 'express+toolbox-cors') {
    const { default: toolboxCors } = await import('@ampproject/toolbox-cors');
    // Offline: its documented second argument is the cache list; a local one
    // answers with the bundled registry instead of fetching caches.json.
    const caches = { list: async () => CACHES, get: async (id: string) => CACHES.find((cache) => cache.id === id) };
    app.use(toolboxCors({}, caches));
  } else if (config === 'express+ampcors') {
    const { ampCors } = await import('@ampcors/express');
    app.use(ampCors({ publishers: PUBLISHERS }));
  } else if (config === 'express+static-headers') {
    const plans = staticPlans();
    app.use((req, res, next) => {
      const plan = req.method === 'OPTIONS' ? plans.preflight : plans.get;
      replay(plan, res);
      if (!plan.handled) return next();
      res.statusCode = plan.status;
      res.setHeader('Content-Length', '0');
      res.end();
    });
  }
  app.get('/api/items', (_req, res) => {
    res.send(BODY);
  });
  return app as unknown as RequestListener;
}

async function koaListener(config: ConfigName): Promise<RequestListener> {
  const { default: Koa } = await import('koa');
  const app = new Koa();
  // A load generator that stops with pipelined requests in flight makes Koa log
  // EPIPE for each; failures still show as autocannon's errors and non-2xx.
  app.silent = true;
  if (config === 'koa+@koa/cors') {
    const { default: koaCors } = await import('@koa/cors');
    const allowed = new Set(ORIGIN_LIST);
    app.use(koaCors({ origin: (ctx) => (allowed.has(ctx.get('Origin')) ? ctx.get('Origin') : ''), credentials: true }));
  } else if (config === 'koa+ampcors') {
    const { ampCors } = await import('@ampcors/koa');
    app.use(ampCors({ publishers: PUBLISHERS }) as unknown as Parameters<typeof app.use>[0]);
  } else if (config === 'koa+static-headers') {
    const plans = staticPlans();
    app.use(async (ctx, next) => {
      const plan = ctx.method === 'OPTIONS' ? plans.preflight : plans.get;
      replay(plan, ctx.res);
      if (!plan.handled) return next();
      ctx.status = plan.status;
      ctx.body = '';
    });
  }
  app.use((ctx) => {
    ctx.body = BODY;
  });
  return app.callback();
}

async function fetchHandler(config: ConfigName): Promise<RequestListener> {
  const hello: FetchHandler = () => new Response(BODY, { headers: { 'content-type': 'text/plain; charset=utf-8' } });
  if (config === 'fetch') return fetchListener(hello);
  const { withAmpCors } = await import('@ampcors/fetch');
  return fetchListener(withAmpCors(hello, { publishers: PUBLISHERS }));
}

async function main(): Promise<void> {
  const config = process.argv[2] as ConfigName;
  const port = Number(process.argv[3]);
  if (!CONFIGS.includes(config) || !Number.isInteger(port)) throw new Error(`usage: server.mjs <${CONFIGS.join('|')}> <port>`);
  let listener: RequestListener;
  try {
    listener = config.startsWith('express') ? await expressListener(config) : config.startsWith('koa') ? await koaListener(config) : await fetchHandler(config);
  } catch (error) {
    process.stdout.write(`unavailable: ${error instanceof Error ? error.message.split('\n')[0] : String(error)}\n`);
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
