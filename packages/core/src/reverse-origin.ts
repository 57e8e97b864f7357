import { toASCII } from 'punycode/punycode.es6.js';
import { type CacheOriginFailure, checkCacheOrigin } from './cache-origin.js';
import { CACHES, type AmpCache } from './caches.js';
import { browserHost, canonicalDomain } from './domain-name.js';
import { isHashedPrefix, MAX_PREFIX_LENGTH, type ReadableForm, readablePrefixForms } from './domain-prefix.js';
import { isAmpCorsError } from './errors.js';
import { parseOrigin, type OriginSyntaxReason } from './origin-header.js';
import { decodeXnLabel, foldHyphens, MAX_CLAIMANT_CANDIDATES, type PrefixClaimant, searchClaimants, unwrapLabel } from './prefix-claimants.js';

export { findCacheOfHost } from './cache-origin.js';

/** Why an origin could not be reversed to a publisher domain. */
export type ReverseFailure = OriginSyntaxReason | CacheOriginFailure | 'invalid-punycode' | 'invalid-domain' | 'not-reproducible';

/** Stable names of the steps of the SPEC §4 reverse, in the order they run. */
export type ReverseStepName =
  | 'parse-origin'
  | 'find-cache'
  | 'check-scheme-port'
  | 'remove-suffix'
  | 'check-hashed'
  | 'punycode-decode'
  | 'remove-wrap'
  | 'fold-hyphens'
  | 're-encode'
  | 'canonical-domain'
  | 'forward-check'
  | 'find-claimants';

/** What became of one step: done, not applicable to this origin, or where the trace stopped. */
export type ReverseStepStatus = 'done' | 'skipped' | 'failed';

/** One step of the reverse, as recorded in a trace sink. */
export interface ReverseTraceStep {
  /** The stable step name. */
  readonly name: ReverseStepName;
  /** The value the step worked on. */
  readonly input: string;
  /** The value it produced; `null` when it failed or produces no value. */
  readonly output: string | null;
  /** Whether it ran, did not apply, or stopped the trace. */
  readonly status: ReverseStepStatus;
  /** Why: what was found, or why the step failed. */
  readonly note: string;
  /** For a failed step, the reason code the result carries. */
  readonly reason?: ReverseFailure;
}

/** Options of {@link reverseOrigin}. */
export interface ReverseOriginOptions {
  /** The registered caches (default: the bundled {@link CACHES}). */
  readonly caches?: readonly AmpCache[];
  /**
   * A trace sink: when given, each step is pushed onto it as it runs (as
   * whatwg-url's parser fills an optional validation-error list). Used by
   * `explainOrigin`; without it nothing is recorded.
   */
  readonly trace?: ReverseTraceStep[];
  /**
   * Ends the claimant search at the first claimant for which this returns
   * true (then `claimantsComplete` is false): a caller that only needs to
   * know whether some claimant is outside its configuration stops there,
   * so a hostile prefix with many readings costs little.
   */
  readonly stopAtClaimant?: (claimant: PrefixClaimant) => boolean;
}

/** An origin on a cache whose prefix was reversed to its publisher domain. */
export interface ReversedOrigin {
  readonly ok: true;
  readonly hashed: false;
  /** The cache the origin belongs to. */
  readonly cache: AmpCache;
  /** The domain prefix (the origin's first label). */
  readonly prefix: string;
  /** The publisher domain, canonical ASCII: the first of `claimants` (the guide's reading when it claims the prefix). */
  readonly publisherDomain: string;
  /** Which forward algorithm gives `publisherDomain` the prefix byte for byte. */
  readonly form: ReadableForm;
  /** Every domain that could exist with this prefix under an accepted algorithm (SPEC §6); more than one when algorithms collide. */
  readonly claimants: readonly PrefixClaimant[];
  /**
   * False when the prefix has more readings than the claimant search
   * examines (`MAX_CLAIMANT_CANDIDATES`): `claimants` may then miss some,
   * and the prefix must be treated as claimed by a domain outside any
   * configuration.
   */
  readonly claimantsComplete: boolean;
}

