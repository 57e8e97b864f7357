import { sha256 } from '@noble/hashes/sha2.js';
import { utf8ToBytes } from '@noble/hashes/utils.js';
import { base32 } from '@scure/base';
import { toASCII, toUnicode } from 'punycode/punycode.es6.js';
import { toASCII as uts46ToASCII, type Tr46Options } from 'tr46';
import { canonicalDomain, MAX_LABEL_LENGTH, unicodeDomain } from './domain-name.js';

/** Length of a fallback (hashed) domain prefix: base32 of SHA-256 without padding. */
export const HASHED_PREFIX_LENGTH = 52;

/**
 * Longest prefix any accepted form can have: toolbox-cache-url checks 63
 * octets before its `0-…-0` wrap, so its prefix reaches 67 (SPEC §6); the
 * others stop at 63, the hashes are 52. A longer label is refused before any
 * decoding or hashing.
 */
export const MAX_PREFIX_LENGTH = 67;

/**
 * SPEC §4 step 2, written once: a domain prefix without `-` is a hash. Every
 * readable form of a domain that can exist (two labels at least) has a `-`
 * (for the dot, or in `xn--`); base32 has none.
 */
export function isHashedPrefix(prefix: string): boolean {
  return !prefix.includes('-');
}

/**
 * SPEC §2 basic algorithm, steps 1–5, on a canonical (ASCII) domain. The
 * result may be longer than 63 octets; {@link domainPrefix} then falls back.
 *
 * @example basicPrefix('en-us.example.com') // '0-en--us-example-com-0'
 */
export function basicPrefix(asciiDomain: string): string {
  // Twin: readablePrefixForms' plain fast path (below) restates steps 2–4 for plain domains: keep in step.
  // Step 1: punycode-decode (IDN → Unicode).
  const unicode = unicodeDomain(asciiDomain);
  // Step 2: every '-' becomes '--'. Step 3: every '.' becomes '-'.
  let label = unicode.replaceAll('-', '--').replaceAll('.', '-');
  // Step 4: hyphens at positions 3 and 4 (1-based, in code points) are
  // reserved for IDNA (amphtml#26205): wrap in '0-' … '-0'.
  const points = unicode === asciiDomain ? label : Array.from(label.slice(0, 8));
  if (points[2] === '-' && points[3] === '-') label = `0-${label}-0`;
  // Step 5: punycode-encode (IDNA to ASCII) the single label.
  return unicode === asciiDomain ? label : toASCII(label);
}

/**
 * SPEC §2 fallback algorithm: base32 (RFC 4648, lowercase) of the SHA-256 of
 * `input`, without the trailing `====`: always 52 characters, no `-`.
 * ampcors hashes the canonical ASCII domain; {@link prefixForms} also lists
 * the hash of the Unicode form, which other implementations produce.
 */
export function fallbackPrefix(input: string): string {
  // Step 1: SHA-256. Step 2: base32, lowercase. Step 3: drop the 4 padding chars.
  return base32.encode(fallbackDigest(input)).slice(0, HASHED_PREFIX_LENGTH).toLowerCase();
}

/**
 * SPEC §2 fallback algorithm, step 1 alone: the SHA-256 of `input` (UTF-8)
 * that {@link fallbackPrefix} writes in base32 — the allow-set keys its
 * hashed table on its first 64 bits.
 */
export function fallbackDigest(input: string): Uint8Array {
  // Twin: allow-set.ts hashDigests writes this digest with sha256Words: keep in step.
  // An ASCII string's UTF-8 bytes are its code units (copied directly: TextEncoder costs more for short names).
  let ascii = true;
  for (let i = 0; i < input.length && ascii; i++) ascii = input.charCodeAt(i) < 0x80;
  if (!ascii) return sha256(utf8ToBytes(input));
  const bytes = new Uint8Array(input.length);
  for (let i = 0; i < input.length; i++) bytes[i] = input.charCodeAt(i);
  return sha256(bytes);
}

/**
 * The domain prefix of a publisher domain (SPEC §2, combined algorithm): the
 * basic result if it is a valid DNS label (at most 63 octets), else the
 * fallback hash. The domain is canonicalized first (UTS #46, IDNA to ASCII,
 * trailing dot removed).
 *
 * @throws AmpCorsError `invalid-domain` for an empty, over-long or malformed domain.
 * @example domainPrefix('foo-example.com') // 'foo--example-com'
 * @example domainPrefix('xn--57hw060o.com') // 'xn---com-p33b41770a'
 */
