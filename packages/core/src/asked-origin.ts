/**
 * What a guard's question request shows of its origin (attacker's review,
 * session 15: helper-55). The guards ask an origin function or an options
 * delegate about the request made about another origin (a canary, a
 * look-alike). A question that replaced only the `Origin` header let a
 * function echoing the origin from elsewhere in the request (the
 * `__amp_source_origin` query parameter, the `Referer`) answer the real
 * origin to every question, so it passed, and every site read credentialed
 * responses. A question request therefore carries the asked origin wherever
 * the request shows the real one:
 *
 * 1. Header values (not `Host`, `:authority`, nor `Cookie`, see 4): every
 *    occurrence of the real origin, in any case, becomes the asked origin,
 *    and every occurrence of its host the asked host (so a `Referer`'s
 *    origin part, written `https://EVIL.example.net:443/page` or not, is the
 *    asked one). The proxy headers naming the server's own host
 *    (`X-Forwarded-Host`, `Forwarded`, …) only have the origin replaced: a
 *    function allowing its own origin (`origin === req.protocol + '://' +
 *    req.hostname`) must not be made to allow the question's.
 * 2. URL components (a request target's path and query, a parsed query
 *    value, a route parameter) and header values, decoded up to
 *    {@link MAX_DECODES} times (a framework's decoding, a function's own, and
 *    the URL host parser's percent-decoding; lenient, as Node's
 *    `querystring` is), each character of each decoding read as the URL host
 *    parser maps it (UTS #46: `ｅ`, `ⓔ`, `。`, a soft hyphen dropped; tabs and
 *    line breaks removed; `\\` as `/`). When a reading holds a backslash, the
 *    readings also include those made by decodings of JSON and JavaScript
 *    string escapes (attacker's review, session 16: a function reading
 *    `JSON.parse(header).origin` or an OAuth-style `state`, the attacker
 *    writing `https://evil\u0065xample.com`): `\uXXXX` (a surrogate pair as
 *    two), `\xHH` (JSON5, JavaScript), `\/`, `\t` and the other letters naming
 *    a control, a backslash before another character as that character
 *    (JSON5), before a line break as nothing (JavaScript). Each decoding is of
 *    one kind, percent or string escapes, in any order (as `decodeURIComponent`
 *    and `JSON.parse` read); every such reading's replacements are made at
 *    once (session 17: a run replaced as one reading shows it, where another
 *    reads it longer, read as another host). When a reading holds a `%uXXXX`
 *    escape or a `%XX` one of a byte from 0x80 on, the readings also include
 *    those made by decodings of legacy escapes, as the global `unescape` reads
 *    them (attacker's review, session 17: a function reading
 *    `new URL(unescape(req.query.return_to)).origin`, the attacker writing
 *    `https://evil%u0065xample.com` or an IDN letter as Latin-1 `%E4`):
 *    `%uXXXX` as that code unit, `%XX` as the character of that code (Latin-1,
 *    not UTF-8), a third kind in the same any-order search. The first series,
 *    percent escapes alone, stays: a reader that decodes no string escape
 *    reads `\b` as `/b`.
 *    Where the real origin or host shows
 *    (its port with leading zeros or not; `https:evil…`, `https:\\evil…`),
 *    the raw characters it was read from are replaced, and only them: the
 *    asked origin or host is written literally (a canonical ASCII origin has
 *    no `%`, `+` nor non-ASCII character, so it reads the same after any
 *    number of decodings), the rest of the value keeps its own encoding
 *    (attacker's review, session 15: helper-66; encoding the whole value back
 *    left `https%3A%2F%2F…` where a function read a URL, so it threw, which
 *    counts as "not allowed", and every question passed).
 * 3. Never the asked origin itself: a look-alike may contain the real host
 *    (`https://www.example.com.<canary>`), and its occurrences are skipped,
 *    not replaced again.
 * 4. Why this never makes a correct function allow a question: a function
 *    allowing a fixed set of origins allows none of the canaries and
 *    look-alikes whatever the request says (a list naming a look-alike is
 *    confirmed, see delegate-guard.ts), and what a function may legitimately
 *    compare the origin with (the server's own `Host`, a cookie the server
 *    set after checking it) is left as it is.
 *
 * 5. Another notation of the real host (attacker's review, session 16: a
 *    function reading `new URL(req.query.src).origin`, the attacker writing
 *    `?src=https://exämple.com` from `https://xn--exmple-cua.com`, or
 *    `?src=http://3405803781` from `http://203.0.113.5`). When the real host
 *    has other spellings the URL host parser reads as it (an IPv4 address:
 *    one number, hex, octal, fewer parts, a trailing dot; an IPv6 address:
 *    any RFC 4291 text; a host with `xn--` labels: any of them in Unicode,
 *    NFC or not), each reading of a value (2) is also cut into runs, and a
 *    run the URL host parser reads as the real host is replaced, whole, by
 *    the asked host (or, after the real scheme and `//` and followed by the
 *    real port, with them by the asked origin; only that in the proxy
 *    headers of 1). An IPv4 run takes its trailing dot with it (the IPv4
 *    parser drops it; a name keeps it, so a Unicode run leaves its trailing
 *    dots after the asked host, as the first series leaves an ASCII name's);
 *    an IPv4 asked host (a look-alike) is written in the run's notation, so
 *    that it is the same kind of token where the run was (a JSON number). A run is a longest stretch of the characters a host read
 *    as the real one can hold (letters, digits, `-`, `.`, `_`, non-ASCII
 *    ones), or a bracketed IPv6 text: any other character ends it, where the
 *    URL parser ends a host (`/ \ ? # @ :`), where an older parser does
 *    (`url.parse` at a brace or a backquote), and where query parsers read a
 *    space (`+`).
 *    A run never ends at `%`: the host parser decodes escapes, and a run cut
 *    there would be replaced in part, the rest of the host making it no
 *    origin at all, which a function answers as "not allowed". A plain
 *    ASCII name has no other spelling than those of 2, so its values take no
 *    such cut.
 *
 * Not replaced: an origin assembled from pieces none of which holds the real
 * host (`${q.sub}.example.net`), a body, cookies (see 4), data found by a key
 * (a session, a database), an origin in a form no reading decodes (base64,
 * encryption, compression: `JSON.parse(atob(req.query.state)).returnTo`).
 */
import { toUnicode as punycodeToUnicode } from 'punycode/punycode.es6.js';
import { toUnicode as uts46ToUnicode } from 'tr46';
import { parseIpv4, parseIpv6 } from './ip-address.js';
import { parseOrigin } from './origin-header.js';

