/**
 * The one scenario table every example publisher API must pass, whatever the
 * framework or runtime: the same requests and the same assertions against
 * Express, Koa, and the Fetch adapter on Node, Bun, Deno and workerd.
 *
 * Every example trusts the same publisher domains ({@link EXAMPLE_PUBLISHERS})
 * and serves `GET /health` (outside CORS, with the subscription count),
 * `GET /api/items` (amp-list JSON) and `POST /api/subscribe` (an amp-form
 * handler with a side effect and an `AMP-Redirect-To` answer).
 */

/** The publisher domains embedded in every example. */
export const EXAMPLE_PUBLISHERS = ['example.com', 'www.example.com', '*.example.org', 'articles.publisher-with-a-very-long-domain-name.example.net'] as const;

/** Where `POST /api/subscribe` redirects to. */
export const REDIRECT_TO = 'https://www.example.com/thanks';

const GOOGLE_WWW = 'https://www-example-com.cdn.ampproject.org';
// SHA-256/base32 prefix of the long domain above: its basic prefix has 65 characters.
const GOOGLE_HASHED = 'https://owmzt3m5vaqhradxtykummqz7aifqhmg3qhdvpsz4ryho73m6wca.cdn.ampproject.org';

/** One request and what its response must show. */
export interface Scenario {
  readonly name: string;
  readonly method: 'GET' | 'POST' | 'OPTIONS';
  /** Path and query. */
  readonly path: string;
  readonly headers?: Record<string, string>;
  /** `application/x-www-form-urlencoded` body, as amp-form sends. */
  readonly form?: Record<string, string>;
  readonly status: number;
  /** Response headers that must equal (string) or match (RegExp) — names are case-insensitive. */
  readonly has?: Record<string, string | RegExp>;
  /** Response headers that must be absent. */
  readonly lacks?: readonly string[];
  /** The body must match. */
  readonly body?: RegExp;
  /** By how much `POST /api/subscribe`'s side-effect counter must move. */
  readonly subscriptions?: number;
}

const VARY_ORIGIN = /(?:^|,)\s*origin\s*(?:,|$)/i;
const CORS_HEADERS = ['access-control-allow-origin', 'access-control-allow-credentials'];

const allowed = (origin: string) => ({ 'access-control-allow-origin': origin, 'access-control-allow-credentials': 'true', vary: VARY_ORIGIN });
const denied = (reason: string) => ({
  status: 403,
  has: { vary: VARY_ORIGIN },
  lacks: CORS_HEADERS,
  body: new RegExp(`\\b${reason}\\b`),
});

