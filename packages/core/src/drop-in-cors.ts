/**
 * The `cors` package's options (expressjs/cors) → an ampcors policy and its
 * origin source (SPEC §7, issue #15): `cors`'s option names mapped onto
 * ampcors's, its defaults when its `origin` option decides, its static
 * origin compiled and its origin callback asked per request. Written once
 * here so that `@ampcors/express` only translates Express's request and
 * response. Generic over the framework's request type: nothing is imported
 * from a framework.
 *
 * 1. Names: `headers` is `allowedHeaders`, `optionsSuccessStatus` is
 *    `preflightStatus`, and a `maxAge` string of digits is its number.
 * 2. The mode is named by keys only (config-check.ts). With `cors`'s
 *    `origin` alone (the compatible mode) `cors`'s defaults hold:
 *    credentials off, a denied origin passed on without CORS headers
 *    (`onDenied: 'omit'`), and every `OPTIONS` answered as a preflight.
 *    With `publishers`, `origins` or `verifier`, `origin` adds origins and
 *    ampcors's defaults stay (credentials on).
 * 3. A static `origin` is compiled with the other options, so that its
 *    problems are listed with theirs; `origin: '*'` without credentials is
 *    `cors`'s literal `*` (no `Vary: Origin`), as `ampCors()` with no
 *    options is.
 * 4. An origin callback is asked about canary origins at construction (one
 *    allowing every origin is refused with credentials, like `true`), then
 *    per request through `askOriginCallback`, synchronously when it answers
 *    synchronously.
 */
import type { ConfigMode, ConfigProblems } from './config-check.js';
import type { NormalizedCorsOptions } from './cors-options.js';
import { type AdapterOptionsSpec, type AmpCorsConfig, type CorsDecision, type CorsPolicy, createCorsPolicy, type VerdictSource } from './cors-policy.js';
import type { CorsRequest } from './cors-plan.js';
import { compileOriginOption, judgeWithOriginMatcher, type OriginMatcher, type OriginOption } from './legacy-origin-option.js';
import { askOriginCallback } from './origin-callback.js';

/** The `cors` package's origin function: calls back with an {@link OriginOption} for this request's `Origin`. */
export type CorsPackageOriginCallback = (origin: string | undefined, callback: (error: Error | null, allow?: OriginOption) => void) => void;

/**
 * The ampcors configuration, plus the options of the `cors` package under
 * their own names (`origin`, `headers`, `optionsSuccessStatus`, a string
 * `maxAge`).
 */
export interface CorsPackageOptions extends Omit<AmpCorsConfig, 'maxAge'> {
  /**
   * The `cors` package's `origin`: an exact origin, `'*'`, a RegExp, an
   * array, `true` (any), `false` (none) or a {@link CorsPackageOriginCallback}.
   * With `publishers` or `verifier` it adds origins; alone, it decides. With
   * credentials, an option allowing origins nobody names (`true`, `'*'`,
   * catch-all patterns, `cb(null, true)` for every origin) is refused.
   */
  readonly origin?: OriginOption | CorsPackageOriginCallback;
  /** Alias of `allowedHeaders` (the `cors` package's name). */
  readonly headers?: string | readonly string[];
  /** Alias of `preflightStatus` (the `cors` package's name). */
  readonly optionsSuccessStatus?: number;
  /** `Access-Control-Max-Age` in seconds; a string of digits is accepted, as `cors` accepts it. */
  readonly maxAge?: number | string;
}

/** The `cors` package's per-request options delegate, for a framework whose request is `R`. */
export type CorsPackageDelegate<R> = (req: R, callback: (error: Error | null, options?: CorsPackageOptions) => void) => void;

/** A validated `cors`-compatible configuration: the policy, and the decision for one request. */
export interface CorsPackagePolicy {
  /** The validated policy. */
  readonly policy: CorsPolicy;
  /** Judges a request, asking the origin callback as `cors` does. May throw or reject when the callback or a verifier does. */
  decide(request: CorsRequest): CorsDecision | Promise<CorsDecision>;
}

