/**
 * The one MQTT connection of HomeAgent (the only code that drives mqtt.js's client), offered to the
 * features as a {@link MqttLink}.
 *
 * What it adds to mqtt.js, and why:
 * - its own reconnect loop with jittered exponential backoff (backoff.ts): mqtt.js only retries at a
 *   fixed period. The attempt count resets once a connection stayed up for one keep-alive period
 *   (plugin.mqtt.keepalive_s): by then the broker accepted us and a ping round passed, so it was
 *   not a connect-then-drop flap.
 * - a persistent session (clean: false, fixed client id) and a persistent outgoing store
 *   (outbox-store.ts): QoS 1/2 messages published while the broker is away, or in flight when the
 *   daemon stopped, are delivered after the next connection. What survives what:
 *     · mqtt.js puts a QoS 1/2 publish made while disconnected straight into the outgoing store
 *       (client.js _storePacket), and one made while connected into the store before writing it
 *       (_storeAndSend): both are on disk (outbox journal) before `publish` resolves;
 *     · at each CONNACK mqtt.js re-sends everything in the store, one message at a time, before it
 *       emits 'connect' (and only then sends anything new);
 *     · a publish made during that re-send waits in mqtt.js's memory queue; if the connection
 *       breaks first, mqtt.js fails it with "Connection closed" and we publish it again (now it
 *       goes to the store). Its promise resolves only once it is stored;
 *     · QoS 0 is never stored: dropped (and counted) while disconnected.
 *   Message ids come from OutboxMessageIds so a new message never takes a stored message's id.
 * - availability: a will "offline" (retained, QoS 1) on <base>/status and a retained "online"
 *   published after every connection; "offline" published by `stop()` (a clean DISCONNECT makes the
 *   broker discard the will).
 * - a subscription table renewed after every connection, also when the broker kept the session
 *   (cheap, and a broker may have lost part of it); unsubscribes made while disconnected are sent
 *   after the next connection.
 * - inbound: payloads over plugin.mqtt.max_payload_bytes are dropped and counted, QoS 1
 *   re-deliveries are recognised (duplicate-filter.ts) and counted, every other message goes to
 *   the handlers whose filter matches (a throwing handler is logged and does not stop the others).
 */
import mqtt, { type IPublishPacket, type MqttClient, type Packet } from 'mqtt';
import type { ConnectionState } from '../../src/sdk/api.js';
import { HomeAgentError, type Logger, ReconnectBackoff } from '../../src/sdk/index.js';
import {
  type ConnectionSettings,
  checkBrokerUrl,
  clientOptions,
  describeConnectionError,
  readTlsFiles,
  redactUrl,
  usesTls,
} from './connection-options.js';
import { DuplicateFilter } from './duplicate-filter.js';
import { OutboxMessageIds } from './outbox-message-ids.js';
import { type OutboxStats, OutboxStore } from './outbox-store.js';
import { compileFilter, filterProblem, topicLayout, topicProblem } from './topics.js';
import type { MessageHandler, MqttCounters, MqttLink, MqttMessage, PublishOptions, Qos } from './types.js';

export type { ConnectionState };

/**
 * MQTT 3.1.1 packet ids are 16 bit and every stored message keeps its own, so the outbox holds at
 * most this many messages whatever plugin.mqtt.outbox_max_messages says (the rest of the id space
 * stays free for new publishes and subscriptions).
 */
export const OUTBOX_HARD_LIMIT = 60_000;
/** How long stop() waits for the broker to acknowledge "offline" and the DISCONNECT to finish. */
const STOP_WAIT_MS = 2000;
/** The same warning (an oversized payload, a failing handler, a refused login) at most this often. */
const WARN_INTERVAL_MS = 60_000;
/** A publish that mqtt.js hands back unstored (its connection closed first) is tried this often before failing. */
const STORE_ATTEMPTS = 3;

export interface TimerHandle {
  cancel(): void;
}

/** Time for the reconnect loop; tests drive it by hand. */
export interface ConnectionTimers {
  now(): number;
  setTimer(fn: () => void, ms: number): TimerHandle;
}

