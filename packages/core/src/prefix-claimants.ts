import { encode as punycodeEncode, toUnicode } from 'punycode/punycode.es6.js';
import { browserHost } from './domain-name.js';
import {
  decodeBmpPunycode,
  encodeBmpPunycode,
  goPunycodeEncode,
  isHashedPrefix,
  MAX_PREFIX_LENGTH,
  type ReadableForm,
  readableFormOf,
} from './domain-prefix.js';

/** A domain that could exist and whose cache prefix, under one accepted algorithm, is a given prefix. */
export interface PrefixClaimant {
  /** The domain (canonical ASCII, as a browser writes the host). */
  readonly publisherDomain: string;
  /** The first algorithm (spec, toolbox, amppackager) that gives it the prefix. */
  readonly form: ReadableForm;
}

/** What {@link searchClaimants} found. */
export interface ClaimantSearch {
  /** The claimants found, the guide's reading first when it claims the prefix. */
  readonly claimants: readonly PrefixClaimant[];
  /**
   * True when `claimants` is every domain that could exist with the prefix;
   * false when the search was stopped (by the caller, or past
   * {@link MAX_CLAIMANT_CANDIDATES} readings): then the prefix must be
   * treated as claimed by a domain outside any configuration.
   */
  readonly complete: boolean;
}

/**
 * Readings of a prefix that the claimant search examines at most. A prefix
 * with more (long hyphen runs, which edge-hyphen labels read in many ways,
 * or many non-ASCII characters, which Go's punycode decoding reads in many
 * ways) is treated as claimed by an unknown domain: denied, fail-closed. No
 * configured domain's own prefix comes near it in practice.
 */
export const MAX_CLAIMANT_CANDIDATES = 256;

/** A possible top-level domain of ASCII letters (or, below, an A-label). */
const LETTERS = /^[a-z]+$/;
const ASCII_LABEL = /^[\x00-\x7f]*$/;

/** SPEC §4 step 3: the punycode-decoded `xn--` label, `undefined` when it is none or not valid punycode. */
export function decodeXnLabel(label: string): string | undefined {
  if (!label.startsWith('xn--')) return undefined;
  try {
    return toUnicode(label);
  } catch {
    return undefined;
  }
}

/** SPEC §4 step 4: the label without its `0-` … `-0` wrap, `undefined` when it is not wrapped. */
export function unwrapLabel(label: string): string | undefined {
  return label.length >= 4 && label.startsWith('0-') && label.endsWith('-0') ? label.slice(2, -2) : undefined;
}

/** SPEC §4 step 5 (the guide's reading): left to right, `--` emits `-` and a single `-` emits `.`. */
export function foldHyphens(label: string): string {
  let out = '';
  let from = 0;
  for (let i = label.indexOf('-'); i >= 0; i = label.indexOf('-', from)) {
    if (label.charCodeAt(i + 1) === 45) {
      out += label.slice(from, i + 1);
      from = i + 2;
    } else {
      out += `${label.slice(from, i)}.`;
      from = i + 1;
    }
  }
  return from === 0 ? label : out + label.slice(from);
}

/**
 * SPEC §4 step 5 read every way. A label may start or end with a hyphen
 * (browsers accept it, SPEC §6), so a run of hyphens is any sequence of `--`
 * (a hyphen) and `-` (a dot) with no two dots in a row and no dot at either
 * end of the name: `a---b` reads as `a-.b` and as `a.-b`. The first reading
 * is {@link foldHyphens}' (each run read greedily as hyphens).
 */
function hyphenReadings(label: string): Generator<string> | [] {
  // A final single hyphen can only be a trailing dot: no reading. (Checked first, so that no
  // branch dies at the end after every reading of the runs before it was tried.)
  return label.endsWith('-') && !label.endsWith('--') ? [] : readRuns(label, 0, '', false);
}

/** {@link hyphenReadings} from `at`, `out` read so far, `afterDot` when its last token was a dot. */
function* readRuns(label: string, at: number, out: string, afterDot: boolean): Generator<string> {
  let end = at;
  while (end < label.length && label.charCodeAt(end) !== 45) end++;
  if (end > at) {
    out += label.slice(at, end);
    afterDot = false;
  }
  if (end === label.length) {
    if (!afterDot) yield out;
    return;
  }
  if (label.charCodeAt(end + 1) === 45) yield* readRuns(label, end + 2, `${out}-`, false);
  if (!afterDot && out !== '' && end !== label.length - 1) yield* readRuns(label, end + 1, `${out}.`, true);
}

