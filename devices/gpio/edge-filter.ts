/**
 * Turns raw level changes of an input into debounced, selected edges. Every back end feeds it, so
 * a button behaves the same on sysfs, libgpiod and the simulator.
 *
 * Debounce is a lockout, not a settle delay: the first change is reported at once (no added
 * latency for a doorbell), later changes are ignored for `debounce_ms`, and when the window ends
 * the level is compared with the last reported one so a release that happened inside the window
 * is reported then instead of being lost.
 */
import type { EdgeEvent, GpioEdge, GpioValue } from './gpio-backend.js';
import type { GpioClock, TimerHandle } from './gpio-clock.js';

export interface EdgeFilterOptions {
  bcm: number;
  edge: GpioEdge;
  debounceMs: number;
  clock: GpioClock;
  /** The level when monitoring starts, so the first change is measured against it. */
  initial: GpioValue;
  emit: (event: EdgeEvent) => void;
}

export class EdgeFilter {
  readonly #options: EdgeFilterOptions;
  #reported: GpioValue;
  #current: GpioValue;
  #lockout: TimerHandle | undefined;
  #closed = false;

  constructor(options: EdgeFilterOptions) {
    this.#options = options;
    this.#reported = options.initial;
    this.#current = options.initial;
  }

  /** The debounced level (what listeners were last told, or the initial level). */
  get level(): GpioValue {
    return this.#reported;
  }

  /** The latest raw level seen, bounces included. */
  get raw(): GpioValue {
    return this.#current;
  }

  /** A raw level observed on the wire (logical). Repeats of the same level are ignored. */
  sample(value: GpioValue): void {
    if (this.#closed) return;
    this.#current = value;
    if (this.#lockout !== undefined) return;
    if (value !== this.#reported) this.#accept(value);
  }

  close(): void {
    this.#closed = true;
    this.#lockout?.cancel();
    this.#lockout = undefined;
  }

  #accept(value: GpioValue): void {
    this.#reported = value;
    const { bcm, edge, debounceMs, clock, emit } = this.#options;
    const kind = value === 1 ? 'rising' : 'falling';
    if (debounceMs > 0) {
      this.#lockout = clock.setTimer(debounceMs, () => {
        this.#lockout = undefined;
        if (!this.#closed && this.#current !== this.#reported) this.#accept(this.#current);
      });
    }
    if (edge === 'both' || edge === kind) emit({ bcm, edge: kind, value, at: clock.now() });
  }
}
