// The built `ampcors` bin run as a real process: shebang, exit codes,
// stdin piping, files, Redis unreachable. Builds core and redis only if their
// dist/ is missing, and cli when its dist/ is missing or older than its sources
// (with npx pnpm@10.34.9: only Node and npm needed).
import { execFileSync, spawnSync } from 'node:child_process';
import { cpSync, existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, symlinkSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

const root = fileURLToPath(new URL('../../../', import.meta.url));
const bin = join(root, 'packages/cli/dist/cli.js');
const dir = mkdtempSync(join(tmpdir(), 'ampcors-bin-'));

/** True when the bin is missing or a CLI source file changed after it was built. */
function binIsStale(): boolean {
  if (!existsSync(bin)) return true;
  const built = statSync(bin).mtimeMs;
  const src = join(root, 'packages/cli/src');
  return readdirSync(src).some((name) => statSync(join(src, name)).mtimeMs > built);
}

beforeAll(() => {
  const filters = ['core', 'redis'].filter((name) => !existsSync(join(root, `packages/${name}/dist/index.js`))).map((name) => `@ampcors/${name}`);
  if (filters.length > 0 || binIsStale()) filters.push('@ampcors/cli');
  if (filters.length > 0) {
    execFileSync('npx', ['-y', 'pnpm@10.34.9', ...filters.flatMap((f) => ['--filter', f]), 'run', 'build'], { cwd: root, stdio: 'pipe' });
  }
}, 180_000);
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const ampcors = (args: string[], input = '') => spawnSync(process.execPath, [bin, ...args], { input, cwd: dir, encoding: 'utf8', timeout: 60_000 });

describe('ampcors bin', () => {
  it('runs as an executable through its shebang', () => {
    expect(execFileSync(bin, ['prefix', 'en-us.example.com'], { encoding: 'utf8' })).toBe('0-en--us-example-com-0\n');
  });

  it('checks piped origins as JSON lines and exits 1 when one is denied', () => {
    const result = ampcors(['check', '--publishers', 'example.com', '--json'], 'https://example-com.cdn.ampproject.org\nhttps://evil-com.www.bing-amp.com\n');
    expect(result.status).toBe(1);
    const lines = result.stdout
      .trim()
      .split('\n')
      .map((line) => JSON.parse(line) as { allowed: boolean; reason: string });
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

  it('explains a piped origin as JSON', () => {
    const result = ampcors(['explain', '--json', '--publishers', 'en-us.example.com'], 'https://0-en--us-example-com-0.cdn.ampproject.org\n');
    expect(result.status).toBe(0);
    const explanation = JSON.parse(result.stdout) as { result: { publisherDomain: string }; verdict: { allowed: boolean } };
    expect([explanation.result.publisherDomain, explanation.verdict.allowed]).toEqual(['en-us.example.com', true]);
  });

  it('Redis unreachable: exit 5, one line on stderr, and the process ends by itself', async () => {
    const port = await new Promise<number>((resolve) => {
      const probe = createServer().listen(0, '127.0.0.1', () => {
        const address = probe.address();
        probe.close(() => resolve(typeof address === 'object' && address ? address.port : 0));
      });
    });
    const started = Date.now();
    const result = ampcors(['redis', 'add', 'shop.example', '--url', `redis://127.0.0.1:${port}`, '--timeout', '500']);
    expect(result.status).toBe(5);
    expect(result.stdout).toBe('');
    expect(result.stderr).toBe(
      `ampcors: Redis at redis://127.0.0.1:${port} is unavailable: Redis did not answer within 500 ms (is redis-server running there? see --url)\n`,
    );
    expect(Date.now() - started).toBeLessThan(10_000);
  });

  it('shows a terminal escape from piped input escaped, never raw (issue 14 item 10)', () => {
    const result = ampcors(['check', '--publishers', 'example.com'], 'https://\x1b]0;PWNED\x07evil.com\n');
    expect(result.status).toBe(3);
    expect(result.stderr).toContain('https://\\x1b]0;PWNED\\x07evil.com');
    expect(result.stderr + result.stdout).not.toMatch(/[\x00-\x09\x0b-\x1f\x7f-\x9f]/);
  });
});

describe('@ampcors/redis is an optional peer, loaded only by `ampcors redis`', () => {
  it('package.json: a peer marked optional, not a dependency', () => {
    const pkg = JSON.parse(readFileSync(join(root, 'packages/cli/package.json'), 'utf8')) as Record<string, Record<string, unknown> | undefined>;
    expect(Object.keys(pkg.dependencies ?? {})).toEqual(['@ampcors/core']);
    expect(pkg.peerDependencies).toHaveProperty('@ampcors/redis');
    expect(pkg.peerDependenciesMeta).toEqual({ '@ampcors/redis': { optional: true } });
  });

  it('installed without it: every other command works; `redis` says what to install and exits 6 (ESM bin and CJS entry)', () => {
    // An install layout with @ampcors/cli and @ampcors/core only.
    const install = mkdtempSync(join(tmpdir(), 'ampcors-no-redis-'));
    try {
      const modules = join(install, 'node_modules', '@ampcors');
      mkdirSync(join(modules, 'cli'), { recursive: true });
      cpSync(join(root, 'packages/cli/dist'), join(modules, 'cli', 'dist'), { recursive: true });
      cpSync(join(root, 'packages/cli/package.json'), join(modules, 'cli', 'package.json'));
      symlinkSync(join(root, 'packages/core'), join(modules, 'core'), 'dir');
      const installedBin = join(modules, 'cli', 'dist', 'cli.js');
      const run = (args: string[]) => spawnSync(process.execPath, [installedBin, ...args], { cwd: install, encoding: 'utf8', timeout: 60_000 });
      expect(run(['prefix', 'en-us.example.com']).stdout).toBe('0-en--us-example-com-0\n');
      expect(run(['check', 'https://example-com.cdn.ampproject.org', '--publishers', 'example.com']).status).toBe(0);
      const missing = run(['redis', 'count']);
      expect(missing.status).toBe(6);
      expect(missing.stdout).toBe('');
      expect(missing.stderr).toBe(
        'ampcors: ampcors redis needs the optional package @ampcors/redis, which is not installed: run `npm install @ampcors/redis` (next to @ampcors/cli; globally: npm install -g @ampcors/redis)\n',
      );
      const asJson = run(['redis', 'count', '--json']);
      expect([asJson.status, JSON.parse(asJson.stdout)]).toEqual([
        6,
        { error: { code: 'missing-package', message: expect.stringContaining('npm install @ampcors/redis') } },
      ]);
      const cjs = spawnSync(
        process.execPath,
        ['-e', `require(${JSON.stringify(join(modules, 'cli', 'dist', 'index.cjs'))}).run(['redis', 'count']).then((code) => process.exit(code))`],
        {
          cwd: install,
          encoding: 'utf8',
          timeout: 60_000,
        },
      );
      expect([cjs.status, cjs.stderr]).toEqual([6, expect.stringContaining('needs the optional package @ampcors/redis')]);
    } finally {
      rmSync(install, { recursive: true, force: true });
    }
  });
});
