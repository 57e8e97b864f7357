/**
 * A publisher API as a Cloudflare Worker module with the `@ampcors/fetch`
 * adapter. The trusted publisher domains come from the `PUBLISHERS` variable
 * of wrangler.json (comma-separated).
 */
import { ampRedirectTo, withAmpCors } from '@ampcors/fetch';

/** The Worker's bindings (wrangler.json `vars`). */
export interface Env {
  /** Comma-separated publisher domains, e.g. `example.com,*.example.org`. */
  readonly PUBLISHERS: string;
}

type Handler = (request: Request) => Promise<Response>;

const ITEMS = [
  { id: 1, title: 'AMP cache origins, explained' },
  { id: 2, title: 'Why Vary: Origin matters' },
];

// Module state lives as long as the isolate: a demo counter, not storage.
let subscriptions = 0;
let api: { publishers: string; handler: Handler } | undefined;

async function route(request: Request): Promise<Response> {
  const { pathname } = new URL(request.url);
  if (request.method === 'GET' && pathname === '/api/items') return Response.json({ items: ITEMS });
  if (request.method === 'POST' && pathname === '/api/subscribe') {
    const email = (await request.formData()).get('email');
    if (typeof email !== 'string' || !email.includes('@')) return Response.json({ error: 'email required' }, { status: 400 });
    subscriptions += 1;
    return Response.json({ subscribed: true }, { headers: { 'AMP-Redirect-To': ampRedirectTo('https://www.example.com/thanks') } });
  }
  return new Response('Not found\n', { status: 404 });
}

/** The CORS-wrapped API for this environment, built once per isolate (the verifier precomputes its allow-set). */
function apiFor(env: Env): Handler {
  if (api?.publishers !== env.PUBLISHERS) {
    const publishers = env.PUBLISHERS.split(',')
      .map((domain) => domain.trim())
      .filter((domain) => domain !== '');
    api = { publishers: env.PUBLISHERS, handler: withAmpCors(route, { publishers }) };
  }
  return api.handler;
}

/** The Worker module. */
export default {
  async fetch(request: Request, env: Env): Promise<Response> {
    if (new URL(request.url).pathname === '/health') return Response.json({ status: 'ok', runtime: navigator.userAgent, subscriptions });
    return apiFor(env)(request);
  },
};
