/** Small statistics helpers shared by the benchmark scripts. */

/** The median of a non-empty list of numbers. */
export function median(values: readonly number[]): number {
  if (values.length === 0) throw new Error('median of an empty list');
  const sorted = [...values].sort((a, b) => a - b);
  const middle = sorted.length >> 1;
  return sorted.length % 2 === 1 ? (sorted[middle] as number) : ((sorted[middle - 1] as number) + (sorted[middle] as number)) / 2;
}

/** Rotates `items` left by `by` places (to vary the order of interleaved runs). */
export function rotate<T>(items: readonly T[], by: number): T[] {
  const shift = ((by % items.length) + items.length) % items.length;
  return [...items.slice(shift), ...items.slice(0, shift)];
}

/** The spread of per-round figures: lowest and highest. */
export interface Spread {
  readonly median: number;
  readonly low: number;
  readonly high: number;
}

/** Median, lowest and highest of a non-empty list. */
export function spread(values: readonly number[]): Spread {
  return { median: median(values), low: Math.min(...values), high: Math.max(...values) };
}

/** Element-wise `a[i] - b[i]` over the shorter of two per-round lists. */
export function differences(a: readonly number[], b: readonly number[]): number[] {
  const n = Math.min(a.length, b.length);
  return Array.from({ length: n }, (_, i) => (a[i] as number) - (b[i] as number));
}

/** How a list of per-round figures stands against a threshold: the median's side, and how many rounds are on it. */
export interface Agreement {
  readonly median: number;
  /** Rounds on the median's side of the threshold (a round equal to the median counts). */
  readonly agreeing: number;
  readonly rounds: number;
  /** At least two rounds in three are on the median's side: the run shows the median's verdict. */
  readonly resolved: boolean;
}

/**
 * Judges per-round figures (paired differences, ratios) against `threshold`:
 * the verdict is the median's side of it, and it is resolved when at least
 * two rounds in three are on that side too. A median exactly at the
 * threshold is on neither side: only rounds equal to it agree.
 */
export function agreement(values: readonly number[], threshold = 0): Agreement {
  const med = median(values);
  const side = Math.sign(med - threshold);
  const agreeing = values.filter((v) => v === med || (side !== 0 && Math.sign(v - threshold) === side)).length;
  return { median: med, agreeing, rounds: values.length, resolved: 3 * agreeing >= 2 * values.length };
}

/** Per-round figures split by the process that measured each round (`processes[i]` for `values[i]`), in ascending process order. */
export function byProcess(values: readonly number[], processes: readonly number[]): number[][] {
  if (values.length !== processes.length) throw new Error(`${values.length} figures but ${processes.length} process numbers`);
  const ids = [...new Set(processes)].sort((a, b) => a - b);
  return ids.map((id) => values.filter((_, i) => processes[i] === id));
}

/** How per-round figures spread between the processes that measured them and within each (a one-way analysis of variance). */
export interface ProcessSpread {
  /** Each process's median, in process order. */
  readonly medians: number[];
  /** Standard deviation of the rounds around their own process's mean (pooled over the processes). */
  readonly withinSd: number;
  /** Standard deviation of the processes' means. */
  readonly betweenSd: number;
  /**
   * The variance ratio F: the spread of the process means, scaled by their
   * round counts, over the pooled within-process variance. About 1 when the
   * processes differ only by their rounds' own noise; large when a process's
   * state (its JIT, its heap) moves all its rounds together.
   */
  readonly f: number;
  /** The chance of an F at least this large were the processes alike (F distribution's upper tail). */
  readonly p: number;
}

/**
 * {@link ProcessSpread} of per-round figures; undefined with fewer than two
 * processes or no process with two rounds (nothing to compare). Rounds that
 * all equal their process's mean give an infinite F (p = 0) when the means
 * differ, and F = 0 (p = 1) when nothing varies at all.
 */
export function processSpread(values: readonly number[], processes: readonly number[]): ProcessSpread | undefined {
  const groups = byProcess(values, processes);
  const k = groups.length;
  const n = values.length;
  if (k < 2 || n - k < 1) return undefined;
  const mean = (v: readonly number[]): number => v.reduce((a, b) => a + b, 0) / v.length;
  const grand = mean(values);
  const means = groups.map(mean);
  const within = groups.reduce((sum, g, i) => sum + g.reduce((s, x) => s + (x - (means[i] as number)) ** 2, 0), 0) / (n - k);
  const between = groups.reduce((sum, g, i) => sum + g.length * ((means[i] as number) - grand) ** 2, 0) / (k - 1);
  const f = between === 0 ? 0 : within === 0 ? Number.POSITIVE_INFINITY : between / within;
  return {
    medians: groups.map(median),
    withinSd: Math.sqrt(within),
    betweenSd: Math.sqrt(means.reduce((s, m) => s + (m - grand) ** 2, 0) / (k - 1)),
    f,
    p: fUpperTail(f, k - 1, n - k),
  };
}

