/**
 * Attacker's review, session 15 (helper-70): the `ampcors` CLI fed hostile
 * text everywhere it takes text — stdin lines (with CRLF, a BOM, NUL), input
 * arguments, `--publishers`/`--origins` lists and @files, file names, option
 * values, unknown commands and options. Nothing a terminal acts on (C0 but
 * the newline, DEL, C1, bidi controls, line separators) may reach stdout or
 * stderr raw, `run()` must resolve (never throw) to a documented exit code,
 * and every `--json` line must parse.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { escapeControls } from '@ampcors/cli';
import { afterAll, describe, expect, it } from 'vitest';
import { ACTIVE, cliIn, type Result } from '../../packages/cli/test/harness.js';

const dir = mkdtempSync(join(tmpdir(), 'ampcors-h70-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
const cli = cliIn(dir);

/** What an attacker puts in an Origin, a log line, a domain list or a file name. */
const PAYLOADS = [
  '\x1b]0;PWNED\x07',
  '\x1b[2J',
  '\x1b]8;;https://evil.example\x1b\\x\x1b]8;;\x1b\\',
  '\x9b31m',
  '\r',
  '\u202e',
  '\u0000',
  '\u2028',
  '\u0085',
  '\x7f',
  '\x08',
];
const DOCUMENTED_EXITS = [0, 1, 2, 3, 4];

/** Fails on a raw active character in either output or an unparsable --json line. */
function expectSafe(result: Result, json: boolean, what: string): void {
  expect(DOCUMENTED_EXITS, what).toContain(result.code);
  for (const [name, text] of [
    ['stdout', result.stdout.text],
    ['stderr', result.stderr.text],
  ] as const) {
    const match = ACTIVE.exec(text);
    expect(match, `${what}: raw control on ${name}: ${JSON.stringify(text.slice(0, 160))}`).toBeNull();
  }
  if (json) for (const line of result.stdout.lines) expect(() => JSON.parse(line), `${what}: ${line.slice(0, 160)}`).not.toThrow();
}

writeFileSync(join(dir, 'ok.txt'), 'example.com\n');
writeFileSync(join(dir, 'hostile.txt'), PAYLOADS.map((p) => `ex${p}ample.com`).join('\n'));

describe('hostile text through every command (helper-70)', () => {
  for (const payload of PAYLOADS) {
    const origin = `https://www-ex${payload}ample-com.cdn.ampproject.org`;
    const domain = `ex${payload}ample.com`;
    it(`${JSON.stringify(payload)}: arguments, options and files`, async () => {
      const argvs: string[][] = [
        ['prefix', domain],
        ['origin', domain],
        ['url', `https://example.com/${payload}`],
        ['reverse', origin],
        ['explain', origin],
        ['explain', origin, '--publishers', '@hostile.txt'],
        ['check', origin, '--publishers', 'example.com'],
        ['check', origin, '--publishers', `example.com,${domain}`],
        ['check', origin, '--publishers', 'example.com', '--origins', `https://${domain}`],
        ['check', origin, '--publishers', '@hostile.txt'],
        ['check', origin, '--allow-set', `${domain}.acs`],
        ['compile', `${domain}.txt`, '-o', 'x.acs'],
        ['compile', 'hostile.txt', '-o', 'x.acs'],
        ['compile', 'ok.txt', '-o', `${dir}/missing${payload}/x.acs`],
        ['origin', 'example.com', '--cache', domain],
        ['url', 'https://example.com/', '--type', domain],
        ['url', 'https://example.com/', '--width', domain],
        [domain],
        ['help', domain],
        ['prefix', `--${domain}`],
        ['redis', domain],
        ['redis', 'count', '--url', `http://${domain}/`],
        ['redis', 'count', '--timeout', domain],
      ];
      // Not vacuous: the hostile origin is shown, escaped.
      const shown = await cli(['reverse', origin]);
      expect(shown.stderr.text + shown.stdout.text).toContain(escapeControls(origin));
      for (const argv of argvs) {
        for (const json of [false, true]) {
          const full = [...argv, ...(json ? ['--json'] : [])];
          expectSafe(await cli(full), json, JSON.stringify(full));
        }
      }
    });

    it(`${JSON.stringify(payload)}: stdin lines with CRLF, a BOM and NUL`, async () => {
      const stdin = `\ufeff${origin}\r\n${domain}\n\u0000${origin}\r\n#${payload}\n${origin}`;
      for (const argv of [['prefix'], ['reverse'], ['explain'], ['check', '--publishers', 'example.com'], ['compile', '-o', 'y.acs']]) {
        for (const json of [false, true]) {
          const full = [...argv, ...(json ? ['--json'] : [])];
          expectSafe(await cli(full, stdin), json, `stdin ${JSON.stringify(full)}`);
        }
      }
    });
  }

  it('a BOM before the first stdin origin is never read as part of an allowed origin', async () => {
    // check must not call an origin allowed that a middleware (which sees the BOM) denies.
    const result = await cli(['check', '--publishers', 'example.com', '--json'], '\ufeffhttps://example.com\n');
    expectSafe(result, true, 'bom');
    for (const line of result.stdout.lines) {
      const parsed = JSON.parse(line) as { allowed?: boolean; origin?: string; input?: string };
      if (parsed.allowed === true) expect(parsed.origin ?? parsed.input).toBe('https://example.com');
    }
  });
});
