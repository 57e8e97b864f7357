// The benchmark harness's own logic: the yardstick must decide what it claims
// (a wrong yardstick makes every slow-path ratio meaningless), the statistics
// must pair rounds, and the report must fill every placeholder of its template.
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { CACHES, domainPrefix } from '@ampcors/core';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { whyUnavailable } from '../src/apps.js';
import type { ConfigName, RequestKind } from '../src/http/configs.js';
import { type HttpCell, type HttpResult, httpCpuDifference } from '../src/http.js';
import { added, addedRounds, addsDifference, type InProcessCell, type InProcessResult } from '../src/in-process.js';
import { ALIGNED_ROUND_CAP, nextRoundStep } from '../src/measure.js';
import type { MicroResult } from '../src/micro.js';
import type { MicroCase } from '../src/micro-worker.js';
import { fill, type RunResults, report, verdictText } from '../src/report.js';
import { agreement, differences, median, rotate, spread } from '../src/stats.js';
import { asciiReverse } from '../src/yardstick.js';

const label = fc.stringMatching(/^[a-z0-9]{1,8}(-[a-z0-9]{1,8})?$/);
const domain = fc
  .tuple(fc.array(label, { minLength: 1, maxLength: 3 }), fc.constantFrom('com', 'org', 'de'))
  .map(([labels, tld]) => [...labels, tld].join('.'));

describe('the slow-path yardstick', () => {
  it('reverses the readable prefix of any ASCII domain on every cache, and finds exactly that domain', () => {
    fc.assert(
      fc.property(domain, domain, fc.constantFrom(...CACHES), (publisher, other, cache) => {
        const prefix = domainPrefix(publisher);
        fc.pre(prefix.length <= 63 && !prefix.startsWith('xn--') && /^[a-z0-9-]+$/.test(prefix));
        const origin = `https://${prefix}.${cache.cacheDomain}`;
        expect(asciiReverse(origin, new Set([publisher]), '.never.invalid')).toBe(true);
        if (other !== publisher) expect(asciiReverse(origin, new Set([other]), '.never.invalid')).toBe(false);
      }),
    );
  });

  it('allows a subdomain of the wildcard base, and nothing from elsewhere', () => {
    const wildcard = '.wildcard-publisher.com';
    expect(asciiReverse(`https://${domainPrefix('news1.wildcard-publisher.com')}.cdn.ampproject.org`, new Set(), wildcard)).toBe(true);
    for (const hostile of [
      'http://www-example-com.cdn.ampproject.org',
      'https://www-example-com.cdn.ampproject.org.evil.com',
      'https://www-example-com.evil.com',
      'https://WWW-example-com.cdn.ampproject.org',
      'https://www_example-com.cdn.ampproject.org',
      'https://cdn.ampproject.org',
    ]) {
      expect(asciiReverse(hostile, new Set(['www.example.com']), wildcard)).toBe(false);
    }
  });
});

describe('statistics', () => {
  it('median, spread, per-round differences and rotation', () => {
    expect(median([3, 1, 2])).toBe(2);
    expect(median([4, 1, 3, 2])).toBe(2.5);
    expect(() => median([])).toThrow();
    expect(spread([5, 1, 3])).toEqual({ median: 3, low: 1, high: 5 });
    expect(differences([10, 20, 30], [1, 2])).toEqual([9, 18]);
    expect(rotate([1, 2, 3], 1)).toEqual([2, 3, 1]);
    expect(rotate([1, 2, 3], -1)).toEqual([3, 1, 2]);
  });

  it("a verdict is resolved only when two rounds in three are on the median's side of the threshold", () => {
    // 10 of 15 below zero: resolved (the old rule's boundary); 9 of 15: not.
    const ten = [...Array(10).fill(-0.3), ...Array(5).fill(2)];
    expect(agreement(ten)).toEqual({ median: -0.3, agreeing: 10, rounds: 15, resolved: true });
    const nine = [...Array(9).fill(-0.3), ...Array(6).fill(2)];
    expect(agreement(nine)).toMatchObject({ median: -0.3, agreeing: 9, resolved: false });
    // Against a threshold: 1.2 µs median with rounds 0.9..1.5 around a 1 µs limit.
    expect(agreement([0.9, 1.2, 1.3, 1.5, 0.95, 1.1], 1)).toMatchObject({ agreeing: 4, resolved: true });
    expect(agreement([0.9, 1.2, 1.3, 0.8, 0.95, 1.1], 1)).toMatchObject({ agreeing: 3, resolved: false });
    // A median exactly at the threshold is on neither side: only rounds equal to it agree.
    expect(agreement([-1, 0, 1])).toMatchObject({ median: 0, agreeing: 1, resolved: false });
    expect(() => agreement([])).toThrow();
  });

  it("agreement: the resolved flag is the share of rounds on the median's side, for any list", () => {
    fc.assert(
      fc.property(
        fc.array(fc.double({ min: -10, max: 10, noNaN: true }), { minLength: 1, maxLength: 40 }),
        fc.double({ min: -2, max: 2, noNaN: true }),
        (values, t) => {
          const a = agreement(values, t);
          const side = Math.sign(a.median - t);
          const onSide = values.filter((v) => v === a.median || (side !== 0 && Math.sign(v - t) === side)).length;
          expect(a.agreeing).toBe(onSide);
          expect(a.resolved).toBe(onSide / values.length >= 2 / 3);
          // The median's own side always holds at least half the rounds (unless it sits on the threshold).
          if (side !== 0) expect(2 * a.agreeing).toBeGreaterThanOrEqual(values.length);
        },
      ),
    );
  });
});

