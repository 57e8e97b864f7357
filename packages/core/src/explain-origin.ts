import { CACHES, type AmpCache, validateCaches } from './caches.js';
import { canonicalDomain } from './domain-name.js';
import type { PrefixForm } from './domain-prefix.js';
import { type AmpCorsErrorCode, isAmpCorsError } from './errors.js';
import { prefixForms } from './prefix-forms.js';
import {
  type ReverseFailure,
  type ReverseOriginResult,
  type ReverseStepName,
  type ReverseStepStatus,
  type ReverseTraceStep,
  reverseOrigin,
} from './reverse-origin.js';
import { createVerifier, type Verdict } from './verifier.js';

/** Stable names of the steps of {@link explainOrigin}, in the order they run (those of {@link reverseOrigin}'s trace). */
export type ExplainStepName = ReverseStepName;

/** What became of one step: done, not applicable to this origin, or where the trace stopped. */
export type ExplainStepStatus = ReverseStepStatus;

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
  'find-claimants': 'Every domain that could exist with this prefix, under every accepted algorithm',
};

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
  const trace: ReverseTraceStep[] = [];
  const result = reverseOrigin(origin, { caches, trace });
  const steps: ExplainStep[] = trace.map((step) => ({
    ...step,
    title: TITLES[step.name],
    input: shown(step.input),
    output: step.output === null ? null : shown(step.output),
  }));
  if (options.publishers === undefined) return { steps, result };
  let verdict: Verdict;
  try {
    verdict = createVerifier({ publishers: options.publishers, caches }).verify(origin);
  } catch (error) {
    return { steps, result, configError: configErrorOf(error) };
  }
  const producedBy = 'prefix' in result && result.prefix !== undefined && Array.isArray(options.publishers) ? sourcesOf(result.prefix, options.publishers) : [];
  return { steps, result, verdict, producedBy };
}
