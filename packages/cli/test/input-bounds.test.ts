// The files the CLI reads whole or writes, from the attacker's side (attacker's review, session 17, helper-103):
// `check --allow-set <file>` and `check`/`explain --publishers @<file>` / `--origins @<file>` were read with
// fs.readFile, without a size bound or a look at what the path is: `--allow-set /dev/zero` grew to 9 GB and died
// without a JSON error line, and a FIFO that never ends never answered. Each must now be refused at once (exit 4, one
// `{"error"}` line under --json), before a byte is read: a FIFO (with a writer that never stops, or with no writer at
// all), a device, a directory, a regular file over the limit (sparse: nothing big is written to disk). `compile -o`
// must not write into a FIFO or a device either.
import { execFileSync } from 'node:child_process';
import { closeSync, constants, mkdirSync, mkdtempSync, openSync, readFileSync, readSync, rmSync, symlinkSync, truncateSync, writeFileSync } from 'node:fs';
import { open } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { loadAllowSet } from '@ampcors/core';
import { EXIT } from '@ampcors/cli';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { describeBytes, MAX_ALLOW_SET_BYTES, MAX_LINE_LENGTH, MAX_LIST_BYTES } from '../src/input-lines.js';
import { cliIn, json } from './harness.js';

const dir = mkdtempSync(join(tmpdir(), 'ampcors-bounds-'));
const run = cliIn(dir);
afterAll(() => rmSync(dir, { recursive: true, force: true }));

let fifoCount = 0;
/** A new FIFO in the test directory (no writer, no reader yet). */
function fifo(): string {
  const name = `fifo-${++fifoCount}`;
  execFileSync('mkfifo', [join(dir, name)]);
  return name;
}

let stopWriter: (() => Promise<void>) | undefined;
afterEach(async () => {
  await stopWriter?.();
  stopWriter = undefined;
});

/** A FIFO whose writer sends zeros, then holds it open without ever ending it (until the test ends). */
function endlessFifo(): string {
  const name = fifo();
  const path = join(dir, name);
  let stop = false;
  const writer = (async () => {
    const handle = await open(path, 'w');
    try {
      await handle.write(Buffer.alloc(1 << 20));
      while (!stop) await new Promise((resolve) => setTimeout(resolve, 20));
    } catch {
      // the reader closed its end (EPIPE)
    } finally {
      await handle.close().catch(() => undefined);
    }
  })();
  stopWriter = async () => {
    stop = true;
    // a writer still waiting for a reader to open is released by one
    const reader = openSync(path, constants.O_RDONLY | constants.O_NONBLOCK);
    await writer;
    closeSync(reader);
  };
  return name;
}

/** The commands that read `file` whole: each file input of check and explain. */
const readers = (file: string): string[][] => [
  ['check', '--allow-set', file, 'https://a-example-com.cdn.ampproject.org'],
  ['check', '--publishers', `@${file}`, 'https://a-example-com.cdn.ampproject.org'],
  ['check', '--publishers', 'a.example.com', '--origins', `@${file}`, 'https://a-example-com.cdn.ampproject.org'],
  ['explain', '--publishers', `@${file}`, 'https://a-example-com.cdn.ampproject.org'],
  ['explain', '--publishers', 'a.example.com', '--origins', `@${file}`, 'https://a-example-com.cdn.ampproject.org'],
];

/** Runs argv with --json: expects exit 4 and one `{"error"}` line, whose message it returns. */
async function refusal(argv: string[]): Promise<string> {
  const { code, stdout } = await run([...argv, '--json']);
  expect(code, argv.join(' ')).toBe(EXIT.unreadableFile);
  const lines = json(stdout);
  expect(lines, argv.join(' ')).toHaveLength(1);
  const error = (lines[0] as { error: { code: string; message: string } }).error;
  expect(error.code).toBe(error.message.startsWith('cannot write ') ? 'unwritable-file' : 'unreadable-file');
  return error.message;
}

