// `homeagentctl i2c …` (src/cli/i2c.ts): argument parsing, the readable table, --json, and a daemon without the i2c plugin.
import t from 'tap';
import type { I2cScanResult, I2cSensorsResult } from '../../../src/api/i2c.js';
import type { CommandClient } from '../../../src/cli/command-client.js';
import { formatScan, formatSensors, formatSimulated, parseSensorsCommand, runSensors, SensorsUsageError } from '../../../src/cli/i2c.js';
import { RemoteError } from '../../../src/cli/rpc-client.js';
import { EXIT_CODES } from '../../../src/shared/exit-codes.js';

const NOW = Date.UTC(2025, 0, 1, 12, 0, 0);
const at = (s: number) => new Date(NOW + s * 1000).toISOString();

const RESULT: I2cSensorsResult = {
  buses: [
    { bus: 1, backend: 'auto', name: 'sim-1', simulated: true, fallback_reason: 'I2C bus i2c-1: /dev/i2c-1 does not exist' },
    { bus: 3, backend: 'linux', name: null, simulated: false, error: 'HA_ERR_I2C_UNAVAILABLE: I2C bus i2c-3: /dev/i2c-3 does not exist' },
  ],
  sensors: [
    {
      id: 'living_room_climate',
      name: 'Living room',
      area: 'living_room',
      driver: 'bme280',
      bus: 1,
      bus_name: 'sim-1',
      address: '0x76',
      simulated: true,
      state: 'available',
      failures: 0,
      next_poll_at: at(20),
      last_reading: {
        at: at(-10),
        values: [
          { quantity: 'temperature', value: 21.53, unit: '°C' },
          { quantity: 'humidity', value: 45.2, unit: '%' },
          { quantity: 'pressure', value: 1013.25, unit: 'hPa' },
        ],
      },
      last_error: { at: at(-3600), message: 'HA_ERR_I2C_CRC: an old one' },
      entities: ['sensor.living_room_climate_temperature', 'sensor.living_room_climate_humidity', 'sensor.living_room_climate_pressure'],
    },
    {
      id: 'kitchen_climate',
      name: 'Kitchen',
      area: 'kitchen',
      driver: 'sht3x',
      bus: 1,
      bus_name: 'sim-1',
      address: '0x44',
      simulated: true,
      state: 'unavailable',
      failures: 4,
      next_poll_at: at(40),
      last_reading: { at: at(-300), values: [{ quantity: 'temperature', value: 19.5, unit: '°C' }] },
      last_error: { at: at(-5), message: 'HA_ERR_I2C_NACK: I2C device 0x44 on sim-1 did not answer' },
      entities: ['sensor.kitchen_climate_temperature', 'sensor.kitchen_climate_humidity'],
    },
    {
      id: 'cellar',
      name: 'Cellar',
      area: null,
      driver: 'aht20',
      bus: 3,
      bus_name: null,
      address: '0x38',
      simulated: false,
      state: 'unavailable',
      failures: 0,
      next_poll_at: null,
      last_reading: null,
      last_error: { at: at(-60), message: 'HA_ERR_I2C_UNAVAILABLE: I2C bus i2c-3: /dev/i2c-3 does not exist' },
      entities: ['sensor.cellar_temperature', 'sensor.cellar_humidity'],
    },
  ],
};

