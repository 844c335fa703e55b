import t from 'tap';
import { BME280_CHIP_ID, Bme280, maxMeasurementMs } from '../../../../devices/i2c/bme280.js';
import {
  type Bme280Calibration,
  compensateHumidityDouble,
  compensateHumidityInt,
  compensatePressureDouble,
  compensatePressureInt64,
  compensateTemperatureDouble,
  compensateTemperatureInt,
  encodeCalibration,
  parseCalibration,
} from '../../../../devices/i2c/bme280-compensation.js';
import { Bme280Emulator, EXAMPLE_CALIBRATION } from '../../../../devices/i2c/bme280-emulator.js';
import { SimulatedI2cBus } from '../../../../devices/i2c/simulated-bus.js';
import { ManualClock } from './manual-clock.js';

/**
 * The worked example of the BMP280 datasheet (BST-BMP280-DS001, section 3.12, "Compensation
 * formula example"); the BME280 uses the same temperature and pressure formulas.
 */
const DATASHEET = {
  adc_T: 519888,
  adc_P: 415148,
  var1: 128793.1787,
  var2: -370.8917052,
  t_fine: 128422,
  T: 25.08,
  p_double: 100653.27,
  /** The integer result as the table prints it; the datasheet warns integer results "may deviate slightly". */
  p_int64_printed: 25767236,
};
const CALIBRATION: Bme280Calibration = { ...EXAMPLE_CALIBRATION };

t.test('datasheet worked example, integer code: T 2508 (25.08 °C), t_fine 128422, p 25767233/256 Pa', async (t) => {
  const temperature = compensateTemperatureInt(DATASHEET.adc_T, CALIBRATION);
  t.equal(temperature.centi_celsius, 2508);
  t.equal(temperature.t_fine, DATASHEET.t_fine);
  const p = compensatePressureInt64(DATASHEET.adc_P, temperature.t_fine, CALIBRATION);
  // Executing the published 64-bit code gives 25767233; the table's 25767236 is 3/256 Pa away.
  t.equal(p, 25767233);
  t.ok(Math.abs(p - DATASHEET.p_int64_printed) <= 3, 'within 3 LSB (0.012 Pa) of the printed value');
  t.ok(Math.abs(p / 256 - DATASHEET.p_double) < 0.02, `${p / 256} Pa is 100653.27 Pa to 0.02 Pa`);
});

t.test('datasheet worked example, double code: var1, var2, t_fine, T and p as in the table', async (t) => {
  const temperature = compensateTemperatureDouble(DATASHEET.adc_T, CALIBRATION);
  t.equal(temperature.var1.toFixed(4), DATASHEET.var1.toFixed(4));
  t.equal(temperature.var2.toFixed(7), DATASHEET.var2.toFixed(7));
  t.equal(temperature.t_fine, DATASHEET.t_fine);
  t.equal(temperature.celsius.toFixed(2), DATASHEET.T.toFixed(2));
  // The table carries the unrounded fine temperature (var1 + var2) into the pressure formula.
  const p = compensatePressureDouble(DATASHEET.adc_P, temperature.var1 + temperature.var2, CALIBRATION);
  t.equal(p.toFixed(2), DATASHEET.p_double.toFixed(2));
  // With the truncated t_fine the C code passes on, the result moves by less than 0.01 Pa.
  t.ok(Math.abs(compensatePressureDouble(DATASHEET.adc_P, temperature.t_fine, CALIBRATION) - DATASHEET.p_double) < 0.02);
});

t.test('humidity: the integer code agrees with the double code to 0.01 %RH, clamps at 0 and 100', async (t) => {
  // The datasheet has no humidity example; its two formulations check each other.
  const { t_fine } = compensateTemperatureInt(DATASHEET.adc_T, CALIBRATION);
  let worst = 0;
  let inRange = 0;
  for (let adcH = 0; adcH <= 0xffff; adcH += 97) {
    const q = compensateHumidityInt(adcH, t_fine, CALIBRATION);
    const d = compensateHumidityDouble(adcH, t_fine, CALIBRATION);
    worst = Math.max(worst, Math.abs(q / 1024 - d));
    if (d > 0 && d < 100) inRange++;
  }
  t.ok(inRange > 100, `${inRange} samples strictly inside 0..100 %RH`);
  t.ok(worst < 0.01, `worst difference ${worst.toFixed(5)} %RH`);
  t.equal(compensateHumidityInt(0, t_fine, CALIBRATION), 0);
  t.equal(compensateHumidityInt(0xffff, t_fine, CALIBRATION), 102400, '100 %RH in Q22.10');
});

