import { type EmailSender, emailSenderOf } from './amp-email.js';
import type { NormalizedCorsOptions } from './cors-options.js';
import { isAmpSameOrigin, TOKEN } from './cors-options.js';
import type { Verdict } from './verifier.js';

/** The request facts the AMP CORS protocol looks at; absent headers are `null` or `undefined`. */
export interface CorsRequest {
  /** The HTTP method. */
  readonly method: string;
  /** `Origin`. */
  readonly origin?: string | null;
  /** `AMP-Same-Origin`. */
  readonly ampSameOrigin?: string | null;
  /** `Access-Control-Request-Method`. */
  readonly requestMethod?: string | null;
  /** `Access-Control-Request-Headers`. */
  readonly requestHeaders?: string | null;
  /** `Access-Control-Request-Private-Network`. */
  readonly requestPrivateNetwork?: string | null;
  /** `AMP-Email-Sender` (AMP for Email v2). */
  readonly emailSender?: string | null;
  /** The `__amp_source_origin` query value (see `sourceOriginOfUrl`). */
  readonly sourceOrigin?: string | null;
  /**
   * `Sec-Fetch-Site`: only the exact value `same-origin` counts (the API's
   * own page; a forbidden header name, which no page can set).
   */
  readonly secFetchSite?: string | null;
}

/** What every plan holds (see {@link CorsPlan}): one plan in every adapter, so they cannot drift apart. */
interface PlanParts {
  /**
   * Headers to set, replacing any of the same name (never `Vary`): names in
   * lower case (`access-control-allow-origin`), as Node, Fastify, undici and
   * HTTP/2 store them (HTTP names are case-insensitive), so that no adapter
   * lowers them again per request. Every value is visible ASCII, space or
   * tab, so that no runtime refuses it.
   */
  readonly headers: ReadonlyArray<readonly [string, string]>;
  /**
   * Header names to append to `Vary` (see `appendVary`), never replacing it:
   * they are part of `Vary`'s value, so they keep their usual case (`Origin`).
   */
  readonly vary: readonly string[];
  /** The AMP for Email sender that was recognized, if the request is an AMP for Email request. */
  readonly email?: EmailSender;
}

/** A plan the adapter ends itself: a preflight's answer or a denial, with {@link EndPlan.status} and {@link EndPlan.body}. */
export interface EndPlan extends PlanParts {
  /** `preflight`: a CORS preflight answered here; `reject`: a denied request stopped here. */
  readonly kind: 'preflight' | 'reject';
  /** The adapter ends the response itself. */
  readonly handled: true;
  /** The status to end with. */
  readonly status: number;
  /** The body to end with (empty for a preflight). */
  readonly body: string;
}

/** A plan the adapter passes on: set the headers, then run the handler (its status and body are the handler's). */
export interface PassPlan extends PlanParts {
  /** `actual`: any request but a preflight; `preflight`: a preflight passed on (`preflightContinue`). */
  readonly kind: 'preflight' | 'actual';
  /** The handler runs. */
  readonly handled: false;
  /** Always 0: nothing to end with (kept so that every plan has one shape). */
  readonly status: 0;
  /** Always empty (kept so that every plan has one shape). */
  readonly body: '';
}

/** How an adapter must answer, the same in every adapter: `handled` tells an {@link EndPlan} from a {@link PassPlan}. */
export type CorsPlan = EndPlan | PassPlan;

/** The legacy response header answering `__amp_source_origin` (as `Access-Control-Expose-Headers` names it; a plan's header name is its lower case). */
export const AMP_SOURCE_ORIGIN_HEADER = 'AMP-Access-Control-Allow-Source-Origin';
/** {@link AMP_SOURCE_ORIGIN_HEADER} as a plan names it: in lower case, as every plan's header names. */
const AMP_SOURCE_ORIGIN_NAME = 'amp-access-control-allow-source-origin';

/** Longest `Access-Control-Request-Headers` value that is reflected. */
const MAX_REFLECTED_HEADERS_LENGTH = 2048;
/**
 * True for a header value every runtime accepts: Node's `validateHeaderValue`
 * and undici's `Headers` refuse CR, LF, NUL and (undici) anything above
 * U+00FF; a plan allows only visible ASCII, space and tab (issue #14). A
 * search for the first other character (about half the time of a loop over
 * the characters in JavaScript for an origin).
 */
