/**
 * Writes bench/RESULTS.md from one run's figures: the tables and the
 * Targets verdicts are computed here; every sentence of analysis lives in
 * bench/report/RESULTS.template.md and bench/report/fragments.md, filled
 * by {@link fill}.
 */
import { existsSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import type { BuildResult } from './allow-set-build.js';
import { BENCH_ROOT } from './cli.js';
import type { ProfileSummary } from './cpu-profile.js';
import { type HttpCell, type HttpResult, httpCellOf, httpCpuDifference, httpRatio } from './http.js';
import { type ConfigName, type Framework, frameworkOf, KINDS, PEER_OF, REQUEST_ORIGIN, REQUESTS, type RequestKind } from './http/configs.js';
import {
  added,
  addedRounds,
  addsDifference,
  cellOf,
  type InProcessResult,
  type ProfiledCase,
  processesOf,
  roundProcesses,
  roundSchedule,
} from './in-process.js';
import { findCase, floorOf, type MicroResult, nsOf, ratio, ratios } from './micro.js';
import type { MicroCase } from './micro-worker.js';
import type { CompactFigures } from './scale.js';
import { type Agreement, agreement, byProcess, fUpperQuantile, median, processesBehindVerdict, processSpread, type Spread, spread } from './stats.js';

/** When and where a run happened. */
export interface RunMeta {
  readonly generatedAt: string;
  readonly commit: string;
  readonly machine: string;
  readonly loadStart: string;
  readonly loadEnd: string;
  readonly elapsedS: number;
  readonly quick: boolean;
  readonly full: boolean;
  readonly pinned: boolean;
}

/** The recorded profiles of the state before the issue-16 changes (bench/profile-before.json). */
export interface ProfileBaseline {
  readonly recordedAt: string;
  readonly commit: string;
  readonly how: string;
  readonly profiles: ProfiledCase[];
}

/** The soak figures another tool wrote (test/security/soak.json), if present. */
export interface Soak {
  readonly path: string;
  readonly date: string;
  readonly rows: Record<string, unknown>[];
}

/** Everything one run measured. */
export interface RunResults {
  readonly meta: RunMeta;
  readonly micro: MicroResult;
  readonly inProcess: InProcessResult;
  readonly builds: BuildResult[];
  readonly compact: CompactFigures;
  readonly http: HttpResult;
  readonly soak: Soak | string;
  readonly before: ProfileBaseline | null;
}

const REPORT_DIR = join(BENCH_ROOT, 'report');

const fmt = (value: number, digits = 1): string => (Number.isFinite(value) ? value.toFixed(digits) : '—');
const range = (s: Spread, digits = 2): string => `${fmt(s.median, digits)} (${fmt(s.low, digits)} to ${fmt(s.high, digits)})`;

/** `{{name}}` → `values[name]`; an unknown name is an error (a template and its generator must agree). */
export function fill(template: string, values: Readonly<Record<string, string>>): string {
  return template.replace(/\{\{(\w+)\}\}/g, (_, name: string) => {
    const value = values[name];
    if (value === undefined) throw new Error(`report template: no value for {{${name}}}`);
    return value;
  });
}

/** The fragments of bench/report/fragments.md: `<!-- @name -->` starts one, up to the next. */
function fragments(): Map<string, string> {
  const text = readFileSync(join(REPORT_DIR, 'fragments.md'), 'utf8');
  const out = new Map<string, string>();
  const parts = text.split(/^<!-- @([\w-]+) -->\n/m);
  for (let i = 1; i < parts.length; i += 2) out.set(parts[i] as string, (parts[i + 1] as string).trim());
  return out;
}

/** One row of the Targets table, and the fragment explaining it when missed. */
interface TargetRow {
  readonly target: string;
  readonly measured: string;
  readonly met: boolean | null;
  /** False when fewer than two rounds in three agree with the median: the verdict is then "not resolved", neither met nor missed. */
  readonly resolved?: boolean;
  /** Fragment of report/fragments.md that explains a miss. */
  readonly why?: string;
  /** An in-process row's per-round figures and the worker process of each (absent elsewhere). */
  readonly perRound?: PerRound;
}

/** Per-round figures and the worker process that measured each round. */
interface PerRound {
  readonly values: readonly number[];
  readonly processes: readonly number[];
}

/** {@link PerRound} of an in-process figure of `config`'s rounds; undefined for results of older runs. */
function perRoundOf(result: InProcessResult, config: ConfigName, kind: RequestKind, values: readonly number[]): PerRound | undefined {
  const processes = roundProcesses(result, config, kind);
  return processes === undefined || processes.length !== values.length ? undefined : { values, processes };
}

/** "same sign in k/n rounds" (`than` = "1 µs": on the same side of it). */
function agreeText(a: Agreement, than?: string): string {
  return than === undefined ? `same sign in ${a.agreeing}/${a.rounds} rounds` : `on the same side of ${than} in ${a.agreeing}/${a.rounds} rounds`;
}

/**
 * "; by process a / b / c": the median of a per-round in-process figure in
 * each worker process's rounds (`config`'s processes, shared by every
 * configuration of the run), so that a verdict resting on one process shows;
 * empty with one process.
 */
export function byProcessText(result: InProcessResult, config: ConfigName, kind: RequestKind, values: readonly number[]): string {
  const processes = roundProcesses(result, config, kind);
  if (processes === undefined || values.length !== processes.length || new Set(processes).size < 2) return '';
  return `; by process ${byProcess(values, processes)
    .map((v) => fmt(median(v), 2))
    .join(' / ')}`;
}

/**
 * The verdict column: met or missed only when the run resolves it (at least
 * two rounds in three agree with the median); otherwise "not resolved", with
 * the median's leaning.
 */
export function verdictText(row: Pick<TargetRow, 'met' | 'resolved'>): string {
  if (row.met === null) return 'not measured';
  if (row.resolved === false) return `**not resolved** (median: ${row.met ? 'met' : 'missed'})`;
  return row.met ? '**met**' : '**missed**';
}

function unavailableNote(result: InProcessResult, configs: readonly ConfigName[]): string {
  const reasons = [...new Set(configs.map((c) => result.unavailable[c]).filter((why) => why !== undefined))];
  return reasons.length === 0 ? '' : `not measured: ${reasons.join('; ')}`;
}

/** The ampcors configuration of a framework (Hono: the Fetch adapter around Hono). */
const AMPCORS_OF: Readonly<Record<Framework, ConfigName>> = {
  express: 'express+ampcors',
  koa: 'koa+ampcors',
  fetch: 'fetch+ampcors',
  hono: 'hono+ampcors',
  fastify: 'fastify+ampcors',
};

function targetRows(results: RunResults): TargetRow[] {
  const { inProcess, micro, builds, compact, http } = results;
  const rows: TargetRow[] = [];
  // Ahead of every peer on equal work: in process.
  for (const framework of ['express', 'koa', 'hono', 'fastify'] as const) {
    const own = AMPCORS_OF[framework];
    const peer = PEER_OF[framework] as ConfigName;
    for (const kind of KINDS) {
      const diff = addsDifference(inProcess, own, peer, kind) ?? [];
      const target = `ahead of ${peer.split('+')[1]} on ${framework}, ${kind} (in process)`;
      if (diff.length === 0) {
        rows.push({ target, measured: unavailableNote(inProcess, [own, peer, framework]) || 'no data', met: null });
        continue;
      }
      const ownAdds = added(inProcess, own, kind) as Spread;
      const peerAdds = added(inProcess, peer, kind) as Spread;
      const a = agreement(diff);
      rows.push({
        target,
        measured: `adds ${fmt(ownAdds.median, 2)} µs vs ${fmt(peerAdds.median, 2)} µs; difference ${range(spread(diff))} µs, ${agreeText(a)}${byProcessText(inProcess, own, kind, diff)}`,
        met: a.median < 0,
        resolved: a.resolved,
        why: 'why-peer',
        perRound: perRoundOf(inProcess, own, kind, diff),
      });
    }
  }
  // Ahead of every peer: over HTTP.
  for (const framework of ['express', 'koa', 'hono', 'fastify'] as const) {
    const own = AMPCORS_OF[framework];
    const peer = PEER_OF[framework] as ConfigName;
    for (const kind of KINDS) {
      const r = httpRatio(http, own, kind);
      const p = httpRatio(http, peer, kind);
      const target = `ahead of ${peer.split('+')[1]} on ${framework}, ${kind} (HTTP, server CPU)`;
      if (r === undefined || p === undefined) {
        const why = [...new Set([own, peer].map((c) => http.unavailable[c]).filter((x) => x !== undefined))];
        rows.push({ target, measured: `not measured${why.length > 0 ? `: ${why.join('; ')}` : ''}`, met: null });
        continue;
      }
      // Both ratios exist, so both configurations' cells do.
      const diff = httpCpuDifference(http, own, peer, kind) as number[];
      const ownCell = httpCellOf(http, own, kind) as HttpCell;
      const peerCell = httpCellOf(http, peer, kind) as HttpCell;
      const a = agreement(diff);
      rows.push({
        target,
        measured: `server CPU ${fmt(ownCell.cpuUsPerRequest, 1)} vs ${fmt(peerCell.cpuUsPerRequest, 1)} µs/request; difference ${range(spread(diff))} µs, ${agreeText(a)}; × hello world ${fmt(r.cpu, 3)} vs ${fmt(p.cpu, 3)}`,
        met: a.median < 0,
        resolved: a.resolved,
        why: 'why-http',
      });
    }
  }
  // Deciding costs ≤ 1 µs.
  for (const framework of ['express', 'koa', 'fetch', 'fastify'] as const) {
    const own = AMPCORS_OF[framework];
    const reference = `${framework}+static-headers` as ConfigName;
    for (const kind of KINDS) {
      const diff = addsDifference(inProcess, own, reference, kind) ?? [];
      const target = `deciding ≤ 1 µs: ${own} − static headers, ${kind}`;
      if (diff.length === 0) {
        rows.push({ target, measured: unavailableNote(inProcess, [own, reference]) || 'no data', met: null });
        continue;
      }
      const a = agreement(diff, 1);
      rows.push({
        target,
        measured: `${range(spread(diff))} µs, ${agreeText(a, '1 µs')}${byProcessText(inProcess, own, kind, diff)}`,
        met: a.median <= 1,
        resolved: a.resolved,
        why: 'why-deciding',
        perRound: perRoundOf(inProcess, own, kind, diff),
      });
    }
  }
  // Fetch adapter ≤ 3 µs, and ahead of hono/cors.
  for (const kind of ['get', 'get-source'] as const) {
    const adds = addedRounds(inProcess, 'fetch+ampcors', kind);
    const target = `Fetch adapter adds ≤ 3 µs, allowed ${kind}`;
    if (adds === undefined || adds.length === 0) {
      rows.push({ target, measured: 'no data', met: null });
      continue;
    }
    const a = agreement(adds, 3);
    rows.push({
      target,
      measured: `${range(spread(adds))} µs, ${agreeText(a, '3 µs')}${byProcessText(inProcess, 'fetch+ampcors', kind, adds)}`,
      met: a.median <= 3,
      resolved: a.resolved,
      why: 'why-fetch',
      perRound: perRoundOf(inProcess, 'fetch+ampcors', kind, adds),
    });
  }
  for (const kind of KINDS) {
    const diff = addsDifference(inProcess, 'fetch+ampcors', 'hono+hono/cors', kind) ?? [];
    const target = `Fetch adapter (on the bare Fetch handler) ahead of hono/cors (on Hono), ${kind}`;
    if (diff.length === 0) {
      rows.push({ target, measured: unavailableNote(inProcess, ['hono', 'hono+hono/cors']) || 'no data', met: null });
      continue;
    }
    const a = agreement(diff);
    rows.push({
      target,
      measured: `difference ${range(spread(diff))} µs, ${agreeText(a)}${byProcessText(inProcess, 'fetch+ampcors', kind, diff)}`,
      met: a.median < 0,
      resolved: a.resolved,
      why: 'why-peer',
      perRound: perRoundOf(inProcess, 'fetch+ampcors', kind, diff),
    });
  }
  // Slow paths near the fast path.
  const size = micro.plan.sizes.includes(10_000) ? 10_000 : (micro.plan.sizes[0] as number);
  const sizeLabel = `${size.toLocaleString('en')} set`;
  const slow: [string, string, number][] = [
    ['wildcard-rule cache origin (ASCII)', 'hand-written ASCII reverse: wildcard-rule cache origin (ASCII)', 2],
    ["unknown publisher's cache origin (ASCII)", "hand-written ASCII reverse: unknown publisher's cache origin (ASCII)", 2],
    ['wildcard-rule cache origin (IDN)', 'hand-written ASCII reverse: wildcard-rule cache origin (ASCII)', 5],
    ["unknown publisher's cache origin (IDN)", "hand-written ASCII reverse: unknown publisher's cache origin (ASCII)", 5],
  ];
  for (const [name, yardstick, limit] of slow) {
    const c = findCase(micro, name, size);
    const y = findCase(micro, yardstick, size);
    const target = `verify, ${name}, first sight, ≤ ${limit}× the hand-written ASCII reverse (${sizeLabel})`;
    if (c === undefined || y === undefined) {
      rows.push({ target, measured: 'no data', met: null });
      continue;
    }
    const r = ratio(c, y);
    const a = agreement(ratios(c, y), limit);
    // The same inputs repeated (a few origins, what a memo serves), shown beside the target's figure.
    const again = findCase(micro, `${name}, repeated`, size);
    const yAgain = findCase(micro, `${yardstick}, repeated`, size);
    const repeated = again === undefined || yAgain === undefined ? '' : `; repeated: ${fmt(nsOf(again), 0)} ns, ${fmt(ratio(again, yAgain).median, 1)}×`;
    rows.push({
      target,
      measured: `${fmt(nsOf(c), 0)} ns vs ${fmt(nsOf(y), 0)} ns: ${fmt(r.median, 1)}× (rounds ${fmt(r.low, 1)}–${fmt(r.high, 1)}×)${repeated}`,
      met: a.median <= limit,
      resolved: a.resolved,
      why: 'why-slow',
    });
  }
  const offending = Object.entries(micro.asciiPath.offending);
  rows.push({
    target: 'no punycode or SHA-256 on the ASCII path',
    measured:
      offending.length === 0
        ? `no punycode, tr46 or SHA-256 frame in ${micro.asciiPath.samples.toLocaleString('en')} profiler samples of the two ASCII slow paths`
        : `${offending.reduce((sum, [, n]) => sum + n, 0)} of ${micro.asciiPath.samples.toLocaleString('en')} samples in ${offending.map(([name]) => `\`${name}\``).join(', ')}`,
    met: offending.length === 0,
    why: 'why-slow',
  });
  // Scale.
  const verifier1m = builds.find((b) => b.domains === 1_000_000 && b.what === 'verifier');
  if (verifier1m !== undefined) {
    rows.push({
      target: 'createVerifier, 1M domains × 2 caches, ≤ 2.5 s',
      measured: `${fmt(verifier1m.cpuMs / 1e3, 2)} s CPU (${fmt(verifier1m.wallMs / 1e3, 2)} s wall), ${verifier1m.origins.toLocaleString('en')} cache origins`,
      met: verifier1m.cpuMs <= 2_500,
      why: 'why-scale',
    });
    rows.push({
      target: 'createVerifier, 1M domains, ≤ 120 MB retained',
      measured: `${fmt(verifier1m.heapBytes / 1e6, 1)} MB`,
      met: verifier1m.heapBytes <= 120e6,
      why: 'why-scale',
    });
  } else rows.push({ target: 'createVerifier, 1M domains × 2 caches, ≤ 2.5 s and ≤ 120 MB', measured: 'not run in this mode', met: null });
  const tenM = compact.runs.find((r) => r.domains === 10_000_000);
  rows.push(
    tenM === undefined
      ? { target: '10M domains: compact allow-set loaded in ≤ 5 s', measured: 'not measured', met: null }
      : {
          target: '10M domains: compact allow-set loaded in ≤ 5 s',
          measured: `${fmt(tenM.loadCpuMs / 1e3, 2)} s CPU${compact.recorded === undefined ? '' : ` — **recorded ${tenM.measuredAt.slice(0, 10)}, not this run** (a 10M build takes minutes: \`--full\`)`}`,
          met: tenM.loadCpuMs <= 5_000,
          why: 'why-compact',
        },
  );
  const repeated = compact.runs.find((r) => r.domains !== 10_000_000 || compact.recorded === undefined);
  rows.push(
    repeated?.repeatedNs === undefined
      ? { target: 'compact allow-set: verifyOrigin ≤ 2 µs for a repeated origin', measured: 'not measured', met: null }
      : {
          target: 'compact allow-set: verifyOrigin ≤ 2 µs for a repeated origin',
          measured: `${fmt(repeated.repeatedNs / 1e3, 2)} µs (${repeated.domains.toLocaleString('en')}-domain set; a new origin: ${fmt(repeated.allowedNs / 1e3, 2)} µs)`,
          met: repeated.repeatedNs <= 2_000,
          why: 'why-compact',
        },
  );
  // Send only what is needed.
  for (const kind of ['get', 'get-source'] as const) {
    for (const framework of ['express', 'koa', 'hono', 'fastify'] as const) {
      const own = cellOf(inProcess, AMPCORS_OF[framework], kind);
      const peer = cellOf(inProcess, PEER_OF[framework] as ConfigName, kind);
      const target = `an AMP ${kind} answer carries no more headers than ${(PEER_OF[framework] as string).split('+')[1]}'s`;
      if (own === undefined || peer === undefined) {
        rows.push({ target, measured: 'no data', met: null });
        continue;
      }
      const ownNames = corsHeaders(own.answer.headers).map(([n]) => n);
      const peerNames = corsHeaders(peer.answer.headers).map(([n]) => n);
      const extra = ownNames.filter((n) => !peerNames.includes(n));
      rows.push({
        target,
        measured: `${ownNames.length} vs ${peerNames.length} CORS headers${extra.length > 0 ? ` (ampcors also sends ${extra.map((n) => `\`${n}\``).join(', ')})` : ''}`,
        met: ownNames.length <= peerNames.length,
        why: 'why-headers',
      });
    }
  }
  // No regression of the existing targets.
  const floor = floorOf(micro, size);
  for (const [name, limit] of [
    ['allowed cache origin', 2],
    ['hostile 10 kB header', 20],
  ] as const) {
    const c = findCase(micro, name, size);
    if (c === undefined || floor === undefined) continue;
    const r = ratio(c, floor);
    const a = agreement(ratios(c, floor), limit);
    rows.push({
      target: `no regression: verify, ${name} ≤ ${limit}× the Set.has floor (${sizeLabel})`,
      measured: `${fmt(r.median, 2)}× (rounds ${fmt(r.low, 2)}–${fmt(r.high, 2)}×)`,
      met: a.median <= limit,
      resolved: a.resolved,
      why: 'why-regression',
    });
  }
  return rows;
}

