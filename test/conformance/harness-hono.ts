/**
 * The Hono harnesses of the conformance table: the publisher API of the
 * other harnesses on Hono 4 with `@ampcors/hono`, called in process
 * (`app.request`) and over HTTP through `@hono/node-server`.
 */
import type { AddressInfo } from 'node:net';
import { serve } from '@hono/node-server';
import { ampRedirectTo } from '@ampcors/core';
import { ampCors, type AmpCorsVariables, type HonoAmpCorsOptions } from '@ampcors/hono';
import { Hono } from 'hono';
import request from 'supertest';
import type { ConformanceRequest, ConformanceResponse, Harness } from './harnesses.js';

const THANKS = 'https://example.com/thanks';

interface Counter {
  runs: number;
  reason: string | null;
}

// The scenarios use no `origin` option, whose type differs between adapters: hence the casts below.
function honoApp(options: HonoAmpCorsOptions, counter: Counter): Hono<{ Variables: AmpCorsVariables }> {
  const app = new Hono<{ Variables: AmpCorsVariables }>();
  // An earlier middleware's Vary must be kept (extended, never replaced).
  app.use('*', async (c, next) => {
    c.header('Vary', 'Accept-Encoding');
    await next();
  });
  app.use('/api/*', ampCors(options));
  app.get('/api/items', (c) => {
    counter.runs += 1;
    counter.reason = c.get('ampCors')?.reason ?? null;
    return c.json({ items: [] });
  });
  app.post('/api/subscribe', (c) => {
    counter.runs += 1;
    counter.reason = c.get('ampCors')?.reason ?? null;
    c.header('AMP-Redirect-To', ampRedirectTo(THANKS));
    return c.json({ subscribed: true });
  });
  app.options('/api/items', (c) => {
    counter.runs += 1;
    return c.text('handler', 200);
  });
  return app;
}

async function seen(response: Response, counter: Counter): Promise<ConformanceResponse> {
  return {
    status: response.status,
    headers: Object.fromEntries(response.headers),
    text: await response.text(),
    handlerRuns: counter.runs,
    seenReason: counter.reason,
  };
}

/** Hono 4, in process: `app.request` (what a Worker, Bun or Deno runs). */
export const honoDirect: Harness = {
  name: 'hono 4 (app.request)',
  async run(options, req: ConformanceRequest) {
    const counter: Counter = { runs: 0, reason: null };
    const app = honoApp(options as HonoAmpCorsOptions, counter);
    return seen(await app.request(`http://api.example.test${req.path}`, { method: req.method, headers: req.headers ?? {} }), counter);
  },
};

/** Hono 4 on Node through `@hono/node-server`, over HTTP (supertest, as the other HTTP harnesses). */
export const honoNode: Harness = {
  name: 'hono 4 (@hono/node-server)',
  async run(options, req: ConformanceRequest) {
    const counter: Counter = { runs: 0, reason: null };
    const app = honoApp(options as HonoAmpCorsOptions, counter);
    const server = await new Promise<ReturnType<typeof serve>>((resolve) => {
      const started = serve({ fetch: app.fetch, port: 0, hostname: '127.0.0.1' }, () => resolve(started));
    });
    try {
      const { port } = server.address() as AddressInfo;
      const agent = request(`http://127.0.0.1:${port}`);
      const pending = req.method === 'GET' ? agent.get(req.path) : req.method === 'POST' ? agent.post(req.path) : agent.options(req.path);
      for (const [name, value] of Object.entries(req.headers ?? {})) pending.set(name, value);
      const res = await pending;
      return {
        status: res.status,
        headers: res.headers as Record<string, string>,
        text: res.text ?? '',
        handlerRuns: counter.runs,
        seenReason: counter.reason,
      };
    } finally {
      await new Promise<void>((resolve) => server.close(() => resolve()));
    }
  },
};

/** Both Hono harnesses, for the table of harnesses.ts. */
export const HONO_HARNESSES: readonly Harness[] = [honoDirect, honoNode];
