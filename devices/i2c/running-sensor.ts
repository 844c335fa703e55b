/**
 * One configured sensor while the plugin runs: its driver, its poller, and one `sensor` entity per
 * quantity it measures. Poller events become entity states here: a reading sets each value
 * (rounded to the chip's meaningful decimals), unavailability sets `unavailable` with the error,
 * and the next good reading brings the values back.
 *
 * A sensor that has not answered once since start is unavailable from its first failure: there is
 * no last value worth keeping on screen while the poller counts towards unavailable_after (which
 * is there so that one glitch does not hide a good value).
 */
import type { I2cSensorState, I2cSensorStatus } from '../../src/sdk/api.js';
import type { EntityHandle, Logger, PluginEntities } from '../../src/sdk/index.js';
import type { DeviceClock } from './device-clock.js';
import { formatAddress } from './i2c-bus.js';
import type { I2cSensorConfig } from './i2c-config.js';
import { SENSOR_PRECISION, SENSOR_UNITS, type SensorDriver, type SensorQuantity, type SensorReading } from './sensor.js';
import { type FailureEvent, type ReadingEvent, SensorPoller } from './sensor-poller.js';

export interface BusAttachment {
  name: string | null;
  simulated: boolean;
  /** Set when the bus could not be opened: the sensor is unavailable with it and not polled. */
  error?: string;
}

export interface RunningSensorOptions {
  config: I2cSensorConfig;
  driver: SensorDriver;
  bus: BusAttachment;
  clock: DeviceClock;
  entities: PluginEntities;
  log: Logger;
}

/** Rounds to the decimals the chip resolves (sensor.ts SENSOR_PRECISION), so states do not flicker in noise digits. */
export function roundReading(quantity: SensorQuantity, value: number): number {
  const factor = 10 ** SENSOR_PRECISION[quantity];
  return Math.round(value * factor) / factor;
}

function iso(ms: number): string {
  return new Date(ms).toISOString();
}

export class RunningSensor {
  readonly config: I2cSensorConfig;
  readonly driver: SensorDriver;
  readonly bus: BusAttachment;
  readonly #clock: DeviceClock;
  readonly #entities: PluginEntities;
  readonly #log: Logger;
  readonly #handles = new Map<SensorQuantity, EntityHandle>();
  readonly #unsubscribe: Array<() => void> = [];
  #poller: SensorPoller | undefined;
  #state: I2cSensorState = 'starting';
  #nextPollAt: number | undefined;
  #lastReading: ReadingEvent | undefined;
  #lastError: { at: number; message: string } | undefined;

  constructor(options: RunningSensorOptions) {
    this.config = options.config;
    this.driver = options.driver;
    this.bus = options.bus;
    this.#clock = options.clock;
    this.#entities = options.entities;
    this.#log = options.log;
  }

  get state(): I2cSensorState {
    return this.#state;
  }

  get lastError(): string | undefined {
    return this.#lastError?.message;
  }

