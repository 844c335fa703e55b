/**
 * CRC-8 as Sensirion (SHT3x) and Aosong (AHT20) specify it: polynomial 0x31 (x^8 + x^5 + x^4 + 1),
 * initial value 0xFF, no reflection, no final XOR (CRC-8/NRSC-5 in the CRC catalogue). The SHT3x
 * datasheet's example: 0xBEEF → 0x92.
 */
export function crc8(bytes: ArrayLike<number>, start = 0, end = bytes.length): number {
  let crc = 0xff;
  for (let i = start; i < end; i++) {
    crc ^= (bytes[i] ?? 0) & 0xff;
    for (let bit = 0; bit < 8; bit++) crc = crc & 0x80 ? ((crc << 1) ^ 0x31) & 0xff : (crc << 1) & 0xff;
  }
  return crc;
}
