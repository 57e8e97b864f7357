/**
 * Debian Chromium for the browser suite: checks it is installed and
 * launches it, headless, with every name of the test's origins resolved to
 * 127.0.0.1 and every other name unresolvable (the network here is closed).
 */
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { type BrowserContext, chromium } from 'playwright-core';
import { requireTool } from '../setup/debian-packages.js';

/** Where Debian's `chromium` package puts the browser. */
export const CHROMIUM_PATH = '/usr/bin/chromium';

/**
 * Makes sure Debian's `chromium` package is installed (the full test command
 * installs it first; see test/setup/install-tools.ts). Fails with a message
 * that says how to install it.
 */
export function ensureChromium(): void {
  requireTool(CHROMIUM_PATH);
}

/** A running browser profile and its cleanup. */
export interface LaunchedChromium {
  /** The profile's one browser context (pages share it; clear its cookies between tests). */
  readonly context: BrowserContext;
  /** Closes the browser and removes the profile directory. */
  close(): Promise<void>;
}

/**
 * Launches headless Chromium on a fresh user-data directory. `hostRules` are
 * host patterns (`example.com`, `*.cdn.ampproject.org`) mapped to
 * 127.0.0.1; any other name fails to resolve. Certificate errors are ignored,
 * since the test's certificate is self-signed.
 *
 * The profile allows third-party cookies, as a regular Chrome profile does by
 * default: headless Chromium and off-the-record contexts block them
 * (`blockedReasons: UserPreferences`), and an AMP page on a cache origin
 * reaches the publisher's cookies only as a third party. That is why this is
 * a persistent context with a `Preferences` file rather than
 * `browser.newContext()`, which is always off the record.
 */
export async function launchChromium(hostRules: readonly string[]): Promise<LaunchedChromium> {
  const userDataDir = mkdtempSync(join(tmpdir(), 'ampcors-chromium-'));
  mkdirSync(join(userDataDir, 'Default'));
  // cookie_controls_mode 0: "allow third-party cookies".
  writeFileSync(join(userDataDir, 'Default', 'Preferences'), JSON.stringify({ profile: { cookie_controls_mode: 0 } }));
  const rules = [...hostRules.map((pattern) => `MAP ${pattern} 127.0.0.1`), 'MAP * ~NOTFOUND'].join(', ');
  const args = [
    '--no-sandbox',
    '--disable-gpu',
    '--disable-quic',
    '--no-first-run',
    '--disable-background-networking',
    '--disable-component-update',
    '--disable-sync',
    `--host-resolver-rules=${rules}`,
    '--ignore-certificate-errors',
  ];
  try {
    const context = await chromium.launchPersistentContext(userDataDir, { executablePath: CHROMIUM_PATH, headless: true, args, timeout: 60_000 });
    return {
      context,
      async close() {
        await context.close();
        rmSync(userDataDir, { recursive: true, force: true });
      },
    };
  } catch (error) {
    rmSync(userDataDir, { recursive: true, force: true });
    throw error;
  }
}
