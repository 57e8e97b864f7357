// Property-based attacks on the verifier (issue #6): random allowed sets
// against random and derived domains, through every cache and prefix form,
// and arbitrary strings that must never make verify throw.
import {
  type AmpCache,
  amppackagerPrefix,
  CACHES,
  canonicalDomain,
  createVerifier,
  fallbackPrefix,
  loadAllowSet,
  compileAllowSet,
  createAsyncVerifier,
  parseOrigin,
  prefixForms,
  reverseOrigin,
  toolboxPrefix,
  unicodeDomain,
  type Verifier,
} from '@ampcors/core';
import { allPrefixForms, browserHost, prefixClaimants } from '@ampcors/core/algorithms';
import { domainToUnicode } from 'node:url';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { anyString, domain, lookAlike, originLike } from './arbitraries.js';

const TEST_CACHE: AmpCache = { id: 'test', name: 'Test cache', cacheDomain: 'amp.cache.example.net' };
const ALL_CACHES = [...CACHES, TEST_CACHE];

/** Every prefix any implementation may compute for `d`, including forms the verifier may not list. */
function everyPrefix(d: string): string[] {
  const unicode = unicodeDomain(d);
  return [
    ...new Set([
      ...prefixForms(d).map((f) => f.prefix),
      toolboxPrefix(d),
      toolboxPrefix(unicode),
      amppackagerPrefix(d),
      fallbackPrefix(d),
      fallbackPrefix(unicode),
      fallbackPrefix(`${d}.`),
    ]),
  ];
}

interface Setup {
  verifier: Verifier;
  exact: string[];
  wildcard: string[];
}

function setup(exact: string[], wildcard: string[]): Setup | undefined {
  try {
    const verifier = createVerifier({ publishers: [...exact, ...wildcard.map((d) => `*.${d}`)], caches: ALL_CACHES });
    return { verifier, exact, wildcard };
  } catch {
    return undefined; // a public suffix or a domain covering a cache: refused at construction, tested elsewhere
  }
}

const covered = (s: Setup, d: string) => s.exact.includes(d) || s.wildcard.some((w) => d === w || d.endsWith(`.${w}`));

/** Is an allowed cache origin explained by a configured domain (forward computation only)? */
function justified(s: Setup, origin: string): boolean {
  for (const d of s.exact) {
    if (prefixForms(d).some((f) => ALL_CACHES.some((c) => origin === `https://${f.prefix}.${c.cacheDomain}`))) return true;
  }
  const reversed = reverseOrigin(origin, { caches: ALL_CACHES });
  return reversed.ok && !reversed.hashed && covered(s, reversed.publisherDomain) && everyPrefix(reversed.publisherDomain).includes(reversed.prefix);
}

const allowedSet = fc.tuple(fc.uniqueArray(domain, { minLength: 1, maxLength: 4 }), fc.uniqueArray(domain, { maxLength: 2 }));

