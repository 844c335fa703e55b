/**
 * ROHM BH1750FVI (illuminance). Opcodes only, no registers: power on, reset, measurement mode and
 * the measurement-time register MTreg, which trades range for sensitivity. A result is two bytes;
 * in the high-resolution mode lux = count / 1.2 · 69 / MTreg (mode 2 halves it once more).
 */

import { HomeAgentError } from '../../src/sdk/index.js';
import type { DeviceClock } from './device-clock.js';
import type { I2cBus } from './i2c-bus.js';
import { assertAddress } from './i2c-bus.js';
import { reading, type SensorDriver, type SensorQuantity, type SensorReading } from './sensor.js';

export const BH1750_DEFAULT_ADDRESS = 0x23;
export const BH1750_OPCODE = {
  POWER_DOWN: 0x00,
  POWER_ON: 0x01,
  RESET: 0x07,
  CONTINUOUS_HIGH: 0x10,
  CONTINUOUS_HIGH2: 0x11,
  ONE_TIME_HIGH: 0x20,
  ONE_TIME_HIGH2: 0x21,
  /** 01000_MT[7:5] */
  MTREG_HIGH: 0x40,
  /** 011_MT[4:0] */
  MTREG_LOW: 0x60,
} as const;

export const MTREG_DEFAULT = 69;
export const MTREG_MIN = 31;
export const MTREG_MAX = 254;
/** Datasheet: high-resolution measurement time, typical 120 ms, maximum 180 ms, at MTreg 69. */
export const BH1750_HIGH_RES_TYP_MS = 120;
export const BH1750_HIGH_RES_MAX_MS = 180;

export type Bh1750Mode = 'continuous_high' | 'continuous_high2' | 'one_time_high' | 'one_time_high2';

export const BH1750_MODE_OPCODE: Readonly<Record<Bh1750Mode, number>> = {
  continuous_high: BH1750_OPCODE.CONTINUOUS_HIGH,
  continuous_high2: BH1750_OPCODE.CONTINUOUS_HIGH2,
  one_time_high: BH1750_OPCODE.ONE_TIME_HIGH,
  one_time_high2: BH1750_OPCODE.ONE_TIME_HIGH2,
};

export interface Bh1750Options {
  bus: I2cBus;
  clock: DeviceClock;
  address?: number;
  /** Default one_time_high: the chip powers down between polls. */
  mode?: Bh1750Mode;
  /** 31..254, default 69. Larger is more sensitive (dim rooms, behind a window) and slower. */
  mtreg?: number;
}

/** Datasheet: lux = count / 1.2 · (69 / MTreg), halved again in high-resolution mode 2. */
export function bh1750Lux(count: number, mtreg = MTREG_DEFAULT, mode2 = false): number {
  return ((count / 1.2) * (MTREG_DEFAULT / mtreg)) / (mode2 ? 2 : 1);
}

/** The longest a high-resolution measurement can take at this MTreg. */
export function bh1750MaxMeasurementMs(mtreg: number): number {
  return Math.ceil((BH1750_HIGH_RES_MAX_MS * mtreg) / MTREG_DEFAULT);
}

export class Bh1750 implements SensorDriver {
  readonly model = 'bh1750';
  readonly address: number;
  readonly quantities: readonly SensorQuantity[] = ['illuminance'];
  readonly #bus: I2cBus;
  readonly #clock: DeviceClock;
  readonly #mode: Bh1750Mode;
  readonly #mtreg: number;
  /** In continuous mode, when the first result after init is certainly there. */
  #firstResultAt: number | undefined;

  constructor(options: Bh1750Options) {
    this.#bus = options.bus;
    this.#clock = options.clock;
    this.address = options.address ?? BH1750_DEFAULT_ADDRESS;
    this.#mode = options.mode ?? 'one_time_high';
    this.#mtreg = options.mtreg ?? MTREG_DEFAULT;
  }

  /** The BH1750 has no id or status to check: init proves it acknowledges each opcode. */
  async init(): Promise<void> {
    assertAddress(this.address);
    if (!Number.isInteger(this.#mtreg) || this.#mtreg < MTREG_MIN || this.#mtreg > MTREG_MAX) {
      throw new HomeAgentError('HA_ERR_CONFIG_INVALID', `BH1750 mtreg ${this.#mtreg} is outside ${MTREG_MIN}..${MTREG_MAX}`);
    }
    this.#firstResultAt = undefined;
    await this.#opcode(BH1750_OPCODE.POWER_ON);
    // Reset clears the data register; it only works while powered on.
    await this.#opcode(BH1750_OPCODE.RESET);
    await this.#opcode(BH1750_OPCODE.MTREG_HIGH | (this.#mtreg >> 5));
    await this.#opcode(BH1750_OPCODE.MTREG_LOW | (this.#mtreg & 0x1f));
    if (this.#continuous) {
      await this.#opcode(BH1750_MODE_OPCODE[this.#mode]);
      this.#firstResultAt = this.#clock.monotonic() + bh1750MaxMeasurementMs(this.#mtreg);
    }
  }

  async read(): Promise<SensorReading[]> {
    if (this.#continuous) {
      const wait = (this.#firstResultAt ?? 0) - this.#clock.monotonic();
      if (wait > 0) await this.#clock.sleep(wait);
    } else {
      // A one-time measurement powers the chip down when it ends; it must be powered on again first.
      await this.#opcode(BH1750_OPCODE.POWER_ON);
      await this.#opcode(BH1750_MODE_OPCODE[this.#mode]);
      await this.#clock.sleep(bh1750MaxMeasurementMs(this.#mtreg));
    }
    const bytes = await this.#bus.i2cRead(this.address, 2);
    const count = ((bytes[0] ?? 0) << 8) | (bytes[1] ?? 0);
    return [reading('illuminance', bh1750Lux(count, this.#mtreg, this.#mode.endsWith('high2')))];
  }

  get #continuous(): boolean {
    return this.#mode.startsWith('continuous');
  }

  #opcode(opcode: number): Promise<void> {
    return this.#bus.i2cWrite(this.address, Uint8Array.of(opcode));
  }
}
