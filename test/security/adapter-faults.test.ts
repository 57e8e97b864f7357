// Adapter faults (issue #6), through every adapter over real HTTP: a throwing
// user hook, headers already sent, Vary already present, and CR/LF in any
// request header or in __amp_source_origin never reflected.
import type { Verdict } from '@ampcors/core';
import request from 'supertest';
import { afterEach, describe, expect, it } from 'vitest';
import { rawRequest } from './raw-http.js';
import { ADAPTERS, type AdapterOptions, type ApiServer, type ServerHooks, startApi } from './servers.js';

const CACHE_ORIGIN = 'https://example-com.cdn.ampproject.org';
const OPTIONS: AdapterOptions = { publishers: ['example.com'], email: { senders: ['news@example.com'] } };
const running: ApiServer[] = [];
afterEach(async () => {
  await Promise.all(running.splice(0).map((api) => api.close()));
});
async function start(adapter: (typeof ADAPTERS)[number], options: AdapterOptions, hooks?: ServerHooks): Promise<ApiServer> {
  const api = await startApi(adapter, options, hooks);
  running.push(api);
  return api;
}

for (const adapter of ADAPTERS) {
  describe(`${adapter}: faults`, () => {
    it.each([
      ['throws', () => {
        throw new Error('hook failed: https://evil.example');
      }],
      ['rejects', () => Promise.reject(new Error('hook failed'))],
      ['returns garbage', () => ({ allowed: 'yes', origin: 'https://evil.example' }) as unknown as Verdict],
    ])('a user verifier that %s fails closed: no CORS header, handler not run, Vary: Origin', async (_what, verify) => {
      const api = await start(adapter, { verifier: { verify } as AdapterOptions['verifier'] });
      const res = await request(api.url).post('/api').set('Origin', CACHE_ORIGIN);
      expect(res.headers['access-control-allow-origin']).toBeUndefined();
      expect(res.headers['access-control-allow-credentials']).toBeUndefined();
      expect(res.status).toBeGreaterThanOrEqual(400);
      expect(api.handlerRuns).toBe(0);
      expect(res.text).not.toContain('evil');
      // The server survives and keeps answering.
      const again = await request(api.url).get('/api');
      expect(again.status).toBeLessThan(600);
    });

    it('headers already sent by an earlier middleware: no crash, the early response stands, the server keeps serving', async () => {
      let first = true;
      const api = await start(adapter, OPTIONS, {
        before: (res) => {
          if (!first) return;
          first = false;
          res.writeHead(202, { 'Content-Type': 'text/plain' });
          res.end('early');
        },
      });
      const early = await request(api.url).post('/api').set('Origin', 'https://evil.com');
      expect(early.status).toBe(202);
      expect(early.text).toBe('early');
      expect(early.headers['access-control-allow-origin']).toBeUndefined();
      const next = await request(api.url).post('/api').set('Origin', CACHE_ORIGIN);
      expect(next.status).toBe(200);
      expect(next.headers['access-control-allow-origin']).toBe(CACHE_ORIGIN);
    });

    it.each([
      ['Accept-Encoding', ['accept-encoding', 'origin']],
      ['Origin', ['origin']],
      ['accept-encoding, ORIGIN', ['accept-encoding', 'origin']],
      ['*', ['*']],
    ])('Vary already %j: kept, Origin added once', async (vary, expected) => {
      const api = await start(adapter, OPTIONS, { vary });
      // Allowed requests reach the handler, whose Vary the adapter must keep. A denied one is answered by the
      // adapter: with Express and Koa, an earlier middleware's Vary is already on the response and must stay.
      for (const origin of adapter === 'fetch' ? [CACHE_ORIGIN] : [CACHE_ORIGIN, 'https://evil.com']) {
        const res = await request(api.url).post('/api').set('Origin', origin);
        const names = String(res.headers.vary)
          .split(',')
          .map((v) => v.trim().toLowerCase())
          .filter((v) => v !== '');
        for (const name of expected) expect(names, `${origin}: ${res.headers.vary}`).toContain(name);
        expect(names.filter((n) => n === 'origin').length).toBeLessThanOrEqual(1);
      }
    });

    const INJECTED = 'X-Injected: yes';
    it.each([
      ['Origin', `Origin: ${CACHE_ORIGIN}\r${INJECTED}\r\n`],
      ['Origin (bare LF)', `Origin: ${CACHE_ORIGIN}\n${INJECTED}\r\n`],
      ['Origin (encoded)', `Origin: ${CACHE_ORIGIN}%0d%0a${INJECTED}\r\n`],
      ['Access-Control-Request-Headers', `Origin: ${CACHE_ORIGIN}\r\nAccess-Control-Request-Method: POST\r\nAccess-Control-Request-Headers: content-type\r${INJECTED}\r\n`],
      ['Access-Control-Request-Method', `Origin: ${CACHE_ORIGIN}\r\nAccess-Control-Request-Method: POST\r${INJECTED}\r\n`],
      ['AMP-Same-Origin', `AMP-Same-Origin: true\r${INJECTED}\r\n`],
      ['AMP-Email-Sender', `Origin: ${CACHE_ORIGIN}\r\nAMP-Email-Sender: news@example.com\r${INJECTED}\r\n`],
    ])('CR/LF in %s is never reflected', async (_header, lines) => {
      const api = await start(adapter, OPTIONS);
      for (const method of ['POST', 'OPTIONS']) {
        const response = await rawRequest(api.url, '/api', [lines], 3000, method);
        expect(response.head.toLowerCase()).not.toContain('x-injected');
        for (const value of Object.values(response.headers)) expect(value).not.toMatch(/[\r\n]/);
      }
    });

    it('CR/LF and a foreign origin in __amp_source_origin: denied, never reflected', async () => {
      const api = await start(adapter, OPTIONS);
      for (const source of [`https://example.com\r\n${INJECTED}`, 'https://evil.com', `https://example.com%0d%0a${INJECTED}`]) {
        const res = await request(api.url)
          .post(`/api?__amp_source_origin=${encodeURIComponent(source)}`)
          .set('Origin', CACHE_ORIGIN);
        expect(res.status).toBe(403);
        expect(res.headers['x-injected']).toBeUndefined();
        expect(res.headers['access-control-allow-origin']).toBeUndefined();
        expect(res.headers['amp-access-control-allow-source-origin']).toBeUndefined();
      }
      expect(api.handlerRuns).toBe(0);
    });

    it('a preflight never lists AMP-Same-Origin as an allowed header', async () => {
      const api = await start(adapter, OPTIONS);
      const res = await request(api.url)
        .options('/api')
        .set('Origin', CACHE_ORIGIN)
        .set('Access-Control-Request-Method', 'POST')
        .set('Access-Control-Request-Headers', 'amp-same-origin, content-type');
      expect(String(res.headers['access-control-allow-headers'] ?? '').toLowerCase()).not.toContain('amp-same-origin');
    });
  });
}
