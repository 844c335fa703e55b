/**
 * Publishes the state of every entity HomeAgent owns to its retained topics, so that Home Assistant,
 * remote HomeAgent nodes and anything else on the broker read it without asking:
 *
 *   <base>/<entity_id>/state          the state as text, "" (which clears the retained message) for unknown
 *   <base>/<entity_id>/attributes     the attributes as JSON
 *   <base>/<entity_id>/availability   "offline" while the state is "unavailable", else "online"
 *
 * Everything is published on start and after every reconnect (the broker may have restarted without
 * its retained messages), then each `entity.state_changed` as it comes. The MQTT plugin's own entities
 * (Zigbee2MQTT devices, remote nodes, subscriptions mapped to entities) are not published: they
 * already live on the broker, and re-exporting a remote node's entity would echo it back.
 *
 * Rate: at most one publish per entity per `minIntervalMs` (100 ms). A change inside that window
 * waits for its end and the last state wins, so a sensor at 1 Hz is published as it changes while a
 * flapping input costs at most 10 messages a second, ending on its final state. Order: an entity
 * going unavailable says so before its state; one coming back publishes its state before "online",
 * so a reader never sees it available with the stale "unavailable" text.
 *
 * A removed entity keeps its retained topics for `removalGraceMs` (5 s): a plugin reload removes and
 * registers its entities again, and the topics should not blink. After the grace they are cleared.
 */
import type { EntityInfo, EntityState, EventMap, PluginContext } from '../../src/sdk/index.js';
import { availabilityOf, entityAvailabilityTopic, stateText } from './discovery-payloads.js';
import type { MqttSettings } from './settings-schema.js';
import { topicLayout } from './topics.js';
import type { MqttCounters, MqttLink } from './types.js';

/** The time the MQTT features read and wait on; tests drive a manual one. */
export interface TimerClock {
  now(): number;
  setTimer(fn: () => void, ms: number): { cancel(): void };
}

export const systemTimerClock: TimerClock = {
  now: () => Date.now(),
  setTimer(fn, ms) {
    const timer = setTimeout(fn, Math.max(0, ms));
    timer.unref?.();
    return { cancel: () => clearTimeout(timer) };
  },
};

export const DEFAULT_MIN_PUBLISH_INTERVAL_MS = 100;
export const DEFAULT_REMOVAL_GRACE_MS = 5000;

/**
 * Work to do some time after an entity left, unless it comes back first (keyed by entity id or
 * topic). Shared by the state publisher and discovery so that both wait the same way.
 */
export class DeferredRemovals {
  readonly #clock: TimerClock;
  readonly #pending = new Map<string, { cancel(): void }>();

  constructor(clock: TimerClock) {
    this.#clock = clock;
  }

  schedule(key: string, ms: number, run: () => void): void {
    this.cancel(key);
    const timer = this.#clock.setTimer(() => {
      this.#pending.delete(key);
      run();
    }, ms);
    this.#pending.set(key, timer);
  }

  /** True when something was waiting for `key`. */
  cancel(key: string): boolean {
    const timer = this.#pending.get(key);
    if (timer === undefined) return false;
    timer.cancel();
    this.#pending.delete(key);
    return true;
  }

  has(key: string): boolean {
    return this.#pending.has(key);
  }

  cancelAll(): void {
    for (const timer of this.#pending.values()) timer.cancel();
    this.#pending.clear();
  }
}

export type StatePublisherSettings = Pick<MqttSettings, 'base_topic' | 'publish_qos'>;

export interface StatePublisherOptions {
  link: MqttLink;
  ctx: Pick<PluginContext, 'name' | 'entities' | 'events' | 'log'>;
  settings: () => StatePublisherSettings;
  counters: MqttCounters;
  clock?: TimerClock;
  /** Shortest time between two publishes of one entity. */
  minIntervalMs?: number;
  /** How long a removed entity's retained topics stay, in case it is registered again. */
  removalGraceMs?: number;
}

interface Published {
  state?: string;
  attributes?: string;
  availability?: string;
}

