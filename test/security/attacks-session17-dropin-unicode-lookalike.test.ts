// Attacker's review, session 17 (helper-108, "attack-dropin2"), fixed by helper fix-idn-lookalike: with credentials, a
// drop-in origin function (or an Express options delegate) that reads the host in Unicode before a loose check —
// `domainToUnicode(new URL(o).hostname).endsWith('bücher.de')` (the suffix's leading dot missing; tr46's toUnicode
// reads it the same) — let https://xn--mebcher-p2a.de (mebücher.de) read credentialed responses through every drop-in:
// kind (b) of lookAlikes glued the canary in ASCII in front of the `xn--` label (`<canary>xn--bcher-kva.de` is no
// punycode, so its Unicode form does not end with `bücher.de`), and kinds (d) and (e) vary the Unicode text's end or
// its runs, never its front. An ASCII brand read in Unicode (`…endsWith('example.com')`) let in évilexample.com
// (xn--vilexample-96a.com) from the attacker's side; an unescaped dot in a pattern over the Unicode host
// (/^www.bücher\.de$/, allowing wwwxbücher.de) was not seen from the publisher's side, kind (c) merging labels in ASCII
// only (`wwwqxn--bcher-kva.de`). Fixed: (b) also glues the canary to an IDN label's Unicode form and writes it back in
// punycode (in Hebrew letters before a right-to-left label, which may hold no Latin letter); (c) also merges the Unicode
// forms of two labels next to a dot when one is an IDN label. The defender's side: a correct Unicode check
// (host === 'bücher.de' || host.endsWith('.bücher.de')) stays accepted, for Latin, Cyrillic, CJK and Hebrew brands.
// Still not covered, as for ASCII hosts: an unescaped dot first met from the look-alike's side (wwwxbücher.de's own
// request asks nothing www.bücher.de would show; every request after the publisher's first is refused).
import { domainToUnicode } from 'node:url';
import { lookAlikes } from '@ampcors/core/legacy-origin-option';
import { parseOrigin } from '@ampcors/core/origin-header';
import { ampCors as expressAmpCors } from '@ampcors/express';
import express from 'express';
import fc from 'fast-check';
import request from 'supertest';
import { toUnicode as tr46ToUnicode } from 'tr46';
import { describe, expect, it } from 'vitest';
import { ADAPTERS, ascii, attackerReads, readsWithCredentials } from './look-alike-adapters.js';

/** The two ways a function reads a host in Unicode: Node's URL helper and UTS #46 (tr46); '' for a host neither reads. */
const READERS = {
  domainToUnicode: (host: string) => domainToUnicode(host),
  tr46: (host: string) => {
    const read = tr46ToUnicode(host, { checkBidi: true, checkHyphens: false, checkJoiners: true, useSTD3ASCIIRules: true });
    return read.error ? '' : read.domain;
  },
} as const;
type Reader = keyof typeof READERS;

/** The origin's host read in Unicode ('' for an origin `new URL` refuses: a function that throws is another matter). */
const unicodeHost = (origin: string, reader: Reader = 'domainToUnicode'): string => {
  try {
    return READERS[reader](new URL(origin).hostname);
  } catch {
    return '';
  }
};

const CASES = [
  // An IDN brand, its subdomains compared in Unicode with the suffix's dot missing.
  { brand: 'bücher.de', publisher: `https://www.${ascii('bücher.de')}`, evil: `https://${ascii('mebücher.de')}` },
  // An ASCII brand, the function reading hosts in Unicode first: the attacker registers an IDN.
  { brand: 'example.com', publisher: 'https://www.example.com', evil: `https://${ascii('évilexample.com')}` },
  // A Cyrillic and a Hebrew brand (the look-alike glued in Hebrew letters: a right-to-left label holds no Latin one).
  { brand: 'пример.рф', publisher: `https://${ascii('пример.рф')}`, evil: `https://${ascii('злойпример.рф')}` },
  { brand: 'שלום.com', publisher: `https://${ascii('שלום.com')}`, evil: `https://${ascii('רעשלום.com')}` },
];

