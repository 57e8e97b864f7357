import { AmpCorsError } from './errors.js';

/*
 * Golomb-Rice coding as Safe Browsing uses it for hash-prefix lists (SPEC §5;
 * v4 `RiceDeltaEncoding`, v5 `RiceDeltaEncoded32Bit` … `256Bit`): a sorted
 * list is sent as its first value plus the differences between neighbours,
 * each difference `d` written as the quotient `d >> k` in unary (that many 1
 * bits, then a 0 bit) followed by the low `k` bits of `d`. Bits are packed
 * least significant first within each byte, bytes in order; multi-bit fields
 * are also written least significant bit first.
 *
 * Values wider than 53 bits (ampcors's 128-bit hashes) are handled as
 * fixed-width big-endian byte strings, so no BigInt is needed.
 */

function bad(message: string): AmpCorsError {
  return new AmpCorsError('invalid-allow-set', `Rice-coded data: ${message}`);
}

/**
 * Largest unary quotient ampcors reads or writes. With a well-chosen
 * parameter a quotient is rarely above 64; a longer run is corrupt data or a
 * parameter far too small, and is refused rather than read bit by bit.
 */
export const MAX_RICE_QUOTIENT = 0xffff;

/**
 * Reads a bit stream least significant bit first within each byte, bytes in
 * order (Safe Browsing's Rice bit order).
 *
 * @example new BitReader(Uint8Array.of(0b101)).readBits(3) // 5
 */
export class BitReader {
  private readonly data: Uint8Array;
  private position = 0;

  /** @param data - the encoded bytes (not copied) */
  constructor(data: Uint8Array) {
    this.data = data;
  }

  /** Number of bits not yet read. */
  get bitsRemaining(): number {
    return this.data.length * 8 - this.position;
  }

  /**
   * Reads `count` bits (0 to 32) as an unsigned integer, first bit least significant.
   *
   * @throws AmpCorsError `invalid-allow-set` when fewer bits remain.
   */
  readBits(count: number): number {
    if (!Number.isInteger(count) || count < 0 || count > 32) throw new AmpCorsError('invalid-option', `cannot read ${count} bits at once (0 to 32)`);
    if (count > this.bitsRemaining) throw bad(`ran out of bits (wanted ${count}, ${this.bitsRemaining} left)`);
    let value = 0;
    let written = 0;
    while (written < count) {
      const byte = this.data[this.position >>> 3] as number;
      const offset = this.position & 7;
      const take = Math.min(8 - offset, count - written);
      const bits = (byte >>> offset) & ((1 << take) - 1);
      value += bits * 2 ** written;
      written += take;
      this.position += take;
    }
    return value;
  }

  /**
   * Reads a unary number: the count of 1 bits before the next 0 bit.
   *
   * @throws AmpCorsError `invalid-allow-set` when the stream ends first or the run exceeds {@link MAX_RICE_QUOTIENT}.
   */
  readUnary(): number {
    let count = 0;
    for (;;) {
      if (this.position >= this.data.length * 8) throw bad('ran out of bits in a unary quotient');
      const bit = ((this.data[this.position >>> 3] as number) >>> (this.position & 7)) & 1;
      this.position++;
      if (bit === 0) return count;
      if (++count > MAX_RICE_QUOTIENT) throw bad('unary quotient too long');
    }
  }
}

/**
 * Writes a bit stream in {@link BitReader}'s order; the last byte is padded
 * with 0 bits.
 */
export class BitWriter {
  private buffer = new Uint8Array(64);
  private position = 0;

  private reserve(bits: number): void {
    const needed = (this.position + bits + 7) >>> 3;
    if (needed <= this.buffer.length) return;
    const grown = new Uint8Array(Math.max(needed, this.buffer.length * 2));
    grown.set(this.buffer);
    this.buffer = grown;
  }

  /** Writes the low `count` bits (0 to 32) of `value`, least significant first. */
  writeBits(value: number, count: number): void {
    if (!Number.isInteger(count) || count < 0 || count > 32) throw new AmpCorsError('invalid-option', `cannot write ${count} bits at once (0 to 32)`);
    this.reserve(count);
    let rest = value >>> 0;
    let left = count;
    while (left > 0) {
      const offset = this.position & 7;
      const take = Math.min(8 - offset, left);
      const index = this.position >>> 3;
      this.buffer[index] = (this.buffer[index] as number) | ((rest & ((1 << take) - 1)) << offset);
      rest = take === 32 ? 0 : rest >>> take;
      left -= take;
      this.position += take;
    }
  }

