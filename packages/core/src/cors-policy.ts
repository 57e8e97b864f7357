import {
  type CorsOptions,
  type CorsPlan,
  type CorsRequest,
  type NormalizedCorsOptions,
  normalizeCorsOptions,
  planCors,
  verifyContextOf,
} from './cors-response.js';
import { checkOptionKeys, type ConfigMode, ConfigProblems, type OptionKeysSpec } from './config-check.js';
import { CORS_OPTION_KEYS } from './cors-options.js';
import { AmpCorsError } from './errors.js';
import { isThenable } from './request-facts.js';
import { guardOriginFunction, type OriginAsk, type OriginFunctionSource } from './legacy-origin-option.js';
import { combineVerdictSources, firstAllowingVerdict, verdictSourcesOf, type VerdictSourcesConfig } from './verdict-sources.js';
import type { Verdict, VerifyContext } from './verifier.js';

/**
 * Anything that judges an `Origin`: a core {@link createVerifier} result, or
 * a custom (for example Redis-backed, asynchronous) verifier. A returned
 * Promise is awaited; a plain verdict is used as is, without allocating one.
 */
export interface VerdictSource {
  /** Judges a raw `Origin` header; must not throw (a throw becomes a 500). */
  verify(origin: string | null | undefined, context?: VerifyContext): Verdict | Promise<Verdict>;
}

/**
 * The configuration every ampcors adapter accepts: its verdict sources — the
 * in-memory rules (`publishers`, `origins`, `caches`, `legacyCacheOrigins`),
 * a compiled `allowSet` and a custom `verifier`, alone or combined, tried in
 * that order, the first allow winning (verdict-sources.ts) — plus the
 * {@link CorsOptions}.
 */
export interface AmpCorsConfig extends CorsOptions, VerdictSourcesConfig {}

/** Every key of {@link AmpCorsConfig}. */
export const AMP_CORS_CONFIG_KEYS: readonly string[] = ['publishers', 'origins', 'caches', 'legacyCacheOrigins', 'allowSet', 'verifier', ...CORS_OPTION_KEYS];

/**
 * How an adapter's options are checked and mapped (issue #15): its keys
 * (for the unknown-key check and its hints) and the mapping of its own keys
 * onto {@link AmpCorsConfig}, given the mode the user's keys name. Give it
 * to {@link createCorsPolicy} with the options as the user gave them.
 */
export interface AdapterOptionsSpec extends OptionKeysSpec {
  /** The adapter's own keys; every key of {@link AmpCorsConfig} is known as well. */
  readonly keys: readonly string[];
  /**
   * Maps the adapter's options onto {@link AmpCorsConfig} for `mode` (its
   * drop-in defaults), reporting the problems of its own keys to `problems`
   * (all are thrown together with core's). Only called with an object.
   */
  map(given: Readonly<Record<string, unknown>>, mode: ConfigMode, problems: ConfigProblems): AmpCorsConfig;
}

/** A verdict and the response plan that follows from it. */
export interface CorsDecision {
  /** The verdict that decided (attached to the request for the handler). */
  readonly verdict: Verdict;
  /** What to send. */
  readonly plan: CorsPlan;
}

