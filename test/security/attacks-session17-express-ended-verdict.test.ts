/**
 * Attacker's review, session 17 (issue 16, Express): an answer ampCors ends
 * itself (a preflight's 204, a denial's 403) no longer stores a verdict on
 * `req` unless an earlier one was there (packages/express/src/request-verdict.ts).
 * What could read `req.ampCors` after such an answer: a `finish` listener an
 * earlier middleware installed (a logger, an audit hook), and an error
 * handler when ending fails. From the attacker's side: none of them may ever
 * read an ALLOW the deciding (innermost) policy did not give: not an outer
 * policy's allow on a request the inner one denied, not a verdict a
 * middleware forged before ampCors ran, not a previous request's.
 */
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { ampCors } from '@ampcors/express';
import request from 'supertest';
import { afterAll, describe, expect, it } from 'vitest';
import { CACHE, EVIL, EXPRESS_VERSIONS } from '../../packages/express/test/express-versions.js';

type Verdictish = { allowed?: boolean; reason?: string } | undefined;
type Seen = { at: string; allowed: string };

/** What a reader of `req.ampCors` saw: `undefined` (no verdict), or whether it allowed. */
function shown(verdict: Verdictish): string {
  return verdict === undefined ? 'none' : String(verdict.allowed);
}

describe.each(EXPRESS_VERSIONS)('%s: readers of req.ampCors after an answer ampCors ended', (_name, express) => {
  /** An app whose first middleware records, on `finish`, what `req.ampCors` says; `inner` guards `/admin`. */
  function app(outer: ReturnType<typeof ampCors> | null, inner: ReturnType<typeof ampCors>, seen: Seen[], forge = false) {
    const a = express();
    a.use((req, res, next) => {
      res.on('finish', () => seen.push({ at: 'finish', allowed: shown(req.ampCors) }));
      if (forge) req.ampCors = { allowed: true, origin: EVIL, via: 'origin', reason: 'forged' } as never;
      next();
    });
    if (outer !== null) a.use(outer);
    a.use('/admin', inner);
    a.all('/admin', (req, res) => {
      seen.push({ at: 'handler', allowed: shown(req.ampCors) });
      res.send('secret');
    });
    a.use((_error: unknown, req: { ampCors?: Verdictish }, res: { status(n: number): { send(b: string): void } }, _next: unknown) => {
      seen.push({ at: 'error', allowed: shown(req.ampCors) });
      res.status(500).send('failed');
    });
    return a;
  }

  it("an outer policy's allow is never what a reader sees once the inner policy denied and ended the request (GET 403, preflight)", async () => {
    const seen: Seen[] = [];
    // The outer allows EVIL; with `preflightContinue` it passes a preflight on too, so the inner one answers it.
    const outer = ampCors({ publishers: ['example.com'], origins: [EVIL], preflightContinue: true });
    const inner = ampCors({ publishers: ['example.com'] });
    const a = app(outer, inner, seen);
    const get = await request(a).get('/admin').set('Origin', EVIL).set('Cookie', 'session=victim');
    expect(get.status).toBe(403);
    expect(get.headers['access-control-allow-origin']).toBeUndefined();
    expect(get.headers['access-control-allow-credentials']).toBeUndefined();
    const pre = await request(a).options('/admin').set('Origin', EVIL).set('Access-Control-Request-Method', 'DELETE');
    expect(pre.headers['access-control-allow-origin']).toBeUndefined();
    expect(pre.headers['access-control-allow-methods']).toBeUndefined();
    expect(seen).toEqual([
      { at: 'finish', allowed: 'false' },
      { at: 'finish', allowed: 'false' },
    ]);
    // The control: the outer allows EVIL on another path of the same app.
    const elsewhere = await request(a).get('/elsewhere').set('Origin', EVIL);
    expect(elsewhere.headers['access-control-allow-origin']).toBe(EVIL);
  });

  it('a verdict forged before ampCors ran is replaced on an ended answer, never left to be read as an allow', async () => {
    const seen: Seen[] = [];
    const a = app(null, ampCors({ publishers: ['example.com'] }), seen, true);
    expect((await request(a).get('/admin').set('Origin', EVIL)).status).toBe(403);
    expect(
      (await request(a).options('/admin').set('Origin', EVIL).set('Access-Control-Request-Method', 'PUT')).headers['access-control-allow-origin'],
    ).toBeUndefined();
    expect(seen).toEqual([
      { at: 'finish', allowed: 'false' },
      { at: 'finish', allowed: 'false' },
    ]);
  });

  it('one policy: an ended answer leaves no verdict (not even a previous request’s), and a request passed on reads its own', async () => {
    const seen: Seen[] = [];
    const a = app(null, ampCors({ publishers: ['example.com'] }), seen);
    await request(a).get('/admin').set('Origin', CACHE);
    const pre = await request(a).options('/admin').set('Origin', CACHE).set('Access-Control-Request-Method', 'POST');
    expect(pre.status).toBe(204);
    expect(pre.headers['access-control-allow-origin']).toBe(CACHE);
    await request(a).get('/admin').set('Origin', EVIL);
    expect(seen).toEqual([
      { at: 'handler', allowed: 'true' },
      { at: 'finish', allowed: 'true' },
      { at: 'finish', allowed: 'none' },
      { at: 'finish', allowed: 'none' },
    ]);
  });

  it("ending that fails goes to the error handler, which reads no allow but the deciding policy's (nested) or none (alone)", async () => {
    for (const nested of [false, true]) {
      const seen: Seen[] = [];
      const a = express();
      a.use((_req, res, next) => {
        // A response whose end throws once (a broken stream, a patched `end`).
        const end = res.end.bind(res);
        let thrown = false;
        res.end = ((...args: Parameters<typeof end>) => {
          if (!thrown) {
            thrown = true;
            throw new Error('end failed');
          }
          return end(...args);
        }) as typeof res.end;
        next();
      });
      if (nested) a.use(ampCors({ publishers: ['example.com'], origins: [EVIL] }));
      a.use(ampCors({ publishers: ['example.com'] }));
      a.use((_error: unknown, req: { ampCors?: Verdictish }, res: { status(n: number): { send(b: string): void } }, _next: unknown) => {
        seen.push({ at: 'error', allowed: shown(req.ampCors) });
        res.status(500).send('failed');
      });
      const denied = await request(a).get('/x').set('Origin', EVIL);
      const preflight = await request(a).options('/x').set('Origin', EVIL).set('Access-Control-Request-Method', 'PUT');
      for (const answer of [denied, preflight]) {
        expect(answer.status).toBe(500);
        expect(answer.headers['access-control-allow-origin']).toBeUndefined();
        expect(answer.headers['access-control-allow-credentials']).toBeUndefined();
      }
      // Nested, the GET is denied by the inner policy after the outer allowed: the inner's denial is read. The preflight
      // is answered by the outer policy alone (it allows EVIL and ends it): no verdict, as with one policy.
      expect(seen).toEqual([
        { at: 'error', allowed: nested ? 'false' : 'none' },
        { at: 'error', allowed: 'none' },
      ]);
    }
  });
});

