/** devices/i2c: I2C buses (Linux and simulated), sensor drivers, their emulators and the poller. */
export { Aht20, type Aht20Options } from './aht20.js';
export { Aht20Emulator, type Aht20Physical } from './aht20-emulator.js';
export { Bh1750, type Bh1750Mode, type Bh1750Options } from './bh1750.js';
export { Bh1750Emulator } from './bh1750-emulator.js';
export { Bme280, type Bme280Options, type Oversampling } from './bme280.js';
export type { Bme280Calibration } from './bme280-compensation.js';
export { Bme280Emulator, type Bme280Physical } from './bme280-emulator.js';
export { crc8 } from './crc8.js';
export { type DeviceClock, type DeviceTimer, systemDeviceClock } from './device-clock.js';
export { formatAddress, type I2cBus } from './i2c-bus.js';
export { checkI2cDevice, LinuxI2cBus, type LinuxI2cBusOptions } from './linux-bus.js';
export {
  SENSOR_UNITS,
  type SensorDriver,
  type SensorModel,
  type SensorQuantity,
  type SensorReading,
} from './sensor.js';
export {
  CHIPS,
  type ChipDefinition,
  createSensorDriver,
  createSensorEmulator,
  type I2cBackend,
  type OpenedI2cBus,
  openI2cBus,
  SENSOR_MODELS,
  type SensorSpec,
} from './sensor-factory.js';
export {
  type AvailableEvent,
  type FailureEvent,
  type ReadingEvent,
  SensorPoller,
  type SensorPollerOptions,
  type SensorState,
  type UnavailableEvent,
} from './sensor-poller.js';
export { Sht3x, type Sht3xOptions } from './sht3x.js';
export { Sht3xEmulator, type Sht3xPhysical } from './sht3x-emulator.js';
export { EmulatorNack, type I2cDeviceEmulator, RegisterMapEmulator, SimulatedI2cBus } from './simulated-bus.js';