/**
 * 2. How many times a value is decoded to look for the real origin: a
 * framework's decoding, a function's own three times, and the URL host
 * parser's (a decoding that finds no `%` left ends the search sooner).
 */
const MAX_DECODES = 5;
/** 2. How many replacement rounds one value gets at most (each at the first decoding of either series still showing the real origin). */
const MAX_ROUNDS = 2 * (MAX_DECODES + 1);

/**
 * 2. The work one value may cost, in characters read across its readings and
 * rounds: {@link BUDGET_PER_CHARACTER} per raw character plus
 * {@link BUDGET_BASE}. A value packed with escapes of every kind has many
 * readings (attacker's review, session 17: 16 kB of mixed escapes cost
 * ~100-200 ms per question, ~200 characters read per character, and a
 * credentialed allow asks ~15 questions); past the budget the search stops
 * ({@link exhaustedRewrites}). The tests' values, up to three layers of
 * mixed escapes, cost up to ~85 per character, all under the budget.
 */
const BUDGET_PER_CHARACTER = 64;
/** 2. See {@link BUDGET_PER_CHARACTER}: a short value may cost more per character (the tests' values of 1.5 kB cost up to ~105 000). */
const BUDGET_BASE = 1 << 18;
/** Thrown inside a rewrite whose budget ran out; caught by the rewrite. */
const EXHAUSTED: unique symbol = Symbol('ampcors rewrite budget exhausted');
/** How many rewrites ran out of budget so far (see {@link exhaustedRewrites}). */
let exhausted = 0;

/**
 * How many value rewrites ran out of their work budget since the process
 * started. A rewrite that runs out returns the value as far as rewritten,
 * which may still show the real origin or show none: a question about a
 * request holding such a value is unknown, and the guard reading this count
 * before and after it withholds credentials from that request (it never
 * counts as an answer, in either direction).
 */
export function exhaustedRewrites(): number {
  return exhausted;
}

/** 1. Headers never rewritten: the server's own host, and cookies the server set (4). */
const UNTOUCHED_HEADERS: ReadonlySet<string> = new Set(['host', ':authority', 'cookie']);
/** 1. Proxy headers naming the server's own host: only the real origin is replaced in them, never its host. */
const OWN_HOST_HEADERS: ReadonlySet<string> = new Set(['x-forwarded-host', 'forwarded', 'x-forwarded-server', 'x-host', 'x-original-host']);

/** 2. A character {@link urlForm} maps otherwise than to lower case: a control, `\\`, a non-ASCII character. */
const MAPPED = /[^\x20-\x5b\x5d-\x7e]/;

/** A RegExp source matching `text` literally. */
function literal(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\/]/g, '\\$&');
}

/** 2. What the URL host parser makes of non-ASCII characters (UTS #46 mapping), by character; bounded, the oldest first out. */
const mappedCharacters = new Map<string, string>();
/** How many characters {@link mappedCharacters} keeps. */
const MAX_MAPPED = 512;

/** 2. A non-ASCII character as the URL host parser maps it (`ｅ` as `e`, `。` as `.`, a soft hyphen as nothing). */
function mappedCharacter(char: string): string {
  let mapped = mappedCharacters.get(char);
  if (mapped !== undefined) return mapped;
  mapped = uts46ToUnicode(char).domain.toLowerCase();
  if (mappedCharacters.size >= MAX_MAPPED) mappedCharacters.delete(mappedCharacters.keys().next().value as string);
  mappedCharacters.set(char, mapped);
  return mapped;
}

/** The value of a hexadecimal digit's code, or -1. */
function hexValue(code: number): number {
  if (code >= 0x30 && code <= 0x39) return code - 0x30;
  const lower = code | 0x20;
  return lower >= 0x61 && lower <= 0x66 ? lower - 0x57 : -1;
}

/**
 * 2. One reading of a value: `text`, each of its code units read from the
 * raw characters `from[i]` up to `to[i]` (`null`: the raw value itself).
 */
interface Reading {
  readonly text: string;
  readonly from: Int32Array | null;
  readonly to: Int32Array | null;
}

/**
 * 2. The raw positions of a reading's code units, as they are found: typed,
 * so that a long value's readings cost no garbage per character.
 */
class Positions {
  private data = new Int32Array(64);
  private length = 0;
  /** Appends `position`, `count` times. */
  add(position: number, count: number): void {
    if (count === 1 && this.length < this.data.length) {
      this.data[this.length++] = position;
      return;
    }
    if (this.length + count > this.data.length) {
      const grown = new Int32Array(Math.max(this.data.length * 2, this.length + count));
      grown.set(this.data);
      this.data = grown;
    }
    this.data.fill(position, this.length, this.length + count);
    this.length += count;
  }
  /** The positions added. */
  done(): Int32Array {
    return this.data.subarray(0, this.length);
  }
}

/** 2. The characters the JSON and JavaScript string escapes of a letter stand for (any other character after a backslash stands for itself). */
const NAMED_ESCAPES: ReadonlyMap<string, string> = new Map([
  ['b', '\b'],
  ['f', '\f'],
  ['n', '\n'],
  ['r', '\r'],
  ['t', '\t'],
  ['v', '\v'],
  ['0', '\0'],
]);

/**
 * 2. What the JSON or JavaScript string escape at `at` in `text` stands for
 * (`\u0065`, `\x65`, `\/`, `\t`, `\e`), `null` when no escape starts there.
 */
function stringEscapeAt(text: string, at: number): string | null {
  if (text.charCodeAt(at) !== 0x5c || at + 1 >= text.length) return null;
  const next = text[at + 1] as string;
  if (next === 'u' || next === 'x') {
    const code = hexCode(text, at + 2, at + stringEscapeWidth(next));
    return code < 0 ? null : String.fromCharCode(code);
  }
  // A backslash before a line break continues a JavaScript string: nothing.
  if (next === '\n' || next === '\r' || next === '\u2028' || next === '\u2029') return '';
  return NAMED_ESCAPES.get(next) ?? next;
}

/** 2. How many characters a string escape (found by {@link stringEscapeAt}) whose backslash is followed by `next` has. */
function stringEscapeWidth(next: string): number {
  return next === 'u' ? 6 : next === 'x' ? 4 : 2;
}

/** The number the hex digits of `text` from `start` up to `end` write, or -1 (a character there is no hex digit). */
function hexCode(text: string, start: number, end: number): number {
  let code = 0;
  for (let digit = start; digit < end; digit++) {
    const value = hexValue(text.charCodeAt(digit));
    if (value < 0) return -1;
    code = code * 16 + value;
  }
  return code;
}

