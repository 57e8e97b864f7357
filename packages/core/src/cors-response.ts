import { AmpCorsError } from './errors.js';
import { parseOrigin } from './origin-header.js';
import type { Verdict, VerifyContext } from './verifier.js';

/** What to do with a request whose origin was denied. */
export type OnDenied = 'reject' | 'omit';

/**
 * The CORS response options shared by every ampcors adapter. All are
 * optional; {@link normalizeCorsOptions} validates them once, at construction.
 */
export interface CorsOptions {
  /** Send `Access-Control-Allow-Credentials: true` (default `true`: AMP components send credentials). */
  readonly credentials?: boolean;
  /** `Access-Control-Allow-Methods` of a preflight (default `GET,HEAD,PUT,PATCH,POST,DELETE`). */
  readonly methods?: string | readonly string[];
  /**
   * `Access-Control-Allow-Headers` of a preflight. Default: the headers the
   * preflight asked for. `AMP-Same-Origin` is never listed, whatever is
   * configured or asked (SPEC §7).
   */
  readonly allowedHeaders?: string | readonly string[];
  /** Extra `Access-Control-Expose-Headers`; `AMP-Redirect-To` is always exposed. */
  readonly exposedHeaders?: string | readonly string[];
  /** `Access-Control-Max-Age` of a preflight, in seconds (default: not sent). */
  readonly maxAge?: number;
  /** Status of an answered preflight (default 204). */
  readonly preflightStatus?: number;
  /** Pass an allowed preflight on to the handler instead of answering it (default `false`). */
  readonly preflightContinue?: boolean;
  /** Answer `Access-Control-Request-Private-Network: true` with `Access-Control-Allow-Private-Network: true` (default `false`). */
  readonly privateNetworkAccess?: boolean;
  /**
   * A denied origin: `'reject'` (default) answers 403 before the handler runs,
   * so that a state-changing request never runs its side effects; `'omit'`
   * sends no CORS headers and runs the handler, as the `cors` package does.
   */
  readonly onDenied?: OnDenied;
  /** AMP for Email (SPEC §7): the trusted sender addresses. Off by default. */
  readonly email?: { readonly senders: readonly string[] };
}

/** {@link CorsOptions} after validation, with every default filled in. */
export interface NormalizedCorsOptions {
  readonly credentials: boolean;
  /** The `Access-Control-Allow-Methods` value. */
  readonly methods: string;
  /** The configured allowed headers, or `null` to reflect the requested ones. */
  readonly allowedHeaders: readonly string[] | null;
  /** Every exposed header, `AMP-Redirect-To` first. */
  readonly exposedHeaders: readonly string[];
  readonly maxAge: number | null;
  readonly preflightStatus: number;
  readonly preflightContinue: boolean;
  readonly privateNetworkAccess: boolean;
  readonly onDenied: OnDenied;
  /** Lowercased trusted email senders, or `null` when AMP for Email is off. */
  readonly emailSenders: ReadonlySet<string> | null;
}

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
  /** The `__amp_source_origin` query value (see {@link sourceOriginOfUrl}). */
  readonly sourceOrigin?: string | null;
}

/** How an adapter must answer: the same plan in every adapter, so they cannot drift apart. */
export interface CorsPlan {
  /** `preflight`: a CORS preflight; `actual`: any other request; `reject`: a denied request stopped here. */
  readonly kind: 'preflight' | 'actual' | 'reject';
  /**
   * True when the adapter must end the response itself with {@link status}
   * and {@link body}; false when it must set the headers and run the handler.
   */
  readonly handled: boolean;
  /** The status to end with, when `handled`. */
  readonly status: number;
  /** The body to end with, when `handled` (empty for a preflight). */
  readonly body: string;
  /** Headers to set, replacing any of the same name (never `Vary`). */
  readonly headers: ReadonlyArray<readonly [string, string]>;
  /** Header names to append to `Vary` (see {@link appendVary}), never replacing it. */
  readonly vary: readonly string[];
  /** The AMP for Email sender that was recognized, if the request is an AMP for Email request. */
  readonly email?: EmailSender;
}

