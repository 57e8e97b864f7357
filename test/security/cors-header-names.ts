/**
 * Every CORS header a plan may set but `Vary`, written out here for the
 * attacker-side tests of nested policies (core's CORS_RESPONSE_HEADERS
 * again: a test does not trust the list it checks).
 */
export const CORS_HEADERS = [
  'access-control-allow-origin',
  'access-control-allow-credentials',
  'access-control-expose-headers',
  'amp-access-control-allow-source-origin',
  'amp-email-allow-sender',
  'access-control-allow-methods',
  'access-control-allow-headers',
  'access-control-max-age',
  'access-control-allow-private-network',
] as const;
