import { AmpCorsError } from './errors.js';
import { parseOrigin } from './origin-header.js';
import type { DenyReason, Verdict, VerifyContext } from './verifier.js';

/**
 * The `origin` option of the `cors` and `@koa/cors` packages, as data: an
 * exact origin, `'*'`, a RegExp, `true` (any origin), `false` (none), or an
 * array of strings and RegExps.
 */
export type OriginOption = boolean | string | RegExp | ReadonlyArray<boolean | string | RegExp>;

/** How {@link compileOriginOption} treats an option. */
export interface OriginOptionMode {
  /** Whether responses carry `Access-Control-Allow-Credentials: true`. */
  readonly credentials: boolean;
  /**
   * True when the option is a per-request answer of the application's own
   * origin function: `true` then means "this origin was checked and is
   * allowed", which is safe with credentials. A static `true` or `'*'` with
   * credentials, and `'*'` from a function with credentials, are refused.
   */
  readonly perRequest?: boolean;
}

/** A compiled origin option: true when the raw `Origin` is allowed by it. */
export type OriginMatcher = (origin: string) => boolean;

/**
 * Compiles an {@link OriginOption} into a matcher. A RegExp is cloned
 * without its `g` and `y` flags, so that `lastIndex` never makes it
 * alternate between allow and deny. Strings must be canonical origins (a
 * trailing slash or uppercase would never match a browser's `Origin`).
 *
 * @throws AmpCorsError `unsafe-configuration` for any-origin with
 * credentials, `invalid-origin` for a string that is no canonical origin,
 * `invalid-option` for other values.
 */
export function compileOriginOption(option: OriginOption, mode: OriginOptionMode): OriginMatcher {
  const items: ReadonlyArray<unknown> = Array.isArray(option) ? option : [option];
  const exact = new Set<string>();
  const patterns: RegExp[] = [];
  let any = false;
  for (const item of items) {
    if (item === true || item === '*') {
      if (mode.credentials && (item === '*' || !mode.perRequest)) {
        throw new AmpCorsError(
          'unsafe-configuration',
          `origin ${item === '*' ? "'*'" : 'true (reflect any origin)'} together with credentials lets every site read credentialed responses; list the trusted origins or set credentials: false`,
        );
      }
      any = true;
    } else if (item === false) {
      continue;
    } else if (typeof item === 'string') {
      const parsed = parseOrigin(item);
      if (!parsed.ok) throw new AmpCorsError('invalid-origin', `origin ${JSON.stringify(item.slice(0, 80))} is not a canonical origin (${parsed.reason})`);
      exact.add(item);
    } else if (item instanceof RegExp) {
      patterns.push(item.global || item.sticky ? new RegExp(item.source, item.flags.replace(/[gy]/g, '')) : item);
    } else {
      throw new AmpCorsError('invalid-option', 'origin must be a string, a RegExp, a boolean or an array of strings and RegExps');
    }
  }
  if (any) return () => true;
  return (origin) => exact.has(origin) || patterns.some((pattern) => pattern.test(origin));
}

function denied(origin: string | null, reason: DenyReason, detail: string): Verdict {
  return { allowed: false, origin, reason, detail };
}

/**
 * Judges a request with a compiled origin option, in the core {@link Verdict}
 * model: an `Origin` that is not one canonical origin is denied before the
 * option is consulted (nothing unparsed is ever reflected); a matching origin
 * is allowed as a publisher origin; `AMP-Same-Origin: true` without `Origin`
 * is same-origin; a present `__amp_source_origin` must itself match.
 */
export function judgeWithOriginMatcher(matcher: OriginMatcher, origin: string | null | undefined, context?: VerifyContext): Verdict {
  const source = context?.sourceOrigin;
  const sourceOk = source === undefined || source === null || (typeof source === 'string' && parseOrigin(source).ok && matcher(source));
  if (!sourceOk) return denied(typeof origin === 'string' && origin !== '' ? origin : null, 'source-origin-mismatch', '__amp_source_origin is not an allowed origin');
  const extra = typeof source === 'string' ? { sourceOrigin: source } : {};
  if (origin === undefined || origin === null || origin === '') {
    if (context?.ampSameOrigin === 'true') return { allowed: true, origin: null, via: 'same-origin', reason: 'same-origin', ...extra };
    return denied(null, 'missing', 'no Origin header and no AMP-Same-Origin: true');
  }
  const parsed = parseOrigin(origin);
  if (!parsed.ok) return denied(origin, parsed.reason, parsed.detail);
  if (!matcher(origin)) return denied(origin, 'unknown-origin', 'not allowed by the origin option');
  return { allowed: true, origin, via: 'publisher', reason: 'publisher-origin', ...extra };
}