  /** Writes `count` as unary: `count` 1 bits, then a 0 bit. */
  writeUnary(count: number): void {
    if (!Number.isInteger(count) || count < 0 || count > MAX_RICE_QUOTIENT) throw new AmpCorsError('invalid-option', `unary value ${count} out of range`);
    let left = count;
    while (left >= 32) {
      this.writeBits(0xffffffff, 32);
      left -= 32;
    }
    if (left > 0) this.writeBits(2 ** left - 1, left);
    this.writeBits(0, 1);
  }

  /** The bytes written so far (a copy, the last byte padded with 0 bits). */
  bytes(): Uint8Array {
    return this.buffer.slice(0, (this.position + 7) >>> 3);
  }
}

/**
 * Decodes `count` raw Rice-coded values (not delta-accumulated): each is
 * `(q << k) + r`, `q` in unary and `r` the next `k` bits.
 *
 * @param riceParameter - `k`, 0 to 32
 * @throws AmpCorsError `invalid-allow-set` when the data ends early or a value exceeds 2^53.
 * @example decodeRiceValues(Uint8Array.of(0xf7, 0x02), 2, 2) // [15, 9]
 */
export function decodeRiceValues(data: Uint8Array, riceParameter: number, count: number): number[] {
  if (!Number.isInteger(riceParameter) || riceParameter < 0 || riceParameter > 32) {
    throw new AmpCorsError('invalid-option', `Rice parameter ${riceParameter} out of range (0 to 32)`);
  }
  if (!Number.isSafeInteger(count) || count < 0) throw new AmpCorsError('invalid-option', `value count ${count} must be a non-negative integer`);
  const reader = new BitReader(data);
  const values: number[] = [];
  for (let i = 0; i < count; i++) {
    const q = reader.readUnary();
    const value = q * 2 ** riceParameter + reader.readBits(riceParameter);
    if (value > Number.MAX_SAFE_INTEGER) throw bad('value exceeds 2^53');
    values.push(value);
  }
  return values;
}

/**
 * A Rice-delta coded sorted list of fixed-width unsigned integers, shaped
 * like Safe Browsing v5's `RiceDeltaEncoded{32,64,128,256}Bit` (and v4's
 * `RiceDeltaEncoding` for 32 bits).
 */
export interface RiceDeltaEncoding {
  /** The first (smallest) value, big-endian, `width` bytes. */
  readonly firstValue: Uint8Array;
  /** The Rice parameter `k` (1 to `8 * width - 1` when there are deltas). */
  readonly riceParameter: number;
  /** Number of deltas coded in `encodedData` (one less than the number of values). */
  readonly entriesCount: number;
  /** The Rice-coded deltas. */
  readonly encodedData: Uint8Array;
}

function checkWidth(width: number): number {
  if (!Number.isInteger(width) || width < 4 || width > 32 || width % 4 !== 0) {
    throw new AmpCorsError('invalid-option', `value width ${width} must be 4, 8, …, 32 bytes`);
  }
  return width / 4;
}

/** Reads value `index` of a flat big-endian array into `words`, least significant word first. */
function loadWords(values: Uint8Array, index: number, words: Uint32Array): void {
  const n = words.length;
  const base = index * n * 4;
  for (let w = 0; w < n; w++) {
    const at = base + (n - 1 - w) * 4;
    words[w] = (((values[at] as number) << 24) | ((values[at + 1] as number) << 16) | ((values[at + 2] as number) << 8) | (values[at + 3] as number)) >>> 0;
  }
}

/** Writes `words` (least significant first) as value `index` of a flat big-endian array. */
function storeWords(values: Uint8Array, index: number, words: Uint32Array): void {
  const n = words.length;
  const base = index * n * 4;
  for (let w = 0; w < n; w++) {
    const at = base + (n - 1 - w) * 4;
    const word = words[w] as number;
    values[at] = word >>> 24;
    values[at + 1] = (word >>> 16) & 0xff;
    values[at + 2] = (word >>> 8) & 0xff;
    values[at + 3] = word & 0xff;
  }
}

