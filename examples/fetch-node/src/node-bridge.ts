/**
 * The `node:http` ⇄ Fetch API bridge of this example's two servers (server.ts, allow-set.ts): a Node request becomes a
 * Fetch `Request`, the handler's `Response` is written back, and anything that throws on the way (a method the Fetch
 * `Request` refuses, such as `TRACE`; a body that fails) is a plain 500 without CORS headers: one request never stops
 * the server.
 */
import type { IncomingMessage, RequestListener, ServerResponse } from 'node:http';
import { Readable } from 'node:stream';

/** `req` as a Fetch `Request` on `base` (its body streamed, for methods that may have one). Throws for a method Fetch refuses. */
export function toRequest(req: IncomingMessage, base: string): Request {
  const headers = new Headers();
  for (const [name, value] of Object.entries(req.headers)) {
    if (value !== undefined) headers.set(name, Array.isArray(value) ? value.join(', ') : value);
  }
  const method = req.method ?? 'GET';
  const hasBody = method !== 'GET' && method !== 'HEAD';
  return new Request(new URL(req.url ?? '/', base), {
    method,
    headers,
    body: hasBody ? (Readable.toWeb(req) as ReadableStream<Uint8Array>) : null,
    ...(hasBody ? { duplex: 'half' } : {}),
  });
}

/** Writes `response` (status, headers, whole body) to `res`. */
export async function send(response: Response, res: ServerResponse): Promise<void> {
  res.writeHead(response.status, [...response.headers].flat());
  res.end(Buffer.from(await response.arrayBuffer()));
}

/** A `node:http` listener serving `handle`: every failure is logged and answered with a 500 without CORS headers. */
export function listenerOf(handle: (request: Request) => Promise<Response>): RequestListener {
  return (req, res) => {
    void (async () => {
      try {
        await send(await handle(toRequest(req, 'http://localhost')), res);
      } catch (error) {
        console.error(error);
        if (!res.headersSent) res.writeHead(500, { 'content-type': 'text/plain; charset=utf-8' });
        res.end('Internal error\n');
      }
    })();
  };
}
