/**
 * The ampcors fuzzer (issue #6): random and mutated inputs for each public
 * entry point of @ampcors/core, bounded in count and time. Used by
 * `pnpm fuzz` (fuzz.ts, ≥ 1M inputs per entry point, plus the adapters'
 * in-process paths of fuzz-adapters.ts) and by fuzz.test.ts (a short run in
 * the test suite).
 *
 * A finding is:
 * - a throw that is not an `AmpCorsError`, or any throw from a function
 *   documented never to throw (`verify`, `parseOrigin`, `reverseOrigin`,
 *   `CompactAllowSet.verifyOrigin`), or a verdict that hides an internal error;
 * - an allowed origin that is not derived from the allowed set. "Derived" is
 *   computed here independently of @ampcors/core (node:url IDNA, node:crypto
 *   SHA-256, a local base32): a publisher origin must be `https://` + an
 *   allowed host, a cache origin `https://` + a prefix of an allowed domain +
 *   `.` + a registered cache domain, where the prefixes of a domain are its
 *   readable label (`-` → `--`, `.` → `-`, the `0-…-0` wrap, punycode) and
 *   the base32 SHA-256 of its ASCII and Unicode forms;
 * - a broken invariant of a pure function (parseOrigin accepts only what it
 *   would print, canonicalDomain is idempotent, a readable domainPrefix
 *   reverses to its domain, ...), or a compact allow-set that disagrees with
 *   the verifier on a cache origin.
 */
import { createHash } from 'node:crypto';
import { domainToASCII, domainToUnicode } from 'node:url';
import {
  CACHES,
  cacheUrl,
  canonicalDomain,
  compileAllowSet,
  createVerifier,
  domainPrefix,
  explainOrigin,
  isAmpCorsError,
  loadAllowSet,
  parseOrigin,
  prefixForms,
  reverseOrigin,
  unicodeDomain,
  type AmpCache,
  type CompactAllowSet,
  type Verdict,
  type Verifier,
  type VerifyContext,
} from '@ampcors/core';
import { readablePrefixForms } from '@ampcors/core/algorithms';
import { canonicalHost, canonicalizeUrl, hashPrefix, urlExpressions } from '@ampcors/core/safe-browsing';
import { CORPUS, CORPUS_CONFIG, LONG_DOMAIN_HASH } from './corpus.js';

/** A small, fast, seedable PRNG (xorshift32). */
export class Random {
  private state: number;
  constructor(seed: number) {
    this.state = seed >>> 0 || 0x9e3779b9;
  }
  /** A uniform integer in [0, n). */
  int(n: number): number {
    let x = this.state;
    x ^= x << 13;
    x ^= x >>> 17;
    x ^= x << 5;
    this.state = x >>> 0;
    return this.state % n;
  }
  /** One element of `list`. */
  pick<T>(list: readonly T[]): T {
    return list[this.int(list.length)] as T;
  }
}

// ---------------------------------------------------------------------------
// The independent oracle: what "derived from the allowed set" means.

const BASE32 = 'abcdefghijklmnopqrstuvwxyz234567';

/** RFC 4648 base32, lowercase, without padding. */
function base32(bytes: Uint8Array): string {
  let out = '';
  let value = 0;
  let bits = 0;
  for (const byte of bytes) {
    value = ((value << 8) | byte) & 0xffff;
    bits += 8;
    while (bits >= 5) {
      out += BASE32[(value >>> (bits - 5)) & 31];
      bits -= 5;
    }
  }
  if (bits > 0) out += BASE32[(value << (5 - bits)) & 31];
  return out;
}

/** The hashed prefix of a name: base32 of its UTF-8 SHA-256 (node:crypto). */
export function hashedLabel(name: string): string {
  return base32(createHash('sha256').update(name, 'utf8').digest());
}

/** The readable prefix of a domain (ASCII form), the guide's way: `-` doubled, `.` → `-`, the `0-…-0` wrap on code points 3–4, then punycode. */
export function readableLabel(asciiDomain: string): string {
  const unicode = domainToUnicode(asciiDomain);
  let label = unicode.replaceAll('-', '--').replaceAll('.', '-');
  const points = Array.from(label);
  if (points[2] === '-' && points[3] === '-') label = `0-${label}-0`;
  return unicode === asciiDomain ? label : domainToASCII(label);
}

/** The readable prefix the way toolbox-cache-url writes it: punycode first, then the wrap on octets 3–4 (never for `xn--`). */
export function toolboxLabel(asciiDomain: string): string {
  const unicode = domainToUnicode(asciiDomain);
  const joined = unicode.replaceAll('-', '--').replaceAll('.', '-');
  const label = unicode === asciiDomain ? joined : domainToASCII(joined);
  return label.slice(2, 4) === '--' && !label.startsWith('xn') ? `0-${label}-0` : label;
}

