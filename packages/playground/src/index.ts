/**
 * playground — the ampcors playground page: an AMP cache URL calculator and
 * origin checker that runs `@ampcors/core` in the browser. `node build.mjs`
 * writes it as static files to `dist/`; this module tells a server where they are.
 *
 * @packageDocumentation
 */
import { fileURLToPath } from 'node:url';

/**
 * Absolute path of the built page (`index.html`, `core.js`, `app.js`,
 * `style.css`). Serve the directory as static files, e.g.
 * `app.use(express.static(playgroundDir))`. Run `pnpm --filter playground build` first.
 */
export const playgroundDir: string = fileURLToPath(new URL('../dist/', import.meta.url));

/** The files of the built page, relative to {@link playgroundDir}. */
export const playgroundFiles: readonly string[] = Object.freeze(['index.html', 'core.js', 'app.js', 'style.css']);
