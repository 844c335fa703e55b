/**
 * The safety layer over a GPIO back end: the configured pins by name, each output with a declared
 * safe state that holds whenever HomeAgent is not in control.
 *
 * - start: every output is opened directly at its safe value, before anything else happens; the
 *   crash watcher is armed; only then do outputs move to an `initial` that differs from safe.
 * - stop: outputs go to their safe value, pins are released, the watcher is disarmed. If a safe
 *   write fails, that pin stays open and the watcher is released without disarming, so it tries
 *   again from its own process.
 * - crash: the watcher (safe-state-watcher.ts, a detached process holding a pipe to this one)
 *   applies the safe values when this process ends without stopping: exception, SIGKILL, OOM.
 * - max_on_time: an output that has been on (logical 1) longer than its limit is switched off
 *   (its safe value, or 0 for `keep`) by a timer here, even if nobody calls; the watcher covers
 *   the case where this process is gone.
 * - pulse: on for `pulse_ms`, then back to rest, for momentary relays (garage doors, bells).
 *
 * `safe: keep` opts a pin out (the peers' "keep state" option): it is opened at `initial` and left
 * as it is at stop and after a crash.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { existsSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import type { Socket } from 'node:net';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { HomeAgentError, type Service } from '../../src/sdk/index.js';
import {
  directionError,
  type EdgeEvent,
  type GpioBackend,
  type GpioBias,
  type GpioDirection,
  type GpioEdge,
  type GpioPin,
  type GpioValue,
  ioError,
} from './gpio-backend.js';
import { type GpioClock, systemGpioClock, type TimerHandle } from './gpio-clock.js';
import { ARMED_LINE, DISARM_LINE, type SafeStateReport, type SafeStateSpec, type SafeStateStep } from './safe-state.js';

export type SafeValue = GpioValue | 'keep';

/** One configured pin (the config keys are the same, snake_case). */
export interface GuardedPinConfig {
  /** Unique name, e.g. `kitchen light`. */
  name: string;
  bcm: number;
  direction: GpioDirection;
  active_low?: boolean;
  edge?: GpioEdge;
  debounce_ms?: number;
  bias?: GpioBias;
  /** Output value after start. Default: the safe value (0 for `keep`). */
  initial?: GpioValue;
  /** Output value whenever HomeAgent is not in control. Default 0. */
  safe?: SafeValue;
  /** Default length of {@link PinGuard.pulse}. */
  pulse_ms?: number;
  /** Longest time an output may stay on (logical 1), in seconds; 0 or absent = no limit. */
  max_on_time_s?: number;
}

export type PinGuardEvent =
  | { type: 'max_on_time'; name: string; bcm: number; on_ms: number; at: number }
  | { type: 'safe_state'; reason: 'start' | 'stop'; pins: string[]; errors: string[] }
  | { type: 'edge'; name: string; event: EdgeEvent }
  | { type: 'pin_error'; name: string; bcm: number; error: HomeAgentError }
  | { type: 'watcher_exited'; code: number | null; signal: string | null }
  /** Outputs have safe values but the back end cannot restore them from another process. */
  | { type: 'no_crash_protection'; pins: string[]; reason: string }
  /** The previous run ended without a clean stop and its watcher applied the safe state. */
  | { type: 'previous_crash'; report: SafeStateReport };

export interface WatcherOptions {
  /** The compiled watcher script. Default: safe-state-watcher.js next to this module. */
  script?: string;
  /** Node binary. Default: this process's. */
  node?: string;
  /** Where the watcher reports what it did; read (and removed) at the next start. */
  reportFile?: string;
  /** Where to keep the spec for `safe-state-watcher.js --apply <file>` (systemd ExecStopPost=). */
  specFile?: string;
  /** How long to wait for the watcher to come up. Default 10 s (a cold start on a Pi Zero 2 is slow). */
  armTimeoutMs?: number;
}

export interface PinGuardOptions {
  backend: GpioBackend;
  pins: readonly GuardedPinConfig[];
  clock?: GpioClock;
  onEvent?: (event: PinGuardEvent) => void;
  /** `false` runs without a crash watcher (tests, or a back end where nothing outlives the process). */
  watcher?: false | WatcherOptions;
}

/** Upper bounds: a pulse or limit longer than this is a configuration mistake. */
export const MAX_PULSE_MS = 60_000;
export const MAX_ON_TIME_S = 7 * 24 * 3600;
const MAX_ON_RETRY_MS = 5_000;
const DISARM_WAIT_MS = 5_000;

