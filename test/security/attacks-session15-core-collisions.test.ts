// Attacker's review, session 15 (helper-49): collision search for cache prefixes with references that do
// not use @ampcors/core's forward algorithms. A universe of names built to collide (xn- labels, edge
// hyphens, `--` at 3–4, deviation characters ß ς ZWJ, right-to-left letters, TLDs made of the punycode
// tails of IDN labels) is made hosts the way Node's WHATWG URL parser makes them; each host's prefixes are
// computed by the guide's algorithm (written here from SPEC §2 over punycode.js), by the real
// @ampproject/toolbox-cache-url (ASCII and Unicode host), and by the independent amppackager oracle
// (non-transitional). Every prefix two hosts share is then tried against verifiers that trust one of
// them exactly, or a wildcard over its parent: the verifier may allow it only when every host of the
// universe with that prefix is trusted. An allow otherwise is an origin whose page someone else can
// put on the cache.
import { createRequire } from 'node:module';
import { createVerifier, type Verifier } from '@ampcors/core';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { amppackagerPrefix, tr46 } from '../differential/amppackager-oracle.js';

const punycode = createRequire(new URL('../../packages/core/package.json', import.meta.url))('punycode/punycode.js') as {
  toASCII(input: string): string;
  toUnicode(input: string): string;
  encode(input: string): string;
};
const toolbox = createRequire(import.meta.url)('@ampproject/toolbox-cache-url') as { createCurlsSubdomain(url: string): Promise<string> };

/** SPEC §2, steps 1–5 (readable only: null when it would fall back to the hash). */
function guidePrefix(ascii: string): string | null {
  const unicode = punycode.toUnicode(ascii);
  let label = unicode.replace(/-/g, '--').replace(/\./g, '-');
  const points = Array.from(label);
  if (points[2] === '-' && points[3] === '-') label = `0-${label}-0`;
  const prefix = punycode.toASCII(label);
  return prefix.length <= 63 ? prefix : null;
}

/** The readable prefixes real caches may compute for a host (toolbox's hashes and amppackager's left out: no `-`). */
async function referencePrefixes(ascii: string): Promise<Set<string>> {
  const prefixes = new Set<string>();
  const add = (prefix: string | null | undefined): void => {
    if (typeof prefix === 'string' && prefix.includes('-') && prefix.length <= 63) prefixes.add(prefix);
  };
  try {
    add(guidePrefix(ascii));
  } catch {
    // punycode.js refuses the label (an overflow): no guide prefix.
  }
  const unicode = punycode.toUnicode(ascii);
  for (const host of unicode === ascii ? [ascii] : [ascii, unicode]) {
    try {
      add(await toolbox.createCurlsSubdomain(`https://${host}`));
    } catch {
      // toolbox refuses the host.
    }
  }
  try {
    add(amppackagerPrefix(ascii, { transitional: false }).prefix);
  } catch {
    // The oracle refuses it.
  }
  return prefixes;
}

/** UTS #46 as the WHATWG URL standard runs it (domain to ASCII, beStrict false). */
const WHATWG = { checkBidi: true, checkJoiners: true, checkHyphens: false, useSTD3ASCIIRules: false, verifyDNSLength: false, transitionalProcessing: false };

/**
 * The host the WHATWG URL standard makes of `name`, if it is one a page could be published at (SPEC §6: two
 * labels, letters, digits and hyphens, a last label of letters or an A-label). The standard, not Node 20's
 * parser: ada 2.9 also accepts A-labels that decode to ASCII only (`www.xn--example-.com`, whose
 * toolbox-cache-url prefix is www.example.com's: every domain has such a twin) and labels of left-to-right
 * letters followed by right-to-left ones (`ausק.org`, whose guide prefix is toolbox's of `xn-aus.org.hbj`);
 * UTS #46 15.1 and the Bidi rule refuse both, and so do browsers and registries. The caches that compute
 * readable prefixes hash the second kind (toolbox-cache-url for mixed directions, amppackager for the Bidi
 * rule); the first kind is out of the model by necessity (see the report of this review).
 */