/**
 * How many readings {@link hyphenReadings} gives for `label`, counted
 * without making them (each run: sequences of `--` and `-` with no two dots
 * in a row; a run at either end of the label may not put a dot there).
 */
function countHyphenReadings(label: string): number {
  let total = 1;
  for (let at = 0; at < label.length;) {
    if (label.charCodeAt(at) !== 45) {
      at++;
      continue;
    }
    let end = at;
    while (end < label.length && label.charCodeAt(end) === 45) end++;
    // ways[i]: [ending with a hyphen token or at the start, ending with a dot]; a run at the label's start may not begin with a dot.
    const ways: [number, number][] = [at === 0 ? [0, 1] : [1, 0]];
    for (let i = 1; i <= end - at; i++) {
      const [twoBack = [0, 0], oneBack] = [ways[i - 2], ways[i - 1] as [number, number]];
      ways.push([twoBack[0] + twoBack[1], oneBack[0]]);
    }
    const [plain, dot] = ways[end - at] as [number, number];
    total *= end === label.length ? plain : plain + dot;
    at = end;
  }
  return total;
}

/** The labels a prefix reads as before step 5: decoded and unwrapped in both orders, each optional. */
function undoneLabels(prefix: string): string[] {
  const labels: string[] = [];
  const add = (label: string | undefined): void => {
    if (label !== undefined && !labels.includes(label)) labels.push(label);
  };
  const decoded = decodeXnLabel(prefix);
  for (const label of decoded === undefined ? [prefix] : [decoded, prefix]) {
    add(unwrapLabel(label));
    add(label);
  }
  const unwrapped = unwrapLabel(prefix);
  if (unwrapped !== undefined) add(decodeXnLabel(unwrapped));
  return labels;
}

/**
 * The readings of amppackager's lenient punycode decoding (Go's x/net/idna
 * copies everything before the last `-` of an `xn--` label, non-ASCII
 * characters included, and reads the rest as deltas). If Go gives a domain E
 * the prefix `xn--` + punycode(D), E's joined label is `xn--` + an encoding
 * of D whose basic part keeps some of D's non-ASCII characters: one reading
 * per choice of the characters the deltas insert (all of them is the
 * standard encoding, the literal reading, already read above). Each is
 * folded the guide's way (Go refuses labels with edge hyphens). `decoded`
 * is the prefix's punycode-decoded label.
 */
function* lenientReadings(decoded: string): Generator<string> {
  const points = Array.from(decoded, (ch) => ch.codePointAt(0) as number);
  const wide: number[] = [];
  for (let p = 0; p < points.length; p++) if ((points[p] as number) >= 0x80) wide.push(p);
  const choices = 2 ** wide.length - 1;
  for (let mask = 1; mask < choices; mask++) {
    const keep = points.map(() => true);
    for (let b = 0; b < wide.length; b++) if (Math.floor(mask / 2 ** b) % 2 === 1) keep[wide[b] as number] = false;
    const encoded = goPunycodeEncode(points, keep);
    // The deltas end the name: a reading can be a claimant only if they are a possible TLD (letters only).
    if (encoded !== undefined && LETTERS.test(encoded.slice(encoded.lastIndexOf('-') + 1))) yield foldHyphens(`xn--${encoded}`);
  }
}

/** The number of choices {@link lenientReadings} tries for `prefix`. */
function countLenientReadings(prefix: string): number {
  const decoded = prefix.startsWith('xn--') ? decodeXnLabel(prefix) : undefined;
  if (decoded === undefined) return 0;
  let wide = 0;
  for (const ch of decoded) if ((ch.codePointAt(0) as number) >= 0x80) wide++;
  return Math.max(0, 2 ** wide - 2);
}

/** True when `prefix` has at most {@link MAX_CLAIMANT_CANDIDATES} readings, so the search can be complete. */
function fewReadings(prefix: string): boolean {
  let count = countLenientReadings(prefix);
  for (const label of undoneLabels(prefix)) count += countHyphenReadings(label);
  return count <= MAX_CLAIMANT_CANDIDATES;
}

/** Every reading of a prefix, most likely first: the guide's, then every other fold, then Go's lenient ones. */
function* readingsOf(prefix: string): Generator<string> {
  const labels = undoneLabels(prefix);
  for (const label of labels) yield foldHyphens(label);
  for (const label of labels) if (countHyphenReadings(label) > 1) yield* hyphenReadings(label);
  const decoded = decodeXnLabel(prefix);
  if (decoded !== undefined) yield* lenientReadings(decoded);
}