/**
 * The readable prefixes of a domain. When WHATWG IDNA (node:url) would map
 * the domain (it is not its own `domainToASCII`), the independent labels do
 * not apply and core's `prefixForms` is used instead.
 */
export function readablePrefixes(asciiDomain: string): string[] {
  const labels = independentLabels(asciiDomain);
  if (labels === undefined) return prefixForms(asciiDomain).flatMap((f) => (f.prefix.includes('-') ? [f.prefix] : []));
  return labels.filter((label) => label.length <= 67);
}

/**
 * {@link readableLabel} and {@link toolboxLabel}, or undefined when WHATWG
 * IDNA cannot judge the domain independently: it maps the domain (it is not
 * its own `domainToASCII`) or refuses the joined label (its Bidi rule
 * refuses a right-to-left label mixed with `-cdn-…` letters, which the
 * guide's plain punycode step encodes).
 */
function independentLabels(asciiDomain: string): [string, string] | undefined {
  if (domainToASCII(asciiDomain) !== asciiDomain) return undefined;
  const labels: [string, string] = [readableLabel(asciiDomain), toolboxLabel(asciiDomain)];
  return labels[0] === '' || labels[1] === '' ? undefined : labels;
}

/** Every prefix derived from an allowed domain: the readable ones (up to the 67 octets any cache uses) and both hashes. */
export function derivedPrefixes(asciiDomain: string): string[] {
  return [...readablePrefixes(asciiDomain), hashedLabel(asciiDomain), hashedLabel(domainToUnicode(asciiDomain))];
}

const CACHE_DOMAINS = CACHES.map((cache) => cache.cacheDomain);

/** What the fuzzer checks allowed verdicts against: a configuration of exact domains and wildcard bases. */
export interface AllowedSetOracle {
  /** Exact allowed publisher domains, ASCII. */
  readonly exact: ReadonlySet<string>;
  /** Wildcard bases (`*.example.org` → `example.org`), ASCII. */
  readonly wildcardBases: readonly string[];
  /** `https://<prefix>.<cache>` for every derived prefix of every exact domain. */
  readonly cacheOrigins: ReadonlySet<string>;
  /** Why `origin` (the raw header) may be allowed, or a description of why it may not. */
  explain(origin: string, verdict: Verdict): string | undefined;
  /** True when `origin` is an allowed publisher origin (`https://` + allowed host). */
  isPublisherOrigin(origin: string): boolean;
}

/** `https://` + a lowercase host name; `_` is allowed in names as browsers allow it (a host under a wildcard base is the publisher's). */
const ORIGIN_SHAPE = /^https:\/\/([a-z0-9_.-]+)$/;

/** Builds the oracle of a list of publisher rules (`example.com`, `*.example.org`, IDNs). */
export function allowedSetOracle(publishers: readonly string[]): AllowedSetOracle {
  const exact = new Set<string>();
  const wildcardBases: string[] = [];
  for (const rule of publishers) {
    if (rule.startsWith('*.')) wildcardBases.push(domainToASCII(rule.slice(2)));
    else exact.add(domainToASCII(rule));
  }
  const cacheOrigins = new Set<string>();
  for (const domain of exact) for (const prefix of derivedPrefixes(domain)) for (const cache of CACHE_DOMAINS) cacheOrigins.add(`https://${prefix}.${cache}`);
  const underWildcard = (host: string) => wildcardBases.some((base) => host === base || host.endsWith(`.${base}`));
  const isPublisherHost = (host: string) => exact.has(host) || underWildcard(host);
  const isPublisherOrigin = (origin: string) => {
    const host = ORIGIN_SHAPE.exec(origin)?.[1];
    return host !== undefined && isPublisherHost(host);
  };
  const explainCache = (origin: string, verdict: Verdict): string | undefined => {
    if (cacheOrigins.has(origin)) return undefined;
    // Under a wildcard: the verdict names the domain; it must be under a base, valid, and its readable prefix must be the origin's.
    const domain = verdict.allowed ? verdict.publisherDomain : undefined;
    if (domain === undefined || !underWildcard(domain))
      return `cache origin allowed that no allowed domain derives (${verdict.allowed ? verdict.reason : 'denied'})`;
    const host = ORIGIN_SHAPE.exec(origin)?.[1];
    const cache = CACHE_DOMAINS.find((c) => host?.endsWith(`.${c}`));
    if (host === undefined || cache === undefined) return 'cache origin allowed that is not https://<prefix>.<cache>';
    const prefix = host.slice(0, -(cache.length + 1));
    return readablePrefixes(domain).includes(prefix) ? undefined : `cache origin allowed whose prefix ${prefix} is not derived from ${domain}`;
  };
  return {
    exact,
    wildcardBases,
    cacheOrigins,
    isPublisherOrigin,
    explain(origin, verdict) {
      if (!verdict.allowed) return 'denied';
      if (verdict.via === 'publisher') return isPublisherOrigin(origin) ? undefined : 'publisher origin allowed that is not https:// + an allowed host';
      if (verdict.via === 'cache') return explainCache(origin, verdict);
      return 'same-origin verdict for a request with an Origin';
    },
  };
}

