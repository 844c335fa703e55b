/**
 * The GPIO device driver as a plugin: the configured pins (plugin.gpio.pins) become entities,
 * inputs report their edges to the entity registry, the event bus and the agent, and outputs are
 * switched through the safety layer (pin-guard.ts), so a safe state, max_on_time and the crash
 * watcher hold whoever switches them: an entity call, a tool, homeagentctl or an automation.
 *
 * Start order: settings checked → back end chosen (the reason goes to the log, health and
 * `gpio.pins`) → PinGuard started (outputs at their safe value before anything else, watcher armed)
 * → one entity per pin with the value actually on the pin → tools and control methods.
 *
 * Edge path, in this order and without waiting: entity state, `gpio.edge` event, then, when the
 * edge is one of the pin's `input_edges`, an input for the agent (queued at level 0, an interrupt
 * otherwise). The receipt is not awaited; a failed one is logged.
 */
import { join } from 'node:path';
import type { GpioBackendStatus, GpioPinStatus } from '../../src/sdk/api.js';
import {
  definePlugin,
  type EntityDefinition,
  type EntityHandle,
  HomeAgentError,
  isHomeAgentError,
  type PluginContext,
  type PluginFactory,
  type PluginHealth,
  type PluginInput,
  type PluginInstance,
  type Receipt,
} from '../../src/sdk/index.js';
import { directionError, type EdgeEvent, type GpioBackend, type GpioValue, physical } from './gpio-backend.js';
import { type GpioClock, systemGpioClock } from './gpio-clock.js';
import { registerGpioMethods } from './gpio-methods.js';
import type { GpioOperations, LivePin, OperationActor, WriteResult } from './gpio-operations.js';
import { type GpioPinPlan, planGpioPins } from './gpio-pin-config.js';
import { gpioTools } from './gpio-tools.js';
import { PinGuard, type PinGuardEvent, type WatcherOptions } from './pin-guard.js';
import { selectGpioBackend } from './select-backend.js';
import type { GpioSettings } from './settings-schema.js';
import { SimulatedGpioBackend } from './simulated-backend.js';

export interface GpioPluginOptions {
  clock?: GpioClock;
  /** A back end chosen by the caller (tests, benchmarks); plugin.gpio.backend is then ignored. */
  backend?: GpioBackend;
  /** Crash watcher options, or false for none (unit tests). Report and spec files default to the plugin's data folder. */
  watcher?: WatcherOptions | false;
}

/** Files in the plugin's data folder: the spec is what systemd's ExecStopPost= applies (`safe-state-watcher.js --apply`). */
export const SAFE_STATE_SPEC_FILE = 'safe-state.json';
export const SAFE_STATE_REPORT_FILE = 'safe-state-report.json';
/** Where the simulator keeps output levels (one file per pin), so they outlive the process as a real wire does. */
export const SIMULATED_STATE_DIR = 'simulated-gpio';
/** Where the libgpiod back end records the pids of the tools holding outputs, for the crash watcher. */
export const GPIOD_RUN_DIR = 'gpiod';
const INPUT_SOURCE = 'gpio';
const INPUT_CHANNEL = 'gpio';
const BCM_REFERENCE = /^(?:gpio|bcm)?\s*(\d{1,2})$/i;
const CHIP_DEVICE = /^gpiochip\d+$/;

export class GpioPlugin implements PluginInstance, GpioOperations {
  readonly #ctx: PluginContext<GpioSettings>;
  readonly #options: GpioPluginOptions;
  readonly #clock: GpioClock;
  readonly #pins = new Map<string, LivePin>();
  readonly #byReference = new Map<string, LivePin>();
  readonly #byBcm = new Map<number, LivePin>();
  readonly #handles = new Map<LivePin, EntityHandle>();
  readonly #unregister: Array<() => void> = [];
  #guard: PinGuard | undefined;
  #backend: GpioBackend | undefined;
  #reason = '';
  #reasonZh = '';
  /** Both in the two languages health speaks. */
  #watcherProblem: { en: string; zh: string } | undefined;
  #crashProtection: { en: string; zh: string } | undefined;

