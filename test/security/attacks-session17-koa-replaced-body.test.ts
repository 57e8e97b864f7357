/**
 * Attacker's review, session 17 (helper-102, fix-koa2): Koa 3 copies a Fetch
 * `Response` body's headers onto the Node response at the moment it is set
 * (its `body` setter), and ampCors (Koa) put its decision back after its
 * handler only while `ctx.body` was still that Response. Middleware inside
 * ampCors that replaced the body after the handler — koa-conditional-get's
 * 304 (`ctx.body = null`), a body turned into its stream, its text, JSON,
 * another Response — left the upstream's copied headers: its echo of an
 * Origin ampCors denied (`onDenied: 'omit'`) with `-Credentials: true`, its
 * `Vary: Accept-Encoding` in place of `Vary: Origin` while the partner's
 * allow stayed (a shared cache then gives one Origin's answer to another).
 * Also a Response whose headers were changed after it was set (Koa had
 * copied them already). The attacker sends any `Origin` (or AMP for Email
 * sender, or `__amp_source_origin`); the upstream echoes it with credentials.
 * Every answer carries exactly the CORS headers of ampCors's plan and a
 * `Vary` naming `Origin`. Koa 2 (which copies nothing) is the control.
 */
import { ampCors as expressCors } from '@ampcors/express';
import { ampCors as koaCors, type KoaAmpCorsOptions } from '@ampcors/koa';
import Koa3 from 'koa';
import { createRequire } from 'node:module';
import request from 'supertest';
import { describe, expect, it } from 'vitest';
import { allowedFor, corsOf } from './cors-header-names.js';

const Koa2 = createRequire(import.meta.url)('koa2') as typeof Koa3;

const PARTNER = 'https://partner.example';
const EVIL = 'https://evil.example';
/** The policy: the partner's pages and their AMP caches, the denied let through without CORS headers. */
const POLICY: KoaAmpCorsOptions = { publishers: ['partner.example'], onDenied: 'omit' };

type Headers_ = Readonly<Record<string, string | undefined>>;
type Middleware = (ctx: Koa3.Context, next: Koa3.Next) => unknown;

/** The upstream's answers: each echoes what the request asked (its `Origin`, sender, source origin) with credentials. */
const UPSTREAMS: ReadonlyArray<readonly [string, (ctx: Koa3.Context) => Response]> = [
  [
    'an echo of the Origin with -Credentials, an ETag and Vary: Accept-Encoding',
    (ctx) =>
      new Response('secret of the user', {
        headers: {
          etag: '"v1"',
          vary: 'Accept-Encoding',
          'access-control-allow-origin': ctx.get('Origin'),
          'access-control-allow-credentials': 'true',
          'access-control-expose-headers': 'X-Secret',
        },
      }),
  ],
  ['Access-Control-Allow-Origin: * and an ETag', () => new Response('public', { headers: { etag: '"v1"', 'access-control-allow-origin': '*' } })],
  [
    'AMP-Access-Control-Allow-Source-Origin: the asked source origin, as a stream',
    (ctx) =>
      new Response(new Blob(['secret']).stream(), {
        headers: {
          etag: '"v1"',
          vary: 'Accept-Encoding',
          'amp-access-control-allow-source-origin': String(ctx.query.__amp_source_origin ?? ctx.get('Origin')),
        },
      }),
  ],
  ['no CORS header, Vary: Accept-Encoding', () => new Response('secret', { headers: { etag: '"v1"', vary: 'Accept-Encoding', 'x-upstream': '1' } })],
];

/** A Response body replaced by its text, as text (what a middleware rewriting an upstream's answer does). */
async function replaceByItsText(ctx: Koa3.Context): Promise<void> {
  if (!(ctx.body instanceof Response)) return;
  const text = await ctx.body.text();
  ctx.type = 'text';
  ctx.body = text;
}

/** Middleware inside ampCors replacing (or changing) the answer after the handler, each as an app would write it. */
const REPLACERS: ReadonlyArray<readonly [string, Middleware]> = [
  [
    "koa-conditional-get's 304 (If-None-Match sent)",
    async (ctx, next) => {
      await next();
      if (ctx.fresh) {
        ctx.status = 304;
        ctx.body = null;
      }
    },
  ],
  [
    'the body replaced by its stream',
    async (ctx, next) => {
      await next();
      if (ctx.body instanceof Response) ctx.body = ctx.body.body;
    },
  ],
  [
    'the body replaced by its text',
    async (ctx, next) => {
      await next();
      await replaceByItsText(ctx);
    },
  ],
  [
    'the body replaced by JSON',
    async (ctx, next) => {
      await next();
      if (ctx.body instanceof Response) ctx.body = { wrapped: await ctx.body.text() };
    },
  ],
  [
    'the body replaced by another Response without a grant',
    async (ctx, next) => {
      await next();
      if (ctx.body instanceof Response) ctx.body = new Response(await ctx.body.text(), { headers: { 'x-rewritten': '1' } });
    },
  ],
  [
    'the body replaced by a string, then ctx.remove of -Credentials and Vary',
    async (ctx, next) => {
      await next();
      await replaceByItsText(ctx);
      ctx.remove('Access-Control-Allow-Credentials');
      ctx.remove('Vary');
    },
  ],
  [
    'the Response kept, its CORS headers deleted after Koa copied them',
    async (ctx, next) => {
      await next();
      if (ctx.body instanceof Response) for (const name of [...ctx.body.headers.keys()]) if (/^(access-control|amp-)/.test(name)) ctx.body.headers.delete(name);
    },
  ],
  [
    'control: the Response kept as it is',
    async (_ctx, next) => {
      await next();
    },
  ],
];

