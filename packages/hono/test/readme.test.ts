/**
 * The README's example, run verbatim: its first `ts` block is written next to
 * this test (removed afterwards), imported, and its `app` asked the requests
 * the README describes.
 */
import { readFileSync, rmSync, writeFileSync } from 'node:fs';
import { cacheOrigin } from '@ampcors/core';
import type { Hono } from 'hono';
import { afterAll, expect, it } from 'vitest';

const readme = readFileSync(new URL('../README.md', import.meta.url), 'utf8');
const block = /```ts\n([\s\S]*?)```/.exec(readme)?.[1] ?? '';
const file = new URL(`./readme-example-${process.pid}.tmp.ts`, import.meta.url);

afterAll(() => rmSync(file, { force: true }));

it('the README example answers as the README says', async () => {
  expect(block).toContain("app.use('/api/*', ampCors(");
  writeFileSync(file, block);
  const { default: app } = (await import(/* @vite-ignore */ file.href)) as { default: Hono };
  const allowed = await app.request('http://api.example.test/api/subscribe', { method: 'POST', headers: { Origin: cacheOrigin('example.com') } });
  expect(allowed.status).toBe(200);
  expect(allowed.headers.get('access-control-allow-origin')).toBe('https://example-com.cdn.ampproject.org');
  expect(allowed.headers.get('access-control-allow-credentials')).toBe('true');
  expect(allowed.headers.get('access-control-expose-headers')).toBe('AMP-Redirect-To');
  expect(allowed.headers.get('amp-redirect-to')).toBe('https://www.example.com/thanks');
  expect(allowed.headers.get('vary')).toBe('Origin');
  const denied = await app.request('http://api.example.test/api/subscribe', { method: 'POST', headers: { Origin: 'https://evil-com.cdn.ampproject.org' } });
  expect(denied.status).toBe(403);
  expect(await denied.text()).toBe('Forbidden: CORS origin denied (unknown-publisher)\n');
});
