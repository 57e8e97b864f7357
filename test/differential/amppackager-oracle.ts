// An independent oracle for the cache prefix Google's amppackager computes
// (`ToCacheURLSubdomain` in transformer/internal/amphtml/urls.go, Go, with
// golang.org/x/net/idna). Written by us from a reading of that code and of
// x/net/idna's option semantics: no Go code or comment is copied. It uses
// only `tr46` (UTS #46) and node:crypto, never @ampcors/core, so that the
// differential tests compare two independent computations.
//
// The x/net/idna profile amppackager builds is: lookup mapping with STD3 ASCII
// rules, the hyphen checks, the CONTEXTJ joiner rules and the RFC 5893 Bidi
// rule, DNS length checks, and TRANSITIONAL mapping — except that its
// Unicode conversion always maps non-transitionally (x/net/idna overrides the
// option there). Two x/net/idna details that differ from UTS #46 as written
// are restated here on purpose, because they change amppackager's output:
// - the hyphen checks look at UTF-8 BYTES: a label of more than 4 bytes whose
//   3rd and 4th bytes are `-` is refused (`é--x` is refused, `aé--x` is not);
//   a label starting or ending with `-` is refused;
// - an empty label is refused, except a single trailing one (`a.b.`);
// - an `xn--` label is punycode-decoded even when it holds non-ASCII
//   characters (they are kept as the basic part), which happens when the
//   first label starts with `xn-` (`xn-a.bücher.de` spells `xn--a-bücher-de`);
// - its tables are Unicode 13.0's: characters assigned later, and a few whose
//   UTS #46 status changed since (≠, ≮, ≯ are refused under STD3 rules), are
//   refused (idna-unicode13-refused.json, computed once against x/net/idna).
import { sha256Base32 } from './sha256-base32.js';
import { createRequire } from 'node:module';
import unicode13 from './idna-unicode13-refused.json' with { type: 'json' };

/** The subset of `tr46` (v6) the oracle uses. */
interface Tr46Options {
  checkHyphens?: boolean;
  checkBidi?: boolean;
  checkJoiners?: boolean;
  useSTD3ASCIIRules?: boolean;
  verifyDNSLength?: boolean;
  transitionalProcessing?: boolean;
}
interface Tr46 {
  toASCII(domain: string, options?: Tr46Options): string | null;
  toUnicode(domain: string, options?: Tr46Options): { domain: string; error: boolean };
}

/** `tr46`, loaded through require: the package ships no type declarations. */
export const tr46 = createRequire(import.meta.url)('tr46') as Tr46;

/** How the oracle reached its prefix. */
export type AmppackagerPath =
  /** The readable label of step 3. */
  | 'readable'
  /** The `0-…-0` wrapped label of step 4. */
  | 'wrapped'
  /** The SHA-256/base32 hash of the input as given (step 5). */
  | 'hash'
  /** amppackager reads past the end of a string shorter than 4 bytes: a Go panic, no prefix. */
  | 'panic';

/** The oracle's answer for one host. */
export interface AmppackagerResult {
  /** The domain prefix, or `null` when amppackager panics. */
  readonly prefix: string | null;
  /** Which step produced it. */
  readonly path: AmppackagerPath;
}

/** Options of {@link amppackagerPrefix}. */
export interface AmppackagerOptions {
  /**
   * Map the single label transitionally (amppackager's setting, default
   * `true`). `false` gives the same algorithm with non-transitional UTS #46,
   * the form ampcors accepts for the transitional class (ß, ς, ZWJ, ZWNJ).
   */
  readonly transitional?: boolean;
}

const utf8 = new TextEncoder();
const HYPHEN = 0x2d;
const MAX_LABEL_OCTETS = 63;

/** x/net/idna's hyphen checks, on UTF-8 bytes (see the header). */
function hyphensRefused(label: string): boolean {
  if (label.startsWith('-') || label.endsWith('-')) return true;
  const bytes = utf8.encode(label);
  return bytes.length > 4 && bytes[2] === HYPHEN && bytes[3] === HYPHEN;
}

/** x/net/idna's label iteration: every label, except that one empty label at the very end is skipped. */
function goLabels(domain: string): string[] {
  const labels: string[] = [];
  let start = 0;
  while (start < domain.length) {
    const dot = domain.indexOf('.', start);
    const end = dot === -1 ? domain.length : dot;
    labels.push(domain.slice(start, end));
    start = end + 1;
    if (start === domain.length - 1 && domain[start] === '.') start = domain.length;
  }
  return labels;
}

const REFUSED_RANGES: ReadonlyArray<readonly [number, number]> = unicode13.ranges.map((range) => {
  const [first = '', last = first] = range.split('-');
  return [Number.parseInt(first, 16), Number.parseInt(last, 16)] as const;
});

