/**
 * Configuration fuzz (issue #15): random option objects — typos, wrong
 * types, `undefined`, empty lists, mixed modes, reflect-all origin options
 * and functions — through the constructor of every adapter, then a
 * credentialed request from a foreign origin. From the attacker's side:
 *
 * - a configuration is either refused with an AmpCorsError (never another
 *   error) or runs in the mode its keys name: no options at all is the
 *   literal `*` without credentials; any key is a mode that a key names
 *   (`publishers`, `origins`, `verifier`, or the drop-in `origin`), never
 *   the `*` mode, and never with an unknown key or a key holding `undefined`;
 * - a foreign origin is never allowed with credentials, and is allowed at
 *   all only by a drop-in `origin` option (whose verdict then says so);
 * - every configuration problem is in the one error (two independent
 *   typos are both named).
 *
 * The key lists below are this test's own oracle, written from the READMEs,
 * not imported from the adapters.
 */
import { createVerifier, isAmpCorsError } from '@ampcors/core';
import { AMP_CORS_CONFIG_KEYS } from '@ampcors/core/adapter';
import { ampCors as expressAmpCors } from '@ampcors/express';
import { ampCorsOf, withAmpCors } from '@ampcors/fetch';
import { type AmpCorsState, ampCors as koaAmpCors } from '@ampcors/koa';
import express from 'express';
import fc from 'fast-check';
import Koa from 'koa';
import request from 'supertest';
import { describe, expect, it } from 'vitest';

const EVIL = 'https://evil.example';
// The keys every adapter shares, as core lists them (the fuzz makes typos of them).
const CORE_KEYS = AMP_CORS_CONFIG_KEYS;
const AMP_MODE_KEYS = ['publishers', 'origins', 'verifier'];

interface Seen {
  readonly status: number;
  readonly acao: string | undefined;
  readonly acac: string | undefined;
  readonly vary: string;
  /** The verdict reason the handler saw (null when it did not run). */
  readonly reason: string | null;
}

interface Adapter {
  readonly name: string;
  readonly keys: readonly string[];
  /** The drop-in key that names the `cors`-compatible mode, if any. */
  readonly originKey?: string;
  /** Builds the adapter (may throw) and returns how to send the foreign request. */
  build(options: unknown): () => Promise<Seen>;
}

const viaSupertest = async (app: Parameters<typeof request>[0], seen: { reason: string | null }): Promise<Seen> => {
  const res = await request(app).post('/api').set('Origin', EVIL).set('Cookie', 'session=victim').set('Sec-Fetch-Site', 'cross-site');
  return {
    status: res.status,
    acao: res.headers['access-control-allow-origin'],
    acac: res.headers['access-control-allow-credentials'],
    vary: res.headers.vary ?? '',
    reason: seen.reason,
  };
};

const ADAPTERS: readonly Adapter[] = [
  {
    name: 'express',
    keys: [...CORE_KEYS, 'origin', 'headers', 'optionsSuccessStatus'],
    originKey: 'origin',
    build(options) {
      const middleware = expressAmpCors(options as never);
      return () => {
        const seen = { reason: null as string | null };
        const app = express();
        app.use(middleware);
        app.post('/api', (req, res) => {
          seen.reason = req.ampCors?.reason ?? 'none';
          res.send('ran');
        });
        return viaSupertest(app, seen);
      };
    },
  },
  {
    name: 'koa',
    keys: [...CORE_KEYS, 'origin', 'allowMethods', 'allowHeaders', 'exposeHeaders', 'keepHeadersOnError', 'secureContext'],
    originKey: 'origin',
    build(options) {
      const middleware = koaAmpCors(options as never);
      return () => {
        const seen = { reason: null as string | null };
        const app = new Koa<AmpCorsState>();
        app.silent = true;
        app.use(middleware as never);
        app.use((ctx) => {
          seen.reason = (ctx.state as AmpCorsState).ampCors?.reason ?? 'none';
          ctx.body = 'ran';
        });
        return viaSupertest(app.callback(), seen);
      };
    },
  },
  {
    name: 'fetch',
    keys: [...CORE_KEYS, 'onError'],
    build(options) {
      const seen = { reason: null as string | null };
      const handler = withAmpCors((req: Request) => {
        seen.reason = ampCorsOf(req)?.verdict.reason ?? 'none';
        return new Response('ran');
      }, options as never);
      return async () => {
        seen.reason = null;
        const res = await handler(
          new Request('https://api.example.net/api', { method: 'POST', headers: { Origin: EVIL, Cookie: 'session=victim', 'Sec-Fetch-Site': 'cross-site' } }),
        );
        return {
          status: res.status,
          acao: res.headers.get('access-control-allow-origin') ?? undefined,
          acac: res.headers.get('access-control-allow-credentials') ?? undefined,
          vary: res.headers.get('vary') ?? '',
          reason: seen.reason,
        };
      };
    },
  },
];

