// SPEC §5 URL and host canonicalization, IP literals and expressions at their
// edges (issue #6, mutation testing): each refusal with its code and message,
// the IPv4 component limits and IPv6 group counts on both sides, RFC 5952
// compression ties, and the expression limits of 5 hosts and 6 paths.
import { canonicalHost, canonicalizeUrl, canonicalUrlParts, isIpHost, urlExpressions } from '@ampcors/core/safe-browsing';
import { describe, expect, it } from 'vitest';
// Internal to core (not exported): its IP literal parsers.
import { embeddedIpv4, formatIpv4, formatIpv6, parseIpv4, parseIpv6 } from '../../src/ip-address.js';
import { expectError } from './ampcors-error.js';

describe('parseIpv4: limits on both sides', () => {
  const cases: Array<[string, number | null]> = [
    ['4294967295', 0xffffffff],
    ['4294967296', null],
    ['0xffffffff', 0xffffffff],
    ['0x100000000', null],
    ['037777777777', 0xffffffff],
    ['1.16777215', 0x01ffffff],
    ['1.16777216', null],
    ['1.2.65535', 0x0102ffff],
    ['1.2.65536', null],
    ['255.255.255.255', 0xffffffff],
    ['256.1.1.1', null],
    ['1.256.1.1', null],
    ['1.1.256.1', null],
    ['1.1.1.256', null],
    ['1.2.3.4.5', null],
    ['1.2.3.4.0', null],
    ['1..2', null],
    ['', null],
    ['0x', 0],
    ['0x.0x.0x.0x', 0],
    ['0', 0],
    ['010', 8],
    ['08', null],
    ['0x1g', null],
    ['0X1F', 0x1f],
    ['12.0x12.01234', (12 << 24) | (0x12 << 16) | 0o1234],
    ['1.2.3.04', 0x01020304],
  ];
  it.each(cases)('%s', (text, value) => {
    expect(parseIpv4(text)).toBe(value);
  });
  it('formatIpv4 writes the four bytes, high first', () => {
    expect(formatIpv4(0xc37f000b)).toBe('195.127.0.11');
    expect(formatIpv4(0)).toBe('0.0.0.0');
    expect(formatIpv4(0xffffffff)).toBe('255.255.255.255');
    expect(formatIpv4(0x01020304)).toBe('1.2.3.4');
  });
});

