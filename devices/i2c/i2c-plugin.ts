/**
 * The I2C sensor device plugin: reads plugin.i2c.buses and plugin.i2c.sensors, opens each bus
 * once, and polls every sensor into `sensor` entities (`sensor.<id>_<quantity>`). A sensor that
 * does not answer is not a start failure: it is unavailable and retried with backoff, so a loose
 * wire never keeps the daemon from starting. A configuration mistake is: it stops the plugin with
 * an error naming the key.
 *
 * Control methods: `i2c.sensors` (each sensor's state, values, failures and next retry),
 * `i2c.scan` (which addresses answer on a bus) and `i2c.simulate` (moves the values of a simulated
 * chip, or takes it offline, so a user or a system test can change a reading without hardware).
 */
import { Type } from '@sinclair/typebox';
import type { I2cScanResult, I2cSensorStatus, I2cSensorsResult } from '../../src/sdk/api.js';
import {
  type Caller,
  definePlugin,
  HomeAgentError,
  isHomeAgentError,
  type PluginContext,
  type PluginFactory,
  type PluginHealth,
  type PluginInstance,
} from '../../src/sdk/index.js';
import { scanBus } from './bus-scan.js';
import { describeErrorOf } from './describe-error.js';
import { type DeviceClock, systemDeviceClock } from './device-clock.js';
import { formatAddress, type I2cBus, unavailableError } from './i2c-bus.js';
import { type I2cBusConfig, type I2cConfig, parseI2cConfig } from './i2c-config.js';
import { RunningSensor } from './running-sensor.js';
import { SENSOR_UNITS } from './sensor.js';
import {
  CHIPS,
  createSensorDriver,
  createSensorEmulator,
  type I2cBackend,
  type OpenedI2cBus,
  openI2cBus,
  type SensorSpec,
} from './sensor-factory.js';
import { applySimulatedValues, type SimulatedValues } from './sensor-simulation.js';
import type { I2cSettings } from './settings-schema.js';
import { type I2cDeviceEmulator, SimulatedI2cBus } from './simulated-bus.js';

/** An opened bus and, when it is simulated, the chips on it by address (what `i2c.simulate` moves). */
export interface OpenedSensorBus extends OpenedI2cBus {
  emulators?: ReadonlyMap<number, I2cDeviceEmulator>;
}

/** Opens one bus for the sensors configured on it. Tests inject one that returns a SimulatedI2cBus they control. */
export type OpenSensorBus = (
  bus: number,
  backend: I2cBackend,
  sensors: readonly SensorSpec[],
  options: { force_access: boolean },
) => Promise<OpenedSensorBus>;

export interface I2cPluginOptions {
  clock?: DeviceClock;
  openBus?: OpenSensorBus;
}

/** The default opener: a real bus when there is one; a simulated one (with the configured chips) when asked or as auto's fallback. */
export function openSensorBus(clock: DeviceClock): OpenSensorBus {
  return async (bus, backend, sensors, options) => {
    // Chips are attached here rather than by openI2cBus, to keep a handle on each for i2c.simulate.
    const opened = await openI2cBus({ bus, backend, clock, forceAccess: options.force_access });
    if (!(opened.bus instanceof SimulatedI2cBus)) return opened;
    const emulators = new Map<number, I2cDeviceEmulator>();
    for (const spec of sensors) {
      const address = spec.address ?? CHIPS[spec.driver].defaultAddress;
      const emulator = createSensorEmulator(spec.driver, clock);
      opened.bus.attach(address, emulator);
      emulators.set(address, emulator);
    }
    return { ...opened, emulators };
  };
}

interface BusState {
  config: I2cBusConfig;
  opened?: OpenedSensorBus;
  error?: string;
}

