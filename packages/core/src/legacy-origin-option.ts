import { AmpCorsError } from './errors.js';
import { type ParsedOrigin, parseOrigin } from './origin-header.js';
import type { DenyReason, Verdict, VerifyContext } from './verifier.js';

// ---------------------------------------------------------------------------
// Canaries: origins no configuration can name (issue #14 item 3).

/**
 * Random lowercase letters (letters only, so that a `[a-z.]+` pattern matches
 * them as it would a real host). `Math.random`, not Web Crypto: this runs at
 * import, and Cloudflare Workers refuse `crypto.getRandomValues` in global
 * scope; a label that no configuration names needs no secrecy.
 */
function randomLetters(count: number): string {
  let out = '';
  for (let i = 0; i < count; i++) out += String.fromCharCode(97 + Math.floor(Math.random() * 26));
  return out;
}

/** A host label drawn once per process: no configuration, file or allow-list can contain it. */
const CANARY_LABEL = `ampcorscanary${randomLetters(12)}`;

/**
 * The hosts of the canary origins: the reserved `.invalid` TLD, a generic
 * TLD, and an AMP cache (a pattern over `*.cdn.ampproject.org` trusts every
 * AMP page in the world, the classic AMP CORS mistake).
 */
const CANARY_HOSTS: readonly string[] = [`${CANARY_LABEL}.invalid`, `${CANARY_LABEL}.com`, `${CANARY_LABEL}.cdn.ampproject.org`, `www.${CANARY_LABEL}.org`];

/**
 * The canary origins an origin option is asked about at construction: every
 * host of {@link CANARY_HOSTS} over `https`, plus `http` and a port. An
 * option that allows any of them allows origins its author never named,
 * that is, every origin for practical purposes.
 */
const CANARIES: readonly string[] = [
  ...CANARY_HOSTS.map((host) => `https://${host}`),
  `http://${CANARY_LABEL}.invalid`,
  `https://${CANARY_LABEL}.invalid:8443`,
];

let canaryTurn = 0;

/**
 * A canary origin shaped like `origin` (same scheme and port), its host taken
 * in turn from {@link CANARY_HOSTS}: what a per-request answer is checked
 * against (a function allowing every `https` origin, or every origin on one
 * port, allows it too).
 */
function canaryLike(origin: ParsedOrigin): string {
  canaryTurn = (canaryTurn + 1) % CANARY_HOSTS.length;
  return `${origin.scheme}://${CANARY_HOSTS[canaryTurn] as string}${origin.port === null ? '' : `:${origin.port}`}`;
}

/** The one refusal of an option that allows any origin, with credentials (the same for `true`, `'*'`, a RegExp and a function). */
function anyOriginWithCredentials(what: string): AmpCorsError {
  return new AmpCorsError(
    'unsafe-configuration',
    `${what} together with credentials lets every site read credentialed responses; list the trusted origins or set credentials: false`,
  );
}

function canaryNote(canary: string): string {
  return `it allowed ${canary}, an origin no configuration names`;
}

/**
 * The `origin` option of the `cors` and `@koa/cors` packages, as data: an
 * exact origin, `'*'`, a RegExp, `true` (any origin), `false` (none), or an
 * array of strings and RegExps.
 */
export type OriginOption = boolean | string | RegExp | ReadonlyArray<boolean | string | RegExp>;

/** How {@link compileOriginOption} treats an option. */
export interface OriginOptionMode {
  /** Whether responses carry `Access-Control-Allow-Credentials: true`. */
  readonly credentials: boolean;
  /**
   * True when the option is a per-request answer of the application's own
   * origin function: `true` then means "this origin was checked and is
   * allowed", which is safe with credentials. A static `true` or `'*'` with
   * credentials, and `'*'` from a function with credentials, are refused.
   */
  readonly perRequest?: boolean;
}

/** A compiled origin option: true when the raw `Origin` is allowed by it. */
export type OriginMatcher = (origin: string) => boolean;

