/**
 * The demo publisher API (`npm run demo`): Express with the `@ampcors/express`
 * middleware, trusting an embedded list of publisher domains, and the
 * playground page (cache URL calculator, origin trace, verdict) at its root,
 * opened on the demo's own domain list. It prints ready-to-paste curl lines
 * at start and stops cleanly on Ctrl-C (SIGINT) or SIGTERM.
 */
import { createServer } from 'node:http';
import express from 'express';
import { cacheOrigin } from '@ampcors/core';
import { ampCors, ampRedirectTo } from '@ampcors/express';
import { playgroundDir } from 'playground';
import { tryItLines } from './try-it.js';

/** The publisher domains this API trusts, on their own origins and on every AMP cache. */
const PUBLISHERS = [
  'example.com',
  'www.example.com',
  // Every subdomain of example.org (but not example.org itself).
  '*.example.org',
  // Its basic prefix has 65 characters, so AMP caches use a hashed one.
  'articles.publisher-with-a-very-long-domain-name.example.net',
];
const ITEMS = [
  { id: 1, title: 'AMP cache origins, explained' },
  { id: 2, title: 'Why Vary: Origin matters' },
];

let subscriptions = 0;
const app = express();
app.disable('x-powered-by');

// Outside CORS: a health check for load balancers (and the subscription counter, for the demo).
app.get('/health', (_req, res) => {
  res.json({ status: 'ok', runtime: `node ${process.version}`, subscriptions });
});

// The playground, a static page running @ampcors/core in the browser (same origin: no CORS needed).
app.use(express.static(playgroundDir, { index: 'index.html' }));

app.use('/api', ampCors({ publishers: PUBLISHERS }));

// amp-list reads `{ items: [...] }`.
app.get('/api/items', (_req, res) => {
  res.json({ items: ITEMS });
});

// amp-form: the side effect runs only for trusted origins (others got 403 from the middleware).
app.post('/api/subscribe', express.urlencoded({ extended: false, limit: '4kb' }), (req, res) => {
  const email: unknown = req.body?.email;
  if (typeof email !== 'string' || !email.includes('@')) {
    res.status(400).json({ error: 'email required' });
    return;
  }
  subscriptions += 1;
  res.set('AMP-Redirect-To', ampRedirectTo('https://www.example.com/thanks')).json({ subscribed: true });
});

/** The playground's address with this API's publisher list and a hashed cache origin to check, kept in its URL fragment. */
function playgroundLink(base: string): string {
  const hashed = cacheOrigin(PUBLISHERS[3] as string);
  const state = new URLSearchParams({ publishers: PUBLISHERS.join('\n'), check: hashed, origin: cacheOrigin('www.example.com') });
  return `${base}/#${state.toString()}`;
}

const port = Number(process.env.PORT ?? 3000);
const host = process.env.HOST ?? '127.0.0.1';
const server = createServer(app);

server.listen(port, host, () => {
  const address = server.address();
  const bound = typeof address === 'object' && address !== null ? address.port : port;
  const base = `http://${host.includes(':') ? `[${host}]` : host}:${bound}`;
  const lines = [
    `ampcors example (express): publisher API listening on ${base}`,
    `publishers: ${PUBLISHERS.join(', ')}`,
    `playground (cache URLs, origin trace, verdict for this list): ${playgroundLink(base)}`,
    '',
    'Try it:',
  ];
  for (const { comment, curl } of tryItLines(base, { publishers: PUBLISHERS })) lines.push(`# ${comment}`, curl, '');
  lines.push('Stop with Ctrl-C.');
  console.log(lines.join('\n'));
});

// Ctrl-C may arrive twice (from the terminal and forwarded by pnpm or npm): stopping is idempotent.
let stopping = false;
for (const signal of ['SIGINT', 'SIGTERM'] as const) {
  process.on(signal, () => {
    if (stopping) return;
    stopping = true;
    server.close(() => console.log('stopped'));
    server.closeAllConnections();
  });
}
