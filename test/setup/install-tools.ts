/**
 * Installs the Debian programs some suites start (Chromium, redis-server)
 * when they are missing. Run by the full test command before vitest
 * (`pnpm setup:tools`), never by the unit loop: `pnpm test:unit` and a single
 * test file run without apt-get, and a suite whose program is missing fails
 * with a message that names this script.
 */
import { ensureDebianTools } from './debian-packages.js';

ensureDebianTools();
