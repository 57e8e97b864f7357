// Attacker's review, session 17 (helper-96), fixed by helper fix-listed-suffix: with credentials, a drop-in origin
// function (or an Express options delegate) that trusts the brand's label under any public suffix the Public Suffix
// List holds — tldts's `(isIcann || isPrivate) && domainWithoutSuffix === 'example'`, parse-domain's README
// (`type === Listed && domain === 'example'`), psl's `listed && sld === 'example'` — let https://example.xyz,
// example.github.io, example.vercel.app, example.pages.dev and example.me.uk read credentialed responses through every
// drop-in: the look-alikes varying the public suffix (kind (f) of lookAlikes: example.qqq, example.qq.uk) are suffixes
// no list holds, so such a function said no to every one. Fixed by kind (i): the suffix replaced whole by real ones
// drawn once per process (generic top-level domains; other rules of the same top-level domain and section).
// Also here, the attacker's second lead: a look-alike that outgrows a DNS label (a canary glued to a 39-letter label)
// or name (a host near 253 characters) is refused by a function validating names (tldts returns null for a label of
// 64 characters), so `getDomain(host)?.endsWith('example.com')` let https://<33 letters>example.com through. Fixed:
// every look-alike stays a DNS name. The defender's side: exact lists, sets, RegExps naming a few suffixes and proper
// subdomain checks stay accepted, whatever suffixes a process draws.
import { createRequire } from 'node:module';
import { guardOriginFunction, lookAlikes } from '@ampcors/core/legacy-origin-option';
import { parseOrigin } from '@ampcors/core/origin-header';
import { PSL_GENERIC_TLDS, PSL_SIBLINGS } from '@ampcors/core/psl-ancestors';
import { ampCors as expressAmpCors } from '@ampcors/express';
import express from 'express';
import fc from 'fast-check';
import request from 'supertest';
import { describe, expect, it } from 'vitest';
import { ADAPTERS, attackerReads, type Seen } from './look-alike-adapters.js';

interface TldtsResult {
  readonly domain: string | null;
  readonly domainWithoutSuffix: string | null;
  readonly publicSuffix: string | null;
  readonly isIcann: boolean | null;
  readonly isPrivate: boolean | null;
}
const coreRequire = createRequire(new URL('../../packages/core/package.json', import.meta.url));
const tldts = coreRequire('tldts') as {
  parse(host: string, options?: { allowPrivateDomains?: boolean }): TldtsResult;
  getDomain(host: string, options?: { allowPrivateDomains?: boolean }): string | null;
};

const hostOf = (origin: string): string => new URL(origin).hostname;

/** The brand under any listed suffix, the list's private section included (github.io, vercel.app, me.uk...). */
const brandAnyListed = (origin: string): boolean => {
  const r = tldts.parse(hostOf(origin), { allowPrivateDomains: true });
  return (r.isIcann === true || r.isPrivate === true) && r.domainWithoutSuffix === 'example';
};
/** The same with tldts's default (ICANN section only: example.xyz, example.me.uk, not example.github.io). */
const brandAnyIcann = (origin: string): boolean => {
  const r = tldts.parse(hostOf(origin));
  return r.isIcann === true && r.domainWithoutSuffix === 'example';
};
/** The brand under any listed suffix of the private section only (a "preview deployments" check). */
const brandAnyPrivate = (origin: string): boolean => {
  const r = tldts.parse(hostOf(origin), { allowPrivateDomains: true });
  return r.isPrivate === true && r.domainWithoutSuffix === 'example';
};
/** The brand under any listed suffix ending in .uk. */
const brandAnyUk = (origin: string): boolean => {
  const r = tldts.parse(hostOf(origin));
  return r.isIcann === true && r.domainWithoutSuffix === 'example' && r.publicSuffix !== null && r.publicSuffix.endsWith('.uk');
};

/** Sites anyone can get: an unclaimed TLD, free hosting names (the list's private section), a UK second level. */
const ATTACKERS = ['https://example.xyz', 'https://example.github.io', 'https://example.vercel.app', 'https://example.pages.dev', 'https://example.me.uk'];