/**
 * Every way a readable prefix can be read back into a domain (at most
 * {@link MAX_CLAIMANT_CANDIDATES}): the forward algorithms wrap then encode
 * (the guide, amppackager) or encode then wrap (toolbox), so the readings
 * undo decode and unwrap in both orders, each optional, then read each run
 * of hyphens every way (SPEC §4 steps 3–5); an `xn--` prefix is also read
 * the ways Go's lenient punycode decoding allows. The first reading is the
 * guide's (SPEC §4).
 */
export function prefixReadings(prefix: string): string[] {
  const readings = new Set<string>();
  for (const reading of readingsOf(prefix)) {
    readings.add(reading);
    if (readings.size >= MAX_CLAIMANT_CANDIDATES) break;
  }
  return [...readings];
}

/**
 * A domain that could exist (SPEC §6): a host a browser accepts (labels of
 * letters, digits and hyphens, edge hyphens included), at least two labels
 * (ICANN allows no dotless host), its last label a possible top-level domain
 * — letters only, or an A-label — whether delegated today or not.
 */
function possibleDomain(reading: string): string | undefined {
  const dot = reading.lastIndexOf('.');
  if (dot < 0) return undefined;
  // Cheap refusal first: an ASCII last label that is neither letters nor an A-label.
  const last = reading.slice(dot + 1).toLowerCase();
  if (ASCII_LABEL.test(last) && !LETTERS.test(last) && !last.startsWith('xn--')) return undefined;
  const host = browserHost(reading);
  if (host === undefined) return undefined;
  const tld = host.slice(host.lastIndexOf('.') + 1);
  return host.includes('.') && (LETTERS.test(tld) || tld.startsWith('xn--')) ? host : undefined;
}

/**
 * The claimants of a plain readable prefix, found with one scan and no
 * reading list — the same list, in the same order, as the general search
 * ({@link searchReadings}) — or `undefined` when the prefix is not plain
 * (then the general search decides). Two kinds are plain:
 * - a readable ASCII prefix with one reading ({@link plainAsciiClaimant}):
 *   one claimant, found without punycode, UTS #46 or SHA-256;
 * - an `xn--` prefix of a simple IDN ({@link simpleIdnClaimants}): one or
 *   two claimants, found with one punycode decoding and the encodings that
 *   check it, without UTS #46 (but on the first sight of a code point).
 *
 * The property test "plain prefixes: the fast path agrees with the search"
 * checks both against the general search.
 */
export function plainPrefixClaimants(prefix: string): readonly PrefixClaimant[] | undefined {
  if (prefix.startsWith('xn--')) return simpleIdnClaimants(prefix);
  const claimant = plainAsciiClaimant(prefix);
  return claimant === undefined ? undefined : [claimant];
}

/**
 * The one claimant of a plain readable ASCII prefix, found with one scan
 * and no reading list, or `undefined` when the prefix is not plain (then the
 * general search of {@link searchClaimants} decides; it also finds no
 * claimant where this one gives up on a prefix that spells no domain).
 *
 * Plain: at most 63 octets of `a`–`z`, `0`–`9` and `-`, neither first nor
 * last a `-`, no `---` (so each run of hyphens is one `-`, a dot, or two, a
 * hyphen, and reads one way: SPEC §6.6 step 1), no `xn--` anywhere (nothing
 * to decode, no A-label made), not wrapped in `0-`…`-0`, and no `--` at
 * positions 3–4 (which the guide and toolbox would have wrapped). Its one
 * reading D (SPEC §4 step 5) then has labels of letters, digits and inner
 * hyphens, no `xn-` and at most 63 octets in all, so D is its own browser
 * host; D could exist when it has a dot and its last label is letters only
 * (a numeric one would be an IPv4 address). The guide's forward algorithm
 * gives D exactly the prefix back (join inverts the fold; no wrap; at most
 * 63 octets): the claimant is D, form `spec` — the general search's answer
 * (the property test "plain prefixes: the fast path agrees with the search"
 * checks it).
 */
function plainAsciiClaimant(prefix: string): PrefixClaimant | undefined {
  const domain = plainAsciiReading(prefix);
  return domain === undefined ? undefined : { publisherDomain: domain, form: 'spec' };
}

