/**
 * A publisher API on plain `node:http` with the `@ampcors/fetch` adapter: the
 * handler is a Fetch API `(Request) => Response`, so the same code also runs
 * on Bun, Deno and Cloudflare Workers (see the sibling examples).
 */
import { createServer } from 'node:http';
import { ampRedirectTo, withAmpCors } from '@ampcors/fetch';
import { listenerOf } from './node-bridge.js';

/** The publisher domains this API trusts, on their own origins and on every AMP cache. */
const PUBLISHERS = ['example.com', 'www.example.com', '*.example.org', 'articles.publisher-with-a-very-long-domain-name.example.net'];
const ITEMS = [
  { id: 1, title: 'AMP cache origins, explained' },
  { id: 2, title: 'Why Vary: Origin matters' },
];

let subscriptions = 0;

const api = withAmpCors(
  async (request: Request): Promise<Response> => {
    const { pathname } = new URL(request.url);
    if (request.method === 'GET' && pathname === '/api/items') return Response.json({ items: ITEMS });
    if (request.method === 'POST' && pathname === '/api/subscribe') {
      const email = (await request.formData()).get('email');
      if (typeof email !== 'string' || !email.includes('@')) return Response.json({ error: 'email required' }, { status: 400 });
      subscriptions += 1;
      return Response.json({ subscribed: true }, { headers: { 'AMP-Redirect-To': ampRedirectTo('https://www.example.com/thanks') } });
    }
    return new Response('Not found\n', { status: 404 });
  },
  { publishers: PUBLISHERS },
);

/** Routes outside CORS (`/health`) and hands everything else to the CORS-wrapped API. */
async function handle(request: Request): Promise<Response> {
  if (new URL(request.url).pathname === '/health') return Response.json({ status: 'ok', runtime: `node ${process.version}`, subscriptions });
  return api(request);
}

const port = Number(process.env.PORT ?? 3002);
const host = process.env.HOST ?? '127.0.0.1';
const server = createServer(listenerOf(handle));

server.listen(port, host, () => {
  const address = server.address();
  const bound = typeof address === 'object' && address !== null ? address.port : port;
  console.log(`ampcors example (fetch-node): publisher API listening on http://${host.includes(':') ? `[${host}]` : host}:${bound}`);
});

// Ctrl-C may arrive twice (from the terminal and forwarded by pnpm or npm): stopping is idempotent.
let stopping = false;
for (const signal of ['SIGINT', 'SIGTERM'] as const) {
  process.on(signal, () => {
    if (stopping) return;
    stopping = true;
    server.close(() => console.log('stopped'));
    server.closeAllConnections();
  });
}
