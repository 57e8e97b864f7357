/**
 * Attacker-side: the demo publisher API (`npm run demo`, examples/express/src/server.ts) on the current
 * sources, attacked with raw requests. Every state-changing method from an origin it does not trust is
 * stopped with 403 before the handler runs (the subscription counter does not move); a denied preflight
 * carries no grant; AMP for Email v1 and v2 from an unconfigured sender get no grant; oversized, duplicated,
 * non-ASCII and badly framed requests neither grant, crash, hang, nor write 7-bit terminal controls into the
 * demo's console; and the demo still answers a trusted origin afterwards.
 */
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { cacheOrigin } from '@ampcors/core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type RawAnswer, request, type RunningExample, sendRaw, startExample, TERMINAL_CONTROL } from './example-server.js';

const TRUSTED = cacheOrigin('www.example.com');
const EVIL_CACHE = 'https://evil-com.cdn.ampproject.org';
const EVIL = 'https://evil.example';
const FORM = ['Content-Type: application/x-www-form-urlencoded'];
const run = promisify(execFile);

let demo: RunningExample;
beforeAll(async () => {
  demo = await startExample('express', 'src/server.ts');
});
afterAll(async () => {
  await demo?.stop();
});

const send = (bytes: string, timeoutMs?: number) => sendRaw(demo.port, bytes, timeoutMs);

async function subscriptions(): Promise<number> {
  const answer = await send(request('GET', '/health'));
  return (JSON.parse(answer.body) as { subscriptions: number }).subscriptions;
}

/** No header of the answer lets a page read it or send credentials, nor trusts an email sender. */
function expectNoGrant(answer: RawAnswer, what: string): void {
  for (const name of ['access-control-allow-origin', 'access-control-allow-credentials', 'amp-access-control-allow-source-origin', 'amp-email-allow-sender']) {
    expect(answer.headers.has(name), `${what}: ${name}\n${answer.raw.slice(0, 600)}`).toBe(false);
  }
}

/** After an attack: the server runs, still grants the trusted origin, and printed no 7-bit control code. */
async function expectStillServing(what: string): Promise<void> {
  expect(demo.alive(), `${what}: the demo exited\n${demo.output()}`).toBe(true);
  const good = await send(request('GET', '/api/items', [`Origin: ${TRUSTED}`]));
  expect(good.status, `${what}: ${JSON.stringify(good.raw.slice(0, 300))}`).toBe(200);
  expect(good.headers.get('access-control-allow-origin'), what).toBe(TRUSTED);
  expect(TERMINAL_CONTROL.test(demo.output()), `${what}: console\n${JSON.stringify(demo.output().slice(-2000))}`).toBe(false);
}

