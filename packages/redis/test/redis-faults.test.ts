// The registry against a hostile or broken "Redis": a fake TCP server on
// 127.0.0.1 (node:net) that accepts and stays silent, answers garbage, sends
// replies that never end, or sends replies of many megabytes. Whatever it
// does, questions fail (the verifier then denies), nothing hangs, close()
// returns, and the client holds a bounded number of bytes of any reply.
import { createServer, type Server, type Socket } from 'node:net';
import { cacheOrigin, createAsyncVerifier } from '@ampcors/core';
import { afterEach, describe, expect, it } from 'vitest';
import { CLOSE_TIMEOUT_MS, createRedisRegistry, MAX_REPLY_BYTES, type RedisRegistry } from '../src/index.js';
import { RespConnection } from '../src/resp-connection.js';

/** A fake server: `onData` decides what each connection hears back. */
interface FakeRedis {
  readonly url: string;
  /** Connections accepted so far. */
  readonly connections: Socket[];
  /** Resolves when every accepted connection has been closed by the client. */
  allClosed(): Promise<void>;
  stop(): Promise<void>;
}

const servers: Server[] = [];
const registries: RedisRegistry[] = [];

afterEach(async () => {
  await Promise.all(registries.splice(0).map((r) => r.close()));
  await Promise.all(
    servers.splice(0).map(
      (server) =>
        new Promise<void>((resolve) => {
          server.close(() => resolve());
        }),
    ),
  );
});

async function fakeRedis(onData: (socket: Socket, chunk: Buffer) => void = () => {}): Promise<FakeRedis> {
  const connections: Socket[] = [];
  const closed: Promise<void>[] = [];
  const server = createServer((socket) => {
    connections.push(socket);
    closed.push(new Promise((resolve) => socket.once('close', () => resolve())));
    socket.on('error', () => {});
    socket.on('data', (chunk) => onData(socket, chunk));
  });
  servers.push(server);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', () => resolve()));
  const address = server.address();
  const port = typeof address === 'object' && address ? address.port : 0;
  return {
    url: `redis://127.0.0.1:${port}`,
    connections,
    allClosed: () => Promise.all(closed).then(() => undefined),
    stop: async () => {
      for (const socket of connections) socket.destroy();
    },
  };
}

function registryAt(url: string): RedisRegistry {
  const registry = createRedisRegistry({ url, timeoutMs: 200 });
  registries.push(registry);
  return registry;
}

/** Rejects when `promise` has not settled within `ms`: the test's hang detector, not a performance bound. */
function within<T>(promise: Promise<T>, ms: number, what: string): Promise<T> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  return Promise.race([
    promise.finally(() => clearTimeout(timer)),
    new Promise<never>((_, reject) => {
      timer = setTimeout(() => reject(new Error(`${what} did not settle within ${ms} ms`)), ms);
    }),
  ]);
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** What each broken server does with every command it receives. */
const BROKEN: Record<string, (socket: Socket) => void> = {
  'accepts and stays silent': () => {},
  'answers garbage': (socket) => socket.write('HTTP/1.1 400 Bad Request\r\n\r\n'),
  'sends a reply that never ends': (socket) => socket.write('$100\r\nexample'),
  'sends a simple string without its CRLF': (socket) => socket.write('+OK but no line end'),
};

