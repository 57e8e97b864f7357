// SPEC §5 URL canonicalization against the Safe Browsing vectors of
// ../shared/vectors/sb-canon-vectors.json (copied to fixtures/, sources named
// per entry). The kinds url, url-parts, path and host-of-a-URL are asserted
// here; bare hosts and IPv4 strings are in canonical-host.test.ts. Where a
// source disagrees with SPEC §5 (which follows Google's doc), the vector is in
// DIVERGENCES with the reason, and ampcors's own answer is asserted instead.
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import vectors from './fixtures/sb-canon-vectors.json' with { type: 'json' };
import { canonicalizeUrl, canonicalUrlParts } from '../src/canonical-url.js';
import { AmpCorsError } from '../src/errors.js';

type Parts = { host: string; path: string; query: string };
type CanonVector = {
  id: number;
  kind: string;
  input: string;
  expected: string | null;
  status: string;
  expected_parts?: Parts | null;
};

/** A result of ours: the canonical value, or the code of the AmpCorsError thrown. */
type Ours = string | { throws: string };

const URL_KINDS = new Set(['url', 'url-parts', 'path', 'host']);
const isUrlInput = (v: CanonVector) => v.kind !== 'host' || /^[a-z]+:\/\/|^\//i.test(v.input);
const all = (vectors.vectors as CanonVector[]).filter((v) => URL_KINDS.has(v.kind) && isUrlInput(v));

/** What ampcors answers for a vector, in the vector's own terms. */
function ours(v: CanonVector): Ours {
  try {
    if (v.kind === 'url') return canonicalizeUrl(v.input);
    const parts = canonicalUrlParts(v.input);
    if (v.kind === 'path') return parts.path;
    if (v.kind === 'host') return parts.host;
    return `${parts.host}${parts.path}${parts.query ? `?${parts.query}` : ''}`;
  } catch (error) {
    if (error instanceof AmpCorsError) return { throws: error.code };
    throw error;
  }
}

/** Vectors ampcors deliberately answers differently, why, and what it answers. */
const DIVERGENCES: { id: number; reason: string; ours: Ours }[] = [
  ...[24, 57, 175].map((id) => ({
    id,
    reason:
      'the input is the latin1 rendering of the invalid-UTF-8 byte 0x80; a JS string has no raw bytes, so U+0080 is taken as UTF-8 (C2 80) and the host as an IDN (the byte form %80 is asserted below)',
    ours: 'http://xn--%01-ba.com/',
  })),
  ...[
    [51, 'http://www.google.com/q?'],
    [52, 'http://www.google.com/q?r?'],
    [53, 'http://www.google.com/q?r?s'],
    [56, 'http://evil.com/foo?bar;'],
    [68, 'http://www.google.com/q?r?s?'],
  ].map(([id, canonical]) => ({
    id: id as number,
    reason: "Go's canonicalURL() drops the query; SPEC §5 and the v4 doc keep it (doc vectors 18–20, 23)",
    ours: canonical as string,
  })),
  {
    id: 66,
    reason: 'Go keeps lowercase escapes; SPEC §5 escapes with uppercase hex',
    ours: 'http://some%1Bhost.com/%1B',
  },
  {
    id: 95,
    reason: 'Go only lowercases IPv6 text; SPEC §5 shortens it per RFC 5952 (hex groups, as the WHATWG URL parser also writes it)',
    ours: '[::c009:505]',
  },
  ...[177, 178].map((id) => ({
    id,
    reason: 'the 2010 client keeps non-default ports; SPEC §5 drops the port, as the v4 doc (vector 26), Go and Chromium do',
    ours: id === 177 ? 'http://www.gotaport.com/' : 'http://www.google.com/',
  })),
];

const divergent = new Map(DIVERGENCES.map((d) => [d.id, d]));
const followed = all.filter((v) => !divergent.has(v.id));
const expectedOf = (v: CanonVector): Ours => (v.expected === null ? { throws: expect.any(String) as unknown as string } : v.expected);

describe('sb-canon-vectors: URL kinds', () => {
  it('every divergence names a URL-kind vector, once', () => {
    expect(new Set(DIVERGENCES.map((d) => d.id)).size).toBe(DIVERGENCES.length);
    for (const d of DIVERGENCES) expect(all.some((v) => v.id === d.id)).toBe(true);
  });

  it.each(followed.map((v) => [v.id, v.status, v.kind, JSON.stringify(v.input), v] as const))('#%i %s %s %s', (_id, _status, _kind, _input, v) => {
    expect(ours(v)).toEqual(expectedOf(v));
  });

  it.each(followed.filter((v) => v.kind === 'url-parts' && v.expected_parts).map((v) => [v.id, v] as const))(
    '#%i url-parts: host, path and query separately',
    (_id, v) => {
      const { host, path, query } = canonicalUrlParts(v.input);
      expect({ host, path, query: query ?? '' }).toEqual(v.expected_parts);
    },
  );
});

