/**
 * Bosch BME280 (temperature, humidity, pressure) in forced mode: each read starts one conversion,
 * waits the datasheet's maximum measurement time, checks the status register and burst-reads the
 * data block, so the chip sleeps (0.1 µA) between polls and the reading is fresh.
 */
import {
  type Bme280Calibration,
  CALIB_A_LENGTH,
  CALIB_A_START,
  CALIB_B_LENGTH,
  CALIB_B_START,
  compensateHumidityInt,
  compensatePressureInt64,
  compensateTemperatureInt,
  parseCalibration,
} from './bme280-compensation.js';
import type { DeviceClock } from './device-clock.js';
import { deviceError, type I2cBus, type I2cErrorContext } from './i2c-bus.js';
import { reading, type SensorDriver, type SensorQuantity, type SensorReading } from './sensor.js';

export const BME280_CHIP_ID = 0x60;
export const BME280_DEFAULT_ADDRESS = 0x76;

export const BME280_REG = {
  CHIP_ID: 0xd0,
  RESET: 0xe0,
  CTRL_HUM: 0xf2,
  STATUS: 0xf3,
  CTRL_MEAS: 0xf4,
  CONFIG: 0xf5,
  /** press_msb; 8 bytes up to hum_lsb (0xFE) are read in one burst so they come from one conversion. */
  DATA: 0xf7,
} as const;

export const BME280_SOFT_RESET = 0xb6;
export const STATUS_MEASURING = 0x08;
export const STATUS_IM_UPDATE = 0x01;
/** The value the data registers hold when a measurement was skipped or never ran. */
export const ADC_SKIPPED_20BIT = 0x80000;
export const ADC_SKIPPED_16BIT = 0x8000;

/** Other Bosch chips that answer at 0x76/0x77, named in the error so a wrong part is obvious. */
const KNOWN_CHIP_IDS: Readonly<Record<number, string>> = {
  85: 'a BMP180',
  86: 'a BMP280 (sample)',
  87: 'a BMP280 (sample)',
  88: 'a BMP280 (no humidity sensor)',
  97: 'a BME680',
};

export type Oversampling = 1 | 2 | 4 | 8 | 16;
const OSRS_CODE: Readonly<Record<Oversampling, number>> = { 1: 1, 2: 2, 4: 3, 8: 4, 16: 5 };

export interface Bme280Options {
  bus: I2cBus;
  clock: DeviceClock;
  address?: number;
  /** Per channel, default ×1: the datasheet's "weather monitoring" setting. */
  oversampling?: { temperature?: Oversampling; pressure?: Oversampling; humidity?: Oversampling };
}

/** Datasheet 9.1: t_measure,max = 1.25 + 2.3·osrs_t + (2.3·osrs_p + 0.575) + (2.3·osrs_h + 0.575) ms. */
export function maxMeasurementMs(t: Oversampling, p: Oversampling, h: Oversampling): number {
  return 1.25 + 2.3 * t + (2.3 * p + 0.575) + (2.3 * h + 0.575);
}

/** Extra status polls, 1 ms apart, for a part slower than the datasheet maximum. */
const STATUS_RETRIES = 5;
/** Datasheet 1.1: start-up time after power-on or soft reset is 2 ms. */
const STARTUP_MS = 2;

export class Bme280 implements SensorDriver {
  readonly model = 'bme280';
  readonly address: number;
  readonly quantities: readonly SensorQuantity[] = ['temperature', 'humidity', 'pressure'];
  readonly #bus: I2cBus;
  readonly #clock: DeviceClock;
  readonly #osrs: { t: Oversampling; p: Oversampling; h: Oversampling };
  #calibration: Bme280Calibration | undefined;