/** The oracle of {@link CORPUS_CONFIG}. */
export const CORPUS_ORACLE = allowedSetOracle(CORPUS_CONFIG.publishers);
// The oracle must agree with a hash computed independently when the corpus was written.
if (!CORPUS_ORACLE.cacheOrigins.has(`https://${LONG_DOMAIN_HASH}.cdn.ampproject.org`)) throw new Error('fuzz oracle: base32/SHA-256 disagrees with the corpus');

/** Checks an allowed verdict of a verifier configured as `oracle` says; returns a finding or undefined. */
export function checkVerdict(
  oracle: AllowedSetOracle,
  origin: string | null | undefined,
  context: VerifyContext | undefined,
  verdict: Verdict,
): string | undefined {
  if (!verdict.allowed) {
    return verdict.detail.startsWith('internal error') ? `verify hid a throw: ${verdict.detail}` : undefined;
  }
  if (verdict.via === 'same-origin') {
    if (context?.ampSameOrigin !== 'true' || (origin !== null && origin !== undefined && origin !== ''))
      return 'same-origin allowed without AMP-Same-Origin: true and an empty Origin';
  } else {
    if (typeof origin !== 'string' || verdict.origin !== origin) return 'allowed verdict does not echo the Origin as sent';
    const why = oracle.explain(origin, verdict);
    if (why !== undefined) return why;
  }
  const source = context?.sourceOrigin;
  if (verdict.sourceOrigin !== undefined && (verdict.sourceOrigin !== source || !oracle.isPublisherOrigin(verdict.sourceOrigin))) {
    return '__amp_source_origin trusted that is not an allowed publisher origin';
  }
  if (source !== undefined && source !== null && verdict.sourceOrigin === undefined) return 'allowed while ignoring __amp_source_origin';
  return undefined;
}

// ---------------------------------------------------------------------------
// Inputs.

const ALLOWED_SEEDS = [...CORPUS_ORACLE.cacheOrigins].filter((_origin, i) => i % 3 === 0);
const SEEDS: readonly string[] = [
  ...CORPUS.flatMap((e) => (e.origin === null || e.origin.length > 400 ? [] : [e.origin])),
  ...ALLOWED_SEEDS,
  'example.com',
  'www.example.com',
  'xn--57hw060o.com',
  'en-us.example.com',
  'foo-example.com',
  '⚡😊.com',
  'bücher.de',
  'a.b.example.org',
  'xn--bcher-kva.de',
  'https://example.com/amp_document.html',
  'http://example.com/logo.png',
  'https://example.com/g?value=Hello%20World',
  'http://a.b.com/1/2.html?param=1',
  'http://1.2.3.4/1/',
  'http://[2001:0db8:0000::1]/',
  'http://[::ffff:1.2.3.4]/',
  'http://0x7f.1/%2e%2e/./a//b',
  'http://www.google.com/%25%32%35',
  'http://3279880203/blah',
  'http://www.GOOgle.com/',
  'http://a.b.c.d.e.f.com/1.html',
];
const FRAGMENTS = [
  '-',
  '--',
  '.',
  '..',
  '0-',
  '-0',
  'xn--',
  'https://',
  'http://',
  ':',
  ':443',
  '@',
  '/',
  '\\',
  '?',
  '#',
  '%',
  '%25',
  '%2e',
  '%00',
  '[',
  ']',
  '::',
  ',',
  ' ',
  '\t',
  '\r',
  '\n',
  '\u0000',
  '\u007f',
  '\u00ad',
  '\u200b',
  '\u200d',
  '\ufeff',
  '\uff0e',
  '\u3002',
  'а',
  'ｅ',
  'ß',
  'İ',
  'ש',
  '😊',
  '\ud800',
  '\udfff',
  '.cdn.ampproject.org',
  '.www.bing-amp.com',
  'example',
  'com',
  'org',
  'example-org',
  '0x',
  '0',
  '255',
  '4294967296',
  'ffff',
  'bcqzqqc5ch7sxozdddl6bmxwuh32gti635uny2hxdhaanyceosaa',
];

/** A random string: bytes, Unicode, printable ASCII, or an origin-like mosaic of fragments. */
export function randomInput(rng: Random): string {
  const kind = rng.int(4);
  const length = rng.int(kind === 3 ? 8 : 40);
  let out = '';
  for (let i = 0; i < length; i++) {
    if (kind === 0) out += String.fromCharCode(rng.int(256));
    else if (kind === 1) out += String.fromCharCode(rng.int(0x10000));
    else if (kind === 2) out += String.fromCharCode(32 + rng.int(95));
    else out += rng.pick(FRAGMENTS);
  }
  return out;
}

