/**
 * An aedes persistence (the interface of aedes-persistence 11, which aedes 1.x calls with
 * promises) that keeps its state in memory like aedes's default one and journals every change to
 * the broker's folder ({@link BrokerJournal}), so that a restart keeps retained messages,
 * persistent sessions (clean: false subscriptions), their queued QoS 1/2 messages, QoS 2 messages
 * in flight and the clients' wills.
 *
 * What a crash may lose: most changes (a queued or retained message, a subscription or
 * unsubscription, QoS 2 state, a will) are on the disk before aedes goes on — aedes waits for
 * them, and writes arriving together share one fdatasync. For QoS 1, aedes sends PUBACK before it
 * queues the message for offline sessions, so a crash in that window (one disk write) loses the
 * message even though the publisher saw it acknowledged; QoS 2 has no such window (PUBREC follows
 * the write). Three frequent bookkeeping changes are written with the next batch without waiting:
 * a delivery acknowledged, a packet id assigned, a will deleted. A crash just before makes the
 * message be delivered again after the restart (a duplicate, never a loss), or a stale will be
 * published, which after a crash is what the will is for.
 *
 * The state is bounded ({@link BrokerStoreLimits}): a session whose client is away keeps at most
 * maxQueuedPerClient messages, and everything kept together at most maxStoredBytes. Beyond that a
 * message is not queued or retained (it is still delivered to the clients connected, just not kept
 * for a restart), and the drop is counted and logged.
 */
import { Readable } from 'node:stream';
import type { Logger } from '../../src/sdk/index.js';
import { BrokerJournal, JournalCorruptError } from './broker-journal.js';
import { topicMatches } from './topics.js';
import type { MqttCounters } from './types.js';

export interface BrokerStoreLimits {
  /** QoS 1/2 messages kept for one session while its client is away (mosquitto's max_queued_messages). */
  maxQueuedPerClient: number;
  /** Topics and payloads kept in all: retained, queued, QoS 2 in flight, subscriptions. */
  maxStoredBytes: number;
}

export const DEFAULT_STORE_LIMITS: BrokerStoreLimits = { maxQueuedPerClient: 1000, maxStoredBytes: 64 * 1024 * 1024 };

/** A packet as aedes hands it over (aedes-packet fields plus MQTT 5 properties). */
export type StoredPacket = Record<string, unknown> & {
  cmd?: string | undefined;
  topic?: string | undefined;
  payload?: Buffer | string | undefined;
  qos?: number | undefined;
  messageId?: number | undefined;
  brokerId?: string | undefined;
  brokerCounter?: number | undefined;
};

interface ClientRef {
  id: string;
}

export interface Subscription {
  topic: string;
  qos: number;
  rh?: number;
  rap?: boolean;
  nl?: boolean;
  subscriptionIdentifier?: number;
}

type SubscriptionRecord = Omit<Subscription, 'topic'>;

/** What subscriptionsByTopic returns (the shape of aedes-persistence's trie entries). */
interface MatchedSubscription {
  clientId: string;
  topic: string;
  qos: number;
  rh: number | undefined;
  rap: boolean | undefined;
  nl: boolean | undefined;
}

interface BrokerRef {
  id: string;
  /** aedes's connected clients by id (not in its typings). */
  clients?: Record<string, unknown>;
}

/** One change; the journal holds these, and replaying them in order rebuilds the state. */
type Change =
  | { op: 'retain'; topic: string; packet?: StoredPacket }
  | { op: 'subscribe'; client: string; subs: Subscription[] }
  | { op: 'unsubscribe'; client: string; topics: string[] }
  | { op: 'clean_subscriptions'; client: string }
  | { op: 'enqueue'; clients: string[]; packet: StoredPacket }
  | { op: 'update'; client: string; packet: StoredPacket }
  | { op: 'clear'; client: string; messageId?: number }
  | { op: 'incoming_store'; client: string; packet: StoredPacket }
  | { op: 'incoming_delete'; client: string; messageId: number }
  | { op: 'incoming_clean'; client: string }
  | { op: 'will_put'; client: string; packet: StoredPacket }
  | { op: 'will_delete'; client: string };

