/**
 * The conformance table: one request and the response every adapter must
 * give (SPEC §6–7 and issue #3). `headers` values of `null` must be absent.
 */
import { cacheOrigin, compileAllowSet, createAsyncVerifier, createVerifier, loadAllowSet, type PublisherSource, prefixForms } from '@ampcors/core';
import { allPrefixForms, isHashedPrefix } from '@ampcors/core/algorithms';
import type { AdapterOptions, ConformanceRequest } from './harnesses.js';

/** Expected outcome of a scenario. */
export interface Expectation {
  readonly status: number;
  /** Exact values (lowercased names); `null` means the header must be absent. */
  readonly headers?: Readonly<Record<string, string | null>>;
  /** Names the `Vary` header must list (case-insensitive). */
  readonly vary: readonly string[];
  /** Whether a route handler (and its side effects) ran. */
  readonly handlerRan: boolean;
  /** A substring of the body. */
  readonly bodyIncludes?: string;
  /** The verdict reason the handler saw. */
  readonly seenReason?: string;
}

/** One row of the table. */
export interface Scenario {
  readonly name: string;
  readonly options: AdapterOptions;
  readonly request: ConformanceRequest;
  readonly expect: Expectation;
}

const LONG = 'articles.publisher-with-a-very-long-domain-name.example.net';
const PUBLISHERS = ['example.com', LONG];
const base: AdapterOptions = { publishers: PUBLISHERS };
const CACHE = cacheOrigin('example.com');
const HASHED = cacheOrigin(LONG);
const EVIL_CACHE = cacheOrigin('evil.com');
const MAIL = 'https://mail.google.com';
const sync = createVerifier({ publishers: PUBLISHERS });

/**
 * A shared registry as `@ampcors/redis` keeps it (publisher set + prefix
 * table of every accepted form), answering after a macrotask like a network
 * store; `down` makes every answer fail.
 */
function registrySource(domains: readonly string[], down = false): PublisherSource {
  const prefixes = new Map(domains.flatMap((domain) => prefixForms(domain).map(({ prefix }) => [prefix, domain] as const)));
  const later = <T>(value: T) =>
    new Promise<T>((resolve, reject) => setTimeout(() => (down ? reject(new Error('ECONNREFUSED 127.0.0.1:6379')) : resolve(value)), 1));
  return { publisherOfPrefix: (prefix) => later(prefixes.get(prefix)), hasPublisher: (domain) => later(domains.includes(domain)) };
}
/** In memory: example.com only; in the shared registry: the long (hashed) domain. */
const fleet = (down = false) => createAsyncVerifier({ publishers: ['example.com'], source: registrySource([LONG], down) });

/**
 * A compiled allow-set (what `ampcors compile` writes), given as its bytes:
 * a readable domain, the long (hashed) one, and a domain whose readable
 * prefix another reading claims (only its hashed prefix is compiled).
 */
const SHARED = 'a--b.example';
const SET_BYTES = compileAllowSet(['set.example', LONG, SHARED]);
const SET_CACHE = cacheOrigin('set.example');
const SET_SHARED_HASHED = `https://${prefixForms(SHARED).find((form) => isHashedPrefix(form.prefix))?.prefix}.cdn.ampproject.org`;
/** The readable cache origin of SHARED: claimed by another reading too, so never in the set. */
const SET_CLAIMED = `https://${allPrefixForms(SHARED).find((form) => !prefixForms(SHARED).some((kept) => kept.prefix === form.prefix))?.prefix}.cdn.ampproject.org`;
/** The publisher's own pages, next to the set (which holds cache origins only). */
const PAGES = 'https://www.set.example';
const withSet: AdapterOptions = { allowSet: SET_BYTES, origins: [PAGES] };
/** Every source at once: in-memory example.com, the compiled set, and a registry holding registry.example. */
const REGISTRY_CACHE = cacheOrigin('registry.example');
const allSources = (down = false): AdapterOptions => ({
  publishers: ['example.com'],
  allowSet: SET_BYTES,
  verifier: createAsyncVerifier({ source: registrySource(['registry.example'], down) }),
});

const ACAO = 'access-control-allow-origin';
const ACAC = 'access-control-allow-credentials';
const EXPOSE = 'access-control-expose-headers';
const SOURCE = 'amp-access-control-allow-source-origin';
const get = (headers: Record<string, string>, path = '/api/items'): ConformanceRequest => ({ method: 'GET', path, headers });
const post = (headers: Record<string, string>, path = '/api/subscribe'): ConformanceRequest => ({ method: 'POST', path, headers });
const preflight = (origin: string, extra: Record<string, string> = {}): ConformanceRequest => ({
  method: 'OPTIONS',
  path: '/api/items',
  headers: { Origin: origin, 'Access-Control-Request-Method': 'POST', ...extra },
});

