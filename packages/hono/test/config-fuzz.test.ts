/**
 * Configuration fuzz of @ampcors/hono (issue #15 through issue #17's
 * adapter): random option objects — typos, wrong types, `undefined`, empty
 * lists, mixed modes, `hono/cors`'s forms including reflect-all origin
 * functions (synchronous and asynchronous) and methods functions — through
 * `ampCors`, then a credentialed POST from a foreign origin. From the
 * attacker's side:
 *
 * - a configuration is refused with an AmpCorsError (never another error) or
 *   runs in the mode its keys name: no options at all is the literal `*`
 *   without credentials; any key is a mode a key names (`publishers`,
 *   `origins`, `verifier`, `origin`), never with an unknown key or a key
 *   holding `undefined`;
 * - a foreign origin is never allowed with credentials, is allowed at all
 *   only by the `origin` option (whose verdict then says so), and a request
 *   never fails with an exception escaping the middleware.
 *
 * The key list is this test's own oracle, written from the README.
 */
import { createVerifier, isAmpCorsError } from '@ampcors/core';
import { AMP_CORS_CONFIG_KEYS } from '@ampcors/core/adapter';
import { ampCors, type AmpCorsVariables } from '@ampcors/hono';
import fc from 'fast-check';
import { Hono } from 'hono';
import { expect, it } from 'vitest';

const EVIL = 'https://evil.example';
const KEYS = [...AMP_CORS_CONFIG_KEYS, 'origin', 'allowMethods', 'allowHeaders', 'exposeHeaders'];
const MODE_KEYS = ['publishers', 'origins', 'verifier', 'origin'];
const TYPOS = ['publisher', 'orgin', 'origins ', 'credentails', 'allowMethod', 'allowOrigin', 'exposeHeader', 'maxage', 'allowCredentials', 'cors'];

const honest = createVerifier({ publishers: ['example.com'] });
const reflect = (origin: string) => origin;
const reflectLater = async (origin: string) => origin;
const star = () => '*';
const partner = (origin: string) => (origin === 'https://partner.example' ? origin : null);
const elsewhere = () => 'https://partner.example';
const methodsOf = (origin: string) => (origin === 'https://partner.example' ? ['GET', 'DELETE'] : ['GET']);

const value = fc.oneof(
  fc.constantFrom<unknown>(
    undefined,
    null,
    [],
    {},
    true,
    false,
    0,
    600,
    '600',
    '*',
    ['*'],
    'example.com',
    ['example.com'],
    ['http://example.com/'],
    'https://partner.example',
    ['https://partner.example', 'https://other.example'],
    [EVIL.toUpperCase()],
    /.*/,
    ['GET', 'POST'],
    ['X-Custom-Header'],
    ['amp-same-origin'],
    'omit',
    'reject',
    204,
    { senders: ['news@example.com'] },
    honest,
    { verify: 'no' },
    reflect,
    reflectLater,
    star,
    partner,
    elsewhere,
    methodsOf,
    () => ['GET\r\nX-Injected: 1'],
    [1, 2],
    Number.NaN,
    -1,
  ),
  fc.string({ maxLength: 8 }),
);
const key = fc.oneof(
  { weight: 6, arbitrary: fc.constantFrom(...KEYS) },
  { weight: 2, arbitrary: fc.constantFrom(...TYPOS) },
  { weight: 1, arbitrary: fc.string({ minLength: 1, maxLength: 10 }) },
);
const BASES: readonly unknown[] = [
  undefined,
  {},
  { publishers: ['example.com'] },
  { verifier: honest },
  { origin: 'https://partner.example' },
  { origin: '*' },
  { origin: reflect },
  { origin: reflectLater, credentials: true },
];
const options = fc.oneof(
  fc.constantFrom(...BASES),
  fc.tuple(fc.constantFrom(...BASES), fc.dictionary(key, value, { maxKeys: 3 })).map(([base, extra]) => ({ ...(base as object), ...extra })),
  fc.dictionary(key, value, { maxKeys: 4 }),
);

/** What may be wrong with a configuration that was accepted: `undefined` when it may run. */
function acceptedWrongly(given: unknown): string | undefined {
  if (given === undefined) return undefined;
  if (typeof given !== 'object' || given === null) return 'a non-object was accepted';
  const keys = Object.keys(given);
  const unknown = keys.find((name) => !KEYS.includes(name));
  if (unknown !== undefined) return `unknown key ${JSON.stringify(unknown)} accepted`;
  const empty = keys.find((name) => (given as Record<string, unknown>)[name] === undefined);
  if (empty !== undefined) return `${empty}: undefined accepted`;
  if (keys.length > 0 && !keys.some((name) => MODE_KEYS.includes(name))) return 'keys that name no mode accepted';
  return undefined;
}

it('refuses with an AmpCorsError or runs in the mode its keys name; never a foreign origin with credentials; no exception escapes', async () => {
  const outcomes = { refused: 0, star: 0, denied: 0, allowed: 0, failed: 0 };
  await fc.assert(
    fc.asyncProperty(options, fc.boolean(), async (given, preflight) => {
      let middleware: ReturnType<typeof ampCors>;
      try {
        middleware = ampCors(given as never);
      } catch (error) {
        expect(isAmpCorsError(error), String(error)).toBe(true);
        outcomes.refused += 1;
        return;
      }
      expect(acceptedWrongly(given)).toBeUndefined();
      let reason: string | null = null;
      const app = new Hono<{ Variables: AmpCorsVariables }>();
      app.onError(() => {
        throw new Error('an exception reached the app');
      });
      app.use('*', middleware);
      app.all('/api', (c) => {
        reason = c.get('ampCors').reason;
        return c.text('ran');
      });
      const headers: Record<string, string> = { Origin: EVIL, Cookie: 'session=victim', 'Sec-Fetch-Site': 'cross-site' };
      if (preflight) Object.assign(headers, { 'Access-Control-Request-Method': 'DELETE' });
      const res = await app.request('https://api.example.net/api', { method: preflight ? 'OPTIONS' : 'POST', headers });
      const acao = res.headers.get('access-control-allow-origin');
      const acac = res.headers.get('access-control-allow-credentials');
      // Never credentials with an origin nobody named, nor with *; never an injected header.
      if (acao === EVIL || acao === '*') expect(acac).toBeNull();
      expect(res.headers.get('x-injected')).toBeNull();
      const keys = given === undefined ? [] : Object.keys(given as object);
      if (keys.length === 0) {
        expect(acao).toBe('*');
        expect((res.headers.get('vary') ?? '').toLowerCase()).not.toContain('origin');
        outcomes.star += 1;
        return;
      }
      expect(acao).not.toBe('*');
      if (res.status === 500) {
        // A failing verifier or origin function: no CORS header at all.
        expect(acao).toBeNull();
        outcomes.failed += 1;
        return;
      }
      if (acao === EVIL) {
        // Only the origin option can have allowed it, and the verdict names how.
        expect(keys).toContain('origin');
        if (!preflight) expect(['any-origin', 'publisher-origin']).toContain(reason);
        outcomes.allowed += 1;
      } else {
        outcomes.denied += 1;
      }
    }),
    { numRuns: 500 },
  );
  // The generator reaches every outcome, so the property is tested on each.
  for (const outcome of ['refused', 'star', 'denied', 'allowed', 'failed'] as const) expect(outcomes[outcome], JSON.stringify(outcomes)).toBeGreaterThan(0);
});