/** 1–3. The configuration check and mapping (see the file comment); a static `origin` is compiled into `compiled`. */
function corsSpec(entry: string, compiled: { matcher?: OriginMatcher }): AdapterOptionsSpec {
  return {
    entry,
    keys: ['origin', 'headers', 'optionsSuccessStatus'],
    originKey: 'origin',
    aliases: { allowMethods: 'methods', allowHeaders: 'allowedHeaders', exposeHeaders: 'exposedHeaders', allowOrigin: 'origin', allowedOrigins: 'origin' },
    allowNothing: 'To allow no cross-origin request on purpose, pass origin: false (or leave ampCors out: same-origin requests need no CORS).',
    allowAny:
      "For a public API that any origin may read without credentials, call ampCors() with no options, or add origin: '*' (cors's default) to the other options (Access-Control-Allow-Origin: *).",
    map(given: Readonly<Record<string, unknown>>, mode: ConfigMode, problems: ConfigProblems): AmpCorsConfig {
      const { origin, headers, optionsSuccessStatus, maxAge, ...rest } = given as CorsPackageOptions;
      // 1. Names.
      let seconds: number | undefined;
      if (typeof maxAge === 'string') {
        if (/^[0-9]+$/.test(maxAge)) seconds = Number(maxAge);
        else problems.add('invalid-option', 'maxAge must be a non-negative whole number of seconds');
      } else {
        seconds = maxAge;
      }
      if (rest.allowedHeaders !== undefined && headers !== undefined) problems.add('invalid-option', 'give allowedHeaders or its alias headers, not both');
      if (rest.preflightStatus !== undefined && optionsSuccessStatus !== undefined)
        problems.add('invalid-option', 'give preflightStatus or its alias optionsSuccessStatus, not both');
      // 2. cors's defaults when its origin option is given (credentials stay on with publishers or a verifier).
      const dropIn = origin !== undefined;
      const credentials = rest.credentials ?? (mode === 'amp' || !dropIn);
      // 3. A static origin.
      if (dropIn && typeof origin !== 'function') compiled.matcher = problems.attempt(() => compileOriginOption(origin, { credentials: credentials === true }));
      return {
        ...rest,
        ...(headers !== undefined && { allowedHeaders: headers }),
        ...(optionsSuccessStatus !== undefined && { preflightStatus: optionsSuccessStatus }),
        ...(seconds !== undefined && { maxAge: seconds }),
        ...(dropIn && { credentials, onDenied: rest.onDenied ?? 'omit' }),
      };
    },
  };
}

/**
 * Validates a `cors`-compatible configuration once (every problem in one
 * `AmpCorsError`) and returns its per-request decision (see the file
 * comment for the rules).
 *
 * @param options - the options as the user gave them (`undefined` for none: the literal `*`, as `cors()`)
 * @param entry - the entry point named in error messages, e.g. `ampCors (@ampcors/express)`
 * @throws AmpCorsError for an invalid configuration.
 */
export function createCorsPackagePolicy(options: CorsPackageOptions | undefined, entry: string): CorsPackagePolicy {
  const compiled: { matcher?: OriginMatcher } = {};
  const policy = createCorsPolicy(options as AmpCorsConfig, corsSpec(entry, compiled));
  const origin = policy.mode === 'any-origin' ? undefined : (options as CorsPackageOptions).origin;
  // 2. cors's answers in the compatible mode; 3. its literal * for origin: '*' without credentials.
  const opts: NormalizedCorsOptions =
    policy.mode === 'amp'
      ? policy.options
      : {
          ...policy.options,
          everyOptionsIsPreflight: true,
          allowedHeadersSeparator: ',',
          ...(origin === '*' && !policy.options.credentials && { anyOrigin: true }),
        };
  let source: VerdictSource | null = null;
  if (typeof origin === 'function') {
    // 4. Asked about canary origins now, then per request.
    source = policy.guardOriginFunction((asked) => askOriginCallback((answer) => origin(asked, answer)), policy.options.credentials)();
  } else if (compiled.matcher !== undefined) {
    const matcher = compiled.matcher;
    source = { verify: (raw, context) => judgeWithOriginMatcher(matcher, raw, context) };
  }
  return { policy, decide: (request) => policy.decide(request, source, opts) };
}

/** Items of an array option keyed one by one, at most (a longer array's answer is remembered by object, see {@link walkContents}). */
const MAX_COMPARED_ITEMS = 256;
/** Answers remembered by their content, at most (then all forgotten at once: forgetting only costs compiling again). */
const MAX_KEYED_ANSWERS = 256;
/** The longest content key remembered; a longer answer is remembered by object. */
const MAX_KEY_LENGTH = 4096;
/**
 * How deep {@link walkContents} reads inside an options object: as deep as
 * the configuration reads (`caches` → a cache → its fields; `email` →
 * `senders` → a sender). A value deeper down is compared by identity (and a
 * cycle ends there).
 */