function isHeaderValue(value: unknown): boolean {
  return typeof value === 'string' && !NOT_HEADER_VALUE.test(value);
}

/** Any character outside visible ASCII, space and tab. */
const NOT_HEADER_VALUE = /[^\t\x20-\x7e]/;

/** True for `OPTIONS` in any case (the usual upper-case spelling compared first; a copy only for another 7-character method). */
function isOptionsMethod(method: string): boolean {
  return method === 'OPTIONS' || (method.length === OPTIONS_LENGTH && method.toUpperCase() === 'OPTIONS');
}

const OPTIONS_LENGTH = 'OPTIONS'.length;

/** True for a CORS preflight: `OPTIONS` with `Origin` and `Access-Control-Request-Method`. */
export function isPreflight(request: CorsRequest): boolean {
  return isOptionsMethod(request.method) && !!request.origin && !!request.requestMethod;
}

/** Whether the plan answers `request` as a preflight: {@link isPreflight}, or any `OPTIONS` under a drop-in's `everyOptionsIsPreflight`. */
function answeredAsPreflight(request: CorsRequest, options: NormalizedCorsOptions): boolean {
  return options.everyOptionsIsPreflight === true ? isOptionsMethod(request.method) : isPreflight(request);
}

/**
 * The requested headers to reflect in `Access-Control-Allow-Headers`, minus
 * `AMP-Same-Origin` and the wildcard `*` (which would allow it); `null` when
 * the value is not a clean comma-separated list of header names (control
 * characters, CR/LF, oversized), so that nothing from the request is
 * reflected. Names are trimmed as `String.prototype.trim` trims.
 */
export function reflectableHeaders(requested: string | null | undefined): string[] | null {
  const value = reflectedHeadersValue(requested);
  // The names hold neither ',' nor whitespace: splitting the value gives them back.
  return value === null ? null : value === '' ? [] : value.split(', ');
}

/**
 * {@link reflectableHeaders} joined with `, `, as sent (`''` for none):
 * one pass over the characters, with no work per empty or skipped item; a
 * value already in that form (the usual `content-type`) is returned as it
 * is, without a copy. The result holds only HTTP token characters, `,` and
 * space: a valid header value by construction.
 */
function reflectedHeadersValue(requested: string | null | undefined): string | null {
  if (typeof requested !== 'string' || requested.length > MAX_REFLECTED_HEADERS_LENGTH) return null;
  let out = '';
  let same = true; // `out` equals `requested` up to the current item (nothing trimmed, skipped or re-spaced)
  let start = -1; // the current name's first character, or -1 before it
  let end = -1; // one past its last character, or -1 while it goes on
  let itemStart = 0; // the current item's first character (after the previous comma)
  for (let i = 0; i <= requested.length; i++) {
    const code = i < requested.length ? requested.charCodeAt(i) : COMMA;
    if (code === COMMA) {
      const stop = end < 0 ? i : end;
      const kept =
        start >= 0 &&
        !(stop - start === 1 && requested.charCodeAt(start) === STAR) &&
        !(stop - start === AMP_SAME_ORIGIN_LENGTH && isAmpSameOrigin(requested.slice(start, stop)));
      if (same) {
        // The value so far, as sent: each kept name exactly `, `-separated, nothing else.
        const expectedStart = itemStart === 0 ? 0 : itemStart + 1;
        same = kept && start === expectedStart && stop === i && (itemStart === 0 || requested.charCodeAt(itemStart) === SPACE);
        if (!same) out = requested.slice(0, itemStart === 0 ? 0 : itemStart - 1);
      }
      if (!same && kept) out = out === '' ? requested.slice(start, stop) : `${out}, ${requested.slice(start, stop)}`;
      start = -1;
      end = -1;
      itemStart = i + 1;
    } else if (isTrimmed(code)) {
      if (start >= 0 && end < 0) end = i;
    } else if (code < 0x80 && TCHAR[code] === 1 && (start < 0 || end < 0)) {
      if (start < 0) start = i;
    } else {
      // Not a token character, or a second name after whitespace in one item.
      return null;
    }
  }
  return same ? requested : out;
}

