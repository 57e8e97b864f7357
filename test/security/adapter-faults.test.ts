// Adapter faults (issue #6), through every adapter over real HTTP: a throwing
// user hook, headers already sent, Vary already present, and CR/LF in any
// request header or in __amp_source_origin never reflected. Issue #14: a
// response's CORS headers are applied all or nothing (item 8), and drop-in
// options that reflect every origin never pair credentials with it (item 3).
import { createVerifier, isAmpCorsError, type Verdict, type VerifyContext } from '@ampcors/core';
import { type CorsDecision, type createCorsPolicy } from '@ampcors/core/adapter';
import type { OriginCallback } from '@ampcors/express';
import type { KoaOriginFunction } from '@ampcors/koa';
import Koa from 'koa';
import { createRequire } from 'node:module';
import request from 'supertest';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { rawRequest } from './raw-http.js';
import { ADAPTERS, type AdapterName, type AdapterOptions, type ApiServer, type ServerHooks, startApi } from './servers.js';
import { ampCors as koaAmpCors } from '@ampcors/koa';

/**
 * A value every runtime refuses in a header (above U+00FF), to force into a
 * plan after `Access-Control-Allow-Origin` and `-Credentials` (item 8): set
 * by a test, `null` otherwise. Every adapter builds its policy with
 * `createCorsPolicy`, whose decisions get the header appended while it is set.
 */
