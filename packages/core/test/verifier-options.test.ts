import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { AmpCorsError, cacheOrigin, createAsyncVerifier, createVerifier, type PublisherSource } from '../src/index.js';

// The keys of a configuration are checked before any value is read (config-check.ts), from the side of a
// user whose typo would otherwise give a verifier that allows nothing, or everything, without a word.

const PUBLISHER = 'example.com';
const CACHE_ORIGIN = cacheOrigin(PUBLISHER);
const OTHER = 'https://evil-com.cdn.ampproject.org';

/** The AmpCorsError thrown by `build`, or a failure when nothing (or something else) is thrown. */
function errorOf(build: () => unknown): AmpCorsError {
  try {
    build();
  } catch (error) {
    expect(error).toBeInstanceOf(AmpCorsError);
    return error as AmpCorsError;
  }
  throw new Error('no error was thrown');
}

/** A source that knows no publisher. */
const emptySource: PublisherSource = {
  publisherOfPrefix: async () => undefined,
  hasPublisher: async () => false,
};

describe('createVerifier: its option keys', () => {
  it.each([
    ['publisher', 'publishers'],
    ['Publishers', 'publishers'],
    ['orgins', 'origins'],
    ['cache', 'caches'],
    ['legacyCacheOrigin', 'legacyCacheOrigins'],
  ])('refuses the unknown key %s, naming %s', (typo, meant) => {
    const config = { publishers: [PUBLISHER], [typo]: typo === 'orgins' ? ['https://www.example.com'] : [] };
    const error = errorOf(() => createVerifier(config as never));
    expect(error.code).toBe('invalid-option');
    expect(error.message).toContain(`\`${typo}\``);
    expect(error.message).toContain(`did you mean \`${meant}\`?`);
    expect(error.message).toContain('createVerifier');
  });

  it('refuses `publisher` (a typo of the one required key) instead of allowing nothing', () => {
    const error = errorOf(() => createVerifier({ publisher: [PUBLISHER] } as never));
    expect(error.message).toContain('did you mean `publishers`?');
    expect(error.message).toContain('`publishers` is missing');
  });

  it('refuses `publishers: []` alone (it would allow nothing) but not beside origins', () => {
    expect(errorOf(() => createVerifier({ publishers: [] })).message).toMatch(/publishers is empty/);
    expect(errorOf(() => createVerifier({ publishers: [], origins: [] })).message).toMatch(/is empty/);
    const pages = createVerifier({ publishers: [], origins: ['https://www.example.com'] });
    expect(pages.verify('https://www.example.com').allowed).toBe(true);
    expect(pages.verify(CACHE_ORIGIN).allowed).toBe(false);
  });

  it('refuses a key present without a value (an unset environment variable)', () => {
    expect(errorOf(() => createVerifier({ publishers: undefined } as never)).message).toContain('`publishers` is present but undefined');
    expect(errorOf(() => createVerifier({ publishers: [PUBLISHER], origins: undefined })).message).toContain('`origins` is present but undefined');
  });

  it('reports every problem at once: unknown keys and bad values', () => {
    const error = errorOf(() => createVerifier({ publishers: ['com'], orgins: ['https://a.example'], legacyCacheOrigin: true } as never));
    expect(error.message).toContain('3 configuration problems');
    expect(error.message).toContain('`orgins`');
    expect(error.message).toContain('`legacyCacheOrigin`');
    expect(error.message).toContain('"com"');
  });

  it('keeps a single value problem worded as before (no entry point prefixed)', () => {
    const error = errorOf(() => createVerifier({ publishers: ['com'] }));
    expect(error.message.startsWith('publishers: ')).toBe(true);
  });

  it('refuses a configuration that is not an object', () => {
    for (const config of [null, undefined, 'example.com', ['example.com'], 42]) {
      expect(errorOf(() => createVerifier(config as never)).code).toBe('invalid-option');
    }
  });

  it('never builds a verifier from a misspelt configuration (property: any one-key typo of a valid one)', () => {
    const keys = ['publishers', 'origins', 'caches', 'legacyCacheOrigins'];
    fc.assert(
      fc.property(fc.string({ minLength: 1, maxLength: 20 }), (key) => {
        fc.pre(!keys.includes(key) && key !== '__proto__');
        // Whatever the unknown key holds, the configuration is refused: no verifier at all, so none that allows.
        expect(() => createVerifier({ publishers: [PUBLISHER], [key]: ['https://www.example.com'] } as never)).toThrow(AmpCorsError);
      }),
      { numRuns: 300 },
    );
  });

  it('a well-formed configuration still allows what it names, and no more', () => {
    const verifier = createVerifier({ publishers: [PUBLISHER] });
    expect(verifier.verify(CACHE_ORIGIN).allowed).toBe(true);
    expect(verifier.verify(OTHER).allowed).toBe(false);
  });
});

describe('createAsyncVerifier: its option keys', () => {
  it('accepts no in-memory publishers (the source decides), and publishers: [] beside a source', async () => {
    for (const verifier of [createAsyncVerifier({ source: emptySource }), createAsyncVerifier({ source: emptySource, publishers: [] })]) {
      expect(await verifier.verify(CACHE_ORIGIN)).toMatchObject({ allowed: false, reason: 'unknown-publisher' });
    }
    expect(createAsyncVerifier({ source: emptySource, publishers: [PUBLISHER] }).verify(CACHE_ORIGIN)).toMatchObject({ allowed: true });
  });

  it('refuses unknown keys naming the closest known one, all at once', () => {
    const error = errorOf(() => createAsyncVerifier({ source: emptySource, publisher: [PUBLISHER], orgins: [] } as never));
    expect(error.message).toContain('did you mean `publishers`?');
    expect(error.message).toContain('did you mean `origins`?');
    expect(error.message).toContain('createAsyncVerifier');
  });

  it('refuses a missing or malformed source (a verifier that could never ask it)', () => {
    expect(errorOf(() => createAsyncVerifier({ sourc: emptySource } as never)).message).toContain('did you mean `source`?');
    expect(errorOf(() => createAsyncVerifier({ publishers: [PUBLISHER] } as never)).message).toContain('`source` is missing');
    expect(errorOf(() => createAsyncVerifier({ source: { hasPublisher: async () => true } } as never)).message).toContain('publisherOfPrefix');
  });

  it('still validates the in-memory values', () => {
    expect(errorOf(() => createAsyncVerifier({ source: emptySource, publishers: ['com'] })).message).toContain('"com"');
  });
});