const COMMA = 0x2c;
const STAR = 0x2a;
const SPACE = 0x20;
const AMP_SAME_ORIGIN_LENGTH = 'amp-same-origin'.length;
/** 1 for each ASCII code of an HTTP token character (RFC 9110 §5.6.2). */
const TCHAR = Uint8Array.from({ length: 0x80 }, (_, code) => (TOKEN.test(String.fromCharCode(code)) ? 1 : 0));

/** The characters `String.prototype.trim` removes (ECMAScript WhiteSpace and LineTerminator). */
function isTrimmed(code: number): boolean {
  if (code < 0x80) return code === 0x20 || (code >= 0x09 && code <= 0x0d);
  return (
    code === 0xa0 ||
    code === 0x1680 ||
    (code >= 0x2000 && code <= 0x200a) ||
    code === 0x2028 ||
    code === 0x2029 ||
    code === 0x202f ||
    code === 0x205f ||
    code === 0x3000 ||
    code === 0xfeff
  );
}

// The `Vary` names of a plan, shared by every plan (frozen: adapters only read them).
const VARY_ACTUAL: readonly string[] = Object.freeze(['Origin']);
const VARY_PREFLIGHT: readonly string[] = Object.freeze(['Origin', 'Access-Control-Request-Headers']);
const VARY_ACTUAL_EMAIL: readonly string[] = Object.freeze(['Origin', 'AMP-Email-Sender']);
const VARY_PREFLIGHT_EMAIL: readonly string[] = Object.freeze(['Origin', 'Access-Control-Request-Headers', 'AMP-Email-Sender']);
const VARY_NONE: readonly string[] = Object.freeze([]);
const VARY_REQUEST_HEADERS: readonly string[] = Object.freeze(['Access-Control-Request-Headers']);

/** One header pair of a plan. */
type HeaderPair = readonly [string, string];

/**
 * The header pairs of a plan that depend on the options alone, made once per
 * options object (normalized options are read-only) and shared, frozen, by
 * every plan: nothing is joined, formatted or checked per request for them.
 */
interface PlanConstants {
  /** `Access-Control-Expose-Headers`, without and with the legacy source-origin header. */
  readonly expose: HeaderPair;
  readonly exposeWithSource: HeaderPair;
  /** `Access-Control-Allow-Methods`, or `null` when none is sent. */
  readonly methods: HeaderPair | null;
  /** Whether the request's headers are reflected (no `allowedHeaders` configured); else {@link allowHeaders}. */
  readonly reflectHeaders: boolean;
  /** The configured `Access-Control-Allow-Headers`, or `null` (reflected, or an empty list: none sent). */
  readonly allowHeaders: HeaderPair | null;
  /** `Access-Control-Max-Age`, or `null`. */
  readonly maxAge: HeaderPair | null;
  /** Step 5 for the constants, checked once: whether the expose values, and the preflight's values, are valid header values. */
  readonly actualValid: boolean;
  readonly preflightValid: boolean;
  /** The plans of recent allowed verdicts under these options (see {@link rememberedPlan}); made on first use. */
  plans: Map<Verdict, VerdictPlans> | null;
}

/**
 * The remembered plans of one allowed, frozen verdict: the plan of an actual
 * request, and the last preflight's with the request facts it depends on.
 */
interface VerdictPlans {
  actual: CorsPlan | undefined;
  preflight: CorsPlan | undefined;
  /** The preflight's `Access-Control-Request-Headers`, as sent. */
  requestHeaders: string | null | undefined;
  /** Whether the preflight answered Private Network Access. */
  privateNetwork: boolean;
}

/** Verdicts whose plans are remembered per options object; the memo starts again when full. */
const MAX_REMEMBERED_VERDICTS = 1024;
/** Longest `Access-Control-Request-Headers` whose preflight plan is remembered (a longer one is planned each time). */
const MAX_REMEMBERED_REQUEST_HEADERS = 256;

const planConstants = new WeakMap<NormalizedCorsOptions, PlanConstants>();

function pair(name: string, value: string): HeaderPair {
  return Object.freeze([name, value] as const);
}