interface Guarded {
  config: GuardedPinConfig;
  pin: GpioPin | undefined;
  /** Last value written (outputs). */
  value: GpioValue | undefined;
  onSince: number | undefined;
  limit: TimerHandle | undefined;
  pulse: ActivePulse | undefined;
}

interface ActivePulse {
  timer: TimerHandle;
  /** Resolves the caller's pulse() when something else ends the pulse early. */
  superseded: () => void;
}

function configError(message: string, details: Record<string, unknown> = {}): HomeAgentError {
  return new HomeAgentError('HA_ERR_GPIO_CONFIG', message, { details });
}

/** Checks the pin list as a whole (unique names and pins, limits that make sense). */
export function validateGuardedPins(pins: readonly GuardedPinConfig[]): void {
  const names = new Set<string>();
  const bcms = new Set<number>();
  for (const p of pins) {
    if (typeof p.name !== 'string' || p.name.trim() === '') throw configError('every GPIO pin needs a name');
    if (names.has(p.name)) throw configError(`GPIO pin name "${p.name}" is used twice`, { name: p.name });
    if (bcms.has(p.bcm)) throw configError(`GPIO ${p.bcm} is configured twice`, { bcm: p.bcm });
    names.add(p.name);
    bcms.add(p.bcm);
    const isOut = p.direction === 'out';
    if (p.safe !== undefined && p.safe !== 0 && p.safe !== 1 && p.safe !== 'keep')
      throw configError(`"${p.name}": safe must be 0, 1 or keep`);
    if (!isOut && (p.safe !== undefined || p.pulse_ms !== undefined || p.max_on_time_s !== undefined || p.initial !== undefined)) {
      throw configError(`"${p.name}" is an input: safe, initial, pulse_ms and max_on_time_s apply to outputs only`, { name: p.name });
    }
    if (p.pulse_ms !== undefined && (!Number.isInteger(p.pulse_ms) || p.pulse_ms <= 0 || p.pulse_ms > MAX_PULSE_MS)) {
      throw configError(`"${p.name}": pulse_ms must be an integer from 1 to ${MAX_PULSE_MS}`, { name: p.name });
    }
    const limit = p.max_on_time_s ?? 0;
    if (!Number.isFinite(limit) || limit < 0 || limit > MAX_ON_TIME_S) {
      throw configError(`"${p.name}": max_on_time_s must be from 0 (no limit) to ${MAX_ON_TIME_S}`, { name: p.name });
    }
    if (limit > 0 && p.safe === 1) throw configError(`"${p.name}": max_on_time_s switches the output off, but its safe value is on (1)`);
    if (limit > 0 && (p.initial ?? 0) === 1) throw configError(`"${p.name}": an output with max_on_time_s cannot start on`);
  }
}

/** The compiled watcher next to this module. */
export function defaultWatcherScript(): string {
  return fileURLToPath(new URL('./safe-state-watcher.js', import.meta.url));
}

export class PinGuard implements Service {
  readonly name = 'gpio';
  readonly #backend: GpioBackend;
  readonly #clock: GpioClock;
  readonly #onEvent: (event: PinGuardEvent) => void;
  readonly #watcherOptions: false | WatcherOptions;
  readonly #configs: readonly GuardedPinConfig[];
  readonly #pins = new Map<string, Guarded>();
  readonly #edgeListeners = new Map<string, Set<(event: EdgeEvent) => void>>();
  #watcher: ChildProcess | undefined;
  #running = false;

  constructor(options: PinGuardOptions) {
    this.#backend = options.backend;
    this.#clock = options.clock ?? systemGpioClock;
    this.#onEvent = options.onEvent ?? (() => {});
    this.#watcherOptions = options.watcher ?? {};
    this.#configs = options.pins;
    for (const config of options.pins) {
      this.#pins.set(config.name, { config, pin: undefined, value: undefined, onSince: undefined, limit: undefined, pulse: undefined });
    }
  }

  /** The crash watcher's pid while it is armed. */
  get watcherPid(): number | undefined {
    return this.#watcher?.pid;
  }

