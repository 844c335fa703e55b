/**
 * Sensirion SHT3x (SHT30/31/35; temperature, humidity) in single-shot mode without clock
 * stretching: the command starts a conversion, the chip NACKs reads until it is done, and every
 * 16-bit word it sends is followed by its own CRC-8.
 */
import { isHomeAgentError } from '../../src/sdk/index.js';
import { crc8 } from './crc8.js';
import type { DeviceClock } from './device-clock.js';
import { crcError, deviceError, type I2cBus, type I2cErrorContext } from './i2c-bus.js';
import { reading, type SensorDriver, type SensorQuantity, type SensorReading } from './sensor.js';

export const SHT3X_DEFAULT_ADDRESS = 0x44;

export type Sht3xRepeatability = 'high' | 'medium' | 'low';

/**
 * Single shot, clock stretching disabled (datasheet table 9). `typ_ms` is the typical measurement
 * duration of table 4; `max_ms` is its maximum with half a millisecond of margin for a slow clock.
 */
export const SHT3X_SINGLE_SHOT: Readonly<Record<Sht3xRepeatability, { command: number; max_ms: number; typ_ms: number }>> = {
  high: { command: 0x2400, max_ms: 15.5, typ_ms: 12.5 },
  medium: { command: 0x240b, max_ms: 6.5, typ_ms: 4.5 },
  low: { command: 0x2416, max_ms: 4.5, typ_ms: 2.5 },
};

export const SHT3X_CMD = {
  READ_STATUS: 0xf32d,
  CLEAR_STATUS: 0x3041,
  SOFT_RESET: 0x30a2,
} as const;

/** Status bit 4: a reset (power-on, soft reset, supply glitch) happened since the last clear. */
export const SHT3X_STATUS_RESET_DETECTED = 0x0010;
/** Datasheet table 4: soft reset time, at most 1.5 ms. */
const SOFT_RESET_MS = 2;
/** Extra reads, 2 ms apart, while a slow part still NACKs. */
const NOT_READY_RETRIES = 3;
const NOT_READY_RETRY_MS = 2;

export interface Sht3xOptions {
  bus: I2cBus;
  clock: DeviceClock;
  address?: number;
  repeatability?: Sht3xRepeatability;
}

/** Datasheet 4.13: T = −45 + 175 · S_T / (2^16 − 1) °C. */
export function sht3xTemperature(raw: number): number {
  return -45 + (175 * raw) / 65535;
}

/** Datasheet 4.13: RH = 100 · S_RH / (2^16 − 1) %. */
export function sht3xHumidity(raw: number): number {
  return (100 * raw) / 65535;
}

export class Sht3x implements SensorDriver {
  readonly model = 'sht3x';
  readonly address: number;
  readonly quantities: readonly SensorQuantity[] = ['temperature', 'humidity'];
  readonly #bus: I2cBus;
  readonly #clock: DeviceClock;
  readonly #mode: { command: number; max_ms: number };

  constructor(options: Sht3xOptions) {
    this.#bus = options.bus;
    this.#clock = options.clock;
    this.address = options.address ?? SHT3X_DEFAULT_ADDRESS;
    this.#mode = SHT3X_SINGLE_SHOT[options.repeatability ?? 'high'];
  }

  /**
   * The SHT3x has no chip id. A soft reset must set the "reset detected" status bit, and the status
   * word must carry a valid CRC: together they tell an SHT3x from another chip at 0x44/0x45.
   */
  async init(): Promise<void> {
    await this.#command(SHT3X_CMD.SOFT_RESET);
    await this.#clock.sleep(SOFT_RESET_MS);
    await this.#command(SHT3X_CMD.READ_STATUS);
    const bytes = await this.#bus.i2cRead(this.address, 3);
    const status = this.#word(bytes, 0, 'the status register');
    if ((status & SHT3X_STATUS_RESET_DETECTED) === 0) {
      throw deviceError(
        this.#context('init'),
        `a soft reset did not set the reset-detected status bit (status 0x${status.toString(16).padStart(4, '0')}): not an SHT3x`,
        {
          status,
        },
      );
    }
    await this.#command(SHT3X_CMD.CLEAR_STATUS);
  }

  async read(): Promise<SensorReading[]> {
    await this.#command(this.#mode.command);
    await this.#clock.sleep(Math.ceil(this.#mode.max_ms));
    const bytes = await this.#readWhenReady();
    const temperature = this.#word(bytes, 0, 'the temperature word');
    const humidity = this.#word(bytes, 3, 'the humidity word');
    return [reading('temperature', sht3xTemperature(temperature)), reading('humidity', sht3xHumidity(humidity))];
  }

  async #readWhenReady(): Promise<Uint8Array> {
    for (let attempt = 0; ; attempt++) {
      try {
        return await this.#bus.i2cRead(this.address, 6);
      } catch (error) {
        // Without clock stretching a part still converting NACKs its read header.
        if (!isHomeAgentError(error, 'HA_ERR_I2C_NACK') || attempt >= NOT_READY_RETRIES) throw error;
        await this.#clock.sleep(NOT_READY_RETRY_MS);
      }
    }
  }

  #word(bytes: Uint8Array, offset: number, what: string): number {
    const expected = crc8(bytes, offset, offset + 2);
    const received = bytes[offset + 2] ?? 0;
    if (expected !== received) throw crcError(this.#context('read'), what, expected, received);
    return ((bytes[offset] ?? 0) << 8) | (bytes[offset + 1] ?? 0);
  }

  #command(command: number): Promise<void> {
    return this.#bus.i2cWrite(this.address, Uint8Array.of(command >> 8, command & 0xff));
  }

  #context(op: string): I2cErrorContext {
    return { bus: this.#bus.name, address: this.address, op };
  }
}
