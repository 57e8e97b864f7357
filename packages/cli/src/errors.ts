/**
 * The exit codes of `ampcors` and the errors that end a command with one
 * (a module of its own, imported by every other).
 */
import { isAmpCorsError } from '@ampcors/core';

/** Exit codes of the `ampcors` command (documented in `--help` and the README). */
export const EXIT = {
  /** Success; `check`: every origin allowed. */
  ok: 0,
  /** A negative answer: `check`, `redis check` or `explain --publishers` denied an origin; `reverse` or `explain` found no publisher domain. */
  denied: 1,
  /** Usage error: unknown command or option, missing argument. */
  usage: 2,
  /** Bad input: an invalid domain or URL, an origin that does not parse, an invalid allow-set or configuration. */
  badInput: 3,
  /** A file could not be read or written. */
  unreadableFile: 4,
  /** A service the command needs (Redis) could not be reached or did not answer in time. */
  unavailable: 5,
  /** An optional package the command needs is not installed (`redis` needs `@ampcors/redis`). */
  missingPackage: 6,
} as const;

/** What each exit code means in the main `--help` (a command lists its own in its `exitCodes`). */
export const EXIT_MEANINGS: Readonly<Record<number, string>> = {
  [EXIT.ok]: 'ok (check: every origin allowed)',
  [EXIT.denied]: 'negative answer (check, redis check, explain --publishers: an origin denied; reverse, explain: no publisher domain)',
  [EXIT.usage]: 'usage error',
  [EXIT.badInput]: 'bad input (invalid domain or URL; an origin that does not parse; invalid allow-set or configuration)',
  [EXIT.unreadableFile]: 'a file could not be read or written',
  [EXIT.unavailable]: 'Redis unavailable (redis)',
  [EXIT.missingPackage]: 'an optional package is missing (redis: @ampcors/redis)',
};

/**
 * An error that ends a command: its exit code, a stable `code` for `--json`
 * (`{"error": {"code", "message"}}`) and a message for stderr.
 */
export class CliError extends Error {
  /**
   * @param exit - the exit code ({@link EXIT})
   * @param code - stable code: an `AmpCorsError` code, or `usage`, `unreadable-file`, `unwritable-file`, `redis-unavailable`, `missing-package`
   * @param message - what went wrong, shown after `ampcors: `
   */
  constructor(
    readonly exit: number,
    readonly code: string,
    message: string,
  ) {
    super(message);
    this.name = 'CliError';
  }
}

/** A wrong invocation (exit code 2). */
export class UsageError extends CliError {
  /** @param message - what was wrong, shown on stderr */
  constructor(message: string) {
    super(EXIT.usage, 'usage', message);
    this.name = 'UsageError';
  }
}

/** A configuration the core refused (a publisher list, an allow-set…): exit 3 with the core's code. */
export function badConfiguration(error: unknown): CliError {
  if (isAmpCorsError(error)) return new CliError(EXIT.badInput, error.code, error.message);
  throw error;
}
