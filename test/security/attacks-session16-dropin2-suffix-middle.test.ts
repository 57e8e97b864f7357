// Attacker's review, session 16 (helper-77), fixed by helper fix-lookalikes: with credentials, a drop-in origin option
// whose wildcard sits over a label of the public suffix (`/^https:\/\/my-app\.[a-z]+\.(app|dev)$/` for my-app.vercel.app
// and my-app.pages.dev, `example\.[a-z]+\.uk` for example.co.uk) let `https://my-app.netlify.app` and
// `https://example.me.uk` read credentialed responses through every drop-in and the Express options delegate: the
// look-alikes never varied a public suffix's middle label, and from the attacker's side `example.me.uk` is its own
// registrable domain whose only varied label is written literally in the pattern. Also here, the attacker's untested
// idea: an IDN (`xn--`) label was never varied but for its TLD, so a length-bounded wildcard (`[a-z0-9-]{1,63}\.de`)
// passed an IDN label too long to carry the canary, and an IDN TLD was never varied (`example\.[a-z0-9-]+`).
// The defender's side: literal suffixes, lists and S3's regional endpoints (Amazon's own names) stay accepted.
import { createRequire } from 'node:module';
import { AmpCorsError } from '@ampcors/core';
import { compileOriginOption } from '@ampcors/core/adapter';
import { guardOriginFunction } from '@ampcors/core/legacy-origin-option';
import { parseOrigin } from '@ampcors/core/origin-header';
import { PSL_ANCESTORS } from '@ampcors/core/psl-ancestors';
import { ampCors as expressAmpCors } from '@ampcors/express';
import express from 'express';
import fc from 'fast-check';
import request from 'supertest';
import { describe, expect, it } from 'vitest';
import { ADAPTERS, attackerReads } from './look-alike-adapters.js';

const coreRequire = createRequire(new URL('../../packages/core/package.json', import.meta.url));
const tldts = coreRequire('tldts') as {
  getDomain(host: string, options: { allowPrivateDomains: boolean }): string | null;
  getPublicSuffix(host: string, options: { allowPrivateDomains: boolean }): string | null;
};
const punycode = coreRequire('punycode/punycode.js') as { toASCII(input: string): string };

/** Long IDN labels a stranger may register (39 to 63 characters of punycode), a canary glued to them exceeds 63. */
const LONG_IDN = punycode.toASCII('straßenbahnhaltestellenverkehrsbetriebe'); // xn--straenbahnhaltestellenverkehrsbetriebe-89c
const LONG_CJK = punycode.toASCII('日本語のとても長いドメイン名前です'); // no ASCII letter at all

/** [pattern, an origin its author meant, an origin anyone can register that it also allows]. */
const LOOSE: ReadonlyArray<readonly [RegExp, string, string]> = [
  [/^https:\/\/example\.[a-z]+\.uk$/, 'https://example.co.uk', 'https://example.me.uk'],
  [/^https:\/\/(www\.)?example\.[a-z]{2,3}\.uk$/, 'https://www.example.co.uk', 'https://example.me.uk'],
  [/^https:\/\/example\.[a-z]+\.au$/, 'https://example.com.au', 'https://example.id.au'],
  [/^https:\/\/example\.(co|com)?\.?[a-z]+$/, 'https://example.com', 'https://example.co.qq'],
  [/^https:\/\/example\.\w+\.jp$/, 'https://example.co.jp', 'https://example.ne.jp'],
  [/^https:\/\/my-app\.[a-z]+\.(app|dev)$/, 'https://my-app.vercel.app', 'https://my-app.netlify.app'],
  [/^https:\/\/example\.[a-z0-9-]+\.cn$/, 'https://example.com.cn', 'https://example.xn--55qx5d.cn'],
  // The IDN idea: a DNS-label wildcard over the registrable label, and a wildcard TLD, seen from a long IDN / an IDN TLD.
  [/^https:\/\/[a-z0-9-]{1,63}\.de$/, 'https://example.de', `https://${LONG_IDN}.de`],
  [/^https:\/\/(www\.)?[a-z0-9-]{1,63}\.de$/, 'https://www.example.de', `https://${LONG_CJK}.de`],
  [/^https:\/\/example\.[a-z0-9-]+$/, 'https://example.com', 'https://example.xn--p1ai'],
  // One-character labels of the suffix (Sweden's county letters, Bulgaria's letters and digits: a.se, x.se, 0.bg are PSL entries).
  [/^https:\/\/example\.[a-z0-9-]+\.se$/, 'https://example.a.se', 'https://example.x.se'],
  [/^https:\/\/example\.[a-z]\.se$/, 'https://example.x.se', 'https://example.a.se'],
  [/^https:\/\/example\.[0-9]\.bg$/, 'https://example.0.bg', 'https://example.9.bg'],
  [/^https:\/\/example\.[a-z0-9-]+\.bg$/, 'https://example.0.bg', 'https://example.x.bg'],
];

const SEEN_WITH_CREDENTIALS = (origin: string) => ({ status: 200, acao: origin, credentials: 'true' });