describe.each(ADAPTERS)('$name: a Unicode suffix check without its dot', (adapter) => {
  it.each(CASES)('$evil never reads with credentials, nor the publisher $publisher ($brand)', async ({ brand, publisher, evil }) => {
    for (const reader of Object.keys(READERS) as Reader[]) {
      const allows = (o: string) => unicodeHost(o, reader).endsWith(brand);
      // The function trusts the attacker's registrable name and the publisher's.
      expect([allows(evil), allows(publisher)]).toEqual([true, true]);
      for (const async of [false, true]) {
        for (const from of [evil, publisher]) {
          const seen = await attackerReads(adapter, adapter.originFunction(allows, async), from);
          expect(readsWithCredentials(seen, from)).toBe(false);
        }
      }
    }
  });
});

/** An Express app whose options delegate allows what `allows` allows, with credentials. */
function delegateApp(allows: (origin: string) => boolean): express.Express {
  const app = express();
  app.use(
    expressAmpCors(((req: express.Request, cb: (e: null, o: unknown) => void) => {
      const origin = req.header('Origin');
      cb(null, { origin: origin !== undefined && allows(origin) ? origin : false, credentials: true });
    }) as never),
  );
  app.get('/api', (_req, res) => void res.json({ secret: 1 }));
  app.use((_error: unknown, _req: unknown, res: express.Response, _next: unknown) => void res.status(500).end());
  return app;
}

const credentialsFor = async (app: express.Express, origin: string): Promise<boolean> => {
  const res = await request(app).get('/api').set('Origin', origin);
  return res.headers['access-control-allow-origin'] === origin && res.headers['access-control-allow-credentials'] === 'true';
};

describe('Express options delegate doing the same', () => {
  it.each(CASES)('$evil never reads with credentials, first or after the publisher ($brand)', async ({ brand, publisher, evil }) => {
    const allows = (o: string) => unicodeHost(o).endsWith(brand);
    // The attacker first (a fresh app), then the publisher and the attacker again in another.
    expect(await credentialsFor(delegateApp(allows), evil)).toBe(false);
    const app = delegateApp(allows);
    expect(await credentialsFor(app, publisher)).toBe(false);
    expect(await credentialsFor(app, evil)).toBe(false);
  });
});

describe('an unescaped dot in a pattern over the Unicode host (kind (c) read in Unicode)', () => {
  const allows = (o: string) => /^www.bücher\.de$/.test(unicodeHost(o));
  const publisher = `https://www.${ascii('bücher.de')}`;
  const evil = `https://${ascii('wwwxbücher.de')}`;

  it.each(ADAPTERS)('$name: the publisher is refused, the mistake shown', async (adapter) => {
    expect([allows(publisher), allows(evil)]).toEqual([true, true]);
    for (const async of [false, true]) {
      expect(readsWithCredentials(await attackerReads(adapter, adapter.originFunction(allows, async), publisher), publisher)).toBe(false);
    }
  });

  it('Express delegate: after the publisher, the look-alike is refused too', async () => {
    const app = delegateApp(allows);
    expect(await credentialsFor(app, publisher)).toBe(false);
    expect(await credentialsFor(app, evil)).toBe(false);
  });

  it('the dot between the brand and its suffix too (/^www\\.bücher.de$/ allows www.bücherxde)', async () => {
    const loose = (o: string) => /^www\.bücher.de$/.test(unicodeHost(o));
    expect(loose(`https://www.${ascii('bücherxde')}`)).toBe(true);
    for (const adapter of ADAPTERS) {
      expect(readsWithCredentials(await attackerReads(adapter, adapter.originFunction(loose, false), publisher), publisher)).toBe(false);
    }
  });
});

