/**
 * `homeagentctl mqtt status | publish TOPIC PAYLOAD [--qos N] [--retain] | credentials [--reset devices]`:
 * the MQTT connection of a running daemon (the `mqtt.*` control methods of the mqtt plugin).
 * `publish` is the owner's own hand on the broker: any valid topic (plugin.mqtt.publish_allow
 * limits the agent, not the owner), audited by the daemon. A QoS 0 message dropped because the
 * broker is away exits 1. `credentials` shows the embedded broker's login for devices (Home
 * Assistant, Zigbee2MQTT, ...) and how they connect; `--reset devices` replaces a leaked password.
 */

import type { MqttCredentials, MqttPublishResult, MqttStatus } from '../api/mqtt.js';
import { EXIT_CODES } from '../shared/exit-codes.js';
import { type CommandRunOptions, withDaemon } from './command-client.js';
import { defineCommand } from './command-module.js';

/** homeagentctl's option table entries for mqtt (merged into its parseArgs options). */
export const MQTT_OPTIONS = {
  qos: { type: 'string' },
  retain: { type: 'boolean' },
  reset: { type: 'string' },
} as const;

export type MqttFlags = { qos?: string | undefined; retain?: boolean | undefined; reset?: string | undefined };

export type MqttCommand =
  | { command: 'status' }
  | { command: 'publish'; topic: string; payload: string; qos?: 0 | 1 | 2; retain: boolean }
  | { command: 'credentials'; reset?: 'devices' };

export class MqttUsageError extends Error {}

/** `homeagentctl mqtt` for the command catalogue (src/cli/commands.ts): its flags, help and parser. */
export const mqttCommand = defineCommand<MqttFlags>({
  name: 'mqtt',
  options: MQTT_OPTIONS,
  usage: [
    { synopsis: 'mqtt [status]', about: 'the MQTT connection: broker, since when, last error, outbox, message counters' },
    { synopsis: 'mqtt publish TOPIC PAYLOAD [--qos 0|1|2] [--retain]', about: 'publish a message (any valid topic; audited)' },
    {
      synopsis: 'mqtt credentials [--reset devices]',
      about: "the embedded broker's login for Home Assistant, Zigbee2MQTT and other devices (or a new password)",
    },
  ],
  parse: (args, flags) => {
    const command = parseMqttCommand(args, flags);
    return (context) => runMqtt(command, context);
  },
});

const COMMANDS = 'status, publish or credentials';
/** Which sub-command each flag belongs to. */
const FLAG_OWNER: Record<keyof MqttFlags, string> = { qos: 'publish', retain: 'publish', reset: 'credentials' };

/** The mqtt flags given on the command line (the parser refuses those its subcommand does not take). */
export function mqttFlagsUsed(flags: MqttFlags): Array<keyof MqttFlags> {
  return (Object.keys(MQTT_OPTIONS) as Array<keyof MqttFlags>).filter((k) => flags[k] !== undefined);
}

/** Reads `mqtt <sub> …` (positionals after `mqtt`); no sub-command means status. Throws MqttUsageError. */
export function parseMqttCommand(positionals: readonly string[], flags: MqttFlags): MqttCommand {
  const [sub = 'status', ...rest] = positionals;
  const stray = mqttFlagsUsed(flags).find((flag) => FLAG_OWNER[flag] !== sub);
  if (stray !== undefined && ['status', 'publish', 'credentials'].includes(sub)) {
    throw new MqttUsageError(`--${stray} belongs to mqtt ${FLAG_OWNER[stray]}, not mqtt ${sub}`);
  }
  switch (sub) {
    case 'status': {
      if (rest.length > 0) throw new MqttUsageError('mqtt status takes no arguments');
      return { command: 'status' };
    }
    case 'credentials': {
      if (rest.length > 0) throw new MqttUsageError('mqtt credentials takes no arguments (--reset devices makes a new password)');
      if (flags.reset === undefined) return { command: 'credentials' };
      if (flags.reset !== 'devices') throw new MqttUsageError(`--reset must be devices, not ${JSON.stringify(flags.reset)}`);
      return { command: 'credentials', reset: 'devices' };
    }
    case 'publish': {
      if (rest.length !== 2) {
        throw new MqttUsageError(
          'mqtt publish needs a TOPIC and a PAYLOAD (quote it; "" for an empty one, which clears a retained message)',
        );
      }
      const [topic = '', payload = ''] = rest;
      if (topic.trim() === '') throw new MqttUsageError('mqtt publish: the TOPIC is empty');
      const command: MqttCommand = { command: 'publish', topic, payload, retain: flags.retain === true };
      if (flags.qos !== undefined) command.qos = qos(flags.qos);
      return command;
    }
    default:
      throw new MqttUsageError(`unknown mqtt command ${sub}; use ${COMMANDS}`);
  }
}

function qos(text: string): 0 | 1 | 2 {
  if (text === '0') return 0;
  if (text === '1') return 1;
  if (text === '2') return 2;
  throw new MqttUsageError(`--qos must be 0, 1 or 2, not ${JSON.stringify(text)}`);
}

/** Runs a parsed mqtt command; resolves with the exit code. Daemon errors are thrown (homeagentctl reports them). */
export async function runMqtt(command: MqttCommand, options: CommandRunOptions): Promise<number> {
  return withDaemon(options, { plugin: 'mqtt' }, async ({ call, print }) => {
    if (command.command === 'status') return print((await call('mqtt.status', {})) as MqttStatus, formatMqttStatus);
    if (command.command === 'credentials') {
      const params = command.reset === undefined ? {} : { reset: command.reset };
      return print((await call('mqtt.credentials', params)) as MqttCredentials, formatMqttCredentials);
    }
    const params: Record<string, unknown> = { topic: command.topic, payload: command.payload, retain: command.retain };
    if (command.qos !== undefined) params.qos = command.qos;
    const answer = (await call('mqtt.publish', params)) as MqttPublishResult;
    print(answer, formatMqttPublish);
    return answer.delivery === 'dropped' ? EXIT_CODES.FAILURE : EXIT_CODES.OK;
  });
}

