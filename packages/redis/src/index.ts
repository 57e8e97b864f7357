/**
 * @ampcors/redis — a publisher registry in Redis, shared by every API server
 * of a fleet: "is this domain a publisher?" and "which publisher has this
 * cache prefix?", with a bounded local cache of positive and negative
 * answers. Plug it into `createAsyncVerifier({ source })` from
 * `@ampcors/core`, and that verifier into any ampcors adapter.
 *
 * @packageDocumentation
 */
import { AmpCorsError, CACHES, canonicalDomain, type PublisherSource, prefixForms } from '@ampcors/core';
import { parsePublisherRules } from '@ampcors/core/algorithms';
import { LocalCache } from './local-cache.js';
import { RespConnection } from './resp-connection.js';

export { LocalCache } from './local-cache.js';
export { CLOSE_TIMEOUT_MS, CONNECT_TIMEOUT_MS, MAX_PENDING, MAX_REPLY_BYTES, REPLY_DEADLINE_MS } from './resp-connection.js';

/** The few commands the registry sends: any node-redis client (v4+) fits. */
export interface RedisCommandClient {
  sendCommand<T = unknown>(args: ReadonlyArray<string>): Promise<T>;
}

/** Options of {@link createRedisRegistry}. */
export interface RedisRegistryOptions {
  /**
   * A connected client (node-redis v4+, or anything with `sendCommand`); or
   * give `url` and the registry opens its own connection (bounded replies,
   * at most `MAX_PENDING` commands waiting, no offline queue, reconnecting,
   * a `close()` that always returns).
   */
  readonly client?: RedisCommandClient;
  /** Redis URL, e.g. `redis://127.0.0.1:6379`, used when no `client` is given. */
  readonly url?: string;
  /** Key prefix (default `ampcors:`): keys are `<prefix>domains` (a set) and `<prefix>prefixes` (a hash). */
  readonly keyPrefix?: string;
  /** Most answers kept in the local cache (default 10 000). */
  readonly cacheSize?: number;
  /** How long a positive answer is trusted without asking Redis (default 30 s). */
  readonly ttlMs?: number;
  /** How long a negative answer is trusted (default 5 s, so a new publisher shows up soon). */
  readonly negativeTtlMs?: number;
  /** Give up on a Redis command after this long (default 250 ms). */
  readonly timeoutMs?: number;
  /**
   * When Redis is unreachable: `deny` (default) fails every uncached question,
   * so the verifier denies with `source-unavailable`; `cache-only` answers
   * from the local cache, expired entries included up to `staleMs`.
   */
  readonly onUnavailable?: 'deny' | 'cache-only';
  /** With `cache-only`, how long past expiry a cached answer may still be served (default 5 min). */
  readonly staleMs?: number;
  /** The clock (injectable for tests). */
  readonly now?: () => number;
}

/** The shared registry: a {@link PublisherSource} plus the commands that change it. */
export interface RedisRegistry extends PublisherSource {
  /**
   * Adds publisher domains (canonicalized) with every prefix form, atomically per batch. Returns how many were new.
   * Refused, nothing written: what the `publishers` option refuses as an exact domain (SPEC §5: a public suffix such as
   * `github.io`, a domain at or under an AMP cache's own domains such as `cdn.ampproject.org`), an `AmpCorsError` listing each.
   */
  add(domains: Iterable<string>): Promise<number>;
  /** Removes publisher domains and their prefixes (only prefixes still pointing at them). Returns how many were present. */
  remove(domains: Iterable<string>): Promise<number>;
  /**
   * Loads many domains in pipelined batches (default 1000 domains a batch); returns how many were new. Each batch is checked
   * as `add` checks it before it is sent: a refused domain rejects the load with its `AmpCorsError`, after the batches
   * before its own were written.
   */
  load(domains: Iterable<string>, options?: { readonly batchSize?: number }): Promise<number>;
  /** Number of publisher domains in Redis. */
  size(): Promise<number>;
  /** Drops the local cache (e.g. after a change made elsewhere must show at once). */
  clearLocalCache(): void;
  /**
   * Closes the connection the registry opened itself (not a client you gave
   * it): QUIT, then the socket is destroyed after at most `CLOSE_TIMEOUT_MS`
   * (500 ms) even when the server never answers. Never rejects.
   */
  close(): Promise<void>;
}

