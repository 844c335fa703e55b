import t from 'tap';
import type { SensorDriver, SensorReading } from '../../../../devices/i2c/sensor.js';
import { SensorPoller, type SensorPollerEvents, type SensorPollerOptions } from '../../../../devices/i2c/sensor-poller.js';
import { Sht3x } from '../../../../devices/i2c/sht3x.js';
import { Sht3xEmulator } from '../../../../devices/i2c/sht3x-emulator.js';
import { SimulatedI2cBus } from '../../../../devices/i2c/simulated-bus.js';
import { ManualClock, WALL_START } from './manual-clock.js';

const S = 1000;
/** SHT3x init: soft reset wait 2 ms; read: conversion wait 16 ms. */
const INIT_MS = 2;
const READ_MS = 16;

type Logged = { event: keyof SensorPollerEvents; at: number; detail: string };

function setup(t: { teardown(fn: () => unknown): void }, overrides: Partial<SensorPollerOptions> = {}, defaultBackoff = false) {
  const clock = new ManualClock();
  const bus = new SimulatedI2cBus({ clock });
  const chip = new Sht3xEmulator({ clock, physical: { temperature: 21.5, humidity: 50 } });
  bus.attach(0x44, chip);
  const driver = new Sht3x({ bus, clock });
  const poller = new SensorPoller({
    id: 'hall_climate',
    driver,
    clock,
    interval_ms: 10 * S,
    unavailable_after: 3,
    ...(!defaultBackoff && { backoff_initial_ms: 20 * S, backoff_max_ms: 80 * S }),
    ...overrides,
  });
  const log: Logged[] = [];
  const at = (wall: number): number => wall - WALL_START;
  poller.on('reading', (e) =>
    log.push({ event: 'reading', at: at(e.at), detail: e.readings.map((r) => `${r.quantity}=${r.value.toFixed(1)}`).join(' ') }),
  );
  poller.on('failure', (e) => log.push({ event: 'failure', at: at(e.at), detail: `${e.consecutive} ${e.message.split(':')[0]}` }));
  poller.on('unavailable', (e) => log.push({ event: 'unavailable', at: at(e.at), detail: String(e.consecutive) }));
  poller.on('available', (e) => log.push({ event: 'available', at: at(e.at), detail: String(e.unavailable_ms) }));
  // stop() waits for a poll in progress, which waits on simulated time.
  t.teardown(() => clock.run(poller.stop()));
  return { clock, bus, chip, poller, log };
}

t.test('polls at the interval without drift, emitting readings with units', async (t) => {
  const { clock, bus, chip, poller, log } = setup(t);
  const readings: SensorReading[][] = [];
  poller.on('reading', (e) => readings.push(e.readings));
  t.equal(poller.state, 'stopped');
  poller.start();
  t.equal(poller.state, 'starting');
  await clock.advance(0);
  await clock.advance(INIT_MS + READ_MS);
  t.equal(poller.state, 'available');
  chip.physical = { temperature: 22.5, humidity: 55 };
  await clock.advance(30 * S);
  t.same(log, [
    { event: 'available', at: INIT_MS + READ_MS, detail: '0' },
    { event: 'reading', at: INIT_MS + READ_MS, detail: 'temperature=21.5 humidity=50.0' },
    { event: 'reading', at: 10 * S + READ_MS, detail: 'temperature=22.5 humidity=55.0' },
    { event: 'reading', at: 20 * S + READ_MS, detail: 'temperature=22.5 humidity=55.0' },
    { event: 'reading', at: 30 * S + READ_MS, detail: 'temperature=22.5 humidity=55.0' },
  ]);
  t.same(
    bus
      .transfers(0x44)
      .filter((r) => r.kind === 'write' && r.bytes[0] === 0x24)
      .map((r) => r.at),
    [INIT_MS, 10 * S, 20 * S, 30 * S],
    'each poll starts on the interval grid, not interval + read time after the last',
  );
  t.match(readings[1], [
    { quantity: 'temperature', unit: '°C', device_class: 'temperature' },
    { quantity: 'humidity', unit: '%', device_class: 'humidity' },
  ]);
  t.equal(poller.lastReading?.at, WALL_START + 30 * S + READ_MS);
});