/**
 * 2. Whether `text` holds an escape the global `unescape` reads otherwise
 * than `decodeURIComponent` ({@link decoded}'s percent kind): `%uXXXX`, or
 * `%XX` of a byte from 0x80 on (Latin-1; an ASCII one reads the same).
 */
const LEGACY_ESCAPE = /%(?:u[0-9a-f]{4}|[89a-f][0-9a-f])/i;

/**
 * 2. What the legacy escape at `at` in `text` stands for, as the global
 * `unescape` reads it (`%u0065` as `e`, `%E4` as `ä`), `null` when none
 * starts there; {@link legacyEscapeWidth} characters long.
 */
function legacyEscapeAt(text: string, at: number): string | null {
  if (text.charCodeAt(at) !== 0x25) return null;
  const code = legacyEscapeWidth(text, at) === 6 ? hexCode(text, at + 2, at + 6) : escapeAt(text, at);
  return code < 0 ? null : String.fromCharCode(code);
}

/** 2. How many characters the legacy escape at `at` in `text` has: 6 for `%uXXXX` (a lower-case `u` and four hex digits), else 3 (`%XX`). */
function legacyEscapeWidth(text: string, at: number): number {
  return text.charCodeAt(at + 1) === 0x75 && hexCode(text, at + 2, at + 6) >= 0 ? 6 : 3;
}

/** The byte of the escape `%HH` at `at` in `text`, or -1. */
function escapeAt(text: string, at: number): number {
  if (text.charCodeAt(at) !== 0x25) return -1;
  const high = hexValue(text.charCodeAt(at + 1));
  const low = high < 0 ? -1 : hexValue(text.charCodeAt(at + 2));
  return low < 0 ? -1 : high * 16 + low;
}

/**
 * 2. Whether the character at `at` in `text` is one of an escape's hex
 * digits, in the escape or in one a later decoding makes (`%31`, `%2531`,
 * `%252531`: the `%` is written as `%25`, `%2525`, …).
 */
function startsInEscape(text: string, at: number): boolean {
  const before = hexValue(text.charCodeAt(at - 1)) >= 0 ? 1 : 0;
  // The hex digits of the escape: one before `at` and the one at it, or the two from `at` on.
  if (hexValue(text.charCodeAt(at)) < 0 || (before === 0 && hexValue(text.charCodeAt(at + 1)) < 0)) return false;
  let percent = at - before - 1;
  while (percent >= 2 && text.charCodeAt(percent) === 0x35 && text.charCodeAt(percent - 1) === 0x32) percent -= 2;
  return text.charCodeAt(percent) === 0x25;
}

/**
 * 2. The kinds of escapes a decoding reads: `percent` (`%HH`, UTF-8), `strings`
 * (JSON and JavaScript string escapes), `legacy` (the global `unescape`'s).
 */
type Decoding = 'percent' | 'strings' | 'legacy';

/**
 * 2. One lenient decoding of `reading`, each decoded character read from the
 * raw characters of its escapes. `percent`: ASCII escapes and valid UTF-8
 * runs are decoded, an invalid escape stays as it is (a superset of what
 * `decodeURIComponent`, Node's `querystring` and `URLSearchParams` show);
 * `strings`: string escapes instead ({@link stringEscapeAt}: what
 * `JSON.parse` or a JavaScript string literal shows, leniently too);
 * `legacy`: `%uXXXX` and `%XX` as `unescape` reads them ({@link legacyEscapeAt}).
 */
function decoded(reading: Reading, kind: Decoding): Reading {
  const { text } = reading;
  const fromOf = (at: number) => (reading.from === null ? at : (reading.from[at] as number));
  const toOf = (at: number) => (reading.to === null ? at + 1 : (reading.to[at] as number));
  let out = '';
  const from = new Positions();
  const to = new Positions();
  const emit = (chars: string, start: number, end: number) => {
    out += chars;
    from.add(fromOf(start), chars.length);
    to.add(toOf(end - 1), chars.length);
  };
  for (let at = 0; at < text.length;) {
    const unescaped = kind === 'strings' ? stringEscapeAt(text, at) : kind === 'legacy' ? legacyEscapeAt(text, at) : null;
    const byte = kind === 'percent' ? escapeAt(text, at) : -1;
    if (unescaped !== null) {
      const width = kind === 'strings' ? stringEscapeWidth(text[at + 1] as string) : legacyEscapeWidth(text, at);
      emit(unescaped, at, at + width);
      at += width;
    } else if (byte < 0) {
      emit(text[at] as string, at, at + 1);
      at += 1;
    } else if (byte < 0x80) {
      emit(String.fromCharCode(byte), at, at + 3);
      at += 3;
    } else {
      const length = byte >= 0xc2 && byte <= 0xdf ? 2 : byte >= 0xe0 && byte <= 0xef ? 3 : byte >= 0xf0 && byte <= 0xf4 ? 4 : 0;
      let point = length === 2 ? byte & 0x1f : length === 3 ? byte & 0x0f : byte & 0x07;
      let valid = length > 0;
      for (let i = 1; valid && i < length; i++) {
        const next = escapeAt(text, at + 3 * i);
        valid = next >= 0x80 && next <= 0xbf;
        point = point * 64 + (next & 0x3f);
      }
      valid &&= (length !== 3 || (point >= 0x800 && (point < 0xd800 || point > 0xdfff))) && (length !== 4 || (point >= 0x10000 && point <= 0x10ffff));
      if (valid) {
        emit(String.fromCodePoint(point), at, at + 3 * length);
        at += 3 * length;
      } else {
        emit('%', at, at + 1);
        at += 1;
      }
    }
  }
  return { text: out, from: from.done(), to: to.done() };
}

/** 2. Whether two readings of the same text were read from the same raw characters, each code unit. */
function sameSpans(a: Reading, b: Reading): boolean {
  const same = (x: Int32Array | null, y: Int32Array | null) =>
    x === y || (x !== null && y !== null && x.length === y.length && x.every((value, at) => value === y[at]));
  return same(a.from, b.from) && same(a.to, b.to);
}

/** 2. Whether `asked` contains `real`, or an end of one is the other end of the other (`asked` written next to some text could make `real`). */
function overlaps(asked: string, real: string): boolean {
  if (asked.includes(real)) return true;
  for (let length = 1; length < Math.min(asked.length, real.length); length++)
    if (real.endsWith(asked.slice(0, length)) || real.startsWith(asked.slice(-length))) return true;
  return false;
}