/** The snapshot's shape (state.json's `state`). */
interface StateFile {
  retained: StoredPacket[];
  sessions: Array<[string, Subscription[]]>;
  outgoing: Array<[string, StoredPacket[]]>;
  incoming: Array<[string, StoredPacket[]]>;
  wills: Array<[string, StoredPacket]>;
}

export interface FilePersistenceOptions {
  dir: string;
  log: Logger;
  limits?: Partial<BrokerStoreLimits>;
  counters?: MqttCounters;
  /** For the drop warnings' rate limit; default Date.now. */
  now?: () => number;
}

const DROP_LOG_INTERVAL_MS = 60_000;

export class FilePersistence {
  readonly #log: Logger;
  readonly #limits: BrokerStoreLimits;
  readonly #counters: MqttCounters | undefined;
  readonly #now: () => number;
  readonly #journal: BrokerJournal;
  #broker: BrokerRef | undefined;

  readonly #retained = new Map<string, StoredPacket>();
  /** clientId → topic filter → subscription, for persistent sessions. */
  readonly #sessions = new Map<string, Map<string, SubscriptionRecord>>();
  /** QoS > 0 subscriptions by filter (exact topics and wildcard filters apart), then by client. */
  readonly #exact = new Map<string, Map<string, MatchedSubscription>>();
  readonly #wildcard = new Map<string, Map<string, MatchedSubscription>>();
  readonly #outgoing = new Map<string, StoredPacket[]>();
  readonly #incoming = new Map<string, Map<number, StoredPacket>>();
  readonly #wills = new Map<string, StoredPacket>();
  #storedBytes = 0;
  #dropsUnlogged = 0;
  #lastDropLog = Number.NEGATIVE_INFINITY;

  constructor(options: FilePersistenceOptions) {
    this.#log = options.log;
    this.#limits = { ...DEFAULT_STORE_LIMITS, ...options.limits };
    this.#counters = options.counters;
    this.#now = options.now ?? Date.now;
    this.#journal = new BrokerJournal({ dir: options.dir, log: options.log, snapshot: () => this.#stateFile() });
  }

  get broker(): BrokerRef | undefined {
    return this.#broker;
  }

