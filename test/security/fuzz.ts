/**
 * `pnpm fuzz`: at least 1M random and mutated inputs per entry point of
 * @ampcors/core and per adapter (in process, fuzz-adapters.ts), in three
 * adapter modes (publisher, drop-in origin options, AMP for Email), each
 * entry point bounded in time; prints counts, progress and findings, updates
 * test/security/FUZZ.md (the rows of the entry points run; the others are
 * kept), exits 1 on any finding or when an entry point stops short of the
 * count.
 *
 * Usage: tsx test/security/fuzz.ts [--count N] [--seconds S per entry point] [--seed N]
 *        [--only name-or-group[,…]] [--no-write] [--help]
 * Groups: core, adapters (publisher mode), dropin, email.
 */
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { adapterFuzzTargets, dropInFuzzTargets, emailFuzzTargets } from './fuzz-adapters.js';
import { type AsyncFuzzTarget, fuzz, fuzzAsync, type FuzzResult, type FuzzTarget, fuzzTargets } from './fuzz-engine.js';

const USAGE = `Usage: tsx test/security/fuzz.ts [options]
  --count N        inputs per entry point (default 1000000)
  --seconds S      time bound per entry point (default 600)
  --seed N         seed (default: from the clock)
  --only LIST      comma-separated entry points or groups: core, adapters, dropin, email
  --no-write       do not update test/security/FUZZ.md
  --help           this text`;

if (process.argv.includes('--help')) {
  console.log(USAGE);
  process.exit(0);
}

function option(name: string, fallback: number): number {
  const index = process.argv.indexOf(name);
  if (index < 0) return fallback;
  const value = Number(process.argv[index + 1]);
  if (!Number.isSafeInteger(value) || value < 0) throw new Error(`${name} needs a whole number`);
  return value;
}

const count = option('--count', 1_000_000);
const seconds = option('--seconds', 600);
const seed = option('--seed', Date.now() & 0x7fffffff);
const onlyIndex = process.argv.indexOf('--only');
const only = onlyIndex < 0 ? undefined : (process.argv[onlyIndex + 1] ?? '').split(',');
const write = !process.argv.includes('--no-write');

type Group = 'core' | 'adapters' | 'dropin' | 'email';
const groups: Array<[Group, Array<FuzzTarget<unknown> | AsyncFuzzTarget<unknown>>, boolean]> = [
  ['core', fuzzTargets(), false],
  ['adapters', adapterFuzzTargets() as AsyncFuzzTarget<unknown>[], true],
  ['dropin', dropInFuzzTargets() as unknown as AsyncFuzzTarget<unknown>[], true],
  ['email', emailFuzzTargets() as AsyncFuzzTarget<unknown>[], true],
];
const known = new Set(groups.flatMap(([group, targets]) => [group, ...targets.map((t) => t.name)]));
const unknown = only?.filter((name) => !known.has(name)) ?? [];
if (unknown.length > 0) {
  console.error(`unknown entry point or group: ${unknown.join(', ')}\n${USAGE}`);
  process.exit(2);
}
const wanted = (group: Group, name: string) => only === undefined || only.includes(group) || only.includes(name);

console.log(`fuzz: up to ${count} inputs per entry point, at most ${seconds} s each, seed ${seed}, Node ${process.version}`);
const started = Date.now();
const results: FuzzResult[] = [];
const progress = (name: string) => (inputs: number, elapsed: number) =>
  console.log(`  ${name.padEnd(16)} ${String(inputs).padStart(9)} inputs, ${elapsed.toFixed(0)} s, ${Math.round(inputs / elapsed)}/s`);

function outcomesText(result: FuzzResult): string {
  return Object.entries(result.outcomes)
    .map(([key, n]) => `${key} ${n}`)
    .join(', ');
}

function report(result: FuzzResult): void {
  results.push(result);
  const rate = Math.round(result.inputs / result.seconds);
  console.log(
    `${result.name.padEnd(16)} ${String(result.inputs).padStart(9)} inputs (${result.random} random, ${result.mutated} mutated) in ${result.seconds.toFixed(1)} s, ${rate}/s, ${result.findings.length} findings${result.inputs < count ? ' — time bound reached' : ''}`,
  );
  console.log(`  outcomes: ${outcomesText(result)}`);
  for (const { finding, input } of result.findings) console.log(`  FINDING ${finding}\n    input ${input}`);
}

// An unhandled rejection or exception would stop a server: a finding of the entry point running, not a crash of the run.
const escaped: string[] = [];
const escape = (error: unknown) => escaped.push(error instanceof Error ? `${error.name}: ${error.message}` : String(error));
process.on('unhandledRejection', escape);
process.on('uncaughtException', escape);

