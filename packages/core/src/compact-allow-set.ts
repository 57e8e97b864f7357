import { sha256 } from '@noble/hashes/sha2.js';
import { createRecentMemo } from './allow-set.js';
import { CACHES, type AmpCache, validateCaches } from './caches.js';
import { canonicalDomain } from './domain-name.js';
import { MAX_PREFIX_LENGTH } from './domain-prefix.js';
import { compareDigests, digestOrder } from './digest-order.js';
import { AmpCorsError, isAmpCorsError } from './errors.js';
import { prefixForms } from './prefix-forms.js';
import { MAX_ORIGIN_LENGTH } from './origin-header.js';
import { parsePublisherRules } from './publisher-rules.js';
import { reverseOrigin } from './reverse-origin.js';
import { decodeRiceDeltas, encodeRiceDeltas } from './rice-coding.js';
import { sha256Words } from './sha256-words.js';
import type { AllowedVerdict, DeniedVerdict, DenyReason } from './verifier.js';

/*
 * Compact allow-set, binary format version 1 (all integers big-endian):
 *
 *   offset size
 *   0      8    magic "AMPCAS\r\n" (the CR LF catches text-mode transfers)
 *   8      2    format version (1)
 *   10     1    encoding: 0 raw, 1 Rice-delta
 *   11     1    hash length in bytes: 16, 20, 24, 28 or 32
 *   12     4    number of prefix hashes
 *   16     4    number of domains compiled (informational)
 *   20     1    Rice parameter (0 when raw or fewer than 2 hashes)
 *   21     1    number of caches (1 to 255)
 *   22     2    reserved, 0
 *   24     …    each cache: 1-byte length + id, 1-byte length + cacheDomain (ASCII)
 *   …      4    data length
 *   …      …    data: raw: the sorted hashes back to back; Rice: the first hash,
 *               then the Rice-coded differences of the next ones (SPEC §5)
 *   end-32 32   SHA-256 of every byte before it
 *
 * A hash is the first `hash length` bytes of SHA-256 of the domain prefix
 * (ASCII), sorted as big-endian integers, without duplicates.
 */

/** The format version {@link compileAllowSet} writes and {@link loadAllowSet} reads. */
export const ALLOW_SET_VERSION = 1;

const MAGIC = Uint8Array.of(0x41, 0x4d, 0x50, 0x43, 0x41, 0x53, 0x0d, 0x0a);
const FIXED_HEADER = 24;
const CHECKSUM_LENGTH = 32;
const ENCODINGS = ['raw', 'rice'] as const;
const HASH_LENGTHS: readonly number[] = [16, 20, 24, 28, 32];
/** Verdicts {@link CompactAllowSet.verifyOrigin} remembers per memo generation (two generations: at most twice this many). */
export const COMPACT_MEMO_GENERATION_SIZE = 8192;

/** How the hashes are stored: back to back, or Rice-delta coded (about 2.5 bytes less per hash at a million). */
export type AllowSetEncoding = (typeof ENCODINGS)[number];

/** Options of {@link compileAllowSet} and {@link createAllowSetBuilder}. */
export interface CompileAllowSetOptions {
  /** The caches whose origins the set allows (default: the bundled {@link CACHES}). */
  readonly caches?: readonly AmpCache[];
  /** Storage of the hashes (default `rice`). */
  readonly encoding?: AllowSetEncoding;
  /**
   * Bytes of SHA-256 kept per prefix: 16 (default), 20, 24, 28 or 32. Never
   * fewer than 16: anyone can mint subdomains of a domain they own and
   * search for one whose prefix hash matches an entry. With 64 bits and 10
   * million entries that takes about 2^41 hashes (hours on one GPU); with
   * 128 bits, about 2^104.
   */
  readonly hashBytes?: number;
}