describe('the defender: a correct Unicode check stays accepted', () => {
  it.each(ADAPTERS)('$name: each brand and its subdomains read with credentials, the look-alikes do not', async (adapter) => {
    for (const { brand, publisher, evil } of CASES) {
      const strict = (o: string) => {
        const host = unicodeHost(o);
        return host === brand || host.endsWith(`.${brand}`);
      };
      for (const async of [false, true]) {
        expect(readsWithCredentials(await attackerReads(adapter, adapter.originFunction(strict, async), publisher), publisher)).toBe(true);
        expect(readsWithCredentials(await attackerReads(adapter, adapter.originFunction(strict, async), evil), evil)).toBe(false);
      }
      // A strict pattern over the Unicode host too (its dots escaped).
      const pattern = new RegExp(`^(www\\.)?${brand.replaceAll('.', '\\.')}$`, 'u');
      const escaped = (o: string) => pattern.test(unicodeHost(o));
      expect(readsWithCredentials(await attackerReads(adapter, adapter.originFunction(escaped, false), publisher), publisher)).toBe(true);
    }
  });
});

// Random brands: one script per label (a browser refuses a right-to-left label holding Latin letters), the attacker
// registering the brand's label with letters of the same script in front (an ASCII brand: a Latin letter with a diacritic).
const SCRIPTS = {
  latin: { letters: 'abcdefghijklmnopqrstuvwxyzäöüéèñçøåœ', prefix: 'éüñøçå', ltr: true },
  cyrillic: { letters: 'абвгдежзиклмнопрстуфхцчшщыэюя', prefix: 'злойдж', ltr: true },
  cjk: { letters: '東京大阪学校日本中文書店音楽', prefix: '悪偽新', ltr: true },
  hebrew: { letters: 'אבגדהוזחטיכלמנסעפצקרשת', prefix: 'רעזד', ltr: false },
  ascii: { letters: 'abcdefghijklmnopqrstuvwxyz', prefix: 'éüñ', ltr: true },
} as const;

/** A brand (`<label>.<tld>`) whose label a browser accepts, the attacker's label, and whether an unescaped-dot look-alike is a name anyone registers. */
const brandArbitrary = fc
  .record({
    script: fc.constantFrom(...(Object.keys(SCRIPTS) as Array<keyof typeof SCRIPTS>)),
    picks: fc.array(fc.nat(), { minLength: 2, maxLength: 12 }),
    prefix: fc.array(fc.nat(), { minLength: 1, maxLength: 3 }),
    tld: fc.constantFrom('de', 'com', 'jp'),
    www: fc.boolean(),
  })
  .map(({ script, picks, prefix, tld, www }) => {
    const { letters, prefix: evilLetters, ltr } = SCRIPTS[script];
    const label = picks.map((n) => [...letters][n % [...letters].length]).join('');
    const front = prefix.map((n) => [...evilLetters][n % [...evilLetters].length]).join('');
    return { brand: `${label}.${tld}`, evilLabel: `${front}${label}.${tld}`, www, ltr };
  })
  .filter(({ brand, evilLabel }) => {
    // Names a browser sends, read back as written (one script per label; the Bidi rule holds).
    try {
      return [brand, evilLabel].every((name) => domainToUnicode(ascii(name)) === name);
    } catch {
      return false;
    }
  });

describe('property: random IDN brands through the four drop-ins', () => {
  it('a Unicode endsWith without the dot and an unescaped dot are refused; a correct Unicode check is accepted', async () => {
    await fc.assert(
      fc.asyncProperty(brandArbitrary, fc.constantFrom(...ADAPTERS), fc.boolean(), async ({ brand, evilLabel, www, ltr }, adapter, async) => {
        const publisher = `https://${www ? 'www.' : ''}${ascii(brand)}`;
        const evil = `https://${ascii(evilLabel)}`;
        const reads = async (allows: (o: string) => boolean, from: string) =>
          readsWithCredentials(await attackerReads(adapter, adapter.originFunction(allows, async), from), from);
        const loose = (o: string) => unicodeHost(o).endsWith(brand);
        expect(loose(evil)).toBe(true);
        expect(await reads(loose, evil)).toBe(false);
        expect(await reads(loose, publisher)).toBe(false);
        // An unescaped dot (between www and the label, or the label and its suffix): its look-alike is a name only
        // in a left-to-right label (a right-to-left one holding a Latin letter is no name anyone registers).
        if (ltr) {
          const escapedBrand = brand.replaceAll('.', '\\.');
          const dotted = www ? new RegExp(`^www.${escapedBrand}$`, 'u') : new RegExp(`^${brand}$`, 'u');
          const unescaped = (o: string) => dotted.test(unicodeHost(o));
          expect(await reads(unescaped, publisher)).toBe(false);
        }
        const strict = (o: string) => {
          const host = unicodeHost(o);
          return host === brand || host.endsWith(`.${brand}`);
        };
        expect(await reads(strict, publisher)).toBe(true);
        expect(await reads(strict, evil)).toBe(false);
      }),
      { numRuns: 60 },
    );
  });
});