const KOAS: ReadonlyArray<readonly [string, typeof Koa3]> = [
  ['Koa 3', Koa3],
  ['Koa 2', Koa2],
];

interface Answer {
  readonly status: number;
  readonly headers: Headers_;
}

/** Whether `Vary` names Origin. */
const variesOnOrigin = (headers: Headers_) => (headers.vary ?? '').split(',').some((name) => name.trim().toLowerCase() === 'origin');

/** Koa: ampCors(`options`), `between` (each in turn), a handler answering `upstream(ctx)`; a GET with `headers`. */
async function ask(
  Koa: typeof Koa3,
  options: KoaAmpCorsOptions,
  between: Middleware[],
  upstream: (ctx: Koa3.Context) => Response,
  path: string,
  headers: Headers_,
): Promise<Answer> {
  const app = new Koa();
  app.silent = true;
  app.use(koaCors(options) as never);
  for (const middleware of between) app.use(middleware as never);
  app.use((ctx) => {
    ctx.body = upstream(ctx as Koa3.Context);
  });
  let pending = request(app.callback()).get(path);
  for (const [name, value] of Object.entries(headers)) if (value !== undefined) pending = pending.set(name, value);
  const r = await pending;
  return { status: r.status, headers: r.headers as Headers_ };
}

describe.each(KOAS)('%s: ampCors, then middleware changing the answer after a handler answering a Response', (koaName, Koa) => {
  describe.each(REPLACERS)('%s', (replacer, middleware) => {
    const conditional = replacer.startsWith("koa-conditional-get's");
    const asked = conditional ? { 'if-none-match': '"v1"' } : {};

    it.each(UPSTREAMS)('a denied Origin, the upstream answering %s: no CORS header, Vary: Origin', async (_what, upstream) => {
      const answer = await ask(Koa, POLICY, [middleware], upstream, `/me?__amp_source_origin=${encodeURIComponent(EVIL)}`, { origin: EVIL, ...asked });
      expect(corsOf(answer.headers)).toEqual({});
      expect(variesOnOrigin(answer.headers)).toBe(true);
      if (conditional && koaName === 'Koa 3') expect(answer.status).toBe(304);
    });

    it.each(UPSTREAMS)("the partner, the upstream answering %s: the plan's CORS headers only, Vary: Origin", async (_what, upstream) => {
      const answer = await ask(Koa, POLICY, [middleware], upstream, '/me', { origin: PARTNER, ...asked });
      const cors = corsOf(answer.headers);
      const plan: Headers_ = allowedFor(PARTNER);
      // An app removing ampCors's -Credentials itself only narrows the grant: it may stay removed, nothing else differs.
      if (replacer.includes('ctx.remove')) for (const [name, value] of Object.entries(cors)) expect([name, value]).toEqual([name, plan[name]]);
      else expect(cors).toEqual(plan);
      expect(cors['access-control-allow-origin']).toBe(PARTNER);
      expect(variesOnOrigin(answer.headers)).toBe(true);
      if (conditional && koaName === 'Koa 3') expect(answer.status).toBe(304);
    });

    it.each(UPSTREAMS)('no Origin, the upstream answering %s: no grant of the upstream', async (_what, upstream) => {
      const answer = await ask(Koa, POLICY, [middleware], upstream, `/me?__amp_source_origin=${encodeURIComponent(EVIL)}`, asked);
      const cors = corsOf(answer.headers);
      for (const name of ['access-control-allow-origin', 'access-control-allow-credentials', 'amp-access-control-allow-source-origin'])
        expect([name, cors[name]]).toEqual([name, undefined]);
    });
  });

  it('two replacements (a Response with a grant, then one without, then a string): no CORS header for a denied Origin', async () => {
    const twice: Middleware = async (ctx, next) => {
      await next();
      ctx.body = new Response('second', { headers: { vary: 'Accept-Encoding' } });
      ctx.type = 'text';
      ctx.body = 'third';
    };
    const answer = await ask(Koa, POLICY, [twice], UPSTREAMS[0]![1], '/me', { origin: EVIL });
    expect(corsOf(answer.headers)).toEqual({});
    expect(variesOnOrigin(answer.headers)).toBe(true);
  });

  it('a Response set before ampCors ran (an earlier default body), replaced inside it: no CORS header for a denied Origin', async () => {
    const app = new Koa();
    app.silent = true;
    app.use(async (ctx, next) => {
      ctx.body = new Response('default', { headers: { 'access-control-allow-origin': ctx.get('Origin'), 'access-control-allow-credentials': 'true' } });
      await next();
    });
    app.use(koaCors(POLICY) as never);
    app.use((ctx) => {
      ctx.type = 'text';
      ctx.body = 'replaced';
    });
    for (let i = 0; i < 2; i++) {
      const r = await request(app.callback()).get('/me').set('Origin', EVIL);
      expect(corsOf(r.headers as Headers_)).toEqual({});
    }
  });

  it('an app whose response prototype is frozen (its body setter cannot be wrapped): no failure, a Response kept as the body still loses its grant', async () => {
    const app = new Koa();
    app.silent = true;
    Object.freeze(app.response);
    app.use(koaCors(POLICY) as never);
    app.use((ctx) => {
      ctx.body = UPSTREAMS[0]![1](ctx as Koa3.Context);
    });
    const r = await request(app.callback()).get('/me').set('Origin', EVIL);
    expect(r.status).toBe(200);
    expect(corsOf(r.headers as Headers_)).toEqual({});
    expect(variesOnOrigin(r.headers as Headers_)).toBe(true);
  });

  it("control: a handler's own ctx.set of Vary with a string body stays the app's (no Response was set)", async () => {
    const app = new Koa();
    app.silent = true;
    app.use(koaCors(POLICY) as never);
    app.use((ctx) => {
      ctx.set('Vary', 'Accept-Encoding');
      ctx.body = 'own';
    });
    const r = await request(app.callback()).get('/me').set('Origin', PARTNER);
    expect([corsOf(r.headers as Headers_), r.headers.vary]).toEqual([allowedFor(PARTNER), 'Accept-Encoding']);
  });
});