describe('parseIpv6 and formatIpv6', () => {
  const cases: Array<[string, number[] | null]> = [
    ['::', [0, 0, 0, 0, 0, 0, 0, 0]],
    ['::1', [0, 0, 0, 0, 0, 0, 0, 1]],
    ['1::', [1, 0, 0, 0, 0, 0, 0, 0]],
    ['1:2:3:4:5:6:7:8', [1, 2, 3, 4, 5, 6, 7, 8]],
    ['1:2:3:4:5:6:7', null],
    ['1:2:3:4:5:6:7:8:9', null],
    ['1::2:3:4:5:6:7', [1, 0, 2, 3, 4, 5, 6, 7]],
    ['1::2:3:4:5:6:7:8', null],
    ['1::2::3', null],
    ['1:2:3:4:5:6:7:8::1::', null],
    [':::', null],
    ['1:2:3:4:5:6:1.2.3.4', [1, 2, 3, 4, 5, 6, 0x0102, 0x0304]],
    ['::ffff:1.2.3.4', [0, 0, 0, 0, 0, 0xffff, 0x0102, 0x0304]],
    ['1.2.3.4::', null],
    ['::1.2.3.4:1', null],
    ['::01.2.3.4', null],
    ['::256.2.3.4', null],
    ['12345::', null],
    ['FfFf::', [0xffff, 0, 0, 0, 0, 0, 0, 0]],
    ['::g', null],
    ['fe80::1%eth0', null],
  ];
  it.each(cases)('%s', (text, groups) => {
    expect(parseIpv6(text)).toEqual(groups);
  });
  it('RFC 5952: the longest run of two or more zero groups, the first on a tie', () => {
    expect(formatIpv6([0x2001, 0xdb8, 0, 0, 0, 0, 0, 1])).toBe('2001:db8::1');
    expect(formatIpv6([1, 0, 2, 0, 3, 0, 4, 0])).toBe('1:0:2:0:3:0:4:0');
    expect(formatIpv6([1, 0, 0, 2, 0, 0, 3, 4])).toBe('1::2:0:0:3:4');
    expect(formatIpv6([1, 0, 0, 2, 0, 0, 0, 4])).toBe('1:0:0:2::4');
    expect(formatIpv6([0, 0, 0, 0, 0, 0, 0, 0])).toBe('::');
    expect(formatIpv6([0, 0, 1, 2, 3, 4, 5, 6])).toBe('::1:2:3:4:5:6');
    expect(formatIpv6([1, 2, 3, 4, 5, 6, 0, 0])).toBe('1:2:3:4:5:6::');
    expect(formatIpv6([0xabcd, 0x0f, 1, 2, 3, 4, 5, 6])).toBe('abcd:f:1:2:3:4:5:6');
  });
  it('embeddedIpv4: IPv4-mapped and NAT64 only', () => {
    expect(embeddedIpv4([0, 0, 0, 0, 0, 0xffff, 0x0102, 0x0304])).toBe(0x01020304);
    expect(embeddedIpv4([0x64, 0xff9b, 0, 0, 0, 0, 0xc000, 0x0201])).toBe(0xc0000201);
    expect(embeddedIpv4([0, 0, 0, 0, 1, 0xffff, 0x0102, 0x0304])).toBeNull();
    expect(embeddedIpv4([0, 0, 0, 0, 0, 0xfffe, 0x0102, 0x0304])).toBeNull();
    expect(embeddedIpv4([0x64, 0xff9b, 1, 0, 0, 0, 1, 2])).toBeNull();
    expect(embeddedIpv4([0x64, 0xff9a, 0, 0, 0, 0, 1, 2])).toBeNull();
    expect(embeddedIpv4([0x65, 0xff9b, 0, 0, 0, 0, 1, 2])).toBeNull();
    expect(embeddedIpv4([0, 0, 0, 0, 0, 0, 0, 1])).toBeNull();
    expect(embeddedIpv4([0, 0, 0, 0, 0, 0xffff, 0xffff, 0xffff])).toBe(0xffffffff);
  });
});

describe('canonicalHost: refusals name the host and the problem', () => {
  it.each([
    [42, 'invalid-host', 'Invalid host "42": not a string'],
    ['a b.com', 'invalid-host', 'Invalid host "a b.com": contains " "'],
    ['a/b', 'invalid-host', 'Invalid host "a/b": contains "/"'],
    ['a%41', 'invalid-host', 'Invalid host "a%41": contains "%"'],
    ['a:80', 'invalid-host', 'Invalid host "a:80": contains ":"'],
    ['a]', 'invalid-host', 'Invalid host "a]": contains "]"'],
    ['...', 'invalid-host', 'Invalid host "...": empty'],
    ['[::1', 'invalid-ip', 'Invalid host "[::1": not a bracketed IPv6 address'],
    ['[zz]', 'invalid-ip', 'Invalid host "[zz]": not a bracketed IPv6 address'],
    ['[::1]x', 'invalid-ip', 'Invalid host "[::1]x": not a bracketed IPv6 address'],
  ])('%j', (host, code, message) => {
    expectError(() => canonicalHost(host as string), code, message);
  });
  it('quotes at most 80 characters', () => {
    const host = `${'a'.repeat(100)} b`;
    expectError(() => canonicalHost(host), 'invalid-host', `Invalid host ${JSON.stringify(`${host.slice(0, 80)}…`)}: contains " "`);
    const eighty = `${'a'.repeat(78)} b`;
    expectError(() => canonicalHost(eighty), 'invalid-host', `Invalid host ${JSON.stringify(eighty)}: contains " "`);
  });
  it('canonical forms', () => {
    expect(canonicalHost('..WWW..Example.COM..')).toBe('www.example.com');
    expect(canonicalHost('[2001:DB8:0:0::1]')).toBe('[2001:db8::1]');
    expect(canonicalHost('[::ffff:1.2.3.4]')).toBe('1.2.3.4');
    expect(canonicalHost('[64:ff9b::c000:201]')).toBe('192.0.2.1');
    expect(canonicalHost('0x7f.1')).toBe('127.0.0.1');
    expect(canonicalHost('Bücher.DE')).toBe('xn--bcher-kva.de');
    expect(canonicalHost('w!eird<>ho$^.com')).toBe('w!eird<>ho$^.com');
  });
  it('isIpHost: IPv4 in any form and bracketed IPv6; never throws', () => {
    expect(isIpHost('3279880203')).toBe(true);
    expect(isIpHost('[::1]')).toBe(true);
    expect(isIpHost('[::ffff:1.2.3.4]')).toBe(true);
    expect(isIpHost('example.com')).toBe(false);
    expect(isIpHost('1.2.3.4.5')).toBe(false);
    expect(isIpHost('a b')).toBe(false);
    expect(isIpHost('[zz]')).toBe(false);
    expect(isIpHost(42 as never)).toBe(false);
  });
});

