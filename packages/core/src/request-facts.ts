/**
 * The request facts every adapter hands to core (SPEC §7): read once from
 * the framework's request, the same way in every adapter, so that no adapter
 * can read a header another one ignores.
 */
import type { NormalizedCorsOptions } from './cors-options.js';
import type { CorsRequest } from './cors-plan.js';
import { type OriginRewriter, originRewriter } from './asked-origin.js';
import { sourceOriginOfUrl } from './source-origin.js';

/** Reads one request header by its lower-case name: its value, or `null`/`undefined` when absent. */
export type HeaderLookup = (name: string) => string | null | undefined;

/** The header map of a Node `IncomingMessage` (and of Fastify's request): repeated headers may be arrays. */
export type NodeHeaders = Readonly<Record<string, string | readonly string[] | undefined>>;

/**
 * The {@link CorsRequest} of a request, from its method, its URL (a path
 * with its query, or an absolute URL) and a header lookup.
 *
 * @param preflight - `false` answers an `OPTIONS` as any other request (Fastify's `preflight: false`): `Access-Control-Request-Method` is not read.
 */
export function requestFacts(method: string, url: string, header: HeaderLookup, preflight = true): CorsRequest {
  return factsOf(method, url, header, callLookup, preflight);
}

/** A {@link HeaderLookup} asked for one header. */
function callLookup(lookup: HeaderLookup, name: string): string | null | undefined {
  return lookup(name);
}

/**
 * The facts of a request whose headers `read(headers, name)` reads: a plain
 * function and its headers, not a closure made per request.
 */
function factsOf<H>(method: string, url: string, headers: H, read: (headers: H, name: string) => string | null | undefined, preflight: boolean): CorsRequest {
  // Only an OPTIONS request is ever answered as a preflight (SPEC §7): the preflight headers of any other are never read.
  // The names read here have a twin in FACT_HEADERS below: keep in step.
  const options = method === 'OPTIONS' || method.toUpperCase() === 'OPTIONS';
  return {
    method,
    origin: read(headers, 'origin') ?? null,
    ampSameOrigin: read(headers, 'amp-same-origin') ?? null,
    requestMethod: preflight && options ? (read(headers, 'access-control-request-method') ?? null) : null,
    requestHeaders: options ? (read(headers, 'access-control-request-headers') ?? null) : null,
    requestPrivateNetwork: options ? (read(headers, 'access-control-request-private-network') ?? null) : null,
    emailSender: read(headers, 'amp-email-sender') ?? null,
    sourceOrigin: sourceOriginOfUrl(url),
    secFetchSite: read(headers, 'sec-fetch-site') ?? null,
  };
}

/**
 * A header of a Node header map, a repeated header's values joined with
 * `, ` (as HTTP folds them), or `null`.
 */
export function nodeHeader(headers: NodeHeaders, name: string): string | null {
  const value = headers[name];
  if (value === undefined) return null;
  return typeof value === 'string' ? value : value.join(', ');
}

/**
 * The {@link CorsRequest} of a Node request (Express, Koa, Fastify's raw
 * request). `url` is the URL as the client sent it (Express's `originalUrl`,
 * Koa's `ctx.originalUrl`): a mounted router's rewritten `req.url` may have
 * lost nothing of the query, but the original is what the client signed.
 */
export function nodeRequestFacts(
  req: { readonly method?: string; readonly url?: string; readonly headers: NodeHeaders },
  url?: string,
  preflight = true,
): CorsRequest {
  // Read with `Reflect.get` (see "Why a Node request's properties are read with `Reflect.get`" below): the same values as `req.method`, `req.url`, `req.headers`.
  const method = (Reflect.get(req, 'method') as string | undefined) ?? 'GET';
  const target = url ?? (Reflect.get(req, 'url') as string | undefined) ?? '/';
  // Only an OPTIONS request's raw lines are read: a preflight is where the parse is saved (the middleware answers it); any
  // other request's handler parses `req.headers` anyway (Express's `res.send` does, for freshness), so the checks would add.
  const lines = method === 'OPTIONS' ? unparsedHeaderLines(req) : null;
  return lines === null
    ? factsOf(method, target, Reflect.get(req, 'headers') as NodeHeaders, nodeHeader, preflight)
    : factsOf(method, target, lines, rawHeader, preflight);
}

