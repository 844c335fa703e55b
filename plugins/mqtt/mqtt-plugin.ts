/**
 * The MQTT plugin: one broker connection (mqtt-connection.ts) shared by feature modules, each a
 * small class with start()/stop() that gets the connection as a {@link MqttLink}.
 *
 * Start order: settings read → MQTT off (no plugin.mqtt.url and no embedded broker: the plugin
 * stays idle and healthy, and says so) → the embedded broker when plugin.mqtt.broker_enabled (it
 * must listen before our own client connects to it) → the connection (it does not wait for the
 * broker: an absent broker is retried with backoff and reported by health, not a start failure)
 * → the feature modules in MQTT_FEATURES order → control methods `mqtt.status`, `mqtt.publish` and
 * `mqtt.credentials` (the embedded broker's login for devices). stop() undoes it in reverse.
 * With the embedded broker and no plugin.mqtt.url, HomeAgent's own client logs in to it with its
 * generated login (embedded-broker-service.ts): the only one that may publish on HomeAgent's topics.
 */
import { join } from 'node:path';
import { Type } from '@sinclair/typebox';
import type { MqttPublishResult, MqttStatus } from '../../src/sdk/api.js';
import {
  type Caller,
  HOMEAGENT_VERSION,
  HomeAgentError,
  isHomeAgentError,
  type PluginContext,
  type PluginFactory,
  type PluginHealth,
  type PluginInstance,
  slugify,
} from '../../src/sdk/index.js';
import type { ConnectionSettings } from './connection-options.js';
import type { MqttCredentials } from './embedded-broker-service.js';
import { HaDiscovery } from './ha-discovery.js';
import { InboundRouter } from './inbound-router.js';
// mqtt.js and aedes load only when MQTT is configured: most homes start without it, and they
// cost start-up time and memory on a Pi.
import type { ConnectionTimers, MqttConnection } from './mqtt-connection.js';
import { Outbound } from './outbound.js';
import { RemoteNodes } from './remote-nodes.js';
import type { MqttSettings } from './settings-schema.js';
import { StatePublisher } from './state-publisher.js';
import { type TopicLayout, topicLayout, topicProblem } from './topics.js';
import { emptyCounters, type MqttCounters, type MqttLink, type Qos } from './types.js';
import { Zigbee2MqttBridge } from './zigbee2mqtt-bridge.js';
import { Zigbee2MqttManagement } from './zigbee2mqtt-management.js';

export type { MqttPublishResult, MqttSettings, MqttStatus };

export const MQTT_OFF_DETAIL = 'MQTT off: no broker configured (plugin.mqtt.url)';
export const MQTT_OFF_DETAIL_ZH = 'MQTT 已关闭：没有配置 broker（plugin.mqtt.url）';
/** The outbox journal's folder below the plugin's data folder. */
export const OUTBOX_DIR = 'outbox';
/** The embedded broker's state below the plugin's data folder. */
export const BROKER_DIR = 'broker';
const NODE_ID_FALLBACK = 'homeagent';
/** core.name's default, for a daemon whose core settings cannot be read here. */
const NODE_NAME_FALLBACK = 'HomeAgent';
const MAX_PUBLISH_PAYLOAD_CHARS = 16 * 1024 * 1024;

/**
 * plugin.mqtt.* as features see it: node_id and base_topic resolved (never empty), and core.name
 * as node_name (the device name in Home Assistant).
 */
export type MqttFeatureSettings = MqttSettings & { node_name: string };

/** What every feature module is given (the same objects for all of them). */
export interface MqttFeatureContext {
  link: MqttLink;
  ctx: PluginContext;
  /** The current settings (refreshed when a setting changes). */
  settings: () => MqttFeatureSettings;
  counters: MqttCounters;
  /** plugin.mqtt.node_id, or one made from core.name: this HomeAgent's id on MQTT (Home Assistant node id). */
  nodeId: string;
  /** HomeAgent's own topics under the resolved base topic. */
  layout: TopicLayout;
}

