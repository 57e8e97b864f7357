/**
 * Failure evidence of the browser suite: a screenshot, the page's console
 * and what the page and the server saw, under the git-ignored
 * `test/browser/artifacts/<test name>/`.
 */
import { mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import type { Page } from 'playwright-core';

/** The git-ignored folder that holds one subfolder per failed test. */
export const ARTIFACTS_DIR = fileURLToPath(new URL('./artifacts/', import.meta.url));

/** Removes the evidence of earlier runs, so that every folder present belongs to this run. */
export function clearArtifacts(): void {
  rmSync(ARTIFACTS_DIR, { recursive: true, force: true });
}

/** Collects a page's console messages and uncaught errors as lines. */
export function recordConsole(page: Page): string[] {
  const lines: string[] = [];
  page.on('console', (message) => lines.push(`[${message.type()}] ${message.text()}`));
  page.on('pageerror', (error) => lines.push(`[pageerror] ${error.message}`));
  page.on('requestfailed', (request) => lines.push(`[requestfailed] ${request.method()} ${request.url()}: ${request.failure()?.errorText ?? ''}`));
  return lines;
}

/**
 * Saves `screenshot.png`, `console.log` and `details.json` for a failed test
 * and returns the folder. Never throws: evidence is best effort and must not
 * hide the test's own error.
 */
export async function saveFailureArtifacts(testName: string, page: Page | undefined, consoleLines: readonly string[], details: unknown): Promise<string> {
  const folder = `${ARTIFACTS_DIR}${testName.replace(/[^A-Za-z0-9._-]+/g, '_').slice(0, 120)}`;
  try {
    mkdirSync(folder, { recursive: true });
    writeFileSync(`${folder}/console.log`, `${consoleLines.join('\n')}\n`);
    writeFileSync(`${folder}/details.json`, `${JSON.stringify(details, null, 2)}\n`);
    if (page && !page.isClosed()) await page.screenshot({ path: `${folder}/screenshot.png`, fullPage: true, timeout: 5_000 });
  } catch (error) {
    console.error(`[browser] could not save every artifact in ${folder}: ${(error as Error).message}`);
  }
  return folder;
}
