/**
 * Attacker's review, session 16 (attack-adapters2, helper-79): a handler
 * answering with a Fetch API `Response` through Koa 3 (`ctx.body =
 * response`) or Fastify 4/5 (`reply.send(response)`, `return response`):
 * the usual proxy, `ctx.body = await fetch(upstream)`. Both frameworks copy
 * every header of the Response over the answer AFTER ampCors wrote its own
 * (these adapters write before the handler), so the upstream's `Vary:
 * Accept-Encoding` REPLACED ampCors's `Vary: Origin` while
 * `Access-Control-Allow-Origin` and `-Credentials` stayed: a shared cache
 * honouring `Vary` gave the answer made without Origin to the partner and
 * the partner's credentialed answer to anyone (shown with a small cache).
 * The upstream's own CORS headers replaced ampCors's too (`*` over the
 * partner's origin; its echo of an Origin ampCors denied and let through
 * with `onDenied: 'omit'`, with `-Credentials`).
 *
 * Fixed (core's response-bodies.ts): Koa, after later middleware, for a
 * `Response` body, merges the plan's `Vary` names again, puts the plan's
 * CORS headers back and drops the Response's; Fastify's `onSend` hook gives
 * Fastify a copy of the Response whose `Vary` keeps the reply's names and
 * that carries none of the CORS headers that would overrule the reply's.
 * Koa 2 copies nothing (it sends a Response body as JSON); Hono writes after
 * the handler (controls, with the Fetch adapter for `Vary`).
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { createRequire } from 'node:module';
import { ampCors as fastifyCors, type FastifyAmpCorsOptions } from '@ampcors/fastify';
import { type FetchAmpCorsOptions, withAmpCors } from '@ampcors/fetch';
import { ampCors as honoCors, type HonoAmpCorsOptions } from '@ampcors/hono';
import { ampCors as koaCors, type KoaAmpCorsOptions } from '@ampcors/koa';
import fc from 'fast-check';
import Fastify5, { type FastifyInstance } from 'fastify';
import { Hono } from 'hono';
import Koa3 from 'koa';
import request from 'supertest';
import { afterAll, describe, expect, it } from 'vitest';
import { CORS_HEADERS } from './cors-header-names.js';

const require = createRequire(import.meta.url);
const Fastify4 = require('fastify4') as typeof Fastify5;
const Koa2 = require('koa2') as typeof Koa3;

const PARTNER = 'https://example.com';
const CACHE = 'https://example-com.cdn.ampproject.org';
const EVIL = 'https://evil.example';
const PUBLISHERS = { publishers: ['example.com'] };
const OMIT = { publishers: ['example.com'], onDenied: 'omit' as const };
/** The headers that grant a page access by themselves. */
const GRANTS = ['access-control-allow-origin', 'access-control-allow-credentials', 'amp-access-control-allow-source-origin', 'amp-email-allow-sender'];

type Options = KoaAmpCorsOptions & FastifyAmpCorsOptions & HonoAmpCorsOptions & FetchAmpCorsOptions;

interface Answer {
  readonly status: number;
  readonly headers: Readonly<Record<string, string | undefined>>;
  readonly body: string;
}
interface Sent {
  readonly method?: 'GET' | 'HEAD';
  readonly path?: string;
  readonly headers: Readonly<Record<string, string>>;
}
/** What the handler answers: a Response (made afresh per request), or a plain string body (the reference). */
type Body = (() => Response) | string;

/** One application of an adapter: the handler answers `body()`, changed between requests. */
interface App {
  ask(sent: Sent): Promise<Answer>;
  body: Body;
}
interface Adapter {
  readonly name: string;
  /** Whether the framework copies a Response body's headers over the answer (Koa 2 sends it as JSON). */
  readonly copies: boolean;
  /** Whether it answers a HEAD whose handler gives a Response (Fastify's HEAD route measures it as a string: its own 500). */
  readonly headOfResponse: boolean;
  /** The app: ampCors with `options` (or two: an outer with `options`, an inner with `inner`), the handler on `/me`. */
  make(options: Options, inner?: Options): Promise<App>;
}

const servers: Server[] = [];
afterAll(async () => {
  await Promise.all(servers.map((server) => new Promise((resolve) => server.close(resolve))));
});

const lower = (headers: Record<string, unknown>) =>
  Object.fromEntries(Object.entries(headers).map(([k, v]) => [k.toLowerCase(), v === undefined ? undefined : String(v)]));

