/**
 * The record of what ampcors wrote into a Fetch API `Response` (the Fetch
 * and Hono adapters; one record, so that a Hono app inside `withAmpCors`,
 * or a `withAmpCors` handler mounted in a Hono app, sees the other's
 * writes). A Response ampcors wrote into is noted on itself
 * ({@link noteWritten}); a layer meeting a noted Response decides with
 * {@link answerOver} (the rule is in nested-policies.ts, 3.).
 */
import { CORS_RESPONSE_HEADERS, realm, sharedInRealm } from './nested-policies.js';
import { appendVary } from './vary.js';

/**
 * What ampcors wrote into a Response: the headers it set (`pairs`: usually
 * a plan's own list, shared), `Vary` as it was and as ampcors left it
 * (`undefined`: not written), the policy that wrote it (as the adapter
 * names it), when ({@link writesSoFar}'s count after the write), and for
 * which `Origin`.
 */
export interface WrittenNote {
  readonly pairs: ReadonlyArray<readonly [string, string]>;
  readonly varyBefore: string | null | undefined;
  readonly varyWritten: string | undefined;
  readonly policy: object;
  readonly at: number;
  /** The `Origin` of the request it was written for (`null`: none). */
  readonly origin: string | null;
}

/**
 * The counts of writes, one set per realm (nested-policies.ts, 6.: every
 * copy of ampcors counts in the same): slots 0 to 64, the writes counted
 * by the `Origin` of the request they were made for (a hash of the value's
 * length, last character and up to 8 others spread over it; `null` in 64):
 * bounded whatever Origins an attacker sends; two Origins may share a slot,
 * a write is never left out of its own. Slot {@link ALL}: how many times
 * ampcors wrote into a Response (each write's {@link WrittenNote.at}).
 */
const byOrigin = sharedInRealm('written-responses/counts', () => new Float64Array(66));
/** The slot of {@link byOrigin} that counts every write. */
const ALL = 65;
/** Added to {@link writesFor}'s answer at each read once {@link realm} is mixed (nested-policies.ts, 6.). */
let unsure = 0;

/** The count of writes so far: a layer reads it before its handler runs, so a note with a greater `at` was written while the handler ran. */
export function writesSoFar(): number {
  return byOrigin[ALL] as number;
}

/** Counts a write (for a request whose `Origin` is `origin`) and returns its {@link WrittenNote.at}. */
function countWrite(origin: string | null): number {
  const slot = slotOf(origin);
  byOrigin[slot] = (byOrigin[slot] as number) + 1;
  return (byOrigin[ALL] = (byOrigin[ALL] as number) + 1);
}
/** The last Origin hashed, and its slot (each copy its own: the hash is the same in every copy of one realm version): the same Origin again (a busy partner) is not hashed again (4 ns, else 13). */
let lastOrigin: string | null = null;
let lastSlot = 64;
/** The slot of `origin` in {@link byOrigin}. */
function slotOf(origin: string | null): number {
  if (origin === lastOrigin) return lastSlot;
  if (origin === null) return 64;
  const length = origin.length;
  let hash = length;
  for (let i = 0; i < length; i += (length >> 3) + 1) hash = Math.imul(hash ^ origin.charCodeAt(i), 0x01000193);
  hash = Math.imul(hash ^ origin.charCodeAt(length - 1), 0x01000193);
  lastOrigin = origin;
  return (lastSlot = (hash ^ (hash >>> 15)) & 63);
}

/**
 * The count of writes so far for requests whose `Origin` is `origin` (or
 * one sharing its slot): a layer reads it before its handler runs; a
 * greater count after it ran means ampcors wrote, while the handler ran,
 * an answer to a request with that `Origin` (nested-policies.ts, 5.).
 */
export function writesFor(origin: string | null): number {
  const count = byOrigin[slotOf(origin)] as number;
  // A copy of ampcors of another version in this realm, whose writes are not counted here: every read is greater than the
  // one before (fail closed: nested-policies.ts, 6.).
  return realm.mixed ? count + ++unsure : count;
}

/**
 * Extends `Vary` (by `varyNames`; `varyAlone` is its value when there is
 * none yet, `null` to work it out), then sets `pairs`: on immutable headers
 * the first `set` throws, so nothing is half-applied. Returns what it wrote
 * (for a request whose `Origin` is `origin`).
 */
