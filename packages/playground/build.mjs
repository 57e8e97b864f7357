// Builds the playground: dist/ gets the static page (index.html, style.css,
// core.js — @ampcors/core bundled for browsers from its sources — and app.js,
// the page script, which imports ./core.js); lib/ gets the Node entry that
// tells servers where dist/ is.
import { copyFile, mkdir, readFile, rm, writeFile } from 'node:fs/promises';
import { fileURLToPath } from 'node:url';
import { build } from 'esbuild';
import ts from 'typescript';

const here = (path) => fileURLToPath(new URL(path, import.meta.url));
const dist = here('./dist/');
const lib = here('./lib/');

await rm(dist, { recursive: true, force: true });
await rm(lib, { recursive: true, force: true });
await mkdir(dist, { recursive: true });

const browser = { bundle: true, format: 'esm', platform: 'browser', target: 'es2022', minify: true, legalComments: 'none', logLevel: 'warning' };

// @ampcors/core as its own module: the page proves core runs unchanged in a browser.
const core = await build({ ...browser, entryPoints: [here('../core/src/index.ts')], outfile: `${dist}core.js`, metafile: true });

// The page script, with @ampcors/core left as an import of ./core.js.
const useCoreModule = {
  name: 'core-module',
  setup(b) {
    b.onResolve({ filter: /^@ampcors\/core$/ }, () => ({ path: './core.js', external: true }));
  },
};
await build({ ...browser, entryPoints: [here('./src/page/app.ts')], outfile: `${dist}app.js`, plugins: [useCoreModule] });

await copyFile(here('./src/page/index.html'), `${dist}index.html`);
await copyFile(here('./src/page/style.css'), `${dist}style.css`);

// The Node entry (ESM) and its declarations.
await build({ entryPoints: [here('./src/index.ts')], outfile: `${lib}index.js`, format: 'esm', platform: 'node', target: 'node20', logLevel: 'warning' });
// Declarations from the single source file (its exports carry explicit types).
const source = await readFile(here('./src/index.ts'), 'utf8');
const declaration = ts.transpileDeclaration(source, { fileName: 'index.ts', reportDiagnostics: true, compilerOptions: { module: ts.ModuleKind.NodeNext } });
if (declaration.diagnostics?.length) {
  console.error(
    ts.formatDiagnostics(declaration.diagnostics, { getCanonicalFileName: (f) => f, getCurrentDirectory: () => process.cwd(), getNewLine: () => '\n' }),
  );
  process.exit(1);
}
await writeFile(`${lib}index.d.ts`, declaration.outputText);
await writeFile(`${lib}package.json`, '{ "type": "module" }\n');

const coreBytes = Object.values(core.metafile.outputs).reduce((sum, output) => sum + output.bytes, 0);
console.log(`playground: dist/ written (core.js ${(coreBytes / 1024).toFixed(1)} kB minified)`);
