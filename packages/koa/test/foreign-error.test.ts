/**
 * An Error of another realm (a `vm` context, a test runner's sandbox) thrown
 * by later middleware keeps what Koa would read from it (status, `expose`,
 * message, its own headers) once ampCors has added the request's CORS
 * headers, as it does without ampCors; only this request's headers are added.
 */
import { createRequire } from 'node:module';
import { runInNewContext } from 'node:vm';
import { ampCors } from '@ampcors/koa';
import Koa3 from 'koa';
import request from 'supertest';
import { describe, expect, it } from 'vitest';

const require = createRequire(import.meta.url);
const Koa2 = require('koa2') as typeof Koa3;

/** A 401 made in another realm, with a header of its own. */
function foreignError(): Error {
  return runInNewContext(`Object.assign(new Error('sign in first'), { status: 401, expose: true, headers: { 'www-authenticate': 'Bearer' } })`) as Error;
}

for (const [name, Koa] of [
  ['Koa 3', Koa3],
  ['Koa 2', Koa2],
] as const) {
  describe(`${name}: an Error of another realm`, () => {
    for (const [mode, options] of [
      ['AMP', { publishers: ['example.com'] }],
      ['drop-in', { origin: 'https://example.com', credentials: true }],
    ] as const) {
      it(`${mode}: is answered with its own status, message and headers, plus this request's CORS headers`, async () => {
        const thrown = foreignError();
        expect(thrown instanceof Error).toBe(false);
        const app = new Koa();
        app.silent = true;
        app.use(ampCors(options));
        app.use(() => {
          throw thrown;
        });
        const res = await request(app.callback()).get('/').set('Origin', 'https://example.com');
        expect(res.status).toBe(401);
        expect(res.text).toBe('sign in first');
        expect(res.headers['www-authenticate']).toBe('Bearer');
        expect(res.headers['access-control-allow-origin']).toBe('https://example.com');
        expect(res.headers['access-control-allow-credentials']).toBe('true');
        expect(res.headers.vary).toMatch(/\bOrigin\b/);
        // The thrown object is never changed.
        expect((thrown as unknown as { headers: Record<string, string> }).headers).toEqual({ 'www-authenticate': 'Bearer' });
      });

      it(`${mode}: a denied origin gets no CORS header on it`, async () => {
        const app = new Koa();
        app.silent = true;
        app.use(ampCors({ ...options, onDenied: 'omit' }));
        app.use(() => {
          throw foreignError();
        });
        const res = await request(app.callback()).get('/').set('Origin', 'https://evil.example');
        expect(res.status).toBe(401);
        expect(res.headers['access-control-allow-origin']).toBeUndefined();
        expect(res.headers['access-control-allow-credentials']).toBeUndefined();
        expect(res.headers.vary).toMatch(/\bOrigin\b/);
      });
    }
  });
}
