/**
 * The Fastify example API, from a browser's and an attacker's side: its AMP
 * cache origins are answered, a foreign POST never runs the subscription,
 * and `/health` stays outside CORS.
 */
import { cacheOrigin } from '@ampcors/core';
import { describe, expect, it } from 'vitest';
import { buildApp } from '../src/app.js';

const CACHE = cacheOrigin('www.example.com');
const form = { 'content-type': 'application/x-www-form-urlencoded' };

describe('examples/fastify', () => {
  it('amp-list from the AMP cache: allowed with credentials', async () => {
    const { app } = await buildApp();
    const res = await app.inject({ method: 'GET', url: '/api/items', headers: { origin: CACHE } });
    expect(res.statusCode).toBe(200);
    expect(res.headers['access-control-allow-origin']).toBe(CACHE);
    expect(res.headers['access-control-allow-credentials']).toBe('true');
    expect(res.json().trustedVia).toBe('cache-origin');
  });

  it('amp-form from the AMP cache: preflight answered, subscription runs, AMP-Redirect-To exposed', async () => {
    const { app, subscriptions } = await buildApp();
    const preflight = await app.inject({ method: 'OPTIONS', url: '/api/subscribe', headers: { origin: CACHE, 'access-control-request-method': 'POST' } });
    expect(preflight.statusCode).toBe(204);
    const res = await app.inject({ method: 'POST', url: '/api/subscribe', headers: { origin: CACHE, ...form }, payload: 'email=a%40example.com' });
    expect(res.statusCode).toBe(200);
    expect(res.headers['amp-redirect-to']).toBe('https://www.example.com/thanks');
    expect(res.headers['access-control-expose-headers']).toContain('AMP-Redirect-To');
    expect(subscriptions()).toBe(1);
  });

  it.each([cacheOrigin('evil.com'), 'https://www.example.com.evil.example', 'null', 'https://www-example-com.cdn.ampproject.org.evil.example'])(
    'attacker %s: 403 before the route, no subscription, no CORS header',
    async (origin) => {
      const { app, subscriptions } = await buildApp();
      const res = await app.inject({
        method: 'POST',
        url: '/api/subscribe',
        headers: { origin, cookie: 'session=1', ...form },
        payload: 'email=a%40example.com',
      });
      expect(res.statusCode).toBe(403);
      expect(res.headers['access-control-allow-origin']).toBeUndefined();
      expect(subscriptions()).toBe(0);
    },
  );

  it('/health is outside the plugin: no CORS header, no 403', async () => {
    const { app } = await buildApp();
    const res = await app.inject({ method: 'GET', url: '/health', headers: { origin: 'https://evil.example' } });
    expect(res.statusCode).toBe(200);
    expect(res.headers['access-control-allow-origin']).toBeUndefined();
  });
});