// Adds domains (ARGV[2..n+1]) and prefix→domain pairs (the rest) in one
// atomic step, with variadic SADD/HSET in chunks below Lua's unpack limit.
const ADD_SCRIPT = `
local n = tonumber(ARGV[1])
local added = 0
for i = 2, n + 1, 1000 do
  added = added + redis.call('SADD', KEYS[1], unpack(ARGV, i, math.min(i + 999, n + 1)))
end
for i = n + 2, #ARGV, 2000 do
  redis.call('HSET', KEYS[2], unpack(ARGV, i, math.min(i + 1999, #ARGV)))
end
return added`;

// Removes each prefix field only while it still names the domain being removed.
const REMOVE_SCRIPT = `
local removed = redis.call('SREM', KEYS[1], ARGV[1])
for i = 2, #ARGV do
  if redis.call('HGET', KEYS[2], ARGV[i]) == ARGV[1] then redis.call('HDEL', KEYS[2], ARGV[i]) end
end
return removed`;

function withTimeout<T>(promise: Promise<T>, ms: number): Promise<T> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`Redis did not answer within ${ms} ms`)), ms);
  });
  return Promise.race([promise, timeout]).finally(() => clearTimeout(timer));
}

/**
 * The reply to HGET of a prefix: nil, or a publisher domain that is already
 * canonical (what `add` stores). Anything else — another type, a string too
 * long to be a domain, a name that is not canonical — is refused: a registry
 * written by someone else (or a hostile server) cannot hand the verifier an
 * arbitrary string. Replies from the registry's own connection are bounded
 * (MAX_REPLY_BYTES) before they get here; a client you pass bounds its own.
 */
function domainReply(reply: unknown): string | null {
  if (reply === null) return null;
  if (typeof reply !== 'string' || reply.length > 253) throw new Error('Redis sent an invalid reply (not a publisher domain)');
  let canonical: string;
  try {
    canonical = canonicalDomain(reply);
  } catch {
    throw new Error('Redis sent an invalid reply (not a publisher domain)');
  }
  if (canonical !== reply) throw new Error('Redis sent an invalid reply (not a canonical publisher domain)');
  return reply;
}

/** The reply to SISMEMBER, SCARD or the scripts: a non-negative integer, or an error. */
function countReply(reply: unknown): number {
  const n = typeof reply === 'number' ? reply : typeof reply === 'string' && /^[0-9]{1,16}$/.test(reply) ? Number(reply) : Number.NaN;
  if (!Number.isSafeInteger(n) || n < 0) throw new Error('Redis sent an invalid reply (not a count)');
  return n;
}

function canonicalAll(domains: Iterable<string>): string[] {
  const out: string[] = [];
  for (const domain of domains) out.push(canonicalDomain(domain));
  return out;
}

/**
 * `domains` (canonical) when each is a domain the `publishers` option takes as an exact rule, with the known AMP caches'
 * guards (SPEC §5: not a public suffix, not at or under a cache's own domains): what an in-memory verifier refuses at
 * start-up, a fleet's registry refuses too. Otherwise the `AmpCorsError` of `parsePublisherRules`, naming each.
 */
function publisherDomains(domains: readonly string[]): readonly string[] {
  parsePublisherRules(domains, CACHES);
  return domains;
}

/**
 * Creates a Redis-backed publisher registry. Answers are cached locally
 * (bounded, with a TTL; negative answers for less time), so the hot path of
 * a fleet rarely reaches Redis. When Redis is unreachable, questions fail —
 * and `createAsyncVerifier` denies with `source-unavailable` — unless
 * `onUnavailable: 'cache-only'`; either way nothing is allowed that the
 * registry never said, and the registry recovers as soon as Redis answers.
 *
 * @throws AmpCorsError `invalid-option` without a client or URL.
 * @example
 * const registry = createRedisRegistry({ url: 'redis://127.0.0.1:6379' });
 * await registry.add(['shop.example', 'blog.example']);
 * app.use(ampCors({ verifier: createAsyncVerifier({ source: registry }) }));
 */
