// The release check (issue 18): every publishable package is packed with
// pnpm, exactly as it would be published, installed with npm into a fresh
// project outside the workspace, and used the way users use it — ESM and
// CommonJS, Express 4 and 5, Koa 2 and 3, the Fetch adapter, @ampcors/core on
// its own and each of its subpath entries, strict TypeScript, and the
// `ampcors` command. It needs the built packages and FAILS (never skips) when
// a dist/ is missing or stale.
import { createHash } from 'node:crypto';
import { rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { dirname, join, posix } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  assertBuilt,
  brokenRepositoryLinks,
  cleanEnv,
  copyFixtures,
  dirOf,
  entryFiles,
  type FreshProject,
  freshProject,
  GITHUB,
  installedCopies,
  packAll,
  publishablePackages,
  type Ran,
  relativeLinks,
  ROOT,
  run,
  type Tarball,
} from './release-kit.js';

const REPOSITORY = 'git+https://github.com/ampcors/ampcors.git';
/** The cache origin of example.com on the Google AMP Cache, from the AMP cache URL guide. */
const GOOGLE_ORIGIN = 'https://example-com.cdn.ampproject.org';
/** The same on the Bing AMP Cache. */
const BING_ORIGIN = 'https://example-com.www.bing-amp.com';

const packages = publishablePackages();
let tarballs: Tarball[] = [];
let project: FreshProject;
/** What smoke.mjs and smoke.cjs observed, by module format. */
const observed: Record<'esm' | 'cjs', any> = { esm: undefined, cjs: undefined };
const started = Date.now();
const timings: Record<string, number> = {};

/** Records how long `step` took since `since`; returns now. */
function mark(step: string, since: number): number {
  const now = Date.now();
  timings[step] = now - since;
  return now;
}

/** Runs a smoke script in the fresh project and parses what it observed. */
async function smoke(file: string): Promise<any> {
  const out = await run(process.execPath, [file], { cwd: project.dir, env: cleanEnv(), timeoutMs: 60_000 });
  if (out.code !== 0) throw new Error(`node ${file} exited ${out.code}:\n${out.stderr}`);
  return JSON.parse(out.stdout);
}

beforeAll(async () => {
  assertBuilt(packages);
  let t = Date.now();
  tarballs = await packAll(packages);
  t = mark('pack', t);
  project = await freshProject(tarballs);
  t = mark(`install (${project.install})`, t);
  copyFixtures(project.dir);
  [observed.esm, observed.cjs] = await Promise.all([smoke('smoke.mjs'), smoke('smoke.cjs')]);
  mark('smoke', t);
}, 240_000);

afterAll(() => {
  // The fresh project keeps its own copies of the tarballs; the pack directory goes.
  if (tarballs[0]) rmSync(dirname(tarballs[0].file), { recursive: true, force: true });
});

