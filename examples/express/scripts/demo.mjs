#!/usr/bin/env node
/**
 * `npm run demo` (from the repository root): installs and builds only what is
 * not up to date (see freshness.mjs), then starts the Express demo server
 * (`node --import tsx src/server.ts` in examples/express) in the foreground,
 * so that on a machine that already built it the demo serves in about a
 * second. Each skipped or run step is one line. The server's exit code is
 * this script's; Ctrl-C stops the server (which prints `stopped`).
 *
 * Options: `--no-install` skips the install check (the root `demo:run`).
 * Environment: PORT (default 3000, `0` for any free port) and HOST (default
 * 127.0.0.1) go to the server.
 */
import { spawn, spawnSync } from 'node:child_process';
import { closeSync, openSync, readFileSync, utimesSync } from 'node:fs';
import { constants } from 'node:os';
import { fileURLToPath } from 'node:url';
import { demoWork, INSTALL_STAMP } from './freshness.mjs';

const example = fileURLToPath(new URL('..', import.meta.url));
const root = fileURLToPath(new URL('../../../', import.meta.url));
const checkInstall = !process.argv.includes('--no-install');

/** pnpm, at the version the root package.json pins, through npx (nothing global needed). */
function pnpm(args) {
  const pinned = JSON.parse(readFileSync(`${root}package.json`, 'utf8')).packageManager ?? 'pnpm@10';
  const result = spawnSync('npx', ['-y', pinned, ...args], { cwd: root, stdio: 'inherit' });
  if (result.status !== 0) {
    console.error(`demo: pnpm ${args.join(' ')} failed${result.error ? ` (${result.error.message})` : ''}; see its output above`);
    process.exit(result.status ?? 1);
  }
}

let work = demoWork(root, example);
if (checkInstall && work.install !== undefined) {
  console.log(`demo: installing (${work.install})`);
  pnpm(['install', '--frozen-lockfile', '--reporter=silent']);
  const stamp = `${root}${INSTALL_STAMP}`;
  closeSync(openSync(stamp, 'a'));
  const now = new Date();
  utimesSync(stamp, now, now);
  work = demoWork(root, example);
}
if (work.builds.length > 0) {
  for (const { name, why } of work.builds) console.log(`demo: building ${name} (${why})`);
  pnpm([...work.builds.flatMap(({ name }) => ['--filter', name]), 'run', 'build']);
} else {
  console.log('demo: dependencies and builds up to date');
}

const STOP_SIGNALS = ['SIGINT', 'SIGTERM', 'SIGHUP'];
const server = spawn(process.execPath, ['--import', 'tsx', 'src/server.ts'], { cwd: example, stdio: 'inherit' });
// Ctrl-C reaches the server from the terminal too; it stops once however many it gets. A signal sent to
// this script alone (a process manager's SIGTERM) is passed on.
let stopAsked = false;
for (const signal of STOP_SIGNALS) {
  process.on(signal, () => {
    stopAsked = true;
    server.kill(signal);
  });
}
server.on('error', (error) => {
  console.error(`demo: cannot start the server: ${error.message}`);
  process.exit(1);
});
server.on('exit', (code, signal) => {
  // The forwarded copy of a stop signal can land while the server is already exiting (Node has reset its
  // handlers by then) and end it by that signal: asked to stop, it stopped.
  if (stopAsked && STOP_SIGNALS.includes(signal)) process.exit(0);
  process.exit(code ?? 128 + (constants.signals[signal] ?? 0));
});