describe('no origin of a domain outside the allowed set is allowed', () => {
  it('random other domains and look-alikes of the allowed ones, every cache, every prefix form', () => {
    let checked = 0;
    let lookAlikes = 0;
    fc.assert(
      fc.property(
        allowedSet.chain(([exact, wildcard]) =>
          fc.tuple(
            fc.constant(exact),
            fc.constant(wildcard),
            fc.array(fc.oneof(domain, fc.constantFrom(...exact, ...wildcard).chain(lookAlike)), { minLength: 1, maxLength: 6 }),
          ),
        ),
        ([exact, wildcard, others]) => {
          const s = setup(exact, wildcard);
          fc.pre(s !== undefined);
          if (!s) return;
          for (const other of others) {
            if (other === undefined || covered(s, other)) continue;
            if (exact.some((e) => e !== other && (e.includes(other) || other.includes(e)))) lookAlikes++;
            const publisher = s.verifier.verify(`https://${other}`);
            expect(publisher.allowed, `https://${other}`).toBe(false);
            for (const prefix of everyPrefix(other)) {
              for (const cache of ALL_CACHES) {
                const origin = `https://${prefix}.${cache.cacheDomain}`;
                const verdict = s.verifier.verify(origin);
                checked++;
                if (verdict.allowed) expect(justified(s, origin), `${origin} allowed for ${other}, config ${JSON.stringify([exact, wildcard])}`).toBe(true);
              }
            }
          }
        },
      ),
      { numRuns: 300 },
    );
    expect(checked).toBeGreaterThan(2000);
    expect(lookAlikes).toBeGreaterThan(50);
  });

  it('every form of an allowed exact domain is allowed, on every cache (the positive control)', () => {
    fc.assert(
      fc.property(allowedSet, ([exact, wildcard]) => {
        const s = setup(exact, wildcard);
        fc.pre(s !== undefined);
        for (const d of exact) {
          for (const { prefix } of prefixForms(d)) {
            for (const cache of ALL_CACHES) expect(s?.verifier.verify(`https://${prefix}.${cache.cacheDomain}`).allowed).toBe(true);
          }
        }
      }),
      { numRuns: 150 },
    );
  });

  it('an allowed verdict is always for a canonical origin that a configured rule explains', () => {
    fc.assert(
      fc.property(allowedSet, fc.array(originLike, { maxLength: 20 }), ([exact, wildcard], origins) => {
        const s = setup(exact, wildcard);
        fc.pre(s !== undefined);
        if (!s) return;
        for (const origin of origins) {
          const verdict = s.verifier.verify(origin);
          if (!verdict.allowed) continue;
          const parsed = parseOrigin(origin);
          expect(parsed.ok).toBe(true);
          if (verdict.via === 'cache') expect(justified(s, origin)).toBe(true);
          else if (parsed.ok) expect(covered(s, parsed.host)).toBe(true);
        }
      }),
      { numRuns: 300 },
    );
  });

  it('__amp_source_origin never turns a denial into an allow', () => {
    fc.assert(
      fc.property(
        allowedSet,
        domain,
        fc.oneof(
          anyString,
          domain.map((d) => `https://${d}`),
        ),
        ([exact, wildcard], other, source) => {
          const s = setup(exact, wildcard);
          fc.pre(s !== undefined && !covered(s, other));
          if (!s) return;
          for (const prefix of everyPrefix(other)) {
            const origin = `https://${prefix}.cdn.ampproject.org`;
            const plain = s.verifier.verify(origin);
            const withSource = s.verifier.verify(origin, { sourceOrigin: source, ampSameOrigin: 'true' });
            if (!plain.allowed) expect(withSource.allowed).toBe(false);
          }
          expect(s.verifier.verify(`https://${other}`, { sourceOrigin: `https://${other}` }).allowed).toBe(false);
        },
      ),
      { numRuns: 200 },
    );
  });
});

describe('verify never throws', () => {
  const verifier = createVerifier({ publishers: ['example.com', '*.example.org', `${'a'.repeat(40)}.${'b'.repeat(30)}.com`] });

  it('on arbitrary strings, byte strings and origin-like strings, with arbitrary context', () => {
    fc.assert(
      fc.property(anyString, fc.option(anyString), fc.option(anyString), (origin, same, source) => {
        const verdict = verifier.verify(origin, { ampSameOrigin: same, sourceOrigin: source });
        expect(typeof verdict.allowed).toBe('boolean');
        expect(typeof verdict.reason).toBe('string');
        if (!verdict.allowed) expect(verdict.detail.length).toBeLessThan(400);
      }),
      { numRuns: 3000 },
    );
  });

  it('on values that are not strings at all', () => {
    const values: unknown[] = [
      undefined,
      null,
      0,
      1n,
      {},
      [],
      ['https://example.com'],
      Symbol('x'),
      () => 'https://example.com',
      new String('https://example.com'),
      NaN,
    ];
    for (const value of values) {
      const verdict = verifier.verify(value as string, value as never);
      expect(verdict.allowed).toBe(false);
    }
  });
});

// SPEC §6 "…and no form another domain can claim", from the attacker's side:
// the attacker owns a domain whose cache prefix, under some algorithm a real
// cache runs, equals a form of a trusted domain.
const origin = (prefix: string, cache: AmpCache = CACHES[0] as AmpCache) => `https://${prefix}.${cache.cacheDomain}`;

