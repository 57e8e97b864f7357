/**
 * Debian Chromium for the browser suite: installs it when missing and
 * launches it, headless, with every name of the test's origins resolved to
 * 127.0.0.1 and every other name unresolvable (the network here is closed).
 */
import { spawn } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { type BrowserContext, chromium } from 'playwright-core';

/** Where Debian's `chromium` package puts the browser. */
export const CHROMIUM_PATH = '/usr/bin/chromium';

function run(command: string, args: readonly string[]): Promise<void> {
  return new Promise((resolve, reject) => {
    console.log(`[browser] $ ${command} ${args.join(' ')}`);
    const child = spawn(command, args, { stdio: ['ignore', 'pipe', 'pipe'], env: { ...process.env, DEBIAN_FRONTEND: 'noninteractive' } });
    const progress = (chunk: Buffer) => {
      for (const line of chunk.toString().split('\n')) if (line.trim()) console.log(`[browser] ${line.trimEnd()}`);
    };
    child.stdout.on('data', progress);
    child.stderr.on('data', progress);
    child.on('error', (error) => reject(new Error(`cannot run ${command}: ${error.message}`)));
    child.on('exit', (code) => (code === 0 ? resolve() : reject(new Error(`${command} ${args.join(' ')} exited with ${code}`))));
  });
}

/**
 * Installs Debian's `chromium` package (`apt-get update`, then
 * `apt-get install -y chromium`) unless {@link CHROMIUM_PATH} exists,
 * printing apt's progress. Fails with a clear message when it cannot.
 */
export async function ensureChromium(): Promise<void> {
  if (existsSync(CHROMIUM_PATH)) return;
  console.log(`[browser] ${CHROMIUM_PATH} is missing: installing Debian's chromium package (this takes a few minutes)`);
  const started = Date.now();
  try {
    await run('apt-get', ['update']);
    await run('apt-get', ['install', '-y', 'chromium']);
  } catch (error) {
    throw new Error(`the browser suite needs Chromium at ${CHROMIUM_PATH} and could not install it (run as root on Debian, or install the chromium package): ${(error as Error).message}`);
  }
  if (!existsSync(CHROMIUM_PATH)) throw new Error(`apt-get installed chromium but ${CHROMIUM_PATH} is still missing`);
  console.log(`[browser] chromium installed in ${Math.round((Date.now() - started) / 1000)} s`);
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