  async start(signal: AbortSignal): Promise<void> {
    // The list as given: the by-name map would already have merged a duplicate name.
    validateGuardedPins(this.#configs);
    this.#reportPreviousRun();
    try {
      const outputs = [...this.#pins.values()].filter((g) => g.config.direction === 'out');
      for (const g of outputs) {
        signal.throwIfAborted();
        const c = g.config;
        const atOpen = c.safe === 'keep' ? (c.initial ?? 0) : (c.safe ?? 0);
        g.pin = await this.#backend.open(c.bcm, { direction: 'out', active_low: c.active_low ?? false, initial: atOpen });
        this.#track(g, atOpen);
        this.#watchErrors(g);
      }
      this.#emit({
        type: 'safe_state',
        reason: 'start',
        pins: outputs.filter((g) => g.config.safe !== 'keep').map((g) => g.config.name),
        errors: [],
      });
      signal.throwIfAborted();
      if (this.#watcherOptions !== false) await this.#armWatcher(this.#watcherOptions, outputs);
      this.#running = true;
      for (const g of outputs) {
        const initial = g.config.initial;
        if (initial !== undefined && initial !== g.value) await this.write(g.config.name, initial);
      }
      for (const g of this.#pins.values()) {
        if (g.config.direction !== 'in') continue;
        signal.throwIfAborted();
        const c = g.config;
        g.pin = await this.#backend.open(c.bcm, {
          direction: 'in',
          active_low: c.active_low ?? false,
          edge: c.edge ?? 'none',
          debounce_ms: c.debounce_ms ?? 0,
          bias: c.bias ?? 'as-is',
        });
        this.#watchErrors(g);
        if ((c.edge ?? 'none') !== 'none') g.pin.onEdge((event) => this.#deliverEdge(c.name, event));
      }
    } catch (error) {
      await this.stop();
      throw error;
    }
  }

  async stop(): Promise<void> {
    this.#running = false;
    const errors: string[] = [];
    const safePins: string[] = [];
    // Outputs whose safe write failed stay open (a sysfs pin stays exported) for the watcher.
    const failed = new Set<Guarded>();
    for (const g of this.#pins.values()) {
      g.limit?.cancel();
      g.limit = undefined;
      this.#cancelPulse(g);
      const safe = g.config.safe ?? 0;
      if (g.pin !== undefined && g.config.direction === 'out' && safe !== 'keep') {
        try {
          await g.pin.write(safe);
          this.#track(g, safe);
          safePins.push(g.config.name);
        } catch (error) {
          failed.add(g);
          errors.push(`${g.config.name}: ${error instanceof Error ? error.message : String(error)}`);
        }
      }
    }
    for (const g of this.#pins.values()) {
      if (failed.has(g)) continue;
      const pin = g.pin;
      g.pin = undefined;
      try {
        await pin?.close();
      } catch (error) {
        errors.push(`${g.config.name}: close: ${error instanceof Error ? error.message : String(error)}`);
      }
    }
    // A failed safe write is retried by the watcher from its own process instead of disarming it.
    await this.#releaseWatcher(failed.size === 0);
    for (const g of failed) g.pin = undefined;
    if (safePins.length > 0 || errors.length > 0) this.#emit({ type: 'safe_state', reason: 'stop', pins: safePins, errors });
  }