describe('canonicalizeUrl: refusals name the URL and the problem', () => {
  it.each([
    [42, 'invalid-url', 'Invalid URL "42": not a string'],
    ['mailto:a@b.com', 'invalid-url', 'Invalid URL "mailto:a@b.com": scheme "mailto" is not http, https or ftp'],
    ['https:example.com', 'invalid-url', 'Invalid URL "https:example.com": "https:" is not followed by "//"'],
    ['http://example.com:8x/', 'invalid-url', 'Invalid URL "http://example.com:8x/": the port is not a number'],
    ['http://:abc/', 'invalid-url', 'Invalid URL "http://:abc/": the port is not a number'],
    ['http://[::1]x/', 'invalid-url', 'Invalid URL "http://[::1]x/": text after the IPv6 literal'],
    ['http:///path', 'invalid-url', 'Invalid URL "http:///path": no host'],
    ['http://user@/', 'invalid-url', 'Invalid URL "http://user@/": no host'],
    ['http://a]b/', 'invalid-host', 'Invalid host "a]b": a bracket outside an IPv6 literal'],
    ['http://ü%25.com/', 'invalid-host', 'Invalid host "ü%.com": "%" in an internationalized host'],
    ['http://.../', 'invalid-host', 'Invalid host "...": empty'],
    ['http://[zz]/', 'invalid-ip', 'Invalid host "[zz]": not a bracketed IPv6 address'],
    ['http://[::1/', 'invalid-ip', 'Invalid host "[::1": not a bracketed IPv6 address'],
  ])('%j', (url, code, message) => {
    expectError(() => canonicalizeUrl(url as string), code, message);
  });
  it('quotes at most 120 characters', () => {
    const url = `mailto:${'a'.repeat(200)}`;
    expectError(() => canonicalizeUrl(url), 'invalid-url', `Invalid URL ${JSON.stringify(`${url.slice(0, 120)}…`)}: scheme "mailto" is not http, https or ftp`);
    const exact = `mailto:${'a'.repeat(113)}`;
    expect(exact).toHaveLength(120);
    expectError(() => canonicalizeUrl(exact), 'invalid-url', `Invalid URL ${JSON.stringify(exact)}: scheme "mailto" is not http, https or ftp`);
  });
  it.each([
    ['  http://www.google.com/  ', 'http://www.google.com/'],
    ['HTTP://Example.COM', 'http://example.com/'],
    ['FTP://example.com/a', 'ftp://example.com/a'],
    ['example.com:80/a', 'http://example.com/a'],
    ['localhost:8080', 'http://localhost/'],
    ['http://example.com:/a', 'http://example.com/a'],
    ['http://user:pw@example.com:1234/a?b#c', 'http://example.com/a?b'],
    ['http://exa\tm\r\nple.com/', 'http://example.com/'],
    ['http://example.com/%2541', 'http://example.com/A'],
    ['http://example.com/a/./b/../c', 'http://example.com/a/c'],
    ['http://example.com/a/b/.', 'http://example.com/a/b/'],
    ['http://example.com/a/b/..', 'http://example.com/a/'],
    ['http://example.com/..', 'http://example.com/'],
    ['http://example.com//a///b', 'http://example.com/a/b'],
    ['http://example.com/a?b//c/../d', 'http://example.com/a?b//c/../d'],
    ['http://example.com?q', 'http://example.com/?q'],
    ['http://example.com/a b#c', 'http://example.com/a%20b'],
    ['http://example.com/%23%25', 'http://example.com/%23%25'],
    ['http://example.com/\u00e9', 'http://example.com/%C3%A9'],
    ['http://%FFAB.com/', 'http://%FFab.com/'],
    ['http://%C3%BC.com/', 'http://xn--tda.com/'],
    ['http://[::FFFF:1.2.3.4]:80/', 'http://1.2.3.4/'],
    ['http://[2001:db8::1]/', 'http://[2001:db8::1]/'],
    ['http://3279880203/blah', 'http://195.127.0.11/blah'],
    ['http://\u0001example.com/', 'http://%01example.com/'],
  ])('%j → %s', (url, canonical) => {
    expect(canonicalizeUrl(url)).toBe(canonical);
  });
  it('parts: the query is null without "?" and kept (escaped) with it', () => {
    expect(canonicalUrlParts('http://a.com/p')).toEqual({ scheme: 'http', host: 'a.com', path: '/p', query: null });
    expect(canonicalUrlParts('https://a.com/p?')).toEqual({ scheme: 'https', host: 'a.com', path: '/p', query: '' });
    expect(canonicalUrlParts('a.com?x y')).toEqual({ scheme: 'http', host: 'a.com', path: '/', query: 'x%20y' });
  });
});

