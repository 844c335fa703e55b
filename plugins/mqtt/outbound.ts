/**
 * Outbound MQTT and HomeAgent's own topics for others to drive it:
 *
 * - The output channel "mqtt" (text and structured, asynchronous). An answer goes to
 *   `<base>/agent/last_reply`, retained, as plain text (structured content as JSON): Home Assistant's
 *   "last reply" sensor reads it (discovery-payloads.ts). `meta.topic` sends elsewhere, only to a
 *   topic plugin.mqtt.publish_allow allows (`meta.retain` true keeps it there).
 * - The tool `mqtt_publish` {topic, payload, retain?, qos?} (tier act), for topics matching
 *   plugin.mqtt.publish_allow only.
 *   Neither may publish on HomeAgent's own command, state, attributes, status or notify topics:
 *   `<base>/lock.front_door/set` would open a critical entity without the owner's confirmation
 *   (entity_call_critical asks for it), a state would lie to Home Assistant and to other nodes.
 * - Command topics `<base>/<entity_id>/set` for the entities HomeAgent owns: a service name
 *   (`turn_on`, `toggle`, `lock`, `open`, `press`), ON / OFF, a number (the domain's value: number
 *   set_value, cover set_position, fan set_percentage, light brightness), or
 *   `{"service": "...", "data": {...}}`. Entities of the MQTT plugin itself (Zigbee2MQTT devices,
 *   remote nodes, mapped subscriptions) are refused: they have their own topics, and a command
 *   relayed back to MQTT could loop. Critical entities (locks, covers, ...) are allowed: a Home
 *   Assistant user expects to open the garage from Home Assistant, and whoever may publish on the
 *   broker is trusted as Home Assistant is; the broker's login is the protection. Every command is
 *   written as an audit record (`mqtt.command`) before it runs. Commands for one entity run in the
 *   order they came; a retained command is never run (a restart would replay it).
 * - `<base>/agent/notify` (Home Assistant's notify entity): the text becomes an input for the agent
 *   on channel "mqtt" at level 2 (a message: it pre-empts queued and background work, not a
 *   conversation); the answer comes back through the channel, so on last_reply.
 * A bad command or notify (unknown entity, unknown word, bad JSON, empty) is logged (throttled) and
 * counted as malformed; nothing a message does is thrown back into the connection.
 */
import {
  CAPABILITY,
  type EntityInfo,
  HomeAgentError,
  isHomeAgentError,
  type OutputEvent,
  type PluginContext,
  type PluginInput,
  ToolError,
  type ToolErrorReason,
} from '../../src/sdk/index.js';
import {
  INPUT_SOURCE,
  INPUT_TEXT_MAX_CHARS,
  type InboundClock,
  MQTT_SENDER,
  ThrottledWarnings,
  TopicRateLimiter,
} from './inbound-router.js';
import type { MqttSettings } from './settings-schema.js';
import { filterProblem, type TopicLayout, topicLayout, topicMatches, topicProblem } from './topics.js';
import type { MqttCounters, MqttLink, MqttMessage, Qos } from './types.js';

export const OUTPUT_CHANNEL = 'mqtt';
export const PUBLISH_TOOL = 'mqtt_publish';
/** The input channel of notify texts: answers go to the output channel of the same name. */
export const NOTIFY_CHANNEL = 'mqtt';
/** A notify is a message for the agent (level 2), like a chat message. */
export const NOTIFY_LEVEL = 2;
const MAX_TOPIC_CHARS = 256;

/** What outbound reads of plugin.mqtt.*. */
export type OutboundSettings = Pick<
  MqttSettings,
  'base_topic' | 'publish_allow' | 'publish_qos' | 'max_payload_bytes' | 'notify_rate_per_minute' | 'command_rate_per_minute'
>;

export interface OutboundOptions {
  link: MqttLink;
  ctx: Pick<PluginContext, 'name' | 'log' | 'audit' | 'io' | 'tools' | 'entities'>;
  settings: () => OutboundSettings;
  counters: MqttCounters;
  clock?: InboundClock;
}

/** A command for an entity as a command topic carries it. */
export interface EntityCommand {
  service: string;
  data: Record<string, unknown>;
}

interface PublishArgs {
  topic: string;
  payload: unknown;
  retain?: boolean;
  qos?: Qos;
}

