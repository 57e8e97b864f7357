// explainOrigin at its edges (issue #6, mutation testing): complete traces
// (name, title, status, input, output, note of every step) for each path of
// SPEC §4, the notes of failed steps, the 320-character display cut, and
// configuration errors that are not AmpCorsErrors.
import { amppackagerPrefix, CACHES, EXPLAIN_MAX_SHOWN, type ExplainStep, explainOrigin, fallbackPrefix, reverseOrigin, toolboxPrefix } from '@ampcors/core';
import { domainToUnicode } from 'node:url';
import { describe, expect, it } from 'vitest';

const TITLES: Record<string, string> = {
  'parse-origin': 'Parse the Origin header as sent',
  'find-cache': 'Find the registered cache of the host',
  'check-scheme-port': 'Cache origins are https on the default port',
  'remove-suffix': 'Remove the scheme and the cache suffix: the rest is the domain prefix',
  'check-hashed': 'A prefix without "-" is a hash and cannot be reversed',
  'punycode-decode': 'Punycode-decode an xn-- prefix',
  'remove-wrap': 'Remove the 0- … -0 wrap',
  'fold-hyphens': 'Fold hyphens: "--" becomes "-", a single "-" becomes "."',
  're-encode': 'Punycode-encode (IDNA to ASCII)',
  'canonical-domain': 'The result must already be a canonical domain',
  'forward-check': 'Forward-compute the prefix of the domain: it must match byte for byte',
  'find-claimants': 'Every domain that could exist with this prefix, under every accepted algorithm',
};

type Row = [name: string, status: string, input: string, output: string | null, note: string];

function rows(steps: readonly ExplainStep[]): Row[] {
  for (const step of steps) expect(step.title).toBe(TITLES[step.name]);
  return steps.map((s) => [s.name, s.status, s.input, s.output, s.note]);
}

/** The steps every trace on Google's cache shares up to the prefix. */
function head(origin: string, prefix: string): Row[] {
  const host = origin.slice('https://'.length);
  return [
    ['parse-origin', 'done', origin, host, `scheme https, host ${host}, default port`],
    ['find-cache', 'done', host, 'cdn.ampproject.org', 'Google AMP Cache (google)'],
    ['check-scheme-port', 'done', origin, 'https, default port', 'https on the default port'],
    ['remove-suffix', 'done', host, prefix, 'removed ".cdn.ampproject.org"'],
  ];
}

