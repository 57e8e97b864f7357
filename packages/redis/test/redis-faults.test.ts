// The registry against a hostile or broken "Redis": a fake TCP server on
// 127.0.0.1 (node:net) that accepts and stays silent, answers garbage, sends
// replies that never end, or sends replies of many megabytes. Whatever it
// does, questions fail (the verifier then denies), nothing hangs, close()
// returns, and the client holds a bounded number of bytes of any reply.
import { createServer, type Server, type Socket } from 'node:net';
import { AmpCorsError, cacheOrigin, createAsyncVerifier } from '@ampcors/core';
import { afterEach, describe, expect, it } from 'vitest';
import { CLOSE_TIMEOUT_MS, createRedisRegistry, MAX_PENDING, MAX_REPLY_BYTES, type RedisRegistry } from '../src/index.js';
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

/**
 * A server that counts the PING commands of each connection and answers them
 * (`+PONG`) only when the test says so: `answer(n)` sends the n oldest owed
 * replies of the latest connection.
 */
async function countingRedis() {
  const seen: { received: number; answered: number; socket: Socket }[] = [];
  const server = await fakeRedis();
  servers[servers.length - 1]?.on('connection', (socket: Socket) => {
    const state = { received: 0, answered: 0, socket };
    seen.push(state);
    let tail = '';
    socket.on('data', (chunk: Buffer) => {
      const text = tail + chunk.toString('latin1');
      state.received += text.split('\r\nPING\r\n').length - 1;
      tail = text.slice(-7);
    });
  });
  return {
    ...server,
    seen,
    answer(n: number): void {
      const state = seen[seen.length - 1];
      if (state === undefined) return;
      const count = Math.min(n, state.received - state.answered);
      state.answered += count;
      state.socket.write('+PONG\r\n'.repeat(count));
    },
  };
}

/** Waits until `condition()` holds, checking every 5 ms: the test's own hang detector gives up after 5 s. */
async function until(condition: () => boolean, what: string): Promise<void> {
  const deadline = Date.now() + 5000;
  while (!condition()) {
    if (Date.now() > deadline) throw new Error(`${what} did not happen within 5 s`);
    await sleep(5);
  }
}

