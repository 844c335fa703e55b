// The i2c device plugin (devices/i2c/i2c-plugin.ts) on simulated buses and simulated time: configuration errors, one
// entity per quantity, readings into entity states, unavailable and back, the control methods, health and stop.
import { existsSync } from 'node:fs';
import t from 'tap';
import { Aht20Emulator } from '../../../../devices/i2c/aht20-emulator.js';
import { Bme280Emulator } from '../../../../devices/i2c/bme280-emulator.js';
import { I2cPlugin, type OpenedSensorBus, type OpenSensorBus } from '../../../../devices/i2c/i2c-plugin.js';
import { Sht3xEmulator } from '../../../../devices/i2c/sht3x-emulator.js';
import { type I2cDeviceEmulator, SimulatedI2cBus } from '../../../../devices/i2c/simulated-bus.js';
import type { ControlRegistry } from '../../../../src/plugin/control-registry.js';
import type { I2cSensorStatus, I2cSensorsResult } from '../../../../src/sdk/api.js';
import type { EntityInfo, PluginContext } from '../../../../src/sdk/index.js';
import { createTestPluginContext, type TestPluginContext } from '../../../helpers/plugin-context.js';
import { type CapturedLogs, captureLogs, expectErrorAsync, type Teardown, tempDir } from '../../fixtures/support.js';
import { ManualClock, WALL_START } from './manual-clock.js';

const S = 1000;
const CLI = { actor: 'cli' };
/** Longer than any chip's init plus conversion (the BH1750's one-time mode takes up to 180 ms). */
const SETTLE_MS = 500;

interface Running {
  tc: TestPluginContext;
  plugin: I2cPlugin;
  control: ControlRegistry;
  clock: ManualClock;
  logs: CapturedLogs;
  /** Buses handed out by the injected opener, by number. */
  buses: Map<number, SimulatedI2cBus>;
  opened: Array<{ bus: number; backend: string }>;
  entity(id: string): Promise<EntityInfo>;
  call<R>(method: string, params?: unknown): Promise<R>;
  stop(): Promise<void>;
}

interface StartOptions {
  buses?: unknown[];
  sensors: unknown[];
  /** Chips the test controls, as [bus, address, chip]; without them the plugin's own opener runs (real or simulated by backend). */
  chips?: Array<[number, number, I2cDeviceEmulator]>;
  /** The time the chips were made with. */
  clock?: ManualClock;
  /** An opener of the test's own, instead of one built from `chips`. */
  openBus?: OpenSensorBus;
}

/** Builds the plugin on a test context with a real ControlRegistry; `start` is separate so start failures can be tested. */
function setup(t: Teardown, options: StartOptions) {
  const clock = options.clock ?? new ManualClock();
  const logs = captureLogs('debug');
  const tc = createTestPluginContext({
    name: 'i2c',
    dataDir: tempDir(t, 'ha-i2c-'),
    settings: { buses: options.buses ?? [], sensors: options.sensors },
  });
  const control = tc.control;
  const context: PluginContext = { ...tc.context, log: logs.logs.child('plugin.i2c') };
  const buses = new Map<number, SimulatedI2cBus>();
  const opened: Array<{ bus: number; backend: string }> = [];
  const chips = options.chips;
  const openBus: OpenSensorBus | undefined =
    options.openBus ??
    (chips === undefined
      ? undefined
      : async (bus, backend) => {
          opened.push({ bus, backend });
          const simulated = new SimulatedI2cBus({ bus, clock });
          const emulators = new Map<number, I2cDeviceEmulator>();
          for (const [on, address, chip] of chips) {
            if (on !== bus) continue;
            simulated.attach(address, chip);
            emulators.set(address, chip);
          }
          buses.set(bus, simulated);
          return { bus: simulated, simulated: true, emulators } satisfies OpenedSensorBus;
        });
  const plugin = new I2cPlugin(context, { clock, ...(openBus && { openBus }) });
  let stopped = false;
  const stop = async () => {
    if (stopped) return;
    stopped = true;
    // stop() waits for a poll in progress, which waits on simulated time.
    await clock.run(plugin.stop());
  };
  t.teardown(async () => {
    await stop();
    await tc.close();
  });
  const running: Running = {
    tc,
    plugin,
    control,
    clock,
    logs,
    buses,
    opened,
    entity: (id) => context.entities.get(id),
    call: async <R>(method: string, params: unknown = {}) => (await control.call(method, params, CLI)) as R,
    stop,
  };
  return running;
}

