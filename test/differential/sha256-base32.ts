/**
 * RFC 4648 base32 (lowercase, no padding) of the SHA-256 of a UTF-8 string,
 * written here with node:crypto so that the test oracles' hashed prefixes
 * never come from @ampcors/core (the amppackager oracle, the security corpus).
 */
import { createHash } from 'node:crypto';

const ALPHABET = 'abcdefghijklmnopqrstuvwxyz234567';

/** base32 of SHA-256(`text`): 52 characters, the hashed prefix before any truncation. */
export function sha256Base32(text: string): string {
  let out = '';
  let buffer = 0;
  let bits = 0;
  for (const byte of createHash('sha256').update(text, 'utf8').digest()) {
    buffer = (buffer << 8) | byte;
    bits += 8;
    while (bits >= 5) {
      out += ALPHABET[(buffer >>> (bits - 5)) & 31];
      bits -= 5;
    }
    buffer &= (1 << bits) - 1;
  }
  if (bits > 0) out += ALPHABET[(buffer << (5 - bits)) & 31];
  return out;
}
