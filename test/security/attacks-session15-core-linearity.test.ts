// Attacker's review, session 15 (helper-49): the whole core decision (request facts from the URL and
// headers, verify, plan) grows linearly with what a client sends. complexity.test.ts compares hostile and
// benign inputs of one length; here each hostile shape is measured at n and at 16·n in the same run, so a
// parser that is slow on every input of a shape (quadratic in the number of dots, escapes or pairs) shows
// too: 16× the input may cost at most 40× the time (a ratio measured in this run, never an absolute time).
// Shapes from the brief: an Origin of 64 kB (labels of 63, thousands of dots, `xn--` runs, hyphen runs,
// one huge label before a cache domain), `__amp_source_origin` made of 10^5 percent-escapes (its name
// escaped too, repeated pairs, a value that never ends), AMP-Email-Sender and request headers of 64 kB.
import { type CorsRequest, createCorsPolicy, requestFacts, sourceOriginOfUrl } from '@ampcors/core/adapter';
import { createVerifier, parseOrigin } from '@ampcors/core';
import { describe, expect, it } from 'vitest';

/** Growth of the input between the two sizes measured. */
const GROWTH = 16;
/** Most time ratio accepted for that growth (linear, with room for cache effects and noise). */
const MAX_RATIO = 40;
const BATCHES = 7;
const MIN_BATCH_MS = 3;

let sink = 0;
function consume(value: unknown): void {
  sink = (sink + (typeof value === 'string' ? value.length : value === null || value === undefined ? 1 : 2)) | 0;
}

function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)] as number;
}

/** Median time per call of `run` on `input`, batches lengthened until each lasts at least MIN_BATCH_MS. */
function perCall(run: (input: string) => unknown, input: string): number {
  for (let i = 0; i < 5; i++) consume(run(input));
  for (let count = 1; ; count *= 4) {
    const times: number[] = [];
    for (let b = 0; b < BATCHES; b++) {
      const start = performance.now();
      for (let i = 0; i < count; i++) consume(run(input));
      times.push(performance.now() - start);
    }
    const m = median(times);
    if (m >= MIN_BATCH_MS || count >= 1 << 20) return m / count;
  }
}

/** `unit` repeated to `length` characters after `head`, then `tail`. */
function fill(head: string, unit: string, length: number, tail = ''): string {
  const body = unit.repeat(Math.ceil(Math.max(0, length - head.length - tail.length) / unit.length));
  return `${head}${body}`.slice(0, length - tail.length) + tail;
}

/** Asserts t(GROWTH·n) / t(n) ≤ MAX_RATIO for each shape, both measured now (the larger first, then the smaller, then the larger again). */
function linear(run: (input: string) => unknown, shapes: Record<string, (length: number) => string>, n = 4096): void {
  for (const [name, make] of Object.entries(shapes)) {
    const small = make(n);
    const large = make(n * GROWTH);
    const first = perCall(run, large);
    const base = perCall(run, small);
    const again = perCall(run, large);
    const ratio = Math.min(first, again) / Math.max(base, 1e-6);
    expect(ratio, `${name}: ${ratio.toFixed(1)}× the time for ${GROWTH}× the input`).toBeLessThanOrEqual(MAX_RATIO);
  }
}

const CACHE = '.cdn.ampproject.org';
const originShapes: Record<string, (length: number) => string> = {
  'labels of 63 before a cache': (n) => fill('https://', `${'a'.repeat(63)}.`, n, `x${CACHE}`),
  'thousands of dots': (n) => fill('https://', 'a.', n, `x${CACHE}`),
  'only dots': (n) => fill('https://', '.', n),
  'one huge label before a cache': (n) => fill('https://', 'a', n, CACHE),
  'one huge hyphenated label before a cache': (n) => fill('https://', 'a-', n, `a${CACHE}`),
  'hyphen runs': (n) => fill('https://', '---a', n, `a${CACHE}`),
  'xn-- runs': (n) => fill('https://xn--', 'xn--', n, `a${CACHE}`),
  'cache domain repeated': (n) => fill('https://a', CACHE, n),
  'ports and colons': (n) => fill('https://a', ':1', n),
  'IPv6 brackets': (n) => fill('https://[', '0:', n, ']'),
  commas: (n) => fill('https://a.com', ',https://a.com', n),
  'percent escapes': (n) => fill('https://', '%41', n, CACHE),
};

