/**
 * How the sysfs back end learns that an input changed.
 *
 * - `onoff` (optional dependency): the kernel wakes an epoll() on the value file at each edge, so
 *   the latency is a few hundred microseconds. onoff hard-codes /sys/class/gpio and takes the
 *   kernel's GPIO number, so it is used only for the default root and is given base + BCM
 *   (chip-offset.ts); it never sees a BCM number.
 * - polling (always available): the value file is read every `poll_interval_ms` (default 10 ms).
 *   An edge is seen up to one interval late (10 ms + one read) and a pulse shorter than the
 *   interval can be missed entirely; good enough for buttons and reed contacts, not for counting
 *   fast pulses.
 */
import { readFile } from 'node:fs/promises';
import { DEFAULT_SYSFS_ROOT } from './chip-offset.js';
import { type GpioValue, parseGpioValue } from './gpio-backend.js';
import type { GpioClock, TimerHandle } from './gpio-clock.js';

export const DEFAULT_POLL_INTERVAL_MS = 10;

export interface SysfsEdgeRequest {
  root: string;
  /** base + BCM. */
  kernelNumber: number;
  valuePath: string;
  activeLow: boolean;
}

export interface SysfsEdgeSource {
  readonly kind: 'onoff' | 'poll';
  /** Starts reporting the logical level after every change the source notices. */
  start(onLevel: (value: GpioValue) => void, onError: (error: unknown) => void): void;
  stop(): Promise<void>;
}

export type SysfsEdgeSourceFactory = (request: SysfsEdgeRequest) => Promise<SysfsEdgeSource>;

/** The part of onoff's Gpio class used here (onoff 6.x). */
export interface OnoffGpio {
  watch(callback: (error: Error | null | undefined, value: 0 | 1) => void): void;
  unwatchAll(): void;
  unexport(): void;
}
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

export function onoffEdgeSource(Gpio: OnoffGpioClass, request: SysfsEdgeRequest): SysfsEdgeSource {
  let gpio: OnoffGpio | undefined;
  return {
    kind: 'onoff',
    start(onLevel, onError) {
      // The pin is already exported and configured; onoff only opens the value file for epoll.
      // Both edges are requested so that releases reach the debouncer; edge selection is ours.
      gpio = new Gpio(request.kernelNumber, 'in', 'both', { activeLow: request.activeLow, reconfigureDirection: false });
      gpio.watch((error, value) => {
        if (error) onError(error);
        else onLevel(value);
      });
    },
    async stop() {
      gpio?.unwatchAll();
      // Closes onoff's value descriptor; the back end's own unexport afterwards tolerates EINVAL.
      try {
        gpio?.unexport();
      } catch {
        // already gone
      }
      gpio = undefined;
    },
  };
}

export interface EdgeSourceChoice {
  clock: GpioClock;
  pollIntervalMs?: number;
  /** `auto` uses onoff where it can; `poll` never loads it (tests, or a broken addon). */
  mode?: 'auto' | 'poll';
  load?: () => Promise<OnoffGpioClass | undefined>;
}

/** onoff for the real /sys/class/gpio when it loads, polling otherwise. */
export function defaultEdgeSourceFactory(choice: EdgeSourceChoice): SysfsEdgeSourceFactory {
  let onoff: Promise<OnoffGpioClass | undefined> | undefined;
  return async (request) => {
    if ((choice.mode ?? 'auto') === 'auto' && request.root === DEFAULT_SYSFS_ROOT) {
      onoff ??= (choice.load ?? loadOnoff)();
      const Gpio = await onoff;
      if (Gpio) return onoffEdgeSource(Gpio, request);
    }
    return pollingEdgeSource(request, choice.clock, choice.pollIntervalMs);
  };
}