/** The matcher of an option that allows any origin (`true`, `'*'`): its verdicts say `any-origin`, since nothing was checked. */
const ANY_ORIGIN: OriginMatcher = () => true;

/**
 * Compiles an {@link OriginOption} into a matcher. A RegExp is cloned
 * without its `g` and `y` flags, so that `lastIndex` never makes it
 * alternate between allow and deny. Strings must be canonical origins (a
 * trailing slash or uppercase would never match a browser's `Origin`).
 *
 * With credentials, an option that allows any origin is refused: `true`
 * (unless it is a per-request answer, see {@link OriginOptionMode}), `'*'`,
 * and a RegExp that matches one of the canary origins (random hosts under
 * `.invalid`, `.com`, `.org` and the AMP cache, over `https`, `http` and a
 * port): a pattern whose source is `.*`, `^https:` or `\.com$` trusts
 * origins its author never named.
 *
 * @throws AmpCorsError `unsafe-configuration` for any-origin with
 * credentials, `invalid-origin` for a string that is no canonical origin,
 * `invalid-option` for other values.
 */
export function compileOriginOption(option: OriginOption, mode: OriginOptionMode): OriginMatcher {
  const items: ReadonlyArray<unknown> = Array.isArray(option) ? option : [option];
  const exact = new Set<string>();
  const patterns: RegExp[] = [];
  let any = false;
  for (const item of items) {
    if (item === true || item === '*') {
      if (mode.credentials && (item === '*' || !mode.perRequest)) {
        throw anyOriginWithCredentials(`origin ${item === '*' ? "'*'" : 'true (reflect any origin)'}`);
      }
      any = true;
    } else if (item === false) {
      continue;
    } else if (typeof item === 'string') {
      const parsed = parseOrigin(item);
      if (!parsed.ok) throw new AmpCorsError('invalid-origin', `origin ${JSON.stringify(item.slice(0, 80))} is not a canonical origin (${parsed.reason})`);
      exact.add(item);
    } else if (item instanceof RegExp) {
      const pattern = item.global || item.sticky ? new RegExp(item.source, item.flags.replace(/[gy]/g, '')) : item;
      // A pattern that matches a canary matches origins nobody named (`.*`, `^https:`, `\.com$`): with credentials, refused like `true`.
      const canary = mode.credentials ? CANARIES.find((origin) => pattern.test(origin)) : undefined;
      if (canary !== undefined) throw anyOriginWithCredentials(`origin ${String(item).slice(0, 80)} (${canaryNote(canary)})`);
      patterns.push(pattern);
    } else {
      throw new AmpCorsError('invalid-option', 'origin must be a string, a RegExp, a boolean or an array of strings and RegExps');
    }
  }
  if (any) return ANY_ORIGIN;
  return (origin) => exact.has(origin) || patterns.some((pattern) => pattern.test(origin));
}

function denied(origin: string | null, reason: DenyReason, detail: string): Verdict {
  return { allowed: false, origin, reason, detail };
}

/**
 * Judges a request with a compiled origin option, in the core {@link Verdict}
 * model: an `Origin` that is not one canonical origin is denied before the
 * option is consulted (nothing unparsed is ever reflected); a matching origin
 * is allowed as a publisher origin, or as `any-origin` when the option
 * allows every origin (`true`, `'*'`: nothing was checked); `AMP-Same-Origin: true` without `Origin`
 * is same-origin; a present `__amp_source_origin` must itself match.
 */
