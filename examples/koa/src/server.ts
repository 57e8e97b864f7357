/**
 * A publisher API on Koa with the `@ampcors/koa` middleware, trusting an
 * embedded list of publisher domains. Stops cleanly on SIGINT or SIGTERM.
 */
import { createServer } from 'node:http';
import Koa from 'koa';
import { ampCors, ampRedirectTo } from '@ampcors/koa';

/** The publisher domains this API trusts, on their own origins and on every AMP cache. */
const PUBLISHERS = ['example.com', 'www.example.com', '*.example.org', 'articles.publisher-with-a-very-long-domain-name.example.net'];
const ITEMS = [
  { id: 1, title: 'AMP cache origins, explained' },
  { id: 2, title: 'Why Vary: Origin matters' },
];
const MAX_FORM_BYTES = 4096;

let subscriptions = 0;
const app = new Koa();
const cors = ampCors({ publishers: PUBLISHERS });

/** Reads a small `application/x-www-form-urlencoded` body (amp-form's encoding). */
async function readForm(ctx: Koa.Context): Promise<URLSearchParams> {
  let body = '';
  for await (const chunk of ctx.req) {
    body += String(chunk);
    if (body.length > MAX_FORM_BYTES) ctx.throw(413, 'form too large');
  }
  return new URLSearchParams(body);
}

app.use(async (ctx, next) => {
  // Outside CORS: a health check for load balancers (and the subscription counter, for the demo).
  if (ctx.path === '/health') {
    ctx.body = { status: 'ok', runtime: `node ${process.version}`, subscriptions };
    return;
  }
  if (ctx.path.startsWith('/api/')) await cors(ctx, next);
  else await next();
});

app.use(async (ctx) => {
  // amp-list reads `{ items: [...] }`.
  if (ctx.method === 'GET' && ctx.path === '/api/items') {
    ctx.body = { items: ITEMS };
    return;
  }
  // amp-form: the side effect runs only for trusted origins (others got 403 from the middleware).
  if (ctx.method === 'POST' && ctx.path === '/api/subscribe') {
    const email = (await readForm(ctx)).get('email');
    if (email === null || !email.includes('@')) {
      ctx.status = 400;
      ctx.body = { error: 'email required' };
      return;
    }
    subscriptions += 1;
    ctx.set('AMP-Redirect-To', ampRedirectTo('https://www.example.com/thanks'));
    ctx.body = { subscribed: true };
  }
});

const port = Number(process.env.PORT ?? 3001);
const host = process.env.HOST ?? '127.0.0.1';
const server = createServer(app.callback());

server.listen(port, host, () => {
  const address = server.address();
  const bound = typeof address === 'object' && address !== null ? address.port : port;
  console.log(`ampcors example (koa): publisher API listening on http://${host.includes(':') ? `[${host}]` : host}:${bound}`);
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
