// readLines from the attacker's side: the CLI reads domain lists, origins and URLs one per line from files and stdin,
// which anyone can fill. A huge line without a newline must fail fast, with a bounded read and a FileError naming the
// input and the line, never a crash; the lines of ordinary input come out as before, however the chunks split them.
import { type InputStream, run } from '@ampcors/cli';
import fc from 'fast-check';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { FileError, MAX_LINE_LENGTH, readLines } from '../src/input-lines.js';
import { Capture } from './harness.js';

const encoder = new TextEncoder();

/** `text` as chunks of `size` (strings, or UTF-8 bytes cut anywhere, even inside a character), counting what was read. */
function source(text: string, size: number, bytes = false): AsyncIterable<string | Uint8Array> & { read: number } {
  const counter = {
    read: 0,
    async *[Symbol.asyncIterator]() {
      const whole = bytes ? encoder.encode(text) : text;
      for (let i = 0; i < whole.length; i += size) {
        const chunk = whole.slice(i, i + size);
        counter.read += chunk.length;
        yield chunk;
      }
    },
  };
  return counter;
}

async function collect(lines: AsyncIterable<{ text: string; lineNumber: number }>): Promise<Array<[number, string]>> {
  const out: Array<[number, string]> = [];
  for await (const { text, lineNumber } of lines) out.push([lineNumber, text]);
  return out;
}

async function failure(run: () => Promise<unknown>): Promise<unknown> {
  try {
    await run();
  } catch (error) {
    return error;
  }
  return undefined;
}

/** What the old reader gave (a whole-text reference): trimmed lines, blanks skipped, `#` comments when asked. */
function reference(text: string, comments: boolean): Array<[number, string]> {
  const lines = text.split('\n');
  if (lines.at(-1) === '') lines.pop();
  return lines.flatMap((raw, index): Array<[number, string]> => {
    const trimmed = raw.trim();
    return trimmed === '' || (comments && trimmed.startsWith('#')) ? [] : [[index + 1, trimmed]];
  });
}

