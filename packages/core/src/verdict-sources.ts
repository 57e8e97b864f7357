/**
 * Verdict sources: every way a policy can learn which origins to trust, tried
 * in one fixed order; the first allow wins (issue #15).
 *
 * A policy ({@link createCorsPolicy}) consults, in this order:
 * 1. the in-memory rules (`publishers`, `origins`, `caches`,
 *    `legacyCacheOrigins`), synchronous;
 * 2. a compiled allow-set (`allowSet`: the bytes of an `ampcors compile`
 *    file, loaded once at start-up, or a loaded {@link CompactAllowSet}),
 *    synchronous; it holds cache origins only, so the publisher's own
 *    origins come from 1 (or 3, or an adapter's `origin` option);
 * 3. a custom `verifier` (any {@link VerdictSource}, for example
 *    `createAsyncVerifier({ source: createRedisRegistry(…) })`), which may
 *    answer with a Promise;
 * 4. then an adapter's drop-in `origin` option, when it has one.
 *
 * The first source that allows decides; later sources are not asked (a slow
 * registry is never reached for an origin memory allows). When every source
 * denies, the first denial that is more than "not known here" explains (a
 * source that knew the origin but refused it: a forged
 * `__amp_source_origin`, a registry down), else the first denial: a stable
 * reason, the same for the same request. A source that throws or rejects fails closed: the error
 * reaches the adapter, which answers 500 without CORS headers; a source that
 * returns something other than a verdict is a denial (`source-unavailable`).
 */
import { type CompactAllowSet, loadAllowSet } from './compact-allow-set.js';
import type { ConfigProblems } from './config-check.js';
import type { VerdictSource } from './cors-policy.js';
import { AmpCorsError, isAmpCorsError } from './errors.js';
import { isThenable } from './request-facts.js';
import type { AmpCache } from './caches.js';
import { buildVerifier, type Verdict, type Verifier, type VerifyContext } from './verifier.js';

/** What the `allowSet` option accepts: a compiled file's bytes (`Uint8Array`, a Node `Buffer`, an `ArrayBuffer`) or a loaded set. */
export type AllowSetOption = Uint8Array | ArrayBuffer | CompactAllowSet;

/** The configuration keys that make verdict sources (the part of `AmpCorsConfig` that decides who is trusted). */
export interface VerdictSourcesConfig {
  /** Publisher domains (see `createVerifier`). */
  readonly publishers?: readonly string[];
  /** Exact publisher origins (see `createVerifier`). */
  readonly origins?: readonly string[];
  /** The AMP caches (default: the bundled registry). */
  readonly caches?: readonly AmpCache[];
  /** Also allow bare cache origins (see `createVerifier`). */
  readonly legacyCacheOrigins?: boolean;
  /**
   * A compiled allow-set (`ampcors compile`): the file's bytes, loaded once
   * here, or `loadAllowSet(bytes)`. Cache origins only: give the publisher's
   * own origins in `origins` (or `publishers`) too.
   */
  readonly allowSet?: AllowSetOption;
  /** A custom verdict source (for example `createAsyncVerifier` over `@ampcors/redis`), asked after the others. */
  readonly verifier?: VerdictSource;
}

function shown(value: string): string {
  return JSON.stringify(value.length > 80 ? `${value.slice(0, 80)}…` : value);
}

function isCompactAllowSet(value: unknown): value is CompactAllowSet {
  try {
    const set = value as Partial<CompactAllowSet> | null;
    return typeof set === 'object' && set !== null && typeof set.verifyOrigin === 'function' && typeof set.has === 'function' && Array.isArray(set.caches);
  } catch {
    // A hostile getter (a Proxy) is not a set; the caller refuses it with an AmpCorsError.
    return false;
  }
}

function isVerifierLike(value: unknown): boolean {
  try {
    return typeof (value as { verify?: unknown } | null)?.verify === 'function';
  } catch {
    return false;
  }
}

/**
 * Reads the `allowSet` option once, at start-up: loads a compiled file's
 * bytes with {@link loadAllowSet} (checksum and every field checked), or
 * takes a set already loaded.
 *
 * @throws AmpCorsError `invalid-option` for a value that is not one (a path string says to read the file), `invalid-allow-set` for a corrupt file
 */
export function readAllowSetOption(value: unknown): CompactAllowSet {
  if (isCompactAllowSet(value)) return value;
  if (value instanceof Uint8Array || value instanceof ArrayBuffer) {
    try {
      return loadAllowSet(value instanceof Uint8Array ? value : new Uint8Array(value));
    } catch (error) {
      if (isAmpCorsError(error)) throw new AmpCorsError(error.code, `allowSet: ${error.message} (compile it again with ampcors compile)`);
      throw error;
    }
  }
  if (typeof value === 'string') {
    throw new AmpCorsError(
      'invalid-option',
      `allowSet: ${shown(value)} is a string, not the allow-set: read the file and pass its bytes, for example allowSet: readFileSync(${shown(value)}) on Node (at start-up, not per request)`,
    );
  }
  const kind = value === null ? 'null' : Array.isArray(value) ? 'an array' : typeof value === 'object' ? 'an object without verifyOrigin' : typeof value;
  const hint = isVerifierLike(value) ? ' (a verifier goes in `verifier`; domain lists go in `publishers`)' : '';
  throw new AmpCorsError(
    'invalid-option',
    `allowSet must be the bytes of a compiled allow-set (a Uint8Array such as readFileSync('publishers.acs'), made by ampcors compile) or loadAllowSet(bytes), not ${kind}${hint}`,
  );
}

