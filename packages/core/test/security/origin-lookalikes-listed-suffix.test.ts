// Kind (i) of lookAlikes (attacker's review, session 17): an allowed name under real public suffixes drawn once per
// process, so that a function trusting the name under every suffix the Public Suffix List holds is caught; and every
// look-alike of a DNS name kept a DNS name, so that a function validating names is asked about names it could trust.
// The data it draws from (src/psl-ancestors.ts's PSL_GENERIC_TLDS and PSL_SIBLINGS) is checked against tldts's
// public API; publisher-rules-psl.test.ts checks the file is what the generator derives.
import fc from 'fast-check';
import { parse } from 'tldts';
import { describe, expect, it } from 'vitest';
import { guardOriginFunction, type LookAlike, lookAlikes } from '../../src/legacy-origin-option.js';
import { type ParsedOrigin, parseOrigin } from '../../src/origin-header.js';
import { PSL_GENERIC_TLDS, PSL_SIBLINGS } from '../../src/psl-ancestors.js';

function parsed(origin: string): ParsedOrigin {
  const result = parseOrigin(origin);
  if (!result.ok) throw new Error(`test origin ${origin} is not canonical`);
  return result;
}

const LISTED = /any public suffix the list holds/;
const listedOf = (origin: string): LookAlike[] => lookAlikes(parsed(origin)).filter(({ mistake }) => LISTED.test(mistake));
const hostOf = (origin: string) => origin.slice(origin.indexOf('//') + 2).replace(/:[0-9]+$/, '');

const TLDS = PSL_GENERIC_TLDS.split(' ');
const SIBLINGS = new Map(
  PSL_SIBLINGS.split(' ').map((entry) => {
    const [tld, pools] = entry.split('/') as [string, string];
    const [icann, own] = (pools.split('|') as [string, string]).map((pool) => (pool === '' ? [] : pool.split(',')));
    return [tld, { icann: icann as string[], private: own as string[] }] as const;
  }),
);

describe('the data kind (i) draws from', () => {
  it('PSL_GENERIC_TLDS: ICANN top-level domains of three letters or more, none of the most common, each making a registrable name', () => {
    expect(TLDS.length).toBeGreaterThan(500);
    for (const common of ['com', 'net', 'org', 'info', 'biz', 'de', 'uk']) expect(TLDS).not.toContain(common);
    for (const tld of TLDS) {
      const read = parse(`example.${tld}`, { allowPrivateDomains: true });
      expect([tld, read.publicSuffix, read.isIcann, read.domainWithoutSuffix]).toEqual([tld, tld, true, 'example']);
    }
  });
  it('PSL_SIBLINGS: rules of their section under their top-level domain, each making a registrable name, three or more per section', () => {
    // The restricted second levels, not the open ones a brand's list names several of (co.uk, org.uk, me.uk).
    expect(SIBLINGS.get('uk')?.icann).toEqual(expect.arrayContaining(['ac', 'gov', 'nhs']));
    for (const open of ['co', 'org', 'me', 'ltd', 'net', 'plc']) expect(SIBLINGS.get('uk')?.icann).not.toContain(open);
    expect(SIBLINGS.get('io')?.private.length).toBeGreaterThanOrEqual(3);
    for (const [tld, pools] of SIBLINGS) {
      for (const [section, labels] of [
        ['icann', pools.icann],
        ['private', pools.private],
      ] as const) {
        expect(labels.length === 0 || (labels.length >= 3 && labels.length <= 8), `${tld} ${section}`).toBe(true);
        for (const label of labels) {
          const read = parse(`example.${label}.${tld}`, { allowPrivateDomains: true });
          expect([read.publicSuffix, read.domainWithoutSuffix, section === 'private' ? read.isPrivate : read.isIcann], `${label}.${tld}`).toEqual([
            `${label}.${tld}`,
            'example',
            true,
          ]);
        }
      }
    }
  });
});

