/**
 * The ampcors fuzzer (issue #6): random and mutated inputs for each public
 * entry point of @ampcors/core, bounded in count and time. A finding is a
 * throw that is not an `AmpCorsError` (or any throw from a function
 * documented never to throw), or an allowed verdict that no configured rule
 * explains. Used by `pnpm fuzz` (fuzz.ts, ≥ 1M inputs per entry point) and by
 * fuzz.test.ts (a short run in the test suite).
 */
import {
  cacheUrl,
  canonicalHost,
  canonicalizeUrl,
  createVerifier,
  domainPrefix,
  hashPrefix,
  isAmpCorsError,
  parseOrigin,
  reverseOrigin,
  urlExpressions,
  type Verifier,
} from '@ampcors/core';
import { CORPUS, CORPUS_CONFIG } from './corpus.js';

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

const SEEDS: readonly string[] = [
  ...CORPUS.flatMap((e) => (e.origin === null || e.origin.length > 400 ? [] : [e.origin])),
  'example.com', 'www.example.com', 'xn--57hw060o.com', 'en-us.example.com', 'foo-example.com', '⚡😊.com', 'bücher.de',
  'https://example.com/amp_document.html', 'http://example.com/logo.png', 'https://example.com/g?value=Hello%20World',
  'http://a.b.com/1/2.html?param=1', 'http://1.2.3.4/1/', 'http://[2001:0db8:0000::1]/', 'http://[::ffff:1.2.3.4]/', 'http://0x7f.1/%2e%2e/./a//b',
  'http://www.google.com/%25%32%35', 'http://3279880203/blah', 'http://www.GOOgle.com/', 'http://a.b.c.d.e.f.com/1.html',
];
const FRAGMENTS = [
  '-', '--', '.', '..', '0-', '-0', 'xn--', 'https://', 'http://', ':', ':443', '@', '/', '\\', '?', '#', '%', '%25', '%2e', '%00', '[', ']', '::', ',', ' ', '\t',
  '\r', '\n', '\u0000', '\u007f', '\u00ad', '\u200b', '\u200d', '\ufeff', '\uff0e', '\u3002', 'а', 'ｅ', 'ß', 'İ', 'ש', '😊', '\ud800', '\udfff', '.cdn.ampproject.org',
  '.www.bing-amp.com', 'example', 'com', '0x', '0', '255', '4294967296', 'ffff', 'bcqzqqc5ch7sxozdddl6bmxwuh32gti635uny2hxdhaanyceosaa',
];

/** A random string: bytes, Unicode, or an origin-like mosaic of fragments. */
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

