import { toUnicode } from 'punycode/punycode.es6.js';
import { browserHost } from './domain-name.js';
import { isHashedPrefix, type ReadableForm, readableFormOf } from './domain-prefix.js';

/** A domain that could exist and whose cache prefix, under one accepted algorithm, is a given prefix. */
export interface PrefixClaimant {
  /** The domain (canonical ASCII, as a browser writes the host). */
  readonly publisherDomain: string;
  /** The first algorithm (spec, toolbox, amppackager) that gives it the prefix. */
  readonly form: ReadableForm;
}

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

/** SPEC §4 step 5: left to right, `--` emits `-` and a single `-` emits `.`. */
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
 * Every way a readable prefix can be read back into a domain: the forward
 * algorithms wrap then encode (the guide, amppackager) or encode then wrap
 * (toolbox), so the readings undo decode and unwrap in both orders, each
 * optional, then fold the hyphens (SPEC §4 steps 3–5). The first reading is
 * the guide's (SPEC §4). A plain prefix (no `xn--` start, no wrap) has one.
 */
export function prefixReadings(prefix: string): string[] {
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
  return labels.map(foldHyphens);
}

/**
 * A domain that could exist (SPEC §6): a host a browser accepts, of LDH
 * labels (RFC 1123), at least two labels (ICANN allows no dotless host), its
 * last label a possible top-level domain — letters only, or an A-label —
 * whether delegated today or not.
 */
function possibleDomain(reading: string): string | undefined {
  const host = browserHost(reading);
  if (host === undefined) return undefined;
  const dot = host.lastIndexOf('.');
  if (dot < 0) return undefined;
  const tld = host.slice(dot + 1);
  return /^[a-z]+$/.test(tld) || tld.startsWith('xn--') ? host : undefined;
}

/**
 * Every domain that could exist whose prefix, under an accepted readable
 * algorithm (SPEC §6: the guide's, toolbox-cache-url's of the ASCII or the
 * Unicode form, amppackager's), is exactly `prefix`: each reading of the
 * prefix ({@link prefixReadings}) is made a host as a browser would, and
 * kept only when forward-computing it reproduces the prefix byte for byte
 * (SPEC §6 "never reverse-then-normalize"). Each readable algorithm is the
 * replacement of `-` and `.` (one-to-one on LDH labels) with an optional
 * wrap and an optional punycode encoding, so these readings find every
 * claimant. A hashed prefix has none here: only a precomputed set knows
 * whose hash it is (a second SHA-256 preimage is out of reach).
 *
 * @example prefixClaimants('xn--shop-example-org-fun') // shopђ.example.org (spec), xn-shop.example.org.fun (toolbox)…
 */
export function prefixClaimants(prefix: string): PrefixClaimant[] {
  if (isHashedPrefix(prefix)) return [];
  const claimants: PrefixClaimant[] = [];
  for (const reading of prefixReadings(prefix)) {
    const domain = possibleDomain(reading);
    if (domain === undefined || claimants.some((c) => c.publisherDomain === domain)) continue;
    const form = readableFormOf(domain, prefix);
    if (form) claimants.push({ publisherDomain: domain, form });
  }
  return claimants;
}
