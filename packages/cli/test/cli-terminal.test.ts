// Issue 14 item 10: origins from access logs are attacker-controlled, and the
// CLI must show them, never let the terminal obey them. Every command that
// prints its input (or a file's lines, a file name, an argument) is fed
// control sequences — an OSC window title, CSI screen clears, a one-byte C1
// CSI, DEL, bidi overrides and isolates — and its text output must contain
// none of them raw, while its --json output parses back to the same input.
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { escapeControls, jsonLine } from '@ampcors/cli';
import { ACTIVE, cliIn, json, type Result } from './harness.js';
import { trimAsciiSpace } from '../src/input-lines.js';

const dir = mkdtempSync(join(tmpdir(), 'ampcors-terminal-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
const cli = cliIn(dir);

/** Control sequences an attacker can put in an Origin header, a log line or a file. */
const PAYLOADS = [
  '\x1b]0;PWNED\x07', // OSC: set the window title
  '\x1b[2J\x1b[H', // CSI: clear the screen, cursor home
  '\x1b]8;;https://evil.example\x1b\\', // OSC 8: a hyperlink
  '\x9b31m', // C1 CSI (one character)
  '\x7f', // DEL
  '\u202e', // RIGHT-TO-LEFT OVERRIDE
  '\u2066', // LEFT-TO-RIGHT ISOLATE
  '\u200f', // RIGHT-TO-LEFT MARK
  'a\rb', // carriage return: overwrite the line
  '\x00\x08', // NUL, backspace
  '\u2028', // LINE SEPARATOR
];

/** Fails when a text output holds a raw control character; returns the outputs. */
function expectInert(result: Result, what: string): Result {
  for (const [name, capture] of [
    ['stdout', result.stdout],
    ['stderr', result.stderr],
  ] as const) {
    const match = ACTIVE.exec(capture.text);
    expect(
      match,
      `${what}: raw U+${match?.[0].codePointAt(0)?.toString(16).padStart(4, '0')} on ${name}: ${JSON.stringify(capture.text.slice(0, 200))}`,
    ).toBeNull();
  }
  return result;
}

/** Every --json line parses, holds no raw control character, and `key` gives the input back. */
function expectJsonRoundTrip(result: Result, inputs: readonly string[], keys: readonly string[], what: string): void {
  expectInert(result, what);
  const lines = json(result.stdout);
  expect(lines.length, what).toBe(inputs.length);
  lines.forEach((line, i) => {
    const echoed = keys.map((key) => line[key]).find((value) => typeof value === 'string');
    // Lines are trimmed of ASCII spaces, tabs and CRs only (U+2028 and U+00A0 stay: a server would see them) before use.
    expect(echoed, `${what} line ${i}`).toBe(trimAsciiSpace(inputs[i] ?? ''));
  });
}

beforeAll(async () => {
  writeFileSync(join(dir, 'domains.txt'), 'example.com\nwww.example.com\n');
  expect((await cli(['compile', 'domains.txt', '-o', 'set.acs'])).code).toBe(0);
});

describe('escapeControls and jsonLine', () => {
  it('make every active character visible, and leave the rest alone', () => {
    expect(escapeControls('https://\x1b]0;PWNED\x07evil.com')).toBe('https://\\x1b]0;PWNED\\x07evil.com');
    expect(escapeControls('\x9b\x7f\u202e\u2069\t')).toBe('\\x9b\\x7f\\u202e\\u2069\\x09');
    expect(escapeControls('https://xn--57hw060o.com ⚡😊 — é')).toBe('https://xn--57hw060o.com ⚡😊 — é');
  });

  it('property: no output of escapeControls is active; jsonLine parses back to the same value and is inert', () => {
    const char = fc.oneof(fc.constantFrom(...[...PAYLOADS.join('')]), fc.string({ unit: 'binary', minLength: 1, maxLength: 1 }));
    fc.assert(
      fc.property(fc.array(char, { maxLength: 40 }), (chars) => {
        const text = chars.join('');
        expect(ACTIVE.test(escapeControls(text).replaceAll('\n', ''))).toBe(false);
        const line = jsonLine({ input: text });
        expect(ACTIVE.test(line)).toBe(false);
        expect(JSON.parse(line)).toEqual({ input: text });
      }),
      { numRuns: 500 },
    );
  });
});

describe('the issue\'s example: printf "https://\\x1b]0;PWNED\\x07evil.com\\n" | ampcors check …', () => {
  it('shows the sequence escaped on stderr (exit 3: not a valid Origin) and keeps --json valid', async () => {
    const input = 'https://\x1b]0;PWNED\x07evil.com';
    const text = expectInert(await cli(['check', '--publishers', 'example.com'], `${input}\n`), 'check');
    expect(text.code).toBe(3);
    expect(text.stderr.text).toContain('https://\\x1b]0;PWNED\\x07evil.com');
    const asJson = await cli(['check', '--publishers', 'example.com', '--json'], `${input}\n`);
    expectJsonRoundTrip(asJson, [input], ['input'], 'check --json');
  });
});

/** Each command that echoes its input, how to run it, and where its --json lines give the input back. */
const COMMANDS: { name: string; argv: string[]; keys: string[]; wrap: (payload: string) => string }[] = [
  { name: 'prefix', argv: ['prefix'], keys: ['input', 'domain'], wrap: (p) => `exa${p}mple.com` },
  { name: 'origin', argv: ['origin'], keys: ['input', 'domain'], wrap: (p) => `www.${p}example.com` },
  { name: 'url', argv: ['url'], keys: ['input', 'url'], wrap: (p) => `https://example.com/${p}page.html` },
  { name: 'url (host)', argv: ['url'], keys: ['input', 'url'], wrap: (p) => `https://exa${p}mple.com/` },
  { name: 'reverse', argv: ['reverse'], keys: ['input', 'origin'], wrap: (p) => `https://${p}evil-com.cdn.ampproject.org` },
  { name: 'explain', argv: ['explain'], keys: ['input', 'origin'], wrap: (p) => `https://evil${p}.example` },
  {
    name: 'explain --publishers',
    argv: ['explain', '--publishers', 'example.com'],
    keys: ['input', 'origin'],
    wrap: (p) => `https://example-com.cdn.ampproject.org${p}`,
  },
  { name: 'check --publishers', argv: ['check', '--publishers', 'example.com'], keys: ['input', 'origin'], wrap: (p) => `https://${p}evil.com` },
  { name: 'check --allow-set', argv: ['check', '--allow-set', 'set.acs'], keys: ['input', 'origin'], wrap: (p) => `https://evil-com.cdn.ampproject.org/${p}` },
];

describe('every command that prints its input, in text and in --json', () => {
  it.each(COMMANDS)('$name: each payload, from stdin and as an argument', async ({ name, argv, keys, wrap }) => {
    const inputs = PAYLOADS.map(wrap);
    // stdin: one per line (none holds a newline), and the exit code is whatever the command says.
    expectInert(await cli(argv, `${inputs.join('\n')}\n`), `${name} (stdin)`);
    expectJsonRoundTrip(await cli([...argv, '--json'], `${inputs.join('\n')}\n`), inputs, keys, `${name} --json`);
    for (const input of inputs) {
      const result = expectInert(await cli([...argv, input]), `${name} ${JSON.stringify(input)}`);
      // The input is shown (escaped), not dropped: something names it.
      expect(result.stdout.text + result.stderr.text).toContain(escapeControls(input).slice(0, 12));
    }
  });

  it('property: any line of text, through every command, never reaches the terminal raw', async () => {
    const unit = fc.oneof(
      fc.constantFrom(...[...PAYLOADS.join('')]),
      fc.constantFrom('https://', 'example', '-com', '.', 'cdn.ampproject.org', '/', ':443'),
      fc.string({ unit: 'binary', maxLength: 3 }),
    );
    await fc.assert(
      fc.asyncProperty(
        fc.array(unit, { minLength: 1, maxLength: 12 }).map((parts) => parts.join('').replace(/[\n\r]/g, '')),
        fc.constantFrom(...COMMANDS),
        async (line, command) => {
          const input = trimAsciiSpace(line) === '' ? 'x' : line;
          expectInert(await cli([...command.argv], `${input}\n`), command.name);
          const asJson = await cli([...command.argv, '--json'], `${input}\n`);
          expectInert(asJson, `${command.name} --json`);
          for (const parsed of json(asJson.stdout)) expect(command.keys.map((key) => parsed[key])).toContain(trimAsciiSpace(input));
        },
      ),
      { numRuns: 150 },
    );
  });

  it('lists and file names: a hostile --publishers item, @file name, list file line, compile line and -o name', async () => {
    const evil = '\x1b]0;PWNED\x07';
    expectInert(await cli(['check', 'https://example.com', '--publishers', `exa${evil}mple.com`]), 'bad --publishers item');
    expectInert(await cli(['check', 'https://example.com', '--publishers', `@missing${evil}.txt`]), '@file name');
    writeFileSync(join(dir, 'evil-list.txt'), `example.com\nbad${evil}\u202e.com\n`);
    expectInert(await cli(['check', 'https://example.com', '--publishers', '@evil-list.txt']), 'list file line');
    expectInert(await cli(['explain', 'https://example.com', '--origins', `https://a${evil}.com`, '--publishers', 'example.com']), '--origins item');
    writeFileSync(join(dir, 'evil-domains.txt'), `example.com\nx${evil}\x9b.com\n`);
    expectInert(await cli(['compile', 'evil-domains.txt', '-o', 'x.acs']), 'compile line');
    const named = expectInert(await cli(['compile', 'domains.txt', '-o', `out${evil}.acs`]), 'compile -o name');
    expect(named.stdout.text).toContain('out\\x1b]0;PWNED\\x07.acs');
    expectInert(await cli(['compile', `in${evil}.txt`, '-o', 'x.acs']), 'compile input name');
  });

  it('usage errors echo the command, option or value escaped, in text and as JSON', async () => {
    const evil = '\x1b[2J\u202e';
    for (const argv of [
      [`pre${evil}fix`],
      ['prefix', `--bo${evil}gus`],
      ['origin', 'a.com', '--cache', evil],
      ['url', 'https://a.com/', '--type', evil],
      ['help', evil],
    ]) {
      const text = expectInert(await cli(argv), argv.join(' '));
      expect(text.code).toBe(2);
      const asJson = expectInert(await cli([...argv, '--json']), `${argv.join(' ')} --json`);
      expect(asJson.stderr.text).toBe('');
      expect(json(asJson.stdout)).toEqual([{ error: { code: 'usage', message: expect.any(String) } }]);
    }
  });

  it('caches: tab-separated fields, and nothing else raw', async () => {
    const { stdout } = await cli(['caches']);
    expect(ACTIVE.test(stdout.text.replaceAll('\t', ''))).toBe(false);
    expect(stdout.lines[0]?.split('\t')).toHaveLength(3);
  });
});