/*
 * Why a Node request's properties are read with `Reflect.get` here (and in
 * the Express adapter): Express gives every request (and response) a hidden
 * class of its own (it sets the prototype, then adds properties), so a
 * property access `req.name` finds no handler in V8's caches for it and goes
 * through the runtime, which builds one: about 0.3–0.5 µs per name and
 * request (Express 5, measured). `Reflect.get` looks the name up in the
 * object's descriptors without building a handler: about 0.06 µs on such a
 * request, and within 0.01 µs of `req.name` on a request of a shared hidden
 * class (Koa's, Fastify's). Same lookup, same getter calls, same value.
 */

/*
 * Node's `IncomingMessage` keeps its header lines raw (`req.rawHeaders`) and
 * builds `req.headers` from them on first access: about 0.3 µs for four
 * headers, paid by the middleware alone when nothing else reads them: a
 * preflight it answers. Any other request goes on to a handler that parses
 * them anyway (Express's `res.send` does, for freshness; so do body parsers,
 * cookies, compression), where the checks below would only add (about
 * 0.2 µs per Express GET, measured), so only an `OPTIONS` request is read
 * raw. While its lines are unparsed, the few headers a decision needs are
 * read from them instead, exactly as Node's getter would build them: names
 * compared as `String.prototype.toLowerCase` lowers them, and repeats of
 * every header read here joined with `, ` in order (a repeated `Origin`
 * stays invalid).
 *
 * Whether the lines are unparsed is Node's own state, read (never written)
 * from the request's `kHeaders` slot; its `kHeadersCount` slot says how many
 * lines Node would parse (`maxHeadersCount` may leave some out). Both are
 * learned once, from the prototype that holds Node's lazy `headers` accessor,
 * and only after that accessor, run on a probe, behaved as described above.
 * Anything else (a parsed or replaced map, a shadowed or overridden
 * `headers`, truncated or non-string lines, another runtime or Node version)
 * reads `req.headers` as before.
 */

/** Node's `IncomingMessage` header slots (see above). */
interface LazyHeaders {
  /** The prototype holding Node's lazy `headers` accessor (`IncomingMessage.prototype`). */
  readonly owner: object;
  /** The instance slot of the parsed map (falsy until parsed). */
  readonly parsed: symbol;
  /** The instance slot of the number of raw entries Node parses. */
  readonly count: symbol;
  /** The `_addHeaderLine` the accessor ran with on the probe (a request class or a patch with another one parses differently). */
  readonly addHeaderLine: unknown;
  /** Node's `headers` getter (a prototype on the way may define another after its first request). */
  readonly getter: unknown;
}

/** `Object.prototype.__lookupGetter__`, taken once (a request cannot shadow it): the getter `headers` resolves to, without a descriptor object. */
const lookupGetter = (Object.prototype as unknown as { __lookupGetter__(this: object, name: string): unknown }).__lookupGetter__;

/** The slots once learned and checked; `null` before. */
let lazyHeaders: LazyHeaders | null = null;
/** Whether a request prototype's `headers` is Node's lazy accessor, unshadowed (remembered per prototype). */
const lazyPrototypes = new WeakMap<object, boolean>();
let lastPrototype: object | null = null;
let lastIsLazy = false;

