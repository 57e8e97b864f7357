/**
 * Attacker's review, session 15 (re-attack of the nested-policies fix): two
 * ampCors layers where the Request object is REBUILT between them (a router
 * that strips its base path, `new Request(url, req)`; Hono's `app.mount`).
 * The inner policy denied the partner (its handler saw `allowed: false`), yet
 * the answer carried the outer policy's `Access-Control-Allow-Origin` and
 * `-Credentials` and the admin data: the inner layer, seeing no earlier
 * verdict on its new Request, noted the Response it wrote; the outer found
 * no inner decision for ITS request and took the Response for a cached one
 * written for another request (a copy, its own allow on it).
 *
 * Fixed (core's nested-policies.ts, 3., and written-responses.ts): a note
 * says which policy wrote, when, and for which Origin; a layer meeting a
 * Response another policy wrote for the same Origin while its handler ran
 * gives the more restrictive of the two. The same rule keeps two requests in
 * flight on one cached Response through two policies from lending the open
 * one's allow to the strict one's answer.
 */
import { ampCorsOf, withAmpCors } from '@ampcors/fetch';
import { ampCors as honoCors } from '@ampcors/hono';
import { Hono } from 'hono';
import { describe, expect, it } from 'vitest';
import { CORS_HEADERS } from './cors-header-names.js';

const PARTNER = 'https://partner.example';
const OWN = 'https://example.com';
const EVIL = 'https://evil.example';
/** The application-wide policy: the partner and the publisher. */
const OUTER = { publishers: ['partner.example', 'example.com'] };
/** The stricter policy of /admin: the publisher only, denied origins let through without CORS headers. */
const INNER = { publishers: ['example.com'], onDenied: 'omit' as const };
const URL_ADMIN = 'https://api.example.com/admin/users';
/** The CORS headers of OUTER's allow of the partner (in {@link CORS_HEADERS}' order). */
const OPEN_ALLOW = [
  ['access-control-allow-origin', PARTNER],
  ['access-control-allow-credentials', 'true'],
  ['access-control-expose-headers', 'AMP-Redirect-To'],
];

const corsOf = (response: Response) => CORS_HEADERS.filter((name) => response.headers.has(name)).map((name) => [name, response.headers.get(name)]);
const get = (url: string, origin?: string) => new Request(url, origin === undefined ? {} : { headers: { origin } });
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** A router in front of `admin`, as an application writes one: the base path stripped, the query dropped, a new Request. */
const routerTo =
  (admin: (request: Request) => Promise<Response>) =>
  (request: Request): Response | Promise<Response> => {
    const url = new URL(request.url);
    if (url.pathname.startsWith('/admin')) return admin(new Request(new URL(url.pathname.slice(6) || '/', url), request));
    return Response.json({ public: true });
  };

