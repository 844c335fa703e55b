import t from 'tap';
import { crc8 } from '../../../../devices/i2c/crc8.js';

t.test('the SHT3x datasheet example: 0xBEEF → 0x92', async (t) => {
  t.equal(crc8([0xbe, 0xef]), 0x92);
});

t.test('the CRC catalogue check value of CRC-8/NRSC-5 (poly 0x31, init 0xFF): "123456789" → 0xF7', async (t) => {
  t.equal(crc8(Buffer.from('123456789', 'ascii')), 0xf7);
});

t.test('a range of a buffer, and the empty range is the initial value', async (t) => {
  t.equal(crc8([0x00, 0xbe, 0xef, 0x92], 1, 3), 0x92);
  t.equal(crc8([]), 0xff);
});

t.test('any single flipped bit changes the CRC', async (t) => {
  for (let bit = 0; bit < 16; bit++) {
    const word = 0xbeef ^ (1 << bit);
    t.not(crc8([word >> 8, word & 0xff]), 0x92, `bit ${bit}`);
  }
});
