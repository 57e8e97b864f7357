// The playground in Debian Chromium: types into each tool and checks every
// value shown against @ampcors/core's own functions, at a phone's width
// (390 px) and a desktop's (1280 px).
import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { type AmpCache, CACHES, cacheOrigin, cacheUrl, createVerifier, explainOrigin, type ServingType } from '@ampcors/core';
import { type BrowserContext, chromium, type Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { requireTool } from '../../../test/setup/debian-packages.js';
import { type PlaygroundDefaults, playgroundDir, playgroundFiles, playgroundHtml } from '../src/index.js';
import { DENY_FIXES } from '../src/page/fixes.js';
import { LIMITS } from '../src/page/limits.js';

const CHROMIUM = '/usr/bin/chromium';
const PACKAGE_DIR = fileURLToPath(new URL('..', import.meta.url));
const SCREENSHOT = join(PACKAGE_DIR, 'screenshot.png');
/** The layout test's screenshots, one per width (committed, so a layout change shows in review). */
const OUTPUT_DIR = join(PACKAGE_DIR, 'test', 'output');
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
/** The demo's publisher list (examples/express), the page's default there. */
const DEMO_PUBLISHERS = ['example.com', 'www.example.com', '*.example.org', 'articles.publisher-with-a-very-long-domain-name.example.net'];
/** A server's defaults with a value that tries to break out of the meta element. */
const HOSTILE_DEFAULTS: PlaygroundDefaults = {
  publishers: ['example.com', '"><img src=x onerror="document.title=1">', "x'&amp;<b>"],
  check: 'https://evil-com.cdn.ampproject.org',
};
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
    if (name === 'with-defaults.html') {
      res.writeHead(200, { 'content-type': CONTENT_TYPES.html }).end(playgroundHtml(HOSTILE_DEFAULTS));
      return;
    }
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
  return target.$$eval('#verdict [data-field]', (items) => Object.fromEntries(items.map((item) => [item.getAttribute('data-field'), item.textContent ?? ''])));
}

