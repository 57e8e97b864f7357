/**
 * @ampcors/express — AMP-aware CORS middleware for Express 4 and 5, and a
 * drop-in replacement for the `cors` package. A thin adapter: Express's
 * request → @ampcors/core (drop-in-cors.ts decides) → Express's response.
 *
 * @packageDocumentation
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { EmailSender, Verdict } from '@ampcors/core';
import {
  appendVary,
  applyHeadersAtomically,
  type CorsDecision,
  type CorsPackageDelegate,
  type CorsPackageOptions,
  type CorsPackageOriginCallback,
  type CorsPackagePolicy,
  createCorsPackagePolicy,
  earlierGrantLeft,
  guardedDelegatePolicies,
  isThenable,
  NO_CORS_HEADERS,
  nodeRequestAbout,
  nodeRequestFacts,
  removeEarlierCorsHeaders,
} from '@ampcors/core/adapter';
import { storedHeader } from './node-headers.js';
import { attachVerdict } from './request-verdict.js';

export { ampRedirectTo, AmpCorsError, type AmpCorsConfig, type CorsOptions, type OriginOption, type Verdict, type VerdictSource } from '@ampcors/core';

declare global {
  namespace Express {
    interface Request {
      /** The ampcors verdict of this request (set by the `ampCors` middleware). */
      ampCors?: Verdict;
      /** The AMP for Email sender of this request, when `email` is configured and the request is one. */
      ampCorsEmail?: EmailSender;
    }
  }
}

/** The `cors` package's origin function: calls back with an `OriginOption` for this request's `Origin`. */
export type OriginCallback = CorsPackageOriginCallback;
/** Options of {@link ampCors}: the ampcors configuration plus the `cors` package's options (`origin`, `headers`, `optionsSuccessStatus`, a string `maxAge`). */
export type ExpressAmpCorsOptions = CorsPackageOptions;
/** The `cors` package's per-request options delegate. */
export type OptionsDelegate = CorsPackageDelegate<IncomingMessage>;
/** A middleware usable with Express 4 and 5 (and plain `node:http` with a `next`). */
export type AmpCorsMiddleware = (req: IncomingMessage, res: ServerResponse, next: (error?: unknown) => void) => void;
type Next = (error?: unknown) => void;
const ENTRY = 'ampCors (@ampcors/express)';

/** Applies a decision: headers (atomically), the verdict on `req` (when passed on), then the answer or `next()`; an error goes to `next(err)`. */
function apply(decision: CorsDecision, req: IncomingMessage, res: ServerResponse, next: Next): void {
  try {
    const { verdict, plan } = decision;
    // Headers already set are read from Node's store (node-headers.ts: a `getHeader` look-up costs a miss of V8's caches on Express).
    const replaced = applyHeadersAtomically(res, plan.headers, plan.vary, storedHeader);
    // An earlier ampCors (app-wide, this one on a router) decided this request, or an earlier layer of any framework (or
    // another CORS middleware) left a grant on `res`: this one decides instead (core's nested-policies.ts, 1. and 4.).
    // An answer this ampCors ends itself keeps no verdict unless an earlier one was there (request-verdict.ts).
    if (attachVerdict(req, verdict, plan.handled) || replaced || earlierGrantLeft(res, plan.headers, storedHeader)) removeEarlierCorsHeaders(res, plan.headers);
    if (plan.email !== undefined) (req as IncomingMessage & { ampCorsEmail?: EmailSender }).ampCorsEmail = plan.email;
    if (!plan.handled) return next();
    // Node sends the body's Content-Length itself (none with a 204, as RFC 9110 §8.6 requires); one set before is corrected.
    // (Read from Node's store, as above, and before `statusCode` is written: that adds an own property, which on Express
    // gives the response a hidden class of its own, where every first look-up misses V8's caches again.)
    if (storedHeader(res, 'content-length') !== undefined) res.setHeader('content-length', String(Buffer.byteLength(plan.body)));
    res.statusCode = plan.status;
    res.end(plan.body);
  } catch (error) {
    fail(error, res, next);
  }
}

/** An error goes to `next(err)` with `Vary: Origin` and no CORS header (not even an earlier ampCors's: core's nested-policies.ts). */
function fail(error: unknown, res: ServerResponse, next: Next): void {
  if (!res.headersSent) {
    removeEarlierCorsHeaders(res, NO_CORS_HEADERS);
    res.setHeader('Vary', appendVary(res.getHeader('Vary'), ['Origin']));
  }
  next(error);
}

function run(configured: CorsPackagePolicy, req: IncomingMessage & { originalUrl?: string }, res: ServerResponse, next: Next): void {
  try {
    // `Reflect.get`, not `req.originalUrl`: a first look-up on Express's per-request hidden class (core's request-facts.ts says why).
    const decision = configured.decide(nodeRequestFacts(req, Reflect.get(req, 'originalUrl') as string | undefined));
    if (!isThenable(decision)) return apply(decision, req, res, next);
    decision.then(
      (settled) => apply(settled, req, res, next),
      (error: unknown) => fail(error, res, next),
    );
  } catch (error) {
    fail(error, res, next);
  }
}

/**
 * Creates the ampcors middleware for Express 4 and 5.
 *
 * With `publishers`, `origins` or `verifier`: trusts the publisher's origins
 * and its AMP cache origins, answers preflights, stops denied origins with
 * 403 before later handlers run (`onDenied: 'omit'` lets them through), and
 * sets `req.ampCors` to the verdict of each request it passes on (an
 * answer it ends itself, a preflight's or a 403, keeps none). With the `cors` package's options
 * (`origin`, an options delegate `(req, callback)`, or nothing): behaves as
 * `cors` does, except where that is unsafe (drop-in-cors.ts in
 * @ampcors/core; the README's "Migrating from cors" lists every difference).
 * Errors (a throwing verifier, origin callback or delegate) go to
 * `next(err)` with `Vary: Origin` already set.
 *
 * @throws AmpCorsError for an invalid configuration, listing every problem.
 * @example app.use('/api', ampCors({ publishers: ['example.com'] }))
 */
export function ampCors(options?: ExpressAmpCorsOptions | OptionsDelegate): AmpCorsMiddleware {
  if (typeof options !== 'function') {
    const configured = createCorsPackagePolicy(options, ENTRY);
    return (req, res, next) => run(configured, req, res, next);
  }
  const delegate = options;
  // With credentials, an answer allowing the request's Origin is checked by asking the delegate about a canary request (delegate-guard.ts).
  const policyOf = guardedDelegatePolicies(delegate, ENTRY, nodeRequestAbout);
  return (req, res, next) => {
    try {
      delegate(req, (error, perRequest) => {
        if (error) return fail(error, res, next);
        try {
          run(policyOf(perRequest, req), req, res, next);
        } catch (failure) {
          fail(failure, res, next);
        }
      });
    } catch (error) {
      fail(error, res, next);
    }
  };
}