/**
 * True when `text` holds a code point the Unicode 13 tables of x/net/idna
 * refuse but tr46 accepts (mostly characters assigned after Unicode 13.0).
 */
export function refusedByUnicode13(text: string): boolean {
  for (const ch of text) {
    const cp = ch.codePointAt(0)!;
    if (cp < 0x80) continue;
    if (REFUSED_RANGES.some(([first, last]) => cp >= first && cp <= last)) return true;
  }
  return false;
}

/** The checks shared by both conversions, on the mapped (and decoded) labels. */
function labelsRefused(mapped: string): boolean {
  if (mapped === '' || refusedByUnicode13(mapped)) return true;
  return goLabels(mapped).some((label) => label === '' || hyphensRefused(label));
}

// RFC 3492 (Punycode) parameters.
const BASE = 36;
const T_MIN = 1;
const T_MAX = 26;
const SKEW = 38;
const DAMP = 700;
const INITIAL_N = 128;
const INITIAL_BIAS = 72;

/** RFC 3492 §6.1: the bias after a delta. */
function adapt(delta: number, points: number, first: boolean): number {
  let d = first ? Math.floor(delta / DAMP) : Math.floor(delta / 2);
  d += Math.floor(d / points);
  let k = 0;
  while (d > ((BASE - T_MIN) * T_MAX) / 2) {
    d = Math.floor(d / (BASE - T_MIN));
    k += BASE;
  }
  return k + Math.floor(((BASE - T_MIN + 1) * d) / (d + SKEW));
}

/** RFC 3492: the threshold of digit position `k`. */
function threshold(k: number, bias: number): number {
  return k <= bias ? T_MIN : k >= bias + T_MAX ? T_MAX : k - bias;
}

/**
 * RFC 3492 §6.3 encoding of a label (without the `xn--`): the ASCII
 * characters first, then base-36 deltas for the others.
 */
export function punycodeEncode(input: string): string {
  const points = Array.from(input, (ch) => ch.codePointAt(0)!);
  let output = points
    .filter((cp) => cp < 0x80)
    .map((cp) => String.fromCodePoint(cp))
    .join('');
  const basic = output.length;
  let handled = basic;
  if (basic > 0) output += '-';
  let n = INITIAL_N;
  let delta = 0;
  let bias = INITIAL_BIAS;
  const digit = (d: number): string => String.fromCharCode(d < 26 ? 97 + d : 22 + d);
  while (handled < points.length) {
    const next = Math.min(...points.filter((cp) => cp >= n));
    delta += (next - n) * (handled + 1);
    n = next;
    for (const cp of points) {
      if (cp < n) delta++;
      if (cp !== n) continue;
      let q = delta;
      for (let k = BASE; ; k += BASE) {
        const t = threshold(k, bias);
        if (q < t) break;
        output += digit(t + ((q - t) % (BASE - t)));
        q = Math.floor((q - t) / (BASE - t));
      }
      output += digit(q);
      bias = adapt(delta, handled + 1, handled === basic);
      delta = 0;
      handled++;
    }
    delta++;
    n++;
  }
  return output;
}

/**
 * RFC 3492 §6.2 decoding as x/net/idna does it: everything before the last
 * `-` is copied as it is (ASCII or not), the rest are base-36 deltas.
 * `null` when invalid.
 */
function lenientPunycodeDecode(encoded: string): string | null {
  if (encoded === '') return '';
  const last = encoded.lastIndexOf('-');
  if (last === 0) return null;
  if (last === encoded.length - 1) return encoded.slice(0, -1);
  const output = last > 0 ? Array.from(encoded.slice(0, last)) : [];
  const digitOf = (c: string): number => (c >= '0' && c <= '9' ? c.charCodeAt(0) - 22 : /[a-z]/i.test(c) ? c.toLowerCase().charCodeAt(0) - 97 : -1);
  let n = INITIAL_N;
  let i = 0;
  let bias = INITIAL_BIAS;
  let pos = last + 1;
  while (pos < encoded.length) {
    const oldI = i;
    let w = 1;
    for (let k = BASE; ; k += BASE) {
      if (pos === encoded.length) return null;
      const digit = digitOf(encoded[pos++]!);
      if (digit < 0) return null;
      i += digit * w;
      if (i > 0x7fffffff) return null;
      const t = threshold(k, bias);
      if (digit < t) break;
      w *= BASE - t;
      if (w > 0x7fffffff) return null;
    }
    bias = adapt(i - oldI, output.length + 1, oldI === 0);
    n += Math.floor(i / (output.length + 1));
    i %= output.length + 1;
    if (n > 0x10ffff || output.length >= 1024) return null;
    output.splice(i, 0, String.fromCodePoint(n));
    i++;
  }
  return output.join('');
}

