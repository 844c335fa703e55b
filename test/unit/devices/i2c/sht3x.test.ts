import t from 'tap';
import { Sht3x, sht3xHumidity, sht3xTemperature } from '../../../../devices/i2c/sht3x.js';
import { Sht3xEmulator, sht3xRawFor, sht3xWord } from '../../../../devices/i2c/sht3x-emulator.js';
import { type I2cDeviceEmulator, RegisterMapEmulator, SimulatedI2cBus } from '../../../../devices/i2c/simulated-bus.js';
import { ManualClock } from './manual-clock.js';

t.test('datasheet conversion formulas: T = −45 + 175·S/65535, RH = 100·S/65535', async (t) => {
  t.equal(sht3xTemperature(0), -45);
  t.equal(sht3xTemperature(0xffff), 130);
  t.equal(sht3xHumidity(0), 0);
  t.equal(sht3xHumidity(0xffff), 100);
  // 0x6666 = 26214 = 0.4 · 65535 exactly: 25 °C and 40 %RH.
  t.equal(sht3xTemperature(0x6666), 25);
  t.equal(sht3xHumidity(0x6666), 40);
});

/** A chip that replies with one fixed byte sequence to every read. */
function fixedReply(bytes: number[]): I2cDeviceEmulator {
  return { write: () => {}, read: (length) => Uint8Array.from(bytes.slice(0, length)) };
}

t.test('a frame built from the datasheet CRC example (0xBEEF → 0x92) is accepted and converted', async (t) => {
  const clock = new ManualClock();
  const bus = new SimulatedI2cBus({ clock });
  // T word 0xBEEF with its CRC 0x92, RH word 0x6666 with its CRC.
  bus.attach(0x44, fixedReply([0xbe, 0xef, 0x92, 0x66, 0x66, 0x93]));
  const readings = await clock.run(new Sht3x({ bus, clock }).read());
  t.equal(readings[0]?.value, -45 + (175 * 0xbeef) / 65535);
  t.equal(readings[0]?.unit, '°C');
  t.equal(readings[1]?.value, 40);
  t.equal(readings[1]?.unit, '%');
});

t.test('a wrong CRC on either word is HA_ERR_I2C_CRC naming the word', async (t) => {
  const clock = new ManualClock();
  const bus = new SimulatedI2cBus({ clock });
  bus.attach(0x44, fixedReply([0xbe, 0xef, 0x93, 0x66, 0x66, 0x93]));
  await t.rejects(clock.run(new Sht3x({ bus, clock }).read()), {
    code: 'HA_ERR_I2C_CRC',
    message: /the temperature word \(computed 0x92, received 0x93\)/,
    details: { expected: 0x92, actual: 0x93 },
  });
  bus.attach(0x44, fixedReply([0xbe, 0xef, 0x92, 0x66, 0x66, 0x00]));
  await t.rejects(clock.run(new Sht3x({ bus, clock }).read()), { code: 'HA_ERR_I2C_CRC', message: /the humidity word/ });
});

function setup(options: { attach?: boolean } = {}) {
  const clock = new ManualClock();
  const bus = new SimulatedI2cBus({ clock });
  const chip = new Sht3xEmulator({ clock, physical: { temperature: 23.4, humidity: 55.5 } });
  if (options.attach !== false) bus.attach(0x44, chip);
  return { clock, bus, chip, driver: new Sht3x({ bus, clock }) };
}

t.test('init: soft reset, status with reset bit and valid CRC, clear status', async (t) => {
  const { clock, bus, driver } = setup();
  await clock.run(driver.init());
  t.same(
    bus.transfers(0x44).map((r) => r.bytes),
    [[0x30, 0xa2], [0xf3, 0x2d], sht3xWord(0x8010), [0x30, 0x41]],
  );
});