describe('no form another domain can claim (SPEC §6)', () => {
  it('*.example.org does not trust the plain xn-shop.example.org.fun (toolbox leaves its xn-- unwrapped)', () => {
    const verifier = createVerifier({ publishers: ['*.example.org'] });
    expect(toolboxPrefix('xn-shop.example.org.fun')).toBe('xn--shop-example-org-fun');
    expect(verifier.verify(origin('xn--shop-example-org-fun'))).toMatchObject({
      allowed: false,
      reason: 'unknown-publisher',
      publisherDomain: 'xn-shop.example.org.fun',
    });
    // The wildcard's own readable origins still work.
    expect(verifier.verify(origin('shop-example-org')).allowed).toBe(true);
  });
  it('an exact xn-musik.de.pub does not trust musikŗ.de, nor the reverse', () => {
    const twin = canonicalDomain('musikŗ.de');
    expect(toolboxPrefix('xn-musik.de.pub')).toBe(domainPrefixOf(twin));
    for (const [trusted, other] of [
      ['xn-musik.de.pub', twin],
      [twin, 'xn-musik.de.pub'],
    ] as const) {
      const verifier = createVerifier({ publishers: [trusted] });
      for (const { prefix } of allPrefixForms(other)) expect(verifier.verify(origin(prefix)).allowed, `${trusted} vs ${other}: ${prefix}`).toBe(false);
    }
  });
  it('bücher.de keeps its readable xn--bcher-de-65a: its plain twin would end in 65a, no top-level domain', () => {
    const verifier = createVerifier({ publishers: ['bücher.de'] });
    expect(verifier.verify(origin('xn--bcher-de-65a'))).toMatchObject({ allowed: true, publisherDomain: 'xn--bcher-kva.de', prefixForm: 'spec' });
  });
  it("www.ab--cd.example.com: amppackager's hash is allowed", () => {
    const verifier = createVerifier({ publishers: ['www.ab--cd.example.com'] });
    expect(amppackagerPrefix('www.ab--cd.example.com')).toBe(fallbackPrefix('www.ab--cd.example.com'));
    expect(verifier.verify(origin(fallbackPrefix('www.ab--cd.example.com')))).toMatchObject({ allowed: true, reason: 'cache-origin-hashed' });
    // Its readable prefix is also the guide's prefix of www.ab.-.cd.example.com (a browser host: edge hyphens are allowed).
    expect(verifier.verify(origin('www-ab----cd-example-com'))).toMatchObject({
      allowed: false,
      reason: 'unknown-publisher',
      publisherDomain: 'www.ab.-.cd.example.com',
    });
    expect(createVerifier({ publishers: ['*.example.com'] }).verify(origin('www-ab----cd-example-com')).allowed).toBe(true);
  });
  it("я-дома.рф: amppackager's byte-position wrap is computed, and denied: Go gives it to another domain too", () => {
    const verifier = createVerifier({ publishers: ['я-дома.рф'] });
    expect(amppackagerPrefix(canonicalDomain('я-дома.рф'))).toBe('xn--0-----0-5fg9azfva1a6czi');
    // Go decodes the joined label xn--0-<…>-0-jckzi of xn-0.<…>.рф.0.jckzi leniently (non-ASCII kept in the basic part) into the same label.
    expect(amppackagerPrefix('xn-0.xn----8sb5byd.xn--p1ai.0.jckzi')).toBe('xn--0-----0-5fg9azfva1a6czi');
    expect(verifier.verify(origin('xn--0-----0-5fg9azfva1a6czi'))).toMatchObject({
      allowed: false,
      reason: 'unknown-publisher',
      publisherDomain: 'xn-0.xn----8sb5byd.xn--p1ai.0.jckzi',
    });
    for (const { prefix } of allPrefixForms(canonicalDomain('я-дома.рф')).filter((f) => !f.prefix.includes('-')))
      expect(verifier.verify(origin(prefix)).allowed).toBe(true);
  });
  it.each([
    // A first label of non-ASCII letters only: its readable prefix starts xn--- and toolbox gives xn-.<rest>.<tail> the same string.
    ['ன.com', 'xn---com-fxl', 'xn-.com.fxl'],
    ['xn--0zd.org', 'xn---org-zxs', 'xn-.org.zxs'],
    ['xn--obb.org.fun', 'xn---org-fun-vmj', 'xn-.org.fun.vmj'],
  ])("%s: the readable %s is also %s's (an edge-hyphen label): denied, the hashes allowed", (domain, prefix, twin) => {
    const verifier = createVerifier({ publishers: [domain] });
    expect(domainPrefixOf(canonicalDomain(domain))).toBe(prefix);
    expect(toolboxPrefix(twin)).toBe(prefix);
    const verdict = verifier.verify(origin(prefix));
    expect(verdict).toMatchObject({ allowed: false, reason: 'unknown-publisher' });
    expect(verdict.allowed ? '' : verdict.detail).toContain(twin);
    expect(prefixForms(domain).map((f) => f.prefix)).not.toContain(prefix);
    expect(loadAllowSet(compileAllowSet([domain])).verifyOrigin(origin(prefix)).allowed).toBe(false);
    for (const { prefix: hashed } of allPrefixForms(canonicalDomain(domain)).filter((f) => !f.prefix.includes('-'))) {
      expect(verifier.verify(origin(hashed))).toMatchObject({ allowed: true, reason: 'cache-origin-hashed' });
    }
    // Both edge-hyphen readings claim it; neither can be configured (canonicalDomain is stricter than browsers), so nothing restores it.
    expect(prefixClaimants(prefix).map((c) => c.publisherDomain)).toEqual([canonicalDomain(domain), twin, twin.replace('xn-.', 'xn.-')]);
    expect(() => canonicalDomain(twin)).toThrow();
  });
  it('an async source that says ன.com owns xn---com-fxl (or я-дома.рф its byte wrap) cannot make it allowed; its hashes can', async () => {
    const hashes = allPrefixForms(canonicalDomain('ன.com')).filter((f) => !f.prefix.includes('-'));
    const owner: Record<string, string> = { 'xn---com-fxl': 'xn--wlc.com', 'xn--0-----0-5fg9azfva1a6czi': 'xn----8sbl6aj3h.xn--p1ai' };
    for (const { prefix } of hashes) owner[prefix] = 'xn--wlc.com';
    const verifier = createAsyncVerifier({
      source: { publisherOfPrefix: async (prefix) => owner[prefix], hasPublisher: async (d) => Object.values(owner).includes(d) },
    });
    for (const prefix of ['xn---com-fxl', 'xn--0-----0-5fg9azfva1a6czi'])
      expect(await verifier.verify(origin(prefix)), prefix).toMatchObject({ allowed: false });
    for (const { prefix } of hashes) expect(await verifier.verify(origin(prefix)), prefix).toMatchObject({ allowed: true });
  });
  it('j-ş.de: every readable form is claimed by another domain (edge-hyphen or Go-lenient twins); the hashes are allowed', () => {
    const ascii = canonicalDomain('j-ş.de');
    const verifier = createVerifier({ publishers: ['j-ş.de'] });
    const readable = allPrefixForms(ascii).filter((f) => f.prefix.includes('-'));
    expect(readable.length).toBeGreaterThan(0);
    for (const { prefix } of readable) {
      const verdict = verifier.verify(origin(prefix));
      expect(verdict, prefix).toMatchObject({ allowed: false, reason: 'unknown-publisher' });
      const twin = verdict.allowed ? undefined : verdict.publisherDomain;
      expect(twin).not.toBe(ascii);
      expect(verdict.allowed ? '' : verdict.detail).toContain(twin);
      expect(allPrefixForms(twin as string).map((f) => f.prefix)).toContain(prefix);
    }
    for (const { prefix } of allPrefixForms(ascii).filter((f) => !f.prefix.includes('-'))) expect(verifier.verify(origin(prefix)).allowed).toBe(true);
  });
  it('never a transitional form: fass-de belongs to fass.de, not faß.de', () => {
    const verifier = createVerifier({ publishers: ['faß.de'] });
    expect(verifier.verify(origin('fass-de')).allowed).toBe(false);
    expect(allPrefixForms(canonicalDomain('faß.de')).map((f) => f.prefix)).not.toContain('fass-de');
  });
  it('never a form of non-canonical input: example-com- (example.com.) and 0.en-us.example.com.0 share nothing', () => {
    const verifier = createVerifier({ publishers: ['example.com', 'en-us.example.com'] });
    expect(verifier.verify(origin('example-com-')).allowed).toBe(false);
    expect(verifier.verify(origin('0-0-en--us-example-com-0-0')).allowed).toBe(false);
    expect(verifier.verify(origin('0-en--us-example-com-0')).allowed).toBe(true);
    expect(verifier.verify(origin(fallbackPrefix('example.com.'))).allowed).toBe(false);
    expect(verifier.verify(origin(fallbackPrefix('EXAMPLE.com'))).allowed).toBe(false);
  });
  it('compact allow-sets leave out shared forms too', () => {
    const set = loadAllowSet(compileAllowSet(['musikŗ.de']));
    expect(set.verifyOrigin(origin('xn--musik-de-pub')).allowed).toBe(false);
  });
});

