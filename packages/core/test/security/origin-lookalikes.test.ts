// Drop-in origin options that also trust registrable look-alikes, with credentials (issue #14 item 3, found by the
// independent attack): a suffix match without its dot (`cors`'s README example /example\.com$/, endsWith), an
// unescaped dot, a match without an end anchor (startsWith). The attacker's side: every look-alike a loose option
// allows is refused, at construction or on the request; the defender's side: a wide set of tight options (exact sets,
// anchored alternations, subdomain wildcards, ports, co.uk and github.io, IP and localhost origins) keeps working.
import { isAmpCorsError, type Verdict } from '@ampcors/core';
import { compileOriginOption, createCorsPolicy, judgeWithOriginMatcher, type OriginMatcher } from '@ampcors/core/adapter';
import fc from 'fast-check';
import { toUnicode } from 'punycode/punycode.es6.js';
import { getDomain, getPublicSuffix, parse } from 'tldts';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { lookAlikes } from '../../src/legacy-origin-option.js';
import { type ParsedOrigin, parseOrigin } from '../../src/origin-header.js';

const LABEL = /ampcorscanary[a-z]{12}/;

function parsed(origin: string): ParsedOrigin {
  const result = parseOrigin(origin);
  if (!result.ok) throw new Error(`test origin ${origin} is not canonical`);
  return result;
}

/** The process's documentation IP addresses: V4a (192.0.2.0/24), V4c (203.0.113.0/24), V6 (2001:db8::/32). */
const canaryAddress = (text: string) =>
  text
    .replace(/\/\/192\.0\.2\.[0-9]+/, '//V4a')
    .replace(/\/\/203\.0\.113\.[0-9]+/, '//V4c')
    .replace(/\/\/\[2001:db8:[0-9a-f:]+\]/, '//V6');

/** Kind (i)'s mistake: the real suffixes it puts in are drawn once per process. */
const LISTED = /any public suffix the list holds/;

/**
 * The real suffixes a kind (i) look-alike put in, written T & T (generic top-level domains) or S1.tld & S2.tld
 * (rules of the same top-level domain), after checking they are real suffixes of the list other than the origin's.
 */
function drawnShape(origin: string, twin: string, confirm: string, first: boolean): string {
  const { hostname, port } = new URL(origin);
  const suffix = getPublicSuffix(hostname, { allowPrivateDomains: true }) as string;
  const head = hostname.slice(0, hostname.length - suffix.length);
  const at = port === '' ? '' : `:${port}`;
  const scheme = origin.slice(0, origin.indexOf('//') + 2);
  const drawn = [twin, confirm].map((text) => {
    const host = new URL(text).hostname;
    expect(host.startsWith(head), text).toBe(true);
    const put = host.slice(head.length);
    expect(parse(`x.${put}`, { allowPrivateDomains: true }).publicSuffix, text).toBe(put);
    expect(put).not.toBe(suffix);
    return put;
  });
  expect(drawn[0]).not.toBe(drawn[1]);
  const tld = suffix.slice(suffix.lastIndexOf('.') + 1);
  const shape = (put: string, n: number) => {
    // A generic top-level domain, or a rule of the origin's own top-level domain.
    expect(first ? !put.includes('.') : put.endsWith(`.${tld}`), put).toBe(true);
    return first ? `T` : `S${n}.${tld}`;
  };
  return `${scheme}${head}${shape(drawn[0] as string, 1)}${at} & ${scheme}${head}${shape(drawn[1] as string, 2)}${at}`;
}

/** The look-alikes of `origin`, the random canary label written L, the canary digits D and the canary addresses as {@link canaryAddress} (a confirming second look-alike after `&`), kind (i)'s as {@link drawnShape}. */
const shapes = (origin: string) => {
  let listed = 0;
  return lookAlikes(parsed(origin)).map(({ origin: twin, confirm, mistake }) =>
    LISTED.test(mistake)
      ? drawnShape(origin, twin, confirm as string, listed++ < 2)
      : [twin, ...(confirm === undefined ? [] : [confirm])].map((text) => canaryAddress(text.replace(LABEL, 'L').replace(/[0-9]{12}/, 'D'))).join(' & '),
  );
};

function outcome(run: () => unknown): string {
  try {
    const value = run();
    return value === true ? 'allowed' : value === false ? 'denied' : `other: ${String(value)}`;
  } catch (error) {
    return isAmpCorsError(error) ? `${error.code}: ${error.message}` : `other: ${String(error)}`;
  }
}

