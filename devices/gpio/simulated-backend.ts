/**
 * A GPIO header in memory: the default where no GPIO hardware exists. It behaves like the real back
 * ends as far as callers can tell (active_low on the wire, edges through the same debouncer, reads
 * of outputs, busy pins, I/O failures on demand), and adds a control API for tests, benchmarks and
 * demos: drive an input's wire, press a button with contact bounce, watch the outputs.
 *
 * With `stateDir` the wire level of every output is also written to `<stateDir>/gpio<bcm>` ("0" or
 * "1") on each change, so another process (the crash watcher, a test) sees and can set what a
 * multimeter would see on the pin.
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { HomeAgentError } from '../../src/sdk/index.js';
import { EdgeFilter } from './edge-filter.js';
import {
  busyError,
  closedError,
  directionError,
  type EdgeListener,
  type GpioBackend,
  type GpioPin,
  type GpioValue,
  MAX_HEADER_BCM,
  type PinErrorListener,
  PinListeners,
  type PinOptions,
  physical,
  type ResolvedPinOptions,
  resolvePinOptions,
  validateBcm,
} from './gpio-backend.js';
import { type GpioClock, systemGpioClock } from './gpio-clock.js';
import type { SafeStateStep } from './safe-state.js';

export interface SimulatedBackendOptions {
  clock?: GpioClock;
  /** Persist output wire levels as files (see the module comment). */
  stateDir?: string;
}

export type SimulatedOperation = 'open' | 'read' | 'write';

export interface WireChange {
  bcm: number;
  /** The wire (physical) level. */
  level: GpioValue;
  at: number;
}

export interface PressOptions {
  /** Open-close glitches after the first contact, on press and again on release. Default 3. */
  bounces?: number;
  /** Time between bounce changes. Default 1 ms. */
  bounceMs?: number;
  /** Time from the first contact to the first release change. Default 100 ms. */
  holdMs?: number;
}

interface Line {
  level: GpioValue;
  /** Something drove the wire already (a test, an earlier pin): its level stands. */
  driven: boolean;
  pin: SimulatedPin | undefined;
  failures: Map<SimulatedOperation, number>;
}

export class SimulatedGpioBackend implements GpioBackend {
  readonly kind = 'simulated' as const;
  readonly control: SimulatedGpioControl;
  readonly #clock: GpioClock;
  readonly #stateDir: string | undefined;
  readonly #lines: Line[] = [];
  readonly #wireListeners = new Set<(change: WireChange) => void>();

