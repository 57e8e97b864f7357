/**
 * One Response object answered for several requests (a cached 404): ampcors writes into it the first time only; a
 * later request gets a copy without what ampcors wrote, with its own headers (test/security's
 * attacks-session15-adapters3-shared-response.test.ts has the attacks; these are the adapter's finer rules).
 */
import { type CorsCheck, createAmpCors, withAmpCors } from '@ampcors/fetch';
import { describe, expect, it } from 'vitest';

const PARTNER = 'https://partner.example';
const SITE = 'https://example.com';
const get = (origin?: string) => new Request('https://api.example.com/x', origin === undefined ? {} : { headers: { origin } });
const passed = async (check: CorsCheck | Promise<CorsCheck>) => {
  const now = await check;
  if (now.response !== undefined) throw new Error('expected a pass');
  return now;
};
const cors = (response: Response) => [
  response.headers.get('access-control-allow-origin'),
  response.headers.get('access-control-allow-credentials'),
  response.headers.get('vary'),
];

describe('a Response ampcors already wrote into for another request', () => {
  it('check().apply: the first request`s answer is the object itself, a later one a copy with its own headers', async () => {
    const adapter = createAmpCors({ publishers: ['example.com', 'partner.example'], onDenied: 'omit' });
    const shared = new Response(null, { status: 404, headers: { vary: 'Accept' } });
    const first = (await passed(adapter.check(get(PARTNER)))).apply(shared);
    expect(first).toBe(shared);
    expect(cors(first)).toEqual([PARTNER, 'true', 'Accept, Origin']);
    const second = (await passed(adapter.check(get('https://evil.example')))).apply(shared);
    expect(second).not.toBe(shared);
    expect([second.status, ...cors(second)]).toEqual([404, null, null, 'Accept, Origin']);
    const third = (await passed(adapter.check(get(SITE)))).apply(shared);
    expect(cors(third)).toEqual([SITE, 'true', 'Accept, Origin']);
    // The object keeps the first request's headers, never a later one's.
    expect(cors(shared)).toEqual([PARTNER, 'true', 'Accept, Origin']);
  });

  it('the same request through two layers writes in place; a request without Origin later gets a copy without the earlier allow', async () => {
    const shared = new Response(null, { status: 404 });
    const inner = createAmpCors({ publishers: ['partner.example'], onDenied: 'omit', exposedHeaders: ['X-Total'] });
    const outer = createAmpCors({ publishers: ['partner.example'], onDenied: 'omit', maxAge: 60 });
    const request = get(PARTNER);
    const [outerPass, innerPass] = [await passed(outer.check(request)), await passed(inner.check(request))];
    expect(outerPass.apply(innerPass.apply(shared))).toBe(shared);
    expect(shared.headers.get('access-control-expose-headers')).toBe('AMP-Redirect-To, X-Total');
    const bare = withAmpCors(() => shared, { publishers: ['partner.example'] });
    const answer = await bare(get());
    expect(answer).not.toBe(shared);
    expect([answer.headers.get('access-control-allow-origin'), answer.headers.get('access-control-expose-headers')]).toEqual([null, null]);
  });

  it('a header the handler changed after ampcors wrote it is the handler`s: kept on the copies', async () => {
    const shared = new Response(null, { status: 404 });
    const h = withAmpCors(() => shared, { publishers: ['partner.example'], onDenied: 'omit' });
    await h(get(PARTNER));
    shared.headers.set('vary', 'Accept-Language');
    const later = await h(get('https://evil.example'));
    expect([later.headers.get('vary'), later.headers.get('access-control-allow-origin')]).toEqual(['Accept-Language, Origin', null]);
  });
});
