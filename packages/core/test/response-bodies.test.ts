// A Fetch `Response` given as the body to Koa 3 or Fastify, which copy its headers over ampcors's (attacker's review,
// session 16): core's response-bodies.ts, the CORS headers of it that must not reach the answer. The adapters' behaviour
// is tested over HTTP in test/security/attacks-session16-adapters2-response-vary.test.ts; these tests pin the rule.
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { CORS_RESPONSE_HEADERS, overruledCorsHeaders } from '../src/adapter.js';

/** The grants, written out again (a test does not trust the list it checks). */
const GRANTS = ['access-control-allow-origin', 'access-control-allow-credentials', 'amp-access-control-allow-source-origin', 'amp-email-allow-sender'];

const setsNone = () => false;

describe('overruledCorsHeaders', () => {
  it('a Response without CORS headers overrules nothing (only Vary, which the adapters merge)', () => {
    expect(overruledCorsHeaders(new Headers({ vary: 'Accept-Encoding', 'content-type': 'text/plain' }), () => true)).toEqual([]);
  });

  it("an upstream's grant brings none of its CORS headers, whatever the answer sets", () => {
    for (const grant of GRANTS) {
      const headers = new Headers({ [grant]: 'https://evil.example', 'access-control-expose-headers': 'X-Secret', 'access-control-max-age': '600' });
      const overruled = overruledCorsHeaders(headers, setsNone);
      expect(overruled.sort()).toEqual([grant, 'access-control-expose-headers', 'access-control-max-age'].sort());
      // The same when the answer makes the grant itself: the plan's value is put back, the others go.
      expect(overruledCorsHeaders(headers, (name) => name === grant).sort()).toEqual(overruled.sort());
    }
  });

  it('without a grant, only the headers the answer sets are overruled (matched in any case)', () => {
    const headers = new Headers({ 'Access-Control-Expose-Headers': 'X-Total', 'Access-Control-Max-Age': '5' });
    expect(overruledCorsHeaders(headers, setsNone)).toEqual([]);
    expect(overruledCorsHeaders(headers, (name) => name === 'access-control-expose-headers')).toEqual(['access-control-expose-headers']);
  });

  it('property: no grant of the Response survives; a header the answer sets is always overruled; a name it lacks is never invented', () => {
    fc.assert(
      fc.property(
        fc.uniqueArray(fc.constantFrom(...CORS_RESPONSE_HEADERS, 'vary', 'set-cookie', 'x-other'), { maxLength: 8 }),
        fc.uniqueArray(fc.constantFrom(...CORS_RESPONSE_HEADERS), { maxLength: 9 }),
        (carried, planned) => {
          const headers = new Headers(carried.map((name) => [name, 'v'] as [string, string]));
          const overruled = overruledCorsHeaders(headers, (name) => planned.includes(name));
          for (const name of overruled) expect(carried).toContain(name);
          for (const name of carried) {
            if (!CORS_RESPONSE_HEADERS.includes(name)) expect(overruled).not.toContain(name);
            else if (GRANTS.includes(name) || planned.includes(name)) expect(overruled).toContain(name);
          }
          if (carried.some((name) => GRANTS.includes(name)))
            for (const name of carried) if (CORS_RESPONSE_HEADERS.includes(name)) expect(overruled).toContain(name);
        },
      ),
    );
  });
});
