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
import {
  added,
  addedRounds,
  addsDifference,
  globalSchedule,
  type InProcessCell,
  type InProcessResult,
  processesOf,
  roundProcesses,
  roundSchedule,
} from '../src/in-process.js';
import { ALIGNED_ROUND_CAP, nextRoundStep, settle } from '../src/measure.js';
import type { MicroResult } from '../src/micro.js';
import type { MicroCase } from '../src/micro-worker.js';
import { byProcessText, fill, type RunResults, report, verdictText, workersText } from '../src/report.js';
import {
  agreement,
  byProcess,
  differences,
  fUpperQuantile,
  fUpperTail,
  incompleteBeta,
  median,
  processesBehindVerdict,
  processSpread,
  rotate,
  spread,
} from '../src/stats.js';
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

describe('several worker processes per configuration', () => {
  it('deals the rounds out in turn, after one discarded round per process', () => {
    fc.assert(
      fc.property(fc.integer({ min: 0, max: 40 }), fc.integer({ min: 1, max: 6 }), (rounds, processes) => {
        const schedule = roundSchedule(rounds, processes);
        expect(schedule).toHaveLength(rounds + processes);
        // The rounds in order: the discarded ones (-processes … -1) first, one for each process.
        expect(schedule.map((s) => s.round)).toEqual(Array.from({ length: rounds + processes }, (_, i) => i - processes));
        const discarded = schedule.filter((s) => s.round < 0).map((s) => s.process);
        expect([...discarded].sort((a, b) => a - b)).toEqual(Array.from({ length: processes }, (_, p) => p));
        const measured = schedule.filter((s) => s.round >= 0);
        for (const s of measured) expect(s.process).toBe(s.round % processes);
        // Each process's rounds spread over the run: counts differ by at most one, and no two consecutive rounds share a process.
        const counts = Array.from({ length: processes }, (_, p) => measured.filter((s) => s.process === p).length);
        if (rounds >= processes) expect(Math.max(...counts) - Math.min(...counts)).toBeLessThanOrEqual(1);
        if (processes > 1) for (let i = 1; i < schedule.length; i++) expect(schedule[i]?.process).not.toBe(schedule[i - 1]?.process);
      }),
    );
    expect(roundSchedule(4, 3).map((s) => [s.round, s.process])).toEqual([
      [-3, 0],
      [-2, 1],
      [-1, 2],
      [0, 0],
      [1, 1],
      [2, 2],
      [3, 0],
    ]);
    expect(() => roundSchedule(3, 0)).toThrow();
  });

  it('lays configurations with different numbers of processes side by side: measured round i of each at the same step', () => {
    fc.assert(
      fc.property(fc.integer({ min: 0, max: 20 }), fc.array(fc.integer({ min: 1, max: 5 }), { minLength: 1, maxLength: 6 }), (rounds, counts) => {
        const steps = globalSchedule(rounds, counts);
        const max = Math.max(...counts);
        expect(steps).toHaveLength(rounds + max);
        counts.forEach((n, c) => {
          const own = steps.map((step) => step[c]).filter((s) => s !== null && s !== undefined);
          // Each configuration's own schedule, whole and in order, ending with the run.
          expect(own).toEqual(roundSchedule(rounds, n));
          for (let i = 0; i < rounds; i++) expect(steps[max + i]?.[c]).toEqual({ round: i, process: i % n });
          // Its discarded rounds come just before the measured ones.
          for (let step = 0; step < max - n; step++) expect(steps[step]?.[c]).toBeNull();
        });
      }),
    );
    expect(globalSchedule(2, [3, 1]).map((step) => step.map((s) => (s === null ? null : [s.round, s.process])))).toEqual([
      [[-3, 0], null],
      [[-2, 1], null],
      [
        [-1, 2],
        [-1, 0],
      ],
      [
        [0, 0],
        [0, 0],
      ],
      [
        [1, 1],
        [1, 0],
      ],
    ]);
  });

  it('gives each framework its number of processes, the others the default', () => {
    const plan = { configs: [], rounds: 15, warmUpOps: 1, warmUpMs: 1, roundMs: 1 };
    expect(processesOf('express+ampcors', plan)).toBe(1);
    expect(processesOf('express+ampcors', { ...plan, processes: 2 })).toBe(2);
    expect(processesOf('express+ampcors', { ...plan, processes: 2, processesByFramework: { express: 3 } })).toBe(3);
    expect(processesOf('koa+ampcors', { ...plan, processes: 2, processesByFramework: { express: 3 } })).toBe(2);
    const result = (configs: ConfigName[], processesByFramework?: InProcessResult['plan']['processesByFramework']): InProcessResult => ({
      plan: { ...plan, configs, processesByFramework },
      cells: [],
      unavailable: {},
      profiles: [],
    });
    expect(workersText(result(['express', 'koa']))).toBe('1 per configuration');
    expect(workersText(result(['express', 'express+cors', 'koa', 'fetch'], { express: 3, fetch: 2 }))).toBe(
      '3 per configuration of Express, 2 per configuration of Fetch, 1 per other configuration',
    );
    expect(workersText(result(['express', 'fetch', 'koa'], { express: 3, fetch: 3 }))).toBe(
      '3 per configuration of Express and Fetch, 1 per other configuration',
    );
  });

  it('settles a case unmeasured for at least the CPU time asked, in whole batches, and not at all for 0 ms', async () => {
    let calls = 0;
    const prepared = { op: { fn: () => calls++, async: false }, batch: 64, warmUpOps: 0 };
    expect(await settle(prepared, 0)).toBe(0);
    expect(calls).toBe(0);
    const ops = await settle(prepared, 2);
    expect(ops).toBe(calls);
    expect(ops % 64).toBe(0);
    expect(ops).toBeGreaterThan(0);
  });

  it('splits per-round figures by process, and refuses lists that do not pair', () => {
    expect(byProcess([1, 2, 3, 4, 5], [2, 0, 2, 0, 1])).toEqual([[2, 4], [5], [1, 3]]);
    expect(() => byProcess([1, 2], [0])).toThrow();
  });

  it('measures the spread between processes against the spread within them', () => {
    // Two processes, [1,2,3] and [4,5,6]: the two-sample t-test's t² = 13.5, p = 0.0213 (4 degrees of freedom).
    const s = processSpread([1, 4, 2, 5, 3, 6], [0, 1, 0, 1, 0, 1]);
    expect(s?.medians).toEqual([2, 5]);
    expect(s?.withinSd).toBeCloseTo(1, 12);
    expect(s?.betweenSd).toBeCloseTo(Math.sqrt(4.5), 12);
    expect(s?.f).toBeCloseTo(13.5, 12);
    expect(s?.p).toBeCloseTo(0.0213116, 6);
    // Nothing to compare: one process, or one round per process.
    expect(processSpread([1, 2, 3], [0, 0, 0])).toBeUndefined();
    expect(processSpread([1, 2, 3], [0, 1, 2])).toBeUndefined();
    // Rounds alike within each process but processes apart: F infinite; nothing varying at all: F = 0.
    expect(processSpread([1, 1, 2, 2], [0, 0, 1, 1])).toMatchObject({ f: Number.POSITIVE_INFINITY, p: 0 });
    expect(processSpread([1, 1, 1, 1], [0, 0, 1, 1])).toMatchObject({ f: 0, p: 1 });
  });

  it('F does not change when every round moves or scales alike; a process moved apart raises it', () => {
    const values = fc.array(fc.double({ min: -50, max: 50, noNaN: true }), { minLength: 9, maxLength: 9 });
    fc.assert(
      fc.property(values, fc.double({ min: -100, max: 100, noNaN: true }), fc.double({ min: 0.1, max: 10, noNaN: true }), (v, shift, scale) => {
        const processes = v.map((_, i) => i % 3);
        const base = processSpread(v, processes);
        fc.pre(base !== undefined && base.withinSd > 1e-6);
        const moved = processSpread(
          v.map((x) => x * scale + shift),
          processes,
        );
        expect(moved?.f).toBeCloseTo(base?.f as number, 6);
        // Process 0's rounds all moved far apart: F grows past any chance level.
        const apart = processSpread(
          v.map((x, i) => (i % 3 === 0 ? x + 1e3 * (base?.withinSd as number) : x)),
          processes,
        );
        expect(apart?.p).toBeLessThan(1e-3);
      }),
    );
  });

  it("the F distribution's upper tail matches its closed forms", () => {
    // One numerator degree of freedom of two: P(F ≥ f) = (1 + 2f/d)^(-d/2); F(1,1) is a squared Cauchy variable.
    fc.assert(
      fc.property(fc.double({ min: 0.01, max: 50, noNaN: true }), fc.integer({ min: 1, max: 60 }), (f, d) => {
        expect(fUpperTail(f, 2, d)).toBeCloseTo((1 + (2 * f) / d) ** (-d / 2), 9);
        expect(fUpperTail(f, 1, 1)).toBeCloseTo(1 - (2 / Math.PI) * Math.atan(Math.sqrt(f)), 9);
        // F(d, d) is symmetric about 1 on a log scale: P(F ≥ f) = P(F ≤ 1/f).
        expect(fUpperTail(f, d, d)).toBeCloseTo(1 - fUpperTail(1 / f, d, d), 9);
      }),
    );
    // Tabled 5 % points: F(2,12) 3.885, F(1,10) 4.965.
    expect(fUpperTail(3.885, 2, 12)).toBeCloseTo(0.05, 4);
    expect(fUpperTail(4.965, 1, 10)).toBeCloseTo(0.05, 4);
    expect(incompleteBeta(0.5, 2, 3)).toBeCloseTo(11 / 16, 12);
    expect(fUpperQuantile(0.05, 2, 12)).toBeCloseTo(3.885, 3);
    // F(2, 12): P(F ≥ f) = (1 + f/6)^-6, so its median is 6 (2^(1/6) − 1) = 0.7348.
    expect(fUpperQuantile(0.5, 2, 12)).toBeCloseTo(6 * (2 ** (1 / 6) - 1), 9);
    expect(fUpperQuantile(0.5, 7, 7)).toBeCloseTo(1, 9);
    fc.assert(
      fc.property(fc.double({ min: 0.001, max: 0.999, noNaN: true }), fc.integer({ min: 1, max: 30 }), fc.integer({ min: 1, max: 30 }), (tail, d1, d2) => {
        expect(fUpperTail(fUpperQuantile(tail, d1, d2), d1, d2)).toBeCloseTo(tail, 8);
      }),
    );
    expect(() => fUpperQuantile(0, 2, 12)).toThrow();
    expect(fUpperTail(0, 2, 12)).toBe(1);
    expect(fUpperTail(Number.POSITIVE_INFINITY, 2, 12)).toBe(0);
  });

  it('a resolved figure has at least processesBehindVerdict process medians on its side, and that bound is reached', () => {
    expect(processesBehindVerdict([5, 5, 5])).toBe(2);
    expect(processesBehindVerdict([2, 1])).toBe(1);
    expect(processesBehindVerdict([15])).toBe(1);
    const layout = fc.array(fc.integer({ min: 1, max: 6 }), { minLength: 1, maxLength: 4 });
    fc.assert(
      fc.property(layout, fc.array(fc.double({ min: -5, max: 5, noNaN: true }), { minLength: 24, maxLength: 24 }), (sizes, pool) => {
        const processes = sizes.flatMap((n, p) => Array<number>(n).fill(p));
        const values = processes.map((_, i) => pool[i] as number);
        const a = agreement(values, 0.3);
        fc.pre(a.resolved && a.median !== 0.3);
        const side = Math.sign(a.median - 0.3);
        const behind = byProcess(values, processes).filter((v) => Math.sign(median(v) - 0.3) === side).length;
        expect(behind).toBeGreaterThanOrEqual(processesBehindVerdict(sizes));
      }),
    );
    // Reached: of three processes of five rounds, one wholly off the side; 10/15 rounds agree and two process medians of three.
    const values = [1, 1, 1, 1, 1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1];
    const processes = values.map((_, i) => Math.floor(i / 5));
    expect(agreement(values)).toMatchObject({ median: -1, resolved: true });
    expect(byProcess(values, processes).filter((v) => median(v) < 0)).toHaveLength(2);
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

describe('rounds of several processes, paired', () => {
  // Three processes dealt rounds 0,1,2,0,1,2: process 2 of koa+ampcors runs 1 µs slower.
  const processes = [0, 1, 2, 0, 1, 2];
  const withProcesses = (config: ConfigName, rounds: number[]): InProcessCell => ({ ...cell(config, 'get', rounds), processes });
  const result: InProcessResult = {
    plan: { configs: [], rounds: 6, warmUpOps: 1, warmUpMs: 1, roundMs: 1, processes: 3 },
    cells: [
      withProcesses('koa', [2000, 2100, 2000, 2200, 2000, 2000]),
      withProcesses('koa+ampcors', [3000, 3100, 4000, 3200, 3000, 4000]),
      withProcesses('koa+@koa/cors', [4000, 4100, 4000, 4200, 4000, 4000]),
    ],
    unavailable: {},
    profiles: [],
  };

  it("pairs round i with round i, whichever process ran it, and keeps each round's process", () => {
    const diff = addsDifference(result, 'koa+ampcors', 'koa+@koa/cors', 'get') as number[];
    expect(diff).toEqual([-1, -1, 0, -1, -1, 0]);
    expect(roundProcesses(result, 'koa+ampcors', 'get')).toEqual(processes);
    expect(byProcessText(result, 'koa+ampcors', 'get', diff)).toBe('; by process -1.00 / -1.00 / 0.00');
  });

  it('says nothing by process for one process, or for results of older runs', () => {
    const old: InProcessResult = { ...result, cells: result.cells.map(({ processes: _, ...rest }) => rest) };
    expect(roundProcesses(old, 'koa+ampcors', 'get')).toBeUndefined();
    expect(byProcessText(old, 'koa+ampcors', 'get', [1, 2, 3, 4, 5, 6])).toBe('');
    const one: InProcessResult = { ...result, cells: result.cells.map((c) => ({ ...c, processes: c.rounds.map(() => 0) })) };
    expect(byProcessText(one, 'koa+ampcors', 'get', [1, 2, 3, 4, 5, 6])).toBe('');
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
    // One process per configuration (no process numbers): no figures between processes.
    expect(text).toContain('One worker process per configuration in this run');

    // The same run from three processes of five rounds each: by-process medians and the spread table.
    const processes = [0, 1, 2, 0, 1, 2, 0, 1, 2, 0, 1, 2, 0, 1, 2];
    const threeProcesses: RunResults = {
      ...results,
      inProcess: {
        ...inProcess,
        plan: { ...inProcess.plan, rounds: 15, processes: 3 },
        cells: inProcess.cells.map((c) => ({
          ...c,
          rounds: processes.map((p, i) => (c.rounds[0] as number) + (c.config === 'koa+ampcors' ? p * 50 + (i % 2) * 7 : 0)),
          processes,
        })),
      },
    };
    const three = report(threeProcesses);
    expect(three).not.toMatch(/\{\{\w+\}\}/);
    expect(three).toMatch(
      /\| ahead of @koa\/cors on koa, get \(in process\) \| [^|]+same sign in 15\/15 rounds; by process -1.00 \/ -0.94 \/ -0.90 \| \*\*met\*\* \|/,
    );
    expect(three).toContain('at least 2 of the 3 process medians on that side too');
    expect(three).toContain('A verdict thus always stands on a majority of the processes');
    // Process means 50 ns apart against rounds 7 ns apart within a process: far beyond chance.
    expect(three).toMatch(/\| ahead of @koa\/cors on koa, get \(in process\) \| -1.00 \/ -0.94 \/ -0.90 \| 0.00 \| 0.05 \| [\d.]+ \| \*\*0.000\*\* \|/);
    // Of the 12 cells only koa+ampcors's three differ by process.
    expect(three).toMatch(
      /Over the 12 cells of the table above measured by several processes \(µs per request\) the median F is [\d.]+ \(about 0.73 were the processes alike\), with p < 0.05 for 3 of them/,
    );
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