function koa(name: string, Koa: typeof Koa3): Adapter {
  return {
    name,
    copies: Koa === Koa3,
    headOfResponse: true,
    async make(options, inner) {
      const app = new Koa();
      app.silent = true;
      const state: App = { body: '', ask: async () => ({ status: 0, headers: {}, body: '' }) };
      app.use(koaCors(options) as never);
      if (inner !== undefined) app.use(koaCors(inner) as never);
      app.use(async (ctx) => {
        const body = state.body;
        ctx.body = typeof body === 'string' ? body : body();
      });
      const server = createServer(app.callback()).listen(0, '127.0.0.1');
      servers.push(server);
      await new Promise((resolve) => server.once('listening', resolve));
      const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
      state.ask = async ({ method = 'GET', path = '/me', headers }) => {
        const r = await (method === 'HEAD' ? request(base).head(path) : request(base).get(path)).set(headers);
        return { status: r.status, headers: lower(r.headers as Record<string, unknown>), body: r.text ?? '' };
      };
      return state;
    },
  };
}

function fastify(name: string, Fastify: typeof Fastify5): Adapter {
  return {
    name,
    copies: true,
    headOfResponse: false,
    async make(options, inner) {
      const app = Fastify();
      const state: App = { body: '', ask: async () => ({ status: 0, headers: {}, body: '' }) };
      await app.register(fastifyCors, options);
      const route = async (scope: FastifyInstance) =>
        scope.get('/me', async (_request, reply) => {
          const body = state.body;
          return typeof body === 'string' ? reply.type('text/plain').send(body) : reply.send(body());
        });
      if (inner === undefined) await route(app);
      else
        await app.register(async (child) => {
          await child.register(fastifyCors, inner);
          await route(child);
        });
      await app.ready();
      state.ask = async ({ method = 'GET', path = '/me', headers }) => {
        const r = await app.inject({ method, url: path, headers });
        return { status: r.statusCode, headers: lower(r.headers as Record<string, unknown>), body: r.body };
      };
      return state;
    },
  };
}

const hono: Adapter = {
  name: 'Hono (control)',
  copies: true,
  headOfResponse: true,
  async make(options, inner) {
    const app = new Hono();
    const state: App = { body: '', ask: async () => ({ status: 0, headers: {}, body: '' }) };
    app.use('*', honoCors(options));
    if (inner !== undefined) app.use('*', honoCors(inner));
    app.get('/me', (c) => {
      const body = state.body;
      return typeof body === 'string' ? c.text(body) : body();
    });
    state.ask = async ({ method = 'GET', path = '/me', headers }) => {
      const r = await app.request(path, { method, headers });
      return { status: r.status, headers: Object.fromEntries(r.headers), body: await r.text() };
    };
    return state;
  },
};

const fetchAdapter: Adapter = {
  name: 'Fetch (control)',
  copies: true,
  headOfResponse: true,
  async make(options, inner) {
    const state: App = { body: '', ask: async () => ({ status: 0, headers: {}, body: '' }) };
    const handler = () => {
      const body = state.body;
      return typeof body === 'string' ? new Response(body, { headers: { 'content-type': 'text/plain' } }) : body();
    };
    const served = withAmpCors(inner === undefined ? handler : withAmpCors(handler, inner), options);
    state.ask = async ({ method = 'GET', path = '/me', headers }) => {
      const r = await served(new Request(`https://api.example.com${path}`, { method, headers }));
      return { status: r.status, headers: Object.fromEntries(r.headers), body: await r.text() };
    };
    return state;
  },
};

const KOA3 = koa('Koa 3', Koa3);
const KOA2 = koa('Koa 2', Koa2);
const FASTIFY5 = fastify('Fastify 5', Fastify5);
const FASTIFY4 = fastify('Fastify 4', Fastify4);
/** Every adapter for `Vary`. */
const ALL = [KOA3, KOA2, FASTIFY5, FASTIFY4, hono, fetchAdapter];
/**
 * The adapters for the Response's own CORS headers (core's response-bodies.ts): Koa and Fastify copy them over the
 * answer; Hono and the Fetch adapter write into the Response after the handler and remove them when it carries a grant
 * of its own (3.).
 */
const OWN_HEADERS = [KOA3, KOA2, FASTIFY5, FASTIFY4, hono, fetchAdapter];

/** What an upstream answers, as `fetch()` gives it: its own Vary (and any other headers), its headers refusing changes as fetch()'s do. */
function upstream(headers: Record<string, string> | Array<[string, string]>, init: { status?: number; body?: BodyInit | null } = {}): () => Response {
  return () => {
    const made = new Response(init.body === undefined ? '{"user":"alice"}' : init.body, { status: init.status ?? 200, headers });
    for (const method of ['set', 'append', 'delete'])
      Object.defineProperty(made.headers, method, {
        value: () => {
          throw new TypeError('immutable');
        },
      });
    return made;
  };
}

