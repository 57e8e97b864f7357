// SPEC §5 hashing: SHA-256 of an expression, truncated to 4, 8, 16 or 32 bytes.
import { sha256 } from '@noble/hashes/sha2.js';
import { bytesToHex, utf8ToBytes } from '@noble/hashes/utils.js';
import { AmpCorsError } from './errors.js';

/** Lengths a Safe Browsing hash is used at: 4, 8 or 16-byte prefixes, or the full 32 bytes. */
export type HashPrefixLength = 4 | 8 | 16 | 32;

const LENGTHS: readonly number[] = [4, 8, 16, 32];

/**
 * SHA-256 of the UTF-8 encoding of `text`.
 *
 * @returns the 32-byte digest
 */
export function sha256Utf8(text: string): Uint8Array {
  return sha256(utf8ToBytes(text));
}

/**
 * The first `bytes` bytes of the SHA-256 hash of an expression (SPEC §5
 * hashing), as produced by `urlExpressions`.
 *
 * @param expression - a host-suffix / path-prefix expression (`b.com/1/`)
 * @param bytes - the prefix length: 4, 8, 16 or 32 (the full hash)
 * @throws AmpCorsError `invalid-option` when `bytes` is not 4, 8, 16 or 32
 * @example hashPrefix('foo.com/', 4) // Uint8Array [0xaf, 0x30, 0x01, 0x0e]
 */
export function hashPrefix(expression: string, bytes: HashPrefixLength): Uint8Array {
  if (!LENGTHS.includes(bytes)) {
    throw new AmpCorsError('invalid-option', `Invalid hash prefix length ${String(bytes)}: must be 4, 8, 16 or 32`);
  }
  return sha256Utf8(expression).slice(0, bytes);
}

/**
 * {@link hashPrefix} as lowercase hex (two characters per byte).
 *
 * @example hashPrefixHex('foo.com/', 4) // 'af30010e'
 */
export function hashPrefixHex(expression: string, bytes: HashPrefixLength): string {
  return bytesToHex(hashPrefix(expression, bytes));
}