describe.each(KOAS)('%s: AMP for Email, an upstream echoing the sender in AMP-Email-Allow-Sender, the body replaced after', (_koaName, Koa) => {
  const MAIL = 'https://mail.google.com';
  const NEWS = 'news@example.com';
  const options: KoaAmpCorsOptions = { publishers: ['example.com'], email: { senders: [NEWS] }, onDenied: 'omit' };
  const upstream = (ctx: Koa3.Context) =>
    new Response('mail secret', {
      headers: { vary: 'Accept-Encoding', 'amp-email-allow-sender': ctx.get('AMP-Email-Sender'), 'access-control-allow-origin': ctx.get('Origin') },
    });
  const toText: Middleware = async (ctx, next) => {
    await next();
    if (ctx.body instanceof Response) {
      const text = await ctx.body.text();
      ctx.type = 'text';
      ctx.body = text;
    }
  };

  it.each(['evil@evil.example', 'admin@example.com.evil.example'])('a sender the policy denies (%s): no CORS header', async (sender) => {
    const answer = await ask(Koa, options, [toText], upstream, '/mail', { origin: MAIL, 'amp-email-sender': sender });
    expect(corsOf(answer.headers)).toEqual({});
  });

  it("control: the trusted sender gets the plan's AMP-Email-Allow-Sender only", async () => {
    const answer = await ask(Koa, options, [toText], upstream, '/mail', { origin: MAIL, 'amp-email-sender': NEWS });
    expect(corsOf(answer.headers)).toEqual({ 'amp-email-allow-sender': NEWS });
  });
});

describe.each(KOAS)("%s: an outer ampCors allowing the partner, Express's ampCors inside denying it, the body replaced after", (_koaName, Koa) => {
  it.each(REPLACERS)('%s: no CORS header', async (replacer, middleware) => {
    const inner = expressCors({ publishers: ['example.com'], onDenied: 'omit' });
    const viaExpress: Middleware = (ctx, next) =>
      new Promise((resolve, reject) =>
        inner(ctx.req as never, ctx.res as never, (error?: unknown) => (error === undefined ? resolve(next()) : reject(error as Error))),
      );
    const asked = replacer.startsWith("koa-conditional-get's") ? { 'if-none-match': '"v1"' } : {};
    const answer = await ask(Koa, { publishers: ['partner.example', 'example.com'], onDenied: 'omit' }, [middleware, viaExpress], UPSTREAMS[0]![1], '/admin', {
      origin: PARTNER,
      ...asked,
    });
    expect(corsOf(answer.headers)).toEqual({});
    expect(variesOnOrigin(answer.headers)).toBe(true);
  });
});