/** The CORS headers of an answer (`Access-Control-*`, `AMP-*`, `Vary`), sorted by name. */
function corsHeaders(headers: Readonly<Record<string, string>>): [string, string][] {
  return Object.entries(headers)
    .filter(([name]) => name.startsWith('access-control-') || name.startsWith('amp-') || name === 'vary')
    .sort(([a], [b]) => a.localeCompare(b));
}

/** A header value compared as a set of comma-separated, case-insensitive items. */
function normalized(value: string): string {
  return value
    .split(',')
    .map((v) => v.trim().toLowerCase())
    .filter((v) => v !== '')
    .sort()
    .join(',');
}

function headersSection(result: InProcessResult): string {
  const out: string[] = [];
  for (const kind of KINDS) {
    out.push(
      `**${REQUESTS[kind].label}** (\`${REQUESTS[kind].method} ${REQUESTS[kind].path}\`)`,
      '',
      '| configuration | status | CORS headers sent | missing |',
      '|---|---|---|---|',
    );
    for (const cell of result.cells.filter((c) => c.kind === kind)) {
      const reference = cellOf(result, AMPCORS_OF[frameworkOf(cell.config)], kind) ?? cellOf(result, 'fetch+ampcors', kind);
      const mine = corsHeaders(cell.answer.headers);
      const theirs = reference === undefined ? [] : corsHeaders(reference.answer.headers);
      const sent = mine.map(([name, value]) => {
        const same = theirs.find(([n]) => n === name);
        return `\`${name}: ${value}\`${same === undefined || normalized(same[1]) !== normalized(value) ? ' ✱' : ''}`;
      });
      const missing = theirs.filter(([name]) => !mine.some(([n]) => n === name)).map(([name]) => `\`${name}\``);
      out.push(`| ${cell.config} | ${cell.answer.status} | ${sent.join('<br>') || '—'} | ${missing.join(', ')} |`);
    }
    out.push('');
  }
  return out.join('\n').trim();
}

