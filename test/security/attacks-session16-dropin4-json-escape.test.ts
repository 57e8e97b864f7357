/**
 * Attacker's review (session 16; found by the attacker helper, fixed by helper fix-json-escape): an options
 * delegate (Express 4 and 5) or an origin function (Koa, Hono) with credentials that reads the origin from JSON
 * carried in the request (`JSON.parse(req.headers['x-data']).origin`, an OAuth-style `state` query value holding a
 * `returnTo` URL) and checks it loosely or not at all. The guard's questions replaced the real origin wherever a
 * reading of a value showed it, but no reading decoded JSON string escapes: the attacker wrote
 * `https://evil\u0065xample.com`, every question still read the attacker's origin once the function parsed the
 * JSON, the function answered it (never the canary nor a look-alike), the guard passed and the site answered the
 * attacker's credentialed reads. A reading now also decodes JSON and JavaScript string escapes (`\uXXXX`, surrogate
 * pairs too, `\xHH`, `\/`, `\t`, …) beside percent escapes, in any order (core's asked-origin.ts, 2).
 * Each attack is the attacker's read: GET with the victim's cookie from the real origin. The last block checks the
 * other side: a function checking that origin against a list stays allowed.
 *
 * Not fixable, and documented (SECURITY.md): an origin carried in a form ampcors does not read (base64,
 * encryption, compression).
 */
import { type OriginRewriter, originRewriter } from '@ampcors/core/adapter';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { path, type Read, READERS, type Where } from './value-readers.js';

/** The attacker's loose check: any origin ending with the registrable name. */
const loose = (origin: unknown): string | false => (typeof origin === 'string' && origin.endsWith('example.com') ? origin : false);
/** Each reader has its own try/catch (a value that is no JSON reads as no origin). */
const guarded =
  (read: (value: string) => unknown): Read =>
  (value) => {
    try {
      const origin = typeof value === 'string' ? read(value) : false;
      return typeof origin === 'string' ? origin : false;
    } catch {
      return false;
    }
  };
/** `JSON.parse(value).origin`, checked loosely. */
const jsonOriginLoose = guarded((value) => loose((JSON.parse(value) as { origin: unknown }).origin));
/** `JSON.parse(value).origin`, echoed. */
const jsonOrigin = guarded((value) => (JSON.parse(value) as { origin: unknown }).origin);
/** `new URL(JSON.parse(value).returnTo).origin`, checked loosely. */
const jsonUrlOriginLoose = guarded((value) => loose(new URL((JSON.parse(value) as { returnTo: string }).returnTo).origin));
/** `new URL(JSON.parse(value).returnTo).origin`, echoed. */
const jsonUrlOrigin = guarded((value) => new URL((JSON.parse(value) as { returnTo: string }).returnTo).origin);
/** The same after the function decodes the value once more itself. */
const decodedJsonUrlOrigin = guarded((value) => new URL((JSON.parse(decodeURIComponent(value)) as { returnTo: string }).returnTo).origin);
/** A JSON string that holds JSON: parsed twice. */
const twiceJsonUrlOrigin = guarded((value) => new URL((JSON.parse(JSON.parse(value) as string) as { returnTo: string }).returnTo).origin);

const EVIL = 'https://evilexample.com';
/** [what, the attacker's real Origin, where, the value written (before the query's own encoding), the function's reading] */
const CASES: ReadonlyArray<readonly [string, string, Where, string, Read]> = [
  ['\\u escape in a JSON header, loose check', EVIL, 'header', '{"origin":"https://evil\\u0065xample.com"}', jsonOriginLoose],
  [
    '\\u escapes of the whole origin in a JSON header',
    EVIL,
    'header',
    `{"origin":"${[...EVIL].map((c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`).join('')}"}`,
    jsonOrigin,
  ],
  ['\\u escape in upper-case hex and escaped slashes', EVIL, 'header', '{"returnTo":"https:\\/\\/EVIL\\u0045XAMPLE.COM"}', jsonUrlOrigin],
  ['\\u escape in a JSON query state, loose check', EVIL, 'query', '{"returnTo":"https://evil\\u0065xample.com/x"}', jsonUrlOriginLoose],
  ['a tab escape inside the host (the URL parser drops it)', EVIL, 'query', '{"returnTo":"https://evil\\texample.com/x"}', jsonUrlOriginLoose],
  ['a \\u escape of % before an escape the URL host parser decodes', EVIL, 'query', '{"returnTo":"https://evil\\u002565xample.com/x"}', jsonUrlOriginLoose],
  [
    'a percent escape of the backslash of a \\u escape, decoded by the function',
    EVIL,
    'query',
    encodeURIComponent('{"returnTo":"https://evil\\u0065xample.com/x"}'),
    decodedJsonUrlOrigin,
  ],
  ['a surrogate pair the URL host parser maps to a letter (𝐞)', EVIL, 'query', '{"returnTo":"https://evil\\ud835\\udc1example.com/x"}', jsonUrlOriginLoose],
  ['an IDN host in Unicode, written as \\u escapes', 'https://xn--exmple-cua.com', 'query', '{"returnTo":"https://ex\\u00e4mple.com/x"}', jsonUrlOrigin],
  ['an IPv4 address as one number, one digit escaped', 'http://203.0.113.5', 'header', '{"returnTo":"http://\\u0033405803781/x"}', jsonUrlOrigin],
  [
    'a backslash before a percent escape of the u, decoded by the function',
    EVIL,
    'query',
    '{"returnTo":"https://evil\\%750065xample.com/x"}',
    decodedJsonUrlOrigin,
  ],
  [
    'an IPv4 address as one number, then an escaped control the URL parser strips',
    'http://203.0.113.5',
    'header',
    '{"returnTo":"http://\\u0033405803781\\b"}',
    jsonUrlOrigin,
  ],
  ['JSON in a JSON string (escaped twice)', EVIL, 'header', JSON.stringify('{"returnTo":"https://evil\\u0065xample.com/x"}'), twiceJsonUrlOrigin],
];

