/**
 * Attacker's review, session 16 (attack-email): AMP for Email v1
 * (`Origin` + `__amp_source_origin=<sender>`) and v2 (`AMP-Email-Sender`)
 * in odd shapes, sent as raw bytes over HTTP to every adapter at once —
 * Express 5 and 4, Koa 3 and 2, the Fetch adapter, Hono on
 * `@hono/node-server`, Fastify 5 and 4 — with one configuration. Each
 * request's answer must be the same in every adapter (status, CORS headers,
 * the email answers, whether the handler ran), and safe: no
 * `Access-Control-Allow-Origin` but for an allowed origin or the configured
 * email client, no credentials without it, and `AMP-Email-Allow-Sender` /
 * `AMP-Access-Control-Allow-Source-Origin` only ever a configured sender,
 * `AMP-Email-Allow-Sender` exactly what the client sent.
 */
import { createRequire } from 'node:module';
import { connect } from 'node:net';
import type { AddressInfo } from 'node:net';
import { serve } from '@hono/node-server';
import { ampCors as fastifyAmpCors, type FastifyAmpCorsOptions } from '@ampcors/fastify';
import { ampCors as honoAmpCors, type AmpCorsVariables, type HonoAmpCorsOptions } from '@ampcors/hono';
import fastify5 from 'fastify';
import { Hono } from 'hono';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ADAPTERS, type AdapterOptions, startApi } from './servers.js';

const require = createRequire(import.meta.url);
const fastify4 = require('fastify4') as typeof fastify5;

const OWN = 'https://example.com';
const CACHE = 'https://example-com.cdn.ampproject.org';
const MAIL = 'https://mail.google.com';
const EVIL = 'https://evil.example';
const SENDERS = ['news@example.com', 'Promo+Tag@Example.COM', '*@example.org', 'ops@[192.0.2.1]', 'o.brien@xn--bcher-kva.de'];
const CONFIGURED = new Set(SENDERS.map((s) => s.replace(/[A-Z]+/g, (r) => r.toLowerCase())));
const OPTIONS = { publishers: ['example.com'], email: { senders: SENDERS } };

/** One running server: its base URL, its handler count, and how to stop it. */
interface Target {
  readonly name: string;
  readonly port: number;
  runs(): number;
  close(): Promise<void>;
}