/** Incremental compiler of a compact allow-set, for lists read line by line. */
export interface AllowSetBuilder {
  /**
   * Adds a publisher domain: every prefix a cache may use for it and no
   * other domain can claim ({@link prefixForms}: the guide's, toolbox's,
   * amppackager's, the ASCII and Unicode hashes). The set stores no domains,
   * so a readable form that another domain also has is left out even when
   * that domain is added too. A refused domain adds nothing.
   *
   * @throws AmpCorsError `invalid-domain` (also for a `*.` wildcard rule),
   *   `public-suffix-rule` or `publisher-covers-cache`.
   */
  add(domain: string): void;
  /** Domains added so far. */
  readonly domainCount: number;
  /** Prefix hashes added so far (before removing duplicates). */
  readonly hashCount: number;
  /** Sorts, removes duplicates, encodes and checksums: the file's bytes. */
  build(): Uint8Array;
}

function invalidSet(message: string): AmpCorsError {
  return new AmpCorsError('invalid-allow-set', `Invalid allow-set: ${message}`);
}

const encoder = new TextEncoder();

/** The digest {@link prefixDigest} writes, as words and as bytes (reused: a lookup allocates nothing for it). */
const digestWords = new Uint32Array(8);
const digestBytes = new Uint8Array(32);

/** The allow-set hash of a domain prefix: SHA-256 of its ASCII bytes, in a buffer reused by the next call. */
function prefixDigest(prefix: string): Uint8Array {
  sha256Words(prefix, digestWords, 0);
  for (let w = 0; w < 8; w++) {
    const word = digestWords[w] as number;
    digestBytes[w * 4] = word >>> 24;
    digestBytes[w * 4 + 1] = (word >>> 16) & 0xff;
    digestBytes[w * 4 + 2] = (word >>> 8) & 0xff;
    digestBytes[w * 4 + 3] = word & 0xff;
  }
  return digestBytes;
}

/**
 * Sorts `count` hashes of `wordCount` big-endian 32-bit words (flat in
 * `words`, ordered by {@link digestOrder}) and returns them as bytes
 * without duplicates.
 */
function sortUnique(words: Uint32Array, count: number, wordCount: number): Uint8Array {
  const order = digestOrder(words, count, wordCount, wordCount);
  const out = new Uint8Array(count * wordCount * 4);
  const view = new DataView(out.buffer);
  let kept = 0;
  for (let i = 0; i < count; i++) {
    const index = order[i] as number;
    if (kept > 0 && compareDigests(words, order[i - 1] as number, index, wordCount, wordCount) === 0) continue;
    for (let w = 0; w < wordCount; w++) view.setUint32((kept * wordCount + w) * 4, words[index * wordCount + w] as number);
    kept++;
  }
  return out.slice(0, kept * wordCount * 4);
}

function checkHashBytes(value: unknown): number {
  if (value === undefined) return 16;
  if (typeof value !== 'number' || !HASH_LENGTHS.includes(value)) {
    throw new AmpCorsError('invalid-option', `hashBytes must be one of ${HASH_LENGTHS.join(', ')} (at least 128 bits)`);
  }
  return value;
}

/**
 * Starts an incremental compact allow-set: `add` each publisher domain,
 * then `build` the file. Memory: `hashBytes` per prefix while building.
 *
 * @throws AmpCorsError `invalid-cache` or `invalid-option` for bad options.
 * @example
 * const builder = createAllowSetBuilder();
 * for (const line of lines) builder.add(line);
 * const bytes = builder.build();
 */