/**
 * 2. Whether `text` holds an escape that only a decoding of another kind than
 * percent escapes reads: a backslash (a string escape) or a legacy escape.
 */
function otherEscapes(text: string): boolean {
  return text.includes('\\') || (text.includes('%') && LEGACY_ESCAPE.test(text));
}

/** 2. Whether a decoding of `text` (itself decoded `decodes` times) after it holds {@link otherEscapes}, up to {@link MAX_DECODES} in all. */
function otherEscapesLater(text: string, decodes: number): boolean {
  let later = text;
  for (let at = decodes; at < MAX_DECODES && later.includes('%'); at++) {
    try {
      later = decodeURIComponent(later);
    } catch {
      later = decoded({ text: later, from: null, to: null }, 'percent').text;
    }
    if (otherEscapes(later)) return true;
  }
  return false;
}

/** `raw` decoded `times` times by {@link decoded}. */
function readingAfter(raw: string, times: number): Reading {
  let reading: Reading = { text: raw, from: null, to: null };
  for (let at = 0; at < times; at++) reading = decoded(reading, 'percent');
  return reading;
}

/** 2. {@link urlForm} of a reading with no character {@link MAPPED}: its lower case. */
function lowered(reading: Reading): Reading {
  return { text: reading.text.toLowerCase(), from: reading.from, to: reading.to };
}

/**
 * 2. `reading` as the URL host parser reads it (ASCII in lower case, `\\` as
 * `/`, tabs and line breaks removed, other characters mapped by UTS #46),
 * each code unit with its raw characters (when `spans`; the text alone
 * otherwise).
 */
function urlForm(reading: Reading, spans: boolean): Reading {
  const { text } = reading;
  let out = '';
  const from = new Positions();
  const to = new Positions();
  for (let at = 0; at < text.length;) {
    const code = text.charCodeAt(at);
    const width = code >= 0xd800 && code <= 0xdbff && at + 1 < text.length ? 2 : 1;
    const chars =
      code < 0x80
        ? code === 0x09 || code === 0x0a || code === 0x0d
          ? ''
          : code === 0x5c
            ? '/'
            : code >= 0x41 && code <= 0x5a
              ? String.fromCharCode(code | 0x20)
              : (text[at] as string)
        : mappedCharacter(text.slice(at, at + width));
    const start = reading.from === null ? at : (reading.from[at] as number);
    const end = reading.to === null ? at + width : (reading.to[at + width - 1] as number);
    out += chars;
    if (spans) {
      from.add(start, chars.length);
      to.add(end, chars.length);
    }
    at += width;
  }
  return spans ? { text: out, from: from.done(), to: to.done() } : { text: out, from: null, to: null };
}

/** Rewrites what a request shows of its real origin into an asked origin (see the file comment). */
export interface OriginRewriter {
  /** 1. A header value (`name` in lower case) about the asked origin; the `Origin` header itself is the caller's. */
  header(name: string, value: string): string;
  /** 2. A request target (a path with its query, or an absolute URL whose scheme and authority stay) about the asked origin. */
  url(url: string): string;
  /** 2. A decoded string (a parsed query value, a route parameter) about the asked origin. */
  text(value: string): string;
  /** 2. `value` with every string in it (through arrays and plain objects, keys included) rewritten by {@link OriginRewriter.text}; `value` itself when none changed. */
  deep<T>(value: T): T;
}

/** The parts of an origin replaced. */
interface Parts {
  readonly origin: string;
  /** The host without its port. */
  readonly host: string;
  /** 2. The origin as a URL parser reads it in a value's URL form: any slashes after the scheme, the port with leading zeros. */
  readonly originPattern: string;
  /** 5. Its scheme and colon (`https:`). */
  readonly schemeColon: string;
  /** 5. Its port as a URL parser reads it after a host (`:0*8080`, sticky), `null` for the scheme's default port. */
  readonly portAfter: RegExp | null;
}

/** An origin and its host, or `null` when `origin` is no canonical origin. */
function partsOf(origin: string | null | undefined): Parts | null {
  const parsed = parseOrigin(origin);
  if (!parsed.ok) return null;
  const port = parsed.port === null ? '' : `:0*${parsed.port}`;
  return {
    origin: origin as string,
    host: parsed.host,
    originPattern: `${parsed.scheme}:/*${literal(parsed.host)}${port}`,
    schemeColon: `${parsed.scheme}:`,
    portAfter: parsed.port === null ? null : new RegExp(port, 'y'),
  };
}

/**
 * 5. The other spellings of a real host: which notation the URL host parser
 * reads in a run of a value's URL form, and the host as it reads it.
 */
type Notation =
  /** `decimal`: the address in decimal parts without leading zeros, in one to four parts (`3405803781` … `203.0.113.5`). */
  | { readonly kind: 'ipv4'; readonly address: number; readonly decimal: ReadonlySet<string> }
  | { readonly kind: 'ipv6'; readonly groups: readonly number[] }
  /** `ascii` and `unicode`: the host's labels, as sent and decoded (an ASCII label is its own Unicode form). */
  | { readonly kind: 'idn'; readonly ascii: readonly string[]; readonly unicode: readonly string[]; readonly longest: number };

/** 5. The notation of `host` (an `Origin`'s host), `null` for a plain ASCII name (no other spelling than 2's) or a host no URL parser writes. */
function notationOf(host: string): Notation | null {
  if (host.startsWith('[')) {
    const groups = parseIpv6(host.slice(1, -1));
    return groups === null ? null : { kind: 'ipv6', groups };
  }
  // parseOrigin admits an IPv4 host in dotted decimal only.
  const address = parseIpv4(host);
  if (address !== null) {
    const bytes = host.split('.').map(Number);
    const decimal = [0, 1, 2, 3].map((parts) => [...bytes.slice(0, parts), bytes.slice(parts).reduce((value, byte) => value * 256 + byte, 0)].join('.'));
    return { kind: 'ipv4', address, decimal: new Set(decimal) };
  }
  const ascii = host.split('.');
  if (!ascii.some((label) => label.startsWith('xn--'))) return null;
  let unicode: string[];
  try {
    unicode = punycodeToUnicode(host).split('.');
  } catch {
    // An `xn--` label that is no Punycode: no URL parser writes it.
    return null;
  }
  // A run longer than this cannot be the host: each character of a Unicode label is at most four code points when decomposed (NFD), each at most two code units.
  return { kind: 'idn', ascii, unicode, longest: 8 * unicode.join('.').length };
}

