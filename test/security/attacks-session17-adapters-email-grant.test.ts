/**
 * Attacker's review, session 17 (helper-97): two ampCors policies on one
 * Node request, in different frameworks, both configured for AMP for Email.
 * The application-wide policy trusts the sender `news@example.com`; a
 * stricter one on `/admin` trusts only `admin@example.com`. Session 16's
 * rule (core's nested-policies.ts, 4.) counted only an
 * `Access-Control-Allow-Origin` or `-Credentials` on the Node response as an
 * earlier layer's grant; an AMP for Email v2 allow is
 * `AMP-Email-Allow-Sender` alone, so the inner layer found no grant and the
 * outer's `AMP-Email-Allow-Sender: news@example.com` answered `/admin` (the
 * email client then shows the admin data to the mail from news@). Through
 * Express mounting a Koa app's `callback()`, an `@hono/node-server`
 * listener of a Hono app or of `withAmpCors`, Fastify's `routing`, and Koa
 * handing `ctx.req`/`ctx.res` to any of them (9 of 10 pairs; Express in
 * Express saw the earlier verdict). The same for the outer's
 * `AMP-Access-Control-Allow-Source-Origin` (`legacySourceOriginHeader`,
 * alone on an `AMP-Same-Origin` request), and a Koa ampCors put its sender
 * back on the error answer after an inner layer had taken it back.
 *
 * Fixed: every header that grants by itself (`Access-Control-Allow-Origin`,
 * `-Credentials`, `AMP-Access-Control-Allow-Source-Origin`,
 * `AMP-Email-Allow-Sender`: core's CORS_GRANTS) counts as an earlier grant
 * and as a grant a later layer changed.
 */
import type { EmailSender } from '@ampcors/core';
import { ampCors as expressCors, type ExpressAmpCorsOptions } from '@ampcors/express';
import { ampCors as fastifyCors, type FastifyAmpCorsOptions } from '@ampcors/fastify';
import { ampCorsOf, type FetchAmpCorsOptions, withAmpCors } from '@ampcors/fetch';
import { type AmpCorsVariables, ampCors as honoCors, type HonoAmpCorsOptions } from '@ampcors/hono';
import { type AmpCorsState, ampCors as koaCors, type KoaAmpCorsOptions } from '@ampcors/koa';
import Fastify from 'fastify';
import { Hono } from 'hono';
import Koa from 'koa';
import request from 'supertest';
import { describe, expect, it } from 'vitest';
import { corsOf } from './cors-header-names.js';
import { expressMounting, innerApps, koaMounting, type Listener, type Options } from './cross-framework-apps.js';

const MAIL = 'https://mail.google.com';
const NEWS = 'news@example.com';
const PARTNER = 'https://partner.example';
/** The application-wide policy: trusts the sender news@. */
const OUTER = { publishers: ['example.com'], email: { senders: [NEWS] }, onDenied: 'omit' as const };
/** The stricter policy of /admin: trusts admin@ only. */
const INNER = { publishers: ['example.com'], email: { senders: ['admin@example.com'] }, onDenied: 'omit' as const };
/** An application-wide policy answering the legacy AMP-Access-Control-Allow-Source-Origin, allowing the partner. */
const LEGACY_OUTER = { publishers: ['partner.example', 'example.com'], legacySourceOriginHeader: true, onDenied: 'omit' as const };
/** Its stricter /admin policy: the publisher only. */
const LEGACY_INNER = { publishers: ['example.com'], onDenied: 'omit' as const };

/** The request sent: its path below /admin (with a query) and its headers. */
interface Sent {
  readonly path: string;
  readonly headers: Readonly<Record<string, string>>;
}
interface Answer {
  readonly status: number;
  readonly headers: Readonly<Record<string, string | undefined>>;
  /** Whether the inner handler was told of a trusted sender (`null`: no sender); `undefined` when it did not answer. */
  readonly trusted: boolean | null | undefined;
}