export function createAllowSetBuilder(options: CompileAllowSetOptions = {}): AllowSetBuilder {
  const caches = options.caches === undefined ? CACHES : validateCaches(options.caches, { trustedOperators: null });
  // validateCaches accepts at most MAX_CACHES (64) entries: the format's one-byte count always fits.
  const encoding = options.encoding ?? 'rice';
  if (!ENCODINGS.includes(encoding)) throw new AmpCorsError('invalid-option', `encoding must be ${ENCODINGS.join(' or ')}`);
  const hashBytes = checkHashBytes(options.hashBytes);
  const wordCount = hashBytes / 4;
  let words = new Uint32Array(1024 * wordCount);
  let hashCount = 0;
  let domainCount = 0;

  const add = (domain: string): void => {
    if (typeof domain === 'string' && domain.startsWith('*.')) {
      throw new AmpCorsError(
        'invalid-domain',
        `${JSON.stringify(domain.slice(0, 80))}: a compact allow-set holds exact domains; wildcard rules need createVerifier`,
      );
    }
    // The verifier's own validation: canonical domain, no public suffix, not a cache domain.
    const canonical = canonicalDomain(domain);
    parsePublisherRules([canonical], caches);
    const forms = prefixForms(canonical);
    if ((hashCount + forms.length) * wordCount > words.length) {
      const grown = new Uint32Array(Math.max(words.length * 2, (hashCount + forms.length) * wordCount));
      grown.set(words);
      words = grown;
    }
    for (const { prefix } of forms) {
      sha256Words(prefix, digestWords, 0);
      for (let w = 0; w < wordCount; w++) words[hashCount * wordCount + w] = digestWords[w] as number;
      hashCount++;
    }
    domainCount++;
  };

  const build = (): Uint8Array => {
    const sorted = sortUnique(words, hashCount, wordCount);
    const count = sorted.length / hashBytes;
    let data = sorted;
    let riceParameter = 0;
    if (encoding === 'rice' && count > 0) {
      const coded = encodeRiceDeltas(sorted, hashBytes);
      data = new Uint8Array(hashBytes + coded.encodedData.length);
      data.set(coded.firstValue);
      data.set(coded.encodedData, hashBytes);
      riceParameter = count > 1 ? coded.riceParameter : 0;
    }
    const cacheBytes = caches.map((cache) => [encoder.encode(cache.id), encoder.encode(cache.cacheDomain)] as const);
    const cacheLength = cacheBytes.reduce((sum, [id, domain]) => sum + 2 + id.length + domain.length, 0);
    const out = new Uint8Array(FIXED_HEADER + cacheLength + 4 + data.length + CHECKSUM_LENGTH);
    const view = new DataView(out.buffer);
    out.set(MAGIC);
    view.setUint16(8, ALLOW_SET_VERSION);
    out[10] = ENCODINGS.indexOf(encoding);
    out[11] = hashBytes;
    view.setUint32(12, count);
    view.setUint32(16, Math.min(domainCount, 0xffffffff));
    out[20] = riceParameter;
    out[21] = caches.length;
    let at = FIXED_HEADER;
    for (const [id, domain] of cacheBytes) {
      out[at++] = id.length;
      out.set(id, at);
      at += id.length;
      out[at++] = domain.length;
      out.set(domain, at);
      at += domain.length;
    }
    view.setUint32(at, data.length);
    out.set(data, at + 4);
    out.set(sha256(out.subarray(0, out.length - CHECKSUM_LENGTH)), out.length - CHECKSUM_LENGTH);
    return out;
  };

  return {
    add,
    build,
    get domainCount() {
      return domainCount;
    },
    get hashCount() {
      return hashCount;
    },
  };
}

/**
 * Compiles publisher domains into a compact allow-set file (format above):
 * the cache domains it is for and the sorted, truncated SHA-256 of every
 * prefix a cache may use for each domain, optionally Rice-delta coded, with
 * a SHA-256 checksum. About 14 bytes per plain domain with Rice coding, 16
 * raw. The domains themselves are not stored.
 *
 * @throws AmpCorsError naming the first refused domain (see {@link AllowSetBuilder.add}) or a bad option.
 * @example const bytes = compileAllowSet(['example.com', 'www.example.com']);
 */
export function compileAllowSet(domains: Iterable<string>, options: CompileAllowSetOptions = {}): Uint8Array {
  const builder = createAllowSetBuilder(options);
  for (const domain of domains) builder.add(domain);
  return builder.build();
}

/** A verdict of {@link CompactAllowSet.verifyOrigin}; an allowed one says in `detail` what the set proved. */
export type AllowSetVerdict = (AllowedVerdict & { readonly detail: string }) | DeniedVerdict;

