/**
 * How the sysfs back end learns that an input changed, and the small part of onoff it relies on.
 *
 * - `onoff` (optional dependency): when the pin was opened through onoff's Gpio, its watch() puts
 *   the value file into the kernel's epoll set, which wakes at each edge; the latency is a few
 *   hundred microseconds. Where epoll refuses the value file (it is not a real sysfs attribute, or
 *   the addon is broken) the source falls back to polling and says so once.
 * - polling (always available): the value file is read every `poll_interval_ms` (default 10 ms).
 *   An edge is seen up to one interval late (10 ms + one read) and a pulse shorter than the
 *   interval can be missed entirely; good enough for buttons and reed contacts, not for counting
 *   fast pulses.
 */
import { readFile } from 'node:fs/promises';
import { type GpioValue, parseGpioValue } from './gpio-backend.js';
import type { GpioClock, TimerHandle } from './gpio-clock.js';

export const DEFAULT_POLL_INTERVAL_MS = 10;

/** The part of onoff's Gpio class used here (onoff 6.x; its bundled types are not needed). */
export interface OnoffGpio {
  read(): Promise<0 | 1>;
  write(value: 0 | 1): Promise<void>;
  direction(): string;
  edge(): string;
  activeLow(): boolean;
  watch(callback: (error: Error | null | undefined, value: 0 | 1) => void): void;
  unwatchAll(): void;
  unexport(): void;
}

/**
 * onoff's constructor: exports `gpio` (the kernel number, base + BCM) unless it is exported, then
 * writes active_low, direction and (inputs) edge, in that order, and keeps the value file open.
 */
export type OnoffGpioClass = new (
  gpio: number,
  direction: 'in' | 'out' | 'high' | 'low',
  edge?: 'none' | 'rising' | 'falling' | 'both',
  options?: { activeLow?: boolean; reconfigureDirection?: boolean },
) => OnoffGpio;

/** onoff's Gpio class, or undefined when the package is not installed or its addon fails to load. */
export async function loadOnoff(moduleName = 'onoff'): Promise<OnoffGpioClass | undefined> {
  try {
    // A variable specifier: onoff is optional and may be missing when this is compiled.
    const mod = (await import(moduleName)) as { Gpio?: unknown; default?: { Gpio?: unknown } };
    const Gpio = mod.Gpio ?? mod.default?.Gpio;
    return typeof Gpio === 'function' ? (Gpio as OnoffGpioClass) : undefined;
  } catch {
    return undefined;
  }
}

export interface SysfsEdgeRequest {
  root: string;
  /** base + BCM. */
  kernelNumber: number;
  valuePath: string;
  activeLow: boolean;
  /** The pin's onoff Gpio when it was opened through onoff (edges can then come from epoll). */
  gpio?: OnoffGpio;
}

export interface SysfsEdgeSource {
  /** Where levels come from; an onoff source that had to fall back reports `poll` once started. */
  readonly kind: 'onoff' | 'poll';
  /** Starts reporting the logical level after every change the source notices. */
  start(onLevel: (value: GpioValue) => void, onError: (error: unknown) => void): void;
  stop(): Promise<void>;
}

export type SysfsEdgeSourceFactory = (request: SysfsEdgeRequest) => Promise<SysfsEdgeSource>;

export function pollingEdgeSource(request: SysfsEdgeRequest, clock: GpioClock, intervalMs = DEFAULT_POLL_INTERVAL_MS): SysfsEdgeSource {
  let timer: TimerHandle | undefined;
  let running = false;
  let inFlight: Promise<void> = Promise.resolve();
  return {
    kind: 'poll',
    start(onLevel, onError) {
      running = true;
      let last: GpioValue | undefined;
      let failing = false;
      const readOnce = async () => {
        try {
          const value = parseGpioValue(await readFile(request.valuePath, 'utf8'), request.valuePath);
          failing = false;
          if (running && value !== last) {
            last = value;
            onLevel(value);
          }
        } catch (error) {
          // Reported once per failure streak, not every interval.
          if (running && !failing) onError(error);
          failing = true;
        }
      };
      const tick = () => {
        inFlight = readOnce().then(() => {
          if (running) timer = clock.setTimer(intervalMs, tick);
        });
      };
      tick();
    },
    async stop() {
      running = false;
      timer?.cancel();
      await inFlight;
    },
  };
}

/**
 * Edges from onoff's watch() on a pin onoff opened. `fallback` is started instead when epoll
 * refuses the value file (watch() throws synchronously, e.g. EPERM on a regular file);
 * `onFallback` hears why.
 */
export function onoffEdgeSource(gpio: OnoffGpio, fallback: () => SysfsEdgeSource, onFallback: (error: unknown) => void): SysfsEdgeSource {
  let watching = false;
  let polling: SysfsEdgeSource | undefined;
  return {
    get kind() {
      return polling === undefined ? 'onoff' : 'poll';
    },
    start(onLevel, onError) {
      try {
        // Both edges were requested at open, so releases reach the debouncer; edge selection is ours.
        gpio.watch((error, value) => {
          if (error) onError(error);
          else onLevel(value);
        });
        watching = true;
      } catch (error) {
        // onoff keeps the listener it could not register; unwatchAll() drops it (and then fails
        // to remove the descriptor from epoll, which never had it). Without this its unexport()
        // would throw before closing the value file.
        try {
          gpio.unwatchAll();
        } catch {
          // expected, see above
        }
        onFallback(error);
        polling = fallback();
        polling.start(onLevel, onError);
      }
    },
    async stop() {
      if (watching) gpio.unwatchAll();
      watching = false;
      await polling?.stop();
    },
  };
}

export interface EdgeSourceChoice {
  clock: GpioClock;
  pollIntervalMs?: number;
  /** `auto` uses onoff's epoll for pins opened through onoff; `poll` always polls. */
  mode?: 'auto' | 'poll';
  /** Hears, once per factory, that epoll did not work and inputs are polled instead. */
  warn?: (message: string) => void;
}

/** epoll through onoff for pins onoff opened, polling otherwise or once epoll has failed. */
export function defaultEdgeSourceFactory(choice: EdgeSourceChoice): SysfsEdgeSourceFactory {
  // One failure is enough: every value file of a tree fails the same way, so later pins poll at
  // once and the warning is said once.
  let epollFailed = false;
  return async (request) => {
    const poll = () => pollingEdgeSource(request, choice.clock, choice.pollIntervalMs);
    const gpio = request.gpio;
    if ((choice.mode ?? 'auto') !== 'auto' || gpio === undefined || epollFailed) return poll();
    return onoffEdgeSource(gpio, poll, (error) => {
      if (epollFailed) return;
      epollFailed = true;
      const reason = error instanceof Error ? error.message : String(error);
      choice.warn?.(
        `onoff could not watch ${request.valuePath} with epoll (${reason}); inputs are polled every ${choice.pollIntervalMs ?? DEFAULT_POLL_INTERVAL_MS} ms instead`,
      );
    });
  };
}
