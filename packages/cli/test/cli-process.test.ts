// The built `ampcors` bin run as a real process: shebang, exit codes,
// stdin piping, files. Builds core and cli first only if dist/ is missing.
import { execFileSync, spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

const root = fileURLToPath(new URL('../../../', import.meta.url));
const bin = join(root, 'packages/cli/dist/cli.js');
const dir = mkdtempSync(join(tmpdir(), 'ampcors-bin-'));

beforeAll(() => {
  if (!existsSync(bin) || !existsSync(join(root, 'packages/core/dist/index.js'))) {
    execFileSync('pnpm', ['--filter', '@ampcors/core', '--filter', '@ampcors/cli', 'run', 'build'], { cwd: root, stdio: 'ignore' });
  }
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const ampcors = (args: string[], input = '') => spawnSync(process.execPath, [bin, ...args], { input, cwd: dir, encoding: 'utf8', timeout: 60_000 });

describe('ampcors bin', () => {
  it('runs as an executable through its shebang', () => {
    expect(execFileSync(bin, ['prefix', 'en-us.example.com'], { encoding: 'utf8' })).toBe('0-en--us-example-com-0\n');
  });

  it('checks piped origins as JSON lines and exits 1 when one is denied', () => {
    const result = ampcors(['check', '--publishers', 'example.com', '--json'], 'https://example-com.cdn.ampproject.org\nhttps://evil-com.www.bing-amp.com\n');
    expect(result.status).toBe(1);
    const lines = result.stdout.trim().split('\n').map((line) => JSON.parse(line) as { allowed: boolean; reason: string });
    expect(lines.map((l) => [l.allowed, l.reason])).toEqual([
      [true, 'cache-origin'],
      [false, 'unknown-publisher'],
    ]);
  });

  it('compiles a list quietly when piped, and checks against the file', () => {
    writeFileSync(join(dir, 'domains.txt'), 'example.com\nwww.example.com\n');
    const compiled = ampcors(['compile', 'domains.txt', '-o', 'set.acs']);
    expect([compiled.status, compiled.stderr]).toEqual([0, '']);
    const checked = ampcors(['check', 'https://www-example-com.www.bing-amp.com', '--allow-set', 'set.acs']);
    expect(checked.status).toBe(0);
    expect(checked.stdout).toMatch(/^allowed cache-origin https:\/\/www-example-com\.www\.bing-amp\.com/);
  });

  it('reports bad input (3), unreadable files (4) and usage errors (2) on stderr', () => {
    const bad = ampcors(['prefix', 'bad..com']);
    expect([bad.status, bad.stdout]).toEqual([3, '']);
    expect(bad.stderr).toMatch(/^ampcors: bad\.\.com: Invalid domain/);
    expect(ampcors(['check', 'https://a.com', '--allow-set', 'missing.acs']).status).toBe(4);
    const usage = ampcors(['nope']);
    expect(usage.status).toBe(2);
    expect(usage.stderr).toMatch(/unknown command/);
  });
});
