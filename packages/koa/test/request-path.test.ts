/**
 * The headers the Koa middleware reads, from the attacker's side: Koa never
 * parses `req.headers` on its own, so for a preflight core reads Node's raw
 * header lines (request-facts.ts); a repeated Origin must stay denied, and an earlier
 * middleware's rewrite of the headers must count, not the raw line.
 */
import { ampCors, type AmpCorsState } from '@ampcors/koa';
import Koa from 'koa';
import request from 'supertest';
import { describe, expect, it } from 'vitest';

const CACHE = 'https://example-com.cdn.ampproject.org';
const EVIL = 'https://evil.example';

function app(before?: Koa.Middleware<AmpCorsState>) {
  const built = new Koa<AmpCorsState>();
  built.silent = true;
  const lines: number[] = [];
  built.use(async (ctx, next) => {
    lines.push(ctx.req.rawHeaders.filter((name, i) => i % 2 === 0 && name.toLowerCase() === 'origin').length);
    await next();
  });
  if (before !== undefined) built.use(before);
  built.use(ampCors({ publishers: ['example.com'] }) as unknown as Koa.Middleware<AmpCorsState>);
  built.use((ctx) => {
    ctx.body = String(ctx.state.ampCors?.allowed);
  });
  return { server: built.callback(), lines };
}

/** Two header lines (Node's client sends one line per array item). */
const twice = (first: string, second: string) => [first, second] as unknown as string;

describe('koa: the headers ampcors reads', () => {
  it('a repeated Origin (an allowed one first) is denied, preflight or not', async () => {
    const { server, lines } = app();
    const get = await request(server).get('/r').set('Origin', twice(CACHE, EVIL));
    expect(get.status).toBe(403);
    expect(get.headers['access-control-allow-origin']).toBeUndefined();
    const preflight = await request(server).options('/r').set('Origin', twice(CACHE, CACHE)).set('Access-Control-Request-Method', 'POST');
    expect(preflight.status).toBe(403);
    expect(preflight.headers['access-control-allow-origin']).toBeUndefined();
    expect(lines).toEqual([2, 2]);
  });

  it('an Origin in any case is read; the allowed one answers', async () => {
    const preflight = await request(app().server).options('/r').set('oRiGiN', CACHE).set('ACCESS-CONTROL-REQUEST-METHOD', 'POST');
    expect(preflight.status).toBe(204);
    expect(preflight.headers['access-control-allow-origin']).toBe(CACHE);
  });

  it('an earlier middleware that rewrites or removes the Origin header is what counts, not the raw line', async () => {
    const rewritten = await request(
      app(async (ctx, next) => {
        ctx.request.headers.origin = EVIL;
        await next();
      }).server,
    )
      .options('/r')
      .set('Origin', CACHE)
      .set('Access-Control-Request-Method', 'POST');
    expect(rewritten.status).toBe(403);
    expect(rewritten.headers['access-control-allow-origin']).toBeUndefined();
    const removed = await request(
      app(async (ctx, next) => {
        delete ctx.request.headers.origin;
        await next();
      }).server,
    )
      .get('/r')
      .set('Origin', CACHE);
    expect(removed.status).toBe(200);
    expect(removed.text).toBe('false');
    expect(removed.headers['access-control-allow-origin']).toBeUndefined();
  });
});
