/**
 * Polls one sensor driver at its interval and reports what happens: readings, single failures,
 * the sensor becoming unavailable after N failures in a row, and it coming back. While
 * unavailable it is retried with exponential backoff up to a cap, re-initialised first (a chip
 * that lost power also lost its configuration). Polls never overlap: the next one is scheduled
 * when the current one ends, at the start time plus the interval, so polls do not drift.
 */
import { HomeAgentError } from '../../src/sdk/index.js';
import { describeErrorOf } from './describe-error.js';
import type { DeviceClock, DeviceTimer } from './device-clock.js';
import type { SensorDriver, SensorReading } from './sensor.js';

export interface SensorPollerOptions {
  /** The sensor's id from the configuration (`living_room_climate`). */
  id: string;
  driver: SensorDriver;
  clock: DeviceClock;
  /** ms between the starts of two polls. */
  interval_ms: number;
  /** Failures in a row before the sensor is reported unavailable (default 3). */
  unavailable_after?: number;
  /** First retry delay once unavailable (default: the interval). */
  backoff_initial_ms?: number;
  /** Longest retry delay (default 10 minutes, or the interval if that is longer). */
  backoff_max_ms?: number;
}

export interface ReadingEvent {
  id: string;
  readings: SensorReading[];
  /** Wall-clock ms when the reading was taken. */
  at: number;
}

export interface FailureEvent {
  id: string;
  error: unknown;
  /** `HA_ERR_I2C_NACK: ...` */
  message: string;
  consecutive: number;
  at: number;
}

export interface UnavailableEvent extends FailureEvent {}

export interface AvailableEvent {
  id: string;
  at: number;
  /** How long the sensor was unavailable, in monotonic ms; 0 for the first success. */
  unavailable_ms: number;
}

export interface SensorPollerEvents {
  reading: ReadingEvent;
  failure: FailureEvent;
  unavailable: UnavailableEvent;
  available: AvailableEvent;
}

export type SensorState = 'stopped' | 'starting' | 'available' | 'unavailable';

const DEFAULT_UNAVAILABLE_AFTER = 3;
const DEFAULT_BACKOFF_MAX_MS = 10 * 60_000;

type Listener<E extends keyof SensorPollerEvents> = (event: SensorPollerEvents[E]) => void;

