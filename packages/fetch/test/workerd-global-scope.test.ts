/**
 * @ampcors/fetch (and the @ampcors/core it imports) bundled from the sources
 * and loaded by workerd, which refuses random values, timers and I/O in a
 * Worker's global scope: importing and configuring at global scope, as
 * `export default { fetch: withAmpCors(…) }` does, must use none of them.
 */
import { fileURLToPath } from 'node:url';
import { build } from 'esbuild';
import { Miniflare } from 'miniflare';
import { expect, it } from 'vitest';

const src = (pkg: string, entry = 'index') => fileURLToPath(new URL(`../../${pkg}/src/${entry}.ts`, import.meta.url));

it('loads and answers in workerd when configured in global scope', async () => {
  const bundle = await build({
    stdin: {
      contents:
        "import { withAmpCors } from '@ampcors/fetch'; export default { fetch: withAmpCors(() => new Response('ok'), { publishers: ['example.com'] }) };",
      resolveDir: fileURLToPath(new URL('.', import.meta.url)),
      loader: 'ts',
    },
    alias: { '@ampcors/fetch': src('fetch'), '@ampcors/core/adapter': src('core', 'adapter'), '@ampcors/core': src('core') },
    bundle: true,
    format: 'esm',
    platform: 'neutral',
    mainFields: ['module', 'main'],
    write: false,
    logLevel: 'silent',
  });
  const mf = new Miniflare({ modules: true, script: bundle.outputFiles[0]?.text ?? '', compatibilityDate: '2024-09-23' });
  try {
    const cache = 'https://example-com.cdn.ampproject.org';
    const allowed = await mf.dispatchFetch('http://publisher.test/api', { headers: { Origin: cache } });
    expect([allowed.status, allowed.headers.get('access-control-allow-origin'), await allowed.text()]).toEqual([200, cache, 'ok']);
    const denied = await mf.dispatchFetch('http://publisher.test/api', { method: 'POST', headers: { Origin: 'https://evil.com' } });
    expect([denied.status, denied.headers.get('access-control-allow-origin')]).toEqual([403, null]);
    await denied.text();
  } finally {
    await mf.dispose();
  }
}, 60_000);
