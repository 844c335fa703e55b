/**
 * Inbound MQTT: the configured subscriptions (plugin.mqtt.subscriptions) become what the rest of
 * HomeAgent understands: `mqtt.message` events for automations, texts for the agent, and entity
 * states. Every message of a subscription goes through these steps, in this order, without waiting:
 *
 *   1. size: a payload over max_payload_bytes is dropped and counted (`oversized`). The connection
 *      drops them already; checked again so that the router holds on any link.
 *   2. rate: a token bucket per concrete topic ({@link TopicRateLimiter}, rate_per_minute) drops and
 *      counts the surplus (`rate_limited`) with one warning a minute per topic, so one chatty sensor
 *      floods neither the agent nor the event bus nor the entity history.
 *   3. the `mqtt.message` event, for every kind of subscription, the payload text cut at
 *      {@link EVENT_PAYLOAD_MAX_CHARS}.
 *   4. to: input: the template ({topic}, {payload}, {json.a.b}) becomes a text input, queued at
 *      level 0, an interrupt at 1-3. A retained message is no input: it is old news that every
 *      restart and reconnect replays (the last doorbell press), but it still updates entities.
 *      A template that needs JSON on a payload that is not (or lacks the field) gives no input.
 *   5. to: entity: one entity per subscription, registered at start; the value (value_path in a JSON
 *      payload, else the whole payload) becomes its state (see {@link entityState}). A switch or light
 *      with a command_topic publishes payload_on / payload_off there when called, and its state
 *      follows the device's next report, not the call (Home Assistant's optimistic: false).
 *      A filter with wildcards may feed one entity: the last message wins, and the attribute
 *      `mqtt_topic` says which topic it came from.
 *
 * A payload that cannot be read (bad JSON, a missing path, a sensor with a unit getting no number, a
 * binary value that is neither payload_on nor payload_off) is counted (`malformed`) and logged at most
 * once a minute per subscription; nothing a message does is thrown back into the connection.
 * A message matching several subscriptions is handled by each of them (each with its own rate and
 * mapping) but announced as an event, and counted as oversized, once: by the first in config order.
 * The settings are read at start(); the plugin restarts the router when they change.
 */
import {
  type EntityDefinition,
  type EntityHandle,
  type EntityState,
  HomeAgentError,
  type InputSender,
  type Level,
  type Logger,
  type PluginContext,
  type PluginInput,
  STATE_OFF,
  STATE_ON,
} from '../../src/sdk/index.js';
import { filterProblem, topicMatches, topicProblem } from './topics.js';
import type { MqttCounters, MqttLink, MqttMessage, Qos } from './types.js';