describe('release: what each tarball contains', () => {
  it('packs every non-private package (core, the adapters, redis, cli)', () => {
    const names = tarballs.map((t) => t.pkg.manifest.name).sort();
    expect(names).toEqual(expect.arrayContaining(['@ampcors/cli', '@ampcors/core', '@ampcors/express', '@ampcors/fetch', '@ampcors/koa', '@ampcors/redis']));
    expect(names).not.toContain('playground');
  });

  it.each(packages.map((p) => p.manifest.name))('%s: LICENSE, README, CHANGELOG and every entry file', async (name) => {
    const t = tarballs.find((x) => x.pkg.manifest.name === name)!;
    for (const file of ['LICENSE', 'README.md', 'CHANGELOG.md', 'package.json']) expect(t.files, `${name} ships ${file}`).toContain(file);
    const license = await t.read('LICENSE');
    expect(license).toMatch(/^MIT License/);
    expect(license).toContain('Copyright (c)');
    expect(license).toContain('the ampcors authors');
    const changelog = await t.read('CHANGELOG.md');
    expect(changelog).toContain(`## ${t.pkg.manifest.version}`);
    const packed = JSON.parse(await t.read('package.json'));
    for (const file of entryFiles(packed)) expect(t.files, `${name}: ${file} named by package.json`).toContain(file);
    // Tests and build configuration stay in the repository.
    expect(t.files.filter((f) => /(^|\/)test\/|\.test\.[cm]?[jt]s$|^tsconfig/.test(f))).toEqual([]);
  });

  it.each(packages.map((p) => p.manifest.name))('%s: registry metadata, and no workspace: ranges', async (name) => {
    const t = tarballs.find((x) => x.pkg.manifest.name === name)!;
    const raw = await t.read('package.json');
    const packed = JSON.parse(raw);
    expect(packed.license).toBe('MIT');
    expect(packed.repository).toEqual({ type: 'git', url: REPOSITORY, directory: `packages/${t.pkg.dir}` });
    expect(packed.homepage).toBe(`${GITHUB}/tree/main/packages/${t.pkg.dir}#readme`);
    expect(typeof packed.bugs === 'string' ? packed.bugs : packed.bugs?.url).toBe(`${GITHUB}/issues`);
    expect(Array.isArray(packed.keywords) && packed.keywords.length).toBeGreaterThan(0);
    expect(packed.keywords).toEqual(expect.arrayContaining(['amp', 'cors']));
    expect(raw).not.toContain('workspace:');
  });

  it.each(packages.map((p) => p.manifest.name))('%s: README links work on the registry page (absolute, to files that exist)', async (name) => {
    const t = tarballs.find((x) => x.pkg.manifest.name === name)!;
    const readme = await t.read('README.md');
    expect(relativeLinks(readme), 'relative links').toEqual([]);
    expect(brokenRepositoryLinks(readme), 'links into the repository').toEqual([]);
  });

  it.each(packages.map((p) => p.manifest.name))('%s: source maps and declaration maps, pointing at shipped sources', async (name) => {
    const t = tarballs.find((x) => x.pkg.manifest.name === name)!;
    const built = t.files.filter((f) => f.startsWith('dist/') && /\.(?:c|m)?js$|\.d\.(?:c|m)?ts$/.test(f));
    expect(built.length).toBeGreaterThan(0);
    const missing: string[] = [];
    const dangling: string[] = [];
    for (const file of built) {
      const map = `${file}.map`;
      if (!t.files.includes(map)) {
        missing.push(map);
        continue;
      }
      const text = await t.read(file);
      if (!text.includes(`sourceMappingURL=${posix.basename(map)}`)) missing.push(`${file} (no sourceMappingURL comment)`);
      const parsed = JSON.parse(await t.read(map)) as { sources: string[]; sourceRoot?: string };
      for (const source of parsed.sources) {
        const target = posix.normalize(posix.join(dirOf(map), parsed.sourceRoot ?? '', source));
        if (!t.files.includes(target)) dangling.push(`${map} -> ${source}`);
      }
    }
    expect(missing, 'every JavaScript and declaration file has a map').toEqual([]);
    expect(dangling, 'every map source is in the tarball').toEqual([]);
  });
});

describe('release: the fresh project', () => {
  it('lives outside the workspace and resolves every package from its own node_modules', () => {
    expect(project.dir.startsWith(ROOT)).toBe(false);
    for (const format of ['esm', 'cjs'] as const) {
      for (const [name, path] of Object.entries(observed[format].resolved as Record<string, string>)) {
        expect(path.startsWith(join(project.dir, 'node_modules', name)), `${format} ${name} -> ${path}`).toBe(true);
      }
    }
  });

  it('has exactly one @ampcors/core, the packed one (no registry copy under an adapter)', () => {
    expect(installedCopies(project.dir, '@ampcors/core')).toEqual([join('node_modules', '@ampcors', 'core')]);
  });

  it('installed Express 4 and 5 and Koa 2 and 3', () => {
    const versions = observed.esm.frameworkVersions as Record<string, string>;
    expect(versions.express4).toMatch(/^4\./);
    expect(versions.express5).toMatch(/^5\./);
    expect(versions.koa2).toMatch(/^2\./);
    expect(versions.koa3).toMatch(/^3\./);
  });
});

