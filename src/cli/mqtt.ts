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
import type { Language } from '../shared/language.js';
import { cliLanguage } from './cli-language.js';
import { runLanguage, stateWord } from './cli-words.js';
import { type CommandRunOptions, withDaemon } from './command-client.js';
import { CommandUsageError, defineCommand } from './command-module.js';

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

export class MqttUsageError extends CommandUsageError {}

/** `homeagentctl mqtt` for the command catalogue (src/cli/commands.ts): its flags, help and parser. */
export const mqttCommand = defineCommand<MqttFlags>({
  name: 'mqtt',
  options: MQTT_OPTIONS,
  usage: [
    {
      synopsis: 'mqtt [status]',
      about: 'the MQTT connection: broker, since when, last error, outbox, message counters',
      zh: 'MQTT 连接：代理、连接起始时间、最近的错误、发件箱、消息计数',
    },
    {
      synopsis: 'mqtt publish TOPIC PAYLOAD [--qos 0|1|2] [--retain]',
      about: 'publish a message (any valid topic; audited)',
      zh: '发布一条消息（任何合法主题；记入审计）',
    },
    {
      synopsis: 'mqtt credentials [--reset devices]',
      about: "the embedded broker's login for Home Assistant, Zigbee2MQTT and other devices (or a new password)",
      zh: '内置代理给 Home Assistant、Zigbee2MQTT 等设备用的登录信息（或换新密码）',
    },
  ],
  parse: (args, flags) => {
    const command = parseMqttCommand(args, flags);
    return (context) => runMqtt(command, context);
  },
});

const COMMANDS = 'status, publish or credentials';
const COMMANDS_ZH = 'status、publish 或 credentials';
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
    throw new MqttUsageError(
      `--${stray} belongs to mqtt ${FLAG_OWNER[stray]}, not mqtt ${sub}`,
      `--${stray} 是 mqtt ${FLAG_OWNER[stray]} 的选项，不属于 mqtt ${sub}`,
    );
  }
  switch (sub) {
    case 'status': {
      if (rest.length > 0) throw new MqttUsageError('mqtt status takes no arguments', 'mqtt status 不接受参数');
      return { command: 'status' };
    }
    case 'credentials': {
      if (rest.length > 0)
        throw new MqttUsageError(
          'mqtt credentials takes no arguments (--reset devices makes a new password)',
          'mqtt credentials 不接受参数（--reset devices 生成新密码）',
        );
      if (flags.reset === undefined) return { command: 'credentials' };
      if (flags.reset !== 'devices')
        throw new MqttUsageError(
          `--reset must be devices, not ${JSON.stringify(flags.reset)}`,
          `--reset 须为 devices，而不是 ${JSON.stringify(flags.reset)}`,
        );
      return { command: 'credentials', reset: 'devices' };
    }
    case 'publish': {
      if (rest.length !== 2) {
        throw new MqttUsageError(
          'mqtt publish needs a TOPIC and a PAYLOAD (quote it; "" for an empty one, which clears a retained message)',
          'mqtt publish 需要 TOPIC 和 PAYLOAD（加引号；"" 表示空消息，会清除保留消息）',
        );
      }
      const [topic = '', payload = ''] = rest;
      if (topic.trim() === '') throw new MqttUsageError('mqtt publish: the TOPIC is empty', 'mqtt publish：TOPIC 为空');
      const command: MqttCommand = { command: 'publish', topic, payload, retain: flags.retain === true };
      if (flags.qos !== undefined) command.qos = qos(flags.qos);
      return command;
    }
    default:
      throw new MqttUsageError(`unknown mqtt command ${sub}; use ${COMMANDS}`, `未知的 mqtt 子命令 ${sub}；可用 ${COMMANDS_ZH}`);
  }
}

function qos(text: string): 0 | 1 | 2 {
  if (text === '0') return 0;
  if (text === '1') return 1;
  if (text === '2') return 2;
  throw new MqttUsageError(`--qos must be 0, 1 or 2, not ${JSON.stringify(text)}`, `--qos 须为 0、1 或 2，而不是 ${JSON.stringify(text)}`);
}