export function judgeWithOriginMatcher(matcher: OriginMatcher, origin: string | null | undefined, context?: VerifyContext): Verdict {
  const source = context?.sourceOrigin;
  const sourceOk = source === undefined || source === null || (typeof source === 'string' && parseOrigin(source).ok && matcher(source));
  if (!sourceOk)
    return denied(typeof origin === 'string' && origin !== '' ? origin : null, 'source-origin-mismatch', '__amp_source_origin is not an allowed origin');
  const extra = typeof source === 'string' ? { sourceOrigin: source } : {};
  if (origin === undefined || origin === null || origin === '') {
    if (context?.ampSameOrigin === 'true') return { allowed: true, origin: null, via: 'same-origin', reason: 'same-origin', ...extra };
    return denied(null, 'missing', 'no Origin header and no AMP-Same-Origin: true');
  }
  const parsed = parseOrigin(origin);
  if (!parsed.ok) return denied(origin, parsed.reason, parsed.detail);
  if (!matcher(origin)) return denied(origin, 'unknown-origin', 'not allowed by the origin option');
  if (matcher === ANY_ORIGIN) return { allowed: true, origin, via: 'any', reason: 'any-origin', ...extra };
  return { allowed: true, origin, via: 'publisher', reason: 'publisher-origin', ...extra };
}

// ---------------------------------------------------------------------------
// Origin functions (issue #14 item 3).

/**
 * Asks a drop-in origin function about one origin (the adapter's wrapper of
 * `cors`'s `origin(origin, callback)` or `@koa/cors`'s `origin(ctx)`): returns
 * the function's answer as an {@link OriginOption} (`false` or `undefined`
 * for none), or a Promise of it; may throw.
 */
export type OriginAsk = (origin: string) => unknown;

/** What {@link guardOriginFunction} returns: a source of verdicts for one request (a VerdictSource of cors-policy.ts). */
export type OriginFunctionSource = (
  ask?: OriginAsk,
  withCredentials?: boolean,
) => {
  verify(origin: string | null | undefined, context?: VerifyContext): Verdict | Promise<Verdict>;
};

/** How long a canary or `__amp_source_origin` question may take before it counts as "not allowed". */
const QUESTION_TIMEOUT_MS = 2000;

function isThenable(value: unknown): value is PromiseLike<unknown> {
  return typeof (value as { then?: unknown } | null)?.then === 'function';
}

/** Continues with a value now, or once its Promise settles (synchronous answers stay synchronous). */
function then<A, B>(value: A | PromiseLike<A>, next: (settled: A) => B | Promise<B>): B | Promise<B> {
  return isThenable(value) ? Promise.resolve(value).then(next) : next(value as A);
}

/** Whether an answer allows `origin`, read as the `cors` package reads it; a malformed answer allows nothing. */
function answerAllows(answer: unknown, origin: string): boolean {
  try {
    return compileOriginOption((answer ?? false) as OriginOption, { credentials: false })(origin);
  } catch {
    return false;
  }
}

/**
 * Asks about `origin` with a bound: true only when the function answered
 * within {@link QUESTION_TIMEOUT_MS} that `origin` is allowed. A throw, a
 * rejection or silence is "not allowed"; nothing waits longer than the bound.
 */
function allowsWithin(ask: OriginAsk, origin: string): boolean | Promise<boolean> {
  let answer: unknown;
  try {
    answer = ask(origin);
  } catch {
    return false;
  }
  if (!isThenable(answer)) return answerAllows(answer, origin);
  const pending = answer;
  return new Promise<boolean>((resolve) => {
    const timer = setTimeout(() => resolve(false), QUESTION_TIMEOUT_MS);
    pending.then(
      (value) => {
        clearTimeout(timer);
        resolve(answerAllows(value, origin));
      },
      () => {
        clearTimeout(timer);
        resolve(false);
      },
    );
  });
}

const NOTHING: OriginMatcher = () => false;