function domainPrefixOf(domain: string): string {
  return (allPrefixForms(domain).find((f) => f.form === 'spec') as { prefix: string }).prefix;
}

/**
 * The test's own inverse of the readable algorithms: fold `--` to `-` and
 * `-` to `.`, after optional unwrap, decode and unwrap; kept when the result
 * is a host that could exist.
 */
function twinsOf(prefix: string): string[] {
  const fold = (label: string) => label.replace(/--|-/g, (m) => (m === '--' ? '-' : '.'));
  const unwrap = (label: string) => (/^0-.*-0$/.test(label) ? [label, label.slice(2, -2)] : [label]);
  const decode = (label: string) => {
    // Node's own IDNA (ICU): a label it cannot decode to a valid U-label spells no browser host.
    const unicode = label.startsWith('xn--') ? domainToUnicode(label) : '';
    return unicode === '' ? [label] : [label, unicode];
  };
  const labels = unwrap(prefix).flatMap(decode).flatMap(unwrap);
  const hosts = labels.map((label) => browserHost(fold(label))).filter((h): h is string => h !== undefined);
  // A domain that could exist: two labels at least, a top-level domain of letters or an A-label (IANA's rule for TLDs).
  return [...new Set(hosts)].filter((h) => h.includes('.') && /\.(?:[a-z]+|xn--[a-z0-9-]+)$/.test(h));
}