/** An AMP for Email request's sender and whether it is trusted. */
export interface EmailSender {
  /** 2: `AMP-Email-Sender`; 1: the deprecated `__amp_source_origin` address. */
  readonly version: 1 | 2;
  /** The sender address as sent. */
  readonly sender: string;
  /** True when the sender is one of `email.senders`. */
  readonly trusted: boolean;
}

/** Default `Access-Control-Allow-Methods` (the `cors` package's default). */
export const DEFAULT_METHODS = 'GET,HEAD,PUT,PATCH,POST,DELETE';
/** The `amp-form` redirect header, always exposed. */
export const AMP_REDIRECT_TO = 'AMP-Redirect-To';
/** The legacy response header answering `__amp_source_origin`. */
export const AMP_SOURCE_ORIGIN_HEADER = 'AMP-Access-Control-Allow-Source-Origin';

const CONTROL = /[\u0000-\u001f\u007f]/;
const TOKEN = /^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/;
const EMAIL = /^[^\s@\u0000-\u001f\u007f,]+@[^\s@\u0000-\u001f\u007f,]+$/;
/** Longest `Access-Control-Request-Headers` value that is reflected. */
const MAX_REFLECTED_HEADERS_LENGTH = 2048;
/** Longest email address (RFC 5321 path limit). */
const MAX_EMAIL_LENGTH = 320;

function tokenList(name: string, value: string | readonly string[] | undefined): string[] | undefined {
  if (value === undefined) return undefined;
  const items = typeof value === 'string' ? value.split(',') : Array.isArray(value) ? value : null;
  if (items === null) throw new AmpCorsError('invalid-option', `${name} must be a string or an array of strings`);
  const out: string[] = [];
  for (const item of items) {
    if (typeof item !== 'string') throw new AmpCorsError('invalid-option', `${name}: ${String(item)} is not a string`);
    const token = item.trim();
    if (token === '') continue;
    if (!TOKEN.test(token)) throw new AmpCorsError('invalid-option', `${name}: ${JSON.stringify(token.slice(0, 80))} is not an HTTP token`);
    out.push(token);
  }
  return out;
}

function isAmpSameOrigin(name: string): boolean {
  return name.toLowerCase() === 'amp-same-origin';
}

function flag(name: string, value: unknown, fallback: boolean): boolean {
  if (value === undefined) return fallback;
  if (typeof value !== 'boolean') throw new AmpCorsError('invalid-option', `${name} must be true or false`);
  return value;
}

/**
 * Validates {@link CorsOptions} and fills in the defaults. Called once when an
 * adapter is created, so that a bad configuration fails at start-up.
 *
 * @throws AmpCorsError `invalid-option` for a malformed option, and
 * `unsafe-configuration` for `AMP-Same-Origin` in `allowedHeaders`.
 */