/** Event payloads are for automations comparing values, not for carrying files around the bus. */
export const EVENT_PAYLOAD_MAX_CHARS = 8192;
/** An input text is cut here: the agent reads it in its prompt. */
export const INPUT_TEXT_MAX_CHARS = 4000;
/** Home Assistant's limit for a state; a longer text state is cut. */
export const TEXT_STATE_MAX_CHARS = 255;
/** Concrete topics whose rate (and warnings) are tracked at once; the least recently seen are forgotten first. */
export const MAX_TRACKED_TOPICS = 1000;
/** One warning of a kind per subscription or topic this often at most; the rest are counted in `suppressed`. */
export const WARN_INTERVAL_MS = 60_000;
export const INPUT_SOURCE = 'mqtt';
/** Whoever can publish on the broker could have written it: it may ask, never approve (docs/security.md). */
export const MQTT_SENDER: InputSender = { trust: 'untrusted', id: 'mqtt', proof: 'an MQTT payload' };
const DEFAULT_TEMPLATE = 'MQTT {topic}: {payload}';
const MINUTE_MS = 60_000;
const SETTING = 'plugin.mqtt.subscriptions';
const PLACEHOLDER = /\{([A-Za-z_][\w.-]*)\}/g;
const NUMBER = /^[+-]?(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?$/;
const OBJECT_ID = /^[a-z0-9_]{1,64}$/;
const DOMAINS = ['sensor', 'binary_sensor', 'switch', 'light'] as const;
const TARGETS = ['input', 'entity', 'event'] as const;

/** What the router reads of plugin.mqtt.*. */
export interface InboundSettings {
  /** plugin.mqtt.subscriptions as configured; checked by start(). */
  subscriptions: readonly unknown[];
  max_payload_bytes: number;
}

/** Wall-clock milliseconds; tests move it. */
export interface InboundClock {
  now(): number;
}

export interface InboundRouterOptions {
  link: MqttLink;
  ctx: Pick<PluginContext, 'log' | 'events' | 'io' | 'entities'>;
  settings: () => InboundSettings;
  counters: MqttCounters;
  clock?: InboundClock;
}

export type MappedDomain = (typeof DOMAINS)[number];

/** A subscription's `entity`, checked, with the defaults filled in. */
export interface EntityMapping {
  domain: MappedDomain;
  object_id: string;
  name: string;
  area: string;
  unit: string;
  device_class: string;
  /** The value_path split at the dots; empty: the whole payload. */
  value_path: string[];
  payload_on: string;
  payload_off: string;
  command_topic: string;
}

export type TemplatePart = string | { field: 'topic' } | { field: 'payload' } | { field: 'json'; path: string[] };

/** One entry of plugin.mqtt.subscriptions, checked, with the defaults filled in. */
export interface SubscriptionPlan {
  index: number;
  /** `plugin.mqtt.subscriptions[<index>]`, for messages. */
  key: string;
  topic: string;
  qos: Qos;
  to: (typeof TARGETS)[number];
  template: TemplatePart[];
  /** The template reads {json.…}: the payload must be JSON. */
  needs_json: boolean;
  channel: string;
  level: 0 | 1 | 2 | 3;
  rate_per_minute: number;
  entity?: EntityMapping;
}

interface LiveEntity {
  mapping: EntityMapping;
  handle: EntityHandle | undefined;
  wildcard: boolean;
  last_topic: string;
}

interface LiveSubscription {
  plan: SubscriptionPlan;
  /** Filters of earlier subscriptions that can match the same topics: such a message is announced by the first. */
  shadowed_by: string[];
  entity: LiveEntity | undefined;
}

export class InboundRouter {
  readonly #o: InboundRouterOptions;
  readonly #clock: InboundClock;
  readonly #limiter = new TopicRateLimiter();
  readonly #warnings: ThrottledWarnings;
  readonly #live: LiveSubscription[] = [];
  readonly #unsubscribe: Array<() => void> = [];
  #maxPayload = 0;

  constructor(options: InboundRouterOptions) {
    this.#o = options;
    this.#clock = options.clock ?? { now: () => Date.now() };
    this.#warnings = new ThrottledWarnings(options.ctx.log, this.#clock);
  }

  async start(): Promise<void> {
    const settings = this.#o.settings();
    const plans = planSubscriptions(settings.subscriptions);
    this.#maxPayload = settings.max_payload_bytes;
    try {
      for (const plan of plans) {
        const shadowed_by = plans
          .slice(0, plan.index)
          .filter((earlier) => filtersOverlap(earlier.topic, plan.topic))
          .map((earlier) => earlier.topic);
        const entity = plan.entity === undefined ? undefined : this.#register(plan, plan.entity);
        this.#live.push({ plan, shadowed_by, entity });
      }
      // Entities first: the retained messages that come with a subscription find them registered.
      for (const live of this.#live) {
        this.#unsubscribe.push(this.#o.link.subscribe(live.plan.topic, live.plan.qos, (message) => this.#onMessage(live, message)));
      }
    } catch (error) {
      await this.stop();
      throw error;
    }
  }

  async stop(): Promise<void> {
    for (const unsubscribe of this.#unsubscribe.splice(0)) unsubscribe();
    for (const live of this.#live.splice(0)) live.entity?.handle?.remove();
    this.#limiter.clear();
    this.#warnings.clear();
  }

  /** For mqtt.status. */
  status(): { subscriptions: number; entities: string[]; tracked_topics: number } {
    const entities: string[] = [];
    for (const live of this.#live) if (live.entity?.handle !== undefined) entities.push(live.entity.handle.entity_id);
    return { subscriptions: this.#live.length, entities, tracked_topics: this.#limiter.size };
  }

  #register(plan: SubscriptionPlan, mapping: EntityMapping): LiveEntity {
    const entity: LiveEntity = { mapping, handle: undefined, wildcard: /[+#]/.test(plan.topic), last_topic: plan.topic };
    const commandable = mapping.command_topic !== '';
    const definition: EntityDefinition = {
      domain: mapping.domain,
      object_id: mapping.object_id,
      name: mapping.name === '' ? humanize(mapping.object_id) : mapping.name,
      area: mapping.area === '' ? null : mapping.area,
      unit: mapping.unit === '' ? null : mapping.unit,
      device_class: mapping.device_class === '' ? null : mapping.device_class,
      attributes: { mqtt_topic: plan.topic },
      // Without a command topic a switch can only be watched; saying so keeps it out of call suggestions.
      ...(commandable
        ? { call: (service: string, data: Record<string, unknown>) => this.#command(entity, service, data) }
        : { services: [] }),
    };
    try {
      entity.handle = this.#o.ctx.entities.register(definition);
    } catch (error) {
      throw configError(`${plan.key}.entity.object_id`, error instanceof Error ? error.message : String(error));
    }
    return entity;
  }

  /** A call on a mapped switch or light: payload_on / payload_off to its command topic. */
  async #command(entity: LiveEntity, service: string, data: Record<string, unknown>): Promise<void> {
    const { mapping } = entity;
    const entityId = `${mapping.domain}.${mapping.object_id}`;
    const field = Object.keys(data)[0];
    if (field !== undefined) {
      throw new HomeAgentError(
        'HA_ERR_ENTITY_SERVICE',
        `${entityId} is switched over MQTT with ${mapping.payload_on} / ${mapping.payload_off} only: ${field} is not supported`,
        { details: { field: `data.${field}` } },
      );
    }
    let on: boolean;
    if (service === 'turn_on') on = true;
    else if (service === 'turn_off') on = false;
    else on = (await this.#o.ctx.entities.get(entityId)).state !== STATE_ON;
    // A queued switch command delivered whenever the broker is back would surprise; say it now.
    if (!this.#o.link.connected) {
      throw new HomeAgentError('HA_ERR_MQTT_UNAVAILABLE', `${entityId}: not connected to the MQTT broker, the command was not sent`);
    }
    await this.#o.link.publish(mapping.command_topic, on ? mapping.payload_on : mapping.payload_off, { retain: false });
  }

  #onMessage(live: LiveSubscription, message: MqttMessage): void {
    try {
      this.#route(live, message);
    } catch (error) {
      // A bug here must not reach the connection's dispatch loop, which serves every other feature.
      this.#malformed(live.plan, message.topic, `handling failed: ${error instanceof Error ? error.message : String(error)}`);
    }
  }

  #route(live: LiveSubscription, message: MqttMessage): void {
    const { plan } = live;
    const { topic, payload } = message;
    const first = live.shadowed_by.length === 0 || !live.shadowed_by.some((filter) => topicMatches(filter, topic));
    if (payload.length > this.#maxPayload) {
      if (first) {
        this.#o.counters.oversized++;
        this.#warnings.warn(
          `oversized\u0000${plan.index}`,
          { topic, bytes: payload.length, max_payload_bytes: this.#maxPayload },
          `MQTT message on ${topic} dropped: ${payload.length} bytes is over plugin.mqtt.max_payload_bytes`,
        );
      }
      return;
    }
    const now = this.#clock.now();
    if (!this.#limiter.take(`${plan.index}\u0000${topic}`, plan.rate_per_minute, now)) {
      this.#o.counters.rate_limited++;
      this.#warnings.warn(
        `rate\u0000${plan.index}\u0000${topic}`,
        { topic, rate_per_minute: plan.rate_per_minute },
        `MQTT topic ${topic} sends more than ${plan.rate_per_minute} messages a minute (${plan.key}.rate_per_minute): the surplus is dropped`,
      );
      return;
    }
    const text = payload.toString('utf8');
    if (first) {
      this.#o.ctx.events.publish('mqtt.message', { topic, payload: cut(text, EVENT_PAYLOAD_MAX_CHARS), retained: message.retain, at: now });
    }
    if (plan.to === 'input') this.#toInput(plan, message, text);
    else if (live.entity !== undefined) this.#toEntity(plan, live.entity, topic, text);
  }

  #toInput(plan: SubscriptionPlan, message: MqttMessage, text: string): void {
    if (message.retain) return;
    const { topic } = message;
    const filled = fillTemplate(plan.template, topic, text, plan.needs_json ? readJson(text) : NOT_JSON);
    if (typeof filled !== 'string') {
      this.#malformed(plan, topic, filled.problem);
      return;
    }
    const input: PluginInput = {
      source: INPUT_SOURCE,
      channel: plan.channel,
      sender: MQTT_SENDER,
      type: 'text',
      payload: cut(filled, INPUT_TEXT_MAX_CHARS),
      meta: { topic, retained: false },
    };
    const io = this.#o.ctx.io;
    const receipt = plan.level === 0 ? io.injectInput(input) : io.injectInterrupt(input, plan.level as Exclude<Level, 0>);
    receipt.then(
      (done) => {
        if (done.status === 'failed') this.#o.ctx.log.warn({ topic, input_id: done.input_id, error: done.error }, 'MQTT input failed');
      },
      (error: unknown) => this.#warnings.warn(`input\u0000${plan.index}`, { topic, err: error }, `MQTT input from ${topic} was not taken`),
    );
  }

  #toEntity(plan: SubscriptionPlan, entity: LiveEntity, topic: string, text: string): void {
    const { mapping } = entity;
    let value: unknown = text;
    if (mapping.value_path.length > 0) {
      const json = readJson(text);
      if (json === NOT_JSON) {
        this.#malformed(plan, topic, `the payload is not JSON, so value_path ${mapping.value_path.join('.')} cannot be read`);
        return;
      }
      value = valueAt(json, mapping.value_path);
      if (value === undefined) {
        this.#malformed(plan, topic, `the payload has no ${mapping.value_path.join('.')} (value_path)`);
        return;
      }
    }
    const result = entityState(mapping, value);
    if (typeof result === 'object' && result !== null) {
      this.#malformed(plan, topic, result.problem);
      return;
    }
    const attributes = entity.wildcard && topic !== entity.last_topic ? { mqtt_topic: topic } : undefined;
    entity.last_topic = topic;
    entity.handle?.update(result, attributes);
  }

  #malformed(plan: SubscriptionPlan, topic: string, problem: string): void {
    this.#o.counters.malformed++;
    this.#warnings.warn(`malformed\u0000${plan.index}`, { topic, subscription: plan.key }, `MQTT message on ${topic} ignored: ${problem}`);
  }
}

// ---- checking plugin.mqtt.subscriptions ----

/** Checks the subscriptions and fills in the defaults; HA_ERR_CONFIG_INVALID naming the key otherwise. */
export function planSubscriptions(raw: unknown): SubscriptionPlan[] {
  if (raw === undefined || raw === null) return [];
  if (!Array.isArray(raw)) throw configError(SETTING, 'must be a list of subscriptions');
  const objectIds = new Map<string, string>();
  return raw.map((entry: unknown, index) => {
    const key = `${SETTING}[${index}]`;
    const plan = planSubscription(record(entry, key), index, key);
    if (plan.entity !== undefined) {
      const entityId = `${plan.entity.domain}.${plan.entity.object_id}`;
      const taken = objectIds.get(entityId);
      if (taken !== undefined) throw configError(`${key}.entity.object_id`, `${entityId} is already mapped by ${taken}`);
      objectIds.set(entityId, key);
    }
    return plan;
  });
}

function planSubscription(entry: Record<string, unknown>, index: number, key: string): SubscriptionPlan {
  known(entry, key, ['topic', 'qos', 'to', 'template', 'channel', 'level', 'entity', 'rate_per_minute']);
  const topic = text(entry, 'topic', key, undefined, 256);
  const problem = filterProblem(topic);
  if (problem !== undefined) throw configError(`${key}.topic`, `${problem} (got ${JSON.stringify(topic)})`);
  const to = choice(entry, 'to', key, 'event', TARGETS);
  const template = compileTemplate(text(entry, 'template', key, '', 1000) || DEFAULT_TEMPLATE, `${key}.template`);
  const plan: SubscriptionPlan = {
    index,
    key,
    topic,
    qos: integer(entry, 'qos', key, 1, 0, 2) as Qos,
    to,
    template,
    needs_json: template.some((part) => typeof part !== 'string' && part.field === 'json'),
    channel: text(entry, 'channel', key, 'mqtt', 128),
    level: integer(entry, 'level', key, 0, 0, 3) as SubscriptionPlan['level'],
    rate_per_minute: integer(entry, 'rate_per_minute', key, 60, 1, 60000),
  };
  if (to === 'entity') {
    if (entry.entity === undefined) throw configError(`${key}.entity`, 'to: entity needs an entity ({domain, object_id, ...})');
    plan.entity = planEntity(record(entry.entity, `${key}.entity`), `${key}.entity`);
  } else if (entry.entity !== undefined) {
    throw configError(`${key}.entity`, `only read with to: entity (this subscription has to: ${to})`);
  }
  return plan;
}

function planEntity(entry: Record<string, unknown>, key: string): EntityMapping {
  known(entry, key, [
    'domain',
    'object_id',
    'name',
    'area',
    'unit',
    'device_class',
    'value_path',
    'payload_on',
    'payload_off',
    'command_topic',
  ]);
  const domain = choice(entry, 'domain', key, 'sensor', DOMAINS);
  const objectId = text(entry, 'object_id', key, undefined, 64);
  if (!OBJECT_ID.test(objectId))
    throw configError(`${key}.object_id`, `must be 1-64 lowercase letters, digits or _ (got ${JSON.stringify(objectId)})`);
  const path = text(entry, 'value_path', key, '', 128);
  const valuePath = path === '' ? [] : path.split('.');
  if (valuePath.some((segment) => segment === '')) throw configError(`${key}.value_path`, `${JSON.stringify(path)} has an empty segment`);
  const mapping: EntityMapping = {
    domain,
    object_id: objectId,
    name: text(entry, 'name', key, '', 64).trim(),
    area: text(entry, 'area', key, '', 64).trim(),
    unit: text(entry, 'unit', key, '', 16),
    device_class: text(entry, 'device_class', key, '', 32),
    value_path: valuePath,
    payload_on: text(entry, 'payload_on', key, 'ON', 64),
    payload_off: text(entry, 'payload_off', key, 'OFF', 64),
    command_topic: text(entry, 'command_topic', key, '', 256),
  };
  if (mapping.command_topic !== '') {
    if (domain !== 'switch' && domain !== 'light')
      throw configError(`${key}.command_topic`, `a ${domain} takes no commands (only switch and light)`);
    const problem = topicProblem(mapping.command_topic);
    if (problem !== undefined) throw configError(`${key}.command_topic`, problem);
  }
  const sameWord = mapping.payload_on.toLowerCase() === mapping.payload_off.toLowerCase();
  if (domain !== 'sensor' && (mapping.payload_on === '' || mapping.payload_off === '' || sameWord)) {
    throw configError(`${key}.payload_on`, 'payload_on and payload_off must differ and not be empty');
  }
  return mapping;
}

/** Splits a template into text and {topic} / {payload} / {json.a.b} fields; an unknown field is a config error. */
export function compileTemplate(template: string, key: string): TemplatePart[] {
  const parts: TemplatePart[] = [];
  let last = 0;
  for (const match of template.matchAll(PLACEHOLDER)) {
    const name = match[1] ?? '';
    if (match.index > last) parts.push(template.slice(last, match.index));
    if (name === 'topic' || name === 'payload') parts.push({ field: name });
    else if (
      name.startsWith('json.') &&
      name
        .slice(5)
        .split('.')
        .every((segment) => segment !== '')
    ) {
      parts.push({ field: 'json', path: name.slice(5).split('.') });
    } else {
      throw configError(key, `unknown placeholder {${name}}: use {topic}, {payload} or {json.<path>} (like {json.temperature})`);
    }
    last = match.index + match[0].length;
  }
  if (last < template.length) parts.push(template.slice(last));
  return parts;
}

function record(value: unknown, key: string): Record<string, unknown> {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) throw configError(key, 'must be an object');
  return value as Record<string, unknown>;
}

