/**
 * The conformance harness of @ampcors/fastify, for Fastify 5 and 4: a small
 * publisher API under `/api` (the plugin registered in that encapsulated
 * context), requests sent with Fastify's own `inject`.
 */
import { createRequire } from 'node:module';
import { ampRedirectTo } from '@ampcors/core';
import { ampCors, type FastifyAmpCorsOptions } from '@ampcors/fastify';
import fastify5 from 'fastify';
import type { ConformanceResponse, Harness } from './harnesses.js';

const require = createRequire(import.meta.url);
const fastify4 = require('fastify4') as typeof fastify5;

const THANKS = 'https://example.com/thanks';

function fastifyHarness(name: string, createApp: typeof fastify5): Harness {
  return {
    name,
    async run(options, req): Promise<ConformanceResponse> {
      const counter = { runs: 0, reason: null as string | null };
      const app = createApp({ logger: false });
      app.addHook('onRequest', (_request, reply, done) => {
        reply.header('Vary', 'Accept-Encoding');
        done();
      });
      await app.register(
        async (api) => {
          await api.register(ampCors, options as FastifyAmpCorsOptions);
          api.get('/items', async (request) => {
            counter.runs += 1;
            counter.reason = request.ampCors?.reason ?? null;
            return { items: [] };
          });
          api.post('/subscribe', async (request, reply) => {
            counter.runs += 1;
            counter.reason = request.ampCors?.reason ?? null;
            void reply.header('AMP-Redirect-To', ampRedirectTo(THANKS));
            return { subscribed: true };
          });
          api.options('/items', async (_request, reply) => {
            counter.runs += 1;
            return reply.code(200).send('handler');
          });
        },
        { prefix: '/api' },
      );
      try {
        const res = await app.inject({ method: req.method, url: req.path, headers: { ...req.headers } });
        const headers: Record<string, string | undefined> = {};
        for (const [key, value] of Object.entries(res.headers))
          headers[key.toLowerCase()] = Array.isArray(value) ? value.join(', ') : value === undefined ? undefined : String(value);
        return { status: res.statusCode, headers, text: res.body, handlerRuns: counter.runs, seenReason: counter.reason };
      } finally {
        await app.close();
      }
    },
  };
}

/** @ampcors/fastify under Fastify 5 and Fastify 4. */
export const FASTIFY_HARNESSES: readonly Harness[] = [fastifyHarness('fastify 5', fastify5), fastifyHarness('fastify 4', fastify4)];