/** A running feature module. */
export interface MqttFeature {
  /** A start that throws must leave nothing behind (the plugin stops only the modules that started). */
  start(): Promise<void>;
  /** Undoes start: handlers unsubscribed, entities, channels and tools removed. */
  stop(): Promise<void>;
  /** Shown by `mqtt.status` under its name. */
  status?(): unknown;
}

export interface MqttFeatureFactory {
  name: string;
  /** The module for these settings, or undefined when its setting turns it off. */
  create(context: MqttFeatureContext): MqttFeature | undefined;
}

/**
 * ─── LEAD: the feature modules, in start order (stopped in reverse). ───
 * Each entry builds one module from the shared context; return undefined when its setting is off.
 *   - inbound router (inbound-router.ts, plugin.mqtt.subscriptions)
 *   - outbound: state publisher and command topics (state-publisher.ts), the "mqtt" output channel
 *     and the mqtt_publish tool (plugin.mqtt.publish_allow)
 *   - Home Assistant discovery (ha-discovery.ts, plugin.mqtt.discovery)
 *   - Zigbee2MQTT (zigbee2mqtt-bridge.ts, plugin.mqtt.zigbee2mqtt)
 *   - remote nodes (remote-nodes.ts, plugin.mqtt.remote_nodes)
 * The embedded broker is not a feature: it must run before the connection (see MqttPlugin.start).
 */
export const MQTT_FEATURES: readonly MqttFeatureFactory[] = [
  { name: 'inbound', create: (f) => new InboundRouter(f) },
  { name: 'outbound', create: (f) => new Outbound(f) },
  {
    name: 'states',
    create: (f) => new StatePublisher({ ...f, minIntervalMs: f.settings().state_min_interval_ms }),
  },
  // Discovery and remote nodes follow their on/off settings themselves (switching discovery off
  // removes this node's configs from Home Assistant), so they always run.
  {
    name: 'discovery',
    create: (f) =>
      new HaDiscovery({
        ...f,
        // docs/mqtt.md promises the version as the device's firmware and in the origin block.
        version: HOMEAGENT_VERSION,
        removalGraceMs: f.settings().discovery_removal_grace_ms,
        staleGraceMs: f.settings().discovery_stale_grace_ms,
      }),
  },
  { name: 'remote_nodes', create: (f) => new RemoteNodes(f) },
  { name: 'zigbee2mqtt', create: (f) => (f.settings().zigbee2mqtt ? new Zigbee2MqttFeature(f) : undefined) },
];

/**
 * Zigbee2MQTT: the bridge (devices as entities, diagnostics) and its management (permit join,
 * rename, remove, groups: control methods and agent tools), which reads the bridge's device list.
 */
export class Zigbee2MqttFeature implements MqttFeature {
  readonly bridge: Zigbee2MqttBridge;
  readonly management: Zigbee2MqttManagement;

  constructor(f: MqttFeatureContext) {
    this.bridge = new Zigbee2MqttBridge({ ...f, confirmTimeoutMs: f.settings().zigbee2mqtt_confirm_ms });
    this.management = new Zigbee2MqttManagement({ link: f.link, ctx: f.ctx, settings: f.settings, bridge: this.bridge });
  }

  async start(): Promise<void> {
    await this.bridge.start();
    try {
      await this.management.start();
    } catch (error) {
      await this.management.stop();
      await this.bridge.stop();
      throw error;
    }
  }

  async stop(): Promise<void> {
    await this.management.stop();
    await this.bridge.stop();
  }

  status(): unknown {
    return { ...this.bridge.status(), permit_join: this.management.permitJoinState() };
  }
}

/** The embedded broker as the plugin drives it. */
export interface BrokerHandle {
  /** Listens; answers its address and the login HomeAgent's own client uses there. */
  start(): Promise<{ url: string; username: string; password: string }>;
  stop(): Promise<void>;
  status?(): unknown;
  /** Something health should say while it runs (anonymous access allowed), or undefined. */
  warning?(): { en: string; zh: string } | undefined;
  /** `mqtt.credentials`: the login for devices (owner callers only). */
  credentials?(params: { reset?: 'devices' }, caller: Caller): Promise<MqttCredentials>;
}

