/**
 * Longest value each playground field is computed for, in characters (and the
 * most publisher rules): longer input gets a clear message instead of work,
 * so a 64 kB paste never freezes the page or bloats its address.
 */
export const LIMITS = {
  /** Tool 1's publisher URL. */
  url: 4096,
  /** The `Origin` of tools 2 and 3 (ampcors itself refuses headers over 300). */
  origin: 1024,
  /** Tool 3's pasted domain list. */
  publishers: 20_000,
  /** Tool 3's number of publisher rules. */
  rules: 500,
} as const;
