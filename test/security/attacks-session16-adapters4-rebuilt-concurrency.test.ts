/**
 * Rule 5 of core's nested-policies.ts (a Response rebuilt between two ampCors, without its note) made deterministic for
 * the common proxy: a handler returning an upstream Response that varies on `Origin` or carries its own grant, while
 * other requests are answered concurrently (their handlers interleaved here on purpose), gets the normal grant. The
 * first fix counted every write in the process: under load a proxy lost its grant on most requests.
 * 5.a: an inner layer that decided this very Request marks it (core's DecidedRequest): deterministic.
 * 5.b: a Request rebuilt between the layers (`app.mount`): only a write for the same `Origin` (or one sharing its slot
 * of 64) while the handler ran counts. From the attacker's side: concurrent requests never open the hole again.
 */
import { writesFor, writesSoFar } from '@ampcors/core/adapter';
import { withAmpCors } from '@ampcors/fetch';
import { ampCors } from '@ampcors/hono';
import fc from 'fast-check';
import { Hono } from 'hono';
import { compress } from 'hono/compress';
import { describe, expect, it } from 'vitest';

const PARTNER = 'https://partner.example';
const OWN = 'https://example.com';
const URL_ = 'https://api.example.com/proxy';
const SECRET = 'secret '.repeat(400);
const OUTER = { publishers: ['partner.example', 'example.com'] };
const INNER = { publishers: ['example.com'] };
const grantOf = (r: Response) => [r.headers.get('access-control-allow-origin'), r.headers.get('access-control-allow-credentials')];

/** A gate the handler awaits, so that other requests are answered while it runs. */
function gate(): { wait: Promise<void>; open: () => void } {
  let open!: () => void;
  const wait = new Promise<void>((resolve) => {
    open = resolve;
  });
  return { wait, open };
}

/** Upstream answers a proxy may hand on: varying on Origin, and with its own `*` grant. */
const UPSTREAM: Record<string, () => Response> = {
  'Vary: Origin': () => new Response('upstream', { headers: { vary: 'Origin' } }),
  'Access-Control-Allow-Origin: *': () => new Response('upstream', { headers: { 'access-control-allow-origin': '*', vary: 'Accept-Encoding' } }),
  'Vary: Origin and Access-Control-Allow-Origin: *': () => new Response('upstream', { headers: { vary: 'Origin', 'access-control-allow-origin': '*' } }),
};