/** An origin on a cache whose prefix is a hash and cannot be reversed. */
export interface HashedOrigin {
  readonly ok: true;
  readonly hashed: true;
  /** The cache the origin belongs to. */
  readonly cache: AmpCache;
  /** The hashed domain prefix: check it against a precomputed allow-set. */
  readonly prefix: string;
}

/** An origin that is not a reversible cache origin, and why. */
export interface NotReversed {
  readonly ok: false;
  /** The stable reason code. */
  readonly reason: ReverseFailure;
  /** A short human-readable explanation. */
  readonly detail: string;
  /** The cache, when the host is on one. */
  readonly cache?: AmpCache;
  /** The domain prefix, when one was found. */
  readonly prefix?: string;
}

/** What {@link reverseOrigin} returns; it never throws. */
export type ReverseOriginResult = ReversedOrigin | HashedOrigin | NotReversed;

/**
 * SPEC §4 steps 3–6 on a domain prefix that contains a `-` (the guide's
 * reading): the publisher domain it spells, or `undefined` when the label is
 * not valid punycode. No check is made here that the result is canonical or
 * reproduces the prefix: see {@link reverseOrigin}.
 *
 * @example decodePrefix('a--b-example-com') // 'a-b.example.com'
 */
export function decodePrefix(prefix: string): string | undefined {
  // Step 3: an `xn--` label is punycode-decoded.
  const decoded = prefix.startsWith('xn--') ? decodeXnLabel(prefix) : prefix;
  if (decoded === undefined) return undefined;
  // Step 4: remove the `0-` … `-0` wrap. Step 5: fold the hyphens.
  const folded = foldHyphens(unwrapLabel(decoded) ?? decoded);
  // Step 6: IDNA to ASCII.
  try {
    return toASCII(folded);
  } catch {
    return undefined;
  }
}

/** Pushes steps onto an optional sink; `fail` also builds the failed result. */
class Steps {
  constructor(private readonly sink: ReverseTraceStep[] | undefined) {}

  get tracing(): boolean {
    return this.sink !== undefined;
  }

  add(name: ReverseStepName, input: string, output: string | null, note: string, status: ReverseStepStatus = 'done'): void {
    this.sink?.push({ name, input, output, status, note });
  }

  fail(
    name: ReverseStepName,
    input: string,
    reason: ReverseFailure,
    detail: string,
    extra: { cache?: AmpCache; prefix?: string } = {},
    note = detail,
  ): NotReversed {
    this.sink?.push({ name, input, output: null, status: 'failed', note, reason });
    return { ok: false, reason, detail, ...extra };
  }
}

/** Where the guide's reading (SPEC §4 steps 3–6) of a prefix stopped, when it did not reach a claimant. */
interface ReadingFailure {
  readonly step: ReverseStepName;
  readonly input: string;
  readonly reason: ReverseFailure;
  readonly detail: string;
  readonly note: string;
}

/**
 * Turns a CORS `Origin` back into the publisher domain (SPEC §4), judging the
 * header as sent (SPEC §6). Never throws. The cache-origin checks (https,
 * default port, one label) come first; a prefix with no `-` is a hash
 * (`hashed: true`): it can only be checked against a precomputed allow-set.
 * A readable prefix is reversed only to domains that could exist and whose
 * forward-computed prefix — under the guide's algorithm, toolbox-cache-url's
 * or amppackager's — reproduces it byte for byte (SPEC §6 "never
 * reverse-then-normalize"): `claimants` lists them all, so a caller can
 * refuse a prefix that some unconfigured domain also has.
 *
 * @example reverseOrigin('https://www-example-com.cdn.ampproject.org')
 *   // { ok: true, hashed: false, publisherDomain: 'www.example.com', prefix: 'www-example-com', form: 'spec', claimants: [...], cache: … }
 */