const MAX_CONTENT_DEPTH = 3;

/**
 * Walks what an options object holds, as the configuration reads it, giving
 * each value read to `walk` in order (stopping as soon as it answers false;
 * returns false then): the name and value of each of its properties
 * and of its prototypes' (but `Object.prototype`'s), enumerable or not, and,
 * inside each value, an array's length and EVERY item, and a plain object's
 * (prototype `Object.prototype` or `null`) property names and values, down
 * to {@link MAX_CONTENT_DEPTH}, and a RegExp's own properties but
 * `lastIndex` (its source and flags cannot change, and the compiled option
 * never reads its `lastIndex`: a `g` or `y` pattern is cloned without them).
 * Anything else (a function, a verifier, a class instance, a byte array) is
 * one value, compared by identity. Every item, however long the array: an
 * answer edited in place at the same length (an origin removed, another put
 * in its place) must not keep its old policy; the cost is the size of the
 * application's own answer (one comparison per item per request), never the
 * attacker's.
 */
function walkContents(value: unknown, depth: number, walk: ContentsWalk): boolean {
  if (!walk.read(value)) return false;
  if (typeof value !== 'object' || value === null || depth >= MAX_CONTENT_DEPTH) return true;
  if (Array.isArray(value)) {
    const items = value as unknown[];
    if (!walk.read(items.length)) return false;
    for (let at = 0; at < items.length; at++) {
      const item = items[at];
      // Strings and other primitives (an origin list's items) need no descent.
      if (typeof item !== 'object' || item === null ? !walk.read(item) : !walkContents(item, depth + 1, walk)) return false;
    }
    return true;
  }
  const prototype: unknown = Object.getPrototypeOf(value);
  // A RegExp's own properties but `lastIndex` (an own `test` or `exec` is what the compiled option calls).
  const regExp = value instanceof RegExp;
  if (prototype !== Object.prototype && prototype !== null && !regExp) return true;
  for (const name of Object.getOwnPropertyNames(value)) {
    if (regExp && name === 'lastIndex') continue;
    if (!walk.read(name) || !walkContents((value as Record<string, unknown>)[name], depth + 1, walk)) return false;
  }
  return true;
}

/**
 * One walk of {@link walkContents}: it records each value read into
 * `contents` when `known` is `null`, and otherwise compares each with the
 * value `known` recorded at the same place (`Object.is`), stopping at the
 * first difference (one class, not two closures, so that the per-item call
 * stays cheap: ~1 ns).
 */
class ContentsWalk {
  /** The values read so far (recording), or how many were compared (comparing). */
  readonly contents: unknown[] = [];
  private at = 0;
  constructor(private readonly known: readonly unknown[] | null) {}
  /** Records or compares one value read; false at the first difference. */
  read(value: unknown): boolean {
    if (this.known === null) {
      this.contents.push(value);
      return true;
    }
    return this.at < this.known.length && Object.is(value, this.known[this.at++]);
  }
  /** Whether every recorded value was read again (nothing left over). */
  complete(): boolean {
    return this.known === null || this.at === this.known.length;
  }
}

/** {@link walkContents} over an options object: each property of it and of its prototypes (but `Object.prototype`'s), its name then its value. */
function walkOptions(options: object, walk: ContentsWalk): boolean {
  for (let holder: object | null = options; holder !== null && holder !== Object.prototype; holder = Object.getPrototypeOf(holder) as object | null) {
    for (const name of Object.getOwnPropertyNames(holder)) {
      if (!walk.read(name) || !walkContents((options as Record<string, unknown>)[name], 1, walk)) return false;
    }
  }
  return walk.complete();
}

/** What an options object holds now ({@link walkOptions}), as the list of the values read. */
function contentsOf(options: object): unknown[] {
  const walk = new ContentsWalk(null);
  walkOptions(options, walk);
  return walk.contents;
}

/** Whether an options object holds what `known` ({@link contentsOf}, earlier) held: every value read is the same, in order; stops at the first difference, without building a list. */
function holdsContents(options: object, known: readonly unknown[]): boolean {
  return walkOptions(options, new ContentsWalk(known));
}

