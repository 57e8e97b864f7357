import { MAX_ORIGIN_LENGTH } from './origin-header.js';

/** The legacy query parameter the AMP runtime appends to every request (SPEC §7). */
const SOURCE_PARAM = '__amp_source_origin';
/** The parameter's name and its '='. */
const SOURCE_PAIR = `${SOURCE_PARAM}=`;

const AMPERSAND = 0x26;
const EQUALS = 0x3d;
const PERCENT = 0x25;
const PLUS = 0x2b;
const SPACE = 0x20;
const UNDERSCORE = 0x5f;

/**
 * Reads the legacy `__amp_source_origin` query parameter from a request URL
 * or path (`/api?__amp_source_origin=…`), exactly as the WHATWG URL's
 * `searchParams` reads it: the query ends at `#`, pairs split on `&`, a name
 * ends at its first `=`, `+` is a space, percent-escapes are UTF-8 with
 * U+FFFD for invalid bytes, and an encoded name (`%5F_amp_source_origin`)
 * counts. Returns `null` when absent; when the parameter is repeated, the
 * values joined with `,`, which no verifier accepts, so that an ambiguous
 * request is denied rather than guessed.
 *
 * One pass over the query, linear in the URL's length whatever its shape
 * (issue #14: a scan per pair was quadratic); a URL without `?`, or whose
 * query holds neither the name nor a `%`, costs native searches only. A
 * recent query (the same request of a page, sent by each of its readers) is
 * answered from a bounded memo (see {@link rememberedQuery}).
 */
export function sourceOriginOfUrl(url: string): string | null {
  const query = url.indexOf('?');
  if (query < 0) return null;
  // A '?' after a '#' is in the fragment and starts no query (WHATWG: the fragment begins at the first '#').
  if (url.lastIndexOf('#', query) >= 0) return null;
  const length = url.length - query - 1;
  // The slot of a short query: its length and three of its characters (a host's last letters), mixed.
  const slot =
    length < MIN_REMEMBERED_LENGTH || length > MAX_REMEMBERED_LENGTH
      ? -1
      : (length * 31 + url.charCodeAt(url.length - 1) * 7 + url.charCodeAt(url.length - 3) * 3 + url.charCodeAt(query + 1 + (length >> 1))) &
        (REMEMBERED_SLOTS - 1);
  if (slot >= 0) {
    // The whole query compared: the answer of exactly this query (the answer depends on nothing else).
    const known = rememberedQuery[slot];
    if (known !== undefined && known.length === length && url.endsWith(known)) return rememberedSource[slot] as string;
  }
  const source = sourceOfQuery(url, query);
  if (slot >= 0 && source !== null) {
    rememberedQuery[slot] = flat(url.slice(query + 1));
    rememberedSource[slot] = flat(source);
  }
  return source;
}

/** Shortest and longest query whose answer is remembered (a shorter one is cheap, a longer one is read each time). */
const MIN_REMEMBERED_LENGTH = SOURCE_PAIR.length;
const MAX_REMEMBERED_LENGTH = 256;
/** Slots of the direct-mapped memo of recent queries (a power of two). */
const REMEMBERED_SLOTS = 256;
/**
 * Recent queries (the URL after its first `?`, {@link MIN_REMEMBERED_LENGTH}
 * to {@link MAX_REMEMBERED_LENGTH} characters) that hold the parameter, and
 * their answers, one per slot: a query is found by its slot and an exact
 * comparison of the whole query (no hash of it, which a fresh request string
 * would cost each time), and a query taking another's slot only costs that
 * one a reading again. A remembered answer is the same string each time, so
 * that a verifier's comparison of it is a pointer's. At most 256 entries of
 * at most 256 characters (and their answers, shorter), whatever is sent.
 */
const rememberedQuery: Array<string | undefined> = new Array<string | undefined>(REMEMBERED_SLOTS).fill(undefined);
const rememberedSource: string[] = new Array<string>(REMEMBERED_SLOTS).fill('');

/** {@link sourceOriginOfUrl} of a URL whose first `?` is at `query`. */
function sourceOfQuery(url: string, query: number): string | null {
  // The usual query, the one pair `__amp_source_origin=<value>` up to the end: its value, with native searches only
  // (a position-checked `indexOf`, cheaper in V8 than `startsWith` with a position).
  const value = query + 1 + SOURCE_PAIR.length;
  if (
    url.charCodeAt(query + 1) === UNDERSCORE &&
    url.indexOf(SOURCE_PAIR, query + 1) === query + 1 &&
    url.indexOf('&', value) < 0 &&
    url.indexOf('#', value) < 0
  )
    return decodeFormComponent(url.slice(value));
  // Native searches first: without the name or an escape after '?', no pair can spell it.
  if (!url.includes(SOURCE_PARAM, query) && !url.includes('%', query)) return null;
  let end = url.indexOf('#', query + 1);
  if (end < 0) end = url.length;
  let raw: string | null = null; // the value, or the values joined with ','
  let start = query + 1; // the current pair's first character
  let eq = -1; // its first '=', or -1
  let escapedName = false; // a '%' before that '='
  for (let i = start; i <= end; i++) {
    const code = i < end ? url.charCodeAt(i) : AMPERSAND;
    if (code === AMPERSAND) {
      const nameEnd = eq < 0 ? i : eq;
      if (isSourceParam(url, start, nameEnd, escapedName)) {
        const value = url.slice(eq < 0 ? i : eq + 1, i);
        raw = raw === null ? value : `${raw},${value}`;
      }
      start = i + 1;
      eq = -1;
      escapedName = false;
    } else if (eq < 0) {
      if (code === EQUALS) eq = i;
      else if (code === PERCENT) escapedName = true;
    }
  }
  // Decoding the values joined with ',' equals joining the decoded values:
  // an escape never spans the ',', and an ASCII byte ends any incomplete
  // UTF-8 sequence with the same U+FFFD as the end of the input does.
  return raw === null ? null : decodeFormComponent(raw);
}

