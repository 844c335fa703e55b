import t from 'tap';
import { Bh1750, type Bh1750Options, bh1750Lux, bh1750MaxMeasurementMs } from '../../../../devices/i2c/bh1750.js';
import { Bh1750Emulator, bh1750CountFor } from '../../../../devices/i2c/bh1750-emulator.js';
import { SimulatedI2cBus } from '../../../../devices/i2c/simulated-bus.js';
import { ManualClock } from './manual-clock.js';

t.test('the datasheet example: 1000_0011 1001_0000 → (2^15+2^9+2^8+2^7+2^4) / 1.2 ≈ 28067 lx', async (t) => {
  const count = 2 ** 15 + 2 ** 9 + 2 ** 8 + 2 ** 7 + 2 ** 4;
  t.equal(count, 0b1000_0011_1001_0000);
  t.equal(bh1750Lux(count), count / 1.2);
  t.equal(Math.round(bh1750Lux(count)), 28067);
});

t.test('MTreg and mode 2 scaling: lux = count / 1.2 · 69 / MTreg, halved in mode 2', async (t) => {
  t.equal(bh1750Lux(1200, 69), 1000);
  t.equal(bh1750Lux(2400, 138), 1000, 'twice the measurement time, twice the count');
  t.equal(bh1750Lux(2400, 69, true), 1000);
  t.equal(bh1750MaxMeasurementMs(69), 180);
  t.equal(bh1750MaxMeasurementMs(138), 360);
  t.equal(bh1750MaxMeasurementMs(31), 81);
});

function setup(options: Partial<Bh1750Options> = {}) {
  const clock = new ManualClock();
  const bus = new SimulatedI2cBus({ clock });
  const chip = new Bh1750Emulator({ clock });
  bus.attach(0x23, chip);
  const driver = new Bh1750({ bus, clock, ...options });
  return { clock, bus, chip, driver };
}

t.test('one-time mode reproduces the datasheet example through the bus', async (t) => {
  const { clock, bus, chip, driver } = setup();
  chip.illuminance = 0x8390 / 1.2;
  await clock.run(driver.init());
  t.same(
    bus.transfers(0x23).map((r) => r.bytes),
    [[0x01], [0x07], [0x40 | (69 >> 5)], [0x60 | (69 & 0x1f)]],
    'power on, reset, MTreg 69 in two halves',
  );
  bus.clearTransfers();
  const start = clock.monotonic();
  const readings = await clock.run(driver.read());
  t.equal(clock.monotonic() - start, 180, 'the maximum high-resolution time');
  t.same(
    bus.transfers(0x23).map((r) => r.bytes),
    [[0x01], [0x20], [0x83, 0x90]],
  );
  t.same(readings, [{ quantity: 'illuminance', value: 0x8390 / 1.2, unit: 'lx', device_class: 'illuminance', precision: 1 }]);
  t.equal(chip.powered, false, 'a one-time measurement powers the chip down');
});

t.test('a larger MTreg gives more counts for the same light and the same lux', async (t) => {
  const { clock, bus, chip, driver } = setup({ mtreg: 138 });
  chip.illuminance = 12.5;
  await clock.run(driver.init());
  t.equal(chip.mtreg, 138);
  bus.clearTransfers();
  const start = clock.monotonic();
  const readings = await clock.run(driver.read());
  t.equal(clock.monotonic() - start, 360);
  const count = bh1750CountFor(12.5, 138);
  t.equal(count, 30);
  t.same(bus.transfers(0x23).at(-1)?.bytes, [0, 30]);
  t.equal(readings[0]?.value, bh1750Lux(30, 138));
  t.equal(readings[0]?.value, 12.5);
});

t.test('continuous mode: the first read waits for the first result, later reads do not wait', async (t) => {
  const { clock, bus, chip, driver } = setup({ mode: 'continuous_high' });
  chip.illuminance = 500;
  await clock.run(driver.init());
  t.same(bus.transfers(0x23).at(-1)?.bytes, [0x10]);
  const start = clock.monotonic();
  t.equal((await clock.run(driver.read()))[0]?.value, 500);
  t.equal(clock.monotonic() - start, 180);
  chip.illuminance = 750;
  await clock.advance(1000);
  const later = clock.monotonic();
  t.equal((await clock.run(driver.read()))[0]?.value, 750);
  t.equal(clock.monotonic(), later, 'no wait');
  t.equal(chip.powered, true, 'continuous mode stays powered');
});

t.test('mode 2 halves the lux per count', async (t) => {
  const { clock, bus, chip, driver } = setup({ mode: 'one_time_high2' });
  chip.illuminance = 100;
  await clock.run(driver.init());
  const readings = await clock.run(driver.read());
  t.same(bus.transfers(0x23).at(-1)?.bytes, [0, 240]);
  t.equal(readings[0]?.value, 100);
});

t.test('bright light saturates the count at 0xFFFF', async (t) => {
  const { clock, chip, driver } = setup();
  chip.illuminance = 100_000;
  await clock.run(driver.init());
  t.equal((await clock.run(driver.read()))[0]?.value, 0xffff / 1.2);
});

t.test('no device: HA_ERR_I2C_NACK at init; a NACK during a read is reported', async (t) => {
  const clock = new ManualClock();
  const bus = new SimulatedI2cBus({ clock });
  await t.rejects(clock.run(new Bh1750({ bus, clock }).init()), { code: 'HA_ERR_I2C_NACK', details: { address: '0x23' } });
  const { clock: c2, bus: b2, driver } = setup();
  await c2.run(driver.init());
  b2.injectNack(0x23, { kind: 'read' });
  await t.rejects(c2.run(driver.read()), { code: 'HA_ERR_I2C_NACK', details: { op: 'i2cRead' } });
});

t.test('an MTreg outside 31..254 is a configuration error before anything is sent', async (t) => {
  const { clock, bus, driver } = setup({ mtreg: 300 });
  await t.rejects(clock.run(driver.init()), { code: 'HA_ERR_CONFIG_INVALID', message: /mtreg 300/ });
  t.same(bus.transfers(), []);
});