function known(entry: Record<string, unknown>, key: string, names: readonly string[]): void {
  const unknown = Object.keys(entry).find((name) => !names.includes(name));
  if (unknown !== undefined) throw configError(`${key}.${unknown}`, `unknown setting; known are ${names.join(', ')}`);
}

function text(entry: Record<string, unknown>, name: string, key: string, fallback: string | undefined, max: number): string {
  const value = entry[name] ?? fallback;
  if (value === undefined) throw configError(`${key}.${name}`, 'is required');
  if (typeof value !== 'string') throw configError(`${key}.${name}`, `must be a string, not ${JSON.stringify(value)}`);
  if (value.length > max) throw configError(`${key}.${name}`, `must be at most ${max} characters`);
  if (fallback === undefined && value === '') throw configError(`${key}.${name}`, 'must not be empty');
  return value;
}

function integer(entry: Record<string, unknown>, name: string, key: string, fallback: number, min: number, max: number): number {
  const value = entry[name] ?? fallback;
  if (typeof value !== 'number' || !Number.isInteger(value) || value < min || value > max) {
    throw configError(`${key}.${name}`, `must be a whole number from ${min} to ${max}, not ${JSON.stringify(value)}`);
  }
  return value;
}

function choice<T extends string>(entry: Record<string, unknown>, name: string, key: string, fallback: T, options: readonly T[]): T {
  const value = entry[name] ?? fallback;
  if (!(options as readonly unknown[]).includes(value)) {
    throw configError(`${key}.${name}`, `must be one of ${options.join(', ')}, not ${JSON.stringify(value)}`);
  }
  return value as T;
}

