/**
 * A publisher API (a Fetch API handler with `@ampcors/fetch`) served from a
 * compiled allow-set: the file `ampcors compile publishers.txt -o
 * publishers.acs` wrote, read once at start-up, plus the exact origins of the
 * publisher's own pages, which the set (cache origins only) does not hold.
 *
 *   ALLOW_SET=publishers.acs ORIGINS=https://www.example.com pnpm --filter @ampcors/example-fetch-node start:allow-set
 *
 * Without ALLOW_SET it serves the `publishers.acs` beside this package (compiled from `publishers.txt`).
 */
import { readFileSync } from 'node:fs';
import { createServer } from 'node:http';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { ampCorsOf, ampRedirectTo, withAmpCors } from '@ampcors/fetch';
import { listenerOf } from './node-bridge.js';

/** The compiled allow-set shipped with this example. */
export const DEFAULT_ALLOW_SET = fileURLToPath(new URL('../publishers.acs', import.meta.url));

/**
 * The API behind `withAmpCors`, from a compiled allow-set's bytes and the
 * publisher's own origins. Throws an `AmpCorsError` at start-up for a
 * corrupt file or no `origins`.
 */
export function allowSetApi(allowSet: Uint8Array, origins: readonly string[]): (request: Request) => Promise<Response> {
  return withAmpCors(
    (request: Request): Response => {
      const { pathname } = new URL(request.url);
      if (request.method === 'GET' && pathname === '/api/items') return Response.json({ items: [], reason: ampCorsOf(request)?.verdict.reason });
      if (request.method === 'POST' && pathname === '/api/subscribe') {
        return Response.json({ subscribed: true }, { headers: { 'AMP-Redirect-To': ampRedirectTo('https://www.example.com/thanks') } });
      }
      return new Response('Not found\n', { status: 404 });
    },
    { allowSet, origins },
  );
}

// Run directly (not imported by the tests): read the file once, then serve on node:http.
if (process.argv[1] !== undefined && import.meta.url === pathToFileURL(process.argv[1]).href) {
  const api = allowSetApi(
    readFileSync(process.env.ALLOW_SET ?? DEFAULT_ALLOW_SET),
    (process.env.ORIGINS ?? 'https://www.example.com').split(',').map((origin) => origin.trim()),
  );
  const host = process.env.HOST ?? '127.0.0.1';
  // The bridge of server.ts too: a request the Fetch API refuses (TRACE) is a 500, never a stopped server.
  const server = createServer(listenerOf(api));
  server.listen(Number(process.env.PORT ?? 3002), host, () => {
    const address = server.address();
    const port = typeof address === 'object' && address !== null ? address.port : process.env.PORT;
    console.log(`ampcors example (fetch-node, compiled allow-set): publisher API listening on http://${host}:${port}`);
  });
  for (const signal of ['SIGINT', 'SIGTERM'] as const) {
    process.once(signal, () => {
      server.close(() => console.log('stopped'));
      server.closeAllConnections();
    });
  }
}
