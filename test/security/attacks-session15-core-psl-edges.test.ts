// Attacker's review, session 15 (helper-49): wildcard rules at the edges of the Public Suffix List's
// private section, where anyone can create a name beside the publisher's (a GitHub user, an S3 bucket,
// a Blogger blog, a Vercel project…). The publisher trusts its own `*.mine.<suffix>` (and `mine.<suffix>`);
// the attacker picks a sibling label under the same suffix, built to collide with the publisher's names
// once dots become hyphens (`mine-x`, `x-mine`, `xn-mine`, `mine--x`, IDN letters, digits), and tries
// every prefix a cache may give the sibling — ampcors's own forms, the real toolbox-cache-url's (ASCII and
// Unicode host) and the independent amppackager oracle's — on every cache, and the sibling's own origin.
// None may be allowed. The suffix itself, and wildcards over it, are refused at construction.
import { createRequire } from 'node:module';
import { AmpCorsError, createVerifier, prefixForms } from '@ampcors/core';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { amppackagerPrefix, tr46 } from '../differential/amppackager-oracle.js';

const toolbox = createRequire(import.meta.url)('@ampproject/toolbox-cache-url') as { createCurlsSubdomain(url: string): Promise<string> };
const punycode = createRequire(new URL('../../packages/core/package.json', import.meta.url))('punycode/punycode.js') as { toUnicode(input: string): string };

/** Private-section suffixes under which strangers create names (PSL as bundled with tldts), with an IDN ICANN one. */
const SUFFIXES = [
  'github.io',
  'gitlab.io',
  's3.amazonaws.com',
  's3.us-east-1.amazonaws.com',
  'blogspot.com',
  'vercel.app',
  'pages.dev',
  'netlify.app',
  'herokuapp.com',
  'appspot.com',
  'web.app',
  'firebaseapp.com',
  'cloudfront.net',
  'azurewebsites.net',
  'myshopify.com',
  'translate.goog',
  'xn--p1ai',
  'co.uk',
];
const CACHES = ['cdn.ampproject.org', 'www.bing-amp.com'];
const WHATWG = { checkBidi: true, checkJoiners: true, checkHyphens: false, useSTD3ASCIIRules: false, verifyDNSLength: false, transitionalProcessing: false };

/** Every prefix a cache may give `host` (canonical ASCII): ampcors's forms, toolbox's, amppackager's (both mappings). */
async function everyPrefix(host: string): Promise<Set<string>> {
  const prefixes = new Set<string>();
  try {
    for (const { prefix } of prefixForms(host)) prefixes.add(prefix);
  } catch {
    // Not a domain ampcors would configure (edge hyphens): the references below still give its prefixes.
  }
  const unicode = punycode.toUnicode(host);
  for (const form of unicode === host ? [host] : [host, unicode]) {
    try {
      prefixes.add(await toolbox.createCurlsSubdomain(`https://${form}`));
    } catch {
      // Refused by toolbox.
    }
  }
  for (const transitional of [false, true]) {
    const { prefix } = amppackagerPrefix(host, { transitional });
    if (prefix !== null) prefixes.add(prefix);
  }
  return prefixes;
}

describe('wildcard rules beside strangers, at the private suffixes of the PSL', () => {
  it('the suffix and a wildcard over it are refused; the publisher’s own name under it is accepted', () => {
    for (const suffix of SUFFIXES) {
      for (const rule of [suffix, `*.${suffix}`]) expect(() => createVerifier({ publishers: [rule] }), rule).toThrow(AmpCorsError);
      expect(() => createVerifier({ publishers: [`*.mine.${suffix}`, `mine.${suffix}`] })).not.toThrow();
    }
  });

  it('no prefix of a sibling name (any cache, any algorithm), nor its own origin, is allowed by *.mine.<suffix>', async () => {
    const verifiers = new Map(
      SUFFIXES.map((s) => [s, createVerifier({ publishers: [`*.mine.${s}`, `mine.${s}`, `*.mine-${s.replace(/\./g, '-')}.example`] })]),
    );
    const piece = fc.constantFrom(
      'mine',
      'mine-',
      '-mine',
      'min',
      'e',
      'xn-',
      'xn--',
      'xn-mine',
      '-',
      '--',
      '0',
      'a',
      'ü',
      'ё',
      'ß',
      'ḿ',
      'mıne',
      'mine0',
      'x',
    );
    const sibling = fc.array(piece, { minLength: 1, maxLength: 4 }).map((ps) => ps.join(''));
    const sub = fc.option(fc.constantFrom('www', 'mine', 'a-b', 'xn-a', 'amp', 'mine-x'), { nil: undefined });
    let tried = 0;
    await fc.assert(
      fc.asyncProperty(fc.constantFrom(...SUFFIXES), sibling, sub, async (suffix, label, below) => {
        const name = `${below === undefined ? '' : `${below}.`}${label}.${suffix}`;
        const host = tr46.toASCII(name, WHATWG);
        if (host === null || host.split('.').some((l) => l === '' || l.length > 63)) return;
        const base = `mine.${suffix}`;
        const under = (d: string) => d === base || d.endsWith(`.${base}`);
        const ownLabel = tr46.toASCII(label, WHATWG);
        if (ownLabel === 'mine' || under(host)) return;
        const verifier = verifiers.get(suffix)!;
        expect(verifier.verify(`https://${host}`).allowed, host).toBe(false);
        for (const prefix of await everyPrefix(host)) {
          for (const cache of CACHES) {
            tried++;
            const verdict = verifier.verify(`https://${prefix}.${cache}`);
            expect(verdict.allowed, `${prefix}.${cache} (a prefix of ${host}) allowed as ${JSON.stringify(verdict)}`).toBe(false);
          }
        }
      }),
      { numRuns: 3000, seed: 49 },
    );
    expect(tried).toBeGreaterThan(5000);
  }, 300_000);

  it('the positive control: the publisher’s own subdomains’ readable origins are allowed', () => {
    for (const suffix of SUFFIXES) {
      const verifier = createVerifier({ publishers: [`*.mine.${suffix}`] });
      const host = `www.mine.${suffix}`;
      const readable = prefixForms(host).filter(({ prefix }) => prefix.includes('-'));
      // (An IDN's readable prefix may be denied to it: `www.mine.рф` shares its prefix with amppackager's lenient
      // reading of `xn-www.mine.xn--p1a.jxi`, SECURITY.md "readable prefixes that two possible domains share".)
      if (!suffix.startsWith('xn--')) expect(readable.length, host).toBeGreaterThan(0);
      for (const { prefix } of readable) expect(verifier.verify(`https://${prefix}.cdn.ampproject.org`).allowed, `${prefix} of ${host}`).toBe(true);
    }
  });
});