describe("the user's side: a proxy answered while other requests are written", () => {
  for (const [name, upstream] of Object.entries(UPSTREAM)) {
    it(`Fetch withAmpCors around a proxy (${name}), another Origin's answer written meanwhile: the grant, every time`, async () => {
      for (let round = 0; round < 5; round++) {
        const g = gate();
        const proxy = withAmpCors(async () => {
          await g.wait;
          return upstream();
        }, OUTER);
        const other = withAmpCors(() => new Response('other'), OUTER);
        const pending = proxy(new Request(URL_, { headers: { origin: PARTNER } }));
        const [all, mine] = [writesSoFar(), writesFor(PARTNER)];
        for (let i = 0; i < 3; i++) expect(grantOf(await other(new Request(URL_, { headers: { origin: OWN } })))).toEqual([OWN, 'true']);
        // The old rule's trigger is there (a write while the handler ran), not one for this Origin.
        expect(writesSoFar()).toBeGreaterThan(all);
        expect(writesFor(PARTNER)).toBe(mine);
        g.open();
        expect(grantOf(await pending)).toEqual([PARTNER, 'true']);
      }
    });

    it(`Hono ampCors around a proxy route (${name}), other requests of the same app written meanwhile: the grant, every time`, async () => {
      let g = gate();
      const app = new Hono();
      app.use(ampCors(OUTER));
      app.get('/proxy', async () => {
        await g.wait;
        return upstream();
      });
      app.get('/other', (c) => c.text('other'));
      for (let round = 0; round < 5; round++) {
        g = gate();
        const pending = app.request('/proxy', { headers: { origin: PARTNER } });
        await new Promise((resolve) => setTimeout(resolve, 0));
        const all = writesSoFar();
        const others = await Promise.all([1, 2, 3].map(() => app.request('/other', { headers: { origin: OWN } })));
        for (const r of others) expect(grantOf(r)).toEqual([OWN, 'true']);
        expect(writesSoFar()).toBeGreaterThan(all);
        g.open();
        expect(grantOf(await pending)).toEqual([PARTNER, 'true']);
      }
    });
  }

  it('Fetch withAmpCors around a Hono app with compress and an ampCors of its own, others written meanwhile: the grant', async () => {
    const g = gate();
    const app = new Hono();
    app.use(compress());
    app.use(ampCors(OUTER));
    app.get('/proxy', async () => {
      await g.wait;
      return new Response(SECRET, { headers: { vary: 'Origin' } });
    });
    const outer = withAmpCors((req: Request) => app.fetch(req), OUTER);
    const pending = outer(new Request(URL_, { headers: { origin: PARTNER, 'accept-encoding': 'gzip' } }));
    await new Promise((resolve) => setTimeout(resolve, 0));
    await outer(new Request(URL_.replace('proxy', 'none'), { headers: { origin: OWN } }));
    g.open();
    const r = await pending;
    expect(r.headers.get('content-encoding')).toBe('gzip');
    expect(grantOf(r)).toEqual([PARTNER, 'true']);
  });
});

describe("the attacker's side: concurrent requests do not open the hole again", () => {
  /** The nestings of the hole, each answering `path` for `origin`: an outer allowing the partner, an inner denying it. */
  const nestings: Record<string, () => (origin: string, gated: Promise<void>) => Response | Promise<Response>> = {
    'Fetch around Hono, compress, ampCors on /admin (same Request: 5.a)': () => {
      let current: Promise<void> = Promise.resolve();
      const app = new Hono();
      app.use(compress());
      app.use('/admin/*', ampCors({ ...INNER, onDenied: 'omit' }));
      app.get('/admin/secret', async (c) => {
        await current;
        return c.text(SECRET);
      });
      const outer = withAmpCors((req: Request) => app.fetch(req), OUTER);
      return (origin, gated) => {
        current = gated;
        return outer(new Request('https://api.example.com/admin/secret', { headers: { origin, 'accept-encoding': 'gzip' } }));
      };
    },
    'Hono app-wide ampCors, compress, app.mount(withAmpCors) (rebuilt Request: 5.b)': () => {
      let current: Promise<void> = Promise.resolve();
      const app = new Hono();
      app.use(ampCors(OUTER));
      app.use(compress());
      app.mount(
        '/admin',
        withAmpCors(
          async () => {
            await current;
            return new Response(SECRET, { headers: { 'content-type': 'text/plain' } });
          },
          { ...INNER, onDenied: 'omit' },
        ),
      );
      return (origin, gated) => {
        current = gated;
        return app.request('/admin/secret', { headers: { origin, 'accept-encoding': 'gzip' } });
      };
    },
  };

  for (const [name, make] of Object.entries(nestings))
    it(`${name}: the partner's request, with others (any Origin) answered before and after the inner write, gets no grant`, async () => {
      const send = make();
      await fc.assert(
        fc.asyncProperty(
          fc.array(fc.constantFrom(OWN, PARTNER, 'https://evil.example', 'https://a.example', 'null'), { minLength: 1, maxLength: 6 }),
          async (others) => {
            const g = gate();
            const pending = send(PARTNER, g.wait);
            await new Promise((resolve) => setTimeout(resolve, 0));
            const meanwhile = others.map((origin) => send(origin, Promise.resolve()));
            g.open();
            const [r] = await Promise.all([pending, ...meanwhile]);
            expect(grantOf(r as Response)).toEqual([null, null]);
          },
        ),
        { numRuns: 15 },
      );
    });

  it('5.a: a layer between that rebuilds the answer with none of its headers (no Vary, no grant) on the same Request: no grant, others written meanwhile', async () => {
    let current: Promise<void> = Promise.resolve();
    const app = new Hono();
    app.use(async (c, next) => {
      await next();
      const { body, status } = c.res;
      // Not merged with the headers of the answer it replaces (hono's setter keeps them otherwise).
      c.res = undefined;
      c.res = new Response(body, { status, headers: { 'content-type': 'text/plain' } });
    });
    app.use('/admin/*', ampCors({ ...INNER, onDenied: 'omit' }));
    app.get('/admin/*', async (c) => {
      await current;
      return c.text(SECRET);
    });
    const outer = withAmpCors((req: Request) => app.fetch(req), OUTER);
    for (const others of [[], [OWN], [PARTNER, OWN]]) {
      const g = gate();
      current = g.wait;
      const pending = outer(new Request('https://api.example.com/admin/secret', { headers: { origin: PARTNER } }));
      await new Promise((resolve) => setTimeout(resolve, 0));
      current = Promise.resolve();
      const meanwhile = others.map((origin) => outer(new Request('https://api.example.com/admin/x', { headers: { origin } })));
      g.open();
      const [r] = await Promise.all([pending, ...meanwhile]);
      expect(grantOf(r as Response)).toEqual([null, null]);
    }
    // The publisher, allowed by both, gets what the app alone gives it (the layer between dropped the inner's grant).
    const own = () => new Request('https://api.example.com/admin/secret', { headers: { origin: OWN } });
    expect(grantOf(await outer(own()))).toEqual(grantOf(await app.fetch(own())));
  });

  it('every Origin counts its own writes: an attacker sending many Origins never moves another slot down', () => {
    fc.assert(
      fc.property(fc.string({ maxLength: 40 }), (tail) => {
        const origin = `https://${tail}.example`;
        const before = writesFor(origin);
        // A write noted for it (what an inner layer does).
        void withAmpCors(() => new Response('x'), OUTER)(new Request(URL_, { headers: { origin } }));
        return writesFor(origin) >= before;
      }),
      { numRuns: 50 },
    );
  });
});

