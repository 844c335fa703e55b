/**
 * Health checks and the systemd watchdog. The watchdog ping is sent from a timer on the main
 * event loop and only while every check passes, so a blocked loop or a state database that can
 * no longer be written stops the pings and systemd restarts the service.
 */
import type { Logger } from '../log/logger.js';
import { describeError } from '../shared/errors.js';
import type { Service } from '../shared/service.js';
import type { Notifier } from './notifier.js';

export interface HealthResult {
  name: string;
  ok: boolean;
  detail: string;
}

export interface HealthCheck {
  readonly name: string;
  run(): HealthResult | Promise<HealthResult>;
}

export interface HealthReport {
  healthy: boolean;
  checks: HealthResult[];
}

export async function runChecks(checks: readonly HealthCheck[]): Promise<HealthReport> {
  const results: HealthResult[] = [];
  for (const check of checks) {
    try {
      results.push(await check.run());
    } catch (error) {
      results.push({ name: check.name, ok: false, detail: describeError(error) });
    }
  }
  return { healthy: results.every((r) => r.ok), checks: results };
}

/**
 * Event-loop stalls over a window: the longest time a sampling timer fired late since the window
 * was last closed. (perf_hooks' histogram is not used: resetting it forgets the interval in
 * progress, so a stall that starts right after a reset is never recorded.) `run()` reports the
 * open window without closing it, so `homeagentctl health` does not disturb the watchdog's view.
 */
export class LoopDelayCheck implements HealthCheck {
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

export interface WatchdogOptions {
  notifier: Notifier;
  checks: () => readonly HealthCheck[];
  loop: LoopDelayCheck;
  log: Logger;
  /** Called when health flips, so the daemon can update its status line. */
  onHealthChange: (report: HealthReport) => void;
}

/** Feeds systemd's watchdog at half of WATCHDOG_USEC while health passes. */
export class Watchdog implements Service {
  readonly name = 'watchdog';
  readonly #options: WatchdogOptions;
  #timer: NodeJS.Timeout | undefined;
  #healthy = true;
  #running = false;

  constructor(options: WatchdogOptions) {
    this.#options = options;
  }

  async start(): Promise<void> {
    this.#options.loop.enable();
    const interval = this.#options.notifier.watchdogIntervalMs();
    if (interval === undefined) return;
    this.#options.log.info({ interval_ms: interval }, 'feeding the systemd watchdog');
    this.#timer = setInterval(() => void this.tick(), interval);
  }

  async stop(): Promise<void> {
    if (this.#timer) clearInterval(this.#timer);
    this.#timer = undefined;
    this.#options.loop.disable();
  }

  /** One watchdog period: check health, ping only when healthy. Overlapping ticks are skipped. */
  async tick(): Promise<void> {
    if (this.#running) return;
    this.#running = true;
    try {
      const stallMs = this.#options.loop.closeWindow();
      this.#options.log.trace({ stall_ms: Math.round(stallMs) }, 'watchdog tick');
      const report = await runChecks(this.#options.checks());
      if (report.healthy) this.#options.notifier.watchdog();
      if (report.healthy !== this.#healthy) {
        this.#healthy = report.healthy;
        const failing = report.checks.filter((c) => !c.ok);
        if (report.healthy) this.#options.log.info('health checks pass again; feeding the watchdog');
        else this.#options.log.error({ failing }, 'health check failed; not feeding the systemd watchdog');
        this.#options.onHealthChange(report);
      }
    } finally {
      this.#running = false;
    }
  }
}