/** P(X ≥ f) for X following the F distribution with `d1` and `d2` degrees of freedom. */
export function fUpperTail(f: number, d1: number, d2: number): number {
  if (f <= 0) return 1;
  if (f === Number.POSITIVE_INFINITY) return 0;
  // P(X ≥ f) = I_x(d2/2, d1/2) with x = d2 / (d2 + d1 f): the regularized incomplete beta function.
  return incompleteBeta(d2 / (d2 + d1 * f), d2 / 2, d1 / 2);
}

/** ln Γ(z) for z > 0 (Lanczos approximation, g = 7, 9 terms: about 15 significant digits). */
function logGamma(z: number): number {
  const c = [
    0.99999999999980993, 676.5203681218851, -1259.1392167224028, 771.32342877765313, -176.61502916214059, 12.507343278686905, -0.13857109526572012,
    9.9843695780195716e-6, 1.5056327351493116e-7,
  ];
  if (z < 0.5) return Math.log(Math.PI / Math.sin(Math.PI * z)) - logGamma(1 - z);
  const x = z - 1;
  let sum = c[0] as number;
  for (let i = 1; i < 9; i++) sum += (c[i] as number) / (x + i);
  const t = x + 7.5;
  return 0.5 * Math.log(2 * Math.PI) + (x + 0.5) * Math.log(t) - t + Math.log(sum);
}

/** The regularized incomplete beta function I_x(a, b), 0 ≤ x ≤ 1, by its continued fraction (modified Lentz). */
export function incompleteBeta(x: number, a: number, b: number): number {
  if (x <= 0) return 0;
  if (x >= 1) return 1;
  // The fraction converges fast for x < (a + 1) / (a + b + 2); otherwise use I_x(a, b) = 1 − I_{1−x}(b, a).
  if (x > (a + 1) / (a + b + 2)) return 1 - incompleteBeta(1 - x, b, a);
  const front = Math.exp(a * Math.log(x) + b * Math.log(1 - x) - (logGamma(a) + logGamma(b) - logGamma(a + b))) / a;
  const tiny = 1e-300;
  let c = 1;
  let d = 1 - ((a + b) * x) / (a + 1);
  d = Math.abs(d) < tiny ? tiny : d;
  d = 1 / d;
  let h = d;
  for (let m = 1; m <= 300; m++) {
    // The even and the odd step of the fraction's m-th pair of terms.
    for (const numerator of [(m * (b - m) * x) / ((a + 2 * m - 1) * (a + 2 * m)), -((a + m) * (a + b + m) * x) / ((a + 2 * m) * (a + 2 * m + 1))]) {
      d = 1 + numerator * d;
      d = Math.abs(d) < tiny ? tiny : d;
      c = 1 + numerator / c;
      c = Math.abs(c) < tiny ? tiny : c;
      d = 1 / d;
      h *= d * c;
    }
    if (Math.abs(d * c - 1) < 1e-15) break;
  }
  return front * h;
}

/**
 * The fewest processes whose median must lie on a figure's median side of
 * the threshold whenever {@link agreement} resolves it, for processes that ran
 * `roundsEach[i]` rounds each: a process whose median lies elsewhere has at
 * least half its rounds (rounded up) off that side, and a resolved figure has
 * at most a third of all its rounds off it. (A figure whose median sits on the
 * threshold itself is not covered: it has no side.)
 */
export function processesBehindVerdict(roundsEach: readonly number[]): number {
  const total = roundsEach.reduce((a, b) => a + b, 0);
  let offSide = total - Math.ceil((2 * total) / 3);
  let dissenting = 0;
  for (const needed of roundsEach.map((m) => Math.ceil(m / 2)).sort((a, b) => a - b)) {
    if (needed > offSide) break;
    offSide -= needed;
    dissenting++;
  }
  return roundsEach.length - dissenting;
}

/** The f with P(X ≥ f) = `tail` for X following the F distribution with `d1` and `d2` degrees of freedom (bisection; 0 < tail < 1). */
export function fUpperQuantile(tail: number, d1: number, d2: number): number {
  if (!(tail > 0 && tail < 1)) throw new Error(`tail must lie strictly between 0 and 1, got ${tail}`);
  let low = 0;
  let high = 1;
  while (fUpperTail(high, d1, d2) > tail) high *= 2;
  for (let i = 0; i < 200 && high - low > 1e-12 * high; i++) {
    const middle = (low + high) / 2;
    if (fUpperTail(middle, d1, d2) > tail) low = middle;
    else high = middle;
  }
  return (low + high) / 2;
}