/**
 * The one reading D of a plain readable ASCII prefix, which is its one
 * claimant (form `spec`, {@link plainAsciiClaimant}), or `undefined` when
 * the prefix is not plain.
 * The verifier's request path asks this, without a claimant list.
 */
export function plainAsciiReading(prefix: string): string | undefined {
  const length = prefix.length;
  if (length > 63 || length < 3) return undefined;
  // Positions 3–4 (0-based 2–3) both '-': wrapped by the forward algorithms, or a wrap to undo.
  if (prefix.charCodeAt(2) === 45 && prefix.charCodeAt(3) === 45) return undefined;
  if (prefix.charCodeAt(0) === 48 && prefix.charCodeAt(1) === 45 && prefix.charCodeAt(length - 2) === 45 && prefix.charCodeAt(length - 1) === 48)
    return undefined;
  // SPEC §4 step 5, read as the scan goes (slices, not characters, are joined: the cheapest way measured).
  let domain = '';
  let start = 0;
  // Where the last label starts in the prefix (-1: no dot read).
  let lastLabel = -1;
  for (let i = 0; i < length; i++) {
    const c = prefix.charCodeAt(i);
    if (c === 45) {
      if (i === 0 || i === length - 1) return undefined;
      if (prefix.charCodeAt(i + 1) === 45) {
        // `--`: a hyphen; a third one would make a run read several ways.
        if (prefix.charCodeAt(i + 2) === 45) return undefined;
        domain += prefix.slice(start, i + 1);
        start = i + 2;
        i++;
      } else {
        domain += `${prefix.slice(start, i)}.`;
        start = i + 1;
        lastLabel = start;
      }
    } else if (c === 110 && prefix.charCodeAt(i - 1) === 120 && prefix.charCodeAt(i + 1) === 45 && prefix.charCodeAt(i + 2) === 45) {
      // `xn--`: an A-label in the reading (or a prefix to decode).
      return undefined;
    } else if (!((c >= 97 && c <= 122) || (c >= 48 && c <= 57))) {
      return undefined;
    }
  }
  if (lastLabel < 0) return undefined;
  // The last label must be a possible top-level domain: letters only.
  for (let i = lastLabel; i < length; i++) {
    const c = prefix.charCodeAt(i);
    if (c < 97 || c > 122) return undefined;
  }
  return domain + prefix.slice(start);
}

/** The most non-ASCII characters {@link simpleIdnClaimants} takes (it checks the 2^n − 2 lenient readings itself). */
const MAX_SIMPLE_IDN_WIDE = 3;

/**
 * The claimants of the `xn--` prefix of a simple IDN, found without a
 * reading list and without UTS #46, or `undefined` when the prefix is not
 * of that kind (the general search then decides). Simple:
 * 1. after `xn--`, letters, digits and inner runs of one or two hyphens
 *    (at most 63 octets in all), so the prefix itself reads one way only
 *    (SPEC §4 step 5: `-` a dot, `--` a hyphen): R, `xn-` + the rest read so;
 * 2. it is the punycode of a label L (SPEC §4 step 3) of ASCII letters
 *    and digits, inner runs of one or two hyphens and one to three simple
 *    code points ({@link isSimpleCodePoint}), not wrapped in `0-`…`-0`, no
 *    `--` at positions 3–4 (punycode decoding is one-to-one: a lowercase
 *    label that decodes is the standard encoding of what it decodes to, RFC
 *    3492 §3.3 and §6.2, so the encoding of L is the prefix again); so
 *    L reads one way: D, whose last label is ASCII letters, and D is its own
 *    browser host (UTS #46 leaves simple code points and lowercase ASCII
 *    unchanged, and D holds no right-to-left character, joiner or mark:
 *    its A-labels are the punycode of its labels);
 * 3. none of Go's lenient readings of the prefix ends in letters (so none
 *    is a possible domain, as the general search filters them).
 * Then the general search finds D first, under the guide's algorithm (its
 * forward prefix is `xn--` + the encoding of L, unwrapped: the prefix), then
 * R when R's last label is letters only: toolbox-cache-url, which does not
 * wrap a label starting `xn`, gives R the prefix; otherwise R is no possible
 * domain. Nothing else reads from the prefix: neither L nor the prefix is
 * wrapped, and each has one hyphen reading.
 */
