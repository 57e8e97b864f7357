import { describe, expect, it } from 'vitest';
import { cacheOrigin, createAsyncVerifier, prefixForms, type PublisherSource } from '../src/index.js';

/** A Map-backed source that records what it was asked. */
function mapSource(domains: string[]): PublisherSource & { asked: string[]; fail: boolean } {
  const prefixes = new Map<string, string>();
  for (const d of domains) for (const { prefix } of prefixForms(d)) prefixes.set(prefix, d);
  const state = {
    asked: [] as string[],
    fail: false,
    async publisherOfPrefix(prefix: string) {
      state.asked.push(prefix);
      if (state.fail) throw new Error('connection refused');
      return prefixes.get(prefix);
    },
    async hasPublisher(domain: string) {
      state.asked.push(domain);
      if (state.fail) throw new Error('connection refused');
      return domains.includes(domain);
    },
  };
  return state;
}

const LONG = `${'a'.repeat(30)}.${'b'.repeat(30)}.example.net`; // hashed prefix

describe('createAsyncVerifier', () => {
  it('answers synchronously when memory decides, without asking the source', () => {
    const source = mapSource(['shop.example']);
    const verifier = createAsyncVerifier({ publishers: ['example.com'], source });
    const verdict = verifier.verify('https://example-com.cdn.ampproject.org');
    expect(verdict).not.toBeInstanceOf(Promise);
    expect(verdict).toMatchObject({ allowed: true });
    expect(verifier.verify('null')).toMatchObject({ allowed: false, reason: 'null-origin' });
    expect(verifier.verify('http://shop-example.cdn.ampproject.org')).toMatchObject({ allowed: false, reason: 'insecure-scheme' });
    expect(source.asked).toEqual([]);
  });
  it('allows readable and hashed cache origins and publisher origins known to the source', async () => {
    const source = mapSource(['shop.example', LONG]);
    const verifier = createAsyncVerifier({ source });
    await expect(verifier.verify('https://shop-example.cdn.ampproject.org')).resolves.toMatchObject({
      allowed: true,
      via: 'cache',
      reason: 'cache-origin',
      publisherDomain: 'shop.example',
    });
    await expect(verifier.verify(cacheOrigin(LONG, 'bing'))).resolves.toMatchObject({ allowed: true, reason: 'cache-origin-hashed', publisherDomain: LONG });
    await expect(verifier.verify('https://shop.example')).resolves.toMatchObject({ allowed: true, via: 'publisher' });
  });
  it('denies what the source does not know, keeping the memory reason', async () => {
    const verifier = createAsyncVerifier({ source: mapSource(['shop.example']) });
    await expect(verifier.verify('https://evil-example.cdn.ampproject.org')).resolves.toMatchObject({ allowed: false, reason: 'unknown-publisher' });
    await expect(verifier.verify('https://evil.example')).resolves.toMatchObject({ allowed: false, reason: 'unknown-origin' });
  });
  it('fails closed when the source fails', async () => {
    const source = mapSource(['shop.example']);
    source.fail = true;
    const verifier = createAsyncVerifier({ source });
    await expect(verifier.verify('https://shop-example.cdn.ampproject.org')).resolves.toMatchObject({ allowed: false, reason: 'source-unavailable' });
  });
  it('ignores a source answer that is not a canonical domain', async () => {
    const verifier = createAsyncVerifier({
      source: { publisherOfPrefix: async () => 'Not A Domain', hasPublisher: async () => false },
    });
    await expect(verifier.verify('https://x-example.cdn.ampproject.org')).resolves.toMatchObject({ allowed: false, reason: 'unknown-publisher' });
  });
  it("a source claiming a domain the publishers option refuses grants nothing (attacker's review, session 17)", async () => {
    // A registry filled by an older version or by hand: a public suffix (anyone's sites under it, and GitHub's own page)
    // or an AMP cache's own domain, which createVerifier refuses at start-up.
    const refused = ['github.io', 'co.uk', 's3.amazonaws.com', 'cdn.ampproject.org', 'www.bing-amp.com'];
    const source = mapSource([...refused, 'shop.example']);
    const verifier = createAsyncVerifier({ source });
    for (const domain of refused) {
      for (const { prefix } of prefixForms(domain)) {
        expect(await verifier.verify(`https://${prefix}.cdn.ampproject.org`), `${domain} as ${prefix}`).toMatchObject({ allowed: false });
      }
      expect(await verifier.verify(`https://${domain}`), domain).toMatchObject({ allowed: false });
      const viaSource = await verifier.verify(cacheOrigin('shop.example'), { sourceOrigin: `https://${domain}` });
      expect(viaSource, `__amp_source_origin https://${domain}`).toMatchObject({ allowed: false });
    }
    // The same source's ordinary domain is still allowed, with its source origin.
    expect(await verifier.verify(cacheOrigin('shop.example'), { sourceOrigin: 'https://shop.example' })).toMatchObject({ allowed: true });
  });

  it('checks __amp_source_origin against memory and source', async () => {
    const verifier = createAsyncVerifier({ source: mapSource(['shop.example']) });
    await expect(verifier.verify('https://shop-example.cdn.ampproject.org', { sourceOrigin: 'https://shop.example' })).resolves.toMatchObject({
      allowed: true,
      sourceOrigin: 'https://shop.example',
    });
    await expect(verifier.verify('https://shop-example.cdn.ampproject.org', { sourceOrigin: 'https://evil.example' })).resolves.toMatchObject({
      allowed: false,
      reason: 'source-origin-mismatch',
    });
  });
});
