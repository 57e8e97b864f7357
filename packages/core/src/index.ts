/**
 * @ampcors/core — AMP cache origin algorithms and a typed CORS origin
 * verifier. Pure and runtime-agnostic: no `node:` imports, synchronous
 * wherever possible; runs unchanged on Node, Bun, Deno, Cloudflare Workers
 * and browsers.
 *
 * This main entry is what applications call: the verifier, the forward and
 * reverse algorithms, cache URLs, the cache registry, the compact allow-set,
 * errors and the configuration types. The rest has its own entry:
 * `@ampcors/core/adapter` (what a framework adapter is written on),
 * `@ampcors/core/algorithms` (the verifier's steps one by one),
 * `@ampcors/core/safe-browsing` and `@ampcors/core/rice-coding`.
 *
 * @packageDocumentation
 */
export { AmpCorsError, type AmpCorsErrorCode, isAmpCorsError } from './errors.js';
export {
  type AmpCache,
  CACHES,
  CACHES_URL,
  fetchCaches,
  type FetchCachesOptions,
  type FetchCachesResult,
  findCache,
  MAX_CACHES,
  MAX_CACHES_JSON_BYTES,
  validateCaches,
  type ValidateCachesOptions,
} from './caches.js';
export { canonicalDomain, unicodeDomain } from './domain-name.js';
export {
  amppackagerPrefix,
  basicPrefix,
  domainPrefix,
  fallbackPrefix,
  type PrefixForm,
  type PrefixFormEntry,
  type ReadableForm,
  toolboxPrefix,
} from './domain-prefix.js';
export { prefixForms } from './prefix-forms.js';
export { cacheOrigin, cacheUrl, type CacheUrlOptions, type ServingType } from './cache-url.js';
export { MAX_ORIGIN_LENGTH, type OriginSyntaxReason, parseOrigin, type ParsedOrigin, type RejectedOrigin } from './origin-header.js';
export { type CacheOriginFailure } from './cache-origin.js';
export { type PrefixClaimant } from './prefix-claimants.js';
export {
  type HashedOrigin,
  type NotReversed,
  type ReversedOrigin,
  reverseOrigin,
  type ReverseFailure,
  type ReverseOriginOptions,
  type ReverseOriginResult,
  type ReverseStepName,
  type ReverseStepStatus,
  type ReverseTraceStep,
} from './reverse-origin.js';
export { type AllowEntry, type CacheOriginAllowSet } from './allow-set.js';
export {
  type AllowedVerdict,
  type AllowReason,
  createVerifier,
  type DeniedVerdict,
  type DenyReason,
  type Verdict,
  type Verifier,
  type VerifierConfig,
  type VerifyContext,
  type Via,
} from './verifier.js';
export { type AsyncVerifier, type AsyncVerifierConfig, createAsyncVerifier, type PublisherSource } from './async-verifier.js';
export {
  EXPLAIN_MAX_SHOWN,
  type ExplainConfigError,
  explainOrigin,
  type ExplainOriginOptions,
  type ExplainStep,
  type ExplainStepName,
  type ExplainStepStatus,
  type OriginExplanation,
  type PrefixSource,
} from './explain-origin.js';
export {
  ALLOW_SET_VERSION,
  type AllowSetBuilder,
  type AllowSetEncoding,
  type AllowSetVerdict,
  type CompactAllowSet,
  compileAllowSet,
  type CompileAllowSetOptions,
  createAllowSetBuilder,
  loadAllowSet,
} from './compact-allow-set.js';
export {
  type AmpEmailOptions,
  AMP_REDIRECT_TO,
  ampRedirectTo,
  type CorsOptions,
  DEFAULT_EMAIL_CLIENT_ORIGINS,
  DEFAULT_METHODS,
  type EmailSender,
  type OnDenied,
} from './cors-response.js';
export { type AmpCorsConfig, type VerdictSource } from './cors-policy.js';
export { type AllowSetOption, allowSetSource, combineVerdictSources, type VerdictSourcesConfig } from './verdict-sources.js';
export { type OriginOption } from './legacy-origin-option.js';
