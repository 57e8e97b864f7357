// Issue 18 (CLI): lists never guessed from the file system (@file), -o - to
// stdout, "cannot write" and no raw system codes, one --json error shape and
// one exit code for a malformed origin in every command, per-command exit
// codes in --help, "did you mean", progress on check, compile warnings.
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { loadAllowSet } from '@ampcors/core';
import { COMMANDS, EXIT } from '@ampcors/cli';
import { cliIn, json, type Result } from './harness.js';

const dir = mkdtempSync(join(tmpdir(), 'ampcors-usage-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
const cli = cliIn(dir);

/** Every exit code seen per command across this file: each must be one its --help lists. */
const seen = new Map<string, Set<number>>();
async function run(argv: string[], stdin?: string, options?: Parameters<typeof cli>[2]): Promise<Result> {
  const result = await cli(argv, stdin, options);
  const name = argv[0] as string;
  if (Object.hasOwn(COMMANDS, name)) {
    const codes = seen.get(name) ?? new Set<number>();
    codes.add(result.code);
    seen.set(name, codes);
  }
  return result;
}

writeFileSync(join(dir, 'example.com'), 'other.example\n'); // a file named like a domain
writeFileSync(join(dir, 'pubs.txt'), '# ours\nexample.com\n\n*.example.org\n');
writeFileSync(join(dir, 'domains.txt'), 'example.com\nwww.example.com\n');
mkdirSync(join(dir, 'a-directory'));

describe('--publishers and --origins: a list, or @file — never a guess', () => {
  it('a value that is also a file name is the domain, with a warning that names @file', async () => {
    const origin = 'https://example-com.cdn.ampproject.org';
    const listed = await run(['check', origin, '--publishers', 'example.com']);
    expect(listed.code).toBe(EXIT.ok);
    expect(listed.stderr.text).toBe(
      'ampcors: warning: --publishers example.com is read as a list, not as the file of that name; to read the file, write --publishers @example.com\n',
    );
    const fromFile = await run(['check', origin, 'https://other-example.cdn.ampproject.org', '--publishers', '@example.com']);
    expect(fromFile.code).toBe(EXIT.denied);
    expect(fromFile.stdout.lines.map((l) => l.split(' ')[0])).toEqual(['denied', 'allowed']);
    expect(fromFile.stderr.text).toBe('');
  });

  it('@file reads one entry per line (comments, blanks skipped), for check, explain and --origins', async () => {
    const wildcard = await run(['check', 'https://a-b-example-org.www.bing-amp.com', '--publishers', '@pubs.txt']);
    expect([wildcard.code, wildcard.stdout.lines[0]]).toEqual([EXIT.ok, expect.stringMatching(/^allowed cache-origin-wildcard/)]);
    expect((await run(['explain', 'https://a-b-example-org.www.bing-amp.com', '--publishers', `@${join(dir, 'pubs.txt')}`])).code).toBe(EXIT.ok);
    writeFileSync(join(dir, 'origins.txt'), 'http://localhost:8080\n');
    const own = await run(['check', 'http://localhost:8080', '--publishers', 'example.com', '--origins', '@origins.txt']);
    expect(own.stdout.lines).toEqual(['allowed publisher-origin http://localhost:8080']);
  });

  it('a path given as a list is a usage error that suggests @; @ alone too; a missing @file is "cannot read", exit 4', async () => {
    const path = await run(['check', 'https://a.com', '--publishers', 'lists/pubs.txt']);
    expect([path.code, path.stderr.lines[0]]).toEqual([
      EXIT.usage,
      'ampcors: --publishers lists/pubs.txt is read as a comma-separated list, and a list item has no "/"; to read a file, write --publishers @lists/pubs.txt',
    ]);
    expect((await run(['explain', 'https://a.com', '--publishers', '@'])).code).toBe(EXIT.usage);
    const missing = await run(['explain', 'https://a.com', '--publishers', 'site.example', '--origins', '@nope.txt']);
    expect([missing.code, missing.stderr.text]).toEqual([EXIT.unreadableFile, 'ampcors: cannot read nope.txt: no such file or directory\n']);
    const directory = await run(['check', 'https://a.com', '--publishers', '@a-directory']);
    expect([directory.code, directory.stderr.text]).toEqual([EXIT.unreadableFile, 'ampcors: cannot read a-directory: it is a directory\n']);
  });
});

describe('compile -o: a file, or - for stdout; write errors say "cannot write"', () => {
  it('-o - writes the allow-set bytes to stdout and the summary to stderr', async () => {
    const { code, stdout, stderr } = await run(['compile', 'domains.txt', '-o', '-']);
    expect(code).toBe(EXIT.ok);
    const set = loadAllowSet(stdout.bytes);
    expect(set.domainCount).toBe(2);
    expect(stderr.text).toMatch(/^wrote stdout: 2 domains, \d+ prefixes, \d+ bytes/);
    const asJson = await run(['compile', 'domains.txt', '-o', '-', '--json']);
    expect(loadAllowSet(asJson.stdout.bytes).domainCount).toBe(2);
    expect(JSON.parse(asJson.stderr.text)).toMatchObject({ file: '-', domains: 2 });
    const file = await run(['compile', 'domains.txt', '-o', 'same.acs']);
    expect(file.code).toBe(EXIT.ok);
    expect(Buffer.compare(readFileSync(join(dir, 'same.acs')), stdout.bytes)).toBe(0);
  });

  it('-o - refuses a terminal (binary bytes, control characters among them)', async () => {
    const { code, stdout, stderr } = await run(['compile', 'domains.txt', '-o', '-'], '', { stdoutTTY: true });
    expect([code, stdout.text]).toEqual([EXIT.usage, '']);
    expect(stderr.text).toMatch(/terminal/);
  });

  it('write errors: "cannot write <path>: <reason>", exit 4, in words', async () => {
    const noDir = await run(['compile', 'domains.txt', '-o', 'no/such/dir.acs']);
    expect([noDir.code, noDir.stderr.text]).toEqual([EXIT.unreadableFile, 'ampcors: cannot write no/such/dir.acs: no such file or directory\n']);
    const isDir = await run(['compile', 'domains.txt', '-o', 'a-directory']);
    expect([isDir.code, isDir.stderr.text]).toEqual([EXIT.unreadableFile, 'ampcors: cannot write a-directory: it is a directory\n']);
    const json1 = await run(['compile', 'domains.txt', '-o', 'no/such/dir.acs', '--json']);
    expect(json(json1.stdout)).toEqual([{ error: { code: 'unwritable-file', message: 'cannot write no/such/dir.acs: no such file or directory' } }]);
  });

  it('no raw system error code (ENOENT, EISDIR…) in any message', async () => {
    const failing: string[][] = [
      ['compile', 'missing.txt', '-o', 'x.acs'],
      ['compile', 'a-directory', '-o', 'x.acs'],
      ['compile', 'domains.txt', '-o', 'no/such/x.acs'],
      ['check', 'https://a.com', '--allow-set', 'missing.acs'],
      ['check', 'https://a.com', '--allow-set', 'a-directory'],
      ['check', 'https://a.com', '--publishers', '@missing.txt'],
      ['explain', 'https://a.com', '--publishers', '@a-directory'],
      ['redis', 'load', 'missing.txt'],
      ['redis', 'load', 'a-directory'],
    ];
    for (const argv of failing) {
      const { code, stderr } = await run(argv);
      expect(code, argv.join(' ')).toBe(EXIT.unreadableFile);
      expect(stderr.text, argv.join(' ')).toMatch(/^ampcors: cannot (read|write) \S+: [a-z]/);
      expect(stderr.text, argv.join(' ')).not.toMatch(/\bE[A-Z]{3,}\b/);
    }
  });
});

describe('compile warns about an empty or repetitive list', () => {
  it('no domain: a warning, and the (empty) allow-set is still written', async () => {
    writeFileSync(join(dir, 'empty.txt'), '# nothing yet\n\n');
    const { code, stderr } = await run(['compile', 'empty.txt', '-o', 'empty.acs']);
    expect(code).toBe(EXIT.ok);
    expect(stderr.lines).toEqual(['ampcors: warning: empty.txt holds no domain: the allow-set allows nothing']);
    expect(loadAllowSet(readFileSync(join(dir, 'empty.acs'))).size).toBe(0);
  });

  it('repeated domains: a warning with the count; none for a list without repeats', async () => {
    const { code, stdout, stderr } = await run(['compile', '-o', 'dups.acs', '--json'], 'a.example\nb.example\na.example\nA.Example\n');
    expect(code).toBe(EXIT.ok);
    const [summary] = json(stdout);
    expect(summary).toMatchObject({ domains: 4, duplicatePrefixes: expect.any(Number) });
    expect(summary?.duplicatePrefixes as number).toBeGreaterThan(0);
    expect(stderr.lines).toEqual([expect.stringMatching(/^ampcors: warning: stdin repeats domains: \d+ of \d+ prefixes were duplicates, \d+ distinct kept$/)]);
    expect((await run(['compile', 'domains.txt', '-o', 'ok.acs'])).stderr.text).toBe('');
  });
});

describe('a malformed origin: exit 3 and one --json error shape in every command', () => {
  const MALFORMED = 'https://Example-com.cdn.ampproject.org';
  const argvs: string[][] = [
    ['reverse'],
    ['explain'],
    ['explain', '--publishers', 'example.com'],
    ['check', '--publishers', 'example.com'],
    ['check', '--allow-set', 'same.acs'],
  ];

  it.each(argvs.map((argv) => [argv.join(' '), argv] as const))('%s', async (_, argv) => {
    const text = await run([...argv, MALFORMED]);
    expect(text.code).toBe(EXIT.badInput);
    expect(text.stderr.text + text.stdout.text).toContain('did you mean https://example-com.cdn.ampproject.org?');
    const asJson = await run([...argv, MALFORMED, '--json']);
    expect(asJson.code).toBe(EXIT.badInput);
    const [line] = json(asJson.stdout);
    expect(line).toMatchObject({
      input: MALFORMED,
      error: {
        code: 'invalid-origin',
        message: expect.stringMatching(/^not a valid Origin \(not-canonical: /),
        reason: 'not-canonical',
        suggestion: 'https://example-com.cdn.ampproject.org',
      },
    });
  });

  it('"null" (an opaque origin) is a denial, not a malformed origin', async () => {
    expect((await run(['check', 'null', '--publishers', 'example.com'])).code).toBe(EXIT.denied);
  });

  it('did you mean: only for case, a trailing slash, a path, query or fragment', async () => {
    const suggestions: [string, string | undefined][] = [
      ['https://Example.com', 'https://example.com'],
      ['HTTPS://example.com', 'https://example.com'],
      ['https://example.com/', 'https://example.com'],
      ['https://www-example-com.cdn.ampproject.org/c/s/example.com/', 'https://www-example-com.cdn.ampproject.org'],
      ['https://example.com:8443/x?y#z', 'https://example.com:8443'],
      ['https://user@example.com', undefined],
      ['https://exa mple.com/', undefined],
      ['ftp://example.com/', undefined],
      ['example.com', undefined],
      ['https://example.com,https://evil.com', undefined],
    ];
    for (const [input, suggestion] of suggestions) {
      const [line] = json((await run(['check', input, '--publishers', 'example.com', '--json'])).stdout);
      expect((line?.error as { suggestion?: string } | undefined)?.suggestion, input).toBe(suggestion);
    }
  });

  it('whole-command errors with --json: one {"error": {code, message}} line on stdout, nothing on stderr', async () => {
    const cases: [string[], string, number][] = [
      [['check', 'https://a.com', '--publishers', 'co.uk', '--json'], 'public-suffix-rule', EXIT.badInput],
      [['check', 'https://a.com', '--allow-set', 'missing.acs', '--json'], 'unreadable-file', EXIT.unreadableFile],
      [['check', 'https://a.com', '--json'], 'usage', EXIT.usage],
      [['prefix', '--bogus', '--json'], 'usage', EXIT.usage],
      [['compile', 'bad.txt', '-o', 'x.acs', '--json'], 'invalid-domain', EXIT.badInput],
    ];
    writeFileSync(join(dir, 'bad.txt'), 'example.com\nexa mple.com\n');
    for (const [argv, code, exit] of cases) {
      const result = await run(argv);
      expect(result.code, argv.join(' ')).toBe(exit);
      expect(result.stderr.text, argv.join(' ')).toBe('');
      expect(json(result.stdout), argv.join(' ')).toEqual([{ error: { code, message: expect.any(String) } }]);
    }
    // A bad input line has the same shape, plus the input it is about.
    expect(json((await run(['prefix', 'bad..com', '--json'])).stdout)).toEqual([
      { input: 'bad..com', error: { code: 'invalid-domain', message: expect.any(String) } },
    ]);
  });
});

describe('progress on check, like compile', () => {
  const origins = Array.from({ length: 2000 }, (_, i) => `https://site${i}-example-com.cdn.ampproject.org`).join('\n');

  it('drawn on stderr when it is a terminal and stdout is not, and erased at the end', async () => {
    const { code, stdout, stderr } = await run(['check', '--publishers', 'site1.example.com', '--json'], origins, { stderrTTY: true });
    expect(code).toBe(EXIT.denied);
    expect(json(stdout)).toHaveLength(2000);
    expect(stderr.text).toMatch(/\r\x1b\[K[\d,]+ origins/);
    expect(stderr.text.endsWith('\r\x1b[K')).toBe(true);
  });

  it('not drawn when stdout is the same terminal, nor when piped — unless --progress', async () => {
    expect((await run(['check', '--publishers', 'site1.example.com'], origins, { stderrTTY: true, stdoutTTY: true })).stderr.text).toBe('');
    expect((await run(['check', '--publishers', 'site1.example.com'], origins)).stderr.text).toBe('');
    expect((await run(['check', '--publishers', 'site1.example.com', '--progress'], origins)).stderr.text).toMatch(/origins/);
    expect((await run(['compile', 'domains.txt', '-o', 'p.acs', '--progress'])).stderr.text).toMatch(/sorting and encoding/);
  });
});

describe('--help: each command lists only its own exit codes', () => {
  it('the Exit codes block of each command is its exitCodes, and the main help lists every code', async () => {
    for (const [name, command] of Object.entries(COMMANDS)) {
      const { stdout } = await run([name, '--help']);
      const block = stdout.text.slice(stdout.text.indexOf('Exit codes:'));
      const listed = [...block.matchAll(/^ {2}(\d+) {2}/gm)].map((m) => Number(m[1]));
      expect(listed, name).toEqual(Object.keys(command.exitCodes).map(Number));
    }
    expect(Object.keys(COMMANDS.prefix?.exitCodes ?? {})).not.toContain(String(EXIT.unavailable));
    const main = (await cli(['--help'])).stdout.text;
    for (const code of Object.values(EXIT)) expect(main).toMatch(new RegExp(`^ {2}${code} {2}`, 'm'));
  });

  it('every exit code seen in this file is one its command lists', () => {
    expect(seen.size).toBeGreaterThan(3);
    for (const [name, codes] of seen) {
      const listed = Object.keys(COMMANDS[name]?.exitCodes ?? {}).map(Number);
      for (const code of codes) expect(listed, `${name} exited ${code}`).toContain(code);
    }
  });
});