async function honoTarget(): Promise<Target> {
  let runs = 0;
  const app = new Hono<{ Variables: AmpCorsVariables }>();
  app.use('*', honoAmpCors(OPTIONS as HonoAmpCorsOptions));
  app.all('/api', (c) => {
    runs++;
    c.header('X-Verdict', c.get('ampCors')?.reason ?? 'none');
    return c.text('ok');
  });
  const server = await new Promise<ReturnType<typeof serve>>((resolve) => {
    const started = serve({ fetch: app.fetch, port: 0, hostname: '127.0.0.1' }, () => resolve(started));
  });
  return {
    name: 'hono',
    port: (server.address() as AddressInfo).port,
    runs: () => runs,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

async function fastifyTarget(name: string, create: typeof fastify5): Promise<Target> {
  let runs = 0;
  const app = create({ logger: false });
  await app.register(fastifyAmpCors, OPTIONS as FastifyAmpCorsOptions);
  const handler = async (request: { ampCors?: { reason: string } }, reply: { header(n: string, v: string): unknown }) => {
    runs++;
    reply.header('X-Verdict', request.ampCors?.reason ?? 'none');
    return 'ok';
  };
  for (const method of ['GET', 'HEAD', 'POST', 'PUT'] as const) app.route({ method, url: '/api', handler, exposeHeadRoute: false });
  await app.listen({ port: 0, host: '127.0.0.1' });
  return {
    name,
    port: (app.server.address() as AddressInfo).port,
    runs: () => runs,
    close: () => app.close(),
  };
}

let targets: Target[] = [];

beforeAll(async () => {
  const node = await Promise.all(
    ADAPTERS.map(async (adapter) => {
      const api = await startApi(adapter, OPTIONS as AdapterOptions);
      return { name: adapter, port: Number(new URL(api.url).port), runs: () => api.handlerRuns, close: () => api.close() };
    }),
  );
  targets = [...node, await honoTarget(), await fastifyTarget('fastify5', fastify5), await fastifyTarget('fastify4', fastify4)];
});

afterAll(async () => {
  await Promise.all(targets.map((t) => t.close()));
});

/** What a client sees of one answer, as compared between adapters. */
interface Seen {
  status: number;
  headers: Record<string, string>;
  ran: boolean;
}

/** Sends `head` (request line and header lines, without Host and the final blank line) and `body` as raw bytes; reads the whole answer. */
function send(
  port: number,
  requestLine: string,
  lines: ReadonlyArray<string | Buffer>,
  body = '',
): Promise<{ status: number; headers: Record<string, string> }> {
  return new Promise((resolve) => {
    const socket = connect(port, '127.0.0.1');
    const chunks: Buffer[] = [];
    const finish = () => {
      clearTimeout(timer);
      const text = Buffer.concat(chunks).toString('latin1');
      const [statusLine, ...headerLines] = (text.split('\r\n\r\n')[0] ?? '').split('\r\n');
      const headers: Record<string, string> = {};
      for (const line of headerLines) {
        const colon = line.indexOf(':');
        if (colon <= 0) continue;
        const name = line.slice(0, colon).trim().toLowerCase();
        const value = line.slice(colon + 1).trim();
        headers[name] = headers[name] === undefined ? value : `${headers[name]}, ${value}`;
      }
      resolve({ status: Number(/^HTTP\/1\.[01] ([0-9]{3})/.exec(statusLine ?? '')?.[1] ?? 0), headers });
    };
    const timer = setTimeout(() => socket.destroy(), 4000);
    socket.on('data', (chunk: Buffer) => chunks.push(chunk));
    socket.on('close', finish);
    socket.on('error', () => undefined);
    const bytes = Buffer.from(body, 'latin1');
    socket.write(
      Buffer.concat([
        Buffer.from(`${requestLine}\r\nHost: 127.0.0.1\r\n`, 'latin1'),
        ...lines.map((l) => (typeof l === 'string' ? Buffer.from(`${l}\r\n`, 'latin1') : l)),
        Buffer.from(`Content-Length: ${bytes.length}\r\nConnection: close\r\n\r\n`, 'latin1'),
        bytes,
      ]),
    );
  });
}

const WATCHED = [
  'access-control-allow-origin',
  'access-control-allow-credentials',
  'access-control-expose-headers',
  'amp-email-allow-sender',
  'amp-access-control-allow-source-origin',
  'x-verdict',
];

async function sendToAll(method: string, path: string, lines: ReadonlyArray<string | Buffer>, body = ''): Promise<Map<string, Seen>> {
  const out = new Map<string, Seen>();
  for (const target of targets) {
    const before = target.runs();
    const answer = await send(target.port, `${method} ${path} HTTP/1.1`, lines, body);
    const headers: Record<string, string> = {};
    for (const name of WATCHED) if (answer.headers[name] !== undefined) headers[name] = answer.headers[name] as string;
    // Vary, as a set of lower-case names (adapters order and join it differently).
    if (answer.headers['vary'] !== undefined)
      headers['vary'] = [...new Set(answer.headers['vary'].split(',').map((v) => v.trim().toLowerCase()))]
        .filter((v) => v !== 'accept-encoding')
        .sort()
        .join(',');
    out.set(target.name, { status: answer.status, headers, ran: target.runs() > before });
  }
  return out;
}

/** The header value a client sent, as HTTP/1.1 parsers give it (leading and trailing spaces and tabs dropped). */
function sentValue(lines: ReadonlyArray<string | Buffer>, name: string): string[] {
  const values: string[] = [];
  for (const line of lines) {
    const text = typeof line === 'string' ? line : line.toString('latin1');
    const colon = text.indexOf(':');
    if (colon > 0 && text.slice(0, colon).toLowerCase() === name) values.push(text.slice(colon + 1).replace(/^[ \t]+|[ \t\r\n]+$/g, ''));
  }
  return values;
}

function asciiLower(text: string): string {
  return text.replace(/[A-Z]+/g, (r) => r.toLowerCase());
}

/** The safety rules, for one answer. */
function assertSafe(label: string, seen: Seen, lines: ReadonlyArray<string | Buffer>): void {
  const origins = sentValue(lines, 'origin');
  const origin = origins.length === 1 ? origins[0] : undefined;
  const acao = seen.headers['access-control-allow-origin'];
  const sameOrigin = sentValue(lines, 'sec-fetch-site').join(', ') === 'same-origin';
  if (acao !== undefined) {
    expect(acao, `${label}: ACAO echoes the Origin`).toBe(origin);
    expect([OWN, CACHE, MAIL], `${label}: ACAO only for a trusted origin or the email client`).toContain(acao);
    expect(sameOrigin, `${label}: a same-origin answer has no CORS header`).toBe(false);
  } else {
    expect(seen.headers['access-control-allow-credentials'], `${label}: no credentials without ACAO`).toBeUndefined();
  }
  const allowSender = seen.headers['amp-email-allow-sender'];
  if (allowSender !== undefined) {
    expect(CONFIGURED.has(asciiLower(allowSender)), `${label}: AMP-Email-Allow-Sender ${allowSender} is configured`).toBe(true);
    expect(sentValue(lines, 'amp-email-sender').join(', '), `${label}: AMP-Email-Allow-Sender is what was sent`).toBe(allowSender);
    expect(acao, `${label}: v2 answers no ACAO`).toBeUndefined();
  }
  const source = seen.headers['amp-access-control-allow-source-origin'];
  if (source !== undefined) expect(CONFIGURED.has(asciiLower(source)), `${label}: the source-origin answer ${source} is a configured sender`).toBe(true);
  if (acao === MAIL) expect(source, `${label}: the email client is answered only for v1, with the sender`).toBeDefined();
  // An Origin that is neither trusted nor the email client (and not a same-origin claim) never reaches the handler.
  if (origin !== undefined && ![OWN, CACHE, MAIL].includes(origin) && !sameOrigin && allowSender === undefined)
    expect(seen.ran, `${label}: the handler did not run for ${origin}`).toBe(false);
}

/** One request sent to every adapter: the answers agree, and each is safe. */
async function attack(label: string, method: string, path: string, lines: ReadonlyArray<string | Buffer>, body = ''): Promise<Seen> {
  const answers = await sendToAll(method, path, lines, body);
  const first = answers.get('express5') as Seen;
  for (const [name, seen] of answers) {
    // Node's parser refuses some bytes before any adapter runs: the same 400 everywhere. Fastify answers every OPTIONS
    // itself, as @fastify/cors does (a 400 without Origin): its two majors are compared with each other there.
    const reference = method === 'OPTIONS' && name.startsWith('fastify') ? 'fastify5' : 'express5';
    expect({ adapter: name, ...seen }, `${label}: ${name} agrees with ${reference}`).toEqual({ adapter: name, ...(answers.get(reference) as Seen) });
    assertSafe(`${label} (${name})`, seen, lines);
  }
  return first;
}

const EMAIL_V2_SHAPES: ReadonlyArray<readonly [string, ReadonlyArray<string | Buffer>]> = [
  ['trusted', ['AMP-Email-Sender: news@example.com']],
  ['trusted, upper case', ['AMP-Email-Sender: NEWS@EXAMPLE.COM']],
  ['trusted, header name in odd case', ['aMp-EmAiL-sEnDeR: news@example.com']],
  ['spaces and tabs around', ['AMP-Email-Sender: \t news@example.com \t ']],
  ['twice, same value', ['AMP-Email-Sender: news@example.com', 'AMP-Email-Sender: news@example.com']],
  ['twice, name case differs', ['AMP-Email-Sender: news@example.com', 'amp-email-sender: news@example.com']],
  ['trusted then empty', ['AMP-Email-Sender: news@example.com', 'AMP-Email-Sender:']],
  ['empty then trusted', ['AMP-Email-Sender:', 'AMP-Email-Sender: news@example.com']],
  ['a comma list', ['AMP-Email-Sender: news@example.com, evil@evil.example']],
  ['a comma list, untrusted first', ['AMP-Email-Sender: evil@evil.example,news@example.com']],
  ['a space inside', ['AMP-Email-Sender: news @example.com']],
  ['trailing dot', ['AMP-Email-Sender: news@example.com.']],
  ['leading dot', ['AMP-Email-Sender: news@.example.com']],
  ['two @', ['AMP-Email-Sender: news@example.com@evil.example']],
  ['@ in a quoted local part', ['AMP-Email-Sender: "news@example.com"@evil.example']],
  ['quoted local part', ['AMP-Email-Sender: "news"@example.com']],
  ['display name', ['AMP-Email-Sender: News <news@example.com>']],
  ['angle brackets', ['AMP-Email-Sender: <news@example.com>']],
  ['comment', ['AMP-Email-Sender: news(x)@example.com']],
  ['%-encoded @', ['AMP-Email-Sender: news%40example.com']],
  ['IDN in UTF-8 bytes', [Buffer.from('AMP-Email-Sender: o.brien@bücher.de\r\n', 'utf8')]],
  ['IDN in punycode', ['AMP-Email-Sender: o.brien@xn--bcher-kva.de']],
  ['IDN punycode upper case', ['AMP-Email-Sender: O.BRIEN@XN--BCHER-KVA.DE']],
  ['obs-text (latin-1 é)', [Buffer.from('AMP-Email-Sender: n\xe9ws@example.com\r\n', 'latin1')]],
  ['KELVIN SIGN for k in UTF-8', [Buffer.from('AMP-Email-Sender: Promo+Tag@Example.COM\r\n'.replace('k', '\u212a'), 'utf8')]],
  ['the wildcard-looking sender, literally', ['AMP-Email-Sender: *@example.org']],
  ['a real address under the wildcard-looking sender', ['AMP-Email-Sender: anyone@example.org']],
  ['address literal', ['AMP-Email-Sender: ops@[192.0.2.1]']],
  ['address literal, another form', ['AMP-Email-Sender: ops@[192.0.2.01]']],
  ['address literal, IPv6 form', ['AMP-Email-Sender: ops@[IPv6:::ffff:192.0.2.1]']],
  ['plus tag, exact', ['AMP-Email-Sender: promo+tag@example.com']],
  ['plus tag dropped', ['AMP-Email-Sender: promo@example.com']],
  ['plus as space', ['AMP-Email-Sender: promo tag@example.com']],
  ['320+ characters', [`AMP-Email-Sender: ${'a'.repeat(320)}@example.com`]],
  ['NUL', [Buffer.from('AMP-Email-Sender: news@example.com\0\r\n', 'latin1')]],
  ['bare CR inside', [Buffer.from('AMP-Email-Sender: news@example.com\revil\r\n', 'latin1')]],
  ['obs-fold', ['AMP-Email-Sender: news@example.com', ' evil@evil.example']],
  ['space before the colon', ['AMP-Email-Sender : news@example.com']],
  ['DEL', [Buffer.from('AMP-Email-Sender: news@example.com\x7f\r\n', 'latin1')]],
];

const ORIGIN_SHAPES: ReadonlyArray<readonly [string, readonly string[]]> = [
  ['no Origin', []],
  ['Origin: the email client', [`Origin: ${MAIL}`]],
  ['Origin: evil', [`Origin: ${EVIL}`]],
  ['Origin: null', ['Origin: null']],
  ['Origin: own', [`Origin: ${OWN}`]],
  ['Origin: evil + forged AMP-Same-Origin', [`Origin: ${EVIL}`, 'AMP-Same-Origin: true']],
  ['no Origin + forged AMP-Same-Origin', ['AMP-Same-Origin: true']],
  ['Origin: evil + forged Sec-Fetch-Site', [`Origin: ${EVIL}`, 'Sec-Fetch-Site: same-origin']],
  ['Origin: the email client, twice', [`Origin: ${MAIL}`, `Origin: ${MAIL}`]],
];

describe('AMP for Email v2 (AMP-Email-Sender) in odd shapes: every adapter answers alike, and safely (attack-email, session 16)', () => {
  for (const [shape, sender] of EMAIL_V2_SHAPES) {
    it(`${shape}`, async () => {
      for (const [originName, origin] of ORIGIN_SHAPES) {
        for (const method of ['POST', 'GET', 'OPTIONS']) {
          const lines = [...origin, ...sender];
          const seen = await attack(`${method} ${originName}, sender ${shape}`, method, '/api', lines);
          // Only a configured sender, sent once and in one piece, is ever answered.
          if (seen.headers['amp-email-allow-sender'] !== undefined) expect(sender.length).toBe(1);
        }
      }
    });
  }

  it('a trusted sender is answered with exactly what was sent (the conformance case, seen over raw HTTP)', async () => {
    const seen = await attack('upper case', 'POST', '/api', [`Origin: ${MAIL}`, 'AMP-Email-Sender: NEWS@Example.com']);
    expect(seen.headers['amp-email-allow-sender']).toBe('NEWS@Example.com');
    expect(seen.headers['access-control-allow-origin']).toBeUndefined();
    expect(seen.ran).toBe(true);
  });

  it('a repeated sender is denied in every adapter, however the repeat is spelled', async () => {
    for (const lines of [
      ['AMP-Email-Sender: news@example.com', 'AMP-Email-Sender: news@example.com'],
      ['AMP-Email-Sender: news@example.com', 'amp-email-sender: news@example.com'],
      ['AMP-Email-Sender: news@example.com', 'AMP-Email-Sender:'],
    ]) {
      const seen = await attack(lines.join(' | '), 'POST', '/api', [`Origin: ${MAIL}`, ...lines]);
      expect(seen.status).toBe(403);
      expect(seen.ran).toBe(false);
      expect(seen.headers['amp-email-allow-sender']).toBeUndefined();
    }
  });
});

const V1_QUERIES: ReadonlyArray<readonly [string, string]> = [
  ['trusted, escaped @', '/api?__amp_source_origin=news%40example.com'],
  ['trusted, raw @', '/api?__amp_source_origin=news@example.com'],
  ['trusted, lower-case escape', '/api?__amp_source_origin=news%40example%2ecom'],
  ['encoded name %5F', '/api?%5F_amp_source_origin=news%40example.com'],
  ['encoded name, every character', `/api?${[...'__amp_source_origin'].map((c) => `%${c.charCodeAt(0).toString(16)}`).join('')}=news%40example.com`],
  ['encoded =', '/api?__amp_source_origin%3Dnews%40example.com'],
  ['repeated, same value', '/api?__amp_source_origin=news%40example.com&__amp_source_origin=news%40example.com'],
  ['repeated, encoded name second', '/api?__amp_source_origin=news%40example.com&%5F_amp_source_origin=evil%40evil.example'],
  ['repeated, empty second', '/api?__amp_source_origin=news%40example.com&__amp_source_origin='],
  ['repeated, name only second', '/api?__amp_source_origin=news%40example.com&__amp_source_origin'],
  ['double-encoded @', '/api?__amp_source_origin=news%2540example.com'],
  ['plus is a space', '/api?__amp_source_origin=promo+tag%40example.com'],
  ['%2B is a plus', '/api?__amp_source_origin=promo%2Btag%40example.com'],
  ['%20 is a space', '/api?__amp_source_origin=promo%20tag%40example.com'],
  ['&amp;', '/api?x=1&amp;__amp_source_origin=news%40example.com'],
  ['; separator', '/api?x=1;__amp_source_origin=news%40example.com'],
  ['in the fragment', '/api?x=1#&__amp_source_origin=news%40example.com'],
  ['before and after #', '/api?__amp_source_origin=evil%40evil.example#__amp_source_origin=news%40example.com'],
  ['after a second ?', '/api?x=1?__amp_source_origin=news%40example.com'],
  ['name with a trailing space', '/api?__amp_source_origin%20=news%40example.com'],
  ['name with +', '/api?__amp_source_origin+=news%40example.com'],
  ['upper-case name', '/api?__AMP_SOURCE_ORIGIN=news%40example.com'],
  ['value with a /', '/api?__amp_source_origin=news%40example.com%2F'],
  ['an origin with userinfo', '/api?__amp_source_origin=https%3A%2F%2Fnews%40example.com'],
  ['an origin, no slash', '/api?__amp_source_origin=https:news%40example.com'],
  ['invalid UTF-8 escape', '/api?__amp_source_origin=news%40example.com%FF'],
  ['overlong UTF-8 @', '/api?__amp_source_origin=news%C0%80example.com'],
  ['escaped NUL', '/api?__amp_source_origin=news%40example.com%00'],
  ['escaped CR LF', '/api?__amp_source_origin=news%40example.com%0D%0AX-Evil:%201'],
  ['full-width @', '/api?__amp_source_origin=news%EF%BC%A0example.com'],
  ['IDN in UTF-8 escapes', '/api?__amp_source_origin=o.brien%40b%C3%BCcher.de'],
  ['IDN punycode', '/api?__amp_source_origin=o.brien%40xn--bcher-kva.de'],
  ['wildcard-looking, a real address', '/api?__amp_source_origin=anyone%40example.org'],
  ['address literal', '/api?__amp_source_origin=ops%40%5B192.0.2.1%5D'],
  ['upper case', '/api?__amp_source_origin=NEWS%40EXAMPLE.COM'],
  ['raw obs bytes', '/api?__amp_source_origin=n\xe9ws%40example.com'],
  ['1000 empty pairs first', `/api?${'&'.repeat(1000)}__amp_source_origin=news%40example.com`],
];

describe('AMP for Email v1 (__amp_source_origin) in odd shapes: every adapter answers alike, and safely (attack-email, session 16)', () => {
  for (const [shape, path] of V1_QUERIES) {
    it(`${shape}`, async () => {
      for (const [originName, origin] of ORIGIN_SHAPES) {
        for (const method of ['POST', 'GET', 'OPTIONS']) {
          await attack(`${method} ${originName}, ${shape}`, method, path, origin);
          // v2 present too: v2 decides.
          await attack(`${method} ${originName}, ${shape}, with an untrusted v2`, method, path, [...origin, 'AMP-Email-Sender: evil@evil.example']);
        }
      }
    });
  }

  it('the email client gets ACAO, credentials and the sender only for one trusted address', async () => {
    const trusted = await attack('trusted', 'POST', '/api?__amp_source_origin=news%40example.com', [`Origin: ${MAIL}`]);
    expect(trusted.status).toBe(200);
    expect(trusted.headers['access-control-allow-origin']).toBe(MAIL);
    expect(trusted.headers['access-control-allow-credentials']).toBe('true');
    expect(trusted.headers['amp-access-control-allow-source-origin']).toBe('news@example.com');
    for (const path of [
      '/api?__amp_source_origin=news%40example.com&__amp_source_origin=news%40example.com',
      '/api?__amp_source_origin=news%2540example.com',
      '/api?__amp_source_origin=anyone%40example.org',
      '/api?x=1#&__amp_source_origin=news%40example.com',
      '/api?x=1&amp;__amp_source_origin=news%40example.com',
    ]) {
      const seen = await attack(path, 'POST', path, [`Origin: ${MAIL}`]);
      expect(seen.status, path).toBe(403);
      expect(seen.ran, path).toBe(false);
    }
  });

  it('a sender in the POST body is never read (form-encoded and JSON)', async () => {
    for (const [type, body] of [
      ['application/x-www-form-urlencoded', '__amp_source_origin=news%40example.com'],
      ['text/plain', '__amp_source_origin=news@example.com'],
      ['application/json', '{"__amp_source_origin":"news@example.com"}'],
    ] as const) {
      const seen = await attack(`body ${type}`, 'POST', '/api', [`Origin: ${MAIL}`, `Content-Type: ${type}`], body);
      expect(seen.status).toBe(403);
      expect(seen.ran).toBe(false);
      expect(seen.headers['access-control-allow-origin']).toBeUndefined();
    }
  });

  it('a preflight never answers the email client because of the query', async () => {
    const seen = await attack('preflight', 'OPTIONS', '/api?__amp_source_origin=news%40example.com', [
      `Origin: ${MAIL}`,
      'Access-Control-Request-Method: POST',
      'Access-Control-Request-Headers: amp-same-origin, content-type',
    ]);
    expect(seen.headers['access-control-allow-origin']).toBeUndefined();
    expect(seen.headers['access-control-allow-credentials']).toBeUndefined();
  });
});
