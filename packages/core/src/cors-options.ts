import { type AmpEmailOptions, normalizeAmpEmail } from './amp-email.js';
import { AMP_REDIRECT_TO } from './amp-redirect-to.js';
import { ConfigProblems } from './config-check.js';
import { AmpCorsError } from './errors.js';

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
   * `Access-Control-Allow-Headers` of a preflight: the header names your
   * endpoints read, such as `['Content-Type', 'X-Requested-With']`. Default:
   * the headers each preflight asks for. Never `'*'` (refused: it would let
   * a page send `AMP-Same-Origin`); `AMP-Same-Origin` is never listed,
   * whatever is configured or asked (SPEC §7).
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
  /** AMP for Email (SPEC §7): the trusted senders and email clients. Off by default. */
  readonly email?: AmpEmailOptions;
  /**
   * Answer a checked `__amp_source_origin` with the legacy
   * `AMP-Access-Control-Allow-Source-Origin` header, named in
   * `Access-Control-Expose-Headers` (default `false`: the AMP runtime stopped
   * reading it in 2019). The parameter is checked either way; AMP for Email
   * v1 answers always carry the header (SPEC §7).
   */
  readonly legacySourceOriginHeader?: boolean;
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
  /** Trusted email senders in ASCII lowercase, or `null` when AMP for Email is off. */
  readonly emailSenders: ReadonlySet<string> | null;
  /** The email clients a v1 AMP for Email answer may go to, or `null` when AMP for Email is off. */
  readonly emailClientOrigins: ReadonlySet<string> | null;
  /** Send `AMP-Access-Control-Allow-Source-Origin` for a checked `__amp_source_origin` outside AMP for Email v1. */
  readonly legacySourceOriginHeader: boolean;
  /**
   * The `any-origin` mode of an adapter given no options (see
   * `ConfigMode`): every response carries the literal
   * `Access-Control-Allow-Origin: *`, never credentials, no `Vary: Origin`.
   * Set (`true`) by `createCorsPolicy` only, never by an option; absent otherwise.
   * A drop-in sets it too for its peer's `origin: '*'` without credentials.
   */
  readonly anyOrigin?: boolean;
  /**
   * A drop-in's peer policy (set by a drop-in mapping such as
   * drop-in-koa-cors.ts, never by an option): a verdict that allowed any
   * origin (`via: 'any'`, an origin function's `'*'`) is answered with the
   * literal `*` when there are no credentials, as the peer answers it.
   */
  readonly starForAnyOrigin?: boolean;
  /** A drop-in's peer policy (like {@link starForAnyOrigin}): `Vary: Origin` on the literal `*` answers too (`@koa/cors` varies every response). */
  readonly alwaysVaryOrigin?: boolean;
  /**
   * A drop-in's peer policy (like {@link starForAnyOrigin}): every `OPTIONS`
   * request is answered as a preflight, with or without `Origin` and
   * `Access-Control-Request-Method`, as the `cors` package answers it
   * (drop-in-cors.ts). Never set by an option.
   */
  readonly everyOptionsIsPreflight?: boolean;
  /** A drop-in's peer policy (like {@link starForAnyOrigin}): how the configured `allowedHeaders` are joined (`,` in the `cors` package; default `, `). */
  readonly allowedHeadersSeparator?: string;
}

/** Default `Access-Control-Allow-Methods` (the `cors` package's default). */
export const DEFAULT_METHODS = 'GET,HEAD,PUT,PATCH,POST,DELETE';

/** An HTTP token (RFC 9110 §5.6.2): what a method or header name may be. */
export const TOKEN = /^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/;

/** True for the AMP-Same-Origin header name, in any case. */
export function isAmpSameOrigin(name: string): boolean {
  return name.toLowerCase() === 'amp-same-origin';
}

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

function flag(name: string, value: unknown, fallback: boolean): boolean {
  if (value === undefined) return fallback;
  if (typeof value !== 'boolean') throw new AmpCorsError('invalid-option', `${name} must be true or false`);
  return value;
}

