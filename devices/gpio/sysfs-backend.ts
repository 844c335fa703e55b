/**
 * GPIO through the sysfs interface (/sys/class/gpio): export, direction, active_low, edge and value
 * files, with the kernel ≥ 6.6 base offset read from the chip (chip-offset.ts).
 *
 * Two ways to the same files. On the real /sys/class/gpio, when the optional onoff package loads,
 * onoff's Gpio does the work for each pin: it is given the kernel number (base + BCM, never the
 * BCM number, since onoff does not know about the offset), exports it, writes active_low,
 * direction and edge, holds the value file open for reads and writes, and watches edges with
 * epoll (sysfs-edge-source.ts). Otherwise (another root, onoff missing or switched off, or onoff
 * failing on one pin) the back end writes the files itself and polls inputs for edges.
 *
 * Order at open matters for relays: active_low is written before the direction, and an output
 * gets its direction as `high`/`low` (the kernel's atomic "output at this level"), so an
 * active-low relay board never sees a glitch to "on" while the pin is being configured. onoff
 * writes in the same order and passes `high`/`low` through.
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
import {
  DEFAULT_POLL_INTERVAL_MS,
  defaultEdgeSourceFactory,
  loadOnoff,
  type OnoffGpio,
  type OnoffGpioClass,
  type SysfsEdgeSource,
  type SysfsEdgeSourceFactory,
} from './sysfs-edge-source.js';

export interface SysfsBackendOptions {
  /** The sysfs GPIO directory. Default /sys/class/gpio (tests pass a fake tree). */
  root?: string;
  /** Chip labels to prefer (default: the Pi SoC labels). */
  chipLabels?: readonly string[];
  clock?: GpioClock;
  /** Polling interval for inputs whose edges do not come from epoll. Default 10 ms. */
  pollIntervalMs?: number;
  /**
   * `auto` (default): onoff's Gpio exports, configures, reads, writes and watches each pin when the
   * root is /sys/class/gpio (onoff cannot use another) and the package loads; the files directly
   * otherwise. `off`: always the files. A class: that Gpio implementation whatever the root (tests).
   */
  onoff?: 'auto' | 'off' | OnoffGpioClass;
  /** `auto`: epoll through onoff for pins onoff opened, else polling; `poll`; or a custom factory (tests). */
  edgeSource?: 'auto' | 'poll' | SysfsEdgeSourceFactory;
  /**
   * How long to wait after export for gpioN to appear and for udev to make its files writable
   * (non-root users get EACCES for a moment after export). Default 2000 ms.
   */
  exportTimeoutMs?: number;
  /** Hears what could not be done as configured (onoff or epoll unusable); the plugin logs it. */
  onWarning?: (message: string) => void;
}

const RETRY_MS = 10;

function errnoOf(error: unknown): string | undefined {
  return typeof error === 'object' && error !== null && 'code' in error ? String((error as { code: unknown }).code) : undefined;
}

function reasonOf(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}

export class SysfsGpioBackend implements GpioBackend {
  readonly kind = 'sysfs' as const;
  readonly #root: string;
  readonly #labels: readonly string[] | undefined;
  readonly #clock: GpioClock;
  readonly #exportTimeoutMs: number;
  readonly #pollIntervalMs: number;
  readonly #edgeFactory: SysfsEdgeSourceFactory;
  readonly #onoffChoice: 'auto' | 'off' | OnoffGpioClass;
  readonly #onWarning: (message: string) => void;
  readonly #open = new Map<number, SysfsPin>();
  #chip: Promise<SysfsChip> | undefined;
  #onoff: Promise<OnoffGpioClass | undefined> | undefined;
  /** How pins are reached, for describe(); known once the first pin opened. */
  #access: string | undefined;
  // export/unexport are global files; one at a time keeps "which gpioN appeared" unambiguous.
  #exportQueue: Promise<unknown> = Promise.resolve();

