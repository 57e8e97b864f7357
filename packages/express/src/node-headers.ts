/**
 * The headers already set on an Express response, read from Node's own
 * header store instead of through `res.getHeader`.
 *
 * Express gives each response (and request) a hidden class of its own: it
 * sets their prototype, then adds properties, and V8 makes a new map for
 * each such object. Every first look-up of a name on one of them misses
 * V8's inline and stub caches and goes through the runtime (about 0.3 µs
 * each, measured on responses shaped as Express 5 hands them over). Node's
 * `setHeader`, which ampcors calls anyway, reads the response's
 * `kOutHeaders` slot; reading that slot here is the same look-up (the
 * second one hits the stub cache), where `res.getHeader` would add a miss
 * of its own, per request, for the `getHeader` name.
 *
 * The slot is learned once, from a probe response, and only after Node's
 * `setHeader`, `getHeader` and `removeHeader` behaved on it as read here (a
 * null-prototype map from the lower-cased name to `[name, value]`).
 * Anything else (another runtime or Node version, a response without the
 * slot, a store of another shape) reads through `res.getHeader` as before.
 * A `getHeader` patched on a response is not asked: what Node will send is
 * what is read, which is what all-or-none writes, `Vary` merging and the
 * nested-policy check (an earlier layer's grant) are about.
 */
import { IncomingMessage, ServerResponse } from 'node:http';
import type { StoredHeaderValue } from '@ampcors/core/adapter';

/** Node's `kOutHeaders` slot, or `null` when the probe did not behave as described above. */
const OUT_HEADERS: symbol | null = learnOutHeaders();

/** The slot of Node's outgoing header store, checked on a probe response (see the file comment). */
function learnOutHeaders(): symbol | null {
  try {
    const probe = new ServerResponse(new IncomingMessage(null as never));
    const slot = Object.getOwnPropertySymbols(probe).find((symbol) => symbol.description === 'kOutHeaders');
    if (slot === undefined) return null;
    const store = (): unknown => (probe as unknown as Record<symbol, unknown>)[slot];
    probe.setHeader('X-AmpCors-Probe', 'a');
    const map = store() as Record<string, unknown> | null;
    if (typeof map !== 'object' || map === null || Object.getPrototypeOf(map) !== null) return null;
    const entry = map['x-ampcors-probe'];
    if (!Array.isArray(entry) || entry[0] !== 'X-AmpCors-Probe' || entry[1] !== 'a' || probe.getHeader('x-ampcors-probe') !== 'a') return null;
    probe.removeHeader('X-AmpCors-Probe');
    return store() === map && map['x-ampcors-probe'] === undefined ? slot : null;
  } catch {
    return null;
  }
}

/**
 * A header of `res` (its name in lower case), as Node's `getHeader` returns
 * it: from Node's store when the slot is known and holds a map or `null`
 * (nothing set yet), else through `res.getHeader`.
 */
export function storedHeader(res: ServerResponse, name: string): StoredHeaderValue | undefined {
  const store = OUT_HEADERS === null ? undefined : (res as unknown as Record<symbol, unknown>)[OUT_HEADERS];
  if (store === null) return undefined;
  if (typeof store !== 'object') return res.getHeader(name);
  const entry = (store as Record<string, unknown>)[name];
  return Array.isArray(entry) ? (entry[1] as StoredHeaderValue) : undefined;
}
