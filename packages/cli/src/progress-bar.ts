import type { OutputStream } from './output.js';

/** A progress display for long work; does nothing unless the stream is a terminal. */
export interface ProgressBar {
  /** Reports progress: `done` of `total` (bytes read, when the total is known) and items handled. */
  update(done: number, items: number): void;
  /** Switches to a phase without a measurable fraction (e.g. `encoding`). */
  phase(label: string, items: number): void;
  /** Erases the bar. */
  clear(): void;
}

const WIDTH = 30;
const INTERVAL_MS = 100;

/** A progress bar that draws nothing. */
export const NO_PROGRESS: ProgressBar = { update() {}, phase() {}, clear() {} };

/**
 * A one-line progress bar on `stream` (stderr), redrawn at most every 100 ms,
 * shown by default only when `stream.isTTY`, so piped output stays quiet.
 *
 * @param total - the amount `done` counts towards, or `undefined` when unknown (stdin)
 * @param unit - what the items are, e.g. `domains`
 * @param show - whether to draw at all (`--progress` forces it; `check` also asks that stdout is not the same terminal)
 */
export function createProgressBar(stream: OutputStream, total: number | undefined, unit: string, show = stream.isTTY === true): ProgressBar {
  if (!show) return NO_PROGRESS;
  let last = 0;
  let shown = false;
  const draw = (text: string): void => {
    stream.write(`\r\x1b[K${text}`);
    shown = true;
  };
  return {
    update(done, items) {
      const now = Date.now();
      if (now - last < INTERVAL_MS) return;
      last = now;
      const count = `${items.toLocaleString('en')} ${unit}`;
      if (total === undefined || total <= 0) {
        draw(count);
        return;
      }
      const fraction = Math.min(1, done / total);
      const filled = Math.round(fraction * WIDTH);
      draw(`[${'#'.repeat(filled)}${'.'.repeat(WIDTH - filled)}] ${(fraction * 100).toFixed(0).padStart(3)}% ${count}`);
    },
    phase(label, items) {
      draw(`${label}… ${items.toLocaleString('en')} ${unit}`);
    },
    clear() {
      if (shown) stream.write('\r\x1b[K');
      shown = false;
    },
  };
}
