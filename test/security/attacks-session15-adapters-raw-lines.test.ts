/**
 * Attacker's review, session 15 (helper-50): the Node adapters read an `OPTIONS` request's facts from Node's raw
 * header lines while Node has not built `req.headers` (request-facts.ts). Over a real socket, with the header bytes an
 * attacker chooses (repeated, re-cased and empty fact headers, `Origin: null`, several Access-Control-Request-* lines,
 * obs-fold continuations and NUL under `insecureHTTPParser`, names with a space before the colon), each adapter must
 * answer exactly as the same app does when an earlier middleware has made Node parse `req.headers` first; and any
 * `Access-Control-Allow-Origin` it sends must be the `Origin` Node's own `req.headers` holds for those bytes.
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { type AddressInfo, connect } from 'node:net';
import { createRequire } from 'node:module';
import { domainPrefix } from '@ampcors/core';
import { ampCors as expressAmpCors } from '@ampcors/express';
import { ampCors as koaAmpCors, type AmpCorsState } from '@ampcors/koa';
import express5 from 'express';
import fc from 'fast-check';
import Koa3 from 'koa';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

const require = createRequire(import.meta.url);
const express4 = require('express4') as typeof express5;
const Koa2 = require('koa2') as typeof Koa3;

const GOOD = `https://${domainPrefix('example.com')}.cdn.ampproject.org`;
const CONFIGS = {
  omit: { publishers: ['example.com'], onDenied: 'omit' as const, maxAge: 600 },
  reject: { publishers: ['example.com'], privateNetworkAccess: true },
};
type ConfigName = keyof typeof CONFIGS;
type Listener = (req: IncomingMessage, res: ServerResponse) => void;

/** An Express app with ampcors, optionally behind a middleware that makes Node parse req.headers first. */
function expressApp(create: typeof express5, config: ConfigName, parseFirst: boolean): Listener {
  const app = create();
  if (parseFirst)
    app.use((req, _res, next) => {
      void req.headers;
      next();
    });
  app.use(expressAmpCors(CONFIGS[config]));
  app.all('/api', (req, res) => {
    res.setHeader('X-Verdict', `${req.ampCors?.reason ?? 'none'} ${req.ampCors?.origin ?? '-'}`);
    res.send('ok');
  });
  app.use((_e: unknown, _q: IncomingMessage, res: ServerResponse, _n: unknown) => {
    res.statusCode = 500;
    res.end('error');
  });
  return app as unknown as Listener;
}

function koaApp(Create: typeof Koa3, config: ConfigName, parseFirst: boolean): Listener {
  const app = new Create<AmpCorsState>();
  app.silent = true;
  if (parseFirst)
    app.use((ctx, next) => {
      void ctx.req.headers;
      return next();
    });
  app.use(koaAmpCors(CONFIGS[config]));
  app.use((ctx) => {
    ctx.set('X-Verdict', `${ctx.state.ampCors?.reason ?? 'none'} ${ctx.state.ampCors?.origin ?? '-'}`);
    ctx.body = 'ok';
  });
  return app.callback();
}

/** Plain node:http with the Express middleware (no Express prototype: the verdict is an own property). */
function nodeApp(config: ConfigName, parseFirst: boolean): Listener {
  const middleware = expressAmpCors(CONFIGS[config]);
  return (req, res) => {
    if (parseFirst) void req.headers;
    middleware(req, res, (error) => {
      if (error) {
        res.statusCode = 500;
        return res.end('error');
      }
      const verdict = (req as IncomingMessage & { ampCors?: { reason: string; origin: string | null } }).ampCors;
      res.setHeader('X-Verdict', `${verdict?.reason ?? 'none'} ${verdict?.origin ?? '-'}`);
      res.end('ok');
    });
  };
}

const FRAMEWORKS = {
  express5: (c: ConfigName, p: boolean) => expressApp(express5, c, p),
  express4: (c: ConfigName, p: boolean) => expressApp(express4, c, p),
  koa3: (c: ConfigName, p: boolean) => koaApp(Koa3, c, p),
  koa2: (c: ConfigName, p: boolean) => koaApp(Koa2, c, p),
  node: nodeApp,
};
type Framework = keyof typeof FRAMEWORKS;

