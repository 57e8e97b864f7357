/**
 * The `cors` package's per-request options delegate, guarded (issue #14
 * item 3; attacker's review, session 14). A delegate answers options built
 * from the request it is given, so an answer that copies the request's
 * `Origin` (`{ origin: req.headers.origin, credentials: true }`,
 * `origin: [req.headers.origin]`, `publishers` plus that origin) trusts every
 * origin with credentials, as `origin: true` does, which ampcors refuses
 * with credentials. Each answer is compiled as a static configuration, so
 * nothing in it shows the copy; the delegate's behaviour does. Written once
 * here so that an adapter only says how to make its request about another
 * origin.
 *
 * 1. An answer without credentials is used as is (no cost).
 * 2. A decision of an answer with credentials that allows the request's own
 *    `Origin` (not as a same-origin request) is checked: the delegate is
 *    asked again about the same request made about a canary origin shaped
 *    like that `Origin` (same scheme and port, a host no configuration
 *    names: legacy-origin-option.ts's `canaryLike`), and about each of the
 *    `Origin`'s look-alikes (`lookAlikes` there: a delegate checking
 *    `o.endsWith('example.com')` also allows `https://<canary>example.com`).
 *    Each answer decides its own request (the `__amp_source_origin`,
 *    `AMP-Same-Origin`, `Sec-Fetch-Site` and AMP for Email sender left out,
 *    so none of them can turn the question away). An answer allowing the
 *    canary or a look-alike with credentials fails the request with an
 *    `unsafe-configuration` error, as `origin: true` with credentials does,
 *    and every later request that would be checked fails with it too (a
 *    delegate that copies only some shapes of `Origin` is caught for good
 *    the first time a question has one).
 *    An answer about the canary that is no valid configuration
 *    (`publishers: [its host]` when the canary's host is under an AMP cache
 *    domain) is asked about a second canary of another host.
 * 3. The questions are bounded together like an origin function's
 *    (`QUESTION_TIMEOUT_MS`, from when they are asked, confirmations
 *    included): a synchronous yes ends them, pending ones are awaited
 *    together, and a yes ends the wait. A delegate that calls back with an
 *    error, throws, answers invalid options, or whose answer's verifier
 *    fails, has not allowed that origin (such a delegate also leaves real
 *    requests from unknown origins without an answer, so it is not one that
 *    copies the `Origin`); an answer refused as unsafe (an origin function
 *    in it that allows the origin asked about) has. A question still
 *    unanswered at the bound (or whose answer's own origin function left
 *    its guard unanswered) is unknown, and unknown never yields
 *    credentials: the request fails (legacy-origin-option.ts's
 *    `unansweredRefusal`), this one only: the answer is not marked checked
 *    nor the delegate unsafe, so a slow spell does not refuse later
 *    requests, which are asked again. A delegate answering in t seconds
 *    delays an allowed credentialed request by 2t when t is at most 2 s,
 *    and fails it after t + 2 s otherwise (the questions cannot be asked
 *    alongside the real one: they depend on its answer, and 4 skips them
 *    for an answer already checked).
 * 4. The cost: the delegate is asked 2 + the look-alike count more times
 *    (the canary twice, since a "no" right after its "yes" to the real
 *    request is asked again: `askedInTurn`; eleven for
 *    `https://www.example.com`, fourteen for `http://192.168.1.20`, eleven
 *    for an IPv6 address; a same-shape look-alike that was allowed adds its
 *    confirmation, twice when not allowed) per allowed credentialed request
 *    (a delegate with side effects sees them; an asynchronous one sees them
 *    at once). Not again for an answer object already checked and
 *    unchanged since (the same policy from `corsPackagePolicies`, which
 *    compiles a changed object again): its origins are fixed data, not a
 *    copy of this request's `Origin`. A delegate answering a new object per
 *    request (the usual literal) is asked each time.
 *
 * 5. A question's request is the real one made about the asked origin
 *    (the adapter's `about`: request-facts.ts's `nodeRequestAbout`, Koa's
 *    and Hono's `contextAbout`): the asked origin shows wherever the real
 *    one did, not only in `Origin` (asked-origin.ts; attacker's review,
 *    session 15: a delegate echoing `req.query.__amp_source_origin` or the
 *    `Referer`'s origin answered the real origin to every question and
 *    passed): header values (never `Host` nor `Cookie`), the URL's path
 *    segments and query parameters, however encoded, Express's `req.query`,
 *    `req.params` and `req.res.req`.
 *
 * Not covered, by design: a delegate written to recognise canaries, and one
 * that reads the origin from somewhere the question cannot show another
 * (the guard cannot tell a copy of the attacker's origin from data the
 * server checked and stored): a closure kept from an earlier request, a
 * global, a cookie (the server may have set it from a checked origin; a
 * cookie it set from the `Origin` itself stays undetectable), the body, a
 * session or a database keyed by the request, and an origin assembled from
 * pieces none of which holds its host (`https://${req.query.sub}.example.net`);
 * and, as for an origin function, a delegate whose answers depend on its
 * earlier calls otherwise than `askedInTurn` undoes (a memo around a `g`
 * RegExp, a `g` or `y` RegExp tested after waiting on I/O).
 */