/** A loaded compact allow-set. */
export interface CompactAllowSet {
  /** True when the domain prefix (a single label) is one of the compiled prefixes. */
  has(prefix: string): boolean;
  /**
   * Judges a raw `Origin` header against the set, as the verifier does for
   * cache origins (SPEC §6: as sent, https, default port, a registered
   * cache of the set). Never throws. Only cache origins can be allowed: the
   * set holds no publisher origins. An allowed hashed prefix has no
   * `publisherDomain` (a hash cannot be reversed and the set stores no
   * domains); a readable prefix reports the domain it spells (SPEC §4).
   * The verdicts of recent origins are remembered (at most twice
   * {@link COMPACT_MEMO_GENERATION_SIZE}), shared and frozen: a repeated
   * origin costs one map lookup, no SHA-256.
   */
  verifyOrigin(origin: string | null | undefined): AllowSetVerdict;
  /** The caches the set was compiled for. */
  readonly caches: readonly AmpCache[];
  /** Number of distinct prefix hashes. */
  readonly size: number;
  /** Number of domains compiled. */
  readonly domainCount: number;
  /** Bytes of SHA-256 kept per prefix. */
  readonly hashBytes: number;
  /** How the hashes were stored in the file. */
  readonly encoding: AllowSetEncoding;
}

interface Cursor {
  readonly bytes: Uint8Array;
  at: number;
  readonly end: number;
}

function take(cursor: Cursor, length: number, what: string): Uint8Array {
  if (cursor.at + length > cursor.end) throw invalidSet(`truncated in ${what}`);
  const slice = cursor.bytes.subarray(cursor.at, cursor.at + length);
  cursor.at += length;
  return slice;
}

function readCaches(cursor: Cursor, count: number): readonly AmpCache[] {
  const decoder = new TextDecoder('ascii');
  const list: AmpCache[] = [];
  for (let i = 0; i < count; i++) {
    const id = decoder.decode(take(cursor, take(cursor, 1, 'cache id length')[0] as number, 'cache id'));
    const cacheDomain = decoder.decode(take(cursor, take(cursor, 1, 'cache domain length')[0] as number, 'cache domain'));
    const bundled = CACHES.find((cache) => cache.id === id && cache.cacheDomain === cacheDomain);
    list.push(bundled ?? { id, name: id, cacheDomain });
  }
  try {
    return validateCaches(list, { trustedOperators: null });
  } catch (error) {
    throw invalidSet(`bad cache list (${isAmpCorsError(error) ? error.message : String(error)})`);
  }
}

/** Compares `length` bytes of `a` from `aOffset` with those of `b` from `bOffset` (default 0), as unsigned big-endian numbers. */
function compareAt(a: Uint8Array, aOffset: number, b: Uint8Array, length: number, bOffset = 0): number {
  for (let i = 0; i < length; i++) {
    const x = a[aOffset + i] as number;
    const y = b[bOffset + i] as number;
    if (x !== y) return x - y;
  }
  return 0;
}

/**
 * Loads a compact allow-set from its bytes, checking everything before
 * answering anything: magic, version, the SHA-256 checksum, every length,
 * the cache list, the Rice data and the strict order of the hashes. Works on
 * every runtime (plain `Uint8Array`, no `node:`). The checksum detects
 * corruption, not tampering: protect the file like any configuration. Memory
 * is bounded by the file: a Rice-coded set that would decode to more than
 * twice its data is refused (a compiled one decodes to at most about 1.3×).
 *
 * @throws AmpCorsError `invalid-allow-set` for a corrupt, truncated,
 *   wrong-version or wrong-checksum file — never a partial set.
 * @example loadAllowSet(compileAllowSet(['example.com'])).verifyOrigin('https://example-com.cdn.ampproject.org').allowed // true
 */
