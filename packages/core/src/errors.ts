/**
 * Stable machine-readable codes for every error ampcors throws. Functions that
 * take untrusted request input (`verify`, `reverseOrigin`) never throw: they
 * return a result with a reason code instead. These codes are for bad
 * configuration and bad arguments given by the developer.
 */
export type AmpCorsErrorCode =
  | 'invalid-domain'
  | 'invalid-host'
  | 'invalid-ip'
  | 'invalid-url'
  | 'invalid-origin'
  | 'invalid-cache'
  | 'invalid-option'
  | 'public-suffix-rule'
  | 'publisher-covers-cache'
  | 'unsafe-configuration'
  | 'invalid-allow-set';

/** The one error class ampcors throws; `code` says what was wrong. */
export class AmpCorsError extends Error {
  /** A stable code, safe to branch on. */
  readonly code: AmpCorsErrorCode;

  /**
   * @param code - the stable error code
   * @param message - a human-readable explanation naming the bad value
   */
  constructor(code: AmpCorsErrorCode, message: string) {
    super(message);
    this.name = 'AmpCorsError';
    this.code = code;
  }
}

/** True when `value` is an {@link AmpCorsError} (also across module copies). */
export function isAmpCorsError(value: unknown): value is AmpCorsError {
  return value instanceof Error && value.name === 'AmpCorsError' && typeof (value as AmpCorsError).code === 'string';
}