import type { CorsDecision } from './cors-policy.js';
import type { CorsRequest } from './cors-response.js';
import { type CorsPackageDelegate, type CorsPackageOptions, type CorsPackagePolicy, corsPackagePolicies } from './drop-in-cors.js';
import { AmpCorsError, isAmpCorsError } from './errors.js';
import { exhaustedRewrites } from './asked-origin.js';
import {
  askedInTurn,
  canaryLike,
  exhaustedRefusal,
  isUnansweredRefusal,
  type LookAlike,
  lookAlikes,
  QUESTION_TIMEOUT_MS,
  unansweredRefusal,
} from './legacy-origin-option.js';
import { askOriginCallback } from './origin-callback.js';
import { type ParsedOrigin, parseOrigin } from './origin-header.js';
import { isThenable } from './request-facts.js';

/** Makes an adapter's request about another `Origin` (the rest of the request as it is), for the delegate's canary question. */
export type RequestAbout<R> = (req: R, origin: string) => R;

/** The shape of an allowed `Origin` that {@link canaryLike} is given when the `Origin` is no canonical origin (a custom verifier allowed it). */
const HTTPS_SHAPE: ParsedOrigin = { ok: true, scheme: 'https', host: '', port: null };

/** 2. The failure of a request whose delegate also allowed `canary`. */
function delegateRefusal(canary: string): AmpCorsError {
  return new AmpCorsError(
    'unsafe-configuration',
    `the options delegate (asked about the same request from ${canary}, an origin no configuration names, it allowed it) together with credentials lets every site read credentialed responses: an answer copying the request's Origin is origin: true; check the Origin against a list of trusted origins in the delegate, or set credentials: false`,
  );
}

/** 2. The failure of a request whose delegate also allowed `twin`, a look-alike of the allowed `origin`. */
function lookAlikeRefusal(origin: string, twin: LookAlike): AmpCorsError {
  return new AmpCorsError(
    'unsafe-configuration',
    `the options delegate allows ${origin} and also ${twin.origin}, a look-alike anyone could register (asked about the same request from it; ${twin.mistake}): together with credentials every such site could read credentialed responses; compare the Origin with exact trusted origins in the delegate (a suffix check needs its leading dot), or set credentials: false`,
  );
}

/**
 * What one canary question found: the canary allowed with credentials, not
 * allowed, an answer ampcors refuses as configuration, or unknown (an origin
 * function in the answer left its own guard's questions unanswered).
 */
type Finding = 'allowed' | 'not-allowed' | 'invalid' | 'unanswered';

/**
 * 3. What a failure while asking about a canary means: an origin function
 * in the answer that left its guard's questions unanswered is unknown;
 * ampcors's refusal of the answer as allowing every origin
 * (`unsafe-configuration`: e.g. an origin function in it that allows the
 * canary, which that function's own guard refuses) allowed it; another
 * `AmpCorsError` is an answer that is no valid configuration; anything else
 * (the delegate's error or throw, a failing verifier) did not allow it.
 */
function findingOfFailure(error: unknown): Finding {
  if (isUnansweredRefusal(error)) return 'unanswered';
  if (!isAmpCorsError(error)) return 'not-allowed';
  return error.code === 'unsafe-configuration' ? 'allowed' : 'invalid';
}

/** Continues with a value now, or once its Promise settles; a throw or a rejection is read by {@link findingOfFailure}. */
function thenFinding<A>(value: () => A | PromiseLike<A>, next: (settled: A) => Finding | Promise<Finding>): Finding | Promise<Finding> {
  try {
    const settled = value();
    if (isThenable(settled)) return Promise.resolve(settled).then(next).then(undefined, findingOfFailure);
    const found = next(settled);
    return isThenable(found) ? found.then(undefined, findingOfFailure) : found;
  } catch (error) {
    return findingOfFailure(error);
  }
}

/** 3. What one question (the canary's, or a look-alike's with its confirmation) comes to: a refusal, unknown, or nothing found. */
type Outcome = AmpCorsError | 'unanswered' | undefined;

/** 3. What a question waits on (updated when a second canary or a confirmation is asked), for the failure of an unknown one. */
type Waiting = { unanswered: string; readonly canary: boolean };

