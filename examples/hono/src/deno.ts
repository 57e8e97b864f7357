/**
 * The Hono publisher API on `Deno.serve`, resolved from the workspace's
 * `node_modules` (deno.json: `"nodeModulesDir": "manual"`), so nothing is
 * downloaded at run time. Run with `pnpm start:deno`.
 */
import { createApp } from './app.js';

declare const Deno: {
  version: { deno: string };
  env: { get(name: string): string | undefined };
  serve(
    options: { port: number; hostname: string; onListen(address: { port: number }): void },
    handler: (request: Request) => Response | Promise<Response>,
  ): { shutdown(): Promise<void> };
  addSignalListener(signal: 'SIGINT' | 'SIGTERM', handler: () => void): void;
  exit(code: number): never;
};

const hostname = Deno.env.get('HOST') ?? '127.0.0.1';
const app = createApp(`deno ${Deno.version.deno}`);
const server = Deno.serve(
  {
    port: Number(Deno.env.get('PORT') ?? 3006),
    hostname,
    onListen: ({ port }) => console.log(`ampcors example (hono on deno): publisher API listening on http://${hostname}:${port}`),
  },
  app.fetch,
);

let stopping = false;
for (const signal of ['SIGINT', 'SIGTERM'] as const) {
  Deno.addSignalListener(signal, () => {
    if (stopping) return;
    stopping = true;
    void server.shutdown().then(() => {
      console.log('stopped');
      Deno.exit(0);
    });
  });
}
