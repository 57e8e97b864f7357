// The guard's question requests show the asked origin wherever the real one shows (asked-origin.ts), in whatever
// encoding the attacker chose, and never rewrite what a correct function compares the origin with.
import fc from 'fast-check';
import { unescape as querystringUnescape } from 'node:querystring';
import { parse as legacyUrlParse } from 'node:url';
import { toUnicode } from 'tr46';
import { describe, expect, it } from 'vitest';
import { type OriginRewriter, originRewriter } from '../src/asked-origin.js';
import { lookAlikes } from '../src/legacy-origin-option.js';
import { type ParsedOrigin, parseOrigin } from '../src/origin-header.js';

const REAL = 'https://evil.example.net';
const CANARY = 'https://ampcorscanaryabc.invalid';
/** A look-alike that contains the real host: its occurrences must not be replaced again. */
const TWIN = 'https://evil.example.net.ampcorscanaryabc.invalid';

const rewriter = (asked = CANARY): OriginRewriter => originRewriter(REAL, asked) as OriginRewriter;
/** The rewriter from `real` to the canary. */
const rewriterFor = (real: string): OriginRewriter => originRewriter(real, CANARY) as OriginRewriter;

/** Decoders a function or framework uses: strict (`undefined` when it throws), lenient (Node's `querystring`) and legacy (the global `unescape`: `%uXXXX`, Latin-1 `%XX`). */
const DECODERS: ReadonlyArray<(text: string) => string | undefined> = [
  (text) => {
    try {
      return decodeURIComponent(text);
    } catch {
      return undefined;
    }
  },
  (text) => querystringUnescape(text),
  (text) => unescape(text),
];

/** Every string a function can make of `text` by decoding it up to `times` times with either decoder (`+` as a space first when `plus`, as a query parser does). */
function readings(text: string, plus: boolean, times = 5): string[] {
  const seen = new Set([text]);
  for (const decode of DECODERS) {
    let level: string | undefined = plus ? text.replace(/\+/g, ' ') : text;
    for (let i = 0; i < times && level !== undefined; i++) {
      level = decode(level);
      if (level !== undefined) seen.add(level);
    }
  }
  return [...seen];
}

/** A reading as the URL host parser maps it, character by character (UTS #46; tabs and line breaks dropped; `\\` as `/`). */
const mapped = (reading: string) =>
  [...reading.replace(/[\t\n\r]/g, '').replace(/\\/g, '/')].map((char) => (char < '\x80' ? char.toLowerCase() : toUnicode(char).domain.toLowerCase())).join('');

