/**
 * Configuration fuzz of @ampcors/fastify (issue #15 through this adapter):
 * random option objects — `@fastify/cors`'s keys and ampcors's, typos,
 * `undefined`, empty lists, reflect-all origins and functions, later hooks —
 * registered on Fastify, then a credentialed POST from a foreign origin.
 * From the attacker's side:
 *
 * - registration either fails with an AmpCorsError (never another error) or
 *   the plugin runs in the mode its keys name: no options (or `origin: '*'`)
 *   is the literal `*` without credentials, an unknown key or a key holding `undefined` is
 *   always refused;
 * - the foreign origin is never allowed with credentials, and is allowed at
 *   all only by `@fastify/cors`'s `origin` option.
 *
 * The key list is this test's own oracle, written from the README.
 */
import { isAmpCorsError } from '@ampcors/core';
import { AMP_CORS_CONFIG_KEYS } from '@ampcors/core/adapter';
import { ampCors, type FastifyAmpCorsOptions } from '@ampcors/fastify';
import fastify from 'fastify';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';

const EVIL = 'https://evil.example';
const KNOWN = [...AMP_CORS_CONFIG_KEYS, 'origin', 'optionsSuccessStatus', 'cacheControl', 'preflight', 'strictPreflight', 'hideOptionsRoute', 'hook'];
const TYPOS = ['orgin', 'publisher', 'credentails', 'allowMethods', 'cacheControll', 'delegator', 'exposeHeaders'];

const values = fc.constantFrom<unknown>(
  undefined,
  true,
  false,
  0,
  600,
  'onRequest',
  'preHandler',
  '*',
  '',
  'https://evil.example',
  'https://app.example',
  'example.com',
  'omit',
  'reject',
  [],
  ['example.com'],
  ['https://app.example'],
  ['*'],
  [/.*/],
  /.*/,
  /evil/,
  /^https:\/\/app\.example$/,
  ['GET', 'POST'],
  'Content-Type',
  ['*'],
  (origin: string | undefined, cb: (e: Error | null, allow?: unknown) => void) => cb(null, origin),
  (_origin: string | undefined, cb: (e: Error | null, allow?: unknown) => void) => cb(null, true),
  async (origin: string | undefined) => origin,
  async () => '*',
  { verify: (origin: string | null | undefined) => ({ allowed: false, origin: origin ?? null, reason: 'unknown-origin', detail: 'fuzz' }) },
  { senders: ['news@example.com'] },
);
const options = fc.dictionary(fc.constantFrom(...KNOWN, ...TYPOS), values, { maxKeys: 4 });

async function attempt(given: Record<string, unknown>): Promise<{ refused: unknown } | { acao: string | undefined; acac: string | undefined; ran: boolean }> {
  const app = fastify({ logger: false });
  let ran = false;
  try {
    await app.register(ampCors, given as FastifyAmpCorsOptions);
    app.post('/api', async () => {
      ran = true;
      return 'done';
    });
    await app.ready();
  } catch (refused) {
    await app.close().catch(() => undefined);
    return { refused };
  }
  const res = await app.inject({ method: 'POST', url: '/api', headers: { origin: EVIL, cookie: 'session=victim', 'sec-fetch-site': 'cross-site' } });
  await app.close();
  const header = (name: string) => (res.headers[name] === undefined ? undefined : String(res.headers[name]));
  return { acao: header('access-control-allow-origin'), acac: header('access-control-allow-credentials'), ran };
}

describe('@ampcors/fastify configuration fuzz', () => {
  it('never allows a foreign origin with credentials; refuses only with AmpCorsError; unknown or undefined keys always refused', async () => {
    await fc.assert(
      fc.asyncProperty(options, async (given) => {
        const keys = Object.keys(given);
        const outcome = await attempt(given);
        if ('refused' in outcome) {
          expect(isAmpCorsError(outcome.refused), String(outcome.refused)).toBe(true);
          return;
        }
        expect(
          keys.some((key) => TYPOS.includes(key)),
          'an unknown key was accepted',
        ).toBe(false);
        expect(
          keys.some((key) => given[key] === undefined),
          'a key holding undefined was accepted',
        ).toBe(false);
        const readable = outcome.acao === EVIL || outcome.acao === '*';
        expect(readable && outcome.acac === 'true', `credentials for ${EVIL}`).toBe(false);
        if (keys.length === 0) expect([outcome.acao, outcome.acac]).toEqual(['*', undefined]);
        // @fastify/cors's literal * for origin: '*' (or an array holding it), never with credentials; no other keys give it.
        else if (!(given.origin === '*' || (Array.isArray(given.origin) && given.origin.includes('*')))) expect(outcome.acao).not.toBe('*');
        if (outcome.acao === EVIL) expect(keys, 'allowed without the drop-in origin option').toContain('origin');
      }),
      { numRuns: 400 },
    );
  }, 120_000);
});
