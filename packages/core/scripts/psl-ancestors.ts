// Derives src/psl-ancestors.ts from the Public Suffix List that the installed
// tldts carries. Run after updating tldts:
//
//   npx tsx packages/core/scripts/psl-ancestors.ts
//
// Why a derived file: a wildcard publisher rule `*.base` must be refused when
// any public suffix lies strictly under `base` (`*.amazonaws.com` covers the
// private suffix `s3.amazonaws.com`, SPEC §5). tldts answers "what is the
// public suffix of this name" but has no public API listing the rules under a
// name, and its packed trie is an internal, version-specific file. So this
// dev-time script walks that trie once and writes a plain data module; the
// runtime code stays pure and never imports tldts internals. The test
// packages/core/test/publisher-rules-psl.test.ts re-derives the data from the
// installed tldts and fails when the committed file is stale.
import { writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { fileURLToPath } from 'node:url';
import { toASCII } from 'punycode/punycode.es6.js';

/** tldts's flat trie (tldts 7.5+: `dist/es6/src/data/trie.js`). */
interface FlatTrie {
  readonly nodeFlags: Uint8Array;
  readonly edgeStart: Uint16Array;
  readonly edgeLength: Uint8Array;
  readonly edgeChild: Uint16Array;
  readonly labelText: string;
  readonly rulesRoot: number;
}

/** One rule of the list: its name (`*` labels kept) and section. */
export interface PslRule {
  /** The rule in canonical ASCII, e.g. `s3.amazonaws.com` or `*.compute.amazonaws.com`. */
  readonly name: string;
  /** `icann` or `private` (the list's two sections). */
  readonly section: 'icann' | 'private';
}

// A non-literal specifier, so that TypeScript does not look for declarations
// of an internal file; resolved from this script's own node_modules.
const TRIE_MODULE: string = 'tldts/dist/es6/src/data/trie.js';

/** The installed tldts version, e.g. `7.5.4`. */
export function tldtsVersion(): string {
  const require = createRequire(import.meta.url);
  return (require('tldts/package.json') as { version: string }).version;
}

/**
 * Every normal and wildcard rule of the installed tldts's list (exception
 * rules `!x` are not suffixes and are left out), in canonical ASCII.
 */
export async function pslRules(): Promise<PslRule[]> {
  const trie = (await import(TRIE_MODULE)) as FlatTrie;
  const { nodeFlags, edgeStart, edgeLength, edgeChild, labelText, rulesRoot } = trie;
  // Edges are stored in order; each label starts where the previous ended.
  const offsets = new Uint32Array(edgeLength.length);
  for (let edge = 0, offset = 0; edge < edgeLength.length; edge += 1) {
    offsets[edge] = offset;
    offset += edgeLength[edge]!;
  }
  const rules = new Map<string, PslRule>();
  const walk = (node: number, labels: readonly string[]): void => {
    for (let edge = edgeStart[node]!; edge < edgeStart[node + 1]!; edge += 1) {
      const label = labelText.slice(offsets[edge], offsets[edge]! + edgeLength[edge]!);
      const child = edgeChild[edge]!;
      const name = [label, ...labels];
      const flags = nodeFlags[child]!;
      if (flags !== 0) {
        // tldts keeps IDN rules in both forms; ours are ASCII.
        const ascii = name.map((l) => (l === '*' ? l : toASCII(l).toLowerCase())).join('.');
        rules.set(ascii, { name: ascii, section: (flags & 2) !== 0 ? 'private' : 'icann' });
      }
      walk(child, name);
    }
  };
  walk(rulesRoot, []);
  return [...rules.values()];
}

/**
 * For every name with at least one rule strictly under it, the shortest such
 * rule's extra labels (`amazonaws.com` → `s3`, `kawasaki.jp` → `*`): the
 * entries of src/psl-ancestors.ts, sorted.
 */
export function ancestorsOf(rules: readonly PslRule[]): Array<[ancestor: string, example: string]> {
  const best = new Map<string, string>();
  const better = (a: string, b: string): boolean => {
    const la = a.split('.').length;
    const lb = b.split('.').length;
    return la !== lb ? la < lb : a.length !== b.length ? a.length < b.length : a < b;
  };
  for (const { name } of rules) {
    const labels = name.split('.');
    for (let i = 1; i < labels.length; i += 1) {
      if (labels[i] === '*') continue;
      const ancestor = labels.slice(i).join('.');
      const example = labels.slice(0, i).join('.');
      const seen = best.get(ancestor);
      if (seen === undefined || better(example, seen)) best.set(ancestor, example);
    }
  }
  return [...best.entries()].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
}

/**
 * Top-level domains the drop-in guard never draws (legacy-origin-option.ts,
 * kind (i) of lookAlikes): the ones a strict list of a brand's sites most
 * likely names (`example.com`, `example.net`), so that a list naming a few
 * is not taken for a function trusting every listed suffix.
 */
const COMMON_TLDS: ReadonlySet<string> = new Set(['com', 'net', 'org', 'edu', 'gov', 'mil', 'int', 'arpa', 'info', 'biz', 'name', 'pro', 'mobi']);

/**
 * The generic top-level domains of the ICANN section that kind (i) of
 * lookAlikes draws from: single-label rules of three letters or more (no
 * country code, whose sites a brand lists most), ASCII, but
 * {@link COMMON_TLDS}; sorted.
 */
export function genericTlds(rules: readonly PslRule[]): string[] {
  return rules
    .filter(({ name, section }) => section === 'icann' && /^[a-z]{3,}$/.test(name) && !COMMON_TLDS.has(name))
    .map(({ name }) => name)
    .sort();
}

/**
 * Second-level labels the ICANN pools of {@link siblingsOf} leave out: the
 * open, commercial ones (`co.uk`, `org.uk`, `me.uk`, `com.au`) a strict
 * list of a brand's sites names several of, so that such a list is not
 * taken for a function trusting every rule of the top-level domain; the
 * restricted ones drawn instead (`gov.uk`, `ac.uk`, `nhs.uk`) no brand's
 * list names.
 */
const COMMON_SECOND_LEVELS: ReadonlySet<string> = new Set([
  'co',
  'com',
  'net',
  'org',
  'me',
  'ltd',
  'plc',
  'biz',
  'info',
  'nom',
  'ne',
  'or',
  'name',
  'web',
  'firm',
  'shop',
  'store',
  'online',
  'inc',
  'llc',
  'llp',
  'gen',
  'per',
  'ind',
]);

/** At most this many sibling labels per top-level domain and section in {@link siblingsOf} (a bound on the data's size). */
const MAX_SIBLINGS = 8;

/**
 * For each top-level domain with at least three two-label rules (no
 * wildcard, none with a wildcard rule under it, in the ICANN section none
 * of {@link COMMON_SECOND_LEVELS}) of one section under it, up to {@link MAX_SIBLINGS} of their
 * first labels per section, shortest first (then in order): the pool from
 * which kind (i) of lookAlikes draws another real public suffix of the same
 * parent and section (`co.uk` → `gov.uk`, `github.io` → `gitlab.io`). Three,
 * so that two remain besides the allowed origin's own. Entries
 * `tld/icann labels|private labels`, comma-separated, sorted by top-level
 * domain.
 */
export function siblingsOf(rules: readonly PslRule[]): string[] {
  const under = new Map<string, { icann: string[]; private: string[] }>();
  // A rule with a wildcard under it (`*.run.app`) is left out: every name under it is a public suffix too.
  const wild = new Set(rules.filter(({ name }) => name.startsWith('*.')).map(({ name }) => name.slice(2)));
  for (const { name, section } of rules) {
    const labels = name.split('.');
    if (labels.length !== 2 || labels[0] === '*' || wild.has(name)) continue;
    const [label, tld] = labels as [string, string];
    let pools = under.get(tld);
    if (pools === undefined) under.set(tld, (pools = { icann: [], private: [] }));
    if (section === 'private' || !COMMON_SECOND_LEVELS.has(label)) pools[section].push(label);
  }
  const pick = (labels: string[]): string[] =>
    labels.length < 3 ? [] : labels.sort((a, b) => a.length - b.length || (a < b ? -1 : a > b ? 1 : 0)).slice(0, MAX_SIBLINGS);
  const entries: string[] = [];
  for (const tld of [...under.keys()].sort()) {
    const pools = under.get(tld) as { icann: string[]; private: string[] };
    const [icann, own] = [pick(pools.icann), pick(pools.private)];
    if (icann.length + own.length > 0) entries.push(`${tld}/${icann.join(',')}|${own.join(',')}`);
  }
  return entries;
}

/** The text of src/psl-ancestors.ts for these rules. */
export function ancestorsModule(rules: readonly PslRule[], version: string): string {
  const entries = ancestorsOf(rules);
  const data = entries.map(([ancestor, example]) => `${ancestor}/${example}`).join(' ');
  const tlds = genericTlds(rules);
  const siblings = siblingsOf(rules);
  return `// Generated by packages/core/scripts/psl-ancestors.ts from tldts ${version}: do not edit.
// ${entries.length} names that have a public suffix (ICANN or private section)
// strictly under them, each with the extra labels of its shortest such rule.

/** The tldts release whose Public Suffix List {@link PSL_ANCESTORS} was derived from. */
export const PSL_ANCESTORS_SOURCE = 'tldts@${version}';

/**
 * Space-separated \`name/labels\` pairs, sorted: \`name\` has the rule
 * \`labels.name\` of the Public Suffix List under it (\`amazonaws.com/s3\`:
 * \`s3.amazonaws.com\`; \`kawasaki.jp/*\`: every name under \`kawasaki.jp\`).
 */
export const PSL_ANCESTORS = '${data}';

/**
 * ${tlds.length} generic top-level domains of the list's ICANN section, space-separated,
 * sorted: three letters or more, ASCII, but the most common (com, net, org,
 * edu, gov, mil, int, arpa, info, biz, name, pro, mobi). What the drop-in
 * guard draws a real public suffix from (legacy-origin-option.ts).
 */
export const PSL_GENERIC_TLDS = '${tlds.join(' ')}';

/**
 * Space-separated \`tld/icann|private\` entries, sorted: for ${siblings.length} top-level
 * domains, up to ${MAX_SIBLINGS} first labels of the two-label rules under each (no
 * wildcard, none with a wildcard under it; no open commercial one such as
 * \`co\`, \`org\`, \`me\` in the ICANN section), per section, shortest first, a
 * section listed only with three rules or more (\`uk/ac,gov,nhs,...|barsy,...\`:
 * \`ac.uk\`, \`barsy.uk\`). What
 * the drop-in guard draws another real public suffix of the same parent
 * and section from (legacy-origin-option.ts).
 */
export const PSL_SIBLINGS = '${siblings.join(' ')}';
`;
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const target = fileURLToPath(new URL('../src/psl-ancestors.ts', import.meta.url));
  writeFileSync(target, ancestorsModule(await pslRules(), tldtsVersion()));
  console.log(`wrote ${target}`);
}