async function listen(listener: Listener, insecure: boolean): Promise<{ server: Server; port: number }> {
  const server = createServer({ insecureHTTPParser: insecure }, listener);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { server, port: (server.address() as AddressInfo).port };
}

/** Sends the raw request bytes and returns the whole response, as latin1 text ('' when the server closed). */
function send(port: number, bytes: Buffer): Promise<string> {
  return new Promise((resolve) => {
    const socket = connect(port, '127.0.0.1');
    const chunks: Buffer[] = [];
    const timer = setTimeout(() => socket.destroy(), 3000);
    socket.on('data', (chunk: Buffer) => chunks.push(chunk));
    socket.on('error', () => undefined);
    socket.on('close', () => {
      clearTimeout(timer);
      resolve(Buffer.concat(chunks).toString('latin1'));
    });
    socket.end(bytes);
  });
}

/** The parts of a response that carry a decision: status, CORS headers, Vary, the verdict; the Date line dropped. */
function decisionOf(response: string): { status: string; headers: Record<string, string> } {
  const [head = ''] = response.split('\r\n\r\n');
  const [statusLine = '', ...lines] = head.split('\r\n');
  const headers: Record<string, string> = {};
  for (const line of lines) {
    const colon = line.indexOf(':');
    const name = line.slice(0, colon).toLowerCase();
    if (name.startsWith('access-control-') || name === 'vary' || name === 'x-verdict' || name === 'content-length')
      headers[name] = line.slice(colon + 1).trim();
  }
  return { status: statusLine, headers };
}

const FACT_NAMES = [
  'origin',
  'access-control-request-method',
  'access-control-request-headers',
  'access-control-request-private-network',
  'amp-same-origin',
  'sec-fetch-site',
  'amp-email-sender',
];
const VALUES = [
  GOOD,
  'https://example.com',
  'https://evil.example',
  '',
  'null',
  ` ${GOOD}`,
  `${GOOD}\r\n ${GOOD}`,
  `${GOOD}\x00`,
  'POST',
  'GET',
  'content-type',
  'amp-same-origin',
  '*',
  'x-a, x-b',
  'true',
  'same-origin',
  'cross-site',
  'a@example.com',
];
const nameSpelling = fc.tuple(fc.constantFrom(...FACT_NAMES), fc.constantFrom('lower', 'upper', 'title', 'space-before-colon')).map(([name, how]) => {
  const spelled =
    how === 'upper' ? name.toUpperCase() : how === 'title' ? name.replace(/(^|-)([a-z])/g, (_m, d: string, c: string) => d + c.toUpperCase()) : name;
  return how === 'space-before-colon' ? `${spelled} ` : spelled;
});
const headerLine = fc.tuple(nameSpelling, fc.constantFrom(...VALUES)).map(([name, value]) => `${name}: ${value}\r\n`);
/** A request: method, fact lines (an Origin and a request method usually present), the query. */
const rawRequest = fc
  .record({
    method: fc.constantFrom('OPTIONS', 'OPTIONS', 'OPTIONS', 'GET', 'POST', 'HEAD'),
    base: fc.constantFrom([] as string[], [`Origin: ${GOOD}\r\n`, 'Access-Control-Request-Method: POST\r\n'], [`origin: ${GOOD}\r\n`]),
    lines: fc.array(headerLine, { maxLength: 6 }),
    query: fc.constantFrom('', '?__amp_source_origin=https%3A%2F%2Fexample.com', '?__amp_source_origin=https%3A%2F%2Fevil.example'),
  })
  .chain((r) => fc.shuffledSubarray([...r.base, ...r.lines], { minLength: r.base.length + r.lines.length }).map((lines) => ({ ...r, lines })));

const bytesOf = (r: { method: string; lines: string[]; query: string }) =>
  Buffer.from(`${r.method} /api${r.query} HTTP/1.1\r\nHost: 127.0.0.1\r\n${r.lines.join('')}Content-Length: 0\r\nConnection: close\r\n\r\n`, 'latin1');