/** 5. ASCII characters that end a run of a value's URL form (1: ends it): all but those of a host read as the real one, and `%`. */
const ENDS_HOST_RUN = new Uint8Array(0x80).fill(1);
for (let code = 0; code < 0x80; code++) if (/[a-zA-Z0-9._%-]/.test(String.fromCharCode(code))) ENDS_HOST_RUN[code] = 0;

/** 5. Whether the code unit `code` ends a host run. */
function endsHostRun(code: number): boolean {
  return code < 0x80 && ENDS_HOST_RUN[code] === 1;
}

/**
 * 5. For matches of `text` in order (from `start` up to `end`), whether the
 * run they are in (the characters around them up to the nearest ones ending
 * a run) holds an escape. Each character is looked at once: a match in the
 * run of the one before has its answer.
 */
function escapedRuns(text: string): (start: number, end: number) => boolean {
  let runEnd = -1;
  let escaped = false;
  return (start, end) => {
    if (start < runEnd) return escaped;
    escaped = false;
    for (let at = start - 1; at >= 0 && !endsHostRun(text.charCodeAt(at)); at--) escaped ||= escapeAt(text, at) >= 0;
    for (runEnd = end; runEnd < text.length && !endsHostRun(text.charCodeAt(runEnd)); runEnd++) escaped ||= escapeAt(text, runEnd) >= 0;
    return escaped;
  };
}

/**
 * 5. The IPv4 `address` written in the notation of `run` (an IPv4 run of a
 * URL form): as many parts, each in the base of the run's part, the run's
 * trailing dots kept. An IPv4 look-alike replacing a run so reads as the same
 * kind of token wherever the run was read (attacker's review, session 17: a
 * JSON number `3405803781` or `203.28933` beside the origin, replaced by a
 * dotted address, made the JSON of every question invalid, so the function
 * read no origin in any question and the guard passed).
 */
function inNotationOf(run: string, address: number): string {
  let end = run.length;
  while (end > 0 && run.charCodeAt(end - 1) === 0x2e) end--;
  const parts = run.slice(0, end).split('.');
  const bytes = [address >>> 24, (address >>> 16) & 0xff, (address >>> 8) & 0xff, address & 0xff];
  const values = [...bytes.slice(0, parts.length - 1), bytes.slice(parts.length - 1).reduce((value, byte) => value * 256 + byte, 0)];
  const written = parts.map((part, at) => {
    const value = values[at] as number;
    if (part.startsWith('0x')) return `0x${value.toString(16)}`;
    return part.length > 1 && part.startsWith('0') ? `0${value.toString(8)}` : String(value);
  });
  return written.join('.') + run.slice(end);
}

/** 5. IPv4 text of decimal parts without leading zeros: each part is its own value. */
const PLAIN_DECIMAL = /^(?:0|[1-9][0-9]*)(?:\.(?:0|[1-9][0-9]*))*$/;
/** 5. A non-ASCII character. */
const NON_ASCII = /[^\x00-\x7f]/;
/**
 * 5. A whole run (1: no character of a run before or after it) of IPv4
 * characters in a URL form, starting with a digit. Linear: it starts only
 * where a run does, and backs off at most the run's length.
 */
const IPV4_RUN = /(?<![\w.%\-\u0080-\uffff])[0-9][0-9a-fx.]*(?![\w.%\-\u0080-\uffff])/g;

/** 5. The longest IPv6 text between brackets (`[0000:…:ffff:255.255.255.255]` is 45 characters). */
const MAX_IPV6_TEXT = 64;
/** 5. A character of IPv6 text in a URL form (lower case): a hex digit, `:` or `.`. */
function isIpv6Char(code: number): boolean {
  return (code >= 0x30 && code <= 0x3a) || (code >= 0x61 && code <= 0x66) || code === 0x2e;
}
/** 5. The end of the bracketed IPv6 text starting at `at` (a `[`) in `text`, after its `]`; -1 when none closes it soon. */
function bracketEnd(text: string, at: number): number {
  const last = Math.min(text.length, at + 2 + MAX_IPV6_TEXT);
  for (let end = at + 1; end < last; end++) {
    const code = text.charCodeAt(end);
    if (code === 0x5d) return end + 1;
    if (!isIpv6Char(code)) return -1;
  }
  return -1;
}

/**
 * 5. Whether the URL host parser reads `run` (a run of a value's URL form:
 * ASCII in lower case, other characters mapped by UTS #46) as the host of
 * `notation`. `ascii`: whether the run has no non-ASCII character.
 */
function readsAs(notation: Notation, run: string, ascii: boolean): boolean {
  switch (notation.kind) {
    case 'ipv6': {
      const groups = parseIpv6(run.slice(1, -1));
      return groups !== null && groups.every((group, at) => group === notation.groups[at]);
    }
    case 'ipv4': {
      // The IPv4 parser drops an empty last part (one trailing dot); dropping more finds more, never less.
      let end = run.length;
      while (end > 0 && run.charCodeAt(end - 1) === 0x2e) end--;
      const text = run.slice(0, end);
      // Decimal parts without leading zeros (a page number, a version) read as the address only written as one of its own.
      if (notation.decimal.has(text)) return true;
      return !PLAIN_DECIMAL.test(text) && parseIpv4(text) === notation.address;
    }
    case 'idn': {
      // An ASCII run shows the host only as its own letters (2); a Unicode one, in NFC, has each label either as sent or decoded.
      if (ascii || run.length > notation.longest) return false;
      const labels = run.normalize('NFC').split('.');
      return labels.length === notation.ascii.length && labels.every((label, at) => label === notation.ascii[at] || label === notation.unicode[at]);
    }
  }
}

/**
 * The rewriter from the request's real `Origin` to `asked`, or `null` when
 * either is no canonical origin or they are the same (then only the
 * `Origin` header differs).
 *
 * @param real - the request's `Origin` header
 * @param asked - the origin the question is about
 */
export function originRewriter(real: string | null | undefined, asked: string): OriginRewriter | null {
  if (typeof real !== 'string' || real === asked) return null;
  const key = `${real} ${asked}`;
  let rewriter = rewriters.get(key);
  if (rewriter !== undefined) return rewriter;
  const from = partsOf(real);
  const to = partsOf(asked);
  if (from === null || to === null) return null;
  rewriter = new Rewriter(from, to);
  // Bounded: the real origin is one the function allowed, the asked ones the guard's; the oldest pair goes first.
  if (rewriters.size >= MAX_REWRITERS) rewriters.delete(rewriters.keys().next().value as string);
  rewriters.set(key, rewriter);
  return rewriter;
}