/** An origin function that allows every origin, in the `cors` (callback) and `@koa/cors` (context) forms at once. */
function reflectAll(this: unknown, first: unknown, callback?: unknown): unknown {
  if (typeof callback === 'function') {
    (callback as (error: null, allow: boolean) => void)(null, true);
    return undefined;
  }
  const ctx = first as { get?: (name: string) => string } | null;
  return typeof ctx?.get === 'function' ? ctx.get('Origin') || '*' : true;
}
/** An origin function that names one partner origin, in both forms. */
function partnerOnly(first: unknown, callback?: unknown): unknown {
  const origin = typeof first === 'string' ? first : (first as { get?: (name: string) => string } | null)?.get?.('Origin');
  const answer = origin === 'https://partner.example' ? origin : false;
  if (typeof callback === 'function') {
    (callback as (error: null, allow: unknown) => void)(null, answer);
    return undefined;
  }
  return answer;
}

const honestVerifier = createVerifier({ publishers: ['example.com'] });
const TYPOS = ['publisher', 'Publishers', 'credentails', 'orgins', 'origns', 'verifer', 'allowOrigin', 'maxage', 'onDeny', 'allowCredentials', 'cors'];
const ALL_KEYS = [...new Set(ADAPTERS.flatMap((adapter) => adapter.keys))];

const value = fc.oneof(
  fc.constantFrom<unknown>(
    undefined,
    null,
    [],
    {},
    true,
    false,
    0,
    60,
    '60',
    'soon',
    '*',
    ['*'],
    'example.com',
    ['example.com'],
    ['*.example.com'],
    ['com'],
    ['http://example.com/'],
    ['https://partner.example'],
    ['http://localhost:3000'],
    'https://partner.example',
    /.*/,
    /^https:\/\//,
    /partner\.example$/,
    ['GET', 'POST'],
    'Content-Type',
    'omit',
    'reject',
    204,
    { senders: ['news@example.com'] },
    honestVerifier,
    { verify: 'not a function' },
    reflectAll,
    partnerOnly,
    () => true,
    () => new Response('error'),
    [1, 2],
    [null],
    [['example.com']],
    { length: 1, 0: 'example.com' },
    Symbol('publishers'),
    Number.NaN,
    -1,
  ),
  fc.string({ maxLength: 8 }),
);
const key = fc.oneof(
  { weight: 6, arbitrary: fc.constantFrom(...ALL_KEYS) },
  { weight: 2, arbitrary: fc.constantFrom(...TYPOS) },
  { weight: 1, arbitrary: fc.string({ minLength: 1, maxLength: 10 }) },
);
const BASES: readonly unknown[] = [
  undefined,
  {},
  { publishers: ['example.com'] },
  { origins: ['https://partner.example'] },
  { verifier: honestVerifier },
  { origin: 'https://partner.example' },
  { origin: true, credentials: false },
  { origin: reflectAll, credentials: false },
];
const options = fc.oneof(
  fc.constantFrom(...BASES),
  fc.tuple(fc.constantFrom(...BASES), fc.dictionary(key, value, { maxKeys: 3 })).map(([base, extra]) => ({ ...(base as object), ...extra })),
  fc.dictionary(key, value, { maxKeys: 4 }),
);

/** What may be wrong with a configuration that an adapter accepted: `undefined` when it may run. */
function acceptedWrongly(adapter: Adapter, given: unknown): string | undefined {
  if (given === undefined) return undefined;
  if (typeof given !== 'object' || given === null) return 'a non-object was accepted';
  const keys = Object.keys(given);
  const unknown = keys.find((name) => !adapter.keys.includes(name));
  if (unknown !== undefined) return `unknown key ${JSON.stringify(unknown)} accepted`;
  const empty = keys.find((name) => (given as Record<string, unknown>)[name] === undefined);
  if (empty !== undefined) return `${empty}: undefined accepted`;
  if (keys.length > 0 && !keys.some((name) => AMP_MODE_KEYS.includes(name) || name === adapter.originKey)) return 'keys that name no mode accepted';
  return undefined;
}

