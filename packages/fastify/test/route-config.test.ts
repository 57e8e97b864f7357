/**
 * A route's `config.cors` is read through Fastify's route context (index.ts,
 * routeConfigOf), found on an instance's first request: whatever that first
 * request is (a 404, a route without config), and with Fastify 4 and 5 apps
 * served alternately from one process, a route that turned CORS off or
 * narrowed its origins is never answered with the plugin's wider options.
 */
import { createRequire } from 'node:module';
import { ampCors } from '@ampcors/fastify';
import fastify5 from 'fastify';
import { expect, it } from 'vitest';

const require = createRequire(import.meta.url);
const fastify4 = require('fastify4') as typeof fastify5;
const APP = 'https://app.example';
const OTHER = 'https://other.example';

async function build(create: typeof fastify5) {
  const app = create({ logger: false });
  await app.register(ampCors, { origin: [APP], credentials: true });
  app.get('/closed', { config: { cors: false } }, async () => 'ok');
  app.get('/other', { config: { cors: { origin: [OTHER] } } }, async () => 'ok');
  app.get('/open', async () => 'ok');
  await app.ready();
  return app;
}

it('route config.cors holds from the first request on, in Fastify 4 and 5 apps of one process, whatever the first request was', async () => {
  for (const first of ['/missing', '/open', '/closed', '/other']) {
    const apps = [await build(fastify5), await build(fastify4)];
    for (const app of apps) await app.inject({ method: 'GET', url: first, headers: { origin: APP } });
    for (let round = 0; round < 2; round++) {
      for (const app of apps) {
        const get = (url: string, origin: string) => app.inject({ method: 'GET', url, headers: { origin } });
        const closed = await get('/closed', APP);
        expect([closed.statusCode, closed.headers['access-control-allow-origin'], closed.headers['access-control-allow-credentials']]).toEqual([
          200,
          undefined,
          undefined,
        ]);
        // The attacker's origin is the plugin's: the route narrowed it away.
        expect((await get('/other', APP)).headers['access-control-allow-origin']).toBeUndefined();
        expect((await get('/other', OTHER)).headers['access-control-allow-origin']).toBe(OTHER);
        expect((await get('/open', APP)).headers['access-control-allow-origin']).toBe(APP);
        expect((await get('/open', OTHER)).headers['access-control-allow-origin']).toBeUndefined();
      }
    }
    await Promise.all(apps.map((app) => app.close()));
  }
});
