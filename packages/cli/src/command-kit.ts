/**
 * The parts every `ampcors` command shares: exit codes, the command-table
 * types, line-by-line input handling and verdict formatting.
 */
import { type AmpCache, CACHES, findCache, isAmpCorsError, type Verdict } from '@ampcors/core';
import { type InputLine, readLines } from './input-lines.js';
import { type InputStream, type OutputStream, writeLine } from './output.js';

/** Exit codes of the `ampcors` command (documented in `--help` and the README). */
export const EXIT = {
  /** Success; `check`: every origin allowed. */
  ok: 0,
  /** A negative answer: `check`, `redis check` or `explain --publishers` denied an origin; `reverse` or `explain` found no publisher domain. */
  denied: 1,
  /** Usage error: unknown command or option, missing argument. */
  usage: 2,
  /** Bad input: an invalid domain, URL or origin, an invalid allow-set or configuration. */
  badInput: 3,
  /** A file could not be read or written. */
  unreadableFile: 4,
  /** A service the command needs (Redis) could not be reached or did not answer in time. */
  unavailable: 5,
} as const;

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
  /** Runs the command; resolves to its exit code. */
  run(context: CommandContext): Promise<number>;
}

/** A wrong invocation (exit code 2). */
export class UsageError extends Error {
  /** @param message - what was wrong, shown on stderr */
  constructor(message: string) {
    super(message);
    this.name = 'UsageError';
  }
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

/** The outcome of an input whose handling threw: an ampcors error is bad input (exit 3); anything else is rethrown. */
export function failure(input: string, error: unknown): LineOutcome {
  if (isAmpCorsError(error)) {
    return { code: EXIT.badInput, message: `${input}: ${error.message}`, json: { input, error: { code: error.code, message: error.message } } };
  }
  throw error;
}

/**
 * Runs `handle` on every input: the positionals, or — when there are none or
 * the only one is `-` — each line of stdin, streamed. Text results go to
 * stdout, problems to stderr; with `--json` one object per input goes to
 * stdout. The exit code is the highest of the inputs' codes.
 */
export async function forEachInput(context: CommandContext, what: string, handle: (input: string) => LineOutcome | Promise<LineOutcome>): Promise<number> {
  const { positionals, io, json } = context;
  const fromStdin = positionals.length === 0 || (positionals.length === 1 && positionals[0] === '-');
  if (fromStdin && positionals.length === 0 && io.stdin.isTTY === true) {
    throw new UsageError(`no ${what} given: pass one as an argument, or pipe one per line on stdin`);
  }
  let code: number = EXIT.ok;
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
    if (json) {
      await writeLine(io.stdout, JSON.stringify(outcome.json));
    } else {
      for (const line of outcome.text ?? []) await writeLine(io.stdout, line);
      if (outcome.message !== undefined) await writeLine(io.stderr, `ampcors: ${outcome.message}`);
    }
  }
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
