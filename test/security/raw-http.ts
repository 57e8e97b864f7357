/**
 * A raw HTTP/1.1 request over a `net` socket, for header bytes that Node's
 * HTTP client refuses to send (controls, CR/LF, characters above U+00FF).
 */
import { connect } from 'node:net';

/** A response as read off the socket. */
export interface RawResponse {
  /** The status code, or 0 when the server closed without a parseable answer. */
  readonly status: number;
  /** Header lines, names lowercased (repeated names joined with `, `). */
  readonly headers: Readonly<Record<string, string>>;
  /** The whole response head, unparsed. */
  readonly head: string;
}

/**
 * Sends `<method> <path>` (default POST) with extra header `lines` written byte for byte
 * (strings are UTF-8 encoded), and reads the response head. Bounded by `timeoutMs`.
 */
export function rawRequest(baseUrl: string, path: string, lines: ReadonlyArray<string | Buffer>, timeoutMs = 3000, method = 'POST'): Promise<RawResponse> {
  const { hostname, port } = new URL(baseUrl);
  return new Promise((resolve) => {
    const socket = connect(Number(port), hostname);
    const chunks: Buffer[] = [];
    const finish = () => {
      socket.destroy();
      const text = Buffer.concat(chunks).toString('latin1');
      const head = text.split('\r\n\r\n')[0] ?? '';
      const [statusLine, ...headerLines] = head.split('\r\n');
      const status = Number(/^HTTP\/1\.[01] ([0-9]{3})/.exec(statusLine ?? '')?.[1] ?? 0);
      const headers: Record<string, string> = {};
      for (const line of headerLines) {
        const colon = line.indexOf(':');
        if (colon <= 0) continue;
        const name = line.slice(0, colon).trim().toLowerCase();
        const value = line.slice(colon + 1).trim();
        headers[name] = headers[name] === undefined ? value : `${headers[name]}, ${value}`;
      }
      resolve({ status, headers, head });
    };
    const timer = setTimeout(finish, timeoutMs);
    socket.on('data', (chunk: Buffer) => {
      chunks.push(chunk);
      if (Buffer.concat(chunks).includes('\r\n\r\n')) {
        clearTimeout(timer);
        finish();
      }
    });
    socket.on('error', () => {
      clearTimeout(timer);
      finish();
    });
    socket.on('close', () => {
      clearTimeout(timer);
      finish();
    });
    socket.write(
      Buffer.concat([
        Buffer.from(`${method} ${path} HTTP/1.1\r\nHost: ${hostname}\r\n`),
        ...lines.map((l) => (typeof l === 'string' ? Buffer.from(l, 'utf8') : l)),
        Buffer.from('Content-Length: 0\r\nConnection: close\r\n\r\n'),
      ]),
    );
  });
}