function configError(key: string, problem: string): HomeAgentError {
  return new HomeAgentError('HA_ERR_CONFIG_INVALID', `${key}: ${problem}`, { details: { key } });
}

// ---- reading payloads ----

/** What {@link readJson} gives for a payload that is not JSON. */
export const NOT_JSON: unique symbol = Symbol('not JSON');

export function readJson(text: string): unknown {
  try {
    return JSON.parse(text) as unknown;
  } catch {
    return NOT_JSON;
  }
}

/** The value at a dot path (`state.power`, `values.0`), or undefined when the path is missing. */
export function valueAt(value: unknown, path: readonly string[]): unknown {
  let current = value;
  for (const segment of path) {
    if (typeof current !== 'object' || current === null) return undefined;
    if (Array.isArray(current)) {
      if (!/^\d+$/.test(segment)) return undefined;
      current = current[Number(segment)];
    } else {
      if (!Object.hasOwn(current, segment)) return undefined;
      current = (current as Record<string, unknown>)[segment];
    }
  }
  return current;
}

/** The input text, or why there is none. `json` is {@link NOT_JSON} when the payload is not JSON (or was not parsed). */
export function fillTemplate(parts: readonly TemplatePart[], topic: string, payload: string, json: unknown): string | { problem: string } {
  let out = '';
  for (const part of parts) {
    if (typeof part === 'string') out += part;
    else if (part.field === 'topic') out += topic;
    else if (part.field === 'payload') out += payload;
    else {
      if (json === NOT_JSON) return { problem: `the template reads {json.${part.path.join('.')}} but the payload is not JSON` };
      const value = valueAt(json, part.path);
      if (value === undefined) return { problem: `the template reads {json.${part.path.join('.')}}, which the payload does not have` };
      out += typeof value === 'string' ? value : JSON.stringify(value);
    }
  }
  return out;
}

