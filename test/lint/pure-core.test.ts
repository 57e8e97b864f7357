// "Pure core" is checked, not claimed: the lint rules of eslint.config.js
// refuse Node built-ins in packages/core/src (and only there).
import { fileURLToPath } from 'node:url';
import { ESLint } from 'eslint';
import { describe, expect, it } from 'vitest';

const root = fileURLToPath(new URL('../../', import.meta.url));
const eslint = new ESLint({ cwd: root });

async function ruleIds(code: string, filePath: string): Promise<string[]> {
  const [result] = await eslint.lintText(code, { filePath });
  return (result?.messages ?? []).map((message) => message.ruleId ?? 'parse-error');
}

describe('lint: @ampcors/core imports no Node built-in', () => {
  it('refuses node: imports, bare built-in names and the process/Buffer globals in core', async () => {
    const file = `${root}packages/core/src/probe.ts`;
    expect(await ruleIds("import { readFileSync } from 'node:fs';\nexport const a = readFileSync;\n", file)).toEqual(['no-restricted-imports']);
    expect(await ruleIds("import path from 'path';\nexport const b = path;\n", file)).toEqual(['no-restricted-imports']);
    expect(await ruleIds('export const c = process.env.HOME;\n', file)).toEqual(['no-restricted-globals']);
    expect(await ruleIds("export const d = Buffer.from('x');\n", file)).toEqual(['no-restricted-globals']);
  });

  it('allows them outside core, and allows core its own dependencies', async () => {
    expect(await ruleIds("import { readFileSync } from 'node:fs';\nexport const a = readFileSync;\n", `${root}packages/express/src/probe.ts`)).toEqual([]);
    expect(await ruleIds("import { getDomain } from 'tldts';\nexport const e = getDomain;\n", `${root}packages/core/src/probe.ts`)).toEqual([]);
  });
});