/** The {@link PlanConstants} of `options`, made on first use. */
function constantsOf(options: NormalizedCorsOptions): PlanConstants {
  // The options of the last call first (an adapter plans with one options object): a comparison, not a lookup.
  if (options === lastOptions && lastConstants !== undefined) return lastConstants;
  let constants = planConstants.get(options);
  if (constants === undefined) {
    const exposed = options.exposedHeaders;
    const expose = pair('access-control-expose-headers', exposed.join(', '));
    const exposeWithSource = pair('access-control-expose-headers', [...exposed, AMP_SOURCE_ORIGIN_HEADER].join(', '));
    const methods = options.methods === '' ? null : pair('access-control-allow-methods', options.methods);
    const configured = options.allowedHeaders;
    const allowHeaders =
      configured === null || configured.length === 0 ? null : pair('access-control-allow-headers', configured.join(options.allowedHeadersSeparator ?? ', '));
    const maxAge = options.maxAge === null ? null : pair('access-control-max-age', String(options.maxAge));
    constants = Object.seal({
      expose,
      exposeWithSource,
      methods,
      reflectHeaders: configured === null,
      allowHeaders,
      maxAge,
      actualValid: isHeaderValue(expose[1]) && isHeaderValue(exposeWithSource[1]),
      preflightValid: [methods, allowHeaders, maxAge].every((header) => header === null || isHeaderValue(header[1])),
      plans: null,
    });
    planConstants.set(options, constants);
  }
  lastOptions = options;
  lastConstants = constants;
  return constants;
}

// The options and constants of the last {@link constantsOf} call (one pair: it keeps no other options alive).
let lastOptions: NormalizedCorsOptions | undefined;
let lastConstants: PlanConstants | undefined;

/**
 * Decides every CORS header of a response from the request facts, the core
 * verdict and the normalized options (SPEC §6–7). Pure and synchronous.
 *
 * 0. The `any-origin` mode (an adapter given no options): the same answer
 *    for every request, whatever the verdict: the literal
 *    `Access-Control-Allow-Origin: *`, no credentials, no `Vary: Origin`
 *    (a shared cache may serve it to anyone, as `cors()` does; a drop-in
 *    may ask for its peer's `Vary: Origin`, and for this answer to a
 *    verdict that allowed any origin without credentials: see
 *    `starForAnyOrigin`).
 *    A same-origin verdict for a request that has an `Origin` (the browser
 *    said `Sec-Fetch-Site: same-origin`): the handler runs with no CORS
 *    header, as if ampcors were not there.
 * 1. No `Origin` and no trusted `AMP-Same-Origin`: outside CORS; the handler
 *    runs with `Vary: Origin` only.
 * 2. AMP for Email (when configured, not for a preflight): an untrusted
 *    sender is denied; v2 `AMP-Email-Sender` wins and is answered with
 *    `AMP-Email-Allow-Sender` only; v1 is answered with
 *    `Access-Control-Allow-Origin` only when the `Origin` is a configured
 *    email client or allowed by the verdict, never because of the query.
 * 3. Allowed: `Access-Control-Allow-Origin` echoes the `Origin` as sent,
 *    credentials, exposed headers; a preflight adds methods, headers (never
 *    `*` or `AMP-Same-Origin`), max-age and private network access. The
 *    legacy `AMP-Access-Control-Allow-Source-Origin` (and its expose entry)
 *    only with `legacySourceOriginHeader`, and for AMP for Email v1.
 * 4. Denied: 403 with the reason code (`onDenied: 'reject'`), or no CORS
 *    headers (`'omit'`). Under a drop-in's `everyOptionsIsPreflight` (the
 *    `cors` package's rule), every `OPTIONS` is answered as a preflight,
 *    one without `Origin` with no CORS header.
 * 5. A plan holding a value that is not a valid header value is denied
 *    (`malformed`) instead: no runtime can fail on it half-way.
 * 6. The plan of an allowed verdict that a verifier shares (frozen) is made
 *    once and remembered, bounded (see `rememberedPlan`); plans are frozen
 *    whenever they are shared.
 *
 * `Vary` is always returned as names to append, never as a header to set;
 * header names are in lower case (see `PlanParts.headers`).
 */