describe('lookAlikes: origins under a registrable domain nobody configured, same scheme and port', () => {
  it('extends the host, glues the canary before the registrable domain, and makes each dot from the one left of it a letter', () => {
    expect(shapes('https://www.example.com')).toEqual([
      'https://www.example.com.L.invalid',
      'https://www.Lexample.com',
      'https://wwwqexample.com',
      'https://www.exampleqcom',
      'https://www.exampleL.com',
      'https://www.exampleD.com',
      'https://www.fqfqqqf.com & https://www.cjcxxxc.com',
      'https://www.example.qqq & https://www.example.xxx',
      'https://www.example.T & https://www.example.T',
      'https://www.example.T & https://www.example.T',
      'https://V4a & https://V4c',
    ]);
    expect(shapes('https://example.co.uk:8443')).toEqual([
      'https://example.co.uk.L.invalid:8443',
      'https://Lexample.co.uk:8443',
      'https://exampleqco.uk:8443',
      'https://example.coquk:8443',
      'https://exampleL.co.uk:8443',
      'https://exampleD.co.uk:8443',
      'https://fqfqqqf.co.uk:8443 & https://cjcxxxc.co.uk:8443',
      'https://example.qq.uk:8443 & https://example.xx.uk:8443',
      'https://example.co.qq:8443 & https://example.co.xx:8443',
      'https://example.T:8443 & https://example.T:8443',
      'https://example.T:8443 & https://example.T:8443',
      'https://example.S1.uk:8443 & https://example.S2.uk:8443',
      'https://V4a:8443 & https://V4c:8443',
    ]);
    // github.io is a public suffix (private section): me.github.io is the registrable domain; a.b. is left alone.
    expect(shapes('http://a.b.me.github.io')).toEqual([
      'http://a.b.me.github.io.L.invalid',
      'http://a.b.Lme.github.io',
      'http://a.bqme.github.io',
      'http://a.b.meqgithub.io',
      'http://a.b.me.githubqio',
      'http://a.b.meL.github.io',
      'http://a.b.meD.github.io',
      'http://a.b.qf.github.io & http://a.b.xc.github.io',
      'http://a.b.me.qqqqqq.io & http://a.b.me.xxxxxx.io',
      'http://a.b.me.github.qq & http://a.b.me.github.xx',
      'http://a.b.me.T & http://a.b.me.T',
      'http://a.b.me.T & http://a.b.me.T',
      'http://a.b.me.S1.io & http://a.b.me.S2.io',
      'http://V4a & http://V4c',
    ]);
  });

  it('continues the label at its end and around each hyphen, and makes each run of letters or digits another of its shape', () => {
    // vercel.app is a public suffix: the whole preview host is the registrable domain; a run's variant keeps q→z, 7→3, hex letters hex.
    expect(shapes('https://myapp-abc7-q.vercel.app').slice(4)).toEqual([
      'https://myapp-abc7-qL.vercel.app',
      'https://myapp-abc7-qD.vercel.app',
      'https://myappL-abc7-q.vercel.app',
      'https://myapp-Labc7-q.vercel.app',
      'https://myapp-abc7L-q.vercel.app',
      'https://myapp-abc7-Lq.vercel.app',
      'https://qqfqq-abc7-q.vercel.app & https://xxcxx-abc7-q.vercel.app',
      'https://myapp-fff7-q.vercel.app & https://myapp-ccd7-q.vercel.app',
      'https://myapp-abc3-q.vercel.app & https://myapp-abc4-q.vercel.app',
      'https://myapp-abc7-z.vercel.app & https://myapp-abc7-x.vercel.app',
      'https://myapp-abc7-q.qqqqqq.app & https://myapp-abc7-q.xxxxxx.app',
      'https://myapp-abc7-q.vercel.qqq & https://myapp-abc7-q.vercel.xxx',
      'https://myapp-abc7-q.T & https://myapp-abc7-q.T',
      'https://myapp-abc7-q.T & https://myapp-abc7-q.T',
      'https://myapp-abc7-q.S1.app & https://myapp-abc7-q.S2.app',
      'https://V4a & https://V4c',
    ]);
    // Two adjacent hyphens: the position between them once.
    expect(shapes('https://deploy-1--site.netlify.app').slice(6, 11)).toEqual([
      'https://deployL-1--site.netlify.app',
      'https://deploy-L1--site.netlify.app',
      'https://deploy-1L--site.netlify.app',
      'https://deploy-1-L-site.netlify.app',
      'https://deploy-1--Lsite.netlify.app',
    ]);
  });

  it('caps kinds (d) and (e) at eight look-alikes each, and varies an IDN first label through its Unicode form (punycode written back) and as ASCII text of its length', () => {
    const long = shapes('https://a-b-c-d-e-f-g-h-i-j.example');
    expect(long.filter((twin) => / & /.test(twin) && !twin.includes('.qqqqqqq') && !twin.includes('V4a'))).toHaveLength(8);
    expect(long.filter((twin) => /[a-z]L-|-L[a-z]/.test(twin))).toHaveLength(8);
    // The last run varied is h's (the eighth), the last hyphen around which the canary goes is the fourth.
    expect(long).toContain('https://a-b-c-d-e-f-g-q-i-j.example & https://a-b-c-d-e-f-g-x-i-j.example');
    expect(long.at(-2)).toBe('https://a-b-c-d-e-f-g-h-i-j.qqqqqqq & https://a-b-c-d-e-f-g-h-i-j.xjxxxxx');
    // bücher: the canary and the digits after it, each run of letters made another (the punycode keeps its length), then
    // the whole label as ASCII text of its length (a length-bounded wildcard a continued label outgrows).
    const idn = lookAlikes(parsed('https://www.xn--bcher-kva.de')).map(({ origin, confirm }) => [origin, confirm]);
    const read = idn.map(([twin, confirm]) => [twin, confirm].map((text) => (text === undefined ? '' : toUnicode(text).replace(LABEL, 'ampcorscanary'))));
    // (b) and (c) in ASCII, each followed by its Unicode reading (for `domainToUnicode(host).endsWith('bücher.de')`).
    const twins = idn.slice(1, 7).map(([twin]) => twin as string);
    expect(twins.filter((_, i) => i % 2 === 0).map((twin) => twin.replace(LABEL, 'ampcorscanary'))).toEqual([
      'https://www.ampcorscanaryxn--bcher-kva.de',
      'https://wwwqxn--bcher-kva.de',
      'https://www.xn--bcher-kvaqde',
    ]);
    expect(twins.filter((_, i) => i % 2 === 1).map((twin) => toUnicode(new URL(twin).host).replace(LABEL, 'ampcorscanary'))).toEqual([
      'www.ampcorscanarybücher.de',
      'wwwqbücher.de',
      'www.bücherqde',
    ]);
    expect(read.slice(7, 13)).toEqual([
      ['https://www.bücherampcorscanary.de', ''],
      [expect.stringMatching(/^https:\/\/www\.bücher[0-9]{12}\.de$/), ''],
      ['https://www.fücher.de', 'https://www.cücher.de'],
      ['https://www.büfqfq.de', 'https://www.büdxcx.de'],
      ['https://www.qq--qqqqq-qqq.de', 'https://www.jx--xxxxx-xxx.de'],
      ['https://www.bücher.qq', 'https://www.bücher.xx'],
    ]);
    // Every IDN variant is punycode a browser writes back unchanged, and a same-shape one keeps the label's length.
    for (const text of idn.flat()) {
      if (text !== undefined && !text.includes('invalid')) expect(new URL(text).origin).toBe(text);
    }
    expect(shapes('https://www.xn--bcher-kva.de').slice(9, 12)).toEqual([
      'https://www.xn--fcher-kva.de & https://www.xn--ccher-kva.de',
      'https://www.xn--bfqfq-kva.de & https://www.xn--bdxcx-kva.de',
      'https://www.qq--qqqqq-qqq.de & https://www.jx--xxxxx-xxx.de',
    ]);
  });

  it('gives localhost and a public suffix the extended host and a documentation address, an IPv4 host also each octet and each digit of a longer octet varied, an IPv6 host each of its eight groups', () => {
    expect(shapes('http://localhost:3000')).toEqual(['http://localhost.L.invalid:3000', 'http://V4a:3000 & http://V4c:3000']);
    expect(shapes('https://github.io')).toEqual(['https://github.io.L.invalid', 'https://V4a & https://V4c']);
    expect(shapes('http://192.168.1.20:8080')).toEqual([
      'http://192.168.1.20.L.invalid:8080',
      'http://174.168.1.20:8080 & http://238.168.1.20:8080',
      'http://172.168.1.20:8080 & http://132.168.1.20:8080',
      'http://197.168.1.20:8080 & http://193.168.1.20:8080',
      'http://192.174.1.20:8080 & http://192.238.1.20:8080',
      'http://192.178.1.20:8080 & http://192.138.1.20:8080',
      'http://192.167.1.20:8080 & http://192.163.1.20:8080',
      'http://192.168.7.20:8080 & http://192.168.3.20:8080',
      'http://192.168.1.74:8080 & http://192.168.1.38:8080',
      'http://192.168.1.70:8080 & http://192.168.1.30:8080',
      'http://192.168.1.27:8080 & http://192.168.1.23:8080',
      'http://V4a:8080 & http://V4c:8080',
    ]);
    // A digit is varied within 0-255 and without a leading 0 (a hundreds digit never: it has one other at most, 1 or 2).
    expect(shapes('https://192.168.1.150')).toContain('https://192.168.1.157 & https://192.168.1.153');
    expect(shapes('https://192.168.1.150')).toContain('https://192.168.1.170 & https://192.168.1.130');
    expect(shapes('http://10.0.0.210')).toContain('http://10.0.0.230 & http://10.0.0.240');
    expect(shapes('http://10.0.0.210')).toContain('http://10.0.0.217 & http://10.0.0.213');
    expect(shapes('http://10.0.0.210').filter((twin) => twin.includes('//10.0.0.110'))).toEqual([]);
    // A stand-in equal to the octet is skipped (7 → 3 and 4); a loopback address keeps its last three octets (all this machine).
    expect(shapes('https://10.7.174.0')).toContain('https://10.3.174.0 & https://10.4.174.0');
    expect(shapes('https://10.7.174.0')).toContain('https://10.7.238.0 & https://10.7.203.0');
    expect(shapes('http://127.0.0.1:8080')).toEqual([
      'http://127.0.0.1.L.invalid:8080',
      'http://174.0.0.1:8080 & http://238.0.0.1:8080',
      'http://177.0.0.1:8080 & http://137.0.0.1:8080',
      'http://123.0.0.1:8080 & http://124.0.0.1:8080',
      'http://V4a:8080 & http://V4c:8080',
    ]);
    expect(shapes('https://[2600:3c01::f03c:91ff:fe18:bb2f]')).toEqual([
      'https://[7777:3c01::f03c:91ff:fe18:bb2f] & https://[4444:3c01::f03c:91ff:fe18:bb2f]',
      'https://[2600:7f77::f03c:91ff:fe18:bb2f] & https://[2600:4d44::f03c:91ff:fe18:bb2f]',
      'https://[2600:3c01:7:0:f03c:91ff:fe18:bb2f] & https://[2600:3c01:4:0:f03c:91ff:fe18:bb2f]',
      'https://[2600:3c01:0:7:f03c:91ff:fe18:bb2f] & https://[2600:3c01:0:4:f03c:91ff:fe18:bb2f]',
      'https://[2600:3c01::e77f:91ff:fe18:bb2f] & https://[2600:3c01::c44d:91ff:fe18:bb2f]',
      'https://[2600:3c01::f03c:77ee:fe18:bb2f] & https://[2600:3c01::f03c:44cc:fe18:bb2f]',
      'https://[2600:3c01::f03c:91ff:ef77:bb2f] & https://[2600:3c01::f03c:91ff:cc44:bb2f]',
      'https://[2600:3c01::f03c:91ff:fe18:ff7e] & https://[2600:3c01::f03c:91ff:fe18:cc4c]',
      'https://V6',
    ]);
    // The groups `::` hides are varied too, each variant written as a browser writes it (the first longest zero run compressed).
    expect(shapes('https://[fd12::]')).toEqual([
      'https://[ef77::] & https://[cc44::]',
      'https://[fd12:7::] & https://[fd12:4::]',
      'https://[fd12:0:7::] & https://[fd12:0:4::]',
      'https://[fd12:0:0:7::] & https://[fd12:0:0:4::]',
      'https://[fd12::7:0:0:0] & https://[fd12::4:0:0:0]',
      'https://[fd12::7:0:0] & https://[fd12::4:0:0]',
      'https://[fd12::7:0] & https://[fd12::4:0]',
      'https://[fd12::7] & https://[fd12::4]',
      'https://V6',
    ]);
    expect(shapes('http://[::1]:3000')).toEqual(['http://V6:3000']);
  });

  it('by property: every look-alike of an IP origin is a canonical origin of the same scheme and port on another address of its family', () => {
    const octet = fc.integer({ min: 0, max: 255 });
    const ipv4 = fc.tuple(octet, octet, octet, octet).map((parts) => parts.join('.'));
    const ipv6 = fc
      .array(fc.integer({ min: 0, max: 0xffff }), { minLength: 8, maxLength: 8 })
      .map((groups) => `[${new URL(`http://[${groups.map((g) => g.toString(16)).join(':')}]`).hostname.slice(1, -1)}]`);
    fc.assert(
      fc.property(
        fc.oneof(ipv4, ipv6),
        fc.constantFrom('http', 'https'),
        fc.option(fc.integer({ min: 1, max: 65535 }), { nil: null }),
        (host, scheme, port) => {
          const origin = new URL(`${scheme}://${host}${port === null ? '' : `:${port}`}`).origin;
          const own = parsed(origin);
          for (const { origin: twin, confirm } of lookAlikes(own)) {
            for (const text of [twin, ...(confirm === undefined ? [] : [confirm])]) {
              const other = parseOrigin(text);
              expect(other.ok, text).toBe(true);
              if (!other.ok) continue;
              expect(new URL(text).origin, text).toBe(text); // canonical, as a browser writes it
              expect([other.scheme, other.port]).toEqual([own.scheme, own.port]);
              expect(other.host).not.toBe(own.host);
              if (!text.includes('.invalid')) expect(other.host.startsWith('['), text).toBe(own.host.startsWith('['));
            }
          }
        },
      ),
      { numRuns: 300 },
    );
  });

  it('by property: every look-alike is a canonical origin of the same scheme and port under another registrable domain, with the subdomain labels kept', () => {
    fc.assert(
      fc.property(fc.domain(), fc.constantFrom('http', 'https'), fc.option(fc.integer({ min: 1, max: 65535 }), { nil: null }), (host, scheme, port) => {
        const origin = `${scheme}://${host}${port === null || (scheme === 'https' && port === 443) || (scheme === 'http' && port === 80) ? '' : `:${port}`}`;
        const own = parseOrigin(origin);
        fc.pre(own.ok && origin.length < 200);
        const registrable = getDomain(host, { allowPrivateDomains: true });
        const subdomain = registrable === null ? '' : host.slice(0, host.length - registrable.length);
        for (const { origin: twin } of lookAlikes(own as ParsedOrigin)) {
          const other = parseOrigin(twin);
          expect(other.ok, twin).toBe(true);
          if (!other.ok) continue;
          expect([other.scheme, other.port]).toEqual([(own as ParsedOrigin).scheme, (own as ParsedOrigin).port]);
          // (h), an address of the documentation ranges, has no registrable domain nor subdomain labels.
          if (/^[0-9.]+$/.test(other.host)) {
            expect(canaryAddress(twin)).toMatch(/\/\/V4a(:|$)/);
            continue;
          }
          expect(getDomain(other.host, { allowPrivateDomains: true })).not.toBe(registrable);
          expect(other.host.startsWith(subdomain.slice(0, -1))).toBe(true);
        }
      }),
      { numRuns: 300 },
    );
  });
});

/**
 * Tight options, with credentials, and origins each allows: never refused, at construction or on a request.
 * The look-alikes each must still deny are the attacker's.
 */
const TIGHT: ReadonlyArray<readonly [RegExp | ReadonlyArray<string | RegExp>, readonly string[]]> = [
  [/^https:\/\/example\.com$/, ['https://example.com']],
  [/^https:\/\/(www\.)?example\.com$/, ['https://example.com', 'https://www.example.com']],
  [/^https:\/\/([a-z0-9-]+\.)*example\.com$/, ['https://example.com', 'https://www.example.com', 'https://a.b.example.com', 'https://a-b.example.com']],
  [/^https:\/\/(?:[\w-]+\.)+example\.com$/i, ['https://www.example.com', 'https://x_y.example.com']],
  [/^https:\/\/[a-z0-9-]+\.example\.com$/, ['https://www.example.com', 'https://api.example.com']],
  [/\.example\.com$/, ['https://www.example.com', 'https://a.b.example.com']],
  [/^https:\/\/(www|app)\.example\.com$/, ['https://www.example.com', 'https://app.example.com']],
  [/^https:\/\/[a-z]+\.example\.com(:\d+)?$/, ['https://app.example.com', 'https://app.example.com:8443']],
  [/^https:\/\/example\.com:8443$/, ['https://example.com:8443']],
  [/^https:\/\/([a-z]+\.)?example\.co\.uk$/, ['https://example.co.uk', 'https://www.example.co.uk']],
  [/^https:\/\/myname\.github\.io$/, ['https://myname.github.io']],
  [/^https:\/\/([a-z0-9-]+\.)?myapp\.herokuapp\.com$/, ['https://myapp.herokuapp.com', 'https://staging.myapp.herokuapp.com']],
  [/^https:\/\/www-example-com\.cdn\.ampproject\.org$/, ['https://www-example-com.cdn.ampproject.org']],
  [/^https:\/\/xn--bcher-kva\.de$/, ['https://xn--bcher-kva.de']],
  [/^https:\/\/(example\.com|example\.org|example\.net)$/, ['https://example.com', 'https://example.org', 'https://example.net']],
  [/^https:\/\/example\.(com|org)$/, ['https://example.com', 'https://example.org']],
  [/^https?:\/\/example\.com$/, ['https://example.com', 'http://example.com']],
  [/^http:\/\/localhost(:\d+)?$/, ['http://localhost', 'http://localhost:3000']],
  [/^http:\/\/127\.0\.0\.1(:\d+)?$/, ['http://127.0.0.1:8080']],
  [
    ['http://192.168.1.20', 'http://192.168.1.21', 'http://10.0.0.5:8080'],
    ['http://192.168.1.20', 'http://192.168.1.21', 'http://10.0.0.5:8080'],
  ],
  [/^http:\/\/(192\.168\.1\.20|192\.168\.1\.21|10\.0\.0\.5)(:8080)?$/, ['http://192.168.1.20', 'http://10.0.0.5:8080']],
  [/^http:\/\/127\.0\.0\.\d{1,3}:3000$/, ['http://127.0.0.1:3000', 'http://127.0.0.2:3000']],
  [/^https:\/\/\[2001:db8::(1|5|a)\]$/, ['https://[2001:db8::1]', 'https://[2001:db8::5]']],
  [/^http:\/\/\[::1\](:\d+)?$/, ['http://[::1]:3000']],
  [
    ['https://example.com', 'https://www.example.com'],
    ['https://example.com', 'https://www.example.com'],
  ],
  [
    ['https://example.com', /^https:\/\/[a-z]+\.example\.com$/],
    ['https://example.com', 'https://shop.example.com'],
  ],
  [/^https:\/\/www\.example\.com$/gy, ['https://www.example.com']],
  // Two real domains one dot apart: not an unescaped dot (the letter in its place is not allowed).
  [/^https:\/\/(e-shop\.com|e\.shop\.com|eshop\.com)$/, ['https://e-shop.com', 'https://e.shop.com', 'https://eshop.com']],
  // Names of the same shape in a list: one same-shape variant named by chance is not a wildcard (its confirmation is not).
  [/^https:\/\/(e-shop|e\.shop|shop1|shop2)\.com$/, ['https://e-shop.com', 'https://e.shop.com', 'https://shop1.com', 'https://shop2.com']],
  [/^https:\/\/(shop1|shop3|shop7)\.com$/, ['https://shop1.com', 'https://shop3.com', 'https://shop7.com']],
  [/^https:\/\/(plan-a|plan-f|plan-q)\.com$/, ['https://plan-a.com', 'https://plan-f.com', 'https://plan-q.com']],
  [/^https:\/\/example\.(com|qqq)$/, ['https://example.com']],
  [/^https:\/\/(www\.)?ex-am-ple\.com$/, ['https://ex-am-ple.com', 'https://www.ex-am-ple.com']],
  [/^https:\/\/[a-z0-9-]+\.example-shop\.com$/, ['https://a.example-shop.com', 'https://a-b.example-shop.com']],
  [/^https:\/\/[0-9a-f]{7}\.example\.com$/, ['https://abcdef0.example.com', 'https://1234567.example.com']],
  [/^https:\/\/myapp-git-main\.vercel\.app$/, ['https://myapp-git-main.vercel.app']],
  [/^https:\/\/(www\.)?example1337\.com$/, ['https://example1337.com']],
  [/^https:\/\/(www\.)?xn--bcher-kva\.(de|ch)$/, ['https://www.xn--bcher-kva.de', 'https://xn--bcher-kva.ch']],
];

/** Look-alikes an attacker registers; none is allowed by any tight option. */
const ATTACKERS = [
  'https://evilexample.com',
  'https://wwwxexample.com',
  'https://example.com.evil.net',
  'https://www.example.com.evil.net',
  'https://evilexample.co.uk',
  'https://evilmyname.github.io',
  'https://evilmyapp.herokuapp.com',
  'https://myapp.herokuapp.com.evil.net',
  'http://localhost.evil.net',
  'http://127.0.0.1.evil.net:8080',
];

/** A RegExp source matching `text` literally. */
const escaped = (text: string) => text.replace(/[.*+?^${}()|[\]\\/]/g, '\\$&');

describe('compileOriginOption with credentials: tight options are never refused', () => {
  it('by property: an anchored alternation of escaped origins, and a subdomain wildcard over each host, allow their origins', () => {
    const origin = fc
      .tuple(fc.constantFrom('http', 'https'), fc.domain(), fc.option(fc.integer({ min: 1, max: 65535 }), { nil: null }))
      .map(([scheme, host, port]) => `${scheme}://${host}${port === null ? '' : `:${port}`}`)
      .filter((text) => parseOrigin(text).ok && text.length < 120);
    fc.assert(
      fc.property(fc.uniqueArray(origin, { minLength: 1, maxLength: 4 }), (origins) => {
        const list = new RegExp(`^(${origins.map(escaped).join('|')})$`);
        // A wildcard over a public suffix (`*.a.ck`, `*.github.io`) trusts other people's domains: only over a registrable host.
        const registrable = origins.filter((text) => getDomain(parsed(text).host, { allowPrivateDomains: true }) !== null);
        const wildcards = registrable.map((text) => {
          const { scheme, host, port } = parsed(text);
          return [
            new RegExp(`^${scheme}:\\/\\/([a-z0-9-]+\\.)*${escaped(host)}${port === null ? '' : `:${port}`}$`),
            `${scheme}://www.${host}${port === null ? '' : `:${port}`}`,
          ] as const;
        });
        const matcher = compileOriginOption([list, ...wildcards.map(([pattern]) => pattern)], { credentials: true });
        for (const text of origins)
          expect(
            outcome(() => matcher(text)),
            text,
          ).toBe('allowed');
        for (const [, www] of wildcards)
          if (parseOrigin(www).ok)
            expect(
              outcome(() => matcher(www)),
              www,
            ).toBe('allowed');
      }),
      { numRuns: 200 },
    );
  });

  it('by property: a list naming an origin and, by chance, every same-shape variant of it (not their confirmations) is never refused', () => {
    const origin = fc
      .tuple(fc.constantFrom('http', 'https'), fc.domain(), fc.option(fc.integer({ min: 1, max: 65535 }), { nil: null }))
      .map(([scheme, host, port]) => `${scheme}://${host}${port === null ? '' : `:${port}`}`)
      .filter((text) => parseOrigin(text).ok && text.length < 120);
    fc.assert(
      fc.property(origin, (own) => {
        const variants = lookAlikes(parsed(own)).flatMap(({ origin: twin, confirm }) => (confirm === undefined ? [] : [twin]));
        const matcher = compileOriginOption(new RegExp(`^(${[own, ...variants].map(escaped).join('|')})$`), { credentials: true });
        expect(
          outcome(() => matcher(own)),
          own,
        ).toBe('allowed');
        for (const variant of variants)
          expect(
            outcome(() => matcher(variant)),
            variant,
          ).toBe('allowed');
      }),
      { numRuns: 200 },
    );
  });

  it.each(TIGHT.map(([option, own]) => [String(option), option, own] as const))('%s', (_name, option, own) => {
    const matcher = compileOriginOption(option, { credentials: true });
    // Twice: the second answer may come from the bounded memo.
    for (let round = 0; round < 2; round++)
      for (const origin of own)
        expect(
          outcome(() => matcher(origin)),
          origin,
        ).toBe('allowed');
    for (const origin of ATTACKERS)
      expect(
        outcome(() => matcher(origin)),
        origin,
      ).toBe('denied');
    for (const origin of own) expect(judgeWithOriginMatcher(matcher, origin, { sourceOrigin: origin })).toMatchObject({ allowed: true });
  });
});

/**
 * Loose options, with credentials: [pattern, an origin it was written for, a look-alike anyone can register that it
 * allows, where it is refused]. Refused at construction when the pattern's own text shows an origin it was written for;
 * otherwise the first request it allows along with a look-alike fails, whoever sends it, and every one after.
 */
const LOOSE: ReadonlyArray<readonly [RegExp, string, string, 'construction' | 'request']> = [
  [/example\.com$/, 'https://example.com', 'https://evilexample.com', 'construction'],
  [/^https:\/\/www.example.com$/, 'https://www.example.com', 'https://wwwxexample.com', 'construction'],
  [/^https:\/\/example\.com/, 'https://example.com', 'https://example.com.evil.net', 'construction'],
  [/example\.com/, 'https://example.com', 'https://notexample.com', 'construction'],
  [/^https?:\/\/(.*\.)?example\.com/, 'https://www.example.com', 'https://example.com.evil.net', 'construction'],
  [/^https:\/\/[a-z]+.example\.com$/, 'https://www.example.com', 'https://evilexample.com', 'construction'],
  [/^https:\/\/[a-z0-9-]+\.github\.io$/, 'https://me.github.io', 'https://attacker.github.io', 'construction'],
  [/\.example\.co\.uk$|example.co.uk$/, 'https://example.co.uk', 'https://evilexample.co.uk', 'construction'],
  [/^http:\/\/localhost/, 'http://localhost:3000', 'http://localhost.evil.net', 'construction'],
  [/^https:\/\/(app|api)\.example\.com/, 'https://app.example.com', 'https://app.example.com.evil.net', 'request'],
  [/^http:\/\/192\.168\.1\.\d{1,3}/, 'http://192.168.1.20', 'http://192.168.1.20.evil.net', 'request'],
  // Wildcards over IP addresses (attacker's review, session 15, helper-55's lead).
  [/^http:\/\/192\.168\.1\.\d{1,3}$/, 'http://192.168.1.20', 'http://192.168.1.66', 'request'],
  [/^http:\/\/\d+\.\d+\.\d+\.\d+:3000$/, 'http://127.0.0.1:3000', 'http://45.33.32.156:3000', 'request'],
  [/^https:\/\/45\.33\.\d+\.\d+$/, 'https://45.33.0.10', 'https://45.33.32.156', 'request'],
  [/^https:\/\/\[2600:3c01::[0-9a-f:]+\]$/, 'https://[2600:3c01::1]', 'https://[2600:3c01::bad:cafe]', 'request'],
  // Ranges over part of an octet and groups hidden in `::` (attacker's review, session 15, helper-69).
  [/^https:\/\/192\.168\.1\.1\d\d$/, 'https://192.168.1.150', 'https://192.168.1.199', 'request'],
  [/^http:\/\/10\.0\.0\.2[0-4]\d$/, 'http://10.0.0.210', 'http://10.0.0.249', 'request'],
  [/^https:\/\/\[fd[0-9a-f]{2}:[0-9a-f:]*\]$/, 'https://[fd12::]', 'https://[fdab:1::2]', 'request'],
  [/^https:\/\/\[2600:3c01:[0-9a-f]{1,4}::\]$/, 'https://[2600:3c01:1::]', 'https://[2600:3c01:bad::]', 'request'],
  [/^https:\/\/(app|api).example\.com$/, 'https://app.example.com', 'https://appxexample.com', 'request'],
  [/^https:\/\/(app|api).example\.com$/, 'https://api.example.com', 'https://api-example.com', 'request'],
  [/^https:\/\/app\.example\.com$|^https:\/\/(www\.)?example\.com/, 'https://example.com', 'https://www.example.com.evil.net', 'construction'],
  // Wildcards inside the registrable domain (attacker's review, session 14, helper-42).
  [/^https:\/\/myapp-[a-z0-9-]+\.vercel\.app$/, 'https://myapp-git-main.vercel.app', 'https://myapp-attacker.vercel.app', 'request'],
  [/^https:\/\/myapp-.*\.vercel\.app$/, 'https://myapp-git-main.vercel.app', 'https://myapp-attacker.vercel.app', 'request'],
  [/^https:\/\/myapp-[a-z0-9]{9}-team\.vercel\.app$/, 'https://myapp-abc123xyz-team.vercel.app', 'https://myapp-attackerx-team.vercel.app', 'request'],
  [/^https:\/\/myapp-[0-9a-f]{7}\.vercel\.app$/, 'https://myapp-1a2b3c4.vercel.app', 'https://myapp-beefbad.vercel.app', 'request'],
  [
    /^https:\/\/deploy-preview-[0-9]+--mysite\.netlify\.app$/,
    'https://deploy-preview-12--mysite.netlify.app',
    'https://deploy-preview-1--mysite.netlify.app',
    'request',
  ],
  [/^https:\/\/(www\.)?example[a-z0-9-]*\.com$/, 'https://example.com', 'https://example-attacker.com', 'request'],
  [/^https:\/\/example[0-9]*\.com$/, 'https://example.com', 'https://example1337.com', 'request'],
  [/^https:\/\/(www\.)?example\.[a-z]+$/, 'https://example.com', 'https://example.xyz', 'request'],
  [/^https:\/\/(www\.)?example\.[a-z]{2,6}$/, 'https://www.example.com', 'https://www.example.xyz', 'request'],
  [/^https:\/\/(www\.)?example\.co\.[a-z]{2}$/, 'https://example.co.uk', 'https://example.co.ws', 'request'],
];

const REFUSED =
  /^unsafe-configuration: origin \/.+\/[a-z]* allows https?:\/\/\S+ and also https?:\/\/\S+, a look-alike anyone could register \((a match without an end anchor|a suffix match without its leading dot|an unescaped dot|a wildcard inside the registrable domain|a fixed-length wildcard inside the registrable domain|a wildcard top-level domain|a wildcard over IP addresses: anyone on that network or with an address in that range|a range over part of an address octet: anyone on that network with an address in that range|an option allowing every IP address: anyone with a virtual machine serves pages at one)\); together with credentials/;

describe('compileOriginOption with credentials: an option that also allows registrable look-alikes is refused', () => {
  it.each(LOOSE.map(([pattern, own, evil, when]) => [String(pattern), pattern, own, evil, when] as const))('%s', (_name, pattern, own, evil, when) => {
    // The attacker's look-alike is indeed allowed by the pattern: the hole is real.
    expect(pattern.test(evil)).toBe(true);
    const built = outcome(() => compileOriginOption(pattern, { credentials: true }));
    if (when === 'construction') {
      expect(built).toMatch(REFUSED);
      return;
    }
    expect(built).toMatch(/^other: /);
    // On the request: the attacker first, then the publisher's own origin, each with a fresh option.
    for (const order of [
      [evil, own],
      [own, evil],
    ]) {
      const matcher = compileOriginOption(pattern, { credentials: true });
      for (const origin of order) expect(outcome(() => judgeWithOriginMatcher(matcher, origin))).toMatch(REFUSED);
      // Still refused on the next request (never remembered as safe).
      expect(outcome(() => matcher(own))).toMatch(REFUSED);
      expect(outcome(() => matcher(evil))).toMatch(REFUSED);
    }
    // Without credentials the option is cors's, as written.
    expect(compileOriginOption(pattern, { credentials: false })(evil)).toBe(true);
  });

  it('names the pattern, the origin it allowed, the look-alike, the mistake and the remedy', () => {
    const message = outcome(() => compileOriginOption(/example\.com$/, { credentials: true }));
    expect(message.replace(LABEL, 'L')).toContain(
      'origin /example\\.com$/ allows https://example.com and also https://Lexample.com, a look-alike anyone could register (a suffix match without its leading dot)',
    );
    expect(message).toContain(
      'escape every dot and anchor both ends (e.g. /^https:\\/\\/(www\\.)?example\\.com$/), list exact origins, or set credentials: false',
    );
    const request = outcome(() => compileOriginOption(/^https:\/\/(app|api).example\.com$/, { credentials: true })('https://appxexample.com'));
    expect(request).toContain('allows https://app.example.com and also https://appxexample.com, a look-alike anyone could register (an unescaped dot)');
  });

  it('keeps exact origins of a mixed option allowed once a pattern of it was found loose', () => {
    const matcher = compileOriginOption(['https://partner.example', /^https:\/\/(app|api)\.example\.com/], { credentials: true });
    expect(outcome(() => matcher('https://app.example.com'))).toMatch(REFUSED);
    expect(outcome(() => matcher('https://partner.example'))).toBe('allowed');
    expect(outcome(() => matcher('https://evil.example'))).toBe('denied');
  });

  it('remembers safe origins in a bounded memo keyed on the whole origin: 300 hostile origins later, an origin is checked again', () => {
    const pattern = /^https:\/\/[a-z0-9-]+\.example\.com$/;
    const test = vi.spyOn(pattern, 'test');
    const matcher: OriginMatcher = compileOriginOption(pattern, { credentials: true });
    const questionsFor = (origin: string) => {
      test.mockClear();
      expect(matcher(origin)).toBe(true);
      return test.mock.calls.length;
    };
    const first = questionsFor('https://www.example.com');
    expect(first).toBeGreaterThan(4);
    expect(questionsFor('https://www.example.com')).toBe(0);
    // A longer or shorter origin sharing a prefix is its own key.
    expect(questionsFor('https://www.example.com:8443'.replace(':8443', ''))).toBe(0);
    for (let i = 0; i < 300; i++) matcher(`https://h${i}.example.com`);
    expect(questionsFor('https://www.example.com')).toBe(first);
    test.mockRestore();
  });
});

/** A guard built the way the adapters build it, and the questions its function was asked. */
function guarded(answer: (origin: string) => unknown, credentials = true) {
  const asked: string[] = [];
  const ask = (origin: string) => {
    asked.push(origin);
    return answer(origin);
  };
  const source = createCorsPolicy({}, true).guardOriginFunction(ask, credentials);
  return { asked, source };
}

function verdictOf(run: () => Verdict | Promise<Verdict>): Promise<string> {
  return Promise.resolve()
    .then(run)
    .then(
      (verdict) => (verdict.allowed ? `allowed ${verdict.origin}` : `denied ${verdict.reason}`),
      (error: unknown) => (isAmpCorsError(error) ? `${error.code}: ${error.message}` : `other: ${String(error)}`),
    );
}

const OWN = new Set(['https://example.com', 'https://www.example.com', 'https://a.b.example.com']);

/** Origin functions (as the `cors` callback's answer): tight ones, and the loose ones of the attack. */
const TIGHT_FUNCTIONS: ReadonlyArray<readonly [string, (origin: string) => unknown]> = [
  ['a Set of origins', (o) => OWN.has(o)],
  ['an array includes', (o) => [...OWN].includes(o)],
  ["=== or endsWith('.example.com')", (o) => o === 'https://example.com' || o.endsWith('.example.com')],
  ['the URL hostname', (o) => ['example.com', 'www.example.com'].includes(new URL(o).hostname) || new URL(o).hostname.endsWith('.example.com')],
  ['an anchored pattern', (o) => /^https:\/\/([a-z0-9-]+\.)*example\.com$/.test(o)],
  ['the origin itself as the answer', (o) => (OWN.has(o) ? o : false)],
  ['an async lookup', async (o) => OWN.has(o)],
];

const LOOSE_FUNCTIONS: ReadonlyArray<readonly [string, (origin: string) => unknown, string]> = [
  ["endsWith('example.com')", (o) => o.endsWith('example.com'), 'https://evilexample.com'],
  ["startsWith('https://example.com')", (o) => o.startsWith('https://example.com'), 'https://example.com.evil.net'],
  ["includes('example.com')", (o) => o.includes('example.com'), 'https://example.com.evil.net'],
  ['an unanchored pattern', (o) => /example\.com$/.test(o), 'https://evilexample.com'],
  ['answering the pattern itself', () => /^https:\/\/(www\.)?example\.com/, 'https://www.example.com.evil.net'],
  ['an async endsWith', async (o) => o.endsWith('example.com'), 'https://evilexample.com'],
  [
    'a preview-hash pattern',
    (o) => /^https:\/\/myapp-[a-z0-9]{9}-team\.vercel\.app$|^https:\/\/example\.com$/.test(o),
    'https://myapp-attackerx-team.vercel.app',
  ],
  ['a TLD wildcard', async (o) => /^https:\/\/example\.[a-z]{2,6}$/.test(o), 'https://example.xyz'],
];

describe('guardOriginFunction with credentials: look-alikes of each allowed origin', () => {
  afterEach(() => {
    vi.useRealTimers();
  });

  it.each(TIGHT_FUNCTIONS)('%s: allowed, and the look-alikes denied', async (_name, answer) => {
    const { source } = guarded(answer);
    for (const origin of OWN) expect(await verdictOf(() => source().verify(origin))).toBe(`allowed ${origin}`);
    for (const origin of ATTACKERS) expect(await verdictOf(() => source().verify(origin))).toBe('denied unknown-origin');
  });

  it.each(LOOSE_FUNCTIONS)('%s: the look-alike never gets credentials, nor the publisher afterwards', async (_name, answer, evil) => {
    const { source } = guarded(answer);
    expect(await verdictOf(() => source().verify(evil))).toMatch(/^unsafe-configuration: the origin function allows .* a look-alike anyone could register/);
    expect(await verdictOf(() => source().verify('https://example.com'))).toMatch(/^unsafe-configuration: the origin function allows/);
    // Without credentials (this request's) the function is trusted as it answers.
    expect(await verdictOf(() => source(undefined, false).verify(evil))).toBe(`allowed ${evil}`);
  });

  it("an unescaped dot: once the publisher's origin shows it, the look-alike's own request fails too", async () => {
    const { source } = guarded((o) => /^https:\/\/www.example\.com$/.test(o));
    // The look-alike first: none of its own look-alikes is allowed, so this one request is answered.
    expect(await verdictOf(() => source().verify('https://wwwxexample.com'))).toBe('allowed https://wwwxexample.com');
    expect(await verdictOf(() => source().verify('https://www.example.com'))).toContain(
      'also https://wwwqexample.com, a look-alike anyone could register (an unescaped dot)',
    );
    expect(await verdictOf(() => source().verify('https://wwwxexample.com'))).toMatch(/^unsafe-configuration/);
  });

  it('asks its extra questions once each, stops at the first synchronous yes, and nothing more for a denial', () => {
    const { asked, source } = guarded((o) => OWN.has(o));
    asked.length = 0;
    source().verify('https://www.example.com');
    expect(asked[0]).toBe('https://www.example.com');
    // The canary, asked once more (a "no" right after the origin's "yes"), then the look-alikes themselves: none allowed, so no
    // confirmation is asked (eleven for www.example.com, a documentation address the last).
    expect(asked[2]).toBe(asked[1]);
    expect(asked.slice(3)).toEqual(lookAlikes(parsed('https://www.example.com')).map(({ origin }) => origin));
    expect(asked).toHaveLength(3 + 11);
    asked.length = 0;
    source().verify('https://evil.com');
    expect(asked).toEqual(['https://evil.com']);
    const loose = guarded((o) => o.startsWith('https://example.com'));
    loose.asked.length = 0;
    expect(() => loose.source().verify('https://example.com')).toThrow(/look-alike/);
    // The origin, the canary (denied, twice), then the extended host (allowed): no more.
    expect(loose.asked.map((o) => o.replace(LABEL, 'L')).slice(3)).toEqual(['https://example.com.L.invalid']);
  });

  it("asks a same-shape look-alike's confirmation only once it was allowed: a list naming it by chance is allowed, a wildcard is refused", async () => {
    const list = guarded((o) => ['https://shop1.com', 'https://shop7.com'].includes(o));
    list.asked.length = 0;
    expect(await verdictOf(() => list.source().verify('https://shop1.com'))).toBe('allowed https://shop1.com');
    // shop7 (the variant) allowed, shop4 (its confirmation) not: asked right after it, and once more (a "no" right after a "yes").
    const variant = list.asked.indexOf('https://shop7.com');
    expect(list.asked.slice(variant, variant + 3)).toEqual(['https://shop7.com', 'https://shop4.com', 'https://shop4.com']);
    expect(list.asked.filter((o) => o === 'https://shop4.com')).toHaveLength(2);
    const wildcard = guarded(async (o) => /^https:\/\/shop[0-9]\.com$/.test(o));
    expect(await verdictOf(() => wildcard.source().verify('https://shop1.com'))).toContain(
      'also https://shop7.com, a look-alike anyone could register (a fixed-length wildcard inside the registrable domain)',
    );
    expect(await verdictOf(() => wildcard.source().verify('https://shop2.com'))).toMatch(/^unsafe-configuration/);
  });

  it('asks an async function its questions at once: one delay, not one per question, each within the 2 s bound', async () => {
    vi.useFakeTimers();
    const delay = (value: boolean) => new Promise<boolean>((resolve) => setTimeout(() => resolve(value), 100));
    const { source } = guarded((o) => delay(OWN.has(o)));
    let settled: Verdict | undefined;
    void (source().verify('https://www.example.com') as Promise<Verdict>).then((verdict) => {
      settled = verdict;
    });
    // 100 ms for the origin's own answer, 100 ms for all the extra questions together.
    await vi.advanceTimersByTimeAsync(199);
    expect(settled).toBeUndefined();
    await vi.advanceTimersByTimeAsync(1);
    expect(settled).toMatchObject({ allowed: true, origin: 'https://www.example.com' });
    // A question still unanswered at the bound is unknown, and unknown never yields credentials: the request fails then.
    const slow = guarded((o) => (OWN.has(o) ? true : o.includes('ampcorscanary') ? new Promise(() => undefined) : false));
    let late: string | undefined;
    void verdictOf(() => slow.source().verify('https://www.example.com')).then((outcome) => {
      late = outcome;
    });
    await vi.advanceTimersByTimeAsync(1_999);
    expect(late).toBeUndefined();
    await vi.advanceTimersByTimeAsync(1);
    expect(late).toMatch(/^unsafe-configuration: the origin function allowed https:\/\/www\.example\.com with credentials but did not answer about /);
  });

  it('bounds the questions as a whole: a look-alike allowed at once waits for its confirmation within the same 2 s', async () => {
    vi.useFakeTimers();
    // shop7 (the same-shape variant) answered yes at 1.5 s, its confirmation shop4 would answer at 3 s: past the one bound.
    const slowly = (value: boolean, ms: number) => new Promise<boolean>((resolve) => setTimeout(() => resolve(value), ms));
    let confirmAfter = 1_500;
    const { source } = guarded((o) =>
      o === 'https://shop1.com' ? true : o === 'https://shop7.com' ? slowly(true, 1_500) : slowly(false, o === 'https://shop4.com' ? confirmAfter : 10),
    );
    let outcome: string | undefined;
    void verdictOf(() => source().verify('https://shop1.com')).then((settled) => {
      outcome = settled;
    });
    await vi.advanceTimersByTimeAsync(1_999);
    expect(outcome).toBeUndefined();
    await vi.advanceTimersByTimeAsync(1);
    expect(outcome).toMatch(/did not answer about https:\/\/shop4\.com \(a look-alike of https:\/\/shop1\.com anyone could register\) within 2 s/);
    // Not remembered: once the confirmation answers in time (shop7 named by the list, shop4 not), the next request is answered.
    confirmAfter = 10;
    const next = verdictOf(() => source().verify('https://shop1.com'));
    await vi.advanceTimersByTimeAsync(1_520);
    expect(await next).toBe('allowed https://shop1.com');
  });
});

/** Random IP origins as a browser writes them: IPv4 (never loopback) or IPv6 (never `[::1]`), http or https, maybe a port. */
const octet = fc.integer({ min: 0, max: 255 });
const ipv4Host = fc
  .tuple(
    octet.filter((first) => first !== 127),
    octet,
    octet,
    octet,
  )
  .map((parts) => parts.join('.'));
/** Eight groups, many of them zero (so that `::` hides some), written as a browser writes them. */
const ipv6Host = fc
  .array(fc.oneof(fc.constant(0), fc.integer({ min: 0, max: 0xffff })), { minLength: 8, maxLength: 8 })
  .filter((groups) => groups.join() !== '0,0,0,0,0,0,0,1')
  .map((groups) => new URL(`http://[${groups.map((group) => group.toString(16)).join(':')}]`).hostname);
const ipOrigin = (host: fc.Arbitrary<string>) =>
  fc
    .tuple(fc.constantFrom('http', 'https'), host, fc.option(fc.integer({ min: 1, max: 65535 }), { nil: null }))
    .map(([scheme, h, port]) => new URL(`${scheme}://${h}${port === null ? '' : `:${port}`}`).origin);

/** The eight groups of a canonical bracketed IPv6 host (the test's own reading, for the oracle). */
function groupsOf(host: string): number[] {
  const [head = '', tail] = host.slice(1, -1).split('::');
  const before = head === '' ? [] : head.split(':');
  const after = tail === undefined || tail === '' ? [] : tail.split(':');
  const zeros = tail === undefined ? [] : new Array<string>(8 - before.length - after.length).fill('0');
  return [...before, ...zeros, ...after].map((group) => Number.parseInt(group, 16));
}

describe("IP origins with credentials (attacker's review, session 15, helper-69): exact ones allowed, one part left open refused", () => {
  it('by property: exact IPv4 and IPv6 origins, and short lists of them, are allowed as a list, as an anchored pattern and by a function', async () => {
    await fc.assert(
      fc.asyncProperty(fc.uniqueArray(ipOrigin(fc.oneof(ipv4Host, ipv6Host)), { minLength: 1, maxLength: 4 }), async (origins) => {
        const pattern = new RegExp(`^(${origins.map(escaped).join('|')})$`);
        for (const option of [origins, pattern]) {
          const matcher = compileOriginOption(option, { credentials: true });
          for (const origin of origins)
            expect(
              outcome(() => matcher(origin)),
              origin,
            ).toBe('allowed');
        }
        const { source } = guarded((o) => origins.includes(o));
        for (const origin of origins) expect(await verdictOf(() => source().verify(origin)), origin).toBe(`allowed ${origin}`);
      }),
      { numRuns: 150 },
    );
  });

  it('asks a function allowing one IP origin the numbers of questions guardOriginFunction documents (the origin, a canary, the look-alikes)', async () => {
    for (const [origin, questions] of [
      ['http://192.168.1.20', 13],
      ['http://127.0.0.1:3000', 6],
      ['https://[fd12::]', 10],
      ['https://[2600:3c01::f03c:91ff:fe18:bb2f]', 10],
      ['http://[::1]:3000', 2],
    ] as const) {
      const { asked, source } = guarded((o) => o === origin);
      asked.length = 0;
      expect(await verdictOf(() => source().verify(origin))).toBe(`allowed ${origin}`);
      // The origin, and the canary asked once more (a "no" right after the origin's "yes"), besides the questions.
      expect(asked.length - 2, origin).toBe(questions);
    }
  });

  it('by property: a few LAN devices of one /24 are allowed (but a list naming both variants of a part, indistinguishable from a range)', () => {
    fc.assert(
      fc.property(fc.constantFrom('192.168.1', '10.0.0', '172.16.5'), fc.uniqueArray(octet, { minLength: 1, maxLength: 4 }), (network, last) => {
        const origins = last.map((device) => `http://${network}.${device}`);
        const named = new Set(origins);
        fc.pre(
          !origins.some((origin) =>
            lookAlikes(parsed(origin)).some(({ origin: twin, confirm }) => named.has(twin) && confirm !== undefined && named.has(confirm)),
          ),
        );
        const matcher = compileOriginOption(origins, { credentials: true });
        for (const origin of origins)
          expect(
            outcome(() => matcher(origin)),
            origin,
          ).toBe('allowed');
      }),
      { numRuns: 300 },
    );
  });

  it('by property: a pattern or function leaving one octet, one digit (not a hundreds digit) or one IPv6 group open is refused on a request from an address it allows', async () => {
    // [a pattern over IPv4 origins, the origin it was written for] or [a function over IPv6 origins, the origin].
    const ipv4Open = fc.tuple(ipOrigin(ipv4Host), fc.nat(3), fc.nat(2), fc.boolean()).map(([origin, at, digit, wholeOctet]) => {
      const { scheme, host, port } = parsed(origin);
      const octets = host.split('.');
      const open = octets.map((part, i) => {
        if (i !== at) return part;
        // A hundreds digit has one other value at most (1 or 2): a list of two, not a range, so it is never left open alone.
        const position = part.length - 1 - Math.min(digit, 1);
        if (wholeOctet || part.length === 1) return '\\d{1,3}';
        return `${part.slice(0, position)}\\d${part.slice(position + 1)}`;
      });
      const pattern = new RegExp(`^${scheme}:\\/\\/${open.join('\\.')}${port === null ? '' : `:${port}`}$`);
      return [(o: string) => pattern.test(o), origin, pattern] as const;
    });
    const ipv6Open = fc.tuple(ipOrigin(ipv6Host), fc.nat(7)).map(([origin, at]) => {
      const { scheme, host, port } = parsed(origin);
      const own = groupsOf(host);
      const allows = (o: string) => {
        const other = parseOrigin(o);
        if (!other.ok || other.scheme !== scheme || other.port !== port || !other.host.startsWith('[')) return false;
        return groupsOf(other.host).every((group, i) => i === at || group === own[i]);
      };
      return [allows, origin, undefined] as const;
    });
    await fc.assert(
      fc.asyncProperty(fc.oneof(ipv4Open, ipv6Open), async ([allows, origin, pattern]) => {
        expect(allows(origin)).toBe(true);
        if (pattern !== undefined) {
          const matcher = compileOriginOption(pattern, { credentials: true });
          expect(
            outcome(() => matcher(origin)),
            `${pattern} ${origin}`,
          ).toMatch(REFUSED);
        }
        const built = outcome(() => guarded(allows));
        if (built.startsWith('unsafe-configuration')) return;
        const { source } = guarded(allows);
        expect(await verdictOf(() => source().verify(origin)), origin).toMatch(
          /^unsafe-configuration: the origin function allows .* a look-alike anyone could register/,
        );
      }),
      { numRuns: 300 },
    );
  });
});
