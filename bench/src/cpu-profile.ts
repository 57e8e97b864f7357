/**
 * Sums a V8 CPU profile's self time by origin (ampcors core, an adapter, a
 * package, Node internals, GC) and by function: the "where does the time
 * go" tables of the report and of profile.ts.
 */

/** The parts of a `.cpuprofile` read here. */
export interface CpuProfile {
  readonly nodes: readonly {
    readonly id: number;
    readonly callFrame: { readonly functionName: string; readonly url: string; readonly lineNumber: number };
    readonly children?: readonly number[];
  }[];
  readonly samples: readonly number[];
  readonly timeDeltas: readonly number[];
}

/** One row of a summary: a name and its share of the busy (non-idle) self time. */
export interface ProfileRow {
  readonly name: string;
  readonly share: number;
}

/** A profile reduced to its largest groups and functions. */
export interface ProfileSummary {
  /** Busy self time sampled, µs. */
  readonly busyUs: number;
  readonly groups: ProfileRow[];
  readonly functions: ProfileRow[];
}

/** The group a frame's self time is charged to. */
export function groupOf(url: string, name: string): string {
  if (name === '(garbage collector)') return 'GC';
  if (name === '(idle)') return 'idle';
  if (name === '(program)') return 'V8/native (program)';
  if (name === 'cpuUsage' && url === '') return 'bench harness';
  if (url.includes('/packages/core/')) return 'ampcors core';
  if (/\/packages\/(express|koa|fetch)\//.test(url)) return 'ampcors adapter';
  if (url.includes('/bench/dist/')) return 'bench harness';
  const pkg = /node_modules\/(?:\.pnpm\/[^/]+\/node_modules\/)?((?:@[^/]+\/)?[^/]+)/.exec(url);
  if (pkg) return `package ${pkg[1]}`;
  if (url.startsWith('node:') || url === '') return 'node internals';
  return url;
}

/** A short location: the path from `packages/`, `node_modules/` or `bench/` on, and the line. */
function location(url: string, line: number): string {
  const short = url.replace(/^.*\/node_modules\/\.pnpm\/[^/]+\/node_modules\//, '').replace(/^.*\/(packages|bench)\//, '$1/');
  return short === '' ? '' : `${short}:${line + 1}`;
}

/** Nodes under a call of node:inspector's `post` (stopping the profiler builds the profile): not the measured code's time. */
function profilerNodes(profile: CpuProfile): Set<number> {
  const skipped = new Set<number>();
  const byId = new Map(profile.nodes.map((n) => [n.id, n]));
  const mark = (id: number): void => {
    skipped.add(id);
    for (const child of byId.get(id)?.children ?? []) mark(child);
  };
  for (const n of profile.nodes) if (n.callFrame.functionName === 'post' && n.callFrame.url === 'node:inspector') mark(n.id);
  return skipped;
}

/** Self time by group and by function (top `top` of each), as shares of the busy time. */
export function summarize(profile: CpuProfile, top: number): ProfileSummary {
  const byId = new Map(profile.nodes.map((n) => [n.id, n.callFrame]));
  const skipped = profilerNodes(profile);
  const selfUs = new Map<number, number>();
  profile.samples.forEach((id, i) => {
    if (!skipped.has(id)) selfUs.set(id, (selfUs.get(id) ?? 0) + (profile.timeDeltas[i] ?? 0));
  });
  const groups = new Map<string, number>();
  const functions = new Map<string, number>();
  let busy = 0;
  for (const [id, us] of selfUs) {
    const frame = byId.get(id);
    if (frame === undefined) continue;
    const group = groupOf(frame.url, frame.functionName);
    if (group === 'idle') continue;
    busy += us;
    groups.set(group, (groups.get(group) ?? 0) + us);
    const where = location(frame.url, frame.lineNumber);
    const key = `${frame.functionName || '(anonymous)'}${where === '' ? '' : ` ${where}`}`;
    functions.set(key, (functions.get(key) ?? 0) + us);
  }
  const rows = (map: Map<string, number>): ProfileRow[] =>
    [...map]
      .sort((a, b) => b[1] - a[1])
      .slice(0, top)
      .map(([name, us]) => ({ name, share: busy === 0 ? 0 : us / busy }));
  return { busyUs: busy, groups: rows(groups), functions: rows(functions) };
}