t.test('parseSensorsCommand', async (t) => {
  t.same(parseSensorsCommand([]), { command: 'list' });
  t.same(parseSensorsCommand(['list']), { command: 'list' });
  t.same(parseSensorsCommand(['scan', '1']), { command: 'scan', bus: 1 });
  t.same(parseSensorsCommand(['scan', '0']), { command: 'scan', bus: 0 });
  const refused: Array<[string[], RegExp]> = [
    [['x'], /unknown i2c command x/],
    [['list', 'all'], /i2c takes no arguments/],
    [['scan'], /needs exactly one BUS/],
    [['scan', '1', '2'], /needs exactly one BUS/],
    [['scan', 'one'], /BUS must be a whole number from 0 to 255, found "one"/],
    [['scan', '256'], /BUS must be/],
    [['scan', '1.5'], /BUS must be/],
    [['scan', ' '], /BUS must be/],
  ];
  for (const [args, message] of refused)
    t.throws(() => parseSensorsCommand(args), { constructor: SensorsUsageError, message }, args.join(' '));
  t.throws(
    () => parseSensorsCommand(['scan'], 'sensor-bus'),
    { message: /^sensor-bus scan needs exactly one BUS/ },
    'messages name the command word it is mounted under',
  );
});

t.test('parseSensorsCommand: simulate takes the quantities as options, and the bus state', async (t) => {
  t.same(parseSensorsCommand(['simulate', 'living_room'], 'i2c', { temperature: '26.5', humidity: '40', pressure: '1002.5' }), {
    command: 'simulate',
    sensor: 'living_room',
    values: { temperature: 26.5, humidity: 40, pressure: 1002.5 },
  });
  t.same(parseSensorsCommand(['simulate', 'hall_light'], 'i2c', { illuminance: '0' }), {
    command: 'simulate',
    sensor: 'hall_light',
    values: { illuminance: 0 },
  });
  t.same(parseSensorsCommand(['simulate', 'attic'], 'i2c', { temperature: '-5', offline: true }), {
    command: 'simulate',
    sensor: 'attic',
    values: { temperature: -5 },
    offline: true,
  });
  t.same(parseSensorsCommand(['simulate', 'attic'], 'i2c', { online: true }), {
    command: 'simulate',
    sensor: 'attic',
    values: {},
    offline: false,
  });
  const refused: Array<[string[], Parameters<typeof parseSensorsCommand>[2], RegExp]> = [
    [
      ['simulate'],
      { temperature: '20' },
      /^i2c simulate needs exactly one SENSOR .*--temperature °C, --humidity %, --pressure hPa, --illuminance lx or --offline\/--online$/,
    ],
    [['simulate', 'a', 'b'], { temperature: '20' }, /needs exactly one SENSOR/],
    [['simulate', 'attic'], {}, /^i2c simulate attic needs a value to set \(--temperature °C, .*\) or --offline\/--online$/],
    [['simulate', 'attic'], { temperature: 'warm' }, /^--temperature must be a number of °C, found "warm"$/],
    [['simulate', 'attic'], { humidity: '' }, /^--humidity must be a number of %, found ""$/],
    [['simulate', 'attic'], { pressure: '1e999' }, /^--pressure must be a number of hPa/],
    [['simulate', 'attic'], { offline: true, online: true }, /--offline and --online cannot both be given/],
    [[], { temperature: '20' }, /^--temperature belongs to i2c simulate, not i2c$/],
    [['scan', '1'], { offline: true }, /^--offline belongs to i2c simulate, not i2c scan$/],
  ];
  for (const [args, flags, message] of refused)
    t.throws(
      () => parseSensorsCommand(args, 'i2c', flags),
      { constructor: SensorsUsageError, message },
      `${args.join(' ')} ${JSON.stringify(flags)}`,
    );
});

