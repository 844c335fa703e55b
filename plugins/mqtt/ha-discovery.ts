/**
 * Home Assistant MQTT discovery: a retained config (discovery-payloads.ts) for every entity
 * HomeAgent owns, and for the agent (a notify entity and a "last reply" sensor), so they appear in
 * Home Assistant without any configuration there.
 *
 * When configs are published:
 * - on start and after every reconnect (the broker may have lost its retained messages);
 * - when Home Assistant announces itself (`<prefix>/status` "online", its birth message; a retained
 *   copy is ignored, it only repeats what the connect already did);
 * - for one entity, when it is registered.
 *
 * When they are removed (an empty retained payload, which makes Home Assistant delete the entity):
 * - `removalGraceMs` (5 s) after an entity was removed, unless it was registered again meanwhile:
 *   a plugin reload removes and re-registers its entities, and deleting them in Home Assistant would
 *   lose what the user customised there;
 * - configs of this node found on the broker that no current entity publishes (the entity was
 *   deleted while HomeAgent was down), after `staleGraceMs` (60 s), so that plugins starting after
 *   this one can register their entities first;
 * - all of them when plugin.mqtt.discovery is switched off (and any found later while it is off).
 *
 * Stopping publishes nothing: a restart must not delete the entities; Home Assistant shows them
 * unavailable through `<base>/status` (the last will) meanwhile.
 */
import { type EntityInfo, type EventMap, HomeAgentError, type PluginContext } from '../../src/sdk/index.js';
import { agentDiscovery, type DiscoveryMessage, type DiscoveryNode, entityDiscovery } from './discovery-payloads.js';
import { DEFAULT_REMOVAL_GRACE_MS, DeferredRemovals, systemTimerClock, type TimerClock } from './state-publisher.js';
import type { MqttCounters, MqttLink, MqttMessage, Qos } from './types.js';

export const DEFAULT_STALE_GRACE_MS = 60_000;
/** Home Assistant's birth and last-will payloads on `<prefix>/status`. */
const HA_ONLINE = 'online';
const NODE_ID = /^[a-z0-9_]{1,64}$/;

export interface HaDiscoverySettings {
  discovery: boolean;
  discovery_prefix: string;
  /** plugin.mqtt.node_id, resolved (core.name made a slug when the setting is empty). */
  node_id: string;
  /** core.name: the name of this node's device in Home Assistant. */
  node_name: string;
  base_topic: string;
  publish_qos: Qos;
}

export interface HaDiscoveryOptions {
  link: MqttLink;
  ctx: Pick<PluginContext, 'name' | 'entities' | 'events' | 'log' | 'settings'>;
  settings: () => HaDiscoverySettings;
  counters: MqttCounters;
  clock?: TimerClock;
  /** HomeAgent's version for the device block. */
  version?: string;
  removalGraceMs?: number;
  staleGraceMs?: number;
}

export class HaDiscovery {
  readonly #options: HaDiscoveryOptions;
  readonly #owner: string;
  readonly #removals: DeferredRemovals;
  /** Config topic → the entity it describes ('' for the agent's own). */
  readonly #published = new Map<string, string>();
  /** Entity id → its config topic. */
  readonly #topicOf = new Map<string, string>();
  readonly #unsubscribe: Array<() => void> = [];
  /** Publishes one after the other, so a full re-publish and a single entity do not interleave. */
  #chain: Promise<void> = Promise.resolve();
  #active = false;
  #running = false;

  constructor(options: HaDiscoveryOptions) {
    this.#options = options;
    this.#owner = `plugin:${options.ctx.name}`;
    this.#removals = new DeferredRemovals(options.clock ?? systemTimerClock);
  }