function inProcessTable(result: InProcessResult): string {
  const lines = [
    '| configuration | request | µs/request: median (lowest to highest round) | adds µs: median (lowest to highest) | adds − static-headers adds, µs | warm-up requests |',
    '|---|---|---:|---:|---:|---:|',
  ];
  for (const cell of result.cells) {
    const adds = cell.config === frameworkOf(cell.config) ? undefined : added(result, cell.config, cell.kind);
    const reference = `${frameworkOf(cell.config)}+static-headers` as ConfigName;
    const overStatic =
      cell.config.endsWith('+static-headers') || cell.config === frameworkOf(cell.config)
        ? []
        : (addsDifference(result, cell.config, reference, cell.kind) ?? []);
    const own = spread(cell.rounds.map((ns) => ns / 1e3));
    out(lines, [
      cell.config,
      cell.kind,
      range(own),
      adds === undefined ? '' : `**${range(adds)}**`,
      overStatic.length === 0 ? '' : fmt(median(overStatic), 2),
      cell.warmUpOps.toLocaleString('en'),
    ]);
  }
  for (const [config, why] of Object.entries(result.unavailable)) out(lines, [config, '—', `not run: ${why}`, '', '', '']);
  return lines.join('\n');
}

/**
 * How the in-process figures spread between the worker processes and within
 * them: a sentence over every cell (µs per request) and a table of the
 * per-round figures the in-process targets are judged on.
 */
