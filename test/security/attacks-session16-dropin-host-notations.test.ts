/**
 * Attacker's review (session 16; found by the attacker helper, fixed by helper fix-notations): an options delegate
 * (Express 4 and 5) or an origin function (Koa, Hono) with credentials that reads the origin of a URL taken from the
 * query (`new URL(req.query.src).origin`). The guard's questions replaced the real origin only where it showed in its
 * own letters (core's asked-origin.ts, 2): the attacker wrote its host in another notation the URL parser reads back
 * as the same host (an IDN host in Unicode, NFC or NFD; an IPv4 address as one number, in hex, octal or fewer
 * parts; an IPv6 address written out), so every question still read the attacker's origin, the function answered
 * it (never the canary nor a look-alike), the guard passed and any such site read credentialed responses. A
 * question now has every run of a value the URL host parser reads as the real host replaced by the asked host
 * (asked-origin.ts, 5); a run also ends where Node's legacy `url.parse` ends a host (a brace, a backquote). Each attack is the attacker's read: GET with the victim's cookie from the real origin.
 * The last block checks the other side: a function checking that origin against a list stays allowed.
 *
 * Fastify is not affected: its origin function is given the `Origin` alone, and `@fastify/cors`'s options
 * delegator (a function given the request) is refused (core's drop-in-fastify-cors.ts, 1).
 */
import { ampCors as expressAmpCors } from '@ampcors/express';
import { ampCors as honoAmpCors } from '@ampcors/hono';
import { ampCors as koaAmpCors } from '@ampcors/koa';
import { createRequire } from 'node:module';
import { parse as legacyUrlParse } from 'node:url';
import express5 from 'express';
import { Hono } from 'hono';
import Koa from 'koa';
import request from 'supertest';
import { describe, expect, it } from 'vitest';

const express4 = createRequire(import.meta.url)('express4') as typeof express5;
type Seen = { status: number; acao: string | undefined; credentials: string | undefined };
type Callback = (error: null, options: object) => void;
/** What the function reads as the origin from the query value (`false` when it reads none). */
type Read = (value: string | undefined) => string | false;

/** The origin of the URL the function is given (its own try/catch). */
const originOfUrl: Read = (value) => {
  try {
    return typeof value === 'string' ? new URL(value).origin : false;
  } catch {
    return false;
  }
};
/** The same, after the function decodes the value once more itself. */
const originOfDecodedUrl: Read = (value) => {
  try {
    return typeof value === 'string' ? new URL(decodeURIComponent(value)).origin : false;
  } catch {
    return false;
  }
};

/** The origin Node's legacy `url.parse` reads (its host ends at a brace or a backquote, where the URL parser's does not). */
const originOfLegacyUrl: Read = (value) => {
  if (typeof value !== 'string') return false;
  const parsed = legacyUrlParse(value);
  return parsed.protocol === null || parsed.host === null ? false : `${parsed.protocol}//${parsed.host}`;
};

/** [what, the attacker's real Origin (as a browser sends it), what the attacker writes in `?src=` (before the query's own encoding)] */
const CASES: ReadonlyArray<readonly [string, string, string]> = [
  ['IDN in Unicode (NFC)', 'https://xn--exmple-cua.com', 'https://exämple.com'],
  ['IDN in Unicode (NFD)', 'https://xn--exmple-cua.com', 'https://exa\u0308mple.com'],
  ['IDN subdomain of an ASCII domain in Unicode', 'https://xn--bcher-kva.evil.example.net', 'https://bücher.evil.example.net'],
  ['IDN in Unicode, upper case, default port, userinfo', 'https://xn--exmple-cua.com', 'https://user:pw@EXÄMPLE.COM:443/welcome'],
  ['IDN with one label in Unicode and one in Punycode', 'https://xn--bcher-kva.xn--exmple-cua.com', 'https://bücher.xn--exmple-cua.com/x'],
  ['IDN in Unicode with a full-width dot and a soft hyphen', 'https://xn--exmple-cua.com', 'https://exä\u00admple\u3002com'],
  ['IDN in Unicode escaped as UTF-8 in the host', 'https://xn--exmple-cua.com', 'https://ex%C3%A4mple.com/welcome'],
  ['IDN in Unicode after backslashes, or no slashes', 'https://xn--exmple-cua.com', 'https:\\\\exämple.com'],
  ['IDN in Unicode after the scheme alone', 'https://xn--exmple-cua.com', 'https:exämple.com'],
  ['IPv4 as one decimal number', 'http://203.0.113.5', 'http://3405803781'],
  ['IPv4 in hex', 'http://203.0.113.5', 'http://0xcb.0x0.0x71.0x5'],
  ['IPv4 in octal', 'http://203.0.113.5', 'http://0313.0.0161.05'],
  ['IPv4 in fewer parts', 'http://203.0.113.5', 'http://203.0.28933'],
  ['IPv4 in hex with leading zeros, upper case, a trailing dot', 'http://203.0.113.5', 'http://0X0000CB.0.113.5./x'],
  ['IPv4 as one number after userinfo, with its port', 'http://203.0.113.5:8080', 'http://a@3405803781:08080/x'],
  ['IPv4 in its own letters after an escaped digit', 'http://203.0.113.5', 'http://%3203.0.113.5/x'],
  ['IPv4 in its own letters and an escaped hex mark (0X is 0)', 'http://203.0.113.0', 'http://203.0.113.0%58/x'],
  ['IPv4 in full-width digits as one number', 'http://203.0.113.5', 'http://\uff13\uff14\uff10\uff15\uff18\uff10\uff13\uff17\uff18\uff11'],
  ['IPv6 written in full', 'http://[2001:db8::5]', 'http://[2001:0db8:0:0:0:0:0:5]'],
  ['IPv6 in upper case with its port', 'http://[2001:db8::5]:8080', 'http://[2001:DB8:0::0005]:8080/x'],
  ['IPv4-mapped IPv6 in dotted form', 'http://[::ffff:cb00:7105]', 'http://[::ffff:203.0.113.5]'],
  ['IPv4-mapped IPv6 written in full', 'http://[::ffff:cb00:7105]', 'http://[0:0:0:0:0:ffff:203.0.113.5]'],
];
/** Read by `url.parse`: the host followed by a character that ends it there only. */
const LEGACY_CASES: ReadonlyArray<readonly [string, string, string]> = [
  ['IDN in Unicode, then a brace', 'https://xn--exmple-cua.com', 'https://exämple.com{x}'],
  ['IDN in Unicode, then a backquote', 'https://xn--exmple-cua.com', 'https://exämple.com`x'],
  ['IDN with one label in Unicode, then a brace', 'https://xn--bcher-kva.evil.example.net', 'https://bücher.evil.example.net{'],
];
/** The same, encoded once more than the framework decodes, read by a function decoding it once itself. */
const ENCODED_CASES = CASES.filter(([, , src]) => !src.includes('%')).map(
  ([what, origin, src]) => [`${what}, encoded`, origin, encodeURIComponent(src)] as const,
);

