// The allow-set (readable prefix table, hashed prefixes indexed by digest,
// recent-origin memo) must answer exactly like a map from every accepted
// origin string to its entry, built from the definition: every form of
// allPrefixForms × caches whose claimants (searchClaimants, complete) are all
// configured, the first listed domain winning.
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { type AllowEntry, type AmpCache, CACHES, canonicalDomain } from '../src/index.js';
import { buildAllowSet } from '../src/algorithms.js';
import { createRecentMemo, stringHash } from '../src/allow-set.js';
import { referenceMap } from './allow-set-reference.js';
import { asciiLabel, publisherDomain } from './arbitraries.js';

const byOrigin = (a: [string, AllowEntry], b: [string, AllowEntry]) => (a[0] < b[0] ? -1 : a[0] > b[0] ? 1 : 0);

function expectSameAsReference(domains: readonly string[], caches: readonly AmpCache[] = CACHES): void {
  const reference = referenceMap(domains, caches);
  const set = buildAllowSet(domains, caches);
  expect([...set.entries()].sort(byOrigin)).toEqual([...reference.entries()].sort(byOrigin));
  expect(set.size).toBe(reference.size);
  for (const [origin, entry] of reference) expect(set.get(origin)).toEqual(entry);
}

const plainDomain = fc
  .tuple(
    fc.array(fc.oneof(asciiLabel, fc.constantFrom('en-us', 'ab--c', 'xn-a', 'xnab--c', 'a'.repeat(63))), { minLength: 1, maxLength: 4 }),
    fc.constantFrom('com', 'co.uk', 'io', 'ab--cd'),
  )
  .map(([labels, tld]) => `${labels.join('.')}.${tld}`)
  // Only domains core accepts as they are (a generated `xn--a` label decodes to a control character and is refused).
  .filter((domain) => isCanonical(domain));

function isCanonical(domain: string): boolean {
  try {
    return canonicalDomain(domain) === domain;
  } catch {
    return false;
  }
}