/**
 * 3. The verdict of all the questions about one allowed `origin`: the first
 * refusal, as soon as one settles with it; otherwise, once all settled, the
 * failure of the first unknown one (in the order asked), or `undefined` when
 * none is; after {@link QUESTION_TIMEOUT_MS} with questions still pending,
 * the failure of the first one pending or unknown.
 */
function firstRefusal(outcomes: ReadonlyArray<Outcome | Promise<Outcome>>, asked: readonly Waiting[], origin: string): Promise<AmpCorsError | undefined> {
  const settled = outcomes.map((outcome) => (isThenable(outcome) ? null : outcome));
  const firstUnknown = () => {
    const at = settled.findIndex((outcome) => outcome === null || outcome === 'unanswered');
    return at < 0 ? undefined : unansweredRefusal('the options delegate', origin, asked[at] as Waiting);
  };
  return new Promise((resolve) => {
    let left = settled.filter((outcome) => outcome === null).length;
    const timer = setTimeout(() => resolve(firstUnknown()), QUESTION_TIMEOUT_MS);
    for (const [at, outcome] of outcomes.entries()) {
      if (!isThenable(outcome)) continue;
      void outcome.then((found) => {
        settled[at] = found;
        left -= 1;
        const refusal = found instanceof AmpCorsError;
        if (!refusal && left > 0) return;
        clearTimeout(timer);
        resolve(refusal ? found : firstUnknown());
      });
    }
  });
}

/**
 * The policies of a delegate's answers (`corsPackagePolicies`), each
 * decision of an answer with credentials guarded against an answer copying
 * the request's `Origin` (see the file comment).
 *
 * @param delegate - the application's options delegate, asked again about canary requests
 * @param entry - the entry point named in error messages, e.g. `ampCors (@ampcors/express)`
 * @param about - makes the adapter's request about another `Origin` (for Node requests, request-facts.ts's `nodeRequestAbout`)
 * @returns the policy of an answer, for the request it answered; throws AmpCorsError for an invalid answer; its decision fails with AmpCorsError `unsafe-configuration` when the delegate also allows a canary or a look-alike, or leaves one of those questions unanswered within the bound
 */
