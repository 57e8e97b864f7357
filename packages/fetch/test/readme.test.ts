/**
 * The README's "handler written by hand" recipe, run verbatim: its `ts` block
 * is written next to this test (removed afterwards), imported, and its
 * `fetch` asked every kind of request, from the attacker's side too. Each
 * answer must be the one `withAmpCors` gives for the same handler body.
 * The throwing-verifier case swaps the recipe's options literal, and only it.
 */
import { readFileSync, rmSync, writeFileSync } from 'node:fs';
import { cacheOrigin } from '@ampcors/core';
import { ampCorsOf, type FetchAmpCorsOptions, withAmpCors } from '@ampcors/fetch';
import { afterAll, describe, expect, it } from 'vitest';

const readme = readFileSync(new URL('../README.md', import.meta.url), 'utf8');
const section = readme.slice(readme.indexOf('## A handler written by hand'));
const block = /```ts\n([\s\S]*?)```/.exec(section)?.[1] ?? '';
const OPTIONS_LITERAL = "{ publishers: ['example.com'] }";
const files: URL[] = [];

afterAll(() => {
  for (const file of files) rmSync(file, { force: true });
});

type Fetch = (request: Request) => Promise<Response>;

/** The recipe as a module, with `options` (source text) in place of its options literal when given. */
async function recipe(options?: string): Promise<Fetch> {
  expect(block.split(OPTIONS_LITERAL)).toHaveLength(2);
  const file = new URL(`./readme-recipe-${process.pid}-${files.length}.tmp.ts`, import.meta.url);
  files.push(file);
  writeFileSync(file, options === undefined ? block : block.replace(OPTIONS_LITERAL, options));
  const { default: worker } = (await import(/* @vite-ignore */ file.href)) as { default: { fetch: Fetch } };
  return worker.fetch;
}

/** What withAmpCors answers with the recipe's handler body. */
const wrapped = (options: FetchAmpCorsOptions): Fetch =>
  withAmpCors((request) => Response.json({ ok: true, reason: ampCorsOf(request)?.verdict.reason }), options);

interface Seen {
  status: number;
  headers: Record<string, string>;
  body: string;
}
const seen = async (response: Response): Promise<Seen> => ({
  status: response.status,
  headers: Object.fromEntries(response.headers),
  body: await response.text(),
});

const API = 'https://api.example.net/items';
const CACHE = cacheOrigin('example.com');
const req = (method: string, headers: Record<string, string> = {}) => new Request(API, { method, headers });

describe('the README recipe (a handler written by hand)', () => {
  const cases: ReadonlyArray<readonly [string, () => Request, (answer: Seen) => void]> = [
    [
      'an AMP cache origin GET is allowed, with credentials and Vary: Origin',
      () => req('GET', { Origin: CACHE }),
      (a) => {
        expect(a.status).toBe(200);
        expect(JSON.parse(a.body)).toEqual({ ok: true, reason: 'cache-origin' });
        expect(a.headers['access-control-allow-origin']).toBe(CACHE);
        expect(a.headers['access-control-allow-credentials']).toBe('true');
        expect(a.headers.vary).toBe('Origin');
      },
    ],
    [
      "the publisher's own origin POST is allowed",
      () => req('POST', { Origin: 'https://example.com' }),
      (a) => expect([a.status, a.headers['access-control-allow-origin']]).toEqual([200, 'https://example.com']),
    ],
    [
      'a foreign cache origin POST is refused before the handler runs (403, no CORS header, Vary: Origin)',
      () => req('POST', { Origin: 'https://evil-com.cdn.ampproject.org' }),
      (a) => {
        expect([a.status, a.body]).toEqual([403, 'Forbidden: CORS origin denied (unknown-publisher)\n']);
        expect(a.headers['access-control-allow-origin']).toBeUndefined();
        expect(a.headers.vary).toBe('Origin');
      },
    ],
    [
      'a request without Origin (own page GET, health check) reaches the handler, with Vary: Origin and no CORS header',
      () => req('GET'),
      (a) => {
        expect([a.status, JSON.parse(a.body)]).toEqual([200, { ok: true, reason: 'missing' }]);
        expect(a.headers['access-control-allow-origin']).toBeUndefined();
        expect(a.headers.vary).toBe('Origin');
      },
    ],
    [
      'a preflight is answered and never reaches the handler',
      () => req('OPTIONS', { Origin: CACHE, 'Access-Control-Request-Method': 'POST', 'Access-Control-Request-Headers': 'content-type' }),
      (a) => {
        expect([a.status, a.body]).toEqual([204, '']);
        expect(a.headers['access-control-allow-origin']).toBe(CACHE);
        expect(a.headers['access-control-allow-headers']).toBe('content-type');
        expect(a.headers.vary).toBe('Origin, Access-Control-Request-Headers');
      },
    ],
    [
      "an attacker's preflight is refused and never reaches the handler",
      () => req('OPTIONS', { Origin: 'https://evil.example', 'Access-Control-Request-Method': 'DELETE' }),
      (a) => expect([a.status, a.headers['access-control-allow-origin'], a.headers['access-control-allow-methods']]).toEqual([403, undefined, undefined]),
    ],
    [
      'Sec-Fetch-Site: same-origin (the API’s own page) goes through untouched',
      () => req('POST', { Origin: 'https://api.example.net', 'Sec-Fetch-Site': 'same-origin' }),
      (a) => {
        expect([a.status, JSON.parse(a.body)]).toEqual([200, { ok: true, reason: 'same-origin' }]);
        expect(a.headers['access-control-allow-origin']).toBeUndefined();
      },
    ],
    [
      'the same Origin marked cross-site or same-site is judged, and refused',
      () => req('POST', { Origin: 'https://api.example.net', 'Sec-Fetch-Site': 'same-site' }),
      (a) => expect([a.status, a.headers['access-control-allow-origin']]).toEqual([403, undefined]),
    ],
    [
      'a hostile Origin with a forged AMP-Same-Origin is refused',
      () => req('POST', { Origin: 'https://evil.example', 'AMP-Same-Origin': 'true' }),
      (a) => expect([a.status, a.headers['access-control-allow-origin']]).toEqual([403, undefined]),
    ],
  ];
  for (const [name, request, expectations] of cases) {
    it(name, async () => {
      const answer = await seen(await (await recipe())(request()));
      expectations(answer);
      expect(answer).toEqual(await seen(await wrapped({ publishers: ['example.com'] })(request())));
    });
  }

  it('a throwing or rejecting verifier gives a 500 with Vary: Origin, never an allow, and the handler does not run', async () => {
    for (const verifier of ["{ verify() { throw new Error('registry down'); } }", "{ verify: async () => { throw new Error('registry down'); } }"]) {
      const handle = await recipe(`{ verifier: ${verifier} }`);
      for (const request of [req('GET', { Origin: CACHE }), req('OPTIONS', { Origin: CACHE, 'Access-Control-Request-Method': 'POST' }), req('GET')]) {
        const answer = await seen(await handle(request));
        expect(answer.status, verifier).toBe(500);
        expect(answer.body).toBe('Internal Server Error\n');
        expect(answer.headers.vary).toBe('Origin');
        expect(Object.keys(answer.headers).filter((name) => name.startsWith('access-control-'))).toEqual([]);
      }
    }
  });
});
