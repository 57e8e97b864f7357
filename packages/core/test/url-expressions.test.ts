// SPEC §5 host-suffix / path-prefix expressions against the Safe Browsing
// vectors of ../shared/vectors/sb-expression-vectors.json (copied to
// fixtures/). SPEC §5 follows the v5 doc: the Public Suffix List, exact host
// plus up to 4 hosts from the eTLD+1, and the doc examples' order. Older
// implementations walk labels without the PSL or order differently; those
// vectors are in DIVERGENCES with the reason, and our answer is asserted.
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import vectors from './fixtures/sb-expression-vectors.json' with { type: 'json' };
import { AmpCorsError } from '../src/errors.js';
import { urlExpressions } from '../src/url-expressions.js';

type ExpressionVector = {
  id: number;
  kind: 'expressions' | 'hosts' | 'paths';
  url: string;
  expressions?: string[] | null;
  hosts?: string[] | null;
  paths?: string[] | null;
  ordered?: boolean;
  status: string;
};

const all = vectors.vectors as ExpressionVector[];

const unique = (items: string[]) => [...new Set(items)];
const hostOf = (expression: string) => expression.slice(0, expression.indexOf('/'));
const pathOf = (expression: string) => expression.slice(expression.indexOf('/'));

/** What a vector expects: its list for its kind, or null (must be refused). */
const expectedOf = (v: ExpressionVector): string[] | null => (v[v.kind] ?? null) as string[] | null;

/** Our answer in the vector's terms: the expressions, or their hosts or paths in first-seen order. */
function ours(v: ExpressionVector): string[] | null {
  let expressions: string[];
  try {
    expressions = urlExpressions(v.url);
  } catch (error) {
    if (error instanceof AmpCorsError) return null;
    throw error;
  }
  if (v.kind === 'hosts') return unique(expressions.map(hostOf));
  if (v.kind === 'paths') return unique(expressions.map(pathOf));
  return expressions;
}

/** Order matters when the vector says so, and always for the v5 doc examples SPEC §5 quotes. */
const isOrdered = (v: ExpressionVector) => v.ordered === true || v.status === 'doc-v5';
const comparable = (v: ExpressionVector, list: string[] | null) => (list === null || isOrdered(v) ? list : [...list].sort());

const PSL_REASON = 'v4-era label walk without the Public Suffix List; SPEC §5 (v5) takes the exact host plus up to 4 hosts from the eTLD+1';
const PATH_ORDER = 'same set; the v5 doc lists the exact path (with, then without the query) first, then prefixes from "/"';
const HOST_ORDER = 'same set; the v5 doc lists the exact host first, then the longest suffix down to the eTLD+1';
const NINE_LABELS = ['a.b.c.d.e.f.g.h.i/', 'e.f.g.h.i/', 'f.g.h.i/', 'g.h.i/', 'h.i/'];

/** Vectors ampcors deliberately answers differently, why, and what it answers. */
const DIVERGENCES: { id: number; reason: string; ours: string[] }[] = [
  ...[10, 18, 19].map((id) => ({ id, reason: `${PSL_REASON} (Go keeps 7 labels)`, ours: NINE_LABELS })),
  {
    id: 24,
    reason: `${PSL_REASON}: kita.tokyo.jp and tokyo.jp are public suffixes`,
    ours: ['a.b.c.d.e.f.kita.tokyo.jp', 'c.d.e.f.kita.tokyo.jp', 'd.e.f.kita.tokyo.jp', 'e.f.kita.tokyo.jp', 'f.kita.tokyo.jp'],
  },
  { id: 25, reason: 'the host is written per RFC 5952 (SPEC §5 host step 4); Go keeps the IPv4 dotted tail', ours: ['[::c009:505]'] },
  { id: 27, reason: PATH_ORDER, ours: ['/a/b/c.html', '/', '/a/', '/a/b/'] },
  { id: 29, reason: PATH_ORDER, ours: ['/a/b/c/d/e.html?123', '/a/b/c/d/e.html', '/', '/a/', '/a/b/', '/a/b/c/'] },
  {
    id: 31,
    reason: PATH_ORDER,
    ours: ['/a/b/cde/f?g=foo&h=bar', '/a/b/cde/f', '/', '/a/', '/a/b/', '/a/b/cde/'].map((path) => `12.18.2.156${path}`),
  },
  {
    id: 32,
    reason: PATH_ORDER,
    ours: ['www.google.com', 'google.com'].flatMap((host) =>
      ['/a/b/cde/f?g=foo&h=bar', '/a/b/cde/f', '/', '/a/', '/a/b/', '/a/b/cde/'].map((path) => host + path),
    ),
  },
  {
    id: 33,
    reason: PATH_ORDER,
    ours: ['a.b.c.d.e.f.g', 'c.d.e.f.g', 'd.e.f.g', 'e.f.g', 'f.g'].flatMap((host) =>
      ['/h/i/j/k/l/m/n/o?p=foo&q=bar', '/h/i/j/k/l/m/n/o', '/', '/h/', '/h/i/', '/h/i/j/'].map((path) => host + path),
    ),
  },
  {
    id: 34,
    reason: `${PSL_REASON}: co.uk is a public suffix, so no co.uk/ expressions`,
    ours: ['www.phisher.co.uk', 'phisher.co.uk'].flatMap((host) => ['/a/b', '/', '/a/'].map((path) => host + path)),
  },
  { id: 36, reason: PATH_ORDER, ours: ['1.2.3.4/a/b', '1.2.3.4/', '1.2.3.4/a/'] },
  { id: 38, reason: HOST_ORDER, ours: ['a.b.c', 'b.c'] },
  { id: 40, reason: HOST_ORDER, ours: ['a.b.c.d.e.f.g', 'c.d.e.f.g', 'd.e.f.g', 'e.f.g', 'f.g'] },
];