const forced = vi.hoisted(() => ({ header: null as null | readonly [string, string] }));
// The module that defines createCorsPolicy, so that every importer sees the mock (the adapter entry and core's drop-in policies alike).
vi.mock('../../packages/core/src/cors-policy.js', async (importOriginal) => {
  const core = await importOriginal<typeof import('../../packages/core/src/cors-policy.js')>();
  const withForced = (decision: CorsDecision): CorsDecision => {
    const header = forced.header;
    if (header === null || !decision.plan.headers.some(([name]) => name === 'access-control-allow-origin')) return decision;
    return { ...decision, plan: { ...decision.plan, headers: [...decision.plan.headers, header] } };
  };
  const createCorsPolicyForced: typeof createCorsPolicy = (...args) => {
    const policy = core.createCorsPolicy(...args);
    return {
      ...policy,
      decide: (...call) => {
        const decision = policy.decide(...call);
        return decision instanceof Promise ? decision.then(withForced) : withForced(decision);
      },
    };
  };
  return { ...core, createCorsPolicy: createCorsPolicyForced };
});

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
      [
        'throws',
        () => {
          throw new Error('hook failed: https://evil.example');
        },
      ],
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

    it('headers already sent while an asynchronous verifier answers: no escaped error, the server keeps serving', async () => {
      let first = true;
      const verifier = createVerifier({ publishers: ['example.com'] });
      const slow = {
        verify: (origin: string | null | undefined, context?: VerifyContext) =>
          new Promise<Verdict>((resolve) => setTimeout(() => resolve(verifier.verify(origin, context)), 10)),
      };
      const api = await start(
        adapter,
        { verifier: slow },
        {
          before: (res) => {
            if (!first) return;
            first = false;
            res.writeHead(202, { 'Content-Type': 'text/plain' });
            res.end('early');
          },
        },
      );
      const early = await request(api.url).post('/api').set('Origin', CACHE_ORIGIN);
      expect([early.status, early.text, early.headers['access-control-allow-origin']]).toEqual([202, 'early', undefined]);
      // Long enough for the late verdict to be applied to the finished response (it used to escape as an unhandled rejection).
      await new Promise((resolve) => setTimeout(resolve, 50));
      const next = await request(api.url).post('/api').set('Origin', CACHE_ORIGIN);
      expect([next.status, next.headers['access-control-allow-origin']]).toEqual([200, CACHE_ORIGIN]);
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
      [
        'Access-Control-Request-Headers',
        `Origin: ${CACHE_ORIGIN}\r\nAccess-Control-Request-Method: POST\r\nAccess-Control-Request-Headers: content-type\r${INJECTED}\r\n`,
      ],
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

// ---------------------------------------------------------------------------
// Issue #14 item 8: all or nothing.

const CORS_HEADERS = [
  'access-control-allow-origin',
  'access-control-allow-credentials',
  'access-control-expose-headers',
  'access-control-allow-methods',
  'amp-access-control-allow-source-origin',
];

function expectNoCorsHeaders(headers: Record<string, string | undefined>, what: string): void {
  for (const name of CORS_HEADERS) expect(headers[name], `${what}: ${name}`).toBeUndefined();
}

for (const adapter of ADAPTERS) {
  describe(`${adapter}: a response's CORS headers are applied all or nothing (issue 14 item 8)`, () => {
    afterEach(() => {
      forced.header = null;
    });

    it.each([
      ['an actual POST', 'POST'],
      ['a preflight', 'OPTIONS'],
    ])('a plan with a value the runtime refuses, after ACAO and credentials (%s): 500, no CORS header at all', async (_what, method) => {
      const api = await start(adapter, OPTIONS);
      forced.header = ['amp-access-control-allow-source-origin', 'https://\u4f8b.example'];
      const pending = method === 'POST' ? request(api.url).post('/api') : request(api.url).options('/api').set('Access-Control-Request-Method', 'PUT');
      const res = await pending.set('Origin', CACHE_ORIGIN);
      expect(res.status).toBe(500);
      expectNoCorsHeaders(res.headers, method);
      expect(String(res.headers.vary).toLowerCase()).toContain('origin');
      // Express and Koa set the headers before the handler; the Fetch adapter sets them on the handler's
      // response (no copy per request: core never plans a value a runtime refuses, forced here past its
      // checks), so there the allowed origin's handler has run, and its answer is still a bare 500.
      expect(api.handlerRuns).toBe(adapter === 'fetch' && method === 'POST' ? 1 : 0);
      // Nothing stuck: the next request is answered in full.
      forced.header = null;
      const next = await request(api.url).post('/api').set('Origin', CACHE_ORIGIN);
      expect([next.status, next.headers['access-control-allow-origin'], next.headers['access-control-allow-credentials']]).toEqual([200, CACHE_ORIGIN, 'true']);
    });

    it('a custom verifier vouching for a hostile __amp_source_origin outside Latin-1: no half-applied ACAO or credentials, handler not run', async () => {
      // The attacker chooses the query; a naive verifier trusts it as the source origin.
      const verifier = {
        verify: (origin: string | null | undefined, context?: { sourceOrigin?: string | null }): Verdict =>
          ({
            allowed: true,
            origin: origin ?? null,
            via: 'publisher',
            reason: 'publisher-origin',
            ...(context?.sourceOrigin ? { sourceOrigin: context.sourceOrigin } : {}),
          }) as Verdict,
      };
      const api = await start(adapter, { verifier, legacySourceOriginHeader: true });
      const res = await request(api.url)
        .post(`/api?__amp_source_origin=${encodeURIComponent('https://\u4f8b.example')}`)
        .set('Origin', 'https://evil.example');
      expect(res.status).toBeGreaterThanOrEqual(400);
      expectNoCorsHeaders(res.headers, 'hostile source origin');
      expect(api.handlerRuns).toBe(0);
    });
  });
}

const require = createRequire(import.meta.url);
for (const [name, Create] of [
  ['koa3', Koa],
  ['koa2', require('koa2') as typeof Koa],
] as const) {
  it(`${name}: an upstream middleware that catches the failure and answers itself sends no half-applied CORS header`, async () => {
    const app = new Create();
    app.silent = true;
    app.use(async (ctx, next) => {
      try {
        await next();
      } catch {
        ctx.status = 500;
        ctx.body = 'caught';
      }
    });
    app.use(koaAmpCors(OPTIONS));
    let runs = 0;
    app.use((ctx) => {
      runs++;
      ctx.body = 'ok';
    });
    forced.header = ['amp-access-control-allow-source-origin', 'https://\u4f8b.example'];
    try {
      const res = await request(app.callback()).post('/api').set('Origin', CACHE_ORIGIN);
      expect([res.status, res.text, runs]).toEqual([500, 'caught', 0]);
      expectNoCorsHeaders(res.headers, name);
    } finally {
      forced.header = null;
    }
  });
}

// ---------------------------------------------------------------------------
// Issue #14 item 3: drop-in options that reflect every origin.

const EVIL = 'https://evil.com';
const A = 'https://a.example';
const DROP_IN = ['express5', 'express4', 'koa3', 'koa2'] as const satisfies readonly AdapterName[];
const isExpress = (adapter: AdapterName) => adapter.startsWith('express');

/** The refusal of `origin: true` with credentials, whose wording every reflect-all refusal shares. */
const TRUE_REFUSAL = /together with credentials lets every site read credentialed responses/;

/** Options for an Express or a Koa adapter (the `origin` option differs). */
function dropIn(origin: unknown, extra: Record<string, unknown> = {}): AdapterOptions {
  return { origin, credentials: true, ...extra } as unknown as AdapterOptions;
}

/** What an attacker page at `origin` can read: ACAO naming it with credentials is the hole. */
async function attackerReads(api: ApiServer, origin = EVIL, path = '/api'): Promise<{ status: number; acao?: string; credentials?: string; source?: string }> {
  const res = await request(api.url).get(path).set('Origin', origin);
  return {
    status: res.status,
    acao: res.headers['access-control-allow-origin'],
    credentials: res.headers['access-control-allow-credentials'],
    source: res.headers['amp-access-control-allow-source-origin'],
  };
}

const EXPRESS_SYNC_REFLECTORS: ReadonlyArray<readonly [string, unknown]> = [
  ['/.*/', /.*/],
  ['/^https?:\/\//', /^https?:\/\//],
  ['/./g', /./g],
  ['an array with /\.cdn\.ampproject\.org$/', [A, /\.cdn\.ampproject\.org$/]],
  ['/^https:\/\/.*\.com$/', /^https:\/\/.*\.com$/],
  ['(o, cb) => cb(null, true)', ((_o, cb) => cb(null, true)) satisfies OriginCallback],
  ['(o, cb) => cb(null, o)', ((o, cb) => cb(null, o)) satisfies OriginCallback],
  ["(o, cb) => cb(null, '*')", ((_o, cb) => cb(null, '*')) satisfies OriginCallback],
  ['(o, cb) => cb(null, /.*/)', ((_o, cb) => cb(null, /.*/)) satisfies OriginCallback],
  [
    'async (o, cb) => cb(null, true)',
    (async (_o: string | undefined, cb: (e: Error | null, a?: boolean) => void) => cb(null, true)) as unknown as OriginCallback,
  ],
];
const KOA_SYNC_REFLECTORS: ReadonlyArray<readonly [string, KoaOriginFunction]> = [
  ["(ctx) => ctx.get('Origin')", (ctx) => (ctx as unknown as Koa.Context).get('Origin')],
  ["the @koa/cors README's 4.0 snippet: ctx.get('Origin') || '*'", (ctx) => (ctx as unknown as Koa.Context).get('Origin') || '*'],
  ["() => '*'", () => '*'],
  ['(ctx) => ctx.headers.origin', (ctx) => (ctx as unknown as Koa.Context).headers.origin],
  ['(ctx) => ctx.request.header.origin', (ctx) => (ctx as unknown as Koa.Context).request.header.origin],
  ['(ctx) => ctx.req.headers.origin', (ctx) => ctx.req.headers.origin],
];
const EXPRESS_LATE_REFLECTORS: ReadonlyArray<readonly [string, OriginCallback]> = [
  ['calls back on the next turn', (_o, cb) => setImmediate(() => cb(null, true))],
  ['returns a Promise of true', (async () => true) as unknown as OriginCallback],
];
const KOA_LATE_REFLECTORS: ReadonlyArray<readonly [string, KoaOriginFunction]> = [
  ["async (ctx) => ctx.get('Origin')", async (ctx) => (ctx as unknown as Koa.Context).get('Origin')],
  ['answers on the next turn', (ctx) => new Promise((resolve) => setImmediate(() => resolve((ctx as unknown as Koa.Context).get('Origin'))))],
];

for (const adapter of DROP_IN) {
  describe(`${adapter}: drop-in options that reflect every origin, with credentials (issue 14 item 3)`, () => {
    const sync: ReadonlyArray<readonly [string, unknown]> = isExpress(adapter) ? EXPRESS_SYNC_REFLECTORS : KOA_SYNC_REFLECTORS;
    it.each(sync)('%s is refused at construction with the error of origin: true', async (_name, origin) => {
      await expect(startApi(adapter, dropIn(isExpress(adapter) ? true : '*'))).rejects.toThrow(TRUE_REFUSAL);
      let error: unknown;
      await startApi(adapter, dropIn(origin)).then(
        (api) => api.close(),
        (failure: unknown) => {
          error = failure;
        },
      );
      expect(isAmpCorsError(error) && error.code).toBe('unsafe-configuration');
      expect((error as Error).message).toMatch(TRUE_REFUSAL);
      // Without credentials, reflecting is what the option says, and stays allowed (drop-in behaviour).
      const open = await start(adapter, dropIn(origin, { credentials: false }));
      const read = await attackerReads(open);
      expect(read.credentials).toBeUndefined();
    });

    const late: ReadonlyArray<readonly [string, unknown]> = isExpress(adapter) ? EXPRESS_LATE_REFLECTORS : KOA_LATE_REFLECTORS;
    it.each(late)('a function that %s cannot be refused synchronously, yet https://evil.com never reads with credentials', async (_name, origin) => {
      const api = await start(adapter, dropIn(origin));
      for (let round = 0; round < 2; round++) {
        const read = await attackerReads(api);
        expect(read.acao === EVIL && read.credentials === 'true', `round ${round}`).toBe(false);
        expect(read.acao).toBeUndefined();
        expect(read.status).toBe(500);
        await new Promise((resolve) => setTimeout(resolve, 20));
      }
      expect(api.handlerRuns).toBe(0);
    });

    it('a function that starts allowing every origin after construction never pairs credentials with https://evil.com', async () => {
      let open = false;
      const origin = isExpress(adapter)
        ? (((o, cb) => cb(null, open || o === A)) satisfies OriginCallback)
        : (((ctx) => {
            const asked = (ctx as unknown as Koa.Context).get('Origin');
            return open || asked === A ? asked : '';
          }) satisfies KoaOriginFunction);
      const api = await start(adapter, dropIn(origin));
      // Before: the listed origin reads with credentials, evil.com does not.
      expect(await attackerReads(api, A)).toMatchObject({ status: 200, acao: A, credentials: 'true' });
      expect(await attackerReads(api)).toMatchObject({ status: 200, acao: undefined, credentials: undefined });
      open = true;
      const read = await attackerReads(api);
      expect([read.status, read.acao, read.credentials]).toEqual([500, undefined, undefined]);
      expect(api.handlerRuns).toBe(2);
    });

    it('an answer about the Origin never vouches for a different __amp_source_origin', async () => {
      // `true` (Express) and '*' (Koa) answer for the Origin asked about, not for every origin.
      const origin = isExpress(adapter)
        ? (((o, cb) => cb(null, o === A)) satisfies OriginCallback)
        : (((ctx) => ((ctx as unknown as Koa.Context).get('Origin') === A ? '*' : '')) satisfies KoaOriginFunction);
      for (const credentials of [true, false]) {
        const api = await start(adapter, dropIn(origin, { credentials, legacySourceOriginHeader: true }));
        const read = await attackerReads(api, A, `/api?__amp_source_origin=${encodeURIComponent(EVIL)}`);
        expect(read.source).toBeUndefined();
        expect(read.acao).toBeUndefined();
        const same = await attackerReads(api, A, `/api?__amp_source_origin=${encodeURIComponent(A)}`);
        // Koa's '*' without credentials is the literal * (an any-origin answer): no source origin is echoed with it.
        const named = isExpress(adapter) || credentials;
        expect([same.acao, same.source]).toEqual(named ? [A, A] : ['*', undefined]);
        // A same-origin request (no Origin): the function is asked about the source origin itself.
        for (const [source, want] of [
          [A, A],
          [EVIL, undefined],
        ] as const) {
          const res = await request(api.url)
            .get(`/api?__amp_source_origin=${encodeURIComponent(source)}`)
            .set('AMP-Same-Origin', 'true');
          expect([res.headers['amp-access-control-allow-source-origin'], res.headers['access-control-allow-origin']], source).toEqual([want, undefined]);
        }
      }
    });

    it("an answer of '*' with credentials for a request without Origin is no 500 (the function is not asked)", async () => {
      let asked = 0;
      const origin = isExpress(adapter)
        ? (((o, cb) => {
            asked++;
            cb(null, o === undefined ? '*' : o === A);
          }) satisfies OriginCallback)
        : (((ctx) => {
            asked++;
            const own = (ctx as unknown as Koa.Context).get('Origin');
            return own === '' ? '*' : own === A ? own : '';
          }) satisfies KoaOriginFunction);
      const api = await start(adapter, dropIn(origin));
      asked = 0;
      const res = await request(api.url).get('/api');
      expect([res.status, res.headers['access-control-allow-origin'], api.handlerRuns, asked]).toEqual([200, undefined, 1, 0]);
      expect(await attackerReads(api)).toMatchObject({ acao: undefined, credentials: undefined });
      expect(await attackerReads(api, A)).toMatchObject({ acao: A, credentials: 'true' });
    });
  });
}
