// Attacker's review, session 16 (attack-dropin3; fixed by helper fix-gflag): with credentials, an origin function
// (Express, Koa, Hono, Fastify) or an Express options delegate testing a loose RegExp it holds with the `g` or `y` flag
// (`const re = /^https:\/\/example\.[a-z]{2,6}$/g; o => re.test(o)`). `test()` starts at `lastIndex`, which a match
// leaves at its end, so the call right after a "yes" answers "no" (and resets it). The guard asked each same-shape
// look-alike's confirmation (and each IPv4 canary's) right after the look-alike was allowed, so those never counted:
// `https://example.xyz`, `https://myapp-attackerx-team.vercel.app` and any page at an IP address read credentialed
// responses. The same pattern without the flag, or as a static `origin` RegExp (cloned without g/y), was refused.
// Now a guard question answered "no" right after a "yes" (the first one, after the allowed origin's own; a
// confirmation, after its look-alike) is asked once more (legacy-origin-option.ts `askedInTurn`): the function is
// judged as the pattern reads, so it is refused exactly when the same function without the flag is.
import { isAmpCorsError, type Verdict } from '@ampcors/core';
import { createCorsPolicy } from '@ampcors/core/adapter';
import { ampCors } from '@ampcors/express';
import express from 'express';
import fc from 'fast-check';
import request from 'supertest';
import { describe, expect, it } from 'vitest';
import { ADAPTERS, type Adapter, attackerReads } from './look-alike-adapters.js';

/** [name, pattern source, an origin its author meant, a look-alike anyone can register that it allows]. */
const ROWS: ReadonlyArray<readonly [string, string, string, string]> = [
  ['a wildcard TLD', '^https:\\/\\/example\\.[a-z]{2,6}$', 'https://example.com', 'https://example.xyz'],
  [
    'preview deployments of fixed length',
    '^https:\\/\\/myapp-[a-z0-9]{9}-team\\.vercel\\.app$',
    'https://myapp-abc123xyz-team.vercel.app',
    'https://myapp-attackerx-team.vercel.app',
  ],
  ['a LAN range', '^http:\\/\\/192\\.168\\.1\\.\\d{1,3}$', 'http://192.168.1.20', 'http://192.168.1.66'],
];

/** Whether what the attacker's page read carries credentials for its own origin. */
const credentialedFor = (seen: Awaited<ReturnType<typeof attackerReads>>, origin: string) =>
  seen !== 'refused at construction' && seen.credentials === 'true' && seen.acao === origin;

describe.each(ADAPTERS)('the attacker rows through $name', (adapter) => {
  for (const [name, source, own, evil] of ROWS) {
    for (const flags of ['', 'g', 'y', 'gi']) {
      for (const async of [false, true]) {
        it(`${name} /${source}/${flags} ${async ? 'async' : 'sync'}: the look-alike reads nothing`, async () => {
          const re = new RegExp(source, flags);
          expect(new RegExp(source).test(evil)).toBe(true);
          const fn = adapter.originFunction((o) => re.test(o), async);
          await attackerReads(adapter, fn, own);
          expect(credentialedFor(await attackerReads(adapter, fn, evil), evil)).toBe(false);
        });
      }
    }
  }

  it.each(['', 'g', 'y'])('every IPv4 address /^https?:\\/\\/\\d+\\.\\d+\\.\\d+\\.\\d+$/%s: a VM at an IP address reads nothing', async (flags) => {
    const re = new RegExp('^https?:\\/\\/\\d+\\.\\d+\\.\\d+\\.\\d+$', flags);
    const fn = adapter.originFunction((o) => re.test(o), false);
    await attackerReads(adapter, fn, 'http://192.168.1.20');
    expect(credentialedFor(await attackerReads(adapter, fn, 'https://45.33.32.156'), 'https://45.33.32.156')).toBe(false);
    // Refused at construction, as without the flag: the IPv4 canary's confirmation is asked again after its "no".
    expect(await attackerReads(adapter, fn, 'https://45.33.32.156')).toBe('refused at construction');
  });

  it.each(['g', 'y'])('an exact origin tested with /%s keeps working, request after request (no false alarm)', async (flags) => {
    const re = new RegExp('^https:\\/\\/(www\\.)?example\\.com$', flags);
    const fn = adapter.originFunction((o) => re.test(o), false);
    for (const origin of ['https://example.com', 'https://www.example.com', 'https://example.com']) {
      expect(credentialedFor(await attackerReads(adapter, fn, origin), origin), origin).toBe(true);
    }
    expect(credentialedFor(await attackerReads(adapter, fn, 'https://example.xyz'), 'https://example.xyz')).toBe(false);
  });
});