/** What the embedded broker is built from. */
export interface BrokerSetup {
  settings: MqttSettings;
  ctx: PluginContext;
  counters: MqttCounters;
  /** HomeAgent's own client id, base topic and node id, resolved. */
  ownClientId: string;
  baseTopic: string;
  nodeId: string;
}

export interface MqttPluginOptions {
  /** Feature modules (default MQTT_FEATURES). */
  features?: readonly MqttFeatureFactory[];
  /** Builds the embedded broker (default EmbeddedBrokerService). */
  broker?: (setup: BrokerSetup) => BrokerHandle | Promise<BrokerHandle>;
  /** The connection's reconnect timers and jitter (tests). */
  timers?: ConnectionTimers;
  random?: () => number;
}

export class MqttPlugin implements PluginInstance {
  readonly #ctx: PluginContext<MqttSettings>;
  readonly #options: MqttPluginOptions;
  readonly #counters: MqttCounters = emptyCounters();
  readonly #undo: Array<() => void> = [];
  readonly #features: Array<{ name: string; feature: MqttFeature }> = [];
  #settings: MqttSettings | undefined;
  #featureSettings: MqttFeatureSettings | undefined;
  #connectionSettings: ConnectionSettings | undefined;
  #connection: MqttConnection | undefined;
  #broker: BrokerHandle | undefined;
  #nodeId = '';
  #nodeName = NODE_NAME_FALLBACK;
  #baseTopic = '';
  #off = false;
  #running = false;

  constructor(ctx: PluginContext<MqttSettings>, options: MqttPluginOptions = {}) {
    this.#ctx = ctx;
    this.#options = options;
  }