t.test('temperature: integer and double code agree over the whole operating range', async (t) => {
  let worst = 0;
  for (let adcT = 300000; adcT <= 700000; adcT += 1009) {
    const int = compensateTemperatureInt(adcT, CALIBRATION).centi_celsius / 100;
    const dbl = compensateTemperatureDouble(adcT, CALIBRATION).celsius;
    worst = Math.max(worst, Math.abs(int - dbl));
  }
  t.ok(worst <= 0.01, `worst difference ${worst} °C`);
});

t.test('trimming registers: little-endian words, dig_H4/dig_H5 split over 0xE4..0xE6 with sign', async (t) => {
  // Hand-assembled per datasheet table 16: 0x88/0x89 = dig_T1 LSB/MSB ... 0xA1 = dig_H1.
  const a = new Uint8Array(26);
  a.set([0x70, 0x6b], 0); // dig_T1 = 0x6B70 = 27504
  a.set([0x43, 0x67], 2); // dig_T2 = 26435
  a.set([0x18, 0xfc], 4); // dig_T3 = 0xFC18 = -1000
  a.set([0x7d, 0x8e], 6); // dig_P1 = 0x8E7D = 36477
  a.set([0x43, 0xd6], 8); // dig_P2 = 0xD643 = -10685
  a.set([0xf9, 0xff], 16); // dig_P6 = -7
  a[25] = 75; // dig_H1
  const b = Uint8Array.of(0x6a, 0x01, 0x00, 0x13, 0x29, 0x03, 0x1e); // H2 362, H3 0, H4 0x139 = 313, H5 0x032 = 50, H6 30
  const c = parseCalibration(a, b);
  t.match(c, { dig_T1: 27504, dig_T2: 26435, dig_T3: -1000, dig_P1: 36477, dig_P2: -10685, dig_P6: -7 });
  t.match(c, { dig_H1: 75, dig_H2: 362, dig_H3: 0, dig_H4: 313, dig_H5: 50, dig_H6: 30 });
  const negative = parseCalibration(a, Uint8Array.of(0, 0, 0, 0xf0, 0x5a, 0x81, 0xff));
  t.equal(negative.dig_H4, -16 * 16 + 0xa, 'sign from 0xE4');
  t.equal(negative.dig_H5, -127 * 16 + 0x5, 'sign from 0xE6');
  t.equal(negative.dig_H6, -1);
  const round = encodeCalibration(c);
  t.same(parseCalibration(round.a, round.b), c, 'encode is the inverse of parse');
  const negRound = encodeCalibration(negative);
  t.same(parseCalibration(negRound.a, negRound.b), negative);
});

function setup(options: { chipId?: number; attach?: boolean } = {}) {
  const clock = new ManualClock();
  const bus = new SimulatedI2cBus({ clock });
  const chip = new Bme280Emulator({ clock, ...(options.chipId !== undefined && { chipId: options.chipId }) });
  if (options.attach !== false) bus.attach(0x76, chip);
  const driver = new Bme280({ bus, clock, address: 0x76 });
  return { clock, bus, chip, driver };
}

t.test('the driver reproduces the datasheet example bit for bit through the bus', async (t) => {
  const { clock, chip, driver } = setup();
  await clock.run(driver.init());
  t.same(driver.calibration, CALIBRATION, 'trims read from 0x88..0xA1 and 0xE1..0xE7');
  chip.fixedRaw = { adc_T: DATASHEET.adc_T, adc_P: DATASHEET.adc_P, adc_H: 0x6000 };
  const readings = await clock.run(driver.read());
  const by = Object.fromEntries(readings.map((r) => [r.quantity, r]));
  t.same(by.temperature, { quantity: 'temperature', value: 25.08, unit: '°C', device_class: 'temperature', precision: 2 });
  t.equal(by.pressure?.value, 25767233 / 256 / 100);
  t.equal(by.pressure?.unit, 'hPa');
  t.equal(by.humidity?.value, compensateHumidityInt(0x6000, DATASHEET.t_fine, CALIBRATION) / 1024);
  t.equal(by.humidity?.unit, '%');
});