describe('linear growth: Origin up to 64 kB through parseOrigin and verify', () => {
  it('parseOrigin', () => linear(parseOrigin, originShapes));

  it('verify, exact publishers', () => {
    const verifier = createVerifier({ publishers: ['example.com', 'www.example.org'] });
    linear((origin) => verifier.verify(origin), originShapes);
  });

  it('verify, a large wildcard set (looked up by suffix) and IDN publishers', () => {
    const publishers = [...Array.from({ length: 40 }, (_, i) => `*.site${i}.example`), 'bücher.de', '*.пример.рф'];
    const verifier = createVerifier({ publishers });
    linear((origin) => verifier.verify(origin), originShapes);
  });

  it('verify with a hostile __amp_source_origin of 64 kB (the Origin allowed)', () => {
    const verifier = createVerifier({ publishers: ['example.com'] });
    const origin = 'https://example-com.cdn.ampproject.org';
    linear((source) => verifier.verify(origin, { sourceOrigin: source }), originShapes);
  });
});

describe('linear growth: __amp_source_origin of 10^5 escapes, and the whole decision', () => {
  const name = '__amp_source_origin';
  const escapedName = [...name].map((c) => `%${c.charCodeAt(0).toString(16).toUpperCase()}`).join('');
  const queryShapes: Record<string, (length: number) => string> = {
    'a value of percent-escapes': (n) => fill(`/p?${name}=`, '%41', n),
    'a value of UTF-8 escapes': (n) => fill(`/p?${name}=`, '%E2%9C%93', n),
    'a value of broken escapes': (n) => fill(`/p?${name}=`, '%E2%', n),
    pluses: (n) => fill(`/p?${name}=`, '+', n),
    'the name escaped, repeated pairs': (n) => fill('/p?', `${escapedName}=%41&`, n),
    'the name escaped, never ending': (n) => fill(`/p?${escapedName}`, '%5F', n),
    'repeated pairs of the name': (n) => fill('/p?', `${name}=https%3A%2F%2Fa.com&`, n),
    'names almost the name': (n) => fill('/p?', `${name.slice(0, -1)}&`, n),
    'ampersands and equals': (n) => fill('/p?', '&=', n),
    'a fragment after many pairs': (n) => fill('/p?', 'a=b&', n, `#${name}=x`),
  };

  it('sourceOriginOfUrl', () => linear(sourceOriginOfUrl, queryShapes));

  it('createCorsPolicy().decide: URL, Origin, AMP-Email-Sender and request headers all hostile', () => {
    const policy = createCorsPolicy({ publishers: ['example.com', '*.example.org'], email: { senders: ['news@example.com'] } });
    const headerShapes: Record<string, (length: number) => string> = {
      'commas and spaces': (n) => fill('', ', a', n),
      'at signs': (n) => fill('a', '@a', n),
      escapes: (n) => fill('', '%41', n),
    };
    const lookupOf =
      (value: string, origin: string | null): ((h: string) => string | null) =>
      (h) =>
        h === 'origin' ? origin : h === 'access-control-request-method' ? 'POST' : h === 'amp-same-origin' ? null : h === 'sec-fetch-site' ? null : value;
    for (const [method, origin] of [
      ['POST', 'https://example-com.cdn.ampproject.org'],
      ['OPTIONS', 'https://www-example-org.cdn.ampproject.org'],
      ['POST', 'https://evil.example'],
    ] as const) {
      linear((value) => policy.decide(requestFacts(method, `/p?${name}=${value}`, lookupOf(value, origin)) as CorsRequest), headerShapes);
      linear((url) => policy.decide(requestFacts(method, url, lookupOf('x', origin)) as CorsRequest), queryShapes);
      linear((o) => policy.decide(requestFacts(method, '/p', lookupOf('x', o)) as CorsRequest), originShapes);
    }
    expect(sink).not.toBe(0.5);
  }, 120_000);
});