const V2: Sent = { path: '/secret', headers: { origin: MAIL, 'amp-email-sender': NEWS } };
const V1: Sent = { path: `/secret?__amp_source_origin=${encodeURIComponent(NEWS)}`, headers: { origin: MAIL } };
/** An AMP request the page's own origin sends (no Origin): the legacy header alone answers it. */
const SAME_ORIGIN: Sent = { path: `/secret?__amp_source_origin=${encodeURIComponent(PARTNER)}`, headers: { 'amp-same-origin': 'true' } };
const LEGACY: Sent = { path: `/secret?__amp_source_origin=${encodeURIComponent(PARTNER)}`, headers: { origin: PARTNER } };

const body = (email: EmailSender | undefined) => ({ trusted: email === undefined ? null : email.trusted });
function trustedOf(text: string): boolean | null | undefined {
  try {
    return (JSON.parse(text) as { trusted?: boolean | null }).trusted;
  } catch {
    return undefined;
  }
}

const INNERS = innerApps((_verdict, email) => body(email));

/** The outer apps: ampCors with `outer` on every path, the inner listener on /admin. */
type Outer = (outer: Options, inner: Listener) => (sent: Sent) => Promise<Answer>;

const answerOf = (r: request.Response): Answer => ({ status: r.status, headers: r.headers as Record<string, string>, trusted: trustedOf(r.text) });

const viaExpress: Outer = (outer, inner) => {
  const app = expressMounting(expressCors(outer as ExpressAmpCorsOptions), inner);
  return async (sent) => answerOf(await request(app).get(`/admin${sent.path}`).set(sent.headers));
};

const viaKoa: Outer = (outer, inner) => {
  const app = koaMounting(koaCors(outer as KoaAmpCorsOptions), inner);
  return async (sent) => answerOf(await request(app.callback()).get(`/admin${sent.path}`).set(sent.headers));
};

const OUTERS: ReadonlyArray<readonly [string, Outer]> = [
  ['Express', viaExpress],
  ['Koa (ctx.respond = false)', viaKoa],
];

describe('premises: what the outer policy alone answers', () => {
  const alone = (outer: Options) => viaExpress(outer, (_req, res) => void res.end('{}'));

  it('AMP for Email v2 from news@: AMP-Email-Allow-Sender alone (no Access-Control-Allow-Origin)', async () => {
    expect(corsOf((await alone(OUTER)(V2)).headers)).toEqual({ 'amp-email-allow-sender': NEWS });
  });

  it('AMP for Email v1 from news@: the email client allowed, AMP-Access-Control-Allow-Source-Origin the sender', async () => {
    const cors = corsOf((await alone(OUTER)(V1)).headers);
    expect([cors['access-control-allow-origin'], cors['amp-access-control-allow-source-origin']]).toEqual([MAIL, NEWS]);
  });

  it('legacySourceOriginHeader, an AMP-Same-Origin request from the partner: AMP-Access-Control-Allow-Source-Origin alone', async () => {
    expect(corsOf((await alone(LEGACY_OUTER)(SAME_ORIGIN)).headers)).toEqual({ 'amp-access-control-allow-source-origin': PARTNER });
  });
});