const allowedGet = (origin: string): Expectation => ({
  status: 200,
  headers: { [ACAO]: origin, [ACAC]: 'true', [EXPOSE]: 'AMP-Redirect-To', [SOURCE]: null },
  vary: ['Origin', 'Accept-Encoding'],
  handlerRan: true,
});
const rejected = (reason: string): Expectation => ({
  status: 403,
  headers: { [ACAO]: null, [ACAC]: null },
  vary: ['Origin'],
  handlerRan: false,
  bodyIncludes: reason,
});

/**
 * An adapter given no options at all: what `cors()` and `@koa/cors()` do by
 * default (issue #15): the literal `*`, never credentials. Whether `Vary:
 * Origin` is sent then follows each adapter's peer (`cors` sends none,
 * `@koa/cors` always does), so these rows do not assert it; the adapters'
 * drop-in tests do.
 */
export const NO_OPTIONS: AdapterOptions = Object.freeze({});
/** The API's own origin in the same-origin rows (the adapters never learn it: the browser's Sec-Fetch-Site says it). */
const OWN = 'https://api.example.net';

/** The table. */
export const SCENARIOS: readonly Scenario[] = [
  {
    name: 'allowed cache origin, existing Vary kept',
    options: base,
    request: get({ Origin: CACHE }),
    expect: { ...allowedGet(CACHE), seenReason: 'cache-origin' },
  },
  {
    name: 'hashed cache origin of a long domain',
    options: base,
    request: get({ Origin: HASHED }),
    expect: { ...allowedGet(HASHED), seenReason: 'cache-origin-hashed' },
  },
  {
    name: 'publisher origin',
    options: base,
    request: get({ Origin: 'https://example.com' }),
    expect: { ...allowedGet('https://example.com'), seenReason: 'publisher-origin' },
  },
  {
    name: 'same-origin via AMP-Same-Origin: true, POST runs',
    options: base,
    request: post({ 'AMP-Same-Origin': 'true' }),
    expect: {
      status: 200,
      headers: { [ACAO]: null, 'amp-redirect-to': 'https://example.com/thanks' },
      vary: ['Origin'],
      handlerRan: true,
      seenReason: 'same-origin',
    },
  },
  {
    name: 'no Origin: outside CORS, no headers',
    options: base,
    request: get({}),
    expect: { status: 200, headers: { [ACAO]: null, [ACAC]: null }, vary: ['Origin'], handlerRan: true, seenReason: 'missing' },
  },
  { name: 'denied: unknown publisher on a cache', options: base, request: get({ Origin: EVIL_CACHE }), expect: rejected('unknown-publisher') },
  {
    name: 'denied: unknown hashed prefix',
    options: base,
    request: get({ Origin: `https://${'a'.repeat(52)}.cdn.ampproject.org` }),
    expect: rejected('hashed-unknown'),
  },
  { name: 'denied: http publisher origin', options: base, request: get({ Origin: 'http://example.com' }), expect: rejected('unknown-origin') },
  { name: 'denied: null origin', options: base, request: get({ Origin: 'null' }), expect: rejected('null-origin') },
  {
    name: 'denied: non-canonical origin',
    options: base,
    request: get({ Origin: 'https://Example-com.cdn.ampproject.org' }),
    expect: rejected('not-canonical'),
  },
  { name: 'denied: bare cache origin', options: base, request: get({ Origin: 'https://cdn.ampproject.org' }), expect: rejected('legacy-cache-origin') },
  { name: 'denied POST: side effect not run', options: base, request: post({ Origin: EVIL_CACHE }), expect: rejected('unknown-publisher') },
  {
    name: "onDenied 'omit': no CORS headers, handler runs",
    options: { ...base, onDenied: 'omit' },
    request: post({ Origin: EVIL_CACHE }),
    expect: { status: 200, headers: { [ACAO]: null, [ACAC]: null, 'amp-redirect-to': 'https://example.com/thanks' }, vary: ['Origin'], handlerRan: true },
  },
  {
    name: 'allowed POST: AMP-Redirect-To sent and exposed',
    options: base,
    request: post({ Origin: CACHE }),
    expect: {
      status: 200,
      headers: { [ACAO]: CACHE, [EXPOSE]: 'AMP-Redirect-To', 'amp-redirect-to': 'https://example.com/thanks' },
      vary: ['Origin'],
      handlerRan: true,
    },
  },
  {
    name: 'preflight: requested headers reflected minus AMP-Same-Origin',
    options: base,
    request: preflight(CACHE, { 'Access-Control-Request-Headers': 'Content-Type, AMP-Same-Origin, X-Requested-With' }),
    expect: {
      status: 204,
      headers: {
        [ACAO]: CACHE,
        [ACAC]: 'true',
        'access-control-allow-methods': 'GET,HEAD,PUT,PATCH,POST,DELETE',
        'access-control-allow-headers': 'Content-Type, X-Requested-With',
        'access-control-max-age': null,
        'access-control-allow-private-network': null,
      },
      vary: ['Origin', 'Access-Control-Request-Headers'],
      handlerRan: false,
    },
  },
  {
    name: 'preflight: only AMP-Same-Origin requested → no Allow-Headers',
    options: base,
    request: preflight(CACHE, { 'Access-Control-Request-Headers': 'amp-same-origin' }),
    expect: {
      status: 204,
      headers: { [ACAO]: CACHE, 'access-control-allow-headers': null },
      vary: ['Origin', 'Access-Control-Request-Headers'],
      handlerRan: false,
    },
  },
  {
    name: 'preflight: private network, max-age, status and methods configured',
    options: { ...base, privateNetworkAccess: true, maxAge: 600, preflightStatus: 200, methods: ['GET', 'POST'] },
    request: preflight(CACHE, { 'Access-Control-Request-Private-Network': 'true' }),
    expect: {
      status: 200,
      headers: { [ACAO]: CACHE, 'access-control-allow-private-network': 'true', 'access-control-max-age': '600', 'access-control-allow-methods': 'GET,POST' },
      vary: ['Origin'],
      handlerRan: false,
    },
  },
  {
    name: 'preflight: private network not enabled',
    options: base,
    request: preflight(CACHE, { 'Access-Control-Request-Private-Network': 'true' }),
    expect: { status: 204, headers: { [ACAO]: CACHE, 'access-control-allow-private-network': null }, vary: ['Origin'], handlerRan: false },
  },
  { name: 'preflight: denied origin', options: base, request: preflight(EVIL_CACHE), expect: rejected('unknown-publisher') },
  {
    name: 'preflight: preflightContinue hands over to the handler',
    options: { ...base, preflightContinue: true },
    request: preflight(CACHE),
    expect: { status: 200, headers: { [ACAO]: CACHE }, vary: ['Origin'], handlerRan: true, bodyIncludes: 'handler' },
  },
  {
    name: 'credentials off',
    options: { ...base, credentials: false },
    request: get({ Origin: CACHE }),
    expect: { ...allowedGet(CACHE), headers: { [ACAO]: CACHE, [ACAC]: null } },
  },
  {
    name: 'exposed headers added to AMP-Redirect-To',
    options: { ...base, exposedHeaders: ['X-Total-Count'] },
    request: get({ Origin: CACHE }),
    expect: { ...allowedGet(CACHE), headers: { [EXPOSE]: 'AMP-Redirect-To, X-Total-Count' } },
  },
  {
    name: '__amp_source_origin trusted: checked, no legacy header by default',
    options: base,
    request: get({ Origin: CACHE }, '/api/items?__amp_source_origin=https%3A%2F%2Fexample.com'),
    expect: { ...allowedGet(CACHE), headers: { [ACAO]: CACHE, [ACAC]: 'true', [SOURCE]: null, [EXPOSE]: 'AMP-Redirect-To' } },
  },
  {
    name: '__amp_source_origin trusted with legacySourceOriginHeader: legacy header sent and exposed',
    options: { ...base, legacySourceOriginHeader: true },
    request: get({ Origin: CACHE }, '/api/items?__amp_source_origin=https%3A%2F%2Fexample.com'),
    expect: {
      ...allowedGet(CACHE),
      headers: { [ACAO]: CACHE, [SOURCE]: 'https://example.com', [EXPOSE]: 'AMP-Redirect-To, AMP-Access-Control-Allow-Source-Origin' },
    },
  },
  {
    name: 'attack: __amp_source_origin untrusted with legacySourceOriginHeader → 403, no legacy header',
    options: { ...base, legacySourceOriginHeader: true },
    request: get({ Origin: CACHE }, '/api/items?__amp_source_origin=https%3A%2F%2Fevil.com'),
    expect: { ...rejected('source-origin-mismatch'), headers: { [ACAO]: null, [ACAC]: null, [SOURCE]: null } },
  },
  {
    name: '__amp_source_origin untrusted on an allowed origin',
    options: base,
    request: get({ Origin: CACHE }, '/api/items?__amp_source_origin=https%3A%2F%2Fevil.com'),
    expect: rejected('source-origin-mismatch'),
  },
  {
    name: '__amp_source_origin never derives trust (toolbox-cors hole)',
    options: base,
    request: get({ Origin: EVIL_CACHE }, '/api/items?__amp_source_origin=https%3A%2F%2Fevil.com'),
    expect: rejected('unknown-publisher'),
  },
  {
    name: 'email v2: trusted sender',
    options: { ...base, email: { senders: ['news@example.com'] } },
    request: post({ Origin: MAIL, 'AMP-Email-Sender': 'news@example.com' }),
    expect: { status: 200, headers: { 'amp-email-allow-sender': 'news@example.com', [ACAO]: null }, vary: ['Origin', 'AMP-Email-Sender'], handlerRan: true },
  },
  {
    name: 'email v2: untrusted sender',
    options: { ...base, email: { senders: ['news@example.com'] } },
    request: post({ Origin: MAIL, 'AMP-Email-Sender': 'spam@evil.com' }),
    expect: { ...rejected('email-sender-denied'), headers: { 'amp-email-allow-sender': null } },
  },
  {
    name: 'email v1: trusted sender in __amp_source_origin',
    options: { ...base, email: { senders: ['news@example.com'] } },
    request: post({ Origin: MAIL }, '/api/subscribe?__amp_source_origin=news%40example.com'),
    expect: {
      status: 200,
      headers: { [ACAO]: MAIL, [ACAC]: 'true', [SOURCE]: 'news@example.com', [EXPOSE]: 'AMP-Redirect-To, AMP-Access-Control-Allow-Source-Origin' },
      vary: ['Origin'],
      handlerRan: true,
    },
  },
  {
    name: 'email v1 and v2: v2 wins',
    options: { ...base, email: { senders: ['news@example.com'] } },
    request: post({ Origin: MAIL, 'AMP-Email-Sender': 'news@example.com' }, '/api/subscribe?__amp_source_origin=spam%40evil.com'),
    expect: { status: 200, headers: { 'amp-email-allow-sender': 'news@example.com', [SOURCE]: null, [ACAO]: null }, vary: ['Origin'], handlerRan: true },
  },
  // Issue #14, from the attacker's side: each row failed on the code before its fix.
  {
    name: 'attack: email v1 sender in the query from an untrusted Origin → 403, POST not run, no ACAO',
    options: { ...base, email: { senders: ['news@example.com'] } },
    request: post({ Origin: 'https://evil.example' }, '/api/subscribe?__amp_source_origin=news%40example.com'),
    expect: rejected('unknown-origin'),
  },
  {
    name: 'attack: email v1 sender in the query from an untrusted Origin, GET → 403, no credentials',
    options: { ...base, email: { senders: ['news@example.com'] } },
    request: get({ Origin: 'https://evil.example' }, '/api/items?__amp_source_origin=news%40example.com'),
    expect: rejected('unknown-origin'),
  },
  {
    name: "attack: email v1 from an untrusted Origin with onDenied 'omit' → no CORS headers",
    options: { ...base, email: { senders: ['news@example.com'] }, onDenied: 'omit' },
    request: get({ Origin: 'https://evil.example' }, '/api/items?__amp_source_origin=news%40example.com'),
    expect: { status: 200, headers: { [ACAO]: null, [ACAC]: null, [SOURCE]: null }, vary: ['Origin', 'AMP-Email-Sender'], handlerRan: true },
  },
  {
    name: 'email v1: clientOrigins [] leaves the email client to the verifier (denied)',
    options: { ...base, email: { senders: ['news@example.com'], clientOrigins: [] } },
    request: post({ Origin: MAIL }, '/api/subscribe?__amp_source_origin=news%40example.com'),
    expect: rejected('unknown-origin'),
  },
  {
    name: 'email v1: an allowed cache origin is answered with the sender',
    options: { ...base, email: { senders: ['news@example.com'], clientOrigins: [] } },
    request: get({ Origin: CACHE }, '/api/items?__amp_source_origin=news%40example.com'),
    expect: { status: 200, headers: { [ACAO]: CACHE, [ACAC]: 'true', [SOURCE]: 'news@example.com' }, vary: ['Origin'], handlerRan: true },
  },
  {
    name: 'attack: preflight asking for "*, amp-same-origin" never gets Allow-Headers: *',
    options: base,
    request: preflight(CACHE, { 'Access-Control-Request-Headers': '*, amp-same-origin' }),
    expect: {
      status: 204,
      headers: { [ACAO]: CACHE, 'access-control-allow-headers': null },
      vary: ['Origin', 'Access-Control-Request-Headers'],
      handlerRan: false,
    },
  },
  {
    name: 'attack: a KELVIN SIGN sender (%E2%84%AA) does not match kate@, and is no 500',
    options: { ...base, email: { senders: ['kate@example.com'] } },
    request: post({ Origin: MAIL }, '/api/subscribe?__amp_source_origin=%E2%84%AAate%40example.com'),
    expect: { ...rejected('email-sender-denied'), headers: { [ACAO]: null, [ACAC]: null, [SOURCE]: null } },
  },
  {
    name: 'a second, percent-encoded __amp_source_origin is still read by the linear scan: ambiguous → 403',
    options: base,
    request: get({ Origin: CACHE }, '/api/items?__amp_source_origin=https%3A%2F%2Fexample.com&%5F_amp_source_origin=https%3A%2F%2Fevil.com'),
    expect: rejected('source-origin-mismatch'),
  },
  {
    name: 'throwing verifier → 500 with Vary: Origin',
    options: {
      verifier: {
        verify: () => {
          throw new Error('verifier exploded');
        },
      },
    },
    request: post({ Origin: CACHE }),
    expect: { status: 500, headers: { [ACAO]: null }, vary: ['Origin'], handlerRan: false },
  },
  {
    name: 'rejecting async verifier → 500 with Vary: Origin',
    options: { verifier: { verify: () => Promise.reject(new Error('store unreachable')) } },
    request: get({ Origin: CACHE }),
    expect: { status: 500, headers: { [ACAO]: null }, vary: ['Origin'], handlerRan: false },
  },
  {
    name: 'async verifier: allowed',
    options: { verifier: { verify: async (origin, context) => sync.verify(origin, context) } },
    request: get({ Origin: HASHED }),
    expect: { ...allowedGet(HASHED), seenReason: 'cache-origin-hashed' },
  },
  {
    name: 'createAsyncVerifier: in-memory domain answered without the registry',
    options: { verifier: fleet() },
    request: get({ Origin: CACHE }),
    expect: { ...allowedGet(CACHE), seenReason: 'cache-origin' },
  },
  {
    name: 'createAsyncVerifier: hashed origin of a registry domain allowed',
    options: { verifier: fleet() },
    request: get({ Origin: HASHED }),
    expect: { ...allowedGet(HASHED), seenReason: 'cache-origin-hashed' },
  },
  {
    name: 'createAsyncVerifier: preflight of a registry domain',
    options: { verifier: fleet() },
    request: preflight(HASHED, { 'Access-Control-Request-Headers': 'content-type' }),
    expect: { status: 204, headers: { [ACAO]: HASHED, [ACAC]: 'true' }, vary: ['Origin'], handlerRan: false },
  },
  {
    name: 'createAsyncVerifier: unknown publisher denied before the handler',
    options: { verifier: fleet() },
    request: post({ Origin: EVIL_CACHE }),
    expect: rejected('unknown-publisher'),
  },
  {
    name: 'createAsyncVerifier: registry down fails closed (403 source-unavailable)',
    options: { verifier: fleet(true) },
    request: post({ Origin: HASHED }),
    expect: rejected('source-unavailable'),
  },
  {
    name: 'createAsyncVerifier: registry down, an in-memory domain still allowed',
    options: { verifier: fleet(true) },
    request: get({ Origin: CACHE }),
    expect: { ...allowedGet(CACHE), seenReason: 'cache-origin' },
  },
  {
    name: "same-origin: Sec-Fetch-Site: same-origin POST from the API's own page runs, no CORS headers",
    options: base,
    request: post({ Origin: OWN, 'Sec-Fetch-Site': 'same-origin' }),
    expect: {
      status: 200,
      headers: { [ACAO]: null, [ACAC]: null, [EXPOSE]: null, 'amp-redirect-to': 'https://example.com/thanks' },
      vary: ['Origin'],
      handlerRan: true,
      seenReason: 'same-origin',
    },
  },
  {
    name: 'same-origin: Sec-Fetch-Site: same-origin GET without Origin runs',
    options: base,
    request: get({ 'Sec-Fetch-Site': 'same-origin' }),
    expect: { status: 200, headers: { [ACAO]: null, [ACAC]: null }, vary: ['Origin'], handlerRan: true, seenReason: 'same-origin' },
  },
  {
    name: 'same-origin: Sec-Fetch-Site: same-site is not same-origin (403)',
    options: base,
    request: post({ Origin: OWN, 'Sec-Fetch-Site': 'same-site' }),
    expect: rejected('unknown-origin'),
  },
  {
    name: 'same-origin: Sec-Fetch-Site: cross-site is not same-origin (403)',
    options: base,
    request: post({ Origin: OWN, 'Sec-Fetch-Site': 'cross-site' }),
    expect: rejected('unknown-origin'),
  },
  {
    name: 'same-origin: only the exact value counts (Same-Origin, 403)',
    options: base,
    request: post({ Origin: OWN, 'Sec-Fetch-Site': 'Same-Origin' }),
    expect: rejected('unknown-origin'),
  },
  {
    name: 'same-origin: Sec-Fetch-Site: same-origin runs whatever the verifier says',
    options: { verifier: { verify: (origin) => ({ allowed: false, origin: origin ?? null, reason: 'unknown-origin', detail: 'denies everything' }) } },
    request: post({ Origin: OWN, 'Sec-Fetch-Site': 'same-origin' }),
    expect: { status: 200, headers: { [ACAO]: null, [ACAC]: null }, vary: ['Origin'], handlerRan: true, seenReason: 'same-origin' },
  },
  {
    name: 'compatible mode: no options, a foreign GET gets the literal *, no credentials',
    options: NO_OPTIONS,
    request: get({ Origin: 'https://evil.example' }),
    expect: {
      status: 200,
      headers: { [ACAO]: '*', [ACAC]: null },
      vary: ['Accept-Encoding'],
      handlerRan: true,
      seenReason: 'any-origin',
    },
  },
  {
    name: 'compatible mode: no options, a request without Origin gets the same *',
    options: NO_OPTIONS,
    request: get({}),
    expect: { status: 200, headers: { [ACAO]: '*', [ACAC]: null }, vary: [], handlerRan: true, seenReason: 'missing' },
  },
  {
    name: 'compatible mode: no options, a foreign POST runs with *, no credentials',
    options: NO_OPTIONS,
    request: post({ Origin: 'https://evil.example', Cookie: 'session=1' }),
    expect: {
      status: 200,
      headers: { [ACAO]: '*', [ACAC]: null, [EXPOSE]: 'AMP-Redirect-To' },
      vary: [],
      handlerRan: true,
      seenReason: 'any-origin',
    },
  },
  {
    name: 'compatible mode: no options, a preflight answers * and never allows AMP-Same-Origin',
    options: NO_OPTIONS,
    request: preflight('https://evil.example', { 'Access-Control-Request-Headers': 'Content-Type, AMP-Same-Origin' }),
    expect: {
      status: 204,
      headers: { [ACAO]: '*', [ACAC]: null, 'access-control-allow-headers': 'Content-Type' },
      vary: ['Access-Control-Request-Headers'],
      handlerRan: false,
    },
  },
  // Same-origin, from the attacker's side: only the exact browser value skips CORS, and it never earns CORS headers.
  {
    name: 'same-origin: a forged Sec-Fetch-Site: same-origin from a foreign Origin runs but gets no CORS header (a browser never sends it cross-origin)',
    options: base,
    request: post({ Origin: 'https://evil.example', 'Sec-Fetch-Site': 'same-origin', Cookie: 'session=1' }),
    expect: { status: 200, headers: { [ACAO]: null, [ACAC]: null, [EXPOSE]: null }, vary: ['Origin'], handlerRan: true, seenReason: 'same-origin' },
  },
  {
    name: 'same-origin: a list value (same-origin, cross-site) is not same-origin (403)',
    options: base,
    request: post({ Origin: 'https://evil.example', 'Sec-Fetch-Site': 'same-origin, cross-site' }),
    expect: rejected('unknown-origin'),
  },
  {
    name: 'same-origin: a padded value (same-origin;) is not same-origin (403)',
    options: base,
    request: post({ Origin: 'https://evil.example', 'Sec-Fetch-Site': 'same-origin;' }),
    expect: rejected('unknown-origin'),
  },
  {
    name: 'same-origin: Sec-Fetch-Site: none (a typed URL) from a foreign Origin is judged (403)',
    options: base,
    request: post({ Origin: 'https://evil.example', 'Sec-Fetch-Site': 'none' }),
    expect: rejected('unknown-origin'),
  },
  {
    name: 'same-origin: cross-site from an allowed cache origin is judged as usual (allowed)',
    options: base,
    request: get({ Origin: CACHE, 'Sec-Fetch-Site': 'cross-site' }),
    expect: { ...allowedGet(CACHE), seenReason: 'cache-origin' },
  },
  {
    name: 'same-origin: Sec-Fetch-Site: same-origin with a compiled allow-set runs, no CORS headers',
    options: withSet,
    request: post({ Origin: 'https://api.set.example', 'Sec-Fetch-Site': 'same-origin' }),
    expect: { status: 200, headers: { [ACAO]: null, [ACAC]: null }, vary: ['Origin'], handlerRan: true, seenReason: 'same-origin' },
  },
  {
    name: 'compatible mode: no options, Origin: null never gets null back nor credentials',
    options: NO_OPTIONS,
    request: get({ Origin: 'null', Cookie: 'session=1' }),
    expect: { status: 200, headers: { [ACAC]: null }, vary: [], handlerRan: true },
  },
  {
    name: 'compatible mode: no options, a credentialed preflight is never answered with credentials',
    options: NO_OPTIONS,
    request: preflight('https://evil.example', { Cookie: 'session=1' }),
    expect: { status: 204, headers: { [ACAO]: '*', [ACAC]: null }, vary: [], handlerRan: false },
  },
  // A compiled allow-set (allowSet: the bytes of an `ampcors compile` file), with the publisher's own origins beside it.
  {
    name: 'allowSet: a readable cache origin of the set, with credentials',
    options: withSet,
    request: get({ Origin: SET_CACHE }),
    expect: { ...allowedGet(SET_CACHE), seenReason: 'cache-origin' },
  },
  {
    name: 'allowSet: a hashed cache origin of the set',
    options: withSet,
    request: get({ Origin: HASHED }),
    expect: { ...allowedGet(HASHED), seenReason: 'cache-origin-hashed' },
  },
  {
    name: 'allowSet: the hashed origin of a domain whose readable prefix is shared',
    options: withSet,
    request: get({ Origin: SET_SHARED_HASHED }),
    expect: { ...allowedGet(SET_SHARED_HASHED), seenReason: 'cache-origin-hashed' },
  },
  {
    name: "allowSet: the publisher's own origin (origins) still allowed",
    options: withSet,
    request: get({ Origin: PAGES }),
    expect: { ...allowedGet(PAGES), seenReason: 'publisher-origin' },
  },
  {
    name: "allowSet with publishers: the publisher's origin by the default rule",
    options: { allowSet: SET_BYTES, publishers: ['set.example'] },
    request: get({ Origin: 'https://set.example' }),
    expect: { ...allowedGet('https://set.example'), seenReason: 'publisher-origin' },
  },
  {
    name: 'allowSet: a loaded set (loadAllowSet) serves the same',
    options: { allowSet: loadAllowSet(SET_BYTES), origins: [PAGES] },
    request: get({ Origin: HASHED }),
    expect: { ...allowedGet(HASHED), seenReason: 'cache-origin-hashed' },
  },
  {
    name: 'allowSet: a credentialed preflight from the set',
    options: withSet,
    request: preflight(SET_CACHE, { 'Access-Control-Request-Headers': 'content-type' }),
    expect: { status: 204, headers: { [ACAO]: SET_CACHE, [ACAC]: 'true' }, vary: ['Origin'], handlerRan: false },
  },
  {
    name: 'allowSet: an allowed POST runs, AMP-Redirect-To exposed',
    options: withSet,
    request: post({ Origin: SET_CACHE }),
    expect: {
      status: 200,
      headers: { [ACAO]: SET_CACHE, [ACAC]: 'true', [EXPOSE]: 'AMP-Redirect-To', 'amp-redirect-to': 'https://example.com/thanks' },
      vary: ['Origin'],
      handlerRan: true,
    },
  },
  {
    name: 'allowSet: __amp_source_origin of the publisher accepted (and answered with legacySourceOriginHeader)',
    options: { ...withSet, legacySourceOriginHeader: true },
    request: get({ Origin: SET_CACHE }, `/api/items?__amp_source_origin=${encodeURIComponent(PAGES)}`),
    expect: { ...allowedGet(SET_CACHE), headers: { [ACAO]: SET_CACHE, [ACAC]: 'true', [SOURCE]: PAGES }, seenReason: 'cache-origin' },
  },
  {
    name: 'allowSet: AMP-Same-Origin without Origin runs',
    options: withSet,
    request: post({ 'AMP-Same-Origin': 'true' }),
    expect: { status: 200, headers: { [ACAO]: null }, vary: ['Origin'], handlerRan: true, seenReason: 'same-origin' },
  },
  {
    name: 'attack allowSet: a prefix another domain also claims is denied, POST not run',
    options: withSet,
    request: post({ Origin: SET_CLAIMED, Cookie: 'session=1' }),
    expect: rejected('unknown-publisher'),
  },
  { name: 'attack allowSet: a foreign cache origin is denied', options: withSet, request: get({ Origin: EVIL_CACHE }), expect: rejected('unknown-publisher') },
  {
    name: 'attack allowSet: an unknown hashed prefix is denied',
    options: withSet,
    request: get({ Origin: `https://${'b'.repeat(52)}.cdn.ampproject.org` }),
    expect: rejected('hashed-unknown'),
  },
  {
    name: 'attack allowSet: a preflight from a foreign cache origin is denied',
    options: withSet,
    request: preflight(EVIL_CACHE),
    expect: rejected('unknown-publisher'),
  },
  {
    name: 'attack allowSet: the bare publisher domain is not a publisher origin when origins names the pages',
    options: withSet,
    request: get({ Origin: 'https://set.example' }),
    expect: rejected('unknown-origin'),
  },
  {
    name: 'attack allowSet: a set origin with a forged __amp_source_origin is denied',
    options: withSet,
    request: get({ Origin: HASHED }, '/api/items?__amp_source_origin=https%3A%2F%2Fevil.example'),
    expect: rejected('source-origin-mismatch'),
  },
  {
    name: 'attack allowSet: a set origin over http is denied',
    options: withSet,
    request: get({ Origin: SET_CACHE.replace('https:', 'http:') }),
    expect: rejected('insecure-scheme'),
  },
  // Every source at once: in-memory rules, then the compiled set, then an async registry (first allow wins).
  {
    name: 'all sources: an in-memory publisher',
    options: allSources(),
    request: get({ Origin: CACHE }),
    expect: { ...allowedGet(CACHE), seenReason: 'cache-origin' },
  },
  {
    name: 'all sources: a domain of the compiled set',
    options: allSources(),
    request: get({ Origin: SET_CACHE }),
    expect: { ...allowedGet(SET_CACHE), seenReason: 'cache-origin' },
  },
  {
    name: 'all sources: a domain only the async registry knows',
    options: allSources(),
    request: post({ Origin: REGISTRY_CACHE }),
    expect: { status: 200, headers: { [ACAO]: REGISTRY_CACHE, [ACAC]: 'true' }, vary: ['Origin'], handlerRan: true, seenReason: 'cache-origin' },
  },
  {
    name: 'attack all sources: an origin none of them knows is denied, POST not run',
    options: allSources(),
    request: post({ Origin: EVIL_CACHE }),
    expect: rejected('unknown-publisher'),
  },
  {
    name: 'all sources, registry down: the set still answers for its own origins',
    options: allSources(true),
    request: get({ Origin: HASHED }),
    expect: { ...allowedGet(HASHED), seenReason: 'cache-origin-hashed' },
  },
  {
    name: 'attack all sources, registry down: an unknown origin fails closed (403 source-unavailable)',
    options: allSources(true),
    request: post({ Origin: REGISTRY_CACHE }),
    expect: rejected('source-unavailable'),
  },
  {
    name: 'publishers with an async verifier: the two combine (in memory first)',
    options: {
      publishers: ['example.com'],
      verifier: { verify: async (origin, context) => createVerifier({ publishers: ['set.example'] }).verify(origin, context) },
    },
    request: get({ Origin: SET_CACHE }),
    expect: { ...allowedGet(SET_CACHE), seenReason: 'cache-origin' },
  },
  {
    name: 'attack: publishers with a throwing verifier → 500 for what memory does not allow',
    options: {
      publishers: ['example.com'],
      verifier: {
        verify: () => {
          throw new Error('registry exploded');
        },
      },
    },
    request: post({ Origin: EVIL_CACHE }),
    expect: { status: 500, headers: { [ACAO]: null, [ACAC]: null }, vary: ['Origin'], handlerRan: false },
  },
  {
    name: 'publishers with a throwing verifier: what memory allows is never held up',
    options: {
      publishers: ['example.com'],
      verifier: {
        verify: () => {
          throw new Error('registry exploded');
        },
      },
    },
    request: get({ Origin: CACHE }),
    expect: { ...allowedGet(CACHE), seenReason: 'cache-origin' },
  },
];