export function normalizeCorsOptions(options: CorsOptions = {}): NormalizedCorsOptions {
  if (typeof options !== 'object' || options === null) throw new AmpCorsError('invalid-option', 'CORS options must be an object');
  const methods = tokenList('methods', options.methods) ?? DEFAULT_METHODS.split(',');
  const allowed = tokenList('allowedHeaders', options.allowedHeaders);
  if (allowed?.some(isAmpSameOrigin)) {
    throw new AmpCorsError('unsafe-configuration', 'allowedHeaders must not list AMP-Same-Origin: a cross-origin page could then claim to be same-origin');
  }
  const exposed = [AMP_REDIRECT_TO];
  for (const name of tokenList('exposedHeaders', options.exposedHeaders) ?? []) {
    if (!exposed.some((known) => known.toLowerCase() === name.toLowerCase())) exposed.push(name);
  }
  const maxAge = options.maxAge;
  if (maxAge !== undefined && (typeof maxAge !== 'number' || !Number.isSafeInteger(maxAge) || maxAge < 0)) {
    throw new AmpCorsError('invalid-option', 'maxAge must be a non-negative whole number of seconds');
  }
  const status = options.preflightStatus ?? 204;
  if (typeof status !== 'number' || !Number.isInteger(status) || status < 200 || status > 299) {
    throw new AmpCorsError('invalid-option', 'preflightStatus must be a 2xx status');
  }
  const onDenied = options.onDenied ?? 'reject';
  if (onDenied !== 'reject' && onDenied !== 'omit') throw new AmpCorsError('invalid-option', "onDenied must be 'reject' or 'omit'");
  return {
    credentials: flag('credentials', options.credentials, true),
    methods: methods.join(','),
    allowedHeaders: allowed ?? null,
    exposedHeaders: exposed,
    maxAge: maxAge ?? null,
    preflightStatus: status,
    preflightContinue: flag('preflightContinue', options.preflightContinue, false),
    privateNetworkAccess: flag('privateNetworkAccess', options.privateNetworkAccess, false),
    onDenied,
    emailSenders: options.email === undefined ? null : emailSenders(options.email),
  };
}

function emailSenders(email: { readonly senders: readonly string[] }): ReadonlySet<string> {
  if (typeof email !== 'object' || email === null || !Array.isArray(email.senders)) {
    throw new AmpCorsError('invalid-option', 'email must be { senders: string[] }');
  }
  const set = new Set<string>();
  for (const sender of email.senders) {
    if (typeof sender !== 'string' || sender.length > MAX_EMAIL_LENGTH || !EMAIL.test(sender)) {
      throw new AmpCorsError('invalid-option', `email.senders: ${JSON.stringify(String(sender).slice(0, 80))} is not an email address`);
    }
    set.add(sender.toLowerCase());
  }
  return set;
}

/**
 * Reads the legacy `__amp_source_origin` query parameter from a request URL
 * or path (`/api?__amp_source_origin=…`). Returns `null` when absent; when the
 * parameter is repeated, returns the values joined with `,`, which no
 * verifier accepts, so an ambiguous request is denied rather than guessed.
 */
export function sourceOriginOfUrl(url: string): string | null {
  const query = url.indexOf('?');
  if (query < 0) return null;
  const hash = url.indexOf('#', query);
  const end = hash < 0 ? url.length : hash;
  // One pass over the pairs; only an unusual query (an encoded name that could
  // spell the parameter, a value that is not plain UTF-8 percent-encoding)
  // falls back to URLSearchParams. The definition is the WHATWG URL's query
  // parameters, as `new URL(url).searchParams` reads them.
  let values: string[] | null = null;
  for (let start = query + 1; start < end; ) {
    let amp = url.indexOf('&', start);
    if (amp < 0 || amp > end) amp = end;
    let eq = url.indexOf('=', start);
    if (eq < 0 || eq > amp) eq = amp;
    if (eq - start === SOURCE_PARAM.length && url.startsWith(SOURCE_PARAM, start)) {
      const raw = url.slice(Math.min(eq + 1, amp), amp);
      const value = decodeFormValue(raw);
      if (value === undefined) return sourceOriginBySearchParams(url.slice(query + 1, end));
      (values ??= []).push(value);
    } else if (eq - start > SOURCE_PARAM.length && url.lastIndexOf('%', eq - 1) >= start) {
      return sourceOriginBySearchParams(url.slice(query + 1, end));
    }
    start = amp + 1;
  }
  return values === null ? null : values.join(',');
}

const SOURCE_PARAM = '__amp_source_origin';

/** A form-encoded value decoded as URLSearchParams does, or undefined when only URLSearchParams can say (invalid UTF-8). */
function decodeFormValue(raw: string): string | undefined {
  if (!raw.includes('%') && !raw.includes('+')) return raw;
  try {
    return decodeURIComponent(raw.replaceAll('+', ' '));
  } catch {
    return undefined;
  }
}