export function guardedDelegatePolicies<R>(
  delegate: CorsPackageDelegate<R>,
  entry: string,
  about: RequestAbout<R>,
): (options: CorsPackageOptions | undefined, req: R) => CorsPackagePolicy {
  const policies = corsPackagePolicies(entry);
  // 4. Policies of answer objects whose check passed (each lives as long as its answer object, in corsPackagePolicies).
  const checked = new WeakSet<CorsPackagePolicy>();
  // 2. Once the delegate has allowed a canary or a look-alike, every later allow it is checked for fails.
  let unsafe: AmpCorsError | undefined;

  /** 2–3. What the delegate, asked about `req` made about `canary`, answers: whether its options allow `canary` with credentials. */
  const ask = (req: R, request: CorsRequest, canary: string): Finding | Promise<Finding> => {
    const facts: CorsRequest = {
      method: request.method,
      origin: canary,
      requestMethod: request.requestMethod,
      requestHeaders: request.requestHeaders,
      requestPrivateNetwork: request.requestPrivateNetwork,
    };
    const allows = ({ verdict }: CorsDecision): Finding => (verdict.allowed && verdict.origin === canary ? 'allowed' : 'not-allowed');
    return thenFinding(
      () => askOriginCallback((callback) => delegate(about(req, canary), callback)),
      (answer) => {
        const configured = policies(answer as CorsPackageOptions | undefined);
        if (!configured.policy.options.credentials) return 'not-allowed';
        return thenFinding(() => configured.decide(facts), allows);
      },
    );
  };

  /**
   * 2–3. Whether the delegate allows a canary (the one `waiting` then
   * names): asked about one canary shaped like `shape`, and about a second
   * one of another host only when its answer about the first is no valid
   * configuration (a canary host can be refused where a real one is not:
   * `publishers: [its host]` for the AMP cache canary). One canary turn per
   * request otherwise, so that the canaries cycle through every host.
   * `asking` asks the delegate about the request made about an origin.
   */
  const canaryFinding = (asking: (canary: string) => Finding | Promise<Finding>, shape: ParsedOrigin, waiting: Waiting): Finding | Promise<Finding> => {
    const first = canaryLike(shape);
    waiting.unanswered = first;
    const firstFinding = asking(first);
    const conclude = (found: Finding): Finding | Promise<Finding> => {
      if (found !== 'invalid') return found;
      // Other requests may have taken canaries meanwhile: the next one can have the first's host again, never twice.
      let second = canaryLike(shape);
      if (second === first) second = canaryLike(shape);
      waiting.unanswered = second;
      const secondFinding = asking(second);
      const last = (again: Finding): Finding => (again === 'invalid' ? 'not-allowed' : again);
      return isThenable(secondFinding) ? secondFinding.then(last) : last(secondFinding);
    };
    return isThenable(firstFinding) ? firstFinding.then(conclude) : conclude(firstFinding);
  };

  /**
   * 2–3. The refusal of an allowed `origin`, if the delegate also allows a
   * canary shaped like it or one of its look-alikes, or the failure of a
   * question left unanswered: the canary is asked first; a synchronous yes
   * ends the questions, pending ones are awaited together, bounded as a
   * whole ({@link firstRefusal}). They follow the delegate's "yes" to the
   * real request, and each "no" right after a "yes" is asked once more
   * (`askedInTurn`: a delegate testing a RegExp with the `g` or `y` flag
   * says "no" to whatever follows a "yes").
   */
  const refusalOf = (req: R, request: CorsRequest, origin: string): AmpCorsError | undefined | Promise<AmpCorsError | undefined> => {
    const asking = askedInTurn(
      (asked: string) => ask(req, request, asked),
      true,
      (found) => found === 'allowed',
    );
    const parsed = parseOrigin(origin);
    const outcomes: Array<Outcome | Promise<Outcome>> = [];
    const asked: Waiting[] = [];
    /** Adds a question's finding; returns its refusal when it allowed, synchronously. */
    const add = (found: Finding | Promise<Finding>, waiting: Waiting, refusal: () => AmpCorsError): AmpCorsError | undefined => {
      const outcomeOf = (settled: Finding): Outcome => (settled === 'allowed' ? refusal() : settled === 'unanswered' ? 'unanswered' : undefined);
      const outcome = isThenable(found) ? found.then(outcomeOf) : outcomeOf(found);
      outcomes.push(outcome);
      asked.push(waiting);
      return outcome instanceof AmpCorsError ? outcome : undefined;
    };
    const canary: Waiting = { unanswered: '', canary: true };
    const byCanary = add(canaryFinding(asking, parsed.ok ? parsed : HTTPS_SHAPE, canary), canary, () => delegateRefusal(canary.unanswered));
    if (byCanary !== undefined) return byCanary;
    for (const twin of parsed.ok ? lookAlikes(parsed) : []) {
      // A same-shape look-alike counts once its confirmation is allowed too (asked only then: a list may name the first).
      const { confirm } = twin;
      const waiting: Waiting = { unanswered: twin.origin, canary: false };
      const first = asking(twin.origin);
      const confirmed = (settled: Finding) => {
        if (settled !== 'allowed' || confirm === undefined) return settled;
        waiting.unanswered = confirm;
        return asking(confirm);
      };
      const byTwin = add(isThenable(first) ? first.then(confirmed) : confirmed(first), waiting, () => lookAlikeRefusal(origin, twin));
      if (byTwin !== undefined) return byTwin;
    }
    if (outcomes.some(isThenable)) return firstRefusal(outcomes, asked, origin);
    const unknown = outcomes.indexOf('unanswered');
    return unknown < 0 ? undefined : unansweredRefusal('the options delegate', origin, asked[unknown] as Waiting);
  };

  return (options, req) => {
    const configured = policies(options);
    // 1. Without credentials, nothing to guard.
    if (!configured.policy.options.credentials) return configured;
    const guard = (decision: CorsDecision, request: CorsRequest): CorsDecision | Promise<CorsDecision> => {
      const { verdict } = decision;
      const origin = request.origin;
      // 2. Only an allow of the request's own Origin (not as the API's own page) can be a copy of it.
      if (!verdict.allowed || verdict.via === 'same-origin' || typeof origin !== 'string' || verdict.origin !== origin) return decision;
      if (unsafe !== undefined) throw unsafe;
      // 4. An answer already checked is not asked about again.
      if (checked.has(configured)) return decision;
      const budget = exhaustedRewrites();
      const refusal = refusalOf(req, request, origin);
      const conclude = (found: AmpCorsError | undefined): CorsDecision => {
        // 3. A question whose request copy ran out of rewriting budget is unknown, whatever it answered: this request fails
        // only (a concurrent request's exhausted rewrite may fail this one too, never pass it).
        if (exhaustedRewrites() !== budget) throw exhaustedRefusal('the options delegate', origin);
        // 3. Unknown fails this request only: not remembered as unsafe, nor as checked.
        if (isUnansweredRefusal(found)) throw found;
        if (found !== undefined) throw (unsafe ??= found);
        checked.add(configured);
        return decision;
      };
      return isThenable(refusal) ? refusal.then(conclude) : conclude(refusal);
    };
    return {
      policy: configured.policy,
      decide(request) {
        const decided = configured.decide(request);
        return isThenable(decided) ? Promise.resolve(decided).then((settled) => guard(settled, request)) : guard(decided, request);
      },
    };
  };
}