/** Approximate value of `words` as a double. */
function wordsToNumber(words: Uint32Array): number {
  let value = 0;
  for (let w = words.length - 1; w >= 0; w--) value = value * 2 ** 32 + (words[w] as number);
  return value;
}

/** `out = a - b`; returns false when `a < b`. */
function subtractWords(a: Uint32Array, b: Uint32Array, out: Uint32Array): boolean {
  let borrow = 0;
  for (let w = 0; w < a.length; w++) {
    const diff = (a[w] as number) - (b[w] as number) - borrow;
    borrow = diff < 0 ? 1 : 0;
    out[w] = diff >>> 0;
  }
  return borrow === 0;
}

/**
 * The Rice parameter that codes these sorted deltas in the fewest bits,
 * estimated from their sizes (a difference of at most a few bits per list).
 */
function chooseRiceParameter(values: Uint8Array, count: number, wordCount: number): number {
  const maxK = wordCount * 32 - 1;
  if (count < 2) return 1;
  const prev = new Uint32Array(wordCount);
  const cur = new Uint32Array(wordCount);
  const delta = new Uint32Array(wordCount);
  loadWords(values, 0, prev);
  loadWords(values, count - 1, cur);
  subtractWords(cur, prev, delta);
  const mean = wordsToNumber(delta) / (count - 1);
  const guess = Math.min(maxK, Math.max(1, Math.floor(Math.log2(Math.max(1, mean * Math.LN2)))));
  const candidates = [guess - 1, guess, guess + 1].filter((k) => k >= 1 && k <= maxK);
  const totals = candidates.map(() => 0);
  let largest = 0;
  for (let i = 1; i < count; i++) {
    loadWords(values, i, cur);
    loadWords(values, i - 1, prev);
    subtractWords(cur, prev, delta);
    const d = wordsToNumber(delta);
    if (d > largest) largest = d;
    for (let c = 0; c < candidates.length; c++) totals[c] = (totals[c] as number) + Math.floor(d / 2 ** (candidates[c] as number));
  }
  let best = 0;
  for (let c = 1; c < candidates.length; c++) {
    const cost = (k: number, t: number) => (count - 1) * (k + 1) + t;
    if (cost(candidates[c] as number, totals[c] as number) < cost(candidates[best] as number, totals[best] as number)) best = c;
  }
  // Never so small that the largest delta's quotient exceeds MAX_RICE_QUOTIENT
  // (only a list far from uniform, such as one cluster and one outlier, needs this).
  const needed = largest > MAX_RICE_QUOTIENT ? Math.ceil(Math.log2(largest / MAX_RICE_QUOTIENT)) + 1 : 1;
  return Math.min(maxK, Math.max(candidates[best] as number, needed));
}

/**
 * Rice-delta codes a sorted list of `width`-byte big-endian unsigned
 * integers given as one flat array (`values.length` a multiple of `width`).
 * Equal neighbours are allowed (a delta of 0).
 *
 * @param riceParameter - `k`; default: the one giving the shortest code
 * @throws AmpCorsError `invalid-option` for an empty or unsorted list, a bad width or parameter.
 */