function sourceOriginBySearchParams(query: string): string | null {
  // The leading '&' keeps the constructor from stripping a '?' that belongs to the first name.
  const values = new URLSearchParams(`&${query}`).getAll(SOURCE_PARAM);
  return values.length === 0 ? null : values.join(',');
}

function emailSenderOf(request: CorsRequest, senders: ReadonlySet<string> | null): EmailSender | undefined {
  if (senders === null) return undefined;
  const v2 = request.emailSender;
  if (typeof v2 === 'string' && v2 !== '') return { version: 2, sender: v2, trusted: isTrustedSender(v2, senders) };
  const v1 = request.sourceOrigin;
  if (typeof v1 === 'string' && v1.includes('@') && !v1.includes('/')) return { version: 1, sender: v1, trusted: isTrustedSender(v1, senders) };
  return undefined;
}

function isTrustedSender(sender: string, senders: ReadonlySet<string>): boolean {
  return sender.length <= MAX_EMAIL_LENGTH && EMAIL.test(sender) && senders.has(sender.toLowerCase());
}

/**
 * The {@link VerifyContext} to pass to a verifier for a request: with AMP for
 * Email on, a v1 email address in `__amp_source_origin` is a sender, not a
 * publisher origin, so it is left out (the plan judges it instead).
 */
export function verifyContextOf(request: CorsRequest, options: NormalizedCorsOptions): VerifyContext {
  const email = emailSenderOf(request, options.emailSenders);
  return {
    ampSameOrigin: request.ampSameOrigin ?? null,
    sourceOrigin: email?.version === 1 ? null : (request.sourceOrigin ?? null),
  };
}

/** True for a CORS preflight: `OPTIONS` with `Origin` and `Access-Control-Request-Method`. */
export function isPreflight(request: CorsRequest): boolean {
  return request.method.toUpperCase() === 'OPTIONS' && !!request.origin && !!request.requestMethod;
}

/**
 * The requested headers to reflect in `Access-Control-Allow-Headers`, minus
 * `AMP-Same-Origin`; `null` when the value is not a clean comma-separated
 * list of header names (control characters, CR/LF, oversized), so that
 * nothing from the request is reflected.
 */
export function reflectableHeaders(requested: string | null | undefined): string[] | null {
  if (typeof requested !== 'string' || requested.length > MAX_REFLECTED_HEADERS_LENGTH) return null;
  const out: string[] = [];
  for (const item of requested.split(',')) {
    const name = item.trim();
    if (name === '') continue;
    if (!TOKEN.test(name)) return null;
    if (!isAmpSameOrigin(name)) out.push(name);
  }
  return out;
}

function headerSafe(value: string | null | undefined): boolean {
  return value === null || value === undefined || (typeof value === 'string' && !CONTROL.test(value));
}

function denialBody(reason: string): string {
  return `Forbidden: CORS origin denied (${reason})\n`;
}

// The `Vary` names of a plan, shared by every plan (frozen: adapters only read them).
const VARY_ACTUAL: readonly string[] = Object.freeze(['Origin']);
const VARY_PREFLIGHT: readonly string[] = Object.freeze(['Origin', 'Access-Control-Request-Headers']);
const VARY_ACTUAL_EMAIL: readonly string[] = Object.freeze(['Origin', 'AMP-Email-Sender']);
const VARY_PREFLIGHT_EMAIL: readonly string[] = Object.freeze(['Origin', 'Access-Control-Request-Headers', 'AMP-Email-Sender']);

// `Access-Control-Expose-Headers` values per exposed-headers list (one list per adapter configuration).
const exposeValues = new WeakMap<readonly string[], readonly [plain: string, withSource: string]>();

/** The `Access-Control-Expose-Headers` value of `exposed`, plus the source-origin header when it is sent; joined once per list. */
function exposeValue(exposed: readonly string[], withSource: boolean): string {
  let values = exposeValues.get(exposed);
  if (values === undefined) {
    values = [exposed.join(', '), [...exposed, AMP_SOURCE_ORIGIN_HEADER].join(', ')];
    exposeValues.set(exposed, values);
  }
  return withSource ? values[1] : values[0];
}

