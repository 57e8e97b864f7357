/**
 * A handler's Fetch API `Response` given as the body to a framework that
 * copies its headers over the answer when it sends it, after ampcors wrote
 * its own (Koa 3's `ctx.body = response`, Fastify 4 and 5's
 * `reply.send(response)` or a returned Response): the usual proxy,
 * `ctx.body = await fetch(upstream)`. Attacker's review, session 16: the
 * upstream's `Vary: Accept-Encoding` replaced ampcors's `Vary: Origin`
 * while `Access-Control-Allow-Origin` and `-Credentials` stayed, so a
 * shared cache gave one Origin's answer to another; and the upstream's own
 * CORS headers (`Access-Control-Allow-Origin: *`, or its echo of an Origin
 * ampcors denied) replaced ampcors's decision. The adapter keeps it:
 *
 * 1. `Vary`: the names ampcors put on the answer are merged into the
 *    Response's (`appendVary`; its `*` stays `*`).
 * 2. A CORS header the answer sets (ampcors's plan) keeps ampcors's value:
 *    the Response's is dropped.
 * 3. A Response carrying a grant (an `Access-Control-Allow-Origin`,
 *    `-Credentials`, `AMP-Access-Control-Allow-Source-Origin` or
 *    `AMP-Email-Allow-Sender`: an upstream's `*`, or its echo of an Origin
 *    ampcors denied and let through with `onDenied: 'omit'`) brings none of
 *    its CORS headers: the answer has the plan's, and only those, as under
 *    an earlier layer's grant (nested-policies.ts, 4.). Without one, its
 *    other CORS headers (an `Access-Control-Expose-Headers` of its own
 *    where the plan sets none) stay, as a handler's own headers do.
 *
 * The Fetch and Hono adapters write after the handler, into the Response
 * itself (written-responses.ts): 1. and 2. are their writing; 3. is
 * {@link removeOwnGrant} (attacker's review, session 16: `withAmpCors(() =>
 * fetch(upstream), { onDenied: 'omit' })` kept the upstream's echo of a
 * denied Origin with `-Credentials`, and an `AMP-Email-Allow-Sender` for a
 * sender ampcors denied).
 */
import { CORS_GRANTS, CORS_RESPONSE_HEADERS, removeCorsHeadersBeyond } from './nested-policies.js';

/**
 * The CORS headers of `response` (a body `Response`'s headers) that must not
 * reach the answer: all of them when one is a grant (3.), else those the
 * answer sets (2.). Names in lower case; empty when there are none (the
 * usual case: one `has` per CORS header name).
 *
 * @param sets - whether the answer (ampcors's plan, as the adapter wrote it) sets the header `name` (lower case)
 */
export function overruledCorsHeaders(response: Headers, sets: (name: string) => boolean): string[] {
  const carried = CORS_RESPONSE_HEADERS.filter((name) => response.has(name));
  // 3. A grant of its own: none of its CORS headers stay.
  if (carried.some((name) => CORS_GRANTS.includes(name))) return carried;
  // 2. Else ampcors's values stand where it set one.
  return carried.filter(sets);
}

/**
 * 3. Whether a handler's `Response` carries a grant of its own (any of
 * {@link CORS_GRANTS}): the Fetch and Hono adapters then remove every CORS
 * header of it their plan does not set. Up to four `has`.
 */
export function carriesGrant(response: Headers): boolean {
  for (let i = 0; i < CORS_GRANTS.length; i++) if (response.has(CORS_GRANTS[i] as string)) return true;
  return false;
}

/**
 * 3. When a `Response`'s `headers`, before the Fetch or Hono adapter writes
 * its plan into them, carry a grant ({@link carriesGrant}): one another
 * layer made (`hono/cors` app-wide, or `c.header('Access-Control-Allow-Origin', …)`
 * before `next()`, merged by Hono into the handler's Response) or the
 * handler's own (a proxied upstream's echo of a denied Origin, its
 * `AMP-Email-Allow-Sender`), removes every CORS header `pairs` (the plan's)
 * does not set: the plan decides (nested-policies.ts, 4.). Whether there
 * was such a grant. Up to four `has` when there is none (the usual case).
 */
export function removeOwnGrant(headers: Headers, pairs: ReadonlyArray<readonly [string, string]>): boolean {
  if (!carriesGrant(headers)) return false;
  removeCorsHeadersBeyond({ removeHeader: (name) => headers.delete(name) }, pairs);
  return true;
}