  async start(): Promise<void> {
    const { ctx, link } = this.#options;
    const settings = this.#options.settings();
    checkNodeId(settings.node_id);
    this.#running = true;
    this.#unsubscribe.push(
      ctx.events.subscribe('entity.registered', (event) => this.#onRegistered(event)),
      ctx.events.subscribe('entity.removed', (event) => this.#onRemoved(event)),
      ctx.settings.onChange((key) => {
        if (key === 'discovery') this.#enqueue(() => this.#applySwitch());
      }),
      link.onConnect(() => {
        if (this.#active) this.#enqueue(() => this.#publishAll());
      }),
      link.subscribe(`${prefix(settings)}/status`, 1, (message) => this.#onHomeAssistantStatus(message)),
      link.subscribe(`${prefix(settings)}/+/${settings.node_id}/+/config`, 1, (message) => this.#onOwnConfig(message)),
    );
    this.#active = settings.discovery;
    if (this.#active && link.connected) this.#enqueue(() => this.#publishAll());
    await this.#chain;
  }

  async stop(): Promise<void> {
    this.#running = false;
    for (const unsubscribe of this.#unsubscribe.splice(0)) unsubscribe();
    this.#removals.cancelAll();
    await this.#chain;
    this.#published.clear();
    this.#topicOf.clear();
  }

  /** Config topics published now (status and tests). */
  get publishedTopics(): string[] {
    return [...this.#published.keys()];
  }

  /** For `mqtt.status`. */
  status(): { active: boolean; configs: number } {
    return { active: this.#active, configs: this.#published.size };
  }

  /** Resolves when every publish asked for so far is handed to the link. */
  settled(): Promise<void> {
    return this.#chain;
  }

  #enqueue(work: () => Promise<void>): void {
    this.#chain = this.#chain.then(work).catch((error: unknown) => this.#options.ctx.log.warn({ err: error }, 'MQTT discovery failed'));
  }

  #node(): DiscoveryNode {
    const s = this.#options.settings();
    const node: DiscoveryNode = { node_id: s.node_id, name: s.node_name, base_topic: s.base_topic, discovery_prefix: prefix(s) };
    if (this.#options.version !== undefined) node.sw_version = this.#options.version;
    return node;
  }

  async #publishAll(): Promise<void> {
    if (!this.#running || !this.#active) return;
    const { entities } = this.#options.ctx;
    const [list, areas] = await Promise.all([entities.list(), entities.areas()]);
    const names = new Map(areas.map((a) => [a.id, a.name]));
    const node = this.#node();
    const messages = agentDiscovery(node);
    for (const entity of list) {
      if (entity.owner === this.#owner) continue;
      const message = this.#entityMessage(entity, node, names);
      if (message !== undefined) messages.push(message);
    }
    await Promise.all(messages.map((m) => this.#publishConfig(m)));
  }

  /** Undefined for a domain discovery does not publish (discovery-payloads.ts, PUBLISHED_DOMAINS). */
  #entityMessage(entity: EntityInfo, node: DiscoveryNode, areaNames: Map<string, string>): DiscoveryMessage | undefined {
    const areaName = entity.area === null ? undefined : areaNames.get(entity.area);
    return entityDiscovery(entity, node, areaName);
  }

  async #publishConfig(message: DiscoveryMessage): Promise<void> {
    const entityId = message.entity_id ?? '';
    this.#removals.cancel(message.topic);
    if (entityId !== '') {
      this.#removals.cancel(entityId);
      const before = this.#topicOf.get(entityId);
      // Its component changed (it gained or lost its services): the old config would be a twin.
      if (before !== undefined && before !== message.topic) await this.#removeConfig(before);
      this.#topicOf.set(entityId, message.topic);
    }
    this.#published.set(message.topic, entityId);
    await this.#send(message.topic, JSON.stringify(message.payload));
  }

  async #removeConfig(topic: string): Promise<void> {
    const entityId = this.#published.get(topic);
    this.#published.delete(topic);
    if (entityId !== undefined && this.#topicOf.get(entityId) === topic) this.#topicOf.delete(entityId);
    await this.#send(topic, '');
  }

  async #send(topic: string, payload: string): Promise<void> {
    try {
      await this.#options.link.publish(topic, payload, { qos: this.#options.settings().publish_qos, retain: true });
    } catch (error) {
      this.#options.ctx.log.warn({ err: error, topic }, 'MQTT: publishing a discovery config failed');
    }
  }

  async #applySwitch(): Promise<void> {
    const wanted = this.#options.settings().discovery;
    if (wanted === this.#active) return;
    this.#active = wanted;
    if (wanted) {
      await this.#publishAll();
      return;
    }
    this.#removals.cancelAll();
    await Promise.all([...this.#published.keys()].map((topic) => this.#removeConfig(topic)));
  }

  #onRegistered(event: EventMap['entity.registered']): void {
    if (event.owner === this.#owner) return;
    this.#removals.cancel(event.entity_id);
    this.#enqueue(async () => {
      if (!this.#running || !this.#active) return;
      const { entities } = this.#options.ctx;
      const [entity, areas] = await Promise.all([entities.get(event.entity_id), entities.areas()]);
      // Gone again or replaced by another owner before this ran.
      if (entity.owner === this.#owner) return;
      const message = this.#entityMessage(entity, this.#node(), new Map(areas.map((a) => [a.id, a.name])));
      if (message !== undefined) await this.#publishConfig(message);
    });
  }

  #onRemoved(event: EventMap['entity.removed']): void {
    if (event.owner === this.#owner) return;
    const topic = this.#topicOf.get(event.entity_id);
    if (topic === undefined) return;
    const grace = this.#options.removalGraceMs ?? DEFAULT_REMOVAL_GRACE_MS;
    this.#removals.schedule(event.entity_id, grace, () => {
      this.#enqueue(async () => {
        // Registered again under the same topic in the meantime: keep it.
        if (this.#topicOf.get(event.entity_id) !== topic || this.#removals.has(event.entity_id)) return;
        if (await this.#stillRegistered(event.entity_id)) return;
        await this.#removeConfig(topic);
      });
    });
  }

  async #stillRegistered(entityId: string): Promise<boolean> {
    try {
      const entity = await this.#options.ctx.entities.get(entityId);
      return entity.entity_id === entityId && entity.owner !== this.#owner;
    } catch {
      return false;
    }
  }

  #onHomeAssistantStatus(message: MqttMessage): void {
    if (message.retain || message.payload.toString('utf8') !== HA_ONLINE || !this.#active) return;
    this.#enqueue(() => this.#publishAll());
  }

  /** A config of this node on the broker: a leftover unless some current entity publishes it. */
  #onOwnConfig(message: MqttMessage): void {
    if (message.payload.length === 0 || this.#published.has(message.topic)) return;
    const topic = message.topic;
    if (!this.#active) {
      this.#enqueue(() => this.#send(topic, ''));
      return;
    }
    const grace = this.#options.staleGraceMs ?? DEFAULT_STALE_GRACE_MS;
    this.#removals.schedule(topic, grace, () => {
      this.#enqueue(async () => {
        if (this.#active && !this.#published.has(topic)) await this.#send(topic, '');
      });
    });
  }
}

/** The node id is a topic level and part of every unique id: the plugin resolves it before features start. */
export function checkNodeId(nodeId: string): void {
  if (!NODE_ID.test(nodeId)) {
    throw new HomeAgentError(
      'HA_ERR_CONFIG_INVALID',
      `plugin.mqtt.node_id must be 1-64 lowercase letters, digits or _ (got ${JSON.stringify(nodeId)})`,
      { details: { key: 'plugin.mqtt.node_id' } },
    );
  }
}

function prefix(settings: { discovery_prefix: string }): string {
  return settings.discovery_prefix.replace(/\/+$/, '');
}