function simpleIdnClaimants(prefix: string): readonly PrefixClaimant[] | undefined {
  const length = prefix.length;
  if (length > 63) return undefined;
  // 1. Letters, digits and inner runs of one or two hyphens after `xn--` (the last hyphen noted).
  let last = 3;
  for (let i = 4; i < length; i++) {
    const c = prefix.charCodeAt(i);
    if (c === 45) {
      if (i === 4 || i === length - 1 || (prefix.charCodeAt(i + 1) === 45 && prefix.charCodeAt(i + 2) === 45)) return undefined;
      last = i;
    } else if (!((c >= 97 && c <= 122) || (c >= 48 && c <= 57))) return undefined;
  }
  // 2. L, read label by label into D (A-labels encoded here, as a browser encodes them).
  // (Not valid punycode, or a code point outside the BMP or a surrogate, which is never simple: not simple.)
  const label = decodeBmpPunycode(prefix.slice(4));
  if (label === undefined) return undefined;
  const size = label.length;
  if (size < 3 || (label.startsWith('0-') && label.endsWith('-0')) || (label.charCodeAt(2) === 45 && label.charCodeAt(3) === 45)) return undefined;
  let domain = '';
  let part = ''; // the current label of D, read so far
  let from = 0; // where the unread rest of that label starts in L
  let wide = 0;
  let partWide = false;
  let partLetters = true; // the current label is ASCII letters only so far
  for (let i = 0; i <= size; i++) {
    const c = i < size ? label.charCodeAt(i) : 45;
    if (c === 45 && i < size && label.charCodeAt(i + 1) === 45) {
      // `--`: a hyphen inside a label; never at an edge of L, never a run of three.
      if (i === 0 || i + 2 >= size || label.charCodeAt(i + 2) === 45) return undefined;
      part += label.slice(from, i + 1);
      from = i + 2;
      partLetters = false;
      i++;
    } else if (c === 45) {
      // `-` (or the end): a label ends; never an empty one; the last one is ASCII letters (a possible top-level domain).
      if (i === from && part === '') return undefined;
      if (i === size && (partWide || domain === '' || !partLetters)) return undefined;
      part = part === '' ? label.slice(from, i) : part + label.slice(from, i);
      // (Its code points are simple, never surrogates: it encodes; were it not to, the general search would decide.)
      const encoded = partWide ? encodeBmpPunycode(part) : part;
      if (encoded === undefined) return undefined;
      const ascii = partWide ? `xn--${encoded}` : part;
      if (ascii.length > 63) return undefined;
      domain = domain === '' ? ascii : `${domain}.${ascii}`;
      part = '';
      from = i + 1;
      partWide = false;
      partLetters = true;
    } else if (c >= 0x80) {
      if (++wide > MAX_SIMPLE_IDN_WIDE || !isSimpleCodePoint(c)) return undefined;
      partWide = true;
      partLetters = false;
    } else if (c >= 97 && c <= 122) {
      // A letter.
    } else if (c >= 48 && c <= 57) {
      partLetters = false;
    } else {
      return undefined;
    }
  }
  if (wide === 0 || domain.length > 253) return undefined;
  // 3. Go's lenient readings: none may end in letters.
  if (wide > 1 && !lenientReadings(label).next().done) return undefined;
  const claimant: PrefixClaimant = { publisherDomain: domain, form: 'spec' };
  // R's last label: what follows the prefix's last hyphen, unless that hyphen ends a `--` (then it holds a hyphen).
  if (prefix.charCodeAt(last - 1) === 45) return [claimant];
  for (let i = last + 1; i < length; i++) {
    const c = prefix.charCodeAt(i);
    if (c < 97 || c > 122) return [claimant];
  }
  return [claimant, { publisherDomain: foldHyphens(prefix), form: 'toolbox' }];
}

/** BMP code units {@link isSimpleCodePoint} has classified: 0 not yet, 1 simple, 2 not. */
let codePointClasses: Uint8Array | undefined;
const MARK = /^\p{M}$/u;
/** Hangul jamo: letters (not marks) that NFC composes with the character before them. */
const HANGUL_JAMO = /^[\u1100-\u11ff\ua960-\ua97f\ud7b0-\ud7ff]$/;

/**
 * True for a non-ASCII BMP code point that a browser's host parser (UTS #46,
 * non-transitional, Bidi and CONTEXTJ rules: {@link browserHost}) keeps as it
 * is anywhere in a label of lowercase ASCII letters, digits, hyphens and
 * other such code points: not a mark, not a Hangul jamo, unchanged by NFC
 * (so such a label is NFC: no character in it composes with another), and
 * `a` + it + `a` is a host UTS #46 leaves unchanged — it is valid, unmapped,
 * neither right-to-left nor an Arabic digit (the Bidi rule refuses it after
 * `a`) nor a joiner (CONTEXTJ refuses it there). Asked of UTS #46 once per
 * code point, then remembered (at most 65,536 answers).
 */
