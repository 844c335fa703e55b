/**
 * A simulated BH1750: power state, reset, MTreg, continuous and one-time high-resolution modes
 * with their typical measurement time scaled by MTreg, automatic power-down after a one-time
 * measurement, and the count saturating at 0xFFFF in bright light.
 */
import { BH1750_HIGH_RES_TYP_MS, BH1750_OPCODE, MTREG_DEFAULT } from './bh1750.js';
import type { DeviceClock } from './device-clock.js';
import type { I2cDeviceEmulator } from './simulated-bus.js';

export interface Bh1750EmulatorOptions {
  clock: Pick<DeviceClock, 'monotonic'>;
  /** lx */
  illuminance?: number;
}

type Measuring = { continuous: boolean; mode2: boolean; startedAt: number };

/** The count a high-resolution measurement of `lux` gives: lux · 1.2 · MTreg / 69 (· 2 in mode 2). */
export function bh1750CountFor(lux: number, mtreg = MTREG_DEFAULT, mode2 = false): number {
  return Math.min(0xffff, Math.max(0, Math.round(lux * 1.2 * (mtreg / MTREG_DEFAULT) * (mode2 ? 2 : 1))));
}

export class Bh1750Emulator implements I2cDeviceEmulator {
  /** lx */
  illuminance: number;
  readonly #clock: Pick<DeviceClock, 'monotonic'>;
  #powered = false;
  #mtreg = MTREG_DEFAULT;
  #data = 0;
  #measuring: Measuring | undefined;

  constructor(options: Bh1750EmulatorOptions) {
    this.#clock = options.clock;
    this.illuminance = options.illuminance ?? 250;
  }

  get powered(): boolean {
    this.#latch();
    return this.#powered;
  }

  get mtreg(): number {
    return this.#mtreg;
  }

  write(data: Uint8Array): void {
    this.#latch();
    for (const opcode of data) this.#opcode(opcode);
  }

  read(length: number): Uint8Array {
    this.#latch();
    return Uint8Array.of(this.#data >> 8, this.#data & 0xff).subarray(0, length);
  }

  #opcode(opcode: number): void {
    if (opcode === BH1750_OPCODE.POWER_DOWN) {
      this.#powered = false;
      this.#measuring = undefined;
    } else if (opcode === BH1750_OPCODE.POWER_ON) {
      this.#powered = true;
    } else if (opcode === BH1750_OPCODE.RESET) {
      if (this.#powered) this.#data = 0;
    } else if ((opcode & 0xf8) === BH1750_OPCODE.MTREG_HIGH) {
      this.#setMtreg(((opcode & 0x07) << 5) | (this.#mtreg & 0x1f));
    } else if ((opcode & 0xe0) === BH1750_OPCODE.MTREG_LOW) {
      this.#setMtreg((this.#mtreg & 0xe0) | (opcode & 0x1f));
    } else if (this.#powered) {
      const now = this.#clock.monotonic();
      if (opcode === BH1750_OPCODE.CONTINUOUS_HIGH || opcode === BH1750_OPCODE.CONTINUOUS_HIGH2) {
        this.#measuring = { continuous: true, mode2: opcode === BH1750_OPCODE.CONTINUOUS_HIGH2, startedAt: now };
      } else if (opcode === BH1750_OPCODE.ONE_TIME_HIGH || opcode === BH1750_OPCODE.ONE_TIME_HIGH2) {
        this.#measuring = { continuous: false, mode2: opcode === BH1750_OPCODE.ONE_TIME_HIGH2, startedAt: now };
      }
    }
    // Measurement opcodes while powered down are not accepted (datasheet state diagram).
  }

  #setMtreg(value: number): void {
    // Stored as written: the halves arrive one after the other, so the value in between may be
    // outside 31..254, which the datasheet leaves undefined.
    this.#mtreg = value;
  }

  #latch(): void {
    const measuring = this.#measuring;
    if (measuring === undefined) return;
    const period = (BH1750_HIGH_RES_TYP_MS * Math.max(1, this.#mtreg)) / MTREG_DEFAULT;
    const elapsed = this.#clock.monotonic() - measuring.startedAt;
    if (elapsed < period) return;
    this.#data = bh1750CountFor(this.illuminance, this.#mtreg, measuring.mode2);
    if (measuring.continuous) {
      measuring.startedAt += Math.floor(elapsed / period) * period;
    } else {
      this.#measuring = undefined;
      this.#powered = false;
    }
  }
}