  constructor(ctx: PluginContext<GpioSettings>, options: GpioPluginOptions = {}) {
    this.#ctx = ctx;
    this.#options = options;
    this.#clock = options.clock ?? systemGpioClock;
  }

  async start(signal: AbortSignal): Promise<void> {
    const plans = planGpioPins(this.#ctx.settings.get('pins'));
    const { backend, reason, reason_zh } = await this.#selectBackend();
    this.#backend = backend;
    this.#reason = reason;
    this.#reasonZh = reason_zh;
    this.#ctx.log.info({ backend: backend.kind, pins: plans.length }, `GPIO back end ${reason}`);
    for (const plan of plans) {
      for (const warning of plan.warnings) this.#ctx.log.warn({ pin: plan.id }, `GPIO pin ${plan.id}: ${warning}`);
      const bias = plan.guard.bias ?? 'as-is';
      if (backend.kind === 'sysfs' && bias !== 'as-is') {
        // The back end notes it on the pin, which PinGuard keeps to itself; said here where the owner reads it.
        const flag = bias === 'pull-up' ? 'pu' : bias === 'pull-down' ? 'pd' : 'pn';
        this.#ctx.log.warn(
          { pin: plan.id },
          `GPIO pin ${plan.id}: sysfs cannot set bias ${bias}; set it in config.txt (gpio=${plan.bcm}=${flag})`,
        );
      }
      const pin: LivePin = { plan, value: undefined, error: undefined };
      this.#pins.set(plan.id, pin);
      this.#byReference.set(plan.id, pin);
      this.#byReference.set(plan.entity_id, pin);
      this.#byBcm.set(plan.bcm, pin);
    }
    const guard = new PinGuard({
      backend,
      pins: plans.map((p) => p.guard),
      clock: this.#clock,
      onEvent: (event) => this.#onGuardEvent(event),
      watcher: this.#watcherOptions(),
    });
    this.#guard = guard;
    try {
      await guard.start(signal);
      for (const value of guard.list()) {
        const pin = this.#pins.get(value.name);
        if (pin !== undefined && value.value !== undefined) pin.value = value.value;
      }
      for (const pin of this.#pins.values()) {
        signal.throwIfAborted();
        if (pin.plan.direction === 'in') pin.value = await guard.read(pin.plan.id);
        this.#handles.set(pin, this.#registerEntity(pin));
      }
      // No pins, no GPIO tools: they would only take room in every prompt.
      if (this.#pins.size > 0) for (const tool of gpioTools(this)) this.#unregister.push(this.#ctx.tools.register(tool));
      this.#registerMethods();
    } catch (error) {
      await this.stop();
      throw error;
    }
  }

  async stop(): Promise<void> {
    for (const unregister of this.#unregister.splice(0)) unregister();
    const guard = this.#guard;
    this.#guard = undefined;
    if (guard !== undefined) {
      await guard.stop();
      // The entities keep the level each output was left at (its safe value) as their last state.
      for (const value of guard.list()) {
        const pin = this.#pins.get(value.name);
        if (pin === undefined || pin.plan.direction !== 'out' || value.value === undefined) continue;
        pin.value = value.value;
        this.#handles.get(pin)?.update(this.#state(pin.plan, value.value));
      }
    }
    for (const handle of this.#handles.values()) handle.remove();
    this.#handles.clear();
    this.#pins.clear();
    this.#byReference.clear();
    this.#byBcm.clear();
    this.#backend = undefined;
    this.#watcherProblem = undefined;
    this.#crashProtection = undefined;
  }

  health(): Required<PluginHealth> {
    if (this.#guard === undefined) return { ok: false, detail: 'GPIO is not running', detail_zh: 'GPIO 没有运行' };
    const problems: string[] = [];
    const problemsZh: string[] = [];
    if (this.#watcherProblem !== undefined) {
      problems.push(this.#watcherProblem.en);
      problemsZh.push(this.#watcherProblem.zh);
    }
    // A pin's error is the back end's own text.
    for (const pin of this.#pins.values()) {
      if (pin.error === undefined) continue;
      problems.push(`${pin.plan.id}: ${pin.error}`);
      problemsZh.push(`${pin.plan.id}：${pin.error}`);
    }
    if (problems.length > 0) return { ok: false, detail: problems.join('; '), detail_zh: problemsZh.join('；') };
    const note = this.#crashProtection === undefined ? '' : `; ${this.#crashProtection.en}`;
    const noteZh = this.#crashProtection === undefined ? '' : `；${this.#crashProtection.zh}`;
    return {
      ok: true,
      detail: `${this.#reason}; ${this.#pins.size} pin(s)${note}`,
      detail_zh: `${this.#reasonZh}；${this.#pins.size} 个引脚${noteZh}`,
    };
  }

  // ---- GpioOperations (tools and control methods) ----

  find(reference: string | number): LivePin | undefined {
    if (typeof reference === 'number') return this.#byBcm.get(reference);
    const text = reference.trim();
    // An id first: "5" or "gpio17" may well be a pin's id, and then they mean that pin.
    const byName = this.#byReference.get(text.toLowerCase());
    if (byName !== undefined) return byName;
    const bcm = BCM_REFERENCE.exec(text);
    return bcm === null ? undefined : this.#byBcm.get(Number(bcm[1]));
  }

  describePins(): string {
    if (this.#pins.size === 0) return 'no pins are configured (plugin.gpio.pins)';
    return [...this.#pins.values()]
      .map((p) => `${p.plan.id} (GPIO${p.plan.bcm}, ${p.plan.direction === 'out' ? 'output' : 'input'})`)
      .join(', ');
  }

  async read(pin: LivePin): Promise<GpioValue> {
    const value = await this.#running().read(pin.plan.id);
    // An input without edges (or one whose edge was missed) gets its entity brought up to date.
    this.#report(pin, value);
    return value;
  }

  async write(pin: LivePin, value: GpioValue, by: OperationActor): Promise<WriteResult> {
    const plan = pin.plan;
    if (plan.direction !== 'out') throw directionError(plan.bcm, `pin ${plan.id} is an input (direction in) and cannot be written`);
    this.#ctx.audit('gpio.write', { pin: plan.id, bcm: plan.bcm, value, actor: by.actor, ...by.details });
    return this.#apply(pin, value);
  }

  async pulse(pin: LivePin, ms: number | undefined, by: OperationActor): Promise<number> {
    const plan = pin.plan;
    if (plan.direction !== 'out') throw directionError(plan.bcm, `pin ${plan.id} is an input (direction in) and cannot be pulsed`);
    const length = ms ?? (plan.pulse_ms > 0 ? plan.pulse_ms : undefined);
    if (length === undefined) {
      throw new HomeAgentError('HA_ERR_GPIO_CONFIG', `pin ${plan.id} has no pulse_ms: give the pulse length in ms`, {
        details: { pin: plan.id },
      });
    }
    this.#ctx.audit('gpio.pulse', { pin: plan.id, bcm: plan.bcm, ms: length, actor: by.actor, ...by.details });
    await this.#pulse(pin, length);
    return length;
  }

  simulate(pin: LivePin, action: { level: GpioValue } | { press_ms: number }, by: OperationActor): void {
    const backend = this.#backend;
    if (!(backend instanceof SimulatedGpioBackend)) {
      throw new HomeAgentError(
        'HA_ERR_GPIO_UNAVAILABLE',
        `gpio.simulate works on the simulated back end only; this one is ${backend?.kind ?? 'not running'} (plugin.gpio.backend)`,
      );
    }
    const plan = pin.plan;
    if (plan.direction !== 'in') throw directionError(plan.bcm, `pin ${plan.id} is an output: only inputs can be driven (use gpio write)`);
    this.#running();
    this.#ctx.audit('gpio.simulate', { pin: plan.id, bcm: plan.bcm, ...action, actor: by.actor, ...by.details });
    if ('level' in action) backend.control.drive(plan.bcm, physical(action.level, plan.active_low));
    else backend.control.press(plan.bcm, { holdMs: action.press_ms });
  }

  status(pin: LivePin): GpioPinStatus {
    const plan = pin.plan;
    const onSince = this.#guard?.list().find((p) => p.name === plan.id)?.on_since;
    return {
      id: plan.id,
      name: plan.name,
      bcm: plan.bcm,
      direction: plan.direction,
      domain: plan.domain,
      entity_id: plan.entity_id,
      value: pin.value ?? null,
      state: pin.value === undefined ? null : this.#state(plan, pin.value),
      active_low: plan.active_low,
      pulse_ms: plan.pulse_ms,
      max_on_time_s: plan.max_on_time_s,
      on_since: onSince === undefined ? null : new Date(onSince).toISOString(),
      error: pin.error ?? null,
    };
  }

  pins(): GpioPinStatus[] {
    return [...this.#pins.values()].map((pin) => this.status(pin));
  }

  backend(): GpioBackendStatus {
    const backend = this.#backend;
    if (backend === undefined) throw new HomeAgentError('HA_ERR_GPIO_UNAVAILABLE', 'GPIO is not running');
    const pid = this.#guard?.watcherPid;
    return {
      kind: backend.kind,
      reason: this.#reason,
      describe: backend.describe(),
      watcher_pid: pid ?? null,
      crash_protection: this.#crashProtectionLine(pid),
    };
  }

  #crashProtectionLine(pid: number | undefined): string {
    if (this.#watcherProblem !== undefined) return this.#watcherProblem.en;
    if (pid !== undefined) return `crash watcher armed (pid ${pid})`;
    if (this.#crashProtection !== undefined) return this.#crashProtection.en;
    if (this.#options.watcher === false) return 'crash watcher off';
    return 'nothing to protect (no outputs with a safe value)';
  }

  // ---- internals ----

  #running(): PinGuard {
    const guard = this.#guard;
    if (guard === undefined) throw new HomeAgentError('HA_ERR_GPIO_UNAVAILABLE', 'GPIO is not running');
    return guard;
  }

  async #selectBackend(): Promise<{ backend: GpioBackend; reason: string; reason_zh: string }> {
    if (this.#options.backend !== undefined) {
      const kind = this.#options.backend.kind;
      return { backend: this.#options.backend, reason: `${kind}: chosen by the caller`, reason_zh: `${kind}：由调用方指定` };
    }
    const chip = (this.#ctx.settings.get('chip') ?? '').trim();
    const clock = this.#clock;
    const data = this.#ctx.paths.data;
    const labels = chip === '' || CHIP_DEVICE.test(chip) ? {} : { chipLabels: [chip] };
    if (chip !== '' && CHIP_DEVICE.test(chip)) {
      this.#ctx.log.info(`plugin.gpio.chip ${chip} names a character device: sysfs picks its chip by label, libgpiod uses ${chip}`);
    }
    return selectGpioBackend({
      backend: this.#ctx.settings.get('backend') ?? 'auto',
      sysfs: {
        ...labels,
        clock,
        pollIntervalMs: this.#ctx.settings.get('poll_interval_ms') ?? 10,
        onWarning: (message: string) => this.#ctx.log.warn(`GPIO: ${message}`),
      },
      gpiod: { ...labels, ...(CHIP_DEVICE.test(chip) ? { chip } : {}), clock, runDir: join(data, GPIOD_RUN_DIR) },
      simulated: { clock, stateDir: join(data, SIMULATED_STATE_DIR) },
    });
  }

  #watcherOptions(): WatcherOptions | false {
    if (this.#options.watcher === false) return false;
    const data = this.#ctx.paths.data;
    return { specFile: join(data, SAFE_STATE_SPEC_FILE), reportFile: join(data, SAFE_STATE_REPORT_FILE), ...this.#options.watcher };
  }

  #registerEntity(pin: LivePin): EntityHandle {
    const plan = pin.plan;
    const attributes: Record<string, unknown> = { bcm: plan.bcm, pin: plan.id, active_low: plan.active_low };
    if (plan.pulse_ms > 0) attributes.pulse_ms = plan.pulse_ms;
    if (plan.max_on_time_s > 0) attributes.max_on_time_s = plan.max_on_time_s;
    const definition: EntityDefinition = {
      domain: plan.domain,
      object_id: plan.id,
      name: plan.name,
      aliases: plan.aliases,
      area: plan.area,
      device: `gpio${plan.bcm}`,
      device_class: plan.device_class,
      attributes,
      initial_state: pin.value === undefined ? null : this.#state(plan, pin.value),
      services: plan.services,
    };
    if (plan.direction === 'out') {
      definition.call = (service: string, data: Record<string, unknown>) => this.#call(pin, service, data);
    }
    return this.#ctx.entities.register(definition);
  }

  /** An entity service on an output: turn_on/turn_off/toggle, lock/unlock, open/close. */
  async #call(pin: LivePin, service: string, data: Record<string, unknown>): Promise<void> {
    const plan = pin.plan;
    let value: GpioValue | undefined = service === 'toggle' ? (pin.value === 1 ? 0 : 1) : plan.service_values[service];
    if (value === undefined || !plan.services.includes(service)) {
      throw new HomeAgentError('HA_ERR_ENTITY_SERVICE', `${plan.entity_id} offers ${plan.services.join(', ')}, not ${service}`);
    }
    // light brightness 0 and fan percentage 0 mean off, as in Home Assistant.
    if (service === 'turn_on' && (data.brightness === 0 || data.percentage === 0)) value = 0;
    // Whoever called the entity audits the call (the registry carries its actor into the state change).
    await this.#apply(pin, value);
  }

  /** Sets an output; a 1 on a momentary relay is a pulse of its pulse_ms (it has no "held on"). */
  async #apply(pin: LivePin, value: GpioValue): Promise<WriteResult> {
    const plan = pin.plan;
    if (value === 1 && plan.pulse_ms > 0) {
      await this.#pulse(pin, plan.pulse_ms);
      return { pulsed_ms: plan.pulse_ms };
    }
    await this.#running().write(plan.id, value);
    this.#report(pin, value);
    return {};
  }

  /** A pulse through the safety layer; the entity shows on while it lasts and the level it ended at after. */
  async #pulse(pin: LivePin, ms: number): Promise<void> {
    const guard = this.#running();
    const id = pin.plan.id;
    // PinGuard.pulse switches on first; the state is reported before that write and corrected when the pulse ends.
    this.#report(pin, 1);
    try {
      await guard.pulse(id, ms);
    } finally {
      const value = guard.list().find((p) => p.name === id)?.value;
      if (value !== undefined) this.#report(pin, value);
    }
  }

  #report(pin: LivePin, value: GpioValue): void {
    pin.value = value;
    pin.error = undefined;
    this.#handles.get(pin)?.update(this.#state(pin.plan, value));
  }

  #state(plan: GpioPinPlan, value: GpioValue): string {
    return value === 1 ? plan.on_state : plan.off_state;
  }

  #onGuardEvent(event: PinGuardEvent): void {
    const log = this.#ctx.log;
    switch (event.type) {
      case 'edge':
        this.#onEdge(event.name, event.event);
        return;
      case 'max_on_time': {
        const pin = this.#pins.get(event.name);
        if (pin !== undefined) this.#report(pin, 0);
        log.warn(
          { pin: event.name, bcm: event.bcm, on_ms: event.on_ms },
          `GPIO pin ${event.name} was on longer than its max_on_time_s and was switched off`,
        );
        return;
      }
      case 'pin_error': {
        const pin = this.#pins.get(event.name);
        if (pin !== undefined) pin.error = event.error.message;
        log.error({ pin: event.name, bcm: event.bcm, err: event.error }, `GPIO pin ${event.name}: ${event.error.message}`);
        return;
      }
      case 'watcher_exited':
        this.#watcherProblem = {
          en: `the GPIO crash watcher exited (${event.signal ?? `code ${String(event.code)}`}): outputs are not protected if HomeAgent dies`,
          zh: `GPIO 崩溃守护进程退出了（${event.signal ?? `退出码 ${String(event.code)}`}）：HomeAgent 挂掉时输出不受保护`,
        };
        log.error({ code: event.code, signal: event.signal }, this.#watcherProblem.en);
        return;
      case 'no_crash_protection':
        this.#crashProtection = {
          en: `no crash protection for ${event.pins.join(', ')} (${event.reason})`,
          zh: `${event.pins.join('、')} 没有崩溃保护（${event.reason}）`,
        };
        log.warn({ pins: event.pins }, `GPIO outputs ${event.pins.join(', ')} keep their level if HomeAgent dies: ${event.reason}`);
        return;
      case 'previous_crash':
        log.warn(
          { report: event.report },
          'the previous HomeAgent run ended without stopping; its crash watcher put the GPIO outputs in their safe state',
        );
        return;
      case 'safe_state':
        if (event.errors.length > 0)
          log.error({ pins: event.pins, errors: event.errors }, `GPIO safe state at ${event.reason} failed for some pins`);
        else if (event.pins.length > 0) log.info({ pins: event.pins }, `GPIO outputs in their safe state (${event.reason})`);
        return;
    }
  }

  /** The hot path (see the module comment): lookups and one object per consumer, nothing else. */
  #onEdge(id: string, event: EdgeEvent): void {
    const pin = this.#pins.get(id);
    if (pin === undefined) return;
    const plan = pin.plan;
    const rising = event.edge === 'rising';
    pin.value = event.value;
    this.#handles.get(pin)?.update(event.value === 1 ? plan.on_state : plan.off_state);
    this.#ctx.events.publish('gpio.edge', {
      pin: id,
      bcm: plan.bcm,
      entity_id: plan.entity_id,
      edge: event.edge,
      value: event.value,
      at: event.at,
    });
    if (!(rising ? plan.input_rising : plan.input_falling)) return;
    const input: PluginInput = {
      source: INPUT_SOURCE,
      channel: INPUT_CHANNEL,
      // Someone at the button, or whatever closes the contact: of the house, not proven to be the owner.
      sender: { trust: 'household', id: `gpio:${id}`, proof: `a wired input on GPIO ${plan.bcm}` },
      type: 'text',
      payload: rising ? plan.text_rising : plan.text_falling,
      meta: { pin: id, bcm: plan.bcm, entity_id: plan.entity_id, edge: event.edge, value: event.value, at: event.at },
    };
    try {
      const receipt = plan.level === 0 ? this.#ctx.io.injectInput(input) : this.#ctx.io.injectInterrupt(input, plan.level);
      receipt.then(this.#onReceipt, this.#onInjectFailed);
    } catch (error) {
      this.#onInjectFailed(error);
    }
  }

  readonly #onReceipt = (receipt: Receipt): void => {
    if (receipt.status === 'failed') this.#ctx.log.warn({ input_id: receipt.input_id, receipt }, 'a GPIO input to the agent failed');
  };

  readonly #onInjectFailed = (error: unknown): void => {
    this.#ctx.log.error({ err: error }, 'a GPIO edge could not be handed to the agent');
  };

  #registerMethods(): void {
    try {
      this.#unregister.push(...registerGpioMethods(this.#ctx.control, this));
    } catch (error) {
      // The pins work without them; only `homeagentctl gpio` is missing.
      if (!isHomeAgentError(error, 'HA_ERR_UNAVAILABLE')) throw error;
      this.#ctx.log.warn({ err: error }, 'GPIO control methods are not available in this daemon: `homeagentctl gpio` will not answer');
    }
  }
}

export function createGpioPlugin(options: GpioPluginOptions = {}): PluginFactory<GpioSettings> {
  return (ctx) => new GpioPlugin(ctx, options);
}

export default definePlugin<GpioSettings>(createGpioPlugin());
