/**
 * GPIO through the libgpiod command-line tools (gpioget, gpioset, gpiomon, gpiodetect from Debian's
 * `gpiod`), for kernels without sysfs GPIO. No native addon: each operation is a child process.
 *
 * - The chip is chosen by label from gpiodetect (the Pi 5's RP1 is not gpiochip0 on every kernel).
 * - A character-device line keeps its value only while a process holds it, so every output has a
 *   long-running gpioset "holder". A write stops the holder and starts one with the new value:
 *   the line is released for the moment between the two (the Pi's pinctrl keeps the level, but
 *   libgpiod calls that undefined). Reads of an output return the value last written: gpioget
 *   would fail with EBUSY on a held line, and v1 would turn it into an input.
 * - An input with edges has a long-running gpiomon; its level is read once with gpioget before
 *   the monitor starts (a change inside that gap shows up with the next edge) and is then tracked
 *   from the events, because gpioget cannot request a line gpiomon holds.
 * - With `runDir`, each holder's pid is recorded in `gpiod-<chip>-<line>.pid`: the crash watcher
 *   stops the orphaned holder and starts one at the safe value, and the next open stops that one.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { HomeAgentError } from '../../src/sdk/index.js';
import { type GpioChipInfo, MAIN_CHIP_LABELS, pickMainChip } from './chip-offset.js';
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
  physical,
  type ResolvedPinOptions,
  resolvePinOptions,
} from './gpio-backend.js';
import { type GpioClock, systemGpioClock } from './gpio-clock.js';
import {
  detectGpiodTools,
  type GpiodTools,
  getArgs,
  holdArgs,
  monitorCommand,
  parseGetOutput,
  parseGpiodetect,
  parseMonitorLine,
  runTool,
} from './gpiod-tools.js';
import type { SafeStateStep } from './safe-state.js';

export interface GpiodBackendOptions {
  /** Where to look for the tools. Default $PATH. */
  path?: string;
  /** Environment of the tool processes. Default process.env. */
  env?: NodeJS.ProcessEnv;
  /** A chip name (`gpiochip4`) to use instead of detecting one by label. */
  chip?: string;
  chipLabels?: readonly string[];
  clock?: GpioClock;
  /** Directory for the holders' pid files; without it there is no crash protection for outputs. */
  runDir?: string;
  /**
   * How long a new gpioset must stay up before a write counts as done. It reports a refused line
   * only by exiting, so a holder that is still running after this long holds the line. Default 100 ms.
   */
  holdConfirmMs?: number;
}

interface Setup {
  tools: GpiodTools;
  chip: GpioChipInfo;
}

const STOP_WAIT_MS = 2_000;
const STDERR_KEEP = 2_000;

function waitForExit(child: ChildProcess, ms: number): Promise<boolean> {
  if (child.exitCode !== null || child.signalCode !== null) return Promise.resolve(true);
  return new Promise((resolve) => {
    const timer = setTimeout(() => resolve(false), ms);
    child.once('exit', () => {
      clearTimeout(timer);
      resolve(true);
    });
  });
}

async function stopChild(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  child.kill('SIGTERM');
  if (!(await waitForExit(child, STOP_WAIT_MS))) {
    child.kill('SIGKILL');
    await waitForExit(child, STOP_WAIT_MS);
  }
}

/** Removes a pid file only while it still names `pid`: a crash watcher may have recorded its own holder there. */
function removeIfOwn(file: string, pid: number): void {
  try {
    if (Number(readFileSync(file, 'utf8').trim()) === pid) rmSync(file, { force: true });
  } catch {
    // no file: nothing to remove
  }
}

export class GpiodGpioBackend implements GpioBackend {
  readonly kind = 'gpiod' as const;
  readonly #options: GpiodBackendOptions;
  readonly #env: NodeJS.ProcessEnv;
  readonly #clock: GpioClock;
  readonly #open = new Map<number, GpiodPin>();
  #setup: Promise<Setup> | undefined;
  #described = 'gpiod (not started)';

  constructor(options: GpiodBackendOptions = {}) {
    this.#options = options;
    this.#env = options.env ?? process.env;
    this.#clock = options.clock ?? systemGpioClock;
  }

