/**
 * The Express request path as a client and an earlier middleware see it:
 * the headers ampcors reads before Express parses them (request-facts.ts in
 * core reads Node's raw header lines then), and the answers ampcors ends
 * itself (their Content-Length is Node's).
 */
import { ampCors } from '@ampcors/express';
import type { RequestHandler } from 'express';
import request from 'supertest';
import { describe, expect, it } from 'vitest';
import { CACHE, EVIL, EXPRESS_VERSIONS } from './express-versions.js';

describe.each(EXPRESS_VERSIONS)('%s: the headers ampcors reads', (_name, express) => {
  function app(before?: RequestHandler) {
    const built = express();
    if (before !== undefined) built.use(before);
    built.use(ampCors({ publishers: ['example.com'] }));
    built.all('/r', (req, res) => {
      res.send(String(req.ampCors?.allowed));
    });
    return built;
  }

  it('a repeated Origin (an allowed one first) is denied, preflight or not', async () => {
    const lines: string[][] = [];
    const recording: RequestHandler = (req, _res, next) => {
      lines.push(req.rawHeaders.filter((_, i) => i % 2 === 0 && req.rawHeaders[i]?.toLowerCase() === 'origin'));
      next();
    };
    // Two header lines (Node's client sends one line per array item).
    const twice = (first: string, second: string) => [first, second] as unknown as string;
    const get = await request(app(recording)).get('/r').set('Origin', twice(CACHE, EVIL));
    expect(get.status).toBe(403);
    expect(get.headers['access-control-allow-origin']).toBeUndefined();
    const preflight = await request(app(recording)).options('/r').set('Origin', twice(CACHE, CACHE)).set('Access-Control-Request-Method', 'POST');
    expect(preflight.status).toBe(403);
    expect(lines.map((names) => names.length)).toEqual([2, 2]);
    expect(preflight.headers['access-control-allow-origin']).toBeUndefined();
  });

  it('an Origin in any case is read; the allowed one answers', async () => {
    const preflight = await request(app()).options('/r').set('oRiGiN', CACHE).set('ACCESS-CONTROL-REQUEST-METHOD', 'POST');
    expect(preflight.status).toBe(204);
    expect(preflight.headers['access-control-allow-origin']).toBe(CACHE);
  });

  it('an earlier middleware that rewrites or removes req.headers.origin is what counts, not the raw line', async () => {
    const rewritten = await request(
      app((req, _res, next) => {
        req.headers.origin = EVIL;
        next();
      }),
    )
      .options('/r')
      .set('Origin', CACHE)
      .set('Access-Control-Request-Method', 'POST');
    expect(rewritten.status).toBe(403);
    expect(rewritten.headers['access-control-allow-origin']).toBeUndefined();
    const removed = await request(
      app((req, _res, next) => {
        delete req.headers.origin;
        next();
      }),
    )
      .get('/r')
      .set('Origin', CACHE);
    expect(removed.status).toBe(200);
    expect(removed.headers['access-control-allow-origin']).toBeUndefined();
  });
});

describe.each(EXPRESS_VERSIONS)('%s: the answers ampcors ends itself', (_name, express) => {
  function app(contentLength?: string) {
    const built = express();
    if (contentLength !== undefined)
      built.use((_req, res, next) => {
        res.setHeader('Content-Length', contentLength);
        next();
      });
    built.use(ampCors({ publishers: ['example.com'] }));
    built.all('/r', (_req, res) => {
      res.send('handler');
    });
    return built;
  }

  it('a 204 preflight has no Content-Length (RFC 9110 §8.6); a 403 has its body’s', async () => {
    const preflight = await request(app()).options('/r').set('Origin', CACHE).set('Access-Control-Request-Method', 'POST');
    expect(preflight.status).toBe(204);
    expect(preflight.headers['content-length']).toBeUndefined();
    const denied = await request(app()).get('/r').set('Origin', EVIL);
    expect(denied.status).toBe(403);
    expect(denied.text).toMatch(/^Forbidden: CORS origin denied/);
    expect(denied.headers['content-length']).toBe(String(Buffer.byteLength(denied.text)));
  });

  it('a Content-Length set by an earlier middleware is corrected, never sent stale', async () => {
    const denied = await request(app('999')).get('/r').set('Origin', EVIL);
    expect(denied.status).toBe(403);
    expect(denied.headers['content-length']).toBe(String(Buffer.byteLength(denied.text)));
    const preflight = await request(app('999')).options('/r').set('Origin', CACHE).set('Access-Control-Request-Method', 'POST');
    expect(preflight.status).toBe(204);
    expect(preflight.headers['content-length'] ?? '0').toBe('0');
  });
});
