/**
 * GPIO through the sysfs interface (/sys/class/gpio): export, direction, active_low, edge and value
 * files, with the kernel ≥ 6.6 base offset read from the chip (chip-offset.ts). Edges come from
 * onoff's epoll watcher where onoff is installed, else from polling (sysfs-edge-source.ts).
 *
 * Order at open matters for relays: active_low is written before the direction, and an output
 * gets its direction as `high`/`low` (the kernel's atomic "output at this level"), so an
 * active-low relay board never sees a glitch to "on" while the pin is being configured.
 *
 * sysfs cannot set pull resistors; a bias other than as-is is reported in `warnings` (set it in
 * config.txt, e.g. `gpio=17=pu`). The interface is deprecated upstream; gpiod-backend.ts is the
 * replacement where a kernel has it switched off.
 */
import { access, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { HomeAgentError } from '../../src/sdk/index.js';
import { DEFAULT_SYSFS_ROOT, findMainSysfsChip, kernelGpioNumber, type SysfsChip } from './chip-offset.js';
import { EdgeFilter } from './edge-filter.js';
import {
  busyError,
  closedError,
  directionError,
  type EdgeListener,
  type GpioBackend,
  type GpioPin,
  type GpioValue,
  ioError,
  type PinErrorListener,
  PinListeners,
  type PinOptions,
  parseGpioValue,
  physical,
  type ResolvedPinOptions,
  resolvePinOptions,
} from './gpio-backend.js';
import { type GpioClock, systemGpioClock } from './gpio-clock.js';
import type { SafeStateStep } from './safe-state.js';
import { defaultEdgeSourceFactory, type SysfsEdgeSource, type SysfsEdgeSourceFactory } from './sysfs-edge-source.js';

export interface SysfsBackendOptions {
  /** The sysfs GPIO directory. Default /sys/class/gpio (tests pass a fake tree). */
  root?: string;
  /** Chip labels to prefer (default: the Pi SoC labels). */
  chipLabels?: readonly string[];
  clock?: GpioClock;
  /** Polling interval when onoff is not available. Default 10 ms. */
  pollIntervalMs?: number;
  /** `auto` (onoff when installed, else polling), `poll`, or a custom factory (tests). */
  edgeSource?: 'auto' | 'poll' | SysfsEdgeSourceFactory;
  /**
   * How long to wait after export for gpioN to appear and for udev to make its files writable
   * (non-root users get EACCES for a moment after export). Default 2000 ms.
   */
  exportTimeoutMs?: number;
}

const RETRY_MS = 10;

function errnoOf(error: unknown): string | undefined {
  return typeof error === 'object' && error !== null && 'code' in error ? String((error as { code: unknown }).code) : undefined;
}

export class SysfsGpioBackend implements GpioBackend {
  readonly kind = 'sysfs' as const;
  readonly #root: string;
  readonly #labels: readonly string[] | undefined;
  readonly #clock: GpioClock;
  readonly #exportTimeoutMs: number;
  readonly #pollIntervalMs: number | undefined;
  readonly #edgeFactory: SysfsEdgeSourceFactory;
  readonly #open = new Map<number, SysfsPin>();
  #chip: Promise<SysfsChip> | undefined;
  #edgeKind: string | undefined;
  // export/unexport are global files; one at a time keeps "which gpioN appeared" unambiguous.
  #exportQueue: Promise<unknown> = Promise.resolve();

  constructor(options: SysfsBackendOptions = {}) {
    this.#root = options.root ?? DEFAULT_SYSFS_ROOT;
    this.#labels = options.chipLabels;
    this.#clock = options.clock ?? systemGpioClock;
    this.#exportTimeoutMs = options.exportTimeoutMs ?? 2_000;
    this.#pollIntervalMs = options.pollIntervalMs;
    const source = options.edgeSource ?? 'auto';
    this.#edgeFactory =
      typeof source === 'function'
        ? source
        : defaultEdgeSourceFactory({
            clock: this.#clock,
            mode: source,
            ...(options.pollIntervalMs === undefined ? {} : { pollIntervalMs: options.pollIntervalMs }),
          });
  }

  /** The header chip (cached). HA_ERR_GPIO_UNAVAILABLE when the root has none. */
  chip(): Promise<SysfsChip> {
    this.#chip ??= findMainSysfsChip(this.#root, this.#labels);
    this.#chip.catch(() => {
      this.#chip = undefined; // retried on the next call
    });
    return this.#chip;
  }

  describe(): string {
    const edges = this.#edgeKind === 'onoff' ? 'edges via onoff (epoll)' : `edges by polling every ${this.#pollIntervalMs ?? 10} ms`;
    return `sysfs ${this.#root}, ${this.#open.size} pin(s) open, ${edges}`;
  }

  async open(bcm: number, options: PinOptions): Promise<GpioPin> {
    const resolved = resolvePinOptions(bcm, options);
    if (this.#open.has(bcm)) throw busyError(bcm);
    const chip = await this.chip();
    const number = kernelGpioNumber(chip, bcm);
    const pin = new SysfsPin(this, bcm, number, join(this.#root, `gpio${number}`), resolved);
    this.#open.set(bcm, pin);
    try {
      await this.#serial(() => this.#export(number, pin.dir));
      await pin.configure();
      return pin;
    } catch (error) {
      this.#open.delete(bcm);
      await pin.close().catch(() => {});
      throw ioError(bcm, `opening gpio${number}`, error);
    }
  }

  safeStateSteps(pin: GpioPin, value: GpioValue): SafeStateStep[] {
    const own = this.#open.get(pin.bcm);
    if (own === undefined || own !== pin) throw closedError(pin.bcm);
    // `high`/`low` sets direction and level in one write and is independent of active_low.
    return [{ kind: 'write', path: join(own.dir, 'direction'), data: physical(value, own.options.active_low) === 1 ? 'high' : 'low' }];
  }

  async close(): Promise<void> {
    for (const pin of [...this.#open.values()]) await pin.close();
  }

  /** @internal */
  async edgeSource(pin: SysfsPin): Promise<SysfsEdgeSource> {
    const source = await this.#edgeFactory({
      root: this.#root,
      kernelNumber: pin.number,
      valuePath: join(pin.dir, 'value'),
      activeLow: pin.options.active_low,
    });
    this.#edgeKind = source.kind;
    return source;
  }

  /** @internal */
  get clock(): GpioClock {
    return this.#clock;
  }

  /** @internal */
  async release(pin: SysfsPin): Promise<void> {
    if (this.#open.get(pin.bcm) === pin) this.#open.delete(pin.bcm);
    await this.#serial(async () => {
      try {
        await writeFile(join(this.#root, 'unexport'), String(pin.number));
      } catch (error) {
        // EINVAL: not exported any more (onoff's own unexport ran first); nothing to undo.
        if (errnoOf(error) !== 'EINVAL') throw error;
      }
      // The kernel removes gpioN before the write returns; waiting for that keeps the next
      // export/unexport from overtaking this one on slower implementations of the interface.
      const deadline = Date.now() + this.#exportTimeoutMs;
      while ((await exists(pin.dir)) && Date.now() < deadline) await this.#wait(RETRY_MS);
    });
  }

  /** @internal Retries a write while udev has not yet granted access to a freshly exported pin. */
  async writeAttribute(path: string, data: string): Promise<void> {
    const deadline = Date.now() + this.#exportTimeoutMs;
    for (;;) {
      try {
        await writeFile(path, data);
        return;
      } catch (error) {
        if (errnoOf(error) !== 'EACCES' || Date.now() >= deadline) throw error;
        await this.#wait(RETRY_MS);
      }
    }
  }

  #serial<T>(fn: () => Promise<T>): Promise<T> {
    const run = this.#exportQueue.then(fn, fn);
    this.#exportQueue = run.catch(() => {});
    return run;
  }

  async #export(number: number, dir: string): Promise<void> {
    // Already exported (left over from a crash, or by another tool): take it over as it is.
    if (await exists(dir)) return;
    try {
      await writeFile(join(this.#root, 'export'), String(number));
    } catch (error) {
      if (errnoOf(error) !== 'EBUSY') throw error;
    }
    const deadline = Date.now() + this.#exportTimeoutMs;
    while (!(await exists(join(dir, 'value')))) {
      if (Date.now() >= deadline) {
        throw new HomeAgentError('HA_ERR_GPIO_UNAVAILABLE', `gpio${number} did not appear under ${this.#root} after export`, {
          details: { number },
        });
      }
      await this.#wait(RETRY_MS);
    }
  }

  #wait(ms: number): Promise<void> {
    // Real time on purpose: this waits for the kernel and udev, not for simulated events.
    return new Promise((resolve) => setTimeout(resolve, ms));
  }
}

async function exists(path: string): Promise<boolean> {
  try {
    await access(path);
    return true;
  } catch {
    return false;
  }
}

class SysfsPin implements GpioPin {
  readonly warnings: string[] = [];
  #filter: EdgeFilter | undefined;
  #source: SysfsEdgeSource | undefined;
  readonly #listeners: PinListeners;
  #closed = false;
  #closing: Promise<void> | undefined;

  constructor(
    readonly backend: SysfsGpioBackend,
    readonly bcm: number,
    readonly number: number,
    readonly dir: string,
    readonly options: Readonly<ResolvedPinOptions>,
  ) {
    this.#listeners = new PinListeners(bcm, options);
  }

  async configure(): Promise<void> {
    const o = this.options;
    await this.backend.writeAttribute(join(this.dir, 'active_low'), o.active_low ? '1' : '0');
    if (o.direction === 'out') {
      await this.backend.writeAttribute(join(this.dir, 'direction'), physical(o.initial, o.active_low) === 1 ? 'high' : 'low');
      return;
    }
    await this.backend.writeAttribute(join(this.dir, 'direction'), 'in');
    if (o.bias !== 'as-is')
      this.warnings.push(`sysfs cannot set bias ${o.bias} on GPIO ${this.bcm}; set it in config.txt (gpio=${this.bcm}=pu|pd|pn)`);
    // Both edges even when one is selected: the debouncer must see releases to report the next press.
    await this.backend.writeAttribute(join(this.dir, 'edge'), o.edge === 'none' ? 'none' : 'both');
    if (o.edge === 'none') return;
    const initial = await this.read();
    const filter = new EdgeFilter({
      bcm: this.bcm,
      edge: o.edge,
      debounceMs: o.debounce_ms,
      clock: this.backend.clock,
      initial,
      emit: (event) => {
        this.#listeners.emitEdge(event);
      },
    });
    this.#filter = filter;
    const source = await this.backend.edgeSource(this);
    this.#source = source;
    source.start(
      (value) => filter.sample(value),
      (error) => this.#fail(ioError(this.bcm, 'watching for edges', error)),
    );
  }

  async read(): Promise<GpioValue> {
    if (this.#closed) throw closedError(this.bcm);
    try {
      return parseGpioValue(await readFile(join(this.dir, 'value'), 'utf8'), `gpio${this.number}/value`);
    } catch (error) {
      throw ioError(this.bcm, 'read', error);
    }
  }

  async write(value: GpioValue): Promise<void> {
    if (this.#closed) throw closedError(this.bcm);
    if (this.options.direction !== 'out') throw directionError(this.bcm, 'is an input and cannot be written');
    if (value !== 0 && value !== 1) throw new HomeAgentError('HA_ERR_GPIO_CONFIG', `GPIO ${this.bcm}: a value must be 0 or 1`);
    try {
      await writeFile(join(this.dir, 'value'), String(value));
    } catch (error) {
      throw ioError(this.bcm, 'write', error);
    }
  }

  onEdge(listener: EdgeListener): () => void {
    return this.#listeners.onEdge(listener);
  }

  onError(listener: PinErrorListener): () => void {
    return this.#listeners.onError(listener);
  }

  close(): Promise<void> {
    this.#closing ??= (async () => {
      this.#closed = true;
      this.#filter?.close();
      await this.#source?.stop();
      this.#listeners.clearEdges();
      await this.backend.release(this);
    })();
    return this.#closing;
  }

  #fail(error: HomeAgentError): void {
    this.#listeners.emitError(error);
  }
}