export function domainPrefix(publisherDomain: string): string {
  const ascii = canonicalDomain(publisherDomain);
  const basic = basicPrefix(ascii);
  return basic.length <= MAX_LABEL_LENGTH ? basic : fallbackPrefix(ascii);
}

// Scripts written left to right, and right to left (Hebrew, Arabic, Syriac,
// Thaana, NKo and their presentation forms): a label mixing both is hashed
// by @ampproject/toolbox-cache-url.
const LEFT_TO_RIGHT = /[A-Za-z\u00c0-\u00d6\u00d8-\u00f6\u00f8-\u02b8\u0300-\u0590\u0800-\u1fff\u200e\u2c00-\ufb1c\ufe00-\ufe6f\ufefd-\uffff]/;
const RIGHT_TO_LEFT = /[\u0591-\u06ef\u06fa-\u07ff\u200f\ufb1d-\ufdff\ufe70-\ufefc]/;

const NON_ASCII = /[^\x00-\x7f]/;

function toolboxHyphensAt3And4(s: string): boolean {
  return s.slice(2, 4) === '--' && s.slice(0, 2) !== 'xn';
}

/**
 * The prefix `@ampproject/toolbox-cache-url` 2.10.1 computes for a host
 * written exactly as given (SPEC §6 lists how it diverges from the guide): it
 * hashes hosts with no dot, hosts mixing left-to-right and right-to-left
 * scripts and hosts with `--` at positions 3–4; it tests the hyphen rule on
 * the final ASCII label (exempting `xn…`) and checks the 63 limit before
 * wrapping in `0-…-0`. Used to accept, for a configured domain, the origin
 * a cache running that code would produce.
 */
export function toolboxPrefix(host: string): string {
  return toolboxForm(host).prefix;
}

/** A prefix an algorithm computed, saying whether it fell back to the hash. */
interface ComputedPrefix {
  readonly prefix: string;
  readonly hashed: boolean;
}

/** {@link toolboxPrefix}, saying whether the result is a hash (computed only `withHash`, else the prefix is empty). */
function toolboxForm(host: string, withHash = true): ComputedPrefix {
  // Twin: readablePrefixForms' plain fast path restates this for plain hosts: keep in step.
  const plain = !NON_ASCII.test(host) && !host.includes('xn--');
  const unicode = plain ? host : toUnicode(host);
  const basicAllowed =
    !toolboxHyphensAt3And4(host) &&
    host.length <= MAX_LABEL_LENGTH &&
    host.includes('.') &&
    (plain || !(LEFT_TO_RIGHT.test(unicode) && RIGHT_TO_LEFT.test(unicode)));
  if (!basicAllowed) return { prefix: withHash ? fallbackPrefix(host) : '', hashed: true };
  const joined = unicode.split('-').join('--').split('.').join('-');
  let label = (plain ? joined : toASCII(joined)).toLowerCase();
  if (label.length > MAX_LABEL_LENGTH) return { prefix: withHash ? fallbackPrefix(host) : '', hashed: true };
  if (toolboxHyphensAt3And4(label)) label = `0-${label}-0`;
  return { prefix: label, hashed: false };
}

/**
 * UTS #46 options of amppackager's profile (Go's `idna.MapForLookup`,
 * `VerifyDNSLength`, `BidiRule`), non-transitional: ampcors feeds it only
 * canonical domains, for which transitional mapping would give another
 * domain's prefix (`faß.de` → `fass-de`, SPEC §6). Its hyphen rule is
 * applied on UTF-8 bytes by {@link goHyphenRule}, as Go does.
 */
const AMPPACKAGER_UTS46: Tr46Options = {
  checkBidi: true,
  checkJoiners: true,
  checkHyphens: false,
  useSTD3ASCIIRules: true,
  verifyDNSLength: true,
  transitionalProcessing: false,
};

/** UTF-8 length of the code point starting with UTF-16 unit `unit`. */
function utf8Length(unit: number): number {
  if (unit < 0x80) return 1;
  if (unit < 0x800) return 2;
  return unit >= 0xd800 && unit <= 0xdbff ? 4 : 3;
}