const divergent = new Map(DIVERGENCES.map((d) => [d.id, d]));
const followed = all.filter((v) => !divergent.has(v.id));

describe('sb-expression-vectors', () => {
  it('every divergence names a vector, once', () => {
    expect(new Set(DIVERGENCES.map((d) => d.id)).size).toBe(DIVERGENCES.length);
    for (const d of DIVERGENCES) expect(all.some((v) => v.id === d.id)).toBe(true);
  });

  it.each(followed.map((v) => [v.id, v.status, v.kind, v.url, v] as const))('#%i %s %s of %s', (_id, _status, _kind, _url, v) => {
    expect(comparable(v, ours(v))).toEqual(comparable(v, expectedOf(v)));
  });

  it.each(DIVERGENCES.map((d) => [d.id, d.reason, d] as const))('#%i diverges: %s', (id, _reason, d) => {
    const v = all.find((entry) => entry.id === id) as ExpressionVector;
    expect(ours(v)).toEqual(d.ours);
    expect(comparable(v, ours(v))).not.toEqual(comparable(v, expectedOf(v)));
  });
});

describe('urlExpressions: SPEC §5 rules beyond the vectors', () => {
  it('drops scheme, userinfo and port, and canonicalizes first', () => {
    expect(urlExpressions('HTTPS://user:pw@WWW.Example.COM:8443/a/../b?x#y')).toEqual([
      'www.example.com/b?x',
      'www.example.com/b',
      'www.example.com/',
      'example.com/b?x',
      'example.com/b',
      'example.com/',
    ]);
  });

  it('ignores private PSL entries (allowPrivateDomains: false)', () => {
    expect(urlExpressions('http://a.b.blogspot.com/').map(hostOf)).toEqual(['a.b.blogspot.com', 'b.blogspot.com', 'blogspot.com']);
  });

  it('gives a public suffix only its exact host', () => {
    expect(urlExpressions('http://co.uk/x')).toEqual(['co.uk/x', 'co.uk/']);
  });

  it('gives an IPv6 host only its exact host', () => {
    expect(urlExpressions('http://[2001:DB8::1]/a/')).toEqual(['[2001:db8::1]/a/', '[2001:db8::1]/']);
  });

  it('reaches 30 expressions at most', () => {
    expect(urlExpressions('http://a.b.c.d.e.f.example.com/1/2/3/4/5/6.html?q')).toHaveLength(30);
  });

  it('refuses a URL with no host', () => {
    expect(() => urlExpressions('/asdf')).toThrow(expect.objectContaining({ name: 'AmpCorsError', code: 'invalid-url' }));
  });
});

/** URLs with many labels, directories, dots and escapes. */
const deepUrl = fc
  .tuple(
    fc.array(fc.constantFrom('a', 'b', 'xn--bcher-kva', 'co', 'uk', 'com', 'blogspot', '1', '0x1', ''), { maxLength: 12 }),
    fc.array(fc.constantFrom('x', 'y.html', '.', '..', '', '%2F', '%3F'), { maxLength: 12 }),
    fc.option(fc.constantFrom('', 'q', 'a/b', '?')),
  )
  .map(([labels, segments, query]) => `http://${labels.join('.')}/${segments.join('/')}${query === null ? '' : `?${query}`}`);

describe('urlExpressions properties', () => {
  it('never returns more than 30 expressions, nor a duplicate', () => {
    fc.assert(
      fc.property(fc.oneof(deepUrl, fc.webUrl({ withQueryParameters: true })), (url) => {
        let expressions: string[];
        try {
          expressions = urlExpressions(url);
        } catch (error) {
          return error instanceof AmpCorsError;
        }
        return expressions.length >= 1 && expressions.length <= 30 && new Set(expressions).size === expressions.length;
      }),
      { numRuns: 3000 },
    );
  });
});
