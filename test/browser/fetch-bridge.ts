/**
 * Serves a Fetch-API handler (`(Request) => Response`) from `node:http`, the
 * way a Node deployment of `@ampcors/fetch` would: the request body is read
 * whole, the response's headers (each `Set-Cookie` separately) and body are
 * written back unchanged.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { NodeHandler } from './origin-server.js';

/** A Fetch-API request handler. */
export type FetchHandler = (request: Request) => Response | Promise<Response>;

async function readBody(req: IncomingMessage): Promise<Buffer> {
  const chunks: Buffer[] = [];
  for await (const chunk of req) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks);
}

function toRequest(req: IncomingMessage, body: Buffer): Request {
  const headers = new Headers();
  for (const [name, value] of Object.entries(req.headers)) {
    if (value === undefined) continue;
    for (const item of Array.isArray(value) ? value : [value]) headers.append(name, item);
  }
  const method = req.method ?? 'GET';
  const url = `https://${req.headers.host ?? 'localhost'}${req.url ?? '/'}`;
  return new Request(url, { method, headers, body: method === 'GET' || method === 'HEAD' ? null : new Uint8Array(body) });
}

async function writeResponse(res: ServerResponse, response: Response): Promise<void> {
  const headers: Record<string, string | string[]> = {};
  response.headers.forEach((value, name) => {
    if (name !== 'set-cookie') headers[name] = value;
  });
  const cookies = response.headers.getSetCookie();
  if (cookies.length > 0) headers['set-cookie'] = cookies;
  res.writeHead(response.status, headers);
  res.end(Buffer.from(await response.arrayBuffer()));
}

/** Wraps `handler` as a Node request handler; a throwing handler answers 500. */
export function nodeHandlerOf(handler: FetchHandler): NodeHandler {
  return (req, res) => {
    readBody(req)
      .then((body) => handler(toRequest(req, body)))
      .then((response) => writeResponse(res, response))
      .catch((error: unknown) => {
        if (!res.headersSent) res.writeHead(500, { 'Content-Type': 'text/plain' });
        res.end(`fetch handler error: ${error instanceof Error ? error.message : String(error)}`);
      });
  };
}