/** The keys {@link normalizeCorsOptions} reads. */
export const CORS_OPTION_KEYS: readonly string[] = [
  'credentials',
  'methods',
  'allowedHeaders',
  'exposedHeaders',
  'maxAge',
  'preflightStatus',
  'preflightContinue',
  'privateNetworkAccess',
  'onDenied',
  'email',
  'legacySourceOriginHeader',
];

/**
 * Validates {@link CorsOptions} and fills in the defaults. Called once when an
 * adapter is created, so that a bad configuration fails at start-up. Every
 * malformed option is reported in the one error, not only the first.
 *
 * @throws AmpCorsError `invalid-option` for a malformed option, and
 * `unsafe-configuration` for `'*'` or `AMP-Same-Origin` in `allowedHeaders`.
 */
export function normalizeCorsOptions(options: CorsOptions = {}): NormalizedCorsOptions {
  if (typeof options !== 'object' || options === null) throw new AmpCorsError('invalid-option', 'CORS options must be an object');
  const problems = new ConfigProblems();
  const methods = problems.attempt(() => tokenList('methods', options.methods)) ?? DEFAULT_METHODS.split(',');
  const allowed = problems.attempt(() => tokenList('allowedHeaders', options.allowedHeaders));
  if (allowed?.includes('*')) {
    // `Access-Control-Allow-Headers: *` allows every header, AMP-Same-Origin included, to a request without credentials (issue #14).
    problems.add(
      'unsafe-configuration',
      "allowedHeaders must not be '*': it would let a page send AMP-Same-Origin; list the header names your endpoints read (for example ['Content-Type', 'X-Requested-With']), or leave allowedHeaders out to answer each preflight with the headers it asks for, minus AMP-Same-Origin",
    );
  }
  if (allowed?.some(isAmpSameOrigin)) {
    problems.add('unsafe-configuration', 'allowedHeaders must not list AMP-Same-Origin: a cross-origin page could then claim to be same-origin');
  }
  const exposed = [AMP_REDIRECT_TO];
  for (const name of problems.attempt(() => tokenList('exposedHeaders', options.exposedHeaders)) ?? []) {
    if (!exposed.some((known) => known.toLowerCase() === name.toLowerCase())) exposed.push(name);
  }
  const maxAge = options.maxAge;
  if (maxAge !== undefined && (typeof maxAge !== 'number' || !Number.isSafeInteger(maxAge) || maxAge < 0)) {
    problems.add('invalid-option', 'maxAge must be a non-negative whole number of seconds');
  }
  const status = options.preflightStatus ?? 204;
  if (typeof status !== 'number' || !Number.isInteger(status) || status < 200 || status > 299) {
    problems.add('invalid-option', 'preflightStatus must be a 2xx status');
  }
  const onDenied = options.onDenied ?? 'reject';
  if (onDenied !== 'reject' && onDenied !== 'omit') problems.add('invalid-option', "onDenied must be 'reject' or 'omit'");
  const credentials = problems.attempt(() => flag('credentials', options.credentials, true));
  const preflightContinue = problems.attempt(() => flag('preflightContinue', options.preflightContinue, false));
  const privateNetworkAccess = problems.attempt(() => flag('privateNetworkAccess', options.privateNetworkAccess, false));
  const legacySourceOriginHeader = problems.attempt(() => flag('legacySourceOriginHeader', options.legacySourceOriginHeader, false));
  const email =
    options.email === undefined
      ? { emailSenders: null, emailClientOrigins: null }
      : problems.attempt(() => normalizeAmpEmail(options.email as AmpEmailOptions));
  problems.throwIfAny('CORS options', false);
  return {
    credentials: credentials as boolean,
    methods: methods.join(','),
    allowedHeaders: allowed ?? null,
    exposedHeaders: exposed,
    maxAge: (maxAge as number | undefined) ?? null,
    preflightStatus: status,
    preflightContinue: preflightContinue as boolean,
    privateNetworkAccess: privateNetworkAccess as boolean,
    onDenied,
    legacySourceOriginHeader: legacySourceOriginHeader as boolean,
    ...(email as Pick<NormalizedCorsOptions, 'emailSenders' | 'emailClientOrigins'>),
  };
}
