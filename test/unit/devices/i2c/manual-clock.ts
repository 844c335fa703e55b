/**
 * Simulated time for the I2C tests. Nothing happens until the test moves time: `advance` fires due
 * timers in order and lets the work each one starts run before the next, `run` moves time exactly
 * as far as a promise needs. Drivers' conversion waits and the poller's schedule share this one
 * timeline, so a test can say "at 30 s the sensor became unavailable" without sleeping.
 */

import type { DeviceClock, DeviceTimer } from '../../../../devices/i2c/device-clock.js';
import { settle } from '../../../helpers/deferred.js';

interface Pending {
  at: number;
  seq: number;
  callback: () => void;
}

export const WALL_START = Date.UTC(2025, 0, 1);

export class ManualClock implements DeviceClock {
  #time = 0;
  #seq = 0;
  readonly #timers = new Set<Pending>();
  /** Every sleep requested, in order: what the drivers waited for. */
  readonly sleeps: number[] = [];

  now(): number {
    return WALL_START + this.#time;
  }

  monotonic(): number {
    return this.#time;
  }

  setTimer(ms: number, callback: () => void): DeviceTimer {
    const pending: Pending = { at: this.#time + Math.max(0, ms), seq: this.#seq++, callback };
    this.#timers.add(pending);
    return { clear: () => this.#timers.delete(pending) };
  }

  sleep(ms: number): Promise<void> {
    this.sleeps.push(ms);
    return new Promise((resolve) => this.setTimer(ms, resolve));
  }

  get pendingTimers(): number {
    return this.#timers.size;
  }

  /** Moves time forward by `ms`, firing every timer that falls due on the way. */
  async advance(ms: number): Promise<void> {
    const end = this.#time + ms;
    for (;;) {
      await settle();
      const next = this.#next();
      if (next === undefined || next.at > end) break;
      this.#fire(next);
    }
    this.#time = end;
    await settle();
  }

  /** Moves time to `at` (monotonic ms). */
  async advanceTo(at: number): Promise<void> {
    await this.advance(Math.max(0, at - this.#time));
  }

  /** Moves time only as far as `promise` needs to settle; fails if it waits on nothing or longer than `limitMs`. */
  async run<T>(promise: Promise<T>, limitMs = 60_000): Promise<T> {
    let done = false;
    const observed = promise.then(
      () => {
        done = true;
      },
      () => {
        done = true;
      },
    );
    const start = this.#time;
    for (;;) {
      await settle();
      if (done) break;
      const next = this.#next();
      if (next === undefined) throw new Error('ManualClock.run: the promise waits on something other than a timer');
      if (next.at - start > limitMs) throw new Error(`ManualClock.run: still pending after ${limitMs} ms of simulated time`);
      this.#fire(next);
    }
    await observed;
    return promise;
  }

  #next(): Pending | undefined {
    let best: Pending | undefined;
    for (const timer of this.#timers)
      if (best === undefined || timer.at < best.at || (timer.at === best.at && timer.seq < best.seq)) best = timer;
    return best;
  }

  #fire(timer: Pending): void {
    this.#timers.delete(timer);
    this.#time = Math.max(this.#time, timer.at);
    timer.callback();
  }
}
