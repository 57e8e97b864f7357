/**
 * The registry's own Redis connection: a small RESP2 client for the few
 * commands it sends, written so that a server that misbehaves — silent,
 * sending garbage, sending a reply that never ends or is huge — costs a
 * bounded amount of memory and time, and `close()` always returns.
 */
import { connect as netConnect, isIP, type Socket } from 'node:net';
import { performance } from 'node:perf_hooks';
import { connect as tlsConnect } from 'node:tls';
import { AmpCorsError } from '@ampcors/core';

/**
 * Largest reply accepted, in bytes, framing included. The registry's replies
 * are integers, `OK`, a nil, a publisher domain (at most 253 octets) or an
 * error line: a reply that grows past this is refused and the connection
 * dropped, so a hostile server can make the client hold at most this much
 * plus one socket read.
 */
export const MAX_REPLY_BYTES = 4096;
/**
 * A command must be answered within this long of being sent: once the oldest
 * waiting command has waited this long, the connection is dropped (every
 * waiting command fails) and reopened. Timed from each command's own send
 * time, so a server that answers slowly but steadily cannot keep a connection
 * whose queue only grows; Redis itself answers other clients with BUSY once a
 * script runs past its 5 s `lua-time-limit`.
 */
export const REPLY_DEADLINE_MS = 5000;
/**
 * Most commands waiting for a reply on one connection. While that many wait
 * (a slow or hostile server, a flood of uncached questions), `send` rejects
 * at once with `Redis is saturated (…)`, and a question becomes a
 * `source-unavailable` denial: what a connection holds is bounded whatever the
 * request rate. Commands whose caller gave up (a question past `timeoutMs`)
 * keep their place until answered, since replies match commands by position.
 */
export const MAX_PENDING = 1024;
/** How long `close()` waits for the answer to QUIT before destroying the socket. */
export const CLOSE_TIMEOUT_MS = 500;
/** Longest wait for a TCP (or TLS) connection to open. */
export const CONNECT_TIMEOUT_MS = 1000;

/** A reply: an integer, a (bulk or simple) string, or nil. Error replies reject the command instead. */
export type RespReply = number | string | null;

/** Where and how to connect, from a `redis://` or `rediss://` URL. */
interface Endpoint {
  readonly host: string;
  readonly port: number;
  readonly tls: boolean;
  /** Commands sent first on every connection: AUTH, SELECT. */
  readonly handshake: readonly (readonly string[])[];
}

/** A percent-decoded user name or password of the url; a malformed escape is an `AmpCorsError` that does not echo it. */
function userinfoPart(raw: string, what: string): string {
  try {
    return decodeURIComponent(raw);
  } catch {
    throw new AmpCorsError('invalid-option', `the ${what} of the Redis url holds a malformed percent-escape`);
  }
}

function endpointOf(url: string): Endpoint {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    throw new AmpCorsError('invalid-option', 'url must be a redis:// or rediss:// URL');
  }
  if (parsed.protocol !== 'redis:' && parsed.protocol !== 'rediss:')
    throw new AmpCorsError('invalid-option', `url must be a redis:// or rediss:// URL, not ${parsed.protocol}//…`);
  const host = parsed.hostname.startsWith('[') ? parsed.hostname.slice(1, -1) : parsed.hostname;
  if (host === '') throw new AmpCorsError('invalid-option', 'url has no host');
  const handshake: string[][] = [];
  const username = userinfoPart(parsed.username, 'user name');
  const password = userinfoPart(parsed.password, 'password');
  if (password !== '') handshake.push(username === '' ? ['AUTH', password] : ['AUTH', username, password]);
  const db = parsed.pathname.replace(/^\//, '');
  if (db !== '') {
    if (!/^[0-9]{1,5}$/.test(db)) throw new AmpCorsError('invalid-option', 'the path of a Redis url is a database number');
    if (db !== '0') handshake.push(['SELECT', db]);
  }
  return { host, port: parsed.port === '' ? 6379 : Number(parsed.port), tls: parsed.protocol === 'rediss:', handshake };
}

/** One command in flight. */
interface Pending {
  resolve(reply: RespReply): void;
  reject(error: Error): void;
  /** When it was written (`performance.now()`), for the reply deadline. */
  readonly sentAt: number;
}