describe.each(OUTERS)('an ampCors in %s on every path trusting news@', (_outerName, via) => {
  describe.each(INNERS)('and one in %s on /admin: the inner decides', (_innerName, make) => {
    it.each(['omit', 'reject'] as const)(
      "AMP for Email v2 from news@, the inner trusting admin@ only (onDenied '%s'): no CORS header of the outer policy",
      async (onDenied) => {
        const answer = await via(OUTER, await make({ ...INNER, onDenied }))(V2);
        expect(corsOf(answer.headers)).toEqual({});
        if (onDenied === 'omit') expect([answer.status, answer.trusted]).toEqual([200, false]);
        else expect([answer.status, answer.trusted]).toEqual([403, undefined]);
      },
    );

    it('AMP for Email v2 from news@, the inner without email configured: no CORS header', async () => {
      const answer = await via(OUTER, await make({ publishers: ['example.com'], onDenied: 'omit' }))(V2);
      expect([answer.status, corsOf(answer.headers)]).toEqual([200, {}]);
    });

    it('AMP for Email v1 (__amp_source_origin) from news@, the inner trusting admin@ only: no CORS header', async () => {
      const answer = await via(OUTER, await make(INNER))(V1);
      expect([answer.status, answer.trusted, corsOf(answer.headers)]).toEqual([200, false, {}]);
    });

    it('control: the inner trusting news@ too answers AMP-Email-Allow-Sender, once', async () => {
      const answer = await via(OUTER, await make(OUTER))(V2);
      expect([answer.status, answer.trusted, corsOf(answer.headers)]).toEqual([200, true, { 'amp-email-allow-sender': NEWS }]);
    });
  });
});

describe.each(OUTERS)('an ampCors in %s on every path with legacySourceOriginHeader allowing the partner', (_outerName, via) => {
  describe.each(INNERS)('and one in %s on /admin allowing the publisher only', (_innerName, make) => {
    it.each(['omit', 'reject'] as const)(
      "an AMP-Same-Origin request with the partner's __amp_source_origin (onDenied '%s'): no AMP-Access-Control-Allow-Source-Origin",
      async (onDenied) => {
        const answer = await via(LEGACY_OUTER, await make({ ...LEGACY_INNER, onDenied }))(SAME_ORIGIN);
        expect([answer.status, corsOf(answer.headers)]).toEqual([onDenied === 'omit' ? 200 : 403, {}]);
      },
    );

    it('a CORS request from the partner with its __amp_source_origin: no CORS header', async () => {
      const answer = await via(LEGACY_OUTER, await make(LEGACY_INNER))(LEGACY);
      expect([answer.status, corsOf(answer.headers)]).toEqual([200, {}]);
    });

    it('the inner allows the partner without the legacy header: no AMP-Access-Control-Allow-Source-Origin', async () => {
      const answer = await via(LEGACY_OUTER, await make({ ...LEGACY_OUTER, legacySourceOriginHeader: false }))(LEGACY);
      expect(answer.status).toBe(200);
      expect(corsOf(answer.headers)['access-control-allow-origin']).toBe(PARTNER);
      expect(answer.headers['amp-access-control-allow-source-origin']).toBeUndefined();
    });
  });
});

describe('a Koa ampCors, then an Express ampCors run as Koa middleware (koa-connect style), then a handler that throws', () => {
  /** ampCors(`outer`) in Koa, Express's ampCors(`inner`) on the same Node request, a handler that throws (exposed). */
  async function send(outer: Options, inner: Options, sent: Sent): Promise<Answer> {
    const app = new Koa<AmpCorsState>();
    app.silent = true;
    app.use(koaCors(outer as KoaAmpCorsOptions));
    const middleware = expressCors(inner as ExpressAmpCorsOptions);
    app.use(
      (ctx, next) =>
        new Promise((resolve, reject) => middleware(ctx.req, ctx.res, (error?: unknown) => (error === undefined ? resolve(next()) : reject(error as Error)))),
    );
    app.use(() => {
      throw Object.assign(new Error('secret failure'), { status: 500, expose: true });
    });
    return answerOf(await request(app.callback()).get(`/admin${sent.path}`).set(sent.headers));
  }

  it('AMP for Email v2 from news@, the inner trusting admin@ only: the outer does not put its AMP-Email-Allow-Sender on the error answer', async () => {
    const answer = await send(OUTER, INNER, V2);
    expect([answer.status, corsOf(answer.headers)]).toEqual([500, {}]);
  });

  it('legacySourceOriginHeader outside, the inner allowing the partner without it: no AMP-Access-Control-Allow-Source-Origin on the error answer', async () => {
    const answer = await send(LEGACY_OUTER, { ...LEGACY_OUTER, legacySourceOriginHeader: false }, LEGACY);
    expect(answer.status).toBe(500);
    expect(answer.headers['amp-access-control-allow-source-origin']).toBeUndefined();
  });
});

