/**
 * Attacker's review, session 16 (helper-75): a `?` inside the fragment
 * (`/api#?__amp_source_origin=…`) was read as the start of the query, so
 * the email client was answered with credentials for a sender neither
 * WHATWG's `searchParams` nor the framework sees. Browsers never send a
 * fragment; a non-browser client can, and a cache keying on the URL without
 * its fragment could store that answer. Fixed in source-origin.ts: no query
 * when a `#` comes before the first `?`.
 */
import { sourceOriginOfUrl } from '@ampcors/core/source-origin';
import { withAmpCors } from '@ampcors/fetch';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { rawRequest } from './raw-http.js';
import { ADAPTERS, startApi } from './servers.js';

describe('a ? inside the fragment is no query', () => {
  for (const url of [
    '/api#?__amp_source_origin=news%40example.com',
    '/api#x?__amp_source_origin=news%40example.com',
    'https://h.example/api#?__amp_source_origin=https%3A%2F%2Fevil.example',
  ]) {
    it(url, () => {
      expect(sourceOriginOfUrl(url)).toBe(new URL(url, 'https://h.example').searchParams.get('__amp_source_origin'));
    });
  }
  it('the email client is not answered for a sender that is only in the fragment (Fetch adapter)', async () => {
    const handler = withAmpCors(() => new Response('ok'), { publishers: ['example.com'], email: { senders: ['news@example.com'] } });
    const res = await handler(
      new Request('https://api.example/api#?__amp_source_origin=news%40example.com', { method: 'POST', headers: { origin: 'https://mail.google.com' } }),
    );
    expect(res.headers.get('access-control-allow-origin')).toBeNull();
    expect(res.headers.get('amp-access-control-allow-source-origin')).toBeNull();
  });
});

describe('over HTTP, every adapter: the fragment decides nothing', () => {
  for (const adapter of ADAPTERS) {
    it(`${adapter}: POST /api#?__amp_source_origin=news%40example.com from the email client gets no CORS answer`, async () => {
      const api = await startApi(adapter, { publishers: ['example.com'], email: { senders: ['news@example.com'] } });
      try {
        const res = await rawRequest(api.url, '/api#?__amp_source_origin=news%40example.com', ['Origin: https://mail.google.com\r\n']);
        expect(res.headers['access-control-allow-origin']).toBeUndefined();
        expect(res.headers['access-control-allow-credentials']).toBeUndefined();
        expect(res.headers['amp-access-control-allow-source-origin']).toBeUndefined();
      } finally {
        await api.close();
      }
    });
  }
});

describe('property: the parameter is read as WHATWG searchParams reads it, wherever `?` and `#` fall', () => {
  const pieces = [
    '?',
    '#',
    '&',
    '=',
    '+',
    '%',
    '%40',
    '%3F',
    '%23',
    'a',
    '/',
    '__amp_source_origin',
    '__amp_source_origin=',
    '%5F_amp_source_origin=',
    'news@example.com',
    'https://evil.example',
  ];
  it('sourceOriginOfUrl equals searchParams.getAll joined with ","', () => {
    fc.assert(
      fc.property(fc.array(fc.constantFrom(...pieces), { maxLength: 12 }), (parts) => {
        const path = `/api${parts.join('')}`;
        const values = new URL(path, 'https://h.example').searchParams.getAll('__amp_source_origin');
        expect(sourceOriginOfUrl(path)).toBe(values.length === 0 ? null : values.join(','));
      }),
      { numRuns: 5000 },
    );
  });
});
