/**
 * Aosong AHT20 (temperature, humidity). A measurement is triggered with 0xAC 0x33 0x00, takes
 * 80 ms, and comes back as status byte, 20-bit humidity, 20-bit temperature and a CRC-8 over the
 * first six bytes.
 */
import { crc8 } from './crc8.js';
import type { DeviceClock } from './device-clock.js';
import { crcError, deviceError, type I2cBus, type I2cErrorContext } from './i2c-bus.js';
import { reading, type SensorDriver, type SensorQuantity, type SensorReading } from './sensor.js';

export const AHT20_ADDRESS = 0x38;
export const AHT20_CMD = {
  STATUS: [0x71],
  INIT: [0xbe, 0x08, 0x00],
  TRIGGER: [0xac, 0x33, 0x00],
  SOFT_RESET: [0xba],
} as const;
export const AHT20_STATUS_BUSY = 0x80;
export const AHT20_STATUS_CALIBRATED = 0x08;
/** Datasheet 5.4: wait 80 ms for the measurement to complete. */
export const AHT20_MEASUREMENT_MS = 80;
/** Datasheet 5.4: wait 10 ms after the initialisation command. */
const INIT_MS = 10;
/** Further 10 ms waits allowed for a busy part before giving up. */
const BUSY_RETRIES = 5;
const BUSY_RETRY_MS = 10;
const FRAME_LENGTH = 7;

export interface Aht20Options {
  bus: I2cBus;
  clock: DeviceClock;
  address?: number;
}

export interface Aht20Frame {
  status: number;
  humidity_raw: number;
  temperature_raw: number;
}

/** Datasheet 6.1: RH = S_RH / 2^20 · 100 %. */
export function aht20Humidity(raw: number): number {
  return (raw / 0x100000) * 100;
}

/** Datasheet 6.2: T = S_T / 2^20 · 200 − 50 °C. */
export function aht20Temperature(raw: number): number {
  return (raw / 0x100000) * 200 - 50;
}

/** Unpacks the 20-bit fields: humidity in bytes 1..3 (high nibble), temperature in byte 3 (low nibble)..5. */
export function parseAht20Frame(frame: Uint8Array): Aht20Frame {
  const b = (i: number): number => frame[i] ?? 0;
  return {
    status: b(0),
    humidity_raw: (b(1) << 12) | (b(2) << 4) | (b(3) >> 4),
    temperature_raw: ((b(3) & 0x0f) << 16) | (b(4) << 8) | b(5),
  };
}

export class Aht20 implements SensorDriver {
  readonly model = 'aht20';
  readonly address: number;
  readonly quantities: readonly SensorQuantity[] = ['temperature', 'humidity'];
  readonly #bus: I2cBus;
  readonly #clock: DeviceClock;

  constructor(options: Aht20Options) {
    this.#bus = options.bus;
    this.#clock = options.clock;
    this.address = options.address ?? AHT20_ADDRESS;
  }

  async init(): Promise<void> {
    let status = await this.#status();
    if ((status & AHT20_STATUS_CALIBRATED) !== 0) return;
    // An uncalibrated part loads its calibration with the init command.
    await this.#bus.i2cWrite(this.address, Uint8Array.from(AHT20_CMD.INIT));
    await this.#clock.sleep(INIT_MS);
    status = await this.#status();
    if ((status & AHT20_STATUS_CALIBRATED) === 0) {
      throw deviceError(
        this.#context('init'),
        `the calibration bit stays clear after the init command (status 0x${hex(status)}): not a working AHT20`,
        {
          status,
        },
      );
    }
  }

  async read(): Promise<SensorReading[]> {
    await this.#bus.i2cWrite(this.address, Uint8Array.from(AHT20_CMD.TRIGGER));
    await this.#clock.sleep(AHT20_MEASUREMENT_MS);
    for (let attempt = 0; ; attempt++) {
      const frame = await this.#bus.i2cRead(this.address, FRAME_LENGTH);
      const status = frame[0] ?? 0;
      if ((status & AHT20_STATUS_BUSY) !== 0) {
        if (attempt >= BUSY_RETRIES) throw deviceError(this.#context('read'), 'still busy after the measurement time', { status });
        await this.#clock.sleep(BUSY_RETRY_MS);
        continue;
      }
      const expected = crc8(frame, 0, 6);
      const received = frame[6] ?? 0;
      if (expected !== received) throw crcError(this.#context('read'), 'the measurement frame', expected, received);
      if ((status & AHT20_STATUS_CALIBRATED) === 0) {
        throw deviceError(this.#context('read'), 'the calibration bit is clear: the sample is not calibrated', { status });
      }
      const parsed = parseAht20Frame(frame);
      return [reading('temperature', aht20Temperature(parsed.temperature_raw)), reading('humidity', aht20Humidity(parsed.humidity_raw))];
    }
  }

  async #status(): Promise<number> {
    await this.#bus.i2cWrite(this.address, Uint8Array.from(AHT20_CMD.STATUS));
    const bytes = await this.#bus.i2cRead(this.address, 1);
    return bytes[0] ?? 0;
  }

  #context(op: string): I2cErrorContext {
    return { bus: this.#bus.name, address: this.address, op };
  }
}

function hex(value: number): string {
  return value.toString(16).padStart(2, '0');
}