/** The address of a check of the demo's list (a hashed origin; what the demo's link opens). */
function demoLink(check: string): string {
  const state = new URLSearchParams({ publishers: DEMO_PUBLISHERS.join('\n'), check, origin: cacheOrigin('www.example.com') });
  return `${base}#${state.toString()}`;
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
    args: [
      '--no-sandbox',
      '--disable-gpu',
      '--disable-quic',
      '--no-first-run',
      '--disable-background-networking',
      '--disable-component-update',
      '--disable-sync',
    ],
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
  it('puts the verdict first: the verifier verdict, how to fix a denial, and the listed domain behind a hashed prefix', async () => {
    const firstField = await page.$eval('main input, main textarea', (input) => input.id);
    expect(firstField).toBe('check-origin');
    const cases: Array<[string, string[]]> = [
      [cacheOrigin(LONG_DOMAIN, 'bing'), ['example.org', LONG_DOMAIN, '*.example.net']],
      ['https://evil-com.cdn.ampproject.org', ['example.org']],
      [cacheOrigin('news.example.net'), ['example.org', '*.example.net']],
      ['https://www.example.org', ['example.org', 'www.example.org']],
      ['https://example-com.cdn.ampproject.org/', ['example.com']],
      ['http://example-com.cdn.ampproject.org', ['example.com']],
      [cacheOrigin(`x${LONG_DOMAIN}`), ['*.example.com', LONG_DOMAIN]],
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
      // A denial says how to fix it, in the sentence kept for its reason code; an allowed origin has nothing to fix.
      expect(shown.fix).toBe(verdict.allowed ? undefined : `How to fix: ${DENY_FIXES[verdict.reason]}`);
      const sources = explainOrigin(origin, { publishers }).producedBy ?? [];
      for (const source of sources) expect(shown['produced-by']).toContain(source.listed);
    }
  });

  it('reports every bad entry of a refused domain list, with its line, and what a URL-shaped entry meant', async () => {
    await pasteInto('#check-origin', cacheOrigin('example.org'));
    const list = ['example.org', 'co.uk, https://www.example.com/', '', '*.com', 'exa_mple.com', 'news.example.net'];
    await pasteInto('#check-publishers', list.join('\n'));
    const reported = await page.$$eval('#check-message li[data-entry]', (items) =>
      items.map((li) => ({ entry: li.getAttribute('data-entry'), text: li.textContent ?? '' })),
    );
    const expected = list.flatMap((line, index) =>
      line
        .split(/[\s,]+/u)
        .filter((rule) => rule !== '')
        .flatMap((rule) => {
          try {
            createVerifier({ publishers: [rule] });
            return [];
          } catch (error) {
            return [{ rule, line: index + 1, code: (error as { code: string }).code }];
          }
        }),
    );
    // Four bad entries, on lines 2, 2, 4 and 5: each one reported, not only the first.
    expect(expected.map((e) => e.line)).toEqual([2, 2, 4, 5]);
    expect(reported.map((r) => r.entry)).toEqual(expected.map((e) => e.rule));
    for (const [i, { line, code }] of expected.entries()) {
      expect(reported[i]?.text).toContain(`line ${line}: `);
      expect(reported[i]?.text).toContain(code);
    }
    expect(reported[1]?.text).toContain('Did you mean www.example.com?');
    expect(await page.textContent('#check-message')).toContain('4 entries are invalid');
    // A refused list gives no verdict: a server given it would not start.
    expect(await page.$$('#verdict [data-field]')).toHaveLength(0);
    // 499 good rules and one bad one: still found, still quick.
    const many = [...Array.from({ length: LIMITS.rules - 1 }, (_, i) => `d${i}.example.com`), 'com'];
    const started = Date.now();
    await pasteInto('#check-publishers', many.join('\n'));
    expect(Date.now() - started).toBeLessThan(3000);
    expect(await page.$$eval('#check-message li[data-entry]', (items) => items.map((li) => li.getAttribute('data-entry')))).toEqual(['com']);
  });

  it('shows a reverse lookup in a neutral colour, neither the allowed green nor the denied red', async () => {
    await pasteInto('#origin-input', cacheOrigin('www.example.com'));
    const colours = await page.evaluate(() => {
      const probe = (className: string) => {
        const span = document.createElement('span');
        span.className = className;
        document.body.append(span);
        const colour = getComputedStyle(span).color;
        span.remove();
        return colour;
      };
      const shown = document.querySelector('#trace-result [data-role=publisher-domain]')?.parentElement;
      return { shown: shown ? getComputedStyle(shown).color : '', allowed: probe('allowed'), denied: probe('denied') };
    });
    expect(colours.shown).not.toBe('');
    expect(colours.shown).not.toBe(colours.allowed);
    expect(colours.shown).not.toBe(colours.denied);
    // Not green either: its green channel is not the strongest.
    const [red = 0, green = 0, blue = 0] = (colours.shown.match(/\d+/gu) ?? []).map(Number);
    expect(green).toBeLessThanOrEqual(Math.max(red, blue));
    expect(await page.textContent('#trace-result')).toContain('names the domain only');
  });

  it('cache URLs: lists every cache URL of a publisher URL, as cacheUrl computes it, and copies one', async () => {
    const url = 'https://foo-example.com/a/b.html?x=1';
    await typeInto('#url-input', url);
    const shown = await page.$$eval('#url-results [data-cache]', (caches) =>
      caches.flatMap((cache) =>
        [...cache.querySelectorAll('li[data-type]')].map((li) => ({
          cache: cache.getAttribute('data-cache'),
          type: li.getAttribute('data-type'),
          url: li.querySelector('[data-role=cache-url]')?.textContent,
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
    await page.click('[data-cache=bing] li[data-type="/ii/w800"] button');
    await expect.poll(() => page.evaluate(() => navigator.clipboard.readText())).toBe(cacheUrl(url, { cache: 'bing', servingType: 'ii', width: 800 }));
    await typeInto('#url-input', 'ftp://example.com/');
    expect(await page.textContent('#url-message')).toContain('invalid-url');
    expect(await page.$$('#url-results [data-cache]')).toHaveLength(0);
  });

  it('trace: shows every step of explainOrigin for reversible, hashed and foreign origins', async () => {
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
      expect(await traceShown()).toEqual(explanation.steps.map((s) => ({ name: s.name, status: s.status, input: s.input, output: s.output })));
      const summary = (await page.textContent('#trace-result')) ?? '';
      const result = explanation.result;
      if (!result.ok) expect(summary).toContain(result.reason);
      else if (result.hashed) expect(summary).toContain('cannot be reversed');
      else expect(summary).toContain(result.publisherDomain);
    }
  });

  it('keeps every field in the address, so a link reproduces a check', async () => {
    const state = {
      url: 'http://example.com/logo.png',
      origin: cacheOrigin('a-b.example.com'),
      check: cacheOrigin(LONG_DOMAIN),
      publishers: `${LONG_DOMAIN}\nexample.org`,
    };
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

  it("opens on a server's own publisher list (playgroundHtml), shown as text however hostile", async () => {
    const other = await context.newPage();
    await other.goto(`${base}with-defaults.html`);
    await settled(other);
    const shown = await other.evaluate(() => ({
      publishers: (document.getElementById('check-publishers') as HTMLTextAreaElement).value,
      check: (document.getElementById('check-origin') as HTMLInputElement).value,
      url: (document.getElementById('url-input') as HTMLInputElement).value,
      injected: document.querySelectorAll('img, b').length,
      title: document.title,
    }));
    expect(shown).toMatchObject({ publishers: HOSTILE_DEFAULTS.publishers?.join('\n'), check: HOSTILE_DEFAULTS.check, injected: 0 });
    expect(shown.title).not.toBe('1');
    // Fields the server left out keep the page's own defaults.
    expect(shown.url).toMatch(/^https:\/\//u);
    // The address still wins over the server's defaults.
    await other.goto(`${base}with-defaults.html#publishers=example.org&check=${encodeURIComponent(cacheOrigin('example.org'))}`);
    await settled(other);
    expect((await verdictShown(other)).reason).toBe('cache-origin');
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
    expect(await page.$$('#url-results [data-cache], #trace-steps li, #verdict [data-field]')).toHaveLength(0);
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

  it('is usable with the keyboard: labelled fields in reading order, example and copy buttons', async () => {
    await page.goto(`${base}#`);
    await settled();
    const labelled = await page.$$eval('input, textarea', (inputs) => inputs.every((input) => (input as HTMLInputElement).labels?.length === 1));
    expect(labelled).toBe(true);
    await page.evaluate(() => (document.activeElement as HTMLElement | null)?.blur());
    await page.keyboard.press('Tab');
    expect(await page.evaluate(() => document.activeElement?.id)).toBe('check-origin');
    // The first example button fills the field and gives it the focus back.
    await page.keyboard.press('Tab');
    await page.keyboard.press('Enter');
    await settled();
    expect(await page.evaluate(() => document.activeElement?.id)).toBe('check-origin');
    expect(await page.inputValue('#check-origin')).toBe(cacheOrigin('example.com'));
    const order: string[] = [];
    for (let i = 0; i < 20; i++) {
      order.push(await page.evaluate(() => document.activeElement?.id || (document.activeElement?.getAttribute('aria-label') ?? '')));
      await page.keyboard.press('Tab');
    }
    const at = (name: string) => order.findIndex((entry) => entry.includes(name));
    expect(at('check-origin')).toBe(0);
    expect(at('check-publishers')).toBeGreaterThan(at('check-origin'));
    expect(at('origin-input')).toBeGreaterThan(at('check-publishers'));
    expect(at('url-input')).toBeGreaterThan(at('origin-input'));
    expect(at('Google AMP Cache origin')).toBe(at('url-input') + 1);
    await page.focus('#url-input');
    await page.keyboard.press('Tab');
    await page.keyboard.press('Enter');
    await expect.poll(() => page.evaluate(() => navigator.clipboard.readText())).toBe(cacheOrigin('example.com'));
  });

  for (const width of [360, 390, 1280]) {
    it(`fits a ${width} px wide screen: no sideways scrolling, every field and Copy button in view, a sane height`, async () => {
      await page.setViewportSize({ width, height: 844 });
      try {
        await page.goto(demoLink(cacheOrigin('evil.example.net')));
        await settled();
        await page.evaluate(() => (document.activeElement as HTMLElement | null)?.blur());
        const layout = await page.evaluate(() => {
          const viewport = window.innerWidth;
          const boxes = [...document.querySelectorAll<HTMLElement>('body *')]
            .filter((element) => !element.closest('.visually-hidden') && element.getClientRects().length > 0)
            .map((element) => ({ element, box: element.getBoundingClientRect() }));
          const outside = boxes.filter(({ box }) => box.left < -0.5 || box.right > viewport + 0.5);
          const describe = (element: Element) => `${element.tagName.toLowerCase()}${element.id ? `#${element.id}` : ''}.${element.className}`;
          const controls = boxes.filter(({ element }) => element.matches('input, textarea, button'));
          const urls = boxes.filter(({ element }) => element.matches('[data-role=cache-url]'));
          return {
            viewport,
            scrollWidth: document.scrollingElement?.scrollWidth ?? Infinity,
            height: document.scrollingElement?.scrollHeight ?? Infinity,
            outside: outside.map(({ element }) => describe(element)),
            controls: controls.length,
            copyButtons: controls.filter(({ element }) => element.textContent === 'Copy').length,
            narrowestUrl: Math.min(...urls.map(({ box }) => box.width)),
          };
        });
        expect(layout.viewport).toBe(width);
        expect(layout.scrollWidth).toBeLessThanOrEqual(width);
        expect(layout.outside).toEqual([]);
        expect(layout.copyButtons).toBe(CACHES.length * (TYPES.length + 1));
        // The URL column takes most of the row (it was one character wide on phones).
        expect(layout.narrowestUrl).toBeGreaterThan(width < 600 ? width * 0.6 : width * 0.4);
        // A phone scrolls a few screens, not 27,000 px.
        expect(layout.height).toBeLessThan(width < 600 ? 844 * 8 : 844 * 5);
        // Every Copy button is the element a tap on its centre reaches (nothing covers or clips it).
        const copies = page.locator('#url-results button');
        for (let i = 0; i < (await copies.count()); i++) {
          const button = copies.nth(i);
          await button.scrollIntoViewIfNeeded();
          const reached = await button.evaluate((element) => {
            const box = element.getBoundingClientRect();
            return document.elementFromPoint(box.left + box.width / 2, box.top + box.height / 2) === element;
          });
          expect(reached, `Copy button ${i}`).toBe(true);
        }
        // The verdict and its fix are on the first screen.
        const fix = await page.locator('#verdict [data-field=fix]').boundingBox();
        expect(fix).not.toBeNull();
        mkdirSync(OUTPUT_DIR, { recursive: true });
        await page.evaluate(() => window.scrollTo(0, 0));
        await page.screenshot({ path: join(OUTPUT_DIR, `playground-${width}.png`), fullPage: true });
      } finally {
        await page.setViewportSize({ width: 1200, height: 900 });
      }
    });
  }

  it('renders the default checks without console errors, and saves the screenshot', async () => {
    // The question people arrive with: the demo's list, an origin it blocks, and how to fix it.
    await page.goto(demoLink('https://news-example-net.cdn.ampproject.org'));
    await settled();
    const shown = await verdictShown();
    expect(shown.reason).toBe('unknown-publisher');
    expect(shown.fix).toContain(DENY_FIXES['unknown-publisher']);
    await page.evaluate(() => (document.activeElement as HTMLElement | null)?.blur());
    await page.screenshot({ path: SCREENSHOT, fullPage: true });
    expect(existsSync(SCREENSHOT)).toBe(true);
    expect(consoleErrors).toEqual([]);
  });
});