export class Outbound {
  readonly #o: OutboundOptions;
  readonly #clock: InboundClock;
  readonly #limiter = new TopicRateLimiter();
  readonly #warnings: ThrottledWarnings;
  readonly #undo: Array<() => void> = [];
  /** The last command of each entity still running; the next one waits for it. */
  readonly #tails = new Map<string, Promise<void>>();
  #layout: TopicLayout | undefined;

  constructor(options: OutboundOptions) {
    this.#o = options;
    this.#clock = options.clock ?? { now: () => Date.now() };
    this.#warnings = new ThrottledWarnings(options.ctx.log, this.#clock);
  }

  async start(): Promise<void> {
    const settings = this.#o.settings();
    for (const [i, filter] of settings.publish_allow.entries()) {
      const problem = filterProblem(filter);
      if (problem !== undefined) {
        const key = `plugin.mqtt.publish_allow[${i}]`;
        throw new HomeAgentError('HA_ERR_CONFIG_INVALID', `${key}: ${problem} (got ${JSON.stringify(filter)})`, { details: { key } });
      }
    }
    const layout = topicLayout(settings.base_topic);
    this.#layout = layout;
    const { ctx, link } = this.#o;
    try {
      this.#undo.push(
        ctx.io.registerOutputChannel({
          name: OUTPUT_CHANNEL,
          description: `the MQTT broker: answers are published on ${layout.agentLastReply} (Home Assistant's "last reply" sensor); meta.topic publishes on another allowed topic`,
          capabilities: CAPABILITY.TEXT | CAPABILITY.STRUCTURED,
          synchronous: false,
          send: (event) => this.#send(event),
        }),
        ctx.tools.register<PublishArgs>(this.#publishTool(settings)),
        link.subscribe(layout.commandFilter, 1, (message) => this.#guard(message, () => this.#onCommand(message))),
        link.subscribe(layout.agentNotify, 1, (message) => this.#guard(message, () => this.#onNotify(message))),
      );
    } catch (error) {
      await this.stop();
      throw error;
    }
  }

  async stop(): Promise<void> {
    for (const undo of this.#undo.splice(0).reverse()) undo();
    await this.idle();
    this.#limiter.clear();
    this.#warnings.clear();
  }

  /** Resolves once the commands received so far have run. */
  async idle(): Promise<void> {
    while (this.#tails.size > 0) await Promise.allSettled([...this.#tails.values()]);
  }

  status(): { commands_running: number } {
    return { commands_running: this.#tails.size };
  }

  // ---- the output channel ----

  async #send(event: OutputEvent): Promise<void> {
    const layout = this.#running();
    const settings = this.#o.settings();
    const body = event.type === 'structured' || typeof event.payload !== 'string' ? (JSON.stringify(event.payload) ?? '') : event.payload;
    let topic = layout.agentLastReply;
    let retain = true;
    const wanted = event.meta.topic;
    if (wanted !== undefined) {
      const refusal =
        typeof wanted === 'string' ? publishRefusal(wanted, settings.publish_allow, layout) : { detail: 'meta.topic must be a string' };
      if (refusal !== undefined) {
        throw new HomeAgentError('HA_ERR_MQTT_TOPIC', refusal.hint === undefined ? refusal.detail : `${refusal.detail}; ${refusal.hint}`);
      }
      topic = wanted as string;
      retain = event.meta.retain === true;
    }
    const bytes = Buffer.byteLength(body);
    if (bytes > settings.max_payload_bytes) {
      throw new HomeAgentError(
        'HA_ERR_MQTT_PAYLOAD',
        `the message is ${bytes} bytes, plugin.mqtt.max_payload_bytes allows ${settings.max_payload_bytes}`,
      );
    }
    await this.#o.link.publish(topic, body, { retain });
  }

  // ---- mqtt_publish ----

  #publishTool(settings: OutboundSettings) {
    return {
      name: PUBLISH_TOOL,
      tier: 'act' as const,
      description:
        `Publishes a message on the home's MQTT broker, for devices and systems listening there. Allowed topics: ${settings.publish_allow.join(', ') || 'none'} (plugin.mqtt.publish_allow). ` +
        "To switch HomeAgent's own devices use entity_call instead.",
      parameters: {
        type: 'object',
        properties: {
          topic: {
            type: 'string',
            minLength: 1,
            maxLength: MAX_TOPIC_CHARS,
            description: 'The topic, without + or # (e.g. homeagent/notes/today).',
          },
          payload: {
            type: ['string', 'number', 'boolean', 'object', 'array'],
            description: 'A text is sent as it is; anything else as JSON.',
          },
          retain: {
            type: 'boolean',
            description: "Keep it on the broker as the topic's last value for later subscribers (default false).",
          },
          qos: {
            type: 'integer',
            enum: [0, 1, 2],
            description: `Delivery guarantee: 0 at most once, 1 at least once, 2 exactly once (default ${settings.publish_qos}).`,
          },
        },
        required: ['topic', 'payload'],
        additionalProperties: false,
      },
      execute: (args: PublishArgs) => this.#publish(args),
    };
  }

  async #publish(args: PublishArgs): Promise<Record<string, unknown>> {
    const layout = this.#running();
    const settings = this.#o.settings();
    const refusal = publishRefusal(args.topic, settings.publish_allow, layout);
    if (refusal !== undefined) {
      throw new ToolError({
        reason: refusal.reason ?? 'format',
        field: 'topic',
        detail: refusal.detail,
        ...(refusal.hint === undefined ? {} : { hint: refusal.hint }),
      });
    }
    const body = typeof args.payload === 'string' ? args.payload : (JSON.stringify(args.payload) ?? '');
    const bytes = Buffer.byteLength(body);
    if (bytes > settings.max_payload_bytes) {
      throw new ToolError({
        reason: 'range',
        field: 'payload',
        detail: `the payload is ${bytes} bytes, at most ${settings.max_payload_bytes} are allowed (plugin.mqtt.max_payload_bytes)`,
        hint: 'send less, or where to find it',
      });
    }
    const qos = args.qos ?? settings.publish_qos;
    const retain = args.retain === true;
    const connected = this.#o.link.connected;
    if (!connected && qos === 0) {
      throw new ToolError({
        reason: 'unavailable',
        detail: 'not connected to the MQTT broker: a QoS 0 message would be lost',
        hint: 'try again later, or publish with qos 1 to have it delivered when the broker is back',
      });
    }
    this.#o.ctx.audit('mqtt.publish', { topic: args.topic, bytes, qos, retain });
    try {
      await this.#o.link.publish(args.topic, body, { qos, retain });
    } catch (error) {
      throw new ToolError({ reason: 'failed', detail: `publishing failed: ${error instanceof Error ? error.message : String(error)}` });
    }
    return { ok: true, topic: args.topic, bytes, qos, retain, delivery: connected ? 'sent' : 'queued until the broker is back' };
  }

  // ---- command topics and notify ----

  #guard(message: MqttMessage, handle: () => void): void {
    try {
      handle();
    } catch (error) {
      // A bug here must not reach the connection's dispatch loop, which serves every other feature.
      this.#bad(message.topic, `handling failed: ${error instanceof Error ? error.message : String(error)}`);
    }
  }

  /** Checks common to commands and notify texts; the payload text, or undefined when the message is dropped. */
  #accept(message: MqttMessage, what: string, perMinute: number): string | undefined {
    const { topic, payload } = message;
    if (message.retain) {
      // Not malformed: a retained message is what the broker keeps, not what someone just sent.
      this.#warnings.warn(`retained\u0000${topic}`, { topic }, `retained ${what} on ${topic} ignored: only live messages are acted on`);
      return undefined;
    }
    const max = this.#o.settings().max_payload_bytes;
    if (payload.length > max) {
      this.#o.counters.oversized++;
      this.#warnings.warn(
        `oversized\u0000${topic}`,
        { topic, bytes: payload.length },
        `${what} on ${topic} dropped: over plugin.mqtt.max_payload_bytes`,
      );
      return undefined;
    }
    if (!this.#limiter.take(topic, perMinute, this.#clock.now())) {
      this.#o.counters.rate_limited++;
      this.#warnings.warn(`rate\u0000${topic}`, { topic }, `more than ${perMinute} ${what}s a minute on ${topic}: the surplus is dropped`);
      return undefined;
    }
    return payload.toString('utf8').trim();
  }

  #onCommand(message: MqttMessage): void {
    const { topic } = message;
    const entityId = this.#running().entityOfCommand(topic);
    if (entityId === undefined) {
      this.#bad(topic, 'not a command topic: <base>/<domain>.<object_id>/set');
      return;
    }
    const text = this.#accept(message, 'command', this.#o.settings().command_rate_per_minute);
    if (text === undefined) return;
    const previous = this.#tails.get(entityId) ?? Promise.resolve();
    const next = previous
      .then(() => this.#command(entityId, topic, text))
      .catch((error: unknown) => this.#bad(topic, `handling failed: ${error instanceof Error ? error.message : String(error)}`));
    this.#tails.set(entityId, next);
    void next.finally(() => {
      if (this.#tails.get(entityId) === next) this.#tails.delete(entityId);
    });
  }

  async #command(entityId: string, topic: string, text: string): Promise<void> {
    const { ctx } = this.#o;
    let entity: EntityInfo;
    try {
      entity = await ctx.entities.get(entityId);
    } catch {
      this.#bad(topic, `no entity ${entityId}`);
      return;
    }
    // get() also resolves names; a command topic names the id itself.
    if (entity.entity_id !== entityId) {
      this.#bad(topic, `no entity ${entityId}`);
      return;
    }
    if (entity.owner === `plugin:${ctx.name}`) {
      this.#bad(
        topic,
        `${entityId} is the MQTT plugin's own entity (a hub device, a remote node or a subscription): command it on its own topics`,
      );
      return;
    }
    const command = parseCommand(entity, text);
    if ('problem' in command) {
      this.#bad(topic, command.problem);
      return;
    }
    ctx.audit('mqtt.command', { entity_id: entityId, service: command.service, data: command.data, topic, critical: entity.critical });
    try {
      await ctx.entities.call(entityId, command.service, command.data);
    } catch (error) {
      const reason = error instanceof Error ? error.message : String(error);
      // Bad data is the sender's mistake; a device failing to act is not a malformed message.
      if (isHomeAgentError(error, 'HA_ERR_ENTITY_SERVICE')) this.#bad(topic, reason);
      else this.#warnings.warn(`failed\u0000${entityId}`, { topic, entity_id: entityId }, `MQTT command for ${entityId} failed: ${reason}`);
    }
  }

  #onNotify(message: MqttMessage): void {
    const text = this.#accept(message, 'notify text', this.#o.settings().notify_rate_per_minute);
    if (text === undefined) return;
    if (text === '') {
      this.#bad(message.topic, 'the notify text is empty');
      return;
    }
    const input: PluginInput = {
      source: INPUT_SOURCE,
      channel: NOTIFY_CHANNEL,
      sender: MQTT_SENDER,
      type: 'text',
      payload: text.length <= INPUT_TEXT_MAX_CHARS ? text : `${text.slice(0, INPUT_TEXT_MAX_CHARS - 1)}…`,
      meta: { topic: message.topic, retained: false },
    };
    this.#o.ctx.io.injectInterrupt(input, NOTIFY_LEVEL).then(
      (receipt) => {
        if (receipt.status === 'failed')
          this.#o.ctx.log.warn({ input_id: receipt.input_id, error: receipt.error }, 'MQTT notify input failed');
      },
      (error: unknown) => this.#warnings.warn('notify-failed', { err: error }, 'MQTT notify text was not taken'),
    );
  }

  #bad(topic: string, problem: string): void {
    this.#o.counters.malformed++;
    this.#warnings.warn(`malformed\u0000${topic}`, { topic }, `MQTT message on ${topic} ignored: ${problem}`);
  }

  #running(): TopicLayout {
    if (this.#layout === undefined) throw new HomeAgentError('HA_ERR_MQTT_UNAVAILABLE', 'MQTT outbound is not running');
    return this.#layout;
  }
}

