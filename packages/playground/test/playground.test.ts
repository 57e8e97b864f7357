// The playground in Debian Chromium: types into each tool and checks every
// value shown against @ampcors/core's own functions.
import { execFileSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { type AmpCache, CACHES, cacheOrigin, cacheUrl, createVerifier, explainOrigin, type ServingType } from '@ampcors/core';
import { type BrowserContext, chromium, type Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { requireTool } from '../../../test/setup/debian-packages.js';
import { playgroundDir, playgroundFiles } from '../src/index.js';
import { LIMITS } from '../src/page/limits.js';

const CHROMIUM = '/usr/bin/chromium';
const PACKAGE_DIR = fileURLToPath(new URL('..', import.meta.url));
const SCREENSHOT = join(PACKAGE_DIR, 'screenshot.png');
const LONG_DOMAIN = `${'a'.repeat(40)}.${'b'.repeat(30)}.example.com`;
const TYPES: ReadonlyArray<[string, ServingType, number?]> = [
  ['/c', 'c'],
  ['/v', 'v'],
  ['/wp', 'wp'],
  ['/cert', 'cert'],
  ['/i', 'i'],
  ['/ii/w800', 'ii', 800],
  ['/r', 'r'],
];
const CONTENT_TYPES: Record<string, string> = {
  html: 'text/html; charset=utf-8',
  js: 'text/javascript; charset=utf-8',
  css: 'text/css; charset=utf-8',
};

let server: Server;
let base: string;
let context: BrowserContext;
let page: Page;
let userDataDir: string;
const consoleErrors: string[] = [];

/** Serves only the built files; anything else is a 404. */
function serveDist(): Promise<Server> {
  const srv = createServer((req, res) => {
    const path = new URL(req.url ?? '/', 'http://127.0.0.1').pathname;
    const name = path === '/' ? 'index.html' : path.slice(1);
    if (!playgroundFiles.includes(name)) {
      res.writeHead(404).end('not found');
      return;
    }
    res.writeHead(200, { 'content-type': CONTENT_TYPES[name.split('.').pop() ?? ''] ?? 'application/octet-stream' });
    res.end(readFileSync(join(playgroundDir, name)));
  });
  return new Promise((resolve) => srv.listen(0, '127.0.0.1', () => resolve(srv)));
}

async function settled(target: Page = page): Promise<void> {
  await target.waitForFunction(() => document.body.dataset.ready === 'true' && document.body.dataset.pending === '0', undefined, { timeout: 5000 });
}

/** Clears a field and types into it key by key, as a user would. */
async function typeInto(selector: string, text: string): Promise<void> {
  await page.fill(selector, '');
  await page.locator(selector).pressSequentially(text);
  await settled();
}

async function pasteInto(selector: string, text: string, target: Page = page): Promise<void> {
  await target.fill(selector, text);
  await settled(target);
}

async function traceShown(target: Page = page) {
  return target.$$eval('#trace-steps li', (items) =>
    items.map((li) => ({
      name: li.getAttribute('data-step'),
      status: li.getAttribute('data-status'),
      input: li.querySelector('[data-role=input]')?.textContent ?? null,
      output: li.querySelector('[data-role=output]')?.textContent ?? null,
    })),
  );
}

async function verdictShown(target: Page = page): Promise<Record<string, string>> {
  return target.$$eval('#verdict dd', (items) => Object.fromEntries(items.map((dd) => [dd.getAttribute('data-field'), dd.textContent ?? ''])));
}

beforeAll(async () => {
  requireTool(CHROMIUM);
  if (!existsSync(join(playgroundDir, 'index.html'))) execFileSync('pnpm', ['--filter', 'playground', 'build'], { cwd: PACKAGE_DIR, stdio: 'inherit' });
  server = await serveDist();
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}/`;
  userDataDir = mkdtempSync(join(tmpdir(), 'ampcors-playground-'));
  context = await chromium.launchPersistentContext(userDataDir, {
    executablePath: CHROMIUM,
    headless: true,
    args: ['--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking', '--disable-component-update', '--disable-sync'],
    viewport: { width: 1200, height: 900 },
  });
  await context.grantPermissions(['clipboard-read', 'clipboard-write'], { origin: base.slice(0, -1) });
  context.on('console', (message) => {
    if (message.type() === 'error') consoleErrors.push(message.text());
  });
  context.on('weberror', (error) => consoleErrors.push(String(error.error())));
  page = await context.newPage();
  await page.goto(base);
  await settled();
});

afterAll(async () => {
  await context?.close();
  await new Promise((resolve) => server?.close(resolve));
  if (userDataDir) rmSync(userDataDir, { recursive: true, force: true });
});

describe('playground in Chromium', () => {
  it('tool 1: lists every cache URL of a publisher URL, as cacheUrl computes it, and copies one', async () => {
    const url = 'https://foo-example.com/a/b.html?x=1';
    await typeInto('#url-input', url);
    const shown = await page.$$eval('#url-results table', (tables) =>
      tables.flatMap((table) =>
        [...table.querySelectorAll('tr[data-type]')].map((tr) => ({
          cache: table.getAttribute('data-cache'),
          type: tr.getAttribute('data-type'),
          url: tr.querySelector('[data-role=cache-url]')?.textContent,
        })),
      ),
    );
    const expected = CACHES.flatMap((cache: AmpCache) =>
      TYPES.map(([type, servingType, width]) => ({
        cache: cache.id,
        type,
        url: cacheUrl(url, width === undefined ? { cache, servingType } : { cache, servingType, width }),
      })),
    );
    expect(shown).toEqual(expected);
    const origins = await page.$$eval('#url-results [data-role=cache-origin]', (codes) => codes.map((c) => c.textContent));
    expect(origins).toEqual(CACHES.map((cache) => cacheOrigin('foo-example.com', cache)));
    await page.click('table[data-cache=bing] tr[data-type="/ii/w800"] button');
    await expect.poll(() => page.evaluate(() => navigator.clipboard.readText())).toBe(cacheUrl(url, { cache: 'bing', servingType: 'ii', width: 800 }));
    await typeInto('#url-input', 'ftp://example.com/');
    expect(await page.textContent('#url-message')).toContain('invalid-url');
    expect(await page.$$('#url-results table')).toHaveLength(0);
  });

  it('tool 2: shows every step of explainOrigin for reversible, hashed and foreign origins', async () => {
    const origins = [
      cacheOrigin('xn--57hw060o.com'),
      cacheOrigin('en-us.example.com', 'bing'),
      cacheOrigin(LONG_DOMAIN),
      'https://example-com.cdn.ampproject.org.evil.com',
      'https://0-example-com-0.cdn.ampproject.org',
    ];
    for (const [i, origin] of origins.entries()) {
      if (i === 0) await typeInto('#origin-input', origin);
      else await pasteInto('#origin-input', origin);
      const explanation = explainOrigin(origin);
      expect(await traceShown()).toEqual(
        explanation.steps.map((s) => ({ name: s.name, status: s.status, input: s.input, output: s.output })),
      );
      const summary = (await page.textContent('#trace-result')) ?? '';
      const result = explanation.result;
      if (!result.ok) expect(summary).toContain(result.reason);
      else if (result.hashed) expect(summary).toContain('cannot be reversed');
      else expect(summary).toContain(result.publisherDomain);
    }
  });

  it('tool 3: gives the verifier verdict and the listed domain behind a hashed prefix', async () => {
    const cases: Array<[string, string[]]> = [
      [cacheOrigin(LONG_DOMAIN, 'bing'), ['example.org', LONG_DOMAIN, '*.example.net']],
      ['https://evil-com.cdn.ampproject.org', ['example.org']],
      [cacheOrigin('news.example.net'), ['example.org', '*.example.net']],
      ['https://www.example.org', ['example.org', 'www.example.org']],
    ];
    for (const [i, [origin, publishers]] of cases.entries()) {
      await pasteInto('#check-publishers', publishers.join('\n'));
      if (i === 0) await typeInto('#check-origin', origin);
      else await pasteInto('#check-origin', origin);
      const verdict = createVerifier({ publishers }).verify(origin);
      const shown = await verdictShown();
      expect(shown.allowed?.startsWith(verdict.allowed ? 'allowed' : 'denied')).toBe(true);
      expect(shown.reason).toBe(verdict.reason);
      expect(shown['publisher-domain']).toBe(verdict.publisherDomain);
      expect(shown.acao).toBe(verdict.allowed ? origin : undefined);
      const sources = explainOrigin(origin, { publishers }).producedBy ?? [];
      for (const source of sources) expect(shown['produced-by']).toContain(source.listed);
    }
    expect((await verdictShown())['produced-by']).toBeUndefined();
    await pasteInto('#check-publishers', 'example.org\nco.uk');
    expect(await page.textContent('#check-message')).toContain('public-suffix-rule');
    expect(await page.$$('#verdict dl')).toHaveLength(0);
  });

  it('keeps every field in the address, so a link reproduces a check', async () => {
    const state = { url: 'http://example.com/logo.png', origin: cacheOrigin('a-b.example.com'), check: cacheOrigin(LONG_DOMAIN), publishers: `${LONG_DOMAIN}\nexample.org` };
    await pasteInto('#url-input', state.url);
    await pasteInto('#origin-input', state.origin);
    await pasteInto('#check-origin', state.check);
    await pasteInto('#check-publishers', state.publishers);
    const link = page.url();
    expect(new URLSearchParams(new URL(link).hash.slice(1)).get('origin')).toBe(state.origin);
    const other = await context.newPage();
    await other.goto(link);
    await settled(other);
    const values = await other.evaluate(() =>
      ['url-input', 'origin-input', 'check-origin', 'check-publishers'].map((id) => (document.getElementById(id) as HTMLInputElement).value),
    );
    expect(values).toEqual([state.url, state.origin, state.check, state.publishers]);
    expect(await traceShown(other)).toEqual(await traceShown());
    expect(await verdictShown(other)).toEqual(await verdictShown());
    expect((await verdictShown(other)).reason).toBe('cache-origin-hashed');
    await other.close();
  });

  it('handles a 64 kB paste and control characters without freezing', async () => {
    const huge = `https://${'a'.repeat(65_536)}.com`;
    for (const [field, message] of [
      ['#url-input', '#url-message'],
      ['#origin-input', '#origin-message'],
      ['#check-publishers', '#check-message'],
    ] as const) {
      const started = Date.now();
      await pasteInto(field, huge);
      expect(Date.now() - started).toBeLessThan(3000);
      expect(await page.textContent(message)).toContain('Input too long');
    }
    expect(await page.$$('#url-results table, #trace-steps li, #verdict dl')).toHaveLength(0);
    expect(new URL(page.url()).hash.length).toBeLessThan(LIMITS.origin * 4);
    await pasteInto('#check-publishers', Array.from({ length: LIMITS.rules + 1 }, (_, i) => `d${i}.example.com`).join(' '));
    expect(await page.textContent('#check-message')).toContain('Too many publisher rules');
    const hostile = 'https://a\u0000b\u202e.cdn.ampproject.org';
    await pasteInto('#origin-input', hostile);
    const [first] = await traceShown();
    expect(first).toMatchObject({ name: 'parse-origin', status: 'failed', input: 'https://a\\u{0}b\\u{202e}.cdn.ampproject.org' });
    expect(explainOrigin(hostile).result).toMatchObject({ reason: 'control-character' });
    expect(await page.textContent('#trace-result')).toContain('control-character');
  });

  it('is usable with the keyboard: labelled fields in order, example and copy buttons', async () => {
    await page.goto(`${base}#`);
    await settled();
    const labelled = await page.$$eval('input, textarea', (inputs) => inputs.every((input) => (input as HTMLInputElement).labels?.length === 1));
    expect(labelled).toBe(true);
    await page.evaluate(() => (document.activeElement as HTMLElement | null)?.blur());
    await page.keyboard.press('Tab');
    expect(await page.evaluate(() => document.activeElement?.id)).toBe('url-input');
    await page.keyboard.press('Tab');
    expect(await page.evaluate(() => document.activeElement?.getAttribute('aria-label'))).toContain('Google AMP Cache origin');
    await page.keyboard.press('Enter');
    await expect.poll(() => page.evaluate(() => navigator.clipboard.readText())).toBe(cacheOrigin('example.com'));
    await page.focus('#origin-input');
    await page.keyboard.press('Tab');
    await page.keyboard.press('Tab');
    await page.keyboard.press('Enter');
    await settled();
    expect(await page.evaluate(() => document.activeElement?.id)).toBe('origin-input');
    expect(await page.inputValue('#origin-input')).toBe(cacheOrigin('xn--57hw060o.com'));
    await page.keyboard.press('Tab');
    const order: string[] = [];
    for (let i = 0; i < 8; i++) {
      order.push((await page.evaluate(() => document.activeElement?.id)) ?? '');
      await page.keyboard.press('Tab');
    }
    expect(order.indexOf('check-origin')).toBeGreaterThan(0);
    expect(order.indexOf('check-publishers')).toBe(order.indexOf('check-origin') + 1);
  });

  it('renders the default checks without console errors, and saves the screenshot', async () => {
    await page.goto(`${base}#url=${encodeURIComponent('https://example.com/amp_document.html')}&origin=${encodeURIComponent(cacheOrigin('en-us.example.com'))}&check=${encodeURIComponent(cacheOrigin(LONG_DOMAIN))}&publishers=${encodeURIComponent(`example.org\n${LONG_DOMAIN}`)}`);
    await settled();
    expect((await verdictShown()).reason).toBe('cache-origin-hashed');
    await page.evaluate(() => (document.activeElement as HTMLElement | null)?.blur());
    await page.screenshot({ path: SCREENSHOT, fullPage: true });
    expect(existsSync(SCREENSHOT)).toBe(true);
    expect(consoleErrors).toEqual([]);
  });
});