function processSection(
  result: InProcessResult,
  rows: readonly TargetRow[],
  fragment: (name: string, values?: Readonly<Record<string, string>>) => string,
): string {
  const cells = result.cells.flatMap((cell) => {
    const s =
      cell.processes === undefined
        ? undefined
        : processSpread(
            cell.rounds.map((ns) => ns / 1e3),
            cell.processes,
          );
    // The median F of processes alike, for this cell's own numbers of processes and rounds.
    return s === undefined ? [] : [{ ...s, nullF: fUpperQuantile(0.5, s.medians.length - 1, cell.rounds.length - s.medians.length) }];
  });
  const judged = rows.flatMap((row) => {
    const s = row.perRound === undefined ? undefined : processSpread(row.perRound.values, row.perRound.processes);
    return s === undefined ? [] : [{ row, s }];
  });
  if (cells.length === 0 || judged.length === 0) return fragment('process-spread-none');
  const significant = (list: readonly { readonly p: number }[]): string => String(list.filter((x) => x.p < 0.05).length);
  const lines = [
    fragment('process-spread', {
      layout: severalProcessesText(result),
      cells: String(cells.length),
      cellsMedianF: fmt(median(cells.map((c) => c.f)), 2),
      nullMedianF: fmt(median(cells.map((c) => c.nullF)), 2),
      cellsSignificant: significant(cells),
      cellsExpected: fmt(cells.length / 20, 1),
      figures: String(judged.length),
      figuresMedianF: fmt(median(judged.map((j) => j.s.f)), 2),
      figuresSignificant: significant(judged.map((j) => j.s)),
      figuresExpected: fmt(judged.length / 20, 1),
      withinSd: fmt(median(judged.map((j) => j.s.withinSd)), 2),
      betweenSd: fmt(median(judged.map((j) => j.s.betweenSd)), 2),
    }),
    '',
    '| target (per-round figure) | by process: medians, µs | within-process SD, µs | SD of the process means, µs | F | p |',
    '|---|---:|---:|---:|---:|---:|',
  ];
  for (const { row, s } of judged)
    out(lines, [
      row.target,
      s.medians.map((m) => fmt(m, 2)).join(' / '),
      fmt(s.withinSd, 2),
      fmt(s.betweenSd, 2),
      fmt(s.f, 2),
      s.p < 0.05 ? `**${fmt(s.p, 3)}**` : fmt(s.p, 3),
    ]);
  return lines.join('\n');
}