/**
 * The entity state a value means, or why it means none. The value is the raw payload text, or what
 * value_path found in the JSON. An empty payload and JSON null are "unknown" (null).
 * - sensor with a unit: a number (a JSON number or a numeric text), anything else is malformed;
 *   without a unit: a number when it reads as one, else the text (cut at {@link TEXT_STATE_MAX_CHARS});
 * - binary_sensor, switch, light: payload_on / payload_off (case-insensitive; the text of a JSON number
 *   counts too), or a JSON true / false; anything else is malformed.
 */
export function entityState(
  mapping: Pick<EntityMapping, 'domain' | 'unit' | 'payload_on' | 'payload_off'>,
  value: unknown,
): EntityState | { problem: string } {
  if (value === null) return null;
  if (typeof value === 'string') {
    value = value.trim();
    if (value === '') return null;
  }
  if (typeof value === 'object') return { problem: `the value is ${Array.isArray(value) ? 'a list' : 'an object'}, not a single value` };
  if (mapping.domain === 'sensor') {
    if (typeof value === 'number' && Number.isFinite(value)) return value;
    if (typeof value === 'string' && NUMBER.test(value)) return Number(value);
    if (mapping.unit !== '') return { problem: `${describe(value)} is not a number (the sensor's unit is ${mapping.unit})` };
    return typeof value === 'string' ? cut(value, TEXT_STATE_MAX_CHARS) : String(value);
  }
  if (typeof value === 'boolean') return value ? STATE_ON : STATE_OFF;
  const word = String(value).toLowerCase();
  if (word === mapping.payload_on.toLowerCase()) return STATE_ON;
  if (word === mapping.payload_off.toLowerCase()) return STATE_OFF;
  return { problem: `${describe(value)} is neither ${mapping.payload_on} nor ${mapping.payload_off}` };
}