const varyNames = (answer: Answer) =>
  (answer.headers['vary'] ?? '')
    .split(',')
    .map((name) => name.trim().toLowerCase())
    .filter((name) => name !== '');
/** Whether a shared cache may serve `answer` only to requests with the same Origin (RFC 9111 §4.1: `*` never matches). */
const variesOnOrigin = (answer: Answer) => varyNames(answer).includes('origin') || varyNames(answer).includes('*');

/** A shared cache keyed on the URL, honouring Vary (RFC 9111 §4.1): a stored answer is served when every header it varies on matches. */
function sharedCache(app: App): (sent: Sent) => Promise<Answer> {
  let stored: { answer: Answer; on: Record<string, string | undefined> } | undefined;
  return async (sent) => {
    const asked = lower(sent.headers);
    if (stored !== undefined && !varyNames(stored.answer).includes('*') && Object.entries(stored.on).every(([name, value]) => asked[name] === value))
      return stored.answer;
    const answer = await app.ask(sent);
    stored = { answer, on: Object.fromEntries(varyNames(answer).map((name) => [name, asked[name]])) };
    return answer;
  };
}

const REQUESTS: ReadonlyArray<readonly [string, Record<string, string>, string?]> = [
  ['no Origin', {}],
  ['the partner', { origin: PARTNER }],
  ['the AMP cache with a source origin', { origin: CACHE }, `/me?__amp_source_origin=${encodeURIComponent(PARTNER)}`],
  ['another origin', { origin: EVIL }],
];

describe('a handler answering with a Response that has its own Vary: the answer still varies on Origin (every adapter)', () => {
  for (const adapter of ALL) {
    it(`${adapter.name}: GET and HEAD, Vary of the Response kept and Origin added (\`*\` stays \`*\`)`, async () => {
      const app = await adapter.make(OMIT);
      for (const vary of ['Accept-Encoding', 'accept-encoding, User-Agent', 'Origin, Accept-Encoding', '*']) {
        app.body = upstream({ 'content-type': 'application/json', vary });
        for (const method of ['GET', 'HEAD'] as const) {
          for (const [who, headers, path] of REQUESTS) {
            const answer = await app.ask({ method, headers: { ...headers, 'accept-encoding': 'gzip' }, ...(path !== undefined && { path }) });
            expect(variesOnOrigin(answer), `${method} ${who}, Response Vary ${vary}: ${answer.headers['vary']}`).toBe(true);
            if (method === 'HEAD' && !adapter.headOfResponse) continue;
            expect(answer.status, `${method} ${who}`).toBe(200);
            // The Response's own names stay on the answer where the framework sends them.
            if (adapter.copies) for (const name of vary.toLowerCase().split(',')) expect(varyNames(answer)).toContain(vary === '*' ? '*' : name.trim());
          }
        }
      }
      // The partner's credentialed answer (the attacker's case).
      app.body = upstream({ vary: 'Accept-Encoding' });
      const partner = await app.ask({ headers: { origin: PARTNER } });
      expect(partner.headers['access-control-allow-origin']).toBe(PARTNER);
      expect(partner.headers['access-control-allow-credentials']).toBe('true');
      expect(varyNames(partner)).toContain('origin');
    });

    it(`${adapter.name}: a shared cache honouring Vary never serves one Origin's answer for another's, in either order`, async () => {
      for (const options of [PUBLISHERS, OMIT]) {
        const app = await adapter.make(options);
        app.body = upstream({ 'content-type': 'application/json', vary: 'Accept-Encoding' });
        for (const [first, firstHeaders] of REQUESTS.filter(([, , path]) => path === undefined))
          for (const [then, thenHeaders] of REQUESTS.filter(([, , path]) => path === undefined)) {
            if (first === then) continue;
            const cache = sharedCache(app);
            await cache({ headers: { ...firstHeaders, 'accept-encoding': 'gzip' } });
            const served = await cache({ headers: { ...thenHeaders, 'accept-encoding': 'gzip' } });
            const fresh = await app.ask({ headers: { ...thenHeaders, 'accept-encoding': 'gzip' } });
            for (const name of GRANTS) expect(served.headers[name], `${first} then ${then}: ${name}`).toBe(fresh.headers[name]);
            expect(served.status).toBe(fresh.status);
          }
      }
    });
  }
});