  /** Registers the entities and starts polling (the first poll runs at once, without waiting here). */
  start(): void {
    const busError = this.bus.error;
    if (busError !== undefined) {
      this.#state = 'unavailable';
      this.#lastError = { at: this.#clock.now(), message: busError };
    }
    for (const quantity of this.driver.quantities) {
      const { config } = this;
      const handle = this.#entities.register({
        domain: 'sensor',
        object_id: `${config.id}_${quantity}`,
        name: `${config.name} ${quantity}`,
        area: config.area,
        device: config.id,
        unit: SENSOR_UNITS[quantity],
        device_class: quantity,
        attributes: {
          driver: config.driver,
          bus: config.bus,
          address: formatAddress(config.address),
          ...(this.bus.simulated && { simulated: true }),
          ...(busError !== undefined && { error: busError }),
        },
        // Unknown until the first reading: a value stored before the restart may no longer be true.
        initial_state: busError === undefined ? null : 'unavailable',
      });
      this.#handles.set(quantity, handle);
    }
    if (busError !== undefined) return;
    const poller = new SensorPoller({
      id: this.config.id,
      driver: this.driver,
      clock: this.#trackingClock(),
      interval_ms: this.config.interval_ms,
      unavailable_after: this.config.unavailable_after,
      backoff_max_ms: this.config.backoff_max_ms,
    });
    this.#unsubscribe.push(
      poller.on('reading', (event) => this.#reading(event)),
      poller.on('failure', (event) => this.#failure(event)),
      poller.on('unavailable', (event) => this.#unavailable(event.message)),
    );
    this.#poller = poller;
    poller.start();
  }

  /** Stops polling; no entity changes after it resolves. The host removes the entities. */
  async stop(): Promise<void> {
    await this.#poller?.stop();
    this.#poller = undefined;
    for (const unsubscribe of this.#unsubscribe.splice(0)) unsubscribe();
    this.#handles.clear();
    this.#nextPollAt = undefined;
  }

  status(): I2cSensorStatus {
    const reading = this.#lastReading;
    return {
      id: this.config.id,
      name: this.config.name,
      area: this.config.area,
      driver: this.config.driver,
      bus: this.config.bus,
      bus_name: this.bus.name,
      address: formatAddress(this.config.address),
      simulated: this.bus.simulated,
      state: this.#state,
      failures: this.#poller?.consecutiveFailures ?? 0,
      next_poll_at: this.#poller === undefined || this.#nextPollAt === undefined ? null : iso(this.#nextPollAt),
      last_reading:
        reading === undefined
          ? null
          : {
              at: iso(reading.at),
              values: reading.readings.map((r) => ({ quantity: r.quantity, value: roundReading(r.quantity, r.value), unit: r.unit })),
            },
      last_error: this.#lastError === undefined ? null : { at: iso(this.#lastError.at), message: this.#lastError.message },
      entities: [...this.#handles.values()].map((handle) => handle.entity_id),
    };
  }

  /** The poller schedules through setTimer only (drivers sleep on the plain clock): what it sets is the next poll. */
  #trackingClock(): DeviceClock {
    const clock = this.#clock;
    return {
      now: () => clock.now(),
      monotonic: () => clock.monotonic(),
      sleep: (ms) => clock.sleep(ms),
      setTimer: (ms, callback) => {
        this.#nextPollAt = clock.now() + Math.max(0, ms);
        return clock.setTimer(ms, callback);
      },
    };
  }

  #reading(event: ReadingEvent): void {
    const returning = this.#state !== 'available';
    if (this.#state === 'unavailable') this.#log.info({ sensor: this.config.id }, `sensor ${this.config.id} answers again`);
    this.#state = 'available';
    this.#lastReading = event;
    for (const reading of event.readings) this.#report(reading, returning);
  }

  #report(reading: SensorReading, returning: boolean): void {
    const handle = this.#handles.get(reading.quantity);
    if (handle === undefined) return;
    const value = roundReading(reading.quantity, reading.value);
    if (returning) handle.update(value, { error: null });
    else handle.update(value);
  }

  #failure(event: FailureEvent): void {
    this.#lastError = { at: event.at, message: event.message };
    this.#log.debug(
      { sensor: this.config.id, consecutive: event.consecutive, error: event.message },
      `sensor ${this.config.id} failed a poll`,
    );
    // Not answered since start, or already unavailable: the entities carry this error (a changed one too).
    if (this.#state !== 'available') this.#unavailable(event.message);
  }

  #unavailable(message: string): void {
    if (this.#state !== 'unavailable')
      this.#log.warn({ sensor: this.config.id, error: message }, `sensor ${this.config.id} is unavailable: ${message}`);
    this.#state = 'unavailable';
    for (const handle of this.#handles.values()) handle.update('unavailable', { error: message });
  }
}
