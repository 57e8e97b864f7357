import type { AmpCache } from './caches.js';
import { type CorsOptions, type CorsPlan, type CorsRequest, type NormalizedCorsOptions, normalizeCorsOptions, planCors, verifyContextOf } from './cors-response.js';
import { AmpCorsError } from './errors.js';
import { guardOriginFunction, type OriginAsk, type OriginFunctionSource } from './legacy-origin-option.js';
import { createVerifier, type Verdict, type VerifyContext } from './verifier.js';

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
 * The configuration every ampcors adapter accepts: the core verifier
 * configuration (`publishers`, `origins`, `caches`, `legacyCacheOrigins`) or
 * a prebuilt `verifier`, plus the {@link CorsOptions}.
 */
export interface AmpCorsConfig extends CorsOptions {
  /** Publisher domains (see {@link createVerifier}); exclusive with `verifier`. */
  readonly publishers?: readonly string[];
  /** Exact publisher origins (see {@link createVerifier}). */
  readonly origins?: readonly string[];
  /** The AMP caches (default: the bundled registry). */
  readonly caches?: readonly AmpCache[];
  /** Also allow bare cache origins (see {@link createVerifier}). */
  readonly legacyCacheOrigins?: boolean;
  /** A prebuilt verifier; exclusive with `publishers`. */
  readonly verifier?: VerdictSource;
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
  /** The verifier built from, or given in, the configuration (`null` when only an adapter's `origin` option decides). */
  readonly verifier: VerdictSource | null;
  /** The normalized CORS options. */
  readonly options: NormalizedCorsOptions;
  /**
   * Judges a request: each source in turn (the policy's verifier first, then
   * `extra`, e.g. an adapter's `origin` option) until one allows; when all
   * deny, the first denial explains. Synchronous unless a source returns a
   * Promise. May throw or reject when a custom source does.
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

function isThenable<T>(value: T | Promise<T>): value is Promise<T> {
  return typeof (value as { then?: unknown } | null)?.then === 'function';
}

/**
 * Validates an adapter configuration once: builds the core verifier from
 * `publishers` (or takes `verifier`) and normalizes the CORS options.
 *
 * @param config - the adapter configuration
 * @param hasOriginOption - true when the adapter has its own origin source (a drop-in `origin` option), so that neither `publishers` nor `verifier` is required
 * @throws AmpCorsError for an invalid configuration.
 */
export function createCorsPolicy(config: AmpCorsConfig, hasOriginOption = false): CorsPolicy {
  if (typeof config !== 'object' || config === null) throw new AmpCorsError('invalid-option', 'ampcors needs a configuration object');
  if (config.verifier !== undefined && config.publishers !== undefined) {
    throw new AmpCorsError('invalid-option', 'give either publishers (and origins, caches) or a prebuilt verifier, not both');
  }
  let verifier: VerdictSource | null = null;
  if (config.verifier !== undefined) {
    if (typeof config.verifier !== 'object' || config.verifier === null || typeof config.verifier.verify !== 'function') {
      throw new AmpCorsError('invalid-option', 'verifier must be an object with a verify(origin, context) method');
    }
    verifier = config.verifier;
  } else if (config.publishers !== undefined) {
    verifier = createVerifier({
      publishers: config.publishers,
      ...(config.origins !== undefined && { origins: config.origins }),
      ...(config.caches !== undefined && { caches: config.caches }),
      ...(config.legacyCacheOrigins !== undefined && { legacyCacheOrigins: config.legacyCacheOrigins }),
    });
  } else if (!hasOriginOption) {
    throw new AmpCorsError('invalid-option', 'ampcors needs publishers (the publisher domains) or a verifier');
  }
  const options = normalizeCorsOptions(config);
  const sources = (extra: VerdictSource | null | undefined): VerdictSource[] => {
    const list: VerdictSource[] = [];
    if (verifier !== null) list.push(verifier);
    if (extra) list.push(extra);
    return list;
  };

  const decide = (request: CorsRequest, extra?: VerdictSource | null, opts: NormalizedCorsOptions = options): CorsDecision | Promise<CorsDecision> => {
    const list = sources(extra);
    const context = verifyContextOf(request, opts);
    const finish = (verdict: Verdict): CorsDecision => ({ verdict, plan: planCors(request, verdict, opts) });
    if (list.length === 0) {
      return finish({ allowed: false, origin: request.origin ?? null, reason: 'unknown-origin', detail: 'no origin source is configured' });
    }
    let first: Verdict | undefined;
    for (let i = 0; i < list.length; i++) {
      const result = (list[i] as VerdictSource).verify(request.origin, context);
      if (isThenable(result)) return continueAsync(result, i, list, request, context, first).then(finish);
      if (result.allowed) return finish(result);
      first ??= result;
    }
    return finish(first as Verdict);
  };

  return { verifier, options, decide, guardOriginFunction: (probe, credentials = options.credentials) => guardOriginFunction(probe, credentials) };
}

async function continueAsync(
  pending: Promise<Verdict>,
  index: number,
  list: readonly VerdictSource[],
  request: CorsRequest,
  context: VerifyContext,
  first: Verdict | undefined,
): Promise<Verdict> {
  let result = await pending;
  for (let i = index; ; ) {
    if (result.allowed) return result;
    first ??= result;
    i += 1;
    if (i >= list.length) return first;
    result = await (list[i] as VerdictSource).verify(request.origin, context);
  }
}
