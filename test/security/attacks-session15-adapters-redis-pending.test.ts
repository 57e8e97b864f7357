// Attacker's review, session 15 (helper-50): a "Redis" that answers, but slowly — one reply a second, oldest
// first — while clients send cache origins the local cache has not seen. Each question gives up after
// `timeoutMs` (the verifier denies), but its command stays queued on the connection until the server answers
// it. Before the fix every reply re-armed the 5 s reply deadline, so the dripping connection was never dropped,
// and nothing bounded the queue: 120,000 questions left 119,993 commands owed on one live connection and
// +236 MB of heap after GC, growing linearly. Now at most MAX_PENDING commands wait (more fail at once as
// "saturated", a `source-unavailable` denial) and a command unanswered 5 s after it was sent drops the
// connection. An honest Redis that falls behind is the same case.
import { createServer, type Server, type Socket } from 'node:net';
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { createAsyncVerifier, type Verdict } from '@ampcors/core';
import { createRedisRegistry, MAX_PENDING, REPLY_DEADLINE_MS, type RedisRegistry } from '@ampcors/redis';
import { afterEach, describe, expect, it } from 'vitest';

const servers: Server[] = [];
const registries: RedisRegistry[] = [];
afterEach(async () => {
  await Promise.all(registries.splice(0).map((r) => r.close()));
  for (const server of servers.splice(0)) await new Promise<void>((resolve) => server.close(() => resolve()));
});
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** A full collection (V8's gc exposed to this process for the measurement only). */
function retainedHeap(): number {
  setFlagsFromString('--expose-gc');
  const gc = runInNewContext('gc') as () => void;
  gc();
  gc();
  return process.memoryUsage().heapUsed;
}

/** One connection as the server sees it: commands received, replies sent, the most it ever owed at once. */
interface Seen {
  received: number;
  answered: number;
  mostOwed: number;
}

/** A "Redis" that answers each connection's commands with a nil, one every `everyMs`, oldest first. */
async function drippingRedis(everyMs: number) {
  const connections: Seen[] = [];
  const server = createServer((socket: Socket) => {
    const seen: Seen = { received: 0, answered: 0, mostOwed: 0 };
    connections.push(seen);
    socket.on('error', () => {});
    let tail = '';
    socket.on('data', (chunk) => {
      // Count command headers (`*3\r\n$4\r\nHGET`), including one split across two reads.
      const text = tail + chunk.toString('latin1');
      seen.received += text.split('*3\r\n$4\r\nHGET').length - 1;
      tail = text.slice(-15);
      seen.mostOwed = Math.max(seen.mostOwed, seen.received - seen.answered);
    });
    const timer = setInterval(() => {
      if (seen.answered < seen.received && !socket.destroyed) {
        socket.write('$-1\r\n');
        seen.answered++;
      }
    }, everyMs);
    socket.on('close', () => clearInterval(timer));
  });
  servers.push(server);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', () => resolve()));
  const address = server.address();
  return { url: `redis://127.0.0.1:${typeof address === 'object' && address ? address.port : 0}`, connections };
}

describe('attack: a Redis that drips one reply a second, under a flood of unseen cache origins', () => {
  it('120,000 questions: every one denied, at most MAX_PENDING commands owed on any connection, the dripping connection dropped, heap bounded', async () => {
    const redis = await drippingRedis(1000);
    const registry = createRedisRegistry({ url: redis.url, timeoutMs: 100 });
    registries.push(registry);
    const verifier = createAsyncVerifier({ source: registry });
    const before = retainedHeap();
    const reasons = new Map<string, number>();
    let allowed = 0;
    const started = Date.now();
    // 6 rounds of 20,000 distinct cache origins, about 1 s apart: the drip alone would keep the connection alive.
    for (let round = 0; round < 6; round++) {
      const asked: Promise<void>[] = [];
      for (let i = 0; i < 20_000; i++) {
        const origin = `https://r${round}-p${i}-example-com.cdn.ampproject.org`;
        asked.push(
          Promise.resolve(verifier.verify(origin)).then((verdict: Verdict) => {
            if (verdict.allowed) allowed++;
            else reasons.set(verdict.reason, (reasons.get(verdict.reason) ?? 0) + 1);
          }),
        );
      }
      await Promise.all(asked);
      await sleep(900);
    }
    const elapsed = Date.now() - started;
    const grown = retainedHeap() - before;
    const mostOwed = Math.max(...redis.connections.map((c) => c.mostOwed));
    console.log(
      `[redis pending] ${redis.connections.length} connections over ${elapsed} ms, most owed on one ${mostOwed}, heap +${(grown / 1e6).toFixed(1)} MB after GC`,
    );
    // Safe before and after the fix: nothing is allowed, every question is a source-unavailable denial.
    expect(allowed).toBe(0);
    expect([...reasons]).toEqual([['source-unavailable', 120_000]]);
    // The fix: the connection owes at most MAX_PENDING replies whatever the flood (was 119,993) ...
    expect(mostOwed).toBeLessThanOrEqual(MAX_PENDING);
    // ... a connection whose oldest command waited REPLY_DEADLINE_MS is dropped, though the server never stops replying ...
    expect(elapsed).toBeGreaterThan(REPLY_DEADLINE_MS);
    expect(redis.connections.length).toBeGreaterThanOrEqual(2);
    // ... and what the client retains stays small (was +236 MB, about 2 KB a question, growing without limit).
    expect(grown).toBeLessThan(16e6);
  }, 60_000);
});
