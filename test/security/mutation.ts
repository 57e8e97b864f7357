/**
 * `pnpm mutation`: StrykerJS over every source file of @ampcors/core, one
 * group of files at a time, each bounded in time, then
 * test/security/MUTATION.md with the score, the time of each group and every
 * surviving mutant with the reason it survives (test/security/mutation-notes.json).
 * StrykerJS 10 needs Node ≥ 22; on an older Node the run uses `npx node@22`.
 *
 * Usage: tsx test/security/mutation.ts [--group a,b] [--minutes-per-group N]
 *          [--concurrency N] [--incremental] [--report-only]
 *   --group          run only these groups (the report still lists every group)
 *   --incremental    reuse the results of the last run for mutants whose code
 *                    and covering tests did not change (reports/mutation/<group>.incremental.json)
 *   --report-only    rewrite MUTATION.md from the last reports without running
 */
import { spawnSync } from 'node:child_process';
import { appendFileSync, existsSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

const root = fileURLToPath(new URL('../..', import.meta.url));
const reportDir = `${root}reports/mutation`;
const notesFile = fileURLToPath(new URL('./mutation-notes.json', import.meta.url));
const outFile = fileURLToPath(new URL('./MUTATION.md', import.meta.url));
/** Every group run, one JSON object a line (reports/mutation/history.jsonl): MUTATION.md shows the last full run's time too. */
const historyFile = `${reportDir}/history.jsonl`;
const sourceDir = `${root}packages/core/src`;

/** Every source file of core, in groups of related files, most security-relevant first. */
export const GROUPS: Record<string, string[]> = {
  decision: ['verifier', 'origin-header', 'reverse-origin', 'cache-origin', 'prefix-claimants'],
  prefix: ['domain-prefix', 'domain-name', 'publisher-rules', 'allow-set', 'digest-order', 'prefix-forms', 'problem-list'],
  registry: ['caches', 'cache-url', 'hash-prefix', 'errors'],
  compact: ['compact-allow-set', 'sha256-words'],
  rice: ['rice-coding'],
  url: ['canonical-host', 'canonical-url', 'ip-address', 'url-expressions'],
  response: [
    'cors-response',
    'cors-options',
    'cors-plan',
    'source-origin',
    'amp-email',
    'email-clients',
    'vary',
    'apply-headers',
    'amp-redirect-to',
    'cors-policy',
    'config-check',
    'legacy-origin-option',
    'async-verifier',
    'explain-origin',
    'request-facts',
    'origin-callback',
    'drop-in-cors',
    'drop-in-koa-cors',
    'drop-in-hono-cors',
    'drop-in-fastify-cors',
    'verdict-sources',
    'delegate-guard',
    'asked-origin',
    'nested-policies',
    'written-responses',
    'response-bodies',
  ],
};

/** Entry files: re-exports only, nothing to mutate. */
const ENTRIES = new Set(['index.ts', 'adapter.ts', 'safe-browsing.ts', 'algorithms.ts']);

interface Mutant {
  id: string;
  mutatorName: string;
  replacement?: string;
  status: string;
  location: { start: { line: number; column: number }; end: { line: number; column: number } };
}
interface Report {
  files: Record<string, { source: string; mutants: Mutant[] }>;
}
/** What the driver records of one group's run (reports/mutation/<group>.run.json). */
interface GroupRun {
  files: string[];
  startedAt: string;
  seconds: number;
  finished: boolean;
  outcome: string;
  incremental: boolean;
  concurrency: number;
}
/** One reason a surviving mutant survives; matched on file, source line text, mutator, replacement. */
interface Note {
  file: string;
  /** Text the mutated source line contains. */
  code: string;
  mutator?: string;
  /** Text the replacement contains. */
  replacement?: string;
  why: string;
}

function option(name: string): string | undefined {
  const index = process.argv.indexOf(name);
  return index < 0 ? undefined : process.argv[index + 1];
}

function numberOption(name: string, fallback: number): number {
  const value = Number(option(name) ?? fallback);
  if (!Number.isFinite(value) || value <= 0) throw new Error(`${name} must be a positive number`);
  return value;
}

/** Fails loudly when a core source file is in no group (a new file would silently go unmeasured). */
function checkGroups(): void {
  const grouped = new Set(Object.values(GROUPS).flat());
  const sources = readdirSync(sourceDir)
    .filter((f) => f.endsWith('.ts') && !f.endsWith('.d.ts') && !ENTRIES.has(f) && f !== 'psl-ancestors.ts') // generated data (stryker.config.mjs skips it too)
    .map((f) => f.slice(0, -3));
  const missing = sources.filter((f) => !grouped.has(f));
  const stale = [...grouped].filter((f) => !sources.includes(f));
  if (missing.length > 0 || stale.length > 0) {
    throw new Error(`mutation: GROUPS out of date (not grouped: ${missing.join(', ') || 'none'}; no such file: ${stale.join(', ') || 'none'})`);
  }
}

function runGroup(name: string, files: string[], minutes: number, incremental: boolean, concurrency: number): void {
  const node = Number(process.versions.node.split('.')[0]) >= 22 ? [process.execPath] : ['npx', '-y', 'node@22'];
  const [command, ...args] = [...node, `${root}node_modules/@stryker-mutator/core/bin/stryker.js`, 'run', `${root}stryker.config.mjs`];
  console.log(`mutation: group ${name} (${files.join(', ')}), at most ${minutes} min`);
  // A run is incremental only when there are earlier results to reuse.
  const hadIncrementalFile = existsSync(`${reportDir}/${name}.incremental.json`);
  const started = Date.now();
  const result = spawnSync(command as string, args, {
    cwd: root,
    stdio: 'inherit',
    timeout: minutes * 60_000,
    killSignal: 'SIGTERM',
    env: {
      ...process.env,
      AMPCORS_MUTATE: files.map((f) => `packages/core/src/${f}.ts`).join(','),
      AMPCORS_MUTATION_REPORT: `reports/mutation/${name}.json`,
      AMPCORS_MUTATION_TMP: `.stryker-tmp-${name}`,
      AMPCORS_MUTATION_CONCURRENCY: String(concurrency),
      ...(incremental ? { AMPCORS_MUTATION_INCREMENTAL: `reports/mutation/${name}.incremental.json` } : {}),
    },
  });
  const finished = !result.error && result.status === 0;
  const outcome = finished ? 'finished' : result.error ? `stopped: ${result.error.message}` : `exit ${result.status ?? result.signal}`;
  const run: GroupRun = {
    files,
    startedAt: new Date(started).toISOString(),
    seconds: Math.round((Date.now() - started) / 1000),
    finished,
    outcome,
    incremental: incremental && hadIncrementalFile,
    concurrency,
  };
  writeFileSync(`${reportDir}/${name}.run.json`, `${JSON.stringify(run, null, 2)}\n`);
  appendFileSync(historyFile, `${JSON.stringify({ group: name, ...run })}\n`);
  console.log(`mutation: group ${name} ${outcome} after ${run.seconds} s`);
}

/** For each group never tested whole in one run: its runs, so that its time is still on record. */
function groupsWithoutFullRun(): string[] {
  if (!existsSync(historyFile)) return [];
  const runs = readFileSync(historyFile, 'utf8')
    .split('\n')
    .filter((line) => line.trim() !== '')
    .map((line) => JSON.parse(line) as GroupRun & { group: string });
  return Object.keys(GROUPS)
    .filter((name) => lastFullRun(name) === undefined)
    .map((name) => {
      const own = runs.filter((r) => r.group === name);
      const list = own.map(
        (r) =>
          `${minutes(r.seconds)} (${r.incremental ? 'incremental, ' : ''}${r.outcome}${r.files.join() === GROUPS[name]!.join() ? '' : `; files ${r.files.join(', ')}`})`,
      );
      return `${name}: no single run tested every mutant; its runs: ${list.length > 0 ? list.join(', then ') : 'none'}.`;
    });
}

/** The concurrency of the last runs (all groups use the same). */
function concurrencyUsed(): number {
  for (const name of Object.keys(GROUPS)) {
    const path = `${reportDir}/${name}.run.json`;
    if (existsSync(path)) return (JSON.parse(readFileSync(path, 'utf8')) as GroupRun).concurrency;
  }
  return 2;
}

/** The last run of a group that finished without reusing earlier results. */
function lastFullRun(name: string): (GroupRun & { group: string }) | undefined {
  if (!existsSync(historyFile)) return undefined;
  const runs = readFileSync(historyFile, 'utf8')
    .split('\n')
    .filter((line) => line.trim() !== '')
    .map((line) => JSON.parse(line) as GroupRun & { group: string });
  return runs.filter((r) => r.group === name && r.finished && !r.incremental).at(-1);
}

function readNotes(): Note[] {
  if (!existsSync(notesFile)) return [];
  const notes = JSON.parse(readFileSync(notesFile, 'utf8')) as Note[];
  if (!Array.isArray(notes) || notes.some((n) => typeof n.file !== 'string' || typeof n.code !== 'string' || typeof n.why !== 'string')) {
    throw new Error(`${notesFile}: expected an array of { file, code, mutator?, replacement?, why }`);
  }
  return notes;
}

function reasonOf(notes: Note[], file: string, line: string, mutant: Mutant): string | undefined {
  return notes.find(
    (n) =>
      n.file === file &&
      line.includes(n.code) &&
      (n.mutator === undefined || n.mutator === mutant.mutatorName) &&
      (n.replacement === undefined || (mutant.replacement ?? '').includes(n.replacement)),
  )?.why;
}

function cell(text: string, max: number): string {
  const flat = text.replaceAll('\n', ' ').replace(/\s+/g, ' ').trim();
  return (flat.length > max ? `${flat.slice(0, max - 1)}…` : flat).replaceAll('|', '\\|').replaceAll('`', "'");
}

function minutes(seconds: number): string {
  return `${Math.floor(seconds / 60)} min ${String(seconds % 60).padStart(2, '0')} s`;
}

function writeSummary(): void {
  const notes = readNotes();
  const rows: string[] = [];
  const perFile: string[] = [];
  const groupRows: string[] = [];
  const unexplained: string[] = [];
  let detected = 0;
  let undetected = 0;
  let totalSeconds = 0;
  let totalFullSeconds = 0;
  const missing: string[] = [];
  for (const [name, files] of Object.entries(GROUPS)) {
    const path = `${reportDir}/${name}.json`;
    const runPath = `${reportDir}/${name}.run.json`;
    const run = existsSync(runPath) ? (JSON.parse(readFileSync(runPath, 'utf8')) as GroupRun) : undefined;
    const current = run !== undefined && run.finished && existsSync(path);
    if (!current) {
      missing.push(...files);
      groupRows.push(`| ${name} | ${files.join(', ')} | – | – | ${run ? `${minutes(run.seconds)} (${run.outcome})` : 'not run'} | |`);
      continue;
    }
    const report = JSON.parse(readFileSync(path, 'utf8')) as Report;
    let groupMutants = 0;
    let groupDetected = 0;
    let groupUndetected = 0;
    // Only the group's own files: an incremental report may carry results of files mutated by an earlier grouping.
    const own = (file: string) => files.some((f) => file.endsWith(`packages/core/src/${f}.ts`));
    for (const [file, { source, mutants }] of Object.entries(report.files)
      .filter(([file]) => own(file))
      .sort(([a], [b]) => a.localeCompare(b))) {
      const lines = source.split('\n');
      const count = (statuses: string[]) => mutants.filter((m) => statuses.includes(m.status)).length;
      const d = count(['Killed', 'Timeout']);
      const u = count(['Survived', 'NoCoverage']);
      detected += d;
      undetected += u;
      groupMutants += mutants.length;
      groupDetected += d;
      groupUndetected += u;
      const short = file.replace(/^.*packages\/core\/src\//, '');
      perFile.push(
        `| ${short} | ${name} | ${mutants.length} | ${count(['Killed'])} | ${count(['Timeout'])} | ${count(['Survived'])} | ${count(['NoCoverage'])} | ${count(['Ignored'])} | ${d + u === 0 ? '–' : `${((100 * d) / (d + u)).toFixed(1)}%`} |`,
      );
      const survivors = mutants
        .filter((x) => x.status === 'Survived' || x.status === 'NoCoverage')
        .sort((a, b) => a.location.start.line - b.location.start.line || a.location.start.column - b.location.start.column);
      for (const m of survivors) {
        const line = m.location.start.line;
        const text = lines[line - 1] ?? '';
        const why = reasonOf(notes, short, text, m);
        if (why === undefined) unexplained.push(`${short}:${line} ${m.mutatorName} → ${m.replacement ?? ''} (${text.trim().slice(0, 100)})`);
        // The mutated code itself (the rest of its first line when it spans several).
        const { start, end } = m.location;
        const original = start.line === end.line ? text.slice(start.column - 1, end.column - 1) : `${text.slice(start.column - 1)} …`;
        rows.push(
          `| ${short}:${line} | ${m.mutatorName} | \`${cell(original, 60)}\` → \`${cell(m.replacement ?? '', 50)}\` | ${m.status} | ${why ?? '**not yet analysed**'} |`,
        );
      }
    }
    totalSeconds += run.seconds;
    totalFullSeconds += lastFullRun(name)?.seconds ?? 0;
    const score = groupDetected + groupUndetected === 0 ? '–' : `${((100 * groupDetected) / (groupDetected + groupUndetected)).toFixed(1)}%`;
    const full = lastFullRun(name);
    const fullText = full === undefined ? '– (see note)' : minutes(full.seconds);
    const how = [run.incremental ? 'incremental' : '', run.concurrency === 1 ? '1 worker' : ''].filter((x) => x !== '').join(', ');
    groupRows.push(`| ${name} | ${files.join(', ')} | ${groupMutants} | ${fullText} | ${minutes(run.seconds)}${how === '' ? '' : ` (${how})`} | ${score} |`);
  }
  const score = detected + undetected === 0 ? 0 : (100 * detected) / (detected + undetected);
  const text = [
    '# Mutation testing of @ampcors/core',
    '',
    'Generated by `pnpm mutation` (test/security/mutation.ts): StrykerJS 10 with the vitest runner, `coverageAnalysis: perTest`,',
    '`ignoreStatic`, one group of source files at a time. Tests: test/security/vitest.mutation.config.ts — every core test but',
    '`differential` and `properties`, plus test/security/{corpus-verify,caches-faults}, packages/core/test/security/*; fast-check',
    'properties run at most `AMPCORS_PROPERTY_RUNS` (100) times with a fixed seed. Reasons for survivors: test/security/mutation-notes.json.',
    '',
    'Score = (killed + timeout) / (killed + timeout + survived + no coverage). Target ≥ 85%.',
    '',
    `**Score: ${score.toFixed(1)}%** (${detected} detected, ${undetected} undetected)${missing.length > 0 ? ` — not measured: ${missing.join(', ')}` : ', every source file of core measured'}.`,
    '',
    '## Groups',
    '',
    '"Last full run": the last run that tested every mutant of the group; "last run" may be incremental (`--incremental`: only mutants',
    'whose code or covering tests changed are tested again). Times are wall-clock on a 2-core machine shared with other work.',
    '',
    `Groups run one after another, ${concurrencyUsed()} test workers unless the row says otherwise; last runs ${minutes(totalSeconds)} in all, last full runs ${minutes(totalFullSeconds)}.`,
    '',
    '| group | files | mutants | last full run | last run | score |',
    '|---|---|---|---|---|---|',
    ...groupRows,
    ...(groupsWithoutFullRun().length > 0 ? ['', ...groupsWithoutFullRun().map((line) => `- ${line}`)] : []),
    '',
    '## Files',
    '',
    '| file | group | mutants | killed | timeout | survived | no coverage | ignored (static) | score |',
    '|---|---|---|---|---|---|---|---|---|',
    ...perFile,
    '',
    '## How to rerun',
    '',
    '```sh',
    'pnpm mutation                                   # every group, at most 30 min each (Node 22 fetched through npx on Node 20)',
    'pnpm mutation -- --group decision,prefix        # some groups; MUTATION.md still lists all of them',
    'pnpm mutation -- --incremental                  # reuse results of mutants whose code and tests did not change',
    'pnpm mutation -- --report-only                  # rewrite this file from reports/mutation/*.json',
    'AMPCORS_PROPERTY_RUNS=1000 pnpm mutation        # stronger (slower) property tests',
    '```',
    '',
    '## Surviving mutants',
    '',
    '| where | mutator | mutation | status | why it survives |',
    '|---|---|---|---|---|',
    ...rows,
    '',
  ].join('\n');
  writeFileSync(outFile, text);
  console.log(
    `mutation: score ${score.toFixed(1)}% (${detected}/${detected + undetected}), ${rows.length} surviving, ${unexplained.length} not analysed; wrote ${outFile}`,
  );
  if (unexplained.length > 0) console.log(`mutation: not analysed:\n  ${unexplained.join('\n  ')}`);
}

checkGroups();
mkdirSync(reportDir, { recursive: true });
if (!process.argv.includes('--report-only')) {
  const limit = numberOption('--minutes-per-group', 30);
  const concurrency = numberOption('--concurrency', 2);
  const incremental = process.argv.includes('--incremental');
  const only = option('--group')?.split(',');
  for (const name of only ?? []) if (!(name in GROUPS)) throw new Error(`mutation: no group ${name} (groups: ${Object.keys(GROUPS).join(', ')})`);
  for (const [name, files] of Object.entries(GROUPS)) if (only === undefined || only.includes(name)) runGroup(name, files, limit, incremental, concurrency);
}
writeSummary();