t.test('a sensor that stops answering: unavailable after 3 failures, exponential backoff to the cap, back when it answers', async (t) => {
  const { clock, bus, poller, log } = setup(t);
  poller.start();
  await clock.advance(5 * S);
  bus.setOffline(0x44, true);
  await clock.advanceTo(200 * S);
  t.equal(poller.state, 'unavailable');
  t.equal(poller.consecutiveFailures, 6);
  bus.setOffline(0x44, false);
  await clock.advanceTo(300 * S);

  const back = 250 * S + INIT_MS + READ_MS;
  t.same(log, [
    { event: 'available', at: INIT_MS + READ_MS, detail: '0' },
    { event: 'reading', at: INIT_MS + READ_MS, detail: 'temperature=21.5 humidity=50.0' },
    { event: 'failure', at: 10 * S, detail: '1 HA_ERR_I2C_NACK' },
    { event: 'failure', at: 20 * S, detail: '2 HA_ERR_I2C_NACK' },
    { event: 'failure', at: 30 * S, detail: '3 HA_ERR_I2C_NACK' },
    { event: 'unavailable', at: 30 * S, detail: '3' },
    // Backoff: 20 s, 40 s, 80 s, then capped at 80 s.
    { event: 'failure', at: 50 * S, detail: '4 HA_ERR_I2C_NACK' },
    { event: 'failure', at: 90 * S, detail: '5 HA_ERR_I2C_NACK' },
    { event: 'failure', at: 170 * S, detail: '6 HA_ERR_I2C_NACK' },
    // Answering again from 200 s; the capped retry at 250 s finds it.
    { event: 'available', at: back, detail: String(back - 30 * S) },
    { event: 'reading', at: back, detail: 'temperature=21.5 humidity=50.0' },
    { event: 'reading', at: 260 * S + READ_MS, detail: 'temperature=21.5 humidity=50.0' },
    { event: 'reading', at: 270 * S + READ_MS, detail: 'temperature=21.5 humidity=50.0' },
    { event: 'reading', at: 280 * S + READ_MS, detail: 'temperature=21.5 humidity=50.0' },
    { event: 'reading', at: 290 * S + READ_MS, detail: 'temperature=21.5 humidity=50.0' },
  ]);
  t.same(
    bus
      .transfers(0x44)
      .filter((r) => r.nack !== undefined)
      .map((r) => r.at / S),
    [10, 20, 30, 50, 90, 170],
    'one attempt per step, nothing in between',
  );
  t.same(
    bus
      .transfers(0x44)
      .filter((r) => r.at >= 200 * S)
      .slice(0, 5)
      .map((r) => r.bytes.slice(0, 2)),
    [
      [0x30, 0xa2],
      [0xf3, 0x2d],
      [0x80, 0x10],
      [0x30, 0x41],
      [0x24, 0x00],
    ],
    'the returning chip is re-initialised (soft reset, status check) before it is read',
  );
  t.equal(poller.state, 'available');
  t.equal(poller.consecutiveFailures, 0);
});

t.test('a sensor missing from the start becomes unavailable after 3 attempts, from the starting state', async (t) => {
  const { clock, bus, poller, log } = setup(t);
  bus.detach(0x44);
  poller.start();
  await clock.advance(15 * S);
  t.equal(poller.state, 'starting', 'two failures: not yet');
  await clock.advance(5 * S);
  t.equal(poller.state, 'unavailable');
  t.same(
    log.map((e) => [e.event, e.at / S]),
    [
      ['failure', 0],
      ['failure', 10],
      ['failure', 20],
      ['unavailable', 20],
    ],
  );
  t.equal(poller.lastReading, undefined);
});

t.test('the wrong chip at the address fails init every time, with HA_ERR_I2C_DEVICE in the events', async (t) => {
  const clock = new ManualClock();
  const bus = new SimulatedI2cBus({ clock });
  // Answers with valid Sensirion framing but never reports a reset: not an SHT3x.
  bus.attach(0x44, { write: () => {}, read: () => Uint8Array.of(0x00, 0x00, 0x81) });
  const poller = new SensorPoller({ id: 'x', driver: new Sht3x({ bus, clock }), clock, interval_ms: S, unavailable_after: 2 });
  t.teardown(() => clock.run(poller.stop()));
  const messages: string[] = [];
  poller.on('unavailable', (e) => messages.push(e.message));
  poller.start();
  await clock.advance(2 * S);
  t.match(messages, [/^HA_ERR_I2C_DEVICE: .*did not set the reset-detected status bit/]);
});