const SimulateParams = Type.Object(
  {
    sensor: Type.String({ minLength: 1, maxLength: 64, description: 'The sensor id (plugin.i2c.sensors[].id).' }),
    values: Type.Optional(
      Type.Object(
        {
          temperature: Type.Optional(Type.Number({ minimum: -40, maximum: 125, description: '°C' })),
          humidity: Type.Optional(Type.Number({ minimum: 0, maximum: 100, description: '%' })),
          pressure: Type.Optional(Type.Number({ minimum: 300, maximum: 1100, description: 'hPa' })),
          illuminance: Type.Optional(Type.Number({ minimum: 0, maximum: 100000, description: 'lx' })),
        },
        { additionalProperties: false },
      ),
    ),
    offline: Type.Optional(Type.Boolean({ description: 'true: the chip stops answering (NACK); false: it answers again.' })),
  },
  { additionalProperties: false },
);

export class I2cPlugin implements PluginInstance {
  readonly #ctx: PluginContext<I2cSettings>;
  readonly #clock: DeviceClock;
  readonly #openBus: OpenSensorBus;
  readonly #buses = new Map<number, BusState>();
  readonly #sensors = new Map<string, RunningSensor>();
  readonly #unregister: Array<() => void> = [];

  constructor(ctx: PluginContext<I2cSettings>, options: I2cPluginOptions = {}) {
    this.#ctx = ctx;
    this.#clock = options.clock ?? systemDeviceClock;
    this.#openBus = options.openBus ?? openSensorBus(this.#clock);
  }