t.test('formatSensors: buses that need a word, then one aligned line per sensor', async (t) => {
  t.equal(
    formatSensors(RESULT, NOW),
    [
      'bus 1: simulated (sim-1): I2C bus i2c-1: /dev/i2c-1 does not exist',
      'bus 3: not opened: HA_ERR_I2C_UNAVAILABLE: I2C bus i2c-3: /dev/i2c-3 does not exist',
      '',
      'ID                   DRIVER  BUS/ADDRESS  STATE        VALUES                         LAST ERROR',
      'living_room_climate  bme280  1/0x76 sim   available    21.53 °C, 45.2 %, 1013.25 hPa',
      'kitchen_climate      sht3x   1/0x44 sim   unavailable  last: 19.5 °C                  HA_ERR_I2C_NACK: I2C device 0x44 on sim-1 did not answer (4 in a row, retry in 40 s)',
      'cellar               aht20   3/0x38       unavailable  -                              HA_ERR_I2C_UNAVAILABLE: I2C bus i2c-3: /dev/i2c-3 does not exist',
    ].join('\n'),
  );
  t.equal(formatSensors({ buses: [], sensors: [] }, NOW), 'no I2C sensors configured (plugin.i2c.sensors)');
  t.equal(
    formatSensors(RESULT, NOW, 'zh'),
    [
      '总线 1：模拟（sim-1）：I2C bus i2c-1: /dev/i2c-1 does not exist',
      '总线 3：未打开：HA_ERR_I2C_UNAVAILABLE: I2C bus i2c-3: /dev/i2c-3 does not exist',
      '',
      'ID                   驱动    总线/地址   状态    读数                           上次错误',
      'living_room_climate  bme280  1/0x76 sim  可用    21.53 °C, 45.2 %, 1013.25 hPa',
      'kitchen_climate      sht3x   1/0x44 sim  不可用  上次：19.5 °C                  HA_ERR_I2C_NACK: I2C device 0x44 on sim-1 did not answer （连续 4 次，40 秒后重试）',
      'cellar               aht20   3/0x38      不可用  -                              HA_ERR_I2C_UNAVAILABLE: I2C bus i2c-3: /dev/i2c-3 does not exist',
    ].join('\n'),
    'in Chinese, the columns still line up',
  );
  t.equal(formatSensors({ buses: [], sensors: [] }, NOW, 'zh'), '没有配置 I2C 传感器（plugin.i2c.sensors）');
});

t.test('formatScan', async (t) => {
  const scan: I2cScanResult = {
    bus: 1,
    name: 'i2c-1',
    simulated: false,
    addresses: ['0x23', '0x76'],
    busy: [{ address: '0x50', error: 'claimed by a kernel driver' }],
    configured: [
      { sensor: 'living_room_climate', address: '0x76', answering: true },
      { sensor: 'kitchen_climate', address: '0x44', answering: false },
    ],
  };
  t.equal(
    formatScan(scan),
    [
      'bus 1 (i2c-1): answering 0x23 0x76',
      '  0x50 busy: claimed by a kernel driver',
      '  living_room_climate at 0x76: answers',
      '  kitchen_climate at 0x44: does not answer',
    ].join('\n'),
  );
  t.equal(
    formatScan({ ...scan, simulated: true, name: 'sim-1', addresses: [], busy: [], configured: [] }),
    'bus 1 (sim-1, simulated): no device answers',
  );
  t.equal(
    formatScan(scan, 'zh'),
    [
      '总线 1（i2c-1）：应答的地址 0x23 0x76',
      '  0x50 忙：claimed by a kernel driver',
      '  living_room_climate 在 0x76：有应答',
      '  kitchen_climate 在 0x44：没有应答',
    ].join('\n'),
  );
});

function fakeClient(answer: (method: string, params: object) => unknown) {
  const calls: Array<{ method: string; params: object; timeoutMs: number }> = [];
  let closed = 0;
  const client: CommandClient = {
    call: async (method, params, timeoutMs) => {
      calls.push({ method, params, timeoutMs });
      return answer(method, params);
    },
    close: () => void closed++,
  };
  return { client, calls, closed: () => closed };
}

