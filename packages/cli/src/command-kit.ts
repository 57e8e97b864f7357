/**
 * The parts every `ampcors` command shares: exit codes, the command-table
 * types, line-by-line input handling and verdict formatting.
 */
import { type AmpCache, CACHES, findCache, isAmpCorsError, parseOrigin, type Verdict } from '@ampcors/core';
import { EXIT, UsageError } from './errors.js';
import { type InputLine, readLines } from './input-lines.js';
import { type InputStream, type OutputStream, writeJson, writeLine, writeLines } from './output.js';
import type { ProgressBar } from './progress-bar.js';

export { badConfiguration, CliError, EXIT, EXIT_MEANINGS, UsageError } from './errors.js';

/** The streams and directory a command runs with. */
export interface CommandIo {
  readonly stdin: InputStream;
  readonly stdout: OutputStream;
  readonly stderr: OutputStream;
  readonly cwd: string;
}

/** What a command receives: its parsed arguments and the streams. */
export interface CommandContext {
  /** Positional arguments after the command name. */
  readonly positionals: readonly string[];
  /** Parsed options (see the command's `options`). */
  readonly values: Readonly<Record<string, string | boolean | (string | boolean)[] | undefined>>;
  /** `--json`: write one JSON object per line. */
  readonly json: boolean;
  readonly io: CommandIo;
}

/** An option of a command, in `node:util` `parseArgs` form, with its help text. */
export interface CommandOption {
  readonly type: 'string' | 'boolean';
  readonly short?: string;
  readonly multiple?: boolean;
  /** Placeholder shown in help, e.g. `<id>`. */
  readonly arg?: string;
  /** One-line description. */
  readonly description: string;
}

/** One entry of the command table: add an entry to add a command (help follows). */
export interface Command {
  /** One line for the command list. */
  readonly summary: string;
  /** Synopsis after `ampcors`, e.g. `prefix <domain>`. */
  readonly usage: string;
  /** Options besides the common `--json` and `--help`. */
  readonly options: Readonly<Record<string, CommandOption>>;
  /** Example invocations for `--help`. */
  readonly examples: readonly string[];
  /** More lines for `--help`, shown after the summary (e.g. the subcommands). */
  readonly details?: readonly string[];
  /** The exit codes this command can end with, and what each means for it (its `--help` lists these only). */
  readonly exitCodes: Readonly<Record<number, string>>;
  /** Runs the command; resolves to its exit code. */
  run(context: CommandContext): Promise<number>;
}

/** The result of one input line of a line-by-line command. */
export interface LineOutcome {
  readonly code: number;
  /** Lines for stdout in text mode. */
  readonly text?: readonly string[];
  /** A message for stderr in text mode. */
  readonly message?: string;
  /** The object written in `--json` mode. */
  readonly json: Record<string, unknown>;
}

/** The `--json` line of an input that is bad input: `{"input", "error": {"code", "message", …}}`. */
export function inputError(input: string, code: string, message: string, extra: Record<string, unknown> = {}): Record<string, unknown> {
  return { input, error: { code, message, ...extra } };
}

/** The outcome of an input whose handling threw: an ampcors error is bad input (exit 3); anything else is rethrown. */
export function failure(input: string, error: unknown): LineOutcome {
  if (isAmpCorsError(error)) {
    return { code: EXIT.badInput, message: `${input}: ${error.message}`, json: inputError(input, error.code, error.message) };
  }
  throw error;
}

/**
 * The origin a mistyped one was probably meant to be: the same text up to the
 * end of the host and port, lowercased, when that alone is a valid origin —
 * so an origin that differs from a valid one only by case, a trailing slash,
 * a path, query or fragment gets a suggestion, and nothing else does.
 *
 * @example suggestOrigin('https://Example.com/') // 'https://example.com'
 */