async function start(t: Teardown, options: StartOptions): Promise<Running> {
  const running = setup(t, options);
  await running.plugin.start();
  return running;
}

function sensorStatus(result: I2cSensorsResult, id: string): I2cSensorStatus {
  const status = result.sensors.find((s) => s.id === id);
  if (status === undefined) throw new Error(`no sensor ${id}`);
  return status;
}

function decimals(value: number): number {
  return (String(value).split('.')[1] ?? '').length;
}

t.test('a configuration mistake stops the start before anything is opened or registered', async (t) => {
  const cases: Array<[string, StartOptions, RegExp]> = [
    [
      'duplicate id',
      {
        sensors: [
          { id: 'a', driver: 'sht3x' },
          { id: 'a', driver: 'aht20' },
        ],
      },
      /plugin\.i2c\.sensors\[1\]\.id: the id a is already used/,
    ],
    [
      'two sensors on one address',
      {
        sensors: [
          { id: 'a', driver: 'bme280' },
          { id: 'b', driver: 'bme280', address: 0x76 },
        ],
      },
      /plugin\.i2c\.sensors\[1\]\.address: b and a are both at 0x76 on bus 1/,
    ],
    [
      'a bus listed twice',
      { buses: [{ bus: 1 }, { bus: 1 }], sensors: [{ id: 'a', driver: 'sht3x' }] },
      /plugin\.i2c\.buses\[1\]\.bus: bus 1 is listed twice/,
    ],
    ['a bad option', { sensors: [{ id: 'a', driver: 'bh1750', options: { mtreg: 1000 } }] }, /plugin\.i2c\.sensors\[0\]\.options\.mtreg/],
  ];
  for (const [what, options, message] of cases) {
    const running = setup(t, { ...options, chips: [] });
    const error = await expectErrorAsync(t, () => running.plugin.start(), 'HA_ERR_CONFIG_INVALID');
    t.match(error.message, message, what);
    t.same(running.opened, [], `${what}: no bus opened`);
    t.same(running.control.methods(), [], `${what}: no control method registered`);
    t.same(await running.tc.context.entities.list({ owner: 'plugin:i2c' }), [], `${what}: no entity registered`);
  }
});

t.test('one sensor entity per quantity, with units, device classes, area and attributes; values once read', async (t) => {
  const { entity, clock, call, tc } = await start(t, {
    buses: [{ bus: 1, backend: 'simulated' }],
    sensors: [
      { id: 'living_room_climate', name: 'Living room', area: 'living_room', driver: 'bme280' },
      { id: 'bathroom', driver: 'aht20' },
      { id: 'hall', driver: 'sht3x', address: 0x45 },
      { id: 'desk_light', driver: 'bh1750', bus: 1 },
    ],
  });
  const mine = (await tc.context.entities.list({ owner: 'plugin:i2c' })).map((e) => [e.entity_id, e.unit, e.device_class]);
  t.same(mine.sort(), [
    ['sensor.bathroom_humidity', '%', 'humidity'],
    ['sensor.bathroom_temperature', '°C', 'temperature'],
    ['sensor.desk_light_illuminance', 'lx', 'illuminance'],
    ['sensor.hall_humidity', '%', 'humidity'],
    ['sensor.hall_temperature', '°C', 'temperature'],
    ['sensor.living_room_climate_humidity', '%', 'humidity'],
    ['sensor.living_room_climate_pressure', 'hPa', 'pressure'],
    ['sensor.living_room_climate_temperature', '°C', 'temperature'],
  ]);
  t.match(await entity('sensor.living_room_climate_pressure'), {
    domain: 'sensor',
    name: 'Living room pressure',
    area: 'living_room',
    device: 'living_room_climate',
    state: null,
    attributes: { driver: 'bme280', bus: 1, address: '0x76', simulated: true },
  });
  t.match(await entity('sensor.hall_temperature'), {
    name: 'Hall temperature',
    area: null,
    device: 'hall',
    attributes: { driver: 'sht3x', address: '0x45' },
  });
  t.equal((await entity('sensor.desk_light_illuminance')).state, null, 'unknown until the first reading');

  await clock.advance(SETTLE_MS);
  const expected: Array<[string, number, number]> = [
    ['sensor.living_room_climate_temperature', 21, 2],
    ['sensor.living_room_climate_humidity', 45, 1],
    ['sensor.living_room_climate_pressure', 1013.25, 2],
    ['sensor.bathroom_temperature', 21, 2],
    ['sensor.bathroom_humidity', 45, 1],
    ['sensor.hall_temperature', 21, 2],
    ['sensor.hall_humidity', 45, 1],
    ['sensor.desk_light_illuminance', 250, 1],
  ];
  for (const [id, value, places] of expected) {
    const state = (await entity(id)).state;
    t.type(state, 'number', `${id} is a number`);
    t.ok(Math.abs((state as number) - value) <= 0.1, `${id} = ${state}, close to the emulator's ${value}`);
    t.ok(decimals(state as number) <= places, `${id} is rounded to at most ${places} decimals`);
  }
  const sensors = await call<I2cSensorsResult>('i2c.sensors');
  t.same(sensors.buses, [{ bus: 1, backend: 'simulated', name: 'sim-1', simulated: true }]);
  t.match(sensorStatus(sensors, 'living_room_climate'), {
    driver: 'bme280',
    bus: 1,
    bus_name: 'sim-1',
    address: '0x76',
    simulated: true,
    state: 'available',
    failures: 0,
    next_poll_at: new Date(WALL_START + 30 * S).toISOString(),
    last_reading: {
      values: [
        { quantity: 'temperature', unit: '°C' },
        { quantity: 'humidity', unit: '%' },
        { quantity: 'pressure', unit: 'hPa' },
      ],
    },
    last_error: null,
    entities: ['sensor.living_room_climate_temperature', 'sensor.living_room_climate_humidity', 'sensor.living_room_climate_pressure'],
  });
});