describe('an origin read from JSON in a header or the query, written with JSON string escapes', () => {
  for (const [what, origin, where, value, read] of CASES) {
    it(`control: ${what}: the function reads the value as ${origin}`, () => {
      const delivered = where === 'query' ? (new URLSearchParams(path(where, value).slice('/api?'.length)).get('state') ?? undefined) : value;
      expect(read(delivered)).toBe(origin);
    });
    for (const [name, reads] of READERS)
      it(`${name}: ${what}: refused`, async () => {
        const seen = await reads(read, origin, where, value);
        expect(seen.acao === origin && seen.credentials === 'true', JSON.stringify(seen)).toBe(false);
        expect(seen.status, "the guard's refusal").not.toBe(200);
      });
  }
});

describe('a function checking the JSON origin against a list stays allowed, however the trusted origin is escaped', () => {
  const TRUSTED = 'https://app.example.com';
  const listed: Read = (value) => {
    const origin = jsonUrlOrigin(value);
    return origin === TRUSTED ? origin : false;
  };
  const WRITTEN = ['{"returnTo":"https://app.example.com/x"}', '{"returnTo":"https:\\/\\/app.\\u0065xample.com\\/x"}'];
  for (const [name, reads] of READERS)
    for (const where of ['header', 'query'] as const)
      it(`${name}: in the ${where}: allowed, named exactly, with credentials`, async () => {
        for (const value of WRITTEN) {
          const seen = await reads(listed, TRUSTED, where, value);
          expect(seen, `${value}: ${JSON.stringify(seen)}`).toMatchObject({ status: 200, acao: TRUSTED, credentials: 'true' });
        }
      });
});