/**
 * Decides every CORS header of a response from the request facts, the core
 * verdict and the normalized options (SPEC §6–7). Pure and synchronous.
 *
 * - No `Origin` and no trusted `AMP-Same-Origin`: outside CORS; the handler
 *   runs with `Vary: Origin` only.
 * - Allowed: `Access-Control-Allow-Origin` echoes the `Origin` as sent,
 *   credentials, exposed headers; a preflight adds methods, headers (never
 *   `AMP-Same-Origin`), max-age and private network access.
 * - Denied: 403 with the reason code (`onDenied: 'reject'`), or no CORS
 *   headers (`'omit'`).
 * - AMP for Email (when configured): v2 `AMP-Email-Sender` wins over v1.
 *
 * `Vary` is always returned as names to append, never as a header to set.
 */
export function planCors(request: CorsRequest, verdict: Verdict, options: NormalizedCorsOptions): CorsPlan {
  const preflight = isPreflight(request);
  const email = emailSenderOf(request, options.emailSenders);
  const vary = options.emailSenders === null ? (preflight ? VARY_PREFLIGHT : VARY_ACTUAL) : preflight ? VARY_PREFLIGHT_EMAIL : VARY_ACTUAL_EMAIL;
  if (email !== undefined && !preflight) return planEmail(request, email, options, vary);

  if (!verdict.allowed) {
    if (verdict.reason === 'missing') return pass('actual', [], vary);
    if (options.onDenied === 'reject') return reject(verdict.reason, vary);
    return preflight && !options.preflightContinue ? end('preflight', options.preflightStatus, [], vary) : pass(preflight ? 'preflight' : 'actual', [], vary);
  }

  // A custom verifier's verdict must be about this request's Origin and hold only header-safe values.
  if ((verdict.origin !== null && verdict.origin !== request.origin) || !headerSafe(verdict.origin) || !headerSafe(verdict.sourceOrigin)) {
    return options.onDenied === 'reject' ? reject('malformed', vary) : pass(preflight ? 'preflight' : 'actual', [], vary);
  }
  const headers: Array<readonly [string, string]> = [];
  if (verdict.origin !== null) {
    headers.push(['Access-Control-Allow-Origin', verdict.origin]);
    if (options.credentials) headers.push(['Access-Control-Allow-Credentials', 'true']);
  }
  if (!preflight) {
    if (verdict.sourceOrigin !== undefined) headers.push([AMP_SOURCE_ORIGIN_HEADER, verdict.sourceOrigin]);
    if (verdict.origin !== null) headers.push(['Access-Control-Expose-Headers', exposeValue(options.exposedHeaders, verdict.sourceOrigin !== undefined)]);
    return pass('actual', headers, vary);
  }
  headers.push(['Access-Control-Allow-Methods', options.methods]);
  const allowHeaders = options.allowedHeaders ?? reflectableHeaders(request.requestHeaders);
  if (allowHeaders !== null && allowHeaders.length > 0) headers.push(['Access-Control-Allow-Headers', allowHeaders.join(', ')]);
  if (options.maxAge !== null) headers.push(['Access-Control-Max-Age', String(options.maxAge)]);
  if (options.privateNetworkAccess && request.requestPrivateNetwork === 'true') headers.push(['Access-Control-Allow-Private-Network', 'true']);
  if (options.preflightContinue) return pass('preflight', headers, vary);
  return end('preflight', options.preflightStatus, headers, vary);
}

