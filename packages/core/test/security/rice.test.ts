// Golomb-Rice coding at its edges (issue #6, mutation testing): every refusal
// names its problem, the 0/32-bit and MAX_RICE_QUOTIENT boundaries on both
// sides, and the parameter the encoder chooses.
import { BitReader, BitWriter, decodeRiceDeltas, decodeRiceIntegers, decodeRiceValues, encodeRiceDeltas, MAX_RICE_QUOTIENT } from '@ampcors/core/rice-coding';
import { describe, expect, it } from 'vitest';
import { expectError } from './ampcors-error.js';

/** Big-endian 32-bit values, flat. */
function u32(...values: number[]): Uint8Array {
  const out = new Uint8Array(values.length * 4);
  values.forEach((v, i) => new DataView(out.buffer).setUint32(i * 4, v));
  return out;
}

describe('BitReader', () => {
  it('reads 0 to 32 bits, least significant first', () => {
    const reader = new BitReader(Uint8Array.of(0xff, 0x00, 0xaa, 0x55, 0x01));
    expect(reader.bitsRemaining).toBe(40);
    expect(reader.readBits(0)).toBe(0);
    expect(reader.bitsRemaining).toBe(40);
    expect(reader.readBits(4)).toBe(0xf);
    expect(reader.readBits(32)).toBe(0x155aa00f);
    expect(reader.bitsRemaining).toBe(4);
    expect(reader.readBits(4)).toBe(0);
    expect(reader.bitsRemaining).toBe(0);
  });
  it('reads 32 bits with the top bit set as an unsigned number', () => {
    expect(new BitReader(Uint8Array.of(0xff, 0xff, 0xff, 0xff)).readBits(32)).toBe(0xffffffff);
    expect(new BitReader(Uint8Array.of(0, 0, 0, 0x80)).readBits(32)).toBe(0x80000000);
  });
  it('refuses counts outside 0 to 32, naming the count', () => {
    const reader = new BitReader(new Uint8Array(8));
    for (const count of [-1, 33, 1.5, Number.NaN]) expectError(() => reader.readBits(count), 'invalid-option', `cannot read ${count} bits at once (0 to 32)`);
  });
  it('refuses to read past the end, saying how many bits are left', () => {
    const reader = new BitReader(Uint8Array.of(0xff));
    reader.readBits(3);
    expectError(() => reader.readBits(6), 'invalid-allow-set', 'Rice-coded data: ran out of bits (wanted 6, 5 left)');
    expect(reader.readBits(5)).toBe(0x1f);
  });
  it('unary: counts 1 bits up to the 0 bit, up to MAX_RICE_QUOTIENT', () => {
    expect(new BitReader(Uint8Array.of(0b0111)).readUnary()).toBe(3);
    expect(new BitReader(Uint8Array.of(0)).readUnary()).toBe(0);
    const longest = new Uint8Array((MAX_RICE_QUOTIENT + 1) / 8).fill(0xff);
    longest[longest.length - 1] = 0x7f; // MAX_RICE_QUOTIENT ones, then the 0 bit
    expect(new BitReader(longest).readUnary()).toBe(MAX_RICE_QUOTIENT);
    const tooLong = new Uint8Array((MAX_RICE_QUOTIENT + 1) / 8 + 1).fill(0xff);
    tooLong[tooLong.length - 1] = 0xfe;
    expectError(() => new BitReader(tooLong).readUnary(), 'invalid-allow-set', 'Rice-coded data: unary quotient too long');
    expectError(() => new BitReader(Uint8Array.of(0xff)).readUnary(), 'invalid-allow-set', 'Rice-coded data: ran out of bits in a unary quotient');
    expectError(() => new BitReader(new Uint8Array(0)).readUnary(), 'invalid-allow-set', /ran out of bits in a unary quotient/);
  });
});

