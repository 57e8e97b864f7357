/**
 * What the demo prints when it cannot start listening: one line that names
 * the variable to set (PORT or HOST) and a value that works, instead of
 * Node's stack trace.
 */
import { createServer } from 'node:net';

/** The port when PORT is unset. */
export const DEFAULT_PORT = 3000;

/** How many ports after a busy one are tried for the suggestion. */
const PORTS_TRIED = 20;

/**
 * PORT as a port number (unset or empty: {@link DEFAULT_PORT}; `0`: any free
 * port), or the line that says why it is not one.
 */
export function parsePort(value: string | undefined): number | string {
  if (value === undefined || value === '') return DEFAULT_PORT;
  const port = /^\d{1,5}$/u.test(value) ? Number(value) : Number.NaN;
  if (Number.isInteger(port) && port <= 65_535) return port;
  return `PORT=${JSON.stringify(value.slice(0, 40))} is not a port number (0 to 65535): set PORT=${DEFAULT_PORT} npm run demo`;
}

/** True when `port` can be bound on `host` right now. */
function isFree(port: number, host: string): Promise<boolean> {
  return new Promise((resolve) => {
    const probe = createServer();
    probe.once('error', () => resolve(false));
    probe.listen(port, host, () => probe.close(() => resolve(true)));
  });
}

/** The first free port after `port` (at most {@link PORTS_TRIED} tried), or undefined. */
async function freePortAfter(port: number, host: string): Promise<number | undefined> {
  for (let candidate = port + 1; candidate <= Math.min(port + PORTS_TRIED, 65_535); candidate++) {
    if (await isFree(candidate, host)) return candidate;
  }
  return undefined;
}

/**
 * The one line for a failed `listen(port, host)`: a port in use (with a free
 * one to use instead), a port that needs privileges, a HOST that is not an
 * address of this machine, or anything else with its error code.
 */
export async function listenProblem(error: NodeJS.ErrnoException, port: number, host: string): Promise<string> {
  switch (error.code) {
    case 'EADDRINUSE': {
      const free = await freePortAfter(port, host);
      return `port ${port} is in use: set PORT=${free ?? 0} npm run demo${free === undefined ? ' (0 picks any free port)' : ''}`;
    }
    case 'EACCES':
      return `port ${port} needs administrator rights here: set PORT=${DEFAULT_PORT} npm run demo (any port from 1024 up)`;
    case 'EADDRNOTAVAIL':
    case 'ENOTFOUND':
    case 'EAI_AGAIN':
      return `HOST=${host} is not an address of this machine: set HOST=127.0.0.1 npm run demo (or HOST=0.0.0.0 for every interface)`;
    default:
      return `cannot listen on ${host}:${port} (${error.code ?? error.message}): set PORT or HOST, e.g. PORT=${DEFAULT_PORT} HOST=127.0.0.1 npm run demo`;
  }
}
