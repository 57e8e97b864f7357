import { readFile, stat } from 'node:fs/promises';
import { resolve } from 'node:path';

/** Where a line came from, for error messages. */
export interface InputLine {
  /** The line, trimmed, never empty. */
  readonly text: string;
  /** 1-based line number in its source. */
  readonly lineNumber: number;
}

/** Options of {@link readLines}. */
export interface ReadLinesOptions {
  /** Also skip lines starting with `#` (lists of domains). */
  readonly comments?: boolean;
  /** Called with the byte count of each chunk read (progress). */
  readonly onBytes?: (bytes: number) => void;
}

/**
 * Splits a stream of chunks into trimmed lines (LF or CRLF), skipping blank
 * lines, without holding more than one line at a time: a million inputs
 * stream through in constant memory.
 */
export async function* readLines(source: AsyncIterable<string | Uint8Array>, options: ReadLinesOptions = {}): AsyncGenerator<InputLine> {
  const decoder = new TextDecoder();
  let pending = '';
  let lineNumber = 0;
  const emit = function* (raw: string): Generator<InputLine> {
    lineNumber++;
    const text = raw.trim();
    if (text === '' || (options.comments === true && text.startsWith('#'))) return;
    yield { text, lineNumber };
  };
  for await (const chunk of source) {
    if (typeof chunk === 'string') {
      options.onBytes?.(chunk.length);
      pending += chunk;
    } else {
      options.onBytes?.(chunk.byteLength);
      pending += decoder.decode(chunk, { stream: true });
    }
    let start = 0;
    let newline = pending.indexOf('\n');
    while (newline >= 0) {
      yield* emit(pending.slice(start, newline));
      start = newline + 1;
      newline = pending.indexOf('\n', start);
    }
    pending = pending.slice(start);
  }
  pending += decoder.decode();
  if (pending !== '') yield* emit(pending);
}

/** A `--publishers` or `--origins` value that names a file that cannot be read. */
export class UnreadableFileError extends Error {
  /**
   * @param path - the file as given
   * @param why - the system's reason
   */
  constructor(path: string, why: string) {
    super(`cannot read ${path}: ${why}`);
    this.name = 'UnreadableFileError';
  }
}

/** Reads a whole file as bytes, turning any failure into an {@link UnreadableFileError}. */
export async function readFileBytes(path: string, cwd: string): Promise<Uint8Array> {
  try {
    return await readFile(resolve(cwd, path));
  } catch (error) {
    throw new UnreadableFileError(path, (error as NodeJS.ErrnoException).code ?? String(error));
  }
}

/**
 * Resolves a `<file|comma list>` argument: the lines of the file when it
 * names an existing file (blank lines and `#` comments skipped), else the
 * comma-separated items. A value with a path separator (other than in
 * `scheme://`) must be a file.
 *
 * @throws UnreadableFileError for a path that cannot be read.
 */
export async function readListArgument(value: string, cwd: string): Promise<string[]> {
  const path = resolve(cwd, value);
  const isFile = await stat(path).then(
    (s) => s.isFile(),
    () => false,
  );
  // A path separator outside a URL scheme means a file was meant (and is missing).
  if (isFile || /[/\\]/.test(value.replaceAll('://', ''))) {
    const text = new TextDecoder().decode(await readFileBytes(value, cwd));
    return text
      .split('\n')
      .map((line) => line.trim())
      .filter((line) => line !== '' && !line.startsWith('#'));
  }
  return value
    .split(',')
    .map((item) => item.trim())
    .filter((item) => item !== '');
}