function possibleHost(name: string): string | undefined {
  const ascii = tr46.toASCII(name, WHATWG);
  if (ascii === null || ascii === '' || ascii.length > 253) return undefined;
  const labels = ascii.split('.');
  if (labels.length < 2 || labels.some((l) => l.length === 0 || l.length > 63 || !/^[a-z0-9-]+$/.test(l))) return undefined;
  const tld = labels[labels.length - 1] as string;
  return /^[a-z]+$/.test(tld) || tld.startsWith('xn--') ? ascii : undefined;
}

const PIECES = [
  'a',
  'b',
  'x',
  'xn',
  'xn-',
  '-',
  '--',
  '0',
  'en',
  'us',
  'ü',
  'é',
  'ß',
  'ς',
  'ђ',
  'я',
  'д',
  'ன',
  '日',
  'ק',
  'ا',
  '\u200d',
  '\u094d',
  'क',
  '1',
  'shop',
];
const SEPARATORS = ['.', '.', '-', '--'];

/** A deterministic universe of colliding names (fast-check's sampler, fixed seed). */
function universe(count: number, tlds: readonly string[], seed: number): string[] {
  const piece = fc.constantFrom(...PIECES);
  const name = fc
    .tuple(
      fc.array(fc.tuple(fc.array(piece, { minLength: 1, maxLength: 3 }), fc.constantFrom(...SEPARATORS)), { minLength: 1, maxLength: 3 }),
      fc.constantFrom(...tlds),
    )
    .map(([parts, tld]) => `${parts.map(([ps, sep]) => ps.join('') + sep).join('')}${tld}`);
  return fc.sample(name, { numRuns: count, seed });
}

/** Every reading of a run-joined label: each run of hyphens as any sequence of `--` (a hyphen) and `-` (a dot). */
function hyphenReadings(label: string, cap: number): string[] {
  let out = [''];
  for (const token of label.split(/(-+)/)) {
    if (token === '') continue;
    if (!token.startsWith('-')) {
      out = out.map((o) => o + token);
      continue;
    }
    const ways: string[] = [];
    const walk = (rest: number, acc: string): void => {
      if (ways.length >= cap) return;
      if (rest === 0) ways.push(acc);
      if (rest >= 2) walk(rest - 2, `${acc}-`);
      if (rest >= 1) walk(rest - 1, `${acc}.`);
    };
    walk(token.length, '');
    out = out.flatMap((o) => ways.map((w) => o + w)).slice(0, cap);
  }
  return out;
}

/** Names a prefix may have come from: decoded or not, unwrapped or not (both orders), every hyphen reading. */
function twinCandidates(prefix: string): string[] {
  const labels = new Set<string>([prefix]);
  const decode = (l: string): string | undefined => {
    if (!l.startsWith('xn--')) return undefined;
    try {
      return punycode.toUnicode(l);
    } catch {
      return undefined;
    }
  };
  const unwrap = (l: string): string | undefined => (l.length >= 4 && l.startsWith('0-') && l.endsWith('-0') ? l.slice(2, -2) : undefined);
  for (const l of [...labels]) {
    const d = decode(l);
    if (d !== undefined) labels.add(d);
  }
  for (const l of [...labels]) {
    const u = unwrap(l);
    if (u !== undefined) {
      labels.add(u);
      const d = decode(u);
      if (d !== undefined) labels.add(d);
    }
  }
  return [...labels].flatMap((l) => hyphenReadings(l, 64));
}

