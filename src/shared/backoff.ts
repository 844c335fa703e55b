/**
 * How long a client of a peer (the MQTT broker, Home Assistant) waits before its next connection
 * attempt. A house full of clients retrying a restarted peer in lock-step trips its flap detection
 * (and a fixed period hammers it), so HomeAgent waits with "equal jitter":
 *
 *   ceiling(n) = min(max_ms, min_ms · 2^n)            n = failed attempts since the last stable connection
 *   wait(n)    = uniform in [max(min_ms, ceiling(n) / 2), ceiling(n)]
 *
 * Equal jitter rather than full jitter: full jitter may pick a wait near 0 ms at any step, which
 * hammers a broker that is still coming up, while the lower half bound keeps the waits growing.
 * Waits are never shorter than min_ms (the first is exactly min_ms) nor longer than max_ms; from
 * the second attempt on they are spread over up to half their ceiling, which is what de-synchronises
 * many clients. The attempt count is reset by the caller once a connection has stayed up.
 */

export interface BackoffBounds {
  min_ms: number;
  max_ms: number;
}

/** The range a wait after `attempt` failed attempts (0 = first retry) is drawn from. */
export function backoffRange(attempt: number, bounds: BackoffBounds): { low: number; high: number } {
  const min = Math.max(1, bounds.min_ms);
  const max = Math.max(min, bounds.max_ms);
  // 2^attempt overflows to Infinity long after it passed any max; Math.min keeps it finite.
  const ceiling = Math.min(max, min * 2 ** Math.max(0, attempt));
  return { low: Math.max(min, ceiling / 2), high: ceiling };
}

/** One wait in milliseconds; `random` returns [0, 1) like Math.random. */
export function backoffDelay(attempt: number, bounds: BackoffBounds, random: () => number = Math.random): number {
  const { low, high } = backoffRange(attempt, bounds);
  return Math.round(low + (high - low) * Math.min(Math.max(random(), 0), 1));
}

/** The attempt counter around {@link backoffDelay}; bounds are read at every wait so a changed setting applies at once. */
export class ReconnectBackoff {
  readonly #bounds: () => BackoffBounds;
  readonly #random: () => number;
  #attempt = 0;

  constructor(bounds: () => BackoffBounds, random: () => number = Math.random) {
    this.#bounds = bounds;
    this.#random = random;
  }

  /** Failed attempts since the last reset. */
  get attempts(): number {
    return this.#attempt;
  }

  /** The wait before the next attempt; counts one more failed attempt. */
  next(): number {
    const delay = backoffDelay(this.#attempt, this.#bounds(), this.#random);
    this.#attempt++;
    return delay;
  }

  /** A connection stayed up: the next outage starts again at min_ms. */
  reset(): void {
    this.#attempt = 0;
  }
}
