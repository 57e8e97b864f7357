/**
 * The Hono publisher API on Bun's built-in server. Run with `pnpm start:bun`.
 */
import { createApp } from './app.js';

declare const Bun: {
  version: string;
  serve(options: { fetch: (request: Request) => Response | Promise<Response>; port: number; hostname: string }): { port: number; stop(): Promise<void> };
};

const hostname = process.env.HOST ?? '127.0.0.1';
const server = Bun.serve({ fetch: createApp(`bun ${Bun.version}`).fetch, port: Number(process.env.PORT ?? 3006), hostname });
console.log(`ampcors example (hono on bun): publisher API listening on http://${hostname}:${server.port}`);

let stopping = false;
for (const signal of ['SIGINT', 'SIGTERM'] as const) {
  process.on(signal, () => {
    if (stopping) return;
    stopping = true;
    void server.stop().then(() => {
      console.log('stopped');
      process.exit(0);
    });
  });
}
