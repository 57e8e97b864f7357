/**
 * playground — the ampcors playground page: why an Origin is blocked and how
 * to fix it, the AMP cache origin trace and the cache URL calculator, running
 * `@ampcors/core` in the browser. `node build.mjs` writes it as static files
 * to `dist/`; this module tells a server where they are, and gives the page
 * with a server's own publisher list as its default.
 *
 * @packageDocumentation
 */
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

/**
 * Absolute path of the built page (`index.html`, `core.js`, `app.js`,
 * `style.css`). Serve the directory as static files, e.g.
 * `app.use(express.static(playgroundDir))`. Run `pnpm --filter playground build` first.
 */
export const playgroundDir: string = fileURLToPath(new URL('../dist/', import.meta.url));

/** The files of the built page, relative to {@link playgroundDir}. */
export const playgroundFiles: readonly string[] = Object.freeze(['index.html', 'core.js', 'app.js', 'style.css']);

/**
 * What the page's fields show when its address does not say otherwise (a
 * link's `#publishers=…&check=…` still wins).
 */
export interface PlaygroundDefaults {
  /** The publisher rules the server trusts, e.g. the list given to `ampCors()`. */
  readonly publishers?: readonly string[];
  /** The `Origin` the verdict tool checks. */
  readonly check?: string;
  /** The `Origin` the trace tool reverses. */
  readonly origin?: string;
  /** The publisher URL of the cache-URL tool. */
  readonly url?: string;
}

/** The placeholder `index.html` carries for the defaults (an empty JSON object). */
const DEFAULTS_META = '<meta name="ampcors-defaults" content="{}">';

const ATTRIBUTE_ESCAPES: Readonly<Record<string, string>> = { '&': '&amp;', '"': '&quot;', "'": '&#39;', '<': '&lt;', '>': '&gt;' };

/**
 * The built `index.html` with `defaults` embedded (as JSON in the
 * `ampcors-defaults` meta element, attribute-escaped), for a server to send
 * at `/` instead of the static file, so the page opens on the server's own
 * publisher list. The page reads only string fields from it.
 *
 * @throws Error when `dist/index.html` is missing (run the build) or has no placeholder.
 * @example app.get('/', (_req, res) => res.type('html').send(playgroundHtml({ publishers: PUBLISHERS })));
 */
export function playgroundHtml(defaults: PlaygroundDefaults): string {
  const html = readFileSync(`${playgroundDir}index.html`, 'utf8');
  if (!html.includes(DEFAULTS_META)) throw new Error(`${playgroundDir}index.html has no ampcors-defaults placeholder: rebuild the playground`);
  const json = JSON.stringify({ ...defaults, publishers: defaults.publishers?.join('\n') });
  const content = json.replace(/[&"'<>]/gu, (ch) => ATTRIBUTE_ESCAPES[ch] ?? ch);
  return html.replace(DEFAULTS_META, () => `<meta name="ampcors-defaults" content="${content}">`);
}
