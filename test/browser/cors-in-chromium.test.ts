/**
 * Issue #4: Chromium enforces what ampcors decides. Real pages on real
 * (locally resolved) AMP cache, publisher and hostile origins call an API
 * guarded by each adapter in turn; the browser, not our own assertions on
 * headers, decides what the page can read.
 */
import { randomUUID } from 'node:crypto';
import { cacheOrigin } from '@ampcors/core';
import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ADAPTERS, type Adapter, type AdapterApi, createApi, createApis, REDIRECT_TO } from './api-apps.js';
import { clearArtifacts, recordConsole, saveFailureArtifacts } from './artifacts.js';
import { makeCertificate } from './certificate.js';
import { ensureChromium, type LaunchedChromium, launchChromium } from './chromium.js';
import { type ApiRequestRecord, type OriginServer, startOriginServer } from './origin-server.js';
import type { PageResult, RequestOutcome } from './pages.js';

/** A publisher domain whose basic prefix is longer than 63, so its cache origin is hashed. */
const LONG_DOMAIN = 'the-quick-brown-fox-jumps-over-the-lazy-dog.news.publisher-example.com';
const PUBLISHERS = ['example.com', 'www.example.com', LONG_DOMAIN];
const API_HOST = 'api.example.com';
const PUBLISHER_HOST = 'www.example.com';
const HASHED_ORIGIN = cacheOrigin(LONG_DOMAIN);

interface PageCase {
  readonly name: string;
  /** The page URL, without the `api` query parameter. */
  readonly url: string;
  /** The `__amp_source_origin` the page sends. */
  readonly source: string;
  readonly allowed: boolean;
  /** True when the page calls the API on its own origin (`AMP-Same-Origin: true`). */
  readonly sameOrigin?: boolean;
}

const PAGES: readonly PageCase[] = [
  {
    name: 'Google cache page of example.com',
    url: 'https://example-com.cdn.ampproject.org/c/s/example.com/page.html',
    source: 'https://example.com',
    allowed: true,
  },
  {
    name: 'Bing cache page of example.com',
    url: 'https://example-com.www.bing-amp.com/c/s/example.com/page.html',
    source: 'https://example.com',
    allowed: true,
  },
  {
    name: 'hashed cache origin of a long publisher domain',
    url: `${HASHED_ORIGIN}/c/s/${LONG_DOMAIN}/page.html`,
    source: `https://${LONG_DOMAIN}`,
    allowed: true,
  },
  {
    name: "publisher's own page (same origin)",
    url: `https://${PUBLISHER_HOST}/page.html`,
    source: `https://${PUBLISHER_HOST}`,
    allowed: true,
    sameOrigin: true,
  },
  { name: 'cache page of evil.com', url: 'https://evil-com.cdn.ampproject.org/c/s/evil.com/page.html', source: 'https://evil.com', allowed: false },
  // The runtime's __amp_source_origin comes from the page's path, which the attacker controls.
  {
    name: 'cache page of evil.com claiming example.com as its source',
    url: 'https://evil-com.cdn.ampproject.org/c/s/example.com/page.html',
    source: 'https://example.com',
    allowed: false,
  },
  { name: 'evil.com page', url: 'https://evil.com/page.html', source: 'https://evil.com', allowed: false },
];

/** Names on the certificate and in Chromium's host-resolver rules. */
const CERTIFICATE_NAMES = ['*.cdn.ampproject.org', '*.www.bing-amp.com', 'example.com', 'www.example.com', API_HOST, 'evil.com'];
const RESOLVED_HOSTS = ['example.com', '*.example.com', '*.cdn.ampproject.org', '*.www.bing-amp.com', 'evil.com'];

let chromium: LaunchedChromium | undefined;
let server: OriginServer | undefined;
let apis: Record<Adapter, AdapterApi>;
/** Express with `onDenied: 'omit'`, mounted as `omit`: the contrast case. */
let omitApi: AdapterApi;

beforeAll(async () => {
  clearArtifacts();
  ensureChromium();
  apis = createApis({ publishers: PUBLISHERS });
  omitApi = createApi('express', { publishers: PUBLISHERS, onDenied: 'omit' });
  server = await startOriginServer({
    certificate: await makeCertificate(CERTIFICATE_NAMES),
    pageHosts: PAGES.map((page) => new URL(page.url).host),
    apiHost: API_HOST,
    publisherHost: PUBLISHER_HOST,
    apis: { ...Object.fromEntries(ADAPTERS.map((adapter) => [adapter, apis[adapter].handler])), omit: omitApi.handler },
  });
  chromium = await launchChromium(RESOLVED_HOSTS);
}, 1_200_000);

afterAll(async () => {
  await chromium?.close();
  await server?.close();
});

const FAILED_TO_FETCH = 'TypeError: Failed to fetch';

function expectRead(outcome: RequestOutcome, session: string): { status: number; body: Record<string, unknown>; redirectTo: string | null } {
  expect(outcome).toMatchObject({ ok: true, status: 200 });
  if (!outcome.ok) throw new Error('unreachable');
  expect(outcome.body).toMatchObject({ session });
  return { status: outcome.status, body: outcome.body as Record<string, unknown>, redirectTo: outcome.redirectTo };
}

it('the long publisher domain is served from a hashed cache origin', () => {
  // Otherwise the hashed-origin page below would test nothing new.
  expect(new URL(HASHED_ORIGIN).hostname).toMatch(/^[a-z2-7]{52}\.cdn\.ampproject\.org$/);
});