t.test('forced mode: one conversion per read, waiting the datasheet maximum time', async (t) => {
  const { clock, bus, chip, driver } = setup();
  await clock.run(driver.init());
  bus.clearTransfers();
  const sleepsBefore = clock.sleeps.length;
  const start = clock.monotonic();
  await clock.run(driver.read());
  t.equal(chip.conversions, 1);
  t.equal(maxMeasurementMs(1, 1, 1), 9.3);
  t.same(clock.sleeps.slice(sleepsBefore), [10], 'ceil(9.3 ms)');
  t.equal(clock.monotonic() - start, 10, 'the typical 8 ms conversion is done by then: no extra status polls');
  const writes = bus.transfers(0x76).filter((r) => r.kind === 'write' && r.bytes.length === 2);
  t.same(
    writes.map((r) => r.bytes),
    [
      [0xf2, 0x01],
      [0xf4, 0x25],
    ],
    'ctrl_hum osrs_h ×1, then ctrl_meas osrs_t ×1, osrs_p ×1, forced',
  );
});

t.test('round trip: physical values set on the emulator come back within the chip resolution', async (t) => {
  const { clock, chip, driver } = setup();
  await clock.run(driver.init());
  for (const physical of [
    { temperature: 21.37, humidity: 48.2, pressure: 1013.25 },
    { temperature: -12.5, humidity: 91.0, pressure: 987.6 },
    { temperature: 38.9, humidity: 12.3, pressure: 1032.1 },
  ]) {
    chip.physical = physical;
    const by = Object.fromEntries((await clock.run(driver.read())).map((r) => [r.quantity, r.value]));
    t.ok(Math.abs((by.temperature ?? 0) - physical.temperature) <= 0.011, `T ${by.temperature} ≈ ${physical.temperature}`);
    t.ok(Math.abs((by.humidity ?? 0) - physical.humidity) <= 0.02, `H ${by.humidity} ≈ ${physical.humidity}`);
    t.ok(Math.abs((by.pressure ?? 0) - physical.pressure) <= 0.02, `P ${by.pressure} ≈ ${physical.pressure}`);
  }
});

t.test('init fails with HA_ERR_I2C_DEVICE on a BMP280 (chip id 0x58) and reads no trims', async (t) => {
  const { clock, bus, driver } = setup({ chipId: 0x58 });
  await t.rejects(clock.run(driver.init()), {
    code: 'HA_ERR_I2C_DEVICE',
    message: /chip id 0x58 is a BMP280 \(no humidity sensor\), expected 0x60/,
    details: { chip_id: 0x58, address: '0x76' },
  });
  t.equal(bus.transfers(0x76).length, 2, 'only the id register was read');
  await t.rejects(clock.run(driver.read()), { code: 'HA_ERR_I2C_DEVICE', message: /before a successful init/ });
  t.equal(BME280_CHIP_ID, 0x60);
});

t.test('an unknown chip id is named too', async (t) => {
  const { clock, driver } = setup({ chipId: 0x12 });
  await t.rejects(clock.run(driver.init()), { code: 'HA_ERR_I2C_DEVICE', message: /chip id 0x12 is not a Bosch BME280/ });
});

t.test('nothing at the address: HA_ERR_I2C_NACK', async (t) => {
  const { clock, driver } = setup({ attach: false });
  await t.rejects(clock.run(driver.init()), { code: 'HA_ERR_I2C_NACK', details: { address: '0x76', op: 'readByte' } });
});

t.test('a NACK in the middle of a read is reported, and the next read works', async (t) => {
  const { clock, bus, driver } = setup();
  await clock.run(driver.init());
  bus.injectNack(0x76, { kind: 'read' });
  await t.rejects(clock.run(driver.read()), { code: 'HA_ERR_I2C_NACK' });
  const readings = await clock.run(driver.read());
  t.equal(readings.length, 3);
});

t.test('a conversion that never finishes is an HA_ERR_I2C_DEVICE after bounded status polls', async (t) => {
  const { clock, chip, driver } = setup();
  await clock.run(driver.init());
  chip.stuckMeasuring = true;
  await t.rejects(clock.run(driver.read()), { code: 'HA_ERR_I2C_DEVICE', message: /conversion did not finish/, details: { status: 0x08 } });
});

t.test('data registers at their reset value (no conversion ran) are refused, not compensated into weather', async (t) => {
  const { clock, chip, driver } = setup();
  await clock.run(driver.init());
  chip.fixedRaw = { adc_T: 0x80000, adc_P: 0x80000, adc_H: 0x8000 };
  await t.rejects(clock.run(driver.read()), { code: 'HA_ERR_I2C_DEVICE', message: /reset value/ });
});