describe('urlExpressions: the host and path limits', () => {
  it('at most 5 hosts: the exact host, then 4 from the registrable domain, longest first', () => {
    const hosts = [...new Set(urlExpressions('http://a.b.c.d.e.f.example.com/').map((e) => e.slice(0, e.indexOf('/'))))];
    expect(hosts).toEqual(['a.b.c.d.e.f.example.com', 'd.e.f.example.com', 'e.f.example.com', 'f.example.com', 'example.com']);
  });
  it('exactly as many suffix hosts as there are labels above the registrable domain', () => {
    const hosts = (url: string) => [...new Set(urlExpressions(url).map((e) => e.slice(0, e.indexOf('/'))))];
    expect(hosts('http://b.c.example.co.uk/')).toEqual(['b.c.example.co.uk', 'c.example.co.uk', 'example.co.uk']);
    expect(hosts('http://example.com/')).toEqual(['example.com']);
    expect(hosts('http://x.y.github.io/')).toEqual(['x.y.github.io', 'y.github.io', 'github.io']);
    expect(hosts('http://localhost/')).toEqual(['localhost']);
    expect(hosts('http://co.uk/')).toEqual(['co.uk']);
    expect(hosts('http://1.2.3.4/')).toEqual(['1.2.3.4']);
    expect(hosts('http://[::1]/')).toEqual(['[::1]']);
  });
  it('paths: with the query, without it, then / and up to 3 more directories', () => {
    expect(urlExpressions('http://example.com/1/2/3/4/5/6.html?q=1')).toEqual([
      'example.com/1/2/3/4/5/6.html?q=1',
      'example.com/1/2/3/4/5/6.html',
      'example.com/',
      'example.com/1/',
      'example.com/1/2/',
      'example.com/1/2/3/',
    ]);
    expect(urlExpressions('http://example.com/1/2/')).toEqual(['example.com/1/2/', 'example.com/', 'example.com/1/']);
    expect(urlExpressions('http://example.com/?')).toEqual(['example.com/']);
    expect(urlExpressions('http://example.com/a?')).toEqual(['example.com/a', 'example.com/']);
    expect(urlExpressions('http://example.com/?x')).toEqual(['example.com/?x', 'example.com/']);
  });
  it('an escaped host still has its registrable domain (the host is not parsed as a URL again)', () => {
    expect(urlExpressions('http://a%25b.example.com/')).toEqual(['a%25b.example.com/', 'example.com/']);
  });
  it('never more than 30 expressions, never a duplicate', () => {
    const all = urlExpressions('http://a.b.c.d.e.f.g.example.com/1/2/3/4/5/6?q');
    expect(all).toHaveLength(30);
    expect(new Set(all).size).toBe(30);
  });
});
