import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { MAX_ORIGIN_LENGTH, parseOrigin } from '../src/index.js';

describe('parseOrigin', () => {
  it.each([
    ['https://example.com', 'https', 'example.com', null],
    ['http://localhost:8080', 'http', 'localhost', 8080],
    ['https://[::1]:8443', 'https', '[::1]', 8443],
    ['http://127.0.0.1', 'http', '127.0.0.1', null],
  ])('%s is canonical', (raw, scheme, host, port) => {
    expect(parseOrigin(raw)).toEqual({ ok: true, scheme, host, port });
  });
  it.each([
    [undefined, 'missing'],
    ['', 'missing'],
    ['null', 'null-origin'],
    ['https://a.com,https://b.com', 'list'],
    ['https://a.com\t', 'control-character'],
    ['https://a.com/x', 'path'],
    ['https://a.com?x', 'path'],
    ['https://a.com#x', 'path'],
    ['https://a.com\\x', 'path'],
    ['https://u:p@a.com', 'userinfo'],
    ['ftp://a.com', 'unsupported-scheme'],
    ['a.com', 'malformed'],
    ['https://', 'malformed'],
    ['https://a..com', 'malformed'],
    ['https://a.com:', 'not-canonical'],
    ['https://a.com:0', 'malformed'],
    ['https://a.com:080', 'malformed'],
    ['https://a.com:65536', 'malformed'],
    ['https://a.com:443', 'not-canonical'],
    ['http://a.com:80', 'not-canonical'],
    ['https://A.com', 'not-canonical'],
    ['https://a.com.', 'not-canonical'],
    ['https://[::1', 'malformed'],
    ['https://[::G]', 'malformed'],
    ['https://[::1]x', 'malformed'],
    ['https://[::A]', 'not-canonical'],
    ['https://0177.0.0.1', 'not-canonical'],
    ['https://1.2.3', 'not-canonical'],
    ['https://bücher.de', 'not-canonical'],
  ])('%s → %s', (raw, reason) => {
    expect(parseOrigin(raw as string)).toMatchObject({ ok: false, reason });
  });
  it(`caps the length at ${MAX_ORIGIN_LENGTH} before parsing`, () => {
    expect(parseOrigin(`https://${'a'.repeat(MAX_ORIGIN_LENGTH)}`)).toMatchObject({ ok: false, reason: 'too-long' });
  });
  it('accepts only what it can serialize back byte for byte', () => {
    fc.assert(
      fc.property(fc.string({ maxLength: 80 }), (s) => {
        const parsed = parseOrigin(s);
        if (parsed.ok) expect(`${parsed.scheme}://${parsed.host}${parsed.port === null ? '' : `:${parsed.port}`}`).toBe(s);
      }),
      { numRuns: 2000 },
    );
  });
});