export function writePlan(
  into: Headers,
  pairs: ReadonlyArray<readonly [string, string]>,
  varyNames: readonly string[],
  varyAlone: string | null,
  policy: object,
  origin: string | null,
): WrittenNote {
  let varyBefore: string | null | undefined;
  let varyWritten: string | undefined;
  if (varyNames.length > 0) {
    varyBefore = into.get('vary');
    varyWritten = varyBefore === null && varyAlone !== null ? varyAlone : appendVary(varyBefore, varyNames);
    into.set('vary', varyWritten);
  }
  // Indexed, not `for (const [name, value] of pairs)`: that destructuring ran the array iterator for every pair, about 0.7 kB
  // of garbage per request on the Fetch adapter's path (V8's sampling heap profiler, session 17).
  for (let i = 0; i < pairs.length; i++) {
    const pair = pairs[i] as readonly [string, string];
    into.set(pair[0], pair[1]);
  }
  return { pairs, varyBefore, varyWritten, policy, at: countWrite(origin), origin };
}

/**
 * A base whose constructor returns the object it is given, so that a
 * subclass's private fields land on that object (here a Response's note; in
 * the Fetch adapter, a Request's result).
 */
export class Carrier {
  constructor(target: object) {
    return target;
  }
}

/**
 * The policy of the ampcors layer that decided a Request last, in a field
 * private to this class (the base constructor returns the Request, which
 * gets the field: no per-request table entry; no code outside can read or
 * forge it). The Fetch adapter marks every Request it lets through (its
 * own Request stamp extends this class: one construction) or stops with a
 * denial; the Hono adapter marks a Request already marked (none on its usual
 * path). A layer finding, after its handler ran, another mark than the one
 * it left knows an inner layer decided this very Request (nested-policies.ts,
 * 5.a). Requests that take no new property keep theirs in {@link deciders}.
 *
 * Twin of `Written` below (a Response's note): keep in step. Two classes on
 * purpose: each holds its mark under a private name of its own (one shared
 * class would let a Request's decider be read as a Response's note, and the
 * reverse), and a class factory making both, which would give each its own
 * name, publishes this exported, extended class (the Fetch adapter's
 * `Stamped`) with a public constructor and a `"__#private@#value"` property
 * in its declarations, and shares one set of inline caches between the two
 * marks on the Fetch adapter's path.
 */
