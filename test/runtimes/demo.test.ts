/**
 * `npm run demo` starts the Express example: the curl lines it prints must
 * work when pasted into a shell and do what their comments say, and Ctrl-C
 * (SIGINT) must stop it cleanly. Its launcher (examples/express/scripts/demo.mjs,
 * the root `demo` script) skips an install and builds that are up to date, so
 * a built machine serves within 5 s, and a port in use is one line naming PORT.
 */
import { type ChildProcess, execFile, spawn } from 'node:child_process';
import { createServer, type Server } from 'node:net';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { cacheOrigin, createVerifier } from '@ampcors/core';
import { playgroundFiles } from 'playground';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ensureBuilt, type ExampleProcess, ROOT, startExample } from './example-process.js';
import { subscriptions } from './publisher-api-scenarios.js';

const run = promisify(execFile);

interface TryIt {
  readonly comment: string;
  readonly curl: string;
}

/** The `# comment` + `curl …` pairs the demo printed. */
function tryItLines(output: string): TryIt[] {
  const lines = output.split('\n');
  const pairs: TryIt[] = [];
  lines.forEach((line, index) => {
    const previous = lines[index - 1];
    if (line.startsWith('curl ') && previous?.startsWith('# ')) pairs.push({ comment: previous.slice(2), curl: line });
  });
  return pairs;
}

/** Runs a printed line in `sh`, as a user pasting it would, and splits curl's `-i` output. */
async function paste(curl: string): Promise<{ status: number; headers: Map<string, string>; body: string }> {
  const { stdout } = await run('sh', ['-c', `${curl} --silent --show-error --max-time 10`], { timeout: 15_000 });
  const [head = '', ...rest] = stdout.split('\r\n\r\n');
  const [statusLine = '', ...fields] = head.split('\r\n');
  const headers = new Map<string, string>();
  for (const field of fields) {
    const colon = field.indexOf(':');
    headers.set(field.slice(0, colon).trim().toLowerCase(), field.slice(colon + 1).trim());
  }
  return { status: Number(/^HTTP\/[\d.]+ (\d{3})/.exec(statusLine)?.[1]), headers, body: rest.join('\r\n\r\n') };
}

describe('pnpm demo (examples/express)', () => {
  let demo: ExampleProcess | undefined;

  beforeAll(async () => {
    ensureBuilt(['core', 'express', 'playground']);
    demo = await startExample('express');
  });

  afterAll(async () => {
    await demo?.stop();
  });

  it('prints an allowed, a hashed and a denied cache origin, each with its reason code', () => {
    const comments = tryItLines(demo!.output()).map(({ comment }) => comment);
    expect(comments.some((comment) => /allowed, 200 \(cache-origin\)/.test(comment))).toBe(true);
    expect(comments.some((comment) => /^hashed .*allowed, 200 \(cache-origin-hashed\)/.test(comment))).toBe(true);
    expect(comments.some((comment) => /denied, 403 unknown-publisher/.test(comment))).toBe(true);
  });

  it('every printed curl line, pasted into sh, gets the status and headers its comment announces', async () => {
    const pairs = tryItLines(demo!.output());
    expect(pairs.length).toBeGreaterThanOrEqual(4);
    for (const { comment, curl } of pairs) {
      const origin = /'Origin: ([^']+)'/.exec(curl)?.[1];
      const before = await subscriptions(demo!.url);
      const response = await paste(curl);
      const expected = Number(/\b(200|204|403)\b/.exec(comment)?.[1]);
      expect(response.status, `${comment}\n${curl}`).toBe(expected);
      expect(response.headers.get('vary') ?? '').toMatch(/\bOrigin\b/i);
      if (expected === 403) {
        const reason = /denied, 403 ([a-z-]+)/.exec(comment)?.[1];
        expect(response.body).toContain(reason);
        expect(response.headers.has('access-control-allow-origin')).toBe(false);
        expect(await subscriptions(demo!.url)).toBe(before);
      } else {
        expect(response.headers.get('access-control-allow-origin')).toBe(origin);
        expect(response.headers.get('access-control-allow-credentials')).toBe('true');
      }
    }
  });

  it("serves the playground at its root, linked with the demo's own publisher list", async () => {
    const link = /^playground \(.*\): (http\S+)$/m.exec(demo!.output())?.[1];
    expect(link).toBeDefined();
    const url = new URL(link as string);
    expect(url.origin).toBe(demo!.url);
    const state = new URLSearchParams(url.hash.slice(1));
    expect(state.get('publishers')?.split('\n')).toContain('www.example.com');
    expect(createVerifier({ publishers: state.get('publishers')?.split('\n') ?? [] }).verify(state.get('check')).reason).toBe('cache-origin-hashed');
    const page = await fetch(`${demo!.url}/`);
    expect(page.status).toBe(200);
    expect(page.headers.get('content-type')).toMatch(/^text\/html/);
    const html = await page.text();
    expect(html).toContain('app.js');
    // Opened without a link's fragment, the page defaults to the demo's own list and its hashed origin.
    const meta = /<meta name="ampcors-defaults" content="([^"]*)">/u.exec(html)?.[1] ?? '';
    const entities: Record<string, string> = { '&quot;': '"', '&#39;': "'", '&lt;': '<', '&gt;': '>', '&amp;': '&' };
    const defaults = JSON.parse(meta.replace(/&(?:quot|#39|lt|gt|amp);/gu, (entity) => entities[entity] ?? entity)) as Record<string, string>;
    expect(defaults.publishers).toBe(state.get('publishers'));
    expect(defaults.check).toBe(state.get('check'));
    for (const file of playgroundFiles) expect((await fetch(`${demo!.url}/${file}`)).status, file).toBe(200);
  });

  it('stops cleanly on Ctrl-C (SIGINT)', async () => {
    const stopped = await demo!.stop(10_000, 'SIGINT');
    expect(stopped).toEqual({ exit: 0, killed: false });
    expect(demo!.output()).toMatch(/^stopped$/m);
  });
});