describe('kind (i): the name under other real suffixes, drawn once per process', () => {
  it('replaces a suffix of one label by two pairs of generic top-level domains, the same for every origin of the process, never its own', () => {
    const tldOf = (origin: string) => hostOf(origin).slice(hostOf(origin).lastIndexOf('.') + 1);
    const tldsOf = (origin: string) => listedOf(origin).flatMap(({ origin: twin, confirm }) => [tldOf(twin), tldOf(confirm as string)]);
    const drawn = tldsOf('https://www.example.com');
    expect(drawn).toHaveLength(4);
    expect(new Set(drawn).size).toBe(4);
    for (const tld of drawn) expect(TLDS).toContain(tld);
    expect(listedOf('https://www.example.com')[1]).toMatchObject({ origin: `https://www.example.${drawn[2]}`, confirm: `https://www.example.${drawn[3]}` });
    // The same four for another name and suffix, under its own subdomains, scheme and port.
    expect(listedOf('http://a.b.shop.de:8080').map(({ origin }) => origin)).toEqual([`http://a.b.shop.${drawn[0]}:8080`, `http://a.b.shop.${drawn[2]}:8080`]);
    // An origin under a drawn one is asked about four others (the fifth drawn in its place), never about itself.
    for (const own of drawn) {
      const asked = tldsOf(`https://example.${own}`);
      expect(asked).not.toContain(own);
      expect(new Set(asked).size).toBe(4);
      expect(asked.filter((tld) => drawn.includes(tld))).toHaveLength(3);
    }
  });
  it('replaces a suffix of two labels also by two other rules of its top-level domain and section', () => {
    for (const [origin, tld, section] of [
      ['https://www.example.co.uk', 'uk', 'icann'],
      ['https://example.me.uk', 'uk', 'icann'],
      ['https://example.github.io', 'io', 'private'],
      ['https://my-app.vercel.app', 'app', 'private'],
      ['https://shop.com.au', 'au', 'icann'],
    ] as const) {
      const found = listedOf(origin);
      expect(found, origin).toHaveLength(3);
      const { origin: twin, confirm } = found[2] as LookAlike;
      const [own, ...rest] = (parse(hostOf(origin), { allowPrivateDomains: true }).publicSuffix as string).split('.');
      expect(rest.join('.')).toBe(tld);
      const pool = (SIBLINGS.get(tld) as { icann: string[]; private: string[] })[section];
      const labels = [twin, confirm as string].map((text) => {
        const suffix = parse(hostOf(text), { allowPrivateDomains: true }).publicSuffix as string;
        expect(suffix.endsWith(`.${tld}`), text).toBe(true);
        return suffix.slice(0, suffix.indexOf('.'));
      });
      expect(labels[0]).not.toBe(labels[1]);
      for (const label of labels) {
        expect(pool).toContain(label);
        expect(label).not.toBe(own);
      }
    }
  });
  it('still catches a function reading an older copy of the list, one lacking the first pair drawn (psl 1.15 lacks hotel and web)', () => {
    const [first] = listedOf('https://www.example.com') as [LookAlike];
    const lacking = new Set([first.origin, first.confirm as string].map((o) => hostOf(o).slice(hostOf(o).lastIndexOf('.') + 1)));
    const older = (o: string) => {
      const read = parse(hostOf(o), { allowPrivateDomains: true });
      return read.isIcann === true && read.domainWithoutSuffix === 'example' && !lacking.has(read.publicSuffix as string);
    };
    const source = guardOriginFunction(older, true)();
    expect(() => source.verify('https://www.example.com')).toThrow(/any public suffix the list holds/);
  });
  it('is not asked for a suffix the list does not hold (a function trusting listed suffixes never allowed it), nor for an IP address', () => {
    for (const origin of [
      'https://a.example',
      'https://app.internal',
      'http://printer.local',
      'http://localhost:3000',
      'http://192.168.1.20',
      'https://[fd12::1]',
    ]) {
      expect(listedOf(origin), origin).toEqual([]);
    }
  });
  it('catches a function trusting the name under any listed suffix, and none listing exact origins (property)', () => {
    const suffix = fc.constantFrom(...TLDS, ...[...SIBLINGS].flatMap(([tld, { icann }]) => icann.map((label) => `${label}.${tld}`)), 'com', 'de', 'co.uk');
    fc.assert(
      fc.property(fc.stringMatching(/^[a-z][a-z0-9]{2,14}$/), suffix, fc.uniqueArray(suffix, { maxLength: 10 }), (name, own, others) => {
        const origin = `https://${name}.${own}`;
        fc.pre(parse(hostOf(origin)).domainWithoutSuffix === name);
        const trustsAll = (o: string) => {
          const read = parse(hostOf(o), { allowPrivateDomains: true });
          return (read.isIcann === true || read.isPrivate === true) && read.domainWithoutSuffix === name;
        };
        const twins = lookAlikes(parsed(origin));
        expect(twins.some((twin) => trustsAll(twin.origin) && trustsAll(twin.confirm ?? twin.origin))).toBe(true);
        // A list of the name under a few suffixes allows a look-alike and its confirmation only when it names both.
        const list = new Set([origin, ...others.map((after) => `https://${name}.${after}`)]);
        for (const twin of twins) {
          if (list.has(twin.origin) && list.has(twin.confirm ?? twin.origin)) expect(twin.confirm, twin.origin).toBeDefined();
        }
      }),
      { numRuns: 300 },
    );
  });
});