const LABELS = [
  'a',
  'b',
  'www',
  'en-us',
  'a-b',
  'a--b',
  'ab--c',
  '0',
  '0-a',
  'a-0',
  'evil',
  'example',
  'xn--bcher-kva',
  'bücher',
  'ü',
  '😊',
  'ש',
  'ｅ',
  'amp',
  'cdn',
  'x'.repeat(40),
];
const SUFFIXES = [
  'example.org',
  'example.org',
  'example.com',
  'www.example.com',
  'example.net',
  'en-us.example.net',
  'com',
  'org',
  'evil.com',
  'example.org.evil.com',
  'bücher.de',
  'xn--bcher-kva.de',
];
const CACHE_SUFFIXES = [...CACHE_DOMAINS, ...CACHE_DOMAINS, 'ampproject.org', 'cdn.ampproject.org.evil.com', 'bing-amp.com', 'cdn-ampproject.org'];

/**
 * An origin generated for a random domain (often under `example.org`, the
 * wildcard of the corpus configuration): its publisher origin, or a cache
 * origin whose prefix is one of the domain's derived prefixes (computed by
 * the oracle, not by @ampcors/core), on a real or a look-alike cache.
 */
export function generatedOrigin(rng: Random): string {
  const labels: string[] = [];
  for (let n = rng.int(3); n > 0; n--) labels.push(rng.pick(LABELS));
  labels.push(rng.pick(SUFFIXES));
  const name = labels.join('.');
  const ascii = domainToASCII(name) || name;
  if (rng.int(4) === 0) return `https://${ascii}`;
  const prefix = rng.pick([readableLabel, readableLabel, toolboxLabel, hashedLabel])(ascii) || ascii;
  return `https://${prefix}.${rng.pick(CACHE_SUFFIXES)}`;
}

/**
 * A seed with mutations: flip, insert, delete, duplicate, case change,
 * splice with another seed, non-ASCII insert. Two in three seeds come from
 * the corpus and the allowed cache origins (1–4 mutations), one in three is
 * a {@link generatedOrigin} (half as generated, half with 1–3 mutations).
 */
export function mutatedInput(rng: Random): string {
  const generated = rng.int(3) === 0;
  let s = generated ? generatedOrigin(rng) : rng.pick(SEEDS);
  const rounds = generated ? (rng.int(2) === 0 ? 0 : 1 + rng.int(3)) : 1 + rng.int(4);
  for (let r = 0; r < rounds; r++) {
    const at = rng.int(s.length + 1);
    switch (rng.int(7)) {
      case 0:
        s = s.slice(0, at) + String.fromCharCode(rng.int(128)) + s.slice(at + 1);
        break;
      case 1:
        s = s.slice(0, at) + rng.pick(FRAGMENTS) + s.slice(at);
        break;
      case 2:
        s = s.slice(0, at) + s.slice(at + 1 + rng.int(4));
        break;
      case 3:
        s = s.slice(0, at) + s.slice(at, at + 1 + rng.int(8)) + s.slice(at);
        break;
      case 4:
        s = rng.int(2) === 0 ? s.toUpperCase() : s.slice(0, at) + (s[at] ?? '').toUpperCase() + s.slice(at + 1);
        break;
      case 5: {
        const other = rng.pick(SEEDS);
        s = s.slice(0, at) + other.slice(rng.int(other.length + 1));
        break;
      }
      default:
        s = s.slice(0, at) + String.fromCharCode(0x80 + rng.int(0xff80)) + s.slice(at);
    }
  }
  return s;
}

// ---------------------------------------------------------------------------
// Targets.

/** One entry point under fuzz, with its own input generators. */
export interface FuzzTarget<T = string> {
  readonly name: string;
  /** A random input. */
  random(rng: Random): T;
  /** A mutation of a valid or near-valid input. */
  mutated(rng: Random): T;
  /** Runs one input; returns a finding (a description) or undefined. */
  run(input: T, rng: Random): string | undefined;
  /** The input as printed in a finding (default JSON). */
  show?(input: T): string;
}

/** A {@link FuzzTarget} whose runs are asynchronous (the adapters). */
export interface AsyncFuzzTarget<T = string> extends Omit<FuzzTarget<T>, 'run'> {
  run(input: T, rng: Random): Promise<string | undefined>;
}

/** A target over strings with the default generators. */
function stringTarget(name: string, run: (input: string, rng: Random) => string | undefined): FuzzTarget<string> {
  return { name, random: randomInput, mutated: mutatedInput, run };
}

