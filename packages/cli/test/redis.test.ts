// `ampcors redis …` against a real redis-server (Debian's package) on a free
// loopback port, started and stopped by the test; every change is checked
// through a separate createRedisRegistry, as a server of the fleet sees it.
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { cacheOrigin, createAsyncVerifier, prefixForms } from '@ampcors/core';
import { EXIT, type InputStream, run } from '@ampcors/cli';
import { createRedisRegistry, type RedisRegistry } from '@ampcors/redis';
import { freePort, startTestRedis, type TestRedis } from '../../../test/setup/redis-server.js';
import { ACTIVE, Capture, cliIn, json } from './harness.js';

const dir = mkdtempSync(join(tmpdir(), 'ampcors-redis-cli-'));
const cli = cliIn(dir);
let redis: TestRedis;
const registries: RedisRegistry[] = [];
let namespaces = 0;

/** A fresh key namespace, the CLI options that name it, and a registry reading it (no local caching). */
function namespace(): { args: string[]; registry: RedisRegistry; keyPrefix: string } {
  const keyPrefix = `cli${namespaces++}:`;
  const registry = createRedisRegistry({ url: redis.url, keyPrefix, ttlMs: 0, negativeTtlMs: 0 });
  registries.push(registry);
  return { args: ['--url', redis.url, '--key-prefix', keyPrefix], registry, keyPrefix };
}

beforeAll(async () => {
  redis = await startTestRedis();
}, 60_000);

afterAll(async () => {
  await Promise.all(registries.map((r) => r.close()));
  await redis.stop();
  rmSync(dir, { recursive: true, force: true });
});

describe('redis add, remove, load, count', () => {
  it('add: arguments are canonicalized and stored with every prefix form; counts are printed', async () => {
    const { args, registry, keyPrefix } = namespace();
    const added = await cli(['redis', 'add', 'Shop.Example', 'blog.example', 'shop.example', ...args]);
    expect([added.code, added.stderr.text]).toEqual([EXIT.ok, '']);
    expect(added.stdout.lines).toEqual([`added 2 of 3 domains (1 already present); ${keyPrefix}domains holds 2`]);
    expect(await registry.size()).toBe(2);
    expect(await registry.hasPublisher('shop.example')).toBe(true);
    for (const { prefix } of prefixForms('blog.example')) expect(await registry.publisherOfPrefix(prefix)).toBe('blog.example');
    const again = await cli(['redis', 'add', 'blog.example', 'news.example', '--json', ...args]);
    expect(json(again.stdout)).toEqual([{ command: 'add', domains: 2, added: 1, total: 3, key: `${keyPrefix}domains` }]);
  });

  it('add from stdin: one domain per line, blank lines and # comments skipped', async () => {
    const { args, registry } = namespace();
    const { code, stdout } = await cli(['redis', 'add', '--json', ...args], '# customers\r\na.example\r\n\r\nb.example\n');
    expect(code).toBe(EXIT.ok);
    expect(json(stdout)[0]).toMatchObject({ domains: 2, added: 2, total: 2 });
    expect([await registry.hasPublisher('a.example'), await registry.hasPublisher('b.example')]).toEqual([true, true]);
  });

  it('remove: the domains and their prefixes go; absent ones are counted', async () => {
    const { args, registry, keyPrefix } = namespace();
    await registry.add(['keep.example', 'gone.example']);
    const removed = await cli(['redis', 'remove', 'gone.example', 'never.example', ...args]);
    expect(removed.code).toBe(EXIT.ok);
    expect(removed.stdout.lines).toEqual([`removed 1 of 2 domains (1 not present); ${keyPrefix}domains holds 1`]);
    expect(await registry.hasPublisher('gone.example')).toBe(false);
    expect(await registry.publisherOfPrefix('gone-example')).toBeUndefined();
    expect(await registry.hasPublisher('keep.example')).toBe(true);
    expect(json((await cli(['redis', 'remove', '--json', ...args], 'keep.example\n')).stdout)).toEqual([
      { command: 'remove', domains: 1, removed: 1, total: 0, key: `${keyPrefix}domains` },
    ]);
  });

  it('load: a file of 5,000 domains (a hashed one among them), then stdin; a verifier on the registry allows them', async () => {
    const { args, registry } = namespace();
    const long = `${'a'.repeat(40)}.${'b'.repeat(30)}.example.com`;
    const domains = [...Array.from({ length: 4999 }, (_, i) => `shop${i}.example${i % 13}.com`), long];
    writeFileSync(join(dir, 'domains.txt'), `# fleet\n${domains.join('\n')}\n\n`);
    const loaded = await cli(['redis', 'load', 'domains.txt', ...args]);
    expect([loaded.code, loaded.stdout.lines]).toEqual([
      EXIT.ok,
      [expect.stringMatching(/^loaded 5000 domains: 5000 new, 0 already present; cli\d+:domains holds 5000$/)],
    ]);
    expect(await registry.size()).toBe(5000);
    const verifier = createAsyncVerifier({ source: registry });
    await expect(verifier.verify(cacheOrigin(long, 'bing'))).resolves.toMatchObject({ allowed: true, reason: 'cache-origin-hashed', publisherDomain: long });
    await expect(verifier.verify(cacheOrigin('shop4998.example6.com'))).resolves.toMatchObject({ allowed: true });
    const piped = await cli(['redis', 'load', '-', '--json', ...args], 'shop1.example1.com\nfresh.example\n');
    expect(json(piped.stdout)).toEqual([expect.objectContaining({ command: 'load', domains: 2, added: 1, total: 5001 })]);
  });

  it('count: how many domains the namespace holds', async () => {
    const { args, registry, keyPrefix } = namespace();
    await registry.add(['one.example', 'two.example', 'three.example']);
    expect((await cli(['redis', 'count', ...args])).stdout.lines).toEqual([`${keyPrefix}domains holds 3`]);
    expect(json((await cli(['redis', 'count', '--json', ...args])).stdout)).toEqual([{ command: 'count', total: 3, key: `${keyPrefix}domains` }]);
  });
});