export const systemConnectionTimers: ConnectionTimers = {
  now: () => Date.now(),
  setTimer: (fn, ms) => {
    const timer = setTimeout(fn, ms);
    return { cancel: () => clearTimeout(timer) };
  },
};

export interface MqttConnectionOptions {
  /** Read at start and whenever a limit is applied (reconnect bounds, payload limit, QoS, outbox bound). */
  settings: () => ConnectionSettings;
  /** The outbox journal's directory (`<plugin data>/outbox`). */
  outboxDir: string;
  log: Logger;
  counters: MqttCounters;
  timers?: ConnectionTimers;
  /** [0, 1) for the backoff's jitter. */
  random?: () => number;
}

export interface ConnectionStatus {
  state: ConnectionState;
  connected: boolean;
  /** The broker URL without its password. */
  url: string;
  client_id: string;
  /** When the connection came up or went down (ISO time), null before the first attempt. */
  since: string | null;
  /** The broker kept our session at the last connection. */
  session_present: boolean | null;
  /** Successful connections after the first. */
  reconnects: number;
  /** Failed attempts since the last connection that stayed up. */
  failed_attempts: number;
  /** When disconnected: milliseconds until the next attempt. */
  next_attempt_in_ms: number | null;
  /** The last connection error, in words (null once connected). */
  last_error: string | null;
  subscriptions: string[];
  outbox: OutboxStats & { max: number };
}

interface Subscription {
  handler: MessageHandler;
}

interface FilterEntry {
  qos: Qos;
  matches: (topic: string) => boolean;
  subscriptions: Set<Subscription>;
}

export class MqttConnection implements MqttLink {
  readonly #options: MqttConnectionOptions;
  readonly #timers: ConnectionTimers;
  readonly #backoff: ReconnectBackoff;
  readonly #duplicates: DuplicateFilter;
  readonly #filters = new Map<string, FilterEntry>();
  /** Filters given up while disconnected: the broker's session still has them. */
  readonly #unsubscribeLater = new Set<string>();
  readonly #connectListeners = new Set<(info: { session_present: boolean }) => void>();
  readonly #warned = new Map<string, { at: number; suppressed: number }>();
  #client: MqttClient | undefined;
  #store: OutboxStore | undefined;
  #statusTopic = '';
  #url = '';
  #clientId = '';
  #state: ConnectionState = 'idle';
  #since: number | undefined;
  #sessionPresent: boolean | undefined;
  #lastError: string | undefined;
  #everConnected = false;
  #stopping = false;
  #retry: TimerHandle | undefined;
  #retryAt: number | undefined;
  #stable: TimerHandle | undefined;

