import { AmpCorsError, type AmpCorsErrorCode } from './errors.js';
import { MAX_LISTED_PROBLEMS } from './problem-list.js';

/**
 * How an adapter configuration decides which origins to trust, named by its
 * keys only (issue #15):
 * - `amp`: `publishers`, `origins` or `verifier` (the AMP publisher mode);
 * - `origin-option`: only the adapter's drop-in `origin` option (the
 *   `cors`-compatible mode);
 * - `any-origin`: no options at all, what `cors()` and `@koa/cors()` do by
 *   default: the literal `Access-Control-Allow-Origin: *`, no credentials.
 */
export type ConfigMode = 'amp' | 'origin-option' | 'any-origin';

/** One configuration problem: its error code and a sentence that says how to fix it. */
export interface ConfigProblem {
  readonly code: AmpCorsErrorCode;
  readonly text: string;
}

/** The problems carried by an error that {@link ConfigProblems.throwIfAny} threw, so that an outer check lists them one by one. */
const carried = new WeakMap<AmpCorsError, readonly ConfigProblem[]>();

/**
 * Collects every problem of one configuration, so that all are reported at
 * once in one {@link AmpCorsError}, not only the first.
 */
export class ConfigProblems {
  private readonly list: ConfigProblem[] = [];

  /** Adds a problem. */
  add(code: AmpCorsErrorCode, text: string): void {
    this.list.push({ code, text });
  }

  /** True when a problem was found. */
  get failed(): boolean {
    return this.list.length > 0;
  }

  /**
   * Runs one validation step: its result, or `undefined` when it threw an
   * {@link AmpCorsError} (whose problems are added). Other errors propagate.
   */
  attempt<T>(step: () => T): T | undefined {
    try {
      return step();
    } catch (error) {
      if (!(error instanceof AmpCorsError)) throw error;
      const inner = carried.get(error);
      if (inner !== undefined) this.list.push(...inner);
      else this.add(error.code, error.message);
      return undefined;
    }
  }

  /**
   * Throws one {@link AmpCorsError} naming every problem: one problem keeps
   * its own code and message; several are listed, under the code
   * `unsafe-configuration` when one of them is unsafe, else the first one's.
   *
   * @param entry - the entry point, named before a list (for example `ampCors (@ampcors/express)`)
   * @param named - whether a single problem is named after the entry point too
   */
  throwIfAny(entry: string, named = true): void {
    const [first] = this.list;
    if (first === undefined) return;
    if (this.list.length === 1) {
      const error = new AmpCorsError(first.code, named ? `${entry}: ${first.text}` : first.text);
      carried.set(error, [first]);
      throw error;
    }
    const code = this.list.some((problem) => problem.code === 'unsafe-configuration') ? 'unsafe-configuration' : first.code;
    const listed = this.list.slice(0, MAX_LISTED_PROBLEMS).map((problem) => `  - ${problem.text.replace(/\n/g, '\n    ')}`);
    if (this.list.length > MAX_LISTED_PROBLEMS) listed.push(`  … and ${this.list.length - MAX_LISTED_PROBLEMS} more`);
    const error = new AmpCorsError(code, `${entry}: ${this.list.length} configuration problems:\n${listed.join('\n')}`);
    carried.set(error, [...this.list]);
    throw error;
  }
}

/** Optimal-string-alignment distance (Levenshtein plus adjacent swaps), case-insensitive: `credentails` is one step from `credentials`. */
function editDistance(a: string, b: string): number {
  const x = a.toLowerCase();
  const y = b.toLowerCase();
  const rows: number[][] = [];
  for (let i = 0; i <= x.length; i++) {
    const row: number[] = [i];
    for (let j = 1; j <= y.length; j++) {
      if (i === 0) {
        row.push(j);
        continue;
      }
      const above = rows[i - 1] as number[];
      const cost = x[i - 1] === y[j - 1] ? 0 : 1;
      let best = Math.min((above[j] as number) + 1, (row[j - 1] as number) + 1, (above[j - 1] as number) + cost);
      if (i > 1 && j > 1 && x[i - 1] === y[j - 2] && x[i - 2] === y[j - 1]) best = Math.min(best, ((rows[i - 2] as number[])[j - 2] as number) + 1);
      row.push(best);
    }
    rows.push(row);
  }
  return (rows[x.length] as number[])[y.length] as number;
}

/**
 * The known key closest to `key`, when it is close enough to be a typo (at
 * most a third of its length away, and at most 3 edits) or differs only in
 * case or by a plural `s`; `undefined` otherwise. `aliases` maps other
 * libraries' names (hono's `allowMethods`) to the key meant.
 */
function closestKey(key: string, known: readonly string[], aliases: Readonly<Record<string, string>> = {}): string | undefined {
  const alias = Object.hasOwn(aliases, key) ? aliases[key] : undefined;
  if (alias !== undefined) return alias;
  let best: string | undefined;
  let bestDistance = Infinity;
  for (const candidate of known) {
    const distance = editDistance(key, candidate);
    if (distance < bestDistance) {
      best = candidate;
      bestDistance = distance;
    }
  }
  const limit = Math.min(3, Math.max(1, Math.floor(key.length / 3)));
  return bestDistance <= limit ? best : undefined;
}