describe('explainOrigin: complete traces', () => {
  it("a readable ASCII prefix, the guide's form", () => {
    const origin = 'https://a--b-example-com.cdn.ampproject.org';
    const explanation = explainOrigin(origin);
    expect(rows(explanation.steps)).toEqual([
      ...head(origin, 'a--b-example-com'),
      ['check-hashed', 'done', 'a--b-example-com', 'a--b-example-com', 'contains "-": reversible'],
      ['punycode-decode', 'skipped', 'a--b-example-com', 'a--b-example-com', 'no xn-- prefix: nothing to decode'],
      ['remove-wrap', 'skipped', 'a--b-example-com', 'a--b-example-com', 'not wrapped in 0- … -0'],
      ['fold-hyphens', 'done', 'a--b-example-com', 'a-b.example.com', 'scanned left to right'],
      ['re-encode', 'done', 'a-b.example.com', 'a-b.example.com', 'already ASCII'],
      ['canonical-domain', 'done', 'a-b.example.com', 'a-b.example.com', 'canonical'],
      ['forward-check', 'done', 'a-b.example.com', 'a--b-example-com', 'the guide\'s algorithm reproduces the prefix (form "spec")'],
    ]);
    expect(explanation).toEqual({ steps: explanation.steps, result: reverseOrigin(origin) }); // no verdict, no configError without publishers
  });
  it('an IDN prefix: decoded, folded, encoded again', () => {
    const origin = 'https://xn--bcher-de-65a.cdn.ampproject.org';
    expect(rows(explainOrigin(origin).steps).slice(4)).toEqual([
      ['check-hashed', 'done', 'xn--bcher-de-65a', 'xn--bcher-de-65a', 'contains "-": reversible'],
      ['punycode-decode', 'done', 'xn--bcher-de-65a', 'bücher-de', 'decoded the xn-- label'],
      ['remove-wrap', 'skipped', 'bücher-de', 'bücher-de', 'not wrapped in 0- … -0'],
      ['fold-hyphens', 'done', 'bücher-de', 'bücher.de', 'scanned left to right'],
      ['re-encode', 'done', 'bücher.de', 'xn--bcher-kva.de', 'encoded the Unicode labels'],
      ['canonical-domain', 'done', 'xn--bcher-kva.de', 'xn--bcher-kva.de', 'canonical'],
      ['forward-check', 'done', 'xn--bcher-kva.de', 'xn--bcher-de-65a', 'the guide\'s algorithm reproduces the prefix (form "spec")'],
    ]);
  });
  it("a prefix only toolbox-cache-url produces: the note gives the guide's prefix too", () => {
    const prefix = toolboxPrefix('xn--b-c-pla.de');
    const explanation = explainOrigin(`https://${prefix}.cdn.ampproject.org`);
    expect(rows(explanation.steps).at(-1)).toEqual([
      'forward-check',
      'done',
      'xn--b-c-pla.de',
      prefix,
      'the toolbox-cache-url algorithm reproduces the prefix (form "toolbox"); the guide gives xn--0-b--c-de-0-m8a',
    ]);
    expect(explanation.result).toMatchObject({ ok: true, form: 'toolbox', publisherDomain: 'xn--b-c-pla.de' });
  });
  it('a prefix two domains have: every claimant named in a last step (SPEC §6)', () => {
    const prefix = toolboxPrefix('xn--b-c-pla.com'); // also toolbox's prefix of the plain xn-b-c.com.zza
    const explanation = explainOrigin(`https://${prefix}.cdn.ampproject.org`);
    expect(rows(explanation.steps).at(-1)).toEqual([
      'find-claimants',
      'done',
      prefix,
      'xn--b-c-pla.com xn-b-c.com.zza',
      'every domain with this prefix under an accepted algorithm: xn--b-c-pla.com (toolbox), xn-b-c.com.zza (toolbox)',
    ]);
  });
  it('a guide reading that fails while another reading is a domain: the failure is skipped, the claimant named', () => {
    const explanation = explainOrigin('https://xn--a-b.cdn.ampproject.org');
    expect(rows(explanation.steps).slice(-2)).toEqual([
      ['punycode-decode', 'skipped', 'xn--a-b', null, 'the prefix is not valid punycode; other readings follow'],
      ['find-claimants', 'done', 'xn--a-b', 'xn-a.b', 'every domain with this prefix under an accepted algorithm: xn-a.b (toolbox)'],
    ]);
    expect(explanation.result).toMatchObject({ ok: true, publisherDomain: 'xn-a.b', form: 'toolbox' });
  });
  it('a wrapped prefix that does not reproduce: the wrap removed, then the expected prefix named', () => {
    const origin = 'https://0-example-com-0.cdn.ampproject.org';
    const explanation = explainOrigin(origin);
    expect(rows(explanation.steps).slice(6)).toEqual([
      ['remove-wrap', 'done', '0-example-com-0', 'example-com', 'removed "0-" and "-0"'],
      ['fold-hyphens', 'done', 'example-com', 'example.com', 'scanned left to right'],
      ['re-encode', 'done', 'example.com', 'example.com', 'already ASCII'],
      ['canonical-domain', 'done', 'example.com', 'example.com', 'canonical'],
      ['forward-check', 'failed', 'example.com', null, 'example.com has the prefix example-com, not 0-example-com-0'],
    ]);
    expect(explanation.steps.at(-1)?.reason).toBe('not-reproducible');
    expect(explanation.result).toEqual({
      ok: false,
      reason: 'not-reproducible',
      detail: 'example.com has a different prefix',
      cache: CACHES[0],
      prefix: '0-example-com-0',
    });
  });
  it('when the algorithms disagree, a prefix matching none names every readable form', () => {
    // ab--cd.com: the guide wraps (0-ab----cd-com-0), toolbox and amppackager hash; the bare fold matches none.
    const explanation = explainOrigin('https://ab----cd-com.cdn.ampproject.org');
    expect(explanation.steps.at(-1)).toMatchObject({
      name: 'forward-check',
      status: 'failed',
      note: 'ab--cd.com has the prefix 0-ab----cd-com-0, not ab----cd-com',
      reason: 'not-reproducible',
    });
    expect(toolboxPrefix('ab--cd.com')).toBe(fallbackPrefix('ab--cd.com'));
    expect(amppackagerPrefix('ab--cd.com')).toBe(fallbackPrefix('ab--cd.com'));
  });
  it("a prefix that spells no domain: the note is canonicalDomain's message", () => {
    const explanation = explainOrigin('https://a-b-1.cdn.ampproject.org');
    expect(rows(explanation.steps).at(-1)).toEqual([
      'canonical-domain',
      'failed',
      'a.b.1',
      null,
      'Invalid domain "a.b.1": it ends in a number: an IP address is not a domain',
    ]);
    expect(explanation.result).toMatchObject({ ok: false, reason: 'invalid-domain', detail: 'the prefix spells "a.b.1", not a domain' });
  });
  it('a prefix that spells a trailing dot: its canonical form is named', () => {
    const explanation = explainOrigin('https://0-example-com--0.cdn.ampproject.org');
    expect(rows(explanation.steps).at(-1)).toEqual([
      'canonical-domain',
      'failed',
      'example.com.',
      null,
      'its canonical form is example.com: the prefix belongs to no domain',
    ]);
    expect(explanation.result).toEqual(reverseOrigin('https://0-example-com--0.cdn.ampproject.org'));
    expect(explanation.result).toMatchObject({
      ok: false,
      reason: 'not-reproducible',
      detail: 'the prefix does not spell a canonical domain',
      cache: CACHES[0],
      prefix: '0-example-com--0',
    });
  });
  it('the wrap is removed only from a label of at least 4 characters that starts with 0- and ends with -0', () => {
    const wrap = (origin: string) => explainOrigin(origin).steps.find((s) => s.name === 'remove-wrap');
    expect(wrap('https://0-0.cdn.ampproject.org')).toMatchObject({ status: 'skipped', output: '0-0' });
    expect(wrap('https://ab-0.cdn.ampproject.org')).toMatchObject({ status: 'skipped', output: 'ab-0' });
    expect(wrap('https://0-ab.cdn.ampproject.org')).toMatchObject({ status: 'skipped', output: '0-ab' });
    expect(wrap('https://0--0.cdn.ampproject.org')).toMatchObject({ status: 'done', output: '' });
    for (const origin of ['https://0-0.cdn.ampproject.org', 'https://ab-0.cdn.ampproject.org', 'https://0--0.cdn.ampproject.org']) {
      expect(explainOrigin(origin).result).toEqual(reverseOrigin(origin));
    }
  });
  it('a long spelled name is cut at 80 characters, as reverseOrigin does', () => {
    // 24 labels ü (xn--tda) and a numeric last label: a 56-octet prefix that spells 194 characters.
    const spelled = `${Array.from({ length: 24 }, () => 'xn--tda').join('.')}.1`;
    const prefix = 'xn--------------------------1-ewcbbbbbbbbbbbbbbbbbbbbbbb';
    expect(domainToUnicode(prefix)).toBe(`${Array.from({ length: 24 }, () => 'ü').join('-')}-1`);
    const origin = `https://${prefix}.cdn.ampproject.org`;
    const explanation = explainOrigin(origin);
    expect(explanation.result).toEqual(reverseOrigin(origin));
    expect(explanation.result).toMatchObject({ reason: 'invalid-domain' });
    // Its 25-hyphen literal reading and 24 non-ASCII characters give it more than 256 readings: the detail says they were not examined.
    expect(explanation.result.ok ? '' : explanation.result.detail).toBe(
      `the prefix spells ${JSON.stringify(spelled.slice(0, 80))}, not a domain; its other readings (more than 256) were not examined: denied whoever it belongs to`,
    );
  });
  it('a hashed prefix stops after the check', () => {
    const origin = 'https://abc.cdn.ampproject.org';
    const explanation = explainOrigin(origin);
    expect(rows(explanation.steps)).toEqual([
      ...head(origin, 'abc'),
      ['check-hashed', 'done', 'abc', null, 'no "-": a hashed prefix; only a precomputed allow-set can say whose it is'],
    ]);
    expect(explanation.result).toEqual({ ok: true, hashed: true, cache: CACHES[0], prefix: 'abc' });
  });
});