/** Display names of the frameworks, for the method's sentences. */
const FRAMEWORK_NAMES: Readonly<Record<Framework, string>> = { express: 'Express', koa: 'Koa', fetch: 'Fetch', hono: 'Hono', fastify: 'Fastify' };

/** The run's configurations grouped by their number of worker processes, most first: [count, frameworks]. */
function processGroups(result: InProcessResult): [number, Framework[]][] {
  const groups = new Map<number, Framework[]>();
  const configs = result.plan.configs.length > 0 ? result.plan.configs : [...new Set(result.cells.map((c) => c.config))];
  for (const config of configs) {
    const n = processesOf(config, result.plan);
    const list = groups.get(n) ?? [];
    if (!list.includes(frameworkOf(config))) list.push(frameworkOf(config));
    groups.set(n, list);
  }
  return [...groups.entries()].sort((a, b) => b[0] - a[0]);
}

/** "1 per configuration", or "3 per configuration of Express and Fetch, 1 per other configuration". */
export function workersText(result: InProcessResult): string {
  const groups = processGroups(result);
  if (groups.length <= 1) return `${groups[0]?.[0] ?? result.plan.processes ?? 1} per configuration`;
  const named = groups.slice(0, -1).map(([n, frameworks]) => `${n} per configuration of ${frameworks.map((f) => FRAMEWORK_NAMES[f]).join(' and ')}`);
  return `${named.join(', ')}, ${(groups[groups.length - 1] as [number, Framework[]])[0]} per other configuration`;
}

