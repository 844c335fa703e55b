/**
 * Reconnect and restart waits for the voice plugin's long-lived peers (the keyphrase spotter's
 * pocketsphinx process, each Wyoming satellite). A peer that keeps failing is retried ever more
 * slowly, up to a ceiling, so a satellite that is unplugged for the night costs one connection
 * attempt a minute rather than a busy loop; a peer that worked for a while starts over at the
 * shortest wait. Jitter keeps several satellites that lost the same Wi-Fi from reconnecting in step.
 */

export interface BackoffLimits {
  minMs: number;
  maxMs: number;
}

export class Backoff {
  readonly #limits: () => BackoffLimits;
  readonly #random: () => number;
  #failures = 0;

  /** `limits` is read on every wait, so a changed setting applies to the next retry. */
  constructor(limits: () => BackoffLimits, random: () => number = Math.random) {
    this.#limits = limits;
    this.#random = random;
  }

  /** Consecutive failures since the last success. */
  get failures(): number {
    return this.#failures;
  }

  /** The wait before the next attempt: min·2^(failures), capped at max, minus up to 20 % jitter. */
  next(): number {
    const { minMs, maxMs } = this.#limits();
    const ceiling = Math.max(minMs, maxMs);
    const base = Math.min(ceiling, minMs * 2 ** Math.min(this.#failures, 30));
    this.#failures++;
    return Math.max(minMs, Math.round(base * (1 - 0.2 * this.#random())));
  }

  /** The peer worked: the next failure waits the shortest time again. */
  reset(): void {
    this.#failures = 0;
  }
}
