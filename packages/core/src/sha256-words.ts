/*
 * SHA-256 (FIPS 180-4) of a short string, written as eight 32-bit words
 * straight into the caller's array: the allow-sets hash every configured
 * domain (or prefix) once at construction, a million times for a million
 * domains, and a general-purpose hasher allocates its state, a block buffer,
 * a view and the output on every call. Here the message schedule, the state
 * and the block buffer are module-level and reused; nothing is allocated for
 * an ASCII string. Twin of @noble/hashes `sha256` (the test
 * "sha256Words equals @noble/hashes on any string" compares them): keep in step.
 */

/** FIPS 180-4 §4.2.2: the round constants. */
const K = Int32Array.of(
  0x428a2f98,
  0x71374491,
  0xb5c0fbcf,
  0xe9b5dba5,
  0x3956c25b,
  0x59f111f1,
  0x923f82a4,
  0xab1c5ed5,
  0xd807aa98,
  0x12835b01,
  0x243185be,
  0x550c7dc3,
  0x72be5d74,
  0x80deb1fe,
  0x9bdc06a7,
  0xc19bf174,
  0xe49b69c1,
  0xefbe4786,
  0x0fc19dc6,
  0x240ca1cc,
  0x2de92c6f,
  0x4a7484aa,
  0x5cb0a9dc,
  0x76f988da,
  0x983e5152,
  0xa831c66d,
  0xb00327c8,
  0xbf597fc7,
  0xc6e00bf3,
  0xd5a79147,
  0x06ca6351,
  0x14292967,
  0x27b70a85,
  0x2e1b2138,
  0x4d2c6dfc,
  0x53380d13,
  0x650a7354,
  0x766a0abb,
  0x81c2c92e,
  0x92722c85,
  0xa2bfe8a1,
  0xa81a664b,
  0xc24b8b70,
  0xc76c51a3,
  0xd192e819,
  0xd6990624,
  0xf40e3585,
  0x106aa070,
  0x19a4c116,
  0x1e376c08,
  0x2748774c,
  0x34b0bcb5,
  0x391c0cb3,
  0x4ed8aa4a,
  0x5b9cca4f,
  0x682e6ff3,
  0x748f82ee,
  0x78a5636f,
  0x84c87814,
  0x8cc70208,
  0x90befffa,
  0xa4506ceb,
  0xbef9a3f7,
  0xc67178f2,
);

/** FIPS 180-4 §5.3.3: the initial hash value. */
const IV = Int32Array.of(0x6a09e667, 0xbb67ae85, 0x3c6ef372, 0xa54ff53a, 0x510e527f, 0x9b05688c, 0x1f83d9ab, 0x5be0cd19);

/** The last 16 words of the message schedule (int32 arrays: their reads stay small integers, never heap numbers). */
const W = new Int32Array(16);
/** The padded message (grown for a longer input; a domain needs at most 5 blocks of UTF-8). */
let message = new Uint8Array(320);

const encoder = new TextEncoder();

/**
 * Writes the SHA-256 of the UTF-8 bytes of `input` as eight big-endian
 * 32-bit words into `out[at]` … `out[at + 7]` (the digest's bytes 0–3 are
 * `out[at]`, most significant first).
 *
 * @example const words = new Uint32Array(8); sha256Words('abc', words, 0); words[0] // 0xba7816bf
 */
export function sha256Words(input: string, out: Uint32Array, at: number): void {
  // The message bytes: an ASCII string's UTF-8 bytes are its code units (no encoder call).
  let length = input.length;
  let ascii = true;
  for (let i = 0; i < length && ascii; i++) ascii = input.charCodeAt(i) < 0x80;
  const bytes = ascii ? undefined : encoder.encode(input);
  if (bytes !== undefined) length = bytes.length;
  // FIPS 180-4 §5.1.1 padding: a 1 bit, zeros, the bit length in 64 bits; a whole number of 64-byte blocks.
  const padded = (length + 9 + 63) & ~63;
  if (padded > message.length) message = new Uint8Array(padded * 2);
  if (bytes === undefined) for (let i = 0; i < length; i++) message[i] = input.charCodeAt(i);
  else message.set(bytes);
  message[length] = 0x80;
  message.fill(0, length + 1, padded - 8);
  const high = Math.floor(length / 0x20000000);
  const low = (length * 8) >>> 0;
  message[padded - 8] = high >>> 24;
  message[padded - 7] = (high >>> 16) & 0xff;
  message[padded - 6] = (high >>> 8) & 0xff;
  message[padded - 5] = high & 0xff;
  message[padded - 4] = low >>> 24;
  message[padded - 3] = (low >>> 16) & 0xff;
  message[padded - 2] = (low >>> 8) & 0xff;
  message[padded - 1] = low & 0xff;
  let h0 = IV[0] as number;
  let h1 = IV[1] as number;
  let h2 = IV[2] as number;
  let h3 = IV[3] as number;
  let h4 = IV[4] as number;
  let h5 = IV[5] as number;
  let h6 = IV[6] as number;
  let h7 = IV[7] as number;
  // FIPS 180-4 §6.2.2, for each block.
  for (let block = 0; block < padded; block += 64) {
    // 1.–3. The message schedule (kept 16 words at a time) and the working variables, 64 rounds.
    let a = h0;
    let b = h1;
    let c = h2;
    let d = h3;
    let e = h4;
    let f = h5;
    let g = h6;
    let h = h7;
    for (let t = 0; t < 64; t++) {
      let w: number;
      if (t < 16) {
        const p = block + t * 4;
        w = ((message[p] as number) << 24) | ((message[p + 1] as number) << 16) | ((message[p + 2] as number) << 8) | (message[p + 3] as number);
      } else {
        const w15 = W[(t - 15) & 15] as number;
        const w2 = W[(t - 2) & 15] as number;
        const s0 = ((w15 >>> 7) | (w15 << 25)) ^ ((w15 >>> 18) | (w15 << 14)) ^ (w15 >>> 3);
        const s1 = ((w2 >>> 17) | (w2 << 15)) ^ ((w2 >>> 19) | (w2 << 13)) ^ (w2 >>> 10);
        w = (s1 + (W[(t - 7) & 15] as number) + s0 + (W[t & 15] as number)) | 0;
      }
      W[t & 15] = w;
      const sigma1 = ((e >>> 6) | (e << 26)) ^ ((e >>> 11) | (e << 21)) ^ ((e >>> 25) | (e << 7));
      const t1 = (h + sigma1 + ((e & f) ^ (~e & g)) + (K[t] as number) + w) | 0;
      const sigma0 = ((a >>> 2) | (a << 30)) ^ ((a >>> 13) | (a << 19)) ^ ((a >>> 22) | (a << 10));
      const t2 = (sigma0 + ((a & b) ^ (a & c) ^ (b & c))) | 0;
      h = g;
      g = f;
      f = e;
      e = (d + t1) | 0;
      d = c;
      c = b;
      b = a;
      a = (t1 + t2) | 0;
    }
    // 4. The intermediate hash value.
    h0 = (h0 + a) | 0;
    h1 = (h1 + b) | 0;
    h2 = (h2 + c) | 0;
    h3 = (h3 + d) | 0;
    h4 = (h4 + e) | 0;
    h5 = (h5 + f) | 0;
    h6 = (h6 + g) | 0;
    h7 = (h7 + h) | 0;
  }
  out[at] = h0;
  out[at + 1] = h1;
  out[at + 2] = h2;
  out[at + 3] = h3;
  out[at + 4] = h4;
  out[at + 5] = h5;
  out[at + 6] = h6;
  out[at + 7] = h7;
}