/** Which configurations ran in several processes, and how many rounds each process ran. */
function severalProcessesText(result: InProcessResult): string {
  const groups = processGroups(result).filter(([n]) => n > 1);
  const all = processGroups(result).length === 1;
  return groups
    .map(
      ([n, frameworks]) =>
        `${all ? 'Every configuration' : `Every configuration of ${frameworks.map((f) => FRAMEWORK_NAMES[f]).join(' and ')}`} ran in ${n} worker processes, ${fmt(result.plan.rounds / n, 0)} rounds each`,
    )
    .join('; ');
}

/** The sentence on what the verdict rule implies for the processes' medians (empty with one process per configuration). */
function verdictByProcess(result: InProcessResult, fragment: (name: string, values?: Readonly<Record<string, string>>) => string): string {
  const texts = processGroups(result)
    .filter(([processes]) => processes > 1)
    .map(([processes]) => {
      const roundsEach = roundSchedule(result.plan.rounds, processes).reduce<number[]>((counts, r) => {
        if (r.round >= 0) counts[r.process] = (counts[r.process] ?? 0) + 1;
        return counts;
      }, []);
      const each = [...new Set(roundsEach)];
      const behind = processesBehindVerdict(roundsEach);
      const text = fragment('process-verdict', {
        processes: String(processes),
        roundsEach: each.length === 1 ? String(each[0]) : `${Math.min(...each)}–${Math.max(...each)}`,
        behind: String(behind),
      });
      return 2 * behind > processes ? `${text} ${fragment('process-verdict-majority')}` : text;
    });
  return texts.join(' ');
}

function out(lines: string[], cells: readonly string[]): void {
  lines.push(`| ${cells.join(' | ')} |`);
}

function profileSection(after: readonly ProfiledCase[], before: ProfileBaseline | null): string {
  const sections: string[] = [];
  const configs = [...new Set([...after.map((p) => p.config), ...(before?.profiles ?? []).map((p) => p.config)])];
  for (const config of configs) {
    const now = after.find((p) => p.config === config)?.summary;
    const then = before?.profiles.find((p) => p.config === config)?.summary;
    sections.push(`**${config}** (all three request kinds)`, '');
    const groups = [...new Set([...(then?.groups ?? []), ...(now?.groups ?? [])].map((g) => g.name))];
    const share = (summary: ProfileSummary | undefined, name: string): string => {
      const row = summary?.groups.find((g) => g.name === name);
      return row === undefined ? '' : `${fmt(row.share * 100, 1)} %`;
    };
    sections.push('| self time by origin | before | after |', '|---|---:|---:|', ...groups.map((g) => `| ${g} | ${share(then, g)} | ${share(now, g)} |`), '');
    const top = (summary: ProfileSummary | undefined): string[] =>
      (summary?.functions ?? []).slice(0, 10).map((f) => `${fmt(f.share * 100, 1)} % \`${f.name}\``);
    const a = top(then);
    const b = top(now);
    sections.push('| top self-time functions, before | after |', '|---|---|');
    for (let i = 0; i < Math.max(a.length, b.length); i++) sections.push(`| ${a[i] ?? ''} | ${b[i] ?? ''} |`);
    sections.push('');
  }
  return sections.join('\n').trim();
}

function microTable(micro: MicroResult): string {
  const lines = ['| allow-set | case | verdict | ns/op: median (lowest to highest round) | × floor | × yardstick |', '|---:|---|---|---:|---:|---:|'];
  for (const size of micro.plan.sizes) {
    const floor = floorOf(micro, size);
    const yardstickOf = (c: MicroCase): MicroCase | undefined => {
      if (c.group !== 'verify' || !c.name.includes('cache origin (')) return undefined;
      const ascii = c.name.replace('(IDN)', '(ASCII)');
      return findCase(micro, `hand-written ASCII reverse: ${ascii}`, size);
    };
    for (const c of micro.cases.filter((x) => x.size === size)) {
      const own = spread(c.rounds);
      const y = yardstickOf(c);
      out(lines, [
        size.toLocaleString('en'),
        c.group === 'floor' ? `floor: ${c.name}` : c.group === 'yardstick' ? `yardstick: ${c.name.replace('hand-written ASCII reverse: ', '')}` : c.name,
        c.reason ?? '',
        range(own, 1),
        floor === undefined ? '' : fmt(ratio(c, floor).median, 2),
        y === undefined ? '' : fmt(ratio(c, y).median, 1),
      ]);
    }
  }
  return lines.join('\n');
}

