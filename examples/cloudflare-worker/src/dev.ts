/**
 * Runs the Worker locally in workerd, the Cloudflare Workers runtime, through
 * miniflare: bundles src/worker.ts with esbuild and applies wrangler.json
 * (`main`, `compatibility_date`, `vars`). `wrangler dev` reads the same file.
 */
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { build } from 'esbuild';
import { Miniflare } from 'miniflare';

interface WranglerConfig {
  readonly name: string;
  readonly main: string;
  readonly compatibility_date: string;
  readonly vars?: Record<string, string>;
}

const root = new URL('../', import.meta.url);
const config = JSON.parse(readFileSync(new URL('wrangler.json', root), 'utf8')) as WranglerConfig;
const scriptPath = fileURLToPath(new URL('dist/worker.js', root));

await build({
  entryPoints: [fileURLToPath(new URL(config.main, root))],
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
  name: config.name,
  modules: true,
  scriptPath,
  compatibilityDate: config.compatibility_date,
  bindings: config.vars ?? {},
  host,
  port: Number(process.env.PORT ?? 8787),
});
const url = await miniflare.ready;
console.log(`ampcors example (cloudflare-worker, workerd): publisher API listening on ${url.origin}`);

// On SIGINT (Ctrl-C) and SIGTERM, miniflare's own exit hook stops workerd and exits.
process.once('exit', () => console.log('stopped'));
