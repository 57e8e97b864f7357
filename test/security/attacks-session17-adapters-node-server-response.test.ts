/**
 * Attacker's review, session 17 (helper-99): `@hono/node-server`'s
 * `serve`/`getRequestListener` replaces the global `Response` with a class
 * of its own which, for a body given as a string, bytes, a Blob or a
 * stream, keeps `[status, body, headers]` and makes no real Response until
 * something reads its body (`.body`, `text()`, `clone()`, hono's
 * `c.res = …`). Its `headers` are that kept object; the real Response is
 * made from what it was made with: unless that was a `Headers`, what was
 * written into its `headers` is lost then. The Fetch and Hono adapters
 * wrote their plan into the handler's Response in place, so a layer
 * rebuilding it (`new Response(res.body, res)`: a timing or logging
 * wrapper, a middleware) lost it all:
 *
 * a) App-wide Hono ampCors allowing the partner, such a middleware, and
 *    `app.mount('/admin', withAmpCors(h, INNER))` denying it with
 *    `onDenied: 'omit'`: the inner's `Vary: Origin` (what the outer reads
 *    as an inner answer rebuilt, nested-policies.ts 5.) was lost, and the
 *    partner got `Access-Control-Allow-Origin` and `-Credentials` on /admin.
 * b) `withAmpCors` with `onDenied: 'omit'` over a handler echoing the
 *    Origin with credentials (a proxied upstream's), then a wrapper
 *    `new Response(res.body, res)`: the grant ampcors removed came back.
 *
 * Fixed: such a Response is written in a copy made with its headers
 * (core's writableResponse), which it makes itself real with. Each case is
 * run with the runtime's own Response and with `@hono/node-server`'s (the
 * global is put back after the file; vitest runs each file apart).
 */
import { withAmpCors } from '@ampcors/fetch';
import { ampCors as honoCors } from '@ampcors/hono';
import { getRequestListener } from '@hono/node-server';
import { Hono, type MiddlewareHandler } from 'hono';
import { createServer } from 'node:http';
import request from 'supertest';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';

const PARTNER = 'https://partner.example';
/** Trusts the partner. */
const OUTER = { publishers: ['partner.example', 'example.com'] };
/** Denies it, and lets its requests through without CORS headers. */
const INNER = { publishers: ['example.com'], onDenied: 'omit' as const };
const grant = (r: Response) => [r.headers.get('access-control-allow-origin'), r.headers.get('access-control-allow-credentials')];
/** A layer rebuilding the answer from its body (a timing or logging middleware). */
const rebuild: MiddlewareHandler = async (c, next) => {
  await next();
  c.res = new Response(c.res.body, c.res);
};
const fromPartner = (path = '/admin/secret') => new Request(`https://api.example.com${path}`, { headers: { origin: PARTNER } });
/** An upstream's answer echoing the request's Origin with credentials. */
const echoing = (request: Request, body: BodyInit = 'secret') =>
  new Response(body, { headers: { 'access-control-allow-origin': request.headers.get('origin') ?? '', 'access-control-allow-credentials': 'true' } });
/** A stream of `text`. */
const streamOf = (text: string) =>
  new ReadableStream<Uint8Array>({
    start(controller) {
      controller.enqueue(new TextEncoder().encode(text));
      controller.close();
    },
  });

const runtimeResponse = globalThis.Response;
const runtimeRequest = globalThis.Request;
/** Whether `response` is `@hono/node-server`'s Response not yet made real (its `[status, body, headers]` under a symbol described `cache`). */
const lightweight = (response: Response) => Object.getOwnPropertySymbols(response).some((symbol) => symbol.description === 'cache');

