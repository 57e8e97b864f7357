// The published AMP vectors of ../shared/vectors/amp-published.json (copied to
// fixtures/ with their sources named). Every entry is asserted; where a source
// disagrees with SPEC.md §6 (which follows the amp.dev guide on the canonical
// domain), the entry is listed in DIVERGENCES with the reason, and ampcors's
// own answer is asserted instead — and, where SPEC §6 says so, that the
// source's answer is still accepted through prefixForms().
import { describe, expect, it } from 'vitest';
import { toASCII, toUnicode } from 'punycode/punycode.es6.js';
import vectors from './fixtures/amp-published.json' with { type: 'json' };
import {
  AmpCorsError,
  amppackagerPrefix,
  basicPrefix,
  canonicalDomain,
  cacheOrigin,
  cacheUrl,
  CACHES,
  createVerifier,
  domainPrefix,
  fallbackPrefix,
  prefixForms,
  reverseOrigin,
  type AmpCache,
  type ServingType,
} from '../src/index.js';
import { decodePrefix } from '../src/algorithms.js';

type Vector = { kind: string; input: unknown; expected: unknown; source: string; note?: string };
const all = vectors as Vector[];
const indexed = all.map((v, index) => ({ ...v, index }));
const ofKind = (kind: string) => indexed.filter((v) => v.kind === kind);

