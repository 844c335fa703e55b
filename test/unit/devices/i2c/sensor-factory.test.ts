import t from 'tap';
import type { SensorModel } from '../../../../devices/i2c/sensor.js';
import { CHIPS, createSensorDriver, createSensorEmulator, SENSOR_MODELS } from '../../../../devices/i2c/sensor-factory.js';
import { SimulatedI2cBus } from '../../../../devices/i2c/simulated-bus.js';
import { ManualClock } from './manual-clock.js';

t.test('every model: the factory driver reads its factory emulator, and returns the quantities it announces', async (t) => {
  const clock = new ManualClock();
  const bus = new SimulatedI2cBus({ clock });
  for (const model of SENSOR_MODELS) bus.attach(CHIPS[model].defaultAddress, createSensorEmulator(model, clock));
  t.same(bus.scan(), [0x23, 0x38, 0x44, 0x76]);
  for (const model of SENSOR_MODELS) {
    const driver = createSensorDriver({ driver: model }, bus, clock);
    t.equal(driver.model, model);
    await clock.run(driver.init());
    const readings = await clock.run(driver.read());
    t.same(
      readings.map((r) => r.quantity),
      driver.quantities,
      `${model}: ${readings.map((r) => `${r.value.toFixed(2)} ${r.unit}`).join(', ')}`,
    );
    for (const r of readings) t.ok(Number.isFinite(r.value), `${model} ${r.quantity} is a number`);
  }
});

t.test('chip options reach the driver; an address moves it', async (t) => {
  const clock = new ManualClock();
  const bus = new SimulatedI2cBus({ clock });
  bus.attach(0x5c, createSensorEmulator('bh1750', clock));
  const driver = createSensorDriver({ driver: 'bh1750', address: 0x5c, options: { mtreg: 138, mode: 'one_time_high2' } }, bus, clock);
  await clock.run(driver.init());
  t.same(
    bus
      .transfers(0x5c)
      .slice(2)
      .map((r) => r.bytes[0]),
    [0x40 | (138 >> 5), 0x60 | (138 & 0x1f)],
  );
  await clock.run(driver.read());
  t.same(bus.transfers(0x5c).at(-2)?.bytes, [0x21], 'one-time high-resolution mode 2');
});

t.test('an unknown driver name is a configuration error', async (t) => {
  const clock = new ManualClock();
  const bus = new SimulatedI2cBus({ clock });
  t.throws(() => createSensorDriver({ driver: 'dht22' as SensorModel }, bus, clock), {
    code: 'HA_ERR_CONFIG_INVALID',
    message: /unknown I2C sensor driver "dht22"/,
  });
  t.throws(() => createSensorEmulator('dht22' as SensorModel, clock), { code: 'HA_ERR_CONFIG_INVALID' });
});