describe('redis: invalid input writes nothing', () => {
  it('load: every invalid line is reported with its number (exit 3), and not even the valid lines are written', async () => {
    const { args, registry } = namespace();
    writeFileSync(join(dir, 'bad.txt'), 'good1.example\n\nexa mple.com\ngood2.example\nbad..example\n');
    const { code, stdout, stderr } = await cli(['redis', 'load', 'bad.txt', ...args]);
    expect([code, stdout.text]).toEqual([EXIT.badInput, '']);
    expect(stderr.lines).toEqual([
      expect.stringMatching(/^ampcors: bad\.txt:3: Invalid domain "exa mple\.com"/),
      expect.stringMatching(/^ampcors: bad\.txt:5: Invalid domain "bad\.\.example"/),
      'ampcors: 2 invalid domains; nothing was written to Redis',
    ]);
    expect(await registry.size()).toBe(0);
  });

  it('many invalid lines: the first 20 are listed, the rest counted', async () => {
    const { args, registry } = namespace();
    const lines = Array.from({ length: 30 }, (_, i) => (i % 2 === 0 ? `ok${i}.example` : `bad_${i}..example`));
    const { code, stderr } = await cli(['redis', 'load', '-', ...args], lines.join('\n'));
    expect(code).toBe(EXIT.badInput);
    expect(stderr.lines.filter((l) => /^ampcors: stdin:\d+: /.test(l))).toHaveLength(15);
    const many = Array.from({ length: 25 }, (_, i) => `bad ${i}.example`);
    const capped = await cli(['redis', 'add', ...args, '--', ...many]);
    expect(capped.stderr.lines.filter((l) => /^ampcors: argument \d+: /.test(l))).toHaveLength(20);
    expect(capped.stderr.text).toContain('… and 5 more invalid domains');
    expect(capped.stderr.text).toContain('25 invalid domains; nothing was written');
    expect(await registry.size()).toBe(0);
  });

  it('add and remove: an invalid argument names its position; nothing changes', async () => {
    const { args, registry } = namespace();
    await registry.add(['stay.example']);
    const add = await cli(['redis', 'add', 'new.example', 'bad_.example', ...args]);
    expect(add.code).toBe(EXIT.badInput);
    expect(add.stderr.text).toMatch(/^ampcors: argument 2: Invalid domain "bad_\.example"/);
    const remove = await cli(['redis', 'remove', 'stay.example', 'x..y', ...args]);
    expect(remove.code).toBe(EXIT.badInput);
    expect([await registry.hasPublisher('new.example'), await registry.hasPublisher('stay.example')]).toEqual([false, true]);
  });

  it("add and load: a public suffix or an AMP cache's own domain is refused as the publishers option refuses it; remove still takes it", async () => {
    const { args, registry } = namespace();
    // Attacker's review, session 17: the registry took what an in-memory verifier refuses at start-up.
    const add = await cli(['redis', 'add', 'shop.example', 'github.io', 'cdn.ampproject.org', ...args]);
    expect(add.code).toBe(EXIT.badInput);
    expect(add.stderr.lines[0]).toMatch(/^ampcors: argument 2: "github\.io" is a public suffix/);
    expect(add.stderr.lines[1]).toMatch(/^ampcors: argument 3: "cdn\.ampproject\.org" covers the/);
    writeFileSync(join(dir, 'suffixes.txt'), 'good.example\nco.uk\ns3.amazonaws.com\n');
    const load = await cli(['redis', 'load', 'suffixes.txt', ...args]);
    expect(load.code).toBe(EXIT.badInput);
    expect(load.stderr.lines.slice(0, 2)).toEqual([
      expect.stringMatching(/^ampcors: suffixes\.txt:2: "co\.uk"/),
      expect.stringMatching(/^ampcors: suffixes\.txt:3: "s3\.amazonaws\.com"/),
    ]);
    expect(await registry.size()).toBe(0);
    expect((await cli(['redis', 'remove', 'github.io', ...args])).code).toBe(EXIT.ok);
  });

  it('usage errors (2) and unreadable files (4)', async () => {
    const { args } = namespace();
    for (const argv of [
      ['redis'],
      ['redis', 'frob'],
      ['redis', 'count', 'extra'],
      ['redis', 'load', 'a.txt', 'b.txt'],
      ['redis', 'count', '--url', 'http://127.0.0.1:6379'],
      ['redis', 'count', '--url', 'not a url'],
      ['redis', 'count', '--timeout', '0'],
    ]) {
      const { code, stderr } = await cli([...argv, ...(argv.includes('--url') ? [] : args)]);
      expect(code, argv.join(' ')).toBe(EXIT.usage);
      expect(stderr.text).toMatch(/^ampcors: /);
    }
    expect((await cli(['redis', 'add', ...args], '', { stdinTTY: true })).stderr.text).toMatch(/no domains given/);
    const missing = await cli(['redis', 'load', 'missing.txt', ...args]);
    expect([missing.code, missing.stderr.text]).toEqual([EXIT.unreadableFile, 'ampcors: cannot read missing.txt: no such file or directory\n']);
    expect((await cli(['redis', 'load', '.', ...args])).code).toBe(EXIT.unreadableFile);
  });
});