describe('sb-canon-vectors: divergences (ampcors answer asserted)', () => {
  it.each(DIVERGENCES.map((d) => [d.id, d.reason, d] as const))('#%i %s', (id, _reason, d) => {
    const v = all.find((entry) => entry.id === id) as CanonVector;
    expect(ours(v)).toEqual(d.ours);
    expect(ours(v)).not.toEqual(expectedOf(v));
  });

  it('the byte form of vector 24 gives the doc answer: escaped bytes stay bytes', () => {
    expect(canonicalizeUrl('http://%01%80.com/')).toBe('http://%01%80.com/');
  });
});

describe('canonicalizeUrl: SPEC §5 rules beyond the vectors', () => {
  it.each([
    ['HTTPS://Example.COM:8443', 'https://example.com/'],
    ['example.com:8080/a', 'http://example.com/a'],
    ['http://a.com/a//../b', 'http://a.com/a/b'],
    ['http://a.com/./', 'http://a.com/'],
    ['http://a.com/a/.', 'http://a.com/a/'],
    ['http://a.com/%2e%2E/x', 'http://a.com/x'],
    ['http://a.com/p?q/../r//s#frag', 'http://a.com/p?q/../r//s'],
    ['http://a.com/%3Fx?y', 'http://a.com/?x?y'],
    ['http://a.com/ä', 'http://a.com/%C3%A4'],
    ['http://a.com/%09%0a', 'http://a.com/%09%0A'],
    ['http://[2001:0DB8::1]:443/x', 'http://[2001:db8::1]/x'],
    ['http://[::ffff:7f00:1]/', 'http://127.0.0.1/'],
    ['http://0x7f.1/', 'http://127.0.0.1/'],
    ['http://user:pw@BÜCHER.de./', 'http://xn--bcher-kva.de/'],
    ['http://a.com?', 'http://a.com/?'],
  ])('%j → %j', (input, expected) => {
    expect(canonicalizeUrl(input)).toBe(expected);
  });

  it.each([
    ['javascript:alert(1)', 'invalid-url'],
    ['ws://example.com/', 'invalid-url'],
    ['http:example.com', 'invalid-url'],
    ['http://example.com:80x/', 'invalid-url'],
    ['http://a:1:2/', 'invalid-url'],
    ['http://[::1]x/', 'invalid-url'],
    ['http://[::1/', 'invalid-ip'],
    ['http://[1:2]/', 'invalid-ip'],
    ['http://.../', 'invalid-host'],
    ['http://ü%zz.com/', 'invalid-host'],
  ])('%j is refused with %s', (input, code) => {
    expect(() => canonicalizeUrl(input)).toThrow(expect.objectContaining({ name: 'AmpCorsError', code }));
  });

  it('refuses a non-string with invalid-url', () => {
    expect(() => canonicalizeUrl(42 as unknown as string)).toThrow(expect.objectContaining({ code: 'invalid-url' }));
  });
});

/** Strings built from the pieces URL canonicalization treats specially. */
const trickyUrl = fc
  .array(
    fc.constantFrom(
      'http://',
      'https://',
      'ftp://',
      'HTTP://',
      'mailto:',
      ':',
      ':80',
      '/',
      '//',
      '.',
      '..',
      '/./',
      '/../',
      '?',
      '#',
      '@',
      '%',
      '%25',
      '%2',
      '5',
      '%2e',
      '%2F',
      '%3F',
      '%23',
      '%41',
      '0x',
      '1',
      '255',
      '08',
      '[',
      ']',
      '::',
      'ffff',
      '64:ff9b',
      'a',
      'B',
      'xn--',
      'ü',
      'İ',
      '\u3002',
      '\t',
      ' ',
      '\u0000',
      '\u0080',
      '\ud800',
      'com',
      'co.uk',
    ),
    { maxLength: 24 },
  )
  .map((pieces) => pieces.join(''));

const anyUrl = fc.oneof(trickyUrl, fc.webUrl({ withQueryParameters: true, withFragments: true }), fc.string({ unit: 'binary' }));

describe('canonicalizeUrl properties', () => {
  it('is idempotent on its own output', () => {
    fc.assert(
      fc.property(anyUrl, (url) => {
        let once: string;
        try {
          once = canonicalizeUrl(url);
        } catch (error) {
          return error instanceof AmpCorsError;
        }
        return canonicalizeUrl(once) === once;
      }),
      { numRuns: 5000 },
    );
  });

  it('returns printable ASCII with a path, or throws AmpCorsError', () => {
    fc.assert(
      fc.property(anyUrl, (url) => {
        try {
          return /^(?:https?|ftp):\/\/[^/?]+\/[\u0021-\u007e]*$/.test(canonicalizeUrl(url));
        } catch (error) {
          return error instanceof AmpCorsError;
        }
      }),
      { numRuns: 3000 },
    );
  });
});