describe('the demo, state-changing requests', () => {
  it.each(['POST', 'PUT', 'DELETE', 'PATCH', 'PROPFIND', 'MKCOL', 'PURGE', 'SEARCH', 'QUERY'])(
    '%s from an untrusted origin is stopped with 403 before any handler, the counter unchanged',
    async (method) => {
      const before = await subscriptions();
      for (const origin of [EVIL, EVIL_CACHE, 'null', `${TRUSTED}.evil.example`, `${TRUSTED}:8443`, TRUSTED.replace('https:', 'http:')]) {
        for (const path of ['/api/subscribe', '/api/items', '/api/', '/api/subscribe?__amp_source_origin=https%3A%2F%2Fwww.example.com']) {
          const answer = await send(request(method, path, [`Origin: ${origin}`, ...FORM], 'email=reader@example.com'));
          expect(answer.status, `${method} ${path} from ${origin}`).toBe(403);
          expectNoGrant(answer, `${method} ${path} from ${origin}`);
          expect(answer.headers.get('vary') ?? '').toMatch(/\bOrigin\b/);
        }
      }
      expect(await subscriptions()).toBe(before);
      await expectStillServing(method);
    },
  );

  it('a trusted origin subscribes (the counter moves by one), with the grant and AMP-Redirect-To exposed', async () => {
    const before = await subscriptions();
    const answer = await send(request('POST', '/api/subscribe', [`Origin: ${TRUSTED}`, ...FORM], 'email=reader@example.com'));
    expect(answer.status).toBe(200);
    expect(answer.headers.get('access-control-allow-origin')).toBe(TRUSTED);
    expect(answer.headers.get('access-control-expose-headers') ?? '').toMatch(/AMP-Redirect-To/i);
    expect(await subscriptions()).toBe(before + 1);
  });

  it('a chunked POST from an untrusted origin, and one that smuggles a second request in its body, changes nothing', async () => {
    const before = await subscriptions();
    const smuggled = request('POST', '/api/subscribe', [`Origin: ${TRUSTED}`, ...FORM], 'email=smuggled@example.com');
    const framings = [
      [['Transfer-Encoding: chunked'], `18\r\nemail=reader@example.com\r\n0\r\n\r\n`],
      [['Transfer-Encoding: chunked', 'Content-Length: 5'], `0\r\n\r\n${smuggled}`],
      [['Transfer-Encoding: gzip, chunked'], `0\r\n\r\n`],
      [['Transfer-Encoding: chunked, identity'], `0\r\n\r\n${smuggled}`],
      [['Transfer-Encoding: chunked', 'Transfer-Encoding: chunked'], `0\r\n\r\n`],
      [['Transfer-Encoding:  chunked'], `zz\r\n${smuggled}`],
      [['Content-Length: 5', 'Content-Length: 6'], `email=`],
      [['Content-Length: -1'], smuggled],
      [['Content-Length: 99999999999999999999'], smuggled],
    ] as const;
    for (const [framing, body] of framings) {
      for (const origin of [EVIL, EVIL_CACHE]) {
        const lines = [`Origin: ${origin}`, ...FORM, ...framing];
        // Kept alive, so that a request smuggled after the body would be read as the next one (and counted).
        const answer = await send(`POST /api/subscribe HTTP/1.1\r\nHost: 127.0.0.1\r\n${lines.join('\r\n')}\r\n\r\n${body}`, 400);
        expect([400, 403, -1], `${framing.join(' | ')} from ${origin}: ${answer.raw.slice(0, 200)}`).toContain(answer.status);
        expectNoGrant(answer, framing.join(' | '));
      }
    }
    expect(await subscriptions()).toBe(before);
    await expectStillServing('framings');
  });
});

describe('the demo, preflights and AMP for Email', () => {
  it('a denied preflight carries no grant and no Access-Control-Allow-Methods/Headers', async () => {
    for (const origin of [EVIL, EVIL_CACHE, 'null', `${TRUSTED}.`, TRUSTED.toUpperCase()]) {
      for (const asked of ['POST', 'DELETE', 'PUT']) {
        const answer = await send(
          request('OPTIONS', '/api/subscribe', [
            `Origin: ${origin}`,
            `Access-Control-Request-Method: ${asked}`,
            'Access-Control-Request-Headers: content-type, amp-same-origin',
          ]),
        );
        expectNoGrant(answer, `preflight ${asked} from ${origin}`);
        expect(answer.headers.has('access-control-allow-methods')).toBe(false);
        expect(answer.headers.has('access-control-allow-headers')).toBe(false);
      }
    }
    // A trusted preflight never lists AMP-Same-Origin as a header a page may send.
    const trusted = await send(
      request('OPTIONS', '/api/subscribe', [
        `Origin: ${TRUSTED}`,
        'Access-Control-Request-Method: POST',
        'Access-Control-Request-Headers: amp-same-origin, content-type',
      ]),
    );
    expect(trusted.status).toBe(204);
    expect(trusted.headers.get('access-control-allow-headers') ?? '').not.toMatch(/amp-same-origin/i);
  });

  it('AMP for Email v1 and v2 from a sender the demo never configured get no grant, and a POST changes nothing', async () => {
    const before = await subscriptions();
    const clients = ['https://mail.google.com', 'https://outlook.office.com', 'https://mail.yahoo.com', 'https://playground.amp.dev'];
    for (const client of clients) {
      for (const sender of ['attacker@evil.example', 'news@example.com', 'https://www.example.com']) {
        const v1 = `/api/subscribe?__amp_source_origin=${encodeURIComponent(sender)}`;
        const attempts = [
          request('GET', v1.replace('subscribe', 'items'), [`Origin: ${client}`]),
          request('POST', v1, [`Origin: ${client}`, ...FORM], 'email=reader@example.com'),
          request('GET', '/api/items', [`Origin: ${client}`, `AMP-Email-Sender: ${sender}`]),
          request('POST', '/api/subscribe', [`Origin: ${client}`, `AMP-Email-Sender: ${sender}`, ...FORM], 'email=reader@example.com'),
          request('POST', v1, [`Origin: ${client}`, `AMP-Email-Sender: ${sender}`, ...FORM], 'email=reader@example.com'),
        ];
        for (const attempt of attempts) {
          const answer = await send(attempt);
          expect(answer.status, attempt).toBe(403);
          expectNoGrant(answer, attempt);
        }
      }
    }
    // v2 with no Origin: outside CORS (no browser sent it), but never an AMP-Email-Allow-Sender.
    const bare = await send(request('GET', '/api/items', ['AMP-Email-Sender: attacker@evil.example']));
    expectNoGrant(bare, 'AMP-Email-Sender without Origin');
    expect(await subscriptions()).toBe(before);
    await expectStillServing('email');
  });
});