describe.each(ADAPTERS)('$name: a wildcard over a label of the public suffix never lets the attacker read with credentials', (adapter) => {
  const rows = LOOSE.flatMap(([pattern, own, evil]) => [
    ...(adapter.patterns ? [[`${String(pattern)} RegExp`, pattern, own, evil] as const] : []),
    [`${String(pattern)} function`, adapter.originFunction((o) => pattern.test(o), false), own, evil] as const,
    [`${String(pattern)} async function`, adapter.originFunction((o) => pattern.test(o), true), own, evil] as const,
  ]);
  it.each(rows)('%s: the attacker first, then the publisher, each on a fresh app', async (_name, origin, own, evil) => {
    // Each call builds a fresh app: the attacker's request is judged from its own side, with nothing learnt before.
    const attacker = await attackerReads(adapter, origin, evil);
    expect(attacker).not.toMatchObject({ credentials: 'true' });
    const publisher = await attackerReads(adapter, origin, own);
    expect(publisher).not.toMatchObject({ acao: own, credentials: 'true' });
  });
});

describe('Express options delegate answering a loose pattern with credentials', () => {
  it.each(LOOSE)('%s: neither %s nor %s reads with credentials', async (pattern, own, evil) => {
    const app = express();
    app.use(expressAmpCors(((_req: unknown, cb: (e: null, o: unknown) => void) => cb(null, { origin: pattern, credentials: true })) as never));
    app.get('/api', (_req, res) => void res.json({ secret: 1 }));
    app.use((_error: unknown, _req: unknown, res: express.Response, _next: unknown) => void res.status(500).end());
    for (const from of [evil, own]) {
      const res = await request(app).get('/api').set('Origin', from);
      expect(res.headers['access-control-allow-credentials']).toBeUndefined();
      expect(res.headers['access-control-allow-origin']).toBeUndefined();
    }
  });
});

/** [how the option is written, the pattern or list, the origins it must still give credentialed responses]. */
const STRICT: ReadonlyArray<readonly [string, RegExp | readonly string[], readonly string[]]> = [
  ['an optional www. and a literal co.uk', /^https:\/\/(www\.)?example\.co\.uk$/, ['https://www.example.co.uk', 'https://example.co.uk']],
  ['an alternation of two second-level labels', /^https:\/\/example\.(co|org)\.uk$/, ['https://example.co.uk', 'https://example.org.uk']],
  ['an exact list of siblings under .uk', ['https://example.co.uk', 'https://example.me.uk', 'https://example.org.uk'], ['https://example.me.uk']],
  ['a literal preview host', /^https:\/\/my-app\.vercel\.app$/, ['https://my-app.vercel.app']],
  ['an alternation of two platforms', /^https:\/\/my-app\.(vercel|netlify)\.app$/, ['https://my-app.vercel.app', 'https://my-app.netlify.app']],
  ['an exact list of two platforms', ['https://my-app.vercel.app', 'https://my-app.pages.dev'], ['https://my-app.pages.dev']],
  // S3's regional endpoints are Amazon's names (amazonaws.com is no public suffix): a bucket's name is the same everywhere.
  ['a bucket in every S3 region', /^https:\/\/bucket\.s3\.[a-z0-9-]+\.amazonaws\.com$/, ['https://bucket.s3.us-west-2.amazonaws.com']],
  ['a literal IDN under .de', /^https:\/\/(www\.)?xn--bcher-kva\.de$/, ['https://www.xn--bcher-kva.de', 'https://xn--bcher-kva.de']],
  ['a literal long IDN', new RegExp(`^https://${LONG_IDN}\\.de$`), [`https://${LONG_IDN}.de`]],
  ['a literal IDN second-level suffix', /^https:\/\/example\.xn--55qx5d\.cn$/, ['https://example.xn--55qx5d.cn']],
  ['a literal one-letter suffix label', /^https:\/\/example\.a\.se$/, ['https://example.a.se']],
  ['an alternation of two one-letter suffix labels', /^https:\/\/example\.(a|b)\.se$/, ['https://example.a.se', 'https://example.b.se']],
  ['a literal one-digit suffix label', /^https:\/\/(www\.)?example\.0\.bg$/, ['https://www.example.0.bg', 'https://example.0.bg']],
  [
    'an exact list of one-character suffix labels',
    ['https://example.a.se', 'https://example.x.se', 'https://example.0.bg'],
    ['https://example.x.se', 'https://example.0.bg'],
  ],
];

describe.each(ADAPTERS)('$name: strict options over multi-label suffixes stay accepted', (adapter) => {
  const rows = STRICT.flatMap(([name, option, origins]) => {
    const allows = (o: string) => (option instanceof RegExp ? option.test(o) : option.includes(o));
    return [
      ...(adapter.patterns ? [[`${name} (as given)`, option, origins] as const] : []),
      [`${name} (function)`, adapter.originFunction(allows, false), origins] as const,
      [`${name} (async function)`, adapter.originFunction(allows, true), origins] as const,
    ];
  });
  it.each(rows)('%s', async (_name, option, origins) => {
    for (const origin of origins) expect(await adapter.reads(option, origin)).toEqual(SEEN_WITH_CREDENTIALS(origin));
    // Still no look-alike: a stranger's sibling name reads nothing.
    expect(await adapter.reads(option, 'https://example.qq.uk')).not.toMatchObject({ credentials: 'true' });
  });
});