describe('rounds aligned to major collections', () => {
  /** Runs the stopping rule over batches of `batchNs`, the collection count given per batch; returns the batches the round took. */
  const batchesOf = (minNs: number, batchNs: number, countAt: ((batch: number) => number) | undefined): number => {
    let step = { done: false, seen: -1 };
    let batch = 0;
    while (!step.done) {
      batch++;
      step = nextRoundStep(batch * batchNs, minNs, countAt?.(batch), step.seen);
      if (batch > 1e4) throw new Error('never ends');
    }
    return batch;
  };

  it('without a collection count, ends at the first batch past its minimum', () => {
    expect(batchesOf(10, 1, undefined)).toBe(10);
    expect(batchesOf(10, 3, undefined)).toBe(4);
  });

  it('with one, runs on to the first batch in which a new collection was reported', () => {
    // Collections reported at batches 4, 17 and 30 (a 13-batch cycle); minimum 10 batches: ends at 17, a whole cycle after 4.
    const count = (b: number) => [4, 17, 30].filter((at) => b >= at).length;
    expect(batchesOf(10, 1, count)).toBe(17);
    // A collection reported in the very batch the minimum is reached does not end it: the next one does.
    expect(batchesOf(17, 1, count)).toBe(30);
  });

  it('ends at the cap when no collection comes, whatever the count', () => {
    fc.assert(
      fc.property(fc.integer({ min: 1, max: 50 }), fc.integer({ min: 0, max: 5 }), (min, constant) => {
        expect(batchesOf(min, 1, () => constant)).toBe(ALIGNED_ROUND_CAP * min);
      }),
    );
  });

  it('never ends before its minimum', () => {
    fc.assert(
      fc.property(fc.integer({ min: 1, max: 50 }), fc.array(fc.integer({ min: 1, max: 200 }), { maxLength: 10 }), (min, at) => {
        const batches = batchesOf(min, 1, (b) => at.filter((x) => b >= x).length);
        expect(batches).toBeGreaterThanOrEqual(min);
        expect(batches).toBeLessThanOrEqual(ALIGNED_ROUND_CAP * min);
      }),
    );
  });
});

/** An in-process cell with given rounds (ns). */
function cell(config: ConfigName, kind: RequestKind, rounds: number[]): InProcessCell {
  return { config, kind, answer: { status: 200, headers: {} }, warmUpOps: 1, rounds };
}

describe('what a middleware adds', () => {
  const result: InProcessResult = {
    plan: { configs: [], rounds: 3, warmUpOps: 1, warmUpMs: 1, roundMs: 1 },
    cells: [
      cell('koa', 'get', [2000, 3000, 2000]),
      cell('koa+ampcors', 'get', [3000, 4500, 3100]),
      cell('koa+@koa/cors', 'get', [4000, 5000, 4000]),
      cell('fetch', 'get', [10000, 10000, 12000]),
      cell('fetch+ampcors', 'get', [12000, 13000, 14000]),
    ],
    unavailable: {},
    profiles: [],
  };

  it('is taken round by round against the same framework, in µs', () => {
    expect(added(result, 'koa+ampcors', 'get')).toEqual({ median: 1.1, low: 1, high: 1.5 });
    expect(addsDifference(result, 'koa+ampcors', 'koa+@koa/cors', 'get')).toEqual([-1, -0.5, -0.9]);
    // Across frameworks: each configuration minus its own hello world first.
    expect(addsDifference(result, 'fetch+ampcors', 'koa+@koa/cors', 'get')).toEqual([0, 1, 0]);
    expect(added(result, 'koa+ampcors', 'preflight')).toBeUndefined();
    expect(addedRounds(result, 'fetch+ampcors', 'get')).toEqual([2, 3, 2]);
  });
});