describe('redis check', () => {
  it('judges origins as createAsyncVerifier over the registry does; exit 1 when one is denied', async () => {
    const { args, registry } = namespace();
    await registry.add(['shop.example', 'en-us.example.com']);
    const origins = [
      'https://shop-example.cdn.ampproject.org',
      'https://0-en--us-example-com-0.www.bing-amp.com',
      'https://shop.example',
      'https://evil-example.cdn.ampproject.org',
    ];
    const { code, stdout } = await cli(['redis', 'check', '--json', ...args], origins.join('\n'));
    expect(code).toBe(EXIT.denied);
    const verifier = createAsyncVerifier({ source: registry });
    const expected = await Promise.all(origins.map(async (o) => verifier.verify(o)));
    expect(json(stdout)).toEqual(expected.map((v) => JSON.parse(JSON.stringify({ ...v, ...(v.cache ? { cache: v.cache.id } : {}) }))));
    expect(expected.map((v) => v.allowed)).toEqual([true, true, true, false]);
    const one = await cli(['redis', 'check', 'https://shop-example.cdn.ampproject.org', ...args]);
    expect([one.code, one.stdout.lines]).toEqual([
      EXIT.ok,
      ['allowed cache-origin https://shop-example.cdn.ampproject.org — publisher shop.example; cache google'],
    ]);
  });
});

