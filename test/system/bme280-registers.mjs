#!/usr/bin/env node
import { CALIB_A_START, CALIB_B_START, encodeCalibration } from '../../dist/devices/i2c/bme280-compensation.js';
/**
 * Prints the BME280 register map the system test loads into i2c-stub (run on the host, from the
 * built dist/): chip id, both calibration blocks and the data registers of one conversion of the
 * physical values below, taken from the project's emulator. i2c-stub is plain register memory, so
 * the driver reads exactly these bytes back; the guest compares its readings with the values.
 *
 * Output: "# expect temperature=21 humidity=45 pressure=1013.25", then "0xRR 0xVV" lines.
 */
import { Bme280Emulator, EXAMPLE_CALIBRATION } from '../../dist/devices/i2c/bme280-emulator.js';

const physical = { temperature: 21, humidity: 45, pressure: 1013.25 };
const emulator = new Bme280Emulator({ clock: { monotonic: () => 0 }, physical });
const raw = emulator.rawFor(physical);
const { a, b } = encodeCalibration(EXAMPLE_CALIBRATION);
const registers = new Map([[0xd0, 0x60]]);
const setBlock = (start, bytes) => {
  for (const [i, value] of bytes.entries()) registers.set(start + i, value);
};
setBlock(CALIB_A_START, a);
setBlock(CALIB_B_START, b);
// The data block as the chip lays it out: press_msb..lsb/xlsb, temp_msb..xlsb, hum_msb..lsb.
const data = [
  raw.adc_P >> 12,
  (raw.adc_P >> 4) & 0xff,
  (raw.adc_P & 0x0f) << 4,
  raw.adc_T >> 12,
  (raw.adc_T >> 4) & 0xff,
  (raw.adc_T & 0x0f) << 4,
  raw.adc_H >> 8,
  raw.adc_H & 0xff,
];
setBlock(0xf7, data);

const hex = (n) => `0x${n.toString(16).padStart(2, '0')}`;
const lines = [`# expect temperature=${physical.temperature} humidity=${physical.humidity} pressure=${physical.pressure}`];
for (const [register, value] of [...registers].sort(([x], [y]) => x - y)) lines.push(`${hex(register)} ${hex(value)}`);
process.stdout.write(`${lines.join('\n')}\n`);