/**
 * A copy of `text` that keeps no other string alive: V8 keeps a slice of 13
 * characters or more as a view into the string it was cut from (here, the
 * request URL), and a concatenation as its parts; the concatenation below is
 * flattened into a new string, and the slice views only that one.
 */
function flat(text: string): string {
  return (' ' + text).slice(1);
}

/** True when `url[start, end)` is a name that decodes to `__amp_source_origin`; no allocation. */
function isSourceParam(url: string, start: number, end: number, escaped: boolean): boolean {
  const length = end - start;
  if (!escaped) return length === SOURCE_PARAM.length && url.startsWith(SOURCE_PARAM, start);
  // Each escape is three characters for one, so an escaped name is longer.
  if (length <= SOURCE_PARAM.length) return false;
  let matched = 0;
  for (let i = start; i < end; i++) {
    let code = url.charCodeAt(i);
    if (code === PERCENT && i + 2 < end && isHex(url.charCodeAt(i + 1)) && isHex(url.charCodeAt(i + 2))) {
      code = hexValue(url.charCodeAt(i + 1)) * 16 + hexValue(url.charCodeAt(i + 2));
      i += 2;
    }
    // SOURCE_PARAM is ASCII without '+' or '%': a byte that is not its next character, or a surplus one, ends the match.
    if (matched >= SOURCE_PARAM.length || code !== SOURCE_PARAM.charCodeAt(matched)) return false;
    matched++;
  }
  return matched === SOURCE_PARAM.length;
}

function isHex(code: number): boolean {
  return (code >= 0x30 && code <= 0x39) || (code >= 0x41 && code <= 0x46) || (code >= 0x61 && code <= 0x66);
}

function hexValue(code: number): number {
  return code <= 0x39 ? code - 0x30 : (code | 0x20) - 0x61 + 10;
}

const utf8 = new TextEncoder();
/** WHATWG "UTF-8 decode without BOM": invalid bytes become U+FFFD, a BOM is kept. */
const formDecoder = new TextDecoder('utf-8', { ignoreBOM: true });

/**
 * A form-encoded component decoded as URLSearchParams decodes it
 * (application/x-www-form-urlencoded parsing): `+` is a space, `%XX` a
 * byte, and the bytes are UTF-8 with U+FFFD for what is invalid. One pass.
 */
function decodeFormComponent(raw: string): string {
  if (!raw.includes('%') && !raw.includes('+')) return raw;
  // The string-building fast path for a value as long as an origin can be (escaped: three characters each); a longer
  // one, which no verifier accepts anyway, takes the byte path, whose cost per character is lower and flat.
  const ascii = raw.length <= 3 * MAX_ORIGIN_LENGTH ? decodeAsciiFormComponent(raw) : null;
  if (ascii !== null) return ascii;
  const bytes = utf8.encode(raw);
  let length = 0;
  for (let i = 0; i < bytes.length; i++) {
    const byte = bytes[i] as number;
    if (byte === PERCENT && i + 2 < bytes.length && isHex(bytes[i + 1] as number) && isHex(bytes[i + 2] as number)) {
      bytes[length++] = hexValue(bytes[i + 1] as number) * 16 + hexValue(bytes[i + 2] as number);
      i += 2;
    } else {
      bytes[length++] = byte === PLUS ? SPACE : byte;
    }
  }
  return formDecoder.decode(bytes.subarray(0, length));
}

/**
 * {@link decodeFormComponent} without the UTF-8 round trip, for the usual
 * value (`https%3A%2F%2Fexample.com`): when `raw` is ASCII and every escape
 * is an ASCII byte, the bytes are their own UTF-8 decoding, so the escapes
 * are replaced in place. `null` for anything else (the byte path decides).
 */
function decodeAsciiFormComponent(raw: string): string | null {
  let out = '';
  let from = 0; // the first character not copied yet
  for (let i = 0; i < raw.length; i++) {
    const code = raw.charCodeAt(i);
    if (code >= 0x80) return null;
    if (code === PLUS) {
      out += `${raw.slice(from, i)} `;
      from = i + 1;
    } else if (code === PERCENT && i + 2 < raw.length && isHex(raw.charCodeAt(i + 1)) && isHex(raw.charCodeAt(i + 2))) {
      const byte = hexValue(raw.charCodeAt(i + 1)) * 16 + hexValue(raw.charCodeAt(i + 2));
      if (byte >= 0x80) return null;
      out += raw.slice(from, i) + String.fromCharCode(byte);
      i += 2;
      from = i + 1;
    }
  }
  return out + raw.slice(from);
}