t.test('a NACKing sensor: unavailable after unavailable_after failures with the error, back after the backoff', async (t) => {
  const clock = new ManualClock();
  const chip = new Sht3xEmulator({ clock, physical: { temperature: 22.5, humidity: 55 } });
  const running = await start(t, {
    clock,
    sensors: [{ id: 'kitchen_climate', driver: 'sht3x', interval_s: 10, unavailable_after: 3, backoff_max_s: 40 }],
    chips: [[1, 0x44, chip]],
  });
  const { entity, call, buses, plugin } = running;
  await clock.advance(SETTLE_MS);
  t.equal((await entity('sensor.kitchen_climate_temperature')).state, 22.5);
  t.equal((await entity('sensor.kitchen_climate_humidity')).state, 55);
  t.same(running.opened, [{ bus: 1, backend: 'auto' }], 'a bus not listed is opened with backend auto');

  const bus = buses.get(1) as SimulatedI2cBus;
  bus.setOffline(0x44, true);
  await clock.advanceTo(10 * S + SETTLE_MS);
  await clock.advanceTo(20 * S + SETTLE_MS);
  t.equal((await entity('sensor.kitchen_climate_temperature')).state, 22.5, 'two failures: the last value stays');
  t.equal((await call<I2cSensorsResult>('i2c.sensors')).sensors[0]?.failures, 2);
  await clock.advanceTo(30 * S + SETTLE_MS);
  const down = await entity('sensor.kitchen_climate_temperature');
  t.equal(down.state, 'unavailable', 'the third failure makes it unavailable');
  t.match(down.attributes.error, /^HA_ERR_I2C_NACK: I2C device 0x44 on sim-1 did not answer/);
  t.equal((await entity('sensor.kitchen_climate_humidity')).state, 'unavailable');
  const status = sensorStatus(await call<I2cSensorsResult>('i2c.sensors'), 'kitchen_climate');
  t.match(status, {
    state: 'unavailable',
    failures: 3,
    next_poll_at: new Date(WALL_START + 40 * S).toISOString(),
    last_error: { message: /HA_ERR_I2C_NACK/ },
  });
  t.same(
    plugin.health(),
    {
      ok: true,
      detail: '1 sensor, 1 unavailable: kitchen_climate (NACK); bus 1 simulated',
      detail_zh: '1 个传感器，1 个不可用：kitchen_climate（NACK）；总线 1 为模拟',
    },
    'an unavailable sensor leaves the plugin healthy',
  );
  t.ok(
    running.logs.records().some((r) => r.level === 'warn' && /kitchen_climate is unavailable/.test(String(r.msg))),
    'logged as a warning',
  );

  // Backoff: retries at 40 s, then 60 s (20 s later), then 100 s (the 40 s cap).
  await clock.advanceTo(40 * S + SETTLE_MS);
  t.equal((await call<I2cSensorsResult>('i2c.sensors')).sensors[0]?.next_poll_at, new Date(WALL_START + 60 * S).toISOString());
  chip.physical = { temperature: 19.25, humidity: 60 };
  bus.setOffline(0x44, false);
  await clock.advanceTo(59 * S);
  t.equal((await entity('sensor.kitchen_climate_temperature')).state, 'unavailable', 'nothing happens before the retry');
  await clock.advanceTo(60 * S + SETTLE_MS);
  const back = await entity('sensor.kitchen_climate_temperature');
  t.equal(back.state, 19.25, 'back with the new value at the retry');
  t.equal(back.attributes.error, null, 'the error is cleared');
  t.equal((await entity('sensor.kitchen_climate_humidity')).state, 60);
  t.match(sensorStatus(await call<I2cSensorsResult>('i2c.sensors'), 'kitchen_climate'), { state: 'available', failures: 0 });
  t.same(plugin.health(), {
    ok: true,
    detail: '1 sensor, 0 unavailable; bus 1 simulated',
    detail_zh: '1 个传感器，0 个不可用；总线 1 为模拟',
  });
});