/** How many rewriters {@link originRewriter} keeps (their RegExps cost more to build than the questions of a request). */
const MAX_REWRITERS = 256;
/** Rewriters by `real asked` (a space never appears in an origin), oldest first. */
const rewriters = new Map<string, Rewriter>();

/** How deeply {@link Rewriter.deep} walks (a parsed query is at most a few levels deep). */
const MAX_DEPTH = 16;

/** A replacement in a raw value: the characters from `start` up to `end` become `by`. */
interface Replacement {
  start: number;
  end: number;
  readonly by: string;
}

/** `text` with `found` (in order, none overlapping) made. */
function replaced(text: string, found: readonly Replacement[]): string {
  if (found.length === 0) return text;
  let about = '';
  let at = 0;
  for (const { start, end, by } of found) {
    about += text.slice(at, start) + by;
    at = end;
  }
  return about + text.slice(at);
}

/** 5. Replacements `a` and `b` (each in order) in one list in order, overlapping ones as one (the first's). */
function merged(a: Replacement[], b: Replacement[]): Replacement[] {
  if (b.length === 0) return a;
  if (a.length === 0) return b;
  const all = [...a, ...b].sort((x, y) => x.start - y.start);
  const one: Replacement[] = [];
  for (const replacement of all) {
    const previous = one[one.length - 1];
    if (previous !== undefined && replacement.start < previous.end) previous.end = Math.max(previous.end, replacement.end);
    else one.push(replacement);
  }
  return one;
}

class Rewriter implements OriginRewriter {
  /** 3. The asked origin and host (skipped) and the real ones, longest first at each position, and what each group's match becomes. */
  private readonly withHost: readonly [RegExp, ReadonlyArray<string | null>];
  private readonly originOnly: readonly [RegExp, ReadonlyArray<string | null>];
  /** The same, in any case, for a plain value (one reading, nothing mapped but the case), and what a match of them becomes. */
  private readonly plainWithHost: RegExp;
  private readonly plainOriginOnly: RegExp;
  private readonly substitute: (match: string) => string;
  /** A quick test: whether a text may show the real host at all (plainly, escaped by `%` or a backslash, or in another form). */
  private readonly hint: RegExp;
  /** Whether a replacement in a plain value (no `%`, nothing mapped) is final: no asked string can make the real one with what is around it. */
  private readonly oneRound: boolean;
  /** 5. The real host's other spellings, `null` for a plain ASCII name. */
  private readonly notation: Notation | null;
  /** 5. The asked host's IPv4 address when both hosts are IPv4 addresses (an IPv4 look-alike), else `null`. */
  private readonly askedIpv4: number | null;

  constructor(
    private readonly from: Parts,
    private readonly to: Parts,
  ) {
    // Each alternative a group; what its match becomes by group number (`null`: the asked origin or host, kept).
    const pattern = (names: ReadonlyArray<readonly [string | null, string, string]>, groups = true): readonly [RegExp, ReadonlyArray<string | null>] => {
      const sorted = [...names].sort((a, b) => b[2].length - a[2].length);
      const sources = sorted.map(([, source]) => (groups ? `(${source})` : source));
      return [new RegExp(sources.join('|'), groups ? 'g' : 'gi'), sorted.map(([by]) => by)];
    };
    // 3. The asked origin as a URL parser reads it too (`https:///<asked>`): never replaced again.
    const askedOrigin = [null, to.originPattern, to.origin] as const;
    const realOrigin = [to.origin, from.originPattern, from.origin] as const;
    const names = [askedOrigin, [null, literal(to.host), to.host], realOrigin, [to.host, literal(from.host), from.host]] as const;
    this.withHost = pattern(names);
    this.originOnly = pattern([askedOrigin, realOrigin]);
    this.plainWithHost = pattern(names, false)[0];
    this.plainOriginOnly = pattern([askedOrigin, realOrigin], false)[0];
    // A match is the asked origin or host (kept), the real host, or else the real origin in one of its spellings.
    this.substitute = (match) => {
      const lower = match.toLowerCase();
      return lower === to.origin || lower === to.host ? match : lower === from.host ? to.host : to.origin;
    };
    this.notation = notationOf(from.host);
    this.askedIpv4 = this.notation?.kind === 'ipv4' ? parseIpv4(to.host) : null;
    // 5. An IPv4 address shows as digits (`0x` has one), an IPv6 address in brackets; a Unicode host is non-ASCII.
    const other = this.notation === null || this.notation.kind === 'idn' ? '' : this.notation.kind === 'ipv4' ? '|[0-9]' : '|\\[';
    this.hint = new RegExp(`${literal(from.host)}|[^\\x20-\\x24\\x26-\\x5b\\x5d-\\x7e]${other}`, 'i');
    this.oneRound = [to.origin, to.host].every((asked) => [from.origin, from.host].every((real) => !overlaps(asked, real)));
  }

  /** 2–3. The replacements of the real origin (and host) that `form` shows, in raw characters, in order. */
  private found(form: Reading, host: boolean, deeper: boolean): Replacement[] {
    this.charge(form.text.length);
    const [pattern, replacedBy] = host ? this.withHost : this.originOnly;
    const found: Replacement[] = [];
    // 5. A match inside a run holding an escape is left to the next decoding (`0.0.0.0%58` is `0.0.0.0x`, the real host
    // too, once decoded): replaced now in part, the rest would make it no host at all.
    const deferred = deeper && this.notation !== null && this.notation.kind !== 'ipv6' ? escapedRuns(form.text) : null;
    pattern.lastIndex = 0;
    for (let match = pattern.exec(form.text); match !== null; match = pattern.exec(form.text)) {
      let group = 1;
      while (match[group] === undefined) group += 1;
      const by = replacedBy[group - 1] as string | null;
      if (by === null) continue;
      const last = match.index + match[0].length - 1;
      if (deferred !== null && deferred(match.index, last + 1)) continue;
      // A match starting inside an escape waits for the decoding of it (attacker's review, session 17: `https://%31evil.com`
      // shows `1evil.com` in its own letters, the `1` that of `%31`: replacing them left `%3<asked host>`, no origin at all).
      if (deeper && startsInEscape(form.text, match.index)) continue;
      const start = form.from === null ? match.index : (form.from[match.index] as number);
      const end = form.to === null ? last + 1 : (form.to[last] as number);
      const previous = found[found.length - 1];
      // Two matches read from one raw character (`ⅵ` is `vi`): one replacement.
      if (previous !== undefined && start < previous.end) previous.end = Math.max(previous.end, end);
      else found.push({ start, end, by });
    }
    return this.notation === null ? found : merged(found, this.spelledOtherwise(form, host, this.notation));
  }