t.test('a single bad CRC is a failure but not unavailability; the count resets on success', async (t) => {
  const { clock, bus, poller, log } = setup(t);
  poller.start();
  await clock.advance(5 * S);
  bus.corruptReads(0x44, { byte: 0 });
  await clock.advance(10 * S);
  t.equal(poller.consecutiveFailures, 1);
  t.equal(poller.state, 'available');
  await clock.advanceTo(25 * S);
  bus.corruptReads(0x44, { byte: 0, count: 2 });
  await clock.advanceTo(55 * S);
  t.same(
    log.map((e) => [e.event, e.detail.split(' ')[0] === 'temperature=21.5' ? 'ok' : e.detail]),
    [
      ['available', '0'],
      ['reading', 'ok'],
      ['failure', '1 HA_ERR_I2C_CRC'],
      ['reading', 'ok'],
      // 30 s: the data read is corrupted; 40 s: the driver is re-initialised and the status read is.
      ['failure', '1 HA_ERR_I2C_CRC'],
      ['failure', '2 HA_ERR_I2C_CRC'],
      ['reading', 'ok'],
    ],
  );
  t.equal(poller.state, 'available', 'never unavailable: at most 2 failures in a row');
});

t.test('backoff defaults: starts at the interval and is capped at 10 minutes', async (t) => {
  const { clock, bus, poller, log } = setup(t, { interval_ms: 60 * S }, true);
  bus.detach(0x44);
  poller.start();
  await clock.advanceTo(60 * 60 * S);
  const failures = log.filter((e) => e.event === 'failure').map((e) => e.at / S);
  // 0, 60, 120 (unavailable), then +60, +120, +240, +480, +600, +600 ...
  t.same(failures.slice(0, 9), [0, 60, 120, 180, 300, 540, 1020, 1620, 2220]);
});

t.test('stop: cancels the next poll, waits for one in progress and emits nothing after', async (t) => {
  const { clock, bus, poller, log } = setup(t);
  poller.start();
  await clock.advance(10 * S + 5);
  t.equal(log.filter((e) => e.event === 'reading').length, 1, 'the second read is mid-conversion');
  const stopped = poller.stop();
  let done = false;
  void stopped.then(() => {
    done = true;
  });
  await clock.advance(0);
  t.equal(done, false, 'stop waits for the read in progress');
  await clock.run(stopped);
  t.equal(poller.state, 'stopped');
  t.equal(log.filter((e) => e.event === 'reading').length, 1, 'its result is dropped');
  t.equal(clock.pendingTimers, 0, 'no timer left behind');
  const transfers = bus.transfers().length;
  await clock.advance(60 * S);
  t.equal(bus.transfers().length, transfers, 'no further polls');
  poller.start();
  await clock.advance(INIT_MS + READ_MS);
  t.equal(poller.state, 'available', 'it can be started again, re-initialising the chip');
  t.same(bus.transfers(0x44).at(-6)?.bytes, [0x30, 0xa2]);
});

t.test('a throwing listener does not stop polling or the other listeners', async (t) => {
  const { clock, poller } = setup(t);
  let seen = 0;
  poller.on('reading', () => {
    throw new Error('listener bug');
  });
  const off = poller.on('reading', () => {
    seen++;
  });
  poller.start();
  await clock.advance(20 * S + READ_MS);
  t.equal(seen, 3);
  t.equal(poller.listenerErrors, 3);
  off();
  await clock.advance(10 * S);
  t.equal(seen, 3, 'unsubscribed');
});

t.test('bad poller settings are configuration errors', async (t) => {
  const clock = new ManualClock();
  const driver: SensorDriver = {
    model: 'bh1750',
    address: 0x23,
    quantities: ['illuminance'],
    init: async () => {},
    read: async () => [],
  };
  for (const bad of [{ interval_ms: 0 }, { interval_ms: Number.NaN }, { unavailable_after: 0 }, { backoff_max_ms: -1 }]) {
    const poller = new SensorPoller({ id: 'x', driver, clock, interval_ms: 1000, ...bad });
    t.throws(() => poller.start(), { code: 'HA_ERR_CONFIG_INVALID' }, JSON.stringify(bad));
    t.equal(clock.pendingTimers, 0);
  }
});

t.test('stop and start again while a poll is in progress leaves a single polling chain', async (t) => {
  const { clock, bus, poller } = setup(t);
  poller.start();
  await clock.advance(INIT_MS + 5);
  const stopped = poller.stop();
  poller.start();
  await clock.run(stopped);
  t.equal(poller.state, 'starting', 'the earlier stop does not override the new start');
  await clock.advance(30 * S);
  t.equal(poller.state, 'available');
  const measurementStarts = bus
    .transfers(0x44)
    .filter((r) => r.kind === 'write' && r.bytes[0] === 0x24)
    .map((r) => r.at);
  // The restarted chain polls at 7 ms, while the chip is still converting for the old one: its
  // soft reset is NACKed. Then one poll per interval on the new grid (re-initialising at 10 s), and
  // none on the old grid (10 002 ms, 20 002 ms).
  t.same(measurementStarts, [INIT_MS, 10 * S + 7 + INIT_MS, 20 * S + 7, 30 * S + 7]);
  t.equal(poller.consecutiveFailures, 0);
});