describe('a rewritten JSON value reads as the asked origin, however its characters are escaped (property)', () => {
  const REAL = 'https://evilexample.com:8443';
  const ASKED = 'https://ampcorscanaryabc.invalid:8443';
  /** One character of a JSON string literal: itself (`/` as `\/` or not), or a `\u` escape in either case. */
  const escapedChar = (char: string, how: number): string => {
    const hex = char.charCodeAt(0).toString(16).padStart(4, '0');
    return how === 0 ? (char === '/' ? '\\/' : char) : how === 1 ? `\\u${hex}` : `\\u${hex.toUpperCase()}`;
  };
  it('JSON.parse of the rewritten literal, then new URL, reads as the asked origin wherever it read as the real one', () => {
    fc.assert(
      fc.property(
        fc.record({
          hows: fc.array(fc.nat(2), { minLength: REAL.length, maxLength: REAL.length }),
          percent: fc.array(fc.boolean(), { minLength: 1, maxLength: 64 }),
          encodes: fc.nat(2),
          path: fc.constantFrom('', '/x', '/welcome?next=%2F'),
          key: fc.constantFrom('returnTo', 'u'),
        }),
        ({ hows, percent, encodes, path, key }) => {
          let literal = `{"${key}":"${[...`${REAL}${path}`].map((char, at) => escapedChar(char, hows[at] ?? 0)).join('')}","n":1}`;
          // Random percent escapes of some characters on top (the backslash of a `\u` escape too; `%` always), then whole encodings.
          literal = [...literal]
            .map((char, at) => (percent[at % percent.length] === true || char === '%' ? `%${char.charCodeAt(0).toString(16).padStart(2, '0')}` : char))
            .join('');
          for (let i = 0; i < encodes; i++) literal = encodeURIComponent(literal);
          const reads = (value: string): string | false => {
            let text = value;
            for (let i = 0; i <= encodes + 1; i++) text = decodeURIComponent(text);
            return guarded((json) => new URL((JSON.parse(json) as Record<string, string>)[key] as string).origin)(text);
          };
          expect(reads(literal), 'control').toBe(REAL);
          const rewrite = originRewriter(REAL, ASKED) as OriginRewriter;
          for (const question of [rewrite.text(literal), rewrite.header('x-data', literal)]) expect(reads(question), question).toBe(ASKED);
          const inQuery = rewrite.url(`/p?v=${encodeURIComponent(literal)}&w=z`);
          expect(reads(new URLSearchParams(inQuery.slice(3)).get('v') ?? ''), inQuery).toBe(ASKED);
        },
      ),
      { numRuns: 500 },
    );
  });
  it('each escape naming a control, read as that control (an IPv4 host ends before it, as the URL parser strips it)', () => {
    const ipv4 = originRewriter('http://203.0.113.5', 'http://ampcorscanaryabc.invalid') as OriginRewriter;
    // What a JSON5 parser makes of a string literal's escapes (it reads `\v` and `\0` too).
    const json5 = (text: string) => JSON.parse(`"${text.replace(/\\v/g, '\\u000b').replace(/\\0/g, '\\u0000')}"`) as string;
    for (const written of [
      'http://\\u0033405803781\\b',
      'http://\\u0033405803781\\f',
      'http://\\u0033405803781\\v',
      'http://\\u0033405803781\\0',
      '\\t\\n\\rhttp://\\u0033405803781\\r',
    ]) {
      expect(new URL(json5(written)).origin, written).toBe('http://203.0.113.5');
      expect(new URL(json5(ipv4.text(written))).origin, written).toBe('http://ampcorscanaryabc.invalid');
    }
  });
  it('the real origin shown at every decoding of both series, in one value: each replaced', () => {
    const rewrite = originRewriter(EVIL, 'https://ampcorscanaryabc.invalid') as OriginRewriter;
    const levels = ['e', '%65', '%2565', '%252565', '%25252565', '%2525252565'].map((e) => `https://${e}vilexample.com`);
    const question = rewrite.text([...levels, 'https://evil\\u0065xample.com', 'https://evil%5Cu0065xample.com'].join(' '));
    let reading = question;
    for (let depth = 0; depth <= levels.length; depth++) {
      for (const read of [reading, JSON.parse(`"${reading.replace(/"/g, '')}"`) as string]) expect(read, question).not.toContain('evilexample.com');
      reading = decodeURIComponent(reading);
    }
  });
  it('a line break escaped inside an IPv4 host (the URL parser drops it)', () => {
    const ipv4 = originRewriter('http://203.0.113.5', 'http://ampcorscanaryabc.invalid') as OriginRewriter;
    for (const written of ['http://\\u00334058\\n03781', 'http://\\u00334058\\r03781', 'http://\\u00334058\\t03781']) {
      expect(new URL(JSON.parse(`"${written}"`) as string).origin, written).toBe('http://203.0.113.5');
      expect(new URL(JSON.parse(`"${ipv4.text(written)}"`) as string).origin, written).toBe('http://ampcorscanaryabc.invalid');
    }
  });
  it('an IPv4 host whose own letters show before an escape still to decode is replaced whole, not in part', () => {
    const ipv4 = originRewriter('http://203.0.113.0', 'http://ampcorscanaryabc.invalid') as OriginRewriter;
    // JSON.parse, then decodeURIComponent: `203.0.113.0%58`, which the URL host parser reads as `203.0.113.0X`, the same address.
    const reads = (value: string) => new URL(decodeURIComponent(JSON.parse(`"${value}"`) as string)).origin;
    const written = 'http://\\u0032\\u0030\\u0033.0.113.0%2558/x';
    expect(reads(written)).toBe('http://203.0.113.0');
    expect(reads(ipv4.text(written))).toBe('http://ampcorscanaryabc.invalid');
  });
  it('a backslash ending a value, or before an escape left incomplete, is kept', () => {
    const rewrite = originRewriter(REAL, ASKED) as OriginRewriter;
    for (const written of ['x\\', 'a\\u00', 'a\\x6', '\\%', '{"o":"\\u006a"}']) expect(rewrite.text(written)).toBe(written);
    expect(rewrite.text('https://evil\\u0065xample.com:8443\\')).toBe(`${ASKED}\\`);
  });
  it('a JSON5 or JavaScript reader: \\x escapes, escaped letters, a line continued', () => {
    const rewrite = originRewriter(REAL, ASKED) as OriginRewriter;
    // What a JSON5 parser (or a JavaScript string literal) makes of `\xHH`, of a backslash before a line break and before a letter with no escape of its own.
    const json5 = (text: string) =>
      text.replace(/\\x([0-9a-fA-F]{2})|\\[\n\u2028]|\\([^ux])/g, (_m, hex: string | undefined, char: string | undefined) =>
        hex !== undefined ? String.fromCharCode(Number.parseInt(hex, 16)) : (char ?? ''),
      );
    for (const written of [
      'https://evil\\x65xample.com:8443/x',
      'https://\\evil\\example.com:8443/x',
      'https://evil\\x65xample\\.com:8443/x',
      'https://evil\\\nexample.com:8443/x',
      'https://evil\\\u2028example.com:8443/x',
    ]) {
      expect(new URL(json5(written)).origin, written).toBe(REAL);
      expect(new URL(json5(rewrite.text(written))).origin, written).toBe(ASKED);
    }
  });
});
