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
