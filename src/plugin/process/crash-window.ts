/**
 * When to restart a crashed plugin process: after restart_backoff_ms · 2^(n-1) (1 s, 2 s, 4 s ...
 * by default) where n counts the crashes within restart_window_ms, and not at all once n reaches
 * restart_max_crashes (4 crashes in 5 minutes by default).
 */
import type { PluginsLimits } from '../runtime.js';

export type CrashLimits = Pick<PluginsLimits, 'restart_backoff_ms' | 'restart_max_crashes' | 'restart_window_ms'>;

export type CrashDecision = { crashes: number; give_up: true } | { crashes: number; give_up: false; delay_ms: number };

/** However many crashes, a restart is at most this far off. */
const MAX_DELAY_MS = 10 * 60_000;

export class CrashWindow {
  #times: number[] = [];

  /** Records a crash at `now` (ms) and says what to do about it. */
  record(now: number, limits: CrashLimits): CrashDecision {
    this.#times = [...this.#times.filter((t) => now - t < limits.restart_window_ms), now];
    const crashes = this.#times.length;
    if (crashes >= limits.restart_max_crashes) return { crashes, give_up: true };
    return { crashes, give_up: false, delay_ms: Math.min(MAX_DELAY_MS, limits.restart_backoff_ms * 2 ** (crashes - 1)) };
  }
}
