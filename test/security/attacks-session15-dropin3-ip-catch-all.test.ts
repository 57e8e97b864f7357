// Attacker's review (session 15, helper-55's lead; confirmed and fixed by helper-58): with credentials, an origin
// option allowing EVERY IP address. All the guard's canaries were domain names and an IP origin's only look-alike was
// its host extended, so `/^https?:\/\/\d+\.\d+\.\d+\.\d+(:\d+)?$/` (a "let my LAN devices in" pattern), its IPv6
// twin, or a function `o => /^https:\/\/\d/.test(o)` passed every check: anyone with a VM serves pages at an IP
// address, and such a page read credentialed responses through every drop-in. Now IP canaries (addresses of the
// documentation ranges 192.0.2.0/24, 198.51.100.0/24, 203.0.113.0/24 and 2001:db8::/32, http and https, with and
// without a port) are asked at construction and with each credentialed allow, and an allowed IP origin's look-alikes
// are other addresses of its shape. Options naming a few exact IP origins (`http://127.0.0.1:3000`) keep working.
// Second round (helper-69, fixed by helper-70): the look-alikes left the IPv6 groups compressed in `::` unvaried and
// swapped each IPv4 octet whole for fixed stand-ins, so a ULA wildcard reached from `https://[fd12::]` (as browsers
// write it) and a range over part of an octet (a DHCP pool `192\.168\.1\.1\d\d`, `10\.0\.0\.2[0-4]\d`) passed. Now
// every one of the eight groups is varied, each variant written as a browser writes it, and each digit of an octet
// (but a hundreds digit) is varied on its own, confirmed by a second.
import { ampCors as expressAmpCors } from '@ampcors/express';
import express from 'express';
import request from 'supertest';
import { describe, expect, it } from 'vitest';
import { ADAPTERS, attackerReads } from './look-alike-adapters.js';

/** An attacker's VM (a public address anyone can rent: the test never connects to it). */
const VM4 = 'https://45.33.32.156';
const VM6 = 'https://[2600:3c01::f03c:91ff:fe18:bb2f]';

/** [name, pattern or predicate, an origin its author meant, an origin anyone can serve that it allows]. */
const CATCH_ALLS: ReadonlyArray<readonly [string, RegExp, string, string]> = [
  ['every IPv4 address, any port', /^https?:\/\/\d+\.\d+\.\d+\.\d+(:\d+)?$/, 'http://127.0.0.1:3000', VM4],
  ['every IPv4 address, dotted quads', /^https?:\/\/(\d{1,3}\.){3}\d{1,3}$/, 'http://192.168.1.20', VM4],
  ['every IPv4 address on port 3000 (no canary names that port)', /^http:\/\/\d+\.\d+\.\d+\.\d+:3000$/, 'http://127.0.0.1:3000', 'http://45.33.32.156:3000'],
  ['every IPv6 address', /^https?:\/\/\[[0-9a-f:]+\](:\d+)?$/, 'http://[::1]:3000', VM6],
  ['any host starting with a digit', /^https:\/\/\d/, 'https://10.0.0.5', VM4],
  ['a site and every IP address', /^https:\/\/(www\.example\.com|\d+\.\d+\.\d+\.\d+)$/, 'https://www.example.com', VM4],
  ['a site and every IPv6 address', /^https:\/\/(www\.example\.com|\[[0-9a-f:]+\])$/, 'https://www.example.com', VM6],
  ['a LAN range (anyone on the network gets an address in it)', /^http:\/\/192\.168\.1\.\d{1,3}$/, 'http://192.168.1.20', 'http://192.168.1.66'],
  ['a /16 of a cloud provider', /^https:\/\/45\.33\.\d+\.\d+$/, 'https://45.33.0.10', VM4],
  ['an IPv6 /64 (one group wildcarded)', /^https:\/\/\[2600:3c01::f03c:91ff:fe18:[0-9a-f]{1,4}\]$/, 'https://[2600:3c01::f03c:91ff:fe18:1]', VM6],
  // helper-69: groups hidden in `::`, ranges over part of an octet.
  ['a ULA wildcard (fd00::/8), the attacker at a compressed address', /^https:\/\/\[fd[0-9a-f]{2}:[0-9a-f:]*\]$/, 'https://[fd12::1]', 'https://[fd12::]'],
  [
    'a ULA /48 written with its zero groups compressed',
    /^https:\/\/\[fd12:3456:789a::[0-9a-f:]*\]$/,
    'https://[fd12:3456:789a::1]',
    'https://[fd12:3456:789a::]',
  ],
  ['a DHCP pool 192.168.1.100-199 (a range over part of an octet)', /^https:\/\/192\.168\.1\.1\d\d$/, 'https://192.168.1.120', 'https://192.168.1.150'],
  ['a pool 10.0.0.200-249', /^http:\/\/10\.0\.0\.2[0-4]\d$/, 'http://10.0.0.201', 'http://10.0.0.210'],
  ['a pool over the tens and units of the third octet', /^https:\/\/172\.16\.1\d\d\.5$/, 'https://172.16.100.5', 'https://172.16.142.5'],
];

