/**
 * A publisher API on Hono with the `@ampcors/hono` middleware: the same app
 * runs on Node (src/node.ts), Bun (src/bun.ts) and Deno (src/deno.ts), and
 * could be a Cloudflare Worker's default export as it is.
 */
import { Hono } from 'hono';
import { ampCors, ampRedirectTo, type AmpCorsVariables } from '@ampcors/hono';

/** The publisher domains this API trusts, on their own origins and on every AMP cache. */
export const PUBLISHERS = ['example.com', 'www.example.com', '*.example.org', 'articles.publisher-with-a-very-long-domain-name.example.net'];
const ITEMS = [
  { id: 1, title: 'AMP cache origins, explained' },
  { id: 2, title: 'Why Vary: Origin matters' },
];
const MAX_FORM_BYTES = 4096;

/** Builds the app; `runtime` names where it runs, for `GET /health`. */
export function createApp(runtime: string): Hono<{ Variables: AmpCorsVariables }> {
  let subscriptions = 0;
  const app = new Hono<{ Variables: AmpCorsVariables }>();

  // Outside CORS: a health check for load balancers (and the subscription counter, for the demo).
  app.get('/health', (c) => c.json({ status: 'ok', runtime, subscriptions }));

  // Everything under /api is for AMP pages: their caches' origins and the publisher's own.
  app.use('/api/*', ampCors({ publishers: PUBLISHERS }));

  // amp-list reads `{ items: [...] }`.
  app.get('/api/items', (c) => c.json({ items: ITEMS }));

  // amp-form: the side effect runs only for trusted origins (others got 403 from the middleware).
  app.post('/api/subscribe', async (c) => {
    if (Number(c.req.header('content-length') ?? 0) > MAX_FORM_BYTES) return c.json({ error: 'form too large' }, 413);
    const email = (await c.req.parseBody())['email'];
    if (typeof email !== 'string' || !email.includes('@')) return c.json({ error: 'email required' }, 400);
    subscriptions += 1;
    c.header('AMP-Redirect-To', ampRedirectTo('https://www.example.com/thanks'));
    return c.json({ subscribed: true, verdict: c.get('ampCors').reason });
  });

  return app;
}