/** Runs a parsed mqtt command; resolves with the exit code. Daemon errors are thrown (homeagentctl reports them). */
export async function runMqtt(command: MqttCommand, options: CommandRunOptions): Promise<number> {
  const language = runLanguage(options);
  return withDaemon(options, { plugin: 'mqtt' }, async ({ call, print }) => {
    if (command.command === 'status') return print((await call('mqtt.status', {})) as MqttStatus, (r) => formatMqttStatus(r, language));
    if (command.command === 'credentials') {
      const params = command.reset === undefined ? {} : { reset: command.reset };
      return print((await call('mqtt.credentials', params)) as MqttCredentials, (r) => formatMqttCredentials(r, language));
    }
    const params: Record<string, unknown> = { topic: command.topic, payload: command.payload, retain: command.retain };
    if (command.qos !== undefined) params.qos = command.qos;
    const answer = (await call('mqtt.publish', params)) as MqttPublishResult;
    print(answer, (r) => formatMqttPublish(r, language));
    return answer.delivery === 'dropped' ? EXIT_CODES.FAILURE : EXIT_CODES.OK;
  });
}

// ---- readable output ----

/** Every sentence the mqtt command prints around the broker's values, in both languages. */
const WORDS = {
  en: {
    anyAddress: "<this machine's address>",
    everywhere: 'every address of this machine',
    loopback: 'this machine only; devices elsewhere need plugin.mqtt.broker_host, e.g. 0.0.0.0',
    thisAddress: 'this address',
    newPassword: (user: string, n: number) =>
      `new password made for ${user}; the old one no longer works (${n} client(s) using it were disconnected)`,
    broker: (server: string, tls: boolean, where: string) => `embedded broker: ${server} (${tls ? 'TLS, ' : ''}${where})`,
    plain: (port: number) => `plain MQTT:      mqtt://127.0.0.1:${port} (this machine only)`,
    user: (u: string) => `user name: ${u}`,
    password: (p: string) => `password:  ${p}`,
    also: (u: string) => `also:      ${u} (plugin.mqtt.broker_username; its password is in the configuration)`,
    anonymous: 'WARNING:   clients without a login are let in too (plugin.mqtt.broker_allow_anonymous)',
    homeAssistant: (host: string, port: number | null, tls: boolean) =>
      `Home Assistant: Settings > Devices & services > Add integration > MQTT: broker ${host}, port ${port}, this user name and password${tls ? ', advanced options: TLS with the CA of the broker certificate' : ''}`,
    caFile: '<the CA file>',
    kept: (file: string, made: string, changed: string | null) =>
      `kept in ${file} (mode 0600), made ${made}${changed === null ? '' : `, changed ${changed}`}`,
    what: (a: MqttPublishResult) => `QoS ${a.qos}${a.retain ? ', retained' : ''}, ${a.bytes} byte(s)`,
    sent: (topic: string, what: string) => `published to ${topic} (${what})`,
    queued: (topic: string, what: string) => `kept for ${topic} (${what}): the broker is not connected; it is sent when the broker is back`,
    dropped: (topic: string, what: string) =>
      `dropped ${topic} (${what}): the broker is not connected and QoS 0 messages are not kept (use --qos 1)`,
    off: 'MQTT off: no broker configured (set plugin.mqtt.url, or plugin.mqtt.broker_enabled, and restart)',
    resumed: ', session resumed',
    since: (at: string) => ` since ${at}`,
    connected: (url: string, client: string, since: string, session: string) => `connected to ${url} as ${client}${since}${session}`,
    nextAttempt: (s: number) => `; next attempt in ${s} s`,
    notConnected: (url: string, state: string, since: string, next: string) => `NOT connected to ${url} (${state}${since})${next}`,
    failed: (n: number, error: string | null) => `  ${n} failed attempt(s)${error === null ? '' : `; last error: ${error}`}`,
    node: (s: MqttStatus) => `node ${s.node_id}, topics under ${s.base_topic}/, ${s.reconnects} reconnect(s)`,
    notDurable: (problem: string) => `; NOT DURABLE: ${problem}`,
    outboxDropped: (n: number) => `, ${n} dropped (full)`,
    outbox: (messages: number, max: number, dropped: string, problem: string) =>
      `outbox: ${messages} waiting (max ${max})${dropped}${problem}`,
    counter: (key: string, n: number) => `${key.replace('_', ' ')} ${n}`,
    messages: (counts: string) => `messages: ${counts}`,
    subscriptions: (list: string) => `subscriptions: ${list}`,
    features: (list: string) => `features: ${list}`,
    none: 'none',
    separator: ', ',
    anonymousAllowed: ', ANONYMOUS CLIENTS ALLOWED',
    loginRequired: ', login required',
    running: 'running',
    clients: (n: number) => `, ${n} client(s)`,
    embedded: (url: string, clients: string, login: string) => `embedded broker: ${url}${clients}${login}`,
  },
  zh: {
    anyAddress: '<本机地址>',
    everywhere: '本机的所有地址',
    loopback: '仅限本机；其他设备需要设置 plugin.mqtt.broker_host，例如 0.0.0.0',
    thisAddress: '此地址',
    newPassword: (user: string, n: number) => `已为 ${user} 生成新密码；旧密码不再可用（使用它的 ${n} 个客户端已断开）`,
    broker: (server: string, tls: boolean, where: string) => `内置代理：${server}（${tls ? 'TLS，' : ''}${where}）`,
    plain: (port: number) => `明文 MQTT：mqtt://127.0.0.1:${port}（仅限本机）`,
    user: (u: string) => `用户名：${u}`,
    password: (p: string) => `密码：  ${p}`,
    also: (u: string) => `另有：  ${u}（plugin.mqtt.broker_username；其密码在配置里）`,
    anonymous: '警告：  没有登录的客户端也会被放行（plugin.mqtt.broker_allow_anonymous）',
    homeAssistant: (host: string, port: number | null, tls: boolean) =>
      `Home Assistant：设置 > 设备与服务 > 添加集成 > MQTT：代理 ${host}，端口 ${port}，使用此用户名和密码${tls ? '，高级选项：TLS，使用代理证书的 CA' : ''}`,
    caFile: '<CA 文件>',
    kept: (file: string, made: string, changed: string | null) =>
      `保存在 ${file}（权限 0600），创建于 ${made}${changed === null ? '' : `，修改于 ${changed}`}`,
    what: (a: MqttPublishResult) => `QoS ${a.qos}${a.retain ? '，保留' : ''}，${a.bytes} 字节`,
    sent: (topic: string, what: string) => `已发布到 ${topic}（${what}）`,
    queued: (topic: string, what: string) => `已为 ${topic} 暂存（${what}）：代理未连接；恢复连接后发送`,
    dropped: (topic: string, what: string) => `已丢弃 ${topic}（${what}）：代理未连接，QoS 0 的消息不暂存（请用 --qos 1）`,
    off: 'MQTT 未启用：没有配置代理（设置 plugin.mqtt.url 或 plugin.mqtt.broker_enabled 后重启）',
    resumed: '，会话已恢复',
    since: (at: string) => `，自 ${at} 起`,
    connected: (url: string, client: string, since: string, session: string) => `已以 ${client} 连接到 ${url}${since}${session}`,
    nextAttempt: (s: number) => `；${s} 秒后再试`,
    notConnected: (url: string, state: string, since: string, next: string) => `未连接到 ${url}（${state}${since}）${next}`,
    failed: (n: number, error: string | null) => `  失败 ${n} 次${error === null ? '' : `；上次错误：${error}`}`,
    node: (s: MqttStatus) => `节点 ${s.node_id}，主题位于 ${s.base_topic}/ 下，重连 ${s.reconnects} 次`,
    notDurable: (problem: string) => `；不持久：${problem}`,
    outboxDropped: (n: number) => `，丢弃 ${n} 条（已满）`,
    outbox: (messages: number, max: number, dropped: string, problem: string) =>
      `待发队列：${messages} 条等待（上限 ${max}）${dropped}${problem}`,
    counter: (key: string, n: number) => `${MQTT_COUNTERS_ZH[key] ?? key} ${n}`,
    messages: (counts: string) => `消息：${counts}`,
    subscriptions: (list: string) => `订阅：${list}`,
    features: (list: string) => `功能：${list}`,
    none: '无',
    separator: '，',
    anonymousAllowed: '，允许匿名客户端',
    loginRequired: '，需要登录',
    running: '运行中',
    clients: (n: number) => `，${n} 个客户端`,
    embedded: (url: string, clients: string, login: string) => `内置代理：${url}${clients}${login}`,
  },
} as const;