let outcomes: Map<string, number> | undefined;

/** Counts one outcome of the input being run (allowed, denied, refused...), for the report. */
export function outcome(key: string): void {
  if (outcomes !== undefined) outcomes.set(key, (outcomes.get(key) ?? 0) + 1);
}

function describeThrow(error: unknown): string {
  return `threw ${error instanceof Error ? `${error.name}: ${error.message}` : String(error)}`;
}

/** Runs `call`; a throw other than an AmpCorsError is a finding, a result goes to `check`. */
function mayThrowAmpCorsError<R>(call: () => R, check?: (result: R) => string | undefined): string | undefined {
  let result: R;
  try {
    result = call();
  } catch (error) {
    if (!isAmpCorsError(error)) return describeThrow(error);
    outcome('refused');
    return undefined;
  }
  outcome('returned');
  return check?.(result);
}

/** Runs `call`; any throw is a finding, a result goes to `check`. */
function neverThrows<R>(call: () => R, check?: (result: R) => string | undefined): string | undefined {
  let result: R;
  try {
    result = call();
  } catch (error) {
    return describeThrow(error);
  }
  return check?.(result);
}

const SINGLE_LABEL = /^[a-z0-9](?:[a-z0-9-]{0,65}[a-z0-9])?$/;

function verifyTarget(verifier: Verifier): FuzzTarget<string> {
  return stringTarget('verify', (input, rng) => {
    const context =
      rng.int(4) === 0
        ? { ampSameOrigin: rng.pick(['true', input, 'TRUE', null]), sourceOrigin: rng.pick([input, 'https://example.com', 'https://a.example.org', null]) }
        : undefined;
    const origin = rng.int(16) === 0 ? rng.pick([null, undefined, '']) : input;
    return neverThrows(
      () => verifier.verify(origin, context),
      (verdict) => {
        outcome(verdict.allowed ? `allowed ${verdict.reason}` : 'denied');
        return checkVerdict(CORPUS_ORACLE, origin, context, verdict);
      },
    );
  });
}

function reverseOriginTarget(): FuzzTarget<string> {
  return stringTarget('reverseOrigin', (input) =>
    neverThrows(
      () => reverseOrigin(input),
      (result) => {
        outcome(result.ok ? (result.hashed ? 'hashed' : 'reversed') : 'not reversed');
        if (!result.ok) return undefined;
        if (input !== `https://${result.prefix}.${result.cache.cacheDomain}`) return 'reversed an origin that is not https://<prefix>.<cache>';
        if (result.hashed) return result.prefix.includes('-') ? 'a prefix with - called hashed' : undefined;
        // Forward check: every domain found (the claimants) must produce the prefix under one of the readable algorithms, before
        // the allow-set drops forms another domain can claim (prefixForms); the first claimant is the publisher domain.
        if (result.claimants[0]?.publisherDomain !== result.publisherDomain) return 'the publisher domain is not the first claimant';
        for (const { publisherDomain } of result.claimants) {
          const forms = readablePrefixForms(publisherDomain).map((f) => f.prefix);
          if (!forms.includes(result.prefix)) return `reversed to ${publisherDomain}, whose readable prefixes are ${forms.join(', ')}`;
        }
        return undefined;
      },
    ),
  );
}

function parseOriginTarget(): FuzzTarget<string> {
  return stringTarget('parseOrigin', (input) =>
    neverThrows(
      () => parseOrigin(input),
      (result) => {
        outcome(result.ok ? 'accepted' : 'refused');
        if (!result.ok) return undefined;
        // Accepted only as sent: the parts print back to the input, byte for byte.
        const printed = `${result.scheme}://${result.host}${result.port === null ? '' : `:${result.port}`}`;
        return printed === input ? undefined : `accepted ${JSON.stringify(input)} but it prints as ${JSON.stringify(printed)}`;
      },
    ),
  );
}

function canonicalDomainTarget(): FuzzTarget<string> {
  return stringTarget('canonicalDomain', (input) =>
    mayThrowAmpCorsError(
      () => canonicalDomain(input),
      (ascii) => {
        if (ascii.length === 0 || ascii.length > 253 || /[^a-z0-9.-]/.test(ascii)) return `returned ${JSON.stringify(ascii)}, not a lowercase ASCII domain`;
        return isCanonical(ascii) ? undefined : `not idempotent: canonicalDomain refuses or changes its own result ${ascii}`;
      },
    ),
  );
}

function isCanonical(ascii: string): boolean {
  try {
    return canonicalDomain(ascii) === ascii;
  } catch {
    return false;
  }
}

