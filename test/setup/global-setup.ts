/**
 * Vitest global setup: runs once before any test file. Installs the Debian
 * programs that the browser, playground and Redis suites start (see
 * debian-packages.ts), so a fresh machine needs nothing but Node and npm.
 */
import { ensureDebianTools } from './debian-packages.js';

/** Installs missing Debian tools; vitest awaits this before running tests. */
export default function setup(): void {
  ensureDebianTools();
}