/** A validated adapter configuration, ready to judge requests. */
export interface CorsPolicy {
  /** The mode the configuration's keys named (see `ConfigMode`). */
  readonly mode: ConfigMode;
  /** The configuration's verdict sources as one (verdict-sources.ts; `null` when only an adapter's `origin` option decides). */
  readonly verifier: VerdictSource | null;
  /** The normalized CORS options. */
  readonly options: NormalizedCorsOptions;
  /**
   * Judges a request: each source in turn (the configuration's, in the order
   * of verdict-sources.ts, then `extra`, e.g. an adapter's `origin` option)
   * until one allows; when all deny, the first denial explains. Synchronous
   * unless a source returns a Promise. May throw or reject when a custom
   * source does.
   */
  decide(request: CorsRequest, extra?: VerdictSource | null, options?: NormalizedCorsOptions): CorsDecision | Promise<CorsDecision>;
  /**
   * Guards an adapter's drop-in origin function (see `guardOriginFunction`
   * in legacy-origin-option.ts): with credentials, a function that allows
   * an origin no configuration names is refused like `origin: true`, at
   * construction when it answers synchronously, and no per-request answer
   * pairs credentials with an origin the function did not choose. Returns
   * a factory of per-request sources to pass to {@link decide} as `extra`.
   *
   * @param probe - asks the function about an origin outside any request
   * @param credentials - whether responses may carry credentials (default: the policy's)
   * @throws AmpCorsError `unsafe-configuration` for a function that allows every origin, with credentials
   */
  guardOriginFunction(probe: OriginAsk, credentials?: boolean): OriginFunctionSource;
}

/** Hints of {@link createCorsPolicy}'s own key check (core, no adapter). */
const CORE_KEYS_SPEC = {
  entry: 'createCorsPolicy',
  keys: AMP_CORS_CONFIG_KEYS,
  allowNothing: 'To allow no cross-origin request on purpose, use no CORS policy at all (same-origin requests need none).',
  allowAny: 'For a public API that any origin may read without credentials, an adapter given no options (ampCors()) sends Access-Control-Allow-Origin: *.',
};

/** The verdict of a request that a browser marked `Sec-Fetch-Site: same-origin`: the API's own page. */
function sameOriginVerdict(request: CorsRequest): Verdict {
  return {
    allowed: true,
    origin: typeof request.origin === 'string' && request.origin !== '' ? request.origin : null,
    via: 'same-origin',
    reason: 'same-origin',
  };
}

/** Slots of a policy's {@link RecentVerdicts} (a power of two). */
const RECENT_VERDICT_SLOTS = 1024;
/** Longest `Origin` (and source origin) whose verdict is remembered. */
const MAX_REMEMBERED_ORIGIN_LENGTH = 256;

/**
 * Recent allowed verdicts of the in-memory rules, in a direct-mapped memo: a
 * verdict is found by the slot of its `Origin` and an exact comparison of
 * the `Origin` and of the source origin it was judged with (no hash of the
 * whole `Origin`, which a fresh request string would cost each time; an
 * entry taking another's slot only costs that one a judging again). Only a
 * frozen allowed verdict is kept (a handler that reads `req.ampCors` cannot
 * alter it); a denial is judged each time, so nothing here can allow what
 * the rules deny. At most {@link RECENT_VERDICT_SLOTS} entries, of origins
 * and source origins of at most {@link MAX_REMEMBERED_ORIGIN_LENGTH}
 * characters, whatever is sent.
 */
class RecentVerdicts {
  private readonly origins: Array<string | undefined> = new Array<string | undefined>(RECENT_VERDICT_SLOTS).fill(undefined);
  private readonly sources: Array<string | null | undefined> = new Array<string | null | undefined>(RECENT_VERDICT_SLOTS).fill(null);
  private readonly verdicts: Array<Verdict | undefined> = new Array<Verdict | undefined>(RECENT_VERDICT_SLOTS).fill(undefined);

  /** The remembered verdict of exactly this `Origin` and source origin, if any. */
  get(origin: string | null | undefined, source: string | null | undefined): Verdict | undefined {
    const slot = slotOf(origin, source);
    if (slot < 0 || this.origins[slot] !== origin || this.sources[slot] !== (source ?? null)) return undefined;
    return this.verdicts[slot];
  }

