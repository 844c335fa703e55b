/**
 * The settings of the i2c device driver, `plugin.i2c.*`: defaults, bounds, descriptions and
 * `requires_restart` for each. The configuration schema composes it (src/config/plugin-sections.ts);
 * the plugin reads its values through `PluginSettings<I2cSettings>`.
 */
import { type Static, Type } from '@sinclair/typebox';
import { pluginEnabled, pluginMeta, SLUG } from '../../src/sdk/settings.js';

/**
 * The chips plugin.i2c.sensors[].driver may name: the one list of their names. The types
 * (SensorModel) come from it, and sensor-factory.ts must give each of them a chip definition.
 */
export const SENSOR_MODELS = ['bme280', 'aht20', 'sht3x', 'bh1750'] as const;

const I2cBusSchema = Type.Object(
  {
    bus: Type.Integer({ minimum: 0, maximum: 255, description: '/dev/i2c-<bus> (1 on the header of most Pis).' }),
    backend: Type.Union([Type.Literal('auto'), Type.Literal('linux'), Type.Literal('simulated')], {
      default: 'auto',
      description: 'auto: the real bus when /dev/i2c-<bus> exists, else a simulation populated with the configured sensors.',
    }),
    force_access: Type.Boolean({ default: false, description: 'Talk to addresses a kernel driver has claimed.' }),
  },
  { additionalProperties: false },
);

const I2cSensorSchema = Type.Object(
  {
    id: Type.String({ pattern: SLUG, description: 'Sensor id; its entities are sensor.<id>_<quantity>.' }),
    name: Type.String({ default: '', maxLength: 64, description: 'Friendly name ("Living room"); empty: the id with spaces.' }),
    area: Type.String({ default: '', maxLength: 64 }),
    driver: Type.Union(SENSOR_MODELS.map((model) => Type.Literal(model))),
    bus: Type.Integer({ default: 1, minimum: 0, maximum: 255 }),
    address: Type.Integer({
      default: 0,
      minimum: 0,
      maximum: 127,
      description: '7-bit address; 0: the driver default (bme280 0x76, aht20 0x38, sht3x 0x44, bh1750 0x23).',
    }),
    interval_s: Type.Integer({ default: 30, minimum: 1, maximum: 86400, description: 'Seconds between readings.' }),
    unavailable_after: Type.Integer({
      default: 3,
      minimum: 1,
      maximum: 100,
      description: 'Failed readings in a row before it is unavailable.',
    }),
    backoff_max_s: Type.Integer({
      default: 600,
      minimum: 1,
      maximum: 86400,
      description: 'Longest wait between retries of an unavailable sensor.',
    }),
    options: Type.Record(Type.String(), Type.Unknown(), {
      default: {},
      description: 'bme280: oversampling {temperature, pressure, humidity}; sht3x: repeatability; bh1750: mode, mtreg.',
    }),
  },
  { additionalProperties: false },
);

export const settingsSchema = Type.Object(
  {
    enabled: pluginEnabled('i2c'),
    buses: Type.Array(I2cBusSchema, {
      default: [],
      maxItems: 16,
      ...pluginMeta('i2c', 'Buses in use, each {bus, backend, force_access}; a sensor on a bus not listed uses backend auto.', {
        description_zh: '使用中的总线，每个为 {bus, backend, force_access}；不在列表里的总线上的传感器使用 backend auto。',
        requires_restart: true,
      }),
    }),
    sensors: Type.Array(I2cSensorSchema, {
      default: [],
      maxItems: 64,
      ...pluginMeta('i2c', 'Sensors, each {id, name, area, driver, bus, address, interval_s, ...}; every reading becomes an entity.', {
        description_zh: '传感器，每个为 {id, name, area, driver, bus, address, interval_s, ...}；每种读数都成为一个实体。',
        requires_restart: true,
      }),
    }),
  },
  { additionalProperties: false, default: {} },
);

export type I2cSettings = Static<typeof settingsSchema>;