describe('the look-alikes of an IDN host stay names a browser sends', () => {
  it('property: every look-alike of a random IDN host (long labels included) is canonical, its labels within 63 characters', () => {
    fc.assert(
      fc.property(brandArbitrary, fc.constantFrom('', 'www.', 'a'.repeat(40) + '.'), fc.nat({ max: 40 }), ({ brand, ltr }, sub, repeat) => {
        // The brand's label lengthened (a label near 63 characters makes (b) and (c) shorten the canary or the merged label).
        const [label, tld] = brand.split('.') as [string, string];
        const long = `${label}${[...label].slice(-1).join('').repeat(repeat)}.${tld}`;
        let host: string;
        try {
          host = ascii(`${sub}${long}`);
        } catch {
          return;
        }
        if (host.split('.').some((part) => part.length > 63)) return;
        const parsed = parseOrigin(`https://${host}`);
        if (!parsed.ok) return;
        // The ASCII merges of kind (c) next to an IDN label may be no punycode (`xn--aa-dsaqde`: `new URL` refuses it, a
        // function throwing on it is taken as a no); the Unicode merges, one per such dot, are names a browser sends.
        let unicodeMerges = 0;
        for (const { origin, confirm, mistake } of lookAlikes(parsed)) {
          for (const twin of confirm === undefined ? [origin] : [origin, confirm]) {
            expect(
              twin
                .slice('https://'.length)
                .split('.')
                .every((part) => part.length <= 63),
            ).toBe(true);
            if (mistake === 'an unescaped dot' && !URL.canParse(twin)) continue;
            expect(new URL(twin).origin).toBe(twin);
            if (mistake === 'an unescaped dot' && /xn--/.test(twin)) unicodeMerges++;
          }
        }
        const labels = host.split('.');
        const idnDots = labels.slice(0, -1).filter((left, i) => i >= labels.length - 3 && (left.startsWith('xn--') || labels[i + 1]?.startsWith('xn--')));
        // (A right-to-left label beside a Latin one makes no name, whatever stands for the dot: not asked.)
        if (ltr) expect(unicodeMerges).toBeGreaterThanOrEqual(idnDots.length);
      }),
      { numRuns: 200 },
    );
  });

  it('a right-to-left label is glued Hebrew letters: its Unicode look-alikes are valid names (the Bidi rule holds)', () => {
    const parsed = parseOrigin(`https://www.${ascii('שלום.com')}`);
    if (!parsed.ok) throw new Error('test origin');
    const idn = lookAlikes(parsed).filter(({ origin }) => /xn--/.test(origin) && origin !== `https://www.${ascii('שלום.com')}`);
    const read = idn.map(({ origin }) => unicodeHost(origin, 'tr46'));
    // The ASCII glue and merges are no Unicode names; the Unicode glue (b) and the continued label (d) are, and end as the brand does.
    expect(read.filter((host) => host.endsWith('שלום.com') && host !== 'www.שלום.com').length).toBeGreaterThanOrEqual(1);
    expect(read.some((host) => /^www\.[\u05d0-\u05ea]{12,}שלום\.com$/.test(host))).toBe(true);
    expect(read.some((host) => /^www\.שלום[\u05d0-\u05ea]{12,}\.com$/.test(host))).toBe(true);
  });
});
