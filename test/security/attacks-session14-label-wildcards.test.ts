// Attacker's view of the drop-ins' look-alike guard (helper-38's fix, 177bc34) with wildcards INSIDE the registrable
// domain rather than before it: a pattern continuing the publisher's label under a shared suffix (Vercel's
// `myapp-*.vercel.app`, the notorious preview-deployment allow-list), a TLD wildcard (`example\.[a-z]+`), a
// second-level ccTLD wildcard (`example\.co\.[a-z]{2}`). Each trusts registrable domains anyone can create (a Vercel project named
// myapp-attacker, example.xyz, example.co.ws) with the users' credentials. The look-alike must never read with
// credentials: the configuration is refused, or the request fails or is denied. Found by helper-42 (session 14).
import { describe, expect, it } from 'vitest';
import { ADAPTERS, attackerReads } from './look-alike-adapters.js';

/** [name, pattern, the publisher origin it was written for, a registrable domain anyone can create that it allows]. */
const WILDCARDS: ReadonlyArray<readonly [string, RegExp, string, string]> = [
  [
    'a label continued under a shared suffix (Vercel)',
    /^https:\/\/myapp-[a-z0-9-]+\.vercel\.app$/,
    'https://myapp-git-main.vercel.app',
    'https://myapp-attacker.vercel.app',
  ],
  [
    'a preview pattern with .* under a shared suffix',
    /^https:\/\/myapp-.*\.vercel\.app$/,
    'https://myapp-git-main.vercel.app',
    'https://myapp-attacker.vercel.app',
  ],
  ['a label continued at its end', /^https:\/\/(www\.)?example[a-z0-9-]*\.com$/, 'https://example.com', 'https://example-attacker.com'],
  ['a TLD wildcard', /^https:\/\/(www\.)?example\.[a-z]+$/, 'https://example.com', 'https://example.xyz'],
  ['a bounded TLD wildcard', /^https:\/\/(www\.)?example\.[a-z]{2,6}$/, 'https://example.com', 'https://example.xyz'],
  ['a digit wildcard in the label', /^https:\/\/shop[0-9]*\.example\.com$|^https:\/\/example[0-9]*\.com$/, 'https://example.com', 'https://example1337.com'],
  [
    'a fixed-length preview hash under a shared suffix',
    /^https:\/\/myapp-[a-z0-9]{9}-team\.vercel\.app$/,
    'https://myapp-abc123xyz-team.vercel.app',
    'https://myapp-attackerx-team.vercel.app',
  ],
  ['a second-level ccTLD wildcard', /^https:\/\/(www\.)?example\.co\.[a-z]{2}$/, 'https://example.co.uk', 'https://example.co.ws'],
];

it('every row is a real hole: the pattern allows the publisher origin and a registrable domain anyone can create', () => {
  for (const [, pattern, own, evil] of WILDCARDS) expect([pattern.test(own), pattern.test(evil)]).toEqual([true, true]);
});

describe.each(ADAPTERS)('attacker, through $name: a wildcard inside the registrable domain, with credentials', (adapter) => {
  const rows = WILDCARDS.flatMap(([name, pattern, own, evil]) => [
    ...(adapter.patterns ? [[`${name} ${String(pattern)} (RegExp)`, pattern, own, evil] as const] : []),
    [`${name} ${String(pattern)} (function)`, adapter.originFunction((o) => pattern.test(o), false), own, evil] as const,
  ]);
  it.each(rows)('%s: the attacker never reads with credentials, whatever came first', async (_name, origin, own, evil) => {
    // The attacker first (a fresh app), then after the publisher's own request (the request-time memo warmed).
    const first = await attackerReads(adapter, origin, evil);
    if (first !== 'refused at construction') expect(first.acao, JSON.stringify(first)).toBeUndefined();
    const publisher = await attackerReads(adapter, origin, own);
    if (publisher !== 'refused at construction') expect(publisher.credentials === 'true' && publisher.acao === own, JSON.stringify(publisher)).toBe(false);
  });
});