/** An HTTP cell of `config` and `kind` whose server CPU µs per request were `cpuRounds`, round by round. */
const httpCell = (config: ConfigName, cpuRounds: number[], kind: RequestKind = 'get'): HttpCell => ({
  config,
  kind,
  rounds: cpuRounds.map(() => 1000),
  rps: 1000,
  cpuRounds,
  cpuUsPerRequest: median(cpuRounds),
  serverCpuShare: 1,
  systemShare: 0.2,
  p50LatencyMs: 1,
  failures: 0,
  probe: { status: 200, allowOrigin: null },
});

describe('over HTTP', () => {
  it('pairs the two configurations round by round, in CPU µs per request', () => {
    const http: HttpResult = {
      cells: [httpCell('koa', [40, 42, 41]), httpCell('koa+ampcors', [44, 47, 45]), httpCell('koa+@koa/cors', [45, 46, 46])],
      unavailable: {},
      seconds: 1,
      rounds: 3,
      pipelining: 10,
      warmUpRequests: 1,
    };
    expect(httpCpuDifference(http, 'koa+ampcors', 'koa+@koa/cors', 'get')).toEqual([-1, 1, -1]);
    expect(httpCpuDifference(http, 'koa+ampcors', 'koa+@koa/cors', 'preflight')).toBeUndefined();
  });
});