/** True when bytes 3 and 4 (1-based) of the UTF-8 encoding of `s` are both `-`. */
function hyphensAtBytes3And4(s: string): boolean {
  let byte = 0;
  let third = false;
  for (let i = 0; i < s.length && byte < 4;) {
    const unit = s.charCodeAt(i);
    const length = utf8Length(unit);
    const isHyphen = unit === 45;
    if (byte === 2) third = isHyphen;
    if (byte === 3) return third && isHyphen;
    byte += length;
    i += length === 4 ? 2 : 1;
  }
  return false;
}

/**
 * The hyphen rule of Go's IDNA label validation (RFC 5891 §4.2.3.1, with
 * positions counted in UTF-8 bytes): a label of more than 4 bytes with `-` at
 * bytes 3 and 4, or a label starting or ending with `-`, is an error.
 */
function goHyphenRule(label: string): boolean {
  return (utf8ByteLength(label) > 4 && hyphensAtBytes3And4(label)) || label.startsWith('-') || label.endsWith('-');
}

function utf8ByteLength(s: string): number {
  let bytes = 0;
  for (let i = 0; i < s.length; i++) {
    const unit = s.charCodeAt(i);
    bytes += unit < 0x80 ? 1 : unit < 0x800 ? 2 : unit >= 0xd800 && unit <= 0xdbff ? 4 : unit >= 0xdc00 && unit <= 0xdfff ? 0 : 3;
  }
  return bytes;
}

// RFC 3492 (Punycode) parameters.
const PUNY_BASE = 36;
const PUNY_T_MIN = 1;
const PUNY_T_MAX = 26;
const PUNY_INITIAL_N = 128;
const PUNY_INITIAL_BIAS = 72;

/** RFC 3492 §6.1: the bias after a delta (at most 2^31 − 1, as every caller ensures: `| 0` divides as integers). */
function punyAdapt(delta: number, points: number, first: boolean): number {
  let d = first ? (delta / 700) | 0 : delta >>> 1;
  d += (d / points) | 0;
  let k = 0;
  for (; d > ((PUNY_BASE - PUNY_T_MIN) * PUNY_T_MAX) >> 1; k += PUNY_BASE) d = (d / (PUNY_BASE - PUNY_T_MIN)) | 0;
  return k + ((((PUNY_BASE - PUNY_T_MIN + 1) * d) / (d + 38)) | 0);
}

/** RFC 3492: the threshold of digit position `k`. */
function punyThreshold(k: number, bias: number): number {
  return k <= bias ? PUNY_T_MIN : k >= bias + PUNY_T_MAX ? PUNY_T_MAX : k - bias;
}

/** RFC 3492 §5–6.3: delta `q` (at most 2^31 − 1) as a generalized variable-length integer (base-36 digits `a`–`z`, `0`–`9`). */
function punyDigits(q: number, bias: number): string {
  let out = '';
  for (let k = PUNY_BASE; ; k += PUNY_BASE) {
    const t = punyThreshold(k, bias);
    if (q < t) return out + String.fromCharCode(q < 26 ? 97 + q : 22 + q);
    const digit = t + ((q - t) % (PUNY_BASE - t));
    out += String.fromCharCode(digit < 26 ? 97 + digit : 22 + digit);
    q = ((q - t) / (PUNY_BASE - t)) | 0;
  }
}

/**
 * RFC 3492 §6.2 decoding (what follows `xn--` in an A-label) when every
 * code point it gives is one UTF-16 unit (the Basic Multilingual Plane, no
 * surrogate): the decoded label, else `undefined` — also for input that is
 * not valid punycode (a non-ASCII character before the last `-`, a bad
 * digit, a delta cut short, an overflow). Where it answers, it answers as
 * punycode.js's `decode` (the property test "the BMP punycode codec agrees
 * with punycode.js" checks it); working on a string rather than on an array
 * of code points, it costs about half as much: the verifier's IDN path
 * decodes with it.
 *
 * @example decodeBmpPunycode('bcher-kva') // 'bücher'
 */
