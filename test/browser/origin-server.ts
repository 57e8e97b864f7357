/**
 * The one HTTPS server of the browser suite, on 127.0.0.1:443 (AMP cache
 * origins are always https on the default port). It plays every origin,
 * routed by `Host`: the pages on the cache, publisher and hostile origins,
 * and the API under test, one mount per adapter.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import { createServer, type Server } from 'node:https';
import type { TestCertificate } from './certificate.js';
import { pageHtml } from './pages.js';

/** A Node request handler (an Express app, a Koa callback, a Fetch bridge). */
export type NodeHandler = (req: IncomingMessage, res: ServerResponse) => void;

/** The name of the session cookie the API reads back. */
export const SESSION_COOKIE = 'ampcors_session';

/** One API request as the server answered it. */
export interface ApiRequestRecord {
  readonly adapter: string;
  readonly host: string;
  readonly method: string;
  readonly path: string;
  /** The `Origin` request header, `null` when the browser sent none. */
  readonly origin: string | null;
  readonly status: number;
}

/** Configuration of {@link startOriginServer}. */
export interface OriginServerOptions {
  readonly certificate: TestCertificate;
  /** Hosts that serve the test page at any path ending in `/page.html`. */
  readonly pageHosts: readonly string[];
  /** The API host: `https://<apiHost>/<adapter>/…`. */
  readonly apiHost: string;
  /** The publisher host, which also mounts the API as `/api/<adapter>/…` (same origin). */
  readonly publisherHost: string;
  /** The API under test, by adapter name. */
  readonly apis: Readonly<Record<string, NodeHandler>>;
}

/** A running origin server. */
export interface OriginServer {
  /** Every API request so far, in order. */
  readonly apiRequests: ApiRequestRecord[];
  close(): Promise<void>;
}

function send(res: ServerResponse, status: number, type: string, body: string, headers: Record<string, string> = {}): void {
  res.writeHead(status, { 'Content-Type': type, 'Cache-Control': 'no-store', ...headers });
  res.end(body);
}

/**
 * Starts the server on 127.0.0.1:443. Rejects with a clear message when the
 * port cannot be bound (not root, or already in use).
 */
export async function startOriginServer(options: OriginServerOptions): Promise<OriginServer> {
  const apiRequests: ApiRequestRecord[] = [];
  const pageHosts = new Set(options.pageHosts);

  const routeApi = (req: IncomingMessage, res: ServerResponse, host: string, mount: string, url: URL): boolean => {
    const match = new RegExp(`^${mount}/([a-z]+)(/.*)$`).exec(url.pathname);
    const adapter = match?.[1];
    const api = adapter === undefined ? undefined : options.apis[adapter];
    if (!match || adapter === undefined || api === undefined) return false;
    const path = match[2] as string;
    res.on('finish', () => {
      const origin = req.headers.origin;
      apiRequests.push({ adapter, host, method: req.method ?? '', path, origin: typeof origin === 'string' ? origin : null, status: res.statusCode });
    });
    // Each adapter's app sees itself mounted at the root.
    req.url = path + url.search;
    api(req, res);
    return true;
  };

  const handle = (req: IncomingMessage, res: ServerResponse) => {
    const host = (req.headers.host ?? '').toLowerCase().replace(/:443$/, '');
    const url = new URL(req.url ?? '/', `https://${host || 'invalid'}`);
    if ((host === options.apiHost || host === options.publisherHost) && url.pathname === '/session') {
      // A first-party visit sets the session cookie the API later reads back.
      const value = url.searchParams.get('value') ?? '';
      if (!/^[A-Za-z0-9-]{1,64}$/.test(value)) return send(res, 400, 'text/plain', 'bad session value');
      return send(res, 200, 'text/plain', `session ${value}`, { 'Set-Cookie': `${SESSION_COOKIE}=${value}; Path=/; Secure; HttpOnly; SameSite=None` });
    }
    if (url.pathname === '/favicon.ico') return send(res, 204, 'image/x-icon', '');
    if (host === options.apiHost && routeApi(req, res, host, '', url)) return;
    if (host === options.publisherHost && routeApi(req, res, host, '/api', url)) return;
    if (pageHosts.has(host) && req.method === 'GET' && url.pathname.endsWith('/page.html')) return send(res, 200, 'text/html; charset=utf-8', pageHtml());
    send(res, 404, 'text/plain', 'not found');
  };

  const server: Server = createServer({ key: options.certificate.key, cert: options.certificate.cert }, (req, res) => {
    try {
      handle(req, res);
    } catch (error) {
      if (!res.headersSent) send(res, 500, 'text/plain', `origin server error: ${(error as Error).message}`);
    }
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', (error: NodeJS.ErrnoException) => {
      reject(
        new Error(
          `the browser suite must serve https on 127.0.0.1:443 (AMP cache origins use the default port) and cannot: ${error.code ?? ''} ${error.message}. ` +
            (error.code === 'EACCES' ? 'Run the tests as root (or grant node CAP_NET_BIND_SERVICE).' : 'Free port 443 (another server or test is using it).'),
        ),
      );
    });
    server.listen(443, '127.0.0.1', () => resolve());
  });
  return {
    apiRequests,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