  async start(): Promise<void> {
    const config = parseI2cConfig(this.#ctx.settings.get('buses'), this.#ctx.settings.get('sensors'));
    try {
      await this.#openBuses(config);
      this.#createSensors(config);
      this.#registerMethods();
      for (const sensor of this.#sensors.values()) sensor.start();
    } catch (error) {
      await this.stop();
      throw error;
    }
    const simulated = [...this.#buses.values()].filter((state) => state.opened?.simulated).length;
    this.#ctx.log.info(
      { sensors: this.#sensors.size, buses: this.#buses.size, simulated },
      `I2C sensors polling: ${this.#sensors.size} on ${this.#buses.size} bus(es)${simulated > 0 ? `, ${simulated} simulated` : ''}`,
    );
  }

  async stop(): Promise<void> {
    for (const unregister of this.#unregister.splice(0)) unregister();
    await Promise.all([...this.#sensors.values()].map((sensor) => sensor.stop()));
    this.#sensors.clear();
    for (const state of this.#buses.values()) {
      try {
        await state.opened?.bus.close();
      } catch (error) {
        this.#ctx.log.warn({ bus: state.config.bus, err: error }, `closing I2C bus ${state.config.bus} failed`);
      }
    }
    this.#buses.clear();
  }

  /** Unavailable sensors are reported but keep the plugin healthy (they are retried); a bus that could not be opened does not. */
  health(): Required<PluginHealth> {
    // A bus's or sensor's error and a fallback reason are the driver's own text.
    const parts: string[] = [];
    const partsZh: string[] = [];
    const failed = [...this.#buses.values()].filter((state) => state.error !== undefined);
    for (const state of failed) {
      parts.push(`bus ${state.config.bus} could not be opened: ${state.error}`);
      partsZh.push(`总线 ${state.config.bus} 无法打开：${state.error}`);
    }
    const sensors = [...this.#sensors.values()];
    const down = sensors.filter((sensor) => sensor.state === 'unavailable');
    const downList = down.map((sensor) => `${sensor.config.id} (${shortError(sensor.lastError)})`).join(', ');
    const downListZh = down.map((sensor) => `${sensor.config.id}（${shortError(sensor.lastError)}）`).join('、');
    if (sensors.length === 0) {
      parts.unshift('no sensors configured (plugin.i2c.sensors)');
      partsZh.unshift('没有配置传感器（plugin.i2c.sensors）');
    } else {
      parts.unshift(
        `${sensors.length} sensor${sensors.length === 1 ? '' : 's'}, ${down.length} unavailable${down.length > 0 ? `: ${downList}` : ''}`,
      );
      partsZh.unshift(`${sensors.length} 个传感器，${down.length} 个不可用${down.length > 0 ? `：${downListZh}` : ''}`);
    }
    for (const state of this.#buses.values()) {
      if (!state.opened?.simulated) continue;
      const why = state.opened.fallback_reason;
      parts.push(`bus ${state.config.bus} simulated${why === undefined ? '' : `: ${why}`}`);
      partsZh.push(`总线 ${state.config.bus} 为模拟${why === undefined ? '' : `：${why}`}`);
    }
    return { ok: failed.length === 0, detail: parts.join('; '), detail_zh: partsZh.join('；') };
  }

  sensors(): I2cSensorsResult {
    return {
      buses: [...this.#buses.values()].map((state) => ({
        bus: state.config.bus,
        backend: state.config.backend,
        name: state.opened?.bus.name ?? null,
        simulated: state.opened?.simulated ?? false,
        ...(state.opened?.fallback_reason !== undefined && { fallback_reason: state.opened.fallback_reason }),
        ...(state.error !== undefined && { error: state.error }),
      })),
      sensors: [...this.#sensors.values()].map((sensor) => sensor.status()),
    };
  }

  /** A bus the plugin has open is scanned in place; any other is opened as a real bus for the scan and closed again. */
  async scan(bus: number): Promise<I2cScanResult> {
    const state = this.#buses.get(bus);
    const open = state?.opened;
    const opened = open ?? (await this.#openBus(bus, 'linux', [], { force_access: state?.config.force_access ?? false }));
    try {
      const found = await scanBus(opened.bus);
      const configured = [...this.#sensors.values()]
        .filter((sensor) => sensor.config.bus === bus)
        .map((sensor) => {
          const address = formatAddress(sensor.config.address);
          return { sensor: sensor.config.id, address, answering: found.addresses.includes(address) };
        });
      return { bus, name: opened.bus.name, simulated: opened.simulated, ...found, configured };
    } finally {
      if (open === undefined) await opened.bus.close().catch(() => undefined);
    }
  }

  simulate(params: { sensor: string; values?: SimulatedValues; offline?: boolean }, caller: Caller): I2cSensorStatus {
    const sensor = this.#sensors.get(params.sensor);
    if (sensor === undefined) {
      const known = [...this.#sensors.keys()].sort();
      throw new HomeAgentError(
        'HA_ERR_RPC_INVALID_PARAMS',
        `no sensor has the id ${JSON.stringify(params.sensor)}; configured: ${known.length > 0 ? known.join(', ') : 'none'}`,
      );
    }
    const values = params.values ?? {};
    if (Object.keys(values).length === 0 && params.offline === undefined) {
      throw new HomeAgentError(
        'HA_ERR_RPC_INVALID_PARAMS',
        'i2c.simulate needs values ({temperature, humidity, pressure, illuminance}) or offline',
      );
    }
    const opened = this.#buses.get(sensor.config.bus)?.opened;
    const emulator = opened?.emulators?.get(sensor.config.address);
    if (!(opened?.bus instanceof SimulatedI2cBus) || emulator === undefined) {
      throw unavailableError(
        opened?.bus.name ?? `i2c-${sensor.config.bus}`,
        `sensor ${sensor.config.id} is not on a simulated bus; only simulated chips can be moved (plugin.i2c.buses backend simulated)`,
      );
    }
    if (Object.keys(values).length > 0) applySimulatedValues(sensor.config.id, emulator, values);
    if (params.offline !== undefined) opened.bus.setOffline(sensor.config.address, params.offline);
    this.#ctx.audit('i2c.simulate', {
      actor: caller.actor,
      sensor: sensor.config.id,
      ...(Object.keys(values).length > 0 && { values }),
      ...(params.offline !== undefined && { offline: params.offline }),
    });
    return sensor.status();
  }

  async #openBuses(config: I2cConfig): Promise<void> {
    for (const bus of config.buses) {
      const specs = config.sensors.filter((sensor) => sensor.bus === bus.bus).map((sensor) => sensor.spec);
      const state: BusState = { config: bus };
      this.#buses.set(bus.bus, state);
      try {
        state.opened = await this.#openBus(bus.bus, bus.backend, specs, { force_access: bus.force_access });
      } catch (error) {
        if (!isHomeAgentError(error) || error.code === 'HA_ERR_INTERNAL') throw error;
        state.error = describeErrorOf(error);
        this.#ctx.log.error(
          { bus: bus.bus, backend: bus.backend, error: state.error },
          `I2C bus ${bus.bus} could not be opened: ${state.error}`,
        );
        continue;
      }
      if (state.opened.fallback_reason !== undefined) {
        this.#ctx.log.warn(
          { bus: bus.bus, reason: state.opened.fallback_reason },
          `I2C bus ${bus.bus} is simulated (backend auto found no real bus): ${state.opened.fallback_reason}`,
        );
      }
    }
  }

  #createSensors(config: I2cConfig): void {
    for (const sensor of config.sensors) {
      const state = this.#buses.get(sensor.bus);
      const opened = state?.opened;
      const bus: I2cBus = opened?.bus ?? unopenedBus(sensor.bus, state?.error ?? 'not opened');
      this.#sensors.set(
        sensor.id,
        new RunningSensor({
          config: sensor,
          driver: createSensorDriver(sensor.spec, bus, this.#clock),
          bus: {
            name: opened?.bus.name ?? null,
            simulated: opened?.simulated ?? false,
            ...(state?.error !== undefined && { error: state.error }),
          },
          clock: this.#clock,
          entities: this.#ctx.entities,
          log: this.#ctx.log,
        }),
      );
    }
  }

  #registerMethods(): void {
    const control = this.#ctx.control;
    this.#unregister.push(
      control.register({
        name: 'i2c.sensors',
        description: 'The I2C sensors: driver, bus and address, state, failures in a row, next retry, last values with units, last error.',
        params: Type.Object({}, { additionalProperties: false }),
        handler: (): I2cSensorsResult => this.sensors(),
      }),
      control.register({
        name: 'i2c.scan',
        description: 'The addresses that answer on an I2C bus (a missing bus is an error, never an empty list).',
        params: Type.Object({ bus: Type.Integer({ minimum: 0, maximum: 255 }) }, { additionalProperties: false }),
        handler: (params): Promise<I2cScanResult> => this.scan(params.bus),
      }),
      control.register({
        name: 'i2c.simulate',
        description: `Sets the physical values of a simulated sensor (${Object.entries(SENSOR_UNITS)
          .map(([quantity, unit]) => `${quantity} ${unit}`)
          .join(', ')}) or takes it offline; the next poll reads them. Simulated buses only.`,
        params: SimulateParams,
        handler: (params, caller): I2cSensorStatus => this.simulate(params, caller),
      }),
    );
  }
}

/** `HA_ERR_I2C_NACK: I2C device ...` → `NACK`: the health line names the kind of failure, i2c.sensors the whole message. */
function shortError(message: string | undefined): string {
  if (message === undefined) return 'no answer';
  const code = /^HA_ERR_(?:I2C_)?([A-Z_]+):/.exec(message)?.[1];
  return code ?? message;
}

/** Stands in for a bus that could not be opened, so the sensor's driver (and its quantities) exist all the same; it is never polled. */
function unopenedBus(bus: number, why: string): I2cBus {
  const name = `i2c-${bus}`;
  const fail = async (): Promise<never> => {
    throw unavailableError(name, why);
  };
  return { name, i2cWrite: fail, i2cRead: fail, readI2cBlock: fail, readByte: fail, writeByte: fail, close: async () => undefined };
}

export function createI2cPlugin(options: I2cPluginOptions = {}): PluginFactory<I2cSettings> {
  return (ctx) => new I2cPlugin(ctx, options);
}

export default definePlugin<I2cSettings>(createI2cPlugin());
