/**
 * Attacker's review (session 15; found by helper-52, fixed by helper-53): the look-alike guard of a Koa or Hono
 * origin function asks it about canaries and look-alikes through a context made about another `Origin`
 * (drop-in-koa-cors.ts and @ampcors/hono's `contextAbout`). That context used to be bare: a fresh `ctx.state`,
 * no Hono variables, no route parameters. A loose function reading its allow-list from what earlier middleware
 * put on the context (`ctx.state.site`, `c.get('domain')`, `sites[c.req.param('site')]`) threw on every question,
 * a throw counts as "not allowed", the guard passed, and `https://evilexample.com` read credentialed responses.
 *
 * The property: for each place a context carries data (Koa: state, params, query, path, a request header,
 * request.body; Hono: variables, c.var, route parameters, route path, env, execution context, query, path, a
 * request header, a JSON body, validated header data, Cloudflare's cf), a loose function reading its data from
 * there is refused for a look-alike anyone can register, and every question saw the real request's data with
 * the asked `Origin`. Then: answers cannot write into the real request, no Node or platform view of the request
 * (`ctx.res.req`, `@hono/node-server`'s `env.outgoing.req`, AWS Lambda's `env.event` headers, Cloudflare Pages'
 * `env.eventContext.request`, a FetchEvent's `request`, `hono/validator`'s header data) leads back to the real
 * `Origin`, and a route hono cannot show fails the credentialed allow.
 */
import { ampCors as honoAmpCors } from '@ampcors/hono';
import { ampCors as koaAmpCors } from '@ampcors/koa';
import { getRequestListener } from '@hono/node-server';
import fc from 'fast-check';
import { Hono } from 'hono';
import { validator } from 'hono/validator';
import Koa from 'koa';
import request from 'supertest';
import { describe, expect, it } from 'vitest';

/** The tenants an application serves, keyed as its routes, queries and headers name them: each a registrable domain (a look-alike of one is anyone's). */
const SITES: Readonly<Record<string, string>> = { shop: 'example.com', news: 'news-site.org', app: 'myapp.vercel.app', uk: 'example.co.uk' };
const TENANTS = Object.keys(SITES);

/** A loose test of an origin against a configured domain, and an origin anyone can register that it also allows. */
interface Loose {
  readonly name: string;
  allows(origin: string, domain: string): boolean;
  attacker(domain: string): string;
}
const LOOSE: readonly Loose[] = [
  { name: 'a suffix match without its dot', allows: (o, d) => o.endsWith(d), attacker: (d) => `https://evil${d}` },
  { name: 'a prefix match without an end anchor', allows: (o, d) => o.startsWith(`https://${d}`), attacker: (d) => `https://${d}.evil.net` },
  { name: 'a substring match', allows: (o, d) => o.includes(d), attacker: (d) => `https://${d}.attacker.io` },
];

/** What a response let the browser read, and what each call of the origin function saw: [Origin, data]. */
interface Outcome {
  readonly status: number;
  readonly acao: string | undefined;
  readonly credentials: string | undefined;
  readonly calls: ReadonlyArray<readonly [string, unknown]>;
}

