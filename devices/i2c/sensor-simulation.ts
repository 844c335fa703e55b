/**
 * Moves the physical values of simulated chips, for `i2c.simulate`: each emulator keeps its values
 * in its own shape (the BME280 has pressure, the BH1750 only light), so the values a caller gives
 * are checked against what the chip measures before any is set.
 */
import { HomeAgentError } from '../../src/sdk/index.js';
import { Aht20Emulator } from './aht20-emulator.js';
import { Bh1750Emulator } from './bh1750-emulator.js';
import { Bme280Emulator } from './bme280-emulator.js';
import type { SensorQuantity } from './sensor.js';
import { Sht3xEmulator } from './sht3x-emulator.js';
import type { I2cDeviceEmulator } from './simulated-bus.js';

export type SimulatedValues = Partial<Record<SensorQuantity, number>>;

/** What the emulator measures, or undefined for an emulator this module does not know. */
export function simulatedQuantities(emulator: I2cDeviceEmulator): readonly SensorQuantity[] | undefined {
  if (emulator instanceof Bme280Emulator) return ['temperature', 'humidity', 'pressure'];
  if (emulator instanceof Aht20Emulator || emulator instanceof Sht3xEmulator) return ['temperature', 'humidity'];
  if (emulator instanceof Bh1750Emulator) return ['illuminance'];
  return undefined;
}

/** Sets the values on the chip (all or none); the next poll reads them. */
export function applySimulatedValues(sensor: string, emulator: I2cDeviceEmulator, values: SimulatedValues): void {
  const measured = simulatedQuantities(emulator);
  if (measured === undefined) throw new HomeAgentError('HA_ERR_INTERNAL', `sensor ${sensor}: its simulated chip takes no values`);
  const given = (Object.keys(values) as SensorQuantity[]).filter((quantity) => values[quantity] !== undefined);
  const foreign = given.filter((quantity) => !measured.includes(quantity));
  if (foreign.length > 0) {
    throw new HomeAgentError(
      'HA_ERR_RPC_INVALID_PARAMS',
      `sensor ${sensor} does not measure ${foreign.join(', ')}; it measures ${measured.join(', ')}`,
    );
  }
  if (emulator instanceof Bh1750Emulator) {
    if (values.illuminance !== undefined) emulator.illuminance = values.illuminance;
    return;
  }
  if (emulator instanceof Bme280Emulator) {
    emulator.physical = {
      temperature: values.temperature ?? emulator.physical.temperature,
      humidity: values.humidity ?? emulator.physical.humidity,
      pressure: values.pressure ?? emulator.physical.pressure,
    };
    return;
  }
  if (emulator instanceof Aht20Emulator || emulator instanceof Sht3xEmulator) {
    emulator.physical = {
      temperature: values.temperature ?? emulator.physical.temperature,
      humidity: values.humidity ?? emulator.physical.humidity,
    };
  }
}
