import type { NormalizedCorsOptions } from './cors-options.js';
import type { CorsRequest } from './cors-plan.js';
import { DEFAULT_EMAIL_CLIENT_ORIGINS } from './email-clients.js';
import { AmpCorsError } from './errors.js';
import { parseOrigin } from './origin-header.js';
import type { VerifyContext } from './verifier.js';

/** AMP for Email (SPEC §7): who may be answered. */
export interface AmpEmailOptions {
  /** The trusted sender addresses, in ASCII (an internationalized domain in punycode); compared in ASCII case. */
  readonly senders: readonly string[];
  /**
   * The origins of the email clients a v1 answer (`Access-Control-Allow-Origin`
   * with credentials) may go to, besides the origins the verifier allows.
   * Default: {@link DEFAULT_EMAIL_CLIENT_ORIGINS} (Gmail); `[]` answers v1
   * only to allowed origins. Never decided by the request's query string.
   */
  readonly clientOrigins?: readonly string[];
}

/** The AMP for Email part of the normalized options (both `null` when AMP for Email is off). */
type EmailOptions = Pick<NormalizedCorsOptions, 'emailSenders' | 'emailClientOrigins'>;

/** An AMP for Email request's sender and whether it is trusted. */
export interface EmailSender {
  /** 2: `AMP-Email-Sender`; 1: the deprecated `__amp_source_origin` address. */
  readonly version: 1 | 2;
  /** The sender address as sent. */
  readonly sender: string;
  /** True when the sender is one of `email.senders`. */
  readonly trusted: boolean;
}

/** Longest email address (RFC 5321 path limit). */
const MAX_EMAIL_LENGTH = 320;
/** One address in visible ASCII: no whitespace, control character, comma or second '@'. */
const EMAIL = /^[!-+\--?A-~]+@[!-+\--?A-~]+$/;
const NON_ASCII = /[^\u0000-\u007f]/;

function shown(value: unknown): string {
  return JSON.stringify(String(value).slice(0, 80));
}

/** Lowercases A–Z only: `toLowerCase` maps KELVIN SIGN to `k`, which must not match (issue #14). */
function asciiLowerCase(text: string): string {
  return text.replace(/[A-Z]+/g, (run) => run.toLowerCase());
}

/**
 * Validates the `email` option (SPEC §7).
 *
 * @throws AmpCorsError `invalid-option` for a malformed option, a sender that
 * is not one ASCII address, or a client origin that is not canonical.
 */
export function normalizeAmpEmail(email: AmpEmailOptions): { emailSenders: ReadonlySet<string>; emailClientOrigins: ReadonlySet<string> } {
  if (typeof email !== 'object' || email === null || !Array.isArray(email.senders)) {
    throw new AmpCorsError('invalid-option', 'email must be { senders: string[], clientOrigins?: string[] }');
  }
  const senders = new Set<string>();
  for (const sender of email.senders) {
    if (typeof sender === 'string' && NON_ASCII.test(sender)) {
      throw new AmpCorsError(
        'invalid-option',
        `email.senders: ${shown(sender)} is not an email address in ASCII (write an internationalized domain in punycode)`,
      );
    }
    if (typeof sender !== 'string' || sender.length > MAX_EMAIL_LENGTH || !EMAIL.test(sender)) {
      throw new AmpCorsError('invalid-option', `email.senders: ${shown(sender)} is not an email address`);
    }
    senders.add(asciiLowerCase(sender));
  }
  return { emailSenders: senders, emailClientOrigins: clientOriginsOf(email.clientOrigins) };
}

function clientOriginsOf(origins: readonly string[] | undefined): ReadonlySet<string> {
  if (origins === undefined) return new Set(DEFAULT_EMAIL_CLIENT_ORIGINS);
  if (!Array.isArray(origins)) throw new AmpCorsError('invalid-option', 'email.clientOrigins must be an array of origins');
  const set = new Set<string>();
  for (const origin of origins) {
    const parsed = parseOrigin(origin);
    if (!parsed.ok) throw new AmpCorsError('invalid-option', `email.clientOrigins: ${shown(origin)} is not a canonical http(s) origin (${parsed.reason})`);
    set.add(origin);
  }
  return set;
}

/** True when `sender` is one ASCII address equal, in ASCII case, to a configured sender; a non-ASCII sender never is. */
function isTrustedSender(sender: string, senders: ReadonlySet<string>): boolean {
  return sender.length <= MAX_EMAIL_LENGTH && EMAIL.test(sender) && senders.has(asciiLowerCase(sender));
}

/**
 * The AMP for Email sender of a request, when AMP for Email is on (SPEC §7):
 * v2 `AMP-Email-Sender` wins over v1, an address in `__amp_source_origin`.
 * Undefined for a request that is neither.
 */
export function emailSenderOf(request: CorsRequest, options: EmailOptions): EmailSender | undefined {
  const senders = options.emailSenders;
  if (senders === null) return undefined;
  // Twin of FactsOptions in request-facts.ts (AMP-Email-Sender is not read when emailSenders is null): keep in step.
  const v2 = request.emailSender;
  if (typeof v2 === 'string' && v2 !== '') return { version: 2, sender: v2, trusted: isTrustedSender(v2, senders) };
  const v1 = request.sourceOrigin;
  if (typeof v1 === 'string' && v1.includes('@') && !v1.includes('/')) return { version: 1, sender: v1, trusted: isTrustedSender(v1, senders) };
  return undefined;
}

/**
 * The {@link VerifyContext} to pass to a verifier for a request. With AMP for
 * Email on, a v1 address in `__amp_source_origin` is a sender, not a
 * publisher origin: it is left out, so that the verdict judges the `Origin`
 * alone, and the plan then answers v1 only when that verdict allows it or the
 * `Origin` is a configured email client.
 */
export function verifyContextOf(request: CorsRequest, options: EmailOptions): VerifyContext {
  const ampSameOrigin = request.ampSameOrigin ?? null;
  const sourceOrigin = request.sourceOrigin ?? null;
  // The usual request (neither header nor parameter, AMP for Email off): one shared, frozen context.
  if (ampSameOrigin === null && sourceOrigin === null) return NO_CONTEXT;
  return { ampSameOrigin, sourceOrigin: options.emailSenders !== null && emailSenderOf(request, options)?.version === 1 ? null : sourceOrigin };
}

/** The context of a request without `AMP-Same-Origin` and `__amp_source_origin`. */
const NO_CONTEXT: VerifyContext = Object.freeze({ ampSameOrigin: null, sourceOrigin: null });
