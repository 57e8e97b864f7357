// The `ampcors` command in-process through run(argv, io), with injected
// streams: every command, stdin streaming, --json, exit codes, files.
import { mkdtempSync, readFileSync, writeFileSync, existsSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { cacheOrigin, loadAllowSet, prefixForms } from '@ampcors/core';
import { COMMANDS, EXIT, type InputStream, type OutputStream, run, VERSION } from '@ampcors/cli';
import { Capture, chunks, cliIn, json } from './harness.js';

const dir = mkdtempSync(join(tmpdir(), 'ampcors-cli-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const cli = cliIn(dir);

describe('help and version', () => {
  it('--version prints the package version', async () => {
    const pkg = JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8')) as { version: string };
    expect(VERSION).toBe(pkg.version);
    const { code, stdout } = await cli(['--version']);
    expect([code, stdout.text]).toEqual([0, `${pkg.version}\n`]);
  });

  it('--help lists every command of the table and the exit codes', async () => {
    const { code, stdout } = await cli(['--help']);
    expect(code).toBe(0);
    for (const name of Object.keys(COMMANDS)) expect(stdout.text).toMatch(new RegExp(`^  ${name} `, 'm'));
    for (const exit of Object.values(EXIT)) expect(stdout.text).toMatch(new RegExp(`^  ${exit}  `, 'm'));
  });

  it('<command> --help and help <command> show its usage and options', async () => {
    for (const [name, command] of Object.entries(COMMANDS)) {
      const { code, stdout } = await cli([name, '--help']);
      expect(code).toBe(0);
      expect(stdout.text).toContain(`Usage: ampcors ${command.usage}`);
      for (const option of Object.keys(command.options)) expect(stdout.text).toContain(`--${option}`);
      expect((await cli(['help', name])).stdout.text).toBe(stdout.text);
    }
  });

  it('usage errors exit 2 with a message on stderr', async () => {
    for (const argv of [[], ['frobnicate'], ['prefix', '--bogus'], ['help', 'nope'], ['origin', 'a.com', '--cache', 'nope'], ['caches', 'extra']]) {
      const { code, stdout, stderr } = await cli(argv);
      expect(code, argv.join(' ')).toBe(EXIT.usage);
      expect(stdout.text).toBe('');
      expect(stderr.text).not.toBe('');
    }
    expect((await cli(['prefix'], '', { stdinTTY: true })).stderr.text).toMatch(/no domain given/);
  });
});

describe('prefix, origin, url, reverse, caches', () => {
  it('prefix: the SPEC §2 table, from arguments and from stdin', async () => {
    const table = [
      ['example.com', 'example-com'],
      ['foo-example.com', 'foo--example-com'],
      ['xn--57hw060o.com', 'xn---com-p33b41770a'],
      ['en-us.example.com', '0-en--us-example-com-0'],
    ];
    const byArgs = await cli(['prefix', ...table.map(([d]) => d as string)]);
    expect(byArgs.stdout.lines).toEqual(table.map(([, p]) => p));
    const byStdin = await cli(['prefix'], `${table.map(([d]) => d).join('\r\n')}\n\n`);
    expect(byStdin.stdout.lines).toEqual(table.map(([, p]) => p));
    expect((await cli(['prefix', '-'], 'example.com')).stdout.lines).toEqual(['example-com']);
  });

  it('prefix --json lists every accepted form; a bad domain exits 3 and the others still print', async () => {
    const { code, stdout, stderr } = await cli(['prefix', '--json'], 'äb-c.com\nbad..com\nexample.com\n');
    expect(code).toBe(EXIT.badInput);
    const [first, second, third] = json(stdout);
    expect(first).toEqual({ domain: 'äb-c.com', prefix: 'xn--0-b--c-com-0-hcb', forms: prefixForms('äb-c.com') });
    expect(second).toMatchObject({ input: 'bad..com', error: { code: 'invalid-domain' } });
    expect(third).toMatchObject({ prefix: 'example-com' });
    expect(stderr.text).toBe('');
    const text = await cli(['prefix', 'bad..com']);
    expect([text.code, text.stdout.text]).toEqual([EXIT.badInput, '']);
    expect(text.stderr.text).toMatch(/bad\.\.com.*empty label/);
  });

  it('origin: one line per cache, or one cache', async () => {
    expect((await cli(['origin', 'www.example.com'])).stdout.lines).toEqual([cacheOrigin('www.example.com', 'google'), cacheOrigin('www.example.com', 'bing')]);
    expect((await cli(['origin', 'www.example.com', '--cache', 'bing'])).stdout.lines).toEqual(['https://www-example-com.www.bing-amp.com']);
    expect(json((await cli(['origin', '--json', 'example.com'])).stdout)[0]).toEqual({
      domain: 'example.com',
      origins: [
        { cache: 'google', origin: 'https://example-com.cdn.ampproject.org' },
        { cache: 'bing', origin: 'https://example-com.www.bing-amp.com' },
      ],
    });
  });

  it('url: SPEC §3 examples, serving types and widths', async () => {
    const { stdout } = await cli(['url', 'https://example.com/amp_document.html', 'http://example.com/logo.png', 'https://example.com/g?value=Hello%20World']);
    expect(stdout.lines).toEqual([
      'https://example-com.cdn.ampproject.org/c/s/example.com/amp_document.html',
      'https://example-com.cdn.ampproject.org/i/example.com/logo.png',
      'https://example-com.cdn.ampproject.org/c/s/example.com/g?value=Hello%20World',
    ]);
    expect((await cli(['url', 'https://example.com/a.jpg', '--type', 'ii', '--width', '800', '--cache', 'bing'])).stdout.lines).toEqual([
      'https://example-com.www.bing-amp.com/ii/w800/s/example.com/a.jpg',
    ]);
    expect((await cli(['url', 'https://example.com/', '--type', 'x'])).code).toBe(EXIT.usage);
    expect((await cli(['url', 'https://example.com/', '--width', '-3'])).code).toBe(EXIT.usage);
    expect((await cli(['url', 'not a url'])).code).toBe(EXIT.badInput);
    expect((await cli(['url', 'https://example.com/', '--type', 'ii'])).code).toBe(EXIT.badInput);
  });

  it('reverse: a domain (0), a hash or a non-cache origin (1), a malformed origin (3)', async () => {
    const readable = await cli(['reverse', 'https://0-en--us-example-com-0.cdn.ampproject.org', 'https://xn---com-p33b41770a.www.bing-amp.com']);
    expect([readable.code, readable.stdout.lines]).toEqual([0, ['en-us.example.com', 'xn--57hw060o.com']]);
    const hashed = await cli(['reverse', 'https://v2c4ucasgcskftbjt4c7phpkbqedcdcqo23tkamleapoa5o6fygq.cdn.ampproject.org']);
    expect(hashed.code).toBe(EXIT.denied);
    expect(hashed.stderr.text).toMatch(/hashed prefix.*not reversible/);
    expect((await cli(['reverse', 'https://example.com'])).code).toBe(EXIT.denied);
    expect((await cli(['reverse', 'https://Example-com.cdn.ampproject.org'])).code).toBe(EXIT.badInput);
    const lines = json((await cli(['reverse', '--json'], 'https://a--b-example-com.cdn.ampproject.org\nhttps://example.com\n')).stdout);
    expect(lines).toEqual([
      {
        origin: 'https://a--b-example-com.cdn.ampproject.org',
        ok: true,
        hashed: false,
        publisherDomain: 'a-b.example.com',
        prefix: 'a--b-example-com',
        form: 'spec',
        cache: 'google',
      },
      { origin: 'https://example.com', ok: false, reason: 'unknown-cache', detail: expect.any(String) },
    ]);
  });

  it('caches: the bundled registry', async () => {
    expect((await cli(['caches'])).stdout.lines).toEqual(['google\tcdn.ampproject.org\tGoogle AMP Cache', 'bing\twww.bing-amp.com\tBing AMP Cache']);
    expect(json((await cli(['caches', '--json'])).stdout).map((c) => c.cacheDomain)).toEqual(['cdn.ampproject.org', 'www.bing-amp.com']);
  });
});

describe('check and compile', () => {
  const publishersFile = join(dir, 'publishers.txt');
  writeFileSync(publishersFile, '# our sites\nexample.com\n*.example.org\n\n');

  it('check --publishers: a comma list or @file; allowed exits 0, any denied exits 1', async () => {
    const ok = await cli(['check', 'https://example-com.cdn.ampproject.org', '--publishers', 'example.com,www.example.com']);
    expect(ok.code).toBe(0);
    expect(ok.stdout.lines).toEqual(['allowed cache-origin https://example-com.cdn.ampproject.org — publisher example.com; cache google']);
    const mixed = await cli(
      ['check', '--publishers', '@publishers.txt', '--json'],
      'https://a-b-example-org.www.bing-amp.com\nhttps://evil-com.cdn.ampproject.org\n',
    );
    expect(mixed.code).toBe(EXIT.denied);
    expect(json(mixed.stdout)).toEqual([
      expect.objectContaining({ allowed: true, reason: 'cache-origin-wildcard', publisherDomain: 'a.b.example.org', cache: 'bing' }),
      expect.objectContaining({ allowed: false, reason: 'unknown-publisher', publisherDomain: 'evil.com', cache: 'google' }),
    ]);
    const origins = await cli(['check', 'http://localhost:8080', '--publishers', `@${publishersFile}`, '--origins', 'http://localhost:8080']);
    expect(origins.stdout.lines).toEqual(['allowed publisher-origin http://localhost:8080']);
  });

  it('check: configuration errors are bad input (3), unreadable files 4, wrong usage 2', async () => {
    expect((await cli(['check', 'https://x.com', '--publishers', 'co.uk'])).code).toBe(EXIT.badInput);
    expect((await cli(['check', 'https://x.com', '--publishers', '@missing.txt'])).code).toBe(EXIT.unreadableFile);
    expect((await cli(['check', 'https://x.com', '--allow-set', 'missing.acs'])).code).toBe(EXIT.unreadableFile);
    expect((await cli(['check', 'https://x.com'])).code).toBe(EXIT.usage);
    expect((await cli(['check', 'https://x.com', '--publishers', 'a.com', '--allow-set', 'x'])).code).toBe(EXIT.usage);
    expect((await cli(['check', 'https://x.com', '--origins', 'https://a.com', '--allow-set', 'x'])).code).toBe(EXIT.usage);
  });

  it('compile writes an allow-set that check --allow-set and loadAllowSet accept', async () => {
    const long = `${'a'.repeat(40)}.${'b'.repeat(30)}.example.com`;
    writeFileSync(join(dir, 'domains.txt'), `# customers\nexample.com\r\nwww.example.com\n\n⚡😊.com\n${long}\n`);
    const compiled = await cli(['compile', 'domains.txt', '-o', 'set.acs']);
    expect(compiled.code).toBe(0);
    expect(compiled.stdout.text).toMatch(/^wrote set\.acs: 4 domains, \d+ prefixes, \d+ bytes/);
    expect(compiled.stderr.text).toBe('');
    const set = loadAllowSet(readFileSync(join(dir, 'set.acs')));
    expect(set.domainCount).toBe(4);
    const hashed = prefixForms(long)[0]?.prefix as string;
    const checked = await cli(
      ['check', '--allow-set', 'set.acs'],
      `https://www-example-com.cdn.ampproject.org\nhttps://${hashed}.www.bing-amp.com\nhttps://evil-com.cdn.ampproject.org\n`,
    );
    expect(checked.code).toBe(EXIT.denied);
    expect(checked.stdout.lines).toEqual([
      'allowed cache-origin https://www-example-com.cdn.ampproject.org — publisher www.example.com; cache google; prefix of www.example.com, in the compiled allow-set',
      expect.stringMatching(/^allowed cache-origin-hashed https:\/\/[a-z2-7]{52}\.www\.bing-amp\.com — cache bing; .*not recoverable/),
      'denied unknown-publisher https://evil-com.cdn.ampproject.org — publisher evil.com; cache google; evil.com is not in the compiled allow-set',
    ]);
  });

  it('compile from stdin with options; --json summary', async () => {
    const { code, stdout } = await cli(
      ['compile', '-o', 'google.acs', '--cache', 'google', '--encoding', 'raw', '--hash-bytes', '20', '--json'],
      'example.com\nexample.net\n',
    );
    expect(code).toBe(0);
    expect(json(stdout)[0]).toMatchObject({
      file: 'google.acs',
      domains: 2,
      prefixes: prefixForms('example.com').length + prefixForms('example.net').length,
      caches: ['google'],
      encoding: 'raw',
      hashBytes: 20,
    });
    const set = loadAllowSet(readFileSync(join(dir, 'google.acs')));
    expect(set.verifyOrigin('https://example-net.www.bing-amp.com')).toMatchObject({ allowed: false, reason: 'unknown-origin' });
  });

  it('compile refuses a bad line with its line number and writes nothing', async () => {
    writeFileSync(join(dir, 'bad.txt'), 'example.com\n\nexa mple.com\n');
    const { code, stderr } = await cli(['compile', 'bad.txt', '-o', 'bad.acs']);
    expect(code).toBe(EXIT.badInput);
    expect(stderr.text).toMatch(/^ampcors: bad\.txt:3: Invalid domain "exa mple\.com"/);
    expect(existsSync(join(dir, 'bad.acs'))).toBe(false);
    expect((await cli(['compile', 'nope.txt', '-o', 'x.acs'])).code).toBe(EXIT.unreadableFile);
    expect((await cli(['compile', 'domains.txt'])).code).toBe(EXIT.usage);
    expect((await cli(['compile', 'domains.txt', '-o', 'x.acs', '--hash-bytes', '8'])).code).toBe(EXIT.usage);
    expect((await cli(['compile', 'domains.txt', '-o', join(dir, 'no', 'such', 'dir.acs')])).code).toBe(EXIT.unreadableFile);
    writeFileSync(join(dir, 'corrupt.acs'), 'not an allow-set');
    const corrupt = await cli(['check', 'https://example-com.cdn.ampproject.org', '--allow-set', 'corrupt.acs']);
    expect(corrupt.code).toBe(EXIT.badInput);
    expect(corrupt.stderr.text).toMatch(/Invalid allow-set/);
  });

  it('compile draws a progress bar only when stderr is a terminal', async () => {
    const many = Array.from({ length: 3000 }, (_, i) => `site${i}.example.com`).join('\n');
    writeFileSync(join(dir, 'many.txt'), many);
    const tty = await cli(['compile', 'many.txt', '-o', 'many.acs'], '', { stderrTTY: true });
    expect(tty.code).toBe(0);
    expect(tty.stderr.text).toContain('\r\x1b[K');
    expect(tty.stderr.text).toMatch(/sorting and encoding… 3,000 domains/);
    expect(tty.stderr.text.endsWith('\r\x1b[K')).toBe(true);
    const piped = await cli(['compile', 'many.txt', '-o', 'many.acs']);
    expect(piped.stderr.text).toBe('');
  });
});

describe('streaming', () => {
  it('answers each stdin line before the next one arrives (no buffering of the input)', async () => {
    const stdout = new Capture();
    const seenBeforeSecondLine: string[] = [];
    const stdin: InputStream = (async function* () {
      yield 'example.com\n';
      await new Promise((resolve) => setTimeout(resolve, 10));
      seenBeforeSecondLine.push(...stdout.lines);
      yield 'www.example.com\n';
    })();
    expect(await run(['prefix'], { stdin, stdout, stderr: new Capture(), cwd: dir })).toBe(0);
    expect(seenBeforeSecondLine).toEqual(['example-com']);
    expect(stdout.lines).toEqual(['example-com', 'www-example-com']);
  });

  it('checks 20,000 origins in one run and waits for a full stdout to drain', async () => {
    const origins = Array.from({ length: 20_000 }, (_, i) => `https://site${i}-example-com.cdn.ampproject.org`);
    let drains = 0;
    let written = 0;
    const listeners: (() => void)[] = [];
    const stdout: OutputStream = {
      write: () => {
        written++;
        if (written % 1000 === 0) {
          setTimeout(() => {
            drains++;
            listeners.splice(0).forEach((listener) => listener());
          }, 0);
          return false;
        }
        return true;
      },
      once: (_event, listener) => listeners.push(listener),
    };
    const stdin: InputStream = chunks(origins.join('\n'));
    const code = await run(['check', '--publishers', 'site7.example.com,site19999.example.com', '--json'], { stdin, stdout, stderr: new Capture(), cwd: dir });
    expect(code).toBe(EXIT.denied);
    expect(written).toBe(20_000);
    expect(drains).toBe(20);
  });
});