describe('a plain node:http request (own property): the same rules', () => {
  const outer = ampCors({ publishers: ['example.com'], origins: [EVIL], onDenied: 'omit' });
  const inner = ampCors({ publishers: ['example.com'] });
  const seen: string[] = [];
  const server = createServer((req: IncomingMessage, res: ServerResponse) => {
    res.on('finish', () => seen.push(shown((req as { ampCors?: Verdictish }).ampCors)));
    const both = req.url === '/both';
    const run = () => inner(req, res, () => res.end('passed'));
    if (both) outer(req, res, run);
    else run();
  });
  afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())));

  it('an ended denial after an outer allow reads the denial; an ended answer alone reads none', async () => {
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const { port } = server.address() as AddressInfo;
    const both = await fetch(`http://127.0.0.1:${port}/both`, { headers: { Origin: EVIL } });
    expect(both.status).toBe(403);
    expect(both.headers.get('access-control-allow-origin')).toBeNull();
    const alone = await fetch(`http://127.0.0.1:${port}/one`, { method: 'OPTIONS', headers: { Origin: CACHE, 'Access-Control-Request-Method': 'POST' } });
    expect(alone.status).toBe(204);
    await new Promise((resolve) => setTimeout(resolve, 20));
    expect(seen).toEqual(['false', 'none']);
  });
});
