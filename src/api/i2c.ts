/**
 * The wire shapes of the i2c device plugin's control methods (i2c.sensors, i2c.scan and
 * i2c.simulate), as `homeagentctl i2c` reads them.
 */

export type I2cBackend = 'auto' | 'linux' | 'simulated';

export type SensorQuantity = 'temperature' | 'humidity' | 'pressure' | 'illuminance';

export interface I2cBusStatus {
  bus: number;
  backend: I2cBackend;
  /** `i2c-1`, `sim-1`; null when it could not be opened. */
  name: string | null;
  simulated: boolean;
  /** Why `auto` runs a simulation: the real bus is missing. */
  fallback_reason?: string;
  /** Why the bus could not be opened at all. */
  error?: string;
}

export type I2cSensorState = 'starting' | 'available' | 'unavailable';

export interface I2cSensorValue {
  quantity: SensorQuantity;
  value: number;
  unit: string;
}

/** One sensor (i2c.sensors lists them, i2c.simulate answers the one it moved). Times are ISO strings. */
export interface I2cSensorStatus {
  id: string;
  name: string;
  area: string | null;
  driver: string;
  bus: number;
  /** `i2c-1`, `sim-1`; null when the bus could not be opened. */
  bus_name: string | null;
  address: string;
  simulated: boolean;
  state: I2cSensorState;
  /** Failed polls in a row. */
  failures: number;
  /** When the next poll (or, while unavailable, the next retry) starts; null when not polling. */
  next_poll_at: string | null;
  last_reading: { at: string; values: I2cSensorValue[] } | null;
  last_error: { at: string; message: string } | null;
  entities: string[];
}

export interface I2cSensorsResult {
  buses: I2cBusStatus[];
  sensors: I2cSensorStatus[];
}

export interface I2cBusScan {
  /** Addresses that acknowledged, as `0x76`. */
  addresses: string[];
  /** Addresses that answered with something other than a NACK (claimed by a kernel driver: i2cdetect's `UU`). */
  busy: Array<{ address: string; error: string }>;
}

export interface I2cScanResult extends I2cBusScan {
  bus: number;
  name: string;
  simulated: boolean;
  /** The sensors configured on this bus and whether their address answered. */
  configured: Array<{ sensor: string; address: string; answering: boolean }>;
}