  /** What is kept, for status and tests. */
  stats(): { retained: number; sessions: number; queued: number; stored_bytes: number } {
    let queued = 0;
    for (const queue of this.#outgoing.values()) queued += queue.length;
    return { retained: this.#retained.size, sessions: this.#sessions.size, queued, stored_bytes: this.#storedBytes };
  }

  /** Called by aedes when it starts: loads what the last run left (or moves an unreadable state aside). */
  async setup(broker: BrokerRef): Promise<void> {
    this.#broker = broker;
    try {
      const contents = await this.#journal.read();
      if (contents.state !== undefined) this.#restore(contents.state);
      for (const entry of contents.entries) this.#apply(checkChange(entry));
    } catch (error) {
      if (!(error instanceof JournalCorruptError)) throw error;
      this.#clear();
      await this.#journal.quarantine(error.message);
    }
    await this.#journal.begin();
    const stats = this.stats();
    if (stats.retained + stats.sessions > 0) this.#log.info(stats, 'embedded broker state loaded');
  }

  /** Writes what is pending and a final snapshot. */
  async close(): Promise<void> {
    await this.#journal.close();
  }

  async destroy(): Promise<void> {
    await this.close();
  }

  // Retained messages

  async storeRetained(packet: StoredPacket): Promise<void> {
    const topic = String(packet.topic);
    if (payloadLength(packet) === 0) {
      if (this.#retained.has(topic)) await this.#commitAndSync({ op: 'retain', topic });
      return;
    }
    const growth = packetBytes(packet) - packetBytes(this.#retained.get(topic));
    if (growth > 0 && this.#storedBytes + growth > this.#limits.maxStoredBytes) {
      this.#dropped('retained message not kept: the broker store is full', { topic });
      return;
    }
    await this.#commitAndSync({ op: 'retain', topic, packet });
  }

  createRetainedStream(pattern: string): Readable {
    return this.createRetainedStreamCombi([pattern]);
  }

  createRetainedStreamCombi(patterns: string[]): Readable {
    const matching: StoredPacket[] = [];
    for (const [topic, packet] of this.#retained) if (patterns.some((pattern) => filterMatches(pattern, topic))) matching.push(packet);
    return Readable.from(matching);
  }

  // Subscriptions of persistent sessions

  async addSubscriptions(client: ClientRef, subs: Subscription[]): Promise<void> {
    const growth = subs.reduce((sum, sub) => sum + Buffer.byteLength(sub.topic), 0);
    if (this.#storedBytes + growth > this.#limits.maxStoredBytes) {
      this.#dropped('subscriptions refused: the broker store is full', { client: client.id });
      throw new Error('the broker store is full');
    }
    await this.#commitAndSync({ op: 'subscribe', client: client.id, subs: subs.map(subscriptionOf) });
  }

  async removeSubscriptions(client: ClientRef, topics: string[]): Promise<void> {
    if (this.#sessions.has(client.id)) await this.#commitAndSync({ op: 'unsubscribe', client: client.id, topics });
  }

  async subscriptionsByClient(client: ClientRef): Promise<Subscription[]> {
    const stored = this.#sessions.get(client.id);
    return stored ? [...stored].map(([topic, record]) => ({ topic, ...record })) : [];
  }

  async countOffline(): Promise<{ subsCount: number; clientsCount: number }> {
    let subsCount = 0;
    for (const byClient of this.#exact.values()) subsCount += byClient.size;
    for (const byClient of this.#wildcard.values()) subsCount += byClient.size;
    return { subsCount, clientsCount: this.#sessions.size };
  }

  async subscriptionsByTopic(topic: string): Promise<MatchedSubscription[]> {
    const matched: MatchedSubscription[] = [];
    for (const [filter, byClient] of this.#wildcard) if (filterMatches(filter, topic)) matched.push(...byClient.values());
    const exact = this.#exact.get(topic);
    if (exact) matched.push(...exact.values());
    return matched;
  }

  async cleanSubscriptions(client: ClientRef): Promise<void> {
    if (this.#sessions.has(client.id)) await this.#commitAndSync({ op: 'clean_subscriptions', client: client.id });
  }

  getClientList(topic: string): Readable {
    const clients: string[] = [];
    for (const [clientId, stored] of this.#sessions) if (stored.has(topic)) clients.push(clientId);
    return Readable.from(clients);
  }

  // Messages queued for sessions

  async outgoingEnqueue(sub: { clientId: string }, packet: StoredPacket): Promise<void> {
    await this.outgoingEnqueueCombi([sub], packet);
  }

  async outgoingEnqueueCombi(subs: Array<{ clientId: string }>, packet: StoredPacket): Promise<void> {
    const size = packetBytes(packet);
    let budget = this.#limits.maxStoredBytes - this.#storedBytes;
    const clients: string[] = [];
    for (const { clientId } of subs) {
      const queued = this.#outgoing.get(clientId)?.length ?? 0;
      // aedes queues every QoS 1/2 message of a persistent session, also while its client is
      // connected (until acknowledged): the count limit is for sessions whose client is away.
      const away = this.#broker?.clients?.[clientId] === undefined;
      if ((away && queued >= this.#limits.maxQueuedPerClient) || size > budget) {
        this.#dropped('message not queued: the session queue or the broker store is full', {
          client: clientId,
          topic: packet.topic,
          queued,
        });
        continue;
      }
      budget -= size;
      clients.push(clientId);
    }
    if (clients.length > 0) await this.#commitAndSync({ op: 'enqueue', clients, packet });
  }

  async outgoingUpdate(client: ClientRef, packet: StoredPacket): Promise<void> {
    const index = this.#findForUpdate(client.id, packet);
    // A message the limits kept out of the queue is still sent to a connected client; refusing
    // here would make aedes drop that client's connection (aedes-persistence's memory store throws).
    if (index === undefined) return;
    // The usual update only gives a queued message its packet id: journal that, not the payload again.
    const sameMessage = this.#outgoing.get(client.id)?.[index]?.brokerId === packet.brokerId;
    const { brokerId, brokerCounter, messageId } = packet;
    this.#commit({ op: 'update', client: client.id, packet: sameMessage ? { brokerId, brokerCounter, messageId } : packet });
  }

  async outgoingClearMessageId(client: ClientRef, packet: StoredPacket): Promise<StoredPacket | undefined> {
    const messageId = packet?.messageId;
    const queue = this.#outgoing.get(client.id);
    const found = queue?.find((queued) => queued.messageId === messageId);
    if (found === undefined) return undefined;
    this.#commit(messageId === undefined ? { op: 'clear', client: client.id } : { op: 'clear', client: client.id, messageId });
    return found;
  }

  outgoingStream(client: ClientRef): Readable {
    return Readable.from([...(this.#outgoing.get(client.id) ?? [])]);
  }

  // QoS 2 messages received and not yet released

  async incomingStorePacket(client: ClientRef, packet: StoredPacket): Promise<void> {
    if (this.#storedBytes + packetBytes(packet) > this.#limits.maxStoredBytes) {
      this.#dropped('QoS 2 message refused: the broker store is full', { client: client.id, topic: packet.topic });
      throw new Error('the broker store is full');
    }
    await this.#commitAndSync({ op: 'incoming_store', client: client.id, packet });
  }

  async incomingGetPacket(client: ClientRef, packet: { messageId?: number }): Promise<StoredPacket> {
    const stored = packet.messageId === undefined ? undefined : this.#incoming.get(client.id)?.get(packet.messageId);
    if (!stored) throw new Error('no such packet');
    return stored;
  }

  async incomingDelPacket(client: ClientRef, packet: { messageId?: number }): Promise<void> {
    const messageId = packet.messageId;
    if (messageId === undefined || !this.#incoming.get(client.id)?.has(messageId)) throw new Error('no such packet');
    await this.#commitAndSync({ op: 'incoming_delete', client: client.id, messageId });
  }

  async cleanIncoming(client: ClientRef): Promise<void> {
    if (this.#incoming.has(client.id)) await this.#commitAndSync({ op: 'incoming_clean', client: client.id });
  }

  // Wills

  async putWill(client: ClientRef, packet: StoredPacket): Promise<void> {
    // aedes-persistence marks the will with its broker and client; aedes reads them back.
    if (this.#broker) packet.brokerId = this.#broker.id;
    packet.clientId = client.id;
    await this.#commitAndSync({ op: 'will_put', client: client.id, packet });
  }

  async getWill(client: ClientRef): Promise<StoredPacket | undefined> {
    return this.#wills.get(client.id);
  }

  async delWill(client: ClientRef): Promise<StoredPacket | undefined> {
    const will = this.#wills.get(client.id);
    if (will !== undefined) this.#commit({ op: 'will_delete', client: client.id });
    return will;
  }

  /** Wills of clients of brokers that are gone (after a restart: all of them, with the old broker id). */
  streamWill(brokers: Record<string, unknown> = {}): Readable {
    return Readable.from([...this.#wills.values()].filter((will) => brokers[String(will.brokerId)] === undefined));
  }

  // Changes

  /** Applies a change and journals it without waiting (removals: a crash before the write means a duplicate, not a loss). */
  #commit(change: Change): void {
    this.#apply(change);
    this.#journal.add(change);
  }

  /** Applies a change and waits until it is on the disk. */
  async #commitAndSync(change: Change): Promise<void> {
    this.#apply(change);
    await this.#journal.addAndSync(change);
  }

  /** The only code that changes the state: live calls and journal replay go through it alike. */
  #apply(change: Change): void {
    switch (change.op) {
      case 'retain': {
        this.#storedBytes -= packetBytes(this.#retained.get(change.topic));
        if (change.packet === undefined) this.#retained.delete(change.topic);
        else {
          const packet = { ...change.packet };
          this.#retained.set(change.topic, packet);
          this.#storedBytes += packetBytes(packet);
        }
        return;
      }
      case 'subscribe':
        this.#subscribe(change.client, change.subs);
        return;
      case 'unsubscribe': {
        const stored = this.#sessions.get(change.client);
        if (!stored) return;
        for (const topic of change.topics) {
          if (!stored.has(topic)) continue;
          this.#unindex(change.client, topic);
          stored.delete(topic);
          this.#storedBytes -= Buffer.byteLength(topic);
        }
        if (stored.size === 0) this.#sessions.delete(change.client);
        return;
      }
      case 'clean_subscriptions': {
        const stored = this.#sessions.get(change.client);
        if (!stored) return;
        for (const topic of stored.keys()) {
          this.#unindex(change.client, topic);
          this.#storedBytes -= Buffer.byteLength(topic);
        }
        this.#sessions.delete(change.client);
        return;
      }
      case 'enqueue':
        for (const clientId of change.clients) {
          const queue = this.#outgoing.get(clientId) ?? [];
          this.#outgoing.set(clientId, queue);
          queue.push(queuedPacket(change.packet));
          this.#storedBytes += packetBytes(change.packet);
        }
        return;
      case 'update': {
        const queue = this.#outgoing.get(change.client);
        const index = this.#findForUpdate(change.client, change.packet);
        if (!queue || index === undefined) return;
        const queued = queue[index] as StoredPacket;
        if (queued.brokerId === change.packet.brokerId) queued.messageId = change.packet.messageId;
        else {
          this.#storedBytes += packetBytes(change.packet) - packetBytes(queued);
          queue[index] = { ...change.packet };
        }
        return;
      }
      case 'clear': {
        const queue = this.#outgoing.get(change.client);
        const index = queue?.findIndex((queued) => queued.messageId === change.messageId) ?? -1;
        if (!queue || index < 0) return;
        this.#storedBytes -= packetBytes(queue[index]);
        queue.splice(index, 1);
        if (queue.length === 0) this.#outgoing.delete(change.client);
        return;
      }
      case 'incoming_store': {
        const store = this.#incoming.get(change.client) ?? new Map<number, StoredPacket>();
        this.#incoming.set(change.client, store);
        const packet = queuedPacket(change.packet);
        packet.messageId = change.packet.messageId;
        this.#storedBytes += packetBytes(packet) - packetBytes(store.get(Number(packet.messageId)));
        store.set(Number(packet.messageId), packet);
        return;
      }
      case 'incoming_delete': {
        const store = this.#incoming.get(change.client);
        this.#storedBytes -= packetBytes(store?.get(change.messageId));
        store?.delete(change.messageId);
        if (store?.size === 0) this.#incoming.delete(change.client);
        return;
      }
      case 'incoming_clean': {
        for (const packet of this.#incoming.get(change.client)?.values() ?? []) this.#storedBytes -= packetBytes(packet);
        this.#incoming.delete(change.client);
        return;
      }
      case 'will_put':
        this.#storedBytes += packetBytes(change.packet) - packetBytes(this.#wills.get(change.client));
        this.#wills.set(change.client, { ...change.packet });
        return;
      case 'will_delete':
        this.#storedBytes -= packetBytes(this.#wills.get(change.client));
        this.#wills.delete(change.client);
        return;
    }
  }

  #subscribe(clientId: string, subs: Subscription[]): void {
    let stored = this.#sessions.get(clientId);
    if (!stored) {
      stored = new Map();
      this.#sessions.set(clientId, stored);
    }
    for (const sub of subs) {
      const { topic, ...record } = sub;
      if (!stored.has(topic)) this.#storedBytes += Buffer.byteLength(topic);
      this.#unindex(clientId, topic);
      if (sub.qos > 0) {
        const index = isWildcard(topic) ? this.#wildcard : this.#exact;
        const byClient = index.get(topic) ?? new Map<string, MatchedSubscription>();
        index.set(topic, byClient);
        byClient.set(clientId, { clientId, topic, qos: sub.qos, rh: sub.rh, rap: sub.rap, nl: sub.nl });
      }
      stored.set(topic, record);
    }
  }

  #unindex(clientId: string, topic: string): void {
    const index = isWildcard(topic) ? this.#wildcard : this.#exact;
    const byClient = index.get(topic);
    byClient?.delete(clientId);
    if (byClient?.size === 0) index.delete(topic);
  }

  /**
   * Which queued packet an update is for, as aedes-persistence decides it: the same message of this
   * broker (brokerId and brokerCounter) gets its new packet id; a packet with that id from another
   * broker run (a PUBREL replacing its PUBLISH) is replaced.
   */
  #findForUpdate(clientId: string, packet: StoredPacket): number | undefined {
    const queue = this.#outgoing.get(clientId) ?? [];
    for (const [index, queued] of queue.entries()) {
      if (queued.brokerId === packet.brokerId) {
        if (queued.brokerCounter === packet.brokerCounter) return index;
      } else if (queued.messageId === packet.messageId) return index;
    }
    return undefined;
  }

  #dropped(message: string, details: Record<string, unknown>): void {
    if (this.#counters) this.#counters.dropped++;
    this.#dropsUnlogged++;
    const now = this.#now();
    if (now - this.#lastDropLog < DROP_LOG_INTERVAL_MS) return;
    this.#log.warn({ ...details, drops: this.#dropsUnlogged, limits: this.#limits }, message);
    this.#dropsUnlogged = 0;
    this.#lastDropLog = now;
  }

  #clear(): void {
    for (const map of [this.#retained, this.#sessions, this.#exact, this.#wildcard, this.#outgoing, this.#incoming, this.#wills])
      map.clear();
    this.#storedBytes = 0;
  }

  #stateFile(): StateFile {
    return {
      retained: [...this.#retained.values()],
      sessions: [...this.#sessions].map(([clientId, stored]) => [clientId, [...stored].map(([topic, record]) => ({ topic, ...record }))]),
      outgoing: [...this.#outgoing],
      incoming: [...this.#incoming].map(([clientId, store]) => [clientId, [...store.values()]]),
      wills: [...this.#wills],
    };
  }

  /** Rebuilds the state from a snapshot, through the same changes the journal holds. */
  #restore(value: unknown): void {
    const state = value as Partial<StateFile> | null;
    expect(typeof state === 'object' && state !== null, 'the snapshot has no state');
    for (const value of list(state.retained, 'retained')) {
      const packet = checkPacket(value, 'a retained message');
      this.#apply({ op: 'retain', topic: String(packet.topic), packet });
    }
    for (const [client, subs] of pairs(state.sessions, 'sessions')) this.#apply(checkChange({ op: 'subscribe', client, subs }));
    for (const [client, packets] of pairs(state.outgoing, 'outgoing')) {
      // Queued packets are restored as they were (packet ids included): no update logic applies.
      const queue = list(packets, 'a session queue').map((packet) => ({ ...checkPacket(packet, 'a queued message') }));
      if (queue.length === 0) continue;
      this.#outgoing.set(client, queue);
      for (const packet of queue) this.#storedBytes += packetBytes(packet);
    }
    for (const [client, packets] of pairs(state.incoming, 'incoming'))
      for (const packet of list(packets, 'a QoS 2 store')) this.#apply(checkChange({ op: 'incoming_store', client, packet }));
    for (const [client, packet] of pairs(state.wills, 'wills')) this.#apply(checkChange({ op: 'will_put', client, packet }));
  }
}

/** Copies a packet as aedes-packet's constructor does (the shape aedes expects back from a queue). */
function queuedPacket(original: StoredPacket): StoredPacket {
  const packet: StoredPacket = {};
  for (const key of ['clientId', 'nl', 'properties', 'messageExpiry']) if (Object.hasOwn(original, key)) packet[key] = original[key];
  packet.cmd = original.cmd || 'publish';
  packet.brokerId = original.brokerId;
  packet.brokerCounter = original.brokerCounter || 0;
  packet.topic = original.topic;
  packet.payload = original.payload || Buffer.alloc(0);
  packet.qos = original.qos || 0;
  packet.retain = original.retain || false;
  packet.dup = original.dup || false;
  if (packet.qos > 0 || packet.cmd !== 'publish') packet.messageId = undefined;
  return packet;
}

function subscriptionOf(sub: Subscription): Subscription {
  const copy: Subscription = { topic: sub.topic, qos: sub.qos };
  if (sub.rh !== undefined) copy.rh = sub.rh;
  if (sub.rap !== undefined) copy.rap = sub.rap;
  if (sub.nl !== undefined) copy.nl = sub.nl;
  if (sub.subscriptionIdentifier !== undefined) copy.subscriptionIdentifier = sub.subscriptionIdentifier;
  return copy;
}

function payloadLength(packet: StoredPacket | undefined): number {
  const payload = packet?.payload;
  if (payload === undefined || payload === null) return 0;
  return typeof payload === 'string' ? Buffer.byteLength(payload) : payload.length;
}

/** What a packet costs in the store's byte budget. */
function packetBytes(packet: StoredPacket | undefined): number {
  if (packet === undefined) return 0;
  return (typeof packet.topic === 'string' ? Buffer.byteLength(packet.topic) : 0) + payloadLength(packet);
}

function isWildcard(filter: string): boolean {
  return filter.includes('+') || filter.includes('#');
}

/** MQTT matching, plus §4.7.2: a filter starting with a wildcard does not match a $ topic. */
function filterMatches(filter: string, topic: string): boolean {
  if (topic.startsWith('$') && (filter.startsWith('+') || filter.startsWith('#'))) return false;
  return topicMatches(filter, topic);
}

// Reading the state back: anything unexpected means the files are not ours or are damaged.

function expect(condition: boolean, problem: string): asserts condition {
  if (!condition) throw new JournalCorruptError(problem);
}

function list(value: unknown, what: string): unknown[] {
  expect(value === undefined || Array.isArray(value), `${what} is not a list`);
  return value ?? [];
}

function pairs(value: unknown, what: string): Array<[string, unknown]> {
  return list(value, what).map((pair) => {
    expect(Array.isArray(pair) && pair.length === 2 && typeof pair[0] === 'string', `an entry of ${what} is not a [client, value] pair`);
    return pair as [string, unknown];
  });
}

function checkPacket(value: unknown, what: string): StoredPacket {
  expect(typeof value === 'object' && value !== null && !Array.isArray(value), `${what} is not a packet`);
  const packet = value as StoredPacket;
  expect(packet.topic === undefined || typeof packet.topic === 'string', `${what} has a topic that is not text`);
  expect(
    packet.payload === undefined || typeof packet.payload === 'string' || Buffer.isBuffer(packet.payload),
    `${what} has a bad payload`,
  );
  return packet;
}

function checkChange(value: unknown): Change {
  expect(typeof value === 'object' && value !== null, 'a journal entry is not an object');
  const change = value as Record<string, unknown>;
  const client = () => expect(typeof change.client === 'string', `a ${String(change.op)} entry has no client`);
  switch (change.op) {
    case 'retain':
      expect(typeof change.topic === 'string', 'a retain entry has no topic');
      if (change.packet !== undefined) checkPacket(change.packet, 'a retained message');
      break;
    case 'subscribe':
      client();
      for (const sub of list(change.subs, 'subscriptions')) {
        const s = sub as Partial<Subscription> | null;
        expect(
          typeof s === 'object' && s !== null && typeof s.topic === 'string' && typeof s.qos === 'number',
          'a subscription is malformed',
        );
      }
      break;
    case 'unsubscribe':
      client();
      expect(
        list(change.topics, 'topics').every((topic) => typeof topic === 'string'),
        'an unsubscribe entry has a topic that is not text',
      );
      break;
    case 'enqueue':
      expect(
        list(change.clients, 'clients').every((id) => typeof id === 'string'),
        'an enqueue entry has a client that is not text',
      );
      checkPacket(change.packet, 'a queued message');
      break;
    case 'update':
    case 'incoming_store':
    case 'will_put':
      client();
      checkPacket(change.packet, `a ${change.op} packet`);
      break;
    case 'incoming_delete':
      client();
      expect(typeof change.messageId === 'number', 'an incoming_delete entry has no packet id');
      break;
    case 'clean_subscriptions':
    case 'clear':
    case 'incoming_clean':
    case 'will_delete':
      client();
      break;
    default:
      throw new JournalCorruptError(`unknown journal entry ${JSON.stringify(change.op)}`);
  }
  return change as Change;
}