const MQTT_COUNTERS_ZH: Record<string, string> = {
  received: '收到',
  published: '发布',
  duplicates: '重复',
  oversized: '超大',
  malformed: '格式错误',
  rate_limited: '限流',
  dropped: '丢弃',
};

/** The devices' login, and where Home Assistant and Zigbee2MQTT put it. */
export function formatMqttCredentials(a: MqttCredentials, language: Language = cliLanguage()): string {
  const w = WORDS[language];
  const everywhere = a.host === '0.0.0.0' || a.host === '::';
  const loopback = a.host === 'localhost' || a.host.startsWith('127.') || a.host === '::1';
  const host = everywhere ? w.anyAddress : a.host;
  const where = everywhere ? w.everywhere : loopback ? w.loopback : w.thisAddress;
  const shown = host.includes(':') ? `[${host}]` : host;
  const tls = a.tls_port !== null;
  const server = tls ? `mqtts://${shown}:${a.tls_port}` : `mqtt://${shown}:${a.port}`;
  const port = tls ? a.tls_port : a.port;
  return [
    ...(a.disconnected === undefined ? [] : [w.newPassword(a.username, a.disconnected)]),
    w.broker(server, tls, where),
    ...(tls ? [w.plain(a.port)] : []),
    w.user(a.username),
    w.password(a.password),
    ...(a.extra_username === null ? [] : [w.also(a.extra_username)]),
    ...(a.anonymous_allowed ? [w.anonymous] : []),
    w.homeAssistant(host, port, tls),
    `Zigbee2MQTT (configuration.yaml): mqtt: { server: "${server}", user: ${a.username}, password: "${a.password}"${tls ? `, ca: ${w.caFile}` : ''} }`,
    w.kept(a.file, a.created_at, a.updated_at === a.created_at ? null : a.updated_at),
  ].join('\n');
}