function isSimpleCodePoint(unit: number): boolean {
  const classes = (codePointClasses ??= new Uint8Array(0x10000));
  let known = classes[unit] as number;
  if (known === 0) {
    known = classifyCodePoint(unit) ? 1 : 2;
    classes[unit] = known;
  }
  return known === 1;
}

function classifyCodePoint(unit: number): boolean {
  if (unit < 0x80 || (unit >= 0xd800 && unit <= 0xdfff)) return false;
  const ch = String.fromCharCode(unit);
  if (MARK.test(ch) || HANGUL_JAMO.test(ch) || ch.normalize('NFC') !== ch) return false;
  const probe = `a${ch}a`;
  return browserHost(`${probe}.com`) === `xn--${punycodeEncode(probe)}.com`;
}

/**
 * Searches every domain that could exist whose prefix, under an accepted
 * readable algorithm (SPEC §6: the guide's, toolbox-cache-url's of the ASCII
 * or the Unicode form, amppackager's), is exactly `prefix`: each reading
 * ({@link prefixReadings}) is made a host as a browser would, and kept only
 * when forward-computing it reproduces the prefix byte for byte (SPEC §6
 * "never reverse-then-normalize"). Each readable algorithm is the
 * replacement of `-` and `.` with an optional wrap and an optional punycode
 * encoding (Go's decoding being lenient), so the readings find every
 * claimant. `stop` may end the search at a claimant (the list is then not
 * complete). A hashed prefix has none here: only a precomputed set knows
 * whose hash it is (a second SHA-256 preimage is out of reach); nor has a
 * label longer than any accepted prefix.
 */
export function searchClaimants(prefix: string, stop?: (claimant: PrefixClaimant) => boolean): ClaimantSearch {
  // Fast path: a plain prefix's claimants, found in one scan.
  const plain = plainPrefixClaimants(prefix);
  if (plain === undefined) return searchReadings(prefix, stop);
  if (stop !== undefined) {
    for (let i = 0; i < plain.length; i++) if (stop(plain[i] as PrefixClaimant)) return { claimants: plain.slice(0, i + 1), complete: false };
  }
  return { claimants: plain, complete: true };
}

/** {@link searchClaimants} without its plain fast path: every reading examined (also the reference the fast path is tested against). */
export function searchReadings(prefix: string, stop?: (claimant: PrefixClaimant) => boolean): ClaimantSearch {
  const claimants: PrefixClaimant[] = [];
  if (isHashedPrefix(prefix) || prefix.length > MAX_PREFIX_LENGTH) return { claimants, complete: true };
  // Fast path: nothing to decode or unwrap, and no run of three hyphens: one reading, the guide's.
  const single = !prefix.startsWith('xn--') && unwrapLabel(prefix) === undefined && !prefix.includes('---');
  // Too many readings: only the guide's are examined (for the verdict's publisherDomain), and the search is incomplete.
  const few = single || fewReadings(prefix);
  const seen = new Set<string>();
  for (const reading of single ? [foldHyphens(prefix)] : few ? readingsOf(prefix) : undoneLabels(prefix).map(foldHyphens)) {
    if (seen.has(reading)) continue;
    seen.add(reading);
    const domain = possibleDomain(reading);
    if (domain === undefined || claimants.some((c) => c.publisherDomain === domain)) continue;
    const form = readableFormOf(domain, prefix);
    if (form === undefined) continue;
    const claimant = { publisherDomain: domain, form };
    claimants.push(claimant);
    if (stop?.(claimant)) return { claimants, complete: false };
  }
  return { claimants, complete: few };
}

/**
 * The claimants {@link searchClaimants} finds for `prefix` (all of them, or
 * the first ones when there are more readings than it examines: a decision
 * must use `searchClaimants`, which says so).
 *
 * @example prefixClaimants('xn--shop-example-org-fun') // shopђ.example.org (spec), xn-shop.example.org.fun (toolbox)…
 * @example prefixClaimants('xn---com-fxl') // ன.com (spec), xn-.com.fxl (toolbox), xn.-com.fxl (toolbox)
 */
export function prefixClaimants(prefix: string): PrefixClaimant[] {
  return [...searchClaimants(prefix).claimants];
}
