// parseOrigin at its edges (issue #6, mutation testing): every refusal has its
// stable reason code AND a detail naming the problem, the boundaries (length
// cap, 253-octet host, port 65535) are tested on both sides, and non-string
// input from a hostile adapter is refused, never thrown on.
import { MAX_ORIGIN_LENGTH, parseOrigin } from '@ampcors/core';
import { describe, expect, it } from 'vitest';

/** A valid host name of exactly `length` octets: labels of 63 `a`s joined by dots, then the rest. */
function hostOfLength(length: number): string {
  const labels: string[] = [];
  let left = length;
  while (left > 64) {
    labels.push('a'.repeat(63));
    left -= 64;
  }
  labels.push('b'.repeat(left));
  return labels.join('.');
}

describe('parseOrigin: every refusal names its problem', () => {
  const cases: Array<[string, unknown, string, RegExp]> = [
    ['undefined', undefined, 'missing', /no Origin header/],
    ['null', null, 'missing', /no Origin header/],
    ['the empty string', '', 'missing', /no Origin header/],
    ['a number', 42, 'malformed', /not a string/],
    ['an object', { toString: () => 'https://example.com' }, 'malformed', /not a string/],
    ['the opaque origin', 'null', 'null-origin', /opaque origin "null"/],
    ['a list', 'https://a.com, https://b.com', 'list', /list of origins/],
    ['a space', 'https://a .com', 'control-character', /whitespace or a control character/],
    ['DEL', 'https://a.com\u007f', 'control-character', /whitespace or a control character/],
    ['NUL', 'https://a.com\u0000', 'control-character', /control character/],
    ['non-ASCII', 'https://bücher.de', 'not-canonical', /non-ASCII.*punycode/],
    ['no scheme', 'example.com', 'malformed', /scheme:\/\/host/],
    ['a scheme without //', 'https:example.com', 'malformed', /scheme:\/\/host/],
    ['ftp', 'ftp://example.com', 'unsupported-scheme', /scheme ftp is not http or https/],
    ['an uppercase ws scheme', 'WS://example.com', 'unsupported-scheme', /scheme ws is not http or https/],
    ['an uppercase scheme', 'HTTPS://example.com', 'not-canonical', /scheme is not lowercase/],
    ['userinfo', 'https://user@example.com', 'userinfo', /userinfo/],
    ['a path', 'https://example.com/', 'path', /path, query or fragment/],
    ['an unclosed bracket', 'https://[::1', 'malformed', /unclosed IPv6 bracket/],
    ['junk after ]', 'https://[::1]x', 'malformed', /junk after IPv6 address/],
    ['junk after ] and a port', 'https://[::1]8080', 'malformed', /junk after IPv6 address/],
    ['brackets without a colon', 'https://[1234]', 'malformed', /not an IPv6 address/],
    ['brackets with a letter', 'https://[::g]', 'malformed', /not an IPv6 address/],
    ['uppercase IPv6', 'https://[::ABCD]', 'not-canonical', /host is not lowercase/],
    ['an empty host before a port', 'https://:443', 'malformed', /empty host/],
    ['an empty host before a colon', 'http://:', 'malformed', /empty host/],
    ['an uppercase host', 'https://Example.com', 'not-canonical', /host is not lowercase/],
    ['a trailing dot', 'https://example.com.', 'not-canonical', /trailing dot/],
    ['an empty label', 'https://a..com', 'malformed', /not a valid host name/],
    ['a leading hyphen', 'https://-a.com', 'malformed', /not a valid host name/],
    ['octal IPv4', 'http://0177.0.0.1', 'not-canonical', /IPv4 address not in dotted-decimal form/],
    ['hex IPv4', 'http://0x7f.0.0.1', 'not-canonical', /IPv4 address not in dotted-decimal form/],
    ['a numeric last label', 'http://example.123', 'not-canonical', /IPv4/],
    ['an empty port', 'https://example.com:', 'not-canonical', /invalid port/],
    ['port 0', 'https://example.com:0', 'malformed', /invalid port/],
    ['a leading zero', 'https://example.com:080', 'malformed', /invalid port/],
    ['a six-digit port', 'https://example.com:100000', 'malformed', /invalid port/],
    ['port 65536', 'https://example.com:65536', 'malformed', /port out of range/],
    ['port 99999', 'https://example.com:99999', 'malformed', /port out of range/],
    ['https on 443', 'https://example.com:443', 'not-canonical', /default port written out/],
    ['http on 80', 'http://example.com:80', 'not-canonical', /default port written out/],
    ['IPv6 with a default port', 'https://[::1]:443', 'not-canonical', /default port written out/],
    ['IPv6 with port 0', 'https://[::1]:0', 'malformed', /invalid port/],
  ];
  it.each(cases)('%s', (_, raw, reason, detail) => {
    const parsed = parseOrigin(raw as string);
    expect(parsed).toMatchObject({ ok: false, reason });
    expect(parsed.ok === false && parsed.detail).toMatch(detail);
  });
});