export function decodeBmpPunycode(encoded: string): string | undefined {
  // The last '-' (a loop: V8's lastIndexOf is a runtime call, several times dearer on a short label).
  let last = encoded.length - 1;
  while (last >= 0 && encoded.charCodeAt(last) !== 45) last--;
  for (let p = 0; p < last; p++) if (encoded.charCodeAt(p) >= 0x80) return undefined;
  let out = last > 0 ? encoded.slice(0, last) : '';
  let n = PUNY_INITIAL_N;
  let i = 0;
  let bias = PUNY_INITIAL_BIAS;
  // Twin of goPunycodeDecode's loop (its output an array of code points): keep in step.
  for (let pos = last > 0 ? last + 1 : 0; pos < encoded.length;) {
    const oldI = i;
    for (let w = 1, k = PUNY_BASE; ; k += PUNY_BASE) {
      if (pos === encoded.length) return undefined;
      const c = encoded.charCodeAt(pos++);
      const digit = c >= 48 && c <= 57 ? c - 22 : c >= 97 && c <= 122 ? c - 97 : c >= 65 && c <= 90 ? c - 65 : -1;
      if (digit < 0) return undefined;
      i += digit * w;
      const t = punyThreshold(k, bias);
      if (i > 0x7fffffff) return undefined;
      if (digit < t) break;
      w *= PUNY_BASE - t;
      if (w > 0x7fffffff) return undefined;
    }
    const size = out.length + 1;
    bias = punyAdapt(i - oldI, size, oldI === 0);
    n += (i / size) | 0;
    i %= size;
    if (n > 0xffff || (n >= 0xd800 && n <= 0xdfff)) return undefined;
    out = out.slice(0, i) + String.fromCharCode(n) + out.slice(i);
    i++;
  }
  return out;
}

/** Where {@link encodeBmpPunycode} notes its label's non-ASCII units (grown when a label has more). */
let wideUnits = new Int32Array(64);

/**
 * RFC 3492 §6.3 encoding of `label.slice(from, to)` when it holds no
 * surrogate (every code point one UTF-16 unit), else `undefined`: what
 * punycode.js's `encode` gives (the property test "the BMP punycode codec
 * agrees with punycode.js" checks it), without its arrays of code points.
 * Each non-ASCII unit is inserted as the decoder would, by code point then
 * left to right (as {@link goPunycodeEncode} does for the units it inserts).
 *
 * @example encodeBmpPunycode('bücher') // 'bcher-kva'
 */
export function encodeBmpPunycode(label: string, from = 0, to = label.length): string | undefined {
  let out = '';
  let start = from;
  let wide = 0;
  // The basic code points, in order; the others' places noted.
  for (let p = from; p < to; p++) {
    const c = label.charCodeAt(p);
    if (c < 0x80) continue;
    if (c >= 0xd800 && c <= 0xdfff) return undefined;
    if (p > start) out += label.slice(start, p);
    start = p + 1;
    if (wide === wideUnits.length) {
      const grown = new Int32Array(wide * 2);
      grown.set(wideUnits);
      wideUnits = grown;
    }
    wideUnits[wide++] = p;
  }
  if (start < to) out += label.slice(start, to);
  const basic = to - from - wide;
  if (basic > 0) out += '-';
  // Insertion order: by code point, then left to right (an insertion sort: a label has few).
  for (let j = 1; j < wide; j++) {
    const p = wideUnits[j] as number;
    const c = label.charCodeAt(p);
    let k = j;
    for (; k > 0 && label.charCodeAt(wideUnits[k - 1] as number) > c; k--) wideUnits[k] = wideUnits[k - 1] as number;
    wideUnits[k] = p;
  }
  let n = PUNY_INITIAL_N;
  let i = 0;
  let bias = PUNY_INITIAL_BIAS;
  for (let j = 0; j < wide; j++) {
    const p = wideUnits[j] as number;
    const cp = label.charCodeAt(p);
    // Its place among the code points present: all but the non-ASCII ones left of it not inserted yet.
    let index = p - from;
    for (let k = j + 1; k < wide; k++) if ((wideUnits[k] as number) < p) index--;
    // Twin of goPunycodeEncode's delta: keep in step.
    const delta = (cp - n) * (basic + j + 1) + index - i;
    if (delta > 0x7fffffff) return undefined;
    out += punyDigits(delta, bias);
    bias = punyAdapt(delta, basic + j + 1, j === 0);
    n = cp;
    i = index + 1;
  }
  return out;
}

/**
 * RFC 3492 §6.2 decoding as Go's x/net/idna does it (amppackager): all
 * before the last `-` is copied as it is, ASCII or NOT, then the base-36
 * deltas insert code points. `undefined` when invalid.
 */
