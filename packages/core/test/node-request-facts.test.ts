/**
 * nodeRequestFacts (request-facts.ts) reads a Node request's unparsed header
 * lines instead of making Node parse `req.headers`. From the attacker's side:
 * whatever raw header lines a client sends (repeats, odd case, empty or huge
 * values, names that lower-case to a fact header only through Unicode), the
 * facts must be exactly those of Node's own `req.headers`, the oracle; a
 * repeated `Origin` stays one invalid value and is denied; and wherever the
 * raw lines may not be what `req.headers` says (parsed then edited, replaced,
 * shadowed, overridden, truncated by `maxHeadersCount`), `req.headers` wins.
 */
import { IncomingMessage } from 'node:http';
import fc from 'fast-check';
import { describe, expect, it, vi } from 'vitest';
import { createCorsPackagePolicy, isThenable, nodeRequestFacts, requestFacts } from '../src/adapter.js';
import type { CorsRequest } from '../src/cors-plan.js';

const CACHE = 'https://example-com.cdn.ampproject.org';
const EVIL = 'https://evil.example';
const PATH = '/api?__amp_source_origin=https%3A%2F%2Fexample.com';

/** A request as Node's HTTP parser leaves it: header lines raw, `req.headers` not built yet. */
function incoming(method: string, lines: unknown[], count = lines.length): IncomingMessage {
  const req = new IncomingMessage(null as never);
  req.method = method;
  req.url = PATH;
  (req as unknown as { _addHeaderLines(lines: unknown[], n: number): void })._addHeaderLines(lines, count);
  return req;
}

/** Node's slot of the parsed header map (found the way the test of a private detail must: by its name). */
function parsedSlot(req: IncomingMessage): unknown {
  const slot = Object.getOwnPropertySymbols(req).find((symbol) => symbol.description === 'kHeaders');
  if (slot === undefined) throw new Error('this Node keeps no kHeaders slot');
  return (req as unknown as Record<symbol, unknown>)[slot];
}

/** The oracle: the facts of a plain header map (read through `req.headers`), here Node's own for the same lines. */
function oracle(method: string, headers: Record<string, unknown>): CorsRequest {
  return nodeRequestFacts({ method, url: PATH, headers: { ...headers } as never });
}

/** Every header name the facts read (asked of a lookup for a GET and an OPTIONS). */
const FACT_NAMES = (() => {
  const asked = new Set<string>();
  for (const method of ['GET', 'OPTIONS'])
    requestFacts(method, PATH, (name) => {
      asked.add(name);
      return null;
    });
  return [...asked];
})();

/** A name in the given case: lower, upper, capitalized, or mixed per character. */
const spelling = (name: string) =>
  fc.oneof(
    fc.constant(name),
    fc.constant(name.toUpperCase()),
    fc.constant(name.replace(/(^|-)[a-z]/g, (c) => c.toUpperCase())),
    fc
      .array(fc.boolean(), { minLength: name.length, maxLength: name.length })
      .map((upper) => [...name].map((c, i) => (upper[i] ? c.toUpperCase() : c)).join('')),
  );

/** Names a hostile client may send: fact headers in any case, near misses (Unicode that lowers to ASCII, or to more), others. */
const hostileName = fc.oneof(
  { weight: 6, arbitrary: fc.constantFrom(...FACT_NAMES).chain(spelling) },
  {
    weight: 2,
    arbitrary: fc.constantFrom(
      'ORİGİN', // U+0130 lowers to "i̇" (two code units)
      'orıgin', // U+0131, dotless i
      'ſec-fetch-site', // U+017F, long s (upper-cases to S, lowers to itself)
      'origin ',
      ' origin',
      'origin\u0000',
      'Host',
      'x-origin',
      'originx',
      'amp-same-origin2',
      '\u212Aey', // Kelvin sign, lowers to "k"
      '',
    ),
  },
  { weight: 1, arbitrary: fc.string({ maxLength: 40 }) },
);

