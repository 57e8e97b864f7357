// Attacker's view of the drop-ins' guard against options that allow origins nobody named (issue 14 item 3), with the
// classic allow-list mistakes of CORS configurations: a suffix match without its dot (`cors`'s own README example,
// /example\.com$/), an unescaped dot, a prefix match without an end anchor, and the same as origin callbacks
// (endsWith, startsWith). Each trusts a host anyone can register (evilexample.com, wwwxexample.com,
// example.com.evil.net) with the users' credentials. The attacker's look-alike must never read with credentials:
// the configuration is refused, or the request fails or is denied.
import { ampCors as expressAmpCors } from '@ampcors/express';
import express from 'express';
import request from 'supertest';
import { describe, expect, it } from 'vitest';

type Callback = (error: Error | null, allow?: unknown) => void;
/** [name, the origin option, the publisher origin it was written for, a look-alike anyone can register]. */
const LOOSE: ReadonlyArray<readonly [string, unknown, string, string]> = [
  ["cors's README pattern /example\\.com$/", /example\.com$/, 'https://example.com', 'https://evilexample.com'],
  ['an unescaped dot /^https:\\/\\/www.example.com$/', /^https:\/\/www.example.com$/, 'https://www.example.com', 'https://wwwxexample.com'],
  ['no end anchor /^https:\\/\\/example\\.com/', /^https:\/\/example\.com/, 'https://example.com', 'https://example.com.evil.net'],
  ['a callback answering endsWith', (o: string, cb: Callback) => cb(null, o.endsWith('example.com')), 'https://example.com', 'https://evilexample.com'],
  [
    'a callback answering startsWith',
    (o: string, cb: Callback) => cb(null, o.startsWith('https://example.com')),
    'https://example.com',
    'https://example.com.evil.net',
  ],
];

async function reads(origin: unknown, from: string) {
  const app = express();
  app.use(expressAmpCors({ origin, credentials: true } as never));
  app.get('/api', (_req, res) => void res.json({ secret: 1 }));
  const res = await request(app).get('/api').set('Origin', from);
  return { status: res.status, acao: res.headers['access-control-allow-origin'], credentials: res.headers['access-control-allow-credentials'] };
}

describe('attacker: an origin option that also trusts registrable look-alikes, with credentials', () => {
  it.each(LOOSE)('%s: the look-alike never reads with credentials', async (_name, origin, _own, evil) => {
    let read: Awaited<ReturnType<typeof reads>> | undefined;
    try {
      read = await reads(origin, evil);
    } catch (error) {
      // Refused when the middleware is created: safe.
      expect(String(error)).toMatch(/credentials/);
      return;
    }
    expect(read.acao === evil && read.credentials === 'true', JSON.stringify(read)).toBe(false);
  });

  it('a pattern written tightly keeps working: the publisher origins read, look-alikes do not', async () => {
    const tight = /^https:\/\/([a-z0-9-]+\.)*example\.com$/;
    for (const own of ['https://example.com', 'https://www.example.com', 'https://a.b.example.com'])
      expect(await reads(tight, own)).toEqual({ status: 200, acao: own, credentials: 'true' });
    for (const evil of ['https://evilexample.com', 'https://example.com.evil.net', 'https://wwwxexample.com'])
      expect((await reads(tight, evil)).acao).toBeUndefined();
  });
});