t.test('a sensor that never answered since start is unavailable from its first failure', async (t) => {
  const clock = new ManualClock();
  const running = await start(t, {
    clock,
    sensors: [
      { id: 'missing', driver: 'aht20', interval_s: 5 },
      { id: 'present', driver: 'bme280' },
    ],
    chips: [[1, 0x76, new Bme280Emulator({ clock })]],
  });
  const { entity, plugin, call } = running;
  await clock.advance(SETTLE_MS);
  t.match(await entity('sensor.missing_temperature'), { state: 'unavailable', attributes: { error: /HA_ERR_I2C_NACK/ } });
  t.match(sensorStatus(await call<I2cSensorsResult>('i2c.sensors'), 'missing'), { state: 'unavailable', failures: 1 });
  t.type((await entity('sensor.present_pressure')).state, 'number');
  t.same(plugin.health(), {
    ok: true,
    detail: '2 sensors, 1 unavailable: missing (NACK); bus 1 simulated',
    detail_zh: '2 个传感器，1 个不可用：missing（NACK）；总线 1 为模拟',
  });

  running.buses.get(1)?.attach(0x38, new Aht20Emulator({ clock, calibrated: false, ignoresInit: true }));
  await clock.advanceTo(5 * S + SETTLE_MS);
  t.match(
    await entity('sensor.missing_humidity'),
    { state: 'unavailable', attributes: { error: /^HA_ERR_I2C_DEVICE: .*not a working AHT20/ } },
    'another failure while unavailable replaces the error shown',
  );
  t.match(sensorStatus(await call<I2cSensorsResult>('i2c.sensors'), 'missing'), {
    failures: 2,
    last_error: { message: /HA_ERR_I2C_DEVICE/ },
  });
});

