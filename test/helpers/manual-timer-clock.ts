/**
 * A TimerClock that moves only when a test says so. `advance(ms)` fires the timers that fall due
 * in time order (equal times in the order they were set), letting pending promise work run between
 * them, so chains such as "delay, then a service call, then a state change that arms another
 * timer" progress exactly as with real time, without sleeping.
 */
import type { TimerClock, TimerHandle } from '../../src/shared/clock.js';

interface Pending {
  due: number;
  seq: number;
  fn: () => void;
}

/** Event-loop turns let between two timers: enough for a few chained awaits and setImmediate hops. */
const SETTLE_TURNS = 5;

export class ManualTimerClock implements TimerClock {
  #now: number;
  #monotonic = 1000;
  #seq = 0;
  #timers: Pending[] = [];

  /** Starts at `start` epoch ms (a fixed UTC instant by default). */
  constructor(start: number = Date.UTC(2026, 0, 5, 8, 0, 0)) {
    this.#now = start;
  }

  now(): number {
    return this.#now;
  }

  monotonic(): number {
    return this.#monotonic;
  }

  setTimer(fn: () => void, ms: number): TimerHandle {
    const timer: Pending = { due: this.#now + Math.max(0, ms), seq: this.#seq++, fn };
    this.#timers.push(timer);
    return {
      cancel: () => {
        this.#timers = this.#timers.filter((t) => t !== timer);
      },
    };
  }

  /** Timers waiting to fire. */
  pending(): number {
    return this.#timers.length;
  }

  /** Epoch ms of the next timer, or undefined. */
  nextDue(): number | undefined {
    return this.#next()?.due;
  }

  /** Moves time forward by `ms`, firing every timer due on the way (also timers set by the ones fired). */
  async advance(ms: number): Promise<void> {
    const target = this.#now + Math.max(0, ms);
    await settle();
    for (;;) {
      const next = this.#next();
      if (next === undefined || next.due > target) break;
      this.#move(next.due);
      this.#timers = this.#timers.filter((t) => t !== next);
      next.fn();
      await settle();
    }
    this.#move(target);
    await settle();
  }

  /** Moves the wall clock alone (a clock set by NTP); monotonic time and timers do not move. */
  jumpWallClock(ms: number): void {
    this.#now += ms;
    for (const t of this.#timers) t.due += ms;
  }

  #move(to: number): void {
    this.#monotonic += to - this.#now;
    this.#now = to;
  }

  #next(): Pending | undefined {
    let best: Pending | undefined;
    for (const t of this.#timers) if (best === undefined || t.due < best.due || (t.due === best.due && t.seq < best.seq)) best = t;
    return best;
  }
}

/** Lets work already scheduled run (promise reactions and a few event-loop turns); waits for no time. */
export async function settle(): Promise<void> {
  for (let i = 0; i < SETTLE_TURNS; i++) await new Promise((resolve) => setImmediate(resolve));
}