describe('explainOrigin: where and why a trace stops', () => {
  it('an unknown cache lists the registered ones', () => {
    const explanation = explainOrigin('https://example.com');
    expect(explanation.steps.at(-1)).toMatchObject({
      name: 'find-cache',
      status: 'failed',
      input: 'example.com',
      note: 'example.com is not on a registered cache (cdn.ampproject.org, www.bing-amp.com)',
      reason: 'unknown-cache',
    });
    expect(explanation.result).toEqual({ ok: false, reason: 'unknown-cache', detail: 'example.com is not on a registered cache' });
  });
  it('a syntax refusal shows the raw input, or nothing for a non-string', () => {
    expect(explainOrigin('https://A.com').steps).toEqual([
      {
        name: 'parse-origin',
        title: TITLES['parse-origin'],
        input: 'https://A.com',
        output: null,
        status: 'failed',
        note: 'host is not lowercase',
        reason: 'not-canonical',
      },
    ]);
    expect(explainOrigin(undefined).steps[0]).toMatchObject({ input: '', reason: 'missing' });
  });
  it('scheme and port name the cache; the port in the parse note', () => {
    const http = explainOrigin('http://example-com.cdn.ampproject.org');
    expect(http.steps[0]?.note).toBe('scheme http, host example-com.cdn.ampproject.org, default port');
    expect(http.steps.at(-1)).toMatchObject({ name: 'check-scheme-port', status: 'failed', note: 'cache origins are always https' });
    expect(http.result).toMatchObject({ cache: CACHES[0] });
    const port = explainOrigin('https://example-com.www.bing-amp.com:8443');
    expect(port.steps[0]?.note).toBe('scheme https, host example-com.www.bing-amp.com, port 8443');
    expect(port.steps[1]?.note).toBe('Bing AMP Cache (bing)');
    expect(port.steps.at(-1)).toMatchObject({
      name: 'check-scheme-port',
      status: 'failed',
      note: 'cache origins use the default port',
      reason: 'non-default-port',
    });
  });
  it('the bare cache and two labels fail at remove-suffix', () => {
    expect(explainOrigin('https://cdn.ampproject.org').steps.at(-1)).toMatchObject({
      name: 'remove-suffix',
      note: 'cdn.ampproject.org itself has no domain prefix',
      reason: 'cache-root',
    });
    expect(explainOrigin('https://a.b-c.cdn.ampproject.org').steps.at(-1)).toMatchObject({
      name: 'remove-suffix',
      note: 'a domain prefix is a single DNS label',
      reason: 'not-a-label',
    });
  });
  it('bad punycode fails at punycode-decode', () => {
    const explanation = explainOrigin('https://xn--a-9999999999.cdn.ampproject.org');
    expect(explanation.steps.at(-1)).toMatchObject({
      name: 'punycode-decode',
      input: 'xn--a-9999999999',
      note: 'the prefix is not valid punycode',
      reason: 'invalid-punycode',
    });
    expect(explanation.result).toMatchObject({ prefix: 'xn--a-9999999999', cache: CACHES[0] });
  });
  it(`shows at most ${EXPLAIN_MAX_SHOWN} characters of a value, ending in …`, () => {
    const exact = `https://${'a'.repeat(EXPLAIN_MAX_SHOWN - 8)}`;
    expect(explainOrigin(exact).steps[0]?.input).toBe(exact);
    const longer = `${exact}b`;
    const shown = explainOrigin(longer).steps[0]?.input;
    expect(shown).toBe(`${longer.slice(0, EXPLAIN_MAX_SHOWN - 1)}…`);
    expect(shown).toHaveLength(EXPLAIN_MAX_SHOWN);
  });
});

