/**
 * Runs src/worker.ts locally in workerd, the Cloudflare Workers runtime,
 * through miniflare (bundled by esbuild as wrangler would). Run with
 * `pnpm start:workerd`; `wrangler dev src/worker.ts` serves the same Worker.
 */
import { fileURLToPath } from 'node:url';
import { build } from 'esbuild';
import { Miniflare } from 'miniflare';

const root = new URL('../', import.meta.url);
const scriptPath = fileURLToPath(new URL('dist/worker.js', root));

await build({
  entryPoints: [fileURLToPath(new URL('src/worker.ts', root))],
  outfile: scriptPath,
  bundle: true,
  format: 'esm',
  platform: 'neutral',
  target: 'es2022',
  mainFields: ['module', 'main'],
  conditions: ['workerd', 'worker', 'browser', 'import'],
  logLevel: 'warning',
});

const host = process.env.HOST ?? '127.0.0.1';
const miniflare = new Miniflare({
  name: 'ampcors-example-hono',
  modules: true,
  scriptPath,
  compatibilityDate: '2025-06-01',
  host,
  port: Number(process.env.PORT ?? 8787),
});
const url = await miniflare.ready;
console.log(`ampcors example (hono on workerd): publisher API listening on ${url.origin}`);

// On SIGINT (Ctrl-C) and SIGTERM, miniflare's own exit hook stops workerd and exits.
process.once('exit', () => console.log('stopped'));