  /**
   * Remembers `verdict`, the rules' verdict of `origin` and `source`, when it is a frozen allow of a short enough
   * origin and source that names both (the verdict's own strings are kept: nothing more of the request stays alive).
   */
  set(origin: string | null | undefined, source: string | null | undefined, verdict: Verdict): void {
    const slot = slotOf(origin, source);
    if (slot < 0 || !verdict.allowed || verdict.origin !== origin || (verdict.sourceOrigin ?? null) !== (source ?? null) || !Object.isFrozen(verdict)) return;
    if (typeof source === 'string' && source.length > MAX_REMEMBERED_ORIGIN_LENGTH) return;
    this.origins[slot] = verdict.origin as string; // (equal to `origin`, a string: it has a slot)
    this.sources[slot] = verdict.sourceOrigin ?? null;
    this.verdicts[slot] = verdict;
  }
}

/**
 * The slot of an `Origin` and a source origin in {@link RecentVerdicts}: the lengths of both and up to 9 characters of
 * the `Origin` after `https://`, mixed (the same page's requests with and without a source origin get two slots); -1
 * for no `Origin` or a long one.
 */
function slotOf(origin: string | null | undefined, source: string | null | undefined): number {
  if (typeof origin !== 'string' || origin.length === 0 || origin.length > MAX_REMEMBERED_ORIGIN_LENGTH) return -1;
  let hash = origin.length + (typeof source === 'string' ? source.length << 8 : 0);
  const step = origin.length > 32 ? ((origin.length - 8) >> 3) + 1 : 3;
  for (let i = origin.length > 8 ? 8 : 0; i < origin.length; i += step) hash = (Math.imul(hash, 31) + origin.charCodeAt(i)) | 0;
  return hash & (RECENT_VERDICT_SLOTS - 1);
}

/** A verdict and its plan (no closure per request). */
function decision(request: CorsRequest, verdict: Verdict, options: NormalizedCorsOptions): CorsDecision {
  return { verdict, plan: planCors(request, verdict, options) };
}

/**
 * Validates an adapter configuration once: builds the core verifier from
 * `publishers` (or takes `verifier`) and normalizes the CORS options. Every
 * problem is reported in one error (issue #15).
 *
 * 1. Keys: an unknown key names the closest known one; a present key must
 *    hold a value; the mode is named by keys only (`publishers`, `origins`,
 *    `verifier`; an adapter's `origin` option; or no options at all).
 * 2. The verdict sources (verdict-sources.ts): the in-memory rules (in the
 *    AMP mode; `origins` alone trusts exactly those origins), the allow-set
 *    (loaded now), the custom verifier; any combination, none ignored.
 * 3. The CORS options; the `any-origin` mode forces credentials off.
 * 4. When the in-memory rules are the only source (their answer depends on
 *    the `Origin` and the source origin alone, and never changes), their
 *    recent allowed, frozen verdicts are remembered ({@link RecentVerdicts}),
 *    bounded; a denial, or any other source, is asked every time.
 *
 * @param config - the configuration: core's {@link AmpCorsConfig}, or, with an {@link AdapterOptionsSpec}, the adapter's options as the user gave them (`undefined` for none; anything is checked)
 * @param adapter - `true` when the caller has its own origin source (a drop-in `origin` option), so that neither `publishers` nor `verifier` is required; or an adapter's {@link AdapterOptionsSpec}
 * @throws AmpCorsError for an invalid configuration, listing every problem.
 */