describe("a bounded number of waiting commands (attacker's review, session 15: a server that answers too slowly)", () => {
  it('at most maxPending commands wait for a reply: the next fails at once as saturated and is never sent; a reply frees a place', async () => {
    const server = await countingRedis();
    const connection = new RespConnection(server.url, { maxPending: 8, replyDeadlineMs: 60_000 });
    try {
      await until(() => connection.isReady, 'the connection');
      const waiting = Array.from({ length: 8 }, () => connection.send(['PING']));
      expect(connection.pendingCount).toBe(8);
      await expect(connection.send(['PING'])).rejects.toThrow('Redis is saturated (8 commands wait for a reply)');
      expect(connection.pendingCount).toBe(8);
      await until(() => server.seen[0]?.received === 8, 'the server receiving the 8 commands');
      server.answer(1);
      await expect(waiting[0]).resolves.toBe('PONG');
      expect(connection.pendingCount).toBe(7);
      const ninth = connection.send(['PING']);
      await expect(connection.send(['PING'])).rejects.toThrow(/saturated/);
      await until(() => server.seen[0]?.received === 9, 'the server receiving the ninth command');
      server.answer(8);
      await expect(Promise.all([...waiting.slice(1), ninth])).resolves.toEqual(Array(8).fill('PONG'));
      expect(connection.pendingCount).toBe(0);
      // Saturation is not a fault of the connection: the same socket goes on.
      expect(server.seen).toHaveLength(1);
    } finally {
      await connection.close();
    }
  });

  it(`through the registry: with ${MAX_PENDING} questions waiting, the next is refused at once and the verifier denies it as source-unavailable`, async () => {
    // Answers SCARD (so the connection is known to be up), never a question.
    let questionsReceived = 0;
    const server = await fakeRedis((socket, chunk) => {
      const text = chunk.toString('latin1');
      questionsReceived += text.split('\r\nHGET\r\n').length - 1;
      if (text.includes('SCARD')) socket.write(':0\r\n');
    });
    const registry = createRedisRegistry({ url: server.url, timeoutMs: 60_000 });
    registries.push(registry);
    const verifier = createAsyncVerifier({ source: registry });
    expect(await registry.size()).toBe(0);
    const questions = Array.from({ length: MAX_PENDING + 50 }, (_, i) =>
      registry.publisherOfPrefix(`p${i}-example-com`).then(
        () => 'answered',
        (error: Error) => error.message,
      ),
    );
    const verdict = await verifier.verify('https://one-more-example-com.cdn.ampproject.org');
    expect(verdict).toMatchObject({ allowed: false, reason: 'source-unavailable' });
    // The 50 over the cap failed without waiting for timeoutMs (a minute) or the reply deadline (5 s).
    const settled = await Promise.race([Promise.all(questions.slice(MAX_PENDING)), sleep(2000).then(() => 'still waiting')]);
    expect(settled).toEqual(Array(50).fill(`Redis is saturated (${MAX_PENDING} commands wait for a reply)`));
    await until(() => questionsReceived === MAX_PENDING, 'the server receiving the questions under the cap');
    await sleep(50);
    expect(questionsReceived).toBe(MAX_PENDING);
  });

  it('the first commands wait for the first connection, at most maxPending of them', async () => {
    // 10.255.255.1 is unroutable: the TCP connect neither succeeds nor fails within the test.
    const connection = new RespConnection('redis://10.255.255.1:6379', { maxPending: 4 });
    const waiting = Array.from({ length: 4 }, () => connection.send(['PING']).catch((error: Error) => error.message));
    await expect(connection.send(['PING'])).rejects.toThrow('Redis is saturated (4 commands wait for the first connection)');
    await connection.close();
    expect(await Promise.all(waiting)).toEqual(Array(4).fill('Redis did not accept a connection within 1000 ms'));
  });

  it('a server that stops reading: the client holds at most maxPending commands whatever its socket buffers, then drops the connection at the reply deadline', async () => {
    const server = await fakeRedis();
    servers[servers.length - 1]?.on('connection', (socket: Socket) => socket.pause());
    const connection = new RespConnection(server.url, { maxPending: 32, replyDeadlineMs: 1000 });
    try {
      await until(() => connection.isReady, 'the connection');
      // 32 commands of 256 kB: 8 MB, more than the loopback buffers take, so most of it waits in the client's socket.
      const big = 'x'.repeat(256 * 1024);
      const waiting = Array.from({ length: 32 }, () => connection.send(['SET', 'k', big]).catch((error: Error) => error.message));
      await expect(connection.send(['PING'])).rejects.toThrow('Redis is saturated (32 commands wait for a reply)');
      expect(await within(Promise.all(waiting), 5000, 'the deadline')).toEqual(Array(32).fill('Redis did not answer within 1000 ms'));
      expect(connection.pendingCount).toBe(0);
      await until(() => server.connections.length === 2, 'the reconnection');
    } finally {
      await connection.close();
      // A paused socket never reads the client's FIN: end the server's side too.
      await server.stop();
    }
  });

  it('a large write in progress (its socket over the high-water mark) does not refuse the questions behind it', async () => {
    // A command's name may straddle two chunks: the last 7 characters are kept, and a name is counted once it ends in the new chunk.
    let carried = '';
    const ending = (text: string, name: string, after: number): number => {
      let count = 0;
      for (let at = text.indexOf(name); at >= 0; at = text.indexOf(name, at + 1)) if (at + name.length > after) count++;
      return count;
    };
    const server = await fakeRedis((socket, chunk) => {
      const text = carried + chunk.toString('latin1');
      const commands = ending(text, '\r\nPING\r\n', carried.length) + ending(text, '\r\nSET\r\n', carried.length);
      carried = text.slice(-7);
      if (commands > 0) socket.write('+OK\r\n'.repeat(commands));
    });
    const connection = new RespConnection(server.url);
    try {
      await until(() => connection.isReady, 'the connection');
      // A bulk load's batch is hundreds of kB: socket.write returns false, yet questions sent meanwhile are answered.
      const write = connection.send(['SET', 'k', 'y'.repeat(4 * 1024 * 1024)]);
      const questions = Array.from({ length: 100 }, () => connection.send(['PING']));
      await expect(write).resolves.toBe('OK');
      await expect(Promise.all(questions)).resolves.toEqual(Array(100).fill('OK'));
    } finally {
      await connection.close();
    }
  });
});

