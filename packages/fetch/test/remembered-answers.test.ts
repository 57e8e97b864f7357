/**
 * The answers the Fetch adapter ends itself (a preflight's, a 403) for a plan
 * core remembers are built from headers made once per plan (issue 16: `new
 * Response` copies a `Headers` more cheaply than it converts a list of
 * pairs). From the attacker's side: whatever is written into one such answer
 * (by the handler's caller, an outer middleware, a hostile plugin), no later
 * answer inherits it; answers for different origins, requested headers and
 * request kinds interleaved are each exactly their own.
 */
import { cacheOrigin } from '@ampcors/core';
import { withAmpCors } from '@ampcors/fetch';
import { describe, expect, it } from 'vitest';

const PUBLISHER = 'example.com';
const OTHER = 'other.example';
const CACHE = cacheOrigin(PUBLISHER);
const OTHER_CACHE = cacheOrigin(OTHER);
const EVIL = 'https://evil.example';
const URL_ = 'https://api.example.net/items';

const handler = () => withAmpCors(() => new Response('ran'), { publishers: [PUBLISHER, OTHER] });

const preflight = (origin: string, requested = 'content-type') =>
  new Request(URL_, { method: 'OPTIONS', headers: { Origin: origin, 'Access-Control-Request-Method': 'POST', 'Access-Control-Request-Headers': requested } });

/** A response's headers, names sorted (as `Headers` iterates them). */
const headersOf = (response: Response) => [...response.headers];

describe('answers ended from remembered headers', () => {
  it('inherit nothing written into an earlier answer of the same plan', async () => {
    const cors = handler();
    const first = await cors(preflight(CACHE));
    const expected = headersOf(first);
    expect(first.headers.get('access-control-allow-origin')).toBe(CACHE);
    // The attacker's writes into the answer it was given.
    first.headers.set('Access-Control-Allow-Origin', '*');
    first.headers.append('Access-Control-Allow-Headers', 'x-evil');
    first.headers.set('Access-Control-Expose-Headers', 'set-cookie');
    first.headers.delete('Vary');
    for (let round = 0; round < 3; round++) {
      const again = await cors(preflight(CACHE));
      expect(again).not.toBe(first);
      expect(again.headers).not.toBe(first.headers);
      expect(headersOf(again)).toEqual(expected);
      again.headers.set('Access-Control-Allow-Credentials', 'false');
    }
  });

  it('inherit nothing written into an earlier 403', async () => {
    const cors = handler();
    const denied = await cors(new Request(URL_, { headers: { Origin: EVIL } }));
    expect(denied.status).toBe(403);
    const expected = headersOf(denied);
    expect(denied.headers.get('access-control-allow-origin')).toBeNull();
    denied.headers.set('Access-Control-Allow-Origin', EVIL);
    denied.headers.set('Access-Control-Allow-Credentials', 'true');
    const again = await cors(new Request(URL_, { headers: { Origin: EVIL } }));
    expect(again.status).toBe(403);
    expect(headersOf(again)).toEqual(expected);
    expect(again.headers.get('access-control-allow-origin')).toBeNull();
  });

  it('answer each origin and requested-header list with its own headers, interleaved and written into', async () => {
    const cors = handler();
    const cases: [string, string][] = [
      [CACHE, 'content-type'],
      [OTHER_CACHE, 'content-type'],
      [CACHE, 'x-custom'],
      [EVIL, 'content-type'],
      [CACHE, 'content-type'],
      [OTHER_CACHE, 'x-custom, content-type'],
      [`https://${PUBLISHER}`, 'content-type'],
    ];
    for (let round = 0; round < 3; round++) {
      for (const [origin, requested] of cases) {
        const answer = await cors(preflight(origin, requested));
        const allowed = origin !== EVIL;
        expect([answer.headers.get('access-control-allow-origin'), answer.headers.get('access-control-allow-credentials')], origin).toEqual(
          allowed ? [origin, 'true'] : [null, null],
        );
        if (allowed) expect(answer.headers.get('access-control-allow-headers'), `${origin} ${requested}`).toBe(requested);
        else expect(answer.headers.get('access-control-allow-headers')).toBeNull();
        // Poison every answer: the next ones must not carry it.
        answer.headers.set('Access-Control-Allow-Origin', EVIL);
        answer.headers.set('Access-Control-Allow-Headers', '*');
      }
    }
  });
});