  constructor(options: SysfsBackendOptions = {}) {
    this.#root = options.root ?? DEFAULT_SYSFS_ROOT;
    this.#labels = options.chipLabels;
    this.#clock = options.clock ?? systemGpioClock;
    this.#exportTimeoutMs = options.exportTimeoutMs ?? 2_000;
    this.#pollIntervalMs = options.pollIntervalMs ?? DEFAULT_POLL_INTERVAL_MS;
    this.#onoffChoice = options.onoff ?? 'auto';
    this.#onWarning = options.onWarning ?? (() => {});
    const source = options.edgeSource ?? 'auto';
    this.#edgeFactory =
      typeof source === 'function'
        ? source
        : defaultEdgeSourceFactory({
            clock: this.#clock,
            mode: source,
            pollIntervalMs: this.#pollIntervalMs,
            warn: (message) => this.#onWarning(message),
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
    const parts = [`sysfs ${this.#root}`];
    if (this.#access !== undefined) parts.push(this.#access);
    parts.push(`${this.#open.size} pin(s) open`);
    const kinds = new Set([...this.#open.values()].map((pin) => pin.edgeKind).filter((kind) => kind !== undefined));
    if (kinds.has('onoff')) parts.push('edges via onoff (epoll)');
    if (kinds.has('poll')) parts.push(`edges by polling every ${this.#pollIntervalMs} ms`);
    return parts.join(', ');
  }

  async open(bcm: number, options: PinOptions): Promise<GpioPin> {
    const resolved = resolvePinOptions(bcm, options);
    if (this.#open.has(bcm)) throw busyError(bcm);
    const [chip, Gpio] = await Promise.all([this.chip(), this.#onoffClass()]);
    if (this.#open.has(bcm)) throw busyError(bcm);
    const number = kernelGpioNumber(chip, bcm);
    const pin = new SysfsPin(this, bcm, number, join(this.#root, `gpio${number}`), resolved);
    this.#open.set(bcm, pin);
    try {
      const gpio = Gpio === undefined ? undefined : await this.#serial(async () => this.#openThroughOnoff(Gpio, pin));
      if (gpio === undefined) await this.#serial(() => this.#export(number, pin.dir));
      await pin.configure(gpio);
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
  edgeSource(pin: SysfsPin): Promise<SysfsEdgeSource> {
    return this.#edgeFactory({
      root: this.#root,
      kernelNumber: pin.number,
      valuePath: join(pin.dir, 'value'),
      activeLow: pin.options.active_low,
      ...(pin.onoff === undefined ? {} : { gpio: pin.onoff }),
    });
  }

  /** @internal */
  get clock(): GpioClock {
    return this.#clock;
  }

  /** @internal */
  async release(pin: SysfsPin): Promise<void> {
    if (this.#open.get(pin.bcm) === pin) this.#open.delete(pin.bcm);
    await this.#serial(async () => {
      const onoff = pin.onoff;
      try {
        // onoff closes its value file first; it ignores a failing unexport write itself.
        if (onoff !== undefined) onoff.unexport();
        else await writeFile(join(this.#root, 'unexport'), String(pin.number));
      } catch (error) {
        // EINVAL: not exported any more; nothing to undo.
        if (errnoOf(error) !== 'EINVAL') throw ioError(pin.bcm, `unexporting gpio${pin.number}`, error);
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

  /** onoff's Gpio class when pins go through onoff, else undefined; says which in describe(). */
  #onoffClass(): Promise<OnoffGpioClass | undefined> {
    this.#onoff ??= (async () => {
      const choice = this.#onoffChoice;
      if (typeof choice === 'function') {
        this.#access = 'pins through onoff';
        return choice;
      }
      if (choice === 'off') {
        this.#access = 'pins through the files (onoff switched off)';
        return undefined;
      }
      if (this.#root !== DEFAULT_SYSFS_ROOT) {
        this.#access = `pins through the files (onoff only works on ${DEFAULT_SYSFS_ROOT})`;
        return undefined;
      }
      const Gpio = await loadOnoff();
      this.#access =
        Gpio === undefined ? 'pins through the files (onoff is not installed or its addon does not load)' : 'pins through onoff';
      return Gpio;
    })();
    return this.#onoff;
  }

  /**
   * onoff exports and configures the pin in its constructor (synchronously, waiting for udev by
   * retrying). A failure leaves the pin to the file path, which retries for longer and names the
   * file that failed; undefined says so.
   */
  #openThroughOnoff(Gpio: OnoffGpioClass, pin: SysfsPin): OnoffGpio | undefined {
    const o = pin.options;
    const direction = o.direction === 'out' ? (physical(o.initial, o.active_low) === 1 ? 'high' : 'low') : 'in';
    // Both edges even when one is selected: the debouncer must see releases to report the next press.
    const edge = o.direction === 'in' ? (o.edge === 'none' ? 'none' : 'both') : undefined;
    try {
      return new Gpio(pin.number, direction, edge, { activeLow: o.active_low });
    } catch (error) {
      const message = `onoff could not open gpio${pin.number} (${reasonOf(error)}); GPIO ${pin.bcm} uses the sysfs files directly`;
      pin.warnings.push(message);
      this.#onWarning(message);
      return undefined;
    }
  }

  #serial<T>(fn: () => Promise<T>): Promise<T> {
    const run = this.#exportQueue.then(fn, fn);
    this.#exportQueue = run.catch(() => {});
    return run;
  }

  async #export(number: number, dir: string): Promise<void> {
    // Already exported (left over from a crash, by another tool, or by onoff before it failed):
    // take it over as it is.
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
  #onoff: OnoffGpio | undefined;
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

  /** The onoff Gpio holding this pin, when it was opened through onoff. */
  get onoff(): OnoffGpio | undefined {
    return this.#onoff;
  }

  /** Where edges come from, once watched. */
  get edgeKind(): SysfsEdgeSource['kind'] | undefined {
    return this.#source?.kind;
  }

  /** Configures an exported pin through its files, or checks what onoff configured. */
  async configure(onoff: OnoffGpio | undefined): Promise<void> {
    const o = this.options;
    this.#onoff = onoff;
    if (onoff === undefined) await this.#writeConfiguration();
    else this.#checkOnoffConfiguration(onoff);
    if (o.direction === 'out') return;
    if (o.bias !== 'as-is')
      this.warnings.push(`sysfs cannot set bias ${o.bias} on GPIO ${this.bcm}; set it in config.txt (gpio=${this.bcm}=pu|pd|pn)`);
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
      if (this.#onoff !== undefined) return await this.#onoff.read();
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
      if (this.#onoff !== undefined) await this.#onoff.write(value);
      else await writeFile(join(this.dir, 'value'), String(value));
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

  async #writeConfiguration(): Promise<void> {
    const o = this.options;
    await this.backend.writeAttribute(join(this.dir, 'active_low'), o.active_low ? '1' : '0');
    if (o.direction === 'out') {
      await this.backend.writeAttribute(join(this.dir, 'direction'), physical(o.initial, o.active_low) === 1 ? 'high' : 'low');
      return;
    }
    await this.backend.writeAttribute(join(this.dir, 'direction'), 'in');
    // Both edges even when one is selected: the debouncer must see releases to report the next press.
    await this.backend.writeAttribute(join(this.dir, 'edge'), o.edge === 'none' ? 'none' : 'both');
  }

  /**
   * onoff ignores write errors while configuring a pin that was exported before it (by a crashed
   * run or another tool). Reading back makes a pin that kept its old setup an error at open, as
   * it is on the file path, instead of a relay that silently stayed an input.
   */
  #checkOnoffConfiguration(onoff: OnoffGpio): void {
    const o = this.options;
    const kept: string[] = [];
    const activeLow = onoff.activeLow();
    if (activeLow !== o.active_low) kept.push(`active_low ${activeLow ? 1 : 0}`);
    const direction = onoff.direction();
    if ((direction === 'in') !== (o.direction === 'in')) kept.push(`direction ${direction}`);
    const edge = o.direction === 'in' ? onoff.edge() : undefined;
    if (edge !== undefined && edge !== (o.edge === 'none' ? 'none' : 'both')) kept.push(`edge ${edge}`);
    if (kept.length === 0) return;
    throw new HomeAgentError(
      'HA_ERR_GPIO_IO',
      `GPIO ${this.bcm}: gpio${this.number} kept ${kept.join(', ')} after onoff configured it (onoff ignores write errors on a pin that was already exported)`,
      { details: { bcm: this.bcm, number: this.number } },
    );
  }

  #fail(error: HomeAgentError): void {
    this.#listeners.emitError(error);
  }
}