  constructor(options: SimulatedBackendOptions = {}) {
    this.#clock = options.clock ?? systemGpioClock;
    this.#stateDir = options.stateDir;
    if (this.#stateDir !== undefined) mkdirSync(this.#stateDir, { recursive: true });
    for (let bcm = 0; bcm <= MAX_HEADER_BCM; bcm++) this.#lines.push({ level: 0, driven: false, pin: undefined, failures: new Map() });
    this.control = new SimulatedGpioControl(this);
  }

  describe(): string {
    const open = this.#lines.filter((l) => l.pin !== undefined).length;
    return `simulated GPIO (no hardware), ${open} pin(s) open${this.#stateDir === undefined ? '' : `, levels in ${this.#stateDir}`}`;
  }

  async open(bcm: number, options: PinOptions): Promise<GpioPin> {
    const resolved = resolvePinOptions(bcm, options);
    const line = this.line(bcm);
    if (line.pin !== undefined) throw busyError(bcm);
    this.consumeFailure(bcm, 'open');
    const pin = new SimulatedPin(this, bcm, resolved);
    line.pin = pin;
    if (resolved.direction === 'out') this.setWire(bcm, physical(resolved.initial, resolved.active_low));
    else if (resolved.bias === 'pull-up') this.setWire(bcm, 1);
    else if (resolved.bias === 'pull-down') this.setWire(bcm, 0);
    // No bias set here: a real circuit has its own pull resistor holding the input inactive (a
    // button wired active-low rests high), so the simulation starts released, not pressed.
    else if (!line.driven) this.setWire(bcm, resolved.active_low ? 1 : 0);
    pin.startEdges(this.#clock);
    return pin;
  }

  safeStateSteps(pin: GpioPin, value: GpioValue): SafeStateStep[] {
    if (this.line(pin.bcm).pin !== pin) throw closedError(pin.bcm);
    if (this.#stateDir === undefined) return []; // nothing outlives this process
    return [{ kind: 'write', path: this.statePath(pin.bcm), data: String(physical(value, pin.options.active_low)) }];
  }

  async close(): Promise<void> {
    for (const line of this.#lines) await line.pin?.close();
  }

  /** @internal */
  line(bcm: number): Line {
    validateBcm(bcm);
    const line = this.#lines[bcm];
    if (line === undefined) throw new HomeAgentError('HA_ERR_GPIO_CONFIG', `GPIO ${bcm} does not exist`);
    return line;
  }

  /** @internal */
  statePath(bcm: number): string {
    return join(this.#stateDir ?? '', `gpio${bcm}`);
  }

  /** @internal */
  setWire(bcm: number, level: GpioValue): void {
    const line = this.line(bcm);
    const changed = line.level !== level;
    line.level = level;
    line.driven = true;
    // Written even when unchanged: opening an output re-asserts a level a crash watcher may have set.
    if (line.pin?.options.direction === 'out' && this.#stateDir !== undefined) writeFileSync(this.statePath(bcm), String(level));
    if (!changed) return;
    const at = this.#clock.now();
    for (const l of this.#wireListeners) l({ bcm, level, at });
    line.pin?.wireChanged(level);
  }

  /** @internal */
  consumeFailure(bcm: number, op: SimulatedOperation): void {
    const failures = this.line(bcm).failures;
    const left = failures.get(op) ?? 0;
    if (left <= 0) return;
    failures.set(op, left - 1);
    throw new HomeAgentError('HA_ERR_GPIO_IO', `GPIO ${bcm}: simulated ${op} failure`, { details: { bcm, simulated: true } });
  }

  /** @internal */
  detach(pin: SimulatedPin): void {
    const line = this.line(pin.bcm);
    if (line.pin === pin) line.pin = undefined;
  }

  /** @internal */
  addWireListener(listener: (change: WireChange) => void): () => void {
    this.#wireListeners.add(listener);
    return () => this.#wireListeners.delete(listener);
  }

  /** @internal */
  get clock(): GpioClock {
    return this.#clock;
  }
}

/** The test and demo side of the simulator: what the outside world does to the header. */
export class SimulatedGpioControl {
  readonly #backend: SimulatedGpioBackend;

  constructor(backend: SimulatedGpioBackend) {
    this.#backend = backend;
  }

  /** The wire level of a line (physical, as a multimeter sees it). */
  level(bcm: number): GpioValue {
    return this.#backend.line(bcm).level;
  }

  /** Drives an input's wire, as a button, sensor or another board would. Outputs cannot be driven. */
  drive(bcm: number, level: GpioValue): void {
    const pin = this.#backend.line(bcm).pin;
    if (pin?.options.direction === 'out') throw directionError(bcm, 'is an output; the simulator does not drive against it');
    this.#backend.setWire(bcm, level);
  }

  /**
   * A button press with contact bounce, played out on the back end's clock: the contact closes,
   * opens and closes again `bounces` times `bounceMs` apart, stays closed, and after `holdMs` opens
   * with the same bounce. The closed level is the pin's active level (low for an active_low input).
   */
  press(bcm: number, options: PressOptions = {}): void {
    const bounces = options.bounces ?? 3;
    const bounceMs = options.bounceMs ?? 1;
    const holdMs = options.holdMs ?? 100;
    if (!Number.isInteger(bounces) || bounces < 0 || bounceMs < 0 || holdMs <= 2 * bounces * bounceMs) {
      throw new HomeAgentError('HA_ERR_GPIO_CONFIG', 'press: holdMs must be longer than the bounce (2 × bounces × bounceMs)');
    }
    const pin = this.#backend.line(bcm).pin;
    const closed: GpioValue = physical(1, pin?.options.active_low ?? false);
    const clock = this.#backend.clock;
    const contact = (start: number, final: GpioValue) => {
      const other = (1 - final) as GpioValue;
      clock.setTimer(start, () => this.drive(bcm, final));
      for (let i = 1; i <= bounces; i++) {
        clock.setTimer(start + (2 * i - 1) * bounceMs, () => this.drive(bcm, other));
        clock.setTimer(start + 2 * i * bounceMs, () => this.drive(bcm, final));
      }
    };
    contact(0, closed);
    contact(holdMs, (1 - closed) as GpioValue);
  }

  /** Makes the next `count` operations of that kind on the line fail with HA_ERR_GPIO_IO. */
  failNext(bcm: number, op: SimulatedOperation, count = 1): void {
    this.#backend.line(bcm).failures.set(op, count);
  }

  /** Every wire change from now on (outputs written, inputs driven). Returns the unsubscribe function. */
  onWire(listener: (change: WireChange) => void): () => void {
    return this.#backend.addWireListener(listener);
  }
}

class SimulatedPin implements GpioPin {
  readonly warnings: readonly string[] = [];
  #filter: EdgeFilter | undefined;
  readonly #listeners: PinListeners;
  #closed = false;

  constructor(
    readonly backend: SimulatedGpioBackend,
    readonly bcm: number,
    readonly options: Readonly<ResolvedPinOptions>,
  ) {
    this.#listeners = new PinListeners(bcm, options);
  }

  startEdges(clock: GpioClock): void {
    if (this.options.direction !== 'in' || this.options.edge === 'none') return;
    this.#filter = new EdgeFilter({
      bcm: this.bcm,
      edge: this.options.edge,
      debounceMs: this.options.debounce_ms,
      clock,
      initial: this.#logical(),
      emit: (event) => {
        this.#listeners.emitEdge(event);
      },
    });
  }

  wireChanged(level: GpioValue): void {
    this.#filter?.sample(physical(level, this.options.active_low));
  }

  async read(): Promise<GpioValue> {
    if (this.#closed) throw closedError(this.bcm);
    this.backend.consumeFailure(this.bcm, 'read');
    return this.#logical();
  }

  async write(value: GpioValue): Promise<void> {
    if (this.#closed) throw closedError(this.bcm);
    if (this.options.direction !== 'out') throw directionError(this.bcm, 'is an input and cannot be written');
    if (value !== 0 && value !== 1) throw new HomeAgentError('HA_ERR_GPIO_CONFIG', `GPIO ${this.bcm}: a value must be 0 or 1`);
    this.backend.consumeFailure(this.bcm, 'write');
    this.backend.setWire(this.bcm, physical(value, this.options.active_low));
  }

  onEdge(listener: EdgeListener): () => void {
    return this.#listeners.onEdge(listener);
  }

  onError(listener: PinErrorListener): () => void {
    return this.#listeners.onError(listener);
  }

  async close(): Promise<void> {
    if (this.#closed) return;
    this.#closed = true;
    this.#filter?.close();
    this.#listeners.clearEdges();
    this.backend.detach(this);
  }

  #logical(): GpioValue {
    return physical(this.backend.line(this.bcm).level, this.options.active_low);
  }
}