describe("a Response's own CORS headers never overrule ampCors's decision", () => {
  for (const adapter of OWN_HEADERS) {
    it(`${adapter.name}: an upstream's \`*\` does not replace the partner's own origin (credentialed answer)`, async () => {
      const app = await adapter.make(PUBLISHERS);
      app.body = upstream({ 'access-control-allow-origin': '*', 'access-control-expose-headers': 'X-Secret', vary: 'Accept-Encoding' });
      const answer = await app.ask({ headers: { origin: PARTNER } });
      expect(answer.headers['access-control-allow-origin']).toBe(PARTNER);
      expect(answer.headers['access-control-allow-credentials']).toBe('true');
      // The upstream's grant came with it: none of its CORS headers stay (the plan's expose list is ampCors's).
      expect(answer.headers['access-control-expose-headers']).not.toContain('X-Secret');
    });

    it(`${adapter.name}: an upstream's echo of a denied Origin (onDenied: 'omit') grants nothing, with or without credentials`, async () => {
      const app = await adapter.make(OMIT);
      for (const grant of [
        { 'access-control-allow-origin': EVIL, 'access-control-allow-credentials': 'true' } as Record<string, string>,
        { 'access-control-allow-origin': '*' },
        { 'access-control-allow-credentials': 'true' },
        { 'amp-access-control-allow-source-origin': EVIL, 'access-control-expose-headers': 'AMP-Access-Control-Allow-Source-Origin' },
      ]) {
        app.body = upstream({ ...grant, vary: 'Accept-Encoding' });
        for (const method of ['GET', 'HEAD'] as const) {
          const answer = await app.ask({ method, headers: { origin: EVIL } });
          expect(answer.status).toBe(method === 'GET' || adapter.headOfResponse ? 200 : 500);
          for (const name of CORS_HEADERS) expect(answer.headers[name], `${method} ${JSON.stringify(grant)}: ${name}`).toBeUndefined();
          expect(variesOnOrigin(answer)).toBe(true);
        }
      }
    });

    it(`${adapter.name}: an answer without credentials gets none from the Response; a request without Origin no grant`, async () => {
      // The Fetch adapter has no drop-in `origin`: the same policy in its own words.
      const app = await adapter.make((adapter === fetchAdapter ? { origins: [PARTNER], credentials: false } : { origin: PARTNER }) as Options);
      app.body = upstream({ 'access-control-allow-credentials': 'true', vary: 'Accept-Encoding' });
      const partner = await app.ask({ headers: { origin: PARTNER } });
      expect(partner.headers['access-control-allow-origin']).toBe(PARTNER);
      expect(partner.headers['access-control-allow-credentials']).toBeUndefined();
      const publishers = await adapter.make(PUBLISHERS);
      publishers.body = upstream({ 'access-control-allow-origin': '*', vary: 'Accept-Encoding' });
      const none = await publishers.ask({ headers: {} });
      expect(none.headers['access-control-allow-origin']).toBeUndefined();
    });

    it(`${adapter.name}: without a grant, the Response's other CORS headers stay (its own expose list on an answer that sets none)`, async () => {
      const app = await adapter.make(PUBLISHERS);
      app.body = upstream({ 'access-control-expose-headers': 'X-Total', vary: 'Accept-Encoding' });
      const none = await app.ask({ headers: {} });
      expect(none.headers['access-control-expose-headers']).toBe(adapter.copies ? 'X-Total' : undefined);
      expect(none.headers['access-control-allow-origin']).toBeUndefined();
      // Where the plan sets it, ampCors's value stands.
      const partner = await app.ask({ headers: { origin: PARTNER } });
      expect(partner.headers['access-control-expose-headers']).not.toContain('X-Total');
    });

    it(`${adapter.name}: AMP for Email v2: an upstream's AMP-Email-Allow-Sender allows no sender ampCors denied, and never replaces ampCors's`, async () => {
      const app = await adapter.make({ publishers: ['example.com'], email: { senders: ['news@example.com'] }, onDenied: 'omit' } as Options);
      app.body = upstream({ 'amp-email-allow-sender': 'evil@evil.example', vary: 'Accept-Encoding' });
      const denied = await app.ask({ headers: { 'amp-email-sender': 'evil@evil.example' } });
      expect(denied.status).toBe(200);
      expect(denied.headers['amp-email-allow-sender']).toBeUndefined();
      expect(varyNames(denied)).toContain('amp-email-sender');
      const allowed = await app.ask({ headers: { 'amp-email-sender': 'news@example.com' } });
      expect(allowed.headers['amp-email-allow-sender']).toBe('news@example.com');
    });

    it(`${adapter.name}: two ampCors (an inner one denying with 'omit'): the upstream's echo of the partner grants nothing`, async () => {
      const app = await adapter.make({ publishers: ['example.com'] }, { publishers: ['other.example'], onDenied: 'omit' });
      app.body = upstream({ 'access-control-allow-origin': PARTNER, 'access-control-allow-credentials': 'true', vary: 'Accept-Encoding' });
      const answer = await app.ask({ headers: { origin: PARTNER } });
      expect(answer.status).toBe(200);
      expect(answer.headers['access-control-allow-origin']).toBeUndefined();
      expect(answer.headers['access-control-allow-credentials']).toBeUndefined();
      expect(variesOnOrigin(answer)).toBe(true);
    });

    it(`${adapter.name}: property: whatever CORS headers and Vary the Response carries, the grants are those of a plain body's answer`, async () => {
      const apps = new Map<string, App>();
      for (const [key, options] of [
        ['reject', PUBLISHERS],
        ['omit', OMIT],
      ] as const)
        apps.set(key, await adapter.make(options));
      const value = fc.constantFrom(EVIL, PARTNER, CACHE, '*', 'true', 'null', 'X-Secret', `${EVIL}, ${PARTNER}`, 'GET, DELETE', '600');
      await fc.assert(
        fc.asyncProperty(
          fc.constantFrom('reject', 'omit'),
          fc.constantFrom(...REQUESTS),
          fc.constantFrom('GET' as const, 'HEAD' as const),
          fc.uniqueArray(fc.tuple(fc.constantFrom(...CORS_HEADERS), value), { selector: ([name]) => name, maxLength: 5 }),
          fc.option(fc.constantFrom('Accept-Encoding', '*', 'origin', 'User-Agent, Accept-Language', ''), { nil: undefined }),
          async (config, [, headers, path], method, own, vary) => {
            const app = apps.get(config) as App;
            const sent = { method, headers, ...(path !== undefined && { path }) };
            app.body = 'reference';
            const reference = await app.ask(sent);
            app.body = upstream([...own, ...(vary === undefined ? [] : [['vary', vary] as [string, string]])]);
            const answer = await app.ask(sent);
            if (method === 'GET' || adapter.headOfResponse || reference.status !== 200) expect(answer.status).toBe(reference.status);
            for (const name of GRANTS) expect(answer.headers[name], name).toBe(reference.headers[name]);
            // Every CORS header ampCors set keeps its value.
            for (const name of CORS_HEADERS) if (reference.headers[name] !== undefined) expect(answer.headers[name], name).toBe(reference.headers[name]);
            if (reference.headers['vary'] !== undefined) expect(variesOnOrigin(answer)).toBe(true);
          },
        ),
        { numRuns: 60 },
      );
    });
  }
});

