/**
 * Attacker's review, session 15 (helper-70): Fastify paths nobody attacked
 * before — a route's `config.cors` asking for credentials with a catch-all
 * origin, the not-found handler, `setErrorHandler`, `reply.hijack()`, HEAD
 * auto-routes — and AMP for Email senders in odd shapes (case, trailing dot,
 * quoted local part, comments, lists, several `@`, IDN, duplicated headers),
 * plus email headers sent to a configuration without `email`.
 * Safe behaviour asserted: no origin allowed by accident, a denied request's
 * answer (error handler included) carries no CORS header, and
 * `AMP-Email-Allow-Sender` is only ever the value the client sent and only
 * for a configured sender.
 */
import { ampCors } from '@ampcors/fastify';
import Fastify from 'fastify';
import { describe, expect, it } from 'vitest';

const EVIL = 'https://evil.example';
const OWN = 'https://example.com';

describe('Fastify: route config.cors cannot open credentials to every origin (helper-70)', () => {
  const catchAlls: [string, object][] = [
    ['origin: true', { origin: true, credentials: true }],
    ['origin: /.*/', { origin: /.*/, credentials: true }],
    ['cb(null, true)', { origin: (_o: string, cb: (e: Error | null, ok: boolean) => void) => cb(null, true), credentials: true }],
    ["origin: '*'", { origin: '*', credentials: true }],
  ];
  for (const [name, routeCors] of catchAlls) {
    it(`${name}: GET, HEAD and preflight from ${EVIL} get no CORS header`, async () => {
      const app = Fastify();
      await app.register(ampCors, { origin: [OWN], credentials: true });
      app.get('/r', { config: { cors: routeCors } }, async () => 'secret');
      await app.ready();
      const get = await app.inject({ method: 'GET', url: '/r', headers: { origin: EVIL } });
      const head = await app.inject({ method: 'HEAD', url: '/r', headers: { origin: EVIL } });
      const preflight = await app.inject({ method: 'OPTIONS', url: '/r', headers: { origin: EVIL, 'access-control-request-method': 'GET' } });
      for (const r of [get, head, preflight]) {
        expect(r.headers['access-control-allow-origin']).toBeUndefined();
        expect(r.headers['access-control-allow-credentials']).toBeUndefined();
      }
      expect(get.body).not.toContain('secret');
      await app.close();
    });
  }
});

describe('Fastify: denied requests and the error, not-found and hijack paths (helper-70)', () => {
  const build = async () => {
    const app = Fastify();
    await app.register(ampCors, { publishers: ['example.com'], onDenied: 'reject' });
    app.setErrorHandler(
      (error, _request, reply) =>
        void reply
          .header('x-handled', '1')
          .code(418)
          .send({ error: String(error) }),
    );
    app.get('/boom', async () => {
      throw new Error('handler failed');
    });
    let hijacked = 0;
    app.get('/hijack', (_request, reply) => {
      hijacked++;
      reply.hijack();
      reply.raw.end('hijacked');
    });
    await app.ready();
    return { app, hijacked: () => hijacked };
  };

  it('a denied Origin never reaches the route, the error handler or hijack, and gets no CORS header', async () => {
    const { app, hijacked } = await build();
    for (const url of ['/nope', '/boom', '/hijack', '/boom?__amp_source_origin=a%40evil.example']) {
      for (const method of ['GET', 'HEAD', 'POST'] as const) {
        const r = await app.inject({ method, url, headers: { origin: EVIL, 'amp-email-sender': 'a@evil.example' } });
        expect(r.statusCode, `${method} ${url}`).toBe(403);
        expect(r.headers['access-control-allow-origin']).toBeUndefined();
        expect(r.headers['access-control-allow-credentials']).toBeUndefined();
        expect(r.headers['amp-email-allow-sender']).toBeUndefined();
        expect(r.headers['x-handled']).toBeUndefined();
      }
    }
    expect(hijacked()).toBe(0);
    await app.close();
  });

  it('without `email`, AMP-Email-Sender and an address in __amp_source_origin add no email header', async () => {
    const { app } = await build();
    const r = await app.inject({
      method: 'GET',
      url: '/boom?__amp_source_origin=https%3A%2F%2Fexample.com',
      headers: { origin: OWN, 'amp-email-sender': 'a@example.com' },
    });
    expect(r.headers['access-control-allow-origin']).toBe(OWN);
    expect(r.headers['amp-email-allow-sender']).toBeUndefined();
    const v1 = await app.inject({ method: 'GET', url: '/boom?__amp_source_origin=a%40example.com', headers: { origin: 'https://mail.google.com' } });
    expect(v1.headers['access-control-allow-origin']).toBeUndefined();
    expect(v1.headers['amp-access-control-allow-source-origin']).toBeUndefined();
    await app.close();
  });
});

describe('AMP for Email senders in odd shapes (helper-70)', () => {
  const HOSTILE = [
    'news@example.com.',
    '"news"@example.com',
    'news(comment)@example.com',
    'news@example.com,evil@evil.example',
    'news@example.com evil@evil.example',
    ' news@example.com ',
    'news@example.com@evil.example',
    'evil@evil.example@news@example.com',
    'news@xn--exmple-cua.com',
    'news@exаmple.com', // Cyrillic а
    'news@EXAMPLE.com\u0000',
    'news%40example.com',
    'news@example.com\r\nx-injected: 1',
  ];

  it('only the configured sender (ASCII case-insensitively) is answered, with the value the client sent', async () => {
    const app = Fastify();
    await app.register(ampCors, { publishers: ['example.com'], email: { senders: ['News@Example.com'] } });
    app.post('/f', async (request) => ({ email: request.ampCorsEmail ?? null }));
    await app.ready();
    for (const sender of ['news@example.com', 'NEWS@EXAMPLE.COM', 'nEwS@eXaMpLe.CoM']) {
      const v2 = await app.inject({ method: 'POST', url: '/f', headers: { 'amp-email-sender': sender } });
      expect(v2.headers['amp-email-allow-sender']).toBe(sender);
    }
    for (const sender of HOSTILE) {
      let v2;
      try {
        v2 = await app.inject({ method: 'POST', url: '/f', headers: { 'amp-email-sender': sender } });
      } catch {
        continue; // a value the HTTP layer refuses to send never reaches the server
      }
      expect(v2.headers['amp-email-allow-sender'], JSON.stringify(sender)).toBeUndefined();
      expect(v2.headers['x-injected']).toBeUndefined();
      const v1 = await app.inject({
        method: 'POST',
        url: `/f?__amp_source_origin=${encodeURIComponent(sender)}`,
        headers: { origin: 'https://mail.google.com' },
      });
      expect(v1.headers['access-control-allow-origin'], JSON.stringify(sender)).toBeUndefined();
      expect(v1.headers['amp-access-control-allow-source-origin']).toBeUndefined();
    }
    // Two AMP-Email-Sender headers, one of them trusted: never answered.
    const both = await app.inject({ method: 'POST', url: '/f', headers: { 'amp-email-sender': ['evil@evil.example', 'news@example.com'] } });
    expect(both.headers['amp-email-allow-sender']).toBeUndefined();
    // v1 with a trusted sender from an Origin that is not an email client: no echo.
    const v1Evil = await app.inject({ method: 'POST', url: '/f?__amp_source_origin=news%40example.com', headers: { origin: EVIL } });
    expect(v1Evil.headers['access-control-allow-origin']).toBeUndefined();
    expect(v1Evil.headers['amp-access-control-allow-source-origin']).toBeUndefined();
    await app.close();
  });
});