export function formatMqttPublish(a: MqttPublishResult, language: Language = cliLanguage()): string {
  const w = WORDS[language];
  const what = w.what(a);
  switch (a.delivery) {
    case 'sent':
      return w.sent(a.topic, what);
    case 'queued':
      return w.queued(a.topic, what);
    case 'dropped':
      return w.dropped(a.topic, what);
  }
}

/** A few lines: the link, then the numbers. */
export function formatMqttStatus(s: MqttStatus, language: Language = cliLanguage()): string {
  const w = WORDS[language];
  if (s.state === 'off') return w.off;
  const lines: string[] = [];
  const since = s.since === null ? '' : w.since(s.since);
  if (s.connected) {
    lines.push(w.connected(s.url, s.client_id, since, s.session_present === true ? w.resumed : ''));
  } else {
    const next = s.next_attempt_in_ms === null ? '' : w.nextAttempt(Math.ceil(s.next_attempt_in_ms / 1000));
    lines.push(w.notConnected(s.url, stateWord(s.state, language), since, next));
    lines.push(w.failed(s.failed_attempts, s.last_error));
  }
  lines.push(w.node(s));
  if (s.outbox !== null) {
    const problem = s.outbox.problem === null ? '' : w.notDurable(s.outbox.problem);
    const dropped = s.outbox.dropped > 0 ? w.outboxDropped(s.outbox.dropped) : '';
    lines.push(w.outbox(s.outbox.messages, s.outbox.max, dropped, problem));
  }
  const c = s.counters;
  const shown = ['received', 'published', 'duplicates', 'oversized', 'malformed', 'rate_limited', 'dropped'] as const;
  lines.push(w.messages(shown.map((key) => w.counter(key, c[key])).join(w.separator)));
  lines.push(w.subscriptions(s.subscriptions.length === 0 ? w.none : s.subscriptions.join(', ')));
  lines.push(w.features(s.features.length === 0 ? w.none : s.features.map((f) => f.name).join(', ')));
  if (s.broker !== null && typeof s.broker === 'object') {
    const b = s.broker as { url?: unknown; clients?: unknown; login?: unknown };
    const login = b.login === 'anonymous allowed' ? w.anonymousAllowed : b.login === 'required' ? w.loginRequired : '';
    lines.push(w.embedded(String(b.url ?? w.running), typeof b.clients === 'number' ? w.clients(b.clients) : '', login));
  }
  return lines.join('\n');
}