/** One place a Koa context carries the tenant: how earlier middleware (or the request) puts it there, and how a function reads it. */
interface KoaPlace {
  readonly name: string;
  /** Run by earlier middleware. */
  put?(ctx: Koa.Context, tenant: string): void;
  /** The request's path and query for `tenant`. */
  url?(tenant: string): string;
  /** A request header carrying it. */
  header?: true;
  read(ctx: Koa.Context): unknown;
}
const KOA_PLACES: readonly KoaPlace[] = [
  { name: 'ctx.state', put: (ctx, t) => void (ctx.state.tenant = t), read: (ctx) => ctx.state.tenant },
  {
    name: 'ctx.state, nested',
    put: (ctx, t) => void (ctx.state.config = { tenants: [t] }),
    read: (ctx) => (ctx.state.config as { tenants: string[] }).tenants[0],
  },
  { name: 'ctx.state, spread', put: (ctx, t) => void (ctx.state.tenant = t), read: (ctx) => ({ ...ctx.state }).tenant },
  {
    name: 'ctx.params (a router)',
    put: (ctx, t) => void ((ctx as unknown as { params: object }).params = { tenant: t }),
    read: (ctx) => (ctx as unknown as { params: { tenant: string } }).params.tenant,
  },
  {
    name: 'ctx.request.body (a body parser)',
    put: (ctx, t) => void ((ctx.request as unknown as { body: object }).body = { tenant: t }),
    read: (ctx) => (ctx.request as unknown as { body: { tenant: string } }).body.tenant,
  },
  { name: 'ctx.query', url: (t) => `/api?tenant=${t}`, read: (ctx) => ctx.query.tenant },
  { name: 'ctx.path', url: (t) => `/api/${t}`, read: (ctx) => ctx.path.split('/')[2] },
  { name: "ctx.get('X-Tenant')", header: true, read: (ctx) => ctx.get('X-Tenant') },
];

/** GET from `from` through a Koa app whose origin function tests its `Origin` with `allows` against the tenant's domain read from `place`. */
async function koaRead(place: KoaPlace, allows: (origin: string, domain: string) => boolean, tenant: string, from: string, async: boolean): Promise<Outcome> {
  const calls: Array<readonly [string, unknown]> = [];
  const answer = (ctx: Koa.Context) => {
    const data = place.read(ctx);
    calls.push([ctx.get('Origin'), data]);
    return allows(ctx.get('Origin'), SITES[data as string] as string) ? ctx.get('Origin') : '';
  };
  const app = new Koa();
  app.silent = true;
  app.use(async (ctx, next) => {
    place.put?.(ctx, tenant);
    await next();
  });
  app.use(koaAmpCors({ origin: async ? async (ctx: Koa.Context) => answer(ctx) : answer, credentials: true } as never) as never);
  app.use((ctx) => {
    ctx.body = { secret: 'user data' };
  });
  // The construction probe's calls (no request, answered by now) are not the request's.
  await new Promise((settled) => setTimeout(settled, 0));
  calls.length = 0;
  let req = request(app.callback())
    .get(place.url?.(tenant) ?? '/api')
    .set('Origin', from)
    .set('Cookie', 'session=victim');
  if (place.header) req = req.set('X-Tenant', tenant);
  const res = await req;
  return { status: res.status, acao: res.headers['access-control-allow-origin'], credentials: res.headers['access-control-allow-credentials'], calls };
}

/** The platform objects hono's adapters pass: AWS Lambda's event, Cloudflare Pages' event context. */
type PlatformEnv = {
  event: { headers: Record<string, string>; multiValueHeaders: Record<string, string[]> };
  eventContext: { request: Request };
};
type PlatformCtx = import('hono').Context<{ Bindings: PlatformEnv }>;

type HonoEnv = { Variables: { tenant: string }; Bindings: { TENANT: string } };
type HonoCtx = import('hono').Context<HonoEnv>;

