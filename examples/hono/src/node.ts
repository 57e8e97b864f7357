/**
 * The Hono publisher API on Node through `@hono/node-server`. Stops cleanly
 * on SIGINT or SIGTERM. Run with `pnpm start`.
 */
import { serve } from '@hono/node-server';
import { createApp } from './app.js';

const port = Number(process.env.PORT ?? 3006);
const hostname = process.env.HOST ?? '127.0.0.1';
const server = serve({ fetch: createApp(`node ${process.version}`).fetch, port, hostname }, (info) => {
  console.log(`ampcors example (hono on node): publisher API listening on http://${hostname.includes(':') ? `[${hostname}]` : hostname}:${info.port}`);
});

// Ctrl-C may arrive twice (from the terminal and forwarded by pnpm or npm): stopping is idempotent.
let stopping = false;
for (const signal of ['SIGINT', 'SIGTERM'] as const) {
  process.on(signal, () => {
    if (stopping) return;
    stopping = true;
    server.close(() => console.log('stopped'));
    if ('closeAllConnections' in server) server.closeAllConnections();
  });
}