/**
 * Why a topic may not be published to by the tool or the channel, or undefined: an invalid topic
 * (reason format), one of HomeAgent's own topics, or one no publish_allow filter matches (unauthorized).
 */
export function publishRefusal(
  topic: string,
  allow: readonly string[],
  layout: TopicLayout,
): { reason?: ToolErrorReason; detail: string; hint?: string } | undefined {
  const problem = topicProblem(topic);
  if (problem !== undefined) return { reason: 'format', detail: `${problem} (got ${JSON.stringify(topic)})` };
  const own = [
    layout.status,
    layout.commandFilter,
    layout.state('+'),
    layout.attributes('+'),
    layout.availability('+'),
    layout.agentNotify,
    layout.agentLastReply,
  ];
  if (own.some((filter) => topicMatches(filter, topic))) {
    return {
      reason: 'unauthorized',
      detail: `${topic} is one of HomeAgent's own topics (status, states, availability, commands, notify, last reply)`,
      hint: "switch HomeAgent's devices with entity_call; answers reach MQTT by themselves",
    };
  }
  if (!allow.some((filter) => filterProblem(filter) === undefined && topicMatches(filter, topic))) {
    return {
      reason: 'unauthorized',
      detail: `publishing on ${topic} is not allowed`,
      hint:
        allow.length === 0
          ? 'no topic is allowed (plugin.mqtt.publish_allow is empty)'
          : `allowed topics: ${allow.join(', ')} (plugin.mqtt.publish_allow)`,
    };
  }
  return undefined;
}

