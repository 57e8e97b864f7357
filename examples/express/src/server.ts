/**
 * The demo publisher API (`npm run demo`): Express with the `@ampcors/express`
 * middleware, trusting an embedded list of publisher domains, and the
 * playground page (why an origin is blocked, origin trace, cache URLs) at its
 * root, with the demo's own domain list as its default. It prints
 * ready-to-paste curl lines at start, says in one line what to do when PORT
 * or HOST cannot be used, and stops cleanly on Ctrl-C (SIGINT) or SIGTERM.
 */
import { createServer } from 'node:http';
import express from 'express';
import { cacheOrigin } from '@ampcors/core';
import { ampCors, ampRedirectTo } from '@ampcors/express';
import { playgroundDir, playgroundHtml } from 'playground';
import { listenProblem, parsePort } from './listen-problem.js';
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

// The playground, a static page running @ampcors/core in the browser (same origin: no CORS needed),
// opened on this API's own publisher list unless its link says otherwise.
const page = playgroundHtml({ publishers: PUBLISHERS, check: cacheOrigin(PUBLISHERS[3] as string) });
app.get(['/', '/index.html'], (_req, res) => {
  res.type('html').send(page);
});
app.use(express.static(playgroundDir, { index: false }));

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

const host = process.env.HOST ?? '127.0.0.1';
const port = parsePort(process.env.PORT);
if (typeof port === 'string') {
  console.error(port);
  process.exit(1);
}
const server = createServer(app);

// A port in use (or a HOST that cannot be bound) is one line that says what to set, not a stack trace.
server.once('error', (error: NodeJS.ErrnoException) => {
  void listenProblem(error, port, host).then((line) => {
    console.error(line);
    process.exit(1);
  });
});

server.listen(port, host, () => {
  const address = server.address();
  const bound = typeof address === 'object' && address !== null ? address.port : port;
  const base = `http://${host.includes(':') ? `[${host}]` : host}:${bound}`;
  const lines = [
    `ampcors example (express): publisher API listening on ${base}`,
    `publishers: ${PUBLISHERS.join(', ')}`,
    `playground (why an origin is blocked, for this list; origin trace; cache URLs): ${playgroundLink(base)}`,
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
