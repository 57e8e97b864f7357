/**
 * Attacker's review (session 14): the `cors` package's per-request options
 * delegate of @ampcors/express. A delegate that builds its options from the
 * request it is given (`{ origin: req.headers.origin, credentials: true }`,
 * a common way of "allowing the caller" in `cors` apps) trusts every origin
 * with credentials, exactly like `origin: true`, which ampcors refuses with
 * credentials, and like an origin callback answering `cb(null, origin)`,
 * which it refuses per request by asking about a canary origin. The attacker
 * is any web page: its credentialed fetch must not be readable.
 */
import { createRequire } from 'node:module';
import { ampCors, type ExpressAmpCorsOptions, type OptionsDelegate } from '@ampcors/express';
import express from 'express';
import request from 'supertest';
import { describe, expect, it } from 'vitest';

const EVIL = 'https://evil.example';

async function attack(delegate: OptionsDelegate, method: 'GET' | 'OPTIONS' = 'GET') {
  let ran = 0;
  const app = express();
  app.use(ampCors(delegate));
  app.all('/api', (_req, res) => {
    ran += 1;
    res.json({ secret: 'user data' });
  });
  app.use((_error: unknown, _req: express.Request, res: express.Response, _next: express.NextFunction) => {
    res.status(500).send('error');
  });
  const pending = method === 'GET' ? request(app).get('/api') : request(app).options('/api').set('Access-Control-Request-Method', 'PUT');
  const res = await pending.set('Origin', EVIL).set('Cookie', 'session=victim');
  return { res, ran };
}

/** Whether a browser on EVIL may read the credentialed answer. */
function readableWithCredentials(res: request.Response): boolean {
  return res.headers['access-control-allow-origin'] === EVIL && res.headers['access-control-allow-credentials'] === 'true';
}

const REFLECTING: ReadonlyArray<[string, OptionsDelegate]> = [
  ['origin: req.headers.origin', (req, cb) => cb(null, { origin: req.headers.origin, credentials: true })],
  ['origin: [req.headers.origin]', (req, cb) => cb(null, { origin: [req.headers.origin as string], credentials: true })],
  [
    'publishers plus origin: req.headers.origin (credentials by default)',
    (req, cb) => cb(null, { publishers: ['example.com'], origin: req.headers.origin } as ExpressAmpCorsOptions),
  ],
  ['asynchronous, origin: req.headers.origin', (req, cb) => setImmediate(() => cb(null, { origin: req.headers.origin, credentials: true }))],
];

describe('attack: an options delegate that reflects the request Origin with credentials', () => {
  for (const [name, delegate] of REFLECTING) {
    it(`${name}: evil.example cannot read the credentialed answer`, async () => {
      const { res } = await attack(delegate);
      expect(readableWithCredentials(res)).toBe(false);
    });
    it(`${name}: a credentialed preflight from evil.example is not granted`, async () => {
      const { res } = await attack(delegate, 'OPTIONS');
      expect(readableWithCredentials(res)).toBe(false);
    });
  }
});

// ---------------------------------------------------------------------------
// The fix (delegate-guard.ts in @ampcors/core): each credentialed allow of a delegate answer asks the delegate again
// about the same request from a canary origin; an answer allowing it fails the request. Express 4 and 5.

const require = createRequire(import.meta.url);
const express4 = require('express4') as typeof express;
const A = 'https://a.example';

async function send(app: express.Express, method: 'GET' | 'OPTIONS', origin: string) {
  const pending = method === 'GET' ? request(app).get('/api') : request(app).options('/api').set('Access-Control-Request-Method', 'PUT');
  return pending.set('Origin', origin).set('Cookie', 'session=victim');
}

function appWith(framework: typeof express, delegate: OptionsDelegate, ran: { count: number }): express.Express {
  const app = framework();
  app.use(ampCors(delegate));
  app.all('/api', (_req, res) => {
    ran.count += 1;
    res.json({ secret: 'user data' });
  });
  app.use((error: unknown, _req: express.Request, res: express.Response, _next: express.NextFunction) => {
    res.status(500).send(error instanceof Error && 'code' in error ? String(error.code) : 'error');
  });
  return app;
}

describe.each([
  ['express 5', express],
  ['express 4', express4],
])('%s: how a delegate reads the Origin does not matter', (_name, framework) => {
  const READERS: ReadonlyArray<[string, OptionsDelegate]> = [
    ["req.get('Origin')", (req, cb) => cb(null, { origin: (req as express.Request).get('Origin'), credentials: true })],
    ["req.header('origin')", (req, cb) => cb(null, { origin: (req as express.Request).header('origin'), credentials: true })],
    ['req.headers.origin', (req, cb) => cb(null, { origin: req.headers.origin, credentials: true })],
    [
      'req.rawHeaders',
      (req, cb) => cb(null, { origin: req.rawHeaders[req.rawHeaders.findIndex((name) => name.toLowerCase() === 'origin') + 1], credentials: true }),
    ],
  ];
  for (const [reader, delegate] of READERS) {
    it(`${reader}: a 500 with Vary: Origin, no CORS header, the handler not run (GET and preflight)`, async () => {
      const ran = { count: 0 };
      for (const method of ['GET', 'OPTIONS'] as const) {
        const res = await send(appWith(framework, delegate, ran), method, EVIL);
        expect(res.status).toBe(500);
        expect(res.text).toBe('unsafe-configuration');
        expect(res.headers.vary).toMatch(/\bOrigin\b/);
        expect(res.headers['access-control-allow-origin']).toBeUndefined();
        expect(res.headers['access-control-allow-credentials']).toBeUndefined();
      }
      expect(ran.count).toBe(0);
    });
  }

  it('a fixed origin and an allowlist check keep working; an allowed credentialed request is asked about again with other Origins only', async () => {
    const ALLOW = [A, 'https://b.example'];
    let asked: string[] = [];
    const DELEGATES: OptionsDelegate[] = [
      (req, cb) => (asked.push(req.headers.origin as string), cb(null, { origin: A, credentials: true })),
      (req, cb) => (
        asked.push(req.headers.origin as string),
        cb(null, { origin: ALLOW.includes(req.headers.origin as string) ? req.headers.origin : false, credentials: true })
      ),
    ];
    for (const delegate of DELEGATES) {
      const ran = { count: 0 };
      const app = appWith(framework, delegate, ran);
      asked = [];
      const allowed = await send(app, 'GET', A);
      expect([allowed.status, allowed.headers['access-control-allow-origin'], allowed.headers['access-control-allow-credentials']]).toEqual([200, A, 'true']);
      expect(asked[0]).toBe(A);
      expect(asked.length).toBeGreaterThan(1);
      expect(asked.slice(1).filter((origin) => origin === A || ALLOW.includes(origin))).toEqual([]);
      expect(asked[1]).toMatch(/^https:\/\/[a-z.]*ampcorscanary/);
      const preflight = await send(app, 'OPTIONS', A);
      expect([preflight.status, preflight.headers['access-control-allow-origin']]).toEqual([204, A]);
      asked = [];
      const evil = await send(app, 'GET', EVIL);
      expect(evil.headers['access-control-allow-origin']).toBeUndefined();
      expect(evil.status).toBe(200);
      expect(asked).toEqual([EVIL]);
    }
  });
});
