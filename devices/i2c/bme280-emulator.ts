/**
 * A simulated BME280: register map, soft reset with its NVM copy, forced and normal mode with the
 * datasheet's typical conversion times. Raw ADC counts come from the physical values set on it, by
 * inverting the datasheet's double-precision formulas (the driver uses the integer ones, so a
 * round trip compares two independent formulations).
 */

import {
  ADC_SKIPPED_16BIT,
  ADC_SKIPPED_20BIT,
  BME280_CHIP_ID,
  BME280_REG,
  BME280_SOFT_RESET,
  STATUS_IM_UPDATE,
  STATUS_MEASURING,
} from './bme280.js';
import {
  type Bme280Calibration,
  CALIB_A_START,
  CALIB_B_START,
  compensatePressureDouble,
  compensateTemperatureDouble,
  encodeCalibration,
  humidityDoubleUnclamped,
} from './bme280-compensation.js';
import type { DeviceClock } from './device-clock.js';
import { RegisterMapEmulator } from './simulated-bus.js';

/**
 * Temperature and pressure trims of the BMP280 datasheet's worked example (section 3.12; the BME280
 * uses the same formulas), humidity trims typical of real parts (the datasheet gives no example).
 */
export const EXAMPLE_CALIBRATION: Readonly<Bme280Calibration> = {
  dig_T1: 27504,
  dig_T2: 26435,
  dig_T3: -1000,
  dig_P1: 36477,
  dig_P2: -10685,
  dig_P3: 3024,
  dig_P4: 2855,
  dig_P5: 140,
  dig_P6: -7,
  dig_P7: 15500,
  dig_P8: -14600,
  dig_P9: 6000,
  dig_H1: 75,
  dig_H2: 362,
  dig_H3: 0,
  dig_H4: 313,
  dig_H5: 50,
  dig_H6: 30,
};

export interface Bme280Physical {
  /** °C, operating range −40..85. */
  temperature: number;
  /** %RH, 0..100. */
  humidity: number;
  /** hPa, operating range 300..1100. */
  pressure: number;
}

export interface Bme280EmulatorOptions {
  clock: Pick<DeviceClock, 'monotonic'>;
  calibration?: Bme280Calibration;
  /** 0x58 makes it answer like a BMP280. */
  chipId?: number;
  physical?: Partial<Bme280Physical>;
}

const NVM_COPY_MS = 2;
const OSRS_FACTOR = [0, 1, 2, 4, 8, 16, 16, 16];

/** Datasheet 9.1: t_measure,typ = 1 + 2·osrs_t + (2·osrs_p + 0.5) + (2·osrs_h + 0.5) ms, skipped channels cost nothing. */
function typicalMeasurementMs(t: number, p: number, h: number): number {
  return 1 + 2 * t + (p > 0 ? 2 * p + 0.5 : 0) + (h > 0 ? 2 * h + 0.5 : 0);
}

export class Bme280Emulator extends RegisterMapEmulator {
  physical: Bme280Physical;
  /** Fault: the status register keeps reporting a conversion in progress. */
  stuckMeasuring = false;
  /** ADC counts to report instead of those derived from `physical` (to replay a datasheet example). */
  fixedRaw: { adc_T: number; adc_P: number; adc_H: number } | undefined;
  readonly #clock: Pick<DeviceClock, 'monotonic'>;
  readonly #calibration: Bme280Calibration;
  #ctrlHumLatched = 0;
  #nvmCopyUntil = -Infinity;
  #conversionDoneAt: number | undefined;
  /** How many conversions finished, for tests that check forced mode ran once per read. */
  conversions = 0;

