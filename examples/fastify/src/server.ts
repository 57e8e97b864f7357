/** Starts the example publisher API (src/app.ts). Stops cleanly on SIGINT or SIGTERM. */
import { buildApp } from './app.js';

const port = Number(process.env.PORT ?? 3002);
const host = process.env.HOST ?? '127.0.0.1';
const { app } = await buildApp();
await app.listen({ port, host });
const address = app.server.address();
const bound = typeof address === 'object' && address !== null ? address.port : port;
console.log(`ampcors example (fastify): publisher API listening on http://${host.includes(':') ? `[${host}]` : host}:${bound}`);

// Ctrl-C may arrive twice (from the terminal and forwarded by pnpm or npm): stopping is idempotent.
let stopping = false;
for (const signal of ['SIGINT', 'SIGTERM'] as const) {
  process.on(signal, () => {
    if (stopping) return;
    stopping = true;
    void app.close().then(() => console.log('stopped'));
  });
}