/** One place a Hono context carries the tenant. */
interface HonoPlace {
  readonly name: string;
  /** Run by earlier middleware. */
  put?(c: HonoCtx, tenant: string): void;
  /** The request's path and query for `tenant` (mounted under `/api/:tenant/*`). */
  url?(tenant: string): string;
  /** A request header carrying it. */
  header?: true;
  /** A JSON body carrying it (a POST). */
  body?: true;
  /** The tenant passed as `env.TENANT`, as the execution context's `props`, or as Cloudflare's `cf`. */
  platform?: 'env' | 'executionCtx' | 'cf';
  /** Validated by `hono/validator` before ampCors (the `X-Tenant` and `Origin` headers). */
  validated?: true;
  read(c: HonoCtx): unknown | Promise<unknown>;
}
const HONO_PLACES: readonly HonoPlace[] = [
  { name: 'c.get (c.set by earlier middleware)', put: (c, t) => c.set('tenant', t), read: (c) => c.get('tenant') },
  { name: 'c.var', put: (c, t) => c.set('tenant', t), read: (c) => c.var.tenant },
  { name: "c.req.param('tenant')", read: (c) => c.req.param('tenant' as never) },
  { name: 'c.req.param()', read: (c) => (c.req.param() as Record<string, string>)['tenant'] },
  { name: 'c.req.routePath and c.req.path', read: (c) => (c.req.routePath === '/api/:tenant/*' ? c.req.path.split('/')[2] : undefined) },
  { name: 'c.env (a binding)', platform: 'env', read: (c) => c.env.TENANT },
  { name: 'c.executionCtx', platform: 'executionCtx', read: (c) => (c.executionCtx as unknown as { props: { tenant: string } }).props.tenant },
  { name: "c.req.raw.cf (Cloudflare's)", platform: 'cf', read: (c) => (c.req.raw as unknown as { cf: { tenant: string } }).cf.tenant },
  { name: "c.req.query('tenant')", url: (t) => `/api/${t}/data?tenant=${t}`, read: (c) => c.req.query('tenant') },
  { name: "c.req.header('X-Tenant')", header: true, read: (c) => c.req.header('X-Tenant') },
  { name: 'c.req.json() (a JSON body)', body: true, read: async (c) => ((await c.req.json()) as { tenant: string }).tenant },
  {
    name: "c.req.valid('header') (hono/validator)",
    header: true,
    validated: true,
    read: (c) => (c.req.valid('header' as never) as Record<string, string>)['x-tenant'],
  },
];

/** A request from `from` through a Hono app whose origin function tests `Origin` with `allows` against the tenant's domain read from `place`. */
async function honoRead(place: HonoPlace, allows: (origin: string, domain: string) => boolean, tenant: string, from: string, async: boolean): Promise<Outcome> {
  const calls: Array<readonly [string, unknown]> = [];
  const answer = (origin: string, data: unknown) => {
    calls.push([origin, data]);
    return allows(origin, SITES[data as string] as string) ? origin : null;
  };
  const app = new Hono<HonoEnv>();
  app.use('*', async (c, next) => {
    place.put?.(c, tenant);
    await next();
  });
  if (place.validated) app.use('/api/:tenant/*', validator('header', (headers) => headers) as never);
  const origin = async
    ? async (o: string, c: HonoCtx) => answer(o, await place.read(c))
    : (o: string, c: HonoCtx) => {
        const data = place.read(c);
        // A body is only read asynchronously.
        return data instanceof Promise ? data.then((read) => answer(o, read)) : answer(o, data);
      };
  app.use('/api/:tenant/*', honoAmpCors({ origin, credentials: true } as never) as never);
  app.all('/api/:tenant/data', (c) => c.json({ secret: 'user data' }));
  // The construction probe's calls (no request, answered by now) are not the request's.
  await new Promise((settled) => setTimeout(settled, 0));
  calls.length = 0;
  const headers: Record<string, string> = { Origin: from, Cookie: 'session=victim', ...(place.header && { 'X-Tenant': tenant }) };
  const raw = new Request(`http://api.example.test${place.url?.(tenant) ?? `/api/${tenant}/data`}`, {
    method: place.body ? 'POST' : 'GET',
    headers: { ...headers, ...(place.body && { 'Content-Type': 'application/json' }) },
    ...(place.body && { body: JSON.stringify({ tenant }) }),
  });
  if (place.platform === 'cf') Object.defineProperty(raw, 'cf', { value: { tenant } });
  const env = place.platform === 'env' ? { TENANT: tenant } : undefined;
  const executionCtx = place.platform === 'executionCtx' ? { props: { tenant }, waitUntil() {}, passThroughOnException() {} } : undefined;
  const res = await app.fetch(raw, env, executionCtx as never);
  return {
    status: res.status,
    acao: res.headers.get('access-control-allow-origin') ?? undefined,
    credentials: res.headers.get('access-control-allow-credentials') ?? undefined,
    calls,
  };
}