export function reverseOrigin(origin: string | null | undefined, options: ReverseOriginOptions = {}): ReverseOriginResult {
  const caches = options.caches ?? CACHES;
  const steps = new Steps(options.trace);
  const raw = typeof origin === 'string' ? origin : '';
  // Parse: the raw header is judged as sent (SPEC §6).
  const parsed = parseOrigin(origin);
  if (!parsed.ok) return steps.fail('parse-origin', raw, parsed.reason, parsed.detail);
  if (steps.tracing) {
    const port = parsed.port === null ? 'default port' : `port ${parsed.port}`;
    steps.add('parse-origin', raw, parsed.host, `scheme ${parsed.scheme}, host ${parsed.host}, ${port}`);
  }
  // Step 1: the cache, https on the default port, one label.
  const checked = checkCacheOrigin(parsed, caches);
  if (!checked.ok && checked.reason === 'unknown-cache') {
    const known = caches.map((c) => c.cacheDomain).join(', ');
    return steps.fail('find-cache', parsed.host, 'unknown-cache', checked.detail, {}, `${checked.detail} (${known})`);
  }
  const cache = checked.cache as AmpCache;
  steps.add('find-cache', parsed.host, cache.cacheDomain, `${cache.name} (${cache.id})`);
  if (!checked.ok && (checked.reason === 'insecure-scheme' || checked.reason === 'non-default-port')) {
    return steps.fail('check-scheme-port', raw, checked.reason, checked.detail, { cache });
  }
  steps.add('check-scheme-port', raw, 'https, default port', 'https on the default port');
  if (!checked.ok) {
    return steps.fail('remove-suffix', parsed.host, checked.reason, checked.detail, {
      cache,
      ...(checked.prefix === undefined ? {} : { prefix: checked.prefix }),
    });
  }
  const { prefix } = checked;
  // No accepted form is longer (toolbox's reaches 67 octets): refused before any decoding or hashing.
  if (prefix.length > MAX_PREFIX_LENGTH) {
    return steps.fail(
      'remove-suffix',
      parsed.host,
      'not-a-label',
      `the domain prefix is ${prefix.length} octets; no cache prefix is longer than ${MAX_PREFIX_LENGTH}`,
      { cache, prefix },
    );
  }
  steps.add('remove-suffix', parsed.host, prefix, `removed ".${cache.cacheDomain}"`);
  // Step 2: a prefix without '-' is a hash.
  if (isHashedPrefix(prefix)) {
    steps.add('check-hashed', prefix, null, 'no "-": a hashed prefix; only a precomputed allow-set can say whose it is');
    return { ok: true, hashed: true, cache, prefix };
  }
  steps.add('check-hashed', prefix, prefix, 'contains "-": reversible');
  const { claimants, complete } = searchClaimants(prefix, options.stopAtClaimant);
  // The guide's reading is traced, and says why a prefix with no claimant spells none.
  const failure = steps.tracing || claimants.length === 0 ? guideReading(prefix, claimants, steps) : undefined;
  if (claimants.length === 0) {
    const { step, input, reason, detail, note } = failure as ReadingFailure;
    const unread = complete ? '' : `; its other readings (more than ${MAX_CLAIMANT_CANDIDATES}) were not examined: denied whoever it belongs to`;
    return steps.fail(step, input, reason, `${detail}${unread}`, { cache, prefix }, `${note}${unread}`);
  }
  if (failure) steps.add(failure.step, failure.input, null, `${failure.note}; other readings follow`, 'skipped');
  if (steps.tracing && (failure || claimants.length > 1 || !complete)) {
    const list = claimants.map((c) => `${c.publisherDomain} (${c.form})`).join(', ');
    const more = complete ? '' : `; more than ${MAX_CLAIMANT_CANDIDATES} readings, so possibly others`;
    steps.add(
      'find-claimants',
      prefix,
      claimants.map((c) => c.publisherDomain).join(' '),
      `every domain with this prefix under an accepted algorithm: ${list}${more}`,
    );
  }
  const first = claimants[0] as PrefixClaimant;
  return { ok: true, hashed: false, cache, prefix, publisherDomain: first.publisherDomain, form: first.form, claimants, claimantsComplete: complete };
}

/**
 * The guide's reading of a readable prefix (SPEC §4 steps 3–6, then the
 * forward check), traced step by step: `undefined` when it reached one of
 * the `claimants`, else where and why it stopped.
 */
