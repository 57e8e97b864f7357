/**
 * Asking a user's origin function — the `cors` package's
 * `origin(origin, callback)` and `@fastify/cors`'s — in the one way both
 * adapters need: synchronously when it answers synchronously, so that a
 * synchronous configuration keeps a synchronous request path.
 */
import { isThenable } from './request-facts.js';

/** A Node-style callback an origin function answers with. */
export type OriginCallbackAnswer = (error: Error | null | undefined, allow?: unknown) => void;

type Settled = { readonly error: unknown } | { readonly answer: unknown };

/**
 * Calls `invoke` (which calls the user's function with the given callback
 * and returns what the function returned) and gives its answer: the value
 * now when the function called back synchronously (or threw now), otherwise
 * a Promise of it. A function returning a Promise may answer with the
 * Promise's value instead of the callback (a value of `undefined` is no
 * answer: the callback is awaited, unless `options.promiseAnswers`); a
 * rejection is an error, as `callback(error)` is. The first answer wins;
 * later ones are ignored.
 *
 * @param options - `promiseAnswers: true` reads a Promise's value as the answer even when it is `undefined` (`@fastify/cors` does: an `async` function that returns nothing has answered, and must not leave the request waiting for a callback nobody will call)
 * @throws what the function threw, or the error it called back with synchronously.
 */
export function askOriginCallback(invoke: (callback: OriginCallbackAnswer) => unknown, options?: { readonly promiseAnswers?: boolean }): unknown {
  const promiseAnswers = options?.promiseAnswers === true;
  let settled: Settled | undefined;
  let deliver: ((outcome: Settled) => void) | undefined;
  const done = (outcome: Settled) => {
    if (settled !== undefined) return;
    settled = outcome;
    deliver?.(outcome);
  };
  const returned = invoke((error, allow) => done(error ? { error } : { answer: allow }));
  // Even after a synchronous answer: a rejection left unhandled would stop the process.
  if (isThenable(returned)) {
    returned.then(
      (value) => {
        if (value !== undefined || promiseAnswers) done({ answer: value });
      },
      (error: unknown) => done({ error: error ?? new Error('the origin function rejected') }),
    );
  }
  if (settled !== undefined) {
    if ('error' in settled) throw settled.error;
    return settled.answer;
  }
  return new Promise<unknown>((resolve, reject) => {
    deliver = (outcome) => ('error' in outcome ? reject(outcome.error) : resolve(outcome.answer));
  });
}