describe('parseOrigin: boundaries on both sides', () => {
  it(`refuses more than ${MAX_ORIGIN_LENGTH} characters before parsing, and names the limit`, () => {
    const over = `https://${'a'.repeat(MAX_ORIGIN_LENGTH - 'https://'.length + 1)}`;
    expect(over).toHaveLength(MAX_ORIGIN_LENGTH + 1);
    const parsed = parseOrigin(over);
    expect(parsed).toMatchObject({ ok: false, reason: 'too-long' });
    expect(parsed.ok === false && parsed.detail).toContain(String(MAX_ORIGIN_LENGTH));
  });
  it(`parses exactly ${MAX_ORIGIN_LENGTH} characters (then judges the host, which is too long to be a name)`, () => {
    const exact = `https://${'a'.repeat(MAX_ORIGIN_LENGTH - 'https://'.length)}`;
    expect(exact).toHaveLength(MAX_ORIGIN_LENGTH);
    expect(parseOrigin(exact)).toMatchObject({ ok: false, reason: 'malformed', detail: expect.stringMatching(/not a valid host name/) });
  });
  it('accepts the longest real origin: a 253-octet host and port 65535, under the cap', () => {
    const host = hostOfLength(253);
    expect(host).toHaveLength(253);
    const origin = `https://${host}:65535`;
    expect(origin.length).toBeLessThanOrEqual(MAX_ORIGIN_LENGTH);
    expect(parseOrigin(origin)).toEqual({ ok: true, scheme: 'https', host, port: 65535 });
    expect(parseOrigin(`http://${host}`)).toEqual({ ok: true, scheme: 'http', host, port: null });
  });
  it('refuses a 254-octet host', () => {
    const host = hostOfLength(254);
    expect(host).toHaveLength(254);
    expect(parseOrigin(`https://${host}`)).toMatchObject({ ok: false, reason: 'malformed', detail: expect.stringMatching(/not a valid host name/) });
  });
  it("accepts ports 1 and 65535, and the other scheme's default port", () => {
    expect(parseOrigin('https://example.com:1')).toEqual({ ok: true, scheme: 'https', host: 'example.com', port: 1 });
    expect(parseOrigin('https://example.com:65535')).toEqual({ ok: true, scheme: 'https', host: 'example.com', port: 65535 });
    expect(parseOrigin('http://example.com:443')).toEqual({ ok: true, scheme: 'http', host: 'example.com', port: 443 });
    expect(parseOrigin('https://example.com:80')).toEqual({ ok: true, scheme: 'https', host: 'example.com', port: 80 });
    expect(parseOrigin('https://[::1]:65535')).toEqual({ ok: true, scheme: 'https', host: '[::1]', port: 65535 });
  });
  it('accepts 0x7e (~ is not a host character, so it is refused as a host, not as non-ASCII) and refuses 0x80', () => {
    expect(parseOrigin('https://a~b.com')).toMatchObject({ ok: false, reason: 'malformed' });
    expect(parseOrigin('https://a\u0080b.com')).toMatchObject({ ok: false, reason: 'not-canonical', detail: expect.stringMatching(/non-ASCII/) });
    expect(parseOrigin('https://a!b.com')).toMatchObject({ ok: false, reason: 'malformed' });
  });
  it('accepts canonical IPv4 and IPv6 hosts and underscores in names', () => {
    expect(parseOrigin('http://192.168.0.1:8080')).toEqual({ ok: true, scheme: 'http', host: '192.168.0.1', port: 8080 });
    expect(parseOrigin('https://[2001:db8::1]')).toEqual({ ok: true, scheme: 'https', host: '[2001:db8::1]', port: null });
    expect(parseOrigin('https://[::ffff:1.2.3.4]')).toEqual({ ok: true, scheme: 'https', host: '[::ffff:1.2.3.4]', port: null });
    expect(parseOrigin('https://a_b.example.com')).toEqual({ ok: true, scheme: 'https', host: 'a_b.example.com', port: null });
    expect(parseOrigin('https://x')).toEqual({ ok: true, scheme: 'https', host: 'x', port: null });
  });
});
