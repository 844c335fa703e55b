/**
 * Reconnect waits for the forward client: reconnect_min_ms, doubling up to reconnect_max_ms, back
 * to the minimum once a connection stayed up long enough to count as healthy (so a peer that
 * accepts and drops at once is not hammered).
 */

export interface BackoffOptions {
  minMs: number;
  maxMs: number;
  /** A connection that lasted this long resets the waits. */
  healthyMs: number;
}

export class Backoff {
  readonly #options: BackoffOptions;
  #next: number;

  constructor(options: BackoffOptions) {
    this.#options = options;
    this.#next = options.minMs;
  }

  /** The wait before the next attempt; each call doubles the one after it. */
  next(): number {
    const wait = this.#next;
    this.#next = Math.min(this.#options.maxMs, this.#next * 2);
    return wait;
  }

  /** Called when a connection ends after lasting `upMs`. */
  connectionEnded(upMs: number): void {
    if (upMs >= this.#options.healthyMs) this.#next = this.#options.minMs;
  }
}
