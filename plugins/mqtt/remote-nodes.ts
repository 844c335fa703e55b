/**
 * Multi-room: the entities other HomeAgent nodes (satellites) announce by Home Assistant discovery
 * on this broker become remote entities here, so the agent, intents and automations of the main
 * node use a satellite's relay like a local one. No extra protocol: a satellite's discovery config
 * already names its state, attributes, availability and command topics (docs/mqtt.md, "Remote nodes").
 *
 * A config counts when its device's manufacturer is HomeAgent, its topic's node level is not this
 * node, its component is a domain discovery publishes (discovery-payloads.ts, PUBLISHED_DOMAINS:
 * no config of another could describe it), and its object id is `<domain>_<object_id>` (the agent's
 * own notify and last-reply entities are not). It becomes `<component>.<node_id>_<object_id>`,
 * named as the config names it, in the area of its device's `suggested_area`. Its state follows the
 * state topic (numbers for sensors and numbers, "" as unknown), its attributes the attributes topic,
 * and it is `unavailable` while its availability topics say so (the satellite's `<base>/status`,
 * its last will, included). A call publishes the service to the command topic: the bare name
 * (`turn_on`) or `{"service", "data"}` when it carries data; refused while the broker is away, since
 * a delayed command to a door relay is worse than a failed one. An empty config removes the entity.
 *
 * Topics several entities share (the satellite's status) are subscribed once and their last
 * message kept: the broker replays a retained message only to a new subscription, so an entity
 * joining later would otherwise never hear it.
 */
import {
  DOMAIN_SERVICES,
  ENTITY_CATEGORIES,
  type EntityCategory,
  type EntityDomain,
  type EntityHandle,
  type EntityState,
  HomeAgentError,
  type PluginContext,
  STATE_CLASSES,
  STATE_UNAVAILABLE,
  type StateClass,
} from '../../src/sdk/index.js';
import {
  entityOfTopicObjectId,
  HOMEAGENT_MANUFACTURER,
  isPublishedDomain,
  PAYLOAD_AVAILABLE,
  PAYLOAD_NOT_AVAILABLE,
  parseDiscoveryTopic,
} from './discovery-payloads.js';
import { checkNodeId } from './ha-discovery.js';
import { topicProblem } from './topics.js';
import type { MqttCounters, MqttLink, MqttMessage, Qos } from './types.js';

const OBJECT_ID = /^[a-z0-9_]{1,64}$/;
const NUMBER = /^-?(?:\d+\.?\d*|\.\d+)(?:e[+-]?\d+)?$/i;
const NUMERIC_DOMAINS: readonly EntityDomain[] = ['sensor', 'number'];
const MAX_NAME_CHARS = 64;

export interface RemoteNodesSettings {
  remote_nodes: boolean;
  discovery_prefix: string;
  /** This node (plugin.mqtt.node_id, resolved): its own configs are not remote. */
  node_id: string;
  publish_qos: Qos;
}

export interface RemoteNodesOptions {
  link: MqttLink;
  ctx: Pick<PluginContext, 'entities' | 'log' | 'settings'>;
  settings: () => RemoteNodesSettings;
  counters: MqttCounters;
}

/** What a satellite's config says about one entity. */
interface RemoteConfig {
  node_id: string;
  domain: EntityDomain;
  object_id: string;
  name: string;
  area: string | null;
  unit: string | null;
  device_class: string | null;
  entity_category: EntityCategory | null;
  state_class: StateClass | null;
  state_topic: string | undefined;
  attributes_topic: string | undefined;
  command_topic: string | undefined;
  availability: Array<{ topic: string; available: string; not_available: string }>;
  availability_mode: 'all' | 'any' | 'latest';
}

interface RemoteEntity {
  text: string;
  config: RemoteConfig;
  handle: EntityHandle;
  /** The state the satellite reports, whatever its availability. */
  state: EntityState;
  /** Per availability topic: true online, false offline, undefined not heard yet. */
  availability: Map<string, boolean | undefined>;
  /** The availability topic heard last (mode `latest`). */
  latest: boolean | undefined;
  unsubscribe: Array<() => void>;
}

interface SharedTopic {
  unsubscribe: () => void;
  last: MqttMessage | undefined;
  listeners: Set<(message: MqttMessage) => void>;
}

