import { getDomain } from 'tldts';
import { canonicalDomain } from './domain-name.js';
import { AmpCorsError, isAmpCorsError } from './errors.js';
import { listedProblems } from './problem-list.js';

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

/**
 * Most entries a caches list may have. The AMP registry lists 2; a list of
 * thousands is an attack (issue #14: 8,000 entries stalled a server for 6.6 s),
 * so a longer one is refused whole.
 */
export const MAX_CACHES = 64;

/**
 * Most bytes of `caches.json` that {@link fetchCaches} reads, after any
 * `Content-Encoding` is decoded (the real list is under 1 kB). A longer body,
 * or a `Content-Length` above it, is refused and its download aborted.
 */
export const MAX_CACHES_JSON_BYTES = 65_536;

/** Options of {@link validateCaches}. */
export interface ValidateCachesOptions {
  /**
   * Registrable domains (eTLD+1) a cache may live under. A list read from
   * the network may only name caches of operators you already trust, so a
   * refresh can never widen trust. Default: those of the bundled
   * {@link CACHES} (`ampproject.org`, `bing-amp.com`), and for
   * `updateCacheApiDomainSuffix` and `thirdPartyFrameDomainSuffix` those of
   * any domain of the bundled caches (also `ampproject.net`, `bing-amp.net`).
   * A list given here applies to all three. Pass `null` to accept any
   * registrable domain (for lists you wrote yourself).
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
 * `value` as a canonical domain below a registrable domain (never a public
 * suffix such as `com` or `github.io`), and its registrable domain.
 */
function cacheOperatedDomain(value: string, key: string, index: number): { readonly domain: string; readonly registrable: string } {
  let domain: string;
  try {
    domain = canonicalDomain(value);
  } catch (error) {
    throw bad(index, isAmpCorsError(error) ? error.message : `invalid ${key}`);
  }
  if (domain !== value) throw bad(index, `${key} ${JSON.stringify(value)} is not canonical (expected ${domain})`);
  const registrable = getDomain(domain, { allowPrivateDomains: true });
  if (registrable === null) throw bad(index, `${key} ${JSON.stringify(domain)} is a public suffix`);
  return { domain, registrable };
}

/** A cache name: short, with no control or format characters (names are shown in error messages). */
const CACHE_NAME = /^[^\p{Cc}\p{Cf}\p{Zl}\p{Zp}]{0,100}$/u;

/**
 * Checks a caches list (bundled, user-given or fetched) and returns a frozen,
 * canonical copy. At most {@link MAX_CACHES} entries. Every `cacheDomain`
 * (and `updateCacheApiDomainSuffix` and `thirdPartyFrameDomainSuffix` when
 * given) must be a canonical domain that is a registrable domain or below one
 * — never a public suffix such as `com` or `github.io` — and, by default,
 * under a trusted operator. Ids must be unique and so must cache domains; one
 * cache domain may not sit below another. Names are at most 100 characters,
 * none of them a control character. The work is linear in the size of the
 * list.
 *
 * @throws AmpCorsError `invalid-cache`: the first problem of every bad entry,
 *   and every overlap, all in one error (one problem: that problem alone).
 * @example validateCaches([{ id: 'test', name: 'Test', cacheDomain: 'amp.test.example' }], { trustedOperators: null })
 */
export function validateCaches(list: unknown, options: ValidateCachesOptions = {}): readonly AmpCache[] {
  if (!Array.isArray(list)) throw new AmpCorsError('invalid-cache', 'caches must be an array');
  if (list.length === 0) throw new AmpCorsError('invalid-cache', 'caches must not be empty');
  if (list.length > MAX_CACHES) {
    throw new AmpCorsError('invalid-cache', `caches has ${list.length} entries; at most ${MAX_CACHES} are accepted (the AMP registry lists 2)`);
  }
  const trusted = options.trustedOperators === undefined ? defaultOperators() : options.trustedOperators;
  // Publisher rules are refused at or under these suffixes: a hostile list
  // naming a publisher's own domain here would make its configuration fail.
  const trustedSuffixes = options.trustedOperators === undefined ? defaultSuffixOperators() : options.trustedOperators;
  const checkSuffix = (value: string | undefined, key: string, index: number): void => {
    if (value === undefined) return;
    const { domain, registrable } = cacheOperatedDomain(value, key, index);
    if (trustedSuffixes !== null && !trustedSuffixes.includes(registrable)) {
      throw bad(index, `${key} ${JSON.stringify(domain)} is not under a trusted operator (${trustedSuffixes.join(', ')})`);
    }
  };
  const out: AmpCache[] = [];
  const problems: string[] = [];
  const ids = new Set<string>();
  const domains = new Set<string>();
  const entryOf = (raw: unknown, index: number): AmpCache => {
    if (typeof raw !== 'object' || raw === null) throw bad(index, 'not an object');
    const entry = raw as Record<string, unknown>;
    const { id, name, cacheDomain } = entry;
    if (typeof id !== 'string' || !/^[a-z0-9][a-z0-9_-]{0,63}$/i.test(id)) throw bad(index, 'id must be a short identifier');
    if (ids.has(id)) throw bad(index, `duplicate id ${JSON.stringify(id)}`);
    ids.add(id);
    if (typeof name !== 'string') throw bad(index, 'name must be a string');
    if (!CACHE_NAME.test(name)) throw bad(index, 'name must be at most 100 characters, with no control characters');
    if (typeof cacheDomain !== 'string' || cacheDomain.length === 0) throw bad(index, 'cacheDomain must be a non-empty string');
    const { domain, registrable } = cacheOperatedDomain(cacheDomain, 'cacheDomain', index);
    if (trusted !== null && !trusted.includes(registrable)) {
      throw bad(index, `cacheDomain ${JSON.stringify(domain)} is not under a trusted operator (${trusted.join(', ')})`);
    }
    if (domains.has(domain)) throw new AmpCorsError('invalid-cache', `cacheDomain ${domain} overlaps ${domain}`);
    const docs = optionalString(entry, 'docs', index);
    const update = optionalString(entry, 'updateCacheApiDomainSuffix', index);
    const frame = optionalString(entry, 'thirdPartyFrameDomainSuffix', index);
    checkSuffix(update, 'updateCacheApiDomainSuffix', index);
    checkSuffix(frame, 'thirdPartyFrameDomainSuffix', index);
    // Only a valid entry's domain takes part in the overlap check.
    domains.add(domain);
    return Object.freeze({
      id,
      name,
      cacheDomain: domain,
      ...(docs === undefined ? {} : { docs }),
      ...(update === undefined ? {} : { updateCacheApiDomainSuffix: update }),
      ...(frame === undefined ? {} : { thirdPartyFrameDomainSuffix: frame }),
    });
  };
  // A for loop, not forEach: a hole in a sparse array is an entry too.
  for (let index = 0; index < list.length; index += 1) {
    try {
      out.push(entryOf(list[index], index));
    } catch (error) {
      // An object of the caller's whose getters throw is refused like any bad entry.
      problems.push(isAmpCorsError(error) ? error.message : `caches[${index}]: could not be read`);
    }
  }
  // One cache domain below another: look each ancestor up in the Set (linear
  // in the total length of the names, not quadratic in the number of caches).
  for (const domain of domains) {
    for (let dot = domain.indexOf('.'); dot >= 0; dot = domain.indexOf('.', dot + 1)) {
      const ancestor = domain.slice(dot + 1);
      if (domains.has(ancestor)) {
        problems.push(`cacheDomain ${domain} overlaps ${ancestor}`);
        break;
      }
    }
  }
  const [first] = problems;
  if (first !== undefined) throw new AmpCorsError('invalid-cache', problems.length === 1 ? first : listedProblems('caches', problems));
  return Object.freeze(out);
}

function defaultOperators(): readonly string[] {
  return CACHES.map((cache) => getDomain(cache.cacheDomain, { allowPrivateDomains: true }) as string);
}

function defaultSuffixOperators(): readonly string[] {
  const domains = CACHES.flatMap((cache) => [cache.cacheDomain, cache.thirdPartyFrameDomainSuffix, cache.updateCacheApiDomainSuffix]);
  return [...new Set(domains.map((domain) => getDomain(domain as string, { allowPrivateDomains: true }) as string))];
}

/** Options of {@link fetchCaches}. */
export interface FetchCachesOptions extends ValidateCachesOptions {
  /** The fetch to use (default: the global `fetch`). */
  readonly fetch?: (input: string, init?: { signal?: AbortSignal; redirect?: 'error' }) => Promise<Response>;
  /**
   * Give up after this many milliseconds (default 5000, at most 2147483647):
   * the whole refresh — connection, download, decoding, parsing and
   * validation — resolves within it.
   */
  readonly timeoutMs?: number;
  /** Registry URL (default {@link CACHES_URL}). */
  readonly url?: string;
  /** The last good list, returned on any failure (default {@link CACHES}). */
  readonly fallback?: readonly AmpCache[];
}

/** What {@link fetchCaches} resolves to: always a usable list. */
export type FetchCachesResult =
  { readonly ok: true; readonly caches: readonly AmpCache[] } | { readonly ok: false; readonly caches: readonly AmpCache[]; readonly error: Error };

/**
 * The body of `response` as text, read as a stream and cut off, with the
 * download aborted, past {@link MAX_CACHES_JSON_BYTES} decoded bytes (or when
 * `Content-Length` announces more). A gzip bomb is never inflated beyond the
 * cap; an abort of `controller` (the timeout) cancels the read.
 */
async function readCapped(response: Response, controller: AbortController): Promise<string> {
  const tooLarge = (size: string): Error => {
    controller.abort();
    return new Error(`caches.json is larger than ${MAX_CACHES_JSON_BYTES} bytes (${size}); the AMP registry is under 1 kB`);
  };
  const announced = response.headers?.get('content-length');
  if (announced !== null && announced !== undefined && Number(announced) > MAX_CACHES_JSON_BYTES) throw tooLarge(`Content-Length ${announced}`);
  const body = response.body;
  if (body === null || typeof body?.getReader !== 'function') throw new Error('caches.json answered without a readable body');
  const reader = body.getReader();
  const cancel = (): void => void reader.cancel().catch(() => undefined);
  controller.signal.addEventListener('abort', cancel, { once: true });
  const chunks: Uint8Array[] = [];
  let size = 0;
  try {
    for (;;) {
      const { done, value } = await reader.read();
      if (done) break;
      if (!ArrayBuffer.isView(value)) throw new Error('caches.json body is not bytes');
      size += value.byteLength;
      if (size > MAX_CACHES_JSON_BYTES) throw tooLarge('decoded');
      chunks.push(value);
    }
  } finally {
    controller.signal.removeEventListener('abort', cancel);
    cancel();
  }
  const bytes = new Uint8Array(size);
  let at = 0;
  for (const chunk of chunks) {
    bytes.set(chunk, at);
    at += chunk.byteLength;
  }
  return new TextDecoder('utf-8', { fatal: true }).decode(bytes);
}

/**
 * Refreshes the registry from the live `caches.json`. Never rejects: on a
 * timeout, a network error, a non-200 answer, a body over
 * {@link MAX_CACHES_JSON_BYTES}, invalid UTF-8 or JSON, more than
 * {@link MAX_CACHES} entries or any entry that fails {@link validateCaches},
 * it resolves to the `fallback` (the last good list) with the error, so
 * verification never breaks or widens because of the network. The whole
 * refresh is bounded by `timeoutMs`: a result that would come later is a
 * timeout.
 *
 * @example const { caches } = await fetchCaches({ timeoutMs: 2000 });
 */
export async function fetchCaches(options: FetchCachesOptions = {}): Promise<FetchCachesResult> {
  const fallback = options.fallback ?? CACHES;
  const timeoutMs = options.timeoutMs ?? 5000;
  const controller = new AbortController();
  let timer: ReturnType<typeof setTimeout> | undefined;
  try {
    if (typeof timeoutMs !== 'number' || !(timeoutMs > 0 && timeoutMs <= 2_147_483_647)) {
      throw new AmpCorsError('invalid-option', `timeoutMs must be a number of milliseconds from 1 to 2147483647, not ${String(timeoutMs)}`);
    }
    const doFetch = options.fetch ?? globalThis.fetch;
    if (typeof doFetch !== 'function') throw new Error('no fetch available in this runtime');
    const timedOut = (): Error => new Error(`caches.json fetch timed out after ${timeoutMs} ms`);
    const deadline = Date.now() + timeoutMs;
    const timeout = new Promise<never>((_, reject) => {
      timer = setTimeout(() => {
        reject(timedOut());
        controller.abort();
      }, timeoutMs);
    });
    // 1. Download (capped), 2. decode and parse, 3. validate: all inside the race.
    const refresh = async (): Promise<readonly AmpCache[]> => {
      const response = await doFetch(options.url ?? CACHES_URL, { signal: controller.signal, redirect: 'error' });
      if (typeof response !== 'object' || response === null) throw new Error('caches.json fetch gave no response');
      if (response.status !== 200) {
        void response.body?.cancel().catch(() => undefined);
        throw new Error(`caches.json answered HTTP ${response.status}`);
      }
      const body: unknown = JSON.parse(await readCapped(response, controller));
      const list = typeof body === 'object' && body !== null && 'caches' in body ? (body as { caches: unknown }).caches : undefined;
      const caches = validateCaches(list, options);
      // Parsing and validation are synchronous and bounded; still, a list
      // validated after the deadline is too late.
      if (Date.now() > deadline) throw timedOut();
      return caches;
    };
    const caches = await Promise.race([refresh(), timeout]);
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
