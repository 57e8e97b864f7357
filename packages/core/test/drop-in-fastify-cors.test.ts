/**
 * The `@fastify/cors` drop-in of core (drop-in-fastify-cors.ts) and the
 * origin-callback bridge it asks through: what `@fastify/cors` users bring
 * (option names, strict preflights, an origin function answering by
 * callback or Promise, Fastify's registration options) never allows an
 * origin the configuration did not name, never leaves a request waiting,
 * and never starts in a mode the keys did not name.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { isAmpCorsError } from '../src/errors.js';
import { askOriginCallback, type CorsDecision, createFastifyCorsPolicy, type FastifyCorsOptions, type FastifyCorsOwnAnswer } from '../src/adapter.js';

const ENTRY = 'ampCors (test)';
const APP = 'https://app.example';
const EVIL = 'https://evil.example';
const SELF = { name: 'the fastify instance' };

type Answer = CorsDecision | FastifyCorsOwnAnswer;

function request(method: string, headers: Record<string, string>, url = '/items') {
  return { method, url, headers };
}

async function decide(options: FastifyCorsOptions<typeof SELF> | undefined, method: string, headers: Record<string, string>, url?: string) {
  return (await createFastifyCorsPolicy(options, SELF, ENTRY).decide(request(method, headers, url))) as Answer;
}

function headerOf(answer: Answer, name: string): string | undefined {
  if (!('plan' in answer)) return undefined;
  return answer.plan.headers.find(([n]) => n.toLowerCase() === name.toLowerCase())?.[1];
}

function refusal(options: unknown): unknown {
  try {
    createFastifyCorsPolicy(options as FastifyCorsOptions<typeof SELF>, SELF, ENTRY);
    return undefined;
  } catch (error) {
    return error;
  }
}

describe('askOriginCallback: a Promise that resolves undefined', () => {
  it('by default is no answer: the callback that follows decides', async () => {
    let late: ((allow: unknown) => void) | undefined;
    const pending = askOriginCallback((cb) => {
      late = (allow) => cb(null, allow);
      return Promise.resolve(undefined);
    });
    await Promise.resolve();
    late?.(false);
    await expect(pending).resolves.toBe(false);
  });

  it('with promiseAnswers is the answer (undefined): a later callback cannot turn it into an allow', async () => {
    let late: (() => void) | undefined;
    const answer = await askOriginCallback(
      (cb) => {
        late = () => cb(null, true);
        return Promise.resolve(undefined);
      },
      { promiseAnswers: true },
    );
    late?.();
    expect(answer).toBeUndefined();
  });

  it('with promiseAnswers, a callback before the Promise settles still wins (async functions that call back)', async () => {
    const answer = await askOriginCallback(
      async (cb) => {
        await Promise.resolve();
        cb(null, APP);
      },
      { promiseAnswers: true },
    );
    expect(answer).toBe(APP);
  });
});

describe('createFastifyCorsPolicy', () => {
  it("strictPreflight: an OPTIONS without Origin or Access-Control-Request-Method is @fastify/cors's 400, with Vary: Origin unless the answer is the literal *", async () => {
    for (const headers of [{ origin: APP }, { 'access-control-request-method': 'PUT' }, {}] as Record<string, string>[]) {
      const answer = await decide({ origin: [APP] }, 'OPTIONS', headers);
      expect(answer).toMatchObject({ status: 400, body: 'Invalid Preflight Request', vary: ['Origin'] });
      expect(await decide(undefined, 'OPTIONS', headers)).toMatchObject({ status: 400, vary: [] });
      // Off, or with preflight: false, the OPTIONS goes to core like any request.
      expect('plan' in (await decide({ origin: [APP], strictPreflight: false }, 'OPTIONS', headers))).toBe(true);
      expect('plan' in (await decide({ origin: [APP], preflight: false }, 'OPTIONS', headers))).toBe(true);
    }
  });

  it('preflight: false reads an OPTIONS as any other request (no Allow-Methods, nothing ended here)', async () => {
    const answer = await decide({ origin: [APP], preflight: false }, 'OPTIONS', { origin: APP, 'access-control-request-method': 'PUT' });
    expect('plan' in answer && answer.plan.handled).toBe(false);
    expect(headerOf(answer, 'access-control-allow-methods')).toBeUndefined();
    const answered = await decide({ origin: [APP] }, 'OPTIONS', { origin: APP, 'access-control-request-method': 'PUT' });
    expect(headerOf(answered, 'access-control-allow-methods')).toBe('GET,HEAD,POST');
  });

  it("Fastify's registration options are set aside; hideOptionsRoute and logLevel are read", () => {
    const cors = createFastifyCorsPolicy(
      { origin: [APP], prefix: '/api', logSerializers: {}, logLevel: 'warn' } as FastifyCorsOptions<typeof SELF>,
      SELF,
      ENTRY,
    );
    expect([cors.hideOptionsRoute, cors.logLevel]).toEqual([true, 'warn']);
    expect(createFastifyCorsPolicy({ origin: [APP], hideOptionsRoute: false }, SELF, ENTRY).hideOptionsRoute).toBe(false);
    // Alone, they are no options: @fastify/cors's default, the literal * without credentials.
    expect(createFastifyCorsPolicy({ logLevel: 'silent', prefix: '/api' } as FastifyCorsOptions<typeof SELF>, SELF, ENTRY).policy.mode).toBe('any-origin');
  });

  it.each([
    ['an options delegator (a function)', () => ({ origin: true, credentials: true }), 'invalid-option'],
    ['an array', [APP], 'invalid-option'],
    ['origin: true with credentials', { origin: true, credentials: true }, 'unsafe-configuration'],
    ['a hook after onRequest', { origin: [APP], hook: 'preHandler' }, 'invalid-option'],
    ['strictPreflight as a string', { origin: [APP], strictPreflight: 'false' }, 'invalid-option'],
    ['both status names', { origin: [APP], preflightStatus: 204, optionsSuccessStatus: 200 }, 'invalid-option'],
    ['a misspelled origin', { orign: [APP] }, 'invalid-option'],
  ] as const)('attacker: refuses %s', (_case, options, code) => {
    const error = refusal(options);
    expect(isAmpCorsError(error), String(error)).toBe(true);
    expect((error as { code: string }).code).toBe(code);
  });

  it("attacker: a route's config.cors is false (no CORS header there), or options checked like the plugin's, never a way around them", async () => {
    const cors = createFastifyCorsPolicy({ origin: [APP], credentials: true }, SELF, ENTRY);
    const get = request('GET', { origin: APP });
    expect(cors.decide(get, { cors: false })).toMatchObject({ status: 0, vary: ['Origin'] });
    expect(headerOf((await cors.decide(get, { cors: { origin: [EVIL] } })) as Answer, 'access-control-allow-origin')).toBeUndefined();
    expect(headerOf((await cors.decide(request('GET', { origin: EVIL }), { cors: { origin: [EVIL] } })) as Answer, 'access-control-allow-credentials')).toBe(
      'true',
    );
    for (const route of [{ origin: true }, { origin: '*' }, { orign: [EVIL] }, 'off', 0, null, [EVIL]]) {
      let outcome: unknown;
      try {
        outcome = await cors.decide(request('GET', { origin: EVIL }), { cors: route });
      } catch (error) {
        outcome = error;
      }
      // Unsafe with the plugin's credentials, misspelled, or not options at all: the route's requests fail (500), never allow.
      expect(isAmpCorsError(outcome), JSON.stringify(route)).toBe(true);
    }
  });

  it('calls an origin function on the instance it was given', async () => {
    const seen: unknown[] = [];
    const answer = await decide(
      {
        origin(this: typeof SELF, origin, cb) {
          seen.push(this);
          cb(null, origin === APP);
        },
      },
      'GET',
      { origin: APP },
    );
    expect(headerOf(answer, 'access-control-allow-origin')).toBe(APP);
    expect(seen.every((self) => self === SELF)).toBe(true);
  });

  /** Every way an origin function can say "no" to `@fastify/cors` (or answer nothing it could read as yes). */
  const NO = fc.constantFrom<unknown>(undefined, false, null, '', 0, [], [EVIL + '.other'], /^https:\/\/app\.example$/);
  /** How it delivers its answer. */
  const HOW = fc.constantFrom('callback now', 'callback later', 'promise', 'promise then callback yes', 'callback then promise yes');

  it('attacker: an origin function that says no, in any form and any way, never allows and never leaves the request waiting', async () => {
    await fc.assert(
      fc.asyncProperty(
        NO,
        HOW,
        fc.boolean(),
        fc.constantFrom(EVIL, 'null', `${APP}.evil.example`, 'https://xn--pple-43d.example'),
        async (no, how, credentials, origin) => {
          const answer = (asked: string | undefined): unknown => (asked === APP ? true : no);
          const fn: FastifyCorsOptions<typeof SELF>['origin'] = (asked, cb) => {
            const reply = answer(asked);
            switch (how) {
              case 'callback now':
                return cb(null, reply as never);
              case 'callback later':
                return void queueMicrotask(() => cb(null, reply as never));
              case 'promise':
                return Promise.resolve(reply as never);
              case 'promise then callback yes':
                // The Promise answers first; a later callback saying yes is too late.
                queueMicrotask(() => queueMicrotask(() => cb(null, true)));
                return Promise.resolve(reply as never);
              case 'callback then promise yes':
                cb(null, reply as never);
                return Promise.resolve(true);
            }
          };
          // A malformed answer ('', 0) is an error, as in @fastify/cors (the adapter answers 500, without CORS headers): never an allow.
          const decided = await decide(
            { origin: fn, credentials },
            'GET',
            { origin, cookie: 'session=1' },
            `/items?__amp_source_origin=${encodeURIComponent(origin)}`,
          ).catch((error: unknown) => error);
          if (!isAmpCorsError(decided)) {
            expect('plan' in (decided as Answer) && (decided as CorsDecision).verdict.allowed).toBe(false);
            expect(headerOf(decided as Answer, 'access-control-allow-origin')).toBeUndefined();
            expect(headerOf(decided as Answer, 'access-control-allow-credentials')).toBeUndefined();
          }
          // The origin it names is still allowed, credentials only when configured.
          const own = await decide({ origin: fn, credentials }, 'GET', { origin: APP });
          expect(headerOf(own, 'access-control-allow-origin')).toBe(APP);
          expect(headerOf(own, 'access-control-allow-credentials')).toBe(credentials ? 'true' : undefined);
        },
      ),
      { numRuns: 150 },
    );
  });
});
