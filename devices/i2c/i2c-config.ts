/**
 * Turns the settings plugin.i2c.buses and plugin.i2c.sensors into checked, resolved sensor
 * configurations. The schema checks each field alone; what only the whole list shows (two sensors
 * with one id, two chips on one bus address, a bus listed twice) and what depends on the driver
 * (its options, its default address) is checked here, before anything is opened: a mistake stops
 * the plugin with an error naming the key, never a sensor that silently reads the wrong chip.
 */
import { HomeAgentError } from '../../src/sdk/index.js';
import { BH1750_MODE_OPCODE, type Bh1750Mode, MTREG_MAX, MTREG_MIN } from './bh1750.js';
import type { Oversampling } from './bme280.js';
import { formatAddress, MAX_ADDRESS, MIN_ADDRESS } from './i2c-bus.js';
import type { SensorModel, SensorQuantity } from './sensor.js';
import { CHIPS, type I2cBackend, SENSOR_MODELS, type SensorOptions, type SensorSpec } from './sensor-factory.js';
import { SHT3X_SINGLE_SHOT, type Sht3xRepeatability } from './sht3x.js';

export interface I2cBusConfig {
  bus: number;
  backend: I2cBackend;
  force_access: boolean;
}

export interface I2cSensorConfig {
  id: string;
  /** Friendly name; the id with spaces when none was given. */
  name: string;
  area: string | null;
  driver: SensorModel;
  bus: number;
  /** Resolved: the driver's default when the setting is 0. */
  address: number;
  interval_ms: number;
  unavailable_after: number;
  backoff_max_ms: number;
  spec: SensorSpec;
}

export interface I2cConfig {
  /** Every bus a sensor uses or the settings list, in bus order; unlisted ones get backend auto. */
  buses: I2cBusConfig[];
  sensors: I2cSensorConfig[];
}

const SENSORS_KEY = 'plugin.i2c.sensors';
const BUSES_KEY = 'plugin.i2c.buses';
const SLUG = /^[a-z0-9_]{1,64}$/;
/** Entity object ids are at most 64 characters and get `_<quantity>` appended. */
const LONGEST_SUFFIX = Math.max(
  ...(['temperature', 'humidity', 'pressure', 'illuminance'] satisfies SensorQuantity[]).map((q) => q.length + 1),
);
const BACKENDS: readonly I2cBackend[] = ['auto', 'linux', 'simulated'];
const OVERSAMPLING: readonly Oversampling[] = [1, 2, 4, 8, 16];
const OVERSAMPLING_CHANNELS = ['temperature', 'pressure', 'humidity'] as const;
type OversamplingChannel = (typeof OVERSAMPLING_CHANNELS)[number];

function invalid(key: string, problem: string): HomeAgentError {
  return new HomeAgentError('HA_ERR_CONFIG_INVALID', `${key}: ${problem}`, { details: { key } });
}

