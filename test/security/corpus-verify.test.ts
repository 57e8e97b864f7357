import { sha256Base32 } from '../differential/sha256-base32.js';
import { createVerifier, type Verdict } from '@ampcors/core';
import { describe, expect, it } from 'vitest';
import { BUCHER_HASH_ASCII, BUCHER_HASH_UNICODE, CORPUS, CORPUS_CONFIG, type CorpusClass, LONG_DOMAIN, LONG_DOMAIN_HASH } from './corpus.js';

// Written without core, so the corpus hashes do not come from the code under test.
const hash = (text: string) => sha256Base32(text);

const verifier = createVerifier(CORPUS_CONFIG);

describe('adversarial Origin corpus through verify', () => {
  it('has at least 150 entries, every class represented', () => {
    expect(CORPUS.length).toBeGreaterThanOrEqual(150);
    const classes = new Set<CorpusClass>(CORPUS.map((entry) => entry.class));
    expect(classes.size).toBe(19);
    expect(new Set(CORPUS.map((e) => `${JSON.stringify(e.origin)}\u0000${JSON.stringify(e.context ?? {})}`)).size).toBe(CORPUS.length);
  });

  it('hard-coded hash prefixes are base32(SHA-256) of the stated domains', () => {
    expect(hash(LONG_DOMAIN)).toBe(LONG_DOMAIN_HASH);
    expect(hash('xn--bcher-kva.de')).toBe(BUCHER_HASH_ASCII);
    expect(hash('bücher.de')).toBe(BUCHER_HASH_UNICODE);
  });

  it.each(CORPUS.map((entry, index) => [index, entry.class, entry.origin === null ? 'null' : JSON.stringify(entry.origin.slice(0, 90)), entry] as const))(
    '#%i %s %s',
    (_index, _class, _shown, entry) => {
      let verdict: Verdict | undefined;
      expect(() => {
        verdict = verifier.verify(entry.origin, entry.context);
      }).not.toThrow();
      expect({ allowed: verdict?.allowed, reason: verdict?.reason }).toEqual({ allowed: entry.allowed, reason: entry.reason });
      if (verdict?.allowed) {
        // An allowed verdict names what allowed it; a denial never carries a CORS-usable origin claim.
        expect(verdict.origin).toBe(entry.origin);
        if (verdict.via === 'cache') expect(verdict.cache).toBeDefined();
      } else {
        expect(verdict?.detail.length).toBeLessThan(400);
      }
    },
  );
});