describe('BitWriter', () => {
  it('writes least significant bit first, padding the last byte with 0 bits', () => {
    const writer = new BitWriter();
    writer.writeBits(0b101, 3);
    writer.writeBits(0xffffffff, 32);
    writer.writeBits(7, 0);
    expect([...writer.bytes()]).toEqual([0xfd, 0xff, 0xff, 0xff, 0x07]);
  });
  it('keeps only the low bits of a value', () => {
    const writer = new BitWriter();
    writer.writeBits(0xff, 4);
    writer.writeBits(0, 4);
    expect([...writer.bytes()]).toEqual([0x0f]);
  });
  it('grows past its first 64 bytes without losing bits', () => {
    const writer = new BitWriter();
    for (let i = 0; i < 100; i++) writer.writeBits(i, 8);
    expect([...writer.bytes()]).toEqual(Array.from({ length: 100 }, (_, i) => i));
    const unary = new BitWriter();
    unary.writeUnary(MAX_RICE_QUOTIENT);
    expect(unary.bytes()).toHaveLength((MAX_RICE_QUOTIENT + 1) / 8);
    expect(new BitReader(unary.bytes()).readUnary()).toBe(MAX_RICE_QUOTIENT);
  });
  it('unary: n ones then a zero, for n around a 32-bit word', () => {
    for (const n of [0, 1, 31, 32, 33, 64, 65]) {
      const writer = new BitWriter();
      writer.writeUnary(n);
      writer.writeBits(1, 1);
      const reader = new BitReader(writer.bytes());
      expect(reader.readUnary()).toBe(n);
      expect(reader.readBits(1)).toBe(1);
      expect(writer.bytes()).toHaveLength(Math.ceil((n + 2) / 8));
    }
  });
  it('refuses bad counts and unary values, naming them', () => {
    const writer = new BitWriter();
    for (const count of [-1, 33, 0.5]) expectError(() => writer.writeBits(1, count), 'invalid-option', `cannot write ${count} bits at once (0 to 32)`);
    for (const n of [-1, MAX_RICE_QUOTIENT + 1, 2.5]) expectError(() => writer.writeUnary(n), 'invalid-option', `unary value ${n} out of range`);
    expect(writer.bytes()).toHaveLength(0);
  });
});

describe('decodeRiceValues', () => {
  it('decodes (q << k) + r, with k = 0 and k = 32', () => {
    expect(decodeRiceValues(Uint8Array.of(0b0111), 0, 1)).toEqual([3]);
    expect(decodeRiceValues(Uint8Array.of(0xf7, 0x02), 2, 2)).toEqual([15, 9]);
    // q = 1, then 32 bits of 0xffffffff: 2^32 + 2^32 - 1.
    expect(decodeRiceValues(Uint8Array.of(0xfd, 0xff, 0xff, 0xff, 0x07), 32, 1)).toEqual([2 ** 33 - 1]);
    expect(decodeRiceValues(new Uint8Array(0), 5, 0)).toEqual([]);
  });
  it('refuses a bad parameter or count, naming it', () => {
    for (const k of [-1, 33, 1.5]) expectError(() => decodeRiceValues(new Uint8Array(4), k, 1), 'invalid-option', `Rice parameter ${k} out of range (0 to 32)`);
    for (const n of [-1, 0.5, Number.POSITIVE_INFINITY])
      expectError(() => decodeRiceValues(new Uint8Array(4), 2, n), 'invalid-option', `value count ${n} must be a non-negative integer`);
  });
});

