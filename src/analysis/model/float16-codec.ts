/**
 * Half-precision packing for the classifier head's vectors: 3 significant digits are plenty for
 * logistic-regression weights and keep the committed JSON in the tens of kilobytes.
 */

/** The largest finite float16; anything that rounds beyond it is stored as infinity. */
export const FLOAT16_MAX = 65504;

const f32 = new Float32Array(1);
const u32 = new Uint32Array(f32.buffer);

function toHalf(value: number): number {
  f32[0] = value;
  const x = u32[0]!;
  const sign = (x >>> 16) & 0x8000;
  const exponent = ((x >>> 23) & 0xff) - 127 + 15;
  const mantissa = x & 0x7fffff;
  if (Number.isNaN(value)) return 0x7e00; // stays NaN, not infinity
  if (exponent >= 0x1f) return sign | 0x7c00; // overflow → infinity
  if (exponent <= 0) {
    if (exponent < -10) return sign; // underflow → zero
    const m = (mantissa | 0x800000) >> (1 - exponent);
    return sign | ((m + 0x1000) >> 13);
  }
  // Round to nearest; a carry into the exponent is the correct result.
  return sign | ((exponent << 10) + ((mantissa + 0x1000) >> 13));
}

function fromHalf(h: number): number {
  const sign = h & 0x8000 ? -1 : 1;
  const exponent = (h >> 10) & 0x1f;
  const mantissa = h & 0x3ff;
  if (exponent === 0) return sign * 2 ** -14 * (mantissa / 1024);
  if (exponent === 0x1f) return mantissa ? Number.NaN : sign * Number.POSITIVE_INFINITY;
  return sign * 2 ** (exponent - 15) * (1 + mantissa / 1024);
}

/** Packs numbers as little-endian float16, base64. */
export function encodeFloat16(values: ArrayLike<number>): string {
  const bytes = Buffer.alloc(values.length * 2);
  for (let i = 0; i < values.length; i++) bytes.writeUInt16LE(toHalf(values[i]!), i * 2);
  return bytes.toString('base64');
}

/** Unpacks encodeFloat16's output. */
export function decodeFloat16(base64: string): Float64Array {
  const bytes = Buffer.from(base64, 'base64');
  const out = new Float64Array(bytes.length / 2);
  for (let i = 0; i < out.length; i++) out[i] = fromHalf(bytes.readUInt16LE(i * 2));
  return out;
}
