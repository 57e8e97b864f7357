/**
 * The response headers the Express adapter reads from Node's own header
 * store (node-headers.ts): the same values `getHeader` gives, and, from the
 * attacker's side, the all-or-none writes and the earlier grants still seen
 * through them (a refused write leaves no CORS header; a `getHeader` that
 * hides what is set hides nothing from ampcors).
 */
import { IncomingMessage, ServerResponse } from 'node:http';
import { ampCors } from '@ampcors/express';
import type { RequestHandler } from 'express';
import fc from 'fast-check';
import request from 'supertest';
import { describe, expect, it } from 'vitest';
import { storedHeader } from '../src/node-headers.js';
import { CACHE, EVIL, EXPRESS_VERSIONS } from './express-versions.js';

const NAMES = ['vary', 'content-length', 'access-control-allow-origin', 'X-Custom', 'Set-Cookie'] as const;

describe('storedHeader', () => {
  it('reads what getHeader reads, after any sequence of sets and removals', () => {
    const value = fc.oneof(
      fc.stringMatching(/^[\x20-\x7e]{0,12}$/),
      fc.integer({ min: 0, max: 1e6 }),
      fc.array(fc.stringMatching(/^[a-z=;]{1,8}$/), { maxLength: 3 }),
    );
    const step = fc.tuple(fc.constantFrom(...NAMES), fc.option(value, { nil: undefined }));
    fc.assert(
      fc.property(fc.array(step, { maxLength: 12 }), (steps) => {
        const res = new ServerResponse(new IncomingMessage(null as never));
        const check = () => {
          for (const name of NAMES) expect(storedHeader(res, name.toLowerCase())).toEqual(res.getHeader(name));
        };
        check();
        for (const [name, set] of steps) {
          if (set === undefined) res.removeHeader(name);
          else res.setHeader(name, set);
          check();
        }
      }),
    );
  });

  it('reads through getHeader where Node’s store is not there (a response-like object)', () => {
    const like = { getHeader: (name: string) => (name === 'vary' ? 'Accept' : undefined) } as unknown as ServerResponse;
    expect(storedHeader(like, 'vary')).toBe('Accept');
    expect(storedHeader(like, 'content-length')).toBeUndefined();
  });
});

describe.each(EXPRESS_VERSIONS)('%s: headers already on the response, from the attacker’s side', (_name, express) => {
  function app(before: RequestHandler) {
    const built = express();
    built.use(before);
    built.use(ampCors({ publishers: ['example.com'] }));
    built.all('/r', (_req, res) => {
      res.send('secret');
    });
    return built;
  }

  it('a write refused half-way leaves no CORS header, not even an earlier layer’s grant', async () => {
    const refusing: RequestHandler = (_req, res, next) => {
      res.setHeader('Access-Control-Allow-Origin', EVIL);
      const set = res.setHeader.bind(res);
      res.setHeader = ((name: string, value: string | number | readonly string[]) => {
        if (name.toLowerCase() === 'access-control-allow-credentials') throw new TypeError('refused');
        return set(name, value);
      }) as typeof res.setHeader;
      next();
    };
    for (const origin of [CACHE, EVIL]) {
      const answer = await request(app(refusing)).get('/r').set('Origin', origin);
      expect(answer.text).not.toBe('secret');
      expect(answer.headers['access-control-allow-origin']).toBeUndefined();
      expect(answer.headers['access-control-allow-credentials']).toBeUndefined();
      expect(answer.headers['access-control-expose-headers']).toBeUndefined();
    }
  });

  it('a getHeader that hides what is set hides nothing: an earlier grant still goes, Vary is still merged', async () => {
    const hiding: RequestHandler = (_req, res, next) => {
      res.setHeader('Access-Control-Allow-Origin', EVIL);
      res.setHeader('Access-Control-Allow-Credentials', 'true');
      res.setHeader('Access-Control-Allow-Methods', 'DELETE');
      res.setHeader('Vary', 'Accept-Encoding');
      res.getHeader = (() => undefined) as typeof res.getHeader;
      next();
    };
    const denied = await request(app(hiding)).get('/r').set('Origin', EVIL);
    expect(denied.status).toBe(403);
    expect(denied.headers['access-control-allow-origin']).toBeUndefined();
    expect(denied.headers['access-control-allow-credentials']).toBeUndefined();
    expect(denied.headers['access-control-allow-methods']).toBeUndefined();
    expect(denied.headers['vary']).toBe('Accept-Encoding, Origin');
    const allowed = await request(app(hiding)).get('/r').set('Origin', CACHE);
    expect(allowed.text).toBe('secret');
    expect(allowed.headers['access-control-allow-origin']).toBe(CACHE);
    // The earlier layer's method grant is not the plan's: it goes.
    expect(allowed.headers['access-control-allow-methods']).toBeUndefined();
    expect(allowed.headers['vary']).toBe('Accept-Encoding, Origin');
  });
});