describe('redis: hostile input is shown escaped; a malformed origin is exit 3 as in every command', () => {
  const EVIL = ['\x1b]0;PWNED\x07', '\x9b2J', '\u202e', '\x7f'];

  it('check: escaped text, valid JSON, exit 3 with a did-you-mean', async () => {
    const { args, registry } = namespace();
    await registry.add(['shop.example']);
    const origins = EVIL.map((e) => `https://${e}shop-example.cdn.ampproject.org`);
    const text = await cli(['redis', 'check', ...args], origins.join('\n'));
    expect(text.code).toBe(EXIT.badInput);
    expect(ACTIVE.test(text.stdout.text + text.stderr.text)).toBe(false);
    expect(text.stderr.text).toContain('\\x1b]0;PWNED\\x07');
    const asJson = await cli(['redis', 'check', '--json', ...args], origins.join('\n'));
    expect(ACTIVE.test(asJson.stdout.text)).toBe(false);
    expect(json(asJson.stdout).map((line) => line.input)).toEqual(origins);
    const typo = await cli(['redis', 'check', 'https://Shop-example.cdn.ampproject.org/', '--json', ...args]);
    expect([typo.code, json(typo.stdout)]).toEqual([
      EXIT.badInput,
      [
        {
          input: 'https://Shop-example.cdn.ampproject.org/',
          error: expect.objectContaining({ code: 'invalid-origin', suggestion: 'https://shop-example.cdn.ampproject.org' }),
        },
      ],
    ]);
  });

  it('add and load: invalid domains are listed escaped, or as JSON error lines with their input', async () => {
    const { args, registry } = namespace();
    const domains = EVIL.map((e) => `a${e}.example`);
    const text = await cli(['redis', 'add', ...args, '--', ...domains]);
    expect(text.code).toBe(EXIT.badInput);
    expect(ACTIVE.test(text.stdout.text + text.stderr.text)).toBe(false);
    expect(text.stderr.lines).toHaveLength(domains.length + 1);
    const asJson = await cli(['redis', 'load', '-', '--json', ...args], domains.join('\n'));
    expect(asJson.code).toBe(EXIT.badInput);
    expect(asJson.stderr.text).toBe('');
    expect(json(asJson.stdout)).toEqual([
      ...domains.map((input) => ({ input, error: { code: 'invalid-domain', message: expect.any(String) } })),
      { error: { code: 'invalid-domain', message: '4 invalid domains; nothing was written to Redis' } },
    ]);
    expect(await registry.size()).toBe(0);
  });

  it('Redis unavailable with --json: one {"error"} line, exit 5', async () => {
    const closed = await freePort();
    const { code, stdout, stderr } = await cli(['redis', 'count', '--json', '--url', `redis://127.0.0.1:${closed}`, '--timeout', '300']);
    expect([code, stderr.text]).toEqual([EXIT.unavailable, '']);
    expect(json(stdout)).toEqual([
      { error: { code: 'redis-unavailable', message: expect.stringMatching(/^Redis at redis:\/\/127\.0\.0\.1:\d+ is unavailable: /) } },
    ]);
  });
});

describe('redis unavailable', () => {
  it('every subcommand exits 5 with one clear line, no stack trace, credentials hidden', async () => {
    const closed = await freePort(); // nothing listens there
    const url = `redis://admin:s3cret@127.0.0.1:${closed}`;
    writeFileSync(join(dir, 'ok.txt'), 'a.example\n');
    for (const argv of [['add', 'a.example'], ['remove', 'a.example'], ['load', 'ok.txt'], ['count'], ['check', 'https://a-example.cdn.ampproject.org']]) {
      const started = Date.now();
      const { code, stdout, stderr } = await cli(['redis', ...argv, '--url', url, '--timeout', '300']);
      expect(code, argv[0]).toBe(EXIT.unavailable);
      expect(stdout.text).toBe('');
      expect(stderr.lines).toEqual([
        `ampcors: Redis at redis://***:***@127.0.0.1:${closed} is unavailable: Redis did not answer within 300 ms (is redis-server running there? see --url)`,
      ]);
      expect(Date.now() - started).toBeLessThan(5000);
    }
    // With a timeout longer than the registry's connect wait, the registry's own error is the reason, stated once.
    const slow = await cli(['redis', 'count', '--url', url, '--timeout', '3000']);
    expect(slow.code).toBe(EXIT.unavailable);
    expect(slow.stderr.lines).toEqual([
      `ampcors: Redis at redis://***:***@127.0.0.1:${closed} is unavailable: Redis did not accept a connection within 1000 ms (is redis-server running there? see --url)`,
    ]);
    // Invalid input is reported first: no connection is needed to refuse it.
    expect((await cli(['redis', 'add', 'bad..example', '--url', url])).code).toBe(EXIT.badInput);
  });

  it('Redis stopping in the middle of `check` is exit 5 for the origins it could not judge', async () => {
    const { args, registry } = namespace();
    await registry.add(['up.example']);
    const stdout = new Capture();
    const stderr = new Capture();
    const stdin: InputStream = (async function* () {
      yield 'https://up-example.cdn.ampproject.org\n';
      await new Promise((r) => setTimeout(r, 20));
      await redis.stop();
      yield 'https://down-example.cdn.ampproject.org\n';
    })();
    try {
      const code = await run(['redis', 'check', ...args], { stdin, stdout, stderr, cwd: dir });
      expect(code).toBe(EXIT.unavailable);
      expect(stdout.lines).toEqual([
        'allowed cache-origin https://up-example.cdn.ampproject.org — publisher up.example; cache google',
        expect.stringMatching(/^denied source-unavailable https:\/\/down-example\.cdn\.ampproject\.org/),
      ]);
      expect(stderr.text).toMatch(
        /^ampcors: Redis at redis:\/\/127\.0\.0\.1:\d+\/? stopped answering: https:\/\/down-example\.cdn\.ampproject\.org could not be judged\n$/,
      );
    } finally {
      await redis.start();
    }
  }, 30_000);
});