function domainPrefixTarget(): FuzzTarget<string> {
  return stringTarget('domainPrefix', (input) =>
    mayThrowAmpCorsError(
      () => domainPrefix(input),
      (prefix) => {
        if (!SINGLE_LABEL.test(prefix) || prefix.length > 63) return `prefix ${JSON.stringify(prefix)} is not one DNS label`;
        const domain = canonicalDomain(input);
        // A single-label name has a single-label prefix without `-`; nothing more to compare.
        if (!domain.includes('.')) return undefined;
        if (!prefix.includes('-')) return prefix === hashedLabel(domain) ? undefined : `hashed prefix of ${domain} is not base32(SHA-256(domain))`;
        // A readable prefix is the guide's label (computed independently when WHATWG IDNA leaves the domain as is) and reverses to the domain.
        const independent = independentLabels(domain);
        if (independent !== undefined && prefix !== independent[0]) return `prefix ${prefix} of ${domain} differs from the readable label ${independent[0]}`;
        // Known ambiguity, not checked: a domain `0.…-0` has a readable prefix `0-…-0` that SPEC §4 step 4 reads as a wrap,
        // so it does not reverse (fail closed). No real TLD ends in `-0`; exact domains are matched without reversing.
        const unicode = unicodeDomain(domain);
        if (unicode.startsWith('0.') && unicode.endsWith('-0')) return undefined;
        // Not checked, by design: a domain whose last label cannot be a top-level domain (neither letters only nor an A-label,
        // e.g. `example.org0`) could not exist, so no cache origin reverses to it (fail closed); exact domains match without reversing.
        const tld = domain.slice(domain.lastIndexOf('.') + 1);
        if (!/^[a-z]+$/.test(tld) && !tld.startsWith('xn--')) return undefined;
        // It reverses to the domain, or to a list of claimants that names it (when algorithms collide).
        const reversed = reverseOrigin(`https://${prefix}.cdn.ampproject.org`);
        return reversed.ok && !reversed.hashed && reversed.claimants.some((claimant) => claimant.publisherDomain === domain)
          ? undefined
          : `prefix ${prefix} of ${domain} does not reverse to it (${reversed.ok ? (reversed.hashed ? 'hashed' : reversed.publisherDomain) : reversed.reason})`;
      },
    ),
  );
}

/** Every fuzzed entry point of @ampcors/core (synchronous). */
export function fuzzTargets(): FuzzTarget<unknown>[] {
  const verifier = createVerifier(CORPUS_CONFIG);
  const targets = [
    verifyTarget(verifier),
    reverseOriginTarget(),
    parseOriginTarget(),
    canonicalDomainTarget(),
    domainPrefixTarget(),
    stringTarget('cacheUrl', (input, rng) => mayThrowAmpCorsError(() => cacheUrl(rng.int(2) === 0 ? input : `https://${input}`))),
    stringTarget('canonicalHost', (input) => mayThrowAmpCorsError(() => canonicalHost(input))),
    stringTarget('canonicalizeUrl', (input) => mayThrowAmpCorsError(() => canonicalizeUrl(input))),
    stringTarget('urlExpressions', (input) => mayThrowAmpCorsError(() => urlExpressions(input))),
    stringTarget('hashPrefix', (input, rng) => mayThrowAmpCorsError(() => hashPrefix(input, rng.pick([4, 8, 16, 32] as const)))),
    stringTarget('explainOrigin', (input, rng) =>
      neverThrows(
        () => explainOrigin(input, rng.int(2) === 0 ? {} : { publishers: CORPUS_CONFIG.publishers }),
        (explanation) => {
          outcome(explanation.verdict === undefined ? 'no verdict' : explanation.verdict.allowed ? 'allowed' : 'denied');
          return explanation.verdict === undefined ? undefined : checkVerdict(CORPUS_ORACLE, input, undefined, explanation.verdict);
        },
      ),
    ),
    compactVerifyTarget(),
    loadAllowSetTarget(),
  ];
  // Each target pairs its own generators with its own run: erase the input type for the list.
  return targets.map((target) => target as unknown as FuzzTarget<unknown>);
}

// ---------------------------------------------------------------------------
// Compact allow-sets.

/** The exact domains of {@link CORPUS_CONFIG} (a compact set holds no wildcards). */
const EXACT_DOMAINS = CORPUS_CONFIG.publishers.filter((rule) => !rule.startsWith('*.'));

