// The compiled allow-set example (src/allow-set.ts): the shipped publishers.acs is what `ampcors
// compile` makes of publishers.txt; the handler in process, from both sides; and the example started
// as a real process (its `start:allow-set` script), answered over HTTP and stopped by SIGTERM.
import { type ChildProcess, spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { request } from 'node:http';
import { fileURLToPath } from 'node:url';
import { cacheOrigin, compileAllowSet, isAmpCorsError } from '@ampcors/core';
import { afterAll, describe, expect, it } from 'vitest';
import { allowSetApi, DEFAULT_ALLOW_SET } from '../src/allow-set.js';

const HERE = fileURLToPath(new URL('..', import.meta.url));
const LIST = readFileSync(new URL('../publishers.txt', import.meta.url), 'utf8')
  .split('\n')
  .map((line) => line.trim())
  .filter((line) => line !== '' && !line.startsWith('#'));
const BYTES = readFileSync(DEFAULT_ALLOW_SET);
const PAGES = 'https://www.example.com';
const LONG = 'articles.publisher-with-a-very-long-domain-name.example.net';
const EVIL = cacheOrigin('evil.example');

describe('examples/fetch-node compiled allow-set', () => {
  it('ships the allow-set that ampcors compile writes for publishers.txt', () => {
    expect(LIST.length).toBeGreaterThan(0);
    expect(new Uint8Array(BYTES)).toEqual(compileAllowSet(LIST));
  });

  const api = allowSetApi(BYTES, [PAGES]);
  const send = async (origin: string, init: RequestInit = {}, path = '/api/items') => {
    const response = await api(new Request(`http://api.example.test${path}`, { ...init, headers: { Origin: origin, ...(init.headers as object) } }));
    return {
      status: response.status,
      acao: response.headers.get('access-control-allow-origin'),
      acac: response.headers.get('access-control-allow-credentials'),
      body: await response.text(),
    };
  };

  it("allows every compiled domain's cache origins, readable and hashed, and the publisher's pages", async () => {
    for (const origin of [cacheOrigin('example.com'), cacheOrigin('www.example.com'), cacheOrigin(LONG), PAGES]) {
      expect(await send(origin)).toMatchObject({ status: 200, acao: origin, acac: 'true' });
    }
    expect(await send(cacheOrigin(LONG), { method: 'OPTIONS', headers: { 'Access-Control-Request-Method': 'POST' } })).toMatchObject({
      status: 204,
      acao: cacheOrigin(LONG),
    });
  });
  it('attack: a foreign cache origin, a publisher domain not in origins, http, a forged __amp_source_origin', async () => {
    expect(await send(EVIL, { method: 'POST' }, '/api/subscribe')).toMatchObject({ status: 403, acao: null, acac: null });
    expect(await send('https://example.com')).toMatchObject({ status: 403, acao: null });
    expect(await send(cacheOrigin('example.com').replace('https:', 'http:'))).toMatchObject({ status: 403, acao: null });
    const forged = await send(cacheOrigin('example.com'), {}, '/api/items?__amp_source_origin=https%3A%2F%2Fevil.example');
    expect(forged).toMatchObject({ status: 403, acao: null, body: expect.stringContaining('source-origin-mismatch') });
  });
  it('refuses at start-up: a path instead of bytes, no origins for the pages, a corrupt file', () => {
    const refusal = (run: () => unknown) => {
      try {
        run();
      } catch (error) {
        expect(isAmpCorsError(error)).toBe(true);
        return (error as Error).message;
      }
      return 'accepted';
    };
    expect(refusal(() => allowSetApi('publishers.acs' as never, [PAGES]))).toMatch(/read the file and pass its bytes/);
    expect(refusal(() => allowSetApi(BYTES, []))).not.toBe('accepted');
    expect(refusal(() => allowSetApi(BYTES.subarray(0, BYTES.length - 1), [PAGES]))).toMatch(/Invalid allow-set/);
  });

  let child: ChildProcess | undefined;
  afterAll(() => {
    if (child?.exitCode === null) child.kill('SIGKILL');
  });
  it('runs as a process (start:allow-set), reading the file at start-up', async () => {
    const script = (JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8')) as { scripts: Record<string, string> }).scripts[
      'start:allow-set'
    ];
    expect(script).toBeDefined();
    child = spawn('sh', ['-c', script as string], { cwd: HERE, env: { ...process.env, PORT: '0', HOST: '127.0.0.1' }, stdio: ['ignore', 'pipe', 'pipe'] });
    let output = '';
    const url = await new Promise<string>((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`no "listening on" within 30 s:\n${output}`)), 30_000);
      const read = (chunk: Buffer) => {
        output += chunk.toString();
        const found = /listening on (http:\/\/\S+)/.exec(output);
        if (found) {
          clearTimeout(timer);
          resolve(found[1] as string);
        }
      };
      child?.stdout?.on('data', read);
      child?.stderr?.on('data', read);
      child?.once('exit', () => reject(new Error(`exited before listening:\n${output}`)));
    });
    const allowed = await fetch(`${url}/api/items`, { headers: { Origin: cacheOrigin(LONG) } });
    expect([allowed.status, allowed.headers.get('access-control-allow-origin')]).toEqual([200, cacheOrigin(LONG)]);
    const denied = await fetch(`${url}/api/items`, { headers: { Origin: EVIL } });
    expect([denied.status, denied.headers.get('access-control-allow-origin')]).toEqual([403, null]);
    // Attacker's review, session 17: TRACE (accepted by Node, refused by the Fetch Request) once stopped the process.
    const traced = await new Promise<number | undefined>((resolve, reject) => {
      const sent = request(`${url}/api/items`, { method: 'TRACE', headers: { Origin: EVIL } }, (res) => {
        res.resume();
        res.once('end', () => resolve(res.statusCode));
      });
      sent.once('error', reject);
      sent.end();
    });
    expect(traced).toBe(500);
    const after = await fetch(`${url}/api/items`, { headers: { Origin: cacheOrigin(LONG) } });
    expect(after.status).toBe(200);
    const exited = new Promise<number | null>((resolve) => child?.once('exit', (code) => resolve(code)));
    child.kill('SIGTERM');
    expect(await exited).toBe(0);
    expect(output).toMatch(/^stopped$/m);
  }, 60_000);
});