  /** 5. The replacements of the runs of `form` the URL host parser reads as the real host, in raw characters, in order. */
  private spelledOtherwise(form: Reading, host: boolean, notation: Notation): Replacement[] {
    const { text } = form;
    const found: Replacement[] = [];
    const add = (start: number, end: number, asHost = this.to.host) => {
      const replacement = this.hostReplacement(form, start, end, host, asHost);
      if (replacement !== null) found.push(replacement);
    };
    switch (notation.kind) {
      case 'ipv6':
        // A bracketed run: only IPv6 text.
        for (let at = text.indexOf('['); at >= 0; at = text.indexOf('[', at + 1)) {
          const end = bracketEnd(text, at);
          if (end > 0 && readsAs(notation, text.slice(at, end), true)) add(at, end);
        }
        return found;
      case 'ipv4':
        // A whole run of IPv4 characters starting with a digit (every part does: `0x…`, `0…`, `1…`).
        IPV4_RUN.lastIndex = 0;
        for (let match = IPV4_RUN.exec(text); match !== null; match = IPV4_RUN.exec(text))
          if (readsAs(notation, match[0], true))
            add(match.index, match.index + match[0].length, this.askedIpv4 === null ? this.to.host : inNotationOf(match[0], this.askedIpv4));
        return found;
      case 'idn':
        // A run with a non-ASCII character (an ASCII run shows the host only as 2 finds it).
        if (!NON_ASCII.test(text)) return found;
        for (let at = 0; at < text.length;) {
          let end = at;
          let ascii = true;
          for (; end < text.length; end++) {
            const code = text.charCodeAt(end);
            if (endsHostRun(code)) break;
            ascii &&= code < 0x80;
          }
          // Trailing dots stay: a name's trailing dot is kept by the URL parser (`exämple.com.` is another origin), so they
          // stay after the asked host too, and a function dropping them reads the asked origin (attacker's review, session 17).
          let last = end;
          while (last > at && text.charCodeAt(last - 1) === 0x2e) last--;
          if (!ascii && readsAs(notation, text.slice(at, last), false)) add(at, last);
          at = end + 1;
        }
        return found;
    }
  }

  /**
   * 5. The replacement of the run of `form` from `start` up to `end`, read as
   * the real host: with the real scheme and slashes before it and the real
   * port after it, the asked origin; else (`host`) `asHost` (the asked host,
   * or it in the run's notation), or none.
   */
  private hostReplacement(form: Reading, start: number, end: number, host: boolean, asHost: string): Replacement | null {
    const { text } = form;
    const { schemeColon, portAfter } = this.from;
    let origin = start;
    while (origin > 0 && text.charCodeAt(origin - 1) === 0x2f) origin--;
    origin -= schemeColon.length;
    let originEnd = end;
    if (portAfter !== null) {
      portAfter.lastIndex = end;
      originEnd = portAfter.test(text) ? portAfter.lastIndex : -1;
    }
    const raw = (from: number, to: number, by: string): Replacement => ({
      start: form.from === null ? from : (form.from[from] as number),
      end: form.to === null ? to : (form.to[to - 1] as number),
      by,
    });
    if (origin >= 0 && originEnd >= 0 && text.startsWith(schemeColon, origin)) return raw(origin, originEnd, this.to.origin);
    return host ? raw(start, end, asHost) : null;
  }

  /**
   * 2. The replacements at the first decoding of `raw` that shows the real
   * origin (or host), none when no decoding shows it (the rest of the value
   * keeps its encoding). Decodings are made by `decodeURIComponent` while it
   * succeeds (it then decodes as {@link decoded} does), the raw characters of
   * each decoded one found (from `raw` again) only where a decoding shows it.
   * When a decoding holds a backslash or a legacy escape ({@link otherEscapes}),
   * with those of the other kinds of decodings ({@link unescapedReplacements}).
   */
  private replacements(raw: string, host: boolean): Replacement[] {
    let text = raw;
    // The reading of `text` with its raw characters, `null` while unknown (from the second decoding on).
    let reading: Reading | null = { text: raw, from: null, to: null };
    // Whether a decoding so far holds an escape only another kind of decoding reads.
    let others = false;
    for (let decodes = 0; ; decodes++) {
      this.charge(text.length);
      others ||= otherEscapes(text);
      const mapped = MAPPED.test(text);
      const form = (of: Reading | null) =>
        mapped ? urlForm(of ?? { text, from: null, to: null }, of !== null) : lowered(of ?? { text, from: null, to: null });
      // 5. Whether a later decoding is looked at (a match in an escaped run waits for it).
      const deeper = decodes < MAX_DECODES && text.includes('%');
      let found = this.found(form(reading), host, deeper);
      if (found.length > 0 && reading === null) found = this.found(form((reading = readingAfter(raw, decodes))), host, deeper);
      // A later decoding holding a backslash counts too: `%5Cu0031.com` shows `1.com` inside a string escape first.
      if (found.length > 0) return others || otherEscapesLater(text, decodes) ? merged(found, this.unescapedReplacements(raw, host)) : found;
      if (decodes === MAX_DECODES || !text.includes('%')) return others ? this.unescapedReplacements(raw, host) : found;
      try {
        text = decodeURIComponent(text);
        reading = null;
      } catch {
        reading = decoded(reading ?? readingAfter(raw, decodes), 'percent');
        text = reading.text;
      }
    }
  }

