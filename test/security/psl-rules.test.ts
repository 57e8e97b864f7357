// Wildcard rules over other people's subtrees (issue 14 item 2, SPEC §5: "an
// allow rule never covers a public suffix, nor has one at or below its
// base"). From the attacker's side: anyone can create `attacker-bucket` under
// `s3.amazonaws.com`, a Fastly service under `global.ssl.fastly.net`, an ad
// iframe under `ampproject.net`; a publisher who writes `*.amazonaws.com`,
// `*.fastly.net` or `*.ampproject.net` must be refused at construction, by
// core and by every adapter, with an error that says which suffix is at fault.
import { AmpCorsError, cacheOrigin, CACHES, createVerifier } from '@ampcors/core';
import { parsePublisherRules } from '@ampcors/core/algorithms';
import { ampCors as expressAmpCors } from '@ampcors/express';
import { createAmpCors } from '@ampcors/fetch';
import { ampCors as koaAmpCors } from '@ampcors/koa';
import fc from 'fast-check';
import { beforeAll, describe, expect, it } from 'vitest';
import { type PslRule, pslRules } from '../../packages/core/scripts/psl-ancestors.js';

let rules: PslRule[];
let names: Set<string>;
beforeAll(async () => {
  // The installed tldts's list, read from its trie; packages/core/test/
  // publisher-rules-psl.test.ts checks every rule against tldts's public API.
  rules = await pslRules();
  names = new Set(rules.map((r) => r.name));
});

/** The rule without its `*.` (the name every match lies under, or is). */
const baseOf = (rule: string): string => rule.replace(/^\*\./, '');
/** Every proper ancestor of `domain`: `a.b.c` → `b.c`, `c`. */
const ancestorsOf = (domain: string): string[] =>
  domain
    .split('.')
    .map((_, i, labels) => labels.slice(i).join('.'))
    .slice(1);
/**
 * A registrable domain below the suffix, `label` its own label: `*` labels, of
 * this rule or of `*.` rules right under it, instantiated.
 */
const registrableUnder = (rule: string, label: string): string => {
  let suffix = rule.replace(/^\*(?=\.)/, 'zq9k');
  while (names.has(`*.${suffix}`)) suffix = `zq9k.${suffix}`;
  return `${label}.${suffix}`;
};

const HOSTILE: Array<[rule: string, victimOfAttacker: string]> = [
  ['*.amazonaws.com', 'attacker-bucket.s3.amazonaws.com'],
  ['*.s3.eu-west-3.amazonaws.com', 'attacker-bucket.s3.eu-west-3.amazonaws.com'],
  ['*.fastly.net', 'attacker.global.ssl.fastly.net'],
  ['*.ssl.fastly.net', 'attacker.global.ssl.fastly.net'],
  ['*.ampproject.net', 'd-1234567890.ampproject.net'],
  ['ampproject.net', 'ampproject.net'],
  ['*.bing-amp.net', 'x.www.bing-amp.net'],
];

