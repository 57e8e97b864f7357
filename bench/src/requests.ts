/**
 * Real request/response objects for the in-process cases, without sockets:
 * a `node:http` `IncomingMessage` filled the way Node's HTTP parser fills it
 * (raw header lines, parsed lazily on first access of `req.headers`) and a
 * `ServerResponse` that buffers what it would send; or a Fetch `Request`.
 * Every operation builds fresh objects, as a server does per request.
 */
import { IncomingMessage, type RequestListener, ServerResponse } from 'node:http';
import { HOST, REQUESTS, type RequestKind } from './http/configs.js';

/** Raw header lines as a client sends them: Host first, then the request's headers. */
function rawHeaders(kind: RequestKind): string[] {
  const raw = ['Host', HOST];
  for (const [name, value] of Object.entries(REQUESTS[kind].headers)) raw.push(name, value);
  return raw;
}

/** A fresh `IncomingMessage` / `ServerResponse` pair for one request of `kind`. */
export type NodeExchange = () => { req: IncomingMessage; res: ServerResponse };

/** A factory of fresh request/response pairs of `kind`. */
export function nodeExchange(kind: RequestKind): NodeExchange {
  const raw = rawHeaders(kind);
  const { method, path } = REQUESTS[kind];
  return () => {
    const req = new IncomingMessage(null as never);
    req.method = method;
    req.url = path;
    // What the HTTP parser sets: an HTTP/1.1 request (ServerResponse reads the
    // version, and only for HTTP/1.0 the headers).
    req.httpVersionMajor = 1;
    req.httpVersionMinor = 1;
    req.httpVersion = '1.1';
    // What the HTTP parser calls: headers stay raw until `req.headers` is read.
    (req as unknown as { _addHeaderLines(headers: string[], n: number): void })._addHeaderLines([...raw], raw.length);
    return { req, res: new ServerResponse(req) };
  };
}

/** A factory of fresh Fetch `Request`s of `kind`. */
export function fetchRequest(kind: RequestKind): () => Request {
  const { method, path, headers } = REQUESTS[kind];
  const url = `http://${HOST}${path}`;
  return () => new Request(url, { method, headers });
}

/** What a response carried: status and lowercased headers. */
export interface Answer {
  readonly status: number;
  readonly headers: Readonly<Record<string, string>>;
}

/**
 * One in-process operation of a Node listener: how it completes is found
 * out once (a returned Promise, or `res.end` called before it returns, or
 * else `res.end` later), then each call builds a fresh exchange and handles it.
 */
export async function nodeOperation(listener: RequestListener, kind: RequestKind): Promise<{ op: () => unknown; async: boolean; answer: Answer }> {
  const exchange = nodeExchange(kind);
  const ended = (res: ServerResponse): Promise<void> =>
    new Promise((resolve) => {
      const end = res.end.bind(res) as (...args: unknown[]) => ServerResponse;
      res.end = ((...args: unknown[]) => {
        const out = end(...args);
        resolve();
        return out;
      }) as ServerResponse['end'];
    });
  const probe = exchange();
  const hooked = ended(probe.res);
  // Headers handed to writeHead directly (Fastify does) are not in getHeaders(): record them.
  const written: Record<string, unknown> = {};
  const writeHead = probe.res.writeHead.bind(probe.res) as (...args: unknown[]) => ServerResponse;
  probe.res.writeHead = ((...args: unknown[]) => {
    const headers = args.find((arg, i) => i > 0 && typeof arg === 'object' && arg !== null);
    if (Array.isArray(headers)) for (let i = 0; i + 1 < headers.length; i += 2) written[String(headers[i])] = headers[i + 1];
    else if (headers !== undefined) Object.assign(written, headers);
    return writeHead(...args);
  }) as ServerResponse['writeHead'];
  const returned = listener(probe.req, probe.res) as unknown;
  const thenable = typeof (returned as { then?: unknown } | undefined)?.then === 'function';
  const synchronous = !thenable && probe.res.writableEnded;
  if (thenable) await returned;
  await hooked;
  const answer: Answer = { status: probe.res.statusCode, headers: lowercased({ ...written, ...probe.res.getHeaders() }) };
  if (thenable) {
    return {
      op: () => {
        const { req, res } = exchange();
        return listener(req, res);
      },
      async: true,
      answer,
    };
  }
  if (synchronous) {
    return {
      op: () => {
        const { req, res } = exchange();
        listener(req, res);
        return res;
      },
      async: false,
      answer,
    };
  }
  return {
    op: () => {
      const { req, res } = exchange();
      const done = ended(res);
      listener(req, res);
      return done;
    },
    async: true,
    answer,
  };
}

/** One in-process operation of a Fetch handler: a fresh `Request`, the handler, and the response's headers read (as a server bridge does). */
export async function fetchOperation(
  handler: (request: Request) => Response | Promise<Response>,
  kind: RequestKind,
): Promise<{ op: () => unknown; async: boolean; answer: Answer }> {
  const request = fetchRequest(kind);
  let headerCount = 0;
  const count = (): void => {
    headerCount++;
  };
  const probe = await handler(request());
  const headers: Record<string, string> = {};
  probe.headers.forEach((value, name) => {
    headers[name] = value;
  });
  return {
    op: async () => {
      const response = await handler(request());
      response.headers.forEach(count);
      return headerCount;
    },
    async: true,
    answer: { status: probe.status, headers },
  };
}

function lowercased(headers: Record<string, unknown>): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [name, value] of Object.entries(headers)) out[name.toLowerCase()] = Array.isArray(value) ? value.join(', ') : String(value);
  return out;
}
