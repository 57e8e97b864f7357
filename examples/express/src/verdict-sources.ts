/**
 * A publisher API on Express served from every verdict source ampcors has,
 * chosen by environment variables, alone or combined (tried in this order,
 * the first allow wins):
 *
 * - `PUBLISHERS` (comma-separated domains) and/or `ORIGINS` (the exact
 *   origins of the publisher's own pages): the in-memory rules;
 * - `ALLOW_SET`: the path of a compiled allow-set (`ampcors compile
 *   domains.txt -o publishers.acs`), read once here at start-up;
 * - `REDIS_URL`: the shared Redis registry of `@ampcors/redis`
 *   (`ampcors redis add …` fills it), asked last, for what the others deny.
 *
 *   ALLOW_SET=publishers.acs ORIGINS=https://www.example.com pnpm --filter @ampcors/example-express start:sources
 */
import { readFileSync } from 'node:fs';
import { createServer } from 'node:http';
import { pathToFileURL } from 'node:url';
import express, { type Express } from 'express';
import { createAsyncVerifier, type PublisherSource } from '@ampcors/core';
import { ampCors, ampRedirectTo, type ExpressAmpCorsOptions } from '@ampcors/express';
import { createRedisRegistry } from '@ampcors/redis';

/** The environment variables this example reads. */
export interface SourcesEnv {
  readonly PUBLISHERS?: string;
  readonly ORIGINS?: string;
  readonly ALLOW_SET?: string;
  readonly REDIS_URL?: string;
}

const list = (value: string | undefined): string[] | undefined =>
  value === undefined || value.trim() === ''
    ? undefined
    : value
        .split(',')
        .map((item) => item.trim())
        .filter((item) => item !== '');

/** A registry to ask, and how to let it go at shutdown. */
export type Registry = PublisherSource & { close?(): Promise<void> };

/** The `ampCors` options for the sources the environment names, and what to close at shutdown. */
export interface Sources {
  readonly options: ExpressAmpCorsOptions;
  close(): Promise<void>;
}

/**
 * The `ampCors` options for the sources the environment names. Each source
 * is its own key; ampcors checks them all at once (an allow-set alone, with
 * no origins for the publisher's pages, is refused with how to fix it).
 *
 * @param registryOf - opens the registry for `REDIS_URL` (tests pass an in-memory one)
 * @throws Error when no source is named: `ampCors({})` would be the literal `*` of a public API, never a silent default here
 */
export function sourcesFromEnv(env: SourcesEnv, registryOf: (url: string) => Registry = (url) => createRedisRegistry({ url })): Sources {
  const publishers = list(env.PUBLISHERS);
  const origins = list(env.ORIGINS);
  if (!publishers && !origins && !env.ALLOW_SET && !env.REDIS_URL)
    throw new Error('set PUBLISHERS, ORIGINS, ALLOW_SET or REDIS_URL (see src/verdict-sources.ts)');
  const registry = env.REDIS_URL ? registryOf(env.REDIS_URL) : undefined;
  const options: ExpressAmpCorsOptions = {
    ...(publishers && { publishers }),
    ...(origins && { origins }),
    // The file's bytes, read once at start-up (never a path: ampcors does no I/O).
    ...(env.ALLOW_SET && { allowSet: readFileSync(env.ALLOW_SET) }),
    ...(registry && { verifier: createAsyncVerifier({ source: registry }) }),
  };
  return { options, close: async () => registry?.close?.() };
}

/** The API: amp-list JSON and an amp-form handler behind `ampCors(options)`. */
export function createApi(options: ExpressAmpCorsOptions): Express {
  const app = express();
  app.disable('x-powered-by');
  app.use('/api', ampCors(options));
  app.get('/api/items', (req, res) => {
    res.json({ items: [{ id: 1, title: 'Served from every source' }], reason: req.ampCors?.reason });
  });
  app.post('/api/subscribe', (_req, res) => {
    res.set('AMP-Redirect-To', ampRedirectTo('https://www.example.com/thanks')).json({ subscribed: true });
  });
  return app;
}

// Run directly (not imported by the tests): listen, and say which sources are on.
if (process.argv[1] !== undefined && import.meta.url === pathToFileURL(process.argv[1]).href) {
  const env = process.env as SourcesEnv;
  const sources = sourcesFromEnv(env);
  const server = createServer(createApi(sources.options));
  const host = process.env.HOST ?? '127.0.0.1';
  server.listen(Number(process.env.PORT ?? 3000), host, () => {
    const address = server.address();
    const port = typeof address === 'object' && address !== null ? address.port : process.env.PORT;
    const on = (['PUBLISHERS', 'ORIGINS', 'ALLOW_SET', 'REDIS_URL'] as const).filter((name) => env[name]).join(', ');
    console.log(`ampcors example (express, verdict sources: ${on || 'none'}): publisher API listening on http://${host}:${port}`);
  });
  for (const signal of ['SIGINT', 'SIGTERM'] as const) {
    process.once(signal, () => {
      server.close(() => void sources.close().then(() => console.log('stopped')));
      server.closeAllConnections();
    });
  }
}
