// `ampcors explain`: its JSON and text checked against explainOrigin from
// @ampcors/core itself, for every kind of origin, with and without publishers.
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import {
  type AmpCache,
  cacheOrigin,
  createVerifier,
  type ExplainOriginOptions,
  explainOrigin,
  findCache,
  type OriginExplanation,
  parseOrigin,
  prefixForms,
} from '@ampcors/core';
import { EXIT } from '@ampcors/cli';
import { cliIn, json } from './harness.js';

const dir = mkdtempSync(join(tmpdir(), 'ampcors-explain-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
const cli = cliIn(dir);

const LONG = `${'a'.repeat(30)}.${'b'.repeat(30)}.example.net`; // its prefix is a hash
const PUBLISHERS = ['example.com', 'en-us.example.com', '*.example.org', LONG, 'xn--57hw060o.com'];

/** Origins of every kind, with what `explain` must conclude without and with PUBLISHERS. */
const CASES: { origin: string; kind: string; plain: number; judged: number }[] = [
  { origin: 'https://example-com.cdn.ampproject.org', kind: 'reversible', plain: EXIT.ok, judged: EXIT.ok },
  { origin: 'https://0-en--us-example-com-0.cdn.ampproject.org', kind: '0-…-0 wrap', plain: EXIT.ok, judged: EXIT.ok },
  { origin: 'https://xn---com-p33b41770a.www.bing-amp.com', kind: 'punycode', plain: EXIT.ok, judged: EXIT.ok },
  { origin: 'https://a-b-example-org.www.bing-amp.com', kind: 'wildcard', plain: EXIT.ok, judged: EXIT.ok },
  { origin: cacheOrigin(LONG, 'google'), kind: 'hashed, listed', plain: EXIT.denied, judged: EXIT.ok },
  {
    origin: 'https://v2c4ucasgcskftbjt4c7phpkbqedcdcqo23tkamleapoa5o6fygq.cdn.ampproject.org',
    kind: 'hashed, unknown',
    plain: EXIT.denied,
    judged: EXIT.denied,
  },
  { origin: 'https://evil-com.cdn.ampproject.org', kind: 'reversible, not listed', plain: EXIT.ok, judged: EXIT.denied },
  { origin: 'https://example.com', kind: 'publisher origin (foreign host)', plain: EXIT.denied, judged: EXIT.ok },
  { origin: 'https://evil.example', kind: 'foreign', plain: EXIT.denied, judged: EXIT.denied },
  { origin: 'http://example-com.cdn.ampproject.org', kind: 'insecure', plain: EXIT.denied, judged: EXIT.denied },
  { origin: 'https://example-com.cdn.ampproject.org:444', kind: 'port', plain: EXIT.denied, judged: EXIT.denied },
  { origin: 'https://0-a-b-0.cdn.ampproject.org', kind: 'not reproducible', plain: EXIT.denied, judged: EXIT.denied },
  { origin: 'https://a---b-com.cdn.ampproject.org', kind: 'spells no domain', plain: EXIT.denied, judged: EXIT.denied },
  { origin: 'https://Example-com.cdn.ampproject.org', kind: 'malformed (upper case)', plain: EXIT.badInput, judged: EXIT.badInput },
  { origin: 'example-com.cdn.ampproject.org', kind: 'malformed (no scheme)', plain: EXIT.badInput, judged: EXIT.badInput },
];

/** True for an origin that does not parse (`null` aside): every command answers it with exit 3 and an error. */
function malformed(origin: string): boolean {
  const parsed = parseOrigin(origin);
  return !parsed.ok && parsed.reason !== 'null-origin';
}

/**
 * The JSON the command must print: explainOrigin's object with caches by id
 * and the input first; for a malformed origin, the error every command gives it first.
 */
function expected(origin: string, options: ExplainOriginOptions = {}): Record<string, unknown> {
  const parsed = parseOrigin(origin);
  const error = parsed.ok ? {} : { input: origin, error: expect.objectContaining({ code: 'invalid-origin', reason: parsed.reason }) };
  return malformed(origin) ? { ...error, ...explained(origin, options) } : explained(origin, options);
}

function explained(origin: string, options: ExplainOriginOptions): Record<string, unknown> {
  const explanation: OriginExplanation = explainOrigin(origin, options);
  const byId = (value: object) => {
    const { cache, ...rest } = value as { cache?: AmpCache };
    return cache === undefined ? rest : { ...rest, cache: cache.id };
  };
  const object = { origin, ...explanation, result: byId(explanation.result), ...(explanation.verdict ? { verdict: byId(explanation.verdict) } : {}) };
  return JSON.parse(JSON.stringify(object)) as Record<string, unknown>;
}

describe('explain --json equals explainOrigin', () => {
  it.each(CASES)('without publishers: $kind', async ({ origin, plain }) => {
    const { code, stdout, stderr } = await cli(['explain', origin, '--json']);
    expect(json(stdout)).toEqual([expected(origin)]);
    expect(code).toBe(plain);
    expect(stderr.text).toBe('');
  });

  it.each(CASES)('with publishers: $kind', async ({ origin, judged }) => {
    const { code, stdout } = await cli(['explain', origin, '--json', '--publishers', PUBLISHERS.join(',')]);
    const [line] = json(stdout);
    expect(line).toEqual(expected(origin, { publishers: PUBLISHERS }));
    expect(line).toHaveProperty('verdict');
    expect(code).toBe(judged);
  });

  it('the conclusions themselves, not only agreement with core', async () => {
    const [wrapped, hashed, foreign, malformed] = json(
      (
        await cli(
          ['explain', '--json', '--publishers', PUBLISHERS.join(',')],
          ['https://0-en--us-example-com-0.cdn.ampproject.org', cacheOrigin(LONG), 'https://evil.example', 'https://Example-com.cdn.ampproject.org'].join('\n'),
        )
      ).stdout,
    );
    expect(wrapped).toMatchObject({
      result: { ok: true, hashed: false, publisherDomain: 'en-us.example.com', cache: 'google' },
      verdict: { allowed: true, reason: 'cache-origin' },
    });
    expect(wrapped?.steps).toContainEqual(
      expect.objectContaining({ name: 'remove-wrap', status: 'done', input: '0-en--us-example-com-0', output: 'en--us-example-com' }),
    );
    expect(hashed).toMatchObject({
      result: { ok: true, hashed: true },
      verdict: { allowed: true, reason: 'cache-origin-hashed', publisherDomain: LONG },
      producedBy: [{ listed: LONG, publisherDomain: LONG }],
    });
    expect(foreign).toMatchObject({ result: { ok: false, reason: 'unknown-cache' }, verdict: { allowed: false, reason: 'unknown-origin' }, producedBy: [] });
    expect((malformed?.steps as { name: string; status: string }[]).map((s) => [s.name, s.status])).toEqual([['parse-origin', 'failed']]);
  });

  it('one JSON line per stdin line; the exit code is the highest of them', async () => {
    const origins = CASES.map((c) => c.origin);
    const { code, stdout } = await cli(['explain', '--json'], `${origins.join('\r\n')}\n\n`);
    expect(json(stdout)).toEqual(origins.map((o) => expected(o)));
    expect(code).toBe(Math.max(...CASES.map((c) => c.plain)));
  });

  it('a long list of publishers, many origins: verdict and producedBy agree with explainOrigin for each', async () => {
    const listed = Array.from({ length: 300 }, (_, i) =>
      i % 10 === 0 ? `*.zone${i}.example` : i % 7 === 0 ? `${'x'.repeat(40)}.n${i}.${'y'.repeat(20)}.example` : `site${i}.example`,
    );
    listed.push('site1.example', 'a-b.example'); // a duplicate; a domain whose guide and toolbox prefixes differ
    writeFileSync(join(dir, 'many.txt'), `# customers\n${listed.join('\n')}\n`);
    const origins = [
      ...listed.filter((_, i) => i % 9 === 0).map((rule) => cacheOrigin(rule.replace(/^\*\./, 'www.'), 'bing')),
      ...prefixForms('a-b.example').map((f) => `https://${f.prefix}.cdn.ampproject.org`),
      'https://a-b-example.cdn.ampproject.org', // the toolbox form
      cacheOrigin('site1.example'),
      cacheOrigin('site9999.example'),
      'https://site3.example',
    ];
    const { stdout } = await cli(['explain', '--json', '--publishers', '@many.txt'], origins.join('\n'));
    const lines = json(stdout);
    expect(lines).toHaveLength(origins.length);
    origins.forEach((origin, i) => expect(lines[i], origin).toEqual(expected(origin, { publishers: listed })));
    expect(lines.filter((l) => (l.verdict as { allowed: boolean }).allowed).length).toBeGreaterThan(origins.length / 2);
    expect(lines.some((l) => (l.producedBy as unknown[]).length > 1)).toBe(true); // site1.example listed twice
  });

  it('--origins changes the verdict as it does for the verifier', async () => {
    const origin = 'http://localhost:8080';
    const plain = await cli(['explain', origin, '--json', '--publishers', 'example.com']);
    const own = await cli(['explain', origin, '--json', '--publishers', 'example.com', '--origins', 'http://localhost:8080,https://example.com']);
    expect(json(plain.stdout)[0]?.verdict).toMatchObject({ allowed: false });
    expect([plain.code, own.code]).toEqual([EXIT.denied, EXIT.ok]);
    const verdict = createVerifier({ publishers: ['example.com'], origins: ['http://localhost:8080', 'https://example.com'] }).verify(origin);
    expect(json(own.stdout)[0]).toEqual({ ...expected(origin, { publishers: ['example.com'] }), verdict: JSON.parse(JSON.stringify(verdict)) });
  });

  it('--cache registers one cache only', async () => {
    const origin = 'https://example-com.cdn.ampproject.org';
    const bing = findCache('bing') as AmpCache;
    const { code, stdout } = await cli(['explain', origin, '--json', '--cache', 'bing', '--publishers', 'example.com']);
    expect(json(stdout)).toEqual([expected(origin, { caches: [bing], publishers: ['example.com'] })]);
    expect(json(stdout)[0]?.result).toMatchObject({ ok: false, reason: 'unknown-cache' });
    expect(code).toBe(EXIT.denied);
  });
});

describe('explain as text', () => {
  it.each(CASES)('every step, the result and (with publishers) the verdict: $kind', async ({ origin, judged }) => {
    const explanation = explainOrigin(origin, { publishers: PUBLISHERS });
    const { code, stdout } = await cli(['explain', origin, '--publishers', PUBLISHERS.join(',')]);
    expect(code).toBe(judged);
    const lines = stdout.lines;
    expect(lines[0]).toBe(`origin:      ${origin}`);
    explanation.steps.forEach((step, i) => {
      const head = lines[1 + i * 3] as string;
      expect(head).toMatch(new RegExp(`^ *${i + 1}\\. ${step.status} +${step.name} +${step.title.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}$`));
      const value = lines[2 + i * 3] as string;
      expect(value).toContain(step.input);
      if (step.status === 'failed') expect(value).toContain(`✗ ${step.reason}`);
      else if (step.output !== null && step.output !== step.input) expect(value).toContain(`→ ${step.output}`);
      expect(lines[3 + i * 3]?.trim()).toBe(step.note);
    });
    const rest = lines.slice(1 + explanation.steps.length * 3);
    const { result, verdict } = explanation;
    if (result.ok && !result.hashed)
      expect(rest[0]).toBe(`result:      ${result.publisherDomain} (cache ${result.cache.id}, prefix ${result.prefix}, form ${result.form})`);
    else if (result.ok) expect(rest[0]).toMatch(new RegExp(`^result: +hashed prefix ${result.prefix} on cache ${result.cache.id}`));
    else expect(rest[0]).toBe(`result:      ${result.reason}: ${result.detail}`);
    expect(rest[1]).toMatch(new RegExp(`^verdict: +${verdict?.allowed ? 'allowed' : 'denied'} ${verdict?.reason} `));
    const sources = explanation.producedBy ?? [];
    if ('prefix' in result && result.prefix !== undefined) {
      expect(rest[2]).toMatch(/^produced by: /);
      for (const source of sources) expect(rest[2]).toContain(`${source.publisherDomain}`);
      if (sources.length === 0) expect(rest[2]).toContain('no listed publisher domain');
    }
    // A malformed origin ends with the error every command gives it.
    if (malformed(origin)) expect(rest.at(-1)).toMatch(new RegExp(`^error: +${origin.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}: not a valid Origin \\(`));
    expect(rest).toHaveLength(('prefix' in result && result.prefix !== undefined ? 3 : 2) + (malformed(origin) ? 1 : 0));
  });

  it('without publishers there is no verdict; stdin origins are separated by a blank line', async () => {
    const { code, stdout } = await cli(['explain'], 'https://0-en--us-example-com-0.cdn.ampproject.org\nhttps://evil.example\n');
    expect(code).toBe(EXIT.denied);
    const blocks = stdout.text.trimEnd().split('\n\n');
    expect(blocks).toHaveLength(2);
    expect(blocks[0]).toMatch(/^origin: +https:\/\/0-en--us-example-com-0\.cdn\.ampproject\.org\n/);
    expect(blocks[0]).toMatch(/\nresult: +en-us\.example\.com \(cache google, prefix 0-en--us-example-com-0, form spec\)$/);
    expect(blocks[1]).toMatch(/failed +find-cache/);
    expect(stdout.text).not.toMatch(/verdict:|produced by:/);
  });

  it('a hashed origin names the listed domain that produced it, a wildcard rule by how it was listed', async () => {
    const hashed = await cli(['explain', cacheOrigin(LONG, 'bing'), '--publishers', `example.com,${LONG}`]);
    expect(hashed.stdout.lines.at(-1)).toBe(`produced by: ${LONG} with form spec`);
    const wildcard = await cli(['explain', 'https://example-org.cdn.ampproject.org', '--publishers', '*.example.org']);
    expect(wildcard.stdout.lines.at(-1)).toBe('produced by: example.org (listed as *.example.org) with form spec');
  });
});

describe('explain errors', () => {
  it('an invalid publishers list is bad input (3), before any origin is read', async () => {
    for (const publishers of ['co.uk', 'example..com', '*.com']) {
      const { code, stdout, stderr } = await cli(['explain', 'https://example-com.cdn.ampproject.org', '--publishers', publishers]);
      expect([code, stdout.text]).toEqual([EXIT.badInput, '']);
      expect(stderr.text).toMatch(/^ampcors: /);
    }
  });

  it('an unreadable publishers file is 4; usage errors are 2', async () => {
    expect((await cli(['explain', 'https://x.com', '--publishers', '@missing.txt'])).code).toBe(EXIT.unreadableFile);
    expect((await cli(['explain', 'https://x.com', '--publishers', './missing.txt'])).code).toBe(EXIT.usage); // a path is not a list: @ reads a file
    expect((await cli(['explain', 'https://x.com', '--origins', 'https://x.com'])).code).toBe(EXIT.usage);
    expect((await cli(['explain', 'https://x.com', '--cache', 'nope'])).code).toBe(EXIT.usage);
    const tty = await cli(['explain'], '', { stdinTTY: true });
    expect(tty.code).toBe(EXIT.usage);
    expect(tty.stderr.text).toMatch(/no origin given/);
  });
});
