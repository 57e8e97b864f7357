// Types of freshness.mjs (plain JavaScript: it runs before anything is installed).

/** A workspace package the demo uses: its directory and parsed package.json. */
export interface DemoPackage {
  readonly dir: string;
  readonly json: {
    readonly name: string;
    readonly scripts?: Record<string, string>;
    readonly dependencies?: Record<string, string>;
    readonly exports?: unknown;
  };
}

/** What `npm run demo` must do before starting the server. */
export interface DemoWork {
  /** Why an install is needed, or undefined. */
  readonly install: string | undefined;
  /** The packages to build, in dependency order, each with why. */
  readonly builds: ReadonlyArray<{ readonly name: string; readonly why: string }>;
}

/** The file demo.mjs touches after a successful install, relative to the root. */
export const INSTALL_STAMP: string;

/** The workspace packages `exampleDir` depends on through `workspace:` versions, transitively, each after its dependencies. */
export function demoPackages(root: string, exampleDir: string): DemoPackage[];

/** What `npm run demo` must do before starting `exampleDir`. */
export function demoWork(root: string, exampleDir: string): DemoWork;
