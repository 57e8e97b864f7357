/**
 * The AMP CORS response rules (SPEC §6–7), one file per rule; this module
 * gathers them under the names the package has always exported:
 * - cors-options.ts: the options and their validation;
 * - source-origin.ts: the linear `__amp_source_origin` scan;
 * - amp-email.ts and email-clients.ts: AMP for Email senders and clients;
 * - cors-plan.ts: the response plan;
 * - vary.ts: `Vary`;
 * - amp-redirect-to.ts: `AMP-Redirect-To`.
 */
export { type AmpEmailOptions, type EmailSender, verifyContextOf } from './amp-email.js';
export { AMP_REDIRECT_TO, ampRedirectTo } from './amp-redirect-to.js';
export { type CorsOptions, DEFAULT_METHODS, type NormalizedCorsOptions, normalizeCorsOptions, type OnDenied } from './cors-options.js';
export {
  AMP_SOURCE_ORIGIN_HEADER,
  type CorsPlan,
  type CorsRequest,
  type EndPlan,
  type PassPlan,
  isPreflight,
  planCors,
  reflectableHeaders,
} from './cors-plan.js';
export { DEFAULT_EMAIL_CLIENT_ORIGINS } from './email-clients.js';
export { sourceOriginOfUrl } from './source-origin.js';
export { appendVary } from './vary.js';
