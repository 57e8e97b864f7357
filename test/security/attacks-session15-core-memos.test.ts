// Attacker's review, session 15 (helper-49): the memos in front of verify and decide (the allow-set's
// recent origins, the verifier's direct-mapped memo of plain cache origins and its memo of other cache
// origins, the publisher verdicts, the source-origin verdicts, the policy's plans, sourceOriginOfUrl's
// recent queries) are keyed by what a client sends. A long-lived policy that has answered thousands of
// hostile requests — origins in the same memo slots as allowed ones, the same origin with another source
// origin or sender, IDN and wildcard origins — must answer every request exactly as a policy that never
// saw one, and no memo may grow with the requests.
import { createCorsPolicy, type CorsDecision, type CorsRequest, requestFacts } from '@ampcors/core/adapter';
import { createVerifier, domainPrefix } from '@ampcors/core';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';

const PUBLISHERS = ['example.com', '*.example.org', 'bücher.de', '*.пример.рф'];
const CONFIG = { publishers: PUBLISHERS, email: { senders: ['news@example.com'] } };

const ALLOWED = [
  `https://${domainPrefix('example.com')}.cdn.ampproject.org`,
  `https://${domainPrefix('www.example.org')}.cdn.ampproject.org`,
  `https://${domainPrefix('a-b.shop.example.org')}.www.bing-amp.com`,
  `https://${domainPrefix('bücher.de')}.cdn.ampproject.org`,
  `https://${domainPrefix('новости.пример.рф')}.cdn.ampproject.org`,
  'https://example.com',
  'https://shop.example.org',
];

/** `text` with the character at `i` replaced by `c`: same length, often the same memo slot. */
const withAt = (text: string, i: number, c: string) => `${text.slice(0, i)}${c}${text.slice(i + 1)}`;

const origin = fc.oneof(
  fc.constantFrom(...ALLOWED),
  // One character changed (same length: the slots hash lengths and a few characters).
  fc
    .tuple(fc.constantFrom(...ALLOWED), fc.nat(80), fc.constantFrom('a', 'q', '-', '0', 'x', 'n', '.', 'A', ':'))
    .map(([o, i, c]) => withAt(o, 8 + (i % Math.max(1, o.length - 8)), c)),
  // Prefixes of other domains, readable and IDN, on both caches.
  fc
    .tuple(
      fc.constantFrom('evil.com', 'example.com.evil', 'www.example.org.fun', 'xn-shop.example.org.fun', 'bucher.de', 'пример.рф.com', 'evil.пример.рф'),
      fc.boolean(),
    )
    .map(([d, bing]) => {
      try {
        return `https://${domainPrefix(d)}.${bing ? 'www.bing-amp.com' : 'cdn.ampproject.org'}`;
      } catch {
        return `https://${d}`;
      }
    }),
  fc.constantFrom('https://evil.example', 'null', '', 'https://example.com.', 'https://EXAMPLE.com', 'https://cdn.ampproject.org'),
);
const source = fc.oneof(
  fc.constant(null),
  fc.constantFrom(
    'https://example.com',
    'https://shop.example.org',
    'https://evil.example',
    'https://example.com.evil',
    'news@example.com',
    'evil@example.com',
    'NEWS@EXAMPLE.COM',
  ),
);
const sender = fc.option(fc.constantFrom('news@example.com', 'evil@example.com', 'News@Example.com'), { nil: null });
const request = fc.record({
  method: fc.constantFrom('GET', 'POST', 'OPTIONS'),
  origin,
  source,
  sender,
  requestHeaders: fc.option(fc.constantFrom('content-type', 'amp-same-origin', 'x-a, x-b', '*'), { nil: null }),
});

function factsOf(r: { method: string; origin: string; source: string | null; sender: string | null; requestHeaders: string | null }): CorsRequest {
  const url = r.source === null ? '/api' : `/api?__amp_source_origin=${encodeURIComponent(r.source)}`;
  const headers: Record<string, string | null> = {
    origin: r.origin === '' ? null : r.origin,
    'access-control-request-method': 'POST',
    'access-control-request-headers': r.requestHeaders,
    'amp-email-sender': r.sender,
  };
  return requestFacts(r.method, url, (name) => headers[name] ?? null);
}

/** What a decision answers, as plain data. */
function answer(decision: CorsDecision): unknown {
  const { verdict, plan } = decision;
  return {
    allowed: verdict.allowed,
    reason: verdict.reason,
    origin: verdict.origin,
    sourceOrigin: verdict.allowed ? verdict.sourceOrigin : undefined,
    publisherDomain: verdict.publisherDomain,
    plan: JSON.parse(JSON.stringify(plan)) as unknown,
  };
}

describe('memos in front of verify and decide, from the attacker’s side', () => {
  it('a long-lived policy answers each of thousands of hostile requests as a fresh policy does', () => {
    const longLived = createCorsPolicy(CONFIG);
    // Fresh policies, each used for few requests (their memos hardly filled).
    const fresh = Array.from({ length: 40 }, () => createCorsPolicy(CONFIG));
    let n = 0;
    let allowed = 0;
    fc.assert(
      fc.property(fc.array(request, { minLength: 1, maxLength: 30 }), (requests) => {
        for (const r of requests) {
          const facts = factsOf(r);
          const got = longLived.decide(facts) as CorsDecision;
          const want = (fresh[n++ % fresh.length] as ReturnType<typeof createCorsPolicy>).decide(factsOf(r)) as CorsDecision;
          expect(answer(got), JSON.stringify(r)).toEqual(answer(want));
          if (got.verdict.allowed) allowed++;
        }
      }),
      { numRuns: 1500, seed: 4915 },
    );
    expect(allowed).toBeGreaterThan(1000);
  });

  it('a verifier primed with 300,000 distinct hostile origins (plain, IDN, slot-colliding) still judges each allowed and denied origin afresh', () => {
    const verifier = createVerifier({ publishers: PUBLISHERS });
    const reference = createVerifier({ publishers: PUBLISHERS });
    const before = process.memoryUsage().heapUsed;
    for (let i = 0; i < 300_000; i++) {
      const base = ALLOWED[i % ALLOWED.length] as string;
      const hostile =
        i % 3 === 0
          ? withAt(base, 8 + (i % (base.length - 8)), String.fromCharCode(97 + (i % 26)))
          : `https://x${i.toString(36)}-example-${i % 2 === 0 ? 'org' : 'net'}.cdn.ampproject.org`;
      verifier.verify(hostile, i % 5 === 0 ? { sourceOrigin: `https://s${i}.example.org` } : undefined);
    }
    (globalThis as { gc?: () => void }).gc?.();
    const grown = process.memoryUsage().heapUsed - before;
    // Bounded memos: a few thousand entries each (well under 64 MB whatever was sent).
    expect(grown).toBeLessThan(64 * 1024 * 1024);
    for (const o of [...ALLOWED, 'https://evil-com.cdn.ampproject.org', `https://${domainPrefix('xn-shop.example.org.fun')}.cdn.ampproject.org`]) {
      for (const ctx of [undefined, { sourceOrigin: 'https://evil.example' }, { sourceOrigin: 'https://example.com' }]) {
        expect(verifier.verify(o, ctx), `${o} ${JSON.stringify(ctx)}`).toEqual(reference.verify(o, ctx));
      }
    }
  });
});
