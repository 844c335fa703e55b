/**
 * A simulated SHT3x: single-shot commands with their typical durations, a NACK on any transfer
 * while converting and on a read with no data waiting, the status register (reset-detected bit,
 * command-failed bit) and a CRC-8 after every word.
 */
import { crc8 } from './crc8.js';
import type { DeviceClock } from './device-clock.js';
import { SHT3X_CMD, SHT3X_SINGLE_SHOT, SHT3X_STATUS_RESET_DETECTED } from './sht3x.js';
import { EmulatorNack, type I2cDeviceEmulator } from './simulated-bus.js';

export interface Sht3xPhysical {
  /** °C, −40..125. */
  temperature: number;
  /** %RH, 0..100. */
  humidity: number;
}

export interface Sht3xEmulatorOptions {
  clock: Pick<DeviceClock, 'monotonic'>;
  physical?: Partial<Sht3xPhysical>;
}

const STATUS_ALERT_PENDING = 0x8000;
const STATUS_COMMAND_FAILED = 0x0002;
const SOFT_RESET_MS = 1.5;

/** S_T = (T + 45) / 175 · 65535, S_RH = RH / 100 · 65535, rounded to 16 bits. */
export function sht3xRawFor(physical: Sht3xPhysical): { temperature_raw: number; humidity_raw: number } {
  const to16 = (x: number): number => Math.min(0xffff, Math.max(0, Math.round(x * 65535)));
  return { temperature_raw: to16((physical.temperature + 45) / 175), humidity_raw: to16(physical.humidity / 100) };
}

export function sht3xWord(word: number): number[] {
  const bytes = [word >> 8, word & 0xff];
  return [...bytes, crc8(bytes)];
}

export class Sht3xEmulator implements I2cDeviceEmulator {
  physical: Sht3xPhysical;
  readonly #clock: Pick<DeviceClock, 'monotonic'>;
  /** Power-on sets alert pending and reset detected (datasheet table 17 defaults). */
  #status = STATUS_ALERT_PENDING | SHT3X_STATUS_RESET_DETECTED;
  #busyUntil = -Infinity;
  /** What the next read returns; a read with nothing waiting is NACKed. */
  #output: number[] | undefined;
  #measuring = false;

  constructor(options: Sht3xEmulatorOptions) {
    this.#clock = options.clock;
    this.physical = { temperature: 21, humidity: 45, ...options.physical };
  }

  write(data: Uint8Array): void {
    this.#refuseWhileBusy();
    if (data.length !== 2) {
      this.#status |= STATUS_COMMAND_FAILED;
      return;
    }
    const command = ((data[0] ?? 0) << 8) | (data[1] ?? 0);
    this.#output = undefined;
    this.#measuring = false;
    const single = Object.values(SHT3X_SINGLE_SHOT).find((mode) => mode.command === command);
    if (single !== undefined) {
      this.#busyUntil = this.#clock.monotonic() + single.typ_ms;
      this.#measuring = true;
      this.#status &= ~STATUS_COMMAND_FAILED;
      return;
    }
    switch (command) {
      case SHT3X_CMD.READ_STATUS:
        this.#output = sht3xWord(this.#status);
        return;
      case SHT3X_CMD.CLEAR_STATUS:
        this.#status &= ~(STATUS_ALERT_PENDING | SHT3X_STATUS_RESET_DETECTED | 0x0800 | 0x0400);
        return;
      case SHT3X_CMD.SOFT_RESET:
        this.#status = STATUS_ALERT_PENDING | SHT3X_STATUS_RESET_DETECTED;
        this.#busyUntil = this.#clock.monotonic() + SOFT_RESET_MS;
        return;
      default:
        this.#status |= STATUS_COMMAND_FAILED;
    }
  }

  read(length: number): Uint8Array {
    this.#refuseWhileBusy();
    if (this.#measuring) {
      const raw = sht3xRawFor(this.physical);
      this.#output = [...sht3xWord(raw.temperature_raw), ...sht3xWord(raw.humidity_raw)];
      this.#measuring = false;
    }
    const output = this.#output;
    if (output === undefined) throw new EmulatorNack('no measurement waiting');
    // The data is read once; the next read needs a new command.
    this.#output = undefined;
    return Uint8Array.from(output.slice(0, length));
  }

  #refuseWhileBusy(): void {
    if (this.#clock.monotonic() < this.#busyUntil) throw new EmulatorNack('measurement in progress');
  }
}