it('every row is a real hole: the option allows the origin it was written for and an address anyone can serve', () => {
  for (const [, pattern, own, evil] of CATCH_ALLS) expect([pattern.test(own), pattern.test(evil)]).toEqual([true, true]);
});

describe.each(ADAPTERS)('attacker, through $name: an option allowing every IP address, with credentials', (adapter) => {
  // An allowed domain name's per-request questions include an IPv4 documentation address, not an IPv6 one (one question
  // more, not two): an asynchronous function allowing a site and every IPv6 address is refused once its construction
  // answers arrive, so the site's own first request can come before (the attacker's IPv6 origin is refused on its own).
  const ownAskedFirst = (own: string, evil: string, asynchronous: boolean) => !(asynchronous && evil === VM6 && !own.includes('['));
  const rows = CATCH_ALLS.flatMap(([name, pattern, own, evil]) => [
    ...(adapter.patterns ? [[`${name} ${String(pattern)} (RegExp)`, pattern, own, evil, true] as const] : []),
    [`${name} ${String(pattern)} (function)`, adapter.originFunction((o) => pattern.test(o), false), own, evil, true] as const,
    [
      `${name} ${String(pattern)} (asynchronous function)`,
      adapter.originFunction((o) => pattern.test(o), true),
      own,
      evil,
      ownAskedFirst(own, evil, true),
    ] as const,
  ]);
  it.each(rows)('%s: the attacker never reads with credentials, nor does its own origin', async (_name, origin, own, evil, ownRefused) => {
    const attacker = await attackerReads(adapter, origin, evil);
    if (attacker !== 'refused at construction') expect(attacker.acao, JSON.stringify(attacker)).toBeUndefined();
    if (!ownRefused) return;
    const publisher = await attackerReads(adapter, origin, own);
    if (publisher !== 'refused at construction') expect(publisher.credentials === 'true' && publisher.acao === own, JSON.stringify(publisher)).toBe(false);
  });
});

/** Options naming exact IP origins (development servers, a LAN appliance): they keep reading with credentials. */
const EXACT: ReadonlyArray<readonly [string, readonly string[]]> = [
  ['the usual development origin', ['http://127.0.0.1:3000']],
  [
    'a short list of IPv4 and IPv6 origins',
    ['http://127.0.0.1:3000', 'http://localhost:3000', 'http://192.168.1.20:8080', 'https://10.0.0.5', 'http://[::1]:3000', 'https://[2001:db8::5]'],
  ],
  ['consecutive LAN devices', ['http://192.168.1.20', 'http://192.168.1.21', 'http://192.168.1.22']],
  [
    'devices of a DHCP pool and of a ULA network',
    ['http://192.168.1.150', 'http://192.168.1.151', 'http://192.168.1.160', 'https://[fd12::1]', 'https://[fd12::2]', 'https://[fd12:3456:789a::]'],
  ],
  ['addresses of the documentation ranges themselves', ['https://192.0.2.1', 'https://198.51.100.7', 'https://203.0.113.10']],
];