function algorithmTable(micro: MicroResult): string {
  const lines = ['| function | ns/op: median (lowest to highest round) |', '|---|---:|'];
  for (const c of micro.cases.filter((x) => x.group === 'algorithm')) out(lines, [c.name, range(spread(c.rounds), 1)]);
  return lines.join('\n');
}

function buildTable(builds: readonly BuildResult[]): string {
  const lines = ['| domains | what | cache origins | CPU ms | wall ms | retained MB (heap + ArrayBuffers) |', '|---:|---|---:|---:|---:|---:|'];
  for (const b of builds) {
    out(lines, [
      b.domains.toLocaleString('en'),
      b.what === 'allow-set' ? '`buildAllowSet`' : '`createVerifier` (rules + allow-set)',
      b.origins.toLocaleString('en'),
      fmt(b.cpuMs, 0),
      fmt(b.wallMs, 0),
      fmt(b.heapBytes / 1e6, 1),
    ]);
  }
  return lines.join('\n');
}

function compactTable(compact: CompactFigures): string {
  const lines = [
    '| domains | prefixes | file bytes | bytes/domain | build CPU s | load CPU ms | loaded set MB | `has(prefix)` ns | `verifyOrigin` allowed ns | denied ns | repeated ns | measured |',
    '|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---|',
  ];
  for (const r of compact.runs) {
    const recorded = r.domains === 10_000_000 && compact.recorded !== undefined;
    out(lines, [
      r.domains.toLocaleString('en'),
      r.prefixes.toLocaleString('en'),
      r.bytes.toLocaleString('en'),
      fmt(r.bytesPerDomain, 2),
      fmt(r.buildCpuMs / 1e3, 1),
      fmt(r.loadCpuMs, 0),
      fmt(r.loadedBytes / 1e6, 1),
      fmt(r.hasNs, 0),
      fmt(r.allowedNs, 0),
      fmt(r.deniedNs, 0),
      r.repeatedNs === undefined ? '—' : fmt(r.repeatedNs, 0),
      recorded ? `recorded ${r.measuredAt.slice(0, 10)}` : 'this run',
    ]);
  }
  return lines.join('\n');
}

/** The HTTP table (also printed by `--http-only`). */
export function httpTable(http: HttpResult): string {
  const lines = [
    '| configuration | request | answered | CPU µs/request: median (rounds) | × hello world (CPU): median (lowest–highest round) | req/s (median) | server core use |',
    '|---|---|---|---:|---:|---:|---:|',
  ];
  for (const c of http.cells) {
    const r = httpRatio(http, c.config, c.kind);
    const answered = `${c.probe.status}${c.probe.allowOrigin === null ? '' : ' + ACAO'}${c.failures > 0 ? `, ${c.failures} failures` : ''}`;
    out(lines, [
      c.config,
      c.kind,
      answered,
      `${fmt(c.cpuUsPerRequest, 1)} (${c.cpuRounds.map((x) => fmt(x, 1)).join(' / ')})`,
      r === undefined ? '' : `**${fmt(r.cpu, 3)}** (${fmt(r.cpuLow, 3)}–${fmt(r.cpuHigh, 3)})`,
      fmt(c.rps, 0),
      `${fmt(100 * c.serverCpuShare, 0)} %`,
    ]);
  }
  for (const [config, why] of Object.entries(http.unavailable)) out(lines, [config, '—', `not run: ${why}`, '', '', '', '']);
  return lines.join('\n');
}

const SOAK_FILE = join(BENCH_ROOT, '..', 'test', 'security', 'soak.json');

/** The soak figures of test/security/soak.json, or why there are none. */
export function readSoak(): Soak | string {
  if (!existsSync(SOAK_FILE)) return 'not run (test/security/soak.json does not exist)';
  try {
    const raw = JSON.parse(readFileSync(SOAK_FILE, 'utf8')) as unknown;
    const record = (typeof raw === 'object' && raw !== null && !Array.isArray(raw) ? raw : {}) as Record<string, unknown>;
    const list = Array.isArray(raw) ? raw : Object.values(record).find((value) => Array.isArray(value));
    if (!Array.isArray(list) || list.length === 0) return 'test/security/soak.json holds no per-adapter rows';
    const rows = list.filter((row): row is Record<string, unknown> => typeof row === 'object' && row !== null);
    const dates = rows
      .map((row) => row.date ?? row.generatedAt)
      .filter((value): value is string => typeof value === 'string')
      .sort();
    const date =
      dates.length > 0 ? `${dates[0]}${dates.length > 1 ? ` to ${dates[dates.length - 1]}` : ''}` : `${statSync(SOAK_FILE).mtime.toISOString()} (file time)`;
    return { path: 'test/security/soak.json', date, rows };
  } catch (error) {
    return `test/security/soak.json is unreadable: ${error instanceof Error ? error.message : String(error)}`;
  }
}