const hostOf = (input: string) => (/^https?:\/\//.test(input) ? new URL(input).hostname : input);

/**
 * `input → expected` of a vector → why ampcors answers differently, and what it answers
 * (keyed by input, so reordering or extending the vector file cannot
 * attach a divergence to the wrong vector).
 * `accepted: true` means the source's prefix is still accepted for that
 * domain by the verifier (it is one of the forms of SPEC §6).
 */
const DIVERGENCES = new Map<string, { reason: string; ours: string | 'throws'; accepted?: boolean }>([
  [
    'https://toplevelnohyphens → qsgpfjzulvuaxb66z77vlhb5gu2irvcnyp6t67cz6tqo5ae6fysa',
    { reason: 'toolbox hashes a host with no dot; the guide gives the basic prefix', ours: 'toplevelnohyphens', accepted: true },
  ],
  [
    'https://no-dot-domain → 4lxc7wqq7b25walg4rdiil62veijrmqui5z3ept2lyfqqwpowryq',
    { reason: 'toolbox hashes a host with no dot; the guide gives the basic prefix', ours: '0-no--dot--domain-0', accepted: true },
  ],
  [
    'https://hello.xn--4gbrim.xn----rmckbbajlc6dj7bxne2c.xn--wgbh1c → a6h5moukddengbsjm77rvbosevwuduec2blkjva4223o4bgafgla',
    { reason: 'toolbox hashes hosts mixing LTR and RTL scripts; the guide does not', ours: 'xn--hello------17m6bcba0avc8jki8ee4f0l8bemt4ed', accepted: true },
  ],
  [
    'toplevelnohyphens → qsgpfjzulvuaxb66z77vlhb5gu2irvcnyp6t67cz6tqo5ae6fysa',
    { reason: 'amppackager hashes a host with no dot; the guide gives the basic prefix', ours: 'toplevelnohyphens', accepted: true },
  ],
  [
    'hello.xn--4gbrim.xn----rmckbbajlc6dj7bxne2c.xn--wgbh1c → a6h5moukddengbsjm77rvbosevwuduec2blkjva4223o4bgafgla',
    {
      reason: 'amppackager hashes hosts mixing LTR and RTL scripts; the guide does not',
      ours: 'xn--hello------17m6bcba0avc8jki8ee4f0l8bemt4ed',
      accepted: true,
    },
  ],
  [
    'xn--xgb49a.xn--xgb6g → asdk26k2mfqxgc6cdx3oh3vlnx42rqwn6uvsuqrufnx622tguq6q',
    { reason: 'amppackager applies the IDNA Bidi rule and hashes; the guide does not (hash of an IDN accepted)', ours: 'xn----lncb8pp0a', accepted: true },
  ],
  [
    'in--trouble.com → r5s7rxu53tjelpr7ngbxkxpirbrylvbwcuueckh7gmn5mim5cjna',
    { reason: 'amppackager and toolbox hash a label with -- at 3–4; the guide wraps in 0-…-0', ours: '0-in----trouble-com-0', accepted: true },
  ],
  [
    'faß.de → fass-de',
    { reason: 'amppackager maps ß→ss (UTS46 transitional): fass.de is another domain, never accepted for faß.de', ours: 'xn--fa-de-mqa', accepted: false },
  ],
  [' → ', { reason: 'the empty string is not a domain: AmpCorsError invalid-domain', ours: 'throws' }],
  ['xn-- → ', { reason: '"xn--" is not valid punycode: AmpCorsError invalid-domain', ours: 'throws' }],
  ['... → ---', { reason: '"..." has empty labels: AmpCorsError invalid-domain', ours: 'throws' }],
  ['Bücher.de → xn--Bcher-de-65a', { reason: 'ampcors canonicalizes first (lowercase), SPEC §6', ours: 'xn--bcher-de-65a', accepted: false }],
  ['bücher.de → xn--bucher-de-hkf', { reason: 'ampcors canonicalizes first (NFC), SPEC §6', ours: 'xn--bcher-de-65a', accepted: false }],
  [
    'aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa → aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa',
    { reason: 'a 64-octet label is not a valid domain label: AmpCorsError invalid-domain', ours: 'throws' },
  ],
]);

describe('domain-prefix vectors', () => {
  it('every divergence names exactly one vector', () => {
    for (const key of DIVERGENCES.keys())
      expect(ofKind('domain-prefix').filter((v) => `${v.input as string} → ${v.expected as string}` === key)).toHaveLength(1);
  });

  for (const v of ofKind('domain-prefix')) {
    const host = hostOf(v.input as string);
    const divergence = DIVERGENCES.get(`${v.input as string} → ${v.expected as string}`);
    if (!divergence) {
      it(`#${v.index} ${host} → ${v.expected} (${v.source.split(' ')[0]})`, () => {
        expect(domainPrefix(host)).toBe(v.expected);
      });
      continue;
    }
    it(`#${v.index} ${host}: diverges (${divergence.reason})`, () => {
      if (divergence.ours === 'throws') {
        expect(() => domainPrefix(host)).toThrow(AmpCorsError);
        return;
      }
      expect(domainPrefix(host)).toBe(divergence.ours);
      expect(domainPrefix(host)).not.toBe(v.expected);
      const forms = prefixForms(host).map((f) => f.prefix);
      expect(forms.includes(v.expected as string)).toBe(divergence.accepted === true);
    });
  }

  it('#69 a 63-octet label is the basic prefix of itself (snowflake domainPrefixBasic)', () => {
    const v = ofKind('domain-prefix').find((x) => x.input === 'a'.repeat(63)) as Vector;
    expect(basicPrefix(v.input as string)).toBe(v.expected);
    expect(domainPrefix(v.input as string)).toBe(v.expected);
  });

  it('#77 invalid punycode is refused with a code, not hashed (issue #2: invalid domains throw)', () => {
    const v = ofKind('domain-prefix-error')[0] as Vector;
    try {
      domainPrefix(v.input as string);
      expect.unreachable();
    } catch (error) {
      expect(error).toBeInstanceOf(AmpCorsError);
      expect((error as AmpCorsError).code).toBe('invalid-domain');
    }
  });
});

describe('fallback hashes', () => {
  for (const v of [...ofKind('fallback-hash'), ...ofKind('fallback-hash-legacy')]) {
    it(`#${v.index} base32(sha256(${JSON.stringify(v.input)}))`, () => {
      expect(fallbackPrefix(v.input as string)).toBe(v.expected);
    });
  }
  it('legacy pre-2020 hashes are not the current prefix of their domain', () => {
    for (const v of ofKind('fallback-hash-legacy')) expect(domainPrefix(v.input as string)).not.toBe(v.expected);
  });
  it('the guide example hash has the fallback shape: 52 chars of base32, no hyphen', () => {
    const v = ofKind('fallback-example')[0] as Vector;
    expect(v.expected).toMatch(/^[a-z2-7]{52}$/);
    const reversed = reverseOrigin(`https://${v.expected as string}.cdn.ampproject.org`);
    expect(reversed).toMatchObject({ ok: true, hashed: true, prefix: v.expected });
  });
});

describe('cache hosts and URLs', () => {
  it.each(ofKind('cache-host'))('#$index cache host of $input', (v) => {
    expect(cacheOrigin(v.input as string)).toBe(`https://${v.expected as string}`);
  });

  const typeFromNote = (input: string): { url: string; servingType?: ServingType } => {
    const match = /^(\S+) \((?:servingType ')?(viewer)'?\)$/.exec(input);
    return match ? { url: match[1] as string, servingType: 'v' } : { url: input };
  };

  for (const v of ofKind('cache-url')) {
    if (typeof v.input === 'object' && v.input !== null) {
      const { pub, cache, contentType } = v.input as { pub: string; cache: string; contentType: ServingType };
      const custom: AmpCache = { id: 'test', name: 'Test', cacheDomain: new URL(cache).hostname };
      it(`#${v.index} ${pub} on ${custom.cacheDomain} (${contentType})`, () => {
        expect(cacheUrl(pub, { cache: custom, servingType: contentType })).toBe(v.expected);
      });
      continue;
    }
    const { url, servingType } = typeFromNote(v.input as string);
    if (/[^\x00-\x7f]/.test(url)) {
      it(`#${v.index} ${url}: diverges — the publisher host is written in punycode in the path, as a URL must be`, () => {
        const ours = cacheUrl(url);
        const host = new URL(url).hostname;
        expect(ours).toBe((v.expected as string).replace(/\/c\/s\/[^/]+$/, `/c/s/${host}`));
        expect(ours).not.toBe(v.expected);
      });
      continue;
    }
    it(`#${v.index} ${v.input as string}`, () => {
      expect(cacheUrl(url, servingType ? { servingType } : {})).toBe(v.expected);
    });
  }

  it.each(ofKind('cache-url-error'))('#$index $input is refused with invalid-url', (v) => {
    expect(() => cacheUrl(v.input as string)).toThrow(expect.objectContaining({ code: 'invalid-url' }));
  });
});

describe('reverse', () => {
  it.each(ofKind('origin-to-domain-prefix'))('#$index prefix of $input', (v) => {
    const result = reverseOrigin(v.input as string);
    expect(result.ok).toBe(true);
    expect(result.ok && result.prefix).toBe(v.expected);
  });
  it('#7/#8 reverse steps of the guide', () => {
    const [decode, fold] = ofKind('reverse-step') as unknown as [Vector, Vector];
    // Step 3 alone is punycode decoding; decodePrefix runs steps 3–6.
    expect(toUnicode(decode.input as string)).toBe(decode.expected);
    expect(decodePrefix(decode.input as string)).toBe(toASCII((decode.expected as string).replace(/-com$/, '.com')));
    expect(reverseOrigin(`https://${decode.input as string}.cdn.ampproject.org`)).toMatchObject({ publisherDomain: 'xn--57hw060o.com' });
    expect(decodePrefix(fold.input as string)).toBe(fold.expected);
  });
  it.each(ofKind('reverse-verdict'))('#$index $input cannot be reversed', (v) => {
    expect(reverseOrigin(`https://${v.input as string}.cdn.ampproject.org`)).toMatchObject({ ok: true, hashed: true });
  });
});

describe('allow-set vectors (amp-wp)', () => {
  // amp-wp lists `*.bing-amp.com` hosts without the `www.` the registry has
  // (amphtml#27472), keeps IDN prefixes in UTF-8, and includes the bare
  // cache host; ampcors uses the registry's `www.bing-amp.com`, punycode
  // (what a browser sends), and allows the bare host only with
  // legacyCacheOrigins.
  for (const v of ofKind('allow-set')) {
    const input = v.input as { home_url: string; site_url: string };
    it(`#${v.index} ${input.home_url} + ${input.site_url}`, () => {
      const domains = [new URL(input.home_url).hostname, new URL(input.site_url).hostname];
      const verifier = createVerifier({ publishers: domains, legacyCacheOrigins: true });
      for (const host of v.expected as string[]) {
        const origin = `https://${toASCII(host.replace(/\.bing-amp\.com$/, '.www.bing-amp.com'))}`;
        expect(verifier.verify(origin)).toMatchObject({ allowed: true });
      }
      expect(verifier.verify('https://example-com.bing-amp.com').allowed).toBe(false);
    });
  }
});

describe('toolbox-cors verdict vectors, at the verifier level', () => {
  const verifier = createVerifier({ publishers: ['ampbyexample.com'] });
  it('#38 a source origin without Origin or AMP-Same-Origin is denied (toolbox answers 400)', () => {
    expect(verifier.verify(undefined, { sourceOrigin: 'https://ampbyexample.com' })).toMatchObject({ allowed: false, reason: 'missing' });
  });
  it('#39 AMP-Same-Origin: true with a trusted source origin is allowed', () => {
    expect(verifier.verify(undefined, { ampSameOrigin: 'true', sourceOrigin: 'https://ampbyexample.com' })).toMatchObject({
      allowed: true,
      via: 'same-origin',
      sourceOrigin: 'https://ampbyexample.com',
    });
  });
  it('#40 the cache origin of the publisher is allowed with its source origin', () => {
    expect(verifier.verify('https://ampbyexample-com.cdn.ampproject.org', { sourceOrigin: 'https://ampbyexample.com' })).toMatchObject({
      allowed: true,
      via: 'cache',
      publisherDomain: 'ampbyexample.com',
    });
  });
  it('#45 a source origin that is not the publisher is denied (403)', () => {
    expect(verifier.verify(undefined, { ampSameOrigin: 'true', sourceOrigin: 'https://example.com' })).toMatchObject({
      allowed: false,
      reason: 'source-origin-mismatch',
    });
  });
  it('#47 diverges: the source origin never decides which cache origin is allowed (SPEC §7)', () => {
    const local = createVerifier({ publishers: ['localhost.example'], origins: ['https://localhost:3000'] });
    expect(local.verify('https://amp-dev.cdn.ampproject.org', { sourceOrigin: 'https://localhost:3000' })).toMatchObject({
      allowed: false,
      reason: 'unknown-publisher',
    });
  });
  it('bundled caches match the registry snapshot', () => {
    expect(CACHES.map((c) => c.cacheDomain)).toEqual(['cdn.ampproject.org', 'www.bing-amp.com']);
  });
});

// amppackager's 13 test vectors for ToCacheURLSubdomain
// (transformer/internal/amphtml/urls_test.go, github.com/ampproject/amppackager),
// as data. amppackagerPrefix takes the canonical domain; a hash is of the
// input as given, which for these inputs is their canonical form except the
// uppercase one (readable) and faß.de (transitional: the one class ampcors
// does not follow, SPEC §6).
describe('amppackager vectors (ToCacheURLSubdomain)', () => {
  const AMPPACKAGER: Array<[input: string, expected: string]> = [
    ['example.com', 'example-com'],
    ['ExAMpLE.Com', 'example-com'],
    ['toplevelnohyphens', 'qsgpfjzulvuaxb66z77vlhb5gu2irvcnyp6t67cz6tqo5ae6fysa'],
    [
      'itwasadarkandstormynight.therainfellintorrents.exceptatoccasionalintervalswhenitwascheckedby.aviolentgustofwindwhichsweptupthestreets.com',
      'dgz4cnrxufaulnwku4ow5biptyqnenjievjht56hd7wqinbdbteq',
    ],
    ['xn--bcher-kva.ch', 'xn--bcher-ch-65a'],
    ['xn--4gbrim.xn----rmckbbajlc6dj7bxne2c.xn--wgbh1c', 'xn-------i5fvcbaopc6fkc0de0d9jybegt6cd'],
    ['hello.xn--4gbrim.xn----rmckbbajlc6dj7bxne2c.xn--wgbh1c', 'a6h5moukddengbsjm77rvbosevwuduec2blkjva4223o4bgafgla'],
    ['xn--xgb49a.xn--xgb6g', 'asdk26k2mfqxgc6cdx3oh3vlnx42rqwn6uvsuqrufnx622tguq6q'],
    ['xn--xgb49a.xn--xgb49a', 'xn----lncb27eca'],
    ['in--trouble.com', 'r5s7rxu53tjelpr7ngbxkxpirbrylvbwcuueckh7gmn5mim5cjna'],
    ['in-trouble.com', '0-in--trouble-com-0'],
    ['a--problem.com', '0-a----problem-com-0'],
  ];
  it.each(AMPPACKAGER)('%s → %s', (input, expected) => {
    const domain = canonicalDomain(input);
    expect(amppackagerPrefix(domain)).toBe(expected);
    // Whatever the domain's other forms, the verifier accepts amppackager's unless another domain claims it.
    if (domain.includes('.') && prefixForms(domain).some((f) => f.prefix === expected)) {
      expect(createVerifier({ publishers: [domain] }).verify(`https://${expected}.cdn.ampproject.org`).allowed).toBe(true);
    }
  });
  it("faß.de → fass-de with transitional mapping: not followed, fass-de is fass.de's prefix", () => {
    const domain = canonicalDomain('faß.de');
    expect(amppackagerPrefix(domain)).not.toBe('fass-de');
    expect(prefixForms(domain).map((f) => f.prefix)).not.toContain('fass-de');
    expect(prefixForms('fass.de').map((f) => f.prefix)).toContain('fass-de');
  });
});