  constructor(options: Bme280EmulatorOptions) {
    super();
    this.pairedWrites = true;
    this.#clock = options.clock;
    this.#calibration = { ...(options.calibration ?? EXAMPLE_CALIBRATION) };
    this.physical = { temperature: 21, humidity: 45, pressure: 1013.25, ...options.physical };
    this.registers[BME280_REG.CHIP_ID] = options.chipId ?? BME280_CHIP_ID;
    const { a, b } = encodeCalibration(this.#calibration);
    this.registers.set(a, CALIB_A_START);
    this.registers.set(b, CALIB_B_START);
    this.#resetState();
  }

  /** The ADC counts a conversion now would produce (what the chip's front end measures). */
  rawFor(physical: Bme280Physical = this.physical): { adc_T: number; adc_P: number; adc_H: number } {
    const c = this.#calibration;
    const temperature = clamp(physical.temperature, -40, 85);
    const adcT = searchAdc((adc) => compensateTemperatureDouble(adc, c).celsius, temperature, 0, 0xfffff);
    const tFine = compensateTemperatureDouble(adcT, c).t_fine;
    const pascal = clamp(physical.pressure, 300, 1100) * 100;
    const adcP = searchAdc((adc) => compensatePressureDouble(adc, tFine, c), pascal, 0, 0xfffff);
    const adcH = searchAdc((adc) => humidityDoubleUnclamped(adc, tFine, c), clamp(physical.humidity, 0, 100), 0, 0xffff);
    return { adc_T: adcT, adc_P: adcP, adc_H: adcH };
  }

  protected override beforeRead(): void {
    const doneAt = this.#conversionDoneAt;
    if (doneAt === undefined || this.stuckMeasuring || this.#clock.monotonic() < doneAt) return;
    this.#conversionDoneAt = undefined;
    this.conversions += 1;
    const ctrlMeas = this.registers[BME280_REG.CTRL_MEAS] ?? 0;
    const osrsT = (ctrlMeas >> 5) & 7;
    const osrsP = (ctrlMeas >> 2) & 7;
    const raw = this.fixedRaw ?? this.rawFor();
    const adcP = osrsP === 0 ? ADC_SKIPPED_20BIT : raw.adc_P;
    const adcT = osrsT === 0 ? ADC_SKIPPED_20BIT : raw.adc_T;
    const adcH = (this.#ctrlHumLatched & 7) === 0 ? ADC_SKIPPED_16BIT : raw.adc_H;
    this.registers.set(
      [adcP >> 12, (adcP >> 4) & 0xff, (adcP & 0x0f) << 4, adcT >> 12, (adcT >> 4) & 0xff, (adcT & 0x0f) << 4, adcH >> 8, adcH & 0xff],
      BME280_REG.DATA,
    );
    const mode = ctrlMeas & 3;
    // Forced mode goes back to sleep by itself; normal mode starts the next conversion.
    if (mode === 0b11) this.#startConversion();
    else this.registers[BME280_REG.CTRL_MEAS] = ctrlMeas & ~3;
  }

  protected override readRegister(register: number): number {
    if (register === BME280_REG.STATUS) {
      const now = this.#clock.monotonic();
      const measuring = this.#conversionDoneAt !== undefined && (this.stuckMeasuring || now < this.#conversionDoneAt);
      return (measuring ? STATUS_MEASURING : 0) | (now < this.#nvmCopyUntil ? STATUS_IM_UPDATE : 0);
    }
    return super.readRegister(register);
  }

  protected override writeRegister(register: number, value: number): void {
    switch (register) {
      case BME280_REG.RESET:
        if (value === BME280_SOFT_RESET) this.#resetState(true);
        return;
      case BME280_REG.CTRL_HUM:
        this.registers[register] = value & 0x07;
        return;
      case BME280_REG.CONFIG:
        this.registers[register] = value & 0xfd;
        return;
      case BME280_REG.CTRL_MEAS: {
        this.registers[register] = value;
        this.#ctrlHumLatched = this.registers[BME280_REG.CTRL_HUM] ?? 0;
        if ((value & 3) !== 0) this.#startConversion();
        else this.#conversionDoneAt = undefined;
        return;
      }
      default:
        // Every other register is read-only on the real chip; writes are ignored.
        return;
    }
  }

  #startConversion(): void {
    const ctrlMeas = this.registers[BME280_REG.CTRL_MEAS] ?? 0;
    const ms = typicalMeasurementMs(
      OSRS_FACTOR[(ctrlMeas >> 5) & 7] ?? 0,
      OSRS_FACTOR[(ctrlMeas >> 2) & 7] ?? 0,
      OSRS_FACTOR[this.#ctrlHumLatched & 7] ?? 0,
    );
    this.#conversionDoneAt = this.#clock.monotonic() + ms;
  }

  #resetState(nvmCopy = false): void {
    this.registers[BME280_REG.CTRL_HUM] = 0;
    this.registers[BME280_REG.CTRL_MEAS] = 0;
    this.registers[BME280_REG.CONFIG] = 0;
    this.registers.set([0x80, 0x00, 0x00, 0x80, 0x00, 0x00, 0x80, 0x00], BME280_REG.DATA);
    this.#ctrlHumLatched = 0;
    this.#conversionDoneAt = undefined;
    if (nvmCopy) this.#nvmCopyUntil = this.#clock.monotonic() + NVM_COPY_MS;
  }
}

function clamp(value: number, min: number, max: number): number {
  return Math.min(max, Math.max(min, value));
}

/** The integer ADC value in lo..hi whose compensated value is closest to `target` (f is monotonic). */
export function searchAdc(f: (adc: number) => number, target: number, lo: number, hi: number): number {
  const rising = f(hi) >= f(lo);
  let a = lo;
  let b = hi;
  // Find the first adc whose value is at or past the target in the direction f moves.
  while (a < b) {
    const mid = Math.floor((a + b) / 2);
    const past = rising ? f(mid) >= target : f(mid) <= target;
    if (past) b = mid;
    else a = mid + 1;
  }
  if (a > lo && Math.abs(f(a - 1) - target) <= Math.abs(f(a) - target)) return a - 1;
  return a;
}
