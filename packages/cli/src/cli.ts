#!/usr/bin/env node
/**
 * The `ampcors` executable: runs {@link run} on the process's arguments and
 * streams and exits with its code.
 *
 * @packageDocumentation
 */
import { escapeControls, run } from './index.js';

// `ampcors … | head` closes stdout early: stop quietly, as other filters do.
process.stdout.on('error', (error: NodeJS.ErrnoException) => {
  if (error.code === 'EPIPE') process.exit(0);
  throw error;
});

run(process.argv.slice(2)).then(
  (code) => {
    process.exitCode = code;
  },
  (error: unknown) => {
    const text = error instanceof Error ? (error.stack ?? error.message) : String(error);
    process.stderr.write(`ampcors: internal error: ${text.split('\n').map(escapeControls).join('\n')}\n`);
    process.exitCode = 70;
  },
);
