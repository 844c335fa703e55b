/**
 * Time for the GPIO code: a wall clock plus one-shot timers, injectable so that debounce,
 * max_on_time and pulses can be tested by advancing a manual clock instead of sleeping.
 */
export interface TimerHandle {
  cancel(): void;
}

export interface GpioClock {
  /** Epoch milliseconds. */
  now(): number;
  /** Calls `fn` once after `ms` milliseconds unless cancelled. */
  setTimer(ms: number, fn: () => void): TimerHandle;
}

export const systemGpioClock: GpioClock = {
  now: () => Date.now(),
  setTimer(ms, fn) {
    const timer = setTimeout(fn, Math.max(0, ms));
    return { cancel: () => clearTimeout(timer) };
  },
};

interface ManualTimer {
  due: number;
  seq: number;
  fn: () => void;
  cancelled: boolean;
}

/**
 * A clock that moves only when told to. Timers fire in due order (ties in creation order) while
 * {@link advance} walks forward, including timers scheduled by other timers inside the window.
 */
export class ManualClock implements GpioClock {
  #now: number;
  #seq = 0;
  #timers: ManualTimer[] = [];

  constructor(start = Date.UTC(2025, 0, 1)) {
    this.#now = start;
  }

  now(): number {
    return this.#now;
  }

  setTimer(ms: number, fn: () => void): TimerHandle {
    const timer: ManualTimer = { due: this.#now + Math.max(0, ms), seq: this.#seq++, fn, cancelled: false };
    this.#timers.push(timer);
    return {
      cancel: () => {
        timer.cancelled = true;
      },
    };
  }

  /** Timers not yet fired or cancelled. */
  pending(): number {
    return this.#timers.filter((t) => !t.cancelled).length;
  }

  /** Moves time forward by `ms`, firing every timer that falls due on the way. */
  advance(ms: number): void {
    const end = this.#now + ms;
    for (;;) {
      this.#timers = this.#timers.filter((t) => !t.cancelled);
      let next: ManualTimer | undefined;
      for (const t of this.#timers) {
        if (t.due <= end && (next === undefined || t.due < next.due || (t.due === next.due && t.seq < next.seq))) next = t;
      }
      if (next === undefined) break;
      this.#now = Math.max(this.#now, next.due);
      next.cancelled = true;
      next.fn();
    }
    this.#now = end;
  }
}
