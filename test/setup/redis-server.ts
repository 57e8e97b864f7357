/**
 * A throwaway redis-server for tests (Debian's package, installed by the
 * vitest global setup): on a free loopback port, no persistence, stopped
 * with SIGKILL (a crash, as far as clients can tell) and restartable on the
 * same port.
 */
import { type ChildProcess, execFileSync, spawn } from 'node:child_process';
import { createServer } from 'node:net';
import { requireTool } from './debian-packages.js';

/** Where Debian's redis-server package puts the server. */
export const REDIS_SERVER = '/usr/bin/redis-server';

/** A free TCP port on 127.0.0.1 (nothing listens on it once this resolves). */
export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const probe = createServer();
    probe.once('error', reject);
    probe.listen(0, '127.0.0.1', () => {
      const address = probe.address();
      probe.close(() => resolve(typeof address === 'object' && address ? address.port : 0));
    });
  });
}

/** A redis-server the test controls. */
export interface TestRedis {
  /** Its port on 127.0.0.1. */
  readonly port: number;
  /** `redis://127.0.0.1:<port>`. */
  readonly url: string;
  /** Starts it (again), empty, and resolves once it answers PING. */
  start(): Promise<void>;
  /** Kills it and resolves once it has exited; a no-op when it is not running. */
  stop(): Promise<void>;
}

/** Picks a free port and starts redis-server on it. */
export async function startTestRedis(): Promise<TestRedis> {
  requireTool(REDIS_SERVER);
  const port = await freePort();
  let server: ChildProcess | undefined;
  const redis: TestRedis = {
    port,
    url: `redis://127.0.0.1:${port}`,
    async start() {
      server = spawn(REDIS_SERVER, ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no'], { stdio: 'ignore' });
      const deadline = Date.now() + 10_000;
      for (;;) {
        try {
          execFileSync('redis-cli', ['-p', String(port), 'ping'], { stdio: 'pipe' });
          return;
        } catch {
          if (Date.now() > deadline) throw new Error(`redis-server did not start on port ${port}`);
          await new Promise((r) => setTimeout(r, 50));
        }
      }
    },
    async stop() {
      const child = server;
      server = undefined;
      if (!child || child.exitCode !== null) return;
      await new Promise<void>((resolve) => {
        child.once('exit', () => resolve());
        child.kill('SIGKILL');
      });
    },
  };
  await redis.start();
  return redis;
}