/** A seed with 1–4 mutations: flip, insert, delete, duplicate, case change, splice with another seed. */
export function mutatedInput(rng: Random): string {
  let s = rng.pick(SEEDS);
  const rounds = 1 + rng.int(4);
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

/** One entry point under fuzz. */
export interface FuzzTarget {
  readonly name: string;
  /** Runs one input; returns a finding (a description) or undefined. */
  run(input: string, rng: Random): string | undefined;
}

function mayThrowAmpCorsError(call: () => unknown): string | undefined {
  try {
    call();
    return undefined;
  } catch (error) {
    return isAmpCorsError(error) ? undefined : `threw ${error instanceof Error ? `${error.name}: ${error.message}` : String(error)}`;
  }
}

function neverThrows(call: () => unknown): string | undefined {
  try {
    call();
    return undefined;
  } catch (error) {
    return `threw ${error instanceof Error ? `${error.name}: ${error.message}` : String(error)}`;
  }
}

/** Checks that an allowed verdict is explained by {@link CORPUS_CONFIG}. */
function verifyTarget(verifier: Verifier): FuzzTarget {
  const exact = new Set(['example.com', 'www.example.com', 'xn--bcher-kva.de', 'en-us.example.net', CORPUS_CONFIG.publishers[3] as string]);
  const underWildcard = (d: string) => d === 'example.org' || d.endsWith('.example.org');
  return {
    name: 'verify',
    run(input, rng) {
      const context = rng.int(4) === 0 ? { ampSameOrigin: rng.pick(['true', input, 'TRUE']), sourceOrigin: rng.pick([input, 'https://example.com', null]) } : undefined;
      let verdict;
      try {
        verdict = verifier.verify(input, context);
      } catch (error) {
        return `threw ${String(error)}`;
      }
      if (!verdict.allowed) return undefined;
      if (verdict.via === 'same-origin') return context?.ampSameOrigin === 'true' && !input ? undefined : 'same-origin allowed without AMP-Same-Origin: true';
      const parsed = parseOrigin(input);
      if (!parsed.ok || parsed.scheme !== 'https' || parsed.port !== null) return 'allowed a non-canonical or non-https origin';
      if (verdict.via === 'publisher') return exact.has(parsed.host) || underWildcard(parsed.host) ? undefined : `publisher origin of ${parsed.host} allowed`;
      if (verifier.allowSet.get(input)) return undefined;
      const reversed = reverseOrigin(input);
      return reversed.ok && !reversed.hashed && underWildcard(reversed.publisherDomain) ? undefined : 'cache origin allowed that no rule explains';
    },
  };
}

/** Every fuzzed entry point. */
export function fuzzTargets(): FuzzTarget[] {
  const verifier = createVerifier(CORPUS_CONFIG);
  return [
    verifyTarget(verifier),
    { name: 'reverseOrigin', run: (input) => neverThrows(() => reverseOrigin(input)) },
    { name: 'parseOrigin', run: (input) => neverThrows(() => parseOrigin(input)) },
    { name: 'domainPrefix', run: (input) => mayThrowAmpCorsError(() => domainPrefix(input)) },
    { name: 'cacheUrl', run: (input, rng) => mayThrowAmpCorsError(() => cacheUrl(rng.int(2) === 0 ? input : `https://${input}`)) },
    { name: 'canonicalHost', run: (input) => mayThrowAmpCorsError(() => canonicalHost(input)) },
    { name: 'canonicalizeUrl', run: (input) => mayThrowAmpCorsError(() => canonicalizeUrl(input)) },
    { name: 'urlExpressions', run: (input) => mayThrowAmpCorsError(() => urlExpressions(input)) },
    { name: 'hashPrefix', run: (input, rng) => mayThrowAmpCorsError(() => hashPrefix(input, rng.pick([4, 8, 16, 32] as const))) },
  ];
}

/** The outcome of fuzzing one entry point. */
export interface FuzzResult {
  readonly name: string;
  readonly inputs: number;
  readonly random: number;
  readonly mutated: number;
  readonly seconds: number;
  /** Distinct findings, each with one input that shows it. */
  readonly findings: ReadonlyArray<{ readonly finding: string; readonly input: string }>;
}

/** Fuzzes `target` with up to `count` inputs (half random, half mutated) for at most `seconds`. */
export function fuzz(target: FuzzTarget, count: number, seconds: number, seed: number): FuzzResult {
  const rng = new Random(seed);
  const started = performance.now();
  const deadline = started + seconds * 1000;
  const findings = new Map<string, string>();
  let random = 0;
  let mutated = 0;
  for (let i = 0; i < count; i++) {
    if ((i & 1023) === 0 && performance.now() > deadline) break;
    const useRandom = (i & 1) === 0;
    const input = useRandom ? randomInput(rng) : mutatedInput(rng);
    if (useRandom) random++;
    else mutated++;
    const finding = target.run(input, rng);
    if (finding !== undefined && !findings.has(finding) && findings.size < 20) findings.set(finding, input);
  }
  return {
    name: target.name,
    inputs: random + mutated,
    random,
    mutated,
    seconds: (performance.now() - started) / 1000,
    findings: [...findings].map(([finding, input]) => ({ finding, input })),
  };
}