t.test('i2c.simulate moves a simulated chip and takes it offline; refuses what it cannot do', async (t) => {
  const { clock, entity, call, tc } = await start(t, {
    buses: [{ bus: 1, backend: 'simulated' }],
    sensors: [
      { id: 'hall', driver: 'sht3x', interval_s: 10, unavailable_after: 1 },
      { id: 'desk_light', driver: 'bh1750', interval_s: 10 },
    ],
  });
  await clock.advance(SETTLE_MS);
  const status = await call<I2cSensorStatus>('i2c.simulate', { sensor: 'hall', values: { temperature: 30.5, humidity: 20 } });
  t.equal(status.id, 'hall');
  t.equal((await entity('sensor.hall_temperature')).state, 21, 'the value changes with the next poll, not at once');
  await clock.advanceTo(10 * S + SETTLE_MS);
  t.equal((await entity('sensor.hall_temperature')).state, 30.5);
  t.equal((await entity('sensor.hall_humidity')).state, 20);
  await call('i2c.simulate', { sensor: 'desk_light', values: { illuminance: 1000 } });
  await clock.advanceTo(20 * S + SETTLE_MS);
  t.equal((await entity('sensor.desk_light_illuminance')).state, 1000);

  await call('i2c.simulate', { sensor: 'hall', offline: true });
  await clock.advanceTo(30 * S + SETTLE_MS);
  t.equal((await entity('sensor.hall_temperature')).state, 'unavailable');
  await call('i2c.simulate', { sensor: 'hall', offline: false, values: { temperature: 18 } });
  await clock.advanceTo(40 * S + SETTLE_MS);
  t.equal((await entity('sensor.hall_temperature')).state, 18);
  t.same(
    tc.audits.map((a) => a.details),
    [
      { actor: 'cli', sensor: 'hall', values: { temperature: 30.5, humidity: 20 } },
      { actor: 'cli', sensor: 'desk_light', values: { illuminance: 1000 } },
      { actor: 'cli', sensor: 'hall', offline: true },
      { actor: 'cli', sensor: 'hall', values: { temperature: 18 }, offline: false },
    ],
    'each change is audited with its actor',
  );

  const refused: Array<[unknown, string, RegExp]> = [
    [
      { sensor: 'cellar', values: { temperature: 1 } },
      'HA_ERR_RPC_INVALID_PARAMS',
      /no sensor has the id "cellar"; configured: desk_light, hall/,
    ],
    [
      { sensor: 'hall', values: { pressure: 1000 } },
      'HA_ERR_RPC_INVALID_PARAMS',
      /sensor hall does not measure pressure; it measures temperature, humidity/,
    ],
    [{ sensor: 'hall', values: { temperature: 500 } }, 'HA_ERR_RPC_INVALID_PARAMS', /temperature/],
    [{ sensor: 'hall' }, 'HA_ERR_RPC_INVALID_PARAMS', /needs values .* or offline/],
    [{ sensor: 'hall', values: { temperature: 25, pressure: 1000 } }, 'HA_ERR_RPC_INVALID_PARAMS', /does not measure pressure/],
  ];
  for (const [params, code, message] of refused) {
    const error = await expectErrorAsync(t, () => call('i2c.simulate', params), code as 'HA_ERR_RPC_INVALID_PARAMS');
    t.match(error.message, message);
  }
  await clock.advanceTo(50 * S + SETTLE_MS);
  t.equal((await entity('sensor.hall_temperature')).state, 18, 'a refused call changed nothing (not even the values it could set)');
  t.equal(tc.audits.length, 4, 'and audited nothing');
});

t.test('i2c.simulate on a sensor of a real bus is refused', async (t) => {
  const silent: OpenSensorBus = async (bus) => {
    // Stands in for a real bus: no emulators, and nothing answers.
    const real = new SimulatedI2cBus({ bus });
    return { bus: { ...bindBus(real), name: `i2c-${bus}` }, simulated: false };
  };
  const running = await start(t, { sensors: [{ id: 'hall', driver: 'sht3x' }], openBus: silent });
  const error = await expectErrorAsync(t, () => running.call('i2c.simulate', { sensor: 'hall', offline: true }), 'HA_ERR_I2C_UNAVAILABLE');
  t.match(error.message, /I2C bus i2c-1: sensor hall is not on a simulated bus/);
});

function bindBus(bus: SimulatedI2cBus) {
  return {
    i2cWrite: bus.i2cWrite.bind(bus),
    i2cRead: bus.i2cRead.bind(bus),
    readI2cBlock: bus.readI2cBlock.bind(bus),
    readByte: bus.readByte.bind(bus),
    writeByte: bus.writeByte.bind(bus),
    close: bus.close.bind(bus),
  };
}

t.test('i2c.scan: the answering addresses of a simulated bus; a missing real bus is a clear error', async (t) => {
  const { call, clock } = await start(t, {
    buses: [{ bus: 1, backend: 'simulated' }],
    sensors: [
      { id: 'hall', driver: 'sht3x' },
      { id: 'bathroom', driver: 'aht20' },
    ],
  });
  await clock.advance(SETTLE_MS);
  await call('i2c.simulate', { sensor: 'bathroom', offline: true });
  t.same(await call('i2c.scan', { bus: 1 }), {
    bus: 1,
    name: 'sim-1',
    simulated: true,
    addresses: ['0x44'],
    busy: [],
    configured: [
      { sensor: 'hall', address: '0x44', answering: true },
      { sensor: 'bathroom', address: '0x38', answering: false },
    ],
  });
  t.notOk(existsSync('/dev/i2c-250'), 'this machine has no bus 250');
  const error = await expectErrorAsync(t, () => call('i2c.scan', { bus: 250 }), 'HA_ERR_I2C_UNAVAILABLE');
  t.match(error.message, /I2C bus i2c-250: \/dev\/i2c-250 does not exist: I2C is not enabled/);
  await expectErrorAsync(t, () => call('i2c.scan', { bus: 256 }), 'HA_ERR_RPC_INVALID_PARAMS');
});