describe.each(ADAPTERS.map((adapter) => [adapter.name, adapter] as const))('configuration fuzz: %s', (_name, adapter) => {
  it('refuses with an AmpCorsError or runs in the mode its keys name; never a foreign origin with credentials', async () => {
    const outcomes = { refused: 0, star: 0, denied: 0, allowed: 0 };
    await fc.assert(
      fc.asyncProperty(options, async (given) => {
        let send: () => Promise<Seen>;
        try {
          send = adapter.build(given);
        } catch (error) {
          expect(isAmpCorsError(error), String(error)).toBe(true);
          outcomes.refused += 1;
          return;
        }
        expect(acceptedWrongly(adapter, given)).toBeUndefined();
        const seen = await send();
        const keys = given === undefined ? [] : Object.keys(given as object);
        // Never credentials with an origin nobody named, nor with *.
        if (seen.acao === EVIL || seen.acao === '*') expect(seen.acac).toBeUndefined();
        if (keys.length === 0) {
          // No options: the literal *, no credentials, the peer's Vary policy (@koa/cors varies every response on Origin, cors none); the verdict does not claim a check.
          expect(seen.acao).toBe('*');
          expect(seen.vary.toLowerCase().includes('origin')).toBe(adapter.name === 'koa');
          expect(seen.reason).toBe('any-origin');
          outcomes.star += 1;
          return;
        }
        if (seen.acao === '*') {
          // Otherwise the literal * only for the drop-in's own origin '*' (the peers' literal *), outside the AMP mode; never with credentials (checked above).
          expect((given as Record<string, unknown>)[adapter.originKey ?? ''], JSON.stringify(keys)).toBe('*');
          expect(keys.some((name) => AMP_MODE_KEYS.includes(name))).toBe(false);
          expect(seen.reason).toBe('any-origin');
          outcomes.star += 1;
          return;
        }
        if (seen.acao === EVIL) outcomes.allowed += 1;
        else outcomes.denied += 1;
        if (seen.acao === EVIL || (seen.reason !== null && seen.reason !== 'unknown-origin' && seen.reason !== 'none')) {
          // The foreign origin got through: only an origin option can have allowed it, and the verdict names how.
          expect(adapter.originKey !== undefined && keys.includes(adapter.originKey), `${JSON.stringify(keys)} allowed ${EVIL}`).toBe(true);
          expect(['any-origin', 'publisher-origin']).toContain(seen.reason);
        }
      }),
      { numRuns: adapter.name === 'fetch' ? 600 : 250 },
    );
    // The generator reaches every outcome, so the property above is tested on each.
    expect(outcomes.refused, JSON.stringify(outcomes)).toBeGreaterThan(0);
    expect(outcomes.star, JSON.stringify(outcomes)).toBeGreaterThan(0);
    expect(outcomes.denied, JSON.stringify(outcomes)).toBeGreaterThan(0);
    if (adapter.originKey !== undefined) expect(outcomes.allowed, JSON.stringify(outcomes)).toBeGreaterThan(0);
  });
});

describe('configuration errors that teach', () => {
  const messageOf = (run: () => unknown): string => {
    try {
      run();
    } catch (error) {
      expect(isAmpCorsError(error), String(error)).toBe(true);
      return (error as Error).message;
    }
    throw new Error('accepted');
  };
  const builders: ReadonlyArray<readonly [string, (options: unknown) => unknown]> = [
    ['express', (o) => expressAmpCors(o as never)],
    ['koa', (o) => koaAmpCors(o as never)],
    ['fetch', (o) => withAmpCors(() => new Response('x'), o as never)],
  ];
  it.each(builders)('%s: a misspelled key names the key meant, and every problem is listed at once', (_name, build) => {
    expect(messageOf(() => build({ publisher: ['example.com'] }))).toMatch(/unknown option `publisher` \(did you mean `publishers`\?\)/);
    const both = messageOf(() => build({ publishers: ['example.com'], credentails: true, methods: 'GET POST' }));
    expect(both).toMatch(/did you mean `credentials`\?/);
    expect(both).toMatch(/methods/);
    expect(both).toMatch(/2 configuration problems/);
  });
  it.each(builders)('%s: publishers: undefined or [] is refused with how to allow nothing or everything on purpose', (_name, build) => {
    for (const publishers of [undefined, []]) {
      const message = messageOf(() => build({ publishers }));
      expect(message).toMatch(/publishers/);
      expect(message).toMatch(/on purpose/);
      expect(message).toMatch(/Access-Control-Allow-Origin: \*/);
    }
  });
  it.each(builders)('%s: a URL or localhost in publishers points to origins', (_name, build) => {
    expect(messageOf(() => build({ publishers: ['http://example.com/'] }))).toMatch(/origins go in `origins`/);
    expect(messageOf(() => build({ publishers: ['localhost'] }))).toMatch(/origins: \["http:\/\/localhost:3000"\]/);
  });
  it("fetch: hono's names point to ampcors's, and withAmpCors(h, undefined) is an AmpCorsError", () => {
    expect(messageOf(() => withAmpCors(() => new Response('x'), { publishers: ['example.com'], allowMethods: ['GET'] } as never))).toMatch(
      /did you mean `methods`\?/,
    );
    expect(messageOf(() => withAmpCors(() => new Response('x'), undefined as never))).toMatch(/needs options/);
    expect(messageOf(() => withAmpCors(undefined as never, { publishers: ['example.com'] }))).toMatch(/handler function/);
  });
  it('express and koa: keys that name no origin source are refused, not a silent mode', () => {
    for (const [, build] of builders.slice(0, 2)) {
      expect(messageOf(() => (build as (o: unknown) => unknown)({ credentials: false }))).toMatch(/name no origin to trust/);
    }
  });
});
