import { constants, type Stats } from 'node:fs';
import { type FileHandle, open, stat } from 'node:fs/promises';
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

/**
 * The largest allow-set file `check --allow-set` reads: 2 GiB. Above every
 * set `compile` writes for the 10-million-domain scale target: the default
 * (Rice, 16-byte hashes) takes about 26 bytes per domain (260 MB for 10M),
 * and even the largest form, raw 32-byte hashes of the 5 prefix forms a
 * domain can have, takes 160 bytes per domain (1.6 GB for 10M).
 */
export const MAX_ALLOW_SET_BYTES = 2 * 1024 ** 3;

/**
 * The largest `--publishers @file` / `--origins @file` list: 64 MiB, about
 * three million domains of 20 characters. `createVerifier` holds every
 * entry in memory; a larger list belongs in a compiled allow-set.
 */
export const MAX_LIST_BYTES = 64 * 1024 ** 2;

/** A byte count in words: `2 GiB`, `64 MiB`, else bytes. */
export function describeBytes(bytes: number): string {
  for (const [unit, size] of [
    ['GiB', 1024 ** 3],
    ['MiB', 1024 ** 2],
    ['KiB', 1024],
  ] as const) {
    if (bytes >= size && bytes % size === 0) return `${bytes / size} ${unit}`;
  }
  return `${bytes} bytes`;
}

/** The `--help` line on `@file` lists (check, explain). */
export const LIST_FILE_HELP = `An @file is a regular file (a pipe or device is refused) of at most ${describeBytes(MAX_LIST_BYTES)}, one entry per line.`;

/** What a file that is not a regular one is, for the refusal. */
function kindOf(stats: Stats): string {
  if (stats.isFIFO()) return 'a FIFO or pipe';
  if (stats.isCharacterDevice()) return 'a character device';
  if (stats.isBlockDevice()) return 'a block device';
  if (stats.isSocket()) return 'a socket';
  return 'not a regular file';
}

/** The refusal of a file that is not a regular one (a directory keeps the system's words). */
function notRegular(stats: Stats, action: 'read' | 'write'): Error {
  if (stats.isDirectory()) return Object.assign(new Error('it is a directory'), { code: 'EISDIR' });
  const hint = action === 'read' ? 'copy it to a file first' : 'write -o - and redirect stdout instead';
  return new Error(`it is ${kindOf(stats)}, not a regular file (${hint})`);
}

/**
 * Reads a whole regular file, never more than `limit` bytes. Opens without
 * blocking (`O_NONBLOCK`: a FIFO without a writer does not hang the open),
 * checks the open handle (so the file checked is the file read): anything
 * but a regular file (a FIFO, `/dev/zero`, a terminal, a socket, a
 * directory) is refused before a byte is read, since it may never end; a
 * size over the limit is refused from the handle's size, before a byte is
 * read. A file that grows while it is read is refused too, so no read ever
 * passes the limit, and the read ends with the file.
 *
 * @param limit - the most bytes accepted ({@link MAX_ALLOW_SET_BYTES}, {@link MAX_LIST_BYTES})
 * @param what - what the file is for, in the over-the-limit message (`--allow-set`)
 * @throws FileError (exit 4) for a file that cannot be read, is not a regular file, or is over the limit.
 */
export async function readRegularFile(path: string, cwd: string, limit: number, what: string): Promise<Uint8Array> {
  let handle: FileHandle;
  try {
    handle = await open(resolve(cwd, path), constants.O_RDONLY | constants.O_NONBLOCK);
  } catch (error) {
    throw new FileError('read', path, error);
  }
  try {
    const stats = await handle.stat();
    if (!stats.isFile()) throw notRegular(stats, 'read');
    if (stats.size > limit) throw new Error(`${stats.size} bytes is over the ${describeBytes(limit)} limit of ${what}`);
    const bytes = new Uint8Array(stats.size);
    let filled = 0;
    while (filled < bytes.length) {
      // At most 64 MiB a call: one read of 2 GiB or more is past what Node reads at once.
      const { bytesRead } = await handle.read(bytes, filled, Math.min(bytes.length - filled, 64 * 1024 ** 2), filled);
      if (bytesRead === 0) return bytes.subarray(0, filled);
      filled += bytesRead;
    }
    // One byte more means the file grew after its size was taken.
    const { bytesRead } = await handle.read(new Uint8Array(1), 0, 1, filled);
    if (bytesRead !== 0) throw new Error('it grew while it was read (or its size was not the one the system reported)');
    return bytes;
  } catch (error) {
    throw new FileError('read', path, error);
  } finally {
    await handle.close().catch(() => undefined);
  }
}

/**
 * Writes `bytes` to a regular file, created if missing (a symbolic link is
 * followed, as a shell redirection does). Refuses, without writing, what is
 * not a regular file: a FIFO (the write would wait for a reader), a device,
 * a socket, a directory; `-o -` is the way to a pipe.
 *
 * @throws FileError (exit 4, `cannot write …`).
 */
export async function writeRegularFile(path: string, cwd: string, bytes: Uint8Array): Promise<void> {
  const full = resolve(cwd, path);
  let handle: FileHandle;
  try {
    // No O_TRUNC: what is there is emptied only once it is known to be a regular file.
    handle = await open(full, constants.O_WRONLY | constants.O_CREAT | constants.O_NONBLOCK, 0o666);
  } catch (error) {
    // A FIFO without a reader (or a device without its device) cannot be opened without blocking: ENXIO.
    const stats = (error as NodeJS.ErrnoException).code === 'ENXIO' ? await stat(full).catch(() => undefined) : undefined;
    throw new FileError('write', path, stats === undefined || stats.isFile() ? error : notRegular(stats, 'write'));
  }
  try {
    const stats = await handle.stat();
    if (!stats.isFile()) throw notRegular(stats, 'write');
    await handle.truncate(0);
    await handle.writeFile(bytes);
  } catch (error) {
    throw new FileError('write', path, error);
  } finally {
    await handle.close().catch(() => undefined);
  }
}

/**
 * The lines of a list file (at most {@link MAX_LIST_BYTES}, read by
 * {@link readRegularFile}): trimmed, blank lines and `#` comments skipped,
 * each at most {@link MAX_LINE_LENGTH} characters ({@link readLines}).
 */
async function listFileLines(path: string, cwd: string, option: string): Promise<string[]> {
  const bytes = await readRegularFile(path, cwd, MAX_LIST_BYTES, `${option} @file`);
  const lines: string[] = [];
  for await (const { text } of readLines(
    (async function* () {
      yield bytes;
    })(),
    { comments: true, name: path },
  )) {
    lines.push(text);
  }
  return lines;
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
 * @throws FileError for an `@path` that cannot be read, is not a regular file or is over {@link MAX_LIST_BYTES}; UsageError for `@` alone or a path given as a list.
 */
export async function readListArgument(value: string, cwd: string, option: string, warn: (message: string) => Promise<void>): Promise<string[]> {
  if (value.startsWith('@')) {
    const path = value.slice(1);
    if (path === '') throw new UsageError(`${option} @ needs a file name: ${option} @<file>`);
    return listFileLines(path, cwd, option);
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
