import { readFile, stat } from 'node:fs/promises';
import { resolve } from 'node:path';
import { CliError, EXIT, UsageError } from './errors.js';

/** Where a line came from, for error messages. */
export interface InputLine {
  /** The line, trimmed, never empty. */
  readonly text: string;
  /** 1-based line number in its source. */
  readonly lineNumber: number;
}

/**
 * The longest line {@link readLines} accepts, in characters: far above any
 * domain (253), origin (300) or URL a command takes, and a bound on what a
 * stream without newlines can make it hold.
 */
export const MAX_LINE_LENGTH = 65_536;

/** Options of {@link readLines}. */
export interface ReadLinesOptions {
  /** Also skip lines starting with `#` (lists of domains). */
  readonly comments?: boolean;
  /** Called with the byte count of each chunk read (progress). */
  readonly onBytes?: (bytes: number) => void;
  /** The input's name in errors (default: the path of a file stream, else `stdin`). */
  readonly name?: string;
}

/**
 * `text` without the ASCII spaces, tabs and carriage returns at either end.
 * Not `String.prototype.trim`, which also drops Unicode spaces (U+00A0,
 * U+2028, U+FEFF…): an `Origin` sent as `https://example.com\u00A0` is
 * denied by every middleware, so the CLI judges those characters too.
 */
export function trimAsciiSpace(text: string): string {
  let start = 0;
  let end = text.length;
  while (start < end && isAsciiSpace(text.charCodeAt(start))) start++;
  while (end > start && isAsciiSpace(text.charCodeAt(end - 1))) end--;
  return start === 0 && end === text.length ? text : text.slice(start, end);
}

function isAsciiSpace(code: number): boolean {
  return code === 0x20 || code === 0x09 || code === 0x0d;
}

/** The name of a source for errors: a file stream's `path`, else `stdin`. */
function sourceName(source: AsyncIterable<string | Uint8Array>): string {
  const path = (source as { readonly path?: unknown }).path;
  return typeof path === 'string' ? path : 'stdin';
}

/**
 * Splits a stream of chunks into trimmed lines (LF or CRLF), skipping blank
 * lines, without holding more than one line at a time: a million inputs
 * stream through in constant memory. Linear in the input: each chunk is
 * scanned once, and the start of a line still open is kept as pieces,
 * joined once when its newline comes.
 *
 * @throws FileError (`cannot read <name>: line <n> is longer than …`) as
 * soon as a line passes {@link MAX_LINE_LENGTH} characters: a stream without
 * newlines is refused after one line's worth, never held whole.
 */
export async function* readLines(source: AsyncIterable<string | Uint8Array>, options: ReadLinesOptions = {}): AsyncGenerator<InputLine> {
  const decoder = new TextDecoder();
  /** The open line's pieces (it started in an earlier chunk), and their length. */
  const open: string[] = [];
  let openLength = 0;
  let lineNumber = 0;
  const tooLong = () =>
    new FileError(
      'read',
      options.name ?? sourceName(source),
      new Error(`line ${lineNumber + 1} is longer than ${MAX_LINE_LENGTH} characters (one entry per line is expected)`),
    );
  const emit = function* (raw: string): Generator<InputLine> {
    lineNumber++;
    const text = trimAsciiSpace(raw);
    if (text === '' || (options.comments === true && text.startsWith('#'))) return;
    yield { text, lineNumber };
  };
  // Scans only the new text: the open line is never searched again.
  const take = function* (text: string): Generator<InputLine> {
    let start = 0;
    for (let newline = text.indexOf('\n'); newline >= 0; newline = text.indexOf('\n', start)) {
      if (openLength + newline - start > MAX_LINE_LENGTH) throw tooLong();
      const piece = text.slice(start, newline);
      const raw = open.length === 0 ? piece : open.join('') + piece;
      open.length = 0;
      openLength = 0;
      yield* emit(raw);
      start = newline + 1;
    }
    if (start === text.length) return;
    openLength += text.length - start;
    if (openLength > MAX_LINE_LENGTH) throw tooLong();
    open.push(start === 0 ? text : text.slice(start));
  };
  for await (const chunk of source) {
    if (typeof chunk === 'string') {
      options.onBytes?.(chunk.length);
      yield* take(chunk);
    } else {
      options.onBytes?.(chunk.byteLength);
      yield* take(decoder.decode(chunk, { stream: true }));
    }
  }
  yield* take(decoder.decode());
  if (open.length > 0) yield* emit(open.join(''));
}

