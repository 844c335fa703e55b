/**
 * Zigbee2MQTT devices as HomeAgent entities. Z2M publishes its device list (retained) on
 * `<z2m>/bridge/devices`, each device's state as JSON on `<z2m>/<friendly_name>`, its availability
 * on `<z2m>/<friendly_name>/availability` and its own on `<z2m>/bridge/state`; it takes commands as
 * JSON on `<z2m>/<friendly_name>/set` and answers them with the new state.
 *
 * Friendly names may contain `/` (`kitchen/ceiling`), so a device's topics can have any number of
 * levels and `<z2m>/+` would miss them: the bridge follows `<z2m>/#` and routes by the names the
 * device list holds. Messages for names it does not know yet (retained availability can arrive
 * before the list) are kept, a bounded few, until the list names them.
 *
 * Entity ids come from friendly names (zigbee2mqtt-exposes.ts), so a rename in Z2M gives the device
 * new entity ids: the old ones are removed (their history stays) and the new ones start from the
 * last state of the old. A device that leaves the list loses its entities. A payload that cannot be
 * read is logged and counted (`counters.malformed`), never fatal.
 */
import type { Zigbee2MqttDeviceDiagnostics, ZigbeeBridgeState } from '../../src/sdk/api.js';
import {
  type EntityDefinition,
  type EntityHandle,
  type EntityState,
  HomeAgentError,
  type PluginContext,
  STATE_UNAVAILABLE,
  slugify,
} from '../../src/sdk/index.js';
import type { MqttCounters, MqttLink, MqttMessage } from './types.js';
import { deviceBase, planDeviceEntities, readDevice, skipReason, type Z2mDevice, type Z2mEntityPlan } from './zigbee2mqtt-exposes.js';

export interface Zigbee2MqttSettings {
  /** plugin.mqtt.zigbee2mqtt_base_topic */
  zigbee2mqtt_base_topic: string;
}

export interface Zigbee2MqttBridgeOptions {
  link: MqttLink;
  ctx: Pick<PluginContext, 'entities' | 'log'>;
  settings: () => Zigbee2MqttSettings;
  counters: MqttCounters;
  /**
   * How long an entity call waits for the device's new state before it resolves anyway (a sleepy
   * device may answer late or never). Waiting lets the state change carry the call's context.
   */
  confirmTimeoutMs?: number;
}

export interface Zigbee2MqttStatus {
  bridge: ZigbeeBridgeState;
  devices: number;
  entities: number;
  /** Devices in the list that got no entities, and why. */
  skipped: Array<{ friendly_name: string; reason: string }>;
}

const DEFAULT_CONFIRM_TIMEOUT_MS = 3000;
/** Names not (yet) in the device list whose last availability and state are kept; beyond it the oldest go. */
const EARLY_NAMES_MAX = 256;
const AVAILABILITY_SUFFIX = '/availability';
/** `<name>/set`, `<name>/get` and their `/set/<attribute>` forms. */
const COMMAND_TOPIC = /\/(set|get)(\/|$)/;
/** Characters of a bad payload quoted in the log. */
const LOGGED_PAYLOAD_CHARS = 120;

interface LiveEntity {
  plan: Z2mEntityPlan;
  handle: EntityHandle;
  /** The device's last reported state (kept while the entity shows unavailable). */
  value: EntityState;
  /** Attributes reported so far, carried into a re-registration. */
  attributes: Record<string, unknown>;
}

interface LiveDevice {
  ieee: string;
  friendlyName: string;
  /** By plan key. */
  entities: Map<string, LiveEntity>;
  /** False after `<name>/availability` said offline; true until then (availability is optional in Z2M). */
  available: boolean;
  /** Whether `<name>/availability` was heard at all (Z2M's availability feature may be off). */
  availabilityHeard: boolean;
  /** Diagnostics from the device's last state message: link quality (0-255) and Z2M's last_seen. */
  linkquality: number | null;
  last_seen: string | number | null;
  model: string | null;
}

interface Waiter {
  ieee: string;
  properties: readonly string[];
  done(): void;
}

interface Early {
  available?: boolean;
  state?: Record<string, unknown>;
}