function guideReading(prefix: string, claimants: readonly PrefixClaimant[], steps: Steps): ReadingFailure | undefined {
  const stop = (step: ReverseStepName, input: string, reason: ReverseFailure, detail: string, note = detail): ReadingFailure => ({
    step,
    input,
    reason,
    detail,
    note,
  });
  // Step 3: an xn-- prefix is punycode-decoded.
  let label = prefix;
  if (label.startsWith('xn--')) {
    const decoded = decodeXnLabel(label);
    if (decoded === undefined) return stop('punycode-decode', prefix, 'invalid-punycode', 'the prefix is not valid punycode');
    steps.add('punycode-decode', prefix, decoded, 'decoded the xn-- label');
    label = decoded;
  } else {
    steps.add('punycode-decode', prefix, prefix, 'no xn-- prefix: nothing to decode', 'skipped');
  }
  // Step 4: remove the 0- … -0 wrap.
  const inner = unwrapLabel(label);
  if (inner !== undefined) {
    steps.add('remove-wrap', label, inner, 'removed "0-" and "-0"');
    label = inner;
  } else {
    steps.add('remove-wrap', label, label, 'not wrapped in 0- … -0', 'skipped');
  }
  // Step 5: fold hyphens left to right.
  const folded = foldHyphens(label);
  steps.add('fold-hyphens', label, folded, 'scanned left to right');
  // Step 6: IDNA to ASCII.
  let decoded: string;
  try {
    decoded = toASCII(folded);
  } catch {
    return stop('re-encode', folded, 'invalid-punycode', 'the prefix is not valid punycode');
  }
  steps.add('re-encode', folded, decoded, decoded === folded ? 'already ASCII' : 'encoded the Unicode labels');
  // SPEC §6: never reverse-then-normalize: the result must already be the browser's host.
  const host = browserHost(decoded);
  if (host === undefined) {
    const detail = `the prefix spells ${JSON.stringify(decoded.slice(0, 80))}, not a domain`;
    return stop('canonical-domain', decoded, 'invalid-domain', detail, steps.tracing ? refusalOf(decoded, detail) : detail);
  }
  if (host !== decoded) {
    return stop(
      'canonical-domain',
      decoded,
      'not-reproducible',
      'the prefix does not spell a canonical domain',
      `its canonical form is ${host}: the prefix belongs to no domain`,
    );
  }
  steps.add('canonical-domain', decoded, host, 'canonical');
  const claimant = claimants.find((c) => c.publisherDomain === host);
  if (claimant) {
    if (steps.tracing) {
      const guide = claimant.form === 'spec' ? '' : `; the guide gives ${readablePrefixForms(host).find((entry) => entry.form === 'spec')?.prefix ?? 'a hash'}`;
      steps.add('forward-check', host, prefix, `the ${FORM_NAMES[claimant.form]} reproduces the prefix (form "${claimant.form}")${guide}`);
    }
    return undefined;
  }
  const forms = readablePrefixForms(host);
  if (forms.some((entry) => entry.prefix === prefix)) {
    return stop('forward-check', host, 'invalid-domain', `${host} cannot exist`, `${host} cannot exist: its last label is not a possible top-level domain`);
  }
  const expected = forms.length === 0 ? 'only hashed prefixes' : `the prefix ${forms.map((entry) => entry.prefix).join(' or ')}`;
  return stop('forward-check', host, 'not-reproducible', `${host} has a different prefix`, `${host} has ${expected}, not ${prefix}`);
}

const FORM_NAMES: Readonly<Record<ReadableForm, string>> = {
  spec: "guide's algorithm",
  toolbox: 'toolbox-cache-url algorithm',
  amppackager: 'amppackager algorithm',
};

/** canonicalDomain's message for a refused name (trace notes only). */
function refusalOf(name: string, fallback: string): string {
  try {
    canonicalDomain(name);
    return fallback;
  } catch (error) {
    return isAmpCorsError(error) ? error.message : fallback;
  }
}