describe('hostile rules are refused where they are written', () => {
  it.each(HOSTILE)('%s (which would allow %s) is refused by core, with the entry quoted', (rule) => {
    let error: unknown;
    try {
      createVerifier({ publishers: ['example.com', rule] });
    } catch (caught) {
      error = caught;
    }
    expect(error).toBeInstanceOf(AmpCorsError);
    expect((error as AmpCorsError).code).toMatch(/^(public-suffix-rule|publisher-covers-cache)$/);
    expect((error as AmpCorsError).message).toContain(JSON.stringify(rule));
  });
  it.each(HOSTILE)('%s is refused by every adapter at construction', (rule) => {
    const options = { publishers: [rule], origins: ['https://example.com'] };
    expect(() => expressAmpCors(options), 'express').toThrow(AmpCorsError);
    expect(() => koaAmpCors(options), 'koa').toThrow(AmpCorsError);
    expect(() => createAmpCors(options), 'fetch').toThrow(AmpCorsError);
  });
  it('the error names the public suffix under the base and its section', () => {
    expect(() => parsePublisherRules(['*.amazonaws.com'], CACHES)).toThrow(
      /the public suffix s3\.amazonaws\.com \(Public Suffix List, private section\) lies under amazonaws\.com/,
    );
    expect(() => parsePublisherRules(['*.fastly.net'], CACHES)).toThrow(
      /the public suffix [a-z0-9.-]+\.fastly\.net \(Public Suffix List, private section\) lies under fastly\.net/,
    );
  });
  it("a rule on the publisher's own subtree below those suffixes keeps working, and still denies the attacker", () => {
    const verifier = createVerifier({ publishers: ['*.my-site.s3.amazonaws.com', '*.my-site.global.ssl.fastly.net'] });
    expect(verifier.verify(cacheOrigin('www.my-site.s3.amazonaws.com')).allowed).toBe(true);
    for (const attacker of ['attacker-bucket.s3.amazonaws.com', 'attacker.global.ssl.fastly.net', 'my-site.s3.amazonaws.com.evil.com']) {
      expect(verifier.verify(`https://${attacker}`).allowed, attacker).toBe(false);
      for (const cache of CACHES) expect(verifier.verify(cacheOrigin(attacker, cache)).allowed, `${attacker} on ${cache.id}`).toBe(false);
    }
  });
});

describe('against the whole Public Suffix List', () => {
  it('has rules of both sections to check (the reading of tldts worked)', () => {
    expect(rules.some((r) => r.section === 'private' && r.name === 's3.amazonaws.com')).toBe(true);
    expect(rules.some((r) => r.section === 'icann' && r.name === 'co.uk')).toBe(true);
  });
  it('every rule, and every ancestor of every rule, is refused as a wildcard base (exhaustive)', () => {
    const accepted: string[] = [];
    const bases = new Set<string>();
    for (const { name } of rules) for (const base of [baseOf(name), ...ancestorsOf(baseOf(name))]) bases.add(base);
    for (const base of bases) {
      try {
        parsePublisherRules([`*.${base}`], CACHES);
        accepted.push(base);
      } catch (error) {
        if (!(error instanceof AmpCorsError) || error.code === 'invalid-domain') accepted.push(`${base} (${String(error)})`);
      }
    }
    expect(accepted).toEqual([]);
  });
  it('property: for a random private-section suffix, a wildcard on any ancestor is refused; on a registrant below it, accepted, and the neighbour is denied', () => {
    const privateRules = rules.filter((r) => r.section === 'private').map((r) => r.name);
    const label = fc.stringMatching(/^[a-z][a-z0-9]{2,12}$/);
    fc.assert(
      fc.property(fc.constantFrom(...privateRules), fc.nat(), label, label, (rule, pick, owner, attacker) => {
        fc.pre(owner !== attacker);
        const lineage = [baseOf(rule), ...ancestorsOf(baseOf(rule))];
        const ancestor = lineage[pick % lineage.length]!;
        expect(() => parsePublisherRules([`*.${ancestor}`], CACHES), `*.${ancestor}`).toThrow(AmpCorsError);
        // The registrant's own subtree is theirs: accepted (unless the list has
        // yet another suffix below it, which a random label does not).
        const own = registrableUnder(rule, owner);
        const verifier = createVerifier({ publishers: [`*.${own}`] });
        // (Its https origins; a cache origin of a long name is a hash, which a
        // wildcard cannot precompute, so it is not asked here.)
        expect(verifier.verify(`https://www.${own}`).allowed).toBe(true);
        const neighbour = registrableUnder(rule, attacker);
        expect(verifier.verify(`https://${neighbour}`).allowed).toBe(false);
        expect(verifier.verify(cacheOrigin(neighbour)).allowed).toBe(false);
      }),
      { numRuns: 300 },
    );
  });
});