describe('attack: OPTIONS header bytes read from the raw lines decide as Node’s req.headers (every Node adapter, over the wire)', () => {
  const servers: Server[] = [];
  const ports = new Map<string, number>();
  beforeAll(async () => {
    for (const insecure of [false, true]) {
      // The oracle: what Node's own req.headers holds for the same bytes.
      const oracle = await listen((req, res) => res.setHeader('x-headers', encodeURIComponent(JSON.stringify(req.headers))).end(), insecure);
      servers.push(oracle.server);
      ports.set(`oracle ${insecure}`, oracle.port);
      for (const framework of Object.keys(FRAMEWORKS) as Framework[])
        for (const config of Object.keys(CONFIGS) as ConfigName[])
          for (const parseFirst of [false, true]) {
            const started = await listen(FRAMEWORKS[framework](config, parseFirst), insecure);
            servers.push(started.server);
            ports.set(`${framework} ${config} ${parseFirst} ${insecure}`, started.port);
          }
    }
  });
  afterAll(async () => {
    for (const server of servers) {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    }
  });

  for (const insecure of [false, true]) {
    it(`random fact lines${insecure ? ' (insecureHTTPParser: obs-fold, NUL accepted)' : ''}: raw reading = parsed reading, and ACAO is Node’s Origin`, async () => {
      await fc.assert(
        fc.asyncProperty(
          rawRequest,
          fc.constantFrom(...(Object.keys(FRAMEWORKS) as Framework[])),
          fc.constantFrom(...(Object.keys(CONFIGS) as ConfigName[])),
          async (r, framework, config) => {
            const bytes = bytesOf(r);
            const oracleText = await send(ports.get(`oracle ${insecure}`) as number, bytes);
            const raw = decisionOf(await send(ports.get(`${framework} ${config} false ${insecure}`) as number, bytes));
            const parsed = decisionOf(await send(ports.get(`${framework} ${config} true ${insecure}`) as number, bytes));
            expect(raw).toEqual(parsed);
            const acao = raw.headers['access-control-allow-origin'];
            if (acao !== undefined) {
              const line = /\r\nx-headers: ([^\r]*)/i.exec(oracleText)?.[1] ?? '';
              const nodeHeaders = JSON.parse(decodeURIComponent(line)) as Record<string, string>;
              expect(acao).toBe(nodeHeaders.origin);
              expect([GOOD, 'https://example.com']).toContain(acao);
              expect(raw.headers['access-control-allow-headers'] ?? '').not.toMatch(/amp-same-origin|\*/i);
            }
          },
        ),
        { numRuns: 150 },
      );
    });
  }

  it('named cases: duplicated Origin (same value, empty first, null), re-cased, padded, folded: never allowed; the preflight headers joined as Node joins them', async () => {
    const cases: string[][] = [
      [`Origin: ${GOOD}\r\n`, `Origin: ${GOOD}\r\n`],
      ['Origin: \r\n', `origin: ${GOOD}\r\n`],
      [`ORIGIN: ${GOOD}\r\n`, 'Origin: null\r\n'],
      ['Origin: null\r\n'],
      [`Origin: ${GOOD}\r\n`, 'Origin:\r\n'],
    ];
    for (const framework of Object.keys(FRAMEWORKS) as Framework[]) {
      for (const lines of cases) {
        const bytes = bytesOf({ method: 'OPTIONS', query: '', lines: [...lines, 'Access-Control-Request-Method: POST\r\n'] });
        const raw = decisionOf(await send(ports.get(`${framework} reject false false`) as number, bytes));
        expect(raw.headers['access-control-allow-origin'], `${framework} ${JSON.stringify(lines)}`).toBeUndefined();
        expect(raw.status).toMatch(/ 403 /);
      }
      // Two Access-Control-Request-Headers lines: reflected joined, as Node joins them; amp-same-origin never.
      const bytes = bytesOf({
        method: 'OPTIONS',
        query: '',
        lines: [
          `Origin: ${GOOD}\r\n`,
          'access-control-request-method: PUT\r\n',
          'Access-Control-Request-Headers: x-a\r\n',
          'ACCESS-CONTROL-REQUEST-HEADERS: amp-same-origin, x-b\r\n',
        ],
      });
      const answer = decisionOf(await send(ports.get(`${framework} reject false false`) as number, bytes));
      expect(answer.headers['access-control-allow-origin']).toBe(GOOD);
      expect(answer.headers['access-control-allow-headers']).toBe('x-a, x-b');
    }
  });
});