t.test('backend linux on a missing bus: the plugin starts, its sensors are unavailable, health fails', async (t) => {
  const { entity, plugin, call, clock } = await start(t, {
    buses: [{ bus: 250, backend: 'linux' }],
    sensors: [{ id: 'cellar', driver: 'aht20', bus: 250 }],
  });
  await clock.advance(SETTLE_MS);
  t.match(await entity('sensor.cellar_humidity'), {
    state: 'unavailable',
    attributes: { error: /HA_ERR_I2C_UNAVAILABLE: I2C bus i2c-250: \/dev\/i2c-250 does not exist/ },
  });
  const result = await call<I2cSensorsResult>('i2c.sensors');
  t.match(result.buses, [{ bus: 250, backend: 'linux', name: null, simulated: false, error: /does not exist/ }]);
  t.match(result.sensors, [
    { id: 'cellar', state: 'unavailable', bus_name: null, next_poll_at: null, last_error: { message: /does not exist/ } },
  ]);
  const health = plugin.health();
  t.equal(health.ok, false);
  t.match(health.detail, /^1 sensor, 1 unavailable: cellar \(UNAVAILABLE\); bus 250 could not be opened: HA_ERR_I2C_UNAVAILABLE/);
  t.equal(clock.pendingTimers, 0, 'a sensor on a bus that is not open is not polled');
});

t.test('backend auto without the real bus falls back to a simulation, said in the log and in health', async (t) => {
  const { entity, plugin, call, clock, logs } = await start(t, {
    buses: [{ bus: 250, backend: 'auto' }],
    sensors: [{ id: 'cellar', driver: 'aht20', bus: 250 }],
  });
  await clock.advance(SETTLE_MS);
  t.equal((await entity('sensor.cellar_temperature')).state, 21);
  t.match((await call<I2cSensorsResult>('i2c.sensors')).buses, [
    { bus: 250, name: 'sim-250', simulated: true, fallback_reason: /\/dev\/i2c-250 does not exist/ },
  ]);
  const health = plugin.health();
  t.equal(health.ok, true);
  t.match(health.detail, /^1 sensor, 0 unavailable; bus 250 simulated: I2C bus i2c-250: \/dev\/i2c-250 does not exist/);
  t.ok(
    logs.records().some((r) => r.level === 'warn' && /I2C bus 250 is simulated/.test(String(r.msg))),
    'a warning in the log',
  );
});

t.test('no sensors configured: healthy, nothing polled', async (t) => {
  const { plugin, call, clock } = await start(t, { sensors: [] });
  t.same(plugin.health(), {
    ok: true,
    detail: 'no sensors configured (plugin.i2c.sensors)',
    detail_zh: '没有配置传感器（plugin.i2c.sensors）',
  });
  t.same(await call('i2c.sensors'), { buses: [], sensors: [] });
  t.equal(clock.pendingTimers, 0);
});

t.test('stop: polls end, buses close, control methods go; no entity changes afterwards', async (t) => {
  const clock = new ManualClock();
  const chip = new Aht20Emulator({ clock });
  const running = await start(t, { clock, sensors: [{ id: 'bathroom', driver: 'aht20', interval_s: 10 }], chips: [[1, 0x38, chip]] });
  const { entity, control, buses } = running;
  await clock.advance(SETTLE_MS);
  t.equal((await entity('sensor.bathroom_temperature')).state, 21);
  // Stop while a poll is in flight (the AHT20 measures for 80 ms).
  await clock.advanceTo(10 * S + 10);
  await running.stop();
  t.equal(clock.pendingTimers, 0, 'no poll is scheduled');
  t.same(control.methods(), [], 'i2c.sensors, i2c.scan and i2c.simulate are gone');
  await expectErrorAsync(t, () => (buses.get(1) as SimulatedI2cBus).i2cRead(0x38, 1), 'HA_ERR_I2C_UNAVAILABLE');
  chip.physical = { temperature: 30, humidity: 30 };
  await clock.advance(60 * S);
  const history = await running.tc.context.entities.history('sensor.bathroom_temperature', { from: 0, to: Number.MAX_SAFE_INTEGER });
  t.same(
    history.map((row) => row.state),
    [21],
    'the reading before stop is stored; nothing after it',
  );
});
