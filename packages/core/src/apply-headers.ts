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
}

/**
 * Reads a header of `target` as its `getHeader` would (a value, or `undefined`
 * when it has none): an adapter may give one that reads the runtime's own
 * header store, where looking `getHeader` up costs more (Express: see
 * packages/express/src/node-headers.ts).
 */
export type StoredHeaderReader<T> = (target: T, name: string) => StoredHeaderValue | undefined;

/**
 * Sets every header of a CORS plan and appends its `Vary` names, or none of
 * them: when the runtime refuses one (an invalid value), the headers set
 * before it are put back as they were and the error is rethrown, so no
 * half-applied `Access-Control-Allow-Origin` / `-Credentials` remains for an
 * error path, even one an upstream middleware answers itself.
 *
 * Names are given in lower case, as core's plans carry them (HTTP/2 sends
 * them so; HTTP/1.1 names are case-insensitive): Node lower-cases each name
 * it is given, which copies a mixed-case one. Only the names it sets are
 * read, one by one, and a previous value is kept only when there was one
 * (usually none).
 *
 * @param read - how a header's value is read (without it, `target.getHeader`); writes always go through `target`
 * @returns whether one of `headers` had a value before (set by an earlier
 * layer: the caller removes that layer's other CORS headers, core's
 * nested-policies.ts, 4.)
 */
export function applyHeadersAtomically<T extends HeaderTarget>(
  target: T,
  headers: ReadonlyArray<readonly [string, string]>,
  vary: readonly string[],
  read?: StoredHeaderReader<T>,
): boolean {
  let previous: Array<StoredHeaderValue | undefined> | undefined;
  let i = 0;
  try {
    for (; i < headers.length; i++) {
      const header = headers[i] as readonly [string, string];
      const name = header[0];
      const before = read === undefined ? target.getHeader(name) : read(target, name);
      if (before !== undefined) (previous ??= [])[i] = before;
      target.setHeader(name, header[1]);
    }
    if (vary.length > 0) target.setHeader('vary', appendVary(read === undefined ? target.getHeader('vary') : read(target, 'vary'), vary));
    return previous !== undefined;
  } catch (error) {
    // Every header up to the one refused (included: a runtime may have stored it before refusing) is put back.
    for (let j = Math.min(i, headers.length - 1); j >= 0; j--) {
      const name = (headers[j] as readonly [string, string])[0];
      const value = previous?.[j];
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
