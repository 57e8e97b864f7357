/**
 * Attacker's review, session 16 (attack-adapters3/4): Express answers that
 * do not come from `res.send` — `res.sendFile` (found, missing, a path
 * escaping its root, with and without a callback), `res.download`,
 * `express.static` (its 301 and 404), `res.redirect`, `res.sendStatus`,
 * `res.format`'s 406, an error handler, a streamed body, HEAD, and the
 * conditional answers of `send` (416, 412, 304). The attacker sends any
 * `Origin`. Every such answer must keep the request's own decision: an
 * allowed origin gets its grant and `Vary: Origin`, a hostile one gets no
 * CORS header (the 403 of `'reject'`, or the handler's answer without them
 * with `'omit'`), a request without `Origin` gets none. The one documented
 * exception is a handler replacing `Vary` outright (SECURITY.md, "A `Vary`
 * the handler replaces"): `Origin` is then lost but nothing is granted.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ampCors } from '@ampcors/express';
import express from 'express';
import request from 'supertest';
import { afterAll, describe, expect, it } from 'vitest';
import { CORS_HEADERS } from './cors-header-names.js';

const ALLOWED = 'https://example.com';
const HOSTILE = ['https://evil.example', 'https://example.com.evil.example', 'null'];
const dir = mkdtempSync(join(tmpdir(), 'ampcors-express-send-'));
writeFileSync(join(dir, 'a.txt'), 'file a\n'.repeat(20));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

function app(onDenied: 'reject' | 'omit'): express.Express {
  const a = express();
  a.use(ampCors({ publishers: ['example.com'], onDenied }));
  a.get('/file/:name', (req, res) => res.sendFile(req.params.name, { root: dir }));
  a.get('/cb/:name', (req, res, next) =>
    res.sendFile(req.params.name, { root: dir }, (err) => {
      if (err) next(err);
    }),
  );
  a.use('/static', express.static(dir));
  a.get('/redirect', (_req, res) => res.redirect('/x'));
  a.get('/status', (_req, res) => res.sendStatus(204));
  a.get('/format', (_req, res) => res.format({ 'application/json': () => res.json({ ok: 1 }) }));
  a.get('/throw', () => {
    throw Object.assign(new Error('x'), { status: 418, headers: { Vary: 'Accept' } });
  });
  a.get('/vary', (_req, res) => {
    res.setHeader('Vary', 'Accept');
    res.send('x');
  });
  a.get('/appendvary', (_req, res) => {
    res.vary('Accept');
    res.send('x');
  });
  a.get('/download', (_req, res) => res.download(join(dir, 'missing.txt')));
  a.get('/stream', (_req, res) => {
    res.write('a');
    setTimeout(() => res.end('b'), 5);
  });
  a.use((err: unknown, req: express.Request, res: express.Response, next: express.NextFunction) => {
    if (req.path === '/throw') {
      res.status(500).json({ e: 1 });
      return;
    }
    next(err);
  });
  return a;
}

/** Paths and the status the handler answers with when it runs. */
const PATHS: ReadonlyArray<readonly [string, number]> = [
  ['/file/a.txt', 200],
  ['/file/missing.txt', 404],
  ['/file/..%2f..%2fetc%2fpasswd', 403],
  ['/cb/missing.txt', 404],
  ['/static/a.txt', 200],
  ['/static/', 404],
  ['/static', 301],
  ['/static/missing', 404],
  ['/redirect', 302],
  ['/status', 204],
  ['/format', 406],
  ['/throw', 500],
  ['/vary', 200],
  ['/appendvary', 200],
  ['/download', 404],
  ['/stream', 200],
  ['/nothing', 404],
];
/** The handler sets `Vary` outright (documented: `Origin` is lost, nothing granted). */
const REPLACES_VARY = new Set(['/vary']);

const varyList = (v: string | undefined): string[] => (v ?? '').split(',').map((s) => s.trim().toLowerCase());

function expectNoCors(headers: Record<string, string | undefined>): void {
  for (const name of CORS_HEADERS) expect(headers[name], name).toBeUndefined();
}

async function send(onDenied: 'reject' | 'omit', method: 'GET' | 'HEAD', path: string, headers: Record<string, string>) {
  let r = request(app(onDenied))[method === 'GET' ? 'get' : 'head'](path);
  for (const [k, v] of Object.entries(headers)) r = r.set(k, v);
  if (path === '/format') r = r.set('Accept', 'text/html');
  return r;
}

describe('Express answers outside res.send keep the request decision', () => {
  for (const onDenied of ['reject', 'omit'] as const)
    for (const method of ['GET', 'HEAD'] as const)
      for (const [path, status] of PATHS) {
        it(`${onDenied} ${method} ${path}: the allowed origin gets its grant and Vary: Origin`, async () => {
          const res = await send(onDenied, method, path, { Origin: ALLOWED });
          expect(res.status).toBe(status);
          expect(res.headers['access-control-allow-origin']).toBe(ALLOWED);
          expect(res.headers['access-control-allow-credentials']).toBe('true');
          if (!REPLACES_VARY.has(path)) expect(varyList(res.headers.vary)).toContain('origin');
        });
        it(`${onDenied} ${method} ${path}: hostile origins get no CORS header`, async () => {
          for (const origin of HOSTILE) {
            const res = await send(onDenied, method, path, { Origin: origin });
            expect(res.status).toBe(onDenied === 'reject' ? 403 : status);
            expectNoCors(res.headers);
            if (!REPLACES_VARY.has(path) || onDenied === 'reject') expect(varyList(res.headers.vary)).toContain('origin');
          }
        });
        it(`${onDenied} ${method} ${path}: no Origin, no CORS header`, async () => {
          const res = await send(onDenied, method, path, {});
          expect(res.status).toBe(status);
          expectNoCors(res.headers);
          if (!REPLACES_VARY.has(path)) expect(varyList(res.headers.vary)).toContain('origin');
        });
      }

  it("send's conditional answers (416, 412, 304) keep the grant and Vary: Origin, and a hostile origin's revalidation gets none", async () => {
    const cases: ReadonlyArray<readonly [Record<string, string>, number]> = [
      [{ Range: 'bytes=1000-2000' }, 416],
      [{ 'If-Match': '"nope"' }, 412],
      [{ 'If-Unmodified-Since': 'Thu, 01 Jan 1970 00:00:00 GMT' }, 412],
    ];
    for (const [headers, status] of cases) {
      const res = await send('reject', 'GET', '/file/a.txt', { Origin: ALLOWED, ...headers });
      expect(res.status).toBe(status);
      expect(res.headers['access-control-allow-origin']).toBe(ALLOWED);
      expect(varyList(res.headers.vary)).toContain('origin');
    }
    const first = await send('reject', 'GET', '/file/a.txt', { Origin: ALLOWED });
    const etag = String(first.headers.etag);
    const revalidated = await send('reject', 'GET', '/file/a.txt', { Origin: ALLOWED, 'If-None-Match': etag });
    expect(revalidated.status).toBe(304);
    expect(revalidated.headers['access-control-allow-origin']).toBe(ALLOWED);
    expect(varyList(revalidated.headers.vary)).toContain('origin');
    for (const origin of HOSTILE) {
      const hostile = await send('omit', 'GET', '/file/a.txt', { Origin: origin, 'If-None-Match': etag });
      expect(hostile.status).toBe(304);
      expectNoCors(hostile.headers);
      expect(varyList(hostile.headers.vary)).toContain('origin');
    }
  });
});
