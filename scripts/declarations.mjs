// Emits a package's type declarations with declaration maps, for both module
// systems, after tsup has bundled the JavaScript (run from the package
// directory: `tsup … && node ../../scripts/declarations.mjs`).
//
// tsup's bundled declarations cannot carry declaration maps, so "Go to
// definition" in an editor would land in dist/. Instead the TypeScript
// compiler emits one `.d.ts` per source module into dist/ with a `.d.ts.map`
// pointing at the shipped src/, and each is copied to a `.d.cts` twin (with
// relative imports rewritten to `.cjs`, and its own map) so the `require`
// condition resolves to CommonJS declarations all the way down.
import { existsSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import ts from 'typescript';

const packageDir = process.cwd();
const srcDir = resolve(packageDir, 'src');
const outDir = resolve(packageDir, 'dist');
if (!existsSync(srcDir)) throw new Error(`declarations: no src/ in ${packageDir}`);

// Every module of src/ (tests live in test/), plus local ambient declarations.
const rootNames = readdirSync(srcDir)
  .filter((name) => name.endsWith('.ts'))
  .map((name) => join(srcDir, name));

/** @type {import('typescript').CompilerOptions} */
const options = {
  target: ts.ScriptTarget.ES2022,
  module: ts.ModuleKind.NodeNext,
  moduleResolution: ts.ModuleResolutionKind.NodeNext,
  lib: ['lib.es2022.d.ts', 'lib.dom.d.ts', 'lib.dom.iterable.d.ts'],
  types: ['node'],
  strict: true,
  noUncheckedIndexedAccess: true,
  noImplicitOverride: true,
  isolatedModules: true,
  verbatimModuleSyntax: true,
  skipLibCheck: true,
  esModuleInterop: true,
  resolveJsonModule: true,
  declaration: true,
  declarationMap: true,
  emitDeclarationOnly: true,
  noEmitOnError: true,
  rootDir: srcDir,
  outDir,
};

const program = ts.createProgram({ rootNames, options });
const result = program.emit();
const diagnostics = [...ts.getPreEmitDiagnostics(program), ...result.diagnostics];
if (diagnostics.length > 0 || result.emitSkipped) {
  const host = { getCanonicalFileName: (f) => f, getCurrentDirectory: () => packageDir, getNewLine: () => '\n' };
  process.stderr.write(ts.formatDiagnosticsWithColorAndContext(diagnostics, host));
  process.stderr.write(`declarations: ${diagnostics.length} error(s); nothing emitted\n`);
  process.exit(1);
}

// A relative specifier ending in .js (static import/export or import type query).
const relativeJs = /((?:from\s+|import\s*\(\s*)['"]\.\.?\/[^'"]*?)\.js(['"])/g;

let count = 0;
for (const name of readdirSync(outDir)) {
  if (!name.endsWith('.d.ts')) continue;
  const base = name.slice(0, -'.d.ts'.length);
  const dts = readFileSync(join(outDir, name), 'utf8');
  const cts = dts
    .replace(relativeJs, '$1.cjs$2')
    .replace(`//# sourceMappingURL=${base}.d.ts.map`, `//# sourceMappingURL=${base}.d.cts.map`);
  writeFileSync(join(outDir, `${base}.d.cts`), cts);
  const mapPath = join(outDir, `${base}.d.ts.map`);
  if (existsSync(mapPath)) {
    const map = JSON.parse(readFileSync(mapPath, 'utf8'));
    map.file = `${base}.d.cts`;
    writeFileSync(join(outDir, `${base}.d.cts.map`), JSON.stringify(map));
  }
  count += 1;
}
process.stdout.write(`declarations: ${count} modules, .d.ts and .d.cts with maps in dist/\n`);
