/**
 * `req.ampCors` (request-verdict.ts) from the attacker's side, against any
 * per-response storage of the verdict: an application that shares one
 * `res.locals` object between responses, or hands a response another's,
 * must never let a request read another request's verdict, even when the
 * requests interleave.
 */
import { ampCors } from '@ampcors/express';
import request from 'supertest';
import { describe, expect, it } from 'vitest';
import { CACHE, EVIL, EXPRESS_VERSIONS } from './express-versions.js';

describe.each(EXPRESS_VERSIONS)('%s: req.ampCors with shared or swapped res.locals', (_name, express) => {
  it('a res.locals shared between responses: interleaved requests each read their own verdict', async () => {
    const shared = Object.create(null) as Record<string, unknown>;
    const app = express();
    app.use((_req, res, next) => {
      res.locals = shared;
      next();
    });
    app.use(ampCors({ publishers: ['example.com'], onDenied: 'omit' }));
    app.get('/r', (req, res) => {
      // Let the other requests' middleware run before this handler reads.
      setTimeout(() => res.send(String(req.ampCors?.reason)), 20);
    });
    const origins = [EVIL, CACHE, EVIL, CACHE, EVIL];
    const answers = await Promise.all(origins.map((origin) => request(app).get('/r').set('Origin', origin)));
    expect(answers.map((res) => res.text)).toEqual(origins.map((origin) => (origin === CACHE ? 'cache-origin' : 'unknown-origin')));
  });

  it('a res.locals replaced after ampCors, or holding another request entry: never another verdict', async () => {
    const app = express();
    let previous: unknown;
    app.use(ampCors({ publishers: ['example.com'], onDenied: 'omit' }));
    app.use((_req, res, next) => {
      // The attacker's request gets the locals of the previous (allowed) request.
      const mine = res.locals;
      if (previous !== undefined) res.locals = previous as typeof mine;
      previous = mine;
      next();
    });
    app.get('/r', (req, res) => {
      res.send(String(req.ampCors?.allowed));
    });
    expect((await request(app).get('/r').set('Origin', CACHE)).text).toBe('true');
    expect((await request(app).get('/r').set('Origin', EVIL)).text).not.toBe('true');
  });
});