t.test('runSensors calls the i2c methods and prints text or JSON', async (t) => {
  const fake = fakeClient((method) =>
    method === 'i2c.sensors' ? RESULT : { bus: 2, name: 'i2c-2', simulated: false, addresses: [], busy: [], configured: [] },
  );
  let out = '';
  const stdout = { write: (text: string) => (out += text) };
  t.equal(
    await runSensors({ command: 'list' }, { connect: async () => fake.client, json: false, timeoutMs: 1234, stdout, now: () => NOW }),
    EXIT_CODES.OK,
  );
  t.equal(out, `${formatSensors(RESULT, NOW)}\n`);
  out = '';
  t.equal(await runSensors({ command: 'list' }, { connect: async () => fake.client, json: true, timeoutMs: 1234, stdout }), EXIT_CODES.OK);
  t.same(JSON.parse(out), RESULT);
  out = '';
  await runSensors({ command: 'scan', bus: 2 }, { connect: async () => fake.client, json: false, timeoutMs: 1234, stdout });
  t.equal(out, 'bus 2 (i2c-2): no device answers\n');
  t.same(
    fake.calls.map((c) => [c.method, c.params, c.timeoutMs]),
    [
      ['i2c.sensors', {}, 1234],
      ['i2c.sensors', {}, 1234],
      ['i2c.scan', { bus: 2 }, 1234],
    ],
  );
  t.equal(fake.closed(), 3, 'the connection is closed after each command');
});

t.test('runSensors simulate sends only what was given and prints what was set with the sensor line', async (t) => {
  const living = RESULT.sensors[0] as (typeof RESULT.sensors)[number];
  const fake = fakeClient(() => living);
  let out = '';
  const stdout = { write: (text: string) => (out += text) };
  const run = (command: Parameters<typeof runSensors>[0], json = false) =>
    runSensors(command, { connect: async () => fake.client, json, timeoutMs: 1234, stdout, now: () => NOW });
  const set = { command: 'simulate', sensor: 'living_room_climate', values: { temperature: 26.5, pressure: 1000 } } as const;
  t.equal(await run(set), EXIT_CODES.OK);
  t.equal(out, `${formatSimulated(set, living, NOW)}\n`);
  t.match(out, /^living_room_climate: temperature 26.5 °C, pressure 1000 hPa; the next poll reads it\n\nID /);
  t.match(out, /\nliving_room_climate {2}bme280 {2}1\/0x76 sim {3}available/);
  out = '';
  await run({ command: 'simulate', sensor: 'living_room_climate', values: {}, offline: true }, true);
  t.same(JSON.parse(out), living, '--json prints the answer as it came');
  t.same(
    fake.calls.map((c) => [c.method, c.params]),
    [
      ['i2c.simulate', { sensor: 'living_room_climate', values: { temperature: 26.5, pressure: 1000 } }],
      ['i2c.simulate', { sensor: 'living_room_climate', offline: true }],
    ],
  );
  t.match(
    formatSimulated({ command: 'simulate', sensor: 'x', values: {}, offline: false }, living, NOW),
    /^living_room_climate: back on the bus;/,
  );
});

t.test('a daemon without the i2c plugin, and daemon errors, are reported as remote errors', async (t) => {
  const stdout = { write: () => t.fail('nothing is printed') };
  const missing = fakeClient(() => {
    throw new RemoteError({ code: 'HA_ERR_RPC_UNKNOWN_METHOD', message: 'no method named "i2c.sensors"' });
  });
  await t.rejects(runSensors({ command: 'list' }, { connect: async () => missing.client, json: false, timeoutMs: 1000, stdout }), {
    code: 'HA_ERR_RPC_UNKNOWN_METHOD',
    message: /the i2c plugin is not running: enable it with plugin\.i2c\.enabled: true/,
  });
  t.equal(missing.closed(), 1);
  const gone = fakeClient(() => {
    throw new RemoteError({ code: 'HA_ERR_I2C_UNAVAILABLE', message: 'I2C bus i2c-7: /dev/i2c-7 does not exist' });
  });
  await t.rejects(runSensors({ command: 'scan', bus: 7 }, { connect: async () => gone.client, json: false, timeoutMs: 1000, stdout }), {
    code: 'HA_ERR_I2C_UNAVAILABLE',
    message: /\/dev\/i2c-7 does not exist/,
  });
  t.equal(gone.closed(), 1);
});
