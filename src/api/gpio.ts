/**
 * The wire shapes of the gpio device plugin's control methods (gpio.pins, gpio.read, gpio.write
 * and gpio.simulate), as `homeagentctl gpio` reads them.
 */
import type { EntityState } from './home.js';

/** Logical: with `active_low` a 1 is a low wire, so "on" means the same on every relay board. */
export type GpioValue = 0 | 1;
export type GpioDirection = 'in' | 'out';
export type GpioBackendKind = 'sysfs' | 'gpiod' | 'simulated';

/** One pin, as gpio.pins lists them and gpio.read answers. */
export interface GpioPinStatus {
  id: string;
  name: string;
  bcm: number;
  direction: GpioDirection;
  domain: string;
  entity_id: string;
  value: GpioValue | null;
  state: EntityState;
  active_low: boolean;
  pulse_ms: number;
  max_on_time_s: number;
  /** ISO time an output was switched on, while it is on. */
  on_since: string | null;
  error: string | null;
}

export interface GpioBackendStatus {
  kind: GpioBackendKind;
  /** Why this back end (auto selection's reasons, or "configured"). */
  reason: string;
  /** The back end's own status line. */
  describe: string;
  /** The crash watcher's pid while it is armed. */
  watcher_pid: number | null;
  /** What protects the outputs if HomeAgent dies: "watcher armed", or why nothing does. */
  crash_protection: string;
}

export interface GpioPinsResult {
  backend: GpioBackendStatus;
  pins: GpioPinStatus[];
}

/** What gpio.write answers: the pin after the write. */
export interface GpioWriteResult extends GpioPinStatus {
  /** Set when the pin is a momentary relay and a 1 became a pulse. */
  pulsed_ms?: number;
}

export interface GpioSimulateResult {
  pin: string;
  /** What was done: a level driven (logical) or a press started. */
  level?: GpioValue;
  press_ms?: number;
  /** The pin after a level change (a press plays out on the back end's clock after the answer). */
  status: GpioPinStatus;
}