describe('encodeRiceDeltas', () => {
  it('a single value has no deltas and parameter 1', () => {
    expect(encodeRiceDeltas(u32(7), 4)).toEqual({ firstValue: u32(7), riceParameter: 1, entriesCount: 0, encodedData: new Uint8Array(0) });
  });
  it('codes equal neighbours as 0 and keeps the first value', () => {
    const encoding = encodeRiceDeltas(u32(5, 5, 6), 4, 1);
    expect(encoding.firstValue).toEqual(u32(5));
    expect(encoding.entriesCount).toBe(2);
    // delta 0: unary 0 (bit 0), remainder 0 (bit 0); delta 1: unary 0, remainder 1.
    expect([...encoding.encodedData]).toEqual([0b1000]);
    expect(decodeRiceDeltas(encoding, 4)).toEqual(u32(5, 5, 6));
  });
  it('chooses the parameter from the mean delta: about log2(mean) for evenly spaced values', () => {
    const values = Array.from({ length: 200 }, (_, i) => i * 1000);
    const encoding = encodeRiceDeltas(u32(...values), 4);
    expect(encoding.riceParameter).toBeGreaterThanOrEqual(8);
    expect(encoding.riceParameter).toBeLessThanOrEqual(10);
    expect(decodeRiceDeltas(encoding, 4)).toEqual(u32(...values));
    // Every candidate parameter would decode; the chosen one is no longer than its neighbours.
    for (const k of [encoding.riceParameter - 1, encoding.riceParameter + 1]) {
      expect(encodeRiceDeltas(u32(...values), 4, k).encodedData.length).toBeGreaterThanOrEqual(encoding.encodedData.length);
    }
  });
  it('with tiny deltas chooses parameter 1, never 0', () => {
    const encoding = encodeRiceDeltas(u32(0, 1, 2, 3, 4), 4);
    expect(encoding.riceParameter).toBe(1);
  });
  it('with huge deltas never exceeds width × 8 − 1', () => {
    const encoding = encodeRiceDeltas(u32(0, 0xffffffff), 4);
    expect(encoding.riceParameter).toBe(31);
    expect(decodeRiceDeltas(encoding, 4)).toEqual(u32(0, 0xffffffff));
  });
  it('refuses what it cannot code, naming the problem', () => {
    expectError(() => encodeRiceDeltas(new Uint8Array(0), 4), 'invalid-option', 'values must hold at least one 4-byte value');
    expectError(() => encodeRiceDeltas(new Uint8Array(6), 4), 'invalid-option', 'values must hold at least one 4-byte value');
    for (const width of [0, 3, 6, 36, 4.5])
      expectError(() => encodeRiceDeltas(new Uint8Array(8), width), 'invalid-option', `value width ${width} must be 4, 8, …, 32 bytes`);
    for (const k of [0, 32, 1.5]) expectError(() => encodeRiceDeltas(u32(1, 2), 4, k), 'invalid-option', `Rice parameter ${k} out of range (1 to 31)`);
    expectError(() => encodeRiceDeltas(u32(1, 2, 1), 4), 'invalid-option', 'values are not sorted (value 2 is smaller than value 1)');
    expectError(() => encodeRiceDeltas(u32(0, 2 ** 20), 4, 1), 'invalid-option', 'Rice parameter 1 is too small for these values');
    // 8-byte values: a delta in the high word with a small parameter.
    const wide = Uint8Array.of(0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1, 0, 0, 0, 0);
    expectError(() => encodeRiceDeltas(wide, 8, 1), 'invalid-option', 'Rice parameter 1 is too small for these values');
    expect(decodeRiceDeltas(encodeRiceDeltas(wide, 8, 17), 8)).toEqual(wide);
    // 16-byte values: a delta only in the most significant word.
    const top = new Uint8Array(32);
    top[16] = 1;
    expectError(() => encodeRiceDeltas(top, 16, 1), 'invalid-option', 'Rice parameter 1 is too small for these values');
    const third = new Uint8Array(32);
    third[16 + 7] = 1; // the third word from the bottom
    expectError(() => encodeRiceDeltas(third, 16, 1), 'invalid-option', 'Rice parameter 1 is too small for these values');
    expect(decodeRiceDeltas(encodeRiceDeltas(third, 16, 64), 16)).toEqual(third);
    expect(encodeRiceDeltas(u32(0, MAX_RICE_QUOTIENT * 2 + 1), 4, 1).entriesCount).toBe(1);
    expectError(() => encodeRiceDeltas(u32(0, (MAX_RICE_QUOTIENT + 1) * 2), 4, 1), 'invalid-option', /too small/);
  });
  it('refuses a delta whose bits above the quotient are set, in every word', () => {
    // 8 bytes, k = 1: the delta 2^33 has quotient bits beyond 32 (the next word's bit 1).
    const high = Uint8Array.of(0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 2, 0, 0, 0, 0);
    expectError(() => encodeRiceDeltas(high, 8, 1), 'invalid-option', 'Rice parameter 1 is too small for these values');
    // 16 bytes, k = 32: quotient 1 from the second word, but the third word is set too.
    const third = new Uint8Array(32);
    third[16 + 7] = 1; // word 2 (counting from the least significant)
    third[16 + 11] = 1; // word 1
    expectError(() => encodeRiceDeltas(third, 16, 32), 'invalid-option', 'Rice parameter 32 is too small for these values');
  });
  it('codes small deltas of wide values with a small parameter', () => {
    const values = new Uint8Array(48);
    values[15] = 0;
    values[31] = 1;
    values[47] = 3;
    const encoding = encodeRiceDeltas(values, 16, 1);
    expect(decodeRiceDeltas(encoding, 16)).toEqual(values);
  });
  it('round-trips parameters that are a multiple of 32 and wide values', () => {
    const values = Uint8Array.of(...new Array(8).fill(0), 0, 0, 0, 5, 0, 0, 0, 9, 0, 0, 0, 6, 0, 0, 0, 0);
    for (const k of [31, 32, 33, 40, 63]) expect(decodeRiceDeltas(encodeRiceDeltas(values, 8, k), 8)).toEqual(values);
  });
});

