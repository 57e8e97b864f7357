// Runs the `ampcors` command in-process through run(argv, io) with captured
// streams: shared by the CLI test files.
import { type InputStream, type OutputStream, run } from '@ampcors/cli';

/** An output stream that keeps what was written (text, and bytes as written). */
export class Capture implements OutputStream {
  text = '';
  readonly chunks: Uint8Array[] = [];
  constructor(readonly isTTY = false) {}
  write(chunk: string | Uint8Array): boolean {
    this.chunks.push(typeof chunk === 'string' ? Buffer.from(chunk) : chunk);
    this.text += typeof chunk === 'string' ? chunk : Buffer.from(chunk).toString('latin1');
    return true;
  }
  /** Everything written, as bytes. */
  get bytes(): Buffer {
    return Buffer.concat(this.chunks);
  }
  /** The non-empty lines written. */
  get lines(): string[] {
    return this.text.split('\n').filter((line) => line !== '');
  }
}

/** What one run of the command gave. */
export interface Result {
  code: number;
  stdout: Capture;
  stderr: Capture;
}

/** `text` in uneven chunks, so lines are split across reads. */
export async function* chunks(text: string): AsyncGenerator<string> {
  for (let i = 0; i < text.length; i += 7) yield text.slice(i, i + 7);
}

/** Options of a run: whether stdin and stderr claim to be terminals. */
export interface CliOptions {
  stdinTTY?: boolean;
  stdoutTTY?: boolean;
  stderrTTY?: boolean;
}

/** A runner of `ampcors <argv>` with `stdin` piped in and relative paths resolved against `cwd`. */
export function cliIn(cwd: string): (argv: string[], stdin?: string, options?: CliOptions) => Promise<Result> {
  return async (argv, stdin = '', options = {}) => {
    const stdout = new Capture(options.stdoutTTY === true);
    const stderr = new Capture(options.stderrTTY === true);
    const input: InputStream = Object.assign(chunks(stdin), { isTTY: options.stdinTTY === true });
    const code = await run(argv, { stdin: input, stdout, stderr, cwd });
    return { code, stdout, stderr };
  };
}

/** The lines of a capture, each parsed as JSON. */
export const json = (capture: Capture): Record<string, unknown>[] => capture.lines.map((line) => JSON.parse(line) as Record<string, unknown>);

/**
 * What a terminal may act on, written independently of the CLI's own list:
 * C0 controls but the newline the CLI writes between lines, DEL, C1, the line
 * separators, the bidi embeddings, overrides, isolates and marks.
 */
export const ACTIVE = /[\u0000-\u0009\u000b-\u001f\u007f-\u009f\u061c\u200e\u200f\u2028\u2029\u202a-\u202e\u2066-\u2069]/u;