/** The raw header lines of a Node request whose `headers` Node has not parsed yet, or `null` to read `req.headers`. */
function unparsedHeaderLines(req: object): readonly string[] | null {
  const prototype = Object.getPrototypeOf(req) as object | null;
  if (prototype === null) return null;
  if (prototype !== lastPrototype) {
    let lazy = lazyPrototypes.get(prototype);
    if (lazy === undefined) {
      lazy = isLazyPrototype(req, prototype);
      lazyPrototypes.set(prototype, lazy);
    }
    lastPrototype = prototype;
    lastIsLazy = lazy;
  }
  const slots = lazyHeaders;
  if (!lastIsLazy || slots === null) return null;
  // Read with `Reflect.get` (see "Why a Node request's properties are read with `Reflect.get`" above). `headers` resolves to Node's getter only when no own property and no
  // prototype on the way defines another (`__lookupGetter__` stops at the first `headers` it finds, a data property too).
  if (Reflect.get(req, slots.parsed) || Reflect.get(req, '_addHeaderLine') !== slots.addHeaderLine || lookupGetter.call(req, 'headers') !== slots.getter)
    return null;
  const lines: unknown = Reflect.get(req, 'rawHeaders');
  if (!Array.isArray(lines) || Reflect.get(req, slots.count) !== lines.length || lines.length % 2 !== 0) return null;
  for (let i = 0; i < lines.length; i++) if (typeof lines[i] !== 'string') return null;
  return lines as string[];
}

/** Whether `headers`, seen from `prototype`, is Node's lazy accessor (learning Node's slots from `req` the first time). */
function isLazyPrototype(req: object, prototype: object): boolean {
  let owner: object | null = prototype;
  while (owner !== null && !Object.hasOwn(owner, 'headers')) owner = Object.getPrototypeOf(owner) as object | null;
  if (owner === null) return false;
  lazyHeaders ??= learnLazyHeaders(req, owner);
  return lazyHeaders !== null && lazyHeaders.owner === owner;
}

/**
 * A header of every kind read by {@link factsOf}, repeated on the probe of
 * {@link learnLazyHeaders}. Twin of the names factsOf reads: keep in step
 * (node-request-facts.test.ts checks every name factsOf asks for against Node).
 */
const FACT_HEADERS = [
  'origin',
  'amp-same-origin',
  'access-control-request-method',
  'access-control-request-headers',
  'access-control-request-private-network',
  'amp-email-sender',
  'sec-fetch-site',
];

/** Node's slots, from a request and the prototype owning its `headers`, if that accessor parses as described above; else `null`. */
function learnLazyHeaders(req: object, owner: object): LazyHeaders | null {
  let parsed: symbol | undefined;
  let count: symbol | undefined;
  for (const symbol of Object.getOwnPropertySymbols(req)) {
    if (symbol.description === 'kHeaders') parsed = symbol;
    else if (symbol.description === 'kHeadersCount') count = symbol;
  }
  const accessor = Object.getOwnPropertyDescriptor(owner, 'headers');
  if (parsed === undefined || count === undefined || typeof accessor?.get !== 'function') return null;
  try {
    // The probe: each fact header twice (odd case, an empty value), one line past the count, nothing parsed yet.
    const lines: string[] = [];
    for (const name of FACT_HEADERS) lines.push(name.toUpperCase(), 'a', name, '');
    const probe = Object.create(owner) as Record<PropertyKey, unknown>;
    probe[parsed] = null;
    probe[count] = lines.length;
    probe.rawHeaders = [...lines, 'origin', 'b'];
    const headers = accessor.get.call(probe) as Record<string, unknown> | null;
    if (headers === null || typeof headers !== 'object' || probe[parsed] !== headers) return null;
    for (const name of FACT_HEADERS) if (headers[name] !== 'a, ') return null;
    return { owner, parsed, count, addHeaderLine: probe._addHeaderLine, getter: accessor.get };
  } catch {
    return null;
  }
}

/**
 * A header from raw Node header lines (names and values, alternating), as
 * Node's `req.headers` holds it, or `null`. A name of another length is
 * skipped uncompared: lowering never shortens a string, and lengthens it only
 * by adding U+0307, which no header name holds.
 */
function rawHeader(lines: readonly string[], name: string): string | null {
  let value: string | null = null;
  for (let i = 0; i < lines.length; i += 2) {
    const field = lines[i] as string;
    if (field.length === name.length && (field === name || field.toLowerCase() === name))
      value = value === null ? (lines[i + 1] as string) : `${value}, ${lines[i + 1] as string}`;
  }
  return value;
}

