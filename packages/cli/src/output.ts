/** The part of a writable stream the CLI uses (a Node stream or a test double). */
export interface OutputStream {
  /** Writes a chunk; `false` asks the writer to wait for `drain`. */
  write(chunk: string): boolean | void;
  /** Registers a one-time `drain` listener (Node streams). */
  once?(event: 'drain', listener: () => void): unknown;
  /** True when the stream is a terminal. */
  readonly isTTY?: boolean;
}

/** The input stream the CLI reads lines from (a Node stream or any async iterable). */
export type InputStream = AsyncIterable<string | Uint8Array> & { readonly isTTY?: boolean };

/** Writes one line and, when the stream is full, waits until it drains (a million lines never pile up in memory). */
export async function writeLine(stream: OutputStream, line: string): Promise<void> {
  const ok = stream.write(`${line}\n`);
  if (ok === false && typeof stream.once === 'function') {
    await new Promise<void>((resolve) => stream.once?.('drain', resolve));
  }
}
