/**
 * `@ampcors/core/adapter` — what a framework adapter needs and an
 * application does not: the policy an adapter builds once, the request facts
 * it reads, the plan it applies, and the drop-in helpers for the peers'
 * option shapes. Every adapter of this repository is written on this entry
 * alone (plus the user-facing types of the main entry); an adapter for
 * another framework can be too.
 *
 * @packageDocumentation
 */
export {
  type AdapterOptionsSpec,
  AMP_CORS_CONFIG_KEYS,
  type AmpCorsConfig,
  type CorsDecision,
  type CorsPolicy,
  createCorsPolicy,
  type VerdictSource,
} from './cors-policy.js';
export {
  AMP_REDIRECT_TO,
  AMP_SOURCE_ORIGIN_HEADER,
  appendVary,
  type CorsPlan,
  type EndPlan,
  type PassPlan,
  type CorsRequest,
  isPreflight,
  normalizeCorsOptions,
  type NormalizedCorsOptions,
  planCors,
  reflectableHeaders,
  sourceOriginOfUrl,
  verifyContextOf,
} from './cors-response.js';
export { applyHeadersAtomically, type HeaderTarget, type StoredHeaderValue } from './apply-headers.js';
export { checkOptionKeys, type ConfigMode, type ConfigProblem, ConfigProblems, type OptionKeysSpec } from './config-check.js';
export { CORS_OPTION_KEYS } from './cors-options.js';
export {
  compileOriginOption,
  judgeWithOriginMatcher,
  type OriginAsk,
  type OriginFunctionSource,
  type OriginMatcher,
  type OriginOption,
  type OriginOptionMode,
} from './legacy-origin-option.js';
export {
  type FactsOptions,
  fetchRequestFacts,
  type HeaderLookup,
  isThenable,
  nodeHeader,
  type NodeHeaders,
  nodeRequestAbout,
  nodeRequestFacts,
  requestFacts,
} from './request-facts.js';
export { askOriginCallback, type OriginCallbackAnswer } from './origin-callback.js';
export {
  createFetchCorsPolicy,
  createHonoCorsPolicy,
  HONO_CORS_METHODS,
  HONO_CORS_NAMES,
  type HonoContexts,
  type HonoCorsOptions,
  type HonoCorsPolicy,
  type HonoMethodsFunction,
  type HonoOriginFunction,
} from './drop-in-hono-cors.js';
export { type KoaCorsContext, type KoaCorsOptions, type KoaCorsOriginFunction, type KoaCorsPolicy, createKoaCorsPolicy } from './drop-in-koa-cors.js';
export {
  createFastifyCorsPolicy,
  type FastifyCorsOptions,
  type FastifyCorsOriginFunction,
  type FastifyCorsPolicy,
  type FastifyCorsOwnAnswer,
  type FastifyCorsRequest,
} from './drop-in-fastify-cors.js';
export {
  type CorsPackageDelegate,
  type CorsPackageOptions,
  type CorsPackageOriginCallback,
  type CorsPackagePolicy,
  corsPackagePolicies,
  createCorsPackagePolicy,
} from './drop-in-cors.js';
export { exhaustedRewrites, lazyProperty, type OriginRewriter, originRewriter } from './asked-origin.js';
export { guardedDelegatePolicies, type RequestAbout } from './delegate-guard.js';
export {
  clearEarlierCorsHeaders,
  CORS_RESPONSE_HEADERS,
  earlierGrantLeft,
  grantChangedSince,
  type HeaderRemover,
  type HeaderStore,
  InnermostDecisions,
  lastTakeBack,
  NO_CORS_HEADERS,
  type NodeResponseLike,
  nodeResponseIn,
  pairsOverUnnoted,
  removeEarlierCorsHeaders,
  type TakeBack,
} from './nested-policies.js';
export {
  answerOver,
  Carrier,
  copyOf,
  DecidedRequest,
  noteMade,
  noteWritten,
  unwrite,
  type WrittenNote,
  writePlan,
  writesFor,
  writesSoFar,
  writableResponse,
  writtenNoteOf,
} from './written-responses.js';
export { carriesGrant, overruledCorsHeaders, removeOwnGrant } from './response-bodies.js';