describe('decodeRiceDeltas', () => {
  const good = encodeRiceDeltas(u32(1, 256, 65536), 4, 8);
  it('refuses bad arguments, naming them', () => {
    expectError(() => decodeRiceDeltas({ ...good, firstValue: new Uint8Array(3) }, 4), 'invalid-option', 'firstValue must be 4 bytes');
    expectError(() => decodeRiceDeltas({ ...good, firstValue: [0, 0, 0, 1] as never }, 4), 'invalid-option', 'firstValue must be 4 bytes');
    for (const n of [-1, 1.5])
      expectError(() => decodeRiceDeltas({ ...good, entriesCount: n }, 4), 'invalid-option', `entriesCount ${n} must be a non-negative integer`);
    for (const k of [0, 32, 2.5])
      expectError(() => decodeRiceDeltas({ ...good, riceParameter: k }, 4), 'invalid-option', `Rice parameter ${k} out of range (1 to 31)`);
    expectError(() => decodeRiceDeltas(good, 6), 'invalid-option', 'value width 6 must be 4, 8, …, 32 bytes');
  });
  it('with no deltas, ignores the parameter and needs no data', () => {
    expect(decodeRiceDeltas({ firstValue: u32(9), riceParameter: 0, entriesCount: 0, encodedData: new Uint8Array(0) }, 4)).toEqual(u32(9));
  });
  it('refuses a count the data cannot hold before reading it', () => {
    // Each delta needs at least k + 1 = 9 bits: 8 bytes hold 7.
    expectError(
      () => decodeRiceDeltas({ ...good, entriesCount: 8, encodedData: new Uint8Array(8) }, 4),
      'invalid-allow-set',
      'Rice-coded data: 8 deltas cannot fit in 8 bytes',
    );
    expect(decodeRiceDeltas({ firstValue: u32(0), riceParameter: 8, entriesCount: 7, encodedData: new Uint8Array(8) }, 4)).toEqual(new Uint8Array(32));
  });
  it('refuses spare bytes but allows up to 7 bits of padding', () => {
    expectError(
      () => decodeRiceDeltas({ ...good, encodedData: Uint8Array.of(...good.encodedData, 0) }, 4),
      'invalid-allow-set',
      'Rice-coded data: 1 spare bytes after the last delta',
    );
    const padded = decodeRiceDeltas({ firstValue: u32(0), riceParameter: 1, entriesCount: 1, encodedData: Uint8Array.of(0b10) }, 4);
    expect(padded).toEqual(u32(0, 1));
  });
  it('refuses sums and deltas that overflow the width', () => {
    expectError(
      () => decodeRiceDeltas({ firstValue: u32(0xffffffff), riceParameter: 1, entriesCount: 1, encodedData: Uint8Array.of(0b10) }, 4),
      'invalid-allow-set',
      'Rice-coded data: value 1 overflows 32 bits',
    );
    // k = 31, quotient 2: 2 << 31 needs 33 bits.
    const data = new BitWriter();
    data.writeUnary(2);
    data.writeBits(0, 31);
    expectError(
      () => decodeRiceDeltas({ firstValue: u32(0), riceParameter: 31, entriesCount: 1, encodedData: data.bytes() }, 4),
      'invalid-allow-set',
      'Rice-coded data: delta 1 overflows 32 bits',
    );
    // In 8 bytes the same delta spills into the high word and is fine.
    const wide = decodeRiceDeltas({ firstValue: new Uint8Array(8), riceParameter: 31, entriesCount: 1, encodedData: data.bytes() }, 8);
    expect([...wide.slice(8)]).toEqual([0, 0, 0, 1, 0, 0, 0, 0]);
    // A carry between words: 0x00000000ffffffff + 1.
    const carry = decodeRiceDeltas(
      { firstValue: Uint8Array.of(0, 0, 0, 0, 0xff, 0xff, 0xff, 0xff), riceParameter: 1, entriesCount: 1, encodedData: Uint8Array.of(0b10) },
      8,
    );
    expect([...carry.slice(8)]).toEqual([0, 0, 0, 1, 0, 0, 0, 0]);
  });
});

describe('decodeRiceIntegers', () => {
  it('refuses a first value that is not a uint32, naming it', () => {
    for (const first of [-1, 2 ** 32, 1.5])
      expectError(() => decodeRiceIntegers(first, 2, 0, new Uint8Array(0)), 'invalid-option', `first value ${first} is not a uint32`);
  });
  it('accepts 0 and 2^32 − 1', () => {
    expect(decodeRiceIntegers(0, 2, 0, new Uint8Array(0))).toEqual([0]);
    expect(decodeRiceIntegers(0xffffffff, 2, 0, new Uint8Array(0))).toEqual([0xffffffff]);
    expect(decodeRiceIntegers(5, 2, 2, Uint8Array.of(0xf7, 0x02))).toEqual([5, 20, 29]);
  });
});