describe.each(['esm', 'cjs'] as const)('release smoke test, %s', (format) => {
  const o = () => observed[format];

  it('@ampcors/core: allows the cache origins of a listed publisher, denies another domain and a look-alike', () => {
    const core = o().core;
    expect(core.googleOrigin).toBe(GOOGLE_ORIGIN);
    expect(core.bingOrigin).toBe(BING_ORIGIN);
    expect(core.google).toMatchObject({ allowed: true, via: 'cache', publisherDomain: 'example.com' });
    expect(core.bing).toMatchObject({ allowed: true, via: 'cache', publisherDomain: 'example.com' });
    expect(core.foreignCache.allowed).toBe(false);
    expect(core.lookalike.allowed).toBe(false);
    expect(core.reversedPublisher).toBe('example.com');
  });

  it('@ampcors/core: a refused configuration is an AmpCorsError, recognised by the other module format too', () => {
    const { refusal, crossFormat } = o().core;
    expect(refusal).toEqual({ thrown: true, isAmpCorsError: true, code: 'public-suffix-rule' });
    // Two copies (ESM and CJS) of core are two classes: isAmpCorsError is the dual-package-safe check.
    expect(crossFormat.isAmpCorsError).toBe(true);
  });

  it('every package loads and exposes its entry point; the library VERSION is the package version', () => {
    const cliVersion = packages.find((p) => p.dir === 'cli')!.manifest.version;
    expect(o().adapterExports).toEqual({ express: 'function', koa: 'function', fetch: 'function', redis: 'function', cliVersion });
  });

  describe.each(['express4', 'express5', 'koa2', 'koa3', 'fetch'])('%s', (app) => {
    const r = () => o()[app];

    it('an allowed cache origin gets its CORS headers and the route runs', () => {
      expect(r().allowed).toMatchObject({ status: 200, allowOrigin: GOOGLE_ORIGIN, allowCredentials: 'true', body: 'route ran' });
      expect(r().allowed.exposeHeaders).toMatch(/AMP-Redirect-To/i);
      expect(r().allowed.vary).toMatch(/Origin/i);
      expect(r().publisherOrigin).toMatchObject({ status: 200, allowOrigin: 'https://example.com', body: 'route ran' });
    });

    it("another domain's cache origin and a look-alike are refused before the route, without CORS headers", () => {
      for (const denied of [r().foreignCache, r().lookalike]) {
        expect(denied.status).toBe(403);
        expect(denied.allowOrigin).toBeNull();
        expect(denied.allowCredentials).toBeNull();
        expect(denied.body).not.toContain('route ran');
      }
    });

    it('a preflight from an allowed cache origin is answered; a denied one gets no CORS headers', () => {
      expect(r().preflight).toMatchObject({ status: 204, allowOrigin: GOOGLE_ORIGIN, allowCredentials: 'true' });
      expect(r().preflight.allowMethods).toMatch(/POST/);
      expect(r().deniedPreflight.allowOrigin).toBeNull();
      expect(r().deniedPreflight.body).not.toContain('route ran');
    });
  });
});

/** What each subpath entry of @ampcors/core is for, by a few of the names its README section lists. */
const SUBPATH_NAMES: Record<string, string[]> = {
  adapter: ['createCorsPolicy', 'planCors', 'normalizeCorsOptions', 'requestFacts', 'applyHeadersAtomically', 'compileOriginOption', 'askOriginCallback'],
  algorithms: ['prefixClaimants', 'searchClaimants', 'prefixReadings', 'decodePrefix', 'allPrefixForms', 'browserHost', 'parsePublisherRules', 'buildAllowSet'],
  'safe-browsing': ['canonicalHost', 'canonicalizeUrl', 'urlExpressions', 'hashPrefix', 'hashPrefixHex'],
  'rice-coding': ['BitReader', 'BitWriter', 'encodeRiceDeltas', 'decodeRiceDeltas', 'decodeRiceIntegers'],
};

describe.each(['esm', 'cjs'] as const)('release: the subpath entries of @ampcors/core, %s', (format) => {
  const s = () => observed[format].subpaths;

  it("every subpath of core's exports map loads from the packed tarball, as its own file of this format", () => {
    const core = packages.find((p) => p.dir === 'core')!;
    const declared = Object.keys(core.manifest.exports as Record<string, unknown>)
      .filter((key) => key !== '.' && key !== './package.json')
      .map((key) => key.slice(2))
      .sort();
    expect(Object.keys(SUBPATH_NAMES).sort()).toEqual(declared);
    const resolved = observed[format].subpathsResolved as Record<string, string>;
    expect(Object.keys(resolved).sort()).toEqual(declared);
    for (const [name, path] of Object.entries(resolved)) {
      expect(path).toBe(join(project.dir, 'node_modules', '@ampcors', 'core', 'dist', `${name}.${format === 'esm' ? 'js' : 'cjs'}`));
    }
  });

  it('each exports its documented names, the same in ESM and CJS; the main entry no longer has them', () => {
    for (const [name, expected] of Object.entries(SUBPATH_NAMES)) expect(s().exports[name], name).toEqual(expect.arrayContaining(expected));
    expect(s().exports).toEqual(observed[format === 'esm' ? 'cjs' : 'esm'].subpaths.exports);
    expect(s().movedStillInMain).toEqual([]);
  });

  it('adapter: a policy allows a listed cache origin and plans no CORS header for a foreign one; its errors are the main entry’s', () => {
    expect(s().adapter.allowed).toEqual({ allowed: true, allowOrigin: GOOGLE_ORIGIN });
    expect(s().adapter.foreign).toEqual({ allowed: false, allowOrigin: null });
    // One copy of core per module format (shared chunks), not one per entry: instanceof holds, and module state is shared.
    expect(s().adapter.refusal).toEqual({ thrown: true, isAmpCorsError: true, instanceOfMain: true, code: 'invalid-option' });
    expect(s().adapter.sharesMainRegistry).toBe(true);
  });

  it('algorithms: the claimants of a prefix include the domain the main entry reverses it to', () => {
    const { prefix, claimants, decoded, reversed } = s().algorithms;
    expect(prefix).toMatch(/-/);
    expect(reversed).toBe('a-b.example.com');
    expect(decoded).toBe(reversed);
    expect(claimants).toContain(reversed);
  });

  it('safe-browsing: canonicalization and hash prefixes', () => {
    expect(s().safeBrowsing.canonical).toBe('http://www.google.com/');
    expect(s().safeBrowsing.hashHex).toBe(createHash('sha256').update('abc').digest('hex').slice(0, 8));
  });

  it('rice-coding: a round trip, and bad input refused with the main entry’s AmpCorsError', () => {
    expect(s().riceCoding.roundTrip).toEqual(s().riceCoding.input);
    expect(s().riceCoding.refusal).toMatchObject({ thrown: true, isAmpCorsError: true, instanceOfMain: true });
  });
});