export function loadAllowSet(input: Uint8Array): CompactAllowSet {
  if (!(input instanceof Uint8Array)) throw invalidSet('expected a Uint8Array');
  // A plain view: on a Node Buffer (often a slice of a shared pool) `slice` would not copy.
  const bytes = new Uint8Array(input.buffer, input.byteOffset, input.byteLength);
  if (bytes.length < FIXED_HEADER + 4 + CHECKSUM_LENGTH) throw invalidSet(`${bytes.length} bytes is too short (truncated?)`);
  if (compareAt(bytes, 0, MAGIC, MAGIC.length) !== 0) throw invalidSet('not an ampcors allow-set (bad magic bytes)');
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const version = view.getUint16(8);
  if (version !== ALLOW_SET_VERSION) throw invalidSet(`format version ${version} is not supported (this ampcors reads version ${ALLOW_SET_VERSION})`);
  const contentEnd = bytes.length - CHECKSUM_LENGTH;
  if (compareAt(bytes, contentEnd, sha256(bytes.subarray(0, contentEnd)), CHECKSUM_LENGTH) !== 0) {
    throw invalidSet('checksum mismatch (the file is corrupt or truncated)');
  }
  const encoding = ENCODINGS[bytes[10] as number];
  if (encoding === undefined) throw invalidSet(`unknown encoding ${bytes[10]}`);
  const hashBytes = bytes[11] as number;
  if (!HASH_LENGTHS.includes(hashBytes)) throw invalidSet(`hash length ${hashBytes} is not one of ${HASH_LENGTHS.join(', ')}`);
  const count = view.getUint32(12);
  const domainCount = view.getUint32(16);
  const riceParameter = bytes[20] as number;
  const cacheCount = bytes[21] as number;
  if (cacheCount === 0) throw invalidSet('no caches');
  if (view.getUint16(22) !== 0) throw invalidSet('reserved bytes are not zero');
  const cursor: Cursor = { bytes, at: FIXED_HEADER, end: contentEnd };
  const caches = readCaches(cursor, cacheCount);
  const dataLength = view.getUint32(take(cursor, 4, 'data length').byteOffset - bytes.byteOffset);
  const data = take(cursor, dataLength, 'hash data');
  if (cursor.at !== contentEnd) throw invalidSet(`${contentEnd - cursor.at} unexpected bytes after the hash data`);

  let hashes: Uint8Array;
  if (encoding === 'raw' || count === 0) {
    if (dataLength !== count * hashBytes) throw invalidSet(`${dataLength} bytes of data for ${count} hashes of ${hashBytes} bytes`);
    if (riceParameter !== 0) throw invalidSet('a Rice parameter on uncoded data');
    hashes = data.slice();
  } else {
    if (dataLength < hashBytes) throw invalidSet('Rice data shorter than its first hash');
    if (count > 1 !== (riceParameter !== 0)) throw invalidSet(`Rice parameter ${riceParameter} for ${count} hashes`);
    // Hashes are SHA-256 output: Rice coding saves a few bytes per hash (log2 of the count in bits), so a compiled set
    // decodes to at most about 1.3 times its data. A set that would decode to more than twice its data is hand-made,
    // and refused before anything is allocated: a small file never makes a large allocation.
    if (count * hashBytes > 2 * dataLength + hashBytes) {
      throw invalidSet(`${count} hashes of ${hashBytes} bytes cannot come from ${dataLength} bytes of Rice data (not a compiled set)`);
    }
    try {
      hashes = decodeRiceDeltas(
        { firstValue: data.slice(0, hashBytes), riceParameter: count > 1 ? riceParameter : 1, entriesCount: count - 1, encodedData: data.subarray(hashBytes) },
        hashBytes,
      );
    } catch (error) {
      throw invalidSet(isAmpCorsError(error) ? error.message : String(error));
    }
  }
  for (let i = 1; i < count; i++) {
    if (compareAt(hashes, i * hashBytes, hashes, hashBytes, (i - 1) * hashBytes) <= 0) {
      throw invalidSet(`hash ${i} is not greater than hash ${i - 1}`);
    }
  }
  return makeAllowSet(hashes, count, hashBytes, caches, domainCount, encoding);
}

