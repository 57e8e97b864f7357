/**
 * Starts one benchmark server on 127.0.0.1 and prints `ready` (or
 * `unavailable: <why>` and exits 3 when a package cannot be loaded).
 *
 * Usage: node dist/http/server.mjs <config> <port>
 */
import { createServer, type IncomingMessage, type RequestListener, type ServerResponse } from 'node:http';
import { CACHES } from '@ampcors/core';
import { type ConfigName, CONFIGS, ORIGIN_LIST, PUBLISHERS } from './configs.js';

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
  }
  app.get('/api/items', (_req, res) => {
    res.send(BODY);
  });
  return app as unknown as RequestListener;
}

async function koaListener(config: ConfigName): Promise<RequestListener> {
  const { default: Koa } = await import('koa');
  const app = new Koa();
  if (config === 'koa+@koa/cors') {
    const { default: koaCors } = await import('@koa/cors');
    const allowed = new Set(ORIGIN_LIST);
    app.use(koaCors({ origin: (ctx) => (allowed.has(ctx.get('Origin')) ? ctx.get('Origin') : ''), credentials: true }));
  } else if (config === 'koa+ampcors') {
    const { ampCors } = await import('@ampcors/koa');
    app.use(ampCors({ publishers: PUBLISHERS }) as unknown as Parameters<typeof app.use>[0]);
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
  process.on('SIGTERM', () => server.close(() => process.exit(0)));
}

await main();