/** Limits of a {@link RespConnection}; the defaults are the exported constants, smaller values are for tests. */
export interface RespConnectionLimits {
  /** Most commands waiting for a reply (default {@link MAX_PENDING}). */
  readonly maxPending?: number;
  /** How long a command may wait for its reply (default {@link REPLY_DEADLINE_MS}). */
  readonly replyDeadlineMs?: number;
}

/** The RESP2 encoding of one command. */
function encode(args: readonly string[]): string {
  let out = `*${args.length}\r\n`;
  for (const arg of args) out += `$${Buffer.byteLength(arg)}\r\n${arg}\r\n`;
  return out;
}

/** Thrown (and the connection dropped) for a reply that is not RESP2, not expected, or too long. */
class ProtocolError extends Error {
  constructor(what: string) {
    super(`Redis sent an invalid reply (${what})`);
    this.name = 'ProtocolError';
  }
}

/**
 * Reads one complete reply from `buffer` at `start`: the reply and where the
 * next one starts, or `undefined` when more bytes are needed. Accepts only
 * `+`, `-`, `:` and `$` replies (no arrays: the registry's commands never
 * return one).
 */
function parseReply(buffer: Buffer, start: number): { reply: RespReply | Error; end: number } | undefined {
  const lineEnd = buffer.indexOf('\r\n', start, 'latin1');
  if (lineEnd < 0) {
    if (buffer.length - start > MAX_REPLY_BYTES) throw new ProtocolError(`a line longer than ${MAX_REPLY_BYTES} bytes`);
    return undefined;
  }
  if (lineEnd - start > MAX_REPLY_BYTES) throw new ProtocolError(`a line longer than ${MAX_REPLY_BYTES} bytes`);
  const type = buffer[start];
  const line = buffer.toString('utf8', start + 1, lineEnd);
  const next = lineEnd + 2;
  switch (type) {
    case 0x2b: // '+' simple string
      return { reply: line, end: next };
    case 0x2d: // '-' error
      return { reply: new Error(`Redis error: ${line}`), end: next };
    case 0x3a: {
      // ':' integer
      if (!/^-?[0-9]{1,16}$/.test(line)) throw new ProtocolError('a malformed integer');
      return { reply: Number(line), end: next };
    }
    case 0x24: {
      // '$' bulk string
      if (line === '-1') return { reply: null, end: next };
      if (!/^[0-9]{1,10}$/.test(line)) throw new ProtocolError('a malformed bulk length');
      const length = Number(line);
      if (length > MAX_REPLY_BYTES) throw new ProtocolError(`a string of ${length} bytes, more than ${MAX_REPLY_BYTES}`);
      if (buffer.length < next + length + 2) return undefined;
      if (buffer[next + length] !== 0x0d || buffer[next + length + 1] !== 0x0a) throw new ProtocolError('a bulk string without its CRLF');
      return { reply: buffer.toString('utf8', next, next + length), end: next + length + 2 };
    }
    default:
      throw new ProtocolError(`type byte 0x${(type ?? 0).toString(16).padStart(2, '0')}`);
  }
}

/**
 * A Redis connection that reconnects by itself (backing off up to 1 s), has
 * no offline queue (commands fail at once while it is down, except that the
 * first ones wait up to {@link CONNECT_TIMEOUT_MS} for the first connection),
 * holds at most {@link MAX_PENDING} waiting commands (more fail at once),
 * drops a connection that misbehaves (invalid or oversized reply, unsolicited
 * bytes, a command unanswered {@link REPLY_DEADLINE_MS} after it was sent),
 * and whose `close()` always resolves within {@link CLOSE_TIMEOUT_MS} plus a
 * moment.
 */
export class RespConnection {
  readonly #endpoint: Endpoint;
  readonly #maxPending: number;
  readonly #replyDeadlineMs: number;
  #socket: Socket | undefined;
  #ready = false;
  #closed = false;
  #everConnected = false;
  #retries = 0;
  #reconnectTimer: ReturnType<typeof setTimeout> | undefined;
  #deadlineTimer: ReturnType<typeof setTimeout> | undefined;
  /** Replies owed by the server, oldest first (the handshake's included); at most #maxPending plus the handshake's and QUIT. */
  #pending: Pending[] = [];
  #buffer: Buffer = Buffer.alloc(0);
  /** Why the last handshake failed (TLS, or the server refusing AUTH or SELECT), for the error of a command that could not be sent. */
  #refusal: string | undefined;
  /** Waiters for the first connection. */
  #firstConnection: (() => void)[] = [];

