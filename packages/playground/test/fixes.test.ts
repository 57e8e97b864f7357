// Every reason the verifier denies with has its "how to fix" sentence: each
// code is produced here for real by @ampcors/core (the sync and the async
// verifier), so the set of codes with a sentence must be exactly the set the
// verifier gives (the `Record<DenyReason, …>` type checks the same at build time).
import { cacheOrigin, createAsyncVerifier, createVerifier, type DenyReason, type Verdict } from '@ampcors/core';
import { describe, expect, it } from 'vitest';
import { DENY_FIXES } from '../src/page/fixes.js';

const LONG = 'articles.publisher-with-a-very-long-domain-name.example.net';
const verifier = createVerifier({ publishers: ['example.com', LONG, '*.example.org'] });

/** An origin (and request context) for each deny reason, judged by the verifier. */
const SYNC_CASES: ReadonlyArray<[string | null, Parameters<typeof verifier.verify>[1]?]> = [
  [null],
  [`https://${'a'.repeat(400)}.com`],
  ['null'],
  ['https://example.com, https://evil.com'],
  ['https://exa\tmple.com'],
  ['example.com'],
  ['ftp://example.com'],
  ['https://user@example.com'],
  ['https://example.com/'],
  ['https://Example.com'],
  ['http://example-com.cdn.ampproject.org'],
  ['https://example-com.cdn.ampproject.org:8443'],
  ['https://evil.com'],
  ['https://evil-com.cdn.ampproject.org'],
  [cacheOrigin(`x${LONG}`)],
  ['https://cdn.ampproject.org'],
  ['https://a.b-com.cdn.ampproject.org'],
  ['https://xn---com.cdn.ampproject.org'],
  ['https://xn--zzzzzzzzzzzzzzzzzzzzzzzz.cdn.ampproject.org'],
  ['https://a_b-com.cdn.ampproject.org'],
  ['https://0-example-com-0.cdn.ampproject.org'],
  [cacheOrigin('example.com'), { sourceOrigin: 'https://evil.com' }],
];

async function producedReasons(): Promise<Map<DenyReason, Verdict>> {
  const seen = new Map<DenyReason, Verdict>();
  const add = (verdict: Verdict) => {
    if (!verdict.allowed) seen.set(verdict.reason, verdict);
  };
  for (const [origin, context] of SYNC_CASES) add(verifier.verify(origin, context));
  // A shared registry that cannot be reached.
  const failing = createAsyncVerifier({
    source: {
      publisherOfPrefix: () => Promise.reject(new Error('connection refused')),
      hasPublisher: () => Promise.reject(new Error('connection refused')),
    },
  });
  add(await failing.verify(cacheOrigin('news.example.com')));
  return seen;
}

describe('how to fix a denied origin', () => {
  it('has one sentence for every reason code the verifier denies with, and none for a code it never gives', async () => {
    const produced = await producedReasons();
    expect([...produced.keys()].sort()).toEqual(Object.keys(DENY_FIXES).sort());
  });

  it('says something specific for each: a full sentence, no two alike', () => {
    const sentences = Object.values(DENY_FIXES);
    for (const sentence of sentences) {
      expect(sentence).toMatch(/^[A-Z_`"].{30,}[.]$/su);
    }
    expect(new Set(sentences).size).toBe(sentences.length);
  });
});