/**
 * A compiled allow-set as a {@link VerdictSource}: the set judges cache
 * origins ({@link CompactAllowSet.verifyOrigin}: as sent, https, default
 * port, a cache the set was compiled for, a prefix no other domain claims);
 * the request facts around it follow SPEC §7 as the verifier does.
 *
 * 1. No `Origin`: allowed as same-origin only with `AMP-Same-Origin: true`.
 * 2. An `Origin`: the set's verdict (never a publisher origin: the set holds none).
 * 3. A present `__amp_source_origin` must be one of the publisher's origins
 *    (`isPublisherOrigin`), else the request is denied; it never decides what
 *    is allowed. With no `isPublisherOrigin`, every such request is denied.
 *
 * Twin of step 1 and `withSource` of createVerifier in verifier.ts: keep in step.
 *
 * @param set - a loaded set ({@link loadAllowSet})
 * @param isPublisherOrigin - the publisher's own origins, for `__amp_source_origin` (the in-memory rules' `isPublisherOrigin`)
 * @example
 * const source = allowSetSource(loadAllowSet(readFileSync('publishers.acs')), createVerifier({ publishers: [], origins }).isPublisherOrigin);
 */
export function allowSetSource(set: CompactAllowSet, isPublisherOrigin: (origin: string) => boolean = () => false): VerdictSource {
  // 3. __amp_source_origin on an allowed request. Twin of withSource (and step 1) of createVerifier in verifier.ts: keep in step.
  const withSource = (verdict: Verdict, context: VerifyContext | undefined): Verdict => {
    const source = context?.sourceOrigin;
    if (!verdict.allowed || source === undefined || source === null) return verdict;
    if (typeof source === 'string' && isPublisherOrigin(source)) return { ...verdict, sourceOrigin: source };
    return {
      allowed: false,
      origin: verdict.origin,
      reason: 'source-origin-mismatch',
      detail: `__amp_source_origin ${shown(String(source))} is not a publisher origin (give it in origins or publishers)`,
    };
  };
  return {
    verify(origin, context) {
      // 1. No Origin: a same-origin request from the publisher's own page.
      if (origin === undefined || origin === null || origin === '') {
        if (context?.ampSameOrigin === 'true') return withSource({ allowed: true, origin: null, via: 'same-origin', reason: 'same-origin' }, context);
        return { allowed: false, origin: null, reason: 'missing', detail: 'no Origin header and no AMP-Same-Origin: true' };
      }
      // 2. The set's own verdict (it never throws).
      return withSource(set.verifyOrigin(origin), context);
    },
  };
}

/**
 * Builds the verdict sources of a configuration, in the order of this file's
 * header (in-memory rules, allow-set, verifier), reporting every problem to
 * `problems`. Any of them may be combined; each must be usable on its own:
 *
 * 1. The in-memory rules, from `publishers` and/or `origins` (only in the
 *    AMP mode); `caches` and `legacyCacheOrigins` configure them and are
 *    a problem without them (they would be silently ignored).
 * 2. `allowSet`, loaded now. It holds cache origins only: without
 *    `publishers`, `origins`, a `verifier` or the caller's own origin source
 *    the publisher's own pages would be denied, which is a problem.
 * 3. `verifier`: an object with a `verify(origin, context)` method.
 *
 * @param given - the configuration
 * @param amp - whether the keys named the AMP mode (only then are `publishers`/`origins` read)
 * @param ownSource - whether the caller has its own origin source (an adapter's `origin` option)
 * @returns the sources, in order, and the in-memory rules' verifier when there are rules
 */