describe('buildAllowSet', () => {
  it('lists the same origins and entries as the definition (ASCII domains)', () => {
    fc.assert(
      fc.property(fc.uniqueArray(plainDomain, { minLength: 1, maxLength: 5 }), (domains) => expectSameAsReference(domains)),
      { numRuns: 200 },
    );
  });

  it('lists the same origins and entries as the definition (IDN and mixed domains)', () => {
    fc.assert(
      fc.property(fc.uniqueArray(publisherDomain, { minLength: 1, maxLength: 5 }), (domains) => expectSameAsReference(domains)),
      { numRuns: 150 },
    );
  });

  it.each([
    ['hyphens at 3–4', ['en-us.example.com', 'ab--c.example.com', 'xn-a.example.com']],
    ['fallback of both algorithms', [`${'a'.repeat(40)}.${'b'.repeat(30)}.com`]],
    ['fallback of toolbox only', ['localhost', `${'a-'.repeat(25)}a.example.com`]],
    ['toolbox label of 66 octets', [`ab-${'c'.repeat(55)}.com`, `ab-${'c'.repeat(57)}.com`]],
    ['63 octets exactly', [`${'a'.repeat(59)}.com`, `${'a'.repeat(60)}.com`]],
    ['IDNs', ['xn--57hw060o.com', 'xn--bcher-kva.com', 'www.xn--p1ai']],
    ['shared origins: first listed wins', ['en-us.example.com', 'en-us.example.com.', 'EN-US.Example.com', 'example.com']],
    ['a colliding pair, both configured', ['xn-shop.example.org.fun', 'shopђ.example.org']],
    ['a colliding pair, one configured', ['xn-musik.de.pub']],
  ])('matches the definition: %s', (_name, domains) => expectSameAsReference(domains));

  it('stores the canonical domain, whatever spelling was listed', () => {
    const set = buildAllowSet(['EN-US.Example.com.'], CACHES);
    expect(set.get('https://0-en--us-example-com-0.cdn.ampproject.org')?.publisherDomain).toBe('en-us.example.com');
  });

  it('reports every cache once when a cache domain is listed twice', () => {
    const twice = [...CACHES, { id: 'copy', name: 'Copy', cacheDomain: CACHES[0]!.cacheDomain }];
    expectSameAsReference(['example.com', 'en-us.example.org'], twice);
  });

  it('matches only the exact canonical bytes of an accepted origin', () => {
    const set = buildAllowSet(['www.example.com'], CACHES);
    expect(set.get('https://www-example-com.cdn.ampproject.org')).toMatchObject({ publisherDomain: 'www.example.com', form: 'spec', cache: CACHES[0] });
    expect(set.get('https://www-example-com.www.bing-amp.com')).toMatchObject({ cache: CACHES[1] });
    for (const variant of [
      'http://www-example-com.cdn.ampproject.org',
      'https://WWW-example-com.cdn.ampproject.org',
      'https://www-example-com.cdn.ampproject.org.',
      'https://www-example-com.cdn.ampproject.org:443',
      'https://www-example-com.cdn.ampproject.org/',
      'https://x.www-example-com.cdn.ampproject.org',
      'https://www-example-com.ampproject.org',
      'https://.cdn.ampproject.org',
      'https://cdn.ampproject.org',
      'https://www-example-com',
      'www-example-com.cdn.ampproject.org',
      `https://${'a'.repeat(10_000)}.cdn.ampproject.org`,
      '',
    ]) {
      expect(set.get(variant), variant).toBeUndefined();
    }
  });

  it('answers correctly while the recent-origin memo turns over', () => {
    const domains = Array.from({ length: 40_000 }, (_, i) => `site${i}.example.com`);
    const set = buildAllowSet(domains, CACHES);
    // Two passes over 80,000 origins: more than the memo holds, so entries
    // are made, remembered, promoted and dropped.
    for (let pass = 0; pass < 2; pass++) {
      for (let i = 0; i < domains.length; i += 1) {
        const cache = CACHES[(i + pass) % 2]!;
        const entry = set.get(`https://site${i}-example-com.${cache.cacheDomain}`);
        if (entry === undefined || entry.publisherDomain !== domains[i] || entry.cache !== cache)
          throw new Error(`wrong entry for ${domains[i]}: ${JSON.stringify(entry)}`);
      }
    }
    expect(set.get('https://site40000-example-com.cdn.ampproject.org')).toBeUndefined();
    // Readable and hashed forms of each domain, on both caches.
    expect(set.size).toBe(160_000);
  });

  it('refuses a malformed domain', () => {
    expect(() => buildAllowSet(['exa mple.com'], CACHES)).toThrow(/Invalid domain/);
    expect(() => buildAllowSet(['1.2.3.4'], CACHES)).toThrow(/Invalid domain/);
  });
});

// Issue 16: the hashed prefixes are indexed at construction by their SHA-256
// digest (first 64 bits sorted, all 256 compared), so the first hashed request
// waits for nothing, and a prefix anyone can write that shares only some
// bits with a configured domain's hash is never taken for it.
describe('the hashed index (issue 16)', () => {
  const domains = ['example.com', 'www.example.com', '⚡😊.com', `${'a'.repeat(60)}.example.com`, 'bücher.de'];
  const set = buildAllowSet(domains, CACHES);
  const hashed = [...set.entries()].filter(([, entry]) => !entry.prefix.includes('-'));
  const digits = 'abcdefghijklmnopqrstuvwxyz234567';

  it('finds every hashed form of every domain, as the reference does', () => {
    const reference = referenceMap(domains, CACHES);
    expect(hashed.length).toBeGreaterThan(domains.length * CACHES.length);
    for (const [origin] of hashed) expect(set.get(origin)).toEqual(reference.get(origin));
  });

  it('the attacker: one digit changed anywhere (first 64 bits kept, or not), or a padding bit set, is no configured hash', () => {
    for (const [origin, entry] of hashed.slice(0, 6)) {
      const suffix = origin.slice(`https://${entry.prefix}`.length);
      for (let at = 0; at < entry.prefix.length; at++) {
        const digit = digits.indexOf(entry.prefix[at] as string);
        // Another digit; at the last position, one differing only in the 4 padding bits as well.
        for (const other of [digits[(digit + 1) % 32], digits[digit ^ 16], digits[digit ^ 1]] as string[]) {
          if (other === entry.prefix[at]) continue;
          const forged = `https://${entry.prefix.slice(0, at)}${other}${entry.prefix.slice(at + 1)}${suffix}`;
          expect(set.get(forged)).toBeUndefined();
        }
      }
      // Uppercase, a digit outside base32, and one digit more or fewer.
      for (const forged of [entry.prefix.toUpperCase(), `${entry.prefix.slice(0, -1)}1`, `${entry.prefix}a`, entry.prefix.slice(0, -1)]) {
        expect(set.get(`https://${forged}${suffix}`)).toBeUndefined();
      }
    }
  });

  it('a domain listed twice, or two domains: the first listed wins, as for readable prefixes', () => {
    const twice = buildAllowSet(['b.example.com', 'a.example.com', 'b.example.com'], CACHES);
    for (const [origin, entry] of twice.entries()) expect(twice.get(origin)).toEqual(entry);
    expect(referenceMap(['b.example.com', 'a.example.com', 'b.example.com'], CACHES)).toEqual(new Map(twice.entries()));
  });
});