function describe(value: unknown): string {
  return cut(JSON.stringify(value) ?? String(value), 60);
}

function cut(text: string, max: number): string {
  return text.length <= max ? text : `${text.slice(0, max - 1)}…`;
}

/** `living_room_temp` → "Living room temp". */
function humanize(objectId: string): string {
  const words = objectId.replaceAll('_', ' ').trim() || objectId;
  return words.charAt(0).toUpperCase() + words.slice(1);
}

/** True when some topic matches both filters (`a/+/c` and `a/#` do; `a/b` and `a/c` do not). */
export function filtersOverlap(a: string, b: string): boolean {
  const x = a.split('/');
  const y = b.split('/');
  for (let i = 0; ; i++) {
    const p = x[i];
    const q = y[i];
    if (p === '#' || q === '#') return true;
    if (p === undefined || q === undefined) return p === q;
    if (p !== '+' && q !== '+' && p !== q) return false;
  }
}

// ---- rate limits and warnings ----

/**
 * Token buckets per key (a concrete topic): `perMinute` messages a minute on average, and up to a
 * minute's worth at once after a quiet spell (so a sensor reporting a few values in a burst is not
 * cut). Under a flood, once that first burst is spent exactly `perMinute` pass per minute; over any
 * span of t minutes at most perMinute × (t + 1). Credit is kept in integer units (a token is
 * MINUTE_MS units, refilled at perMinute units per ms), so an integer clock gives exact counts.
 * At most `maxKeys` buckets are kept, the least recently used forgotten first: a forgotten topic
 * starts again with a full bucket, so only a flood spread over more topics than that gets more
 * through. A clock that goes back refills nothing until it moves forward again.
 */