export function suggestOrigin(input: string): string | undefined {
  const match = /^([A-Za-z][A-Za-z0-9+.-]*:\/\/[^/?#\\]*)(?:[/?#\\].*)?$/s.exec(input);
  if (!match) return undefined;
  const candidate = (match[1] as string).toLowerCase();
  return candidate !== input && parseOrigin(candidate).ok ? candidate : undefined;
}

/**
 * The outcome for an origin that does not parse as an `Origin` header (exit 3,
 * the same in every command that takes origins), with a "did you mean" when
 * {@link suggestOrigin} has one; `undefined` for an origin that parses, and
 * for `null` (what browsers send for an opaque origin: a denial, not a typo).
 */
export function malformedOrigin(input: string): LineOutcome | undefined {
  const parsed = parseOrigin(input);
  if (parsed.ok || parsed.reason === 'null-origin') return undefined;
  const suggestion = suggestOrigin(input);
  const message = `not a valid Origin (${parsed.reason}: ${parsed.detail})`;
  return {
    code: EXIT.badInput,
    message: `${input}: ${message}${suggestion === undefined ? '' : `; did you mean ${suggestion}?`}`,
    json: inputError(input, 'invalid-origin', message, { reason: parsed.reason, ...(suggestion === undefined ? {} : { suggestion }) }),
  };
}

/** Options of {@link forEachInput}. */
export interface ForEachInputOptions {
  /** Counts the inputs on stderr (`check`); cleared before anything else is written. */
  readonly progress?: ProgressBar;
}

/**
 * Runs `handle` on every input: the positionals, or — when there are none or
 * the only one is `-` — each line of stdin, streamed. Text results go to
 * stdout, problems to stderr, control characters escaped; with `--json` one
 * object per input goes to stdout. The exit code is the highest of the inputs' codes.
 */
export async function forEachInput(
  context: CommandContext,
  what: string,
  handle: (input: string) => LineOutcome | Promise<LineOutcome>,
  options: ForEachInputOptions = {},
): Promise<number> {
  const { positionals, io, json } = context;
  const { progress } = options;
  const fromStdin = positionals.length === 0 || (positionals.length === 1 && positionals[0] === '-');
  if (fromStdin && positionals.length === 0 && io.stdin.isTTY === true) {
    throw new UsageError(`no ${what} given: pass one as an argument, or pipe one per line on stdin`);
  }
  let code: number = EXIT.ok;
  let count = 0;
  const inputs: AsyncIterable<InputLine> | readonly InputLine[] = fromStdin
    ? readLines(io.stdin)
    : positionals.map((text, index) => ({ text, lineNumber: index + 1 }));
  for await (const { text } of inputs) {
    let outcome: LineOutcome;
    try {
      outcome = await handle(text);
    } catch (error) {
      outcome = failure(text, error);
    }
    code = Math.max(code, outcome.code);
    const show = outcome.text ?? [];
    // The bar shares stderr (and, when stdout is the same terminal, the screen) with what is written now.
    if (progress && ((!json && outcome.message !== undefined) || io.stdout.isTTY === true)) progress.clear();
    if (json) {
      await writeJson(io.stdout, outcome.json);
    } else {
      await writeLines(io.stdout, show);
      if (outcome.message !== undefined) await writeLine(io.stderr, `ampcors: ${outcome.message}`);
    }
    progress?.update(0, ++count);
  }
  progress?.clear();
  return code;
}

/** The value of a string option, or `undefined` when it was not given. */
export function stringOption(context: CommandContext, name: string): string | undefined {
  const value = context.values[name];
  return typeof value === 'string' ? value : undefined;
}

/**
 * The cache named by `--cache`, or `undefined` when it was not given.
 *
 * @throws UsageError for an unknown cache id.
 */
export function cacheOption(context: CommandContext): AmpCache | undefined {
  const id = stringOption(context, 'cache');
  if (id === undefined) return undefined;
  const cache = findCache(id);
  if (!cache) throw new UsageError(`unknown cache ${JSON.stringify(id)} (known: ${CACHES.map((c) => c.id).join(', ')})`);
  return cache;
}

/** The `--cache <id>` option of commands that can be limited to one cache. */
export const CACHE_OPTION: CommandOption = { type: 'string', arg: '<id>', description: `one cache only (${CACHES.map((c) => c.id).join(', ')}; default: all)` };

/** A verdict as JSON: the cache by its id. */
export function verdictJson(verdict: Verdict): Record<string, unknown> {
  const { cache, ...rest } = verdict;
  return cache === undefined ? { ...rest } : { ...rest, cache: cache.id };
}

/** A verdict as one line of text: the decision, its reason code, the origin and why. */
export function verdictText(verdict: Verdict & { detail?: string }): string {
  const about: string[] = [];
  if (verdict.publisherDomain !== undefined) about.push(`publisher ${verdict.publisherDomain}`);
  if (verdict.cache !== undefined) about.push(`cache ${verdict.cache.id}`);
  if (verdict.detail !== undefined) about.push(verdict.detail);
  return `${verdict.allowed ? 'allowed' : 'denied'} ${verdict.reason} ${verdict.origin ?? '(no origin)'}${about.length > 0 ? ` — ${about.join('; ')}` : ''}`;
}
