// Measures compact allow-sets (issue #5): bytes per domain, build time, load
// time and lookup time for synthetic publisher lists. Not part of the test
// suite. Run from the repository root:
//
//   npx tsx packages/cli/scripts/measure-allow-set.ts [count ...]   (default 1000000)
//   npx tsx packages/cli/scripts/measure-allow-set.ts 1000000 10000000
//
// The domains are generated on the fly (never held as strings): 90% plain
// two- or three-label ASCII names, 5% IDN names (several prefix forms each),
// 5% names too long for a readable prefix (hashed forms).
import { createAllowSetBuilder, loadAllowSet, prefixForms } from '../../core/src/index.js';

const WORDS = ['shop', 'news', 'blog', 'store', 'mail', 'media', 'daily', 'city', 'market', 'travel'];
const TLDS = ['com', 'net', 'org', 'de', 'co.uk', 'fr', 'io', 'shop'];
const IDN = ['münchen', 'café', 'straße', '東京', 'москва', 'ελλάδα'];

/** The i-th synthetic publisher domain. */
function domainAt(i: number): string {
  const word = WORDS[i % WORDS.length] as string;
  const tld = TLDS[Math.floor(i / 7) % TLDS.length] as string;
  const kind = i % 20;
  if (kind === 0) return `${IDN[i % IDN.length]}${i}.${tld}`;
  if (kind === 1) return `${word}-${i}-${'x'.repeat(30)}.${'long-name-'.repeat(3)}${i % 1000}.${tld}`;
  if (kind < 8) return `www.${word}${i}.${tld}`;
  return `${word}${i}.${tld}`;
}

function mib(bytes: number): string {
  return `${(bytes / 2 ** 20).toFixed(1)} MiB`;
}

/** CPU seconds (user + system) used by this process so far: wall time misleads on a shared machine. */
function cpuSeconds(): number {
  const { user, system } = process.cpuUsage();
  return (user + system) / 1e6;
}

function measure(count: number): void {
  console.log(`\n## ${count.toLocaleString('en')} domains`);
  const builder = createAllowSetBuilder();
  const started = performance.now();
  const cpuStarted = cpuSeconds();
  for (let i = 0; i < count; i++) builder.add(domainAt(i));
  const added = performance.now();
  const cpuAdded = cpuSeconds();
  const bytes = builder.build();
  const built = performance.now();
  const cpuBuilt = cpuSeconds();
  console.log(
    `hash + validate: ${((added - started) / 1000).toFixed(1)} s wall, ${(cpuAdded - cpuStarted).toFixed(1)} s CPU (${(((cpuAdded - cpuStarted) * 1e6) / count).toFixed(1)} µs CPU/domain, ${builder.hashCount} prefixes)`,
  );
  console.log(`sort + Rice + checksum: ${((built - added) / 1000).toFixed(1)} s wall, ${(cpuBuilt - cpuAdded).toFixed(1)} s CPU`);
  console.log(`build total: ${((built - started) / 1000).toFixed(1)} s wall, ${(cpuBuilt - cpuStarted).toFixed(1)} s CPU`);
  const set = loadAllowSet(bytes);
  const loaded = performance.now();
  const cpuLoaded = cpuSeconds();
  console.log(
    `file: ${bytes.length} bytes (${mib(bytes.length)}), ${(bytes.length / count).toFixed(2)} B/domain, ${((bytes.length * 8) / set.size).toFixed(1)} bits/prefix`,
  );
  console.log(`raw (uncoded) would be: ${(set.size * set.hashBytes) / count} B/domain of hashes`);
  console.log(`load (checksum + Rice decode + order check): ${((loaded - built) / 1000).toFixed(2)} s wall, ${(cpuLoaded - cpuBuilt).toFixed(2)} s CPU`);

  const lookups = 200_000;
  const allowedOrigins: string[] = [];
  const deniedOrigins: string[] = [];
  for (let j = 0; j < lookups; j++) {
    const i = Math.floor(Math.random() * count);
    const prefix = (prefixForms(domainAt(i))[0] as { prefix: string }).prefix;
    allowedOrigins.push(`https://${prefix}.cdn.ampproject.org`);
    deniedOrigins.push(`https://${prefix}x.www.bing-amp.com`);
  }
  /** Mean wall and CPU microseconds of `fn` over `items`. */
  const time = <T>(items: readonly T[], fn: (item: T) => boolean): { wall: number; cpu: number; hits: number } => {
    let hits = 0;
    const wall = performance.now();
    const cpu = cpuSeconds();
    for (const item of items) if (fn(item)) hits++;
    return { wall: ((performance.now() - wall) * 1000) / items.length, cpu: ((cpuSeconds() - cpu) * 1e6) / items.length, hits };
  };
  const show = (r: { wall: number; cpu: number }): string => `${r.cpu.toFixed(2)} µs CPU (${r.wall.toFixed(2)} wall)`;
  const allowed = time(allowedOrigins, (o) => set.verifyOrigin(o).allowed);
  const denied = time(deniedOrigins, (o) => set.verifyOrigin(o).allowed);
  const prefixes = allowedOrigins.map((o) => o.slice(8, o.indexOf('.')));
  const has = time(prefixes, (p) => set.has(p));
  if (allowed.hits !== lookups || has.hits !== lookups || denied.hits !== 0) throw new Error('lookup mismatch');
  console.log(`lookup (${lookups} each): has(prefix) ${show(has)}; verifyOrigin allowed ${show(allowed)}, denied ${show(denied)}`);
  const memory = process.memoryUsage();
  console.log(`memory after load: rss ${mib(memory.rss)}, array buffers ${mib(memory.arrayBuffers)}`);
}

const counts = process.argv.slice(2).map(Number);
for (const count of counts.length > 0 ? counts : [1_000_000]) {
  if (!Number.isSafeInteger(count) || count < 1 || count > 50_000_000) throw new Error(`bad count ${count}`);
  measure(count);
}