/** Whether a reading still shows the real host (outside the asked origin), as a URL parser would read it. */
const showsReal = (reading: string, asked: string) =>
  mapped(reading)
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
        `%u00${char.charCodeAt(0).toString(16)}`,
        `%25u00${char.charCodeAt(0).toString(16).toUpperCase()}`,
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
        // The rest of the value keeps its own bytes: the rewritten value ends as the raw one did.
        expect(value.endsWith(after.replace(/[&=]/g, '')), `${raw} -> ${value}`).toBe(true);
      }),
      { numRuns: 400 },
    );
  });

  /** One character of an origin or host, spelled as the attacker may: as itself, escaped up to three times over, or as a URL host parser maps it. */
  const spellChar = (char: string, inHost: boolean) => {
    const hex = char.charCodeAt(0).toString(16).padStart(2, '0');
    const escapes = ['', '25', '2525'].flatMap((twice) => [`%${twice}${hex}`, `%${twice}${hex.toUpperCase()}`]);
    const wide = /[a-z0-9]/.test(char) ? String.fromCharCode(char.charCodeAt(0) + 0xfee0) : char === '.' ? '\u3002' : char;
    const spellings = [char, char.toUpperCase(), ...escapes, `\t${char}`, `%09${char}`];
    if (char === '/') spellings.push('\\');
    // The URL host parser percent-decodes and maps a host only: full-width forms, their UTF-8 escapes, a soft hyphen it drops.
    if (inHost) spellings.push(wide, encodeURIComponent(wide), `\u00ad${char}`, `%C2%AD${char}`, `%25C2%25AD${char}`);
    return fc.constantFrom(...spellings);
  };
  const spelledAs = (text: string, hostFrom: number) =>
    fc.tuple(...[...text].map((char, at) => spellChar(char, at >= hostFrom))).map((chars) => chars.join(''));
  const REAL_HOST = 'evil.example.net';
  const ASKED = [CANARY, TWIN, 'https://evilqexample.net', 'https://ampcorscanaryabcexample.net'];
  /** What a function reads as an origin or a host from a value (the empty string when it throws). */
  const READS: ReadonlyArray<{ what: string; read: (value: string) => string; real: string; asked: (asked: string) => string }> = [
    { what: 'new URL(v).origin', read: (v) => new URL(v).origin, real: REAL, asked: (asked) => asked },
    { what: 'new URL(v).host', read: (v) => new URL(v).host, real: REAL_HOST, asked: (asked) => new URL(asked).host },
    { what: 'new URL(`https://${v}`).host', read: (v) => new URL(`https://${v}`).host, real: REAL_HOST, asked: (asked) => new URL(asked).host },
  ];
  const readSafely = (read: (value: string) => string, value: string) => {
    try {
      return read(value);
    } catch {
      return '';
    }
  };
  /** A value as it travels in a request target (what is no URL character escaped), for `url()`. */
  const inTarget = (value: string) => value.replace(/[^\x21-\x7e]|[&=#+]/g, (char) => encodeURIComponent(char));

  /** Checks that wherever a reading of the real value reads as the real origin or host, the same reading of the question's reads as the asked one. */
  function readsAsAsked(real: string, question: string, asked: string): void {
    for (const decode of DECODERS) {
      let realLevel: string | undefined = real;
      let questionLevel: string | undefined = question;
      for (let depth = 0; depth <= 3 && realLevel !== undefined; depth++) {
        for (const { what, read, real: realRead, asked: askedRead } of READS) {
          if (readSafely(read, realLevel) !== realRead) continue;
          expect(questionLevel === undefined ? '(throws)' : readSafely(read, questionLevel), `${what} after ${depth} decodings of ${real} -> ${question}`).toBe(
            askedRead(asked),
          );
        }
        realLevel = decode(realLevel);
        questionLevel = questionLevel === undefined ? undefined : decode(questionLevel);
      }
    }
  }

  it('property: at every decoding (0 to 3) a value reading as the real origin or host reads as the asked one, written literally (helper-66)', () => {
    const around = fc.constantFrom('', ' ', 'x', '/welcome', ':443', ':443/p', '/p?q=%2541', '%2Fwelcome', '#h', '.', '%2e');
    const value = fc.oneof(spelledAs(REAL, 'https://'.length), spelledAs(REAL_HOST, 0), spelledAs(encodeURIComponent(REAL), 100));
    fc.assert(
      fc.property(value, around, fc.constantFrom(...ASKED), (spelled, after, asked) => {
        const raw = `${spelled}${after}`;
        const rewrite = originRewriter(REAL, asked) as OriginRewriter;
        // A value handed over decoded (a parsed query, a route parameter), a header value.
        readsAsAsked(raw, rewrite.text(raw), asked);
        readsAsAsked(raw, rewrite.header('x-source', raw), asked);
        // A value in the request target, decoded once by the framework's query parser first.
        const target = rewrite.url(`/p?v=${inTarget(raw)}&w=1`);
        const parsed = (url: string) => new URLSearchParams(url.slice(url.indexOf('?'))).get('v') ?? '(none)';
        expect(target.endsWith('&w=1') && target.startsWith('/p?v='), target).toBe(true);
        readsAsAsked(parsed(`/p?v=${inTarget(raw)}`), parsed(target), asked);
        readsAsAsked(querystringUnescape(inTarget(raw).replace(/\+/g, ' ')), querystringUnescape(target.slice(5, -4).replace(/\+/g, ' ')), asked);
      }),
      { numRuns: 1500 },
    );
  });

  it('replaces only the characters that show the real origin, keeping the encoding of the rest (helper-66)', () => {
    const rewrite = rewriter();
    const host = new URL(CANARY).host;
    expect(rewrite.url('/api?return_to=https://%2565vil.example.net/welcome')).toBe(`/api?return_to=${CANARY}/welcome`);
    expect(rewrite.text('https://%65vil.example.net/welcome%3Fa%3D1')).toBe(`${CANARY}/welcome%3Fa%3D1`);
    expect(rewrite.text('https%3A%2F%2Fev%2569l.example.net%2Fwelcome')).toBe(`${CANARY}%2Fwelcome`);
    expect(rewrite.text('https://ev\u00adil\u3002example.net/x')).toBe(`${CANARY}/x`);
    expect(rewrite.text('https://%EF%BD%85vil.example.net:443/x')).toBe(`${CANARY}:443/x`);
    expect(rewrite.text('https:\\\\EVIL.example.net')).toBe(CANARY);
    expect(rewrite.text('https%3A%2F%2Fevil.example.net')).toBe(`https%3A%2F%2F${host}`);
    expect(rewrite.text('https://%6%35vil.example.net')).toBe(CANARY);
    const ported = originRewriter('http://evil.example.net:8080', 'http://ampcorscanaryabc.invalid:8080') as OriginRewriter;
    expect(ported.text('EVIL.example.net:08080')).toBe('ampcorscanaryabc.invalid:08080');
    expect(ported.text('http://evil.example.net:08080/x')).toBe('http://ampcorscanaryabc.invalid:8080/x');
    expect(ported.header('x-forwarded-host', 'for=http://EVIL.example.net:008080')).toBe('for=http://ampcorscanaryabc.invalid:8080');
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

  describe("another notation of the real host (attacker's review, session 16)", () => {
    /** `text` with its ASCII letters, digits and dots full-width (`。` or `．` for a dot), as the URL host parser maps them back. */
    const fullWidth = (text: string, dot: string) =>
      text.replace(/[0-9a-zA-Z.]/g, (char) => (char === '.' ? dot : String.fromCharCode(char.charCodeAt(0) + 0xfee0)));
    const DOTS = ['.', '\u3002', '\uff0e', '\uff61'] as const;

    /** An IPv4 address in any notation the URL host parser reads: one to four parts, each decimal, octal or hex with leading zeros, a trailing dot. */
    const ipv4Notation = (address: number) =>
      fc
        .record({
          parts: fc.integer({ min: 1, max: 4 }),
          bases: fc.array(fc.constantFrom('dec', 'oct', 'hex', 'HEX'), { minLength: 4, maxLength: 4 }),
          zeros: fc.array(fc.nat(3), { minLength: 4, maxLength: 4 }),
          trailingDot: fc.boolean(),
          wide: fc.constantFrom(null, ...DOTS),
        })
        .map(({ parts, bases, zeros, trailingDot, wide }) => {
          const bytes = [address >>> 24, (address >>> 16) & 0xff, (address >>> 8) & 0xff, address & 0xff];
          const values = [...bytes.slice(0, parts - 1), bytes.slice(parts - 1).reduce((sum, byte) => sum * 256 + byte, 0)];
          const written = values.map((value, at) => {
            const pad = '0'.repeat(zeros[at] as number);
            const base = bases[at];
            if (base === 'dec') return String(value);
            if (base === 'oct') return `0${pad}${value.toString(8)}`;
            return base === 'hex' ? `0x${pad}${value.toString(16)}` : `0X${pad}${value.toString(16).toUpperCase()}`;
          });
          const text = `${written.join('.')}${trailingDot ? '.' : ''}`;
          return wide === null ? text : fullWidth(text, wide);
        });

    /** An IPv6 address in any RFC 4291 text: groups with leading zeros, in either case, any run of zero groups as `::`, the last 32 bits dotted. */
    const ipv6Notation = (groups: readonly number[]) =>
      fc
        .record({
          zeros: fc.array(fc.nat(3), { minLength: 8, maxLength: 8 }),
          upper: fc.boolean(),
          dotted: fc.boolean(),
          run: fc.nat(7),
          length: fc.integer({ min: 0, max: 8 }),
        })
        .map(({ zeros, upper, dotted, run, length }) => {
          const pieces = groups.map((group, at) => {
            const hex = group.toString(16).padStart(Math.min(4, group.toString(16).length + (zeros[at] as number)), '0');
            return upper ? hex.toUpperCase() : hex;
          });
          if (dotted) pieces.splice(6, 2, [groups[6] as number, groups[7] as number].map((group) => `${group >> 8}.${group & 0xff}`).join('.'));
          // The longest run of zero groups from `run` on, at most `length` long, written `::`.
          let end = run;
          while (end < pieces.length && end - run < length && groups[end] === 0 && !(dotted && end >= 6)) end++;
          if (end === run) return `[${pieces.join(':')}]`;
          return `[${pieces.slice(0, run).join(':')}::${pieces.slice(end).join(':')}]`;
        });

    /** Letters of Unicode labels (Latin, Cyrillic, Greek, CJK) and ASCII. */
    const letter = fc.constantFrom('a', 'b', 'e', 'x', '1', 'ä', 'ö', 'ü', 'é', 'ñ', 'ç', 'ø', 'å', 'ệ', 'б', 'д', 'ж', 'λ', 'ω', '中', '文');
    const unicodeLabel = fc.array(letter, { minLength: 1, maxLength: 8 }).map((chars) => chars.join(''));
    /** An IDN host in any notation the URL host parser reads: each label in Unicode (NFC, NFD, upper case, a soft hyphen) or Punycode, any dot. */
    const idnNotation = (unicode: readonly string[], ascii: readonly string[]) =>
      fc
        .tuple(
          fc.array(fc.constantFrom('nfc', 'nfd', 'upper', 'soft', 'punycode', 'PUNYCODE'), { minLength: unicode.length, maxLength: unicode.length }),
          fc.array(fc.constantFrom(...DOTS), { minLength: unicode.length, maxLength: unicode.length }),
        )
        .map(([forms, dots]) =>
          unicode
            .map((label, at) => {
              const form = forms[at];
              const written =
                form === 'nfd'
                  ? label.normalize('NFD')
                  : form === 'upper'
                    ? label.toUpperCase()
                    : form === 'soft'
                      ? `${label.slice(0, 1)}\u00ad${label.slice(1)}`
                      : form === 'punycode'
                        ? (ascii[at] as string)
                        : form === 'PUNYCODE'
                          ? (ascii[at] as string).toUpperCase()
                          : label;
              return at === 0 ? written : `${dots[at]}${written}`;
            })
            .join(''),
        );

    /** A real origin and a notation of its host. */
    const hostAndNotation = fc.oneof(
      fc
        .integer({ min: 0, max: 2 ** 32 - 1 })
        .chain((address) =>
          fc.tuple(fc.constant(`${address >>> 24}.${(address >>> 16) & 0xff}.${(address >>> 8) & 0xff}.${address & 0xff}`), ipv4Notation(address)),
        ),
      fc
        .array(fc.oneof(fc.constant(0), fc.integer({ min: 0, max: 0xffff })), { minLength: 8, maxLength: 8 })
        .chain((groups) => fc.tuple(fc.constant(new URL(`http://[${groups.map((group) => group.toString(16)).join(':')}]`).hostname), ipv6Notation(groups))),
      fc.array(unicodeLabel, { minLength: 1, maxLength: 3 }).chain((labels) => {
        const unicode = [...labels, 'com'];
        const ascii = new URL(`http://${unicode.join('.')}`).hostname.split('.');
        return fc.tuple(fc.constant(ascii.join('.')), idnNotation(unicode, ascii));
      }),
    );

    /** An escape of each character of `text` picked by `escapes` (its UTF-8 bytes), for the URL host parser's own decoding. */
    const escapeSome = (text: string, escapes: readonly boolean[]) =>
      [...text].map((char, at) => (escapes[at % escapes.length] === true && !/[[\]:]/.test(char) ? encodeURIComponent(char) : char)).join('');

    /** How a function reads an origin from a URL: WHATWG `new URL`, and Node's legacy `url.parse` (its host ends at a brace or a backquote too). */
    const URL_READERS: ReadonlyArray<(url: string) => string> = [
      (url) => new URL(url).origin,
      (url) => {
        const parsed = legacyUrlParse(url);
        return parsed.protocol === null || parsed.host === null || parsed.host === '' ? '' : `${parsed.protocol}//${parsed.host}`;
      },
    ];
    /** The origins each reader reads at each reading of `value` (0 to 3 decodings, either decoder), `''` where it reads none. */
    const originsRead = (value: string): string[] =>
      DECODERS.flatMap((decode) => {
        const read: string[] = [];
        let level: string | undefined = value;
        for (let depth = 0; depth <= 3; depth++) {
          for (const reader of URL_READERS) {
            let origin = '';
            try {
              origin = level === undefined ? '' : reader(level);
            } catch {
              // No URL: no origin.
            }
            read.push(origin);
          }
          level = level === undefined ? undefined : decode(level);
        }
        return read;
      });

    it('replaces a run the URL host parser reads as the real host, whole, and no other run', () => {
      const ipv4 = originRewriter('http://203.0.113.5', 'http://ampcorscanaryabc.invalid') as OriginRewriter;
      expect(ipv4.text('http://3405803781/x')).toBe('http://ampcorscanaryabc.invalid/x');
      expect(ipv4.text('HTTP://a@0XCB.0.113.5.:80/x')).toBe('HTTP://a@ampcorscanaryabc.invalid:80/x');
      expect(ipv4.text('0313.0.0161.05 and 203.0.28933')).toBe('ampcorscanaryabc.invalid and ampcorscanaryabc.invalid');
      // An escape inside the run: the run is replaced whole once decoded, never cut at `%`.
      expect(ipv4.text('http://34058037%381/x')).toBe('http://ampcorscanaryabc.invalid/x');
      expect(ipv4.url('/p?src=http%3A%2F%2F3405803781%2Fx&n=1')).toBe('/p?src=http://ampcorscanaryabc.invalid%2Fx&n=1');
      // The real host in its own letters, inside a run the host parser reads whole once decoded: the whole run.
      expect(ipv4.text('http://%3203.0.113.5/x')).toBe('http://ampcorscanaryabc.invalid/x');
      expect((originRewriter('http://203.0.113.0', 'http://ampcorscanaryabc.invalid') as OriginRewriter).text('http://203.0.113.0%58/x')).toBe(
        'http://ampcorscanaryabc.invalid/x',
      );
      // Other addresses and numbers stay.
      for (const other of ['http://3405803782', 'http://203.0.113.6', 'v5.0 build 120.0.0.0', 'http://0xcb.0.113.5x']) expect(ipv4.text(other)).toBe(other);

      const ipv6 = originRewriter('http://[2001:db8::5]:8080', 'http://ampcorscanaryabc.invalid:8080') as OriginRewriter;
      expect(ipv6.text('http://[2001:0DB8:0:0::0005]:08080/x')).toBe('http://ampcorscanaryabc.invalid:8080/x');
      expect(ipv6.text('[2001:db8:0:0:0:0:0:5]')).toBe('ampcorscanaryabc.invalid');
      expect(ipv6.text('http://[2001:db8::6]:8080')).toBe('http://[2001:db8::6]:8080');

      const idn = rewriterFor('https://xn--bcher-kva.xn--exmple-cua.com');
      expect(idn.text('https://BÜCHER.exämple.com/welcome')).toBe(`${CANARY}/welcome`);
      expect(idn.text('https://bu\u0308cher\u3002xn--exmple-cua.com')).toBe(CANARY);
      expect(idn.text('https://u:p@b%C3%BCcher.exämple.com:443')).toBe(`https://u:p@ampcorscanaryabc.invalid:443`);
      // Where `url.parse` ends the host: a brace, a backquote.
      expect(idn.text('https://bücher.exämple.com{x}')).toBe(`${CANARY}{x}`);
      expect(idn.text('https://bücher.exämple.com.x https://exämple.com')).toBe('https://bücher.exämple.com.x https://exämple.com');
      // The proxy headers naming the server's host: only an origin.
      expect(idn.header('x-forwarded-host', 'bücher.exämple.com')).toBe('bücher.exämple.com');
      expect(idn.header('forwarded', 'for=https://bücher.exämple.com')).toBe(`for=${CANARY}`);
    });

    it('property: a value the URL parser reads as the real origin, at any decoding, reads as the asked one in every question', () => {
      const value = fc.record({
        hosts: hostAndNotation,
        https: fc.boolean(),
        port: fc.constantFrom(null, 8080),
        scheme: fc.constantFrom('lower', 'upper'),
        slashes: fc.constantFrom('//', '\\\\', '/\\', '', '///'),
        userinfo: fc.constantFrom('', 'u@', 'u:p@', '%40@'),
        portForm: fc.constantFrom('plain', 'zeros', 'default'),
        path: fc.constantFrom('', '/', '/welcome?next=%2F', '#top', '?q=1', '{x}', '`x', '!x'),
        escapes: fc.array(fc.boolean(), { minLength: 1, maxLength: 6 }),
        escaped: fc.boolean(),
        depth: fc.nat(2),
        asked: fc.nat(),
      });
      fc.assert(
        fc.property(value, ({ hosts: [host, notation], https, port, scheme, slashes, userinfo, portForm, path, escapes, escaped, depth, asked: pick }) => {
          const schemeName = https ? 'https' : 'http';
          const real = `${schemeName}://${host}${port === null ? '' : `:${port}`}`;
          const parsed = parseOrigin(real);
          expect(parsed.ok, real).toBe(true);
          const portText = port === null ? (portForm === 'default' ? (https ? ':443' : ':80') : '') : portForm === 'zeros' ? `:0${port}` : `:${port}`;
          const written = escaped && !notation.startsWith('[') ? escapeSome(notation, escapes) : notation;
          let raw = `${scheme === 'upper' ? schemeName.toUpperCase() : schemeName}:${slashes}${userinfo}${written}${portText}${path}`;
          for (let i = 0; i < depth; i++) raw = encodeURIComponent(raw);
          // The control: some reading of the value is the real origin (a notation the URL parser refuses is no attack).
          fc.pre(originsRead(raw).includes(real));
          // The guard's canary and look-alikes (those a URL parser reads: an `xn--` look-alike may be no Punycode).
          const candidates = [
            `${schemeName}://ampcorscanaryabc.invalid${port === null ? '' : `:${port}`}`,
            ...lookAlikes(parsed as ParsedOrigin).map(({ origin }) => origin),
          ].filter((origin) => originsRead(origin)[0] === origin);
          const asked = candidates[pick % candidates.length] as string;
          const rewrite = originRewriter(real, asked) as OriginRewriter;
          // A value next to another (`z`: no host in any notation) in a request target.
          const inQuery = rewrite.url(`/p?v=${inTarget(raw)}&w=z`);
          expect(inQuery.endsWith('&w=z'), inQuery).toBe(true);
          const deliveries: ReadonlyArray<readonly [string, string, string]> = [
            ['text', raw, rewrite.text(raw)],
            ['header', raw, rewrite.header('x-source', raw)],
            ['query', new URLSearchParams(`v=${inTarget(raw)}`).get('v') ?? '', new URLSearchParams(inQuery.slice(3)).get('v') ?? ''],
          ];
          for (const [how, realValue, question] of deliveries) {
            const realReads = originsRead(realValue);
            const questionReads = originsRead(question);
            realReads.forEach((origin, at) => {
              if (origin === real) expect(questionReads[at], `${how}: ${JSON.stringify(realValue)} -> ${JSON.stringify(question)} (reading ${at})`).toBe(asked);
            });
          }
        }),
        { numRuns: 1500 },
      );
    });
  });

  it("takes time proportional to a hostile value's length (ratio of 64 kB to 16 kB in the same run)", () => {
    // Values packed with escapes of every kind and nested percent escapes: every reading of both series is made.
    const HOSTILE: ReadonlyArray<readonly [string, string]> = [
      ['https://evilexample.com', 'evil\\u0065xample.com%2f\\%25'],
      ['https://evilexample.com', '\\%5C%255C%25255Cx'],
      ['http://203.0.113.5', '203.0.113.5\\u002e%5C 3405803781\\%25'],
      ['https://xn--exmple-cua.com', 'ex\\u00e4mple.com\\u3002%C3%A4%25'],
      // Legacy escapes (`unescape`'s `%uXXXX` and Latin-1 `%XX`) with the other two kinds: readings of all three kinds are made.
      ['https://evilexample.com', 'evil%u0065xample.com%25u%5C%E4\\%25'],
      ['https://xn--exmple-cua.com', 'ex%E4mple%u3002%255Cu0065%2525u0065\\x'],
    ];
    /** The shortest of five timings of one question about `value` (a fresh suffix each: nothing is cached by value). */
    const timed = (rewrite: OriginRewriter, value: string): number => {
      let best = Number.POSITIVE_INFINITY;
      for (let round = 0; round < 5; round++) {
        const start = performance.now();
        rewrite.text(`${value}${round}`);
        best = Math.min(best, performance.now() - start);
      }
      return best;
    };
    for (const [real, unit] of HOSTILE) {
      const rewrite = rewriterFor(real);
      const of = (length: number) => unit.repeat(Math.ceil(length / unit.length)).slice(0, length);
      timed(rewrite, of(4096));
      const ratio = timed(rewrite, of(65536)) / timed(rewrite, of(16384));
      // Linear: about 4 (5 to 6 with the garbage of 64 kB readings); quadratic: about 16.
      expect(ratio, unit).toBeLessThan(10);
    }
  });
});