function show(value: unknown): string {
  return JSON.stringify(value) ?? String(value);
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function integer(key: string, value: unknown, min: number, max: number): number {
  if (typeof value !== 'number' || !Number.isInteger(value) || value < min || value > max) {
    throw invalid(key, `expected a whole number from ${min} to ${max}, found ${show(value)}`);
  }
  return value;
}

function list(key: string, value: unknown): unknown[] {
  if (value === undefined || value === null) return [];
  if (!Array.isArray(value)) throw invalid(key, `expected a list, found ${show(value)}`);
  return value;
}

/**
 * Reads both settings. Fields the schema gives a default are filled with that same default when
 * absent, so a sensor set through `config set` with only {id, driver} works as one from the file.
 */
export function parseI2cConfig(buses: unknown, sensors: unknown): I2cConfig {
  const listed = new Map<number, I2cBusConfig>();
  list(BUSES_KEY, buses).forEach((raw, index) => {
    const bus = parseBus(`${BUSES_KEY}[${index}]`, raw);
    if (listed.has(bus.bus)) throw invalid(`${BUSES_KEY}[${index}].bus`, `bus ${bus.bus} is listed twice`);
    listed.set(bus.bus, bus);
  });

  const parsed: I2cSensorConfig[] = [];
  const ids = new Map<string, number>();
  const addresses = new Map<string, string>();
  list(SENSORS_KEY, sensors).forEach((raw, index) => {
    const key = `${SENSORS_KEY}[${index}]`;
    const sensor = parseSensor(key, raw);
    const earlier = ids.get(sensor.id);
    if (earlier !== undefined) throw invalid(`${key}.id`, `the id ${sensor.id} is already used by ${SENSORS_KEY}[${earlier}]`);
    ids.set(sensor.id, index);
    const slot = `${sensor.bus}/${sensor.address}`;
    const holder = addresses.get(slot);
    if (holder !== undefined) {
      throw invalid(
        `${key}.address`,
        `${sensor.id} and ${holder} are both at ${formatAddress(sensor.address)} on bus ${sensor.bus}; one chip answers per address (change the address pin of one of them)`,
      );
    }
    addresses.set(slot, sensor.id);
    parsed.push(sensor);
  });

  for (const sensor of parsed) {
    if (!listed.has(sensor.bus)) listed.set(sensor.bus, { bus: sensor.bus, backend: 'auto', force_access: false });
  }
  return { buses: [...listed.values()].sort((a, b) => a.bus - b.bus), sensors: parsed };
}

function parseBus(key: string, raw: unknown): I2cBusConfig {
  if (!isRecord(raw)) throw invalid(key, `expected {bus, backend, force_access}, found ${show(raw)}`);
  const force = raw.force_access ?? false;
  if (typeof force !== 'boolean') throw invalid(`${key}.force_access`, `expected true or false, found ${show(force)}`);
  return {
    bus: integer(`${key}.bus`, raw.bus, 0, 255),
    backend: oneOf(`${key}.backend`, raw.backend ?? 'auto', BACKENDS),
    force_access: force,
  };
}

function parseSensor(key: string, raw: unknown): I2cSensorConfig {
  if (!isRecord(raw)) throw invalid(key, `expected {id, driver, bus, address, ...}, found ${show(raw)}`);
  const id = raw.id;
  if (typeof id !== 'string' || !SLUG.test(id)) {
    throw invalid(`${key}.id`, `expected lowercase letters, digits and _ (1-64), found ${show(id)}`);
  }
  if (id.length + LONGEST_SUFFIX > 64) {
    throw invalid(
      `${key}.id`,
      `${id} is too long: entity ids append the quantity (_illuminance) and must stay within 64 characters; use at most ${64 - LONGEST_SUFFIX}`,
    );
  }
  const model = oneOf(`${key}.driver`, raw.driver, SENSOR_MODELS);
  const name = raw.name ?? '';
  if (typeof name !== 'string') throw invalid(`${key}.name`, `expected text, found ${show(name)}`);
  const area = raw.area ?? '';
  if (typeof area !== 'string') throw invalid(`${key}.area`, `expected text, found ${show(area)}`);
  const given = integer(`${key}.address`, raw.address ?? 0, 0, 127);
  const address = given === 0 ? CHIPS[model].defaultAddress : given;
  if (address < MIN_ADDRESS || address > MAX_ADDRESS) {
    throw invalid(
      `${key}.address`,
      `${formatAddress(address)} is a reserved I2C address; use ${formatAddress(MIN_ADDRESS)}..${formatAddress(MAX_ADDRESS)} (0: the ${model} default ${formatAddress(CHIPS[model].defaultAddress)})`,
    );
  }
  const interval_ms = integer(`${key}.interval_s`, raw.interval_s ?? 30, 1, 86400) * 1000;
  const options = parseOptions(`${key}.options`, model, raw.options ?? {});
  return {
    id,
    name: name.trim() === '' ? defaultName(id) : name.trim(),
    area: area.trim() === '' ? null : area.trim(),
    driver: model,
    bus: integer(`${key}.bus`, raw.bus ?? 1, 0, 255),
    address,
    interval_ms,
    unavailable_after: integer(`${key}.unavailable_after`, raw.unavailable_after ?? 3, 1, 100),
    // A retry cap below the interval would poll a dead sensor faster than a live one.
    backoff_max_ms: Math.max(interval_ms, integer(`${key}.backoff_max_s`, raw.backoff_max_s ?? 600, 1, 86400) * 1000),
    spec: { driver: model, address, ...(Object.keys(options).length > 0 && { options }) },
  };
}

/** `living_room_climate` → `Living room climate`. */
export function defaultName(id: string): string {
  const spaced = id.replace(/_+/g, ' ').trim();
  return spaced.charAt(0).toUpperCase() + spaced.slice(1);
}

function parseOptions(key: string, model: SensorModel, raw: unknown): SensorOptions {
  if (!isRecord(raw)) throw invalid(key, `expected a mapping, found ${show(raw)}`);
  const allowed: readonly string[] = CHIPS[model].optionKeys;
  for (const name of Object.keys(raw)) {
    if (!allowed.includes(name)) {
      throw invalid(
        `${key}.${name}`,
        `${model} has no option ${name}; ${allowed.length > 0 ? `its options: ${allowed.join(', ')}` : 'it takes none'}`,
      );
    }
  }
  const options: SensorOptions = {};
  if (raw.oversampling !== undefined) options.oversampling = parseOversampling(`${key}.oversampling`, raw.oversampling);
  if (raw.repeatability !== undefined) {
    options.repeatability = oneOf(`${key}.repeatability`, raw.repeatability, Object.keys(SHT3X_SINGLE_SHOT) as Sht3xRepeatability[]);
  }
  if (raw.mode !== undefined) options.mode = oneOf(`${key}.mode`, raw.mode, Object.keys(BH1750_MODE_OPCODE) as Bh1750Mode[]);
  if (raw.mtreg !== undefined) options.mtreg = integer(`${key}.mtreg`, raw.mtreg, MTREG_MIN, MTREG_MAX);
  return options;
}

function parseOversampling(key: string, raw: unknown): Partial<Record<OversamplingChannel, Oversampling>> {
  if (!isRecord(raw)) throw invalid(key, `expected {temperature, pressure, humidity}, found ${show(raw)}`);
  const out: Partial<Record<OversamplingChannel, Oversampling>> = {};
  for (const [channel, value] of Object.entries(raw)) {
    const name = oneOf(`${key}.${channel}`, channel, OVERSAMPLING_CHANNELS);
    out[name] = oneOf(`${key}.${channel}`, value, OVERSAMPLING);
  }
  return out;
}

function oneOf<T extends string | number>(key: string, value: unknown, allowed: readonly T[]): T {
  if (!allowed.includes(value as T)) throw invalid(key, `expected one of ${allowed.join(', ')}, found ${show(value)}`);
  return value as T;
}