const hostileValue = fc.oneof(
  fc.constantFrom('', ' ', 'null', CACHE, EVIL, `${CACHE}, ${EVIL}`, 'POST', 'content-type, x-a', 'true', 'same-origin'),
  fc.string({ maxLength: 60 }),
  fc.string({ unit: 'binary', maxLength: 30 }),
  fc.integer({ min: 1_000, max: 20_000 }).map((n) => 'a'.repeat(n)),
);

const hostileLines = fc.array(fc.tuple(hostileName, hostileValue), { maxLength: 12 }).map((pairs) => pairs.flat());
const method = fc.constantFrom('GET', 'OPTIONS', 'options', 'POST');

describe('nodeRequestFacts of a request whose headers Node has not parsed', () => {
  it('equals the facts of Node’s own req.headers for any raw header lines, and leaves them unparsed', () => {
    fc.assert(
      fc.property(method, hostileLines, (verb, lines) => {
        const req = incoming(verb, lines);
        const facts = nodeRequestFacts(req, PATH);
        // Only an exact OPTIONS is read raw (the parse saved); any other request's handler parses req.headers anyway.
        expect(parsedSlot(req) === null).toBe(verb === 'OPTIONS');
        expect(facts).toEqual(oracle(verb, incoming(verb, [...lines]).headers));
        // Reading it again after Node parsed it: the same facts, from req.headers.
        expect(req.headers).toBeTypeOf('object');
        expect(nodeRequestFacts(req, PATH)).toEqual(facts);
      }),
      { numRuns: 1500 },
    );
  });

  it('a repeated Origin, in any case or with an empty line, is one joined value that is denied', () => {
    const { decide } = createCorsPackagePolicy({ publishers: ['example.com'] }, 'test');
    for (const lines of [
      ['Origin', CACHE, 'origin', EVIL],
      ['origin', CACHE, 'ORIGIN', CACHE],
      ['Origin', CACHE, 'Origin', ''],
      ['Origin', '', 'Origin', CACHE],
    ]) {
      for (const verb of ['GET', 'OPTIONS']) {
        const facts = nodeRequestFacts(incoming(verb, lines), PATH);
        expect(facts.origin).toBe(incoming(verb, lines).headers.origin);
        const decision = decide(facts);
        if (isThenable(decision)) throw new Error('expected a synchronous decision');
        expect(decision.verdict.allowed).toBe(false);
        expect(decision.plan.headers.some(([name]) => name.toLowerCase() === 'access-control-allow-origin')).toBe(false);
      }
    }
    // The control: the same origin alone is allowed.
    const alone = decide(nodeRequestFacts(incoming('GET', ['Origin', CACHE]), PATH));
    expect(!isThenable(alone) && alone.verdict.allowed).toBe(true);
  });

  it('a header name that lower-cases to a fact header only through Unicode is what Node makes of it', () => {
    for (const name of ['ORİGİN', 'orıgin', 'ſec-fetch-site', 'SEC-FETCH-SİTE']) {
      const lines = [name, CACHE, 'Sec-Fetch-Site', 'cross-site'];
      expect(nodeRequestFacts(incoming('OPTIONS', lines), PATH)).toEqual(oracle('OPTIONS', incoming('OPTIONS', lines).headers));
    }
  });
});