describe.each(ADAPTERS)('defender, through $name: exact IP origins with credentials keep working', (adapter) => {
  const anchored = (list: readonly string[]) => new RegExp(`^(${list.map((o) => o.replace(/[.*+?^${}()|[\]\\/]/g, '\\$&')).join('|')})$`);
  const rows = EXACT.flatMap(([name, list]) => [
    ...(adapter.patterns ? [[`${name} (array)`, list, list] as const, [`${name} (anchored RegExp)`, anchored(list), list] as const] : []),
    [`${name} (function)`, adapter.originFunction((o) => list.includes(o), false), list] as const,
    [`${name} (asynchronous function)`, adapter.originFunction((o) => list.includes(o), true), list] as const,
  ]);
  it.each(rows)('%s: each listed origin reads with credentials, an address beside it does not', async (_name, origin, list) => {
    for (const own of list) {
      const seen = await adapter.reads(origin, own);
      expect([seen.acao, seen.credentials], `${own}: ${JSON.stringify(seen)}`).toEqual([own, 'true']);
    }
    const beside = await adapter.reads(origin, 'http://192.168.1.23');
    expect(beside.acao).toBeUndefined();
  });
});

type Callback = (error: Error | null, options?: unknown) => void;
type Req = { headers: Record<string, string | undefined> };

/** Express options delegates that trust IP addresses with credentials: a pattern in the answer, or the Origin copied for an IP. */
const DELEGATES: ReadonlyArray<readonly [string, (req: Req, cb: Callback) => void, string, string]> = [
  [
    'a catch-all pattern in the answer',
    (_req, cb) => cb(null, { origin: [/^https?:\/\/\d+\.\d+\.\d+\.\d+(:\d+)?$/], credentials: true }),
    'http://127.0.0.1:3000',
    VM4,
  ],
  [
    'the Origin copied when it is an IPv4 address',
    (req, cb) => {
      const o = req.headers.origin ?? '';
      cb(null, { origin: /^https?:\/\/[0-9.]+(:\d+)?$/.test(o) ? o : false, credentials: true });
    },
    'http://127.0.0.1:3000',
    VM4,
  ],
  [
    'the Origin copied when it is an IPv6 address',
    (req, cb) => {
      const o = req.headers.origin ?? '';
      cb(null, { origin: o.includes('//[') ? [o] : [], credentials: true });
    },
    'http://[::1]:3000',
    VM6,
  ],
  [
    'a site, or the Origin copied when it is on the LAN, asynchronously',
    (req, cb) => {
      const o = req.headers.origin ?? '';
      setImmediate(() => cb(null, { origin: o === 'https://www.example.com' || /^http:\/\/192\.168\.1\.\d+$/.test(o) ? o : false, credentials: true }));
    },
    'https://www.example.com',
    'http://192.168.1.66',
  ],
];

describe('attacker, through express (cors): an options delegate trusting IP addresses, with credentials', () => {
  it.each(DELEGATES)('%s: the attacker never reads with credentials', async (_name, delegate, own, evil) => {
    const app = express();
    app.use(expressAmpCors(delegate as never));
    app.get('/api', (_req, res) => void res.json({ secret: 1 }));
    app.use((_error: unknown, _req: unknown, res: express.Response, _next: unknown) => void res.status(500).end());
    // The site's own request first (nothing checked yet), then the attacker's.
    await request(app).get('/api').set('Origin', own);
    const res = await request(app).get('/api').set('Origin', evil).set('Cookie', 'session=victim');
    expect([res.headers['access-control-allow-origin'], res.headers['access-control-allow-credentials']]).not.toEqual([evil, 'true']);
    expect(res.headers['access-control-allow-origin']).toBeUndefined();
  });

  it('a delegate answering exact IP origins keeps answering them with credentials', async () => {
    const list = ['http://127.0.0.1:3000', 'http://192.168.1.20:8080', 'http://[::1]:3000'];
    const app = express();
    app.use(
      expressAmpCors(((req: Req, cb: Callback) =>
        cb(null, { origin: list.includes(req.headers.origin ?? '') ? req.headers.origin : false, credentials: true })) as never),
    );
    app.get('/api', (_req, res) => void res.json({ secret: 1 }));
    for (const own of [...list, ...list]) {
      const res = await request(app).get('/api').set('Origin', own);
      expect([res.headers['access-control-allow-origin'], res.headers['access-control-allow-credentials']]).toEqual([own, 'true']);
    }
  });
});
