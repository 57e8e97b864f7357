/** The part of a writable stream the CLI uses (a Node stream or a test double). */
export interface OutputStream {
  /** Writes a chunk (text, or the bytes of `compile -o -`); `false` asks the writer to wait for `drain`. */
  write(chunk: string | Uint8Array): boolean | void;
  /** Registers a one-time `drain` listener (Node streams). */
  once?(event: 'drain', listener: () => void): unknown;
  /** True when the stream is a terminal. */
  readonly isTTY?: boolean;
}

/** The input stream the CLI reads lines from (a Node stream or any async iterable). */
export type InputStream = AsyncIterable<string | Uint8Array> & { readonly isTTY?: boolean };

/**
 * Characters a terminal may act on instead of showing: the C0 controls (ESC
 * starts the sequences that retitle a window, move the cursor, or write a
 * link), DEL, the C1 controls (U+009B is a one-character CSI), the bidi
 * embeddings and overrides U+202A–U+202E, isolates U+2066–U+2069 and marks
 * U+200E, U+200F, U+061C (which reorder what is shown), and the line and
 * paragraph separators.
 */
const TERMINAL_CONTROLS = /[\u0000-\u001f\u007f-\u009f\u061c\u200e\u200f\u2028\u2029\u202a-\u202e\u2066-\u2069]/g;

/** `\xHH` for a character below U+0100, `\uHHHH` above. */
function escaped(char: string): string {
  const code = char.charCodeAt(0);
  return code < 0x100 ? `\\x${code.toString(16).padStart(2, '0')}` : `\\u${code.toString(16).padStart(4, '0')}`;
}

/**
 * Text made safe for a terminal: every character of {@link TERMINAL_CONTROLS}
 * (tab and newline included) becomes a visible `\xHH` or `\uHHHH` escape.
 * Origins, domains and file contents come from access logs and other
 * people's files: they are shown, never obeyed.
 *
 * @example escapeControls('https://\x1b]0;PWNED\x07evil.com') // 'https://\\x1b]0;PWNED\\x07evil.com'
 */
export function escapeControls(text: string): string {
  return text.replace(TERMINAL_CONTROLS, escaped);
}

/**
 * One value as one line of JSON: `JSON.stringify` (which escapes C0 controls)
 * plus `\uHHHH` escapes for DEL, the C1 controls, the bidi controls and the
 * line separators, which it leaves raw. The line parses back to the same value.
 */
export function jsonLine(value: unknown): string {
  return JSON.stringify(value).replace(TERMINAL_CONTROLS, (char) => `\\u${char.charCodeAt(0).toString(16).padStart(4, '0')}`);
}

/** Writes a chunk and, when the stream is full, waits until it drains (a million lines never pile up in memory). */
async function writeChunk(stream: OutputStream, chunk: string | Uint8Array): Promise<void> {
  const ok = stream.write(chunk);
  if (ok === false && typeof stream.once === 'function') {
    await new Promise<void>((resolve) => stream.once?.('drain', resolve));
  }
}

/** Writes one line of text, its control characters escaped ({@link escapeControls}). */
export function writeLine(stream: OutputStream, line: string): Promise<void> {
  return writeChunk(stream, `${escapeControls(line)}\n`);
}

/** Writes lines of text, each escaped. */
export async function writeLines(stream: OutputStream, lines: readonly string[]): Promise<void> {
  for (const line of lines) await writeLine(stream, line);
}

/** Writes fields separated by tabs, each field escaped (so a tab inside one cannot shift the columns). */
export function writeRow(stream: OutputStream, fields: readonly string[]): Promise<void> {
  return writeChunk(stream, `${fields.map(escapeControls).join('\t')}\n`);
}

/** Writes one value as one line of JSON ({@link jsonLine}). */
export function writeJson(stream: OutputStream, value: unknown): Promise<void> {
  return writeChunk(stream, `${jsonLine(value)}\n`);
}

/** Writes bytes as they are (an allow-set to stdout). */
export function writeBytes(stream: OutputStream, bytes: Uint8Array): Promise<void> {
  return writeChunk(stream, bytes);
}