export function planCors(request: CorsRequest, verdict: Verdict, options: NormalizedCorsOptions): CorsPlan {
  // 0. Answers that do not depend on the origin.
  if (options.anyOrigin === true) return anyOriginPlan(request, options);
  if (verdict.allowed && verdict.via === 'same-origin' && verdict.origin !== null) return options.emailSenders === null ? SAME_ORIGIN : SAME_ORIGIN_EMAIL;
  const preflight = answeredAsPreflight(request, options);
  const email = options.emailSenders === null || preflight ? undefined : emailSenderOf(request, options);
  const vary = options.emailSenders === null ? (preflight ? VARY_PREFLIGHT : VARY_ACTUAL) : preflight ? VARY_PREFLIGHT_EMAIL : VARY_ACTUAL_EMAIL;
  // The legacy source-origin header only when configured (its value checked by the verifier either way).
  const source = verdict.allowed && options.legacySourceOriginHeader ? verdict.sourceOrigin : undefined;
  if (email === undefined) return rememberedPlan(request, verdict, source, options, preflight, vary);
  // 2. AMP for Email.
  let plan: CorsPlan;
  if (!email.trusted) plan = denial('email-sender-denied', options, false, vary);
  else if (email.version === 2) plan = checked(pass('actual', [['amp-email-allow-sender', email.sender]], vary), options, false);
  else if (typeof request.origin === 'string' && options.emailClientOrigins?.has(request.origin) === true)
    plan = allowedPlan(request, request.origin, email.sender, options, false, vary);
  else plan = planOfVerdict(request, verdict, email.sender, options, false, vary);
  return { ...plan, email };
}

/**
 * 6. The plan of a verdict, remembered when it is an allowed, frozen verdict
 * (a verifier's shared verdict of one origin, which cannot change) for this
 * request's very `Origin`: its plan is the same for every actual request,
 * and for every preflight with the same requested headers and Private
 * Network Access, so it is made once by {@link planOfVerdict} and frozen.
 * Anything else is planned each time: a denial, an any-origin verdict, a
 * verdict that is not frozen or names another origin (denied by
 * {@link planOfVerdict}), and AMP for Email. Bounded: at most
 * {@link MAX_REMEMBERED_VERDICTS} verdicts per options object, one preflight
 * per verdict, requested headers of at most
 * {@link MAX_REMEMBERED_REQUEST_HEADERS} characters.
 */
function rememberedPlan(
  request: CorsRequest,
  verdict: Verdict,
  sourceOrigin: string | undefined,
  options: NormalizedCorsOptions,
  preflight: boolean,
  vary: readonly string[],
): CorsPlan {
  if (!verdict.allowed || verdict.via === 'any' || verdict.origin === null || verdict.origin !== request.origin)
    return planOfVerdict(request, verdict, sourceOrigin, options, preflight, vary);
  const constants = constantsOf(options);
  const plans = (constants.plans ??= new Map());
  let remembered = plans.get(verdict);
  if (remembered === undefined) {
    // (Checked before it is remembered only: a frozen object stays frozen, and `isFrozen` costs more than the lookup.)
    if (!Object.isFrozen(verdict)) return planOfVerdict(request, verdict, sourceOrigin, options, preflight, vary);
    if (plans.size >= MAX_REMEMBERED_VERDICTS) plans.clear();
    remembered = { actual: undefined, preflight: undefined, requestHeaders: undefined, privateNetwork: false };
    plans.set(verdict, remembered);
  }
  if (!preflight) return (remembered.actual ??= frozen(planOfVerdict(request, verdict, sourceOrigin, options, false, vary)));
  // A preflight's plan also depends on the headers it asks for (reflected) and on Private Network Access.
  const requestHeaders = request.requestHeaders;
  // Twin of FactsOptions in request-facts.ts (the header is not read without privateNetworkAccess): keep in step.
  const privateNetwork = options.privateNetworkAccess && request.requestPrivateNetwork === 'true';
  const last = remembered.preflight;
  if (last !== undefined && remembered.requestHeaders === requestHeaders && remembered.privateNetwork === privateNetwork) return last;
  const plan = frozen(planOfVerdict(request, verdict, sourceOrigin, options, true, vary));
  if (typeof requestHeaders !== 'string' || requestHeaders.length <= MAX_REMEMBERED_REQUEST_HEADERS) {
    remembered.preflight = plan;
    remembered.requestHeaders = requestHeaders;
    remembered.privateNetwork = privateNetwork;
  }
  return plan;
}

