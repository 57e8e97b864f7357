/**
 * In-process cost of each adapter on one request, without sockets: the
 * request the HTTP benchmark sends (same path, same headers as autocannon's)
 * is built as a real `IncomingMessage` / `ServerResponse` pair (Express,
 * Koa, through `app.createContext`) or a real `Request` (Fetch), then handed
 * to the ampcors middleware — or, for the baseline row, to nothing. The
 * difference of the two rows is what ampcors adds to a request, measured
 * with the micro benchmarks' CPU clock instead of through a busy network
 * stack. Every operation builds a fresh request, because Node parses the
 * header object of a request lazily, on first access.
 */
import { IncomingMessage, ServerResponse } from 'node:http';
import { PUBLISHERS, REQUEST_PATH, REQUESTS, type RequestKind } from './http/configs.js';

/** One in-process case: `fn` handles one request (a Promise when the path is asynchronous). */
export interface AdapterCase {
  readonly framework: 'express' | 'koa' | 'fetch';
  readonly kind: RequestKind;
  /** `baseline`: the request object alone; `ampcors`: the request through the adapter. */
  readonly variant: 'baseline' | 'ampcors';
  readonly fn: () => unknown;
}

const HOST = '127.0.0.1:18400';

/** Raw header lines as autocannon sends them: Host first, then the configured headers. */
function rawHeaders(kind: RequestKind): string[] {
  const raw = ['host', HOST];
  for (const [name, value] of Object.entries(REQUESTS[kind].headers)) raw.push(name, value);
  return raw;
}

function nodeRequest(kind: RequestKind, raw: readonly string[]): { req: IncomingMessage; res: ServerResponse } {
  const req = new IncomingMessage(null as never);
  req.method = REQUESTS[kind].method;
  req.url = REQUEST_PATH;
  // What the HTTP parser calls: headers stay raw until `req.headers` is read.
  (req as unknown as { _addHeaderLines(headers: string[], n: number): void })._addHeaderLines([...raw], raw.length);
  const res = new ServerResponse(req);
  return { req, res };
}

/** The in-process adapter cases: baseline and ampcors for each framework and request kind. */
export async function adapterCases(): Promise<AdapterCase[]> {
  const { ampCors: expressAmpCors } = await import('@ampcors/express');
  const { ampCors: koaAmpCors } = await import('@ampcors/koa');
  const { withAmpCors } = await import('@ampcors/fetch');
  const { default: Koa } = await import('koa');
  const expressMiddleware = expressAmpCors({ publishers: PUBLISHERS });
  const koaMiddleware = koaAmpCors({ publishers: PUBLISHERS });
  const koaApp = new Koa();
  const hello = (_request: Request): Response => new Response('hello world', { headers: { 'content-type': 'text/plain; charset=utf-8' } });
  const wrapped = withAmpCors(hello, { publishers: PUBLISHERS });
  const noop = (): void => {};
  const resolved = (): Promise<void> => Promise.resolve();
  const cases: AdapterCase[] = [];
  for (const kind of ['get', 'preflight'] as RequestKind[]) {
    const raw = rawHeaders(kind);
    const url = `http://${HOST}${REQUEST_PATH}`;
    const init = { method: REQUESTS[kind].method, headers: REQUESTS[kind].headers };
    cases.push(
      { framework: 'express', kind, variant: 'baseline', fn: () => nodeRequest(kind, raw) },
      {
        framework: 'express',
        kind,
        variant: 'ampcors',
        fn: () => {
          const { req, res } = nodeRequest(kind, raw);
          expressMiddleware(req, res, noop);
          return res;
        },
      },
      {
        framework: 'koa',
        kind,
        variant: 'baseline',
        fn: async () => {
          const { req, res } = nodeRequest(kind, raw);
          return koaApp.createContext(req, res);
        },
      },
      {
        framework: 'koa',
        kind,
        variant: 'ampcors',
        fn: async () => {
          const { req, res } = nodeRequest(kind, raw);
          const ctx = koaApp.createContext(req, res);
          await koaMiddleware(ctx as never, resolved);
          return ctx;
        },
      },
      { framework: 'fetch', kind, variant: 'baseline', fn: async () => hello(new Request(url, init)) },
      { framework: 'fetch', kind, variant: 'ampcors', fn: async () => wrapped(new Request(url, init)) },
    );
  }
  return cases;
}