describe('the demo, malformed and oversized requests', () => {
  it('TRACE, CONNECT, and methods Node accepts but Express has no route for: no grant, no crash, no hang', async () => {
    for (const method of ['TRACE', 'CONNECT', 'PROPPATCH', 'LOCK', 'UNLOCK', 'M-SEARCH', 'LINK', 'SOURCE', 'BIND', 'REPORT', 'FOO', 'get', 'G\x80T']) {
      for (const origin of [EVIL, TRUSTED]) {
        const target = method === 'CONNECT' ? '127.0.0.1:1' : '/api/items';
        const answer = await send(request(method, target, [`Origin: ${origin}`]), 3_000);
        expect(answer.status, `${method} from ${origin}`).not.toBe(-1);
        if (origin === EVIL) expectNoGrant(answer, `${method} from ${origin}`);
        // No TRACE echo of the request (cross-site tracing): neither its header lines nor its Origin come back.
        expect(answer.body).not.toMatch(/Host: 127\.0\.0\.1|Origin: https/);
      }
    }
    await expectStillServing('methods');
  });

  it('64 kB headers, a 64 kB URL, 64 kB of Origin: 431 or 400, not a grant or a crash', async () => {
    const big = 'a'.repeat(64 * 1024);
    const attempts = [
      request('GET', '/api/items', [`Origin: ${TRUSTED}`, `X-Big: ${big}`]),
      request('GET', `/api/items?__amp_source_origin=${big}`, [`Origin: ${TRUSTED}`]),
      request('GET', `/api/${big}`, [`Origin: ${EVIL}`]),
      request('GET', '/api/items', [`Origin: https://${'a'.repeat(63)}.${big.slice(0, 12_000)}.cdn.ampproject.org`]),
      request('POST', '/api/subscribe', [`Origin: ${EVIL}`, ...FORM, ...Array.from({ length: 2_000 }, (_, i) => `X-H${i}: v`)], 'email=a@b'),
    ];
    for (const attempt of attempts) {
      const answer = await send(attempt);
      expect([400, 403, 404, 413, 414, 431], attempt.slice(0, 80)).toContain(answer.status);
      expectNoGrant(answer, attempt.slice(0, 80));
    }
    await expectStillServing('big');
  });

  it('many Origin headers, allowed and not, in any order: never a grant to a joined or an untrusted value', async () => {
    const orders = [
      [TRUSTED, EVIL],
      [EVIL, TRUSTED],
      [TRUSTED, TRUSTED],
      Array.from({ length: 200 }, (_, i) => (i % 2 === 0 ? TRUSTED : EVIL_CACHE)),
      Array.from({ length: 200 }, () => TRUSTED),
      [TRUSTED, ''],
      ['', TRUSTED],
    ];
    for (const origins of orders) {
      for (const method of ['GET', 'POST']) {
        const before = await subscriptions();
        const answer = await send(
          request(method, method === 'GET' ? '/api/items' : '/api/subscribe', [...origins.map((o) => `Origin: ${o}`), ...FORM], 'email=reader@example.com'),
        );
        const granted = answer.headers.get('access-control-allow-origin');
        // A grant, if any, is one trusted origin, never the joined list or the untrusted one.
        if (granted !== undefined) expect(granted, JSON.stringify(origins.slice(0, 3))).toBe(TRUSTED);
        if (origins.some((origin) => origin !== TRUSTED)) {
          expectNoGrant(answer, JSON.stringify(origins.slice(0, 3)));
          expect(await subscriptions()).toBe(before);
        }
      }
    }
    await expectStillServing('many origins');
  });

  it('non-ASCII, percent-encoded controls and ANSI escapes in Origin, the query and the path: no grant, nothing echoed, no terminal control in the console', async () => {
    const esc = '%1B%5B2J%1B%5D0%3Bpwned%07';
    const attempts = [
      request('GET', '/api/items', [`Origin: https://www.exampl\xe9.com`]),
      request('GET', '/api/items', [`Origin: ${TRUSTED}\xa0`]),
      request('GET', '/api/items', [`Origin: \xef\xbb\xbf${TRUSTED}`]),
      request('GET', '/api/items', [`Origin: ${TRUSTED.replace('www-example-com', 'www-exampl\xc3\xa9-com')}`]),
      request('GET', '/api/items', [`Origin: https://www.example.com\x9b2J`]),
      request('POST', `/api/subscribe?__amp_source_origin=${esc}`, [`Origin: ${EVIL}`, ...FORM], `email=${esc}@x`),
      request('POST', `/api/subscribe?__amp_source_origin=${esc}`, [`Origin: ${TRUSTED}`, ...FORM], `email=${esc}`),
      request('POST', `/api/subscribe?__amp_source_origin=%E0%A4%A`, [`Origin: ${TRUSTED}`, ...FORM], `email=%E0%A4%A&%FF`),
      request('GET', `/api/items?%00=%00&__amp_source_origin=https://www.example.com%00${esc}`, [`Origin: ${TRUSTED}`]),
      request('GET', `/${esc}`, [`Origin: ${EVIL}`]),
      request('GET', `/api/${esc}`, [`Origin: ${EVIL}`]),
      request('GET', `/%E0%A4%A/../../etc/passwd`, []),
      request('GET', `/..%2f..%2fpackage.json`, []),
      request('GET', `/api/items\x80\xff`, [`Origin: ${TRUSTED}`]),
      request('POST', '/api/subscribe', [`Origin: ${TRUSTED}`, `Content-Type: application/x-www-form-urlencoded; charset="${esc}"`], 'email=a@b'),
      request('POST', '/api/subscribe', [`Origin: ${TRUSTED}`, ...FORM, `Content-Encoding: ${esc}`], 'email=a@b'),
      request('POST', '/api/subscribe', [`Origin: ${TRUSTED}`, ...FORM], `${'a=1&'.repeat(2_000)}email=a@b`),
    ];
    for (const attempt of attempts) {
      const answer = await send(attempt, 3_000);
      expect(answer.status, attempt.slice(0, 120)).toBeGreaterThan(0);
      if (!attempt.includes(`Origin: ${TRUSTED}\r`)) expectNoGrant(answer, attempt.slice(0, 120));
      // Nothing of the request comes back as a terminal control or unescaped markup.
      expect(answer.raw, attempt.slice(0, 120)).not.toMatch(/\x1b|<script|pwned\x07/i);
      expect(answer.raw).not.toContain('"name": "ampcors-workspace"');
    }
    await expectStillServing('escapes');
  });
});