class DecidedRequestOfCopy extends Carrier {
  #by: object;
  protected constructor(request: object, policy: object) {
    super(request);
    this.#by = policy;
  }
  /** Marks `request` as decided by `policy` (an earlier mark replaced). */
  static mark(request: object, policy: object): void {
    if (#by in request) (request as DecidedRequestOfCopy).#by = policy;
    else if (Object.isExtensible(request)) new DecidedRequestOfCopy(request, policy);
    else deciders.set(request, policy);
  }
  /** The policy that decided `request` last, if any. */
  static by(request: object): object | undefined {
    return #by in request ? (request as DecidedRequestOfCopy).#by : deciders.get(request);
  }
}
/** Marks of requests that take no new property. */
const deciders = new WeakMap<object, object>();
/**
 * The class of {@link DecidedRequestOfCopy} of the first copy of ampcors loaded in this realm (nested-policies.ts, 6.):
 * the mark a layer of any copy leaves is the one every other reads (its table of marks with it).
 */
export const DecidedRequest: typeof DecidedRequestOfCopy = sharedInRealm('written-responses/DecidedRequest', () => DecidedRequestOfCopy);

/**
 * The {@link WrittenNote} of a Response, in a field private to this class
 * (the base constructor returns the Response, which gets the field; cheaper
 * than a `WeakMap` entry; no code outside can read or forge it). Objects
 * that take no new property keep theirs in {@link notes}.
 *
 * Twin of {@link DecidedRequest} above (a Request's mark): keep in step; it
 * says why they are two.
 */
class WrittenOfCopy extends Carrier {
  #note: WrittenNote;
  private constructor(target: object, note: WrittenNote) {
    super(target);
    this.#note = note;
  }
  /** Gives `target` its note. */
  static give(target: object, note: WrittenNote): void {
    if (#note in target) (target as WrittenOfCopy).#note = note;
    else if (Object.isExtensible(target)) new WrittenOfCopy(target, note);
    else notes.set(target, note);
  }
  /** The note given to `target`, if any. */
  static of(target: object): WrittenNote | undefined {
    return #note in target ? (target as WrittenOfCopy).#note : notes.get(target);
  }
}
/** Notes of objects that take no new property. */
const notes = new WeakMap<object, WrittenNote>();
/** The class of {@link WrittenOfCopy} of the first copy of ampcors loaded in this realm (nested-policies.ts, 6.), as {@link DecidedRequest}. */
const Written: typeof WrittenOfCopy = sharedInRealm('written-responses/Written', () => WrittenOfCopy);

/** Notes on `response` what ampcors wrote into it (a {@link writePlan} result). */
export function noteWritten(response: object, note: WrittenNote): void {
  Written.give(response, note);
}

/**
 * Notes on `response`, which ampcors made itself (a preflight's answer, a
 * 403) with `pairs` and `Vary: vary` (`null`: none), that `policy` wrote
 * them for a request whose `Origin` is `origin`.
 */
export function noteMade(response: object, pairs: ReadonlyArray<readonly [string, string]>, vary: string | null, policy: object, origin: string | null): void {
  const at = countWrite(origin);
  Written.give(
    response,
    vary === null
      ? { pairs, varyBefore: undefined, varyWritten: undefined, policy, at, origin }
      : { pairs, varyBefore: null, varyWritten: vary, policy, at, origin },
  );
}

/** What ampcors wrote into `response`, if it did (`undefined` for anything that is not an object). */
export function writtenNoteOf(response: unknown): WrittenNote | undefined {
  return typeof response === 'object' && response !== null ? Written.of(response) : undefined;
}

/**
 * `headers` without what ampcors wrote (`note`): each header still holding
 * what ampcors set is removed (a value the handler had set under the same
 * name, which ampcors replaced, is not put back: ampcors's plan decides that
 * name), and `Vary`, if still as ampcors left it, is put back as it was; a
 * name the handler changed since is left as it is.
 */
export function unwrite(headers: Headers, { pairs, varyBefore, varyWritten }: WrittenNote): Headers {
  for (const [name, written] of pairs) if (headers.get(name) === written) headers.delete(name);
  if (varyWritten !== undefined && headers.get('vary') === varyWritten) {
    if (typeof varyBefore === 'string') headers.set('vary', varyBefore);
    else headers.delete('vary');
  }
  return headers;
}

/**
 * The prototype a Fetch API Response of this runtime ends its chain with
 * (below `Object.prototype`): the runtime's own `Response.prototype`, even
 * when `@hono/node-server` replaced the global `Response` with its own
 * class (which extends it) before this module was loaded. `null` where
 * there is no `Response`.
 */
const RUNTIME_RESPONSE: object | null = runtimeResponsePrototype();
/** Finds {@link RUNTIME_RESPONSE}. */
function runtimeResponsePrototype(): object | null {
  if (typeof Response !== 'function') return null;
  let proto = Response.prototype as object;
  for (let up = Object.getPrototypeOf(proto) as object | null; up !== null && up !== Object.prototype; up = Object.getPrototypeOf(up) as object | null)
    proto = up;
  return proto;
}

/**
 * What an `@hono/node-server` Response (the class that server puts in place
 * of the global `Response`) made with a string, bytes, a Blob or a stream
 * keeps under a symbol of its own, described `cache`, until something reads
 * its body (or `clone()`, `text()`, `statusText` …): `[status, body,
 * headers]`, what that server sends without making a real Response. Its
 * `headers` are those, not the ones it was made with; the real Response,
 * when made, is made from what it was made with (a `Headers` given to it
 * are the same object; not so a plain object, an array, none, or another
 * such Response). `undefined` for any other Response: one prototype read
 * for the runtime's own.
 */
function lightweightCache(response: Response): readonly unknown[] | undefined {
  if (Object.getPrototypeOf(response) === RUNTIME_RESPONSE) return undefined;
  for (const symbol of Object.getOwnPropertySymbols(response)) {
    if (symbol.description !== 'cache') continue;
    const cached: unknown = (response as unknown as Record<symbol, unknown>)[symbol];
    if (Array.isArray(cached) && cached.length === 3) return cached;
  }
  return undefined;
}

/**
 * The body of an `@hono/node-server` Response made with a string, bytes or
 * a Blob ({@link lightweightCache}), which that server sends again on every
 * request without reading a stream; `undefined` for any other Response.
 * Reading such a Response's `body` would make it a stream, read once.
 */
function bodyOfLightweight(response: Response): BodyInit | undefined {
  const body: unknown = lightweightCache(response)?.[1];
  return typeof body === 'string' || body instanceof Uint8Array || body instanceof Blob ? (body as BodyInit) : undefined;
}

/**
 * The Response the Fetch and Hono adapters write their plan into instead of
 * `response`: `response` itself, except for an `@hono/node-server` Response
 * not yet made real ({@link lightweightCache}), whose headers a later read
 * of its body (a layer's `new Response(res.body, res)`, `clone()`, hono's
 * `c.res = …`) would make again from what it was made with, losing what
 * ampcors wrote (attacker's review, session 17: a grant ampcors removed came
 * back; the `Vary` an outer layer reads as an inner one's answer was lost).
 * For that one, a Response of the same status and body with a copy of its
 * headers, made with them, so that they are the ones it is made real with
 * (still such a Response: that server sends it without a stream). Its
 * status text is not kept (that server does not send one for it either);
 * `response` is left as it was (a handler's Response sent again is not
 * written into). Throws for `null` and `undefined` (the adapter then
 * answers a plain 500).
 */
export function writableResponse(response: Response): Response {
  const cached = lightweightCache(response);
  if (cached === undefined) return response;
  return new Response(cached[1] as BodyInit | null, { status: cached[0] as number, headers: new Headers(response.headers) });
}

/**
 * A new Response with `response`'s status, status text, headers (every
 * `Set-Cookie`) and body, `response` left able to be sent: no body, a body
 * `@hono/node-server` sends again ({@link bodyOfLightweight}), or one branch
 * of its stream (`clone()`). Throws when it cannot be copied (a body already
 * read, a status `new Response` refuses).
 */
export function copyOf(response: Response): Response {
  const headers = new Headers(response.headers);
  const { status } = response;
  const constant = bodyOfLightweight(response);
  if (constant !== undefined) return new Response(constant, { status, headers });
  const { body, statusText } = response;
  return new Response(body === null ? null : response.clone().body, { status, statusText, headers });
}

/** Whether the pair `[name, value]` a note holds is a CORS grant that `pairs` (a plan's) does not make with the same value. */
function grantsBeyond(name: string, value: string, pairs: ReadonlyArray<readonly [string, string]>): boolean {
  const lower = name.toLowerCase();
  if (!CORS_RESPONSE_HEADERS.includes(lower)) return false;
  for (const [planned, plannedValue] of pairs) if (planned === lower && plannedValue === value) return false;
  return true;
}

/**
 * The answer a layer (`policy`, which read {@link writesSoFar} as `since`
 * before its handler ran, for a request whose `Origin` is `origin`) gives
 * for a `response` ampcors wrote into (`seen`), its plan being `pairs` and
 * `varyNames` (`varyAlone` as {@link writePlan} takes it): nested-policies.ts, 3.
 *
 * 1. Written by another policy, for the same `Origin`, while this layer's
 *    handler ran (an inner layer that judged a rebuilt Request, or another
 *    request in flight on one cached Response): the more restrictive of
 *    the two. `response` itself when every CORS header the note set is one
 *    this plan sets with the same value; else a copy without those it does
 *    not (Vary extended).
 * 2. Else (this policy's own earlier write, one made before its handler
 *    ran, or for another `Origin`: a Response written for another request):
 *    a copy without what was written, this plan on it.
 *
 * A copy is noted as written by `policy`. Throws when `response` cannot be
 * copied (a body already read): the adapter answers a plain 500.
 */
export function answerOver(
  response: Response,
  seen: WrittenNote,
  policy: object,
  since: number,
  origin: string | null,
  pairs: ReadonlyArray<readonly [string, string]>,
  varyNames: readonly string[],
  varyAlone: string | null,
): Response {
  let copy: Response;
  let kept = pairs;
  if (seen.policy !== policy && seen.at > since && seen.origin === origin) {
    // 1. The more restrictive: what the note granted beyond this plan is withheld.
    kept = seen.pairs.filter(([name, value]) => !grantsBeyond(name, value, pairs));
    if (kept.length === seen.pairs.length) return response;
    copy = copyOf(response);
    for (const [name, value] of seen.pairs) if (grantsBeyond(name, value, pairs) && copy.headers.get(name) === value) copy.headers.delete(name);
  } else {
    // 2. Another request's answer: as it was before ampcors wrote into it.
    copy = copyOf(response);
    unwrite(copy.headers, seen);
  }
  Written.give(copy, writePlan(copy.headers, kept, varyNames, varyAlone, policy, origin));
  return copy;
}