describe('nodeRequestFacts reads req.headers wherever the raw lines may differ from it', () => {
  it('req.headers parsed, then edited by an earlier middleware: the edit counts', () => {
    const req = incoming('OPTIONS', ['Origin', CACHE]);
    req.headers.origin = EVIL;
    expect(nodeRequestFacts(req, PATH).origin).toBe(EVIL);
    const removed = incoming('OPTIONS', ['Origin', CACHE]);
    delete removed.headers.origin;
    expect(nodeRequestFacts(removed, PATH).origin).toBeNull();
  });

  it('req.headers replaced (its setter), or shadowed by an own property: the replacement counts', () => {
    const replaced = incoming('OPTIONS', ['Origin', CACHE]);
    replaced.headers = { origin: EVIL };
    expect(nodeRequestFacts(replaced, PATH).origin).toBe(EVIL);
    const shadowed = incoming('OPTIONS', ['Origin', CACHE]);
    Object.defineProperty(shadowed, 'headers', { value: { origin: EVIL } });
    expect(nodeRequestFacts(shadowed, PATH).origin).toBe(EVIL);
  });

  it('a request class that overrides the headers getter: its getter counts', () => {
    class Rewriting extends IncomingMessage {}
    Object.defineProperty(Rewriting.prototype, 'headers', { get: () => ({ origin: EVIL }), set: () => undefined });
    const req = new Rewriting(null as never);
    req.method = 'OPTIONS';
    (req as unknown as { _addHeaderLines(lines: string[], n: number): void })._addHeaderLines(['Origin', CACHE], 2);
    expect(nodeRequestFacts(req, PATH).origin).toBe(EVIL);
  });

  it('lines past the count Node parses (maxHeadersCount) are not read', () => {
    const lines = ['Host', 'a.example', 'Origin', CACHE];
    const req = incoming('OPTIONS', lines, 2);
    expect(req.headers.origin).toBeUndefined();
    expect(nodeRequestFacts(incoming('OPTIONS', lines, 2), PATH).origin).toBeNull();
  });

  it('lines that are not all strings, or an odd count, are left to Node', () => {
    const numbers = incoming('OPTIONS', ['X-Count', 5, 'Origin', CACHE]);
    expect(nodeRequestFacts(numbers, PATH).origin).toBe(CACHE);
    expect(parsedSlot(numbers)).not.toBeNull();
    const odd = incoming('OPTIONS', ['Origin', CACHE, 'Origin']);
    expect(nodeRequestFacts(odd, PATH)).toEqual(oracle('OPTIONS', incoming('OPTIONS', ['Origin', CACHE, 'Origin']).headers));
  });

  it('a look-alike request whose headers getter does not join repeats as Node does, seen first: its getter counts, and Node’s is still learned', async () => {
    // A fresh copy of the module, that has learned nothing yet.
    vi.resetModules();
    const fresh = await import('../src/request-facts.js');
    const kHeaders = Symbol('kHeaders');
    const kHeadersCount = Symbol('kHeadersCount');
    const proto = {
      get headers(): Record<string, string> {
        const self = this as unknown as Record<PropertyKey, unknown> & { rawHeaders: string[] };
        // First value wins (unlike Node for these names).
        const out: Record<string, string> = {};
        for (let i = 0; i < self.rawHeaders.length; i += 2) out[(self.rawHeaders[i] as string).toLowerCase()] ??= self.rawHeaders[i + 1] as string;
        self[kHeaders] = out;
        return out;
      },
      set headers(_value) {
        // ignored
      },
    };
    const req = Object.assign(Object.create(proto) as object, {
      method: 'OPTIONS',
      rawHeaders: ['Origin', CACHE, 'Origin', EVIL],
      [kHeaders]: null,
      [kHeadersCount]: 4,
    });
    expect(fresh.nodeRequestFacts(req as never, PATH).origin).toBe(CACHE);
    expect(fresh.nodeRequestFacts(req as never, PATH).origin).toBe(CACHE);
    // Node's own request afterwards: read raw (left unparsed), as Node would.
    const node = incoming('OPTIONS', ['Origin', CACHE, 'origin', EVIL]);
    expect(fresh.nodeRequestFacts(node, PATH).origin).toBe(`${CACHE}, ${EVIL}`);
    expect(parsedSlot(node)).toBeNull();
  });

  it('a plain object (a framework’s own request, a test double), even without a prototype: its headers count', () => {
    const req = { method: 'GET', url: PATH, rawHeaders: ['Origin', EVIL], headers: { origin: CACHE } };
    expect(nodeRequestFacts(req, PATH).origin).toBe(CACHE);
    const bare = Object.assign(Object.create(null) as object, req);
    expect(nodeRequestFacts(bare as typeof req, PATH).origin).toBe(CACHE);
  });
});