function goPunycodeDecode(encoded: string): string | undefined {
  const last = encoded.lastIndexOf('-');
  if (last === 0) return undefined;
  if (last === encoded.length - 1) return encoded.slice(0, -1);
  const output = last > 0 ? Array.from(encoded.slice(0, last)) : [];
  // Twin of decodeBmpPunycode's loop (its output a string): keep in step.
  let n = PUNY_INITIAL_N;
  let i = 0;
  let bias = PUNY_INITIAL_BIAS;
  for (let pos = last + 1; pos < encoded.length;) {
    const oldI = i;
    for (let w = 1, k = PUNY_BASE; ; k += PUNY_BASE) {
      if (pos === encoded.length) return undefined;
      const c = encoded.charCodeAt(pos++);
      const digit = c >= 48 && c <= 57 ? c - 22 : c >= 97 && c <= 122 ? c - 97 : c >= 65 && c <= 90 ? c - 65 : -1;
      if (digit < 0) return undefined;
      i += digit * w;
      const t = punyThreshold(k, bias);
      if (i > 0x7fffffff) return undefined;
      if (digit < t) break;
      w *= PUNY_BASE - t;
      if (w > 0x7fffffff) return undefined;
    }
    bias = punyAdapt(i - oldI, output.length + 1, oldI === 0);
    n += Math.floor(i / (output.length + 1));
    i %= output.length + 1;
    if (n > 0x10ffff || output.length >= 1024) return undefined;
    output.splice(i, 0, String.fromCodePoint(n));
    i++;
  }
  return output.join('');
}

/**
 * The inverse of {@link goPunycodeDecode} for one choice: the encoding of
 * the code points `points` whose basic part keeps those marked in `keep`
 * (non-ASCII ones too) and whose deltas insert the others (each ≥ 128),
 * in the order the decoder inserts them (by code point, then left to right).
 * `undefined` when a removed code point is ASCII, or a delta overflows (RFC 3492 §6.4).
 */
export function goPunycodeEncode(points: readonly number[], keep: readonly boolean[]): string | undefined {
  const inserted: number[] = [];
  for (let p = 0; p < points.length; p++) if (!keep[p]) inserted.push(p);
  inserted.sort((a, b) => (points[a] as number) - (points[b] as number) || a - b);
  const present = keep.slice();
  let length = points.length - inserted.length;
  let out = '';
  for (let p = 0; p < points.length; p++) if (keep[p]) out += String.fromCodePoint(points[p] as number);
  out += '-';
  let n = PUNY_INITIAL_N;
  let i = 0;
  let bias = PUNY_INITIAL_BIAS;
  for (const [step, p] of inserted.entries()) {
    const cp = points[p] as number;
    if (cp < n) return undefined;
    let index = 0;
    for (let q = 0; q < p; q++) if (present[q]) index++;
    // Twin of encodeBmpPunycode's delta (the decoder's state <n, i> advanced to <cp, index>): keep in step.
    const delta = (cp - n) * (length + 1) + index - i;
    if (delta > 0x7fffffff) return undefined;
    out += punyDigits(delta, bias);
    bias = punyAdapt(delta, length + 1, step === 0);
    n = cp;
    i = index + 1;
    length++;
    present[p] = true;
  }
  return out;
}

/**
 * Go's ToASCII of an `xn--` label that holds non-ASCII characters (a first
 * label `xn-…` joined to IDN labels, `xn--fm-উপপগ…-org`): the rest is
 * decoded by {@link goPunycodeDecode}, which must give a valid label that
 * UTS #46 leaves unchanged and that passes Go's hyphen rule; its standard
 * A-label is the result. `null` on any error.
 */
function goLenientALabel(label: string): string | null {
  const decoded = goPunycodeDecode(label.slice(4));
  if (decoded === undefined || decoded === '' || decoded.includes('.') || goHyphenRule(decoded)) return null;
  const ascii = uts46ToASCII(decoded, AMPPACKAGER_UTS46);
  return ascii !== null && ascii.startsWith('xn--') && toUnicode(ascii) === decoded ? ascii : null;
}

/** amppackager's IDNA ToASCII of one label: the A-label form, or `null` on any error. */
function amppackagerLabelToASCII(label: string): string | null {
  // Go decodes an `xn--` label even when it holds non-ASCII characters.
  if (label.startsWith('xn--') && NON_ASCII.test(label)) return goLenientALabel(label);
  const ascii = uts46ToASCII(label, AMPPACKAGER_UTS46);
  if (ascii === null) return null;
  // Go validates an `xn--` label after decoding it.
  const validated = ascii.startsWith('xn--') ? toUnicode(ascii) : ascii;
  return goHyphenRule(validated) ? null : ascii;
}