function compactVerifyTarget(): FuzzTarget<string> {
  const set = loadAllowSet(compileAllowSet(EXACT_DOMAINS));
  const oracle = allowedSetOracle(EXACT_DOMAINS);
  const verifier = createVerifier({ publishers: EXACT_DOMAINS });
  return stringTarget('compactAllowSet', (input) =>
    neverThrows(
      () => set.verifyOrigin(input),
      (verdict) => {
        outcome(verdict.allowed ? 'allowed' : 'denied');
        const reference = verifier.verify(input);
        const referenceAllows = reference.allowed && reference.via === 'cache';
        if (verdict.allowed !== referenceAllows)
          return `compact set ${verdict.allowed ? 'allows' : 'denies'} a cache origin the verifier ${referenceAllows ? 'allows' : 'denies'} (${verdict.reason} / ${reference.reason})`;
        if (!verdict.allowed) return undefined;
        if (verdict.origin !== input || verdict.via !== 'cache') return 'compact set allowed something other than the cache origin as sent';
        return oracle.cacheOrigins.has(input) ? undefined : 'compact set allowed a cache origin that no compiled domain derives';
      },
    ),
  );
}

interface AllowSetFile {
  readonly bytes: Uint8Array;
  /** An allowed origin of the set it was made from (for probes). */
  readonly probe: string;
}

function withChecksum(content: Uint8Array): Uint8Array {
  const out = new Uint8Array(content.length + 32);
  out.set(content);
  out.set(createHash('sha256').update(content).digest(), content.length);
  return out;
}

const MAGIC_AND_VERSION = Uint8Array.of(0x41, 0x4d, 0x50, 0x43, 0x41, 0x53, 0x0d, 0x0a, 0, 1);

function loadAllowSetTarget(): FuzzTarget<AllowSetFile> {
  const bing = CACHES.find((c) => c.id === 'bing') as AmpCache;
  const variants: Array<{ domains: readonly string[]; options: Parameters<typeof compileAllowSet>[1] }> = [
    { domains: EXACT_DOMAINS, options: {} },
    { domains: EXACT_DOMAINS, options: { encoding: 'raw' } },
    { domains: ['example.com'], options: { hashBytes: 32 } },
    { domains: ['example.com', 'a.example.net', 'b.example.net', 'c.example.net'], options: { hashBytes: 20, caches: [bing] } },
    { domains: [], options: {} },
  ];
  const originals: AllowSetFile[] = variants.map(({ domains, options }) => ({
    bytes: compileAllowSet(domains, options),
    probe:
      domains.length === 0
        ? 'https://example-com.cdn.ampproject.org'
        : `https://${readableLabel(domainToASCII(domains[0] as string))}.${options?.caches?.[0]?.cacheDomain ?? 'cdn.ampproject.org'}`,
  }));
  return {
    name: 'loadAllowSet',
    random(rng) {
      const length = rng.int(160);
      const body = new Uint8Array(length);
      for (let i = 0; i < length; i++) body[i] = rng.int(256);
      // Half: random bytes; half: the right magic and version and a valid checksum around random content.
      if (rng.int(2) === 0) return { bytes: body, probe: mutatedInput(rng) };
      const content = new Uint8Array(MAGIC_AND_VERSION.length + length);
      content.set(MAGIC_AND_VERSION);
      content.set(body, MAGIC_AND_VERSION.length);
      return { bytes: withChecksum(content), probe: mutatedInput(rng) };
    },
    mutated(rng) {
      const original = rng.pick(originals);
      let content = original.bytes.slice(0, original.bytes.length - 32);
      const rounds = 1 + rng.int(4);
      for (let r = 0; r < rounds; r++) {
        // Header bytes (0–31) are mutated as often as the rest.
        const at = rng.int(2) === 0 ? rng.int(Math.min(32, content.length + 1)) : rng.int(content.length + 1);
        switch (rng.int(6)) {
          case 0:
            if (at < content.length) content[at] = (content[at] as number) ^ (1 << rng.int(8));
            break;
          case 1:
            if (at < content.length) content[at] = rng.pick([0, 1, 0xff, 0x7f, 0x80, rng.int(256)]);
            break;
          case 2: {
            const next = new Uint8Array(content.length + 1);
            next.set(content.subarray(0, at));
            next[at] = rng.int(256);
            next.set(content.subarray(at), at + 1);
            content = next;
            break;
          }
          case 3:
            content = Uint8Array.of(...content.subarray(0, at), ...content.subarray(at + 1 + rng.int(4)));
            break;
          case 4:
            content = content.slice(0, at);
            break;
          default:
            content = Uint8Array.of(...content.subarray(0, at), ...content.subarray(at, at + 1 + rng.int(16)), ...content.subarray(at));
        }
      }
      // Mostly with the checksum recomputed, so the parser behind it is reached.
      const bytes = rng.int(4) === 0 ? Uint8Array.of(...content, ...original.bytes.subarray(original.bytes.length - 32)) : withChecksum(content);
      return { bytes, probe: rng.int(2) === 0 ? original.probe : mutatedInput(rng) };
    },
    run({ bytes, probe }) {
      let set: CompactAllowSet;
      try {
        set = loadAllowSet(bytes);
      } catch (error) {
        if (!isAmpCorsError(error)) return describeThrow(error);
        outcome('refused');
        return error.code === 'invalid-allow-set' ? undefined : `threw ${error.code}, not invalid-allow-set`;
      }
      outcome('loaded');
      return neverThrows(
        () => [set.verifyOrigin(probe), set.has(probe)] as const,
        ([verdict]) => {
          for (const cache of set.caches) {
            if (!isCanonical(cache.cacheDomain) || !cache.cacheDomain.includes('.'))
              return `loaded a set with cache domain ${JSON.stringify(cache.cacheDomain)}`;
          }
          if (!verdict.allowed) return undefined;
          const cache = verdict.cache;
          if (cache === undefined || !set.caches.includes(cache)) return 'allowed an origin on no cache of the set';
          if (verdict.origin !== probe || probe !== `https://${verdict.prefix}.${cache.cacheDomain}`)
            return 'allowed something other than https://<prefix>.<cache of the set>';
          return undefined;
        },
      );
    },
    show: ({ bytes, probe }) => JSON.stringify({ bytes: Buffer.from(bytes).toString('base64'), probe }),
  };
}