function soakSection(soak: Soak | string): string {
  if (typeof soak === 'string') return `Soak: ${soak}.`;
  const columns = [...new Set(soak.rows.flatMap((row) => Object.keys(row)))].filter((key) =>
    soak.rows.some((row) => typeof row[key] !== 'object' || row[key] === null),
  );
  const text = (value: unknown): string =>
    typeof value === 'number' ? (Number.isInteger(value) ? String(value) : value.toFixed(1)) : value === undefined || value === null ? '' : String(value);
  return [
    `From \`${soak.path}\` (written by the soak run, test/security/soak.ts; dated ${soak.date}), embedded as found:`,
    '',
    `| ${columns.join(' | ')} |`,
    `|${columns.map(() => '---').join('|')}|`,
    ...soak.rows.map((row) => `| ${columns.map((key) => text(row[key])).join(' | ')} |`),
  ].join('\n');
}

/** RESULTS.md of a run. */
export function report(results: RunResults): string {
  const { meta, micro, inProcess, compact, http, before } = results;
  const parts = fragments();
  const fragment = (name: string, values: Readonly<Record<string, string>> = {}): string => {
    const text = parts.get(name);
    if (text === undefined) throw new Error(`report/fragments.md has no fragment @${name}`);
    return fill(text, values);
  };
  const rows = targetRows(results);
  const targets = ['| target | measured | verdict |', '|---|---|---|', ...rows.map((r) => `| ${r.target} | ${r.measured} | ${verdictText(r)} |`)].join('\n');
  const whyNames = [...new Set(rows.filter((r) => (r.met === false || r.resolved === false) && r.why !== undefined).map((r) => r.why as string))];
  const whyMissed = whyNames.length === 0 ? fragment('none-missed') : [fragment('why-heading'), ...whyNames.map((name) => fragment(name))].join('\n\n');
  const warmUp = (ops: number, ms: number): string => `at least ${ops.toLocaleString('en')} operations and ${ms} ms of CPU each`;
  return fill(readFileSync(join(REPORT_DIR, 'RESULTS.template.md'), 'utf8'), {
    mode: meta.quick ? `${fragment('quick')}\n\n` : meta.full ? `${fragment('full')}\n\n` : '',
    generatedAt: meta.generatedAt,
    commit: meta.commit,
    elapsed: fmt(meta.elapsedS, 0),
    machine: meta.machine,
    loadStart: meta.loadStart,
    loadEnd: meta.loadEnd,
    targets,
    whyMissed,
    headers: headersSection(inProcess),
    inProcessWarmUp: warmUp(inProcess.plan.warmUpOps, inProcess.plan.warmUpMs),
    inProcessRounds: String(inProcess.plan.rounds),
    inProcessRoundMs: String(inProcess.plan.roundMs),
    inProcessTable: inProcessTable(inProcess),
    inProcessProcesses: processSection(inProcess, rows, fragment),
    inProcessWorkers: workersText(inProcess),
    inProcessSettle: (inProcess.plan.settleMs ?? 0) > 0 ? fragment('in-process-settle', { settleMs: fmt(inProcess.plan.settleMs ?? 0, 0) }) : '',
    inProcessVerdictByProcess: verdictByProcess(inProcess, fragment),
    beforeCommit: before?.commit ?? '—',
    beforeHow: before?.how ?? 'not recorded',
    beforeDate: before?.recordedAt ?? '—',
    profiles: profileSection(inProcess.profiles, before),
    microWarmUp: warmUp(micro.plan.warmUpOps, micro.plan.warmUpMs),
    microRounds: String(micro.plan.rounds),
    microRoundMs: String(micro.plan.roundMs),
    microTable: microTable(micro),
    asciiPath:
      Object.keys(micro.asciiPath.offending).length === 0
        ? `none in ${micro.asciiPath.samples.toLocaleString('en')} samples (V8 profiler at 20 µs, \`verify\` of the two ASCII slow-path inputs only).`
        : `seen: ${Object.entries(micro.asciiPath.offending)
            .map(([name, n]) => `\`${name}\` ${n}`)
            .join(', ')} of ${micro.asciiPath.samples.toLocaleString('en')} samples (V8 profiler at 20 µs, \`verify\` of the two ASCII slow-path inputs only).`,
    algorithmTable: algorithmTable(micro),
    buildTable: buildTable(results.builds),
    compactRecorded: compact.recorded === undefined ? '' : ` The 10M row is not from this run (its build takes minutes): ${compact.recorded}.`,
    compactTable: compactTable(compact),
    pipelining: String(http.pipelining),
    httpSeconds: String(http.seconds),
    httpRounds: String(http.rounds),
    httpWarmUp: http.warmUpRequests.toLocaleString('en'),
    pinning: meta.pinned ? 'Servers pinned to one core with `taskset`, the load generator on the other.' : 'Nothing pinned (taskset unavailable).',
    requestOrigin: REQUEST_ORIGIN,
    httpTable: httpTable(http),
    soak: soakSection(results.soak),
  });
}
