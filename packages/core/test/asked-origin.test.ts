// The guard's question requests show the asked origin wherever the real one shows (asked-origin.ts), in whatever
// encoding the attacker chose, and never rewrite what a correct function compares the origin with.
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { type OriginRewriter, originRewriter } from '../src/asked-origin.js';

const REAL = 'https://evil.example.net';
const CANARY = 'https://ampcorscanaryabc.invalid';
/** A look-alike that contains the real host: its occurrences must not be replaced again. */
const TWIN = 'https://evil.example.net.ampcorscanaryabc.invalid';

const rewriter = (asked = CANARY): OriginRewriter => originRewriter(REAL, asked) as OriginRewriter;

/** Every string a function can make of `text` by decoding it up to three times (`+` as a space first, as a query parser does). */
function readings(text: string, plus: boolean): string[] {
  const seen = [text];
  let level = plus ? text.replace(/\+/g, ' ') : text;
  for (let i = 0; i < 3; i++) {
    try {
      level = decodeURIComponent(level);
    } catch {
      break;
    }
    seen.push(level);
  }
  return seen;
}

/** Whether a reading still shows the real host (outside the asked origin), as a URL parser would read it. */
const showsReal = (reading: string, asked: string) =>
  reading
    .normalize('NFKC')
    .replace(/[\t\n\r]/g, '')
    .toLowerCase()
    .split(new URL(asked).host)
    .some((part) => part.includes('evil.example.net'));