describe('look-alikes stay DNS names', () => {
  const dnsName = (twin: LookAlike) => {
    for (const text of [twin.origin, twin.confirm ?? twin.origin]) {
      const host = hostOf(text);
      expect(host.length, text).toBeLessThanOrEqual(253);
      for (const label of host.split('.')) expect(label.length, text).toBeLessThanOrEqual(63);
    }
  };
  it('a label of 63 characters: the canary glued before it keeps its tail, continued after it keeps its head', () => {
    const label = `k${'x'.repeat(55)}example`;
    expect(label).toHaveLength(63);
    const twins = lookAlikes(parsed(`https://${label}.com`));
    twins.forEach(dnsName);
    // (b): random letters, then the label's last characters (what a suffix match without its dot reads).
    expect(twins.some(({ origin }) => /^https:\/\/[a-z]{12,}x+example\.com$/.test(origin) && hostOf(origin) !== `${label}.com`)).toBe(true);
    const head = `example${'x'.repeat(56)}`;
    const heads = lookAlikes(parsed(`https://${head}.com`));
    heads.forEach(dnsName);
    // (d): the label's first characters, then the canary's twelve random letters or digits.
    expect(heads.filter(({ origin }) => new RegExp(`^https://example x{44}[a-z0-9]{12}\\.com$`.replace(' ', '')).test(origin)).length).toBeGreaterThanOrEqual(
      2,
    );
  });
  it('a host of 253 characters: extended within 253, its leftmost labels shortened for the others', () => {
    const host = `${`${'a'.repeat(61)}.`.repeat(3)}${'b'.repeat(53)}.example.co.uk`;
    expect(host).toHaveLength(253);
    const twins = lookAlikes(parsed(`https://${host}`));
    twins.forEach(dnsName);
    // (a) still extends the host's start (what a prefix check reads), the others keep the varied registrable domain whole.
    expect(hostOf((twins[0] as LookAlike).origin).startsWith(`${'a'.repeat(61)}.`)).toBe(true);
    expect(hostOf((twins[0] as LookAlike).origin).endsWith('.invalid')).toBe(true);
    for (const twin of listedOf(`https://${host}`)) expect(hostOf(twin.origin)).toMatch(/\.example\.[a-z.]+$/);
  });
  it('two labels made one by (c) lose their first characters past 63', () => {
    const twins = lookAlikes(parsed(`https://${'w'.repeat(60)}.example.com`));
    twins.forEach(dnsName);
    expect(twins.map(({ origin }) => origin)).toContain(`https://${'w'.repeat(55)}qexample.com`);
  });
});
