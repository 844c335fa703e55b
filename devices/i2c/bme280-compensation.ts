/**
 * BME280 trimming parameters and the datasheet's compensation formulas (Bosch BST-BME280-DS002,
 * section 4.2.3 for the integer code and 8.1 for the double-precision code). The integer versions
 * reproduce the C reference bit for bit: 32-bit wrap-around arithmetic via Math.imul and `| 0`,
 * 64-bit via BigInt. The driver uses the integer code; the double code is the datasheet's own
 * independent formulation, used by the emulator to turn physical values back into ADC counts.
 */

export interface Bme280Calibration {
  dig_T1: number;
  dig_T2: number;
  dig_T3: number;
  dig_P1: number;
  dig_P2: number;
  dig_P3: number;
  dig_P4: number;
  dig_P5: number;
  dig_P6: number;
  dig_P7: number;
  dig_P8: number;
  dig_P9: number;
  dig_H1: number;
  dig_H2: number;
  dig_H3: number;
  dig_H4: number;
  dig_H5: number;
  dig_H6: number;
}

/** calib00..calib25: 0x88..0xA1 (0xA0 unused). */
export const CALIB_A_START = 0x88;
export const CALIB_A_LENGTH = 26;
/** calib26..calib32: 0xE1..0xE7. */
export const CALIB_B_START = 0xe1;
export const CALIB_B_LENGTH = 7;

function u16(bytes: Uint8Array, i: number): number {
  return (bytes[i] ?? 0) | ((bytes[i + 1] ?? 0) << 8);
}

function s16(bytes: Uint8Array, i: number): number {
  return (u16(bytes, i) << 16) >> 16;
}

function s8(value: number): number {
  return (value << 24) >> 24;
}

/**
 * Decodes the two trimming blocks (little-endian words, datasheet table 16). dig_H4 and dig_H5
 * are 12-bit signed values sharing 0xE5; the sign comes from their 8-bit register (0xE4, 0xE6),
 * as in Bosch's own API.
 */
export function parseCalibration(a: Uint8Array, b: Uint8Array): Bme280Calibration {
  const e4 = b[3] ?? 0;
  const e5 = b[4] ?? 0;
  const e6 = b[5] ?? 0;
  return {
    dig_T1: u16(a, 0),
    dig_T2: s16(a, 2),
    dig_T3: s16(a, 4),
    dig_P1: u16(a, 6),
    dig_P2: s16(a, 8),
    dig_P3: s16(a, 10),
    dig_P4: s16(a, 12),
    dig_P5: s16(a, 14),
    dig_P6: s16(a, 16),
    dig_P7: s16(a, 18),
    dig_P8: s16(a, 20),
    dig_P9: s16(a, 22),
    dig_H1: a[25] ?? 0,
    dig_H2: s16(b, 0),
    dig_H3: b[2] ?? 0,
    dig_H4: s8(e4) * 16 + (e5 & 0x0f),
    dig_H5: s8(e6) * 16 + (e5 >> 4),
    dig_H6: s8(b[6] ?? 0),
  };
}

/** The inverse of {@link parseCalibration}: the register bytes a chip with these trims holds. */
export function encodeCalibration(c: Bme280Calibration): { a: Uint8Array; b: Uint8Array } {
  const a = new Uint8Array(CALIB_A_LENGTH);
  const words = [c.dig_T1, c.dig_T2, c.dig_T3, c.dig_P1, c.dig_P2, c.dig_P3, c.dig_P4, c.dig_P5, c.dig_P6, c.dig_P7, c.dig_P8, c.dig_P9];
  words.forEach((word, i) => {
    a[2 * i] = word & 0xff;
    a[2 * i + 1] = (word >> 8) & 0xff;
  });
  a[25] = c.dig_H1 & 0xff;
  const b = Uint8Array.of(
    c.dig_H2 & 0xff,
    (c.dig_H2 >> 8) & 0xff,
    c.dig_H3 & 0xff,
    (c.dig_H4 >> 4) & 0xff,
    ((c.dig_H5 & 0x0f) << 4) | (c.dig_H4 & 0x0f),
    (c.dig_H5 >> 4) & 0xff,
    c.dig_H6 & 0xff,
  );
  return { a, b };
}

export interface IntTemperature {
  /** 0.01 °C: 2508 is 25.08 °C. */
  centi_celsius: number;
  /** The fine temperature the pressure and humidity formulas need. */
  t_fine: number;
}

/** BME280_compensate_T_int32. */
export function compensateTemperatureInt(adcT: number, c: Bme280Calibration): IntTemperature {
  const var1 = Math.imul(((adcT >> 3) - (c.dig_T1 << 1)) | 0, c.dig_T2) >> 11;
  const d = ((adcT >> 4) - c.dig_T1) | 0;
  const var2 = Math.imul(Math.imul(d, d) >> 12, c.dig_T3) >> 14;
  const tFine = (var1 + var2) | 0;
  return { centi_celsius: (Math.imul(tFine, 5) + 128) >> 8, t_fine: tFine };
}