describe('the README quick start, on the current sources', () => {
  it('prints an allowed, a hashed and a denied curl line, and each, pasted into sh, answers as its comment says', async () => {
    const lines = demo.output().split('\n');
    const pairs = lines.flatMap((line, i) =>
      line.startsWith('curl ') && lines[i - 1]?.startsWith('# ') ? [{ comment: lines[i - 1]!.slice(2), curl: line }] : [],
    );
    expect(pairs.map(({ comment }) => /allowed, 200|denied, 403|answered 204/.exec(comment)?.[0])).toEqual([
      'allowed, 200',
      'allowed, 200',
      'denied, 403',
      'answered 204',
    ]);
    expect(pairs[1]!.comment).toMatch(/^hashed /);
    for (const { comment, curl } of pairs) {
      // Only this server is named: a printed line never sends anything elsewhere.
      expect(curl).toContain(`http://127.0.0.1:${demo.port}/api/`);
      const before = await subscriptions();
      const { stdout } = await run('sh', ['-c', `${curl} --silent --show-error --max-time 5`], { timeout: 10_000 });
      const status = Number(/^HTTP\/1\.1 (\d{3})/.exec(stdout)?.[1]);
      const origin = /'Origin: ([^']+)'/.exec(curl)?.[1];
      const granted = /^access-control-allow-origin: (.*)\r$/im.exec(stdout)?.[1];
      expect(status, comment).toBe(Number(/\b(200|204|403)\b/.exec(comment)?.[1]));
      if (status === 403) {
        expect(granted, comment).toBeUndefined();
        expect(stdout).toContain(/403 ([a-z-]+)/.exec(comment)?.[1]);
        expect(await subscriptions(), comment).toBe(before);
      } else {
        expect(granted, comment).toBe(origin);
      }
    }
  });
});