describe('collision search with independent references (guide over punycode.js, toolbox-cache-url, amppackager oracle)', () => {
  it('a prefix two possible hosts share is allowed only when every host with it is trusted', async () => {
    const hosts = new Set<string>();
    for (const name of universe(12_000, ['de', 'com', 'org', 'fun', 'a', 'xn--p1ai'], 49)) {
      const host = possibleHost(name);
      if (host !== undefined) hosts.add(host);
    }
    // Every prefix with the hosts that have it: the universe's, then the twins its prefixes read as.
    const byPrefix = new Map<string, Set<string>>();
    const note = (prefix: string, host: string): void => {
      let set = byPrefix.get(prefix);
      if (set === undefined) byPrefix.set(prefix, (set = new Set()));
      set.add(host);
    };
    for (const host of hosts) for (const prefix of await referencePrefixes(host)) note(prefix, host);
    for (const prefix of [...byPrefix.keys()]) {
      for (const candidate of twinCandidates(prefix)) {
        const twin = possibleHost(candidate);
        if (twin !== undefined && (await referencePrefixes(twin)).has(prefix)) note(prefix, twin);
      }
    }
    const shared = [...byPrefix].filter(([, set]) => set.size > 1);
    expect(shared.length, 'the universe collides').toBeGreaterThan(1000);

    const verifiers = new Map<string, Verifier | null>();
    const verifierOf = (rule: string): Verifier | null => {
      if (!verifiers.has(rule)) {
        try {
          verifiers.set(rule, createVerifier({ publishers: [rule] }));
        } catch {
          verifiers.set(rule, null);
        }
      }
      return verifiers.get(rule) ?? null;
    };
    let judged = 0;
    const holes: string[] = [];
    for (const [prefix, set] of shared) {
      const members = [...set];
      for (const member of members) {
        const parent = member.slice(member.indexOf('.') + 1);
        for (const rule of [member, `*.${member}`, `*.${parent}`]) {
          const verifier = verifierOf(rule);
          if (verifier === null) continue;
          const base = rule.startsWith('*.') ? rule.slice(2) : null;
          const trusted = (d: string) => (base === null ? d === member : d === base || d.endsWith(`.${base}`));
          for (const cache of ['cdn.ampproject.org', 'www.bing-amp.com']) {
            const verdict = verifier.verify(`https://${prefix}.${cache}`);
            judged++;
            if (verdict.allowed && !members.every(trusted)) holes.push(`${prefix} allowed by ${rule}; also ${members.filter((d) => !trusted(d)).join(', ')}`);
          }
        }
      }
    }
    expect(holes).toEqual([]);
    expect(judged).toBeGreaterThan(500);
  }, 300_000);
});

describe('IDN wildcard rules: every allowed prefix, read back by the references, stays under the rule', () => {
  it('random subdomains of IDN and xn- bases: an allowed prefix has no possible host outside the base', async () => {
    const bases = ['bücher.de', 'пример.рф', 'straße.de', 'xn-shop.example.org', 'a-b.com', 'ex--ample.com', 'ς.gr', 'ü.com'];
    const verifiers = bases.map((b) => [tr46.toASCII(b, WHATWG) as string, createVerifier({ publishers: [`*.${b}`] })] as const);
    const piece = fc.constantFrom('a', 'b', 'xn', 'xn-', '-', '0', 'ü', 'é', 'ß', 'ς', 'ђ', 'я', '日', 'shop', 'de', 'com', 'org');
    const label = fc.array(piece, { minLength: 1, maxLength: 4 }).map((ps) => ps.join(''));
    let allowed = 0;
    const holes: string[] = [];
    await fc.assert(
      fc.asyncProperty(fc.nat(bases.length - 1), fc.array(label, { minLength: 1, maxLength: 2 }), async (which, labels) => {
        const [base, verifier] = verifiers[which] as (typeof verifiers)[number];
        const host = possibleHost(`${labels.join('.')}.${base}`);
        if (host === undefined) return;
        for (const prefix of await referencePrefixes(host)) {
          const verdict = verifier.verify(`https://${prefix}.cdn.ampproject.org`);
          if (!verdict.allowed) continue;
          allowed++;
          for (const candidate of twinCandidates(prefix)) {
            const twin = possibleHost(candidate);
            if (twin === undefined || twin === base || twin.endsWith(`.${base}`)) continue;
            if ((await referencePrefixes(twin)).has(prefix)) holes.push(`${prefix} allowed by *.${base}; also the prefix of ${twin}`);
          }
        }
      }),
      { numRuns: 1500, seed: 1549 },
    );
    expect(holes).toEqual([]);
    expect(allowed).toBeGreaterThan(300);
  }, 300_000);
});