export class TopicRateLimiter {
  readonly #buckets = new Map<string, { credit: number; at: number }>();
  readonly #maxKeys: number;

  constructor(maxKeys = MAX_TRACKED_TOPICS) {
    this.#maxKeys = maxKeys;
  }

  get size(): number {
    return this.#buckets.size;
  }

  /** True when a message on `key` may pass at `now` (epoch or monotonic ms); takes its token. */
  take(key: string, perMinute: number, now: number): boolean {
    const capacity = perMinute * MINUTE_MS;
    let bucket = this.#buckets.get(key);
    if (bucket === undefined) {
      if (this.#buckets.size >= this.#maxKeys) {
        const oldest = this.#buckets.keys().next().value;
        if (oldest !== undefined) this.#buckets.delete(oldest);
      }
      bucket = { credit: capacity, at: now };
    } else {
      // Re-inserted: a Map iterates in insertion order, so the first key is the least recently used.
      this.#buckets.delete(key);
      const elapsed = now - bucket.at;
      if (elapsed > 0) bucket.credit = Math.min(capacity, bucket.credit + elapsed * perMinute);
      bucket.at = now;
    }
    this.#buckets.set(key, bucket);
    if (bucket.credit < MINUTE_MS) return false;
    bucket.credit -= MINUTE_MS;
    return true;
  }

  clear(): void {
    this.#buckets.clear();
  }
}

/**
 * Warnings about what the broker sends (malformed, oversized, too frequent) are as frequent as the
 * messages; one per key and interval is enough to act on, with the number left out in the next one.
 */
export class ThrottledWarnings {
  readonly #last = new Map<string, { at: number; suppressed: number }>();
  readonly #log: Logger;
  readonly #clock: InboundClock;
  readonly #intervalMs: number;
  readonly #maxKeys: number;

  constructor(log: Logger, clock: InboundClock, intervalMs = WARN_INTERVAL_MS, maxKeys = MAX_TRACKED_TOPICS) {
    this.#log = log;
    this.#clock = clock;
    this.#intervalMs = intervalMs;
    this.#maxKeys = maxKeys;
  }

  warn(key: string, fields: Record<string, unknown>, message: string): void {
    const now = this.#clock.now();
    const seen = this.#last.get(key);
    if (seen !== undefined && now >= seen.at && now - seen.at < this.#intervalMs) {
      seen.suppressed++;
      return;
    }
    if (seen !== undefined) this.#last.delete(key);
    else if (this.#last.size >= this.#maxKeys) {
      const oldest = this.#last.keys().next().value;
      if (oldest !== undefined) this.#last.delete(oldest);
    }
    this.#last.set(key, { at: now, suppressed: 0 });
    this.#log.warn(seen !== undefined && seen.suppressed > 0 ? { ...fields, suppressed: seen.suppressed } : fields, message);
  }

  clear(): void {
    this.#last.clear();
  }
}
