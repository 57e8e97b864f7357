import { getDomain } from 'tldts';
import { canonicalDomain } from './domain-name.js';
import { AmpCorsError, isAmpCorsError } from './errors.js';

/** One entry of the AMP project's `caches.json` registry (SPEC §1). */
export interface AmpCache {
  /** Short stable identifier, e.g. `google`. */
  readonly id: string;
  /** Human-readable name. */
  readonly name: string;
  /** Link to the cache's documentation. */
  readonly docs?: string;
  /** Documents are served from `https://<domain-prefix>.<cacheDomain>`. */
  readonly cacheDomain: string;
  /** Suffix of the cache's update-cache API hosts. */
  readonly updateCacheApiDomainSuffix?: string;
  /** Suffix of the cache's third-party iframe hosts. */
  readonly thirdPartyFrameDomainSuffix?: string;
}

/** Where the live registry is served (SPEC §1). */
export const CACHES_URL = 'https://cdn.ampproject.org/caches.json';

/**
 * The bundled snapshot of `caches.json` (amphtml
 * `build-system/global-configs/caches.json`): Google's and Bing's AMP caches.
 * Note Bing's `www.` (amphtml#27472). Nothing in ampcors needs the network.
 */
export const CACHES: readonly AmpCache[] = Object.freeze([
  Object.freeze({
    id: 'google',
    name: 'Google AMP Cache',
    docs: 'https://developers.google.com/amp/cache/',
    cacheDomain: 'cdn.ampproject.org',
    updateCacheApiDomainSuffix: 'cdn.ampproject.org',
    thirdPartyFrameDomainSuffix: 'ampproject.net',
  }),
  Object.freeze({
    id: 'bing',
    name: 'Bing AMP Cache',
    docs: 'https://www.bing.com/webmaster/help/bing-amp-cache-bc1c884c',
    cacheDomain: 'www.bing-amp.com',
    updateCacheApiDomainSuffix: 'www.bing-amp.com',
    thirdPartyFrameDomainSuffix: 'www.bing-amp.net',
  }),
]);

/** Options of {@link validateCaches}. */
export interface ValidateCachesOptions {
  /**
   * Registrable domains (eTLD+1) a cache may live under. A list read from
   * the network may only name caches of operators you already trust, so a
   * refresh can never widen trust. Default: those of the bundled
   * {@link CACHES} (`ampproject.org`, `bing-amp.com`). Pass `null` to accept
   * any registrable domain (for lists you wrote yourself).
   */
  readonly trustedOperators?: readonly string[] | null;
}

function bad(index: number, why: string): AmpCorsError {
  return new AmpCorsError('invalid-cache', `caches[${index}]: ${why}`);
}

function optionalString(entry: Record<string, unknown>, key: string, index: number): string | undefined {
  const value = entry[key];
  if (value === undefined) return undefined;
  if (typeof value !== 'string') throw bad(index, `${key} must be a string`);
  return value;
}

/**
 * Checks a caches list (bundled, user-given or fetched) and returns a frozen,
 * canonical copy. Every `cacheDomain` must be a canonical domain that is a
 * registrable domain or below one — never a public suffix such as `com` or
 * `github.io` — and, by default, under a trusted operator. Ids must be unique
 * and so must cache domains; one cache domain may not sit below another.
 *
 * @throws AmpCorsError `invalid-cache` naming the first bad entry.
 * @example validateCaches([{ id: 'test', name: 'Test', cacheDomain: 'amp.test.example' }], { trustedOperators: null })
 */