function planEmail(request: CorsRequest, email: EmailSender, options: NormalizedCorsOptions, vary: readonly string[]): CorsPlan {
  if (!email.trusted) {
    if (options.onDenied === 'reject') return { ...reject('email-sender-denied', vary), email };
    return { ...pass('actual', [], vary), email };
  }
  if (email.version === 2) return { ...pass('actual', [['AMP-Email-Allow-Sender', email.sender]], vary), email };
  // v1: Origin is the email client's; it is echoed only when it is one canonical origin.
  const origin = request.origin;
  const parsed = parseOrigin(origin);
  if (!parsed.ok || typeof origin !== 'string') {
    const reason = parsed.ok ? 'missing' : parsed.reason;
    return options.onDenied === 'reject' && reason !== 'missing' ? { ...reject(reason, vary), email } : { ...pass('actual', [], vary), email };
  }
  const headers: Array<readonly [string, string]> = [['Access-Control-Allow-Origin', origin]];
  if (options.credentials) headers.push(['Access-Control-Allow-Credentials', 'true']);
  headers.push([AMP_SOURCE_ORIGIN_HEADER, email.sender]);
  headers.push(['Access-Control-Expose-Headers', exposeValue(options.exposedHeaders, true)]);
  return { ...pass('actual', headers, vary), email };
}

function pass(kind: 'preflight' | 'actual', headers: Array<readonly [string, string]>, vary: readonly string[]): CorsPlan {
  return { kind, handled: false, status: 0, body: '', headers, vary };
}

function end(kind: 'preflight', status: number, headers: Array<readonly [string, string]>, vary: readonly string[]): CorsPlan {
  return { kind, handled: true, status, body: '', headers, vary };
}

function reject(reason: string, vary: readonly string[]): CorsPlan {
  return { kind: 'reject', handled: true, status: 403, body: denialBody(reason), headers: [['Content-Type', 'text/plain; charset=utf-8']], vary };
}

/**
 * Appends header names to a `Vary` value without replacing or duplicating
 * what is there (case-insensitive); `*` already covers everything.
 *
 * @example appendVary('Accept-Encoding', ['Origin']) // 'Accept-Encoding, Origin'
 */
export function appendVary(existing: string | readonly string[] | number | null | undefined, names: readonly string[]): string {
  // Fast path, the usual case: no Vary yet and one name, or two that differ.
  if ((existing === undefined || existing === null || existing === '') && names.length <= 2) {
    const [first, second] = names;
    if (second === undefined) return first === undefined || first.trim() === '' ? '' : first.trim();
    if (first !== undefined && first.trim() !== '' && second.trim() !== '' && first.trim().toLowerCase() !== second.trim().toLowerCase()) {
      return `${first.trim()}, ${second.trim()}`;
    }
  }
  const current = existing === undefined || existing === null ? '' : Array.isArray(existing) ? existing.join(', ') : String(existing);
  const present = current
    .split(',')
    .map((name) => name.trim())
    .filter((name) => name !== '');
  if (present.includes('*')) return '*';
  const lower = new Set(present.map((name) => name.toLowerCase()));
  for (const raw of names) {
    const name = raw.trim();
    if (name !== '' && !lower.has(name.toLowerCase())) {
      present.push(name);
      lower.add(name.toLowerCase());
    }
  }
  return present.join(', ');
}

/**
 * The value of an `AMP-Redirect-To` response header (`amp-form`, SPEC §7):
 * only an absolute https URL is accepted.
 *
 * @throws AmpCorsError `invalid-url` for anything else, including control characters.
 * @example res.setHeader('AMP-Redirect-To', ampRedirectTo('https://example.com/thanks'))
 */
export function ampRedirectTo(url: string): string {
  if (typeof url !== 'string' || url.length > 8192 || /[\u0000-\u0020\u007f]/.test(url) || !/^https:\/\//i.test(url)) {
    throw new AmpCorsError('invalid-url', 'AMP-Redirect-To needs an absolute https URL without whitespace or control characters');
  }
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    throw new AmpCorsError('invalid-url', 'AMP-Redirect-To needs an absolute https URL');
  }
  if (parsed.protocol !== 'https:' || parsed.hostname === '') throw new AmpCorsError('invalid-url', 'AMP-Redirect-To needs an absolute https URL');
  return parsed.href;
}
