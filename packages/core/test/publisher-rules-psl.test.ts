// The Public Suffix List data behind the wildcard-rule refusal (issue 14 item
// 2): src/psl-ancestors.ts is derived at build time from the list tldts
// carries (tldts has no API listing the rules under a name). These tests fail
// when the committed file is stale, and check the derivation's reading of
// tldts's trie against tldts's own public API.
import { readFileSync } from 'node:fs';
import { parse } from 'tldts';
import { beforeAll, describe, expect, it } from 'vitest';
import { ancestorsModule, ancestorsOf, type PslRule, pslRules, tldtsVersion } from '../scripts/psl-ancestors.js';
import { PSL_ANCESTORS, PSL_ANCESTORS_SOURCE } from '../src/psl-ancestors.js';

let rules: PslRule[];
beforeAll(async () => {
  rules = await pslRules();
});

/** A name the rule matches: `*` stands for any label. */
const instance = (rule: string): string => rule.replace(/^\*(?=\.)/, 'zq9k');

describe('src/psl-ancestors.ts', () => {
  it('is what the generator derives from the installed tldts (run `npx tsx packages/core/scripts/psl-ancestors.ts` if not)', () => {
    const committed = readFileSync(new URL('../src/psl-ancestors.ts', import.meta.url), 'utf8');
    expect(committed).toBe(ancestorsModule(rules, tldtsVersion()));
    expect(PSL_ANCESTORS_SOURCE).toBe(`tldts@${tldtsVersion()}`);
  });
  it("every rule read from tldts's trie is a public suffix of its section by tldts's public API", () => {
    const wrong = rules.filter(({ name, section }) => {
      const probe = instance(name);
      const result = parse(probe, { allowPrivateDomains: true });
      return result.publicSuffix !== probe || result.isPrivate !== (section === 'private');
    });
    expect(wrong).toEqual([]);
  });
  it('holds known entries of both sections, with the labels of a rule below each', () => {
    const names = new Set(rules.map((r) => r.name));
    for (const rule of ['s3.amazonaws.com', 'github.io', 'blogspot.com', 'global.ssl.fastly.net', 'co.uk', 'com']) expect(names.has(rule), rule).toBe(true);
    expect([...names].some((name) => /^\*\.compute(-1)?\.amazonaws\.com$/.test(name) || /^\*\.[a-z0-9-]+\.compute\.amazonaws\.com$/.test(name))).toBe(true);
    const pairs = new Map(PSL_ANCESTORS.split(' ').map((pair) => pair.split('/') as [string, string]));
    expect(pairs.get('amazonaws.com')).toBe('s3');
    expect(pairs.get('fastly.net')).toBe('map');
    expect(pairs.get('kawasaki.jp')).toBe('*');
    expect(pairs.has('example.com')).toBe(false);
    expect(pairs.has('github.io')).toBe(false); // nothing is listed below github.io: it is a suffix itself
  });
  it("each ancestor's example rule is a real rule strictly under it", () => {
    const names = new Set(rules.map((r) => r.name));
    for (const [ancestor, labels] of ancestorsOf(rules)) {
      expect(names.has(`${labels}.${ancestor}`), `${labels}.${ancestor}`).toBe(true);
    }
  });
});
