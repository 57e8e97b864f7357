// The record of what ampcors wrote into a Response (core's written-responses.ts) and the rule a layer meeting one
// follows (nested-policies.ts, 3.; attacker's review, session 15: two ampCors layers with the Request rebuilt between
// them). The adapters' behaviour is tested in test/security/attacks-session15-reattack2-nested-new-request.test.ts.
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { answerOver, copyOf, noteMade, noteWritten, unwrite, writePlan, writesSoFar, writtenNoteOf } from '@ampcors/core/adapter';

const PARTNER = 'https://partner.example';
const OPEN = { name: 'open policy' };
const STRICT = { name: 'strict policy' };
const ALLOW: ReadonlyArray<readonly [string, string]> = [
  ['access-control-allow-origin', PARTNER],
  ['access-control-allow-credentials', 'true'],
];

/** A Response `policy` wrote `pairs` into (in place, noted), for a request from `origin`. */
function written(policy: object, pairs: ReadonlyArray<readonly [string, string]>, origin: string | null = PARTNER, init?: ResponseInit): Response {
  const response = new Response('body', init);
  noteWritten(response, writePlan(response.headers, pairs, ['Origin'], 'Origin', policy, origin));
  return response;
}

const cors = (response: Response) => [...response.headers].filter(([name]) => name.startsWith('access-control-')).sort();

describe('the note', () => {
  it('says what was written, by which policy, when and for which Origin; a copy keeps the body and every Set-Cookie', async () => {
    const before = writesSoFar();
    const response = new Response('data', {
      status: 404,
      headers: [
        ['vary', 'Accept'],
        ['set-cookie', 'a=1'],
        ['set-cookie', 'b=2'],
      ],
    });
    noteWritten(response, writePlan(response.headers, ALLOW, ['Origin'], 'Origin', OPEN, PARTNER));
    const note = writtenNoteOf(response);
    expect(note).toMatchObject({ pairs: ALLOW, varyBefore: 'Accept', varyWritten: 'Accept, Origin', policy: OPEN, origin: PARTNER });
    expect(note?.at).toBeGreaterThan(before);
    expect(writtenNoteOf(new Response(null))).toBeUndefined();
    expect(writtenNoteOf('not an object')).toBeUndefined();
    const copy = copyOf(response);
    expect(copy.headers.getSetCookie()).toEqual(['a=1', 'b=2']);
    expect(unwrite(copy.headers, note!).get('vary')).toBe('Accept');
    expect(copy.headers.get('access-control-allow-origin')).toBeNull();
    expect([copy.status, await copy.text(), await response.text()]).toEqual([404, 'data', 'data']);
  });

  it('an answer ampcors made itself is noted with its Vary; an object that takes no new property keeps its note too', () => {
    const made = new Response(null, { headers: { vary: 'Origin' } });
    noteMade(made, ALLOW, 'Origin', STRICT, null);
    expect(writtenNoteOf(made)).toMatchObject({ pairs: ALLOW, varyBefore: null, varyWritten: 'Origin', policy: STRICT, origin: null });
    const frozen = Object.freeze(new Response(null));
    noteMade(frozen, [], null, STRICT, PARTNER);
    expect(writtenNoteOf(frozen)).toMatchObject({ pairs: [], varyWritten: undefined, policy: STRICT });
  });
});

describe('a layer meeting a noted Response (answerOver)', () => {
  it("another policy's denial written while its handler ran, same Origin (an inner layer's): left alone", () => {
    const since = writesSoFar();
    const inner = written(STRICT, []);
    expect(answerOver(inner, writtenNoteOf(inner)!, OPEN, since, PARTNER, ALLOW, ['Origin'], 'Origin')).toBe(inner);
  });

  it("another policy's allow met by a stricter plan while its handler ran: a copy without what the plan does not grant", () => {
    const since = writesSoFar();
    const open = written(OPEN, ALLOW);
    const answer = answerOver(open, writtenNoteOf(open)!, STRICT, since, PARTNER, [], ['Origin'], 'Origin');
    expect(answer).not.toBe(open);
    expect(cors(answer)).toEqual([]);
    expect(cors(open)).toEqual([...ALLOW].sort());
    expect(writtenNoteOf(answer)?.policy).toBe(STRICT);
  });

  it('the same policy, a note older than the handler, or another Origin: a copy as it was, with this plan', () => {
    const plan: ReadonlyArray<readonly [string, string]> = [['access-control-allow-origin', 'https://example.com']];
    const mine = written(STRICT, []);
    const sameSince = writesSoFar() - 1;
    expect(cors(answerOver(mine, writtenNoteOf(mine)!, STRICT, sameSince, PARTNER, ALLOW, ['Origin'], 'Origin'))).toEqual([...ALLOW].sort());
    const old = written(OPEN, []);
    expect(cors(answerOver(old, writtenNoteOf(old)!, STRICT, writesSoFar(), PARTNER, ALLOW, ['Origin'], 'Origin'))).toEqual([...ALLOW].sort());
    const since = writesSoFar();
    const other = written(OPEN, ALLOW);
    expect(cors(answerOver(other, writtenNoteOf(other)!, STRICT, since, 'https://example.com', plan, ['Origin'], 'Origin'))).toEqual([...plan]);
  });

  it('a Response whose body was read cannot be copied: a throw (the adapter answers a plain 500)', async () => {
    const since = writesSoFar();
    const open = written(OPEN, ALLOW);
    await open.text();
    expect(() => answerOver(open, writtenNoteOf(open)!, STRICT, since, PARTNER, [], ['Origin'], 'Origin')).toThrow();
  });

  it('property: in flight, another policy, same Origin: the answer grants no CORS header that either side does not grant with the same value', () => {
    const name = fc.constantFrom(
      'access-control-allow-origin',
      'access-control-allow-credentials',
      'access-control-expose-headers',
      'access-control-max-age',
      'content-type',
    );
    const value = fc.constantFrom('a', 'b', 'true');
    const pairs = fc.uniqueArray(fc.tuple(name, value), { selector: ([n]) => n, maxLength: 5 });
    fc.assert(
      fc.property(pairs, pairs, (noted, plan) => {
        const since = writesSoFar();
        const response = written(OPEN, noted);
        const answer = answerOver(response, writtenNoteOf(response)!, STRICT, since, PARTNER, plan, ['Origin'], 'Origin');
        for (const [header, given] of answer.headers) {
          if (!header.startsWith('access-control-')) continue;
          expect(noted.some(([n, v]) => n === header && v === given)).toBe(true);
          expect(plan.some(([n, v]) => n === header && v === given)).toBe(true);
        }
        // Left alone exactly when the noted answer already granted no more than the plan.
        const within = noted.every(([n, v]) => !n.startsWith('access-control-') || plan.some(([m, w]) => m === n && w === v));
        expect(answer === response).toBe(within);
      }),
    );
  });
});