/** An Express app whose options delegate tests the request's Origin with `re`, with credentials (answering at once, or in a microtask). */
function delegateApp(re: RegExp, later = false) {
  const app = express();
  app.use(
    ampCors((req, cb) => {
      const origin = req.headers.origin;
      const answer = () => cb(null, { origin: typeof origin === 'string' && re.test(origin) ? origin : false, credentials: true });
      if (later) void Promise.resolve().then(answer);
      else answer();
    }),
  );
  app.get('/api', (_req, res) => void res.json({ secret: 1 }));
  app.use((_error: unknown, _req: unknown, res: express.Response, _next: unknown) => void res.status(500).end());
  return app;
}

describe('the same through an Express options delegate', () => {
  for (const [name, source, own, evil] of ROWS) {
    it.each([
      ['', false],
      ['g', false],
      ['y', false],
      ['g', true],
    ])(`${name} /${source}/%s (answering later: %s): the look-alike reads nothing`, async (flags, later) => {
      const app = delegateApp(new RegExp(source, flags), later);
      const mine = await request(app).get('/api').set('Origin', own);
      // The delegate's first credentialed allow is checked: the look-alike is found and the request fails.
      expect(mine.headers['access-control-allow-credentials']).toBeUndefined();
      for (const origin of [evil, own]) {
        const res = await request(app).get('/api').set('Origin', origin);
        expect(res.headers['access-control-allow-credentials'] === 'true' && res.headers['access-control-allow-origin'] === origin).toBe(false);
      }
    });
  }

  it.each([
    ['g', false],
    ['y', false],
    ['g', true],
  ])('an exact origin tested with /%s (answering later: %s) keeps working (no false alarm)', async (flags, later) => {
    const app = delegateApp(new RegExp('^https:\\/\\/(www\\.)?example\\.com$', flags), later);
    for (const origin of ['https://example.com', 'https://www.example.com', 'https://example.com']) {
      const res = await request(app).get('/api').set('Origin', origin);
      expect([res.status, res.headers['access-control-allow-origin'], res.headers['access-control-allow-credentials']]).toEqual([200, origin, 'true']);
    }
  });
});

// ---------------------------------------------------------------------------
// By property: a function holding a RegExp with g or y is judged as the same function without the flag.

/** Patterns written for some origins: strict ones (accepted) and loose ones (refused), with origins to ask about. */
const PATTERNS: readonly string[] = [
  '^https:\\/\\/example\\.com$',
  '^https:\\/\\/(www\\.)?example\\.com$',
  '^https:\\/\\/[a-z0-9-]+\\.example\\.com$',
  '^https:\\/\\/(shop1|shop7)\\.com$',
  '^http:\\/\\/(192\\.168\\.1\\.20|127\\.0\\.0\\.1:3000)$',
  'example\\.com$',
  '^https:\\/\\/example\\.com',
  '^https:\\/\\/www.example.com$',
  '^https:\\/\\/example\\.[a-z]{2,6}$',
  '^https:\\/\\/shop[0-9]\\.com$',
  '^https:\\/\\/(shop1|shop7)\\.[a-z]{2,4}$',
  '^https:\\/\\/myapp-[a-z0-9]{9}-team\\.vercel\\.app$',
  '^https?:\\/\\/\\d+\\.\\d+\\.\\d+\\.\\d+$',
  '^http:\\/\\/192\\.168\\.1\\.\\d{1,3}$',
  '^https:\\/\\/\\[fd[0-9a-f]{2}:[0-9a-f:]*\\]$',
];
const ORIGINS: readonly string[] = [
  'https://example.com',
  'https://www.example.com',
  'https://api.example.com',
  'https://evilexample.com',
  'https://example.com.evil.net',
  'https://wwwxexample.com',
  'https://example.xyz',
  'https://shop1.com',
  'https://shop7.com',
  'https://shop4.com',
  'https://shop1.net',
  'https://myapp-abc123xyz-team.vercel.app',
  'https://myapp-attackerx-team.vercel.app',
  'http://192.168.1.20',
  'http://192.168.1.66',
  'http://127.0.0.1:3000',
  'https://45.33.32.156',
  'https://[fd12::1]',
  'https://[fd34::]',
];
const FLAGS = ['g', 'y', 'gy', 'gi'] as const;
/** How the function answers: synchronously, from an async function (its body runs at once), or in a microtask (Express's `cb` later). */
const MODES = ['sync', 'async', 'deferred'] as const;
type Mode = (typeof MODES)[number];

type Outcome = 'refused at construction' | 'credentials' | 'refused' | 'denied' | 'other';

/**
 * The pattern as a function holds it (one RegExp object, its `lastIndex` kept between calls), or `fresh`: a new
 * RegExp of the same source and flags for each call, the same reading without the state (for `y`, a match at the
 * start only, as `^` reads; for `g`, the pattern without the flag).
 */