const FUNCTIONS: ReadonlyArray<readonly [string, (origin: string) => boolean]> = [
  ['tldts, private section included', brandAnyListed],
  ['tldts, ICANN section', brandAnyIcann],
  ['tldts, private section only', brandAnyPrivate],
  ['tldts, any .uk suffix', brandAnyUk],
];

/** Never the attacker's origin with credentials. */
const safe = (seen: Seen | 'refused at construction', evil: string) => expect(seen).not.toMatchObject({ acao: evil, credentials: 'true' });

describe.each(ADAPTERS)('$name: a function trusting the brand under every listed public suffix', (adapter) => {
  for (const [name, allows] of FUNCTIONS) {
    const trusted = ATTACKERS.filter(allows);
    it(`${name}: ${trusted.join(', ')} never read with credentials, from the attacker's side (a fresh process)`, async () => {
      expect(trusted.length).toBeGreaterThan(0);
      for (const evil of trusted) {
        for (const async of [false, true]) safe(await attackerReads(adapter, adapter.originFunction(allows, async), evil), evil);
      }
    });
  }
  it("the brand's own request fails, and so does every attacker's after it", async () => {
    for (const own of ['https://www.example.co.uk', 'https://example.com', 'https://shop.example.de']) {
      const seen = await attackerReads(adapter, adapter.originFunction(brandAnyListed, false), own);
      expect(seen).not.toMatchObject({ credentials: 'true' });
    }
  });
});

describe('Express options delegate doing the same', () => {
  const app = (allows: (origin: string) => boolean) => {
    const served = express();
    served.use(
      expressAmpCors(((req: express.Request, cb: (e: null, o: unknown) => void) => {
        const origin = req.header('Origin');
        cb(null, { origin: origin !== undefined && allows(origin) ? origin : false, credentials: true });
      }) as never),
    );
    served.get('/api', (_req, res) => void res.json({ secret: 1 }));
    served.use((_error: unknown, _req: unknown, res: express.Response, _next: unknown) => void res.status(500).end());
    return served;
  };
  for (const [name, allows] of FUNCTIONS) {
    it.each(ATTACKERS.filter(allows))(`${name}: %s never reads with credentials`, async (evil) => {
      const res = await request(app(allows)).get('/api').set('Origin', evil);
      expect({ acao: res.headers['access-control-allow-origin'], credentials: res.headers['access-control-allow-credentials'] }).not.toEqual({
        acao: evil,
        credentials: 'true',
      });
    });
  }
});

