/**
 * A simulated AHT20: the calibration bit and the init command that sets it, the trigger command,
 * the busy bit during the 80 ms conversion (the datasheet's figure; a real part is often a little
 * faster), and the 7-byte frame with its CRC-8.
 */
import { AHT20_CMD, AHT20_MEASUREMENT_MS, AHT20_STATUS_BUSY, AHT20_STATUS_CALIBRATED } from './aht20.js';
import { crc8 } from './crc8.js';
import type { DeviceClock } from './device-clock.js';
import { EmulatorNack, type I2cDeviceEmulator } from './simulated-bus.js';

export interface Aht20Physical {
  /** °C, −40..85. */
  temperature: number;
  /** %RH, 0..100. */
  humidity: number;
}

export interface Aht20EmulatorOptions {
  clock: Pick<DeviceClock, 'monotonic'>;
  /** A fresh part may come up uncalibrated and need the init command (default true). */
  calibrated?: boolean;
  /** Fault: the init command does not set the calibration bit (a broken or different part). */
  ignoresInit?: boolean;
  physical?: Partial<Aht20Physical>;
  /** Conversion time (default the datasheet's 80 ms). */
  measurementMs?: number;
}

/** Bit 4 reads as 1 on every AHT20 seen; bit 3 is the calibration bit. */
const STATUS_BASE = 0x10;
/** Datasheet: a soft reset takes at most 20 ms, during which the part does not answer. */
const RESET_MS = 20;

/** S_RH = RH / 100 · 2^20, S_T = (T + 50) / 200 · 2^20, rounded and kept in 20 bits. */
export function aht20RawFor(physical: Aht20Physical): { humidity_raw: number; temperature_raw: number } {
  const to20 = (x: number): number => Math.min(0xfffff, Math.max(0, Math.round(x * 0x100000)));
  return { humidity_raw: to20(physical.humidity / 100), temperature_raw: to20((physical.temperature + 50) / 200) };
}

export class Aht20Emulator implements I2cDeviceEmulator {
  physical: Aht20Physical;
  readonly #clock: Pick<DeviceClock, 'monotonic'>;
  readonly #measurementMs: number;
  readonly #ignoresInit: boolean;
  #calibrated: boolean;
  #busyUntil: number | undefined;
  #resetUntil = -Infinity;
  #data = new Uint8Array(5);
  /** Fault: the part stays busy forever. */
  stuckBusy = false;

  constructor(options: Aht20EmulatorOptions) {
    this.#clock = options.clock;
    this.#calibrated = options.calibrated ?? true;
    this.#ignoresInit = options.ignoresInit ?? false;
    this.#measurementMs = options.measurementMs ?? AHT20_MEASUREMENT_MS;
    this.physical = { temperature: 21, humidity: 45, ...options.physical };
  }

  write(data: Uint8Array): void {
    this.#checkReset();
    const command = [...data];
    if (same(command, AHT20_CMD.TRIGGER)) {
      this.#busyUntil = this.#clock.monotonic() + this.#measurementMs;
    } else if (same(command, AHT20_CMD.INIT)) {
      if (!this.#ignoresInit) this.#calibrated = true;
    } else if (same(command, AHT20_CMD.SOFT_RESET)) {
      this.#resetUntil = this.#clock.monotonic() + RESET_MS;
      this.#busyUntil = undefined;
    }
    // 0x71 (status) and unknown commands change nothing: every read starts with the status byte.
  }

  read(length: number): Uint8Array {
    this.#checkReset();
    this.#latch();
    const frame = new Uint8Array(7);
    frame[0] = this.#status();
    frame.set(this.#data, 1);
    frame[6] = crc8(frame, 0, 6);
    return frame.subarray(0, Math.min(length, 7));
  }

  #latch(): void {
    if (this.#busyUntil === undefined || this.stuckBusy || this.#clock.monotonic() < this.#busyUntil) return;
    this.#busyUntil = undefined;
    if (!this.#calibrated) {
      this.#data = new Uint8Array(5);
      return;
    }
    const { humidity_raw: h, temperature_raw: t } = aht20RawFor(this.physical);
    this.#data = Uint8Array.of(h >> 12, (h >> 4) & 0xff, ((h & 0x0f) << 4) | (t >> 16), (t >> 8) & 0xff, t & 0xff);
  }

  #status(): number {
    const busy = this.#busyUntil !== undefined && (this.stuckBusy || this.#clock.monotonic() < this.#busyUntil);
    return STATUS_BASE | (busy ? AHT20_STATUS_BUSY : 0) | (this.#calibrated ? AHT20_STATUS_CALIBRATED : 0);
  }

  #checkReset(): void {
    if (this.#clock.monotonic() < this.#resetUntil) throw new EmulatorNack('resetting');
  }
}

function same(a: readonly number[], b: readonly number[]): boolean {
  return a.length === b.length && a.every((value, i) => value === b[i]);
}