const i64 = (x: bigint): bigint => BigInt.asIntN(64, x);

/** BME280_compensate_P_int64: Pa in Q24.8 (divide by 256), 0 when the trims would divide by zero. */
export function compensatePressureInt64(adcP: number, tFine: number, c: Bme280Calibration): number {
  let var1 = i64(BigInt(tFine) - 128000n);
  let var2 = i64(var1 * var1 * BigInt(c.dig_P6));
  var2 = i64(var2 + i64(i64(var1 * BigInt(c.dig_P5)) << 17n));
  var2 = i64(var2 + i64(BigInt(c.dig_P4) << 35n));
  var1 = i64(i64(i64(var1 * var1 * BigInt(c.dig_P3)) >> 8n) + i64(i64(var1 * BigInt(c.dig_P2)) << 12n));
  var1 = i64(i64(i64((1n << 47n) + var1) * BigInt(c.dig_P1)) >> 33n);
  if (var1 === 0n) return 0;
  let p = i64(1048576n - BigInt(adcP));
  // C's 64-bit division truncates toward zero, and so does BigInt division.
  p = i64(i64(i64(i64(p << 31n) - var2) * 3125n) / var1);
  var1 = i64(i64(BigInt(c.dig_P9) * (p >> 13n) * (p >> 13n)) >> 25n);
  var2 = i64(i64(BigInt(c.dig_P8) * p) >> 19n);
  p = i64(i64(i64(p + var1 + var2) >> 8n) + i64(BigInt(c.dig_P7) << 4n));
  return Number(BigInt.asUintN(32, p));
}

/** bme280_compensate_H_int32: %RH in Q22.10 (divide by 1024). */
export function compensateHumidityInt(adcH: number, tFine: number, c: Bme280Calibration): number {
  let v = (tFine - 76800) | 0;
  const left = (((((adcH << 14) - (c.dig_H4 << 20)) | 0) - Math.imul(c.dig_H5, v) + 16384) | 0) >> 15;
  const inner = Math.imul(Math.imul(v, c.dig_H6) >> 10, ((Math.imul(v, c.dig_H3) >> 11) + 32768) | 0) >> 10;
  const right = (Math.imul((inner + 2097152) | 0, c.dig_H2) + 8192) >> 14;
  v = Math.imul(left, right);
  v = (v - (Math.imul(Math.imul(v >> 15, v >> 15) >> 7, c.dig_H1) >> 4)) | 0;
  if (v < 0) v = 0;
  if (v > 419430400) v = 419430400;
  return v >> 12;
}

export interface DoubleTemperature {
  celsius: number;
  t_fine: number;
  /** The datasheet's intermediates, shown in its worked example. */
  var1: number;
  var2: number;
}

/** BME280_compensate_T_double. */
export function compensateTemperatureDouble(adcT: number, c: Bme280Calibration): DoubleTemperature {
  const var1 = (adcT / 16384.0 - c.dig_T1 / 1024.0) * c.dig_T2;
  const d = adcT / 131072.0 - c.dig_T1 / 8192.0;
  const var2 = d * d * c.dig_T3;
  return { celsius: (var1 + var2) / 5120.0, t_fine: Math.trunc(var1 + var2), var1, var2 };
}

/** BME280_compensate_P_double: Pa. */
export function compensatePressureDouble(adcP: number, tFine: number, c: Bme280Calibration): number {
  let var1 = tFine / 2.0 - 64000.0;
  let var2 = (var1 * var1 * c.dig_P6) / 32768.0;
  var2 = var2 + var1 * c.dig_P5 * 2.0;
  var2 = var2 / 4.0 + c.dig_P4 * 65536.0;
  var1 = ((c.dig_P3 * var1 * var1) / 524288.0 + c.dig_P2 * var1) / 524288.0;
  var1 = (1.0 + var1 / 32768.0) * c.dig_P1;
  if (var1 === 0) return 0;
  let p = 1048576.0 - adcP;
  p = ((p - var2 / 4096.0) * 6250.0) / var1;
  var1 = (c.dig_P9 * p * p) / 2147483648.0;
  var2 = (p * c.dig_P8) / 32768.0;
  return p + (var1 + var2 + c.dig_P7) / 16.0;
}

/** bme280_compensate_H_double without its final clamp to 0..100 (the emulator needs the slope beyond it). */
export function humidityDoubleUnclamped(adcH: number, tFine: number, c: Bme280Calibration): number {
  let h = tFine - 76800.0;
  h =
    (adcH - (c.dig_H4 * 64.0 + (c.dig_H5 / 16384.0) * h)) *
    ((c.dig_H2 / 65536.0) * (1.0 + (c.dig_H6 / 67108864.0) * h * (1.0 + (c.dig_H3 / 67108864.0) * h)));
  return h * (1.0 - (c.dig_H1 * h) / 524288.0);
}

/** bme280_compensate_H_double: %RH. */
export function compensateHumidityDouble(adcH: number, tFine: number, c: Bme280Calibration): number {
  return Math.min(100, Math.max(0, humidityDoubleUnclamped(adcH, tFine, c)));
}
