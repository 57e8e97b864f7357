/**
 * `req.ampCors` through the accessor on Express's base request prototype
 * (request-verdict.ts): each request reads its own verdict, never another's,
 * in Express 4 and 5, in sub-apps and in routes ampcors did not run for; a
 * plain `node:http` request gets an own property and Node's prototype is
 * never changed.
 */
import { createServer, IncomingMessage } from 'node:http';
import type { AddressInfo } from 'node:net';
import { ampCors } from '@ampcors/express';
import request from 'supertest';
import { afterAll, describe, expect, it } from 'vitest';
import { CACHE, EVIL, EXPRESS_VERSIONS } from './express-versions.js';

describe.each(EXPRESS_VERSIONS)('%s: req.ampCors', (_name, express) => {
  const seen: Array<string | undefined> = [];
  const app = express();
  const sub = express();
  sub.use(ampCors({ publishers: ['example.com'], onDenied: 'omit' }));
  sub.get('/in', (req, res) => {
    seen.push(`sub:${req.ampCors?.reason}`);
    res.send('ok');
  });
  app.use('/api', ampCors({ publishers: ['example.com'], onDenied: 'omit' }));
  app.get('/api/r', (req, res) => {
    seen.push(req.ampCors?.reason);
    res.send('ok');
  });
  app.use('/sub', sub);
  app.get('/other', (req, res) => {
    seen.push(`other:${String(req.ampCors)}`);
    res.send('ok');
  });
  app.get('/own', (req, res, next) => {
    req.ampCors = { allowed: false, origin: null, reason: 'missing', detail: 'set by the application' };
    next();
  });
  app.get('/own', (req, res) => {
    seen.push(`own:${(req.ampCors as { detail?: string } | undefined)?.detail}`);
    res.send('ok');
  });

  it('each request reads its own verdict; a route ampcors did not run for reads none, never a previous one', async () => {
    seen.length = 0;
    await request(app).get('/api/r').set('Origin', CACHE);
    await request(app).get('/other').set('Origin', CACHE);
    await request(app).get('/api/r').set('Origin', EVIL);
    await request(app).get('/other').set('Origin', EVIL);
    await Promise.all([request(app).get('/api/r').set('Origin', CACHE), request(app).get('/api/r').set('Origin', EVIL)]);
    await request(app).get('/sub/in').set('Origin', CACHE);
    await request(app).get('/own');
    expect(seen.slice(0, 4)).toEqual(['cache-origin', 'other:undefined', 'unknown-origin', 'other:undefined']);
    expect([...(seen.slice(4, 6) as string[])].sort()).toEqual(['cache-origin', 'unknown-origin']);
    expect(seen.slice(6)).toEqual(['sub:cache-origin', 'own:set by the application']);
  });
});

describe.each(EXPRESS_VERSIONS)('%s: a forged req.ampCors set before ampcors runs', (_name, express) => {
  const FORGED = { allowed: true, origin: EVIL, via: 'origin', reason: 'forged' };

  it('an own property an earlier middleware defined is overwritten by the verdict, never left to be read', async () => {
    const app = express();
    app.use((req, _res, next) => {
      Object.defineProperty(req, 'ampCors', { value: FORGED, writable: true, configurable: true, enumerable: true });
      next();
    });
    app.use(ampCors({ publishers: ['example.com'], onDenied: 'omit' }));
    app.get('/r', (req, res) => {
      res.send(`${String(req.ampCors?.allowed)}:${req.ampCors?.reason}`);
    });
    expect((await request(app).get('/r').set('Origin', EVIL)).text).toBe('false:unknown-origin');
    expect((await request(app).get('/r').set('Origin', CACHE)).text).toBe('true:cache-origin');
  });

  it("a value on the app's request prototype is shadowed by each request's verdict", async () => {
    const app = express();
    Object.defineProperty(app.request, 'ampCors', { value: FORGED, writable: true, configurable: true });
    app.use(ampCors({ publishers: ['example.com'], onDenied: 'omit' }));
    app.get('/r', (req, res) => {
      res.send(`${String(req.ampCors?.allowed)}:${req.ampCors?.reason}`);
    });
    expect((await request(app).get('/r').set('Origin', EVIL)).text).toBe('false:unknown-origin');
    expect((await request(app).get('/r').set('Origin', CACHE)).text).toBe('true:cache-origin');
  });
});

describe('a plain node:http request', () => {
  const middleware = ampCors({ publishers: ['example.com'] });
  let reason: unknown;
  let own = false;
  const server = createServer((req, res) => {
    middleware(req, res, () => {
      reason = (req as { ampCors?: { reason: string } }).ampCors?.reason;
      own = Object.hasOwn(req, 'ampCors');
      res.end('ok');
    });
  });
  afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())));

  it("gets an own property, and Node's IncomingMessage.prototype is never changed", async () => {
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const { port } = server.address() as AddressInfo;
    const res = await fetch(`http://127.0.0.1:${port}/r`, { headers: { Origin: CACHE } });
    expect(res.status).toBe(200);
    expect([reason, own]).toEqual(['cache-origin', true]);
    expect(Object.hasOwn(IncomingMessage.prototype, 'ampCors')).toBe(false);
    expect('ampCors' in IncomingMessage.prototype).toBe(false);
  });
});