/** What every refused attack shows: nothing readable, a 500, and every question seeing the real request's data under the asked Origin. */
function refused(outcome: Outcome, from: string, tenant: string): void {
  expect(outcome.acao === from && outcome.credentials === 'true').toBe(false);
  expect(outcome.status).toBe(500);
  // The real call and at least one question, each with the request's data; the questions about other origins.
  expect(outcome.calls.length).toBeGreaterThan(1);
  expect(outcome.calls.every(([, data]) => data === tenant)).toBe(true);
  expect(outcome.calls.filter(([origin]) => origin !== from).length).toBe(outcome.calls.length - 1);
}

const attack = fc.record({ loose: fc.constantFrom(...LOOSE), tenant: fc.constantFrom(...TENANTS), async: fc.boolean() });

describe('attack: a loose origin function reading its data from the request context, with credentials', () => {
  it.each(KOA_PLACES.map((place) => [place.name, place] as const))('koa, %s: a look-alike anyone can register is refused', async (_name, place) => {
    await fc.assert(
      fc.asyncProperty(attack, async ({ loose, tenant, async }) => {
        const from = loose.attacker(SITES[tenant] as string);
        refused(await koaRead(place, loose.allows, tenant, from, async), from, tenant);
      }),
      { numRuns: 12 },
    );
  });

  it.each(HONO_PLACES.map((place) => [place.name, place] as const))('hono, %s: a look-alike anyone can register is refused', async (_name, place) => {
    await fc.assert(
      fc.asyncProperty(attack, async ({ loose, tenant, async }) => {
        const from = loose.attacker(SITES[tenant] as string);
        refused(await honoRead(place, loose.allows, tenant, from, async), from, tenant);
      }),
      { numRuns: 12 },
    );
  });

  it.each([...KOA_PLACES.map((place) => ['koa', place.name, place] as const), ...HONO_PLACES.map((place) => ['hono', place.name, place] as const)])(
    '%s, %s: a tight function reading the same data still answers its own origin with credentials',
    async (adapter, _name, place) => {
      const tight = (origin: string, domain: string) => origin === `https://www.${domain}`;
      for (const tenant of TENANTS) {
        const from = `https://www.${SITES[tenant] as string}`;
        const outcome =
          adapter === 'koa' ? await koaRead(place as KoaPlace, tight, tenant, from, false) : await honoRead(place as HonoPlace, tight, tenant, from, false);
        expect([outcome.status, outcome.acao, outcome.credentials]).toEqual([200, from, 'true']);
        expect(outcome.calls.every(([, data]) => data === tenant)).toBe(true);
      }
    },
  );
});

