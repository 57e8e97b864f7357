/**
 * Attacker-side helpers for the session-17 demo attacks: start an example
 * server as a child process on the CURRENT TypeScript sources (tsx with a
 * generated tsconfig whose `paths` point @ampcors/* at packages/* /src, so no
 * dist is needed), and send raw bytes to it, so that requests no HTTP client
 * would build (odd methods, duplicated or non-ASCII headers, broken framing)
 * can be sent.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { connect } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

/** The repository root. */
export const ROOT = fileURLToPath(new URL('../../', import.meta.url));

let tsconfig: string | undefined;

/** A tsconfig mapping every @ampcors/* package (and core's subpaths) to its sources. */
function sourcesTsconfig(): string {
  if (tsconfig !== undefined) return tsconfig;
  const paths: Record<string, string[]> = { '@ampcors/core/*': ['packages/core/src/*.ts'] };
  for (const name of ['core', 'express', 'koa', 'fetch', 'hono', 'fastify', 'redis']) paths[`@ampcors/${name}`] = [`packages/${name}/src/index.ts`];
  const file = join(mkdtempSync(join(tmpdir(), 'ampcors-attack-')), 'tsconfig.json');
  const compilerOptions = { module: 'NodeNext', moduleResolution: 'NodeNext', target: 'ES2022', strict: true, baseUrl: ROOT, paths };
  writeFileSync(file, JSON.stringify({ compilerOptions }));
  tsconfig = file;
  return file;
}

/** A running example. */
export interface RunningExample {
  readonly port: number;
  /** Everything the server wrote, as raw bytes (latin1), stdout then stderr interleaved. */
  output(): string;
  /** True while the process runs. */
  alive(): boolean;
  /** SIGKILL (idempotent); resolves when the process is gone. */
  stop(): Promise<void>;
}

/**
 * Starts `node --import tsx <entry>` (or `command`, e.g. Bun or Deno) in `examples/<example>` on PORT=0 and
 * waits for its `listening on` line.
 */
export function startExample(
  example: string,
  entry: string,
  env: Record<string, string> = {},
  command: readonly string[] = [process.execPath, '--import', 'tsx'],
  timeoutMs = 20_000,
): Promise<RunningExample> {
  const [program = process.execPath, ...args] = command;
  const child: ChildProcess = spawn(program, [...args, entry], {
    cwd: join(ROOT, 'examples', example),
    env: { ...process.env, PORT: '0', HOST: '127.0.0.1', NODE_ENV: 'development', TSX_TSCONFIG_PATH: sourcesTsconfig(), ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
    // Its own process group: `node_modules/.bin/bun` and `.bin/deno` are wrappers that start the real binary as a child.
    detached: true,
  });
  let out = '';
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  child.stdout!.on('data', (chunk: Buffer) => (out += chunk.toString('latin1')));
  child.stderr!.on('data', (chunk: Buffer) => (out += chunk.toString('latin1')));
  const running: RunningExample = {
    port: 0,
    output: () => out,
    alive: () => child.exitCode === null && child.signalCode === null,
    stop: async () => {
      try {
        // The whole group this test started (the wrapper and the runtime it started), by its id.
        process.kill(-child.pid!, 'SIGKILL');
      } catch {
        // Already gone.
      }
      await exited;
    },
  };
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => {
      void running.stop();
      reject(new Error(`${example}/${entry} not listening:\n${out}`));
    }, timeoutMs);
    const poll = setInterval(() => {
      const port = /listening on http:\/\/[^\s]*:(\d+)/.exec(out)?.[1];
      if (port === undefined && running.alive()) return;
      clearInterval(poll);
      clearTimeout(timer);
      if (port === undefined) reject(new Error(`${example}/${entry} exited:\n${out}`));
      else resolve({ ...running, port: Number(port) });
    }, 20);
  });
}

/** A raw HTTP answer: status (0 when the connection closed with no answer), lower-cased headers (repeats joined by '\n'), body. */
export interface RawAnswer {
  readonly status: number;
  readonly headers: Map<string, string>;
  readonly body: string;
  readonly raw: string;
}

/** A chunked body's data (as far as it is well formed). */
function dechunked(body: string): string {
  let data = '';
  let at = 0;
  for (;;) {
    const lineEnd = body.indexOf('\r\n', at);
    const size = lineEnd === -1 ? Number.NaN : Number.parseInt(body.slice(at, lineEnd), 16);
    if (!(size > 0)) return data;
    data += body.slice(lineEnd + 2, lineEnd + 2 + size);
    at = lineEnd + 2 + size + 2;
  }
}

/** Sends `bytes` (latin1) on a new connection and reads until the server closes it (or `timeoutMs`: status -1, unless an answer came). */
export function sendRaw(port: number, bytes: string | Buffer, timeoutMs = 5_000): Promise<RawAnswer> {
  return new Promise((resolve) => {
    const socket = connect(port, '127.0.0.1');
    const chunks: Buffer[] = [];
    let done = false;
    const finish = (timedOut: boolean) => {
      if (done) return;
      done = true;
      clearTimeout(timer);
      socket.destroy();
      const raw = Buffer.concat(chunks).toString('latin1');
      const split = raw.indexOf('\r\n\r\n');
      const head = split === -1 ? raw : raw.slice(0, split);
      const [statusLine = '', ...fields] = head.split('\r\n');
      const headers = new Map<string, string>();
      for (const field of fields) {
        const colon = field.indexOf(':');
        if (colon === -1) continue;
        const name = field.slice(0, colon).trim().toLowerCase();
        const value = field.slice(colon + 1).trim();
        headers.set(name, headers.has(name) ? `${headers.get(name)}\n${value}` : value);
      }
      const status = timedOut && raw === '' ? -1 : Number(/^HTTP\/1\.[01] (\d{3})/.exec(statusLine)?.[1] ?? 0);
      const body = split === -1 ? '' : raw.slice(split + 4);
      resolve({ status, headers, body: headers.get('transfer-encoding') === 'chunked' ? dechunked(body) : body, raw });
    };
    const timer = setTimeout(() => finish(true), timeoutMs);
    socket.on('data', (chunk: Buffer) => chunks.push(chunk));
    socket.on('close', () => finish(false));
    socket.on('error', () => finish(false));
    // Written, not ended: Node's HTTP server drops the answer to a client that half-closes first (no `allowHalfOpen`).
    socket.write(typeof bytes === 'string' ? Buffer.from(bytes, 'latin1') : bytes);
  });
}

/** One request, `Connection: close`, with `headers` given as raw lines (so repeats and any bytes are possible). */
export function request(method: string, target: string, headerLines: readonly string[] = [], body = ''): string {
  const lines = [`${method} ${target} HTTP/1.1`, 'Host: 127.0.0.1', 'Connection: close', ...headerLines];
  if (body !== '' && !headerLines.some((line) => /^(content-length|transfer-encoding):/i.test(line)))
    lines.push(`Content-Length: ${Buffer.byteLength(body, 'latin1')}`);
  return `${lines.join('\r\n')}\r\n\r\n${body}`;
}

/**
 * The 7-bit control codes a terminal acts on (ESC, BEL, CR, backspace, ...), other than tab and newline.
 * (C1 codes written as UTF-8, U+0080-U+009F, are not acted on by xterm in UTF-8 mode: its ctlseqs says a C1 code
 * obtained by decoding UTF-8 is not used as a control.)
 */
export const TERMINAL_CONTROL = /[\x00-\x08\x0b-\x1f\x7f]/;
