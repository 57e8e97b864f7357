/**
 * `req.ampCors` without a new hidden class per request. A property added to
 * Express's request object costs about 2 µs per request on Express 5 (CPU
 * time, in process; more than everything else ampcors does for a GET), so
 * the verdict is kept in a WeakMap and read through one `ampCors` accessor
 * defined, once, on the base prototype of Express's requests
 * (`express.request`, which every app and sub-app of that Express inherits
 * from). A request whose prototype chain has no such base (plain
 * `node:http`) gets an own property: Node's `IncomingMessage.prototype` is
 * never changed.
 */
import { IncomingMessage } from 'node:http';
import type { Verdict } from '@ampcors/core';

const verdicts = new WeakMap<object, Verdict | undefined>();
/** The request prototypes already looked at (the accessor is defined on their base at most once). */
const seen = new WeakSet<object>();

const accessor: PropertyDescriptor = {
  configurable: true,
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

/** The request prototype of the previous call (most applications have one: no WeakSet look-up per request). */
let lastProto: object | null = null;

/** Sets `req.ampCors` to `verdict` (see the file comment). */
export function attachVerdict(req: IncomingMessage & { ampCors?: Verdict }, verdict: Verdict): void {
  const proto = Object.getPrototypeOf(req) as object | null;
  if (proto !== lastProto) {
    lastProto = proto;
    if (proto !== null && !seen.has(proto)) {
      seen.add(proto);
      const base = expressBase(proto);
      // Another copy of this package may have defined it already: its accessor serves both.
      if (base !== null && !Object.hasOwn(base, 'ampCors')) Object.defineProperty(base, 'ampCors', accessor);
    }
  }
  req.ampCors = verdict;
}