describe('attack: what a question context writes, and where its links lead', () => {
  const EVIL = 'https://evilexample.com';
  const OWN = 'https://www.example.com';

  it("koa: an answer's writes on ctx.state stay on the question's copy; the handler reads the real request's", async () => {
    const app = new Koa();
    app.silent = true;
    app.use(async (ctx, next) => {
      ctx.state.seen = [];
      await next();
    });
    app.use(
      koaAmpCors({
        origin: (ctx: Koa.Context) => {
          ctx.state.answeredFor = ctx.get('Origin');
          return ctx.get('Origin') === OWN ? OWN : '';
        },
        credentials: true,
      } as never) as never,
    );
    app.use((ctx) => {
      ctx.body = { answeredFor: ctx.state.answeredFor, keys: Object.keys(ctx.state).sort() };
    });
    const res = await request(app.callback()).get('/api').set('Origin', OWN);
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ answeredFor: OWN, keys: ['ampCors', 'answeredFor', 'seen'] });
  });

  it("hono: an answer's c.set and c.header stay on the question's context; the handler reads the real request's", async () => {
    const app = new Hono<{ Variables: { answeredFor: string } }>();
    app.use(
      '*',
      honoAmpCors({
        origin: (o: string, c: import('hono').Context) => {
          c.set('answeredFor' as never, o as never);
          c.header('X-Answered-For', o);
          return o === OWN ? o : null;
        },
        credentials: true,
      }) as never,
    );
    app.get('/api', (c) => c.json({ answeredFor: c.get('answeredFor') }));
    const res = await app.request('http://api.example.test/api', { headers: { Origin: OWN } });
    expect(res.status).toBe(200);
    expect(await res.json()).toEqual({ answeredFor: OWN });
    expect(res.headers.get('x-answered-for')).toBe(OWN);
    expect(res.headers.get('access-control-allow-credentials')).toBe('true');
  });

  it("koa: Node's link from the response back to the request (ctx.res.req, ctx.response.res.req) shows the question's Origin", async () => {
    for (const read of [
      (ctx: Koa.Context) => ctx.res.req.headers.origin,
      (ctx: Koa.Context) => ctx.response.res.req.headers.origin,
      (ctx: Koa.Context) => ctx.request.res.req.headers.origin,
    ]) {
      const app = new Koa();
      app.silent = true;
      app.use(
        koaAmpCors({ origin: (ctx: Koa.Context) => (read(ctx)?.endsWith('example.com') ? (read(ctx) as string) : ''), credentials: true } as never) as never,
      );
      app.use((ctx) => {
        ctx.body = { secret: 'user data' };
      });
      const res = await request(app.callback()).get('/api').set('Origin', EVIL).set('Cookie', 'session=victim');
      expect(res.headers['access-control-allow-origin']).toBeUndefined();
      expect(res.status).toBe(500);
    }
  });

  it("hono under @hono/node-server: Node's response (c.env.outgoing.req) shows the question's Origin", async () => {
    const app = new Hono<{ Bindings: { outgoing: { req: { headers: Record<string, string> } } } }>();
    const read = (c: { env: { outgoing: { req: { headers: Record<string, string> } } } }) => c.env.outgoing.req.headers['origin'] ?? '';
    app.use(honoAmpCors({ origin: (_o: string, c: never) => (read(c).endsWith('example.com') ? read(c) : null), credentials: true } as never) as never);
    app.get('/api', (c) => c.json({ secret: 'user data' }));
    const res = await request(getRequestListener(app.fetch)).get('/api').set('Origin', EVIL).set('Cookie', 'session=victim');
    expect(res.headers['access-control-allow-origin']).toBeUndefined();
    expect(res.status).toBe(500);
  });

  it.each([
    ['AWS Lambda: c.env.event.headers', (c: PlatformCtx) => c.env.event.headers.origin],
    ['AWS Lambda: c.env.event.multiValueHeaders', (c: PlatformCtx) => c.env.event.multiValueHeaders['Origin']?.[0]],
    ['Cloudflare Pages: c.env.eventContext.request', (c: PlatformCtx) => c.env.eventContext.request.headers.get('origin')],
    ['a FetchEvent: c.event.request', (c: PlatformCtx) => (c.event as unknown as { request: Request }).request.headers.get('origin')],
    ['a FetchEvent: c.executionCtx.request', (c: PlatformCtx) => (c.executionCtx as unknown as { request: Request }).request.headers.get('origin')],
  ] as const)("hono, the platform's view of the request (%s) shows the question's Origin", async (_name, read) => {
    const platform = (raw: Request) => {
      const waited: unknown[] = [];
      const env = { event: { headers: { origin: EVIL }, multiValueHeaders: { Origin: [EVIL] } }, eventContext: { request: raw } };
      const fetchEvent = { request: raw, respondWith() {}, waitUntil: (promise: unknown) => void waited.push(promise), passThroughOnException() {} };
      return { env, fetchEvent, waited };
    };
    // The attacker's read, through the loose function.
    const loose = new Hono<{ Bindings: PlatformEnv }>();
    loose.use(honoAmpCors({ origin: (_o: string, c: never) => (read(c)?.endsWith('example.com') ? read(c) : null), credentials: true } as never) as never);
    loose.get('/api', (c) => c.json({ secret: 'user data' }));
    const raw = new Request('http://api.example.test/api', { headers: { Origin: EVIL } });
    const { env, fetchEvent } = platform(raw);
    const res = await loose.fetch(raw, env, fetchEvent as never);
    expect(res.headers.get('access-control-allow-origin')).toBeNull();
    expect(res.status).toBe(500);
    // A tight function reading the same place answers its own origin, and the event's waitUntil works in every question.
    const tight = new Hono<{ Bindings: PlatformEnv }>();
    tight.use(
      honoAmpCors({
        origin: (_o: string, c: PlatformCtx) => {
          c.executionCtx.waitUntil(Promise.resolve());
          return read(c) === 'https://www.example.com' ? 'https://www.example.com' : null;
        },
        credentials: true,
      } as never) as never,
    );
    tight.get('/api', (c) => c.json({ secret: 'user data' }));
    const own = new Request('http://api.example.test/api', { headers: { Origin: 'https://www.example.com' } });
    const ownPlatform = platform(own);
    for (const view of [ownPlatform.env.event.headers, ownPlatform.env.event.multiValueHeaders]) {
      if ('origin' in view) view.origin = 'https://www.example.com';
      else view.Origin = ['https://www.example.com'];
    }
    const ok = await tight.fetch(own, ownPlatform.env, ownPlatform.fetchEvent as never);
    expect([ok.status, ok.headers.get('access-control-allow-origin'), ok.headers.get('access-control-allow-credentials')]).toEqual([
      200,
      'https://www.example.com',
      'true',
    ]);
    // The real call and the canary and look-alike questions (nine for www.example.com) all reached the real event.
    expect(ownPlatform.waited.length).toBeGreaterThan(5);
  });

  it("hono/validator's header data shows the question's Origin", async () => {
    const app = new Hono();
    app.use('*', validator('header', (headers) => headers) as never);
    const read = (c: { req: { valid(target: never): unknown } }) => (c.req.valid('header' as never) as Record<string, string>)['origin'] ?? '';
    app.use('*', honoAmpCors({ origin: (_o: string, c: never) => (read(c).endsWith('example.com') ? read(c) : null), credentials: true } as never) as never);
    app.get('/api', (c) => c.json({ secret: 'user data' }));
    const res = await app.request('http://api.example.test/api', { headers: { Origin: EVIL } });
    expect(res.headers.get('access-control-allow-origin')).toBeNull();
    expect(res.status).toBe(500);
  });

  it('hono: when the request cannot show its route match (hono before 4.8), a credentialed allow fails; without credentials it is answered', async () => {
    // hono before 4.8 has no getter of the match: earlier middleware gives the request a prototype without one.
    const withoutMatch = (c: import('hono').Context) => {
      const proto = Object.getPrototypeOf(c.req) as object;
      const descriptors = Object.getOwnPropertyDescriptors(proto) as Record<string | symbol, PropertyDescriptor>;
      for (const symbol of Object.getOwnPropertySymbols(descriptors)) delete descriptors[symbol];
      Object.setPrototypeOf(c.req, Object.create(Object.prototype, descriptors));
    };
    for (const credentials of [true, false]) {
      const app = new Hono();
      app.use('/api/:tenant/*', async (c, next) => {
        withoutMatch(c);
        await next();
      });
      app.use(
        '/api/:tenant/*',
        honoAmpCors({
          origin: (o: string, c: import('hono').Context) => (o === `https://www.${SITES[c.req.param('tenant') as string] as string}` ? o : null),
          credentials,
        }) as never,
      );
      app.get('/api/:tenant/data', (c) => c.json({ secret: 'user data' }));
      const res = await app.request('http://api.example.test/api/shop/data', { headers: { Origin: 'https://www.example.com' } });
      if (credentials) {
        expect([res.status, res.headers.get('access-control-allow-origin'), res.headers.get('access-control-allow-credentials')]).toEqual([500, null, null]);
      } else {
        expect([res.status, res.headers.get('access-control-allow-origin')]).toEqual([200, 'https://www.example.com']);
      }
    }
  });
});