/**
 * What a command topic's payload asks of an entity: `{"service": "...", "data": {...}}`, a number
 * (the domain's value service), ON / OFF (turn_on / turn_off), or one of the entity's service names,
 * case-insensitive (`LOCK`, `open`, `press`, `toggle`). The registry checks the data afterwards.
 */
export function parseCommand(
  entity: Pick<EntityInfo, 'entity_id' | 'domain' | 'services'>,
  text: string,
): EntityCommand | { problem: string } {
  const trimmed = text.trim();
  if (trimmed === '') return { problem: 'the command is empty' };
  if (trimmed.startsWith('{')) return jsonCommand(trimmed);
  if (/^[+-]?(?:\d+\.?\d*|\.\d+)$/.test(trimmed)) return numberCommand(entity, Number(trimmed));
  const word = trimmed.toLowerCase();
  const service = word === 'on' ? 'turn_on' : word === 'off' ? 'turn_off' : word;
  if (entity.services.includes(service)) return { service, data: {} };
  const words = entity.services.flatMap((s) => (s === 'turn_on' ? ['ON', s] : s === 'turn_off' ? ['OFF', s] : [s]));
  const offered = words.length === 0 ? 'it takes no commands (it only reports)' : `send one of ${words.join(', ')}`;
  return {
    problem: `${JSON.stringify(cut(trimmed))} is not a command for ${entity.entity_id}: ${offered}, or {"service": ..., "data": {...}}`,
  };
}

