/**
 * The "Verdict sources" recipes of every adapter's README, run as written:
 * each options object of the recipe block is read out of the README,
 * evaluated with the recipe's own names (`readFileSync` gives a compiled
 * allow-set's bytes, `registry` a registry that answers like Redis after a
 * macrotask) and run through that adapter's harnesses, from both sides: the
 * origins the recipe's sources hold are allowed with credentials, a foreign
 * cache origin is denied before the handler.
 */
import { readFileSync as readFile } from 'node:fs';
import { cacheOrigin, compileAllowSet, createAsyncVerifier, type PublisherSource, prefixForms } from '@ampcors/core';
import { describe, expect, it } from 'vitest';
import { type AdapterOptions, HARNESSES } from './harnesses.js';

const LONG = 'articles.publisher-with-a-very-long-domain-name.example.net';
/** What `readFileSync('publishers.acs')` reads in the recipes: a compiled set of two domains. */
const SET_BYTES = compileAllowSet(['set.example', LONG]);
const REGISTERED = 'registry.example';

const registry: PublisherSource = {
  publisherOfPrefix: (prefix) =>
    new Promise((resolve) => setTimeout(() => resolve(prefixForms(REGISTERED).some((form) => form.prefix === prefix) ? REGISTERED : undefined), 1)),
  hasPublisher: (domain) => new Promise((resolve) => setTimeout(() => resolve(domain === REGISTERED), 1)),
};

/** The code block of a README's "Verdict sources" section. */
function recipeBlock(adapter: string): string {
  const readme = readFile(new URL(`../../packages/${adapter}/README.md`, import.meta.url), 'utf8');
  const section = readme.split(/^## Verdict sources$/m)[1];
  if (section === undefined) throw new Error(`packages/${adapter}/README.md has no "## Verdict sources" section`);
  const block = /```ts\n([\s\S]*?)```/.exec(section)?.[1];
  if (block === undefined) throw new Error(`packages/${adapter}/README.md: no ts block under "Verdict sources"`);
  return block;
}

/** Every options object the block gives to the adapter (the balanced `{…}` after each call's opening). */
function optionObjects(block: string): string[] {
  const found: string[] = [];
  for (const call of block.matchAll(/(?:ampCors\(|register\(ampCors, |withAmpCors\(handler, )\{/g)) {
    const start = (call.index ?? 0) + call[0].length - 1;
    let depth = 0;
    for (let i = start; i < block.length; i++) {
      if (block[i] === '{') depth += 1;
      else if (block[i] === '}' && --depth === 0) {
        found.push(block.slice(start, i + 1));
        break;
      }
    }
  }
  return found;
}

/** Evaluates an options object with the names the recipe imports or declares. */
function evaluate(source: string): AdapterOptions {
  const names = { readFileSync: (path: string) => (path === 'publishers.acs' ? SET_BYTES : undefined), createAsyncVerifier, registry };
  return new Function(...Object.keys(names), `return (${source});`)(...Object.values(names)) as AdapterOptions;
}

/** The origins each recipe's sources hold (a recipe's object names which sources it uses). */
function heldOrigins(options: AdapterOptions): string[] {
  const held: string[] = [];
  if (options.publishers?.includes('example.com')) held.push(cacheOrigin('example.com'), 'https://example.com');
  if (options.origins?.includes('https://www.example.com')) held.push('https://www.example.com');
  if (options.allowSet !== undefined) held.push(cacheOrigin('set.example'), cacheOrigin(LONG));
  if (options.verifier !== undefined) held.push(cacheOrigin(REGISTERED));
  return held;
}

const ADAPTERS = ['express', 'koa', 'fetch', 'hono', 'fastify'] as const;

describe.each(ADAPTERS)('the Verdict sources recipes of packages/%s/README.md', (adapter) => {
  const recipes = optionObjects(recipeBlock(adapter));
  const harnesses = HARNESSES.filter((harness) => harness.name.startsWith(adapter));

  it('show each source alone and all combined', () => {
    expect(harnesses.length).toBeGreaterThan(0);
    const kinds = recipes.map((recipe) => {
      const options = evaluate(recipe);
      return ['publishers', 'allowSet', 'verifier'].filter((key) => Object.hasOwn(options, key)).join('+');
    });
    expect(kinds).toEqual(['publishers', 'allowSet', 'verifier', 'publishers+allowSet+verifier']);
  });

  it.each(harnesses.map((harness) => [harness.name, harness] as const))(
    'run through %s: what they hold is allowed, a foreign origin is not',
    async (_name, harness) => {
      for (const recipe of recipes) {
        const options = evaluate(recipe);
        for (const origin of heldOrigins(options)) {
          const got = await harness.run(options, { method: 'GET', path: '/api/items', headers: { Origin: origin } });
          expect([got.status, got.headers['access-control-allow-origin'], got.headers['access-control-allow-credentials']], `${recipe} ${origin}`).toEqual([
            200,
            origin,
            'true',
          ]);
        }
        const evil = await harness.run(options, { method: 'POST', path: '/api/subscribe', headers: { Origin: cacheOrigin('evil.example') } });
        expect([evil.status, evil.headers['access-control-allow-origin'], evil.handlerRuns], recipe).toEqual([403, undefined, 0]);
      }
    },
  );
});