export class SensorPoller {
  readonly id: string;
  readonly #driver: SensorDriver;
  readonly #clock: DeviceClock;
  readonly #interval: number;
  readonly #unavailableAfter: number;
  readonly #backoffInitial: number;
  readonly #backoffMax: number;
  readonly #listeners: { [E in keyof SensorPollerEvents]: Set<Listener<E>> } = {
    reading: new Set(),
    failure: new Set(),
    unavailable: new Set(),
    available: new Set(),
  };
  #state: SensorState = 'stopped';
  #running = false;
  /** Bumped by every start: a poll from before a stop/start pair must not schedule a second chain. */
  #generation = 0;
  #initialised = false;
  #failures = 0;
  #unavailableSince: number | undefined;
  #timer: DeviceTimer | undefined;
  #inFlight: Promise<void> | undefined;
  #lastReading: ReadingEvent | undefined;
  #listenerErrors = 0;

  constructor(options: SensorPollerOptions) {
    this.id = options.id;
    this.#driver = options.driver;
    this.#clock = options.clock;
    this.#interval = options.interval_ms;
    this.#unavailableAfter = options.unavailable_after ?? DEFAULT_UNAVAILABLE_AFTER;
    this.#backoffInitial = options.backoff_initial_ms ?? options.interval_ms;
    this.#backoffMax = options.backoff_max_ms ?? Math.max(DEFAULT_BACKOFF_MAX_MS, options.interval_ms);
  }

  get state(): SensorState {
    return this.#state;
  }

  get consecutiveFailures(): number {
    return this.#failures;
  }

  get lastReading(): ReadingEvent | undefined {
    return this.#lastReading;
  }

  /** Errors thrown by listeners, swallowed so one bad listener cannot stop the polling. */
  get listenerErrors(): number {
    return this.#listenerErrors;
  }

  /** Subscribes; returns the unsubscribe function. */
  on<E extends keyof SensorPollerEvents>(event: E, listener: Listener<E>): () => void {
    const set = this.#listeners[event] as Set<Listener<E>>;
    set.add(listener);
    return () => set.delete(listener);
  }

  /**
   * Starts polling; the first poll runs at once. Fails only on a bad configuration: a missing or
   * broken sensor is reported through events, never by throwing.
   */
  start(): void {
    if (this.#running) return;
    this.#validate();
    this.#running = true;
    this.#generation += 1;
    this.#state = 'starting';
    this.#schedule(0);
  }

  /** Stops polling and waits for a poll in progress to end; no event is emitted after it resolves. */
  async stop(): Promise<void> {
    this.#running = false;
    this.#timer?.clear();
    this.#timer = undefined;
    this.#initialised = false;
    this.#failures = 0;
    this.#unavailableSince = undefined;
    await this.#inFlight;
    // A start() while this stop was waiting owns the state now.
    if (!this.#running) this.#state = 'stopped';
  }

  #validate(): void {
    for (const [name, value] of [
      ['interval_ms', this.#interval],
      ['backoff_initial_ms', this.#backoffInitial],
      ['backoff_max_ms', this.#backoffMax],
    ] as const) {
      if (!Number.isFinite(value) || value <= 0)
        throw new HomeAgentError('HA_ERR_CONFIG_INVALID', `sensor ${this.id}: ${name} must be a positive number, got ${value}`);
    }
    if (!Number.isInteger(this.#unavailableAfter) || this.#unavailableAfter < 1) {
      throw new HomeAgentError(
        'HA_ERR_CONFIG_INVALID',
        `sensor ${this.id}: unavailable_after must be an integer ≥ 1, got ${this.#unavailableAfter}`,
      );
    }
  }

  #schedule(delay: number): void {
    if (!this.#running) return;
    const generation = this.#generation;
    this.#timer = this.#clock.setTimer(Math.max(0, delay), () => {
      this.#timer = undefined;
      const poll = this.#poll(generation).finally(() => {
        if (this.#inFlight === poll) this.#inFlight = undefined;
      });
      this.#inFlight = poll;
    });
  }

  #current(generation: number): boolean {
    return this.#running && generation === this.#generation;
  }

  async #poll(generation: number): Promise<void> {
    const started = this.#clock.monotonic();
    let readings: SensorReading[];
    try {
      if (!this.#initialised) {
        await this.#driver.init();
        if (!this.#current(generation)) return;
        this.#initialised = true;
      }
      readings = await this.#driver.read();
    } catch (error) {
      if (!this.#current(generation)) return;
      this.#failed(error);
      this.#schedule(started + this.#nextDelay() - this.#clock.monotonic());
      return;
    }
    if (!this.#current(generation)) return;
    this.#succeeded(readings);
    this.#schedule(started + this.#interval - this.#clock.monotonic());
  }

  #succeeded(readings: SensorReading[]): void {
    const wasDown = this.#state !== 'available';
    const downSince = this.#unavailableSince;
    this.#failures = 0;
    this.#unavailableSince = undefined;
    this.#state = 'available';
    const at = this.#clock.now();
    if (wasDown)
      this.#emit('available', { id: this.id, at, unavailable_ms: downSince === undefined ? 0 : this.#clock.monotonic() - downSince });
    const event = { id: this.id, readings, at };
    this.#lastReading = event;
    this.#emit('reading', event);
  }

  #failed(error: unknown): void {
    this.#failures += 1;
    // Re-initialise on the next attempt: the failure may have been a power loss that reset the chip.
    this.#initialised = false;
    const event: FailureEvent = { id: this.id, error, message: describeErrorOf(error), consecutive: this.#failures, at: this.#clock.now() };
    this.#emit('failure', event);
    if (this.#state !== 'unavailable' && this.#failures >= this.#unavailableAfter) {
      this.#state = 'unavailable';
      this.#unavailableSince = this.#clock.monotonic();
      this.#emit('unavailable', event);
    }
  }

  /**
   * While still available, a failed poll is retried at the normal interval. Once unavailable the
   * delay doubles with every further failure, from backoff_initial_ms up to backoff_max_ms. No
   * jitter: the pollers of one bus share nothing a synchronised retry could overload.
   */
  #nextDelay(): number {
    if (this.#state !== 'unavailable') return this.#interval;
    const exponent = this.#failures - this.#unavailableAfter;
    return Math.min(this.#backoffMax, this.#backoffInitial * 2 ** Math.min(exponent, 30));
  }

  #emit<E extends keyof SensorPollerEvents>(event: E, payload: SensorPollerEvents[E]): void {
    for (const listener of this.#listeners[event] as Set<Listener<E>>) {
      try {
        listener(payload);
      } catch {
        this.#listenerErrors += 1;
      }
    }
  }
}