function jsonCommand(text: string): EntityCommand | { problem: string } {
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    return { problem: `${JSON.stringify(cut(text))} is not valid JSON` };
  }
  const command = parsed as { service?: unknown; data?: unknown };
  if (typeof command !== 'object' || command === null || typeof command.service !== 'string') {
    return { problem: 'a JSON command is {"service": "<name>", "data": {...}}' };
  }
  const extra = Object.keys(command).find((key) => key !== 'service' && key !== 'data');
  if (extra !== undefined) return { problem: `a JSON command has only service and data, not ${extra}` };
  const data = command.data ?? {};
  if (typeof data !== 'object' || data === null || Array.isArray(data)) return { problem: 'data must be an object' };
  return { service: command.service, data: data as Record<string, unknown> };
}

/** A bare number sets the value a domain has one of. */
function numberCommand(entity: Pick<EntityInfo, 'entity_id' | 'domain' | 'services'>, value: number): EntityCommand | { problem: string } {
  const forms: Record<string, [string, string]> = {
    number: ['set_value', 'value'],
    cover: ['set_position', 'position'],
    fan: ['set_percentage', 'percentage'],
    light: ['turn_on', 'brightness'],
    climate: ['set_temperature', 'temperature'],
    media_player: ['volume_set', 'volume_level'],
  };
  const form = forms[entity.domain];
  if (form === undefined || !entity.services.includes(form[0])) return { problem: `${entity.entity_id} takes no number` };
  return { service: form[0], data: { [form[1]]: value } };
}

function cut(text: string): string {
  return text.length <= 60 ? text : `${text.slice(0, 59)}…`;
}