  /**
   * 2. The replacements of every reading of `raw` made by up to
   * {@link MAX_DECODES} decodings, each of one {@link Decoding} kind (percent
   * escapes, string escapes, legacy escapes), in any order, at least one not
   * of percent escapes (the others are the first series'), in one list. A
   * reader decodes one kind at a time (`decodeURIComponent`, `JSON.parse`,
   * `unescape`, the URL host parser's
   * percent-decoding): decoding two in one pass mixed the layers of a value
   * escaped three times (attacker's review, session 17: percent escapes over
   * JSON in a JSON string), and no reading showed the real origin that the
   * function read. Every reading, not only the first that shows it: a later
   * one may read a run longer, and a run replaced in part reads as another
   * host (`203.0.113.5%5Cu002e` is `203.0.113.5\u002e` once decoded and
   * `203.0.113.5.` twice, which the IPv4 parser reads as the real host;
   * replacing the first reading's run left `<asked host>.`). A decoding that
   * would find no escape of its kind is not made, and a reading made before
   * in fewer decodings (the same text from the same raw characters: most
   * escapes of two kinds are decoded in either order) is not looked at
   * again. A legacy decoding is made only where it reads otherwise than a
   * percent one ({@link LEGACY_ESCAPE}).
   */
  private unescapedReplacements(raw: string, host: boolean): Replacement[] {
    let found: Replacement[] = [];
    const seen = new Map<string, Array<{ readonly reading: Reading; readonly decodes: number; readonly unescaped: boolean }>>();
    const visit = (reading: Reading, decodes: number, unescaped: boolean) => {
      const { text } = reading;
      this.charge(text.length);
      const before = seen.get(text);
      if (before?.some((one) => one.decodes <= decodes && (one.unescaped || !unescaped) && sameSpans(one.reading, reading))) return;
      if (before === undefined) seen.set(text, [{ reading, decodes, unescaped }]);
      else before.push({ reading, decodes, unescaped });
      const deeper = decodes < MAX_DECODES && text.includes('%');
      if (unescaped) found = merged(found, this.found(MAPPED.test(text) ? urlForm(reading, true) : lowered(reading), host, deeper));
      if (decodes === MAX_DECODES) return;
      if (text.includes('\\')) visit(decoded(reading, 'strings'), decodes + 1, true);
      if (text.includes('%')) {
        if (LEGACY_ESCAPE.test(text)) visit(decoded(reading, 'legacy'), decodes + 1, true);
        visit(decoded(reading, 'percent'), decodes + 1, unescaped);
      }
    };
    visit({ text: raw, from: null, to: null }, 0, false);
    return found;
  }

  /** 2. A URL component (or header value) about the asked origin: the raw characters showing the real origin replaced by the asked one, written literally. */
  private component(raw: string, host: boolean): string {
    if (!this.hint.test(raw)) return raw;
    this.left = BUDGET_PER_CHARACTER * raw.length + BUDGET_BASE;
    let text = raw;
    if (!raw.includes('%') && !MAPPED.test(raw)) {
      // A plain value: its one reading replaced at once (5: with its runs spelling the real host otherwise, `http://3405803781`,
      // found in the same reading: a run `0.0.0.0x0` holds the real host `0.0.0.0` in its own letters, replaced whole).
      text =
        this.notation === null
          ? raw.replace(host ? this.plainWithHost : this.plainOriginOnly, this.substitute)
          : replaced(raw, this.found(lowered({ text: raw, from: null, to: null }), host, false));
      // Replaced by strings that cannot make the real one with their neighbours (or not replaced): nothing else shows it.
      if (text === raw || this.oneRound) return text;
    }
    try {
      for (let round = 0; round < MAX_ROUNDS; round++) {
        const found = this.replacements(text, host);
        if (found.length === 0) return text;
        text = replaced(text, found);
      }
    } catch (error) {
      if (error !== EXHAUSTED) throw error;
      exhausted += 1;
    }
    return text;
  }

  /** 2. The work left to the value being rewritten, in characters ({@link BUDGET_PER_CHARACTER}); set by each rewrite (they run one at a time). */
  private left = 0;

  /** 2. Spends `characters` of the budget; throws {@link EXHAUSTED} past it. */
  private charge(characters: number): void {
    this.left -= characters;
    if (this.left < 0) throw EXHAUSTED;
  }

  header(name: string, value: string): string {
    if (UNTOUCHED_HEADERS.has(name)) return value;
    return this.component(value, !OWN_HOST_HEADERS.has(name));
  }

  /** The last URL rewritten, and what it became (a question's views of the URL, and the next request's questions, ask for it again). */
  private lastUrl = '';
  private lastUrlAbout = '';

  url(url: string): string {
    if (url === this.lastUrl) return this.lastUrlAbout;
    const before = exhausted;
    const about = this.urlOnce(url);
    // A URL whose rewrite ran out of budget is not kept: each question reading it counts it again (exhaustedRewrites).
    if (exhausted !== before) return about;
    this.lastUrl = url;
    this.lastUrlAbout = about;
    return about;
  }

  /** {@link OriginRewriter.url}, computed. */
  private urlOnce(url: string): string {
    // An absolute target's scheme and authority are the server's own (as Host): only its path and query are rewritten.
    const authority = url.startsWith('/') ? -1 : url.indexOf('//');
    const pathStart = authority < 0 ? 0 : url.indexOf('/', authority + 2);
    if (pathStart < 0) return url;
    // The path and query at once: a replacement changes only the characters showing the real origin, never a `?`, `&` or `=` around them.
    return `${url.slice(0, pathStart)}${this.component(url.slice(pathStart), true)}`;
  }

  text(value: string): string {
    return this.component(value, true);
  }

  deep<T>(value: T): T {
    return this.walk(value, 0) as T;
  }

  /** {@link OriginRewriter.deep} at `depth`: strings rewritten, arrays and plain objects copied only when something in them changed. */
  private walk(value: unknown, depth: number): unknown {
    if (typeof value === 'string') return this.text(value);
    if (typeof value !== 'object' || value === null || depth >= MAX_DEPTH) return value;
    if (Array.isArray(value)) {
      let copy: unknown[] | null = null;
      for (let at = 0; at < value.length; at++) {
        const item: unknown = value[at];
        const about = this.walk(item, depth + 1);
        if (about !== item) (copy ??= [...value])[at] = about;
      }
      return copy ?? value;
    }
    const prototype = Object.getPrototypeOf(value) as object | null;
    if (prototype !== Object.prototype && prototype !== null) return value;
    let copy: Record<string, unknown> | null = null;
    for (const key of Object.keys(value)) {
      const item: unknown = (value as Record<string, unknown>)[key];
      const name = this.text(key);
      const about = this.walk(item, depth + 1);
      if (name === key && about === item) continue;
      copy ??= Object.create(prototype, Object.getOwnPropertyDescriptors(value)) as Record<string, unknown>;
      if (name !== key) delete copy[key];
      // Defined, not assigned: a `__proto__` key stays a key.
      Object.defineProperty(copy, name, { value: about, writable: true, enumerable: true, configurable: true });
    }
    return copy ?? value;
  }
}

/**
 * A property of a question's view computed when first read (most functions
 * read little of the request, and a request is asked about many origins):
 * `compute()` then; what the function writes stays on the view.
 */
export function lazyProperty(compute: () => unknown): PropertyDescriptor {
  let value: unknown;
  let read = false;
  return {
    get: () => {
      if (!read) value = compute();
      read = true;
      return value;
    },
    set: (given: unknown) => {
      value = given;
      read = true;
    },
    enumerable: true,
    configurable: true,
  };
}