export class RemoteNodes {
  readonly #options: RemoteNodesOptions;
  /** Config topic → the remote entity it made. */
  readonly #remotes = new Map<string, RemoteEntity>();
  readonly #topics = new Map<string, SharedTopic>();
  readonly #unsubscribe: Array<() => void> = [];
  #unsubscribeConfigs: (() => void) | undefined;

  constructor(options: RemoteNodesOptions) {
    this.#options = options;
  }

  async start(): Promise<void> {
    checkNodeId(this.#options.settings().node_id);
    this.#unsubscribe.push(
      this.#options.ctx.settings.onChange((key) => {
        if (key === 'remote_nodes') this.#apply();
      }),
    );
    this.#apply();
  }

  async stop(): Promise<void> {
    for (const unsubscribe of this.#unsubscribe.splice(0)) unsubscribe();
    this.#disable();
  }

  /** Remote entities registered now, by entity id (status and tests). */
  get entityIds(): string[] {
    return [...this.#remotes.values()].map((r) => r.handle.entity_id).sort();
  }

  /** For `mqtt.status`: the remote entities per node. */
  status(): { nodes: Record<string, number> } {
    const nodes: Record<string, number> = {};
    for (const remote of this.#remotes.values()) nodes[remote.config.node_id] = (nodes[remote.config.node_id] ?? 0) + 1;
    return { nodes };
  }

  #apply(): void {
    const settings = this.#options.settings();
    if (settings.remote_nodes && this.#unsubscribeConfigs === undefined) {
      const filter = `${settings.discovery_prefix.replace(/\/+$/, '')}/+/+/+/config`;
      this.#unsubscribeConfigs = this.#options.link.subscribe(filter, 1, (message) => this.#onConfig(message));
    } else if (!settings.remote_nodes) {
      this.#disable();
    }
  }

  #disable(): void {
    this.#unsubscribeConfigs?.();
    this.#unsubscribeConfigs = undefined;
    for (const topic of [...this.#remotes.keys()]) this.#drop(topic);
    for (const shared of this.#topics.values()) shared.unsubscribe();
    this.#topics.clear();
  }

  #onConfig(message: MqttMessage): void {
    const text = message.payload.toString('utf8');
    const existing = this.#remotes.get(message.topic);
    // Satellites re-publish their configs on every reconnect: the same text changes nothing.
    if (existing !== undefined && existing.text === text) return;
    if (text === '') {
      if (existing !== undefined) {
        this.#options.ctx.log.info({ entity_id: existing.handle.entity_id }, 'remote entity removed by its node');
        this.#drop(message.topic);
      }
      return;
    }
    const config = this.#read(message.topic, text);
    if (config === undefined) {
      // A config that changed into something that is not a HomeAgent entity: the old one is gone.
      if (existing !== undefined) this.#drop(message.topic);
      return;
    }
    this.#register(message.topic, text, config, existing);
  }

  /** The remote entity a config describes, or undefined when it is not one (logged when it looked like one). */
  #read(topic: string, text: string): RemoteConfig | undefined {
    const settings = this.#options.settings();
    const where = parseDiscoveryTopic(settings.discovery_prefix, topic);
    if (where === undefined || where.node_id === settings.node_id) return undefined;
    let payload: unknown;
    try {
      payload = JSON.parse(text);
    } catch {
      this.#options.counters.malformed += 1;
      this.#options.ctx.log.debug({ topic }, 'MQTT discovery config is not JSON');
      return undefined;
    }
    if (!isObject(payload) || !isObject(payload.device) || payload.device.manufacturer !== HOMEAGENT_MANUFACTURER) return undefined;
    if (!isPublishedDomain(where.component)) return undefined;
    const entity = entityOfTopicObjectId(where.object_id);
    if (entity === undefined) return undefined;
    const domain: EntityDomain = where.component;
    const objectId = `${where.node_id}_${entity.object_id}`;
    if (!OBJECT_ID.test(objectId)) {
      this.#options.ctx.log.warn({ topic }, `remote entity ${domain}.${objectId} is not a valid entity id (1-64 a-z, 0-9, _); skipped`);
      return undefined;
    }
    const availability = Array.isArray(payload.availability) ? payload.availability : [];
    const mode = payload.availability_mode;
    return {
      node_id: where.node_id,
      domain,
      object_id: objectId,
      name: text64(payload.name) ?? `${where.node_id} ${entity.object_id.replaceAll('_', ' ')}`,
      area: text64(payload.device.suggested_area) ?? null,
      unit: text64(payload.unit_of_measurement) ?? null,
      device_class: text64(payload.device_class) ?? null,
      entity_category: oneOf(payload.entity_category, ENTITY_CATEGORIES),
      // A satellite's sensor says its class; without one (a number shown as a sensor) it has none here.
      state_class: oneOf(payload.state_class, STATE_CLASSES),
      state_topic: topicOf(payload.state_topic),
      attributes_topic: topicOf(payload.json_attributes_topic),
      command_topic: topicOf(payload.command_topic),
      availability: availability.flatMap((entry) =>
        isObject(entry) && topicOf(entry.topic) !== undefined
          ? [
              {
                topic: entry.topic as string,
                available: typeof entry.payload_available === 'string' ? entry.payload_available : PAYLOAD_AVAILABLE,
                not_available: typeof entry.payload_not_available === 'string' ? entry.payload_not_available : PAYLOAD_NOT_AVAILABLE,
              },
            ]
          : [],
      ),
      availability_mode: mode === 'all' || mode === 'any' ? mode : 'latest',
    };
  }

  #register(topic: string, text: string, config: RemoteConfig, existing: RemoteEntity | undefined): void {
    const commandTopic = config.command_topic;
    let handle: EntityHandle;
    try {
      handle = this.#options.ctx.entities.register({
        domain: config.domain,
        object_id: config.object_id,
        name: config.name,
        area: config.area,
        unit: config.unit,
        device_class: config.device_class,
        entity_category: config.entity_category,
        ...(config.domain === 'sensor' && { state_class: config.state_class }),
        // A new remote entity starts from its last stored state until the retained state arrives.
        ...(existing === undefined ? {} : { initial_state: existing.state }),
        // Without a command topic the satellite takes no calls for it.
        services: commandTopic === undefined ? [] : [...DOMAIN_SERVICES[config.domain]],
        ...(commandTopic === undefined
          ? {}
          : { call: (service: string, data: Record<string, unknown>) => this.#command(commandTopic, service, data) }),
      });
    } catch (error) {
      this.#options.ctx.log.warn({ err: error, topic }, `remote entity ${config.domain}.${config.object_id} could not be registered`);
      if (existing !== undefined) this.#drop(topic);
      return;
    }
    if (existing !== undefined) {
      for (const unsubscribe of existing.unsubscribe.splice(0)) unsubscribe();
      // Same id: the registration above replaced it (and remove() does nothing); another id: it is gone.
      if (existing.handle.entity_id !== handle.entity_id) existing.handle.remove();
    }
    const remote: RemoteEntity = {
      text,
      config,
      handle,
      state: existing?.state ?? null,
      availability: new Map(config.availability.map((a) => [a.topic, undefined])),
      latest: undefined,
      unsubscribe: [],
    };
    this.#remotes.set(topic, remote);
    if (existing === undefined) this.#options.ctx.log.info({ entity_id: handle.entity_id, node: config.node_id }, 'remote entity added');
    if (config.state_topic !== undefined) {
      remote.unsubscribe.push(this.#follow(config.state_topic, (m) => this.#onState(remote, m)));
    }
    if (config.attributes_topic !== undefined) {
      remote.unsubscribe.push(this.#follow(config.attributes_topic, (m) => this.#onAttributes(remote, m)));
    }
    for (const entry of config.availability) {
      remote.unsubscribe.push(this.#follow(entry.topic, (m) => this.#onAvailability(remote, entry, m)));
    }
  }

  #drop(topic: string): void {
    const remote = this.#remotes.get(topic);
    if (remote === undefined) return;
    this.#remotes.delete(topic);
    for (const unsubscribe of remote.unsubscribe.splice(0)) unsubscribe();
    remote.handle.remove();
  }

  async #command(topic: string, service: string, data: Record<string, unknown>): Promise<void> {
    const { link } = this.#options;
    if (!link.connected) {
      throw new HomeAgentError('HA_ERR_MQTT_UNAVAILABLE', `the MQTT broker is not connected: ${service} was not sent to ${topic}`);
    }
    const payload = Object.keys(data).length === 0 ? service : JSON.stringify({ service, data });
    await link.publish(topic, payload, { qos: this.#options.settings().publish_qos, retain: false });
  }

  /** Subscribes a listener to a topic shared with other remote entities; the last message is replayed to it. */
  #follow(topic: string, listener: (message: MqttMessage) => void): () => void {
    let shared = this.#topics.get(topic);
    if (shared === undefined) {
      const created: SharedTopic = { unsubscribe: () => undefined, last: undefined, listeners: new Set() };
      created.unsubscribe = this.#options.link.subscribe(topic, 1, (message) => {
        created.last = message;
        for (const l of [...created.listeners]) l(message);
      });
      this.#topics.set(topic, created);
      shared = created;
    }
    const joined = shared;
    joined.listeners.add(listener);
    if (joined.last !== undefined) listener(joined.last);
    return () => {
      joined.listeners.delete(listener);
      if (joined.listeners.size === 0 && this.#topics.get(topic) === joined) {
        joined.unsubscribe();
        this.#topics.delete(topic);
      }
    };
  }

  #onState(remote: RemoteEntity, message: MqttMessage): void {
    const text = message.payload.toString('utf8');
    remote.state = text === '' ? null : NUMERIC_DOMAINS.includes(remote.config.domain) && NUMBER.test(text) ? Number(text) : text;
    this.#report(remote);
  }

  #onAttributes(remote: RemoteEntity, message: MqttMessage): void {
    if (message.payload.length === 0) return;
    let attributes: unknown;
    try {
      attributes = JSON.parse(message.payload.toString('utf8'));
    } catch {
      attributes = undefined;
    }
    if (!isObject(attributes)) {
      this.#options.counters.malformed += 1;
      this.#options.ctx.log.debug({ topic: message.topic }, 'remote entity attributes are not a JSON object');
      return;
    }
    this.#safeUpdate(remote, this.#shown(remote), attributes);
  }

  #onAvailability(remote: RemoteEntity, entry: RemoteConfig['availability'][number], message: MqttMessage): void {
    const text = message.payload.toString('utf8');
    const value = text === entry.available ? true : text === entry.not_available ? false : undefined;
    if (value === undefined) return;
    remote.availability.set(entry.topic, value);
    remote.latest = value;
    this.#report(remote);
  }

  /** Home Assistant's availability modes: all topics online, any of them, or the one heard last. */
  #available(remote: RemoteEntity): boolean | undefined {
    const values = [...remote.availability.values()];
    if (values.length === 0) return true;
    switch (remote.config.availability_mode) {
      case 'all':
        return values.includes(false) ? false : values.every((v) => v === true) ? true : undefined;
      case 'any':
        return values.includes(true) ? true : values.every((v) => v === false) ? false : undefined;
      default:
        return remote.latest;
    }
  }

  /** Not heard yet counts as available: the retained messages follow the subscription at once. */
  #shown(remote: RemoteEntity): EntityState {
    return this.#available(remote) === false ? STATE_UNAVAILABLE : remote.state;
  }

  #report(remote: RemoteEntity): void {
    this.#safeUpdate(remote, this.#shown(remote), undefined);
  }

  #safeUpdate(remote: RemoteEntity, state: EntityState, attributes: Record<string, unknown> | undefined): void {
    try {
      remote.handle.update(state, attributes);
    } catch (error) {
      this.#options.ctx.log.warn({ err: error, entity_id: remote.handle.entity_id }, 'remote entity update refused');
    }
  }
}

/** The value when it is one of `allowed`, else null (a field this node does not know is left out). */
function oneOf<T extends string>(value: unknown, allowed: readonly T[]): T | null {
  return typeof value === 'string' && (allowed as readonly string[]).includes(value) ? (value as T) : null;
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function text64(value: unknown): string | undefined {
  if (typeof value !== 'string') return undefined;
  const trimmed = value.trim();
  return trimmed === '' ? undefined : trimmed.slice(0, MAX_NAME_CHARS);
}

function topicOf(value: unknown): string | undefined {
  return typeof value === 'string' && topicProblem(value) === undefined ? value : undefined;
}
