/**
 * Time for drivers, emulators and the poller. Conversions take milliseconds and polls happen every
 * few seconds; taking both from one injected source lets tests move simulated time instead of
 * sleeping, and keeps the simulated chips and the drivers on the same timeline.
 */

/** A scheduled callback; `clear()` cancels it and is safe to call after it has fired. */
export interface DeviceTimer {
  clear(): void;
}

export interface DeviceClock {
  /** Wall-clock milliseconds since the Unix epoch, for event timestamps. */
  now(): number;
  /** Monotonic milliseconds, for conversion times and intervals: a Pi without an RTC jumps its wall clock when NTP syncs. */
  monotonic(): number;
  /** Runs `callback` once after `ms` monotonic milliseconds. */
  setTimer(ms: number, callback: () => void): DeviceTimer;
  /** Resolves after `ms` monotonic milliseconds. */
  sleep(ms: number): Promise<void>;
}

export const systemDeviceClock: DeviceClock = {
  now: () => Date.now(),
  monotonic: () => performance.now(),
  setTimer: (ms, callback) => {
    // Unref'd: a pending poll alone never keeps the daemon (or a test process) alive.
    const handle = setTimeout(callback, ms).unref();
    return { clear: () => clearTimeout(handle) };
  },
  sleep: (ms) => new Promise((resolve) => setTimeout(resolve, ms)),
};
