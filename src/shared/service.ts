/**
 * The lifecycle contract every long-lived part of HomeAgent follows (kernel services, plugins,
 * device drivers).
 *
 * - The constructor only assigns: no I/O, no timers, no listeners.
 * - `start(signal)` acquires everything. `signal` aborts when shutdown begins while start is still
 *   running, so a slow start can give up early.
 * - `stop()` undoes everything `start()` did (listeners, timers, sockets, child processes, pins to
 *   their safe state) and is safe to call after a failed or partial start.
 */
import type { ServiceState } from '../api/status.js';

export type { ServiceState };
export interface Service {
  readonly name: string;
  start(signal: AbortSignal): Promise<void>;
  stop(): Promise<void>;
}