export class Zigbee2MqttBridge {
  readonly #link: MqttLink;
  readonly #ctx: Pick<PluginContext, 'entities' | 'log'>;
  readonly #settings: () => Zigbee2MqttSettings;
  readonly #counters: MqttCounters;
  readonly #confirmTimeoutMs: number;
  /** By IEEE address: the identity that survives a rename. */
  readonly #devices = new Map<string, LiveDevice>();
  readonly #byName = new Map<string, LiveDevice>();
  readonly #early = new Map<string, Early>();
  readonly #waiters = new Set<Waiter>();
  /** Every device of the last list but the coordinator, skipped ones included (management names them too). */
  #listed = new Map<string, string>();
  #skipped: Array<{ friendly_name: string; reason: string }> = [];
  #bridgeOnline: boolean | undefined;
  /** The last device-list summary logged. */
  #summary = '';
  #root = '';
  #unsubscribe: (() => void) | undefined;

  constructor(options: Zigbee2MqttBridgeOptions) {
    this.#link = options.link;
    this.#ctx = options.ctx;
    this.#settings = options.settings;
    this.#counters = options.counters;
    this.#confirmTimeoutMs = options.confirmTimeoutMs ?? DEFAULT_CONFIRM_TIMEOUT_MS;
  }

  async start(): Promise<void> {
    if (this.#unsubscribe !== undefined) return;
    this.#root = this.#settings().zigbee2mqtt_base_topic.replace(/\/+$/, '');
    // QoS 0: a persistent session must not queue every sensor report for replay after an outage;
    // what matters (the retained device list and availability) comes again on each subscribe.
    this.#unsubscribe = this.#link.subscribe(`${this.#root}/#`, 0, (message) => this.#route(message));
  }

  async stop(): Promise<void> {
    this.#unsubscribe?.();
    this.#unsubscribe = undefined;
    for (const waiter of [...this.#waiters]) waiter.done();
    for (const device of this.#devices.values()) for (const entity of device.entities.values()) entity.handle.remove();
    this.#devices.clear();
    this.#byName.clear();
    this.#early.clear();
    this.#skipped = [];
    this.#listed = new Map();
    this.#bridgeOnline = undefined;
    this.#summary = '';
  }

  status(): Zigbee2MqttStatus {
    let entities = 0;
    for (const device of this.#devices.values()) entities += device.entities.size;
    return {
      bridge: this.#bridgeOnline === undefined ? 'unknown' : this.#bridgeOnline ? 'online' : 'offline',
      devices: this.#devices.size,
      entities,
      skipped: this.#skipped.map((s) => ({ ...s })),
    };
  }

  /** Availability, link quality and last_seen of every device in the list, by friendly name. */
  diagnostics(): Zigbee2MqttDeviceDiagnostics[] {
    return [...this.#devices.values()]
      .map((device) => ({
        friendly_name: device.friendlyName,
        ieee_address: device.ieee,
        model: device.model,
        availability: (this.#bridgeOnline === false || (device.availabilityHeard && !device.available)
          ? 'offline'
          : device.availabilityHeard
            ? 'online'
            : 'not reported') as Zigbee2MqttDeviceDiagnostics['availability'],
        linkquality: device.linkquality,
        last_seen: device.last_seen,
        entities: [...device.entities.values()].map((e) => e.handle.entity_id).sort(),
      }))
      .sort((a, b) => a.friendly_name.localeCompare(b.friendly_name));
  }

  /**
   * The device of the last list a reference names, by friendly name or IEEE address
   * (case-insensitive), skipped devices included (a disabled or half-interviewed device is what one
   * removes); undefined otherwise.
   */
  device(reference: string): { friendly_name: string; ieee_address: string } | undefined {
    const wanted = reference.trim().toLowerCase();
    for (const [ieee, name] of this.#listed) {
      if (name.toLowerCase() === wanted || ieee.toLowerCase() === wanted) return { friendly_name: name, ieee_address: ieee };
    }
    return undefined;
  }

  // ---- routing ----

  #route(message: MqttMessage): void {
    const rest = message.topic.slice(this.#root.length + 1);
    if (rest === 'bridge/devices') {
      this.#onDevices(message);
      return;
    }
    if (rest === 'bridge/state') {
      this.#onBridgeState(message);
      return;
    }
    // Other bridge topics (logging, responses, events) and commands (ours included: the bridge
    // hears what it publishes, and `<name>/set/state` variants) say nothing about a state.
    if (rest.startsWith('bridge/') || COMMAND_TOPIC.test(rest)) return;
    if (rest.endsWith(AVAILABILITY_SUFFIX)) {
      this.#onAvailability(rest.slice(0, -AVAILABILITY_SUFFIX.length), message);
      return;
    }
    const device = this.#byName.get(rest);
    if (device !== undefined) this.#onState(device, message);
    else this.#keepEarlyState(rest, message);
  }

  // ---- the device list ----

  #onDevices(message: MqttMessage): void {
    const list = this.#json(message, 'the device list');
    if (list === undefined) return;
    if (!Array.isArray(list)) {
      this.#malformed(message, 'the device list is not a JSON array');
      return;
    }
    const wanted: Array<{ device: Z2mDevice; base: string }> = [];
    const skipped: Array<{ friendly_name: string; reason: string }> = [];
    const bases = new Set<string>();
    let unreadable = 0;
    const listed = new Map<string, string>();
    for (const entry of list) {
      const device = readDevice(entry);
      if (device === undefined) {
        unreadable++;
        continue;
      }
      if (device.type !== 'Coordinator') listed.set(device.ieee_address, device.friendly_name);
      const reason = skipReason(device);
      if (reason !== undefined) {
        if (device.type !== 'Coordinator') skipped.push({ friendly_name: device.friendly_name, reason });
        continue;
      }
      // Two names with one slug ("Kitchen lamp", "kitchen_lamp"): the later one is told apart by its address.
      let base = deviceBase(device);
      if (bases.has(base)) base = `${base.slice(0, 40)}_${slugify(device.ieee_address).slice(-6)}`;
      bases.add(base);
      wanted.push({ device, base });
    }
    if (unreadable > 0) this.#malformed(message, `${unreadable} device(s) in the list have no ieee_address or friendly_name`);
    const keep = new Set(wanted.map((w) => w.device.ieee_address));
    for (const device of [...this.#devices.values()]) if (!keep.has(device.ieee)) this.#removeDevice(device);
    for (const { device, base } of wanted) this.#upsertDevice(device, base);
    this.#skipped = skipped;
    this.#listed = listed;
    for (const { friendly_name, reason } of skipped) {
      this.#ctx.log.debug({ friendly_name }, `Zigbee2MQTT device ${friendly_name} skipped: ${reason}`);
    }
    // The list comes again after every reconnect: one line when it says something new.
    const { devices, entities } = this.status();
    const summary = `Zigbee2MQTT: ${devices} device(s) with ${entities} entities, ${skipped.length} device(s) skipped`;
    if (summary !== this.#summary) this.#ctx.log.info({ devices, entities, skipped: skipped.length }, summary);
    this.#summary = summary;
  }

  #removeDevice(device: LiveDevice): void {
    for (const entity of device.entities.values()) entity.handle.remove();
    this.#devices.delete(device.ieee);
    if (this.#byName.get(device.friendlyName) === device) this.#byName.delete(device.friendlyName);
    this.#ctx.log.info({ ieee_address: device.ieee }, `Zigbee2MQTT device ${device.friendlyName} left: its entities are removed`);
  }

  #upsertDevice(source: Z2mDevice, base: string): void {
    let device = this.#devices.get(source.ieee_address);
    const fresh = device === undefined;
    if (device === undefined) {
      device = {
        ieee: source.ieee_address,
        friendlyName: source.friendly_name,
        entities: new Map(),
        available: true,
        availabilityHeard: false,
        linkquality: null,
        last_seen: null,
        model: null,
      };
      this.#devices.set(device.ieee, device);
    } else if (device.friendlyName !== source.friendly_name) {
      this.#ctx.log.info(
        { ieee_address: device.ieee, from: device.friendlyName, to: source.friendly_name },
        `Zigbee2MQTT device ${device.friendlyName} is now ${source.friendly_name}: its entity ids change`,
      );
      if (this.#byName.get(device.friendlyName) === device) this.#byName.delete(device.friendlyName);
      device.friendlyName = source.friendly_name;
    }
    this.#byName.set(device.friendlyName, device);
    device.model = typeof source.definition?.model === 'string' ? source.definition.model : device.model;
    const plans = planDeviceEntities(source, base);
    const keys = new Set(plans.map((p) => p.key));
    for (const [key, entity] of [...device.entities]) {
      if (keys.has(key)) continue;
      entity.handle.remove();
      device.entities.delete(key);
    }
    for (const plan of plans) this.#upsertEntity(device, plan);
    const early = this.#early.get(device.friendlyName);
    this.#early.delete(device.friendlyName);
    if (early?.available !== undefined) this.#setAvailable(device, early.available);
    if (early?.state !== undefined) this.#applyState(device, early.state);
    if (fresh) {
      this.#ctx.log.debug(
        { ieee_address: device.ieee, entities: device.entities.size },
        `Zigbee2MQTT device ${device.friendlyName} joined`,
      );
    }
  }

  #upsertEntity(device: LiveDevice, plan: Z2mEntityPlan): void {
    const old = device.entities.get(plan.key);
    if (old !== undefined && sameDefinition(old.plan, plan)) {
      old.plan = plan;
      return;
    }
    const entityId = `${plan.definition.domain}.${plan.definition.object_id}`;
    if (old !== undefined && old.handle.entity_id !== entityId) old.handle.remove();
    const value = old?.value ?? null;
    const attributes = old?.attributes ?? {};
    const definition: EntityDefinition = {
      ...plan.definition,
      attributes: { ...plan.definition.attributes, ...attributes },
      // A new device starts from its stored state (the registry's); a re-registered one from what it last said.
      ...(old !== undefined || !this.#up(device) ? { initial_state: this.#up(device) ? value : STATE_UNAVAILABLE } : {}),
      ...(plan.command === undefined
        ? {}
        : { call: (service: string, data: Record<string, unknown>) => this.#call(device.ieee, plan.key, service, data) }),
    };
    let handle: EntityHandle;
    try {
      handle = this.#ctx.entities.register(definition);
    } catch (error) {
      // Another owner's id, a name the registry refuses: this entity is left out, the rest go on.
      if (old !== undefined) device.entities.delete(plan.key);
      this.#ctx.log.warn(
        { entity_id: entityId, err: describe(error) },
        `Zigbee2MQTT ${device.friendlyName}: ${entityId} not registered: ${describe(error)}`,
      );
      return;
    }
    device.entities.set(plan.key, { plan, handle, value, attributes });
  }

  // ---- states and availability ----

  #onState(device: LiveDevice, message: MqttMessage): void {
    // Z2M clears a removed or renamed device's retained state with an empty payload.
    if (message.payload.length === 0) return;
    const state = this.#json(message, `the state of ${device.friendlyName}`);
    if (state === undefined) return;
    if (!isRecord(state)) {
      this.#malformed(message, `the state of ${device.friendlyName} is not a JSON object`);
      return;
    }
    this.#applyState(device, state);
  }

  #applyState(device: LiveDevice, message: Record<string, unknown>): void {
    const up = this.#up(device);
    // Not entities (linkquality changes with every message): kept for diagnostics only.
    if (typeof message.linkquality === 'number' && Number.isFinite(message.linkquality)) device.linkquality = message.linkquality;
    if (typeof message.last_seen === 'string' || typeof message.last_seen === 'number') device.last_seen = message.last_seen;
    for (const entity of device.entities.values()) {
      const reading = entity.plan.read(message);
      if (reading === undefined) continue;
      const next = reading.state !== undefined ? reading.state : entity.value;
      if (reading.attributes !== undefined) entity.attributes = { ...entity.attributes, ...reading.attributes };
      // A repeated button action is a new event: passing through null makes it a change that state triggers see.
      if (up && entity.plan.event === true && reading.state !== undefined && reading.state === entity.value) entity.handle.update(null);
      entity.value = next;
      if (up) entity.handle.update(next, reading.attributes);
    }
    const keys = Object.keys(message);
    for (const waiter of [...this.#waiters]) {
      if (waiter.ieee === device.ieee && waiter.properties.some((p) => keys.includes(p))) waiter.done();
    }
  }

  #onAvailability(name: string, message: MqttMessage): void {
    const text = message.payload.toString('utf8');
    // An empty payload clears the retained message of a device that left.
    if (text.trim() === '') return;
    const device = this.#byName.get(name);
    const online = parseOnline(text);
    if (online === undefined) {
      if (device !== undefined) this.#malformed(message, `availability of ${name} is neither online nor offline`);
      return;
    }
    if (device === undefined) {
      this.#keepEarly(name, { available: online });
      return;
    }
    this.#setAvailable(device, online);
  }

  #setAvailable(device: LiveDevice, available: boolean): void {
    const wasUp = this.#up(device);
    device.availabilityHeard = true;
    device.available = available;
    if (this.#up(device) !== wasUp) this.#refresh(device);
  }

  #onBridgeState(message: MqttMessage): void {
    const text = message.payload.toString('utf8');
    if (text.trim() === '') return;
    const online = parseOnline(text);
    if (online === undefined) {
      this.#malformed(message, 'bridge/state is neither online nor offline');
      return;
    }
    if (online === this.#bridgeOnline) return;
    const before = new Map([...this.#devices.values()].map((d) => [d, this.#up(d)]));
    this.#bridgeOnline = online;
    this.#ctx.log.info({}, `Zigbee2MQTT is ${online ? 'online' : 'offline'}`);
    for (const [device, wasUp] of before) if (this.#up(device) !== wasUp) this.#refresh(device);
  }

  /** Shows the device's entities as it is now: their last states, or unavailable. */
  #refresh(device: LiveDevice): void {
    const up = this.#up(device);
    for (const entity of device.entities.values()) entity.handle.update(up ? entity.value : STATE_UNAVAILABLE);
  }

  #up(device: LiveDevice): boolean {
    return this.#bridgeOnline !== false && device.available;
  }

  #keepEarlyState(name: string, message: MqttMessage): void {
    // Unknown names are also Z2M groups and attribute topics (`<name>/state` = ON): nothing to count.
    if (message.payload.length === 0) return;
    let value: unknown;
    try {
      value = JSON.parse(message.payload.toString('utf8'));
    } catch {
      return;
    }
    if (isRecord(value)) this.#keepEarly(name, { state: { ...this.#early.get(name)?.state, ...value } });
  }

  #keepEarly(name: string, update: Early): void {
    const entry = { ...this.#early.get(name), ...update };
    this.#early.delete(name);
    this.#early.set(name, entry);
    if (this.#early.size > EARLY_NAMES_MAX) {
      const oldest = this.#early.keys().next().value;
      if (oldest !== undefined) this.#early.delete(oldest);
    }
  }

  // ---- commands ----

  async #call(ieee: string, key: string, service: string, data: Record<string, unknown>): Promise<void> {
    const device = this.#devices.get(ieee);
    const entity = device?.entities.get(key);
    if (device === undefined || entity?.plan.command === undefined) {
      throw new HomeAgentError('HA_ERR_ENTITY_UNAVAILABLE', 'the Zigbee2MQTT device is no longer in its device list');
    }
    // A command kept in the outbox would switch a light whenever the broker comes back: refuse instead.
    if (!this.#link.connected) {
      throw new HomeAgentError(
        'HA_ERR_MQTT_UNAVAILABLE',
        `the MQTT broker is not connected: ${service} was not sent to ${device.friendlyName}`,
      );
    }
    const payload = entity.plan.command(service, data, entity.value);
    const confirmed = this.#confirmation(ieee, entity.plan.properties);
    try {
      await this.#link.publish(`${this.#root}/${device.friendlyName}/set`, JSON.stringify(payload));
    } catch (error) {
      confirmed.cancel();
      throw error;
    }
    await confirmed.promise;
  }

  /** Resolves when the device reports one of `properties`, or after the confirmation timeout. */
  #confirmation(ieee: string, properties: readonly string[]): { promise: Promise<void>; cancel(): void } {
    let waiter: Waiter | undefined;
    let timer: NodeJS.Timeout | undefined;
    const promise = new Promise<void>((resolve) => {
      const done = () => {
        clearTimeout(timer);
        if (waiter !== undefined) this.#waiters.delete(waiter);
        resolve();
      };
      waiter = { ieee, properties, done };
      this.#waiters.add(waiter);
      timer = setTimeout(done, this.#confirmTimeoutMs);
      timer.unref();
    });
    return { promise, cancel: () => waiter?.done() };
  }

  // ---- payloads ----

  #json(message: MqttMessage, what: string): unknown {
    try {
      return JSON.parse(message.payload.toString('utf8'));
    } catch {
      this.#malformed(message, `${what} is not JSON`);
      return undefined;
    }
  }

  #malformed(message: MqttMessage, problem: string): void {
    this.#counters.malformed++;
    this.#ctx.log.warn(
      { topic: message.topic, payload: message.payload.toString('utf8').slice(0, LOGGED_PAYLOAD_CHARS) },
      `Zigbee2MQTT: ${problem}; the message is ignored`,
    );
  }
}

/**
 * online / offline from an availability or bridge state payload: JSON `{"state":"online"}` (Z2M
 * 2.x, and 1.x without legacy payloads) or the plain word (1.x legacy). Undefined otherwise.
 */
export function parseOnline(payload: string): boolean | undefined {
  const text = payload.trim();
  let word: unknown = text;
  if (text.startsWith('{')) {
    try {
      const parsed: unknown = JSON.parse(text);
      word = isRecord(parsed) ? parsed.state : undefined;
    } catch {
      return undefined;
    }
  }
  if (word === 'online') return true;
  if (word === 'offline') return false;
  return undefined;
}

function sameDefinition(a: Z2mEntityPlan, b: Z2mEntityPlan): boolean {
  return JSON.stringify(a.definition) === JSON.stringify(b.definition);
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function describe(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}