describe('check and explain read only regular files, and refuse them at once otherwise', () => {
  for (const argv of readers('<fifo>')) {
    it(`a FIFO whose writer never ends it: ${argv.join(' ')}`, async () => {
      const name = endlessFifo();
      const message = await refusal(argv.map((a) => a.replace('<fifo>', name)));
      expect(message).toBe(`cannot read ${name}: it is a FIFO or pipe, not a regular file (copy it to a file first)`);
    });

    it(`a FIFO with no writer at all (the open must not wait for one): ${argv.join(' ')}`, async () => {
      const name = fifo();
      expect(await refusal(argv.map((a) => a.replace('<fifo>', name)))).toMatch(/: it is a FIFO or pipe, not a regular file/);
    });

    it(`/dev/zero, which never ends: ${argv.join(' ')}`, async () => {
      const message = await refusal(argv.map((a) => a.replace('<fifo>', '/dev/zero')));
      expect(message).toBe('cannot read /dev/zero: it is a character device, not a regular file (copy it to a file first)');
    });

    it(`a directory: ${argv.join(' ')}`, async () => {
      mkdirSync(join(dir, 'a-directory'), { recursive: true });
      expect(await refusal(argv.map((a) => a.replace('<fifo>', 'a-directory')))).toBe('cannot read a-directory: it is a directory');
    });
  }

  it('in text mode: the reason on stderr, nothing on stdout', async () => {
    const name = fifo();
    const { code, stdout, stderr } = await run(['check', '--allow-set', name, 'https://a-example-com.cdn.ampproject.org']);
    expect([code, stdout.text, stderr.text]).toEqual([
      EXIT.unreadableFile,
      '',
      `ampcors: cannot read ${name}: it is a FIFO or pipe, not a regular file (copy it to a file first)\n`,
    ]);
  });
});

describe('the size limits: refused from the size, before a byte is read (sparse files: nothing big on disk)', () => {
  it('an allow-set of MAX_ALLOW_SET_BYTES + 1 bytes', async () => {
    const path = join(dir, 'huge.acs');
    writeFileSync(path, '');
    truncateSync(path, MAX_ALLOW_SET_BYTES + 1);
    expect(await refusal(readers('huge.acs')[0] as string[])).toBe(
      `cannot read huge.acs: ${MAX_ALLOW_SET_BYTES + 1} bytes is over the ${describeBytes(MAX_ALLOW_SET_BYTES)} limit of --allow-set`,
    );
  });

  it('a list of MAX_LIST_BYTES + 1 bytes, for --publishers @ and --origins @ of check and explain', async () => {
    const path = join(dir, 'huge.txt');
    writeFileSync(path, 'a.example.com\n');
    truncateSync(path, MAX_LIST_BYTES + 1);
    const [, ...lists] = readers('huge.txt');
    for (const argv of lists) {
      const option = argv.includes('--origins') ? '--origins' : '--publishers';
      expect(await refusal(argv)).toBe(
        `cannot read huge.txt: ${MAX_LIST_BYTES + 1} bytes is over the ${describeBytes(MAX_LIST_BYTES)} limit of ${option} @file`,
      );
    }
  });

  it('a list of exactly MAX_LIST_BYTES bytes is read (the limit is not off by one)', async () => {
    // One domain, then lines of spaces (blank once trimmed), each under the line limit.
    const bytes = Buffer.alloc(MAX_LIST_BYTES, ' ');
    bytes.write('a.example.com\n');
    for (let at = MAX_LINE_LENGTH; at < bytes.length; at += MAX_LINE_LENGTH) bytes[at] = 0x0a;
    writeFileSync(join(dir, 'full.txt'), bytes);
    const { code, stdout } = await run(['check', '--publishers', '@full.txt', 'https://a-example-com.cdn.ampproject.org']);
    expect([code, stdout.text]).toEqual([EXIT.ok, expect.stringMatching(/^allowed /)]);
  });

  it('a file that holds more than its size said (a /proc file: size 0, content on read) is refused, not read on', async () => {
    for (const argv of readers('/proc/self/status')) {
      expect(await refusal(argv)).toBe('cannot read /proc/self/status: it grew while it was read (or its size was not the one the system reported)');
    }
  });

  it('a list line over MAX_LINE_LENGTH characters is refused (the list is read by readLines)', async () => {
    writeFileSync(join(dir, 'long-line.txt'), `a.example.com\n${'b'.repeat(MAX_LINE_LENGTH + 1)}\n`);
    expect(await refusal(['check', '--publishers', '@long-line.txt', 'https://a-example-com.cdn.ampproject.org'])).toBe(
      `cannot read long-line.txt: line 2 is longer than ${MAX_LINE_LENGTH} characters (one entry per line is expected)`,
    );
  });

  it('lists keep their syntax: blank lines, # comments and CRLF skipped or trimmed', async () => {
    writeFileSync(join(dir, 'list.txt'), '# publishers\r\n\r\n  a.example.com\r\n# b.example.com\n');
    const allowed = await run(['check', '--publishers', '@list.txt', 'https://a-example-com.cdn.ampproject.org']);
    const commented = await run(['check', '--publishers', '@list.txt', 'https://b-example-com.cdn.ampproject.org']);
    expect([allowed.code, commented.code]).toEqual([EXIT.ok, EXIT.denied]);
  });

  it('the limits: the default allow-set of 10 million domains (260 MB measured) and the largest form compile writes fit', () => {
    // 5 prefix forms at most per domain, 32-byte raw hashes: 160 bytes per domain.
    expect(MAX_ALLOW_SET_BYTES).toBeGreaterThan(10_000_000 * 5 * 32);
    expect(MAX_LIST_BYTES).toBeLessThan(MAX_ALLOW_SET_BYTES);
  });

  it('--help names the limits', async () => {
    const check = await run(['check', '--help']);
    expect(check.stdout.text).toContain(`regular file of at most ${describeBytes(MAX_ALLOW_SET_BYTES)}`);
    expect(check.stdout.text).toContain(`of at most ${describeBytes(MAX_LIST_BYTES)}, one entry per line`);
    const explain = await run(['explain', '--help']);
    expect(explain.stdout.text).toContain(`of at most ${describeBytes(MAX_LIST_BYTES)}, one entry per line`);
  });
});