export function validateCaches(list: unknown, options: ValidateCachesOptions = {}): readonly AmpCache[] {
  if (!Array.isArray(list)) throw new AmpCorsError('invalid-cache', 'caches must be an array');
  if (list.length === 0) throw new AmpCorsError('invalid-cache', 'caches must not be empty');
  const trusted = options.trustedOperators === undefined ? defaultOperators() : options.trustedOperators;
  const out: AmpCache[] = [];
  const ids = new Set<string>();
  list.forEach((raw: unknown, index) => {
    if (typeof raw !== 'object' || raw === null) throw bad(index, 'not an object');
    const entry = raw as Record<string, unknown>;
    const { id, name, cacheDomain } = entry;
    if (typeof id !== 'string' || !/^[a-z0-9][a-z0-9_-]{0,63}$/i.test(id)) throw bad(index, 'id must be a short identifier');
    if (ids.has(id)) throw bad(index, `duplicate id ${JSON.stringify(id)}`);
    ids.add(id);
    if (typeof name !== 'string') throw bad(index, 'name must be a string');
    if (typeof cacheDomain !== 'string' || cacheDomain.length === 0) throw bad(index, 'cacheDomain must be a non-empty string');
    let domain: string;
    try {
      domain = canonicalDomain(cacheDomain);
    } catch (error) {
      throw bad(index, isAmpCorsError(error) ? error.message : 'invalid cacheDomain');
    }
    if (domain !== cacheDomain) throw bad(index, `cacheDomain ${JSON.stringify(cacheDomain)} is not canonical (expected ${domain})`);
    const registrable = getDomain(domain, { allowPrivateDomains: true });
    if (registrable === null) throw bad(index, `cacheDomain ${JSON.stringify(domain)} is a public suffix`);
    if (trusted !== null && !trusted.includes(registrable)) {
      throw bad(index, `cacheDomain ${JSON.stringify(domain)} is not under a trusted operator (${trusted.join(', ')})`);
    }
    const cache: AmpCache = { id, name, cacheDomain: domain };
    const docs = optionalString(entry, 'docs', index);
    const update = optionalString(entry, 'updateCacheApiDomainSuffix', index);
    const frame = optionalString(entry, 'thirdPartyFrameDomainSuffix', index);
    out.push(
      Object.freeze({
        ...cache,
        ...(docs === undefined ? {} : { docs }),
        ...(update === undefined ? {} : { updateCacheApiDomainSuffix: update }),
        ...(frame === undefined ? {} : { thirdPartyFrameDomainSuffix: frame }),
      }),
    );
  });
  for (const a of out) {
    for (const b of out) {
      if (a !== b && (a.cacheDomain === b.cacheDomain || a.cacheDomain.endsWith(`.${b.cacheDomain}`))) {
        throw new AmpCorsError('invalid-cache', `cacheDomain ${a.cacheDomain} overlaps ${b.cacheDomain}`);
      }
    }
  }
  return Object.freeze(out);
}

function defaultOperators(): readonly string[] {
  return CACHES.map((cache) => getDomain(cache.cacheDomain, { allowPrivateDomains: true }) as string);
}

/** Options of {@link fetchCaches}. */
export interface FetchCachesOptions extends ValidateCachesOptions {
  /** The fetch to use (default: the global `fetch`). */
  readonly fetch?: (input: string, init?: { signal?: AbortSignal; redirect?: 'error' }) => Promise<Response>;
  /** Give up after this many milliseconds (default 5000). */
  readonly timeoutMs?: number;
  /** Registry URL (default {@link CACHES_URL}). */
  readonly url?: string;
  /** The last good list, returned on any failure (default {@link CACHES}). */
  readonly fallback?: readonly AmpCache[];
}

/** What {@link fetchCaches} resolves to: always a usable list. */
export type FetchCachesResult =
  | { readonly ok: true; readonly caches: readonly AmpCache[] }
  | { readonly ok: false; readonly caches: readonly AmpCache[]; readonly error: Error };

/**
 * Refreshes the registry from the live `caches.json`. Never rejects: on a
 * timeout, a network error, a non-200 answer, invalid JSON or any entry that
 * fails {@link validateCaches}, it resolves to the `fallback` (the last good
 * list) with the error, so verification never breaks or widens because of
 * the network.
 *
 * @example const { caches } = await fetchCaches({ timeoutMs: 2000 });
 */
export async function fetchCaches(options: FetchCachesOptions = {}): Promise<FetchCachesResult> {
  const fallback = options.fallback ?? CACHES;
  const timeoutMs = options.timeoutMs ?? 5000;
  const controller = new AbortController();
  let timer: ReturnType<typeof setTimeout> | undefined;
  try {
    const doFetch = options.fetch ?? globalThis.fetch;
    if (typeof doFetch !== 'function') throw new Error('no fetch available in this runtime');
    const timeout = new Promise<never>((_, reject) => {
      timer = setTimeout(() => {
        controller.abort();
        reject(new Error(`caches.json fetch timed out after ${timeoutMs} ms`));
      }, timeoutMs);
    });
    const body = await Promise.race([
      (async () => {
        const response = await doFetch(options.url ?? CACHES_URL, { signal: controller.signal, redirect: 'error' });
        if (response.status !== 200) throw new Error(`caches.json answered HTTP ${response.status}`);
        return (await response.json()) as unknown;
      })(),
      timeout,
    ]);
    const list = typeof body === 'object' && body !== null && 'caches' in body ? (body as { caches: unknown }).caches : undefined;
    const caches = validateCaches(list, options);
    return { ok: true, caches };
  } catch (error) {
    return { ok: false, caches: fallback, error: error instanceof Error ? error : new Error(String(error)) };
  } finally {
    if (timer !== undefined) clearTimeout(timer);
  }
}

/** Finds a cache by its `id` in `caches` (default {@link CACHES}). */
export function findCache(id: string, caches: readonly AmpCache[] = CACHES): AmpCache | undefined {
  return caches.find((cache) => cache.id === id);
}