describe('the attacker: the Request rebuilt between two ampCors layers', () => {
  it('Fetch inside Fetch: the inner denial stands (no CORS header), the publisher is still allowed', async () => {
    let innerSaw: boolean | undefined;
    const admin = withAmpCors((request: Request) => {
      innerSaw = ampCorsOf(request)?.verdict.allowed;
      return Response.json({ secret: 'admin data' });
    }, INNER);
    const app = withAmpCors(routerTo(admin), OUTER);
    const denied = await app(get(URL_ADMIN, PARTNER));
    expect(innerSaw).toBe(false);
    expect(corsOf(denied)).toEqual([]);
    expect(denied.headers.get('vary')).toContain('Origin');
    const allowed = await app(get(URL_ADMIN, OWN));
    expect(innerSaw).toBe(true);
    expect([allowed.headers.get('access-control-allow-origin'), allowed.headers.get('access-control-allow-credentials')]).toEqual([OWN, 'true']);
  });

  it('the attacker adds __amp_source_origin, which the router drops: the layers see different source origins, the denial still stands', async () => {
    const admin = withAmpCors(() => Response.json({ secret: 'admin data' }), INNER);
    const app = withAmpCors(routerTo(admin), OUTER);
    for (const source of [PARTNER, OWN, EVIL]) {
      const answer = await app(get(`${URL_ADMIN}?__amp_source_origin=${encodeURIComponent(source)}`, PARTNER));
      expect(corsOf(answer)).toEqual([]);
    }
  });

  it('a Fetch withAmpCors around a Hono app that mounts a withAmpCors handler', async () => {
    const admin = withAmpCors(() => Response.json({ secret: 'admin data' }), INNER);
    const hono = new Hono();
    hono.mount('/admin', admin);
    const app = withAmpCors((request: Request) => hono.fetch(request), OUTER);
    expect(corsOf(await app(get(URL_ADMIN, PARTNER)))).toEqual([]);
    expect((await app(get(URL_ADMIN, OWN))).headers.get('access-control-allow-origin')).toBe(OWN);
  });

  it("Hono's app-wide ampCors and a withAmpCors handler mounted with app.mount", async () => {
    const admin = withAmpCors(() => Response.json({ secret: 'admin data' }), INNER);
    const app = new Hono();
    app.use('*', honoCors(OUTER));
    app.mount('/admin', admin);
    const denied = await app.fetch(get(URL_ADMIN, PARTNER));
    expect(corsOf(denied)).toEqual([]);
    expect(await denied.json()).toEqual({ secret: 'admin data' });
    expect((await app.fetch(get(URL_ADMIN, OWN))).headers.get('access-control-allow-origin')).toBe(OWN);
    // The outer policy still allows the partner where the inner one is not.
    expect((await app.fetch(get('https://api.example.com/other', PARTNER))).headers.get('access-control-allow-origin')).toBe(PARTNER);
  });

  it('a Hono sub-app with its own ampCors, mounted with app.mount under a Hono app-wide ampCors', async () => {
    const sub = new Hono();
    sub.use('*', honoCors(INNER));
    sub.get('*', (c) => c.json({ secret: 'admin data' }));
    const app = new Hono();
    app.use('*', honoCors(OUTER));
    app.mount('/admin', sub.fetch);
    expect(corsOf(await app.fetch(get(URL_ADMIN, PARTNER)))).toEqual([]);
    expect((await app.fetch(get(URL_ADMIN, OWN))).headers.get('access-control-allow-origin')).toBe(OWN);
  });

  it("the inner layer's 403 (onDenied: 'reject'), a failure (its verifier throws) and its copies (a cached or immutable Response) get no outer allow", async () => {
    const cached = new Response('cached 404', { status: 404 });
    const inners = [
      withAmpCors(() => Response.json({ secret: 'admin data' }), { publishers: ['example.com'] }),
      withAmpCors(() => Response.json({ secret: 'admin data' }), {
        verifier: {
          verify: () => {
            throw new Error('down');
          },
        },
      }),
      withAmpCors(() => {
        throw new Error('handler failed');
      }, INNER),
      withAmpCors(() => cached, INNER),
      withAmpCors(() => Response.redirect('https://api.example.com/admin/next', 302), INNER),
    ];
    for (const inner of inners) {
      const app = withAmpCors(routerTo(inner), OUTER);
      // Twice: the cached Response is noted by the first request, copied by the second.
      for (let round = 0; round < 2; round++) expect(corsOf(await app(get(URL_ADMIN, PARTNER)))).toEqual([]);
      const honoApp = new Hono();
      honoApp.use('*', honoCors(OUTER));
      honoApp.mount('/admin', inner);
      for (let round = 0; round < 2; round++) expect(corsOf(await honoApp.fetch(get(URL_ADMIN, PARTNER)))).toEqual([]);
    }
  });

  it('the reverse (a loose inner policy inside a strict outer one) and three layers: the more restrictive answer, never a looser one', async () => {
    const loose = withAmpCors(() => Response.json({ secret: 'admin data' }), { publishers: ['partner.example', 'example.com'] });
    const strictOuter = withAmpCors(routerTo(loose), INNER);
    expect(corsOf(await strictOuter(get(URL_ADMIN, PARTNER)))).toEqual([]);
    // Outer allows, middle denies, inner allows: denied.
    const inner = withAmpCors(() => Response.json({ secret: 'admin data' }), OUTER);
    const middle = withAmpCors((request: Request) => inner(new Request(request.url, request)), INNER);
    const outer = withAmpCors(routerTo(middle), OUTER);
    expect(corsOf(await outer(get(URL_ADMIN, PARTNER)))).toEqual([]);
    expect((await outer(get(URL_ADMIN, OWN))).headers.get('access-control-allow-origin')).toBe(OWN);
    // Credentials: an inner policy without them inside an outer one with them: no credentials.
    const noCredentials = withAmpCors(() => Response.json({ secret: 'admin data' }), { publishers: ['partner.example'], credentials: false });
    const credentialed = withAmpCors(routerTo(noCredentials), OUTER);
    const answer = await credentialed(get(URL_ADMIN, PARTNER));
    expect(answer.headers.get('access-control-allow-credentials')).toBe(null);
  });

  it('a Hono app with its own ampCors inside a Fetch withAmpCors (one Request): the inner denial stands', async () => {
    const hono = new Hono();
    hono.use('/admin/*', honoCors(INNER));
    hono.get('*', (c) => c.json({ secret: 'admin data' }));
    const app = withAmpCors((request: Request) => hono.fetch(request), OUTER);
    expect(corsOf(await app(get(URL_ADMIN, PARTNER)))).toEqual([]);
    expect((await app(get('https://api.example.com/public', PARTNER))).headers.get('access-control-allow-origin')).toBe(PARTNER);
    expect((await app(get(URL_ADMIN, OWN))).headers.get('access-control-allow-origin')).toBe(OWN);
  });
});

