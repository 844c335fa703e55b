/** Injectable time source so that time-dependent logic can be tested without sleeping. */
export interface Clock {
  /** Milliseconds since the Unix epoch. */
  now(): number;
  /** A monotonic millisecond counter, for durations. */
  monotonic(): number;
}

export const systemClock: Clock = {
  now: () => Date.now(),
  monotonic: () => performance.now(),
};

/** A cancellable pending callback of a {@link TimerClock}. */
export interface TimerHandle {
  cancel(): void;
}

/** A clock that can also wake code up later: automations, entity state timers. Tests drive a manual one. */
export interface TimerClock extends Clock {
  /** Calls `fn` once after `ms` (clamped to at least 0). */
  setTimer(fn: () => void, ms: number): TimerHandle;
}

// setTimeout's longest delay; longer waits are re-armed in steps.
const MAX_TIMEOUT_MS = 2_147_483_647;

export const systemTimerClock: TimerClock = {
  ...systemClock,
  setTimer(fn, ms) {
    const due = Date.now() + Math.max(0, ms);
    let timer: NodeJS.Timeout;
    const arm = () => {
      const left = due - Date.now();
      timer = setTimeout(left > MAX_TIMEOUT_MS ? arm : fn, Math.min(Math.max(0, left), MAX_TIMEOUT_MS));
      timer.unref?.();
    };
    arm();
    return { cancel: () => clearTimeout(timer) };
  },
};
