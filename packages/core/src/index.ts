/**
 * @ampcors/core — AMP cache origin algorithms and a typed CORS origin
 * verifier. Pure and runtime-agnostic: no `node:` imports, synchronous
 * wherever possible; runs unchanged on Node, Bun, Deno, Cloudflare Workers
 * and browsers.
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
export { browserHost, canonicalDomain, MAX_DOMAIN_LENGTH, MAX_LABEL_LENGTH, unicodeDomain } from './domain-name.js';
export {
  allPrefixForms,
  amppackagerPrefix,
  basicPrefix,
  domainPrefix,
  fallbackPrefix,
  HASHED_PREFIX_LENGTH,
  hashedPrefixForms,
  isHashedPrefix,
  MAX_PREFIX_LENGTH,
  type PrefixForm,
  type PrefixFormEntry,
  type ReadableForm,
  readableFormOf,
  readableFormsOf,
  readablePrefixForms,
  toolboxPrefix,
} from './domain-prefix.js';
export { prefixForms } from './prefix-forms.js';
export {
  type ClaimantSearch,
  decodeXnLabel,
  foldHyphens,
  MAX_CLAIMANT_CANDIDATES,
  type PrefixClaimant,
  prefixClaimants,
  prefixReadings,
  searchClaimants,
  unwrapLabel,
} from './prefix-claimants.js';
export { type CacheIndex, cacheIndexOf, type CacheOriginCheck, type CacheOriginFailure, checkCacheOrigin, findCacheOfHost } from './cache-origin.js';
export { cacheOrigin, cacheUrl, type CacheUrlOptions, type ServingType } from './cache-url.js';
export { MAX_ORIGIN_LENGTH, type OriginSyntaxReason, parseOrigin, type ParsedOrigin, type RejectedOrigin } from './origin-header.js';
export {
  decodePrefix,
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
export { matchesPublisher, parsePublisherRules, type PublisherRules, wildcardBaseOf } from './publisher-rules.js';
export { type AllowEntry, buildAllowSet, type CacheOriginAllowSet } from './allow-set.js';
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
  BitReader,
  BitWriter,
  decodeRiceDeltas,
  decodeRiceIntegers,
  decodeRiceValues,
  encodeRiceDeltas,
  MAX_RICE_QUOTIENT,
  type RiceDeltaEncoding,
} from './rice-coding.js';
export {
  AMP_REDIRECT_TO,
  AMP_SOURCE_ORIGIN_HEADER,
  type AmpEmailOptions,
  ampRedirectTo,
  appendVary,
  type CorsOptions,
  type CorsPlan,
  type CorsRequest,
  DEFAULT_EMAIL_CLIENT_ORIGINS,
  DEFAULT_METHODS,
  type EmailSender,
  isPreflight,
  normalizeCorsOptions,
  type NormalizedCorsOptions,
  type OnDenied,
  planCors,
  reflectableHeaders,
  sourceOriginOfUrl,
  verifyContextOf,
} from './cors-response.js';
export {
  type AdapterOptionsSpec,
  AMP_CORS_CONFIG_KEYS,
  type AmpCorsConfig,
  type CorsDecision,
  type CorsPolicy,
  createCorsPolicy,
  type VerdictSource,
} from './cors-policy.js';
export { applyHeadersAtomically, type HeaderTarget, type StoredHeaderValue } from './apply-headers.js';
export { checkOptionKeys, type ConfigMode, type ConfigProblem, ConfigProblems, type OptionKeysSpec } from './config-check.js';
export { CORS_OPTION_KEYS } from './cors-options.js';
export { compileOriginOption, judgeWithOriginMatcher, type OriginMatcher, type OriginOption, type OriginOptionMode } from './legacy-origin-option.js';
export { type AsyncVerifier, type AsyncVerifierConfig, createAsyncVerifier, type PublisherSource } from './async-verifier.js';
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
export { canonicalHost, isIpHost } from './canonical-host.js';
export { type CanonicalUrlParts, canonicalizeUrl, canonicalUrlParts } from './canonical-url.js';
export { urlExpressions } from './url-expressions.js';
export { hashPrefix, hashPrefixHex, type HashPrefixLength, sha256Utf8 } from './hash-prefix.js';
export { type AllowSetOption, allowSetSource, combineVerdictSources } from './verdict-sources.js';
