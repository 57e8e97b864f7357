// rediss:// URLs: the registry's own connection speaks TLS, verifies the
// server's certificate against the trusted CAs (NODE_EXTRA_CA_CERTS adds
// one) and its name, and refuses a server it cannot verify. The "Redis" is a
// fake TLS server on 127.0.0.1 with a throwaway certificate made by openssl.
import { execFileSync, spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createServer, type Server } from 'node:tls';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createRedisRegistry } from '../src/index.js';

const dir = mkdtempSync(join(tmpdir(), 'ampcors-redis-tls-'));
const source = fileURLToPath(new URL('../src/index.ts', import.meta.url));
const root = fileURLToPath(new URL('../../../', import.meta.url));
let server: Server;
let port = 0;
const received: string[] = [];

beforeAll(async () => {
  execFileSync(
    'openssl',
    [
      'req',
      '-x509',
      '-newkey',
      'ec',
      '-pkeyopt',
      'ec_paramgen_curve:prime256v1',
      '-nodes',
      '-days',
      '1',
      '-keyout',
      join(dir, 'key.pem'),
      '-out',
      join(dir, 'cert.pem'),
      '-subj',
      '/CN=localhost',
      '-addext',
      'subjectAltName=DNS:localhost',
    ],
    { stdio: 'pipe' },
  );
  server = createServer({ key: readFileSync(join(dir, 'key.pem')), cert: readFileSync(join(dir, 'cert.pem')) }, (socket) => {
    socket.on('error', () => {});
    socket.on('data', (chunk) => {
      const text = chunk.toString();
      received.push(text);
      if (text.includes('QUIT')) socket.end('+OK\r\n');
      else socket.write(text.includes('AUTH') ? '+OK\r\n' : ':42\r\n');
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', () => resolve()));
  const address = server.address();
  port = typeof address === 'object' && address ? address.port : 0;
}, 30_000);

afterAll(async () => {
  await new Promise<void>((resolve) => server.close(() => resolve()));
  rmSync(dir, { recursive: true, force: true });
});

/** Runs `size()` of a registry on `url` in a fresh Node with `env`, and prints the answer or the error. */
function sizeInChild(url: string, env: Record<string, string>): Promise<string> {
  const script = `import(${JSON.stringify(source)}).then(async ({ createRedisRegistry }) => {
    const registry = createRedisRegistry({ url: ${JSON.stringify(url)}, timeoutMs: 2000 });
    try { console.log('size ' + (await registry.size())); } catch (error) { console.log('error ' + error.message); }
    await registry.close();
  });`;
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ['--import', 'tsx', '-e', script], { cwd: root, env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    child.stdout.on('data', (chunk) => (out += chunk));
    child.stderr.on('data', (chunk) => (out += chunk));
    child.on('error', reject);
    child.on('exit', () => resolve(out.trim()));
  });
}

describe('rediss://', () => {
  it('talks to a server whose certificate is trusted (NODE_EXTRA_CA_CERTS), credentials inside TLS', async () => {
    await expect(sizeInChild(`rediss://ops:secret@localhost:${port}`, { NODE_EXTRA_CA_CERTS: join(dir, 'cert.pem') })).resolves.toBe('size 42');
    expect(received.join('')).toContain('AUTH');
  }, 30_000);

  it('refuses a server it cannot verify: an untrusted certificate, or a name the certificate does not hold', async () => {
    const untrusted = createRedisRegistry({ url: `rediss://localhost:${port}`, timeoutMs: 3000 });
    await expect(untrusted.size()).rejects.toThrow('Redis did not accept a connection within 1000 ms (TLS: self-signed certificate)');
    await untrusted.close();
    // Trusted, but asked for by a name the certificate does not hold (it names localhost only).
    await expect(sizeInChild(`rediss://127.0.0.1:${port}`, { NODE_EXTRA_CA_CERTS: join(dir, 'cert.pem') })).resolves.toMatch(
      /^error Redis did not accept a connection within 1000 ms \(TLS: Hostname\/IP does not match certificate's altnames/,
    );
  }, 30_000);
});
