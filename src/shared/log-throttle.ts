/**
 * A storm of identical events (a client opening thousands of connections, a peer reset on every
 * one) must reach the journal as a few lines, not thousands: each kind of event is logged at most
 * `perWindow` times per `windowMs`, and the next line logged says how many were left out before it.
 * The kinds are fixed names chosen by the code (`over_limit`, `peer_error`), never a peer's address,
 * so the table stays as small as the code that uses it.
 */
import { type Clock, systemClock } from './clock.js';

export interface LogThrottleOptions {
  windowMs: number;
  perWindow: number;
  clock?: Pick<Clock, 'monotonic'>;
}

/** What {@link LogThrottle.admit} answers for an event that may be logged. */
export interface Admitted {
  /** Events of this kind not logged since the last one that was. */
  suppressed: number;
}

interface Window {
  start: number;
  logged: number;
  suppressed: number;
}

export class LogThrottle {
  readonly #options: LogThrottleOptions;
  readonly #clock: Pick<Clock, 'monotonic'>;
  readonly #windows = new Map<string, Window>();

  constructor(options: LogThrottleOptions) {
    this.#options = options;
    this.#clock = options.clock ?? systemClock;
  }

  /** Counts one event of `kind`; the answer says whether to log it (and how many were left out), undefined to stay quiet. */
  admit(kind: string): Admitted | undefined {
    const now = this.#clock.monotonic();
    let window = this.#windows.get(kind);
    if (!window) {
      window = { start: now, logged: 0, suppressed: 0 };
      this.#windows.set(kind, window);
    } else if (now - window.start >= this.#options.windowMs) {
      window.start = now;
      window.logged = 0;
    }
    if (window.logged >= this.#options.perWindow) {
      window.suppressed++;
      return undefined;
    }
    window.logged++;
    const admitted = { suppressed: window.suppressed };
    window.suppressed = 0;
    return admitted;
  }
}
