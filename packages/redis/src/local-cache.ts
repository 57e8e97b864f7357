/** One cached answer and when it stops being fresh. */
interface Entry<V> {
  readonly value: V;
  readonly expires: number;
}

/**
 * A bounded map of recent answers with a time to live: the least recently
 * used entry is dropped past `max`. `get` returns only fresh answers;
 * `getStale` also returns expired ones, for serving while the registry is
 * unreachable.
 */
export class LocalCache<V> {
  readonly #entries = new Map<string, Entry<V>>();
  readonly #max: number;
  readonly #now: () => number;

  /**
   * @param max - most entries kept (at least 1)
   * @param now - the clock, injectable for tests
   */
  constructor(max: number, now: () => number = Date.now) {
    this.#max = Math.max(1, Math.floor(max));
    this.#now = now;
  }

  /** A fresh cached answer, or `undefined`. */
  get(key: string): V | undefined {
    const entry = this.#entries.get(key);
    if (entry === undefined || entry.expires <= this.#now()) return undefined;
    this.#entries.delete(key);
    this.#entries.set(key, entry);
    return entry.value;
  }

  /** A cached answer expired less than `graceMs` ago, or `undefined`. */
  getStale(key: string, graceMs: number): V | undefined {
    const entry = this.#entries.get(key);
    return entry !== undefined && entry.expires + graceMs > this.#now() ? entry.value : undefined;
  }

  /** Caches `value` for `ttlMs` milliseconds. */
  set(key: string, value: V, ttlMs: number): void {
    this.#entries.delete(key);
    this.#entries.set(key, { value, expires: this.#now() + ttlMs });
    if (this.#entries.size > this.#max) {
      const oldest = this.#entries.keys().next().value as string;
      this.#entries.delete(oldest);
    }
  }

  /** Forgets `key`. */
  delete(key: string): void {
    this.#entries.delete(key);
  }

  /** Forgets everything. */
  clear(): void {
    this.#entries.clear();
  }

  /** Number of entries held. */
  get size(): number {
    return this.#entries.size;
  }
}