// Domains shaped for collisions: xn- and 0- labels, IDN letters, hyphens, letter-only endings.
const SHAPES = ['xn-', 'xn--', '0-', '-0', 'a', 'b', 'shop', '-', 'ü', 'ђ', 'ŗ', 'я', 'ß', 'ς', 'ש', '😊', '0', 'x', 'n'];
const shapedLabel = fc.array(fc.constantFrom(...SHAPES), { minLength: 1, maxLength: 5 }).map((parts) => parts.join(''));
const shapedDomain = fc
  .tuple(fc.array(shapedLabel, { minLength: 1, maxLength: 3 }), fc.constantFrom('com', 'de', 'org', 'fun', 'pub', 'zza', 'xn--p1ai', 'рф'))
  .map(([labels, tld]) => {
    try {
      return canonicalDomain(`${labels.join('.')}.${tld}`);
    } catch {
      return undefined;
    }
  })
  .filter((d): d is string => d !== undefined);

describe('collision search across every accepted algorithm (SPEC §6)', () => {
  it('for distinct domains a and b, no prefix accepted for {a} is accepted for {b}: twins derived from every form', () => {
    let twins = 0;
    fc.assert(
      fc.property(fc.oneof(shapedDomain, domain), (a) => {
        const forA = createVerifier({ publishers: [a] });
        for (const { prefix } of allPrefixForms(a)) {
          for (const b of twinsOf(prefix)) {
            if (b === a) continue;
            // b has (some algorithm's) prefix equal to a form of a only if prefix is among b's forms.
            const shared = allPrefixForms(b).some((f) => f.prefix === prefix);
            if (!shared) continue;
            twins++;
            expect(forA.verify(origin(prefix)).allowed, `${a} trusts ${prefix}, also ${b}'s`).toBe(false);
            let forB: Verifier | undefined;
            try {
              forB = createVerifier({ publishers: [b] });
            } catch {
              continue; // b cannot be configured (a public suffix, or stricter than browsers): it is an attacker's host only
            }
            expect(forB.verify(origin(prefix)).allowed, `${b} trusts ${prefix}, also ${a}'s`).toBe(false);
          }
        }
      }),
      { numRuns: 3000, seed: 13 },
    );
    // The search finds real collisions: the property is not vacuous.
    expect(twins).toBeGreaterThan(20);
  });

  it('pairs of generated domains: the accepted forms of distinct domains are disjoint, and every form of b is refused for {a}', () => {
    fc.assert(
      fc.property(fc.uniqueArray(fc.oneof(shapedDomain, domain), { minLength: 2, maxLength: 8 }), (domains) => {
        const owner = new Map<string, string>();
        for (const d of domains) {
          for (const { prefix } of prefixForms(d)) {
            const other = owner.get(prefix);
            expect(other === undefined || other === d, `${prefix}: ${other} and ${d}`).toBe(true);
            owner.set(prefix, d);
          }
        }
        const [a, ...others] = domains as [string, ...string[]];
        const forA = createVerifier({ publishers: [a] });
        for (const b of others)
          for (const { prefix } of allPrefixForms(b))
            if (!allPrefixForms(a).some((f) => f.prefix === prefix)) expect(forA.verify(origin(prefix)).allowed).toBe(false);
      }),
      { numRuns: 800, seed: 14 },
    );
  });

  it('a wildcard rule allows a prefix only when every domain with it is under the rule', () => {
    fc.assert(
      fc.property(fc.oneof(shapedDomain, domain), fc.constantFrom('example.org', 'example.com', 'de.pub', 'org.fun'), (b, base) => {
        let verifier: Verifier;
        try {
          verifier = createVerifier({ publishers: [`*.${base}`] });
        } catch {
          return;
        }
        const under = (d: string) => d === base || d.endsWith(`.${base}`);
        for (const { prefix } of allPrefixForms(b)) {
          if (verifier.verify(origin(prefix)).allowed) {
            expect(under(b) || twinsOf(prefix).every(under), `${prefix} of ${b} allowed by *.${base}`).toBe(true);
            expect(
              twinsOf(prefix)
                .filter((d) => allPrefixForms(d).some((f) => f.prefix === prefix))
                .every(under),
            ).toBe(true);
          }
        }
      }),
      { numRuns: 1500, seed: 15 },
    );
  });
});