// ---- readable output ----

/** The devices' login, and where Home Assistant and Zigbee2MQTT put it. */
export function formatMqttCredentials(a: MqttCredentials): string {
  const everywhere = a.host === '0.0.0.0' || a.host === '::';
  const loopback = a.host === 'localhost' || a.host.startsWith('127.') || a.host === '::1';
  const host = everywhere ? "<this machine's address>" : a.host;
  const where = everywhere
    ? 'every address of this machine'
    : loopback
      ? 'this machine only; devices elsewhere need plugin.mqtt.broker_host, e.g. 0.0.0.0'
      : 'this address';
  const shown = host.includes(':') ? `[${host}]` : host;
  const tls = a.tls_port !== null;
  const server = tls ? `mqtts://${shown}:${a.tls_port}` : `mqtt://${shown}:${a.port}`;
  const port = tls ? a.tls_port : a.port;
  return [
    ...(a.disconnected === undefined
      ? []
      : [`new password made for ${a.username}; the old one no longer works (${a.disconnected} client(s) using it were disconnected)`]),
    `embedded broker: ${server} (${tls ? 'TLS, ' : ''}${where})`,
    ...(tls ? [`plain MQTT:      mqtt://127.0.0.1:${a.port} (this machine only)`] : []),
    `user name: ${a.username}`,
    `password:  ${a.password}`,
    ...(a.extra_username === null
      ? []
      : [`also:      ${a.extra_username} (plugin.mqtt.broker_username; its password is in the configuration)`]),
    ...(a.anonymous_allowed ? ['WARNING:   clients without a login are let in too (plugin.mqtt.broker_allow_anonymous)'] : []),
    `Home Assistant: Settings > Devices & services > Add integration > MQTT: broker ${host}, port ${port}, this user name and password${tls ? ', advanced options: TLS with the CA of the broker certificate' : ''}`,
    `Zigbee2MQTT (configuration.yaml): mqtt: { server: "${server}", user: ${a.username}, password: "${a.password}"${tls ? ', ca: <the CA file>' : ''} }`,
    `kept in ${a.file} (mode 0600), made ${a.created_at}${a.updated_at === a.created_at ? '' : `, changed ${a.updated_at}`}`,
  ].join('\n');
}

export function formatMqttPublish(a: MqttPublishResult): string {
  const what = `QoS ${a.qos}${a.retain ? ', retained' : ''}, ${a.bytes} byte(s)`;
  switch (a.delivery) {
    case 'sent':
      return `published to ${a.topic} (${what})`;
    case 'queued':
      return `kept for ${a.topic} (${what}): the broker is not connected; it is sent when the broker is back`;
    case 'dropped':
      return `dropped ${a.topic} (${what}): the broker is not connected and QoS 0 messages are not kept (use --qos 1)`;
  }
}

/** A few lines: the link, then the numbers. */
export function formatMqttStatus(s: MqttStatus): string {
  if (s.state === 'off') return 'MQTT off: no broker configured (set plugin.mqtt.url, or plugin.mqtt.broker_enabled, and restart)';
  const lines: string[] = [];
  if (s.connected) {
    const session = s.session_present === true ? ', session resumed' : '';
    lines.push(`connected to ${s.url} as ${s.client_id}${s.since === null ? '' : ` since ${s.since}`}${session}`);
  } else {
    const next = s.next_attempt_in_ms === null ? '' : `; next attempt in ${Math.ceil(s.next_attempt_in_ms / 1000)} s`;
    lines.push(`NOT connected to ${s.url} (${s.state}${s.since === null ? '' : ` since ${s.since}`})${next}`);
    lines.push(`  ${s.failed_attempts} failed attempt(s)${s.last_error === null ? '' : `; last error: ${s.last_error}`}`);
  }
  lines.push(`node ${s.node_id}, topics under ${s.base_topic}/, ${s.reconnects} reconnect(s)`);
  if (s.outbox !== null) {
    const problem = s.outbox.problem === null ? '' : `; NOT DURABLE: ${s.outbox.problem}`;
    const dropped = s.outbox.dropped > 0 ? `, ${s.outbox.dropped} dropped (full)` : '';
    lines.push(`outbox: ${s.outbox.messages} waiting (max ${s.outbox.max})${dropped}${problem}`);
  }
  const c = s.counters;
  const shown = ['received', 'published', 'duplicates', 'oversized', 'malformed', 'rate_limited', 'dropped'] as const;
  const counts = shown.map((key) => `${key.replace('_', ' ')} ${c[key]}`).join(', ');
  lines.push(`messages: ${counts}`);
  lines.push(`subscriptions: ${s.subscriptions.length === 0 ? 'none' : s.subscriptions.join(', ')}`);
  lines.push(`features: ${s.features.length === 0 ? 'none' : s.features.map((f) => f.name).join(', ')}`);
  if (s.broker !== null && typeof s.broker === 'object') {
    const b = s.broker as { url?: unknown; clients?: unknown; login?: unknown };
    const login = b.login === 'anonymous allowed' ? ', ANONYMOUS CLIENTS ALLOWED' : b.login === 'required' ? ', login required' : '';
    lines.push(`embedded broker: ${String(b.url ?? 'running')}${typeof b.clients === 'number' ? `, ${b.clients} client(s)` : ''}${login}`);
  }
  return lines.join('\n');
}