t.test('a reading: 0x2400, wait 16 ms, six bytes; round trip within one LSB', async (t) => {
  const { clock, bus, chip, driver } = setup();
  await clock.run(driver.init());
  bus.clearTransfers();
  const start = clock.monotonic();
  const readings = await clock.run(driver.read());
  t.equal(clock.monotonic() - start, 16);
  t.same(bus.transfers(0x44)[0]?.bytes, [0x24, 0x00]);
  const raw = sht3xRawFor(chip.physical);
  t.same(bus.transfers(0x44)[1]?.bytes, [...sht3xWord(raw.temperature_raw), ...sht3xWord(raw.humidity_raw)]);
  t.ok(Math.abs((readings[0]?.value ?? 0) - 23.4) <= 175 / 65535);
  t.ok(Math.abs((readings[1]?.value ?? 0) - 55.5) <= 100 / 65535);
});

t.test('the chip NACKs while converting; a read that comes too early is retried', async (t) => {
  const { clock, bus, chip } = setup();
  await bus.i2cWrite(0x44, Uint8Array.of(0x24, 0x00));
  await t.rejects(bus.i2cRead(0x44, 6), { code: 'HA_ERR_I2C_NACK', message: /measurement in progress/ });
  await clock.advance(13);
  t.equal((await bus.i2cRead(0x44, 6)).length, 6);
  await t.rejects(bus.i2cRead(0x44, 6), { code: 'HA_ERR_I2C_NACK', message: /no measurement waiting/ }, 'data is read once');

  const driver = new Sht3x({ bus, clock });
  bus.injectNack(0x44, { kind: 'read', count: 2 });
  const start = clock.monotonic();
  const readings = await clock.run(driver.read());
  t.equal(clock.monotonic() - start, 16 + 2 + 2, 'two 2 ms retries');
  t.ok(Math.abs((readings[0]?.value ?? 0) - chip.physical.temperature) < 0.01);
});

t.test('a part that keeps NACKing is HA_ERR_I2C_NACK after bounded retries', async (t) => {
  const { clock, bus, driver } = setup();
  await clock.run(driver.init());
  bus.injectNack(0x44, { kind: 'read', count: 10 });
  await t.rejects(clock.run(driver.read()), { code: 'HA_ERR_I2C_NACK' });
  t.equal(bus.transfers(0x44).filter((r) => r.nack !== undefined).length, 4, 'one read and three retries');
});

t.test('corruption on the wire: HA_ERR_I2C_CRC, then the next read is fine', async (t) => {
  const { clock, bus, driver } = setup();
  await clock.run(driver.init());
  bus.corruptReads(0x44, { byte: 4, mask: 0x10 });
  await t.rejects(clock.run(driver.read()), { code: 'HA_ERR_I2C_CRC', message: /humidity word/ });
  t.equal((await clock.run(driver.read())).length, 2);
});

t.test('no device: HA_ERR_I2C_NACK at init', async (t) => {
  const { clock, driver } = setup({ attach: false });
  await t.rejects(clock.run(driver.init()), { code: 'HA_ERR_I2C_NACK', details: { address: '0x44', op: 'i2cWrite' } });
});

t.test('a chip that does not report the soft reset is not an SHT3x: HA_ERR_I2C_DEVICE', async (t) => {
  const clock = new ManualClock();
  const bus = new SimulatedI2cBus({ clock });
  // Sensirion framing with a valid CRC, but status 0x0000 after the reset command.
  bus.attach(0x44, fixedReply(sht3xWord(0x0000)));
  await t.rejects(clock.run(new Sht3x({ bus, clock }).init()), {
    code: 'HA_ERR_I2C_DEVICE',
    message: /did not set the reset-detected status bit/,
  });
});

t.test('a register chip at 0x44 fails the status CRC', async (t) => {
  const clock = new ManualClock();
  const bus = new SimulatedI2cBus({ clock });
  bus.attach(0x44, new RegisterMapEmulator());
  await t.rejects(clock.run(new Sht3x({ bus, clock }).init()), { code: 'HA_ERR_I2C_CRC', message: /status register/ });
});