/** What one page visit showed: the page's results and the API requests the server answered. */
interface Visit {
  readonly origin: string;
  readonly session: string;
  readonly result: PageResult;
  readonly seen: readonly ApiRequestRecord[];
}

/**
 * Sets a fresh session cookie on the API's origin, opens the page with
 * `?api=<apiBase>` and returns what it read. Then runs `check`; on any
 * failure saves a screenshot, the console and the details, and says where.
 */
async function visit(testName: string, pageCase: PageCase, apiBase: string, check: (visit: Visit) => void): Promise<void> {
  const { context } = chromium as LaunchedChromium;
  const origin = new URL(pageCase.url).origin;
  const session = `s-${randomUUID()}`;
  const requestsBefore = (server as OriginServer).apiRequests.length;
  let page: Page | undefined;
  let consoleLines: string[] = [];
  let result: PageResult | undefined;
  try {
    await context.clearCookies();
    page = await context.newPage();
    consoleLines = recordConsole(page);
    // A first-party visit to the API's origin sets the SameSite=None cookie.
    await page.goto(`${new URL(apiBase).origin}/session?value=${session}`);
    await page.goto(`${pageCase.url}?api=${encodeURIComponent(apiBase)}`);
    expect(await page.evaluate(() => location.origin)).toBe(origin);
    await page.waitForFunction(() => document.title === 'done', undefined, { timeout: 10_000 });
    result = (await page.evaluate(() => (window as unknown as { ampcorsResult: Promise<PageResult> }).ampcorsResult)) as PageResult;
    check({ origin, session, result, seen: (server as OriginServer).apiRequests.slice(requestsBefore) });
  } catch (error) {
    const folder = await saveFailureArtifacts(testName, page, consoleLines, {
      page: pageCase,
      apiBase,
      session,
      result,
      apiRequests: (server as OriginServer | undefined)?.apiRequests.slice(requestsBefore),
    });
    console.error(`[browser] ${testName} failed: screenshot and console in ${folder}`);
    throw error;
  } finally {
    await page?.close();
  }
}

function expectAllHidden(result: PageResult): void {
  expect(result.list).toEqual({ ok: false, error: FAILED_TO_FETCH });
  expect(result.form).toEqual({ ok: false, error: FAILED_TO_FETCH });
  expect(result.simpleForm).toEqual({ ok: false, error: FAILED_TO_FETCH });
}

describe.each(ADAPTERS)('%s adapter in Chromium', (adapter) => {
  it.each(PAGES)('$name', async (pageCase) => {
    const apiBase = pageCase.sameOrigin ? `https://${PUBLISHER_HOST}/api/${adapter}` : `https://${API_HOST}/${adapter}`;
    const state = apis[adapter].state;
    const subscriptionsBefore = state.subscriptions;
    await visit(`${adapter}-${pageCase.name}`, pageCase, apiBase, ({ origin, session, result, seen }) => {
      expect(result.sourceOrigin).toBe(pageCase.source);
      if (pageCase.allowed) {
        // amp-list: the page reads the JSON, and the cookie reached the API.
        expect(expectRead(result.list, session).body.items).toEqual(['first', 'second']);
        // amp-form with a preflight: read, and AMP-Redirect-To is exposed.
        expect(expectRead(result.form, session).redirectTo).toBe(REDIRECT_TO);
        expect(expectRead(result.simpleForm, session).redirectTo).toBe(REDIRECT_TO);
        expect(state.subscriptions).toBe(subscriptionsBefore + 2);
        if (pageCase.sameOrigin) {
          // A same-origin GET carries no Origin (AMP-Same-Origin: true decides);
          // a same-origin POST carries the publisher's Origin.
          expect(seen.map((r) => [r.method, r.origin])).toEqual([
            ['GET', null],
            ['POST', origin],
            ['POST', origin],
          ]);
        } else {
          expect(seen.map((r) => [r.method, r.origin, r.status])).toEqual([
            ['GET', origin, 200],
            ['OPTIONS', origin, expect.any(Number)],
            ['POST', origin, 200],
            ['POST', origin, 200],
          ]);
        }
      } else {
        // The browser hides every answer from the page...
        expectAllHidden(result);
        // ...the preflighted POST was never sent, and the simple POST, which the
        // browser does send, was stopped before the handler ran.
        expect(seen.every((r) => r.origin === origin)).toBe(true);
        expect(seen.filter((r) => r.method === 'POST').map((r) => r.status)).toEqual([403]);
        expect(seen.some((r) => r.method === 'OPTIONS')).toBe(true);
        expect(state.subscriptions).toBe(subscriptionsBefore);
      }
    });
  });
});

describe("onDenied: 'omit' (the cors package's behaviour), in Chromium", () => {
  it('hides every answer from evil.com, yet its simple POST runs the handler: why the default is a 403', async () => {
    const evil = PAGES.find((page) => page.url.startsWith('https://evil.com/')) as PageCase;
    const subscriptionsBefore = omitApi.state.subscriptions;
    await visit('omit-evil.com', evil, `https://${API_HOST}/omit`, ({ result, seen }) => {
      expectAllHidden(result);
      expect(seen.filter((r) => r.method === 'POST').map((r) => r.status)).toEqual([200]);
      expect(omitApi.state.subscriptions).toBe(subscriptionsBefore + 1);
    });
  });
});