// Issue 16: the readable prefixes of domains without `xn` are kept as a 32-bit
// hash and the domain's index, confirmed by computing the form again. The
// attacker's side: a prefix whose hash equals a configured one's (found here by
// the birthday bound among 300,000 names) is never taken for it.
describe('the readable index (issue 16)', () => {
  // Names of two labels of varied lengths (the hash of names that differ in one run of digits rarely collides).
  const nameOf = (n: number) => `${n.toString(36)}.${((n * 7919) % 1_000_003).toString(36)}.com`;
  /** Two different names whose readable prefixes have the same 32-bit hash. */
  function collidingPair(): [string, string] {
    const seen = new Map<number, number>();
    for (let n = 0; n < 300_000; n++) {
      const hash = stringHash(nameOf(n).replaceAll('.', '-'));
      const earlier = seen.get(hash);
      if (earlier !== undefined) return [nameOf(earlier), nameOf(n)];
      seen.set(hash, n);
    }
    throw new Error('no two of 300,000 prefixes share a hash (expected about 10 pairs)');
  }
  const [configured, other] = collidingPair();
  const originOf = (domain: string, cache = CACHES[0]!) => `https://${domain.replaceAll('.', '-')}.${cache.cacheDomain}`;

  it('a prefix with the same hash as a configured one is not allowed, nor reported as that domain', () => {
    expect(configured).not.toBe(other);
    expect(stringHash(configured.replaceAll('.', '-'))).toBe(stringHash(other.replaceAll('.', '-')));
    const set = buildAllowSet([configured, 'example.com'], CACHES);
    expect(set.get(originOf(configured))).toEqual({ publisherDomain: configured, cache: CACHES[0], prefix: configured.replaceAll('.', '-'), form: 'spec' });
    for (const cache of CACHES) expect(set.get(originOf(other, cache))).toBeUndefined();
  });

  it('both configured, in either order: each prefix reports its own domain', () => {
    for (const domains of [
      [configured, other],
      [other, configured],
    ]) {
      const set = buildAllowSet(domains, CACHES);
      for (const domain of domains) expect(set.get(originOf(domain))).toMatchObject({ publisherDomain: domain });
      expect(set.size).toBe(referenceMap(domains, CACHES).size);
    }
  });
});

describe('createRecentMemo', () => {
  it('never holds more than two generations, keeps what is asked for again, and forgets the rest', () => {
    const memo = createRecentMemo<number>(100);
    memo.set('kept', 1);
    for (let i = 0; i < 1000; i++) {
      memo.set(`k${i}`, i);
      expect(memo.size).toBeLessThanOrEqual(200);
      // Asked for once a generation: promoted each time, never dropped.
      if (i % 50 === 0) expect(memo.get('kept')).toBe(1);
    }
    expect(memo.get('k0')).toBeUndefined();
    expect(memo.get('k999')).toBe(999);
  });
});