describe('5.a with a withAmpCors inside a Hono route (the Request handed on): a rebuild dropping every header', () => {
  for (const onDenied of ['omit', 'reject'] as const)
    it(`app-wide Hono ampCors, a rebuilding layer, a route handing c.req.raw to withAmpCors (onDenied ${onDenied}): no grant`, async () => {
      const inner = withAmpCors(() => new Response(SECRET), { ...INNER, onDenied });
      const app = new Hono();
      app.use(ampCors(OUTER));
      app.use(async (c, next) => {
        await next();
        const { body, status } = c.res;
        c.res = undefined;
        c.res = new Response(body, { status, headers: { 'content-type': 'text/plain' } });
      });
      app.all('/admin/*', (c) => inner(c.req.raw));
      for (const origin of [PARTNER, OWN]) {
        const r = await app.request('/admin/secret', { headers: { origin } });
        // The inner's answer lost its headers on the way: the outer adds no grant to it.
        expect(grantOf(r)).toEqual([null, null]);
      }
    });
});

describe('the mark of a Request denied with 403 (Fetch, onDenied reject)', () => {
  it('the same Request judged again by another withAmpCors that allows it: its grant, no failure', async () => {
    const request = new Request(URL_, { headers: { origin: PARTNER } });
    const denied = await withAmpCors(() => new Response('inner'), INNER)(request);
    expect(denied.status).toBe(403);
    const r = await withAmpCors(() => new Response('outer'), OUTER)(request);
    expect([r.status, ...grantOf(r)]).toEqual([200, PARTNER, 'true']);
  });
});