/**
 * The prefix amppackager (Google's Go `ToCacheURLSubdomain`) computes for a
 * canonical ASCII domain, with non-transitional mapping (SPEC §6). Its steps:
 * 1. IDNA ToUnicode with validation; an error (here: any label, decoded,
 *    with `-` at UTF-8 bytes 3–4 or at an edge) falls back to the hash of
 *    the domain as given.
 * 2. Every `-` becomes `--`, every `.` becomes `-`.
 * 3. IDNA ToASCII of that single label (UTS #46 mapping, Bidi, CONTEXTJ,
 *    STD3, at most 63 octets, the hyphen rule on bytes): if it succeeds and
 *    holds a `-`, that is the prefix. A label starting `xn--` is
 *    punycode-decoded first, Go's way: a first label `xn-…` joined to IDN
 *    labels keeps its non-ASCII characters in the basic part and its last
 *    hyphen-free part is read as deltas (`xn-fm.উপপগইঠদপ.org` →
 *    `xn--fm--4fc453fla2h5cscvbae`); the decoded label must be valid and
 *    unmapped, and its standard A-label is the prefix.
 * 4. Else, if the label has `-` at UTF-8 bytes 3 and 4, the same for
 *    `0-` + label + `-0` (so `я-дома.рф` → `xn--0-----0-5fg9azfva1a6czi`).
 * 5. Else the hash (SPEC §2 fallback) of the domain.
 *
 * @example amppackagerPrefix('www.ab--cd.example.com') // the hash: a label has `--` at 3–4
 */
export function amppackagerPrefix(asciiDomain: string): string {
  return amppackagerForm(asciiDomain).prefix;
}

/** {@link amppackagerPrefix}, saying whether the result is a hash (computed only `withHash`, else the prefix is empty). */
function amppackagerForm(ascii: string, withHash = true): ComputedPrefix {
  // Twin: readablePrefixForms' plain fast path relies on this giving the guide's prefix or the hash for plain domains: keep in step.
  const hashed = (): ComputedPrefix => ({ prefix: withHash ? fallbackPrefix(ascii) : '', hashed: true });
  // Step 1: a canonical domain passes UTS #46; Go's hyphen rule is extra.
  const unicode = unicodeDomain(ascii);
  if (unicode.split('.').some(goHyphenRule)) return hashed();
  // Step 2.
  const joined = unicode.replaceAll('-', '--').replaceAll('.', '-');
  // Step 3 (fast: a plain label not starting `xn--` is its own IDNA form).
  const plain = unicode === ascii && !joined.startsWith('xn--');
  const first = plain ? (joined.length <= MAX_LABEL_LENGTH && !hyphensAtBytes3And4(joined) ? joined : null) : amppackagerLabelToASCII(joined);
  if (first !== null && first.includes('-')) return { prefix: first, hashed: false };
  // Step 4.
  if (hyphensAtBytes3And4(joined)) {
    const wrapped = `0-${joined}-0`;
    const second = plain ? (wrapped.length <= MAX_LABEL_LENGTH ? wrapped : null) : amppackagerLabelToASCII(wrapped);
    if (second !== null && second.includes('-')) return { prefix: second, hashed: false };
  }
  // Step 5.
  return hashed();
}

/** Which algorithm produced a prefix (SPEC §6). */
export type PrefixForm = 'spec' | 'toolbox' | 'amppackager' | 'hash-ascii' | 'hash-unicode';

/** The algorithms whose prefixes can be read back (all but the hashes). */
export type ReadableForm = Extract<PrefixForm, 'spec' | 'toolbox' | 'amppackager'>;

/** One accepted prefix of a publisher domain and where it comes from. */
export interface PrefixFormEntry {
  /** The domain prefix (a single DNS label). */
  readonly prefix: string;
  /** The algorithm that produced it. */
  readonly form: PrefixForm;
}

/**
 * The readable prefixes (those with a `-`) every accepted algorithm computes
 * for a canonical ASCII domain (SPEC §6), in the order spec, toolbox
 * (ASCII, then Unicode input), amppackager, without duplicates (first form
 * wins); an algorithm that falls back to the hash adds nothing here, nor
 * does the guide's dash-free prefix of a one-label name (it reads as a hash). No
 * SHA-256 is computed, and no punycode for a plain domain: the fast path
 * below is the allow-set's build path.
 */
