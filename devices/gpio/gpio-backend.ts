/**
 * The one contract behind the three GPIO back ends (sysfs, libgpiod tools, simulated).
 *
 * Pins are addressed by BCM number (the number printed on pinout diagrams). Values are logical:
 * with `active_low` a logical 1 is a low wire, so "on" means the same thing for every relay board.
 * Edges are logical too (`rising` = logical 0 → 1) and are debounced in software the same way on
 * every back end (see edge-filter.ts), so behaviour does not change when the back end does.
 */
import type { GpioBackendKind, GpioDirection, GpioValue } from '../../src/sdk/api.js';
import { HomeAgentError } from '../../src/sdk/index.js';
import type { SafeStateStep } from './safe-state.js';

export type { GpioBackendKind, GpioDirection, GpioValue };
export type GpioEdge = 'none' | 'rising' | 'falling' | 'both';
/** Pull resistor of an input. Only the libgpiod tools and the simulator can set it (see sysfs-backend.ts). */
export type GpioBias = 'as-is' | 'pull-up' | 'pull-down' | 'disabled';

/** BCM numbers on the 40-pin header: GPIO 0–27. */
export const MAX_HEADER_BCM = 27;
/** Longest debounce accepted; anything longer is a configuration mistake, not a bouncing contact. */
export const MAX_DEBOUNCE_MS = 10_000;

export interface PinOptions {
  direction: GpioDirection;
  /** Invert the wire: logical 1 = low. Common on relay boards and buttons wired to ground. */
  active_low?: boolean;
  /** Which logical edges are reported on an input. Default `none`. */
  edge?: GpioEdge;
  /** Contact bounce suppression in ms (0 = off). Default 0. */
  debounce_ms?: number;
  /** Output value set at open, atomically with the direction where the back end allows it. Default 0. */
  initial?: GpioValue;
  /** Pull resistor for inputs. Default `as-is`. */
  bias?: GpioBias;
}

export type ResolvedPinOptions = Required<PinOptions>;

/** A logical edge after debouncing and edge selection. */
export interface EdgeEvent {
  bcm: number;
  edge: 'rising' | 'falling';
  /** The logical value after the edge. */
  value: GpioValue;
  /** Epoch ms from the back end's clock when the change was seen. */
  at: number;
}

export type EdgeListener = (event: EdgeEvent) => void;
export type PinErrorListener = (error: HomeAgentError) => void;

/** An opened pin. Every method throws {@link HomeAgentError} (HA_ERR_GPIO_*). */
export interface GpioPin {
  readonly bcm: number;
  readonly options: Readonly<ResolvedPinOptions>;
  /** Things the back end could not honour (e.g. a pull-up through sysfs), for status lines. */
  readonly warnings: readonly string[];
  /** The logical value; for an output, the value last written. */
  read(): Promise<GpioValue>;
  /** Sets an output. An input throws HA_ERR_GPIO_DIRECTION. */
  write(value: GpioValue): Promise<void>;
  /** Subscribes to debounced edges; returns the unsubscribe function. Needs an input with an edge. */
  onEdge(listener: EdgeListener): () => void;
  /** Failures that happen outside a call (an edge monitor died, a poll read failed). */
  onError(listener: PinErrorListener): () => void;
  /** Releases the pin (unexport, stop monitors). Leaves an output at its current level. Idempotent. */
  close(): Promise<void>;
}

export interface GpioBackend {
  readonly kind: GpioBackendKind;
  /** One line for status output: which chip, which tools, which fallbacks. */
  describe(): string;
  /** Opens a pin. A pin already open on this back end throws HA_ERR_GPIO_UNAVAILABLE. */
  open(bcm: number, options: PinOptions): Promise<GpioPin>;
  /**
   * What a separate process must do to put an open output to `value` once this process is gone
   * (see safe-state-watcher.ts). Only plain steps: file writes, killing a recorded pid, spawning a
   * tool, so the watcher needs none of this code.
   */
  safeStateSteps(pin: GpioPin, value: GpioValue): SafeStateStep[];
  /** Closes every pin still open. */
  close(): Promise<void>;
}

const DIRECTIONS: readonly GpioDirection[] = ['in', 'out'];
const EDGES: readonly GpioEdge[] = ['none', 'rising', 'falling', 'both'];
const BIASES: readonly GpioBias[] = ['as-is', 'pull-up', 'pull-down', 'disabled'];

function configError(bcm: number, message: string): HomeAgentError {
  return new HomeAgentError('HA_ERR_GPIO_CONFIG', `GPIO ${bcm}: ${message}`, { details: { bcm } });
}

/** Checks a BCM number against the header (or a chip with `lines` lines). */
export function validateBcm(bcm: number, lines = MAX_HEADER_BCM + 1): void {
  if (!Number.isInteger(bcm) || bcm < 0 || bcm >= lines) {
    throw new HomeAgentError('HA_ERR_GPIO_CONFIG', `GPIO ${String(bcm)}: the BCM number must be an integer from 0 to ${lines - 1}`, {
      details: { bcm },
    });
  }
}

