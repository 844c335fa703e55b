/**
 * What the GPIO tools and control methods may do with the running plugin, so that they are plain
 * definitions over this interface (gpio-tools.ts, gpio-methods.ts) and the plugin keeps the pins,
 * the safety layer and the entities to itself.
 */
import type { GpioBackendStatus, GpioPinStatus, GpioWriteResult } from '../../src/sdk/api.js';
import type { GpioValue } from './gpio-backend.js';
import type { GpioPinPlan } from './gpio-pin-config.js';

/** A configured pin while the plugin runs. */
export interface LivePin {
  readonly plan: GpioPinPlan;
  /** The logical value last seen: written (outputs), read or reported by an edge (inputs). */
  value: GpioValue | undefined;
  /** The last failure of this pin outside a call (a dead edge monitor, a failed max_on_time switch-off). */
  error: string | undefined;
}

/** What a write adds to the pin's status in gpio.write's answer. */
export type WriteResult = Pick<GpioWriteResult, 'pulsed_ms'>;

/** What triggers a pin operation, for the audit record. */
export interface OperationActor {
  actor: string;
  details?: Record<string, unknown>;
}

export interface GpioOperations {
  /** A pin by id, entity id or BCM number (`17`, `"17"`, `"GPIO17"`). */
  find(reference: string | number): LivePin | undefined;
  /** "kitchen_light (GPIO17), doorbell (GPIO27)": for messages about a pin that was not found. */
  describePins(): string;
  read(pin: LivePin): Promise<GpioValue>;
  /** Sets an output; a 1 on a momentary relay pulses it (it has no "held on"). */
  write(pin: LivePin, value: GpioValue, by: OperationActor): Promise<WriteResult>;
  /** On for `ms` (default the pin's pulse_ms), then back to rest. */
  pulse(pin: LivePin, ms: number | undefined, by: OperationActor): Promise<number>;
  /** Drives a simulated input's wire (logical level) or presses it; HA_ERR_GPIO_UNAVAILABLE on real hardware. */
  simulate(pin: LivePin, action: { level: GpioValue } | { press_ms: number }, by: OperationActor): void;
  status(pin: LivePin): GpioPinStatus;
  pins(): GpioPinStatus[];
  backend(): GpioBackendStatus;
}
