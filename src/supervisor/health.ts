/**
 * The event-loop measurement behind the supervisor's event_loop component and the systemd
 * watchdog. The ping itself is sent by the Supervisor (supervisor.ts) from a timer on the main
 * event loop: a blocked loop cannot ping, and the stall measured once it runs again keeps the next
 * ping back too, so systemd sees the stall even when the loop recovers just in time.
 */

export interface HealthResult {
  name: string;
  ok: boolean;
  detail: string;
}

/**
 * Event-loop stalls over a window: the longest time a sampling timer fired late since the window
 * was last closed. (perf_hooks' histogram is not used: resetting it forgets the interval in
 * progress, so a stall that starts right after a reset is never recorded.) `run()` reports the
 * open window without closing it. The Supervisor is the one caller of `closeWindow()`: it hands each
 * closed window's stall both to the watchdog and to the next health round, so neither misses one
 * the other closed.
 */
export class LoopDelayCheck {
  readonly name = 'event_loop';
  static readonly SAMPLE_MS = 100;
  readonly #maxDelayMs: () => number;
  #timer: NodeJS.Timeout | undefined;
  #lastSample = 0;
  #windowMaxMs = 0;
  #lastWindowMaxMs = 0;

  constructor(maxDelayMs: () => number) {
    this.#maxDelayMs = maxDelayMs;
  }

  enable(): void {
    this.#lastSample = performance.now();
    this.#timer = setInterval(() => this.#sample(), LoopDelayCheck.SAMPLE_MS);
    this.#timer.unref();
  }

  disable(): void {
    if (this.#timer) clearInterval(this.#timer);
    this.#timer = undefined;
  }

  /** Closes the current window and starts a new one; returns the window's worst stall in ms. */
  closeWindow(): number {
    this.#sample();
    this.#lastWindowMaxMs = this.#windowMaxMs;
    this.#windowMaxMs = 0;
    return this.#lastWindowMaxMs;
  }

  run(): HealthResult {
    const worst = Math.max(this.#windowMaxMs, this.#lastWindowMaxMs);
    const limit = this.#maxDelayMs();
    return {
      name: this.name,
      ok: worst <= limit,
      detail: `longest event-loop stall ${Math.round(worst)} ms (limit ${limit} ms)`,
    };
  }

  /** Lateness since the previous sample beyond the sampling period counts as a stall. */
  #sample(): void {
    if (this.#timer === undefined) return;
    const now = performance.now();
    const late = now - this.#lastSample - LoopDelayCheck.SAMPLE_MS;
    this.#windowMaxMs = Math.max(this.#windowMaxMs, late);
    this.#lastSample = now;
  }
}