export function encodeRiceDeltas(values: Uint8Array, width: number, riceParameter?: number): RiceDeltaEncoding {
  const wordCount = checkWidth(width);
  if (values.length === 0 || values.length % width !== 0) {
    throw new AmpCorsError('invalid-option', `values must hold at least one ${width}-byte value`);
  }
  const count = values.length / width;
  const k = riceParameter ?? chooseRiceParameter(values, count, wordCount);
  if (!Number.isInteger(k) || k < 1 || k > wordCount * 32 - 1)
    throw new AmpCorsError('invalid-option', `Rice parameter ${k} out of range (1 to ${wordCount * 32 - 1})`);
  const writer = new BitWriter();
  const prev = new Uint32Array(wordCount);
  const cur = new Uint32Array(wordCount);
  const delta = new Uint32Array(wordCount);
  const wordShift = k >>> 5;
  const bitShift = k & 31;
  loadWords(values, 0, prev);
  for (let i = 1; i < count; i++) {
    loadWords(values, i, cur);
    if (!subtractWords(cur, prev, delta)) throw new AmpCorsError('invalid-option', `values are not sorted (value ${i} is smaller than value ${i - 1})`);
    // The quotient: delta >> k, which must fit in 32 bits.
    let quotient = (delta[wordShift] as number) >>> bitShift;
    if (bitShift > 0 && wordShift + 1 < wordCount) quotient = (quotient | ((delta[wordShift + 1] as number) << (32 - bitShift))) >>> 0;
    const high = bitShift > 0 ? (delta[wordShift + 1] ?? 0) >>> bitShift : (delta[wordShift + 1] ?? 0);
    let overflow = high !== 0 || quotient > MAX_RICE_QUOTIENT;
    for (let w = wordShift + 2; w < wordCount; w++) if (delta[w] !== 0) overflow = true;
    if (overflow) throw new AmpCorsError('invalid-option', `Rice parameter ${k} is too small for these values`);
    writer.writeUnary(quotient);
    // The remainder: the low k bits.
    for (let w = 0; w < wordShift; w++) writer.writeBits(delta[w] as number, 32);
    if (bitShift > 0) writer.writeBits(delta[wordShift] as number, bitShift);
    prev.set(cur);
  }
  return { firstValue: values.slice(0, width), riceParameter: k, entriesCount: count - 1, encodedData: writer.bytes() };
}

/**
 * {@link BitReader}'s bit order, read 32 bits at a time from any bit
 * position (the decoder's hot loop: no bit-by-bit loop, no allocation). Past
 * the end it reads zero bits; the caller checks {@link BitStream.overrun}
 * once per value (a unary run cannot go on past the end: it stops at the
 * first zero).
 */
class BitStream {
  private readonly data: Uint8Array;
  /** Bits read so far. */
  private position = 0;

  constructor(data: Uint8Array) {
    this.data = data;
  }

  /** The 32 bits from the current position, the next one least significant (zeros past the end). */
  private peek(): number {
    const data = this.data;
    const at = this.position >>> 3;
    const shift = this.position & 7;
    let low: number;
    let high: number;
    if (at + 4 < data.length) {
      low = (data[at] as number) | ((data[at + 1] as number) << 8) | ((data[at + 2] as number) << 16) | ((data[at + 3] as number) << 24);
      high = data[at + 4] as number;
    } else {
      const byte = (i: number): number => (i < data.length ? (data[i] as number) : 0);
      low = byte(at) | (byte(at + 1) << 8) | (byte(at + 2) << 16) | (byte(at + 3) << 24);
      high = byte(at + 4);
    }
    return shift === 0 ? low >>> 0 : ((low >>> shift) | (high << (32 - shift))) >>> 0;
  }

  /** Number of bits of the data not yet read (negative after an overrun). */
  get bitsRemaining(): number {
    return this.data.length * 8 - this.position;
  }

  /** True when more bits were read than the data holds. */
  overrun(): boolean {
    return this.position > this.data.length * 8;
  }

  /**
   * Reads a unary number (1 bits before a 0 bit), as {@link BitReader.readUnary}.
   *
   * @throws AmpCorsError `invalid-allow-set` when the run exceeds {@link MAX_RICE_QUOTIENT}.
   */
  unary(): number {
    let count = 0;
    for (;;) {
      const zeros = ~this.peek();
      // The first 0 bit of the 32.
      const run = zeros === 0 ? 32 : 31 - Math.clz32(zeros & -zeros);
      count += run;
      if (count > MAX_RICE_QUOTIENT) throw bad('unary quotient too long');
      if (run < 32) {
        this.position += run + 1;
        return count;
      }
      this.position += 32;
    }
  }

  /** Reads `count` bits (1 to 32) as an unsigned integer, first bit least significant. */
  bits(count: number): number {
    const value = count === 32 ? this.peek() : this.peek() & ((1 << count) - 1);
    this.position += count;
    return value;
  }
}

/**
 * Decodes a {@link RiceDeltaEncoding} of `width`-byte values: the first
 * value, then each running sum of the deltas, as one flat big-endian array
 * of `entriesCount + 1` values. As in Safe Browsing, fewer than 8 bits may
 * be left over (padding).
 *
 * @throws AmpCorsError `invalid-allow-set` when the data ends early, has spare bytes, or a sum overflows `width` bytes;
 *   `invalid-option` for a bad width, parameter or count.
 * @example decodeRiceDeltas({ firstValue: Uint8Array.of(0, 0, 0, 5), riceParameter: 2, entriesCount: 2, encodedData: Uint8Array.of(0xf7, 0x02) }, 4)
 *   // bytes of 5, 20, 29
 */