/**
 * The key of a value that is data only: a string (quoted), a number, a
 * boolean, `undefined`, `null`, a RegExp with nothing of its own but
 * `lastIndex` (its source and flags), or, at the top, an array of at most
 * {@link MAX_COMPARED_ITEMS} such items; `undefined` for anything else
 * (functions, verifiers, objects), whose answer is remembered by object.
 */
function dataKey(value: unknown, top: boolean): string | undefined {
  if (typeof value === 'string') return JSON.stringify(value);
  if (typeof value === 'number' || typeof value === 'boolean' || value === undefined || value === null) return String(value);
  if (typeof value !== 'object') return undefined;
  const prototype: unknown = Object.getPrototypeOf(value);
  if (prototype === RegExp.prototype && Object.getOwnPropertyNames(value).length === 1)
    return `/${JSON.stringify((value as RegExp).source)}/${(value as RegExp).flags}`;
  if (!top || prototype !== Array.prototype || (value as unknown[]).length > MAX_COMPARED_ITEMS) return undefined;
  const items: string[] = [];
  let length = 0;
  for (const item of value as unknown[]) {
    const key = dataKey(item, false);
    // A key past MAX_KEY_LENGTH is never used (contentKeyOf): stop building it.
    if (key === undefined || (length += key.length + 1) > MAX_KEY_LENGTH) return undefined;
    items.push(key);
  }
  return `[${items.join(',')}]`;
}

/**
 * The key of an options object made of data only: a plain object whose own
 * properties (enumerable or not) are data properties with {@link dataKey}
 * values, at most {@link MAX_KEY_LENGTH} characters; `undefined` otherwise.
 * Equal keys are equal configurations.
 */
function contentKeyOf(options: object): string | undefined {
  const prototype: unknown = Object.getPrototypeOf(options);
  if (prototype !== Object.prototype && prototype !== null) return undefined;
  let key = '';
  for (const name of Object.getOwnPropertyNames(options)) {
    const property = Object.getOwnPropertyDescriptor(options, name) as PropertyDescriptor;
    if (!('value' in property)) return undefined;
    const value = dataKey(property.value, true);
    if (value === undefined) return undefined;
    key += `${JSON.stringify(name)}:${value};`;
    if (key.length > MAX_KEY_LENGTH) return undefined;
  }
  return key;
}

/**
 * The policies of an options delegate's answers, each compiled once: an
 * answer of data only (strings, numbers, booleans, RegExps, arrays of them:
 * `{ origin: A, credentials: true }` written anew per request) by its
 * content ({@link contentKeyOf}; at most {@link MAX_KEYED_ANSWERS} remembered),
 * any other (holding a function, a verifier, an object, an array of more
 * than {@link MAX_COMPARED_ITEMS} items) by object, and again whenever
 * anything it holds changed since, every item of every array and the fields
 * of nested plain objects included ({@link walkContents}): a delegate that
 * writes the request's Origin into one shared object, or an application
 * that edits its shared answer in place (an origin of a long list removed,
 * another put in its place), is judged on what the answer holds now, not on
 * what it held first (see delegate-guard.ts).
 * `undefined` is no options, as `ampCors()`.
 *
 * @param entry - the entry point named in error messages
 * @returns the policy of a delegate's answer; throws AmpCorsError for an invalid one
 */
export function corsPackagePolicies(entry: string): (options: CorsPackageOptions | undefined) => CorsPackagePolicy {
  const byContent = new Map<string, CorsPackagePolicy>();
  const byObject = new WeakMap<object, { readonly configured: CorsPackagePolicy; readonly contents: readonly unknown[] }>();
  let none: CorsPackagePolicy | undefined;
  return (options) => {
    if (typeof options !== 'object' || options === null)
      return options === undefined ? (none ??= createCorsPackagePolicy(undefined, entry)) : createCorsPackagePolicy(options, entry);
    const key = contentKeyOf(options);
    if (key !== undefined) {
      let configured = byContent.get(key);
      if (configured === undefined) {
        configured = createCorsPackagePolicy(options, entry);
        if (byContent.size >= MAX_KEYED_ANSWERS) byContent.clear();
        byContent.set(key, configured);
      }
      return configured;
    }
    const known = byObject.get(options);
    if (known !== undefined && holdsContents(options, known.contents)) return known.configured;
    const contents = contentsOf(options);
    const configured = createCorsPackagePolicy(options, entry);
    byObject.set(options, { configured, contents });
    return configured;
  };
}
