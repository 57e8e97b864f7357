/**
 * `req.ampCors` without a new hidden class per request. Express sets each
 * request's prototype and then adds properties to it, so V8 gives every
 * request a hidden class (and descriptor array) of its own, made anew for
 * each property added: one more, string- or symbol-keyed, costs about 2 µs
 * per request on Express 5 (CPU time, in process, the whole app: a symbol
 * key measured 2.1–2.4 µs above this WeakMap per GET; more than everything
 * else ampcors does for a GET), so the verdict is kept in a WeakMap and
 * read through one `ampCors` accessor defined, once, on the base prototype
 * of Express's requests (`express.request`, which every app and sub-app of
 * that Express inherits from). A request whose prototype chain has no such
 * base (plain `node:http`) gets an own property: Node's
 * `IncomingMessage.prototype` is never changed.
 */
import { IncomingMessage } from 'node:http';
import type { Verdict } from '@ampcors/core';

const verdicts = new WeakMap<object, Verdict | undefined>();

/** The `ampCors` accessor, defined once on the Express base (non-configurable: no later definition can stand in for it). */
const accessor = {
  configurable: false,
  get(this: object) {
    return verdicts.get(this);
  },
  set(this: object, value: Verdict | undefined) {
    verdicts.set(this, value);
  },
};

/** The prototype in a request's chain whose own prototype is `IncomingMessage.prototype` (Express's `request`), or `null` for a plain `IncomingMessage`. */
function expressBase(proto: object | null): object | null {
  let base = proto;
  while (base !== null && Object.getPrototypeOf(base) !== IncomingMessage.prototype) base = Object.getPrototypeOf(base) as object | null;
  return base;
}

/**
 * Whether `ampCors`, read on a request of prototype `proto`, is this copy's
 * accessor (defining it on the Express base first, unless it is there):
 * then the verdict goes straight to the WeakMap, without a store looked up
 * along the prototype chain. Not when another copy of this package defined
 * it (its accessor serves both), nor when a prototype on the way defines its own.
 */
function readsOurAccessor(proto: object): boolean {
  const base = expressBase(proto);
  if (base === null) return false;
  // Another copy of this package may have defined it already: its accessor serves both.
  if (!Object.hasOwn(base, 'ampCors')) Object.defineProperty(base, 'ampCors', accessor);
  for (let on: object | null = proto; on !== base && on !== null; on = Object.getPrototypeOf(on) as object | null)
    if (Object.hasOwn(on, 'ampCors')) return false;
  return Object.getOwnPropertyDescriptor(base, 'ampCors')?.set === accessor.set;
}

/** Per request prototype: {@link readsOurAccessor} (decided, and the accessor defined, once). */
const ourAccessor = new WeakMap<object, boolean>();
/** The request prototype of the previous call and its answer (most applications have one: no look-up per request). */
let lastProto: object | null = null;
let lastOurs = false;

/**
 * Sets `req.ampCors` to `verdict` (see the file comment), unless `ended`
 * and no earlier ampCors gave the request a verdict: an answer ampCors ends
 * itself (a preflight's, a 403) runs no later middleware, and storing a
 * verdict costs about 1 µs per request on Express 5 (the WeakMap's insert
 * of a new key, measured in process), more than everything else ampCors
 * does for a preflight. `req.ampCors` then stays `undefined` (no verdict:
 * what an error handler or a `finish` listener sees if ending fails or
 * after it). An earlier ampCors's verdict is always replaced, ended or not:
 * a later reader never sees an outer policy's allow on a request an inner
 * policy denied (core's nested-policies.ts, 1.).
 *
 * @returns true when an earlier ampCors had given the request its verdict (core's nested-policies.ts, 1.)
 */
export function attachVerdict(req: IncomingMessage & { ampCors?: Verdict }, verdict: Verdict, ended = false): boolean {
  const proto = Object.getPrototypeOf(req) as object | null;
  if (proto !== lastProto) {
    let ours = proto === null ? false : ourAccessor.get(proto);
    if (ours === undefined) {
      ours = readsOurAccessor(proto as object);
      ourAccessor.set(proto as object, ours);
    }
    lastProto = proto;
    lastOurs = ours;
  }
  // An own `ampCors` (an earlier middleware's) is assigned as before.
  let earlier: boolean;
  if (lastOurs && !Object.hasOwn(req, 'ampCors') && !Object.hasOwn(proto as object, 'ampCors')) {
    // `has` of a request never stored (no identity hash yet) answers without inserting anything.
    earlier = verdicts.has(req);
    if (earlier || !ended) verdicts.set(req, verdict);
  } else {
    earlier = req.ampCors !== undefined;
    if (earlier || !ended) req.ampCors = verdict;
  }
  return earlier;
}