/** The system's reasons, in words (never a raw `ENOENT`). */
const REASONS: Readonly<Record<string, string>> = {
  ENOENT: 'no such file or directory',
  EACCES: 'permission denied',
  EPERM: 'operation not permitted',
  EISDIR: 'it is a directory',
  ENOTDIR: 'a part of the path is not a directory',
  EROFS: 'read-only file system',
  ENOSPC: 'no space left on the device',
  EDQUOT: 'disk quota exceeded',
  EFBIG: 'file too large',
  EMFILE: 'too many open files',
  ENFILE: 'too many open files',
  ENAMETOOLONG: 'file name too long',
  ELOOP: 'too many levels of symbolic links',
  EBUSY: 'the file is busy',
  EIO: 'input/output error',
  EINVAL: 'invalid argument',
  EEXIST: 'file exists',
  ETXTBSY: 'the file is busy',
};

/**
 * Why a file operation failed, in words: the known system codes by name, else
 * the system's message without its code and the path it repeats.
 */
export function reasonOf(error: unknown): string {
  const code = (error as NodeJS.ErrnoException | undefined)?.code;
  if (typeof code === 'string' && REASONS[code] !== undefined) return REASONS[code] as string;
  const message = error instanceof Error ? error.message : String(error);
  const words = message.replace(/^[A-Z][A-Z0-9_]*: /, '').replace(/, [a-z]+ '.*'$/s, '');
  return words === '' ? 'unknown error' : words;
}

/** A file that cannot be read (`cannot read <path>: <reason>`) or written (`cannot write …`): exit 4. */
export class FileError extends CliError {
  /**
   * @param action - what failed
   * @param path - the file as given
   * @param error - the system's error
   */
  constructor(action: 'read' | 'write', path: string, error: unknown) {
    super(EXIT.unreadableFile, action === 'read' ? 'unreadable-file' : 'unwritable-file', `cannot ${action} ${path}: ${reasonOf(error)}`);
    this.name = 'FileError';
  }
}

/** Reads a whole file as bytes, turning any failure into a {@link FileError}. */
export async function readFileBytes(path: string, cwd: string): Promise<Uint8Array> {
  try {
    return await readFile(resolve(cwd, path));
  } catch (error) {
    throw new FileError('read', path, error);
  }
}

/** The lines of a list file: trimmed, blank lines and `#` comments skipped. */
async function listFileLines(path: string, cwd: string): Promise<string[]> {
  const text = new TextDecoder().decode(await readFileBytes(path, cwd));
  return text
    .split('\n')
    .map(trimAsciiSpace)
    .filter((line) => line !== '' && !line.startsWith('#'));
}

/**
 * Resolves a `--publishers` / `--origins` value, never guessing: `@path` is a
 * file (one entry per line, blank lines and `#` comments skipped); anything
 * else is a comma-separated list. A list item with a path separator (other
 * than in `scheme://`) is refused with a hint to write `@`; a value that is
 * also the name of a file here gets a warning that it was read as a list.
 *
 * @param option - the option's name, for messages (`--publishers`)
 * @param warn - writes a warning line
 * @throws FileError for an `@path` that cannot be read; UsageError for `@` alone or a path given as a list.
 */
export async function readListArgument(value: string, cwd: string, option: string, warn: (message: string) => Promise<void>): Promise<string[]> {
  if (value.startsWith('@')) {
    const path = value.slice(1);
    if (path === '') throw new UsageError(`${option} @ needs a file name: ${option} @<file>`);
    return listFileLines(path, cwd);
  }
  const items = value
    .split(',')
    .map(trimAsciiSpace)
    .filter((item) => item !== '');
  if (/[/\\]/.test(value.replaceAll('://', ''))) {
    throw new UsageError(`${option} ${value} is read as a comma-separated list, and a list item has no "/"; to read a file, write ${option} @${value}`);
  }
  const isFile = await stat(resolve(cwd, value)).then(
    (s) => s.isFile(),
    () => false,
  );
  if (isFile) await warn(`${option} ${value} is read as a list, not as the file of that name; to read the file, write ${option} @${value}`);
  return items;
}
