/**
 * `npm run demo` starts the Express example: the curl lines it prints must
 * work when pasted into a shell and do what their comments say, and Ctrl-C
 * (SIGINT) must stop it cleanly.
 */
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { createVerifier } from '@ampcors/core';
import { playgroundFiles } from 'playground';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ensureBuilt, type ExampleProcess, startExample } from './example-process.js';
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

  it('serves the playground at its root, linked with the demo\'s own publisher list', async () => {
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
    for (const file of playgroundFiles) expect((await fetch(`${demo!.url}/${file}`)).status, file).toBe(200);
  });

  it('stops cleanly on Ctrl-C (SIGINT)', async () => {
    const stopped = await demo!.stop(10_000, 'SIGINT');
    expect(stopped).toEqual({ exit: 0, killed: false });
    expect(demo!.output()).toMatch(/^stopped$/m);
  });
});
