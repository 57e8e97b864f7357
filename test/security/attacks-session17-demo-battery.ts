/**
 * The hostile requests of the session-17 example attacks (attacks-session17-demo-examples.test.ts,
 * attacks-session17-demo-runtimes.test.ts) and what every example must do with them.
 */
import { cacheOrigin } from '@ampcors/core';
import { expect } from 'vitest';
import { type RawAnswer, request, type RunningExample, sendRaw, TERMINAL_CONTROL } from './example-server.js';

export const TRUSTED = cacheOrigin('www.example.com');
const EVIL = 'https://evil.example';
const EVIL_CACHE = 'https://evil-com.cdn.ampproject.org';
const FORM = ['Content-Type: application/x-www-form-urlencoded'];
const esc = '%1B%5B2J%1B%5D0%3Bpwned%07';

/** The hostile requests, each sent on its own connection. */
export const ATTACKS: readonly string[] = [
  ...['TRACE', 'PROPFIND', 'FOO', 'M-SEARCH', 'PURGE', 'QUERY', 'SEARCH', 'LINK', 'get'].flatMap((method) => [
    request(method, '/api/items', [`Origin: ${EVIL}`, 'Cookie: session=secret']),
    request(method, '/api/items', [`Origin: ${TRUSTED}`, 'Cookie: session=secret']),
    request(method, '/api/subscribe', [`Origin: ${EVIL}`, ...FORM], 'email=reader@example.com'),
  ]),
  request('CONNECT', '127.0.0.1:1', [`Origin: ${EVIL}`]),
  ...['POST', 'PUT', 'DELETE', 'PATCH'].flatMap((method) =>
    [EVIL, EVIL_CACHE, 'null', `${TRUSTED}.evil.example`].map((origin) =>
      request(method, '/api/subscribe', [`Origin: ${origin}`, ...FORM], 'email=reader@example.com'),
    ),
  ),
  request('POST', '/api/subscribe', [`Origin: ${EVIL}`, ...FORM, 'Transfer-Encoding: chunked'], '18\r\nemail=reader@example.com\r\n0\r\n\r\n'),
  request('POST', '/api/subscribe', [`Origin: ${EVIL}`, ...FORM, 'Transfer-Encoding: chunked', 'Content-Length: 3'], '0\r\n\r\n'),
  request('POST', '/api/subscribe', [`Origin: ${EVIL}`, ...FORM, 'Transfer-Encoding: chunked'], 'zz\r\n'),
  request('POST', '/api/subscribe', [`Origin: ${TRUSTED}`, ...FORM, 'Content-Length: 5', 'Content-Length: 7'], 'email='),
  request('OPTIONS', '/api/subscribe', [`Origin: ${EVIL}`, 'Access-Control-Request-Method: DELETE', 'Access-Control-Request-Headers: amp-same-origin']),
  request('GET', '/api/items', [`Origin: ${TRUSTED}`, `X-Big: ${'a'.repeat(64 * 1024)}`]),
  request('GET', `/api/items?__amp_source_origin=${'a'.repeat(64 * 1024)}`, [`Origin: ${TRUSTED}`]),
  request('GET', '/api/items', [`Origin: ${TRUSTED}`, `Origin: ${EVIL}`]),
  request(
    'GET',
    '/api/items',
    Array.from({ length: 300 }, (_, i) => `Origin: ${i % 2 === 0 ? TRUSTED : EVIL}`),
  ),
  request('GET', '/api/items', [`Origin: https://www.exampl\xe9.com`]),
  request('GET', '/api/items', [`Origin: ${TRUSTED}\x9b2J`]),
  request('GET', `/api/items?__amp_source_origin=${esc}&%E0%A4%A=%00`, [`Origin: ${EVIL}`]),
  request('GET', `/api/${esc}/%E0%A4%A`, [`Origin: ${EVIL}`]),
  request('GET', '/api/items\x80\xff', [`Origin: ${EVIL}`]),
  request('POST', '/api/subscribe', [`Origin: ${TRUSTED}`, `Content-Type: multipart/form-data; boundary="${esc}"`], `--x\r\n${esc}`),
  request('POST', '/api/subscribe', [`Origin: ${TRUSTED}`, `Content-Type: application/x-www-form-urlencoded; charset="${esc}"`], `email=${esc}`),
  request('POST', '/api/subscribe', [`Origin: ${TRUSTED}`, ...FORM, 'Content-Encoding: gzip'], 'not gzip'),
  request('POST', '/api/subscribe', [`Origin: ${TRUSTED}`, ...FORM], `email=${'\xff'.repeat(10_000)}`),
];

function expectNoGrant(answer: RawAnswer, what: string): void {
  for (const name of ['access-control-allow-origin', 'access-control-allow-credentials', 'amp-access-control-allow-source-origin', 'amp-email-allow-sender']) {
    expect(answer.headers.has(name), `${what}: ${name}\n${answer.raw.slice(0, 400)}`).toBe(false);
  }
}

async function subscriptions(port: number): Promise<number | undefined> {
  const answer = await sendRaw(port, request('GET', '/health'));
  if (answer.status !== 200) return undefined;
  return (JSON.parse(answer.body) as { subscriptions?: number }).subscriptions;
}

/**
 * Sends every attack to `running` on its own connection: each is answered (no hang), none grants an untrusted
 * origin or echoes the request, the server stays up, the subscription counter does not move, and afterwards a
 * trusted origin is still granted and the console holds no 7-bit terminal control.
 */
export async function expectSurvives(running: RunningExample, name: string, attacks: readonly string[]): Promise<void> {
  const { port } = running;
  const before = await subscriptions(port);
  for (const attack of attacks) {
    const what = `${name}: ${JSON.stringify(attack.slice(0, 100))}`;
    const answer = await sendRaw(port, attack, 2_000);
    expect(answer.status, what).not.toBe(-1);
    const untrusted = !attack.includes(`Origin: ${TRUSTED}\r`) || attack.includes(`Origin: ${EVIL}`);
    if (untrusted) expectNoGrant(answer, what);
    // No echo of the request (TRACE): its cookie never comes back.
    expect(answer.raw, what).not.toContain('session=secret');
    expect(answer.raw, what).not.toMatch(/\x1b|pwned\x07/);
    expect(running.alive(), `${what}: exited\n${running.output()}`).toBe(true);
  }
  // Only the trusted origin's POSTs could run the handler, and none of them had a valid email field.
  expect(await subscriptions(port), name).toBe(before);
  const good = await sendRaw(port, request('GET', '/api/items', [`Origin: ${TRUSTED}`]));
  expect(good.status, `${name}: ${good.raw.slice(0, 300)}`).toBe(200);
  expect(good.headers.get('access-control-allow-origin'), name).toBe(TRUSTED);
  expect(TERMINAL_CONTROL.test(running.output()), JSON.stringify(running.output().slice(-2000))).toBe(false);
}