// ---------------------------------------------------------------------------
// The runner.

/** The outcome of fuzzing one entry point. */
export interface FuzzResult {
  readonly name: string;
  readonly inputs: number;
  readonly random: number;
  readonly mutated: number;
  readonly seconds: number;
  /** Distinct findings, each with one input that shows it. */
  readonly findings: ReadonlyArray<{ readonly finding: string; readonly input: string }>;
  /** How often each outcome occurred (allowed, denied, refused...). */
  readonly outcomes: Readonly<Record<string, number>>;
}

/** Progress callback: inputs so far. */
export type FuzzProgress = (inputs: number, seconds: number) => void;

function show<T>(target: { show?(input: T): string }, input: T): string {
  return target.show ? target.show(input) : JSON.stringify(input);
}

class Run<T> {
  readonly rng: Random;
  readonly started = performance.now();
  readonly deadline: number;
  readonly findings = new Map<string, string>();
  readonly outcomes = new Map<string, number>();
  random = 0;
  mutated = 0;
  lastProgress = this.started;
  constructor(
    readonly target: Omit<FuzzTarget<T>, 'run'>,
    seconds: number,
    seed: number,
    readonly progress: FuzzProgress | undefined,
  ) {
    this.rng = new Random(seed);
    this.deadline = this.started + seconds * 1000;
    outcomes = this.outcomes;
  }
  /** The next input, or undefined past the time bound (checked every 256 inputs). */
  next(i: number): T | undefined {
    if ((i & 255) === 0) {
      const now = performance.now();
      if (now > this.deadline) return undefined;
      if (this.progress && now - this.lastProgress > 10_000) {
        this.lastProgress = now;
        this.progress(i, (now - this.started) / 1000);
      }
    }
    if ((i & 1) === 0) {
      this.random++;
      return this.target.random(this.rng);
    }
    this.mutated++;
    return this.target.mutated(this.rng);
  }
  record(finding: string | undefined, input: T): void {
    if (finding !== undefined && !this.findings.has(finding) && this.findings.size < 20) this.findings.set(finding, show(this.target, input));
  }
  result(): FuzzResult {
    return {
      name: this.target.name,
      inputs: this.random + this.mutated,
      random: this.random,
      mutated: this.mutated,
      seconds: (performance.now() - this.started) / 1000,
      findings: [...this.findings].map(([finding, input]) => ({ finding, input })),
      outcomes: Object.fromEntries([...this.outcomes].sort((a, b) => b[1] - a[1])),
    };
  }
}

/** Fuzzes `target` with up to `count` inputs (half random, half mutated) for at most `seconds`. */
export function fuzz<T>(target: FuzzTarget<T>, count: number, seconds: number, seed: number, progress?: FuzzProgress): FuzzResult {
  const run = new Run(target, seconds, seed, progress);
  for (let i = 0; i < count; i++) {
    const input = run.next(i);
    if (input === undefined) break;
    run.record(target.run(input, run.rng), input);
  }
  return run.result();
}

/**
 * {@link fuzz} for an asynchronous target: one input at a time. Every 64
 * inputs it yields to the event loop: a chain of already settled promises
 * never empties the microtask queue, so `process.nextTick` callbacks (which
 * `node:http` responses queue) would pile up and hold every request.
 */
export async function fuzzAsync<T>(target: AsyncFuzzTarget<T>, count: number, seconds: number, seed: number, progress?: FuzzProgress): Promise<FuzzResult> {
  const run = new Run(target, seconds, seed, progress);
  for (let i = 0; i < count; i++) {
    const input = run.next(i);
    if (input === undefined) break;
    run.record(await target.run(input, run.rng), input);
    if ((i & 63) === 63) await new Promise<void>((resolve) => setImmediate(resolve));
  }
  return run.result();
}