export function verdictSourcesOf(
  given: VerdictSourcesConfig,
  amp: boolean,
  ownSource: boolean,
  problems: ConfigProblems,
): { readonly sources: readonly VerdictSource[]; readonly rules: Verifier | null } {
  const sources: VerdictSource[] = [];
  // 1. The in-memory rules.
  const hasRules = amp && (given.publishers !== undefined || given.origins !== undefined);
  const extraSources = given.allowSet !== undefined || given.verifier !== undefined;
  let rules: Verifier | null = null;
  if (hasRules) {
    if (given.legacyCacheOrigins !== undefined && typeof given.legacyCacheOrigins !== 'boolean')
      problems.add('invalid-option', 'legacyCacheOrigins must be true or false');
    rules =
      // The policy has checked the keys (and says once when a list is empty): the values are checked here.
      problems.attempt(() =>
        buildVerifier({
          publishers: given.publishers ?? [],
          ...(given.origins !== undefined && { origins: given.origins }),
          ...(given.caches !== undefined && { caches: given.caches }),
          ...(given.legacyCacheOrigins !== undefined && { legacyCacheOrigins: given.legacyCacheOrigins }),
        }),
      ) ?? null;
    if (rules !== null) sources.push(rules);
  } else if (extraSources) {
    const ignored = (['caches', 'legacyCacheOrigins'] as const).filter((key) => Object.hasOwn(given, key));
    if (ignored.length > 0) {
      problems.add(
        'invalid-option',
        `${ignored.join(' and ')} would be ignored: they configure publishers and origins (the in-memory rules); a verifier is configured where it is built, an allow-set when it is compiled`,
      );
    }
  }
  // 2. The compiled allow-set.
  if (given.allowSet !== undefined) {
    const set = problems.attempt(() => readAllowSetOption(given.allowSet));
    if (!hasRules && given.verifier === undefined && !ownSource) {
      problems.add(
        'invalid-option',
        "allowSet holds only cache origins (the compiled domains' pages on AMP caches), not the publisher's own: add origins: ['https://www.example.com'] (the exact origins of the publisher's pages) or publishers",
      );
    }
    if (set !== undefined) {
      const publisherOrigins = rules;
      sources.push(allowSetSource(set, publisherOrigins === null ? undefined : (origin) => publisherOrigins.isPublisherOrigin(origin)));
    }
  }
  // 3. The custom verifier.
  if (given.verifier !== undefined) {
    if (isCompactAllowSet(given.verifier)) {
      problems.add('invalid-option', "verifier: a loaded allow-set goes in allowSet (with origins: ['https://www.example.com'] for your own pages)");
    } else if (typeof given.verifier !== 'object' || given.verifier === null || typeof given.verifier.verify !== 'function') {
      problems.add('invalid-option', 'verifier must be an object with a verify(origin, context) method');
    } else {
      sources.push(given.verifier);
    }
  }
  return { sources, rules };
}

/** Denials that only say a source does not know the origin: another source's more telling denial explains instead. */
const NOT_KNOWN_HERE: ReadonlySet<string> = new Set(['unknown-origin', 'unknown-publisher', 'hashed-unknown']);

/** The denial that explains, of the one so far (`chosen`) and the next (`next`): see this file's header. */
function explaining(chosen: Verdict | undefined, next: Verdict): Verdict {
  if (chosen === undefined) return next;
  return NOT_KNOWN_HERE.has(chosen.reason) && !NOT_KNOWN_HERE.has(next.reason) ? next : chosen;
}

/** The verdict of a source that broke its contract (returned no verdict): a denial, never an allow. */
function checked(result: Verdict, origin: string | null | undefined): Verdict {
  if (typeof result === 'object' && result !== null && (result.allowed === true || result.allowed === false)) return result;
  return { allowed: false, origin: typeof origin === 'string' ? origin : null, reason: 'source-unavailable', detail: 'a verdict source returned no verdict' };
}

/**
 * Asks each source in turn (this file's rule): the first allow wins; when
 * all deny, the first denial that is more than "not known here" explains,
 * else the first. Synchronous unless a source answers
 * with a Promise; then the rest are awaited in order. A throw or rejection
 * propagates (the adapter answers 500 without CORS headers: fail closed).
 *
 * @param sources - in order; none denies with `unknown-origin`
 */
export function firstAllowingVerdict(sources: readonly VerdictSource[], origin: string | null | undefined, context: VerifyContext): Verdict | Promise<Verdict> {
  let first: Verdict | undefined;
  for (let i = 0; i < sources.length; i++) {
    const result = (sources[i] as VerdictSource).verify(origin, context);
    if (isThenable(result)) return continueAsync(Promise.resolve(result), i, sources, origin, context, first);
    const verdict = checked(result, origin);
    if (verdict.allowed) return verdict;
    first = explaining(first, verdict);
  }
  return first ?? { allowed: false, origin: origin ?? null, reason: 'unknown-origin', detail: 'no origin source is configured' };
}

async function continueAsync(
  pending: Promise<Verdict>,
  index: number,
  sources: readonly VerdictSource[],
  origin: string | null | undefined,
  context: VerifyContext,
  first: Verdict | undefined,
): Promise<Verdict> {
  let verdict = checked(await pending, origin);
  for (let i = index; ;) {
    if (verdict.allowed) return verdict;
    first = explaining(first, verdict);
    i += 1;
    if (i >= sources.length) return first;
    verdict = checked(await (sources[i] as VerdictSource).verify(origin, context), origin);
  }
}

/**
 * Several sources as one {@link VerdictSource}, by {@link firstAllowingVerdict}:
 * for example in-memory rules, a compiled allow-set and a Redis-backed
 * verifier, to give wherever one verifier is expected.
 *
 * @example const verifier = combineVerdictSources([createVerifier({ publishers }), allowSetSource(loadAllowSet(bytes))]);
 */
export function combineVerdictSources(sources: readonly VerdictSource[]): VerdictSource {
  const list = [...sources];
  return { verify: (origin, context) => firstAllowingVerdict(list, origin, context ?? {}) };
}