describe('a Koa ampCors, then a middleware of the app taking the AMP grant back on /admin by hand, then a handler that throws', () => {
  it.each([
    ['AMP-Email-Allow-Sender', OUTER, V2],
    ['AMP-Access-Control-Allow-Source-Origin', LEGACY_OUTER, LEGACY],
  ] as const)('%s taken back: the outer does not put it back on the error answer', async (name, outer, sent) => {
    const app = new Koa<AmpCorsState>();
    app.silent = true;
    app.use(koaCors(outer as KoaAmpCorsOptions));
    app.use(async (ctx, next) => {
      // The premise: the outer's grant is on the response, and this layer removes it.
      expect(ctx.response.get(name)).not.toBe('');
      ctx.remove(name);
      await next();
    });
    app.use(() => {
      throw Object.assign(new Error('secret failure'), { status: 500, expose: true });
    });
    const answer = answerOf(await request(app.callback()).get(`/admin${sent.path}`).set(sent.headers));
    expect([answer.status, answer.headers[name.toLowerCase()]]).toEqual([500, undefined]);
  });
});

describe('one Koa app, ctx.state replaced between its two ampCors (no verdict seen: the Node response tells)', () => {
  it.each([false, true])('AMP for Email v2 from news@, the inner trusting admin@ only (the handler throws: %s): no CORS header', async (throws) => {
    const koa = new Koa<AmpCorsState>();
    koa.silent = true;
    koa.use(koaCors(OUTER));
    koa.use(async (ctx, next) => {
      ctx.state = { user: 'someone' } as AmpCorsState;
      await next();
    });
    koa.use(koaCors(INNER));
    koa.use((ctx) => {
      if (throws) throw Object.assign(new Error('handler failed'), { status: 500, expose: false });
      ctx.body = body(ctx.state.ampCorsEmail);
    });
    const r = await request(koa.callback()).get('/admin/secret').set(V2.headers);
    expect([r.status, corsOf(r.headers as Record<string, string>)]).toEqual([throws ? 500 : 200, {}]);
  });
});

describe('one Fastify app, request.ampCors reset between a parent ampCors and a child one', () => {
  it.each(['omit', 'reject'] as const)("AMP for Email v2 from news@, the child trusting admin@ only (onDenied '%s'): no CORS header", async (onDenied) => {
    const fastify = Fastify();
    await fastify.register(fastifyCors, OUTER);
    await fastify.register(
      async (child) => {
        child.addHook('onRequest', async (req) => void (req.ampCors = undefined));
        await child.register(fastifyCors, { ...INNER, onDenied });
        child.get('/secret', async (req) => body(req.ampCorsEmail));
      },
      { prefix: '/admin' },
    );
    const r = await fastify.inject({ method: 'GET', url: '/admin/secret', headers: V2.headers });
    expect([r.statusCode, corsOf(r.headers as Record<string, string>)]).toEqual([onDenied === 'omit' ? 200 : 403, {}]);
    await fastify.close();
  });
});