/** The table. */
export const SCENARIOS: readonly Scenario[] = [
  {
    name: 'Google AMP Cache origin of a listed domain',
    method: 'GET',
    path: '/api/items',
    headers: { origin: GOOGLE_WWW },
    status: 200,
    has: allowed(GOOGLE_WWW),
    body: /"items"\s*:\s*\[/,
  },
  {
    name: 'Bing AMP Cache origin of a listed domain',
    method: 'GET',
    path: '/api/items',
    headers: { origin: 'https://example-com.www.bing-amp.com' },
    status: 200,
    has: allowed('https://example-com.www.bing-amp.com'),
  },
  {
    name: 'hashed cache origin of a listed long domain',
    method: 'GET',
    path: '/api/items',
    headers: { origin: GOOGLE_HASHED },
    status: 200,
    has: allowed(GOOGLE_HASHED),
  },
  {
    name: 'cache origin under a wildcard rule',
    method: 'GET',
    path: '/api/items',
    headers: { origin: 'https://news-example-org.cdn.ampproject.org' },
    status: 200,
    has: allowed('https://news-example-org.cdn.ampproject.org'),
  },
  {
    name: "publisher's own origin",
    method: 'GET',
    path: '/api/items',
    headers: { origin: 'https://www.example.com' },
    status: 200,
    has: allowed('https://www.example.com'),
  },
  {
    name: 'AMP-Same-Origin: true without Origin',
    method: 'GET',
    path: '/api/items',
    headers: { 'amp-same-origin': 'true' },
    status: 200,
    lacks: ['access-control-allow-origin'],
    body: /"items"/,
  },
  {
    // Checked, and answered without the legacy header (sent only with legacySourceOriginHeader: true).
    name: 'legacy __amp_source_origin of a publisher origin',
    method: 'GET',
    path: '/api/items?__amp_source_origin=https%3A%2F%2Fwww.example.com',
    headers: { origin: GOOGLE_WWW },
    status: 200,
    has: allowed(GOOGLE_WWW),
    lacks: ['amp-access-control-allow-source-origin'],
  },
  {
    name: 'cache origin of an unlisted domain is denied',
    method: 'GET',
    path: '/api/items',
    headers: { origin: 'https://evil-example-com.cdn.ampproject.org' },
    ...denied('unknown-publisher'),
  },
  {
    name: 'unknown hashed cache origin is denied',
    method: 'GET',
    path: '/api/items',
    headers: { origin: 'https://v2c4ucasgcskftbjt4c7phpkbqedcdcqo23tkamleapoa5o6fygq.cdn.ampproject.org' },
    ...denied('hashed-unknown'),
  },
  {
    name: 'foreign origin is denied',
    method: 'GET',
    path: '/api/items',
    headers: { origin: 'https://evil.com' },
    ...denied('unknown-origin'),
  },
  {
    name: 'non-canonical Origin is denied, not repaired',
    method: 'GET',
    path: '/api/items',
    headers: { origin: 'https://WWW-EXAMPLE-COM.cdn.ampproject.org' },
    ...denied('not-canonical'),
  },
  {
    name: '__amp_source_origin naming another site is denied',
    method: 'GET',
    path: '/api/items?__amp_source_origin=https%3A%2F%2Fevil.com',
    headers: { origin: 'https://evil-com.cdn.ampproject.org' },
    ...denied('unknown-publisher'),
  },
  {
    name: '__amp_source_origin naming another site, from an allowed cache origin, is denied',
    method: 'GET',
    path: '/api/items?__amp_source_origin=https%3A%2F%2Fevil.com',
    headers: { origin: GOOGLE_WWW },
    ...denied('source-origin-mismatch'),
  },
  {
    name: 'preflight from a cache origin',
    method: 'OPTIONS',
    path: '/api/subscribe',
    headers: {
      origin: GOOGLE_WWW,
      'access-control-request-method': 'POST',
      'access-control-request-headers': 'content-type, amp-same-origin',
    },
    status: 204,
    has: {
      ...allowed(GOOGLE_WWW),
      'access-control-allow-methods': /\bPOST\b/,
      'access-control-allow-headers': /content-type/i,
      vary: /origin.*access-control-request-headers|access-control-request-headers.*origin/i,
    },
    subscriptions: 0,
  },
  {
    name: 'preflight never allows AMP-Same-Origin',
    method: 'OPTIONS',
    path: '/api/subscribe',
    headers: { origin: GOOGLE_WWW, 'access-control-request-method': 'POST', 'access-control-request-headers': 'amp-same-origin' },
    status: 204,
    has: { 'access-control-allow-origin': GOOGLE_WWW },
    body: /^$/,
  },
  {
    name: 'preflight from a denied origin',
    method: 'OPTIONS',
    path: '/api/subscribe',
    headers: { origin: 'https://evil.com', 'access-control-request-method': 'POST' },
    ...denied('unknown-origin'),
    lacks: [...CORS_HEADERS, 'access-control-allow-methods'],
  },
  {
    name: 'amp-form POST from a cache origin runs and redirects',
    method: 'POST',
    path: '/api/subscribe',
    headers: { origin: GOOGLE_WWW },
    form: { email: 'reader@example.com' },
    status: 200,
    has: { ...allowed(GOOGLE_WWW), 'amp-redirect-to': REDIRECT_TO, 'access-control-expose-headers': /amp-redirect-to/i },
    subscriptions: 1,
  },
  {
    name: 'amp-form POST from a denied cache origin is stopped before the handler',
    method: 'POST',
    path: '/api/subscribe',
    headers: { origin: 'https://evil-example-com.cdn.ampproject.org' },
    form: { email: 'victim@example.com' },
    ...denied('unknown-publisher'),
    lacks: [...CORS_HEADERS, 'amp-redirect-to'],
    subscriptions: 0,
  },
  {
    name: 'amp-form POST with a forged __amp_source_origin is stopped before the handler',
    method: 'POST',
    path: '/api/subscribe?__amp_source_origin=https%3A%2F%2Fevil.com',
    headers: { origin: 'https://evil-com.cdn.ampproject.org' },
    form: { email: 'victim@example.com' },
    ...denied('unknown-publisher'),
    subscriptions: 0,
  },
];

/** Reads the side-effect counter from `GET /health`. */
export async function subscriptions(baseUrl: string): Promise<number> {
  const response = await fetch(`${baseUrl}/health`, { signal: AbortSignal.timeout(10_000) });
  const body = (await response.json()) as { subscriptions?: unknown };
  if (response.status !== 200 || typeof body.subscriptions !== 'number') {
    throw new Error(`GET /health: expected 200 with a numeric "subscriptions", got ${response.status} ${JSON.stringify(body)}`);
  }
  return body.subscriptions;
}

/**
 * Sends a scenario's request to `baseUrl` and lists every way the response
 * differs from the table (an empty list means it passed).
 */
export async function runScenario(baseUrl: string, scenario: Scenario): Promise<string[]> {
  const before = scenario.subscriptions === undefined ? 0 : await subscriptions(baseUrl);
  const headers = new Headers(scenario.headers);
  let body: string | undefined;
  if (scenario.form) {
    headers.set('content-type', 'application/x-www-form-urlencoded');
    body = new URLSearchParams(scenario.form).toString();
  }
  const response = await fetch(`${baseUrl}${scenario.path}`, {
    method: scenario.method,
    headers,
    body,
    redirect: 'manual',
    signal: AbortSignal.timeout(10_000),
  });
  const text = await response.text();
  const problems: string[] = [];
  if (response.status !== scenario.status) problems.push(`status ${response.status}, expected ${scenario.status}`);
  for (const [name, expected] of Object.entries(scenario.has ?? {})) {
    const actual = response.headers.get(name);
    const ok = actual !== null && (typeof expected === 'string' ? actual === expected : expected.test(actual));
    if (!ok) problems.push(`header ${name}: ${JSON.stringify(actual)}, expected ${String(expected)}`);
  }
  for (const name of scenario.lacks ?? []) {
    if (response.headers.has(name)) problems.push(`header ${name} should be absent, is ${JSON.stringify(response.headers.get(name))}`);
  }
  if (scenario.body && !scenario.body.test(text)) problems.push(`body ${JSON.stringify(text.slice(0, 200))} does not match ${String(scenario.body)}`);
  const allowHeaders = response.headers.get('access-control-allow-headers');
  if (allowHeaders !== null && /amp-same-origin/i.test(allowHeaders)) problems.push(`Access-Control-Allow-Headers lists AMP-Same-Origin: ${allowHeaders}`);
  if (scenario.subscriptions !== undefined) {
    const moved = (await subscriptions(baseUrl)) - before;
    if (moved !== scenario.subscriptions) problems.push(`subscription counter moved by ${moved}, expected ${scenario.subscriptions}`);
  }
  return problems;
}
