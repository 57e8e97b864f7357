/**
 * A publisher API on `Deno.serve` with the `@ampcors/fetch` adapter, resolved
 * from the workspace's `node_modules` (deno.json: `"nodeModulesDir": "manual"`),
 * so nothing is downloaded at run time. Run with `pnpm start`.
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

const hostname = Deno.env.get('HOST') ?? '127.0.0.1';
const server = Deno.serve(
  {
    hostname,
    port: Number(Deno.env.get('PORT') ?? 3004),
    onListen: ({ port }) => console.log(`ampcors example (deno): publisher API listening on http://${hostname}:${port}`),
    onError: (error) => {
      console.error(error);
      return new Response('Internal error\n', { status: 500 });
    },
  },
  (request) => {
    if (new URL(request.url).pathname === '/health') return Response.json({ status: 'ok', runtime: `deno ${Deno.version.deno}`, subscriptions });
    return api(request);
  },
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