/** What {@link checkOptionKeys} needs to know about an entry point. */
export interface OptionKeysSpec {
  /** The entry point, as errors name it (for example `ampCors (@ampcors/express)`). */
  readonly entry: string;
  /** Every key the entry point reads. */
  readonly keys: readonly string[];
  /** The drop-in `origin` key, when the entry point has one. */
  readonly originKey?: string;
  /** Other libraries' names for known keys, for the "did you mean" of an unknown key. */
  readonly aliases?: Readonly<Record<string, string>>;
  /** How to allow no cross-origin request on purpose with this entry point (one sentence). */
  readonly allowNothing: string;
  /** How to allow every origin, without credentials, on purpose with this entry point (one sentence). */
  readonly allowAny: string;
}

/** The keys that name the AMP publisher mode. */
const AMP_KEYS = ['publishers', 'origins', 'verifier'] as const;

function has(options: object, key: string): boolean {
  return Object.hasOwn(options, key);
}

function isEmptyList(value: unknown): boolean {
  return Array.isArray(value) && value.length === 0;
}

/**
 * Checks the keys of an adapter's options before any value is read, and
 * names the mode they ask for (issue #15). Problems are added to `problems`:
 *
 * 1. `undefined` (no options) or an object without keys is the
 *    `any-origin` mode; any other non-object is a problem.
 * 2. An unknown key is a problem naming the closest known key.
 * 3. A known key that is present must hold a value: `publishers: undefined`
 *    (an unset environment variable) is a problem, never "not given".
 * 4. `publishers: []` (or `origins: []`) with no other origin source
 *    would deny every cross-origin request: a problem saying how to allow
 *    nothing, or everything, on purpose.
 * 5. The mode: `publishers`, `origins` or `verifier` name the AMP mode,
 *    else the `origin` key the `cors`-compatible mode; keys that name
 *    neither (`{ credentials: false }`) are a problem, not a silent mode.
 *
 * Only own enumerable string keys count, as the adapters copy them.
 *
 * @param reportUnnamed - whether options naming no mode are a problem here (core's own entry words it itself)
 * @returns the mode the keys name, `'none'` when they name none (meaningful only when no problem was added)
 */
export function checkOptionKeys(options: unknown, spec: OptionKeysSpec, problems: ConfigProblems, reportUnnamed = true): ConfigMode | 'none' {
  // 1. No options at all.
  if (options === undefined) return 'any-origin';
  if (typeof options !== 'object' || options === null || Array.isArray(options)) {
    const shown = options === null ? 'null' : Array.isArray(options) ? 'an array' : typeof options;
    problems.add('invalid-option', `the options must be an object, not ${shown}: for example { publishers: ['example.com'] }. ${spec.allowAny}`);
    return 'none';
  }
  const keys = Object.keys(options);
  if (keys.length === 0) return 'any-origin';
  // 2. Unknown keys.
  let typoOfModeKey = false;
  for (const key of keys) {
    if (spec.keys.includes(key)) continue;
    const near = closestKey(key, spec.keys, spec.aliases);
    if (near !== undefined && (near === spec.originKey || (AMP_KEYS as readonly string[]).includes(near))) typoOfModeKey = true;
    const hint = near === undefined ? `the known options are: ${spec.keys.join(', ')}` : `did you mean \`${near}\`?`;
    problems.add('invalid-option', `unknown option \`${key.slice(0, 60)}\` (${hint})`);
  }
  // 3. Present keys without a value.
  const record = options as Record<string, unknown>;
  for (const key of keys) {
    if (record[key] !== undefined || !spec.keys.includes(key)) continue;
    const fix =
      key === 'publishers'
        ? `give the publisher domains, for example ['example.com'] (an unset environment variable?). ${spec.allowNothing} ${spec.allowAny}`
        : `give it a value or leave the key out`;
    problems.add('invalid-option', `\`${key}\` is present but undefined: ${fix}`);
  }
  // 4. An origin source that names nothing.
  const originKey = spec.originKey;
  const other = has(options, 'verifier') || (originKey !== undefined && has(options, originKey));
  const publishers = record['publishers'];
  const origins = record['origins'];
  const nonEmpty = (value: unknown) => Array.isArray(value) && value.length > 0;
  if (!other && !nonEmpty(publishers) && !nonEmpty(origins) && (isEmptyList(publishers) || isEmptyList(origins))) {
    problems.add(
      'invalid-option',
      `${isEmptyList(publishers) ? 'publishers' : 'origins'} is empty, which would deny every cross-origin request without a word. ${spec.allowNothing} ${spec.allowAny}`,
    );
  }
  // 5. The mode.
  if (AMP_KEYS.some((key) => has(options, key))) return 'amp';
  if (originKey !== undefined && has(options, originKey)) return 'origin-option';
  if (!typoOfModeKey && reportUnnamed) {
    const named = originKey === undefined ? '`publishers`, `origins` or `verifier`' : `\`publishers\`, \`origins\`, \`verifier\` or \`${originKey}\``;
    problems.add('invalid-option', `the options name no origin to trust (give ${named}; for example { publishers: ['example.com'] }). ${spec.allowAny}`);
  }
  return 'none';
}

/** The peers' names (`@koa/cors`, `hono/cors`) of three CORS options and ampcors's names for them. */
const PEER_ALIASES = [
  ['allowMethods', 'methods'],
  ['allowHeaders', 'allowedHeaders'],
  ['exposeHeaders', 'exposedHeaders'],
] as const;

/**
 * Adds a problem for each option given under both a peer's name and
 * ampcors's (`allowMethods` and `methods`): which one was meant cannot be guessed.
 */
export function checkPeerAliases(options: object, problems: ConfigProblems): void {
  const given = options as Readonly<Record<string, unknown>>;
  for (const [alias, name] of PEER_ALIASES) {
    if (given[alias] !== undefined && given[name] !== undefined) problems.add('invalid-option', `give ${name} or its alias ${alias}, not both`);
  }
}
