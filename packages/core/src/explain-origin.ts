import { toASCII, toUnicode } from 'punycode/punycode.es6.js';
import { CACHES, type AmpCache, validateCaches } from './caches.js';
import { canonicalDomain } from './domain-name.js';
import { domainPrefix, type PrefixForm, prefixForms, toolboxPrefix } from './domain-prefix.js';
import { type AmpCorsErrorCode, isAmpCorsError } from './errors.js';
import { parseOrigin } from './origin-header.js';
import { findCacheOfHost, type ReverseFailure, type ReverseOriginResult } from './reverse-origin.js';
import { createVerifier, type Verdict } from './verifier.js';

/** Stable names of the steps of {@link explainOrigin}, in the order they run. */
export type ExplainStepName =
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
  | 'forward-check';

/** What became of one step: done, not applicable to this origin, or where the trace stopped. */
export type ExplainStepStatus = 'done' | 'skipped' | 'failed';

/** One step of the SPEC §4 trace. */
export interface ExplainStep {
  /** The stable step name. */
  readonly name: ExplainStepName;
  /** A one-line human description of the step. */
  readonly title: string;
  /** The value the step worked on (at most {@link EXPLAIN_MAX_SHOWN} characters). */
  readonly input: string;
  /** The value it produced; `null` when it failed or produces no value. */
  readonly output: string | null;
  /** Whether it ran, did not apply, or stopped the trace. */
  readonly status: ExplainStepStatus;
  /** Why: what was found, or why the step failed. */
  readonly note: string;
  /** For a failed step, the stable reason code (the one {@link reverseOrigin} returns). */
  readonly reason?: ReverseFailure;
}

/** Options of {@link explainOrigin}. */
export interface ExplainOriginOptions {
  /** The registered caches (default: the bundled {@link CACHES}). */
  readonly caches?: readonly AmpCache[];
  /**
   * Publisher rules as given to {@link createVerifier} (`example.com`,
   * `*.example.org`). When present, the explanation carries the verdict.
   */
  readonly publishers?: readonly string[];
}

/** A listed publisher rule whose domain forward-computes the origin's prefix. */
export interface PrefixSource {
  /** The rule as listed (`*.example.org` for a wildcard rule). */
  readonly listed: string;
  /** Its canonical domain (the wildcard's base). */
  readonly publisherDomain: string;
  /** Which algorithm of {@link prefixForms} produced the prefix. */
  readonly form: PrefixForm;
}

/** A configuration that {@link createVerifier} refused. */
export interface ExplainConfigError {
  /** The {@link AmpCorsError} code. */
  readonly code: AmpCorsErrorCode;
  /** Its message, naming the bad value. */
  readonly message: string;
}

/** What {@link explainOrigin} returns. */
export interface OriginExplanation {
  /** The steps that ran, in order; the last one is `failed` when the trace stopped early. */
  readonly steps: readonly ExplainStep[];
  /** The conclusion: equal to what {@link reverseOrigin} returns for the same origin and caches. */
  readonly result: ReverseOriginResult;
  /** With `publishers`: the verdict exactly as `createVerifier({ publishers, caches }).verify(origin)` gives it. */
  readonly verdict?: Verdict;
  /** With `publishers`: the listed rules whose domain produces the origin's prefix (how a hashed prefix is identified). */
  readonly producedBy?: readonly PrefixSource[];
  /** The configuration error, when `publishers` or `caches` were refused (then there is no verdict). */
  readonly configError?: ExplainConfigError;
}

/** Longest value a step shows; longer inputs are cut and end with `…`. */
export const EXPLAIN_MAX_SHOWN = 320;

function shown(value: string): string {
  return value.length > EXPLAIN_MAX_SHOWN ? `${value.slice(0, EXPLAIN_MAX_SHOWN - 1)}…` : value;
}

function configErrorOf(error: unknown): ExplainConfigError {
  if (isAmpCorsError(error)) return { code: error.code, message: error.message };
  return { code: 'invalid-option', message: error instanceof Error ? error.message : String(error) };
}

const TITLES: Readonly<Record<ExplainStepName, string>> = {
  'parse-origin': 'Parse the Origin header as sent',
  'find-cache': 'Find the registered cache of the host',
  'check-scheme-port': 'Cache origins are https on the default port',
  'remove-suffix': 'Remove the scheme and the cache suffix: the rest is the domain prefix',
  'check-hashed': 'A prefix without "-" is a hash and cannot be reversed',
  'punycode-decode': 'Punycode-decode an xn-- prefix',
  'remove-wrap': 'Remove the 0- … -0 wrap',
  'fold-hyphens': 'Fold hyphens: "--" becomes "-", a single "-" becomes "."',
  're-encode': 'Punycode-encode (IDNA to ASCII)',
  'canonical-domain': 'The result must already be a canonical domain',
  'forward-check': 'Forward-compute the prefix of the domain: it must match byte for byte',
};

