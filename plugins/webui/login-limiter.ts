/**
 * Slows password guessing: an address with login_max_failures failed logins within login_window_ms
 * is refused (429) until the oldest of those failures leaves the window. A successful login clears
 * the address. The table is bounded, so a flood of addresses cannot grow memory without end; when
 * it is full the address whose failures are oldest is forgotten first.
 */

/** Addresses tracked at most. */
const MAX_ADDRESSES = 10_000;

export interface LoginLimiterOptions {
  maxFailures: () => number;
  windowMs: () => number;
  now?: () => number;
  maxAddresses?: number;
}

export class LoginLimiter {
  readonly #options: LoginLimiterOptions;
  readonly #now: () => number;
  readonly #maxAddresses: number;
  /** Address → epoch ms of its recent failures, oldest first. Map order: least recently failed first. */
  readonly #failures = new Map<string, number[]>();

  constructor(options: LoginLimiterOptions) {
    this.#options = options;
    this.#now = options.now ?? Date.now;
    this.#maxAddresses = options.maxAddresses ?? MAX_ADDRESSES;
  }

  /** 0 when the address may try a login now, else how many ms until it may. */
  retryAfterMs(address: string): number {
    const recent = this.#recent(address, this.#now());
    const max = this.#options.maxFailures();
    if (recent.length < max) return 0;
    // The attempt becomes possible again when enough failures have left the window.
    const freeing = recent[recent.length - max];
    return Math.max(1, (freeing ?? 0) + this.#options.windowMs() - this.#now());
  }

  failure(address: string): void {
    const now = this.#now();
    const recent = this.#recent(address, now);
    recent.push(now);
    // Re-inserted so that Map order stays least recently failed first.
    this.#failures.delete(address);
    this.#failures.set(address, recent.slice(-this.#options.maxFailures()));
    while (this.#failures.size > this.#maxAddresses) {
      const oldest = this.#failures.keys().next().value;
      if (oldest === undefined) break;
      this.#failures.delete(oldest);
    }
  }

  success(address: string): void {
    this.#failures.delete(address);
  }

  /** Addresses with failures still counted (for health and tests). */
  get tracked(): number {
    return this.#failures.size;
  }

  #recent(address: string, now: number): number[] {
    const since = now - this.#options.windowMs();
    const recent = (this.#failures.get(address) ?? []).filter((at) => at > since);
    if (recent.length === 0) this.#failures.delete(address);
    return recent;
  }
}