for (const [group, targets, async] of groups) {
  for (const target of targets) {
    if (!wanted(group, target.name)) continue;
    escaped.length = 0;
    const result = async
      ? await fuzzAsync(target as AsyncFuzzTarget<unknown>, count, seconds, seed, progress(target.name))
      : fuzz(target as FuzzTarget<unknown>, count, seconds, seed, progress(target.name));
    const distinct = [...new Set(escaped)]
      .slice(0, 5)
      .map((what) => ({ finding: `escaped the adapter (would stop the process): ${what}`, input: `(${escaped.filter((e) => e === what).length} times)` }));
    report(distinct.length === 0 ? result : { ...result, findings: [...result.findings, ...distinct] });
  }
}

const failed = results.some((r) => r.findings.length > 0 || r.inputs < count);
const minutes = (Date.now() - started) / 60_000;
const today = new Date().toISOString().slice(0, 10);

// FUZZ.md keeps one row per entry point, each with its own seed and date: rows of the entry points not run now stay as they were.
const FUZZ_MD = fileURLToPath(new URL('./FUZZ.md', import.meta.url));
interface Row {
  readonly name: string;
  readonly line: string;
  readonly findings: readonly string[];
}
// The hand-written history (runs on earlier code, what they found) is kept as it is, after the generated part.
const HISTORY = '\n## History\n';
const previousText = existsSync(FUZZ_MD) ? readFileSync(FUZZ_MD, 'utf8') : '';
const historyAt = previousText.indexOf(HISTORY);
const history = historyAt < 0 ? undefined : previousText.slice(historyAt + 1).trimEnd();
function previousRows(): Row[] {
  const text = historyAt < 0 ? previousText : previousText.slice(0, historyAt);
  // Rows written before the seed and date columns existed take them from the old header.
  const oldSeed = /Seed (\d+)/.exec(text)?.[1] ?? '?';
  const oldDate = / on (\d{4}-\d\d-\d\d),/.exec(text)?.[1] ?? '?';
  const rows: Row[] = [];
  for (const line of text.split('\n')) {
    if (!line.startsWith('| ') || line.startsWith('| entry point')) continue;
    const cells = line.slice(2, -2).split(' | ');
    const name = cells[0] as string;
    const full = cells.length === 8 ? [...cells.slice(0, 7), oldSeed, oldDate, cells[7] as string] : cells;
    rows.push({ name, line: `| ${full.join(' | ')} |`, findings: text.split('\n').filter((l) => l.startsWith(`- ${name}: `)) });
  }
  return rows;
}
const fresh: Row[] = results.map((r) => ({
  name: r.name,
  line: `| ${r.name} | ${r.inputs} | ${r.random} | ${r.mutated} | ${r.seconds.toFixed(1)} | ${Math.round(r.inputs / r.seconds)} | ${r.findings.length}${r.inputs < count ? ' (time bound reached)' : ''} | ${seed} | ${today} | ${outcomesText(r)} |`,
  findings: r.findings.map(({ finding, input }) => `- ${r.name}: ${finding}; input \`${input.replaceAll('`', "'")}\``),
}));
const order = groups.flatMap(([, targets]) => targets.map((t) => t.name));
const byName = new Map<string, Row>([...previousRows().map((row) => [row.name, row] as const), ...fresh.map((row) => [row.name, row] as const)]);
const rows = [...byName.values()].sort((a, b) => order.indexOf(a.name) - order.indexOf(b.name));
const findings = rows.flatMap((row) => row.findings);
const md = [
  '# Fuzzing ampcors',
  '',
  `Generated by \`pnpm fuzz\` (test/security/fuzz.ts), Node ${process.version}, ${process.platform}/${process.arch}, on a shared 2-core machine`,
  '(other jobs were running). Each row carries its seed and date (rerun with `--seed N --only <entry point>`); a run',
  'updates the rows of the entry points it ran and keeps the others. The last run asked',
  `${count} inputs per entry point, each bounded to ${seconds} s (${results.map((r) => r.name).join(', ') || 'none'}; ${minutes.toFixed(1)} min).`,
  '',
  'Inputs alternate: a random one (random octets, random UTF-16 including lone surrogates, printable ASCII, or a mosaic of',
  'origin fragments such as `xn--`, `0-`, `.cdn.ampproject.org`, `%2e`, soft hyphens, full-width dots), then a mutated one',
  '(a corpus origin, an allowed cache origin or a URL with 1–4 flips, inserts, deletions, duplications, case changes,',
  'splices; or, one in three, an origin generated for a random domain, often under the `*.example.org` wildcard: its',
  'publisher origin or a cache origin with one of its prefixes on a real or look-alike cache, as is or with 1–3 mutations).',
  'Origins are judged for the corpus configuration (test/security/corpus.ts). `loadAllowSet` gets bytes: random, random',
  'behind a valid header and checksum, or compiled sets with 1–4 byte',
  'mutations (header bytes as often as the rest), three in four with the checksum recomputed so the parser behind it runs.',
  'The adapters get requests (method, `Origin`, `AMP-Same-Origin`, `Access-Control-Request-Method`/`-Headers`,',
  '`__amp_source_origin`) with values as an HTTP parser delivers them, through real Express 5/4 and Koa 3/2 applications',
  '(real `node:http` request and response objects, no socket) and the Fetch adapter (real `Request`/`Response`).',
  '',
  'A finding is a throw other than `AmpCorsError` (any throw where the API promises none, or a verdict hiding one),',
  'an allowed origin that is not derived from the allowed set (checked against an oracle computed without @ampcors/core:',
  'node:url IDNA, node:crypto SHA-256, a local base32), a broken invariant (parseOrigin accepts only what it prints back,',
  'canonicalDomain is idempotent, a readable prefix reverses to its domain, a reversed domain forward-computes to its',
  'prefix, a compact allow-set agrees with the verifier on cache origins), or an adapter answer that differs from the',
  'core verdict (status, `Access-Control-Allow-Origin`, credentials, source-origin header, `Vary`, handler run) or an error.',
  '',
  'Drop-in mode (`dropin-*`, issue #14): each input is a random `cors` (Express) or `@koa/cors` (Koa) origin option and a',
  'request. Options are built from blocks whose meaning (what they allow, which origins their author named, whether they',
  'allow origins nobody named) is written out by hand in fuzz-adapters.ts: exact origins, precise and broad RegExps',
  "(`/.*/`, `/./`, `/^https:\\/\\//`, `/\\.com$/`, `/\\.cdn\\.ampproject\\.org$/`, a `g` flag), `true`, `false`, `'*'`, arrays of",
  "them, and origin functions (listed origins; `cb(null, true)`, `cb(null, origin)`, `'*'`, a RegExp answer; erroring or",
  "throwing for unlisted origins; one that allows everything once armed after construction; the `@koa/cors` README's",
  "`ctx.get('Origin') || '*'`), answering now, on the next turn or through a Promise, with credentials on, off (and a",
  "credentials function for Koa), one in four beside `publishers: ['example.com']` (whose publisher and cache origins",
  'the independent oracle confirms). A finding is credentials paired with an origin the author never named, an origin',
  'allowed that the option does not allow, a source-origin header the option does not vouch for, a reflect-all option',
  'known at construction accepted with credentials (or a precise one refused), or an error that is neither an',
  "`AmpCorsError` `unsafe-configuration` nor the user function's own.",
  '',
  'AMP for Email mode (`email-*`, issue #14): the corpus configuration plus `email.senders`; random `AMP-Email-Sender`',
  '(configured senders, case variants, the KELVIN SIGN, lists, garbage, random bytes), `__amp_source_origin` (senders or',
  'origins) and `Origin` (webmail origins, publisher and cache origins, look-alikes, random). A finding is',
  '`Access-Control-Allow-Origin` with credentials to an origin that neither the independent oracle trusts nor, for a',
  "trusted v1 sender, a webmail origin of the oracle's own list (Gmail, Yahoo Mail, Mail.ru, Outlook), a sender echoed in",
  '`AMP-Email-Allow-Sender` that is not configured (ASCII case only), a source-origin header that is neither a trusted v1',
  'sender nor an allowed publisher origin, a denied POST/PUT that ran the handler, or any error (a 500).',
  '',
  'Outcomes count what the inputs reached (verdicts, or `returned`/`refused` for functions that throw `AmpCorsError` on bad',
  'input), to show that the allowed paths and the parsers behind the checksum were exercised, not only early refusals.',
  '',
  'Not checked, by design: the readable prefix of a domain `0.…-0` (first label `0`, last label ending in `-0`) reads as a',
  '`0-…-0` wrap, so it does not reverse to the domain ([spec §4 step 4](../../docs/spec.md#4-reverse-origin-to-publisher-domain); the verifier denies it, fail closed). No real TLD ends',
  "in `-0`, and exactly listed domains are matched without reversing. Example: `domainPrefix('0.a-0')` is `0-a--0`. Nor",
  'does a domain whose last label cannot be a top-level domain (neither letters only nor an A-label: `example.org0`) reverse:',
  'such a domain cannot exist, so no cache origin is read as its (fail closed). `reverseOrigin` is checked against every',
  'claimant it names, each of which must give the prefix under a readable algorithm (`readablePrefixForms`).',
  '',
  '| entry point | inputs | random | mutated | seconds | inputs/s | findings | seed | date | outcomes |',
  '|---|---|---|---|---|---|---|---|---|---|',
  ...rows.map((row) => row.line),
  '',
  ...(findings.length > 0 ? ['## Findings', '', ...findings, ''] : ['No findings.', '']),
  ...(history === undefined ? [] : [history, '']),
].join('\n');
if (write) writeFileSync(FUZZ_MD, md);
process.exit(failed ? 1 : 0);
