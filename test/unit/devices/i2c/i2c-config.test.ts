// parseI2cConfig (devices/i2c/i2c-config.ts): defaults, resolved addresses, and every mistake refused with the key it is in.
import t from 'tap';
import { defaultName, parseI2cConfig } from '../../../../devices/i2c/i2c-config.js';
import type { HomeAgentError } from '../../../../src/sdk/index.js';
import { expectError } from '../../fixtures/support.js';

t.test('a minimal sensor gets the schema defaults, its driver default address and a bus with backend auto', async (t) => {
  const config = parseI2cConfig([], [{ id: 'hall_climate', driver: 'sht3x' }]);
  t.same(config.buses, [{ bus: 1, backend: 'auto', force_access: false }]);
  t.same(config.sensors, [
    {
      id: 'hall_climate',
      name: 'Hall climate',
      area: null,
      driver: 'sht3x',
      bus: 1,
      address: 0x44,
      interval_ms: 30_000,
      unavailable_after: 3,
      backoff_max_ms: 600_000,
      spec: { driver: 'sht3x', address: 0x44 },
    },
  ]);
  t.same(parseI2cConfig(undefined, null), { buses: [], sensors: [] }, 'nothing configured');
});

t.test('every field is taken over; listed buses keep their backend; buses come out in order', async (t) => {
  const config = parseI2cConfig(
    [
      { bus: 3, backend: 'linux', force_access: true },
      { bus: 0, backend: 'simulated', force_access: false },
    ],
    [
      {
        id: 'living_room_climate',
        name: ' Living room ',
        area: 'living_room',
        driver: 'bme280',
        bus: 3,
        address: 0x77,
        interval_s: 10,
        unavailable_after: 5,
        backoff_max_s: 120,
        options: { oversampling: { temperature: 2, humidity: 16 } },
      },
      { id: 'desk_light', driver: 'bh1750', bus: 1, options: { mode: 'continuous_high2', mtreg: 254 } },
      { id: 'cellar', driver: 'sht3x', bus: 1, interval_s: 900, backoff_max_s: 60, options: { repeatability: 'low' } },
    ],
  );
  t.same(
    config.buses.map((b) => [b.bus, b.backend, b.force_access]),
    [
      [0, 'simulated', false],
      [1, 'auto', false],
      [3, 'linux', true],
    ],
  );
  t.match(config.sensors[0], {
    name: 'Living room',
    area: 'living_room',
    address: 0x77,
    interval_ms: 10_000,
    unavailable_after: 5,
    backoff_max_ms: 120_000,
    spec: { driver: 'bme280', address: 0x77, options: { oversampling: { temperature: 2, humidity: 16 } } },
  });
  t.same(config.sensors[1]?.spec, { driver: 'bh1750', address: 0x23, options: { mode: 'continuous_high2', mtreg: 254 } });
  t.equal(config.sensors[2]?.backoff_max_ms, 900_000, 'the retry cap is never below the interval');
  t.equal(defaultName('__a__b'), 'A b');
});

t.test('mistakes are refused with the key and the problem', async (t) => {
  const cases: Array<[string, unknown, unknown, RegExp]> = [
    [
      'duplicate id',
      [],
      [
        { id: 'a', driver: 'sht3x' },
        { id: 'a', driver: 'aht20' },
      ],
      /sensors\[1\]\.id: the id a is already used by plugin\.i2c\.sensors\[0\]/,
    ],
    [
      'two chips at one address (one by default)',
      [],
      [
        { id: 'a', driver: 'bme280', address: 0x76 },
        { id: 'b', driver: 'bme280' },
      ],
      /sensors\[1\]\.address: b and a are both at 0x76 on bus 1/,
    ],
    [
      'same address on another bus is fine, this one is not',
      [],
      [
        { id: 'a', driver: 'sht3x', bus: 2 },
        { id: 'b', driver: 'sht3x', bus: 2 },
      ],
      /both at 0x44 on bus 2/,
    ],
    ['bus listed twice', [{ bus: 1 }, { bus: 1, backend: 'linux' }], [], /buses\[1\]\.bus: bus 1 is listed twice/],
    ['unknown backend', [{ bus: 1, backend: 'spi' }], [], /buses\[0\]\.backend: expected one of auto, linux, simulated, found "spi"/],
    ['bus out of range', [{ bus: 256 }], [], /buses\[0\]\.bus: expected a whole number from 0 to 255, found 256/],
    [
      'unknown driver',
      [],
      [{ id: 'a', driver: 'dht22' }],
      /sensors\[0\]\.driver: expected one of bme280, aht20, sht3x, bh1750, found "dht22"/,
    ],
    ['bad id', [], [{ id: 'Kitchen', driver: 'sht3x' }], /sensors\[0\]\.id: expected lowercase letters/],
    ['id too long for its entity ids', [], [{ id: 'a'.repeat(60), driver: 'sht3x' }], /sensors\[0\]\.id: a+ is too long/],
    ['reserved address', [], [{ id: 'a', driver: 'sht3x', address: 0x78 }], /sensors\[0\]\.address: 0x78 is a reserved I2C address/],
    [
      'option of another driver',
      [],
      [{ id: 'a', driver: 'aht20', options: { mode: 'x' } }],
      /options\.mode: aht20 has no option mode; it takes none/,
    ],
    [
      'bad repeatability',
      [],
      [{ id: 'a', driver: 'sht3x', options: { repeatability: 'max' } }],
      /options\.repeatability: expected one of high, medium, low/,
    ],
    [
      'bad oversampling',
      [],
      [{ id: 'a', driver: 'bme280', options: { oversampling: { pressure: 3 } } }],
      /options\.oversampling\.pressure: expected one of 1, 2, 4, 8, 16, found 3/,
    ],
    [
      'unknown oversampling channel',
      [],
      [{ id: 'a', driver: 'bme280', options: { oversampling: { gas: 1 } } }],
      /oversampling\.gas: expected one of temperature, pressure, humidity/,
    ],
    [
      'mtreg out of range',
      [],
      [{ id: 'a', driver: 'bh1750', options: { mtreg: 30 } }],
      /options\.mtreg: expected a whole number from 31 to 254, found 30/,
    ],
    ['bad interval', [], [{ id: 'a', driver: 'bh1750', interval_s: 0 }], /sensors\[0\]\.interval_s: expected a whole number from 1/],
    ['not a list', [], { id: 'a' }, /plugin\.i2c\.sensors: expected a list/],
  ];
  for (const [what, buses, sensors, message] of cases) {
    const error: HomeAgentError = expectError(t, () => parseI2cConfig(buses, sensors), 'HA_ERR_CONFIG_INVALID');
    t.match(error.message, message, what);
  }
});
