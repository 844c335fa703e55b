import t from 'tap';
import { Aht20, aht20Humidity, aht20Temperature, parseAht20Frame } from '../../../../devices/i2c/aht20.js';
import { Aht20Emulator, aht20RawFor } from '../../../../devices/i2c/aht20-emulator.js';
import { crc8 } from '../../../../devices/i2c/crc8.js';
import { SimulatedI2cBus } from '../../../../devices/i2c/simulated-bus.js';
import { ManualClock } from './manual-clock.js';

t.test('datasheet conversion formulas: RH = S/2^20·100 %, T = S/2^20·200 − 50 °C', async (t) => {
  t.equal(aht20Humidity(0), 0);
  t.equal(aht20Humidity(0x80000), 50);
  t.equal(aht20Humidity(0x100000), 100);
  t.equal(aht20Temperature(0), -50);
  t.equal(aht20Temperature(0x80000), 50);
  t.equal(aht20Temperature(0x40000), 0);
  t.equal(aht20Temperature(0x100000), 150);
});

t.test('frame layout: humidity in bytes 1..3 high nibble, temperature in byte 3 low nibble..5', async (t) => {
  // Hand-packed: S_RH = 0x12345, S_T = 0x6789A.
  const frame = Uint8Array.of(0x1c, 0x12, 0x34, 0x56, 0x78, 0x9a);
  t.same(parseAht20Frame(frame), { status: 0x1c, humidity_raw: 0x12345, temperature_raw: 0x6789a });
});

function setup(options: { calibrated?: boolean; ignoresInit?: boolean; attach?: boolean } = {}) {
  const clock = new ManualClock();
  const bus = new SimulatedI2cBus({ clock });
  const chip = new Aht20Emulator({
    clock,
    physical: { temperature: 22.5, humidity: 40 },
    ...(options.calibrated !== undefined && { calibrated: options.calibrated }),
    ...(options.ignoresInit !== undefined && { ignoresInit: options.ignoresInit }),
  });
  if (options.attach !== false) bus.attach(0x38, chip);
  return { clock, bus, chip, driver: new Aht20({ bus, clock }) };
}

t.test('a reading: trigger 0xAC 0x33 0x00, 80 ms, 7-byte frame with a valid CRC', async (t) => {
  const { clock, bus, driver } = setup();
  await clock.run(driver.init());
  bus.clearTransfers();
  const start = clock.monotonic();
  const readings = await clock.run(driver.read());
  t.equal(clock.monotonic() - start, 80);
  const transfers = bus.transfers(0x38);
  t.same(transfers[0]?.bytes, [0xac, 0x33, 0x00]);
  const frame = transfers[1]?.bytes ?? [];
  t.equal(frame.length, 7);
  t.equal(frame[6], crc8(frame.slice(0, 6)), 'CRC-8 over status and data');
  const raw = aht20RawFor({ temperature: 22.5, humidity: 40 });
  t.same(readings, [
    { quantity: 'temperature', value: aht20Temperature(raw.temperature_raw), unit: '°C', device_class: 'temperature', precision: 2 },
    { quantity: 'humidity', value: aht20Humidity(raw.humidity_raw), unit: '%', device_class: 'humidity', precision: 1 },
  ]);
  t.ok(Math.abs((readings[0]?.value ?? 0) - 22.5) < 0.0002, '20 bits: 0.0002 °C steps');
  t.ok(Math.abs((readings[1]?.value ?? 0) - 40) < 0.0001);
});

t.test('a calibrated part needs no init command', async (t) => {
  const { clock, bus, driver } = setup();
  await clock.run(driver.init());
  t.same(
    bus.transfers(0x38).map((r) => r.bytes),
    [[0x71], [0x18]],
  );
});

t.test('an uncalibrated part gets 0xBE 0x08 0x00 and then reads', async (t) => {
  const { clock, bus, driver } = setup({ calibrated: false });
  await clock.run(driver.init());
  t.same(
    bus.transfers(0x38).map((r) => r.bytes),
    [[0x71], [0x10], [0xbe, 0x08, 0x00], [0x71], [0x18]],
  );
  t.equal((await clock.run(driver.read())).length, 2);
});

t.test('a part whose calibration bit stays clear is not a working AHT20: HA_ERR_I2C_DEVICE', async (t) => {
  const { clock, driver } = setup({ calibrated: false, ignoresInit: true });
  await t.rejects(clock.run(driver.init()), {
    code: 'HA_ERR_I2C_DEVICE',
    message: /calibration bit stays clear/,
    details: { status: 0x10 },
  });
});

t.test('a corrupted byte on the wire is caught by the CRC: HA_ERR_I2C_CRC', async (t) => {
  for (const byte of [1, 3, 5, 6]) {
    const { clock, bus, driver } = setup();
    await clock.run(driver.init());
    bus.corruptReads(0x38, { byte });
    await t.rejects(clock.run(driver.read()), { code: 'HA_ERR_I2C_CRC', message: /bad CRC on the measurement frame/ }, `byte ${byte}`);
    t.equal((await clock.run(driver.read())).length, 2, 'the next read is fine');
  }
});

t.test('no device: HA_ERR_I2C_NACK', async (t) => {
  const { clock, driver } = setup({ attach: false });
  await t.rejects(clock.run(driver.init()), { code: 'HA_ERR_I2C_NACK', details: { address: '0x38' } });
  await t.rejects(clock.run(driver.read()), { code: 'HA_ERR_I2C_NACK' });
});

t.test('a part slower than 80 ms is waited for in 10 ms steps; one that stays busy is an error', async (t) => {
  const slow = new ManualClock();
  const bus = new SimulatedI2cBus({ clock: slow });
  bus.attach(0x38, new Aht20Emulator({ clock: slow, measurementMs: 95 }));
  const driver = new Aht20({ bus, clock: slow });
  await slow.run(driver.init());
  const start = slow.monotonic();
  await slow.run(driver.read());
  t.equal(slow.monotonic() - start, 100, '80 ms, then two 10 ms retries');

  const { clock, chip, driver: stuck } = setup();
  await clock.run(stuck.init());
  chip.stuckBusy = true;
  await t.rejects(clock.run(stuck.read()), { code: 'HA_ERR_I2C_DEVICE', message: /still busy/ });
});