export function readablePrefixForms(ascii: string): PrefixFormEntry[] {
  if (!isPlainDomain(ascii)) return readableFormsOf(ascii);
  // Twin of basicPrefix, toolboxForm and amppackagerForm for a plain domain
  // (no punycode, no hashing): keep in step. The property test "readable
  // forms: the plain fast path agrees with the algorithms" checks it.
  const label = ascii.replaceAll('-', '--').replaceAll('.', '-');
  const wrap = label.charCodeAt(2) === 45 && label.charCodeAt(3) === 45;
  const wrapped = wrap ? `0-${label}-0` : label;
  // The guide: wrap on positions 3–4, hash past 63 octets.
  const spec = wrapped.length <= MAX_LABEL_LENGTH && wrapped.includes('-') ? wrapped : undefined;
  // toolbox: hashes a host with `--` at 3–4, over 63 octets or without a dot; wraps on the final label.
  const toolboxBasic =
    !(ascii.charCodeAt(2) === 45 && ascii.charCodeAt(3) === 45) && ascii.length <= MAX_LABEL_LENGTH && label.length <= MAX_LABEL_LENGTH && ascii.includes('.');
  const toolbox = toolboxBasic ? wrapped : undefined;
  // amppackager adds nothing here: on a plain domain it gives the guide's
  // prefix (bytes are code points, its 63-octet check and wrap are the
  // guide's), or the hash when a label has `--` at 3–4.
  const forms: PrefixFormEntry[] = [];
  if (spec !== undefined) forms.push({ prefix: spec, form: 'spec' });
  if (toolbox !== undefined && toolbox !== spec) forms.push({ prefix: toolbox, form: 'toolbox' });
  return forms;
}

/**
 * The first readable algorithm (spec, toolbox of the ASCII then of the
 * Unicode form, amppackager) that gives `ascii` exactly `prefix`, or
 * `undefined`: {@link readablePrefixForms}' answer for one prefix, computing
 * the costlier algorithms only when the cheaper ones do not match (the
 * request path's claimant check).
 */
export function readableFormOf(ascii: string, prefix: string): ReadableForm | undefined {
  if (isHashedPrefix(prefix)) return undefined;
  if (isPlainDomain(ascii)) return readablePrefixForms(ascii).find((entry) => entry.prefix === prefix)?.form as ReadableForm | undefined;
  const basic = basicPrefix(ascii);
  if (basic === prefix && basic.length <= MAX_LABEL_LENGTH) return 'spec';
  const toolbox = toolboxForm(ascii, false);
  if (!toolbox.hashed && toolbox.prefix === prefix) return 'toolbox';
  const unicode = unicodeDomain(ascii);
  if (unicode !== ascii) {
    const toolboxUnicode = toolboxForm(unicode, false);
    if (!toolboxUnicode.hashed && toolboxUnicode.prefix === prefix) return 'toolbox';
  }
  const amppackager = amppackagerForm(ascii, false);
  return !amppackager.hashed && amppackager.prefix === prefix ? 'amppackager' : undefined;
}

/** {@link readablePrefixForms} by the algorithms themselves (also the reference the fast path is tested against). */
export function readableFormsOf(ascii: string): PrefixFormEntry[] {
  const forms: PrefixFormEntry[] = [];
  const add = (computed: ComputedPrefix, form: ReadableForm): void => {
    if (!computed.hashed && !isHashedPrefix(computed.prefix) && !forms.some((entry) => entry.prefix === computed.prefix))
      forms.push({ prefix: computed.prefix, form });
  };
  const basic = basicPrefix(ascii);
  add({ prefix: basic, hashed: basic.length > MAX_LABEL_LENGTH }, 'spec');
  const unicode = unicodeDomain(ascii);
  add(toolboxForm(ascii, false), 'toolbox');
  if (unicode !== ascii) add(toolboxForm(unicode, false), 'toolbox');
  add(amppackagerForm(ascii, false), 'amppackager');
  return forms;
}

/**
 * A plain-ASCII domain: no `xn--` label and no label starting `xn-`, nor a
 * first label `xn` before a label starting `-` (either makes the joined label
 * start `xn--`, which toolbox does not wrap).
 */
function isPlainDomain(ascii: string): boolean {
  return !ascii.includes('xn-') && !ascii.startsWith('xn.-');
}

/**
 * The dash-free prefixes of a canonical domain (SPEC §4 step 2: read as
 * hashes), as {@link allPrefixForms} lists them: the SHA-256 hash of the
 * ASCII and of the Unicode form, each named after the first algorithm that
 * falls back to it, and the guide's dash-free prefix of a one-label name.
 * The allow-set's hashed table, made on first need: one SHA-256 per plain
 * domain, no punycode.
 */
