/**
 * Longest value each playground field is computed for, in characters (and the
 * most publisher rules): longer input gets a clear message instead of work,
 * so a 64 kB paste never freezes the page or bloats its address.
 */
export const LIMITS = {
  /** The cache-URL tool's publisher URL. */
  url: 4096,
  /** The `Origin` of the verdict and trace tools (ampcors itself refuses headers over 300). */
  origin: 1024,
  /** The verdict tool's pasted domain list. */
  publishers: 20_000,
  /** The verdict tool's number of publisher rules. */
  rules: 500,
} as const;