describe("the reply deadline is timed from each command's send time (attacker's review, session 15)", () => {
  it('a server answering one reply every 50 ms, with a 500 ms deadline and 40 commands waiting, is dropped once the oldest unanswered has waited 500 ms', async () => {
    const server = await countingRedis();
    const connection = new RespConnection(server.url, { maxPending: 1024, replyDeadlineMs: 500 });
    const drip = setInterval(() => server.answer(1), 50);
    try {
      await until(() => connection.isReady, 'the connection');
      const outcomes = Array.from({ length: 40 }, () => connection.send(['PING']).catch((error: Error) => error.message));
      const results = await within(Promise.all(outcomes), 5000, 'the 40 commands');
      // Replies kept coming every 50 ms (a deadline re-armed per reply would never fire), yet the connection was dropped:
      // the first few were answered, every later one failed at the deadline, in order.
      const answered = results.filter((r) => r === 'PONG').length;
      expect(answered).toBeGreaterThan(0);
      expect(answered).toBeLessThan(40);
      expect(results).toEqual([...Array(answered).fill('PONG'), ...Array(40 - answered).fill('Redis did not answer within 500 ms')]);
      await until(() => server.seen.length === 2, 'the reconnection');
    } finally {
      clearInterval(drip);
      await connection.close();
    }
  });

  it('commands waiting back to back for longer than the deadline in all, each answered within it, keep the connection', async () => {
    const server = await countingRedis();
    const connection = new RespConnection(server.url, { maxPending: 1024, replyDeadlineMs: 1000 });
    try {
      await until(() => connection.isReady, 'the connection');
      // For 3 s (3 deadlines) a new command is sent every 20 ms and each is answered about 100 ms after it was
      // sent, so some command is always waiting but none for 1 s; then one at a time, answered at once.
      const outcomes: Promise<unknown>[] = [];
      const started = Date.now();
      while (Date.now() - started < 3000) {
        outcomes.push(connection.send(['PING']));
        const sent = outcomes.length;
        setTimeout(() => server.answer(sent - (server.seen[0]?.answered ?? 0)), 100);
        await sleep(20);
      }
      await expect(within(Promise.all(outcomes), 5000, 'the pipelined commands')).resolves.toEqual(Array(outcomes.length).fill('PONG'));
      for (let i = 0; i < 10; i++) {
        const reply = connection.send(['PING']);
        await until(() => server.seen[0]?.received === outcomes.length + i + 1, 'the command');
        server.answer(1);
        await expect(reply).resolves.toBe('PONG');
        await sleep(40);
      }
      expect(server.seen).toHaveLength(1);
    } finally {
      await connection.close();
    }
  });
});

describe("a url whose user name or password holds a malformed percent-escape (attacker's review, session 17)", () => {
  for (const url of ['redis://:%zz@127.0.0.1:1', 'redis://user%@127.0.0.1:1', 'rediss://u:%E0%A4%A@127.0.0.1:1', 'redis://:%ff@127.0.0.1:1/0']) {
    it(`${url}: an AmpCorsError naming the part, without the credentials`, () => {
      let caught: unknown;
      try {
        createRedisRegistry({ url });
      } catch (error) {
        caught = error;
      }
      expect(caught).toBeInstanceOf(AmpCorsError);
      expect((caught as AmpCorsError).message).toMatch(/^the (user name|password) of the Redis url holds a malformed percent-escape$/);
    });
  }
});