describe('close() returns, whatever the server does (issue 14 item 9)', () => {
  it.each(Object.entries(BROKEN))('a server that %s: questions fail, the verifier denies, close() returns and the socket is closed', async (_, behave) => {
    const server = await fakeRedis((socket) => behave(socket));
    const registry = registryAt(server.url);
    const verifier = createAsyncVerifier({ source: registry });
    await expect(within(registry.hasPublisher('shop.example'), 3000, 'hasPublisher')).rejects.toThrow(/Redis/);
    await expect(within(Promise.resolve(verifier.verify(cacheOrigin('shop.example'))), 3000, 'verify')).resolves.toMatchObject({
      allowed: false,
      reason: 'source-unavailable',
    });
    await within(registry.close(), CLOSE_TIMEOUT_MS + 2000, 'close()');
    await within(server.allClosed(), 2000, 'the server seeing every connection closed');
    // Closed means closed: no reconnection afterwards (the backoff tops out at 1 s).
    const accepted = server.connections.length;
    await sleep(1200);
    expect(server.connections.length).toBe(accepted);
    await expect(registry.hasPublisher('shop.example')).rejects.toThrow(/closed/);
  });

  it('a write (EVAL) to a silent server fails once no reply came for the reply deadline, instead of hanging', async () => {
    const server = await fakeRedis();
    const registry = registryAt(server.url);
    await expect(within(registry.add(['shop.example']), 8000, 'add')).rejects.toThrow(/^Redis did not answer within 5000 ms$/);
  }, 15_000);

  it('close() during the first connection attempt returns at once', async () => {
    // 10.255.255.1 is unroutable: the TCP connect neither succeeds nor fails.
    const registry = createRedisRegistry({ url: 'redis://10.255.255.1:6379' });
    await within(registry.close(), 1000, 'close()');
    await within(registry.close(), 1000, 'a second close()');
  });

  it('a server that answers QUIT and closes is closed as soon as it has', async () => {
    const server = await fakeRedis((socket, chunk) => {
      if (chunk.toString().includes('QUIT')) socket.end('+OK\r\n');
      else socket.write(':1\r\n');
    });
    const registry = registryAt(server.url);
    expect(await registry.hasPublisher('shop.example')).toBe(true);
    await within(registry.close(), CLOSE_TIMEOUT_MS + 2000, 'close()');
    await within(server.allClosed(), 2000, 'the server seeing the connection closed');
  });
});

describe('the handshake', () => {
  it('sends AUTH (user and password from the url, decoded) and SELECT first; a refused AUTH is named in the error', async () => {
    const received: string[] = [];
    let refuse = false;
    const server = await fakeRedis((socket, chunk) => {
      const text = chunk.toString();
      received.push(text);
      socket.write(
        text.includes('AUTH') && refuse
          ? '-WRONGPASS invalid username-password pair\r\n'
          : text.includes('SCARD')
            ? ':7\r\n'
            : '+OK\r\n'.repeat(text.split('*').length - 1),
      );
    });
    const base = server.url.replace('redis://', '');
    const registry = registryAt(`redis://ops:p%40ss@${base}/2`);
    expect(await registry.size()).toBe(7);
    expect(received.join('')).toMatch(/^\*3\r\n\$4\r\nAUTH\r\n\$3\r\nops\r\n\$4\r\np@ss\r\n\*2\r\n\$6\r\nSELECT\r\n\$1\r\n2\r\n/);
    refuse = true;
    const refused = createRedisRegistry({ url: `redis://:bad@${base}` });
    registries.push(refused);
    await expect(refused.add(['shop.example'])).rejects.toThrow(
      'Redis did not accept a connection within 1000 ms (Redis error: WRONGPASS invalid username-password pair)',
    );
  });
});