export function createCorsPolicy(config: AmpCorsConfig, adapter: boolean | AdapterOptionsSpec = false): CorsPolicy {
  if (typeof adapter === 'boolean' && (typeof config !== 'object' || config === null))
    throw new AmpCorsError('invalid-option', 'ampcors needs a configuration object');
  const problems = new ConfigProblems();
  let mode: ConfigMode;
  let given: AmpCorsConfig;
  if (typeof adapter === 'boolean') {
    // 1. Core called directly: the keys of AmpCorsConfig, and an origin source unless the caller has its own.
    const named = checkOptionKeys(config, CORE_KEYS_SPEC, problems, false);
    mode = named === 'amp' ? 'amp' : 'origin-option';
    if (named !== 'amp' && !adapter) problems.add('invalid-option', 'ampcors needs publishers (the publisher domains) or a verifier');
    given = config;
  } else {
    // 1. An adapter: its keys, then its own mapping for the mode they name.
    const named = checkOptionKeys(config, { ...adapter, keys: [...AMP_CORS_CONFIG_KEYS, ...adapter.keys] }, problems);
    mode = named === 'none' ? 'amp' : named;
    const raw = typeof config === 'object' && config !== null && !Array.isArray(config) ? (config as Record<string, unknown>) : {};
    given = problems.attempt(() => adapter.map(raw, mode, problems)) ?? {};
  }
  const entry = typeof adapter === 'boolean' ? CORE_KEYS_SPEC.entry : adapter.entry;
  // 2. The verdict sources.
  const { sources: configured, rules } = verdictSourcesOf(given, mode === 'amp', mode === 'origin-option' && adapter !== false, problems);
  const verifier: VerdictSource | null =
    configured.length === 0 ? null : configured.length === 1 ? (configured[0] as VerdictSource) : combineVerdictSources(configured);
  // 3. The CORS options.
  const normalized = problems.attempt(() => normalizeCorsOptions(given));
  // Core's own messages stand alone (their wording is relied on); an adapter's name the entry point.
  problems.throwIfAny(entry, typeof adapter !== 'boolean');
  const options: NormalizedCorsOptions =
    mode === 'any-origin' ? { ...(normalized as NormalizedCorsOptions), credentials: false, anyOrigin: true } : (normalized as NormalizedCorsOptions);

  // 4. The in-memory rules are a pure function of the Origin and the context: their recent allowed verdicts are remembered.
  const recent = configured.length === 1 && configured[0] === rules ? new RecentVerdicts() : null;

  // The sources with an adapter's `extra` last, for the last `extra` seen (a drop-in's static origin source is one object).
  let lastExtra: VerdictSource | null = null;
  let withLastExtra: readonly VerdictSource[] = configured;
  const sourcesWith = (extra: VerdictSource): readonly VerdictSource[] => {
    if (extra !== lastExtra) {
      withLastExtra = [...configured, extra];
      lastExtra = extra;
    }
    return withLastExtra;
  };

  const decide = (request: CorsRequest, extra?: VerdictSource | null, opts: NormalizedCorsOptions = options): CorsDecision | Promise<CorsDecision> => {
    // The API's own page (a fact no page can forge) needs no CORS, whatever the sources say.
    if (request.secFetchSite === 'same-origin') return decision(request, sameOriginVerdict(request), opts);
    // The `any-origin` mode: nothing was checked but the presence of an Origin, and the verdict says so.
    if (mode === 'any-origin') {
      const origin = request.origin;
      if (typeof origin === 'string' && origin !== '') return decision(request, { allowed: true, origin, via: 'any', reason: 'any-origin' }, opts);
      return decision(request, { allowed: false, origin: null, reason: 'missing', detail: 'no Origin header' }, opts);
    }
    // The in-memory rules alone: a recent allowed verdict of the same Origin and source origin (without AMP for
    // Email, the source origin the rules are given is the request's: see verifyContextOf).
    if (recent !== null && !extra && opts.emailSenders === null) {
      const origin = request.origin;
      const remembered = recent.get(origin, request.sourceOrigin);
      if (remembered !== undefined) return decision(request, remembered, opts);
      const context = verifyContextOf(request, opts);
      const verdict = firstAllowingVerdict(configured, origin, context);
      if (!isThenable(verdict)) {
        recent.set(origin, context.sourceOrigin, verdict);
        return decision(request, verdict, opts);
      }
    }
    const verdict = firstAllowingVerdict(extra ? sourcesWith(extra) : configured, request.origin, verifyContextOf(request, opts));
    return isThenable(verdict) ? Promise.resolve(verdict).then((settled) => decision(request, settled, opts)) : decision(request, verdict, opts);
  };

  return { mode, verifier, options, decide, guardOriginFunction: (probe, credentials = options.credentials) => guardOriginFunction(probe, credentials) };
}