/** The launcher `npm run demo` runs. */
const LAUNCHER = join(ROOT, 'examples', 'express', 'scripts', 'demo.mjs');

interface LauncherRun {
  readonly child: ChildProcess;
  stdout(): string;
  stderr(): string;
  /** Resolves with the exit code (or signal name). */
  readonly exited: Promise<number | string | null>;
}

/** Starts `node examples/express/scripts/demo.mjs` from the root in its own process group, as `npm run demo` does. */
function launch(env: Record<string, string>): LauncherRun {
  const child = spawn(process.execPath, [LAUNCHER], {
    cwd: ROOT,
    env: { ...process.env, HOST: '127.0.0.1', NO_COLOR: '1', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
    detached: true,
  });
  let stdout = '';
  let stderr = '';
  child.stdout!.on('data', (chunk: Buffer) => (stdout += chunk.toString('utf8')));
  child.stderr!.on('data', (chunk: Buffer) => (stderr += chunk.toString('utf8')));
  const exited = new Promise<number | string | null>((resolve) => child.once('exit', (code, signal) => resolve(code ?? signal)));
  return { child, stdout: () => stdout, stderr: () => stderr, exited };
}

/** Waits until the server says it is listening; fails with the output after `timeoutMs`. */
async function listening(run: LauncherRun, timeoutMs: number): Promise<string> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const url = /listening on (http:\/\/\S+)/u.exec(run.stdout())?.[1];
    if (url) return url;
    if (run.child.exitCode !== null || Date.now() > deadline) {
      throw new Error(`demo not listening (exit ${String(run.child.exitCode)}):\n${run.stdout()}\n${run.stderr()}`);
    }
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
}

/** Ctrl-C to the whole group, as a terminal sends it; SIGKILL if it is still running after 10 s. */
async function interrupt(run: LauncherRun): Promise<number | string | null> {
  process.kill(-run.child.pid!, 'SIGINT');
  const timer = setTimeout(() => {
    try {
      process.kill(-run.child.pid!, 'SIGKILL');
    } catch {
      // Already gone.
    }
  }, 10_000);
  const code = await run.exited;
  clearTimeout(timer);
  return code;
}

/** The output lines that are not npm's own warnings about this machine's npm configuration. */
const lines = (text: string) => text.split('\n').filter((line) => line !== '' && !line.startsWith('npm warn'));

describe('npm run demo (the launcher)', () => {
  it('serves within 5 s on a machine that already built it, building and installing nothing, and stops on Ctrl-C', { timeout: 400_000 }, async () => {
    // Whatever is out of date in this tree is built by a first start, as a user's first `npm run demo` would.
    const first = launch({ PORT: '0' });
    await listening(first, 360_000);
    expect(await interrupt(first)).toBe(0);

    const started = Date.now();
    const second = launch({ PORT: '0' });
    const url = await listening(second, 30_000);
    const elapsed = Date.now() - started;
    expect(second.stdout()).toMatch(/^demo: dependencies and builds up to date$/mu);
    expect(second.stdout()).not.toMatch(/^demo: (building|installing)/mu);
    expect(elapsed, `${elapsed} ms to "listening"`).toBeLessThan(5_000);
    expect((await fetch(`${url}/api/items`, { headers: { origin: cacheOrigin('example.com') } })).status).toBe(200);
    expect(await interrupt(second)).toBe(0);
    expect(second.stdout()).toMatch(/^stopped$/mu);
  });

  describe('a port in use', () => {
    let blocker: Server;
    let busy: number;

    beforeAll(async () => {
      blocker = createServer();
      await new Promise<void>((resolve) => blocker.listen(0, '127.0.0.1', resolve));
      busy = (blocker.address() as AddressInfo).port;
    });

    afterAll(async () => {
      await new Promise((resolve) => blocker.close(resolve));
    });

    it('is one line that names PORT and a free port, no stack trace, exit code 1', { timeout: 60_000 }, async () => {
      const run = launch({ PORT: String(busy) });
      expect(await run.exited).toBe(1);
      const errors = lines(run.stderr());
      expect(errors).toHaveLength(1);
      const suggested = Number(/^port (\d+) is in use: set PORT=(\d+) npm run demo$/u.exec(errors[0] ?? '')?.[2]);
      expect(errors[0]).toContain(`port ${busy} is in use`);
      expect(suggested).toBeGreaterThan(busy);
      expect(`${run.stdout()}${run.stderr()}`).not.toMatch(/^\s+at |Error:|EADDRINUSE/mu);
      // The suggestion works: the server starts on it.
      const retry = launch({ PORT: String(suggested) });
      expect(await listening(retry, 30_000)).toBe(`http://127.0.0.1:${suggested}`);
      expect(await interrupt(retry)).toBe(0);
    });

    it('a PORT that is not a number is one line too', { timeout: 60_000 }, async () => {
      const run = launch({ PORT: 'http://localhost:3000' });
      expect(await run.exited).toBe(1);
      expect(lines(run.stderr())).toEqual(['PORT="http://localhost:3000" is not a port number (0 to 65535): set PORT=3000 npm run demo']);
    });
  });
});
