/**
 * Builds drivers, emulators and buses from configuration-shaped specs, so the entity registry
 * needs one call per configured sensor and never imports a chip module by name.
 */
import type { I2cBackend } from '../../src/sdk/api.js';
import { HomeAgentError, isHomeAgentError } from '../../src/sdk/index.js';
import { AHT20_ADDRESS, Aht20 } from './aht20.js';
import { Aht20Emulator } from './aht20-emulator.js';
import { BH1750_DEFAULT_ADDRESS, Bh1750, type Bh1750Mode } from './bh1750.js';
import { Bh1750Emulator } from './bh1750-emulator.js';
import { BME280_DEFAULT_ADDRESS, Bme280, type Oversampling } from './bme280.js';
import { Bme280Emulator } from './bme280-emulator.js';
import type { DeviceClock } from './device-clock.js';
import type { I2cBus } from './i2c-bus.js';
import { type I2cBusModuleLike, LinuxI2cBus } from './linux-bus.js';
import type { SensorDriver, SensorModel } from './sensor.js';
import { SENSOR_MODELS } from './settings-schema.js';
import { SHT3X_DEFAULT_ADDRESS, Sht3x, type Sht3xRepeatability } from './sht3x.js';
import { Sht3xEmulator } from './sht3x-emulator.js';
import { type I2cDeviceEmulator, SimulatedI2cBus } from './simulated-bus.js';

export { SENSOR_MODELS };

export interface SensorSpec {
  driver: SensorModel;
  address?: number;
  /** Chip options: bme280 `oversampling`, sht3x `repeatability`, bh1750 `mode` and `mtreg`. */
  options?: {
    oversampling?: { temperature?: Oversampling; pressure?: Oversampling; humidity?: Oversampling };
    repeatability?: Sht3xRepeatability;
    mode?: Bh1750Mode;
    mtreg?: number;
  };
}

export type SensorOptions = NonNullable<SensorSpec['options']>;

/** What the factory knows of one chip: where it answers, what it takes, its driver and its emulator. */
export interface ChipDefinition {
  /** Where the chip answers with its address pin in the default position. */
  defaultAddress: number;
  /** The keys of plugin.i2c.sensors[].options it takes. */
  optionKeys: readonly (keyof SensorOptions)[];
  driver(bus: I2cBus, clock: DeviceClock, address: number, options: SensorOptions): SensorDriver;
  /** A simulated chip, reading room-like values until a test or the web page changes them. */
  emulator(clock: Pick<DeviceClock, 'monotonic'>): I2cDeviceEmulator;
}

/**
 * One entry per name in SENSOR_MODELS (the type makes a missing one a compile error): adding a
 * chip is its modules, its name there and its entry here.
 */
export const CHIPS: Readonly<Record<SensorModel, ChipDefinition>> = {
  bme280: {
    defaultAddress: BME280_DEFAULT_ADDRESS,
    optionKeys: ['oversampling'],
    driver: (bus, clock, address, options) =>
      new Bme280({ bus, clock, address, ...(options.oversampling && { oversampling: options.oversampling }) }),
    emulator: (clock) => new Bme280Emulator({ clock }),
  },
  aht20: {
    defaultAddress: AHT20_ADDRESS,
    optionKeys: [],
    driver: (bus, clock, address) => new Aht20({ bus, clock, address }),
    emulator: (clock) => new Aht20Emulator({ clock }),
  },
  sht3x: {
    defaultAddress: SHT3X_DEFAULT_ADDRESS,
    optionKeys: ['repeatability'],
    driver: (bus, clock, address, options) =>
      new Sht3x({ bus, clock, address, ...(options.repeatability && { repeatability: options.repeatability }) }),
    emulator: (clock) => new Sht3xEmulator({ clock }),
  },
  bh1750: {
    defaultAddress: BH1750_DEFAULT_ADDRESS,
    optionKeys: ['mode', 'mtreg'],
    driver: (bus, clock, address, options) =>
      new Bh1750({
        bus,
        clock,
        address,
        ...(options.mode && { mode: options.mode }),
        ...(options.mtreg !== undefined && { mtreg: options.mtreg }),
      }),
    emulator: (clock) => new Bh1750Emulator({ clock }),
  },
};

function chip(model: SensorModel): ChipDefinition {
  const found = Object.hasOwn(CHIPS, model) ? CHIPS[model] : undefined;
  if (!found)
    throw new HomeAgentError('HA_ERR_CONFIG_INVALID', `unknown I2C sensor driver "${String(model)}" (known: ${SENSOR_MODELS.join(', ')})`);
  return found;
}

export function createSensorDriver(spec: SensorSpec, bus: I2cBus, clock: DeviceClock): SensorDriver {
  const definition = chip(spec.driver);
  return definition.driver(bus, clock, spec.address ?? definition.defaultAddress, spec.options ?? {});
}

/** A simulated chip of the model, reading room-like values until a test or the web page changes them. */
export function createSensorEmulator(model: SensorModel, clock: Pick<DeviceClock, 'monotonic'>): I2cDeviceEmulator {
  return chip(model).emulator(clock);
}

export type { I2cBackend };

export interface OpenI2cBusOptions {
  bus: number;
  backend: I2cBackend;
  clock: DeviceClock;
  /** Chips to put on a simulated bus. */
  sensors?: readonly SensorSpec[];
  forceAccess?: boolean;
  loadModule?: () => Promise<I2cBusModuleLike>;
  devicePath?: string;
}

export interface OpenedI2cBus {
  bus: I2cBus;
  simulated: boolean;
  /** Why `auto` fell back to the simulation: the status line to show. */
  fallback_reason?: string;
}

/**
 * `linux` fails loudly when the bus is missing; `auto` falls back to a simulated bus populated
 * with the configured chips and says why, so a development machine runs without hardware.
 */
export async function openI2cBus(options: OpenI2cBusOptions): Promise<OpenedI2cBus> {
  if (options.backend !== 'simulated') {
    try {
      const bus = await LinuxI2cBus.open({
        bus: options.bus,
        ...(options.forceAccess !== undefined && { forceAccess: options.forceAccess }),
        ...(options.loadModule && { loadModule: options.loadModule }),
        ...(options.devicePath !== undefined && { devicePath: options.devicePath }),
      });
      return { bus, simulated: false };
    } catch (error) {
      if (options.backend === 'linux' || !isHomeAgentError(error, 'HA_ERR_I2C_UNAVAILABLE')) throw error;
      return { bus: simulatedBus(options), simulated: true, fallback_reason: error.message };
    }
  }
  return { bus: simulatedBus(options), simulated: true };
}

function simulatedBus(options: OpenI2cBusOptions): SimulatedI2cBus {
  const bus = new SimulatedI2cBus({ bus: options.bus, clock: options.clock });
  for (const spec of options.sensors ?? []) {
    bus.attach(spec.address ?? CHIPS[spec.driver].defaultAddress, createSensorEmulator(spec.driver, options.clock));
  }
  return bus;
}