describe('readLines: ordinary input', () => {
  it('by property: the same lines and line numbers whatever the chunks (strings or bytes cut inside a character)', async () => {
    const line = fc.stringMatching(/^[ \ta-z0-9.#\r\u00e9\u4e16-]{0,12}$/);
    await fc.assert(
      fc.asyncProperty(fc.array(line, { maxLength: 12 }), fc.boolean(), fc.integer({ min: 1, max: 9 }), fc.boolean(), async (lines, trailing, size, bytes) => {
        const text = lines.join('\n') + (trailing ? '\n' : '');
        for (const comments of [false, true]) expect(await collect(readLines(source(text, size, bytes), { comments }))).toEqual(reference(text, comments));
      }),
      { numRuns: 300 },
    );
  });

  it('accepts a line of exactly the maximum length, split into small chunks, and counts the bytes read', async () => {
    const long = 'a'.repeat(MAX_LINE_LENGTH);
    let bytes = 0;
    const lines = await collect(readLines(source(`x.com\n${long}\ny.com`, 1000, true), { onBytes: (n) => (bytes += n) }));
    expect(lines.map(([n, text]) => [n, text.length])).toEqual([
      [1, 5],
      [2, MAX_LINE_LENGTH],
      [3, 5],
    ]);
    expect(bytes).toBe(MAX_LINE_LENGTH + 12);
  });
});

describe('readLines: a hostile line', () => {
  it('refuses one character more, on the line it is on, whether the newline comes or not', async () => {
    for (const text of [`a.com\n\n${'a'.repeat(MAX_LINE_LENGTH + 1)}\nb.com\n`, `a.com\n\n${'a'.repeat(MAX_LINE_LENGTH + 1)}`]) {
      for (const size of [7, 4096, text.length]) {
        const error = await failure(() => collect(readLines(source(text, size), { name: 'list.txt' })));
        expect(error).toBeInstanceOf(FileError);
        expect((error as FileError).message).toBe(`cannot read list.txt: line 3 is longer than ${MAX_LINE_LENGTH} characters (one entry per line is expected)`);
        expect([(error as FileError).exit, (error as FileError).code]).toEqual([4, 'unreadable-file']);
      }
    }
  });

  it('stops a 10 MB line without a newline after one line of input: the rest is never read or held', async () => {
    const hostile = source('x'.repeat(10_000_000), 65_536, true);
    const error = await failure(() => collect(readLines(hostile)));
    expect((error as FileError).message).toMatch(/^cannot read stdin: line 1 is longer than/);
    // At most the limit and one chunk were read, of 10 MB.
    expect(hostile.read).toBeLessThanOrEqual(MAX_LINE_LENGTH + 65_536);
    // The same from a stream of tiny chunks (a slow sender): still bounded, and refused.
    const trickle = source('y'.repeat(1_000_000), 7);
    expect(await failure(() => collect(readLines(trickle)))).toBeInstanceOf(FileError);
    expect(trickle.read).toBeLessThanOrEqual(MAX_LINE_LENGTH + 7);
  });

  it('names a file stream by its path', async () => {
    const stream = Object.assign(source('z'.repeat(MAX_LINE_LENGTH + 10), 1024), { path: '/data/domains.txt' });
    expect(((await failure(() => collect(readLines(stream)))) as Error).message).toMatch(/^cannot read \/data\/domains\.txt: line 1 is longer than/);
  });
});

describe('the commands on a hostile line: exit 4 and the message, never an internal error', () => {
  async function cli(argv: string[], stdin: AsyncIterable<string | Uint8Array>, cwd = tmpdir()) {
    const stdout = new Capture();
    const stderr = new Capture();
    const input: InputStream = Object.assign(stdin, { isTTY: false });
    const code = await run(argv, { stdin: input, stdout, stderr, cwd });
    return { code, stdout: stdout.text, stderr: stderr.text };
  }

  it('check, reverse and url reading stdin', async () => {
    for (const argv of [['check', '--publishers', 'example.com'], ['reverse'], ['url']]) {
      const hostile = source(`https://example.com\n${'h'.repeat(3_000_000)}`, 65_536, true);
      const result = await cli(argv, hostile);
      expect(result.code, argv.join(' ')).toBe(4);
      expect(result.stderr).toContain(`ampcors: cannot read stdin: line 2 is longer than ${MAX_LINE_LENGTH} characters`);
      expect(hostile.read).toBeLessThanOrEqual(MAX_LINE_LENGTH + 2 * 65_536);
    }
  });

  it('compile reading a domain list file', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'ampcors-lines-'));
    writeFileSync(join(dir, 'domains.txt'), `example.com\n# a comment\n${'d'.repeat(1_000_000)}\n`);
    const result = await cli(['compile', 'domains.txt', '--output', 'set.acs'], source('', 1), dir);
    expect(result.code).toBe(4);
    expect(result.stderr).toMatch(/^ampcors: cannot read .*domains\.txt: line 3 is longer than 65536 characters/m);
  });

  it('check judges Unicode spaces at a line end as the server would: only ASCII space, tab and CR are trimmed', async () => {
    const lines = ['https://example.com\u00A0', '\u2028https://example.com', 'https://example.com\uFEFF', ' \thttps://example.com\r'];
    const result = await cli(['check', '--publishers', 'example.com', '--json'], source(`${lines.join('\n')}\n`, 7, true));
    const verdicts = result.stdout
      .split('\n')
      .filter((line) => line !== '')
      .map((line) => JSON.parse(line) as { allowed?: boolean; error?: unknown });
    // Each of the first three is judged with its Unicode space: not an origin, so not allowed.
    expect(verdicts.map((verdict) => verdict.allowed === true)).toEqual([false, false, false, true]);
    expect(verdicts.slice(0, 3).every((verdict) => verdict.error !== undefined)).toBe(true);
    expect(result.code).not.toBe(0);
  });

  it('redis load reading a domain list file: the input named once, before any connection is tried', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'ampcors-lines-'));
    writeFileSync(join(dir, 'long.txt'), `example.com\n${'r'.repeat(MAX_LINE_LENGTH + 1)}\n`);
    // Port 1 refuses connections: the file's fault must be reported before the registry is reached.
    const result = await cli(['redis', 'load', 'long.txt', '--url', 'redis://127.0.0.1:1'], source('', 1), dir);
    expect(result.code).toBe(4);
    expect(result.stderr).toMatch(/^ampcors: cannot read \S*long\.txt: line 2 is longer than 65536 characters/m);
    expect(result.stderr.match(/cannot read/g)).toHaveLength(1);
  });
});