/** Lowercase letters, digits, `-` and `.` with no label starting `xn--`: UTS #46 maps such a name to itself (a fast path). */
function plainAscii(name: string): boolean {
  return /^[a-z0-9.-]*$/.test(name) && !/(?:^|\.)xn--/.test(name);
}

/**
 * The Unicode conversion of the profile (step 1): non-transitional mapping,
 * STD3 rules, joiners, Bidi; `null` when refused.
 */
function toUnicodeLookup(host: string): string | null {
  if (plainAscii(host)) return labelsRefused(host) ? null : host;
  const options: Tr46Options = { checkHyphens: false, checkBidi: true, checkJoiners: true, useSTD3ASCIIRules: true, transitionalProcessing: false };
  const { domain, error } = tr46.toUnicode(host, options);
  return error || refusedByUnicode13(host) || labelsRefused(domain) ? null : domain;
}

/**
 * The ASCII conversion of the profile (steps 3 and 4) of ONE label: mapping
 * (transitional or not), STD3 rules, joiners, Bidi, 1–63 octets; `null` when refused.
 */
function toAsciiLookup(label: string, transitional: boolean): string | null {
  if (plainAscii(label)) return label.length > MAX_LABEL_OCTETS || labelsRefused(label) ? null : label;
  const options: Tr46Options = {
    checkHyphens: false,
    checkBidi: true,
    checkJoiners: true,
    useSTD3ASCIIRules: true,
    transitionalProcessing: transitional,
  };
  const { domain: mapped, error } = tr46.toUnicode(label, options);
  // An `xn--` label with non-ASCII characters: decoded the lenient way, the
  // result must be a valid, unmapped label, and is encoded again.
  if (mapped.startsWith('xn--') && /[^\x00-\x7f]/.test(mapped)) {
    const decoded = lenientPunycodeDecode(mapped.slice(4));
    if (decoded === null || decoded.includes('.') || labelsRefused(decoded)) return null;
    const valid = tr46.toUnicode(decoded, { ...options, transitionalProcessing: false });
    if (valid.error || valid.domain !== decoded) return null;
    const reencoded = `xn--${punycodeEncode(decoded)}`;
    return reencoded.length <= MAX_LABEL_OCTETS ? reencoded : null;
  }
  // Mapped and checked once; the A-label is the punycode of the mapped label.
  if (error || mapped.includes('.')) return null;
  const ascii = /[^\x00-\x7f]/.test(mapped) ? `xn--${punycodeEncode(mapped)}` : mapped;
  if (ascii.length === 0 || ascii.length > MAX_LABEL_OCTETS) return null;
  return labelsRefused(mapped) ? null : ascii;
}

/** The hash form: base32 of SHA-256 of the UTF-8 input, lowercase, first 52 characters. */
export function amppackagerHash(host: string): string {
  return sha256Base32(host).slice(0, 52);
}

/**
 * The prefix amppackager's `ToCacheURLSubdomain` computes for `host`, as
 * given (no canonicalization beyond what the algorithm itself does).
 *
 * @example amppackagerPrefix('faß.de') // { prefix: 'fass-de', path: 'readable' }
 */
export function amppackagerPrefix(host: string, options: AmppackagerOptions = {}): AmppackagerResult {
  const transitional = options.transitional ?? true;
  // 1. Convert the host to Unicode under the lookup profile (always
  //    non-transitional here); any refusal means the hash of step 5.
  const unicode = toUnicodeLookup(host);
  if (unicode === null) return { prefix: amppackagerHash(host), path: 'hash' };
  // 2. Spell it as one label: each `-` doubled, then each `.` made a `-`.
  let label = '';
  for (const ch of unicode) label += ch === '.' ? '-' : ch === '-' ? '--' : ch;
  // 3. Convert that label to ASCII under the profile (transitional mapping);
  //    kept if accepted and it has a `-` (no `-` would read as a hash).
  const readable = toAsciiLookup(label, transitional);
  if (readable !== null && readable.includes('-')) return { prefix: readable, path: 'readable' };
  // 4. If the label's 3rd and 4th UTF-8 BYTES (not characters) are both `-`,
  //    wrap it as `0-` + label + `-0` and convert again. amppackager reads
  //    those bytes unguarded: a label of under 3 bytes, or of 3 ending in
  //    `-`, makes the Go code panic (index out of range), giving no prefix.
  const bytes = utf8.encode(label);
  if (bytes.length < 3 || (bytes.length === 3 && bytes[2] === HYPHEN)) return { prefix: null, path: 'panic' };
  if (bytes[2] === HYPHEN && bytes[3] === HYPHEN) {
    const wrapped = toAsciiLookup(`0-${label}-0`, transitional);
    if (wrapped !== null) return { prefix: wrapped, path: 'wrapped' };
  }
  // 5. Otherwise the hash of the host exactly as given.
  return { prefix: amppackagerHash(host), path: 'hash' };
}