  /** Tools and chip (cached). HA_ERR_GPIO_UNAVAILABLE without tools or a Pi chip. */
  setup(): Promise<Setup> {
    this.#setup ??= this.#detect();
    this.#setup.catch(() => {
      this.#setup = undefined;
    });
    return this.#setup;
  }

  describe(): string {
    return `${this.#described}, ${this.#open.size} pin(s) open`;
  }

  async open(bcm: number, options: PinOptions): Promise<GpioPin> {
    const resolved = resolvePinOptions(bcm, options);
    if (this.#open.has(bcm)) throw busyError(bcm);
    const setup = await this.setup();
    if (bcm >= setup.chip.ngpio)
      throw new HomeAgentError('HA_ERR_GPIO_CONFIG', `GPIO ${bcm} is outside ${setup.chip.name} (${setup.chip.ngpio} lines)`);
    const pin = new GpiodPin(this, setup, bcm, resolved);
    this.#open.set(bcm, pin);
    try {
      await this.#stopRecordedHolder(bcm, setup.chip.name);
      await pin.start();
      return pin;
    } catch (error) {
      this.#open.delete(bcm);
      await pin.close().catch(() => {});
      throw ioError(bcm, 'open', error);
    }
  }

  safeStateSteps(pin: GpioPin, value: GpioValue): SafeStateStep[] {
    const own = this.#open.get(pin.bcm);
    if (own === undefined || own !== pin) throw closedError(pin.bcm);
    const pidFile = this.pidFile(pin.bcm, own.setup.chip.name);
    if (pidFile === undefined) return [];
    const { tools, chip } = own.setup;
    return [
      { kind: 'kill', pid_file: pidFile, expect: 'gpioset' },
      {
        kind: 'spawn',
        command: tools.gpioset,
        args: holdArgs(tools, chip.name, pin.bcm, value, pin.options.active_low),
        pid_file: pidFile,
      },
    ];
  }

  async close(): Promise<void> {
    for (const pin of [...this.#open.values()]) await pin.close();
  }

  /** @internal */
  pidFile(bcm: number, chip: string): string | undefined {
    return this.#options.runDir === undefined ? undefined : join(this.#options.runDir, `gpiod-${chip}-${bcm}.pid`);
  }

  /** @internal */
  get env(): NodeJS.ProcessEnv {
    return this.#env;
  }

  /** @internal */
  get clock(): GpioClock {
    return this.#clock;
  }

  /** @internal */
  get holdConfirmMs(): number {
    return this.#options.holdConfirmMs ?? 100;
  }

  /** @internal */
  forget(pin: GpiodPin): void {
    if (this.#open.get(pin.bcm) === pin) this.#open.delete(pin.bcm);
  }

  async #detect(): Promise<Setup> {
    const tools = await detectGpiodTools(this.#options.path ?? process.env.PATH ?? '', this.#env);
    const chips = parseGpiodetect(await runTool(tools.gpiodetect, [], this.#env));
    const chip =
      this.#options.chip === undefined
        ? pickMainChip(chips, this.#options.chipLabels ?? MAIN_CHIP_LABELS)
        : chips.find((c) => c.name === this.#options.chip);
    if (chip === undefined) {
      const seen = chips.map((c) => `${c.name} [${c.label}] (${c.ngpio} lines)`).join('; ') || 'no chips';
      throw new HomeAgentError('HA_ERR_GPIO_UNAVAILABLE', `no Raspberry Pi GPIO chip found by gpiodetect (${seen})`);
    }
    this.#described = `gpiod ${tools.versionText} on ${chip.name} [${chip.label}]`;
    return { tools, chip };
  }

  /** A holder left by a crashed run or by the crash watcher still owns the line: stop it. */
  async #stopRecordedHolder(bcm: number, chip: string): Promise<void> {
    const file = this.pidFile(bcm, chip);
    if (file === undefined) return;
    let pid: number;
    try {
      pid = Number(readFileSync(file, 'utf8').trim());
    } catch {
      return;
    }
    let cmdline = '';
    try {
      cmdline = readFileSync(`/proc/${pid}/cmdline`, 'utf8');
    } catch {
      // gone already
    }
    if (Number.isInteger(pid) && pid > 0 && cmdline.includes('gpioset')) {
      try {
        process.kill(pid, 'SIGTERM');
      } catch {
        // exited in between
      }
      for (let waited = 0; waited < STOP_WAIT_MS; waited += 20) {
        try {
          readFileSync(`/proc/${pid}/cmdline`);
        } catch {
          break;
        }
        await new Promise((resolve) => setTimeout(resolve, 20));
      }
    }
    rmSync(file, { force: true });
  }
}

class GpiodPin implements GpioPin {
  readonly warnings: readonly string[] = [];
  #value: GpioValue;
  #holder: ChildProcess | undefined;
  #monitor: ChildProcess | undefined;
  #filter: EdgeFilter | undefined;
  #queue: Promise<unknown> = Promise.resolve();
  readonly #listeners: PinListeners;
  #closed = false;
  #closing: Promise<void> | undefined;

  constructor(
    readonly backend: GpiodGpioBackend,
    readonly setup: Setup,
    readonly bcm: number,
    readonly options: Readonly<ResolvedPinOptions>,
  ) {
    this.#value = options.initial;
    this.#listeners = new PinListeners(bcm, options);
  }

  async start(): Promise<void> {
    if (this.options.direction === 'out') {
      await this.#hold(this.options.initial);
      return;
    }
    if (this.options.edge === 'none') return;
    const initial = await this.#get();
    this.#filter = new EdgeFilter({
      bcm: this.bcm,
      edge: this.options.edge,
      debounceMs: this.options.debounce_ms,
      clock: this.backend.clock,
      initial,
      emit: (event) => {
        this.#listeners.emitEdge(event);
      },
    });
    this.#startMonitor();
  }

  async read(): Promise<GpioValue> {
    if (this.#closed) throw closedError(this.bcm);
    if (this.options.direction === 'out') return this.#value;
    if (this.#filter !== undefined) return this.#filter.raw;
    try {
      return await this.#get();
    } catch (error) {
      throw ioError(this.bcm, 'read', error);
    }
  }

  write(value: GpioValue): Promise<void> {
    if (this.#closed) return Promise.reject(closedError(this.bcm));
    if (this.options.direction !== 'out') return Promise.reject(directionError(this.bcm, 'is an input and cannot be written'));
    if (value !== 0 && value !== 1)
      return Promise.reject(new HomeAgentError('HA_ERR_GPIO_CONFIG', `GPIO ${this.bcm}: a value must be 0 or 1`));
    // One holder change at a time per line, in call order.
    const run = this.#queue.then(() => this.#hold(value));
    this.#queue = run.catch(() => {});
    return run.catch((error: unknown) => {
      throw ioError(this.bcm, 'write', error);
    });
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
      this.#listeners.clearEdges();
      await this.#queue;
      const holder = this.#holder;
      const monitor = this.#monitor;
      this.#holder = undefined;
      this.#monitor = undefined;
      if (holder) await stopChild(holder);
      if (monitor) await stopChild(monitor);
      const pidFile = this.backend.pidFile(this.bcm, this.setup.chip.name);
      if (pidFile !== undefined && holder?.pid !== undefined) removeIfOwn(pidFile, holder.pid);
      this.backend.forget(this);
    })();
    return this.#closing;
  }

  #get(): Promise<GpioValue> {
    const { tools, chip } = this.setup;
    return runTool(tools.gpioget, getArgs(tools, chip.name, this.bcm, this.options.active_low, this.options.bias), this.backend.env).then(
      parseGetOutput,
    );
  }

  async #hold(value: GpioValue): Promise<void> {
    const { tools, chip } = this.setup;
    const previous = this.#holder;
    this.#holder = undefined;
    if (previous) await stopChild(previous);
    const child = spawn(tools.gpioset, holdArgs(tools, chip.name, this.bcm, value, this.options.active_low), {
      env: this.backend.env,
      stdio: ['ignore', 'ignore', 'pipe'],
    });
    let stderr = '';
    child.stderr?.setEncoding('utf8');
    child.stderr?.on('data', (chunk: string) => {
      stderr = (stderr + chunk).slice(-STDERR_KEEP);
    });
    const failed = await new Promise<string | undefined>((resolve) => {
      const timer = setTimeout(() => resolve(undefined), this.backend.holdConfirmMs);
      child.once('error', (error) => {
        clearTimeout(timer);
        resolve(error.message);
      });
      child.once('exit', (code, signal) => {
        clearTimeout(timer);
        resolve(`gpioset exited (${signal ?? `code ${code}`}) ${stderr.trim()}`.trim());
      });
    });
    if (failed !== undefined) throw new HomeAgentError('HA_ERR_GPIO_IO', `GPIO ${this.bcm}: ${failed}`, { details: { bcm: this.bcm } });
    this.#holder = child;
    this.#value = value;
    const pidFile = this.backend.pidFile(this.bcm, chip.name);
    if (pidFile !== undefined && child.pid !== undefined) writeFileSync(pidFile, `${child.pid}\n`);
    child.once('exit', (code, signal) => {
      if (this.#holder !== child) return; // replaced or closed on purpose
      this.#holder = undefined;
      this.#fail(new HomeAgentError('HA_ERR_GPIO_IO', `GPIO ${this.bcm}: gpioset stopped holding the line (${signal ?? `code ${code}`})`));
    });
  }

  #startMonitor(): void {
    const { tools, chip } = this.setup;
    const { file, args } = monitorCommand(tools, chip.name, this.bcm, this.options.bias);
    const child = spawn(file, args, { env: this.backend.env, stdio: ['ignore', 'pipe', 'pipe'] });
    this.#monitor = child;
    let stderr = '';
    child.stderr?.setEncoding('utf8');
    child.stderr?.on('data', (chunk: string) => {
      stderr = (stderr + chunk).slice(-STDERR_KEEP);
    });
    if (child.stdout) {
      createInterface({ input: child.stdout }).on('line', (line) => {
        const level = parseMonitorLine(tools, line, this.bcm);
        if (level !== undefined) this.#filter?.sample(physical(level, this.options.active_low));
      });
    }
    child.once('error', (error) => this.#fail(ioError(this.bcm, 'gpiomon', error)));
    child.once('exit', (code, signal) => {
      if (this.#monitor !== child) return;
      this.#monitor = undefined;
      this.#fail(
        new HomeAgentError('HA_ERR_GPIO_IO', `GPIO ${this.bcm}: gpiomon exited (${signal ?? `code ${code}`}) ${stderr.trim()}`.trim()),
      );
    });
  }

  #fail(error: HomeAgentError): void {
    this.#listeners.emitError(error);
  }
}