describe('the report', () => {
  it('fill replaces every placeholder and refuses one it has no value for', () => {
    expect(fill('a {{x}} b {{y}}', { x: '1', y: '2' })).toBe('a 1 b 2');
    expect(() => fill('{{missing}}', {})).toThrow(/missing/);
  });

  it('names a missing optional package in one line', () => {
    expect(whyUnavailable(new Error("Cannot find package 'hono' imported from /x/y.mjs\nstack"))).toBe('hono is not installed');
    expect(whyUnavailable('boom')).toBe('boom');
  });

  it('renders a run with every target row, every placeholder filled, and an explanation for each missed target', () => {
    const microCase = (c: Partial<MicroCase> & Pick<MicroCase, 'name' | 'group'>): MicroCase => ({ warmUpOps: 1, rounds: [100, 110, 90], size: 10_000, ...c });
    const micro: MicroResult = {
      plan: { sizes: [10_000], rounds: 3, warmUpOps: 1, warmUpMs: 1, roundMs: 1 },
      cases: [
        microCase({ group: 'floor', name: 'Set.has, 45 chars, 10k members', rounds: [20, 20, 20] }),
        microCase({ group: 'verify', name: 'allowed cache origin', rounds: [30, 30, 30] }),
        microCase({ group: 'verify', name: 'hostile 10 kB header', rounds: [30, 30, 30] }),
        microCase({ group: 'verify', name: 'wildcard-rule cache origin (ASCII)', rounds: [3000, 3000, 3000] }),
        microCase({ group: 'yardstick', name: 'hand-written ASCII reverse: wildcard-rule cache origin (ASCII)', rounds: [300, 300, 300] }),
        microCase({ group: 'verify', name: 'wildcard-rule cache origin (ASCII), repeated', rounds: [900, 900, 900] }),
        microCase({ group: 'yardstick', name: 'hand-written ASCII reverse: wildcard-rule cache origin (ASCII), repeated', rounds: [300, 300, 300] }),
        { group: 'algorithm', name: 'canonicalizeUrl', warmUpOps: 1, rounds: [1, 2, 3] },
      ],
      asciiPath: { group: 'ascii-path', samples: 100, offending: {} },
    };
    const headers = { 'access-control-allow-origin': 'https://a', vary: 'Origin' };
    const inProcess: InProcessResult = {
      plan: { configs: [], rounds: 3, warmUpOps: 1, warmUpMs: 1, roundMs: 1 },
      cells: (['koa', 'koa+ampcors', 'koa+@koa/cors', 'koa+static-headers'] as const).flatMap((config, i) =>
        (['get', 'get-source', 'preflight'] as const).map((kind) => ({
          ...cell(config, kind, [2000 + i * 1000, 2100 + i * 1000, 1900 + i * 1000]),
          answer: { status: 200, headers: i === 0 ? {} : headers },
        })),
      ),
      unavailable: { hono: 'hono is not installed' },
      profiles: [],
    };
    // get: ampcors cheaper in every round (met); get-source: cheaper by the median, in 1 round of 3 only... (not resolved).
    const http: HttpResult = {
      cells: [
        httpCell('koa', [40, 40, 40], 'get'),
        httpCell('koa+ampcors', [44, 45, 44], 'get'),
        httpCell('koa+@koa/cors', [46, 46, 47], 'get'),
        httpCell('koa', [40, 40, 40], 'get-source'),
        httpCell('koa+ampcors', [44, 47, 44], 'get-source'),
        httpCell('koa+@koa/cors', [46, 45, 44], 'get-source'),
      ],
      unavailable: {},
      seconds: 1,
      rounds: 3,
      pipelining: 10,
      warmUpRequests: 1,
    };
    const results: RunResults = {
      meta: { generatedAt: 'now', commit: 'abc', machine: 'm', loadStart: '1', loadEnd: '2', elapsedS: 1, quick: true, full: false, pinned: false },
      micro,
      inProcess,
      builds: [{ domains: 1_000_000, what: 'verifier', origins: 2_000_000, wallMs: 3000, cpuMs: 3000, heapBytes: 200e6 }],
      compact: { runs: [] },
      http,
      soak: 'not run',
      before: null,
    };
    const text = report(results);
    expect(text).not.toMatch(/\{\{\w+\}\}/);
    expect(text).toContain('Quick mode');
    // koa+ampcors adds 1 µs, @koa/cors 2 µs: ahead; the 1M verifier misses both scale targets, with the explanation.
    expect(text).toMatch(/\| ahead of @koa\/cors on koa, get \(in process\) \| [^|]+same sign in 3\/3 rounds \| \*\*met\*\* \|/);
    // Over HTTP: server CPU per request paired round by round.
    expect(text).toMatch(
      /\| ahead of @koa\/cors on koa, get \(HTTP, server CPU\) \| server CPU 44.0 vs 46.0 µs\/request; difference -2.00 \(-3.00 to -1.00\) µs, same sign in 3\/3 rounds; [^|]+\| \*\*met\*\* \|/,
    );
    expect(text).toMatch(
      /\| ahead of @koa\/cors on koa, get-source \(HTTP, server CPU\) \| [^|]+same sign in 1\/3 rounds[^|]+\| \*\*not resolved\*\* \(median: missed\) \|/,
    );
    // An unresolved row is explained like a missed one.
    expect(text).toContain('**Behind a peer over HTTP.**');
    expect(text).toMatch(/\| createVerifier, 1M domains × 2 caches, ≤ 2.5 s \| [^|]+\| \*\*missed\*\* \|/);
    expect(text).toContain('**1M-domain verifier build.**');
    expect(text).toMatch(
      /verify, wildcard-rule cache origin \(ASCII\), first sight, ≤ 2× the hand-written ASCII reverse \(10,000 set\) \| 3000 ns vs 300 ns: 10.0× \(rounds 10.0–10.0×\); repeated: 900 ns, 3.0×/,
    );
    expect(text).toContain('hono is not installed');
  });

  it('says met or missed only when the rounds resolve it', () => {
    expect(verdictText({ met: true, resolved: true })).toBe('**met**');
    expect(verdictText({ met: false, resolved: true })).toBe('**missed**');
    expect(verdictText({ met: true })).toBe('**met**');
    expect(verdictText({ met: true, resolved: false })).toBe('**not resolved** (median: met)');
    expect(verdictText({ met: false, resolved: false })).toBe('**not resolved** (median: missed)');
    expect(verdictText({ met: null, resolved: false })).toBe('not measured');
  });

  it('every fragment the generator can ask for exists in report/fragments.md', () => {
    const fragments = readFileSync(fileURLToPath(new URL('../report/fragments.md', import.meta.url)), 'utf8');
    const generator = readFileSync(fileURLToPath(new URL('../src/report.ts', import.meta.url)), 'utf8');
    const asked = [...generator.matchAll(/(?:why: |fragment\()'([\w-]+)'/g)].map((m) => m[1]);
    expect(asked.length).toBeGreaterThan(5);
    for (const name of asked) expect(fragments).toContain(`<!-- @${name} -->`);
  });
});