describe('compile: its input is streamed line by line; -o writes only a regular file', () => {
  it('/dev/zero as the list: refused after one line, not read forever', async () => {
    const message = await refusal(['compile', '/dev/zero', '-o', 'zero.acs']);
    expect(message).toBe(`cannot read /dev/zero: line 1 is longer than ${MAX_LINE_LENGTH} characters (one entry per line is expected)`);
  });

  it('-o a FIFO with no reader: refused, never waiting for one', async () => {
    writeFileSync(join(dir, 'domains.txt'), 'example.com\n');
    const name = fifo();
    expect(await refusal(['compile', 'domains.txt', '-o', name])).toBe(
      `cannot write ${name}: it is a FIFO or pipe, not a regular file (write -o - and redirect stdout instead)`,
    );
  });

  it('-o a FIFO with a reader: refused, and the reader gets no byte', async () => {
    writeFileSync(join(dir, 'domains.txt'), 'example.com\n');
    const name = fifo();
    const reader = openSync(join(dir, name), constants.O_RDONLY | constants.O_NONBLOCK);
    try {
      expect(await refusal(['compile', 'domains.txt', '-o', name])).toBe(
        `cannot write ${name}: it is a FIFO or pipe, not a regular file (write -o - and redirect stdout instead)`,
      );
      // No writer is left and nothing was written: end of file (0), never a byte.
      expect(readSync(reader, Buffer.alloc(16))).toBe(0);
    } finally {
      closeSync(reader);
    }
  });

  it('-o /dev/null or another device: refused (-o - is the way to a pipe or a device)', async () => {
    writeFileSync(join(dir, 'domains.txt'), 'example.com\n');
    expect(await refusal(['compile', 'domains.txt', '-o', '/dev/null'])).toBe(
      'cannot write /dev/null: it is a character device, not a regular file (write -o - and redirect stdout instead)',
    );
  });

  it('-o an existing longer file: replaced whole (no tail of the old file left)', async () => {
    writeFileSync(join(dir, 'domains.txt'), 'example.com\n');
    writeFileSync(join(dir, 'old.acs'), Buffer.alloc(100_000, 0x41));
    const { code } = await run(['compile', 'domains.txt', '-o', 'old.acs']);
    expect(code).toBe(EXIT.ok);
    const set = loadAllowSet(readFileSync(join(dir, 'old.acs')));
    expect(set.verifyOrigin('https://example-com.cdn.ampproject.org').allowed).toBe(true);
  });

  it('-o a symbolic link to a regular file: written through the link, as a shell redirection does', async () => {
    writeFileSync(join(dir, 'domains.txt'), 'example.com\n');
    writeFileSync(join(dir, 'target.acs'), 'old');
    symlinkSync('target.acs', join(dir, 'link.acs'));
    expect((await run(['compile', 'domains.txt', '-o', 'link.acs'])).code).toBe(EXIT.ok);
    expect(loadAllowSet(readFileSync(join(dir, 'target.acs'))).verifyOrigin('https://example-com.cdn.ampproject.org').allowed).toBe(true);
  });
});