/** `plan` frozen, with its header list and pairs: a remembered plan is shared by the requests that follow. */
function frozen(plan: CorsPlan): CorsPlan {
  for (const header of plan.headers) Object.freeze(header);
  Object.freeze(plan.headers);
  return Object.freeze(plan);
}

/** The plan of a verdict; `sourceOrigin` is the legacy source value to answer, when trusted. */
function planOfVerdict(
  request: CorsRequest,
  verdict: Verdict,
  sourceOrigin: string | undefined,
  options: NormalizedCorsOptions,
  preflight: boolean,
  vary: readonly string[],
): CorsPlan {
  if (!verdict.allowed) return denial(verdict.reason, options, preflight, vary);
  // A custom verifier's verdict is trusted only about this request's Origin.
  if (verdict.origin !== null && verdict.origin !== request.origin) return denial('malformed', options, preflight, vary);
  // A drop-in whose peer answers an allow-any origin option with the literal * (never with credentials).
  if (verdict.via === 'any' && options.starForAnyOrigin === true && !options.credentials) return anyOriginPlan(request, options);
  return allowedPlan(request, verdict.origin, sourceOrigin, options, preflight, vary);
}

/**
 * 3. The headers of an allowed request (`origin` null: same-origin, nothing
 * echoed). 5. The values from the request or a verifier (`origin`,
 * `sourceOrigin`) are checked here, each time; the options' constants were
 * checked once ({@link constantsOf}); reflected request headers are valid by
 * their scan ({@link reflectedHeadersValue}).
 */
function allowedPlan(
  request: CorsRequest,
  origin: string | null,
  sourceOrigin: string | undefined,
  options: NormalizedCorsOptions,
  preflight: boolean,
  vary: readonly string[],
): CorsPlan {
  if (origin !== null && !isHeaderValue(origin)) return denial('malformed', options, preflight, vary);
  const constants = constantsOf(options);
  // (Arrays written whole where their length is known: no growing them per request.)
  const allow: HeaderPair | null = origin === null ? null : ['access-control-allow-origin', origin];
  if (!preflight) {
    // (A preflight never carries the source origin: it is checked only where it is sent.)
    if (sourceOrigin !== undefined && !isHeaderValue(sourceOrigin)) return denial('malformed', options, false, vary);
    const source: HeaderPair | null = sourceOrigin === undefined ? null : [AMP_SOURCE_ORIGIN_NAME, sourceOrigin];
    if (allow === null) return pass('actual', source === null ? [] : [source], vary);
    if (!constants.actualValid) return denial('malformed', options, false, vary);
    if (source === null) return pass('actual', options.credentials ? [allow, ALLOW_CREDENTIALS, constants.expose] : [allow, constants.expose], vary);
    return pass(
      'actual',
      options.credentials ? [allow, ALLOW_CREDENTIALS, source, constants.exposeWithSource] : [allow, source, constants.exposeWithSource],
      vary,
    );
  }
  if (!constants.preflightValid) return denial('malformed', options, true, vary);
  const headers: HeaderPair[] = allow === null ? [] : options.credentials ? [allow, ALLOW_CREDENTIALS] : [allow];
  preflightHeaders(headers, request, constants);
  // Twin of FactsOptions in request-facts.ts (the header is not read without privateNetworkAccess): keep in step.
  if (options.privateNetworkAccess && request.requestPrivateNetwork === 'true') headers.push(ALLOW_PRIVATE_NETWORK);
  return options.preflightContinue ? pass('preflight', headers, vary) : end(options.preflightStatus, headers, vary);
}

/** Appends a preflight's methods, allowed headers (configured, or the request's that may be reflected) and max-age. */
function preflightHeaders(headers: HeaderPair[], request: CorsRequest, constants: PlanConstants): void {
  if (constants.methods !== null) headers.push(constants.methods);
  if (constants.allowHeaders !== null) headers.push(constants.allowHeaders);
  else if (constants.reflectHeaders) {
    const reflected = reflectedHeadersValue(request.requestHeaders);
    if (reflected !== null && reflected !== '') headers.push(['access-control-allow-headers', reflected]);
  }
  if (constants.maxAge !== null) headers.push(constants.maxAge);
}

