// SPEC §5 host canonicalization against the Safe Browsing vectors of
// ../shared/vectors/sb-canon-vectors.json (copied to fixtures/): the bare-host
// vectors (v5 doc IPv6 examples) and the IPv4 vectors (expected null = "not an
// IPv4 address"). Host-of-a-URL vectors are in canonical-url.test.ts. Where an
// implementation disagrees with SPEC §5, the vector is in DIVERGENCES with the
// reason, and ampcors's own answer is asserted instead.
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import vectors from './fixtures/sb-canon-vectors.json' with { type: 'json' };
import { canonicalHost, isIpHost } from '../src/canonical-host.js';
import { AmpCorsError } from '../src/errors.js';

type CanonVector = { id: number; kind: string; input: string; expected: string | null; status: string };

const isBareHost = (v: CanonVector) => v.kind === 'ipv4' || (v.kind === 'host' && !/^[a-z]+:\/\/|^\//i.test(v.input));
const all = (vectors.vectors as CanonVector[]).filter(isBareHost);

/** Our answer for a vector: the canonical IP text, "not an IP" (null), or the error code. */
function ours(v: CanonVector): string | null | { throws: string } {
  let host: string;
  try {
    host = canonicalHost(v.input);
  } catch (error) {
    if (!(error instanceof AmpCorsError)) throw error;
    // A string that is not a host is not an IPv4 address either.
    return v.kind === 'ipv4' ? null : { throws: error.code };
  }
  // IPv4 vectors ask only whether the text is an IP address, and which.
  return v.kind === 'ipv4' && !isIpHost(host) ? null : host;
}

/** Vectors ampcors deliberately answers differently, why, and what it answers. */
const DIVERGENCES: { id: number; reason: string; ours: string | null | { throws: string } }[] = [
  {
    id: 112,
    reason: 'Go truncates 276 to a byte (20); a component over 255 is not a legal IPv4 form, so 276.2.3 is a host name (Chromium, inet_aton)',
    ours: null,
  },
  ...[118, 139].map((id) => ({
    id,
    reason: 'inet_aton stops at the space and ignores " xy"; a host with a space is not a host (canonicalHost refuses it), so not an IPv4 address',
    ours: null,
  })),
  {
    id: 125,
    reason: 'the 2010 client truncates 0x10000000b to 32 bits; a value over 32 bits is not a legal IPv4 form (Chromium, inet_aton)',
    ours: null,
  },
  {
    id: 141,
    reason: 'the 2010 client reads 012 and 089 as decimal when a component is not valid octal; 089 is not a legal component, so this is a host name',
    ours: null,
  },
];

const divergent = new Map(DIVERGENCES.map((d) => [d.id, d]));
const followed = all.filter((v) => !divergent.has(v.id));

describe('sb-canon-vectors: bare hosts and IPv4', () => {
  it('every divergence names a bare-host vector, once', () => {
    expect(new Set(DIVERGENCES.map((d) => d.id)).size).toBe(DIVERGENCES.length);
    for (const d of DIVERGENCES) expect(all.some((v) => v.id === d.id)).toBe(true);
  });

  it.each(followed.map((v) => [v.id, v.status, JSON.stringify(v.input), v.expected, v] as const))('#%i %s %s → %s', (_id, _status, _input, expected, v) => {
    expect(ours(v)).toEqual(expected);
    if (expected !== null) expect(isIpHost(v.input)).toBe(true);
  });

  it.each(DIVERGENCES.map((d) => [d.id, d.reason, d] as const))('#%i diverges: %s', (id, _reason, d) => {
    const v = all.find((entry) => entry.id === id) as CanonVector;
    expect(ours(v)).toEqual(d.ours);
    expect(ours(v)).not.toEqual(v.expected);
    expect(isIpHost(v.input)).toBe(false);
  });
});

describe('canonicalHost: SPEC §5 host steps', () => {
  it.each([
    // Steps 1, 2 and 5: dots and case.
    ['WWW.Example.COM.', 'www.example.com'],
    ['..a...b..', 'a.b'],
    ['w!eird<>Ho$^.com', 'w!eird<>ho$^.com'],
    // Step 3: IPv4 in any legal form.
    ['1.2.3.4.', '1.2.3.4'],
    ['0x7F.1', '127.0.0.1'],
    ['0X7f.0.0.01', '127.0.0.1'],
    ['0', '0.0.0.0'],
    ['0x', '0.0.0.0'],
    ['1..2', '1.0.0.2'],
    ['08.1.2.3', '08.1.2.3'],
    ['1.2.3.256', '1.2.3.256'],
    ['1.2.65535', '1.2.255.255'],
    ['1.2.65536', '1.2.65536'],
    // Step 4: IPv6, RFC 5952 §4 (leading zeros, longest zero run, first on a tie, lowercase).
    ['[2001:db8:0:0:0:0:2:1]', '[2001:db8::2:1]'],
    ['[2001:db8:0:1:1:1:1:1]', '[2001:db8:0:1:1:1:1:1]'],
    ['[2001:0:0:1:0:0:0:1]', '[2001:0:0:1::1]'],
    ['[2001:db8:0:0:1:0:0:1]', '[2001:db8::1:0:0:1]'],
    ['[2001:DB8::AAAA]', '[2001:db8::aaaa]'],
    ['[0:0:0:0:0:0:0:0]', '[::]'],
    ['[::1]', '[::1]'],
    ['[1::]', '[1::]'],
    ['[::ffff:102:304]', '1.2.3.4'],
    ['[64:ff9b::102:304]', '1.2.3.4'],
    ['[64:ff9b:1::1.2.3.4]', '[64:ff9b:1::102:304]'],
    ['[::ffff:0:1.2.3.4]', '[::ffff:0:102:304]'],
    // IDN to ASCII punycode, lowercase first.
    ['bücher.de', 'xn--bcher-kva.de'],
    ['BÜCHER.DE', 'xn--bcher-kva.de'],
    ['bu\u0308cher.de', 'xn--bcher-kva.de'],
    ['a\u3002b.com', 'a.b.com'],
    ['⚡😊.com', 'xn--57hw060o.com'],
  ])('%j → %j', (input, expected) => {
    expect(canonicalHost(input)).toBe(expected);
  });

  it.each([
    ['', 'invalid-host'],
    ['...', 'invalid-host'],
    ['a b.com', 'invalid-host'],
    ['a/b', 'invalid-host'],
    ['example.com:80', 'invalid-host'],
    ['user@example.com', 'invalid-host'],
    ['%41.com', 'invalid-host'],
    ['a]b', 'invalid-host'],
    ['[::1', 'invalid-ip'],
    ['[1:2:3:4:5:6:7:8:9]', 'invalid-ip'],
    ['[1:2:3:4:5:6:7]', 'invalid-ip'],
    ['[1::2::3]', 'invalid-ip'],
    ['[::1.2.3.04]', 'invalid-ip'],
    ['[::12345]', 'invalid-ip'],
    ['[fe80::1%eth0]', 'invalid-ip'],
    ['[example.com]', 'invalid-ip'],
  ])('%j is refused with %s', (input, code) => {
    expect(() => canonicalHost(input)).toThrow(expect.objectContaining({ name: 'AmpCorsError', code }));
  });

  it('refuses a non-string with invalid-host', () => {
    expect(() => canonicalHost(undefined as unknown as string)).toThrow(expect.objectContaining({ code: 'invalid-host' }));
  });
});

describe('isIpHost', () => {
  it.each([
    ['1.2.3.4', true],
    ['3279880203', true],
    ['0x12.0x43.0x44.0x01', true],
    ['1.2.3.4.', true],
    ['[::1]', true],
    ['[::ffff:1.2.3.4]', true],
    ['example.com', false],
    ['1.2.3.4.5', false],
    ['[::1', false],
    ['[example]', false],
    ['', false],
    [42, false],
  ])('%j → %s', (input, expected) => {
    expect(isIpHost(input as string)).toBe(expected);
  });
});

/** Strings built from the pieces host canonicalization treats specially. */
const trickyHost = fc
  .array(
    fc.constantFrom('.', '..', '[', ']', ':', '::', 'ffff', '64:ff9b', '0x', '0', '1', '08', '255', '256', 'a', 'Z', 'xn--', 'ü', 'İ', '\u3002', '%', ' '),
    { maxLength: 16 },
  )
  .map((pieces) => pieces.join(''));

describe('canonicalHost properties', () => {
  it('never throws anything but AmpCorsError', () => {
    fc.assert(
      fc.property(fc.oneof(fc.string(), fc.string({ unit: 'binary' }), fc.string({ unit: 'grapheme' }), trickyHost), (host) => {
        try {
          canonicalHost(host);
          return true;
        } catch (error) {
          return error instanceof AmpCorsError;
        }
      }),
      { numRuns: 5000 },
    );
  });

  it('is idempotent, and agrees with isIpHost', () => {
    fc.assert(
      fc.property(
        fc.oneof(
          fc.domain(),
          fc.ipV4Extended(),
          fc.ipV6().map((ip) => `[${ip}]`),
          trickyHost,
        ),
        (host) => {
          let once: string;
          try {
            once = canonicalHost(host);
          } catch (error) {
            return error instanceof AmpCorsError;
          }
          return canonicalHost(once) === once && isIpHost(once) === isIpHost(host);
        },
      ),
      { numRuns: 5000 },
    );
  });
});