describe('the second lead: every look-alike stays a DNS name, so a function validating names says no only to what it does not trust', () => {
  /** A suffix match without its dot, through a name-validating parser (tldts: null for a label over 63 characters). */
  const endsWithNoDot = (origin: string) => tldts.getDomain(hostOf(origin))?.endsWith('example.com') === true;
  it.each([33, 39, 50, 56])("https://<%i letters>example.com, the attacker's own label, never reads with credentials", async (letters) => {
    const evil = `https://${'k'.repeat(letters)}example.com`;
    expect(endsWithNoDot(evil)).toBe(true);
    for (const adapter of ADAPTERS) {
      for (const async of [false, true]) safe(await attackerReads(adapter, adapter.originFunction(endsWithNoDot, async), evil), evil);
    }
  });
  it('a host near 253 characters under a listed suffix never reads with credentials', async () => {
    const sub = `${'a'.repeat(61)}.`.repeat(3);
    for (const evil of [`https://${sub}${'b'.repeat(55)}.example.xyz`, `https://${sub}${'b'.repeat(53)}.example.me.uk`]) {
      expect(hostOf(evil).length).toBeGreaterThan(240);
      expect(hostOf(evil).length).toBeLessThanOrEqual(253);
      /** Any listed suffix, names over 253 characters refused (as psl's DOMAIN_TOO_LONG). */
      const validating = (origin: string) => hostOf(origin).length <= 253 && brandAnyListed(origin);
      expect(validating(evil)).toBe(true);
      for (const adapter of ADAPTERS) safe(await attackerReads(adapter, adapter.originFunction(validating, false), evil), evil);
    }
  });
  it("a validating function with a wildcard after the name's start or between hyphens never lets a 63-character label read", async () => {
    const valid = (origin: string) => tldts.getDomain(hostOf(origin)) !== null;
    for (const [evil, allows] of [
      // A prefix match inside the label (`example[a-z]*`), through a name-validating parser.
      [`https://example${'k'.repeat(56)}.com`, (o: string) => valid(o) && /^https:\/\/example[a-z0-9]*\.com$/.test(o)],
      // A wildcard between two hyphens of a preview name.
      [`https://myapp-${'k'.repeat(52)}-team.vercel.app`, (o: string) => valid(o) && /^https:\/\/myapp-[a-z0-9]+-team\.vercel\.app$/.test(o)],
      // An IDN label continued (bücher + 49 letters is a 63-character punycode label).
      [
        `https://${tldts.getDomain('x.xn--bcher-kva.de') === null ? '' : ''}${new URL(`https://bücher${'k'.repeat(49)}.de`).hostname}`,
        (o: string) => valid(o) && /^https:\/\/xn--bcher[a-z0-9]*-[a-z0-9]+\.de$/.test(o),
      ],
    ] as const) {
      for (const part of hostOf(evil).split('.')) expect(part.length).toBeLessThanOrEqual(63);
      expect(allows(evil), evil).toBe(true);
      for (const adapter of ADAPTERS) safe(await attackerReads(adapter, adapter.originFunction(allows, false), evil), evil);
    }
  });
  it('no look-alike of a valid host has a label over 63 characters or a name over 253', () => {
    const short = fc.stringMatching(/^[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?$/).filter((l) => !/^..--/.test(l));
    const long = fc
      .integer({ min: 40, max: 63 })
      .chain((n) => fc.stringMatching(new RegExp(`^[a-z0-9][a-z0-9-]{${n - 2}}[a-z0-9]$`)).filter((l) => !/^..--/.test(l)));
    const idn = fc
      .integer({ min: 1, max: 56 })
      .map((n) => new URL(`https://bücher-${'k'.repeat(n)}.de`).hostname.split('.')[0] as string)
      .filter((l) => l.length <= 63);
    const label = fc.oneof(short, long, idn);
    fc.assert(
      fc.property(
        fc.array(label, { minLength: 0, maxLength: 5 }),
        fc.constantFrom('com', 'co.uk', 'github.io', 'vercel.app', 'de', 'xyz'),
        (labels, suffix) => {
          const host = [...labels, suffix].join('.');
          fc.pre(host.length <= 253 && labels.length > 0);
          const parsed = parseOrigin(`https://${host}`);
          fc.pre(parsed.ok);
          if (!parsed.ok) return;
          for (const twin of lookAlikes(parsed)) {
            for (const origin of [twin.origin, twin.confirm ?? twin.origin]) {
              // Read by hand: a look-alike of (c) may be no valid IDN (`xn--bcher-kvaqde`), which URL refuses.
              const name = origin.slice(origin.indexOf('//') + 2).replace(/:[0-9]+$/, '');
              expect(name.length, origin).toBeLessThanOrEqual(253);
              for (const part of name.split('.')) expect(part.length, origin).toBeLessThanOrEqual(63);
            }
          }
        },
      ),
      { numRuns: 300 },
    );
  });
});

describe('strict configurations stay accepted, whatever the process drew', () => {
  /** A brand's real sites under many suffixes, as a strict list names them. */
  const SITES = [
    'https://example.com',
    'https://www.example.com',
    'https://example.de',
    'https://example.co.uk',
    'https://www.example.co.uk',
    'https://example.fr',
    'https://example.net',
    'https://example.org',
    'https://example.github.io',
  ];
  const strict: ReadonlyArray<readonly [string, (origin: string) => boolean]> = [
    ['a function listing exact origins', (o) => SITES.includes(o)],
    ['a Set of origins', (o) => new Set(SITES).has(o)],
    ['a RegExp naming three suffixes', (o) => /^https:\/\/(www\.)?example\.(com|de|co\.uk)$/.test(o)],
    [
      'a proper subdomain check',
      (o) => {
        const h = hostOf(o);
        return o.startsWith('https://') && (h === 'example.com' || h.endsWith('.example.com'));
      },
    ],
  ];
  for (const [name, allows] of strict) {
    it(`${name}: its origins read with credentials through every drop-in`, async () => {
      for (const own of SITES.filter(allows)) {
        for (const adapter of ADAPTERS) {
          for (const async of [false, true]) {
            const seen = await attackerReads(adapter, adapter.originFunction(allows, async), own);
            expect(seen, `${adapter.name} ${own}`).toMatchObject({ acao: own, credentials: 'true' });
          }
        }
      }
    });
  }
  it("a brand's UK sites under every open second level (co, org, me, ltd, net, plc) read with credentials in every process", async () => {
    const uk = ['co', 'org', 'me', 'ltd', 'net', 'plc'].map((level) => `https://example.${level}.uk`);
    for (const adapter of ADAPTERS) {
      for (const own of uk)
        expect(
          await attackerReads(
            adapter,
            adapter.originFunction((o) => uk.includes(o), false),
            own,
          ),
        ).toMatchObject({ acao: own, credentials: 'true' });
    }
  });
  it('the same RegExp as a static option', async () => {
    const pattern = /^https:\/\/(www\.)?example\.(com|de|co\.uk)$/;
    for (const adapter of ADAPTERS.filter((a) => a.patterns)) {
      for (const own of ['https://example.com', 'https://www.example.co.uk'])
        expect(await adapter.reads(pattern, own)).toMatchObject({ acao: own, credentials: 'true' });
    }
  });
});

describe('property: drawn from the real list', () => {
  const tlds = PSL_GENERIC_TLDS.split(' ');
  const siblings = PSL_SIBLINGS.split(' ').flatMap((entry) => {
    const [tld, pools] = entry.split('/') as [string, string];
    return pools
      .split(/[|,]/)
      .filter((l) => l !== '')
      .map((label) => `${label}.${tld}`);
  });
  const suffixes = [...tlds, ...siblings, 'com', 'de', 'co.uk', 'fr', 'jp', 'com.au'];
  const suffix = fc.constantFrom(...suffixes);
  const brand = fc.stringMatching(/^[a-z][a-z0-9]{2,14}$/);
  /** The guard's verdict for `origin` under `allows` (synchronous answers): 'credentials', 'denied', or the refusal's message. */
  const judged = (allows: (origin: string) => boolean, origin: string): string => {
    try {
      const source = guardOriginFunction((o) => allows(o), true)();
      const verdict = source.verify(origin) as { allowed: boolean };
      return verdict.allowed ? 'credentials' : 'denied';
    } catch (error) {
      expect(String(error)).toMatch(/unsafe-configuration|together with credentials/);
      return String(error);
    }
  };
  it("a function trusting a brand under every listed suffix is refused, from its own side and the attacker's", () => {
    fc.assert(
      fc.property(brand, suffix, fc.constantFrom('', 'www.', 'app.'), (name, after, sub) => {
        const origin = `https://${sub}${name}.${after}`;
        const registrable = tldts.parse(hostOf(origin), { allowPrivateDomains: true });
        fc.pre(registrable.domainWithoutSuffix === name);
        const allows = (o: string) => {
          const r = tldts.parse(hostOf(o), { allowPrivateDomains: true });
          return (r.isIcann === true || r.isPrivate === true) && r.domainWithoutSuffix === name;
        };
        expect(allows(origin)).toBe(true);
        expect(judged(allows, origin), origin).toMatch(/a look-alike anyone could register/);
      }),
      { numRuns: 200 },
    );
  });
  it('a function listing a random finite set of real origins is accepted for each of them', () => {
    fc.assert(
      fc.property(brand, fc.uniqueArray(suffix, { minLength: 1, maxLength: 40 }), fc.constantFrom('', 'www.'), (name, afters, sub) => {
        const listed = afters.map((after) => `https://${sub}${name}.${after}`).filter((o) => parseOrigin(o).ok);
        const allows = (o: string) => listed.includes(o);
        for (const origin of listed.slice(0, 4)) {
          const verdict = judged(allows, origin);
          // A list naming both suffixes the process drew is the wildcard it spells out (about 1 in 10^4 lists of 40):
          // refused only then, the look-alike named being one of the list's own origins.
          if (verdict !== 'credentials') expect(listed, verdict).toContain(/also (\S+), a look-alike/.exec(verdict)?.[1]);
        }
      }),
      { numRuns: 150 },
    );
  });
});