/** Fills defaults and rejects contradictions; every back end calls this before touching anything. */
export function resolvePinOptions(bcm: number, options: PinOptions): ResolvedPinOptions {
  validateBcm(bcm);
  if (!DIRECTIONS.includes(options.direction)) throw configError(bcm, `direction must be in or out, not ${String(options.direction)}`);
  const edge = options.edge ?? 'none';
  if (!EDGES.includes(edge)) throw configError(bcm, `edge must be none, rising, falling or both, not ${String(edge)}`);
  const bias = options.bias ?? 'as-is';
  if (!BIASES.includes(bias)) throw configError(bcm, `bias must be as-is, pull-up, pull-down or disabled, not ${String(bias)}`);
  const debounce = options.debounce_ms ?? 0;
  if (!Number.isInteger(debounce) || debounce < 0 || debounce > MAX_DEBOUNCE_MS) {
    throw configError(bcm, `debounce_ms must be an integer from 0 to ${MAX_DEBOUNCE_MS}, not ${String(debounce)}`);
  }
  const initial = options.initial ?? 0;
  if (initial !== 0 && initial !== 1) throw configError(bcm, `initial must be 0 or 1, not ${String(initial)}`);
  if (options.direction === 'out' && edge !== 'none') throw configError(bcm, 'an output cannot report edges (edge must be none)');
  if (options.direction === 'out' && debounce !== 0) throw configError(bcm, 'debounce_ms applies to inputs only');
  if (options.direction === 'out' && bias !== 'as-is') throw configError(bcm, 'bias applies to inputs only');
  const activeLow = options.active_low ?? false;
  if (typeof activeLow !== 'boolean') throw configError(bcm, 'active_low must be true or false');
  return { direction: options.direction, active_low: activeLow, edge, debounce_ms: debounce, initial, bias };
}

/** The wire level for a logical value. */
export function physical(value: GpioValue, activeLow: boolean): GpioValue {
  return activeLow ? ((1 - value) as GpioValue) : value;
}

/** Parses the text of a value file or tool output ("0"/"1" plus whitespace). */
export function parseGpioValue(text: string, what: string): GpioValue {
  const trimmed = text.trim();
  if (trimmed === '0') return 0;
  if (trimmed === '1') return 1;
  throw new HomeAgentError('HA_ERR_GPIO_IO', `${what}: expected 0 or 1, read ${JSON.stringify(trimmed.slice(0, 40))}`);
}

export function directionError(bcm: number, what: string): HomeAgentError {
  return new HomeAgentError('HA_ERR_GPIO_DIRECTION', `GPIO ${bcm}: ${what}`, { details: { bcm } });
}

/** The edge and error listeners of one open pin, kept alike by every back end. */
export class PinListeners {
  readonly #edges = new Set<EdgeListener>();
  readonly #errors = new Set<PinErrorListener>();
  readonly #bcm: number;
  readonly #options: Readonly<Pick<ResolvedPinOptions, 'direction' | 'edge'>>;

  constructor(bcm: number, options: Readonly<Pick<ResolvedPinOptions, 'direction' | 'edge'>>) {
    this.#bcm = bcm;
    this.#options = options;
  }

  /** {@link GpioPin.onEdge}: only an input with an edge reports edges. */
  onEdge(listener: EdgeListener): () => void {
    if (this.#options.direction !== 'in') throw directionError(this.#bcm, 'is an output and has no edges');
    if (this.#options.edge === 'none')
      throw new HomeAgentError('HA_ERR_GPIO_CONFIG', `GPIO ${this.#bcm}: edge is none, so no edges are reported`);
    this.#edges.add(listener);
    return () => this.#edges.delete(listener);
  }

  onError(listener: PinErrorListener): () => void {
    this.#errors.add(listener);
    return () => this.#errors.delete(listener);
  }

  emitEdge(event: EdgeEvent): void {
    for (const listener of this.#edges) listener(event);
  }

  emitError(error: HomeAgentError): void {
    for (const listener of this.#errors) listener(error);
  }

  /** At close: no edge is delivered any more. */
  clearEdges(): void {
    this.#edges.clear();
  }
}

export function closedError(bcm: number): HomeAgentError {
  return new HomeAgentError('HA_ERR_GPIO_UNAVAILABLE', `GPIO ${bcm} is closed`, { details: { bcm } });
}

export function busyError(bcm: number): HomeAgentError {
  return new HomeAgentError('HA_ERR_GPIO_UNAVAILABLE', `GPIO ${bcm} is already open`, { details: { bcm } });
}

/** Wraps an unknown failure of a pin operation in HA_ERR_GPIO_IO, keeping HomeAgentErrors as they are. */
export function ioError(bcm: number, what: string, cause: unknown): HomeAgentError {
  if (cause instanceof HomeAgentError) return cause;
  const reason = cause instanceof Error ? cause.message : String(cause);
  return new HomeAgentError('HA_ERR_GPIO_IO', `GPIO ${bcm}: ${what} failed: ${reason}`, { cause, details: { bcm } });
}