export function decodeRiceDeltas(encoding: RiceDeltaEncoding, width: number): Uint8Array {
  const wordCount = checkWidth(width);
  const { firstValue, riceParameter: k, entriesCount, encodedData } = encoding;
  if (!(firstValue instanceof Uint8Array) || firstValue.length !== width) throw new AmpCorsError('invalid-option', `firstValue must be ${width} bytes`);
  if (!Number.isSafeInteger(entriesCount) || entriesCount < 0)
    throw new AmpCorsError('invalid-option', `entriesCount ${entriesCount} must be a non-negative integer`);
  if (entriesCount > 0 && (!Number.isInteger(k) || k < 1 || k > wordCount * 32 - 1)) {
    throw new AmpCorsError('invalid-option', `Rice parameter ${k} out of range (1 to ${wordCount * 32 - 1})`);
  }
  // Each delta takes at least k + 1 bits: refuse a count the data cannot hold before allocating.
  if (entriesCount > 0 && entriesCount * (k + 1) > encodedData.length * 8) throw bad(`${entriesCount} deltas cannot fit in ${encodedData.length} bytes`);
  const out = new Uint8Array((entriesCount + 1) * width);
  out.set(firstValue);
  const value = new Uint32Array(wordCount);
  loadWords(out, 0, value);
  const wordShift = k >>> 5;
  const bitShift = k & 31;
  const stream = new BitStream(encodedData);
  for (let i = 1; i <= entriesCount; i++) {
    const quotient = stream.unary();
    // value += delta, word by word from the least significant: the remainder's
    // low words, then its top bitShift bits joined to quotient << k, whose
    // high bits spill into the next word.
    let carry = 0;
    for (let w = 0; w < wordShift; w++) {
      const sum = (value[w] as number) + stream.bits(32) + carry;
      value[w] = sum >>> 0;
      carry = sum > 0xffffffff ? 1 : 0;
    }
    const low = bitShift > 0 ? stream.bits(bitShift) : 0;
    let add = (low | (quotient << bitShift)) >>> 0;
    let spill = bitShift > 0 ? quotient >>> (32 - bitShift) : 0;
    if (spill !== 0 && wordShift + 1 >= wordCount) throw bad(`delta ${i} overflows ${width * 8} bits`);
    for (let w = wordShift; w < wordCount; w++) {
      const sum = (value[w] as number) + add + carry;
      value[w] = sum >>> 0;
      carry = sum > 0xffffffff ? 1 : 0;
      add = spill;
      spill = 0;
    }
    if (carry !== 0) throw bad(`value ${i} overflows ${width * 8} bits`);
    if (stream.overrun()) throw bad('ran out of bits');
    storeWords(out, i, value);
  }
  if (stream.bitsRemaining >= 8) throw bad(`${stream.bitsRemaining >>> 3} spare bytes after the last delta`);
  return out;
}

/**
 * Safe Browsing v4's integer decoding (`RiceDeltaEncoding` of 32-bit
 * values): the first value, then the running sums of `numEntries` deltas.
 *
 * @throws AmpCorsError `invalid-allow-set` when the data ends early or a sum exceeds 2^32 − 1.
 * @example decodeRiceIntegers(5, 2, 2, Uint8Array.of(0xf7, 0x02)) // [5, 20, 29]
 */
export function decodeRiceIntegers(firstValue: number, riceParameter: number, numEntries: number, encodedData: Uint8Array): number[] {
  if (!Number.isInteger(firstValue) || firstValue < 0 || firstValue > 0xffffffff)
    throw new AmpCorsError('invalid-option', `first value ${firstValue} is not a uint32`);
  const first = new Uint8Array(4);
  new DataView(first.buffer).setUint32(0, firstValue);
  const flat = decodeRiceDeltas({ firstValue: first, riceParameter, entriesCount: numEntries, encodedData }, 4);
  const view = new DataView(flat.buffer, flat.byteOffset, flat.byteLength);
  const values: number[] = [];
  for (let i = 0; i < flat.length; i += 4) values.push(view.getUint32(i));
  return values;
}