describe('two policies answering one cached Response for requests in flight from the same origin', () => {
  /** The partner asks /public (open) and /private (strict) at once, both answered by one cached 404; returns [path, answer] pairs. */
  const race = async (answer: (path: string, origin: string) => Response | Promise<Response>) => {
    const asked = Array.from({ length: 80 }, (_, i) => (i % 2 === 0 ? '/public' : '/private'));
    return Promise.all(asked.map(async (path) => [path, await answer(path, PARTNER)] as const));
  };
  const check = (answers: ReadonlyArray<readonly [string, Response]>) => {
    for (const [path, answer] of answers) {
      const cors = corsOf(answer);
      // The strict policy's answer never carries the open policy's allow; the open one's is whole or none (a race's cost).
      if (path === '/private') expect(cors).toEqual([]);
      else expect([[], OPEN_ALLOW]).toContainEqual(cors);
    }
  };

  it('Fetch: /public open, /private strict, one cached 404', async () => {
    const notFound = new Response(null, { status: 404 });
    let turn = 0;
    const slow = async () => {
      await sleep(turn++ % 3);
      return notFound;
    };
    const open = withAmpCors(slow, OUTER);
    const strict = withAmpCors(slow, INNER);
    check(await race((path, origin) => (path === '/public' ? open : strict)(get(`https://api.example.com${path}`, origin))));
    // One after the other (not in flight): each policy's own answer, the open one allowed.
    for (const [app, expected] of [
      [strict, []],
      [open, OPEN_ALLOW],
      [strict, []],
      [open, OPEN_ALLOW],
    ] as const) {
      expect(corsOf(await app(get('https://api.example.com/x', PARTNER)))).toEqual(expected);
    }
  });

  it("a request the attacker sends first (the strict policy's denial written into a fresh cached Response) does not deny the partner's later requests", async () => {
    const notFound = new Response(null, { status: 404 });
    const open = withAmpCors(() => notFound, OUTER);
    const strict = withAmpCors(() => notFound, INNER);
    expect(corsOf(await strict(get('https://api.example.com/private', PARTNER)))).toEqual([]);
    for (let round = 0; round < 2; round++) expect(corsOf(await open(get('https://api.example.com/public', PARTNER)))).toEqual(OPEN_ALLOW);
    const hono = new Hono();
    const cached = new Response(null, { status: 404 });
    hono.use('/public/*', honoCors(OUTER));
    hono.use('/private/*', honoCors(INNER));
    hono.get('*', () => cached);
    expect(corsOf(await hono.fetch(get('https://api.example.com/private/x', PARTNER)))).toEqual([]);
    expect(corsOf(await hono.fetch(get('https://api.example.com/public/x', PARTNER)))).toEqual(OPEN_ALLOW);
  });

  it('Hono: /public/* open, /private/* strict, one cached 404', async () => {
    const notFound = new Response(null, { status: 404 });
    let turn = 0;
    const app = new Hono();
    app.use('/public/*', honoCors(OUTER));
    app.use('/private/*', honoCors(INNER));
    app.get('*', async () => {
      await sleep(turn++ % 3);
      return notFound;
    });
    check(await race((path, origin) => app.fetch(get(`https://api.example.com${path}/x`, origin))));
    expect(corsOf(await app.fetch(get('https://api.example.com/private/x', PARTNER)))).toEqual([]);
    expect(corsOf(await app.fetch(get('https://api.example.com/public/x', PARTNER)))).toEqual(OPEN_ALLOW);
  });

  it('Fetch and Hono sharing one cached Response (one record): the strict answer never carries the open allow', async () => {
    const notFound = new Response(null, { status: 404 });
    let turn = 0;
    const slow = async () => {
      await sleep(turn++ % 3);
      return notFound;
    };
    const open = withAmpCors(slow, OUTER);
    const hono = new Hono();
    hono.use('*', honoCors(INNER));
    hono.get('*', slow);
    check(
      await race((path, origin) =>
        path === '/public' ? open(get(`https://api.example.com${path}`, origin)) : hono.fetch(get(`https://api.example.com${path}`, origin)),
      ),
    );
  });
});