  async start(signal: AbortSignal): Promise<void> {
    const ctx = this.#ctx;
    this.#settings = readSettings(ctx);
    this.#undo.push(
      ctx.settings.onChange(() => {
        this.#settings = readSettings(ctx);
        this.#featureSettings = this.#resolved(this.#settings);
        if (this.#connectionSettings !== undefined)
          this.#connectionSettings = { ...this.#connectionSettings, ...liveConnectionSettings(this.#settings) };
      }),
    );
    try {
      this.#registerMethods();
      const settings = this.#settings;
      if (settings.url.trim() === '' && !settings.broker_enabled) {
        this.#off = true;
        this.#running = true;
        ctx.log.info(`${MQTT_OFF_DETAIL}; set it (or plugin.mqtt.broker_enabled) and restart to use MQTT`);
        return;
      }
      const coreName = await this.#coreName();
      this.#nodeName = coreName ?? NODE_NAME_FALLBACK;
      this.#nodeId = settings.node_id !== '' ? settings.node_id : nodeIdFrom(coreName ?? '');
      this.#baseTopic = settings.base_topic.trim() === '' ? `homeagent/${this.#nodeId}` : settings.base_topic.trim();
      this.#featureSettings = this.#resolved(settings);
      signal.throwIfAborted();
      const clientId = settings.client_id.trim() === '' ? `homeagent-${this.#nodeId}` : settings.client_id.trim();
      let url = settings.url.trim();
      let username = settings.username;
      let password = settings.password;
      if (settings.broker_enabled) {
        const setup: BrokerSetup = {
          settings,
          ctx,
          counters: this.#counters,
          ownClientId: clientId,
          baseTopic: this.#baseTopic,
          nodeId: this.#nodeId,
        };
        const broker = await (this.#options.broker ?? defaultBroker)(setup);
        this.#broker = broker;
        const started = await broker.start();
        signal.throwIfAborted();
        if (url === '') ({ url, username, password } = started);
      }
      this.#connectionSettings = {
        ...liveConnectionSettings(settings),
        url,
        username,
        password,
        client_id: clientId,
        ca_file: settings.ca_file,
        cert_file: settings.cert_file,
        key_file: settings.key_file,
        reject_unauthorized: settings.reject_unauthorized,
        base_topic: this.#baseTopic,
        keepalive_s: settings.keepalive_s,
        connect_timeout_ms: settings.connect_timeout_ms,
      };
      const { MqttConnection } = await import('./mqtt-connection.js');
      const connection = new MqttConnection({
        settings: () => this.#connectionSettings as ConnectionSettings,
        outboxDir: join(ctx.paths.data, OUTBOX_DIR),
        log: ctx.log,
        counters: this.#counters,
        ...(this.#options.timers ? { timers: this.#options.timers } : {}),
        ...(this.#options.random ? { random: this.#options.random } : {}),
      });
      this.#connection = connection;
      await connection.start();
      const featureContext: MqttFeatureContext = {
        link: connection,
        ctx,
        settings: () => this.#featureSettings as MqttFeatureSettings,
        counters: this.#counters,
        nodeId: this.#nodeId,
        layout: topicLayout(this.#baseTopic),
      };
      for (const factory of this.#options.features ?? MQTT_FEATURES) {
        signal.throwIfAborted();
        const feature = factory.create(featureContext);
        if (feature === undefined) continue;
        await feature.start();
        this.#features.push({ name: factory.name, feature });
      }
      this.#running = true;
    } catch (error) {
      await this.stop();
      throw error;
    }
  }

  async stop(): Promise<void> {
    this.#running = false;
    for (const undo of this.#undo.splice(0).reverse()) undo();
    for (const { name, feature } of this.#features.splice(0).reverse()) {
      try {
        await feature.stop();
      } catch (error) {
        this.#ctx.log.error({ err: error, feature: name }, `MQTT feature ${name} did not stop cleanly`);
      }
    }
    await this.#connection?.stop();
    this.#connection = undefined;
    const broker = this.#broker;
    this.#broker = undefined;
    await broker?.stop();
    this.#connectionSettings = undefined;
    this.#featureSettings = undefined;
    this.#off = false;
  }

  health(): Required<PluginHealth> {
    const health = this.#health();
    const warning = this.#broker?.warning?.();
    return warning === undefined
      ? health
      : { ...health, detail: `${health.detail}; WARNING: ${warning.en}`, detail_zh: `${health.detail_zh}；警告：${warning.zh}` };
  }

  #health(): Required<PluginHealth> {
    const notRunning = { ok: false, detail: 'MQTT is not running', detail_zh: 'MQTT 没有运行' };
    if (!this.#running) return notRunning;
    if (this.#off) return { ok: true, detail: MQTT_OFF_DETAIL, detail_zh: MQTT_OFF_DETAIL_ZH };
    const status = this.#connection?.status();
    if (status === undefined) return notRunning;
    const outboxProblem = status.outbox.problem;
    if (status.connected) {
      // The outbox's problem is the store's own text (a disk error).
      if (outboxProblem !== null) return { ok: false, detail: outboxProblem, detail_zh: `发件箱出错：${outboxProblem}` };
      return {
        ok: true,
        detail: `connected to ${status.url} as ${status.client_id}`,
        detail_zh: `已连接 ${status.url}，客户端 id ${status.client_id}`,
      };
    }
    const nextS = status.next_attempt_in_ms === null ? undefined : Math.ceil(status.next_attempt_in_ms / 1000);
    const why = status.last_error ?? 'connecting';
    const next = nextS === undefined ? '' : `; next attempt in ${nextS} s`;
    const kept = status.outbox.messages > 0 ? `; ${status.outbox.messages} message(s) kept for later` : '';
    const whyZh = status.last_error ?? '正在连接';
    const nextZh = nextS === undefined ? '' : `；${nextS} s 后再试`;
    const keptZh = status.outbox.messages > 0 ? `；${status.outbox.messages} 条消息留待稍后发送` : '';
    return {
      ok: false,
      detail: `not connected to ${status.url}: ${why}${next} (${status.failed_attempts} failed attempt(s))${kept}`,
      detail_zh: `未连接 ${status.url}：${whyZh}${nextZh}（已失败 ${status.failed_attempts} 次）${keptZh}`,
    };
  }

  status(): MqttStatus {
    const connection = this.#connection?.status();
    return {
      state: this.#off ? 'off' : (connection?.state ?? 'stopped'),
      connected: connection?.connected ?? false,
      url: connection?.url ?? '',
      client_id: connection?.client_id ?? '',
      node_id: this.#nodeId,
      base_topic: this.#baseTopic,
      since: connection?.since ?? null,
      session_present: connection?.session_present ?? null,
      reconnects: this.#counters.reconnects,
      failed_attempts: connection?.failed_attempts ?? 0,
      next_attempt_in_ms: connection?.next_attempt_in_ms ?? null,
      last_error: connection?.last_error ?? null,
      subscriptions: connection?.subscriptions ?? [],
      outbox: connection?.outbox ?? null,
      counters: { ...this.#counters },
      broker: this.#broker === undefined ? null : (this.#broker.status?.() ?? { running: true }),
      features: this.#features.map(({ name, feature }) => ({ name, status: feature.status?.() ?? null })),
    };
  }

  /**
   * `mqtt.publish`: the owner's own hand on the broker (homeagentctl), so plugin.mqtt.publish_allow
   * does not apply; owner callers only (it reaches HomeAgent's command topics too); audited.
   */
  async publish(params: { topic: string; payload: string; qos?: Qos; retain?: boolean }, caller: Caller): Promise<MqttPublishResult> {
    const connection = this.#connection;
    if (this.#off || connection === undefined) {
      throw new HomeAgentError(
        'HA_ERR_MQTT_UNAVAILABLE',
        this.#off ? `${MQTT_OFF_DETAIL}: set it (or plugin.mqtt.broker_enabled) and restart` : 'MQTT is not running',
      );
    }
    const problem = topicProblem(params.topic);
    if (problem !== undefined)
      throw new HomeAgentError('HA_ERR_MQTT_TOPIC', `cannot publish to ${JSON.stringify(params.topic)}: ${problem}`);
    const qos = params.qos ?? (this.#settings as MqttSettings).publish_qos;
    const retain = params.retain ?? false;
    const bytes = Buffer.byteLength(params.payload);
    const delivery: MqttPublishResult['delivery'] = connection.connected ? 'sent' : qos === 0 ? 'dropped' : 'queued';
    this.#ctx.audit('mqtt.publish', { topic: params.topic, qos, retain, bytes, actor: caller.actor });
    await connection.publish(params.topic, params.payload, { qos, retain });
    return { topic: params.topic, qos, retain, bytes, delivery };
  }

  /** `mqtt.credentials`: the embedded broker's login for devices, for the owner. */
  async credentials(params: { reset?: 'devices' }, caller: Caller): Promise<MqttCredentials> {
    const broker = this.#broker;
    if (broker?.credentials === undefined) {
      throw new HomeAgentError(
        'HA_ERR_MQTT_UNAVAILABLE',
        'the embedded MQTT broker is off: set plugin.mqtt.broker_enabled and restart (with another broker, its own logins apply)',
      );
    }
    return broker.credentials(params, caller);
  }

  /** core.name (the node's friendly name; the node id when plugin.mqtt.node_id is empty), through the kernel's config.get. */
  async #coreName(): Promise<string | undefined> {
    try {
      const answer = (await this.#ctx.control.call('config.get', { key: 'core.name' }, { actor: `plugin:${this.#ctx.name}` })) as {
        value?: unknown;
      };
      if (typeof answer?.value === 'string' && answer.value.trim() !== '') return answer.value.trim();
    } catch (error) {
      this.#ctx.log.debug({ err: error }, 'core.name is not readable here; the MQTT node id falls back to "homeagent"');
    }
    return undefined;
  }

  #resolved(settings: MqttSettings): MqttFeatureSettings {
    return { ...settings, node_id: this.#nodeId, base_topic: this.#baseTopic, node_name: this.#nodeName };
  }

  #registerMethods(): void {
    const control = this.#ctx.control;
    try {
      this.#undo.push(
        control.register({
          name: 'mqtt.status',
          description:
            'The MQTT connection (broker, client id, since when, reconnects, last error), counters, the outbox and the feature modules.',
          params: Type.Object({}, { additionalProperties: false }),
          handler: (): MqttStatus => this.status(),
        }),
      );
      this.#undo.push(
        control.register({
          name: 'mqtt.publish',
          description:
            'Publishes a message (any valid topic: plugin.mqtt.publish_allow limits the agent, not the owner); answers the owner only; audited.',
          // It reaches HomeAgent's own command topics, past every confirmation.
          owner_only: true,
          params: Type.Object(
            {
              topic: Type.String({ minLength: 1, maxLength: 65535 }),
              payload: Type.String({ maxLength: MAX_PUBLISH_PAYLOAD_CHARS }),
              qos: Type.Optional(Type.Union([Type.Literal(0), Type.Literal(1), Type.Literal(2)])),
              retain: Type.Optional(Type.Boolean()),
            },
            { additionalProperties: false },
          ),
          handler: (params, caller) => this.publish(params, caller),
        }),
        control.register({
          name: 'mqtt.credentials',
          description:
            "The embedded broker's login for devices (Home Assistant, Zigbee2MQTT, ...); reset: 'devices' makes a new password and disconnects the clients using the old one (answers the owner only).",
          owner_only: true,
          params: Type.Object({ reset: Type.Optional(Type.Literal('devices')) }, { additionalProperties: false }),
          handler: (params, caller) => this.credentials(params, caller),
        }),
      );
    } catch (error) {
      // MQTT works without them; only `homeagentctl mqtt` is missing.
      if (!isHomeAgentError(error, 'HA_ERR_UNAVAILABLE')) throw error;
      this.#ctx.log.warn({ err: error }, 'MQTT control methods are not available in this daemon: `homeagentctl mqtt` will not answer');
    }
  }
}

/** The settings a running connection follows at once (the others need a restart, as the schema says). */
function liveConnectionSettings(
  settings: MqttSettings,
): Pick<ConnectionSettings, 'reconnect_min_ms' | 'reconnect_max_ms' | 'publish_qos' | 'max_payload_bytes' | 'outbox_max_messages'> {
  return {
    reconnect_min_ms: settings.reconnect_min_ms,
    reconnect_max_ms: settings.reconnect_max_ms,
    publish_qos: settings.publish_qos,
    max_payload_bytes: settings.max_payload_bytes,
    outbox_max_messages: settings.outbox_max_messages,
  };
}

export function readSettings(ctx: PluginContext<MqttSettings>): MqttSettings {
  return ctx.settings.values();
}

/** A node id (Home Assistant: [a-z0-9_]) from a friendly name: "Living room" → "living_room". */
export function nodeIdFrom(name: string): string {
  return slugify(name) || NODE_ID_FALLBACK;
}

async function defaultBroker(setup: BrokerSetup): Promise<BrokerHandle> {
  const { EmbeddedBrokerService } = await import('./embedded-broker-service.js');
  const { ctx } = setup;
  return new EmbeddedBrokerService({
    settings: setup.settings,
    ownClientId: setup.ownClientId,
    baseTopic: setup.baseTopic,
    nodeId: setup.nodeId,
    dataDir: ctx.paths.data,
    brokerDir: join(ctx.paths.data, BROKER_DIR),
    log: ctx.log,
    audit: (action, details) => ctx.audit(action, details),
    counters: setup.counters,
  });
}

export function createMqttPlugin(options: MqttPluginOptions = {}): PluginFactory<MqttSettings> {
  return (ctx) => new MqttPlugin(ctx, options);
}