/**
 * The options that make a decision ignore a request header, so that
 * {@link fetchRequestFacts} need not read it (each `Headers.get` costs about
 * 0.1 µs): `AMP-Email-Sender` matters only with AMP for Email
 * (`emailSenders` not `null`), `Access-Control-Request-Private-Network`
 * only with `privateNetworkAccess`. A header not read is a fact `null`, as if
 * absent: what these options make of it anyway.
 * Twin of the reads of `emailSender` in amp-email.ts (emailSenderOf) and of
 * `requestPrivateNetwork` in cors-plan.ts (rememberedPlan, allowedPlan): keep in step.
 */
export type FactsOptions = Pick<NormalizedCorsOptions, 'emailSenders' | 'privateNetworkAccess'>;

/**
 * The {@link CorsRequest} of a Fetch API `Request` (the Fetch adapter, Hono).
 *
 * @param options - the options the facts are decided under: headers they ignore are not read (see {@link FactsOptions}); without them every header is read.
 */
export function fetchRequestFacts(
  request: {
    readonly method: string;
    readonly url: string;
    readonly headers: FetchHeaders;
  },
  options?: FactsOptions,
): CorsRequest {
  const read =
    options === undefined
      ? fetchHeader
      : options.emailSenders === null
        ? options.privateNetworkAccess
          ? fetchHeaderButEmail
          : fetchHeaderButEmailAndPrivateNetwork
        : options.privateNetworkAccess
          ? fetchHeader
          : fetchHeaderButPrivateNetwork;
  return factsOf(request.method, request.url, request.headers, read, true);
}

/** The part of a Fetch API `Headers` read here. */
type FetchHeaders = { get(name: string): string | null };

/** A header of a Fetch API `Headers`. */
function fetchHeader(headers: FetchHeaders, name: string): string | null {
  return headers.get(name);
}

/** {@link fetchHeader}, but `AMP-Email-Sender` not read (no AMP for Email). */
function fetchHeaderButEmail(headers: FetchHeaders, name: string): string | null {
  return name === 'amp-email-sender' ? null : headers.get(name);
}

/** {@link fetchHeader}, but `Access-Control-Request-Private-Network` not read (no `privateNetworkAccess`). */
function fetchHeaderButPrivateNetwork(headers: FetchHeaders, name: string): string | null {
  return name === 'access-control-request-private-network' ? null : headers.get(name);
}

/** {@link fetchHeader}, but neither `AMP-Email-Sender` nor `Access-Control-Request-Private-Network` read. */
function fetchHeaderButEmailAndPrivateNetwork(headers: FetchHeaders, name: string): string | null {
  return name === 'amp-email-sender' || name === 'access-control-request-private-network' ? null : headers.get(name);
}

/** True when `value` is a Promise or any other thenable (a verdict source or a callback may answer either way). */
export function isThenable<T>(value: T | PromiseLike<T>): value is PromiseLike<T> {
  return typeof (value as { then?: unknown } | null)?.then === 'function';
}

/** What {@link nodeRequestAbout} reads of a Node (Express) request. */
interface NodeLikeRequest {
  readonly headers?: Readonly<Record<string, unknown>>;
  readonly rawHeaders?: readonly string[];
  readonly headersDistinct?: Readonly<Record<string, unknown>> | null;
  readonly url?: unknown;
  readonly originalUrl?: unknown;
  readonly res?: unknown;
}

/** An own, writable, enumerable property (as the real request's are). */
function ownValue(value: unknown): PropertyDescriptor {
  return { value, writable: true, enumerable: true, configurable: true };
}

/** A header value (a string, or a repeated header's strings) about the asked origin. */
function headerValueAbout(rewrite: OriginRewriter, name: string, value: unknown): unknown {
  if (typeof value === 'string') return rewrite.header(name, value);
  return Array.isArray(value) ? value.map((item: unknown) => (typeof item === 'string' ? rewrite.header(name, item) : item)) : value;
}