describe('explainOrigin with publishers', () => {
  it('names every listed rule that produces the prefix, exact and wildcard', () => {
    const long = `${'long-publisher-domain-name'.repeat(2)}.example.net`;
    const prefix = fallbackPrefix(long);
    const explanation = explainOrigin(`https://${prefix}.cdn.ampproject.org`, { publishers: ['example.com', long, `*.${long}`] });
    expect(explanation.producedBy).toEqual([
      { listed: long, publisherDomain: long, form: 'spec' },
      { listed: `*.${long}`, publisherDomain: long, form: 'spec' },
    ]);
    expect(explanation.verdict).toMatchObject({ allowed: true, reason: 'cache-origin-hashed' });
  });
  it('no prefix, no sources', () => {
    expect(explainOrigin('https://example.com', { publishers: ['example.com'] })).toMatchObject({
      producedBy: [],
      verdict: { allowed: true, via: 'publisher' },
    });
  });
  it('a configuration error that is not an AmpCorsError is reported as invalid-option with its message', () => {
    // A publishers array whose elements cannot be read throws what its getter throws.
    const throwing = (thrown: unknown): string[] =>
      new Proxy(['example.com'], {
        get: (target, key) =>
          key === '0'
            ? (() => {
                throw thrown;
              })()
            : Reflect.get(target, key),
      });
    expect(explainOrigin('https://example-com.cdn.ampproject.org', { publishers: throwing(new Error('no string for you')) }).configError).toEqual({
      code: 'invalid-option',
      message: 'no string for you',
    });
    expect(explainOrigin('https://example-com.cdn.ampproject.org', { publishers: throwing('plain') }).configError).toEqual({
      code: 'invalid-option',
      message: 'plain',
    });
  });
  it('a refused cache list: no steps, the message as the result detail', () => {
    const explanation = explainOrigin('https://example-com.cdn.ampproject.org', { caches: [] });
    expect(explanation).toEqual({
      steps: [],
      result: { ok: false, reason: 'unknown-cache', detail: 'caches must not be empty' },
      configError: { code: 'invalid-cache', message: 'caches must not be empty' },
    });
  });
});
