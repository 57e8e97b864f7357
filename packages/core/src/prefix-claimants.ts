import { toUnicode } from 'punycode/punycode.es6.js';
import { browserHost } from './domain-name.js';
import { goPunycodeEncode, isHashedPrefix, MAX_PREFIX_LENGTH, type ReadableForm, readableFormOf } from './domain-prefix.js';

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
  for (let i = 0; i < label.length; i++) {
    const ch = label[i] as string;
    if (ch !== '-') out += ch;
    else if (label[i + 1] === '-') {
      out += '-';
      i++;
    } else out += '.';
  }
  return out;
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
 * folded the guide's way (Go refuses labels with edge hyphens).
 */
function* lenientReadings(prefix: string): Generator<string> {
  const decoded = decodeXnLabel(prefix);
  if (decoded === undefined) return;
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
  if (prefix.startsWith('xn--')) yield* lenientReadings(prefix);
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
 * The one claimant of a plain readable prefix, found with one scan and no
 * reading list, or `undefined` when the prefix is not plain (then the
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
export function plainPrefixClaimant(prefix: string): PrefixClaimant | undefined {
  const length = prefix.length;
  if (length > 63 || length < 3) return undefined;
  // Positions 3–4 (0-based 2–3) both '-': wrapped by the forward algorithms, or a wrap to undo.
  if (prefix.charCodeAt(2) === 45 && prefix.charCodeAt(3) === 45) return undefined;
  if (prefix.charCodeAt(0) === 48 && prefix.charCodeAt(1) === 45 && prefix.charCodeAt(length - 2) === 45 && prefix.charCodeAt(length - 1) === 48)
    return undefined;
  // SPEC §4 step 5, read as the scan goes (slices, not characters, are joined).
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
  return { publisherDomain: domain + prefix.slice(start), form: 'spec' };
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
  // Fast path: a plain prefix has one claimant, found in one scan.
  const plain = plainPrefixClaimant(prefix);
  if (plain !== undefined) return { claimants: [plain], complete: stop?.(plain) !== true };
  return searchReadings(prefix, stop);
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