  /** Names and current state of the configured pins. */
  list(): Array<{ name: string; bcm: number; direction: GpioDirection; value: GpioValue | undefined; on_since: number | undefined }> {
    return [...this.#pins.values()].map((g) => ({
      name: g.config.name,
      bcm: g.config.bcm,
      direction: g.config.direction,
      value: g.value,
      on_since: g.onSince,
    }));
  }

  async read(name: string): Promise<GpioValue> {
    return this.#open(name).pin.read();
  }

  /** Sets an output. A running pulse on it is cancelled: the last call wins. */
  async write(name: string, value: GpioValue): Promise<void> {
    const { g, pin } = this.#open(name);
    if (g.config.direction !== 'out') throw directionError(g.config.bcm, `"${name}" is an input and cannot be written`);
    this.#cancelPulse(g);
    await pin.write(value);
    this.#track(g, value);
  }

  /**
   * Switches an output from rest to active for `ms` (default its `pulse_ms`), then back to rest;
   * rest is the safe value (0 for `keep`). Resolves when the pulse has ended, also when a write,
   * another pulse, max_on_time or stop ended it early.
   */
  async pulse(name: string, ms?: number): Promise<void> {
    const { g } = this.#open(name);
    if (g.config.direction !== 'out') throw directionError(g.config.bcm, `"${name}" is an input and cannot be pulsed`);
    const length = ms ?? g.config.pulse_ms;
    if (length === undefined || !Number.isInteger(length) || length <= 0 || length > MAX_PULSE_MS) {
      throw configError(`"${name}": a pulse needs a length from 1 to ${MAX_PULSE_MS} ms (pulse_ms)`, { name });
    }
    const rest: GpioValue = g.config.safe === 1 ? 1 : 0;
    await this.write(name, (1 - rest) as GpioValue);
    await new Promise<void>((resolve, reject) => {
      const timer = this.#clock.setTimer(length, () => {
        g.pulse = undefined;
        this.write(name, rest).then(resolve, reject);
      });
      g.pulse = { timer, superseded: resolve };
    });
  }

  /** Debounced edges of an input, by name. Returns the unsubscribe function. */
  onEdge(name: string, listener: (event: EdgeEvent) => void): () => void {
    const g = this.#pins.get(name);
    if (g === undefined) throw configError(`no GPIO pin named "${name}"`, { name });
    if (g.config.direction !== 'in') throw directionError(g.config.bcm, `"${name}" is an output and has no edges`);
    if ((g.config.edge ?? 'none') === 'none') throw configError(`"${name}" has edge none, so no edges are reported`, { name });
    let set = this.#edgeListeners.get(name);
    if (set === undefined) {
      set = new Set();
      this.#edgeListeners.set(name, set);
    }
    set.add(listener);
    return () => set.delete(listener);
  }

  #open(name: string): { g: Guarded; pin: GpioPin } {
    const g = this.#pins.get(name);
    if (g === undefined) throw configError(`no GPIO pin named "${name}"`, { name });
    if (g.pin === undefined || !this.#running)
      throw new HomeAgentError('HA_ERR_GPIO_UNAVAILABLE', `GPIO pin "${name}" is not open`, { details: { name } });
    return { g, pin: g.pin };
  }

  #cancelPulse(g: Guarded): void {
    const pulse = g.pulse;
    g.pulse = undefined;
    pulse?.timer.cancel();
    pulse?.superseded();
  }

  #deliverEdge(name: string, event: EdgeEvent): void {
    this.#emit({ type: 'edge', name, event });
    for (const l of this.#edgeListeners.get(name) ?? []) l(event);
  }

  /** Records a written value and starts or stops the max_on_time limit. */
  #track(g: Guarded, value: GpioValue): void {
    g.value = value;
    const limitMs = (g.config.max_on_time_s ?? 0) * 1000;
    if (value === 0) {
      g.onSince = undefined;
      g.limit?.cancel();
      g.limit = undefined;
      return;
    }
    if (g.onSince !== undefined) return; // already on: the limit counts from the first switch-on
    g.onSince = this.#clock.now();
    if (limitMs > 0) this.#scheduleLimit(g, limitMs);
  }

  #scheduleLimit(g: Guarded, ms: number): void {
    g.limit = this.#clock.setTimer(ms, () => {
      g.limit = undefined;
      const pin = g.pin;
      if (pin === undefined || g.value !== 1) return;
      const off: GpioValue = g.config.safe === 1 ? 1 : 0; // safe 1 with a limit is rejected at start
      const onSince = g.onSince ?? this.#clock.now();
      this.#cancelPulse(g);
      pin.write(off).then(
        () => {
          this.#track(g, off);
          this.#emit({
            type: 'max_on_time',
            name: g.config.name,
            bcm: g.config.bcm,
            on_ms: this.#clock.now() - onSince,
            at: this.#clock.now(),
          });
        },
        (error: unknown) => {
          this.#emit({
            type: 'pin_error',
            name: g.config.name,
            bcm: g.config.bcm,
            error: ioError(g.config.bcm, 'max_on_time switch-off', error),
          });
          // Keep trying: this is the limit that keeps a pump from running dry.
          if (this.#running) this.#scheduleLimit(g, MAX_ON_RETRY_MS);
        },
      );
    });
  }

  #watchErrors(g: Guarded): void {
    g.pin?.onError((error) => this.#emit({ type: 'pin_error', name: g.config.name, bcm: g.config.bcm, error }));
  }

  #emit(event: PinGuardEvent): void {
    try {
      this.#onEvent(event);
    } catch {
      // a listener's failure must not break pin handling
    }
  }

  #reportPreviousRun(): void {
    const file = this.#watcherOptions === false ? undefined : this.#watcherOptions.reportFile;
    if (file === undefined || !existsSync(file)) return;
    try {
      const report = JSON.parse(readFileSync(file, 'utf8')) as SafeStateReport;
      if (report.outcome === 'applied') this.#emit({ type: 'previous_crash', report });
    } catch {
      // unreadable report: nothing to tell
    }
    rmSync(file, { force: true });
  }

  async #armWatcher(options: WatcherOptions, outputs: Guarded[]): Promise<void> {
    const steps: SafeStateStep[] = [];
    for (const g of outputs) {
      const safe = g.config.safe ?? 0;
      if (safe !== 'keep' && g.pin !== undefined) steps.push(...this.#backend.safeStateSteps(g.pin, safe));
    }
    if (steps.length === 0) {
      const pins = outputs.filter((g) => (g.config.safe ?? 0) !== 'keep').map((g) => g.config.name);
      // The simulator without a state dir has nothing that outlives this process; gpiod needs a runDir.
      if (pins.length > 0)
        this.#emit({
          type: 'no_crash_protection',
          pins,
          reason: `${this.#backend.describe()}: no way to restore outputs from another process`,
        });
      return;
    }
    const spec: SafeStateSpec = {
      parent_pid: process.pid,
      steps,
      ...(options.reportFile === undefined ? {} : { report_file: options.reportFile }),
    };
    if (options.specFile !== undefined) writeFileSync(options.specFile, `${JSON.stringify(spec, null, 2)}\n`);
    const script = options.script ?? defaultWatcherScript();
    if (!existsSync(script)) {
      throw new HomeAgentError('HA_ERR_GPIO_UNAVAILABLE', `the GPIO crash watcher ${script} is missing (run npm run build)`, {
        details: { script },
      });
    }
    // Detached: its own process group, so a Ctrl-C or a group signal aimed at HomeAgent does not
    // take the watcher down with it. stdin is the pipe whose end-of-file means "parent gone".
    const child = spawn(options.node ?? process.execPath, [script, JSON.stringify(spec)], {
      detached: true,
      stdio: ['pipe', 'pipe', 'inherit'],
    });
    // A watcher that died leaves a broken pipe: writing the disarm line then fails with EPIPE, which
    // without a listener would be an uncaught exception while the daemon stops. Its death itself is
    // reported by the 'exit' listener below (watcher_exited).
    child.stdin?.on('error', () => {});
    const armed = await new Promise<string | undefined>((resolve) => {
      const timer = setTimeout(() => resolve('it did not report armed in time'), options.armTimeoutMs ?? 10_000);
      const lines = child.stdout ? createInterface({ input: child.stdout }) : undefined;
      lines?.on('line', (line) => {
        if (line !== ARMED_LINE) return;
        clearTimeout(timer);
        lines.close();
        resolve(undefined);
      });
      child.once('error', (error) => {
        clearTimeout(timer);
        resolve(error.message);
      });
      child.once('exit', (code, sig) => {
        clearTimeout(timer);
        resolve(`it exited (${sig ?? `code ${code}`})`);
      });
    });
    if (armed !== undefined) {
      child.kill('SIGKILL');
      throw new HomeAgentError('HA_ERR_GPIO_UNAVAILABLE', `the GPIO crash watcher could not be started: ${armed}`);
    }
    child.stdout?.destroy();
    child.once('exit', (code, sig) => {
      if (this.#watcher !== child) return;
      this.#watcher = undefined;
      this.#emit({ type: 'watcher_exited', code, signal: sig });
    });
    // Neither the child nor the pipe may keep this process alive.
    child.unref();
    (child.stdin as unknown as Socket | null)?.unref();
    this.#watcher = child;
  }

  /** Ends the watcher: disarmed after a clean stop, or told nothing so that it applies the safe state. */
  async #releaseWatcher(disarm: boolean): Promise<void> {
    const child = this.#watcher;
    this.#watcher = undefined;
    const specFile = this.#watcherOptions === false ? undefined : this.#watcherOptions.specFile;
    if (specFile !== undefined) rmSync(specFile, { force: true });
    if (child === undefined) return;
    const exited = new Promise<void>((resolve) => {
      if (child.exitCode !== null || child.signalCode !== null) resolve();
      else child.once('exit', () => resolve());
    });
    // Held again so this process waits for the watcher instead of exiting under it.
    child.ref();
    (child.stdin as unknown as Socket | null)?.ref();
    child.stdin?.end(disarm ? `${DISARM_LINE}\n` : '');
    const timer = setTimeout(() => child.kill('SIGKILL'), DISARM_WAIT_MS);
    await exited;
    clearTimeout(timer);
  }
}
