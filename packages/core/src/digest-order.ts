/**
 * The sort both allow-sets use to order SHA-256 digests held as flat 32-bit
 * words (the verifier's index in allow-set.ts, the compact file in
 * compact-allow-set.ts): written once here.
 */

/**
 * The order of `count` records of `stride` words each (flat in `words`) by
 * their first `keyWords` words, ascending and stable. An LSD radix sort of
 * word 0 (two passes of 16 bits, linear in `count`), then an insertion sort
 * of each run sharing word 0 by the rest of the key (SHA-256 makes such runs
 * rare and short; equal keys cost no moves).
 */
export function digestOrder(words: Uint32Array, count: number, stride: number, keyWords: number): Uint32Array {
  let order = new Uint32Array(count);
  let scratch = new Uint32Array(count);
  for (let i = 0; i < count; i++) order[i] = i;
  const buckets = new Uint32Array(65536);
  for (const shift of [0, 16]) {
    buckets.fill(0);
    for (let i = 0; i < count; i++) {
      const key = ((words[i * stride] as number) >>> shift) & 0xffff;
      buckets[key] = (buckets[key] as number) + 1;
    }
    let sum = 0;
    for (let b = 0; b < 65536; b++) {
      const size = buckets[b] as number;
      buckets[b] = sum;
      sum += size;
    }
    for (let i = 0; i < count; i++) {
      const item = order[i] as number;
      const key = ((words[item * stride] as number) >>> shift) & 0xffff;
      const slot = buckets[key] as number;
      buckets[key] = slot + 1;
      scratch[slot] = item;
    }
    [order, scratch] = [scratch, order];
  }
  for (let start = 0; start < count;) {
    const top = words[(order[start] as number) * stride];
    let end = start + 1;
    while (end < count && words[(order[end] as number) * stride] === top) end++;
    // Stable: an item moves only past items with a strictly greater key.
    for (let i = start + 1; i < end; i++) {
      const item = order[i] as number;
      let j = i - 1;
      while (j >= start && compareDigests(words, order[j] as number, item, stride, keyWords) > 0) {
        order[j + 1] = order[j] as number;
        j--;
      }
      order[j + 1] = item;
    }
    start = end;
  }
  return order;
}

/** Compares records `a` and `b` (see {@link digestOrder}) by their first `keyWords` words: negative, 0 or positive. */
export function compareDigests(words: Uint32Array, a: number, b: number, stride: number, keyWords: number): number {
  for (let w = 0; w < keyWords; w++) {
    const x = words[a * stride + w] as number;
    const y = words[b * stride + w] as number;
    if (x !== y) return x < y ? -1 : 1;
  }
  return 0;
}