/** The same-framework records (nested-policies.ts, 1.-3. and 5.): the inner's decision on the sender stands there too. */
const SAME_FRAMEWORK: ReadonlyArray<readonly [string, (inner: Options) => (sent: Sent) => Promise<Answer>]> = [
  [
    'Hono: ampCors on every path, ampCors on /admin/*',
    (inner) => {
      const app = new Hono<{ Variables: AmpCorsVariables }>();
      app.use('*', honoCors(OUTER));
      app.use('/admin/*', honoCors(inner as HonoAmpCorsOptions));
      app.get('/admin/secret', (c) => c.json(body(c.get('ampCorsEmail'))));
      return async (sent) => fetchAnswer(await app.request(`/admin${sent.path}`, { headers: sent.headers }));
    },
  ],
  [
    "Hono: the variable 'ampCors' cleared between the two (the written-Response note decides)",
    (inner) => {
      const app = new Hono<{ Variables: AmpCorsVariables }>();
      app.use('*', honoCors(OUTER));
      app.use('*', async (c, next) => {
        c.set('ampCors', undefined as never);
        await next();
      });
      app.use('/admin/*', honoCors(inner as HonoAmpCorsOptions));
      app.get('/admin/secret', (c) => c.json(body(c.get('ampCorsEmail'))));
      return async (sent) => fetchAnswer(await app.request(`/admin${sent.path}`, { headers: sent.headers }));
    },
  ],
  [
    'Hono: ampCors on every path, app.mount of a withAmpCors on /admin (the Request rebuilt)',
    (inner) => {
      const app = new Hono();
      app.use('*', honoCors(OUTER));
      app.mount(
        '/admin',
        withAmpCors((req: Request) => Response.json(body(ampCorsOf(req)?.email)), inner as FetchAmpCorsOptions),
      );
      return async (sent) => fetchAnswer(await app.request(`/admin${sent.path}`, { headers: sent.headers }));
    },
  ],
  [
    'Fetch: withAmpCors in withAmpCors, a layer between rebuilding the Request and the Response',
    (inner) => {
      const innermost = withAmpCors((req: Request) => Response.json(body(ampCorsOf(req)?.email)), inner as FetchAmpCorsOptions);
      const outer = withAmpCors(async (req: Request) => {
        const res = await innermost(new Request(req.url.replace('/admin', ''), req));
        return new Response(res.body, res);
      }, OUTER);
      return async (sent) => fetchAnswer(await outer(new Request(`https://api.example.com/admin${sent.path}`, { headers: sent.headers })));
    },
  ],
  [
    'Koa: ampCors, then ampCors',
    (inner) => {
      const app = new Koa<AmpCorsState>();
      app.silent = true;
      app.use(koaCors(OUTER));
      app.use(koaCors(inner as KoaAmpCorsOptions));
      app.use((ctx) => void (ctx.body = body(ctx.state.ampCorsEmail)));
      return async (sent) => answerOf(await request(app.callback()).get(`/admin${sent.path}`).set(sent.headers));
    },
  ],
  [
    'Fastify: a parent ampCors, a child ampCors on /admin',
    (inner) => async (sent) => {
      const fastify = Fastify();
      await fastify.register(fastifyCors, OUTER);
      await fastify.register(
        async (child) => {
          await child.register(fastifyCors, inner as FastifyAmpCorsOptions);
          child.get('/secret', async (req) => body(req.ampCorsEmail));
        },
        { prefix: '/admin' },
      );
      const r = await fastify.inject({ method: 'GET', url: `/admin${sent.path}`, headers: sent.headers });
      await fastify.close();
      return { status: r.statusCode, headers: r.headers as Record<string, string>, trusted: trustedOf(r.body) };
    },
  ],
];

async function fetchAnswer(r: Response): Promise<Answer> {
  return { status: r.status, headers: Object.fromEntries(r.headers), trusted: trustedOf(await r.text()) };
}

describe.each(SAME_FRAMEWORK)('%s: the inner decides the AMP for Email sender', (_name, app) => {
  it.each(['omit', 'reject'] as const)("the inner trusting admin@ only (onDenied '%s'): no CORS header", async (onDenied) => {
    const answer = await app({ ...INNER, onDenied })(V2);
    expect([answer.status, corsOf(answer.headers)]).toEqual([onDenied === 'omit' ? 200 : 403, {}]);
  });

  it('control: the inner trusting news@ too answers AMP-Email-Allow-Sender, once', async () => {
    const answer = await app(OUTER)(V2);
    expect([answer.status, answer.trusted, corsOf(answer.headers)]).toEqual([200, true, { 'amp-email-allow-sender': NEWS }]);
  });
});