interface Slot {
  lastAt: number;
  timer: { cancel(): void } | undefined;
  /** The newest state and attributes not yet published. */
  pending: { state: EntityState; attributes: Record<string, unknown> } | undefined;
}

export class StatePublisher {
  readonly #options: StatePublisherOptions;
  readonly #clock: TimerClock;
  readonly #owner: string;
  readonly #own = new Set<string>();
  readonly #published = new Map<string, Published>();
  readonly #slots = new Map<string, Slot>();
  readonly #removals: DeferredRemovals;
  readonly #inFlight = new Set<Promise<void>>();
  readonly #unsubscribe: Array<() => void> = [];
  #running = false;

  constructor(options: StatePublisherOptions) {
    this.#options = options;
    this.#clock = options.clock ?? systemTimerClock;
    this.#owner = `plugin:${options.ctx.name}`;
    this.#removals = new DeferredRemovals(this.#clock);
  }

  async start(): Promise<void> {
    const { ctx, link } = this.#options;
    this.#running = true;
    this.#unsubscribe.push(
      ctx.events.subscribe('entity.state_changed', (event) => this.#onChange(event)),
      ctx.events.subscribe('entity.registered', (event) => this.#onRegistered(event)),
      ctx.events.subscribe('entity.removed', (event) => this.#onRemoved(event)),
      link.onConnect(() => void this.#publishAll()),
    );
    if (link.connected) await this.#publishAll();
  }

  async stop(): Promise<void> {
    this.#running = false;
    for (const unsubscribe of this.#unsubscribe.splice(0)) unsubscribe();
    this.#removals.cancelAll();
    for (const slot of this.#slots.values()) slot.timer?.cancel();
    this.#slots.clear();
    await Promise.allSettled([...this.#inFlight]);
    this.#own.clear();
    this.#published.clear();
  }

  /** Resolves when every publish asked for so far is stored or sent by the link. */
  async settled(): Promise<void> {
    await Promise.allSettled([...this.#inFlight]);
  }

  /** Entities published now (for status and tests). */
  get entityCount(): number {
    return this.#own.size;
  }

  /** For `mqtt.status`: entities followed, changes waiting for their interval, publishes not yet stored or sent. */
  status(): { entities: number; waiting: number; in_flight: number } {
    let waiting = 0;
    for (const slot of this.#slots.values()) if (slot.timer !== undefined) waiting += 1;
    return { entities: this.#own.size, waiting, in_flight: this.#inFlight.size };
  }

  /** Publishes every own entity, whatever was published before (a reconnect may have lost them). */
  async #publishAll(): Promise<void> {
    let entities: EntityInfo[];
    try {
      entities = await this.#options.ctx.entities.list();
    } catch (error) {
      this.#options.ctx.log.warn({ err: error }, 'MQTT state publisher could not list the entities');
      return;
    }
    if (!this.#running) return;
    for (const entity of entities) {
      if (entity.owner === this.#owner) continue;
      this.#own.add(entity.entity_id);
      this.#published.delete(entity.entity_id);
      this.#publish(entity.entity_id, entity.state, entity.attributes);
    }
    await Promise.allSettled([...this.#inFlight]);
  }

  #onRegistered(event: EventMap['entity.registered']): void {
    if (event.owner === this.#owner) return;
    this.#removals.cancel(event.entity_id);
    this.#options.ctx.entities.get(event.entity_id).then(
      (entity) => {
        if (!this.#running || entity.owner === this.#owner) return;
        this.#own.add(entity.entity_id);
        // Registered again: its definition may differ, so everything is said again.
        this.#published.delete(entity.entity_id);
        this.#queue(entity.entity_id, entity.state, entity.attributes);
      },
      (error: unknown) => this.#options.ctx.log.debug({ err: error, entity_id: event.entity_id }, 'registered entity is gone again'),
    );
  }

  #onRemoved(event: EventMap['entity.removed']): void {
    if (!this.#own.delete(event.entity_id)) return;
    const slot = this.#slots.get(event.entity_id);
    slot?.timer?.cancel();
    this.#slots.delete(event.entity_id);
    const grace = this.#options.removalGraceMs ?? DEFAULT_REMOVAL_GRACE_MS;
    this.#removals.schedule(event.entity_id, grace, () => this.#clear(event.entity_id));
  }

  #onChange(event: EventMap['entity.state_changed']): void {
    if (!this.#own.has(event.entity_id)) return;
    this.#queue(event.entity_id, event.new_state, event.attributes);
  }

  /** Publishes now, or at the end of the entity's interval with whatever is newest by then. */
  #queue(entityId: string, state: EntityState, attributes: Record<string, unknown>): void {
    const minInterval = this.#options.minIntervalMs ?? DEFAULT_MIN_PUBLISH_INTERVAL_MS;
    let slot = this.#slots.get(entityId);
    if (slot === undefined) {
      slot = { lastAt: Number.NEGATIVE_INFINITY, timer: undefined, pending: undefined };
      this.#slots.set(entityId, slot);
    }
    slot.pending = { state, attributes };
    if (slot.timer !== undefined) return;
    const wait = slot.lastAt + minInterval - this.#clock.now();
    if (wait <= 0) {
      this.#flush(entityId, slot);
      return;
    }
    const waiting = slot;
    slot.timer = this.#clock.setTimer(() => {
      waiting.timer = undefined;
      if (this.#slots.get(entityId) === waiting) this.#flush(entityId, waiting);
    }, wait);
  }

  #flush(entityId: string, slot: Slot): void {
    const pending = slot.pending;
    slot.pending = undefined;
    if (pending === undefined || !this.#running || !this.#own.has(entityId)) return;
    // Only a publish starts an interval: a burst that ended where it began costs the next change no wait.
    if (this.#publish(entityId, pending.state, pending.attributes)) slot.lastAt = this.#clock.now();
  }

  /** Publishes what differs from what was last published, in the order described above; false when nothing did. */
  #publish(entityId: string, state: EntityState, attributes: Record<string, unknown>): boolean {
    const { base_topic } = this.#options.settings();
    const topics = topicLayout(base_topic);
    const before = this.#published.get(entityId) ?? {};
    const now: Published = { state: stateText(state), availability: availabilityOf(state) };
    try {
      now.attributes = JSON.stringify(attributes);
    } catch (error) {
      this.#options.ctx.log.warn({ err: error, entity_id: entityId }, 'MQTT: the attributes of an entity are not JSON; not published');
      if (before.attributes !== undefined) now.attributes = before.attributes;
    }
    this.#published.set(entityId, now);
    const messages: Array<[string, string]> = [];
    if (now.state !== before.state) messages.push([topics.state(entityId), now.state ?? '']);
    if (now.attributes !== undefined && now.attributes !== before.attributes) messages.push([topics.attributes(entityId), now.attributes]);
    if (now.availability !== before.availability) {
      const availability: [string, string] = [entityAvailabilityTopic(base_topic, entityId), now.availability ?? ''];
      if (now.availability === 'offline') messages.unshift(availability);
      else messages.push(availability);
    }
    for (const [topic, payload] of messages) this.#send(topic, payload, entityId);
    return messages.length > 0;
  }

  /** Empties the retained topics of an entity that is gone for good. */
  #clear(entityId: string): void {
    if (!this.#running || this.#own.has(entityId)) return;
    const { base_topic } = this.#options.settings();
    const topics = topicLayout(base_topic);
    this.#published.delete(entityId);
    for (const topic of [topics.state(entityId), topics.attributes(entityId), entityAvailabilityTopic(base_topic, entityId)]) {
      this.#send(topic, '', entityId);
    }
  }

  /** Sent in call order (the link keeps it); a failure is logged, never thrown at the event bus. */
  #send(topic: string, payload: string, entityId: string): void {
    const sending = this.#options.link
      .publish(topic, payload, { qos: this.#options.settings().publish_qos, retain: true })
      .catch((error: unknown) =>
        this.#options.ctx.log.warn({ err: error, entity_id: entityId, topic }, 'MQTT: publishing an entity failed'),
      )
      .finally(() => this.#inFlight.delete(sending));
    this.#inFlight.add(sending);
  }
}
