// Attacker's review, session 17 (helper attack-core3): a hand-made compact allow-set whose Rice
// parameter is 1 and whose every delta is 1 codes each 16- or 32-byte hash in 2 bits, so
// loadAllowSet allocates 64x (16-byte hashes) or 128x (32-byte hashes) the file's size, and the
// CLI's file bound (MAX_ALLOW_SET_BYTES, 2 GiB) no longer bounds memory: a 16 MB file makes
// `ampcors check --allow-set` reach 2.1 GB RSS in 10 s. A compiled set's hashes are SHA-256 output
// (incompressible): Rice coding saves about 2.5 bytes per hash, never more than half of it.
import { createHash } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { compileAllowSet, isAmpCorsError, loadAllowSet } from '@ampcors/core';

const sha256 = (bytes: Uint8Array): Uint8Array => new Uint8Array(createHash('sha256').update(bytes).digest());

/** A well-formed (checksummed, strictly increasing) Rice set: k = 1 and every delta 1, 2 bits per hash. */
function denseRiceFile(dataBytes: number, hashBytes: number): Uint8Array {
  const entries = dataBytes * 4;
  const data = new Uint8Array(hashBytes + dataBytes);
  data.fill(0xaa, hashBytes); // per delta, LSB first: unary 0 (quotient 0), then remainder bit 1
  const id = new TextEncoder().encode('google');
  const domain = new TextEncoder().encode('cdn.ampproject.org');
  const caches = [id.length, ...id, domain.length, ...domain];
  const file = new Uint8Array(24 + caches.length + 4 + data.length + 32);
  const view = new DataView(file.buffer);
  file.set([0x41, 0x4d, 0x50, 0x43, 0x41, 0x53, 0x0d, 0x0a]);
  view.setUint16(8, 1);
  file[10] = 1; // Rice
  file[11] = hashBytes;
  view.setUint32(12, entries + 1);
  view.setUint32(16, 1);
  file[20] = 1; // Rice parameter
  file[21] = 1; // one cache
  file.set(caches, 24);
  view.setUint32(24 + caches.length, data.length);
  file.set(data, 28 + caches.length);
  file.set(sha256(file.subarray(0, file.length - 32)), file.length - 32);
  return file;
}

/** Bytes the loaded set holds for its hashes, or 0 when the file is refused. */
function heldBytes(file: Uint8Array): number {
  try {
    const set = loadAllowSet(file);
    return set.size * set.hashBytes;
  } catch (error) {
    expect(isAmpCorsError(error)).toBe(true);
    return 0;
  }
}

describe('a hand-made allow-set cannot make loadAllowSet hold far more than its size', () => {
  it('a compiled set holds about its own size (the honest ratio)', () => {
    const domains = Array.from({ length: 5000 }, (_, i) => `site${i}.example${i % 7}.com`);
    const file = compileAllowSet(domains);
    expect(heldBytes(file)).toBeGreaterThan(0);
    expect(heldBytes(file)).toBeLessThan(2 * file.length);
  });

  for (const hashBytes of [16, 32]) {
    it(`a 1 MB Rice file of ${hashBytes}-byte hashes with k = 1 is refused or held within twice its size`, () => {
      const file = denseRiceFile(1_000_000, hashBytes);
      expect(heldBytes(file)).toBeLessThanOrEqual(2 * file.length);
    });
  }
});