describe(`every reply is bounded: at most MAX_REPLY_BYTES (${MAX_REPLY_BYTES}) bytes`, () => {
  /** A server that answers each command with `reply(command)`. */
  async function answering(reply: (command: string) => string | Buffer): Promise<FakeRedis> {
    return fakeRedis((socket, chunk) => socket.write(reply(chunk.toString('latin1'))));
  }

  it('a bulk string of exactly MAX_REPLY_BYTES is read; one byte more is refused and the connection dropped', async () => {
    const exact = 'a'.repeat(MAX_REPLY_BYTES);
    let body = exact;
    const server = await answering(() => `$${Buffer.byteLength(body)}\r\n${body}\r\n`);
    const connection = new RespConnection(server.url);
    try {
      await expect(connection.send(['GET', 'x'])).resolves.toBe(exact);
      body = `${exact}a`;
      await expect(connection.send(['GET', 'x'])).rejects.toThrow(
        `Redis sent an invalid reply (a string of ${MAX_REPLY_BYTES + 1} bytes, more than ${MAX_REPLY_BYTES})`,
      );
      await within(server.allClosed(), 2000, 'the dropped connection closing');
    } finally {
      await connection.close();
    }
  });

  it('a line (simple string, error, length) longer than the bound is refused before it ends', async () => {
    for (const type of ['+', '-', ':', '$']) {
      const server = await answering(() => `${type}${'7'.repeat(MAX_REPLY_BYTES + 10)}`);
      const connection = new RespConnection(server.url);
      try {
        await expect(within(connection.send(['PING']), 3000, `${type} line`)).rejects.toThrow(/invalid reply/);
      } finally {
        await connection.close();
      }
    }
  });

  it('a hostile 100 MB reply to a question is refused after a few kB: the server cannot push it through', async () => {
    const MB = 1024 * 1024;
    const total = 100 * MB;
    let written = 0;
    let closedAt = -1;
    const chunk = Buffer.alloc(64 * 1024, 0x61);
    const server = await fakeRedis((socket) => {
      socket.once('close', () => {
        closedAt = written;
      });
      socket.write(`$${total}\r\n`);
      const pump = (): void => {
        while (written < total && !socket.destroyed) {
          written += chunk.length;
          if (!socket.write(chunk)) {
            socket.once('drain', pump);
            return;
          }
        }
      };
      pump();
    });
    const registry = registryAt(server.url);
    await expect(within(registry.publisherOfPrefix('shop-example'), 3000, 'publisherOfPrefix')).rejects.toThrow(/invalid reply \(a string of 104857600 bytes/);
    await within(server.allClosed(), 3000, 'the connection closing');
    // What the server managed to hand to the kernel before the client hung up
    // is the loopback socket buffers, nowhere near the 100 MB it tried to send.
    expect(closedAt).toBeGreaterThanOrEqual(0);
    expect(closedAt).toBeLessThan(total / 2);
  });

  it('replies nobody asked for drop the connection', async () => {
    const server = await answering(() => ':1\r\n'.repeat(10_000));
    const connection = new RespConnection(server.url);
    try {
      await expect(connection.send(['SCARD', 'k'])).resolves.toBe(1);
      await within(server.allClosed(), 2000, 'the dropped connection closing');
    } finally {
      await connection.close();
    }
  });

  it('an array, a malformed integer or bulk length, a bulk string without its CRLF drop the connection', async () => {
    for (const reply of ['*2\r\n:1\r\n:2\r\n', ':12abc\r\n', '$-5\r\n', '$3\r\nabcXY']) {
      const server = await answering(() => reply);
      const connection = new RespConnection(server.url);
      try {
        await expect(within(connection.send(['SCARD', 'k']), 3000, JSON.stringify(reply.slice(0, 20)))).rejects.toThrow(/invalid reply/);
        await within(server.allClosed(), 2000, 'the dropped connection closing');
      } finally {
        await connection.close();
      }
    }
  });

  it('an answer that is not a canonical publisher domain is refused, so the verifier denies', async () => {
    for (const hostile of ['https://evil.example', 'Evil.Example', 'evil\x1b]0;PWNED\x07.example', `${'a'.repeat(63)}.`.repeat(4) + 'com', '']) {
      const server = await answering((command) => (command.includes('HGET') ? `$${Buffer.byteLength(hostile)}\r\n${hostile}\r\n` : ':0\r\n'));
      const registry = registryAt(server.url);
      await expect(registry.publisherOfPrefix('evil-example'), hostile).rejects.toThrow(/invalid reply/);
      const verdict = await createAsyncVerifier({ source: registry }).verify('https://evil-example.cdn.ampproject.org');
      expect(verdict, hostile).toMatchObject({ allowed: false });
      await registry.close();
    }
  });

  it('a count that is not a non-negative integer is refused', async () => {
    for (const reply of [':-1\r\n', '+many\r\n', '$-1\r\n']) {
      const server = await answering(() => reply);
      const registry = registryAt(server.url);
      await expect(registry.size(), reply).rejects.toThrow(/invalid reply/);
      await registry.close();
    }
  });
});
