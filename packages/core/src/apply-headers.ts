import { appendVary } from './vary.js';

/** A header value as a Node `ServerResponse` stores it. */
export type StoredHeaderValue = string | number | readonly string[];

/**
 * The part of a response that {@link applyHeadersAtomically} uses: Node's
 * `ServerResponse` has it, so do Express's and Koa's responses (their `res`).
 */
export interface HeaderTarget {
  getHeader(name: string): StoredHeaderValue | undefined;
  setHeader(name: string, value: StoredHeaderValue): unknown;
  removeHeader(name: string): unknown;
  /** Every header set so far, by lower-case name (Node's); when present, read once instead of one `getHeader` per name. */
  getHeaders?(): Readonly<Record<string, StoredHeaderValue | undefined>>;
}

/**
 * Sets every header of a CORS plan and appends its `Vary` names, or none of
 * them: when the runtime refuses one (an invalid value), the headers set
 * before it are put back as they were and the error is rethrown, so no
 * half-applied `Access-Control-Allow-Origin` / `-Credentials` remains for an
 * error path, even one an upstream middleware answers itself.
 */
export function applyHeadersAtomically(target: HeaderTarget, headers: ReadonlyArray<readonly [string, string]>, vary: readonly string[]): void {
  const previous: Array<StoredHeaderValue | undefined> = [];
  // One read of every header (Node's getHeaders) instead of one getHeader per name.
  const existing = target.getHeaders?.();
  try {
    for (let i = 0; i < headers.length; i++) {
      const header = headers[i] as readonly [string, string];
      previous.push(existing === undefined ? target.getHeader(header[0]) : existing[lowerCase(header[0])]);
      target.setHeader(header[0], header[1]);
    }
    if (vary.length > 0) target.setHeader('Vary', appendVary(existing === undefined ? target.getHeader('Vary') : existing.vary, vary));
  } catch (error) {
    for (let i = previous.length - 1; i >= 0; i--) {
      const name = (headers[i] as readonly [string, string])[0];
      const value = previous[i];
      try {
        if (value === undefined) target.removeHeader(name);
        else target.setHeader(name, value);
      } catch {
        // Headers already sent: there is nothing left to undo.
      }
    }
    throw error;
  }
}

const lowerNames = new Map<string, string>();
/** `name` in lower case, remembered (plan header names are a handful of constants). */
function lowerCase(name: string): string {
  let lower = lowerNames.get(name);
  if (lower === undefined) {
    lower = name.toLowerCase();
    if (lowerNames.size < 64) lowerNames.set(name, lower);
  }
  return lower;
}
