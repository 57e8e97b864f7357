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
import { basename, dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import ts from 'typescript';

const packageDir = process.cwd();
const srcDir = resolve(packageDir, 'src');
const outDir = resolve(packageDir, 'dist');
if (!existsSync(srcDir)) throw new Error(`declarations: no src/ in ${packageDir}`);

/** Every file under `dir` whose name ends with `suffix`, at any depth. */
function filesUnder(dir, suffix) {
  return readdirSync(dir, { recursive: true, withFileTypes: true })
    .filter((entry) => entry.isFile() && entry.name.endsWith(suffix))
    .map((entry) => join(entry.parentPath ?? entry.path, entry.name));
}

// Every module of src/ (tests live in test/), plus local ambient declarations.
const rootNames = filesUnder(srcDir, '.ts');

// The workspace's compiler options (tsconfig.base.json), plus declaration-only emit.
const baseConfigPath = fileURLToPath(new URL('../tsconfig.base.json', import.meta.url));
const baseConfig = ts.readConfigFile(baseConfigPath, ts.sys.readFile);
if (baseConfig.error) throw new Error(`declarations: cannot read ${baseConfigPath}`);
const workspace = ts.convertCompilerOptionsFromJson(baseConfig.config.compilerOptions, dirname(baseConfigPath));
if (workspace.errors.length > 0) throw new Error(`declarations: bad compilerOptions in ${baseConfigPath}`);

/** @type {import('typescript').CompilerOptions} */
const options = {
  ...workspace.options,
  // Node's types for the packages that run on Node only (core's purity is checked by the linter).
  types: ['node'],
  declaration: true,
  declarationMap: true,
  emitDeclarationOnly: true,
  noEmit: false,
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
for (const path of filesUnder(outDir, '.d.ts')) {
  const stem = path.slice(0, -'.d.ts'.length);
  const base = basename(stem);
  const cts = readFileSync(path, 'utf8')
    .replace(relativeJs, '$1.cjs$2')
    .replace(`//# sourceMappingURL=${base}.d.ts.map`, `//# sourceMappingURL=${base}.d.cts.map`);
  writeFileSync(`${stem}.d.cts`, cts);
  if (existsSync(`${stem}.d.ts.map`)) {
    const map = JSON.parse(readFileSync(`${stem}.d.ts.map`, 'utf8'));
    map.file = `${base}.d.cts`;
    writeFileSync(`${stem}.d.cts.map`, JSON.stringify(map));
  }
  count += 1;
}
process.stdout.write(`declarations: ${count} modules of ${relative(process.cwd(), outDir) || '.'}, .d.ts and .d.cts with maps\n`);