function makeAllowSet(
  hashes: Uint8Array,
  count: number,
  hashBytes: number,
  caches: readonly AmpCache[],
  domainCount: number,
  encoding: AllowSetEncoding,
): CompactAllowSet {
  const has = (prefix: string): boolean => {
    if (typeof prefix !== 'string' || prefix.length === 0 || prefix.length > MAX_PREFIX_LENGTH) return false;
    const digest = prefixDigest(prefix);
    let low = 0;
    let high = count - 1;
    while (low <= high) {
      const mid = (low + high) >>> 1;
      const order = compareAt(hashes, mid * hashBytes, digest, hashBytes);
      if (order === 0) return true;
      if (order < 0) low = mid + 1;
      else high = mid - 1;
    }
    return false;
  };

  const judge = (origin: string | null | undefined): AllowSetVerdict => {
    const raw = typeof origin === 'string' ? origin : null;
    const deny = (reason: DenyReason, detail: string, extra?: Partial<DeniedVerdict>): DeniedVerdict => ({
      allowed: false,
      origin: raw,
      reason,
      detail,
      ...extra,
    });
    // The verifier's reverse (SPEC §4, §6): syntax, cache, https, default port, one label, then the prefix.
    // A readable prefix is compiled only with one claimant: the search stops at a second one.
    let found = 0;
    const reversed = reverseOrigin(origin, { caches, stopAtClaimant: () => ++found > 1 });
    if (!reversed.ok) {
      const where = { ...(reversed.cache ? { cache: reversed.cache } : {}), ...(reversed.prefix === undefined ? {} : { prefix: reversed.prefix }) };
      if (reversed.reason === 'unknown-cache') {
        return deny(
          'unknown-origin',
          `not an origin on a cache of this allow-set (${caches.map((c) => c.cacheDomain).join(', ')}); it holds only cache origins`,
        );
      }
      if (reversed.reason === 'cache-root')
        return deny('legacy-cache-origin', `the bare ${reversed.cache?.name ?? 'cache'} origin does not identify a publisher`, where);
      return deny(reversed.reason, reversed.detail, where);
    }
    const { cache, prefix } = reversed;
    const allow = (reason: 'cache-origin' | 'cache-origin-hashed', detail: string, extra?: Partial<AllowedVerdict>): AllowSetVerdict => ({
      allowed: true,
      origin: raw,
      via: 'cache',
      reason,
      cache,
      prefix,
      detail,
      ...extra,
    });
    // SPEC §4 step 2: a hash; only the set can vouch for it.
    if (reversed.hashed) {
      if (has(prefix))
        return allow('cache-origin-hashed', 'hashed prefix in the compiled allow-set; the publisher domain is not recoverable (the set stores only hashes)');
      return deny('hashed-unknown', 'hashed prefix of no compiled publisher domain', { cache, prefix });
    }
    // A compiled readable form has exactly one claimant, its domain (see AllowSetBuilder.add).
    const only = reversed.claimants.length === 1 && reversed.claimantsComplete ? reversed.claimants[0] : undefined;
    const shared = reversed.claimants.length > 1;
    if (only && has(prefix)) {
      return allow('cache-origin', `prefix of ${only.publisherDomain}, in the compiled allow-set`, {
        publisherDomain: only.publisherDomain,
        prefixForm: only.form,
      });
    }
    const detail = only
      ? `${only.publisherDomain} is not in the compiled allow-set`
      : shared
        ? `${prefix} is the prefix of ${reversed.claimants.map((c) => c.publisherDomain).join(' and ')}: a shared prefix is never compiled`
        : `${prefix} reads as too many possible domains: such a prefix is never compiled`;
    return deny('unknown-publisher', detail, { cache, prefix, publisherDomain: reversed.publisherDomain });
  };

  // Verdicts of recent origins, shared and frozen (a handler cannot alter the next request's): a
  // repeated origin costs one lookup, no SHA-256. Bounded whatever the requests; longer headers are not kept.
  const memo = createRecentMemo<AllowSetVerdict>(COMPACT_MEMO_GENERATION_SIZE);
  const verifyOrigin = (origin: string | null | undefined): AllowSetVerdict => {
    const remembered = typeof origin === 'string' && origin.length <= MAX_ORIGIN_LENGTH;
    const known = remembered ? memo.get(origin) : undefined;
    if (known !== undefined) return known;
    try {
      const verdict = Object.freeze(judge(origin));
      return remembered ? memo.set(origin, verdict) : verdict;
    } catch (error) {
      // Defence in depth: judge() is written not to throw; if it ever does, deny.
      return {
        allowed: false,
        origin: typeof origin === 'string' ? origin : null,
        reason: 'malformed',
        detail: `internal error: ${error instanceof Error ? error.message : 'unknown'}`,
      };
    }
  };

  return { has, verifyOrigin, caches, size: count, domainCount, hashBytes, encoding };
}
