/**
 * What every I2C sensor driver offers the poller and, later, the entity registry: an `init` that
 * proves the chip at the address is the one configured, and a `read` that returns physical values
 * with units and device classes (the Home Assistant vocabulary, so MQTT discovery can reuse them).
 */
import type { SensorQuantity } from '../../src/sdk/api.js';
import type { SENSOR_MODELS } from './settings-schema.js';

export type { SensorQuantity };

export const SENSOR_UNITS = {
  temperature: '°C',
  humidity: '%',
  pressure: 'hPa',
  illuminance: 'lx',
} as const satisfies Record<SensorQuantity, string>;

export type SensorUnit = (typeof SENSOR_UNITS)[SensorQuantity];

/** Decimals worth showing; finer digits are below each chip's resolution. */
export const SENSOR_PRECISION: Readonly<Record<SensorQuantity, number>> = {
  temperature: 2,
  humidity: 1,
  pressure: 2,
  illuminance: 1,
};

export interface SensorReading {
  /** Also the entity suffix: `living_room_climate` + `temperature`. */
  quantity: SensorQuantity;
  value: number;
  unit: SensorUnit;
  device_class: SensorQuantity;
  /** Suggested display decimals. */
  precision: number;
}

/** A chip's name, as plugin.i2c.sensors[].driver says it (settings-schema.ts lists them). */
export type SensorModel = (typeof SENSOR_MODELS)[number];

export interface SensorDriver {
  readonly model: SensorModel;
  readonly address: number;
  /** What `read` returns, known before the first read so entities can be created up front. */
  readonly quantities: readonly SensorQuantity[];
  /**
   * Checks the chip (id, status or calibration bit) and configures it. Rejects with
   * HA_ERR_I2C_DEVICE when another chip answers, HA_ERR_I2C_NACK when nothing does. Called again
   * after failures, since a chip that lost power also lost its configuration.
   */
  init(): Promise<void>;
  /** One measurement. Rejects with an HA_ERR_I2C_* error; never returns a value it could not verify. */
  read(): Promise<SensorReading[]>;
}

export function reading(quantity: SensorQuantity, value: number): SensorReading {
  return { quantity, value, unit: SENSOR_UNITS[quantity], device_class: quantity, precision: SENSOR_PRECISION[quantity] };
}