const tester = (source: string, flags: string, fresh: boolean): ((origin: string) => boolean) => {
  const held = new RegExp(source, flags);
  return fresh ? (origin) => new RegExp(source, flags).test(origin) : (origin) => held.test(origin);
};

/** The core guard (as every adapter builds it) over a function testing `allows`, asked about each origin in turn: what each request got. */
async function throughCore(allows: (origin: string) => boolean, mode: Mode, origins: readonly string[]): Promise<Outcome[]> {
  const test = (origin: string) => (allows(origin) ? origin : false);
  const ask =
    mode === 'sync' ? test : mode === 'async' ? async (origin: string) => test(origin) : (origin: string) => Promise.resolve().then(() => test(origin));
  const failure = (error: unknown): Outcome => (isAmpCorsError(error) && error.code === 'unsafe-configuration' ? 'refused' : 'other');
  let source: ReturnType<ReturnType<typeof createCorsPolicy>['guardOriginFunction']>;
  try {
    source = createCorsPolicy({}, true).guardOriginFunction(ask, true);
  } catch (error) {
    return [failure(error) === 'refused' ? 'refused at construction' : 'other'];
  }
  // Late construction answers (an asynchronous function's) arrive before the first request.
  await new Promise((resolve) => setTimeout(resolve, 0));
  const outcomes: Outcome[] = [];
  for (const origin of origins) {
    try {
      const verdict: Verdict = await source().verify(origin);
      outcomes.push(verdict.allowed && verdict.origin === origin ? 'credentials' : 'denied');
    } catch (error) {
      outcomes.push(failure(error));
    }
  }
  return outcomes;
}

/**
 * Flagged against plain: equal request by request until the plain function was first refused; after that, the
 * flagged one never gives credentials the plain one did not (the call right after a refusal's "yes" is the user's own
 * g-flag bug, as with the `cors` package: it may deny the next request, never allow one).
 */
function expectJudgedAlike(flagged: readonly Outcome[], plain: readonly Outcome[], label: string) {
  const firstRefusal = plain.findIndex((outcome) => outcome !== 'credentials' && outcome !== 'denied');
  const until = firstRefusal < 0 ? plain.length : firstRefusal + 1;
  expect(flagged.slice(0, until), label).toEqual(plain.slice(0, until));
  for (let i = until; i < plain.length; i++) if (flagged[i] === 'credentials') expect(plain[i], `${label} #${i}`).toBe('credentials');
}

describe('by property: a function holding a RegExp with g or y is refused exactly when the same function without its state is', () => {
  it('through the core guard, for sequences of requests, synchronous and asynchronous functions', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.constantFrom(...PATTERNS),
        fc.constantFrom(...FLAGS),
        fc.constantFrom(...MODES),
        fc.array(fc.constantFrom(...ORIGINS), { minLength: 1, maxLength: 4 }),
        async (source, flags, mode, origins) => {
          const plain = await throughCore(tester(source, flags, true), mode, origins);
          const flagged = await throughCore(tester(source, flags, false), mode, origins);
          expectJudgedAlike(flagged, plain, `/${source}/${flags} ${mode} ${origins.join(' ')}`);
        },
      ),
      { numRuns: 300 },
    );
  });

  it('the properties cover both sides: strict patterns give credentials, loose ones are refused', async () => {
    const seen = new Set<Outcome>();
    for (const source of PATTERNS)
      for (const origin of ORIGINS) for (const outcome of await throughCore(tester(source, 'g', false), 'sync', [origin])) seen.add(outcome);
    expect([...seen].sort()).toEqual(['credentials', 'denied', 'refused', 'refused at construction']);
  });

  /** What one request through an adapter got. */
  async function throughAdapter(adapter: Adapter, allows: (origin: string) => boolean, async: boolean, from: string): Promise<Outcome> {
    const seen = await attackerReads(adapter, adapter.originFunction(allows, async), from);
    if (seen === 'refused at construction') return seen;
    if (credentialedFor(seen, from)) return 'credentials';
    return seen.status === 500 ? 'refused' : seen.acao === undefined ? 'denied' : 'other';
  }

  it.each(ADAPTERS)('through $name, one request per function', async (adapter) => {
    await fc.assert(
      fc.asyncProperty(
        fc.constantFrom(...PATTERNS),
        fc.constantFrom(...FLAGS),
        fc.boolean(),
        fc.constantFrom(...ORIGINS),
        async (source, flags, async, from) => {
          const plain = await throughAdapter(adapter, tester(source, flags, true), async, from);
          expect(plain).not.toBe('other');
          expect(await throughAdapter(adapter, tester(source, flags, false), async, from), `/${source}/${flags} ${async} ${from}`).toBe(plain);
        },
      ),
      { numRuns: 40 },
    );
  });
});