export function hashedPrefixForms(ascii: string): PrefixFormEntry[] {
  const unicode = unicodeDomain(ascii);
  const forms: PrefixFormEntry[] = [];
  const add = (prefix: string, form: PrefixForm): void => {
    if (isHashedPrefix(prefix) && !forms.some((entry) => entry.prefix === prefix)) forms.push({ prefix, form });
  };
  let hashAscii: string | undefined;
  const hashOfAscii = (): string => (hashAscii ??= fallbackPrefix(ascii));
  // Twin of allPrefixForms: the same candidates in the same order, readable ones left out; and of hashFormsOf (names only).
  const basic = basicPrefix(ascii);
  add(basic.length <= MAX_LABEL_LENGTH ? basic : hashOfAscii(), 'spec');
  if (toolboxForm(ascii, false).hashed) add(hashOfAscii(), 'toolbox');
  const hashUnicode = unicode === ascii ? undefined : fallbackPrefix(unicode);
  if (hashUnicode !== undefined && toolboxForm(unicode, false).hashed) add(hashUnicode, 'toolbox');
  if (amppackagerForm(ascii, false).hashed) add(hashOfAscii(), 'amppackager');
  add(hashOfAscii(), 'hash-ascii');
  if (hashUnicode !== undefined) add(hashUnicode, 'hash-unicode');
  return forms;
}

/** The form names {@link hashedPrefixForms} gives the SHA-256 hashes of a domain's ASCII and Unicode forms. */
export interface HashForms {
  /** The name of the hash of the ASCII form. */
  readonly ascii: PrefixForm;
  /** The name of the hash of the Unicode form; `undefined` when it is the ASCII form. */
  readonly unicode: PrefixForm | undefined;
}

/**
 * What {@link hashedPrefixForms} names each hash of `ascii` (the first
 * algorithm that falls back to it), computed without hashing: the allow-set
 * finds a hashed prefix by its digest and names it with this. No punycode
 * or UTS #46 for a domain without `xn` (its forms are plain string work).
 */
export function hashFormsOf(ascii: string): HashForms {
  // Twin of hashedPrefixForms (the same candidates in the same order, names only): keep in step.
  const unicode = unicodeDomain(ascii);
  const asciiForm: PrefixForm =
    basicPrefix(ascii).length > MAX_LABEL_LENGTH
      ? 'spec'
      : toolboxForm(ascii, false).hashed
        ? 'toolbox'
        : amppackagerForm(ascii, false).hashed
          ? 'amppackager'
          : 'hash-ascii';
  if (unicode === ascii) return { ascii: asciiForm, unicode: undefined };
  return { ascii: asciiForm, unicode: toolboxForm(unicode, false).hashed ? 'toolbox' : 'hash-unicode' };
}

/**
 * Every prefix a real AMP cache may produce for a publisher domain (SPEC §6),
 * before the check that no other domain claims it: the guide's prefix,
 * toolbox-cache-url's of the ASCII and of the Unicode form, amppackager's
 * (non-transitional input), and the SHA-256 hash of the ASCII and of the
 * Unicode form — for every domain, not only where an algorithm hashes
 * (caches hashed more names in the past). Duplicates removed, first form
 * wins (a hash an algorithm fell back to is listed as that algorithm's form).
 */
export function allPrefixForms(ascii: string): PrefixFormEntry[] {
  // Twin of hashedPrefixForms (its dash-free part): keep the order in step.
  const unicode = unicodeDomain(ascii);
  const forms: PrefixFormEntry[] = [];
  const add = (prefix: string, form: PrefixForm): void => {
    if (!forms.some((entry) => entry.prefix === prefix)) forms.push({ prefix, form });
  };
  const basic = basicPrefix(ascii);
  add(basic.length <= MAX_LABEL_LENGTH ? basic : fallbackPrefix(ascii), 'spec');
  add(toolboxForm(ascii).prefix, 'toolbox');
  if (unicode !== ascii) add(toolboxForm(unicode).prefix, 'toolbox');
  add(amppackagerForm(ascii).prefix, 'amppackager');
  add(fallbackPrefix(ascii), 'hash-ascii');
  if (unicode !== ascii) add(fallbackPrefix(unicode), 'hash-unicode');
  return forms;
}
