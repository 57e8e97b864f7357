/**
 * Attacker's review, session 17 (helper-100): an upstream's own AMP grant under rule 5's "moved" path.
 *
 * A Fetch or Hono handler awaits an upstream that echoes `AMP-Email-Allow-Sender` (or sends
 * `AMP-Access-Control-Allow-Source-Origin`). While it waits, any other request answered by ampcors with the same Origin slot
 * (no Origin at all, or the same one) moves core's per-Origin write count (nested-policies.ts, 5.b). The adapter then took
 * the rule-5 path and skipped removing the Response's own grant: a denied sender read the answer with the upstream's
 * `AMP-Email-Allow-Sender`. Each case is asserted from the attacker's side: the denied sender must get no AMP grant.
 */
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { withAmpCors } from '@ampcors/fetch';
import { ampCors as honoCors } from '@ampcors/hono';
import { Hono } from 'hono';
import { describe, expect, it } from 'vitest';

const OPTIONS = { publishers: ['example.com'], email: { senders: ['news@example.com'] }, onDenied: 'omit' } as const;
const DENIED_SENDER = 'evil@evil.example';
const SOURCE = 'https://evil.example';

/** What the upstream answers: its own AMP grants for whoever asks. */
function upstream(req: Request): Response {
  return new Response('secret', {
    headers: {
      'amp-email-allow-sender': req.headers.get('amp-email-sender') ?? DENIED_SENDER,
      'amp-access-control-allow-source-origin': SOURCE,
      'content-type': 'text/plain',
    },
  });
}

/** A gate the slow handler waits on, released after the concurrent request was answered. */
function gate(): { wait: Promise<void>; open: () => void } {
  let open!: () => void;
  const wait = new Promise<void>((resolve) => (open = resolve));
  return { wait, open };
}

/** A handler as app: Fetch's withAmpCors or a Hono app with ampCors, `slow` paths waiting on `g`. */
const APPS = {
  fetch: (g: ReturnType<typeof gate>) =>
    withAmpCors(async (req) => {
      if (new URL(req.url).pathname === '/slow') await g.wait;
      return upstream(req);
    }, OPTIONS),
  hono: (g: ReturnType<typeof gate>) => {
    const app = new Hono();
    app.use('*', honoCors(OPTIONS));
    app.get('*', async (c) => {
      if (c.req.path === '/slow') await g.wait;
      return upstream(c.req.raw);
    });
    return (req: Request) => app.fetch(req);
  },
};

const CONCURRENT = {
  'without an Origin': {},
  'with the same Origin (mail.google.com)': { origin: 'https://mail.google.com', 'amp-email-sender': 'news@example.com' },
};

describe.each(Object.entries(APPS))('%s: an upstream AMP grant while another request is answered', (_name, make) => {
  it('alone: the denied sender gets no AMP grant', async () => {
    const res = await make(gate())(new Request('https://api.example.com/me', { headers: { 'amp-email-sender': DENIED_SENDER } }));
    expect(res.headers.get('amp-email-allow-sender')).toBeNull();
    expect(res.headers.get('amp-access-control-allow-source-origin')).toBeNull();
  });

  it.each(Object.entries(CONCURRENT))('a concurrent request %s: still no AMP grant for the denied sender', async (_kind, headers) => {
    const g = gate();
    const app = make(g);
    const asked = { origin: 'https://mail.google.com', 'amp-email-sender': DENIED_SENDER };
    const slow = app(new Request('https://api.example.com/slow', { headers: 'origin' in headers ? asked : { 'amp-email-sender': DENIED_SENDER } }));
    await new Promise((resolve) => setTimeout(resolve, 5));
    const other = await app(new Request('https://api.example.com/other', { headers }));
    expect(other.status).toBe(200);
    g.open();
    const res = await slow;
    expect(res.status).toBe(200);
    expect(res.headers.get('amp-email-allow-sender')).toBeNull();
    expect(res.headers.get('amp-access-control-allow-source-origin')).toBeNull();
  });
});

describe('fetch: a real fetch() result (immutable headers, the copy path) under a concurrent request', () => {
  it('the upstream echoing AMP-Email-Allow-Sender keeps no grant for a denied sender', async () => {
    const server = createServer((req, res) => {
      res.setHeader('amp-email-allow-sender', String(req.headers['amp-email-sender']));
      setTimeout(() => res.end('secret'), 50);
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    try {
      const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/`;
      const app = withAmpCors((req) => fetch(url, { headers: req.headers }), OPTIONS);
      const slow = app(new Request('https://api.example.com/slow', { headers: { 'amp-email-sender': DENIED_SENDER } }));
      await new Promise((resolve) => setTimeout(resolve, 10));
      // Another withAmpCors of the same process answering a request without Origin moves the same write count.
      await withAmpCors(() => new Response('x'), { publishers: ['example.com'] })(new Request('https://api.example.com/else'));
      const res = await slow;
      expect(res.headers.get('amp-email-allow-sender')).toBeNull();
      await res.arrayBuffer();
    } finally {
      server.close();
    }
  });
});