/** Builds the trace step by step; `fail` ends it with a reason shared with reverseOrigin. */
class Trace {
  readonly steps: ExplainStep[] = [];

  add(name: ExplainStepName, input: string, output: string | null, note: string, status: ExplainStepStatus = 'done'): void {
    this.steps.push({ name, title: TITLES[name], input: shown(input), output: output === null ? null : shown(output), status, note });
  }

  /** Ends the trace: `detail` is reverseOrigin's wording for the result, `note` may say more. */
  fail(name: ExplainStepName, input: string, reason: ReverseFailure, detail: string, extra: { cache?: AmpCache; prefix?: string } = {}, note = detail): ReverseOriginResult {
    this.steps.push({ name, title: TITLES[name], input: shown(input), output: null, status: 'failed', note, reason });
    return { ok: false, reason, detail, ...extra };
  }
}

function reverseWithTrace(origin: string | null | undefined, caches: readonly AmpCache[], trace: Trace): ReverseOriginResult {
  const raw = typeof origin === 'string' ? origin : '';
  // Parse: the raw header is judged as sent (SPEC §6).
  const parsed = parseOrigin(origin);
  if (!parsed.ok) return trace.fail('parse-origin', raw, parsed.reason, parsed.detail);
  const port = parsed.port === null ? 'default port' : `port ${parsed.port}`;
  trace.add('parse-origin', raw, parsed.host, `scheme ${parsed.scheme}, host ${parsed.host}, ${port}`);
  // SPEC §4 step 1: which registered cache's domain ends the host.
  const found = findCacheOfHost(parsed.host, caches);
  if (!found) {
    const known = caches.map((c) => c.cacheDomain).join(', ');
    const detail = `${parsed.host} is not on a registered cache`;
    return trace.fail('find-cache', parsed.host, 'unknown-cache', detail, {}, `${detail} (${known})`);
  }
  const { cache, prefix } = found;
  trace.add('find-cache', parsed.host, cache.cacheDomain, `${cache.name} (${cache.id})`);
  if (parsed.scheme !== 'https') {
    return trace.fail('check-scheme-port', raw, 'insecure-scheme', 'cache origins are always https', { cache });
  }
  if (parsed.port !== null) {
    return trace.fail('check-scheme-port', raw, 'non-default-port', 'cache origins use the default port', { cache });
  }
  trace.add('check-scheme-port', raw, 'https, default port', 'https on the default port');
  if (prefix === null) {
    return trace.fail('remove-suffix', parsed.host, 'cache-root', `${cache.cacheDomain} itself has no domain prefix`, { cache });
  }
  if (prefix.includes('.')) {
    return trace.fail('remove-suffix', parsed.host, 'not-a-label', 'a domain prefix is a single DNS label', { cache, prefix });
  }
  trace.add('remove-suffix', parsed.host, prefix, `removed ".${cache.cacheDomain}"`);
  // Step 2: a prefix without '-' is a hash.
  if (!prefix.includes('-')) {
    trace.add('check-hashed', prefix, null, 'no "-": a hashed prefix; only a precomputed allow-set can say whose it is');
    return { ok: true, hashed: true, cache, prefix };
  }
  trace.add('check-hashed', prefix, prefix, 'contains "-": reversible');
  // Step 3: an xn-- prefix is punycode-decoded.
  let label = prefix;
  if (label.startsWith('xn--')) {
    try {
      label = toUnicode(label);
    } catch {
      return trace.fail('punycode-decode', prefix, 'invalid-punycode', 'the prefix is not valid punycode', { cache, prefix });
    }
    trace.add('punycode-decode', prefix, label, 'decoded the xn-- label');
  } else {
    trace.add('punycode-decode', prefix, prefix, 'no xn-- prefix: nothing to decode', 'skipped');
  }
  // Step 4: remove the 0- … -0 wrap.
  if (label.length >= 4 && label.startsWith('0-') && label.endsWith('-0')) {
    const inner = label.slice(2, -2);
    trace.add('remove-wrap', label, inner, 'removed "0-" and "-0"');
    label = inner;
  } else {
    trace.add('remove-wrap', label, label, 'not wrapped in 0- … -0', 'skipped');
  }
  // Step 5: fold hyphens left to right.
  let folded = '';
  for (let i = 0; i < label.length; i++) {
    const ch = label[i] as string;
    if (ch !== '-') folded += ch;
    else if (label[i + 1] === '-') {
      folded += '-';
      i++;
    } else folded += '.';
  }
  trace.add('fold-hyphens', label, folded, 'scanned left to right');
  // Step 6: IDNA to ASCII.
  let decoded: string;
  try {
    decoded = toASCII(folded);
  } catch {
    return trace.fail('re-encode', folded, 'invalid-punycode', 'the prefix is not valid punycode', { cache, prefix });
  }
  trace.add('re-encode', folded, decoded, decoded === folded ? 'already ASCII' : 'encoded the Unicode labels');
  // SPEC §6: never reverse-then-normalize.
  let publisherDomain: string;
  try {
    publisherDomain = canonicalDomain(decoded);
  } catch (error) {
    const detail = `the prefix spells ${JSON.stringify(decoded.slice(0, 80))}, not a domain`;
    return trace.fail('canonical-domain', decoded, 'invalid-domain', detail, { cache, prefix }, isAmpCorsError(error) ? error.message : detail);
  }
  if (publisherDomain !== decoded) {
    const note = `its canonical form is ${publisherDomain}: the prefix belongs to no domain`;
    return trace.fail('canonical-domain', decoded, 'not-reproducible', 'the prefix does not spell a canonical domain', { cache, prefix }, note);
  }
  trace.add('canonical-domain', decoded, publisherDomain, 'canonical');
  const spec = domainPrefix(publisherDomain);
  if (spec === prefix) {
    trace.add('forward-check', publisherDomain, spec, 'the guide\'s algorithm reproduces the prefix (form "spec")');
    return { ok: true, hashed: false, cache, prefix, publisherDomain, form: 'spec' };
  }
  const toolbox = toolboxPrefix(publisherDomain);
  if (toolbox === prefix) {
    trace.add('forward-check', publisherDomain, toolbox, `toolbox-cache-url reproduces the prefix (form "toolbox"); the guide gives ${spec}`);
    return { ok: true, hashed: false, cache, prefix, publisherDomain, form: 'toolbox' };
  }
  const expected = toolbox === spec ? spec : `${spec} or ${toolbox}`;
  const note = `${publisherDomain} has the prefix ${expected}, not ${prefix}`;
  return trace.fail('forward-check', publisherDomain, 'not-reproducible', `${publisherDomain} has a different prefix`, { cache, prefix }, note);
}

