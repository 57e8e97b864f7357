// The verdict-sources example (src/verdict-sources.ts) with each source alone and all combined, in
// process: the in-memory rules, a compiled allow-set file read at start-up, and a registry (an
// in-memory stand-in for Redis that answers after a macrotask, or fails like a Redis that is down).
// From the attacker's side: every row that can allow has a hostile twin.
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { cacheOrigin, compileAllowSet, isAmpCorsError, prefixForms } from '@ampcors/core';
import { allPrefixForms } from '@ampcors/core/algorithms';
import request from 'supertest';
import { afterAll, describe, expect, it } from 'vitest';
import { createApi, type Registry, type SourcesEnv, sourcesFromEnv } from '../src/verdict-sources.js';

const dir = mkdtempSync(join(tmpdir(), 'ampcors-sources-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
const LONG = 'articles.publisher-with-a-very-long-domain-name.example.net';
const SHARED = 'a--b.example';
// What `ampcors compile domains.txt -o publishers.acs` writes for these domains.
const ALLOW_SET = join(dir, 'publishers.acs');
writeFileSync(ALLOW_SET, compileAllowSet(['set.example', LONG, SHARED]));
const CLAIMED = `https://${allPrefixForms(SHARED).find((form) => !prefixForms(SHARED).some((kept) => kept.prefix === form.prefix))?.prefix}.cdn.ampproject.org`;
const EVIL = cacheOrigin('evil.example');
const PAGES = 'https://www.set.example';

/** The registry as @ampcors/redis keeps it (every accepted prefix form → domain), answering after a macrotask. */
function registry(domains: readonly string[], down = false): Registry {
  const prefixes = new Map(domains.flatMap((domain) => prefixForms(domain).map(({ prefix }) => [prefix, domain] as const)));
  const later = <T>(value: T) => new Promise<T>((resolve, reject) => setTimeout(() => (down ? reject(new Error('ECONNREFUSED')) : resolve(value)), 1));
  let closed = 0;
  return {
    publisherOfPrefix: (prefix) => later(prefixes.get(prefix)),
    hasPublisher: (domain) => later(domains.includes(domain)),
    close: async () => {
      closed += 1;
    },
    get closed() {
      return closed;
    },
  } as Registry;
}

async function ask(env: SourcesEnv, origin: string, method: 'get' | 'post' = 'get', down = false) {
  const { options } = sourcesFromEnv(env, () => registry(['registry.example'], down));
  const res = await request(createApi(options))
    [method](method === 'get' ? '/api/items' : '/api/subscribe')
    .set('Origin', origin);
  return { status: res.status, acao: res.headers['access-control-allow-origin'], acac: res.headers['access-control-allow-credentials'], text: res.text };
}

const allowed = (origin: string) => ({ status: 200, acao: origin, acac: 'true' });
const denied = { status: 403, acao: undefined, acac: undefined };

describe('examples/express verdict sources', () => {
  it('in-memory rules alone (PUBLISHERS)', async () => {
    expect(await ask({ PUBLISHERS: 'example.com' }, cacheOrigin('example.com'))).toMatchObject(allowed(cacheOrigin('example.com')));
    expect(await ask({ PUBLISHERS: 'example.com' }, EVIL)).toMatchObject(denied);
  });
  it("a compiled allow-set read at start-up, the publisher's pages beside it (ALLOW_SET + ORIGINS)", async () => {
    const env = { ALLOW_SET, ORIGINS: PAGES };
    expect(await ask(env, cacheOrigin('set.example'))).toMatchObject(allowed(cacheOrigin('set.example')));
    expect(await ask(env, cacheOrigin(LONG), 'post')).toMatchObject(allowed(cacheOrigin(LONG)));
    expect(await ask(env, PAGES)).toMatchObject(allowed(PAGES));
    // Attacker's side: a prefix another reading claims, a foreign domain, the bare domain not listed in ORIGINS.
    expect(await ask(env, CLAIMED, 'post')).toMatchObject({ ...denied, text: expect.stringContaining('unknown-publisher') });
    expect(await ask(env, EVIL, 'post')).toMatchObject(denied);
    expect(await ask(env, 'https://set.example')).toMatchObject(denied);
  });
  it('an allow-set alone, or no source at all, is refused at start-up with how to fix it', () => {
    expect(() => createApi(sourcesFromEnv({ ALLOW_SET }).options)).toThrow(/allowSet holds only cache origins/);
    try {
      createApi(sourcesFromEnv({ ALLOW_SET }).options);
    } catch (error) {
      expect(isAmpCorsError(error)).toBe(true);
    }
    expect(() => sourcesFromEnv({})).toThrow(/set PUBLISHERS, ORIGINS, ALLOW_SET or REDIS_URL/);
  });
  it('a corrupt allow-set file is refused at start-up', () => {
    const corrupt = join(dir, 'corrupt.acs');
    writeFileSync(corrupt, 'example.com\n');
    expect(() => createApi(sourcesFromEnv({ ALLOW_SET: corrupt, ORIGINS: PAGES }).options)).toThrow(/allowSet: Invalid allow-set/);
  });
  it('the registry alone (REDIS_URL), up and down', async () => {
    const env = { REDIS_URL: 'redis://127.0.0.1:6379' };
    expect(await ask(env, cacheOrigin('registry.example'), 'post')).toMatchObject(allowed(cacheOrigin('registry.example')));
    expect(await ask(env, EVIL, 'post')).toMatchObject(denied);
    expect(await ask(env, cacheOrigin('registry.example'), 'post', true)).toMatchObject({ ...denied, text: expect.stringContaining('source-unavailable') });
  });
  it('every source combined: each allows its own; a registry down holds up none of the others', async () => {
    const env = { PUBLISHERS: 'example.com', ORIGINS: PAGES, ALLOW_SET, REDIS_URL: 'redis://127.0.0.1:6379' };
    for (const down of [false, true]) {
      expect(await ask(env, cacheOrigin('example.com'), 'get', down)).toMatchObject(allowed(cacheOrigin('example.com')));
      expect(await ask(env, PAGES, 'get', down)).toMatchObject(allowed(PAGES));
      expect(await ask(env, cacheOrigin(LONG), 'get', down)).toMatchObject(allowed(cacheOrigin(LONG)));
      expect(await ask(env, CLAIMED, 'post', down)).toMatchObject(denied);
      expect(await ask(env, EVIL, 'post', down)).toMatchObject(denied);
    }
    expect(await ask(env, cacheOrigin('registry.example'))).toMatchObject(allowed(cacheOrigin('registry.example')));
    expect(await ask(env, cacheOrigin('registry.example'), 'get', true)).toMatchObject(denied);
  });
  it('closes the registry it opened', async () => {
    const opened = registry([]);
    const sources = sourcesFromEnv({ REDIS_URL: 'redis://x' }, () => opened);
    await sources.close();
    expect((opened as unknown as { closed: number }).closed).toBe(1);
    await sourcesFromEnv({ PUBLISHERS: 'example.com' }).close();
  });
});