describe('release: strict TypeScript consumers', () => {
  it('ESM (consumer.mts) and CommonJS (consumer.cts) type-check against the packed declarations (node16, declarations checked too)', async () => {
    // One program for both files: checking @types/node and our declarations is most of the cost.
    const tsc = join(ROOT, 'node_modules', 'typescript', 'bin', 'tsc');
    const args = [
      tsc,
      '--noEmit',
      '--strict',
      '--module',
      'node16',
      '--moduleResolution',
      'node16',
      '--target',
      'es2022',
      '--lib',
      'es2022,dom',
      '--types',
      'node',
      '--typeRoots',
      join(ROOT, 'node_modules', '@types'),
      '--skipLibCheck',
      'false',
      'consumer.mts',
      'consumer.cts',
    ];
    const out = await run(process.execPath, args, { cwd: project.dir, env: cleanEnv(), timeoutMs: 90_000 });
    expect(`${out.stdout}${out.stderr}`).toBe('');
    expect(out.code).toBe(0);
  }, 90_000);
});

describe('release: the ampcors command', () => {
  const bin = () => join(project.dir, 'node_modules', '.bin', 'ampcors');
  const ampcors = (...args: string[]): Promise<Ran> => run(bin(), args, { cwd: project.dir, env: cleanEnv(), timeoutMs: 30_000 });

  it('--version and --help', async () => {
    const version = await ampcors('--version');
    expect(version).toMatchObject({ code: 0, stdout: `${packages.find((p) => p.dir === 'cli')!.manifest.version}\n` });
    const help = await ampcors('--help');
    expect(help.code).toBe(0);
    expect(help.stdout).toMatch(/ampcors/);
    expect(help.stdout).toMatch(/check/);
  });

  it('computes the cache origin the library computes', async () => {
    const origin = await ampcors('origin', 'example.com', '--cache', 'google');
    expect(origin).toMatchObject({ code: 0, stdout: `${GOOGLE_ORIGIN}\n` });
  });

  it('check: exit 0 for an allowed cache origin, 1 for another domain and for a look-alike', async () => {
    expect((await ampcors('check', GOOGLE_ORIGIN, '--publishers', 'example.com')).code).toBe(0);
    expect((await ampcors('check', 'https://evil-example-com.cdn.ampproject.org', '--publishers', 'example.com')).code).toBe(1);
    expect((await ampcors('check', 'https://example-com.cdn.ampproject.org.evil.test', '--publishers', 'example.com')).code).toBe(1);
  });

  it('redis: the optional peer @ampcors/redis is found in an installed layout (unreachable server: exit 5, not 6)', async () => {
    const port = await new Promise<number>((resolve) => {
      const server = createServer();
      server.listen(0, '127.0.0.1', () => {
        const address = server.address();
        server.close(() => resolve(typeof address === 'object' && address ? address.port : 0));
      });
    });
    const out = await ampcors('redis', 'count', '--url', `redis://127.0.0.1:${port}`, '--timeout', '300');
    expect(out.stderr).not.toMatch(/not installed/);
    expect(out.code).toBe(5);
  });
});

describe('release: cost', () => {
  it('records where the time went', () => {
    // Reported, not asserted: the numbers depend on the machine and the npm cache.
    console.info(`release check: ${JSON.stringify({ ...timings, total: Date.now() - started, project: project.dir })}`);
    expect(Object.keys(timings)).toEqual(expect.arrayContaining(['pack', 'smoke']));
  });
});