export function createRedisRegistry(options: RedisRegistryOptions): RedisRegistry {
  const keyPrefix = options.keyPrefix ?? 'ampcors:';
  const domainsKey = `${keyPrefix}domains`;
  const prefixesKey = `${keyPrefix}prefixes`;
  const ttlMs = options.ttlMs ?? 30_000;
  const negativeTtlMs = options.negativeTtlMs ?? 5_000;
  const timeoutMs = options.timeoutMs ?? 250;
  const staleMs = options.staleMs ?? 300_000;
  const cacheOnly = options.onUnavailable === 'cache-only';
  const cache = new LocalCache<string | null>(options.cacheSize ?? 10_000, options.now);

  let owned: RespConnection | undefined;
  let client: RedisCommandClient;
  if (options.client) client = options.client;
  else if (options.url) {
    // Our own connection rather than a general client: every reply is bounded
    // (MAX_REPLY_BYTES), at most MAX_PENDING commands wait (more fail at once),
    // a command unanswered REPLY_DEADLINE_MS after it was sent drops the
    // connection, and close() returns even when the server never answers QUIT.
    const connection = new RespConnection(options.url);
    owned = connection;
    client = { sendCommand: async <T>(args: ReadonlyArray<string>) => (await connection.send(args)) as T };
  } else {
    throw new AmpCorsError('invalid-option', 'createRedisRegistry needs a client or a url');
  }

  const send = (args: string[]) => withTimeout(client.sendCommand<unknown>(args), timeoutMs);

  /** Asks Redis through the local cache; `key` namespaces the cached answer. */
  const ask = async (key: string, query: () => Promise<string | null>): Promise<string | null> => {
    const fresh = cache.get(key);
    if (fresh !== undefined) return fresh;
    try {
      const answer = await query();
      cache.set(key, answer, answer === null ? negativeTtlMs : ttlMs);
      return answer;
    } catch (error) {
      if (cacheOnly) {
        const stale = cache.getStale(key, staleMs);
        if (stale !== undefined) return stale;
      }
      throw error;
    }
  };

  const forget = (domains: readonly string[]) => {
    for (const domain of domains) {
      cache.delete(`d:${domain}`);
      for (const { prefix } of prefixForms(domain)) cache.delete(`p:${prefix}`);
    }
  };

  const addBatch = async (domains: readonly string[]): Promise<number> => {
    const args: string[] = ['EVAL', ADD_SCRIPT, '2', domainsKey, prefixesKey, String(domains.length), ...domains];
    for (const domain of domains) for (const { prefix } of prefixForms(domain)) args.push(prefix, domain);
    return countReply(await client.sendCommand<unknown>(args));
  };

  return {
    async publisherOfPrefix(prefix) {
      // toolbox's prefixes reach 67 octets (it wraps in 0-…-0 after its 63-octet check).
      if (typeof prefix !== 'string' || prefix.length === 0 || prefix.length > 67) return undefined;
      return (await ask(`p:${prefix}`, async () => domainReply(await send(['HGET', prefixesKey, prefix])))) ?? undefined;
    },
    async hasPublisher(domain) {
      if (typeof domain !== 'string' || domain.length === 0 || domain.length > 253) return false;
      const answer = await ask(`d:${domain}`, async () => (countReply(await send(['SISMEMBER', domainsKey, domain])) === 1 ? domain : null));
      return answer !== null;
    },
    async add(domains) {
      const list = publisherDomains(canonicalAll(domains));
      if (list.length === 0) return 0;
      const added = await addBatch(list);
      forget(list);
      return added;
    },
    async remove(domains) {
      const list = canonicalAll(domains);
      let removed = 0;
      for (const domain of list) {
        const prefixes = prefixForms(domain).map((f) => f.prefix);
        removed += countReply(await client.sendCommand<unknown>(['EVAL', REMOVE_SCRIPT, '2', domainsKey, prefixesKey, domain, ...prefixes]));
      }
      forget(list);
      return removed;
    },
    async load(domains, loadOptions = {}) {
      const batchSize = Math.max(1, loadOptions.batchSize ?? 1000);
      let batch: string[] = [];
      let added = 0;
      const pending: Promise<number>[] = [];
      const flush = () => {
        if (batch.length === 0) return;
        pending.push(addBatch(publisherDomains(batch)));
        batch = [];
      };
      try {
        for (const domain of domains) {
          batch.push(canonicalDomain(domain));
          if (batch.length >= batchSize) flush();
          // Bound what is in flight, so a huge load streams instead of queueing everything.
          if (pending.length >= 16) for (const n of await Promise.all(pending.splice(0))) added += n;
        }
        flush();
      } catch (error) {
        // A refused domain: the batches already sent finish (none left rejecting unseen), then the load rejects.
        await Promise.allSettled(pending);
        cache.clear();
        throw error;
      }
      for (const n of await Promise.all(pending)) added += n;
      cache.clear();
      return added;
    },
    async size() {
      return countReply(await send(['SCARD', domainsKey]));
    },
    clearLocalCache() {
      cache.clear();
    },
    async close() {
      await owned?.close();
    },
  };
}
