/**
 * A publisher API on Bun's built-in server with the `@ampcors/fetch` adapter.
 * Run with `bun run src/server.ts` (or `pnpm start`).
 */
import { ampRedirectTo, withAmpCors } from '@ampcors/fetch';

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

const server = Bun.serve({
  hostname: process.env.HOST ?? '127.0.0.1',
  port: Number(process.env.PORT ?? 3003),
  fetch(request) {
    if (new URL(request.url).pathname === '/health') return Response.json({ status: 'ok', runtime: `bun ${Bun.version}`, subscriptions });
    return api(request);
  },
  error(error) {
    console.error(error);
    return new Response('Internal error\n', { status: 500 });
  },
});

console.log(`ampcors example (bun): publisher API listening on ${server.url.origin}`);

let stopping = false;
for (const signal of ['SIGINT', 'SIGTERM'] as const) {
  process.on(signal, () => {
    if (stopping) return;
    stopping = true;
    void server.stop(true).then(() => {
      console.log('stopped');
      process.exit(0);
    });
  });
}