const seenOf = (status: number, acao: string | null | undefined, credentials: string | null | undefined): Seen => ({
  status,
  acao: acao ?? undefined,
  credentials: credentials ?? undefined,
});
const path = (src: string) => `/api?src=${encodeURIComponent(src)}`;

async function expressReads(express: typeof express5, read: Read, origin: string, src: string): Promise<Seen> {
  const app = express();
  app.use(
    expressAmpCors(((req: express5.Request, cb: Callback) =>
      cb(null, { origin: read((req.query as Record<string, string>)['src']), credentials: true })) as never),
  );
  app.get('/api', (_req, res) => void res.json({ secret: 1 }));
  app.use((_e: unknown, _q: unknown, res: express5.Response, _n: unknown) => void res.status(500).end());
  const res = await request(app).get(path(src)).set({ Origin: origin, Cookie: 'session=victim' });
  return seenOf(res.status, res.headers['access-control-allow-origin'], res.headers['access-control-allow-credentials']);
}

async function koaReads(read: Read, origin: string, src: string): Promise<Seen> {
  const app = new Koa();
  app.silent = true;
  app.use(koaAmpCors({ origin: ((ctx: Koa.Context) => read(ctx.query['src'] as string) || '') as never, credentials: true }) as never);
  app.use((ctx) => {
    ctx.body = { secret: 1 };
  });
  const res = await request(app.callback()).get(path(src)).set({ Origin: origin, Cookie: 'session=victim' });
  return seenOf(res.status, res.headers['access-control-allow-origin'], res.headers['access-control-allow-credentials']);
}

async function honoReads(read: Read, origin: string, src: string): Promise<Seen> {
  const app = new Hono();
  app.use(
    '/api/*',
    honoAmpCors({ origin: ((_o: string, c: import('hono').Context) => read(c.req.query('src')) || null) as never, credentials: true }) as never,
  );
  app.get('/api/*', (c) => c.json({ secret: 1 }));
  const res = await app.request(`http://api.example.test${path(src).replace('/api', '/api/x')}`, { headers: { Origin: origin, Cookie: 'session=victim' } });
  return seenOf(res.status, res.headers.get('access-control-allow-origin'), res.headers.get('access-control-allow-credentials'));
}

const READERS: ReadonlyArray<readonly [string, (read: Read, origin: string, src: string) => Promise<Seen>]> = [
  ['express 4', (read, origin, src) => expressReads(express4, read, origin, src)],
  ['express 5', (read, origin, src) => expressReads(express5, read, origin, src)],
  ['koa', koaReads],
  ['hono', honoReads],
];

describe('an origin read as new URL(src).origin, the host written in another notation than the Origin header', () => {
  for (const [cases, read] of [
    [CASES, originOfUrl],
    [ENCODED_CASES, originOfDecodedUrl],
    [LEGACY_CASES, originOfLegacyUrl],
  ] as const)
    for (const [what, origin, src] of cases) {
      it(`control: ${what}: the function reads the query value as ${origin}`, () => {
        expect(read(new URLSearchParams(path(src).slice('/api?'.length)).get('src') ?? undefined)).toBe(origin);
      });
      for (const [name, reads] of READERS)
        it(`${name}: ${what}: refused`, async () => {
          const seen = await reads(read, origin, src);
          expect(seen.acao === origin && seen.credentials === 'true', JSON.stringify(seen)).toBe(false);
          expect(seen.status, "the guard's refusal").not.toBe(200);
        });
    }
});

describe('a function checking that origin against a list stays allowed, whatever notation the trusted origin is written in', () => {
  const TRUSTED = [
    ['https://xn--bcher-kva.example', 'https://bücher.example/welcome'],
    ['http://203.0.113.5', 'http://3405803781/welcome'],
    ['http://[2001:db8::5]', 'http://[2001:0db8::0005]/welcome'],
  ] as const;
  const LIST = new Set<string>(TRUSTED.map(([origin]) => origin));
  const listed: Read = (value) => {
    const origin = originOfUrl(value);
    return origin !== false && LIST.has(origin) ? origin : false;
  };
  for (const [name, reads] of READERS)
    it(`${name}: allowed, named exactly, with credentials`, async () => {
      for (const [origin, src] of TRUSTED) {
        const seen = await reads(listed, origin, src);
        expect(seen, `${src}: ${JSON.stringify(seen)}`).toMatchObject({ status: 200, acao: origin, credentials: 'true' });
      }
    });
});
