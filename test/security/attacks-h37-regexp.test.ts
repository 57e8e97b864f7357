// Attacker's view of the drop-ins' guard against options that allow origins nobody named (issue 14 item 3), with the
// classic allow-list mistakes of CORS configurations: a suffix match without its dot (`cors`'s own README example,
// /example\.com$/), an unescaped dot, a prefix match without an end anchor, and the same as origin functions
// (endsWith, startsWith). Each trusts a host anyone can register (evilexample.com, wwwxexample.com,
// example.com.evil.net) with the users' credentials. The attacker's look-alike must never read with credentials:
// the configuration is refused, or the request fails or is denied. One table, through every drop-in: Express (`cors`),
// Koa (`@koa/cors`), Hono (`hono/cors`) and Fastify (`@fastify/cors`), each with the option shapes it accepts.
// Found by helper-37's independent attack; the core-level suite is packages/core/test/security/origin-lookalikes.test.ts.
import { describe, expect, it } from 'vitest';
import { ADAPTERS, attackerReads, type Seen } from './look-alike-adapters.js';

/**
 * [name, a RegExp (or null: a function only), the test as a function, the publisher origin it was written for, a
 * look-alike anyone can register that it allows].
 */
const LOOSE: ReadonlyArray<readonly [string, RegExp | null, (origin: string) => boolean, string, string]> = [
  ["cors's README pattern /example\\.com$/", /example\.com$/, (o) => /example\.com$/.test(o), 'https://example.com', 'https://evilexample.com'],
  [
    'no end anchor /^https:\\/\\/example\\.com/',
    /^https:\/\/example\.com/,
    (o) => /^https:\/\/example\.com/.test(o),
    'https://example.com',
    'https://example.com.evil.net',
  ],
  ["endsWith('example.com')", null, (o) => o.endsWith('example.com'), 'https://example.com', 'https://evilexample.com'],
  ["startsWith('https://example.com')", null, (o) => o.startsWith('https://example.com'), 'https://example.com', 'https://example.com.evil.net'],
  ["includes('example.com')", null, (o) => o.includes('example.com'), 'https://www.example.com', 'https://www.example.com.evil.net'],
  [
    'a wildcard over a shared suffix /^https:\\/\\/[a-z0-9-]+\\.github\\.io$/',
    /^https:\/\/[a-z0-9-]+\.github\.io$/,
    (o) => /^https:\/\/[a-z0-9-]+\.github\.io$/.test(o),
    'https://me.github.io',
    'https://attacker.github.io',
  ],
];

/** Patterns only (an unescaped dot: a function is caught once the publisher's own origin shows it, see the core suite). */
const LOOSE_PATTERNS: ReadonlyArray<readonly [string, RegExp, string, string]> = [
  ['an unescaped dot /^https:\\/\\/www.example.com$/', /^https:\/\/www.example.com$/, 'https://www.example.com', 'https://wwwxexample.com'],
  ['an unescaped dot in an alternation', /^https:\/\/(app|api).example\.com$/, 'https://app.example.com', 'https://appxexample.com'],
  ['no end anchor after an alternation', /^https:\/\/(app|api)\.example\.com/, 'https://app.example.com', 'https://app.example.com.evil.net'],
];

function neverReadable(seen: Seen | 'refused at construction', evil: string) {
  if (seen === 'refused at construction') return;
  expect(seen.acao === evil && seen.credentials === 'true', JSON.stringify(seen)).toBe(false);
  // A failed request carries no CORS header at all.
  expect(seen.acao, JSON.stringify(seen)).toBeUndefined();
}

it('every hole of the tables is real: the option allows the publisher origin and the look-alike alike', () => {
  for (const [, pattern, allows, own, evil] of LOOSE) {
    expect([allows(own), allows(evil), pattern === null || (pattern.test(own) && pattern.test(evil))]).toEqual([true, true, true]);
  }
  for (const [, pattern, own, evil] of LOOSE_PATTERNS) expect([pattern.test(own), pattern.test(evil)]).toEqual([true, true]);
});

describe.each(ADAPTERS)('attacker, through $name: an origin option that also trusts registrable look-alikes, with credentials', (adapter) => {
  const rows = LOOSE.flatMap(([name, pattern, allows, own, evil]) => [
    ...(pattern !== null && adapter.patterns ? [[`${name} (RegExp)`, pattern, own, evil] as const] : []),
    [`${name} (function)`, adapter.originFunction(allows, false), own, evil] as const,
    [`${name} (async function)`, adapter.originFunction(allows, true), own, evil] as const,
  ]);
  const patternRows = adapter.patterns ? LOOSE_PATTERNS.map(([name, pattern, own, evil]) => [name, pattern, own, evil] as const) : [];

  it.each([...rows, ...patternRows])('%s: the look-alike never reads with credentials, nor does the publisher', async (_name, origin, own, evil) => {
    neverReadable(await attackerReads(adapter, origin, evil), evil);
    // The option is unsafe for the publisher's origin too: refused, or the request fails (no credentialed answer).
    const publisher = await attackerReads(adapter, origin, own);
    if (publisher !== 'refused at construction') expect(publisher.credentials === 'true' && publisher.acao === own, JSON.stringify(publisher)).toBe(false);
  });

  it('a tightly written option keeps working: the publisher origins read, look-alikes do not', async () => {
    const tight = /^https:\/\/([a-z0-9-]+\.)*example\.com$/;
    const options = [
      ...(adapter.patterns ? [tight] : []),
      adapter.originFunction((o) => tight.test(o), false),
      adapter.originFunction((o) => o === 'https://example.com' || o.endsWith('.example.com'), true),
    ];
    for (const origin of options) {
      for (const own of ['https://example.com', 'https://www.example.com', 'https://a.b.example.com'])
        expect(await adapter.reads(origin, own)).toEqual({ status: 200, acao: own, credentials: 'true' });
      for (const evil of ['https://evilexample.com', 'https://example.com.evil.net', 'https://wwwxexample.com'])
        expect((await adapter.reads(origin, evil)).acao).toBeUndefined();
    }
  });
});