  /**
   * @param url - `redis://[user:password@]host[:port][/db]` or `rediss://…` (TLS)
   * @param limits - smaller limits than the exported constants (tests)
   * @throws AmpCorsError `invalid-option` for a URL that is not one.
   */
  constructor(url: string, limits: RespConnectionLimits = {}) {
    this.#endpoint = endpointOf(url);
    this.#maxPending = limits.maxPending ?? MAX_PENDING;
    this.#replyDeadlineMs = limits.replyDeadlineMs ?? REPLY_DEADLINE_MS;
    this.#open();
  }

  /** True while a connection is open and its handshake done. */
  get isReady(): boolean {
    return this.#ready;
  }

  /** Commands sent and not yet answered (or failed), including those whose caller gave up. */
  get pendingCount(): number {
    return this.#pending.length;
  }

  /**
   * Sends one command; resolves to its reply, rejects on an error reply or a
   * lost connection, and rejects at once (`Redis is saturated (…)`) while
   * {@link MAX_PENDING} commands already wait for a reply (or for the first
   * connection).
   */
  async send(args: readonly string[]): Promise<RespReply> {
    if (this.#closed) throw new Error('Redis connection closed');
    if (!this.#ready && !this.#everConnected) {
      if (this.#firstConnection.length >= this.#maxPending) throw this.#saturated('wait for the first connection');
      await this.#waitForFirstConnection();
    }
    if (!this.#ready || this.#socket === undefined) {
      const refused = this.#refusal === undefined ? '' : ` (${this.#refusal})`;
      throw new Error(
        this.#everConnected ? `Redis connection lost (reconnecting)${refused}` : `Redis did not accept a connection within ${CONNECT_TIMEOUT_MS} ms${refused}`,
      );
    }
    if (this.#pending.length >= this.#maxPending) throw this.#saturated('wait for a reply');
    return this.#write(this.#socket, args);
  }

  #saturated(what: string): Error {
    return new Error(`Redis is saturated (${this.#maxPending} commands ${what})`);
  }

  /**
   * Closes the connection: QUIT, then the socket is destroyed when the server
   * answers, closes, or has not done either within {@link CLOSE_TIMEOUT_MS}.
   * Commands still waiting fail. Never rejects; later calls do nothing.
   */
  async close(): Promise<void> {
    if (this.#closed) return;
    this.#closed = true;
    clearTimeout(this.#reconnectTimer);
    for (const waiter of this.#firstConnection.splice(0)) waiter();
    const socket = this.#socket;
    if (socket !== undefined && this.#ready) {
      let timer: ReturnType<typeof setTimeout> | undefined;
      const quit = this.#write(socket, ['QUIT']).catch(() => undefined);
      const closed = new Promise<void>((resolve) => socket.once('close', () => resolve()));
      const timeout = new Promise<void>((resolve) => {
        timer = setTimeout(resolve, CLOSE_TIMEOUT_MS);
      });
      await Promise.race([quit, closed, timeout]);
      clearTimeout(timer);
    }
    this.#drop(new Error('Redis connection closed'));
  }

  #waitForFirstConnection(): Promise<void> {
    return new Promise((resolve) => {
      const timer = setTimeout(done, CONNECT_TIMEOUT_MS);
      function done(): void {
        clearTimeout(timer);
        resolve();
      }
      this.#firstConnection.push(done);
    });
  }

  #write(socket: Socket, args: readonly string[]): Promise<RespReply> {
    return new Promise<RespReply>((resolve, reject) => {
      this.#pending.push({ resolve, reject, sentAt: performance.now() });
      if (this.#deadlineTimer === undefined) this.#deadlineTimer = setTimeout(this.#onDeadline, this.#replyDeadlineMs);
      socket.write(encode(args));
    });
  }

  /**
   * The reply deadline: one timer while commands wait, due when the oldest
   * waiting command has waited #replyDeadlineMs. Replies do not re-arm it
   * (a pipelined burst costs one timer, not one per reply): when it fires,
   * the connection is dropped if the oldest command is that old, or the timer
   * is set again for whatever the (newer) oldest command has left.
   */
  readonly #onDeadline = (): void => {
    this.#deadlineTimer = undefined;
    const oldest = this.#pending[0];
    if (oldest === undefined) return;
    const waited = performance.now() - oldest.sentAt;
    if (waited >= this.#replyDeadlineMs) this.#drop(new Error(`Redis did not answer within ${this.#replyDeadlineMs} ms`));
    else this.#deadlineTimer = setTimeout(this.#onDeadline, this.#replyDeadlineMs - waited);
  };

  #open(): void {
    const { host, port, tls } = this.#endpoint;
    const socket = tls ? tlsConnect({ host, port, ...(isIP(host) === 0 ? { servername: host } : {}) }) : netConnect({ host, port });
    this.#socket = socket;
    this.#buffer = Buffer.alloc(0);
    socket.setNoDelay(true);
    socket.setKeepAlive(true, 5000);
    const connectTimer = setTimeout(() => socket.destroy(new Error(`Redis did not accept a connection within ${CONNECT_TIMEOUT_MS} ms`)), CONNECT_TIMEOUT_MS);
    socket.once(tls ? 'secureConnect' : 'connect', () => {
      clearTimeout(connectTimer);
      void this.#handshake(socket);
    });
    socket.on('data', (chunk: Buffer) => this.#onData(socket, chunk));
    // The 'close' that follows an error reports it to the commands; a TLS
    // handshake that fails (an untrusted certificate, a wrong name) is also
    // named in the error of the commands that could not be sent.
    let tcpConnected = false;
    let secured = false;
    socket.once('connect', () => (tcpConnected = true));
    socket.once('secureConnect', () => (secured = true));
    socket.on('error', (error: Error) => {
      if (tls && tcpConnected && !secured) this.#refusal = `TLS: ${error.message}`;
    });
    socket.once('close', () => {
      clearTimeout(connectTimer);
      if (this.#socket === socket) this.#drop(new Error('Redis closed the connection'));
    });
  }

  async #handshake(socket: Socket): Promise<void> {
    try {
      await Promise.all(this.#endpoint.handshake.map((args) => this.#write(socket, args)));
    } catch (error) {
      this.#refusal = (error as Error).message;
      if (this.#socket === socket) this.#drop(error as Error);
      return;
    }
    this.#refusal = undefined;
    if (this.#socket !== socket || this.#closed) return;
    this.#ready = true;
    this.#everConnected = true;
    this.#retries = 0;
    for (const waiter of this.#firstConnection.splice(0)) waiter();
  }

  #onData(socket: Socket, chunk: Buffer): void {
    if (this.#socket !== socket) return;
    this.#buffer = this.#buffer.length === 0 ? chunk : Buffer.concat([this.#buffer, chunk]);
    let start = 0;
    try {
      for (;;) {
        if (start === this.#buffer.length) break;
        const parsed = parseReply(this.#buffer, start);
        if (parsed === undefined) break;
        const waiting = this.#pending.shift();
        if (waiting === undefined) throw new ProtocolError('a reply to no command');
        start = parsed.end;
        if (parsed.reply instanceof Error) waiting.reject(parsed.reply);
        else waiting.resolve(parsed.reply);
      }
    } catch (error) {
      this.#drop(error as Error);
      return;
    }
    if (this.#pending.length === 0 && this.#deadlineTimer !== undefined) {
      clearTimeout(this.#deadlineTimer);
      this.#deadlineTimer = undefined;
    }
    this.#buffer = this.#buffer.subarray(start);
  }

  /** Ends the current socket, fails every waiting command, and reconnects unless closed. */
  #drop(error: Error): void {
    const socket = this.#socket;
    this.#socket = undefined;
    this.#ready = false;
    this.#buffer = Buffer.alloc(0);
    clearTimeout(this.#deadlineTimer);
    this.#deadlineTimer = undefined;
    socket?.destroy();
    for (const waiting of this.#pending.splice(0)) waiting.reject(error);
    if (this.#closed) return;
    const delay = Math.min(50 * 2 ** this.#retries, 1000);
    this.#retries++;
    clearTimeout(this.#reconnectTimer);
    this.#reconnectTimer = setTimeout(() => {
      if (!this.#closed) this.#open();
    }, delay);
  }
}
