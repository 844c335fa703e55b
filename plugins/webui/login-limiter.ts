/**
 * Slows guessing of the password (logins) and of the API key (requests carrying a wrong key), per
 * client address, with a growing delay instead of a lock-out: the first login_max_failures
 * failures cost nothing; after that each further attempt has to wait login_delay_ms after the
 * last failure, doubling with every failure up to login_max_delay_ms. An attempt made while the
 * address has to wait is refused (429) without being checked and without counting, so the owner
 * who mistyped the password, or shares an address with whoever is guessing, gets in with the
 * right one once the short wait is over; a guesser gets at most one try per login_max_delay_ms.
 * A success clears the address; an address without a failure for login_window_ms is forgotten.
 * The table is bounded, so a flood of addresses cannot grow memory without end; when it is full
 * the address that failed longest ago is forgotten first.
 */

/** Addresses tracked at most. */
const MAX_ADDRESSES = 10_000;

export interface LoginLimiterOptions {
  /** Failures that cost no wait (plugin.webui.login_max_failures). */
  maxFailures: () => number;
  /** An address with no failure for this long is forgotten (plugin.webui.login_window_ms). */
  windowMs: () => number;
  /** The first wait (plugin.webui.login_delay_ms). */
  delayMs: () => number;
  /** The longest wait (plugin.webui.login_max_delay_ms). */
  maxDelayMs: () => number;
  now?: () => number;
  maxAddresses?: number;
}

interface Failures {
  count: number;
  /** Epoch ms of the last failure. */
  last: number;
}

export class LoginLimiter {
  readonly #options: LoginLimiterOptions;
  readonly #now: () => number;
  readonly #maxAddresses: number;
  /** Address → its failures. Map order: least recently failed first. */
  readonly #failures = new Map<string, Failures>();

  constructor(options: LoginLimiterOptions) {
    this.#options = options;
    this.#now = options.now ?? Date.now;
    this.#maxAddresses = options.maxAddresses ?? MAX_ADDRESSES;
  }

  /** 0 when the address may try now, else how many ms until it may. */
  retryAfterMs(address: string): number {
    const now = this.#now();
    const failures = this.#current(address, now);
    if (failures === undefined) return 0;
    const wait = this.#waitAfter(failures.count);
    return Math.max(0, failures.last + wait - now);
  }

  /** The wait after `count` failures in a row: none up to maxFailures, then doubling to the cap. */
  #waitAfter(count: number): number {
    const over = count - this.#options.maxFailures();
    if (over < 0) return 0;
    const base = this.#options.delayMs();
    const cap = Math.max(base, this.#options.maxDelayMs());
    // 2^over overflows to Infinity long after the cap; min() keeps it bounded either way.
    return Math.min(cap, base * 2 ** over);
  }

  failure(address: string): void {
    const now = this.#now();
    const failures = this.#current(address, now) ?? { count: 0, last: now };
    // Re-inserted so that Map order stays least recently failed first.
    this.#failures.delete(address);
    this.#failures.set(address, { count: failures.count + 1, last: now });
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

  /** The address's failures, unless it has been quiet for the window (then it is forgotten). */
  #current(address: string, now: number): Failures | undefined {
    const failures = this.#failures.get(address);
    if (failures === undefined) return undefined;
    // The window counts from the end of the wait, so a long wait never outlasts its own failures.
    if (now - failures.last >= this.#waitAfter(failures.count) + this.#options.windowMs()) {
      this.#failures.delete(address);
      return undefined;
    }
    return failures;
  }
}
