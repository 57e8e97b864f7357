/**
 * Attacker's review (session 14, helper-44): the delegate guard's canary
 * request (`nodeRequestAbout`) must carry the canary in every place a Node
 * request exposes its `Origin`. `req.headersDistinct` (Node >= 18.3) is a
 * getter that caches its object on the request the first time it is read:
 * the delegate reads it on the real request first, so a canary request that
 * inherits from the real one sees the real `Origin` there.
 */
import { ampCors, type OptionsDelegate } from '@ampcors/express';
import express from 'express';
import request from 'supertest';
import { describe, expect, it } from 'vitest';

const EVIL = 'https://evil.example';

async function attack(delegate: OptionsDelegate) {
  const app = express();
  app.use(ampCors(delegate));
  app.get('/api', (_req, res) => {
    res.json({ secret: 'user data' });
  });
  app.use((_error: unknown, _req: express.Request, res: express.Response, _next: express.NextFunction) => {
    res.status(500).send('error');
  });
  return request(app).get('/api').set('Origin', EVIL).set('Cookie', 'session=victim');
}

const distinct = (req: object): string | undefined => (req as unknown as { headersDistinct: Record<string, string[] | undefined> }).headersDistinct.origin?.[0];

describe('attack: a delegate reflecting the Origin read from req.headersDistinct', () => {
  it('evil.example cannot read the credentialed answer', async () => {
    const res = await attack((req, cb) => cb(null, { origin: distinct(req), credentials: true }));
    expect(res.headers['access-control-allow-origin'] === EVIL && res.headers['access-control-allow-credentials'] === 'true').toBe(false);
  });
  it('nor when the delegate answers asynchronously', async () => {
    const res = await attack((req, cb) => setImmediate(() => cb(null, { origin: distinct(req), credentials: true })));
    expect(res.headers['access-control-allow-origin'] === EVIL && res.headers['access-control-allow-credentials'] === 'true').toBe(false);
  });
});