/** A header map (`{ name: value }`, names in lower case) about the asked origin, its `origin` entry `origin`. */
function headerMapAbout(headers: Readonly<Record<string, unknown>> | undefined, rewrite: OriginRewriter | null, origin: unknown): Record<string, unknown> {
  const copy: Record<string, unknown> = { ...headers };
  if (rewrite !== null) for (const name of Object.keys(copy)) if (name !== 'origin') copy[name] = headerValueAbout(rewrite, name, copy[name]);
  copy['origin'] = origin;
  return copy;
}

/**
 * A Node (`IncomingMessage`, Express) request made about another `Origin`
 * (the guard's question; asked-origin.ts says why and how): an object
 * inheriting from `req` in which the asked origin shows wherever the real
 * one did. What the delegate writes on it stays on it.
 *
 * 1. `headers`: a copy with `origin` replaced, and every other value
 *    rewritten (the `Referer`, `X-Forwarded-*`, custom headers; never
 *    `Host` nor `Cookie`). Express's `req.get` and `req.header` read
 *    `this.headers` (Express 4 and 5).
 * 2. `rawHeaders` likewise, every `Origin` line's value replaced, and
 *    `headersDistinct` (Node keeps that map on the real request once read,
 *    so an inherited one would still say the real `Origin`).
 * 3. `url` and Express's `originalUrl`: their path segments and query
 *    parameters rewritten (Express 5's `req.query` and `req.path`, and
 *    Koa's views, re-read them); Express 4's own `req.query` object and the
 *    route's `req.params`, each replaced only where it shows the real origin.
 * 4. Express's `req.res`: a view of the response whose `req` is this
 *    question (`req.res.req.headers.origin` is the asked origin).
 *
 * When the real `Origin` is no canonical origin, only the `Origin` header
 * is replaced.
 *
 * @param req - the request
 * @param origin - the `Origin` the copy carries
 * @returns the request about `origin`
 */
export function nodeRequestAbout<R extends object>(req: R, origin: string): R {
  const real = req as R & NodeLikeRequest;
  const realHeaders = real.headers;
  const realOrigin = realHeaders?.['origin'];
  const rewrite = originRewriter(typeof realOrigin === 'string' ? realOrigin : null, origin);
  // 1. and 2. The headers.
  const headers = headerMapAbout(realHeaders, rewrite, origin);
  const properties: PropertyDescriptorMap = { headers: ownValue(headers) };
  const raw = real.rawHeaders;
  if (Array.isArray(raw))
    properties['rawHeaders'] = ownValue(
      raw.map((line: unknown, at) => {
        if (at % 2 === 0 || typeof line !== 'string') return line;
        const name = String(raw[at - 1]).toLowerCase();
        if (name === 'origin') return origin;
        // A header sent once is already rewritten in `headers`.
        return rewrite === null ? line : realHeaders?.[name] === line ? (headers[name] as string) : rewrite.header(name, line);
      }),
    );
  const distinct = real.headersDistinct;
  if (typeof distinct === 'object' && distinct !== null) properties['headersDistinct'] = ownValue(headerMapAbout(distinct, rewrite, [origin]));
  // 3. The URL, the query and the route's parameters, where they show the real origin.
  if (rewrite !== null) {
    for (const name of ['url', 'originalUrl'] as const) {
      const url = real[name];
      const about = typeof url === 'string' ? rewrite.url(url) : url;
      if (about !== url) properties[name] = ownValue(about);
    }
    for (const name of ['query', 'params'] as const) {
      if (!Object.hasOwn(real, name)) continue;
      const value: unknown = (real as Record<string, unknown>)[name];
      const about = rewrite.deep(value);
      if (about !== value) properties[name] = ownValue(about);
    }
  }
  const about = Object.create(req, properties) as R;
  // 4. Express's link from the response back to the request.
  const res = real.res;
  if (typeof res === 'object' && res !== null) Object.defineProperty(about, 'res', ownValue(Object.create(res, { req: { value: about } }) as object));
  return about;
}