describe('prefixClaimants is complete and sound on an exhaustive universe', () => {
  it('every readable form of every domain lists that domain, and every listed claimant has the form', () => {
    const letters = 'abcdefghijklmnopqrstuvwxyz';
    // Three-letter endings from b..: the punycode tails of Latin and Cyrillic letters.
    const tlds = [...letters].flatMap((a) => [...letters].map((b) => `b${a}${b}`));
    const firsts = ['xn-a', 'xn-shop', 'a', 'en-us', 'ab--c', 'ü', 'я-д', '0-a'];
    let collisions = 0;
    for (const first of firsts) {
      for (const second of ['de', 'com.org']) {
        for (const tld of tlds) {
          const host = browserHost(`${first}.${second}.${tld}`);
          if (host === undefined) continue;
          for (const { prefix } of allPrefixForms(host).filter((f) => f.prefix.includes('-'))) {
            const claimants = prefixClaimants(prefix);
            expect(
              claimants.map((c) => c.publisherDomain),
              prefix,
            ).toContain(host);
            for (const { publisherDomain } of claimants)
              expect(
                allPrefixForms(publisherDomain).map((f) => f.prefix),
                `${prefix} of ${publisherDomain}`,
              ).toContain(prefix);
            if (claimants.length > 1) collisions++;
          }
        }
      }
    }
    // The xn- labels collide with IDNs wherever the punycode tail is letters: the universe finds them.
    expect(collisions).toBeGreaterThan(500);
  });
});