/**
 * Guards a drop-in origin function, so that a function allowing every origin
 * is treated like `origin: true` (refused with credentials) and no answer
 * pairs credentials with an origin the function did not choose:
 *
 * 1. At construction, with credentials, `probe` is asked about every canary
 *    origin (origins no configuration can name). An answer allowing one —
 *    `true`, `'*'`, the canary itself, a pattern matching it — refuses the
 *    configuration with the error of `true` + credentials: thrown here when
 *    the function answered synchronously; when it answers later (callback,
 *    Promise), every request from then on fails with that error. Each
 *    question is bounded (2 s): a function that throws or never answers
 *    does not hold construction.
 * 2. Per request, the function is asked about the request's `Origin` (its
 *    answer compiled as a per-request {@link OriginOption}: `'*'` or a
 *    canary-matching RegExp with credentials is an error), and separately
 *    about a `__amp_source_origin` that differs from it: an answer about one
 *    origin never vouches for another. It is asked only when an answer can
 *    matter: for a canonical `Origin`, or for the source origin of a
 *    same-origin request (`AMP-Same-Origin: true` without `Origin`).
 * 3. With credentials, an allowed `Origin` gets its answer only when the
 *    function, asked about a canary of the same scheme and port, does not
 *    allow the canary too (bounded like 1); when it does, the request fails
 *    with the error of 1. This costs one more question per allowed
 *    credentialed request, and holds for a function that starts allowing
 *    everything after construction.
 *
 * Not covered, by design: a function written to recognise the canaries.
 *
 * @param probe - asks the function about an origin outside any request (construction)
 * @param credentials - whether responses may carry credentials
 * @returns a factory of per-request sources: `ask` asks in the request's context (default `probe`), `withCredentials` overrides `credentials` for that request
 * @throws AmpCorsError `unsafe-configuration` when, with credentials, the function synchronously allows a canary
 */
export function guardOriginFunction(probe: OriginAsk, credentials: boolean): OriginFunctionSource {
  const refusal = (canary: string) => anyOriginWithCredentials(`the origin function (${canaryNote(canary)})`);
  // 1. The construction probe.
  let unsafe: string | undefined;
  if (credentials) {
    const answers = CANARIES.map((canary) => [canary, allowsWithin(probe, canary)] as const);
    const now = answers.find(([, allowed]) => allowed === true);
    if (now !== undefined) throw refusal(now[0]);
    for (const [canary, allowed] of answers) {
      if (isThenable(allowed)) {
        void allowed.then((yes) => {
          if (yes) unsafe ??= canary;
        });
      }
    }
  }
  return (ask = probe, withCredentials = credentials) => ({
    verify(raw, context) {
      if (unsafe !== undefined) throw refusal(unsafe);
      const parsed = parseOrigin(raw);
      const origin = parsed.ok ? (raw as string) : null;
      const sourceRaw = context?.sourceOrigin;
      const source = typeof sourceRaw === 'string' && parseOrigin(sourceRaw).ok ? sourceRaw : null;
      // Asked only when an answer can matter: a canonical Origin, or the source origin of a same-origin request.
      const sameOrigin = !parsed.ok && parsed.reason === 'missing' && context?.ampSameOrigin === 'true';
      if (origin === null && !(sameOrigin && source !== null)) return judgeWithOriginMatcher(NOTHING, raw, context);
      // 2. The Origin's own answer, then the source origin's.
      return then(origin === null ? false : ask(origin), (answer) => {
        const matcher = origin === null ? NOTHING : compileOriginOption((answer ?? false) as OriginOption, { credentials: withCredentials, perRequest: true });
        const originAllowed = origin !== null && matcher(origin);
        const sourceAllowed = source === null ? false : source === origin ? originAllowed : allowsWithin(ask, source);
        return then(sourceAllowed, (sourceOk) => {
          const judged = judgeWithOriginMatcher((candidate) => (candidate === origin ? originAllowed : candidate === source && sourceOk), raw, context);
          // An answer that allows any origin (`true`, `'*'`) checked nothing: the verdict says so (a drop-in may answer it with the literal *).
          const verdict: Verdict =
            judged.allowed && matcher === ANY_ORIGIN && judged.origin === origin ? { ...judged, via: 'any', reason: 'any-origin' } : judged;
          if (!verdict.allowed || !parsed.ok || !withCredentials) return verdict;
          // 3. Credentials only when the function does not allow a canary too.
          const canary = canaryLike(parsed);
          return then(allowsWithin(ask, canary), (yes) => {
            if (yes) throw refusal(canary);
            return verdict;
          });
        });
      });
    },
  });
}