describe('Fastify: the copy of the Response it is given sends the same answer', () => {
  for (const adapter of [FASTIFY5, FASTIFY4]) {
    it(`${adapter.name}: status, status text, every Set-Cookie and a streamed body survive the copy`, async () => {
      const app = await adapter.make(PUBLISHERS);
      const stream = () =>
        new ReadableStream<Uint8Array>({
          start(controller) {
            controller.enqueue(new TextEncoder().encode('part one, '));
            controller.enqueue(new TextEncoder().encode('part two'));
            controller.close();
          },
        });
      app.body = upstream(
        [
          ['vary', 'Accept-Encoding'],
          ['set-cookie', 'a=1; Path=/'],
          ['set-cookie', 'b=2; Path=/'],
          ['access-control-allow-origin', '*'],
        ],
        { status: 201, body: stream() },
      );
      const answer = await app.ask({ headers: { origin: PARTNER } });
      expect(answer.status).toBe(201);
      expect(answer.body).toBe('part one, part two');
      expect(answer.headers['access-control-allow-origin']).toBe(PARTNER);
      expect(varyNames(answer)).toEqual(['accept-encoding', 'origin']);
    });

    it(`${adapter.name}: a Response whose body was already read is a 500 without any CORS header, varying on Origin`, async () => {
      const app = await adapter.make(PUBLISHERS);
      app.body = () => {
        const made = new Response('read', { headers: { vary: 'Accept-Encoding', 'access-control-allow-origin': '*' } });
        void made.text();
        return made;
      };
      const answer = await app.ask({ headers: { origin: PARTNER } });
      expect(answer.status).toBe(500);
      for (const name of CORS_HEADERS) expect(answer.headers[name], name).toBeUndefined();
      expect(variesOnOrigin(answer)).toBe(true);
    });
  }
});