  constructor(options: Bme280Options) {
    this.#bus = options.bus;
    this.#clock = options.clock;
    this.address = options.address ?? BME280_DEFAULT_ADDRESS;
    this.#osrs = {
      t: options.oversampling?.temperature ?? 1,
      p: options.oversampling?.pressure ?? 1,
      h: options.oversampling?.humidity ?? 1,
    };
  }

  /** The trimming parameters read by the last successful `init`. */
  get calibration(): Bme280Calibration | undefined {
    return this.#calibration;
  }

  async init(): Promise<void> {
    this.#calibration = undefined;
    const id = await this.#bus.readByte(this.address, BME280_REG.CHIP_ID);
    if (id !== BME280_CHIP_ID) {
      const what = KNOWN_CHIP_IDS[id] ?? 'not a Bosch BME280';
      throw deviceError(this.#context('init'), `chip id 0x${hex(id)} is ${what}, expected 0x${hex(BME280_CHIP_ID)} (BME280)`, {
        chip_id: id,
      });
    }
    await this.#bus.writeByte(this.address, BME280_REG.RESET, BME280_SOFT_RESET);
    await this.#clock.sleep(STARTUP_MS);
    // The reset copies the trims from NVM into the image registers; reading earlier gets garbage.
    await this.#waitStatusClear(STATUS_IM_UPDATE, 'the trimming parameters were not copied from NVM after reset');
    const a = await this.#bus.readI2cBlock(this.address, CALIB_A_START, CALIB_A_LENGTH);
    const b = await this.#bus.readI2cBlock(this.address, CALIB_B_START, CALIB_B_LENGTH);
    if (isBlank(a) || isBlank(b)) throw deviceError(this.#context('init'), 'the trimming parameters are blank (all 0x00 or 0xFF)');
    const calibration = parseCalibration(a, b);
    if (calibration.dig_T1 === 0 || calibration.dig_P1 === 0) {
      throw deviceError(this.#context('init'), 'dig_T1 or dig_P1 is 0: the trimming parameters are invalid');
    }
    // Filter off, standby irrelevant in forced mode; ctrl_meas stays in sleep until a read.
    await this.#bus.writeByte(this.address, BME280_REG.CONFIG, 0x00);
    await this.#bus.writeByte(this.address, BME280_REG.CTRL_HUM, OSRS_CODE[this.#osrs.h]);
    await this.#bus.writeByte(this.address, BME280_REG.CTRL_MEAS, this.#ctrlMeas(0b00));
    this.#calibration = calibration;
  }

  async read(): Promise<SensorReading[]> {
    const calibration = this.#calibration;
    if (calibration === undefined) throw deviceError(this.#context('read'), 'read before a successful init');
    // ctrl_hum is re-sent every time: it only takes effect with the ctrl_meas write after it, and a
    // chip that browned out since init has lost it.
    await this.#bus.writeByte(this.address, BME280_REG.CTRL_HUM, OSRS_CODE[this.#osrs.h]);
    await this.#bus.writeByte(this.address, BME280_REG.CTRL_MEAS, this.#ctrlMeas(0b01));
    await this.#clock.sleep(Math.ceil(maxMeasurementMs(this.#osrs.t, this.#osrs.p, this.#osrs.h)));
    await this.#waitStatusClear(STATUS_MEASURING, 'the conversion did not finish');
    const data = await this.#bus.readI2cBlock(this.address, BME280_REG.DATA, 8);
    const adcP = ((data[0] ?? 0) << 12) | ((data[1] ?? 0) << 4) | ((data[2] ?? 0) >> 4);
    const adcT = ((data[3] ?? 0) << 12) | ((data[4] ?? 0) << 4) | ((data[5] ?? 0) >> 4);
    const adcH = ((data[6] ?? 0) << 8) | (data[7] ?? 0);
    if (adcT === ADC_SKIPPED_20BIT || adcP === ADC_SKIPPED_20BIT || adcH === ADC_SKIPPED_16BIT) {
      // Compensated, the reset pattern looks like plausible weather; it means no conversion ran.
      throw deviceError(this.#context('read'), 'the data registers hold their reset value: no conversion ran', {
        adc_T: adcT,
        adc_P: adcP,
        adc_H: adcH,
      });
    }
    return compensate(adcT, adcP, adcH, calibration);
  }

  #ctrlMeas(mode: number): number {
    return (OSRS_CODE[this.#osrs.t] << 5) | (OSRS_CODE[this.#osrs.p] << 2) | mode;
  }

  async #waitStatusClear(bit: number, why: string): Promise<void> {
    for (let attempt = 0; ; attempt++) {
      const status = await this.#bus.readByte(this.address, BME280_REG.STATUS);
      if ((status & bit) === 0) return;
      if (attempt >= STATUS_RETRIES) throw deviceError(this.#context('status'), why, { status });
      await this.#clock.sleep(1);
    }
  }

  #context(op: string): I2cErrorContext {
    return { bus: this.#bus.name, address: this.address, op };
  }
}

/** The datasheet's integer compensation of one burst, in °C, %RH and hPa. */
export function compensate(adcT: number, adcP: number, adcH: number, calibration: Bme280Calibration): SensorReading[] {
  const t = compensateTemperatureInt(adcT, calibration);
  const pQ24_8 = compensatePressureInt64(adcP, t.t_fine, calibration);
  const hQ22_10 = compensateHumidityInt(adcH, t.t_fine, calibration);
  return [reading('temperature', t.centi_celsius / 100), reading('humidity', hQ22_10 / 1024), reading('pressure', pQ24_8 / 256 / 100)];
}

function isBlank(bytes: Uint8Array): boolean {
  return bytes.every((b) => b === 0x00) || bytes.every((b) => b === 0xff);
}

function hex(value: number): string {
  return value.toString(16).padStart(2, '0');
}