// Shared, frozen header pairs (a plan's pairs are read-only, names in lower case): no allocation per request.
const ALLOW_CREDENTIALS: HeaderPair = pair('access-control-allow-credentials', 'true');
const ALLOW_PRIVATE_NETWORK: HeaderPair = pair('access-control-allow-private-network', 'true');
const ALLOW_ANY_ORIGIN: HeaderPair = pair('access-control-allow-origin', '*');

/**
 * 0. The `any-origin` mode's answer: `*`, never credentials; `Vary` only for the request headers a preflight reflects
 * (plus `Origin` under a drop-in's `alwaysVaryOrigin`). Never `Access-Control-Allow-Private-Network`: every website
 * reading a private-network server is what Private Network Access exists to prevent.
 */
function anyOriginPlan(request: CorsRequest, options: NormalizedCorsOptions): CorsPlan {
  const constants = constantsOf(options);
  const headers: HeaderPair[] = [ALLOW_ANY_ORIGIN];
  if (!answeredAsPreflight(request, options)) {
    const vary = options.alwaysVaryOrigin === true ? VARY_ACTUAL : VARY_NONE;
    if (!constants.actualValid) return denial('malformed', options, false, vary);
    headers.push(constants.expose);
    return pass('actual', headers, vary);
  }
  const vary =
    options.alwaysVaryOrigin === true
      ? options.allowedHeaders === null
        ? VARY_PREFLIGHT
        : VARY_ACTUAL
      : options.allowedHeaders === null
        ? VARY_REQUEST_HEADERS
        : VARY_NONE;
  if (!constants.preflightValid) return denial('malformed', options, true, vary);
  preflightHeaders(headers, request, constants);
  return options.preflightContinue ? pass('preflight', headers, vary) : end(options.preflightStatus, headers, vary);
}

// 0. The plans of a same-origin request (no CORS header, `Vary` only), shared and frozen.
const SAME_ORIGIN: CorsPlan = frozen(pass('actual', [], VARY_ACTUAL));
const SAME_ORIGIN_EMAIL: CorsPlan = frozen(pass('actual', [], VARY_ACTUAL_EMAIL));

/** 4. A denied request: outside CORS when `Origin` is missing, else 403 or no CORS headers. */
function denial(reason: string, options: NormalizedCorsOptions, preflight: boolean, vary: readonly string[]): CorsPlan {
  if (reason === 'missing') {
    // Outside CORS; a drop-in's peer that answers every OPTIONS answers this one too, without CORS headers.
    const answered = preflight && options.everyOptionsIsPreflight === true && !options.preflightContinue;
    return answered ? end(options.preflightStatus, [], vary) : pass('actual', [], vary);
  }
  if (options.onDenied === 'reject') return reject(reason, vary);
  if (preflight && !options.preflightContinue) return end(options.preflightStatus, [], vary);
  return pass(preflight ? 'preflight' : 'actual', [], vary);
}

/** 5. The plan, or its denial when one of its values is not a valid header value. */
function checked(plan: CorsPlan, options: NormalizedCorsOptions, preflight: boolean): CorsPlan {
  for (const [, value] of plan.headers) {
    if (!isHeaderValue(value)) return denial('malformed', options, preflight, plan.vary);
  }
  return plan;
}

function pass(kind: 'preflight' | 'actual', headers: HeaderPair[], vary: readonly string[]): CorsPlan {
  return { kind, handled: false, status: 0, body: '', headers, vary };
}

function end(status: number, headers: HeaderPair[], vary: readonly string[]): CorsPlan {
  return { kind: 'preflight', handled: true, status, body: '', headers, vary };
}

function reject(reason: string, vary: readonly string[]): CorsPlan {
  return {
    kind: 'reject',
    handled: true,
    status: 403,
    body: `Forbidden: CORS origin denied (${reason})\n`,
    headers: [['content-type', 'text/plain; charset=utf-8']],
    vary,
  };
}
