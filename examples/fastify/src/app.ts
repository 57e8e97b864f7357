/**
 * A publisher API on Fastify with the `@ampcors/fastify` plugin, trusting an
 * embedded list of publisher domains. The plugin is registered in the `/api`
 * context only: `/health` stays outside CORS.
 */
import { ampCors, ampRedirectTo } from '@ampcors/fastify';
import Fastify, { type FastifyInstance } from 'fastify';

/** The publisher domains this API trusts, on their own origins and on every AMP cache. */
export const PUBLISHERS = ['example.com', 'www.example.com', '*.example.org', 'articles.publisher-with-a-very-long-domain-name.example.net'];
const ITEMS = [
  { id: 1, title: 'AMP cache origins, explained' },
  { id: 2, title: 'Why Vary: Origin matters' },
];

/** Builds the API; `subscriptions` counts the side effects of `POST /api/subscribe`. */
export async function buildApp(): Promise<{ app: FastifyInstance; subscriptions: () => number }> {
  let subscriptions = 0;
  const app: FastifyInstance = Fastify({ logger: false, bodyLimit: 4096 });
  // amp-form posts application/x-www-form-urlencoded (or multipart); the form here is one field.
  app.addContentTypeParser('application/x-www-form-urlencoded', { parseAs: 'string' }, (_request, body, done) =>
    done(null, Object.fromEntries(new URLSearchParams(String(body)))),
  );

  // Outside CORS: a health check for load balancers (and the subscription counter, for the demo).
  app.get('/health', async () => ({ status: 'ok', runtime: `node ${process.version}`, subscriptions }));

  await app.register(
    async (api) => {
      // Denied origins get 403 in onRequest: the routes below (and their side effects) never run for them.
      await api.register(ampCors, { publishers: PUBLISHERS });
      // amp-list reads `{ items: [...] }`.
      api.get('/items', async (request) => ({ items: ITEMS, trustedVia: request.ampCors?.reason }));
      // amp-form: no OPTIONS route is needed, the plugin answers the preflight.
      api.post<{ Body: { email?: string } }>('/subscribe', async (request, reply) => {
        const email = request.body?.email;
        if (typeof email !== 'string' || !email.includes('@')) return reply.code(400).send({ error: 'email required' });
        subscriptions += 1;
        return reply.header('AMP-Redirect-To', ampRedirectTo('https://www.example.com/thanks')).send({ subscribed: true });
      });
    },
    { prefix: '/api' },
  );
  return { app, subscriptions: () => subscriptions };
}