/** Multi-label public suffixes of the PSL as bundled (tldts), each with the registrable name `example.<suffix>`. */
const SUFFIXES: readonly string[] = PSL_ANCESTORS.split(' ')
  .map((pair) => pair.split('/') as [string, string])
  .filter(([, labels]) => labels !== '*')
  .map(([name, labels]) => `${labels}.${name}`)
  .filter((suffix) => tldts.getPublicSuffix(`example.${suffix}`, { allowPrivateDomains: true }) === suffix)
  .filter((suffix) => tldts.getDomain(`example.${suffix}`, { allowPrivateDomains: true }) === `example.${suffix}`);

/**
 * A label no rule of the PSL names, put in front of a suffix's right-hand labels to ask whether they are a public suffix
 * of their own. Not a short real label: `x.se` and `x.bg` are PSL entries, so probing with `x` found no open label in
 * `a.se` or `0.bg`, and the property's "loose" pattern for them was the literal one (asserted refused, and allowed).
 */
const PROBE_LABEL = 'ampcorsprobe';

/** The labels of `suffix` left of its top-level domain whose right-hand labels are a public suffix of their own. */
function openLabels(suffix: string): number[] {
  const labels = suffix.split('.');
  return labels
    .map((_label, i) => i)
    .filter(
      (i) =>
        i < labels.length - 1 &&
        tldts.getPublicSuffix(`${PROBE_LABEL}.${labels.slice(i + 1).join('.')}`, { allowPrivateDomains: true }) === labels.slice(i + 1).join('.'),
    );
}

const escape = (text: string) => text.replace(/[.\\-]/g, (c) => `\\${c}`);

/** A drop-in's verdict with credentials for `origin`: allowed, denied, or refused (an AmpCorsError thrown or rejected). */
async function credentialed(run: () => unknown): Promise<'allowed' | 'denied' | 'refused'> {
  try {
    const verdict = (await run()) as boolean | { allowed: boolean };
    return (typeof verdict === 'boolean' ? verdict : verdict.allowed) ? 'allowed' : 'denied';
  } catch (error) {
    expect(error).toBeInstanceOf(AmpCorsError);
    expect((error as AmpCorsError).code).toBe('unsafe-configuration');
    return 'refused';
  }
}

describe('by property, over the multi-label public suffixes of the PSL (tldts)', () => {
  it('has suffixes to draw from, some with a label whose right-hand side is no public suffix (s3.amazonaws.com)', () => {
    expect(SUFFIXES.length).toBeGreaterThan(500);
    expect(SUFFIXES.some((suffix) => openLabels(suffix).length < suffix.split('.').length - 1)).toBe(true);
    // Every suffix has a label to vary (its top-level domain is a public suffix), one-character labels included.
    expect(SUFFIXES.filter((suffix) => openLabels(suffix).length === 0)).toEqual([]);
    expect(['a.se', '0.bg'].map((suffix) => SUFFIXES.includes(suffix) && openLabels(suffix))).toEqual([[0], [0]]);
  });

  it('a wildcard over an open label of the suffix is refused with credentials (RegExp and function), the literal suffix is accepted', async () => {
    const wildcard = fc.constantFrom('[a-z0-9-]+', '[^.]+', '[a-z0-9-]{1,63}', '[\\w-]+', '.+?');
    await fc.assert(
      fc.asyncProperty(fc.constantFrom(...SUFFIXES), fc.nat(), wildcard, fc.constantFrom('', 'www.'), async (suffix, pick, any, www) => {
        const labels = suffix.split('.');
        const open = openLabels(suffix);
        expect(open.length).toBeGreaterThan(0);
        const at = open[pick % open.length] as number;
        const origin = `https://${www}example.${suffix}`;
        expect(parseOrigin(origin).ok).toBe(true);
        const literal = new RegExp(`^https://(www\\.)?example\\.${escape(suffix)}$`);
        const loose = new RegExp(`^https://(www\\.)?example\\.${labels.map((label, i) => (i === at ? any : escape(label))).join('\\.')}$`);
        expect(loose.test(origin) && literal.test(origin)).toBe(true);
        expect(loose.source).not.toBe(literal.source);
        // The static pattern (construction or the request), and an origin function testing it (per request, sync and async).
        const staticly = (pattern: RegExp) => credentialed(() => compileOriginOption(pattern, { credentials: true })(origin));
        const asked = (pattern: RegExp, async: boolean) =>
          credentialed(() => guardOriginFunction((o) => (async ? Promise.resolve(pattern.test(o)) : pattern.test(o)), true)().verify(origin));
        expect([await staticly(loose), await asked(loose, false), await asked(loose, true)]).toEqual(['refused', 'refused', 'refused']);
        expect([await staticly(literal), await asked(literal, false), await asked(literal, true)]).toEqual(['allowed', 'allowed', 'allowed']);
      }),
      { numRuns: 150 },
    );
  });
});