function sourcesOf(prefix: string, publishers: readonly string[]): PrefixSource[] {
  const sources: PrefixSource[] = [];
  for (const listed of publishers) {
    if (typeof listed !== 'string') continue;
    try {
      const domain = canonicalDomain(listed.startsWith('*.') ? listed.slice(2) : listed);
      const match = prefixForms(domain).find((entry) => entry.prefix === prefix);
      if (match) sources.push({ listed, publisherDomain: domain, form: match.form });
    } catch {
      // A malformed rule produces no prefix; createVerifier reports it as the configError.
    }
  }
  return sources;
}

/**
 * Explains, step by step, how ampcors reads a CORS `Origin` (SPEC §4, §6):
 * parsing the header as sent, finding its cache, removing the cache suffix,
 * then either stopping at a hashed prefix or reversing it (punycode decode,
 * `0-…-0` removal, hyphen folding, re-encoding) and forward-checking that the
 * domain reproduces the prefix. Each step records its input and output; a
 * trace that cannot go on ends with a `failed` step carrying the same reason
 * code as {@link reverseOrigin}, whose result `result` equals.
 *
 * With `publishers`, it also gives the verdict exactly as
 * `createVerifier({ publishers, caches }).verify(origin)` does, and which
 * listed rules forward-compute the prefix (via {@link prefixForms}) — the only
 * way to say whose a hashed prefix is. Never throws: a refused configuration
 * comes back as `configError`.
 *
 * @example explainOrigin('https://a--b-example-com.cdn.ampproject.org').result
 *   // { ok: true, hashed: false, publisherDomain: 'a-b.example.com', form: 'spec', … }
 * @example explainOrigin(origin, { publishers: ['example.com'] }).verdict?.reason // 'cache-origin-hashed', …
 */
export function explainOrigin(origin: string | null | undefined, options: ExplainOriginOptions = {}): OriginExplanation {
  let caches: readonly AmpCache[];
  try {
    caches = options.caches === undefined ? CACHES : validateCaches(options.caches, { trustedOperators: null });
  } catch (error) {
    const configError = configErrorOf(error);
    return { steps: [], result: { ok: false, reason: 'unknown-cache', detail: configError.message }, configError };
  }
  const trace = new Trace();
  const result = reverseWithTrace(origin, caches, trace);
  if (options.publishers === undefined) return { steps: trace.steps, result };
  let verdict: Verdict;
  try {
    verdict = createVerifier({ publishers: options.publishers, caches }).verify(origin);
  } catch (error) {
    return { steps: trace.steps, result, configError: configErrorOf(error) };
  }
  const producedBy = 'prefix' in result && result.prefix !== undefined && Array.isArray(options.publishers) ? sourcesOf(result.prefix, options.publishers) : [];
  return { steps: trace.steps, result, verdict, producedBy };
}