  constructor(options: MqttConnectionOptions) {
    this.#options = options;
    this.#timers = options.timers ?? systemConnectionTimers;
    this.#duplicates = new DuplicateFilter(() => this.#timers.now());
    this.#backoff = new ReconnectBackoff(() => {
      const s = this.#options.settings();
      return { min_ms: s.reconnect_min_ms, max_ms: s.reconnect_max_ms };
    }, options.random);
  }

  /**
   * Opens the outbox and starts connecting; resolves without waiting for the broker (an absent
   * broker is retried, not a failure). Throws HA_ERR_MQTT_UNAVAILABLE for configuration that can
   * never work: a bad URL, an unreadable TLS file.
   */
  async start(): Promise<void> {
    if (this.#client !== undefined) return;
    const settings = this.#options.settings();
    const url = checkBrokerUrl(settings.url);
    const tls = readTlsFiles(settings);
    if (!usesTls(url) && (tls.ca !== undefined || tls.cert !== undefined)) {
      this.#options.log.warn(`plugin.mqtt.url ${redactUrl(settings.url)} is not mqtts:// or wss://: the TLS files are not used`);
    }
    if (settings.outbox_max_messages > OUTBOX_HARD_LIMIT) {
      this.#options.log.warn(
        `plugin.mqtt.outbox_max_messages is above ${OUTBOX_HARD_LIMIT} (MQTT's 16-bit message ids): ${OUTBOX_HARD_LIMIT} apply`,
      );
    }
    const store = new OutboxStore({
      dir: this.#options.outboxDir,
      maxMessages: () => this.#outboxMax(),
      log: this.#options.log,
      onDrop: (packet) => this.#onOutboxDrop(packet),
    }).open();
    this.#store = store;
    if (store.size > 0) {
      this.#options.log.info(
        { messages: store.size },
        `MQTT outbox: ${store.size} message(s) from before are sent once the broker is connected`,
      );
    }
    this.#statusTopic = topicLayout(settings.base_topic).status;
    this.#url = redactUrl(settings.url);
    this.#clientId = settings.client_id;
    this.#stopping = false;
    let client: MqttClient;
    try {
      client = mqtt.connect(
        url.toString(),
        clientOptions(settings, {
          willTopic: this.#statusTopic,
          outgoingStore: store,
          messageIdProvider: new OutboxMessageIds((id) => store.has(id)),
          tls,
        }),
      );
    } catch (error) {
      store.close();
      this.#store = undefined;
      throw new HomeAgentError('HA_ERR_MQTT_UNAVAILABLE', `MQTT client for ${this.#url}: ${(error as Error).message}`, { cause: error });
    }
    client.on('packetreceive', this.#onPacket);
    client.on('connect', this.#onConnect);
    client.on('close', this.#onClose);
    client.on('error', this.#onError);
    client.on('message', this.#onMessage);
    this.#client = client;
    this.#setState('connecting');
    client.connect();
  }

  /** Publishes "offline", disconnects cleanly when it can, and closes the outbox (what is in it stays for the next start). */
  async stop(): Promise<void> {
    const client = this.#client;
    if (client === undefined) return;
    this.#stopping = true;
    this.#retry?.cancel();
    this.#retry = undefined;
    this.#retryAt = undefined;
    this.#stable?.cancel();
    this.#stable = undefined;
    if (client.connected) {
      await within(
        STOP_WAIT_MS,
        new Promise<void>((resolve) => client.publish(this.#statusTopic, 'offline', { qos: 1, retain: true }, () => resolve())),
      );
    }
    // end(false) would wait for every unacknowledged message; those stay in the outbox for the next start instead.
    const force = !client.connected || Object.keys(client.outgoing).length > 0;
    const ended = await within(STOP_WAIT_MS, new Promise<void>((resolve) => client.end(force, {}, () => resolve())));
    if (!ended) client.stream?.destroy();
    // Only ours: mqtt.js's own listeners still have to clear its timers when the socket closes.
    client.off('packetreceive', this.#onPacket);
    client.off('connect', this.#onConnect);
    client.off('close', this.#onClose);
    client.off('message', this.#onMessage);
    client.off('error', this.#onError);
    // Swallow what a destroyed socket may still report.
    client.on('error', () => {});
    this.#store?.close();
    this.#client = undefined;
    this.#store = undefined;
    this.#setState('stopped');
  }

  // ---- MqttLink ----

  get connected(): boolean {
    return this.#client?.connected === true && !this.#stopping;
  }

  async publish(topic: string, payload: string | Buffer, options: PublishOptions = {}): Promise<void> {
    const problem = topicProblem(topic);
    if (problem !== undefined) throw new HomeAgentError('HA_ERR_MQTT_TOPIC', `cannot publish to ${JSON.stringify(topic)}: ${problem}`);
    const settings = this.#options.settings();
    const bytes = typeof payload === 'string' ? Buffer.byteLength(payload) : payload.length;
    if (bytes > settings.max_payload_bytes) {
      throw new HomeAgentError(
        'HA_ERR_MQTT_PAYLOAD',
        `the payload for ${topic} has ${bytes} bytes, more than plugin.mqtt.max_payload_bytes (${settings.max_payload_bytes})`,
      );
    }
    const client = this.#client;
    if (client === undefined || this.#stopping) throw new HomeAgentError('HA_ERR_MQTT_UNAVAILABLE', 'the MQTT connection is not running');
    const qos = options.qos ?? settings.publish_qos;
    const retain = options.retain ?? false;
    if (qos === 0 && !client.connected) {
      this.#options.counters.dropped++;
      return;
    }
    await this.#send(client, topic, payload, qos, retain, 1);
  }

  subscribe(filter: string, qos: Qos, handler: MessageHandler): () => void {
    const problem = filterProblem(filter);
    if (problem !== undefined) throw new HomeAgentError('HA_ERR_MQTT_TOPIC', `cannot subscribe to ${JSON.stringify(filter)}: ${problem}`);
    let entry = this.#filters.get(filter);
    let renew = false;
    if (entry === undefined) {
      entry = { qos, matches: compileFilter(filter), subscriptions: new Set() };
      this.#filters.set(filter, entry);
      this.#unsubscribeLater.delete(filter);
      renew = true;
    } else if (qos > entry.qos) {
      entry.qos = qos;
      renew = true;
    }
    const subscription: Subscription = { handler };
    entry.subscriptions.add(subscription);
    const client = this.#client;
    if (renew && client?.connected === true) client.subscribe(filter, { qos: entry.qos }, (error) => this.#onSubscribed([filter], error));
    const owner = entry;
    return () => {
      if (!owner.subscriptions.delete(subscription) || owner.subscriptions.size > 0) return;
      if (this.#filters.get(filter) !== owner) return;
      this.#filters.delete(filter);
      const current = this.#client;
      if (current?.connected === true) current.unsubscribe(filter);
      else this.#unsubscribeLater.add(filter);
    };
  }

  onConnect(listener: (info: { session_present: boolean }) => void): () => void {
    this.#connectListeners.add(listener);
    return () => void this.#connectListeners.delete(listener);
  }

  // ---- status ----

  status(): ConnectionStatus {
    const now = this.#timers.now();
    const stats = this.#store?.stats() ?? { messages: 0, loaded: 0, skipped_lines: 0, dropped: 0, problem: null };
    return {
      state: this.#state,
      connected: this.connected,
      url: this.#url,
      client_id: this.#clientId,
      since: this.#since === undefined ? null : new Date(this.#since).toISOString(),
      session_present: this.#sessionPresent ?? null,
      reconnects: this.#options.counters.reconnects,
      failed_attempts: this.#backoff.attempts,
      next_attempt_in_ms: this.#retryAt === undefined ? null : Math.max(0, this.#retryAt - now),
      last_error: this.#lastError ?? null,
      subscriptions: [...this.#filters.keys()],
      outbox: { ...stats, max: this.#outboxMax() },
    };
  }

  // ---- connection life ----

  /**
   * The CONNACK: the link is up from here. mqtt.js re-sends the outbox first and emits 'connect'
   * only after the last of it was acknowledged, which can take a while; the broker's re-deliveries
   * arrive meanwhile, so the duplicate filter must learn about the new connection now.
   */
  readonly #onPacket = (packet: Packet): void => {
    if (packet.cmd !== 'connack' || (packet.returnCode ?? packet.reasonCode ?? 0) !== 0 || this.#stopping) return;
    const present = packet.sessionPresent === true;
    this.#sessionPresent = present;
    this.#duplicates.connected(present);
    if (this.#everConnected) this.#options.counters.reconnects++;
    this.#everConnected = true;
    this.#lastError = undefined;
    this.#setState('connected');
    this.#stable?.cancel();
    this.#stable = this.#timers.setTimer(() => {
      this.#stable = undefined;
      this.#backoff.reset();
    }, this.#options.settings().keepalive_s * 1000);
    this.#options.log.info(
      { url: this.#url, client_id: this.#clientId, session_present: present },
      `MQTT connected to ${this.#url} as ${this.#clientId}`,
    );
  };

  /** mqtt.js's 'connect': the outbox is re-sent, new packets go out now. */
  readonly #onConnect = (): void => {
    const client = this.#client;
    if (client === undefined || this.#stopping) return;
    client.publish(this.#statusTopic, 'online', { qos: 1, retain: true });
    if (this.#unsubscribeLater.size > 0) {
      client.unsubscribe([...this.#unsubscribeLater]);
      this.#unsubscribeLater.clear();
    }
    const filters = [...this.#filters];
    if (filters.length === 0) {
      this.#announceConnected();
      return;
    }
    const table = Object.fromEntries(filters.map(([filter, entry]) => [filter, { qos: entry.qos }]));
    client.subscribe(table, (error) => {
      this.#onSubscribed(
        filters.map(([filter]) => filter),
        error,
      );
      this.#announceConnected();
    });
  };

  #announceConnected(): void {
    if (!this.connected) return;
    const info = { session_present: this.#sessionPresent ?? false };
    for (const listener of [...this.#connectListeners]) {
      try {
        listener(info);
      } catch (error) {
        this.#options.log.error({ err: error }, 'an MQTT connect listener failed');
      }
    }
  }

  #onSubscribed(filters: string[], error: Error | null | undefined): void {
    if (error === null || error === undefined) return;
    this.#warn(
      `subscribe:${filters.join(',')}`,
      { filters, err: error },
      `the broker refused the subscription to ${filters.join(', ')}: ${error.message}`,
    );
  }

  readonly #onClose = (): void => {
    this.#stable?.cancel();
    this.#stable = undefined;
    if (this.#stopping || this.#client === undefined) return;
    if (this.#state === 'connected') {
      this.#options.log.warn({ url: this.#url }, `MQTT connection to ${this.#url} lost; reconnecting`);
    }
    if (this.#state !== 'disconnected') this.#setState('disconnected');
    if (this.#retry !== undefined) return;
    const delay = this.#backoff.next();
    this.#retryAt = this.#timers.now() + delay;
    this.#retry = this.#timers.setTimer(() => this.#reconnect(), delay);
  };

  #reconnect(): void {
    this.#retry = undefined;
    this.#retryAt = undefined;
    const client = this.#client;
    if (client === undefined || this.#stopping || client.connected) return;
    this.#setState('connecting');
    // The stores are given again: reconnect() without them would swap in fresh in-memory ones.
    client.reconnect({ incomingStore: client.incomingStore, outgoingStore: client.outgoingStore });
  }

  readonly #onError = (error: Error & { code?: string | number }): void => {
    if (this.#stopping) return;
    const text = describeConnectionError(error);
    this.#lastError = text;
    this.#warn(`error:${text}`, { url: this.#url, attempt: this.#backoff.attempts + 1 }, `MQTT ${this.#url}: ${text}`);
  };

  #setState(state: ConnectionState): void {
    // `since` is when the link came up or went down; attempts in between do not move it.
    const wasUp = this.#state === 'connected';
    const isUp = state === 'connected';
    if (this.#since === undefined || wasUp !== isUp) this.#since = this.#timers.now();
    this.#state = state;
  }

  // ---- messages ----

  #send(client: MqttClient, topic: string, payload: string | Buffer, qos: Qos, retain: boolean, attempt: number): Promise<void> {
    const counters = this.#options.counters;
    return new Promise<void>((resolve, reject) => {
      let settled = false;
      const unstored = (error: Error) => {
        if (!this.#stopping && attempt < STORE_ATTEMPTS) {
          this.#send(client, topic, payload, qos, retain, attempt + 1).then(resolve, reject);
          return;
        }
        reject(
          new HomeAgentError('HA_ERR_MQTT_UNAVAILABLE', `the message to ${topic} could not be kept for sending: ${error.message}`, {
            cause: error,
          }),
        );
      };
      // mqtt.js calls it once the message is in the outbox, or with an error when it never got there.
      const stored = (error?: unknown) => {
        if (settled) return;
        settled = true;
        if (error instanceof Error) unstored(error);
        else resolve();
      };
      client.publish(topic, payload, { qos, retain, cbStorePut: stored }, (error) => {
        if (error === undefined || error === null) {
          counters.published++;
          if (!settled) {
            settled = true;
            resolve();
          }
          return;
        }
        if (!settled) {
          settled = true;
          if (qos === 0) {
            counters.dropped++;
            resolve();
          } else unstored(error);
          return;
        }
        // After it was stored: only the outbox bound removes it ("Message removed", counted there).
        if (!/Message removed/.test(error.message)) this.#options.log.debug({ topic, err: error }, 'an MQTT publish ended with an error');
      });
    });
  }

  readonly #onMessage = (topic: string, payload: Buffer, packet: IPublishPacket): void => {
    const counters = this.#options.counters;
    counters.received++;
    const max = this.#options.settings().max_payload_bytes;
    if (payload.length > max) {
      counters.oversized++;
      this.#warn(
        `oversized:${topic}`,
        { topic, bytes: payload.length, max },
        `MQTT message on ${topic} dropped: ${payload.length} bytes, more than plugin.mqtt.max_payload_bytes (${max})`,
      );
      return;
    }
    if (
      packet.qos === 1 &&
      packet.messageId !== undefined &&
      this.#duplicates.isDuplicate(packet.messageId, topic, payload, packet.dup === true)
    ) {
      counters.duplicates++;
      this.#options.log.debug({ topic, message_id: packet.messageId }, 'MQTT re-delivery recognised and dropped');
      return;
    }
    const message: MqttMessage = { topic, payload, qos: packet.qos as Qos, retain: packet.retain === true };
    for (const [filter, entry] of this.#filters) {
      if (!entry.matches(topic)) continue;
      for (const subscription of entry.subscriptions) this.#deliver(subscription, filter, message);
    }
  };

  #deliver(subscription: Subscription, filter: string, message: MqttMessage): void {
    try {
      const result: unknown = subscription.handler(message);
      // A handler is typed to return nothing; an async one must still not leave a rejection unhandled.
      if (result instanceof Promise) result.catch((error: unknown) => this.#handlerFailed(filter, message, error));
    } catch (error) {
      this.#handlerFailed(filter, message, error);
    }
  }

  #handlerFailed(filter: string, message: MqttMessage, error: unknown): void {
    this.#warn(
      `handler:${filter}`,
      { filter, topic: message.topic, err: error },
      `an MQTT handler for ${filter} failed on ${message.topic}`,
    );
  }

  // ---- outbox ----

  #outboxMax(): number {
    return Math.min(this.#options.settings().outbox_max_messages, OUTBOX_HARD_LIMIT);
  }

  #onOutboxDrop(packet: Packet): void {
    this.#options.counters.dropped++;
    const topic = (packet as IPublishPacket).topic;
    this.#warn(
      'outbox-full',
      { topic },
      `the MQTT outbox is full (plugin.mqtt.outbox_max_messages): the oldest waiting message (${topic}) was dropped`,
    );
    const id = packet.messageId;
    // Not from inside the store's put: mqtt.js must not be re-entered while it is storing.
    if (id !== undefined) queueMicrotask(() => this.#client?.removeOutgoingMessage(id));
  }

  /** A warning at most once per WARN_INTERVAL_MS per key, saying how many were held back meanwhile. */
  #warn(key: string, fields: Record<string, unknown>, message: string): void {
    const now = this.#timers.now();
    const last = this.#warned.get(key);
    if (last !== undefined && now - last.at < WARN_INTERVAL_MS) {
      last.suppressed++;
      return;
    }
    const suppressed = last?.suppressed ?? 0;
    this.#warned.set(key, { at: now, suppressed: 0 });
    if (this.#warned.size > 256) this.#warned.delete(this.#warned.keys().next().value as string);
    this.#options.log.warn(
      suppressed > 0 ? { ...fields, suppressed } : fields,
      suppressed > 0 ? `${message} (and ${suppressed} more like it)` : message,
    );
  }
}

/** Resolves true when `promise` settled within `ms`, false otherwise (it is not cancelled). */
function within(ms: number, promise: Promise<unknown>): Promise<boolean> {
  return new Promise((resolve) => {
    const timer = setTimeout(() => resolve(false), ms);
    promise.then(
      () => {
        clearTimeout(timer);
        resolve(true);
      },
      () => {
        clearTimeout(timer);
        resolve(true);
      },
    );
  });
}