for (const server of ['runtime', '@hono/node-server'] as const) {
  describe(`with the ${server} Response`, () => {
    beforeAll(() => {
      if (server === '@hono/node-server') getRequestListener(() => new Response('x'));
    });
    afterAll(() => {
      Object.defineProperty(globalThis, 'Response', { value: runtimeResponse });
      Object.defineProperty(globalThis, 'Request', { value: runtimeRequest });
    });

    it('the Response under test is the one named', () => {
      expect(lightweight(new Response('x'))).toBe(server === '@hono/node-server');
    });

    it('a) Hono ampCors app-wide, a rebuilding layer, app.mount of withAmpCors denying the partner: no grant on /admin', async () => {
      const app = new Hono();
      app.use(honoCors(OUTER));
      app.use(rebuild);
      app.mount(
        '/admin',
        withAmpCors(() => new Response('secret'), INNER),
      );
      app.get('/public', (c) => c.text('public'));
      const answer = await app.request('/admin/secret', { headers: { origin: PARTNER } });
      expect([answer.status, await answer.text(), ...grant(answer)]).toEqual([200, 'secret', null, null]);
      // The outer's grant elsewhere still stands (the check above can fail).
      expect(grant(await app.request('/public', { headers: { origin: PARTNER } }))).toEqual([PARTNER, 'true']);
    });

    it('withAmpCors over a Hono app rebuilding its answers, whose ampCors on /admin denies the partner: no grant', async () => {
      const app = new Hono();
      app.use(rebuild);
      app.use('/admin/*', honoCors(INNER));
      app.get('/admin/secret', (c) => c.text('secret'));
      const outer = withAmpCors((request: Request) => app.fetch(request), OUTER);
      expect(grant(await outer(fromPartner()))).toEqual([null, null]);
    });

    it('Hono ampCors app-wide, a rebuilding layer, Hono ampCors on /admin (one app): no grant', async () => {
      const app = new Hono();
      app.use(honoCors(OUTER));
      app.use(rebuild);
      app.use('/admin/*', honoCors(INNER));
      app.get('/admin/secret', (c) => c.text('secret'));
      expect(grant(await app.request('/admin/secret', { headers: { origin: PARTNER } }))).toEqual([null, null]);
    });

    for (const body of ['string', 'stream'] as const)
      it(`b) withAmpCors (omit) over an upstream echoing the denied Origin (${body} body), then a wrapper rebuilding it: no grant`, async () => {
        const inner = withAmpCors((request: Request) => echoing(request, body === 'string' ? 'secret' : streamOf('secret')), INNER);
        const denied = await inner(fromPartner('/secret'));
        expect(grant(denied)).toEqual([null, null]);
        const wrapped = new Response(denied.body, denied);
        expect([...grant(wrapped), await wrapped.text()]).toEqual([null, null, 'secret']);
      });

    for (const made of ['c.body', 'new Response'] as const)
      it(`b) Hono ampCors (omit) under a rebuilding layer, over a handler echoing the denied Origin (${made}): no grant`, async () => {
        const app = new Hono();
        app.use(rebuild);
        app.use(honoCors(INNER));
        app.get('/secret', (c) =>
          made === 'new Response'
            ? echoing(c.req.raw)
            : c.body('secret', 200, { 'Access-Control-Allow-Origin': c.req.header('origin') ?? '', 'Access-Control-Allow-Credentials': 'true' }),
        );
        const answer = await app.request('/secret', { headers: { origin: PARTNER } });
        expect([...grant(answer), answer.headers.get('vary'), await answer.text()]).toEqual([null, null, 'Origin', 'secret']);
      });

    it('a grant and its Vary: Origin survive the body being read (clone, text, a rebuild), the handler keeping its headers', async () => {
      const handler = withAmpCors(() => {
        const response = new Response('data', { status: 201, headers: { 'x-handler': '1' } });
        response.headers.append('set-cookie', 'a=1');
        response.headers.append('set-cookie', 'b=2');
        return response;
      }, OUTER);
      const answer = await handler(fromPartner('/data'));
      const rebuilt = new Response(answer.clone().body, answer);
      for (const r of [answer, rebuilt]) {
        expect([r.status, ...grant(r), r.headers.get('vary'), r.headers.get('x-handler'), r.headers.getSetCookie()]).toEqual([
          201,
          PARTNER,
          'true',
          'Origin',
          '1',
          ['a=1', 'b=2'],
        ]);
      }
      expect(await rebuilt.text()).toBe('data');
    });

    it("a handler's Response sent again to two Origins: each answer its own grant (the node-server one's never written into)", async () => {
      const made = new Response('not found', { status: 404, headers: { 'content-type': 'text/plain' } });
      const handler = withAmpCors(() => made, { publishers: ['partner.example', 'other.example'] });
      const first = await handler(fromPartner('/missing'));
      const second = await handler(new Request('https://api.example.com/missing', { headers: { origin: 'https://other.example' } }));
      expect([grant(first), grant(second)]).toEqual([
        [PARTNER, 'true'],
        ['https://other.example', 'true'],
      ]);
      // The runtime's is written into, noted, and copied for the second request (core's answerOver).
      if (server === '@hono/node-server') expect([...grant(made), made.headers.get('vary')]).toEqual([null, null, null]);
      const rebuilt = new Response(first.clone().body, first);
      expect([grant(rebuilt), first.status, await first.text()]).toEqual([[PARTNER, 'true'], 404, 'not found']);
    });

    it('core loaded after the global Response was replaced still writes such a Response in a copy that keeps what is written', async () => {
      vi.resetModules();
      const { writableResponse } = await import('@ampcors/core/adapter');
      const made = new Response('body', { headers: { 'x-handler': '1' } });
      const target = writableResponse(made);
      target.headers.set('vary', 'Origin');
      const rebuilt = new Response(target.body, target);
      expect([target === made, rebuilt.headers.get('vary'), rebuilt.headers.get('x-handler'), made.headers.get('vary')]).toEqual(
        server === '@hono/node-server' ? [false, 'Origin', '1', null] : [true, 'Origin', '1', 'Origin'],
      );
    });

    it("what @hono/node-server's listener sends: the grant and Vary where allowed, none where denied (omit), the body", async () => {
      const app = new Hono();
      app.use(honoCors(OUTER));
      app.use(rebuild);
      app.mount(
        '/admin',
        withAmpCors((r: Request) => echoing(r), INNER),
      );
      app.get('/public', (c) => c.text('public'));
      const listener = createServer(getRequestListener(app.fetch, { overrideGlobalObjects: server === '@hono/node-server' }));
      const admin = await request(listener).get('/admin/secret').set('origin', PARTNER);
      const open = await request(listener).get('/public').set('origin', PARTNER);
      expect([admin.status, admin.text, admin.headers['access-control-allow-origin'], admin.headers['access-control-allow-credentials']]).toEqual([
        200,
        'secret',
        undefined,
        undefined,
      ]);
      expect([open.text, open.headers['access-control-allow-origin'], open.headers['vary']]).toEqual(['public', PARTNER, 'Origin']);
    });

    it("a 403's headers are its own: a header a later layer sets on one is not on the next", async () => {
      const handler = withAmpCors(() => new Response('ok'), { publishers: ['example.com'] });
      const first = await handler(fromPartner('/'));
      expect(first.status).toBe(403);
      first.headers.set('set-cookie', 'session=victim');
      const second = await handler(fromPartner('/'));
      expect([second.status, second.headers.get('set-cookie')]).toEqual([403, null]);
    });
  });
}