describe('originRewriter', () => {
  it('is null when either origin is no canonical origin, or both are the same', () => {
    expect(originRewriter(null, CANARY)).toBeNull();
    expect(originRewriter('null', CANARY)).toBeNull();
    expect(originRewriter('https://EVIL.example.net', CANARY)).toBeNull();
    expect(originRewriter(REAL, REAL)).toBeNull();
    expect(originRewriter(REAL, CANARY)).not.toBeNull();
  });

  it('rewrites the origin and its host in header values, in any case, never the asked origin again', () => {
    for (const asked of [CANARY, TWIN]) {
      const rewrite = rewriter(asked);
      const host = new URL(asked).host;
      expect(rewrite.header('referer', `${REAL}/page?x=1`)).toBe(`${asked}/page?x=1`);
      expect(rewrite.header('referer', 'HTTPS://EVIL.Example.NET:443/p')).toBe(`${asked}:443/p`);
      expect(rewrite.header('referer', 'https://user@EVIL.example.net:443/p')).toBe(`https://user@${host}:443/p`);
      expect(rewrite.header('x-site', 'evil.example.net')).toBe(host);
      expect(rewrite.header('x-source', encodeURIComponent(REAL))).toBe(encodeURIComponent(asked));
      expect(rewrite.header('x-other', 'nothing here')).toBe('nothing here');
      expect(rewrite.header('referer', asked)).toBe(asked);
    }
  });

  it("never rewrites Host, :authority or Cookie, and only the full origin in proxy headers naming the server's host", () => {
    const rewrite = rewriter();
    for (const name of ['host', ':authority', 'cookie']) expect(rewrite.header(name, `evil.example.net; ${REAL}`)).toBe(`evil.example.net; ${REAL}`);
    for (const name of ['x-forwarded-host', 'forwarded'])
      expect(rewrite.header(name, `host=evil.example.net; ${REAL}`)).toBe(`host=evil.example.net; ${CANARY}`);
  });

  it("rewrites a URL's path segments and query, keeping an absolute target's scheme and authority", () => {
    const rewrite = rewriter();
    const asked = encodeURIComponent(CANARY);
    expect(rewrite.url(`/api/${encodeURIComponent(REAL)}?a=1&src=${encodeURIComponent(REAL)}&b`)).toBe(`/api/${asked}?a=1&src=${asked}&b`);
    expect(rewrite.url('/api?host=evil.example.net')).toBe('/api?host=ampcorscanaryabc.invalid');
    expect(rewrite.url(`http://evil.example.net/x?r=${REAL}`)).toBe(`http://evil.example.net/x?r=${CANARY}`);
    expect(rewrite.url('/plain?a=b+c&d=%2F')).toBe('/plain?a=b+c&d=%2F');
  });

  it('answers each URL for itself when URLs alternate (the last one is remembered)', () => {
    const rewrite = rewriter();
    const urls = [`/a?s=${encodeURIComponent(REAL)}`, '/b?s=other', `/c/${REAL.replace('https://', '')}`];
    const first = urls.map((url) => rewrite.url(url));
    for (let round = 0; round < 3; round++) for (const [at, url] of urls.entries()) expect(rewrite.url(url)).toBe(first[at]);
    expect(first).toEqual([`/a?s=${encodeURIComponent(CANARY)}`, '/b?s=other', '/c/ampcorscanaryabc.invalid']);
  });

  it('rewrites decoded strings through arrays and plain objects, keys included, copying only what changed', () => {
    const rewrite = rewriter();
    const untouched = { a: ['x', { b: 'y' }] };
    expect(rewrite.deep(untouched)).toBe(untouched);
    const parsed = JSON.parse(`{"__proto__": "${REAL}", "list": ["${REAL}", "z"], "keep": {"k": "v"}, "${REAL}": 1}`) as Record<string, unknown>;
    const about = rewrite.deep(parsed);
    expect(Object.getPrototypeOf(about)).toBe(Object.prototype);
    expect(Object.getOwnPropertyDescriptor(about, '__proto__')?.value).toBe(CANARY);
    expect(about['list']).toEqual([CANARY, 'z']);
    expect(about['keep']).toBe(parsed['keep']);
    expect(about[CANARY]).toBe(1);
    expect(Object.hasOwn(about, REAL)).toBe(false);
    expect(parsed['list']).toEqual([REAL, 'z']);
  });

  it('property: however a query value spells the real origin, no reading of the rewritten value shows it', () => {
    const piece = fc.constantFrom('', 'x', '/', ' ', '%', '+', '&', '=', '%ZZ', 'é', '%FF');
    /** One character of the origin, as the attacker may write it. */
    const spell = (char: string) =>
      fc.constantFrom(
        char,
        char.toUpperCase(),
        `%${char.charCodeAt(0).toString(16)}`,
        `%${char.charCodeAt(0).toString(16).toUpperCase()}`,
        `%25${char.charCodeAt(0).toString(16)}`,
        /[a-z]/.test(char) ? String.fromCharCode(char.charCodeAt(0) + 0xfee0) : char,
      );
    const spelled = fc.tuple(...[...REAL].map(spell)).map((chars) => chars.join(''));
    fc.assert(
      fc.property(piece, spelled, piece, fc.constantFrom(CANARY, TWIN), (before, origin, after, asked) => {
        const raw = `${before}${origin}${after}`.replace(/[&=]/g, '');
        const rewritten = (originRewriter(REAL, asked) as OriginRewriter).url(`/p?v=${raw}`);
        const value = rewritten.slice('/p?v='.length);
        expect(rewritten.startsWith('/p?v=') && !value.includes('&'), rewritten).toBe(true);
        for (const reading of readings(value, true)) expect(showsReal(reading, asked), `${raw} -> ${value}: ${reading}`).toBe(false);
      }),
      { numRuns: 400 },
    );
  });

  it('property: a value in which no reading shows the real host is left exactly as it is', () => {
    const text = fc.stringMatching(/^[a-z0-9%+./:ABCDEF-]{0,40}$/);
    fc.assert(
      fc.property(text, (value) => {
        fc.pre(!readings(value, true).some((reading) => showsReal(reading, CANARY)));
        expect(rewriter().url(`/p/${value}?v=${value}`)).toBe(`/p/${value}?v=${value}`);
        expect(rewriter().header('x-any', value)).toBe(value);
      }),
      { numRuns: 400 },
    );
  });
});
