// `homeagentctl mqtt …` (src/cli/mqtt.ts): argument parsing, readable output, and the commands run
// against the control methods of a real mqtt plugin connected to an in-process broker.
import t from 'tap';
import { MqttPlugin } from '../../../plugins/mqtt/mqtt-plugin.js';
import type { MqttCredentials, MqttStatus } from '../../../src/api/mqtt.js';
import type { CommandClient } from '../../../src/cli/command-client.js';
import {
  formatMqttCredentials,
  formatMqttPublish,
  formatMqttStatus,
  MqttUsageError,
  mqttFlagsUsed,
  parseMqttCommand,
  runMqtt,
} from '../../../src/cli/mqtt.js';
import { RemoteError } from '../../../src/cli/rpc-client.js';
import { defaultConfig } from '../../../src/config/loader.js';
import { toErrorEnvelope } from '../../../src/shared/errors.js';
import { startTestBroker } from '../../helpers/mqtt-test-broker.js';
import { createTestPluginContext } from '../../helpers/plugin-context.js';
import { eventually } from '../plugins/mqtt/mqtt-test-kit.js';

t.test('parseMqttCommand reads each command and refuses what does not fit', async (t) => {
  t.same(parseMqttCommand([], {}), { command: 'status' });
  t.same(parseMqttCommand(['status'], {}), { command: 'status' });
  t.same(parseMqttCommand(['publish', 'home/light', 'ON'], {}), { command: 'publish', topic: 'home/light', payload: 'ON', retain: false });
  t.same(parseMqttCommand(['publish', 'home/light', ''], { qos: '2', retain: true }), {
    command: 'publish',
    topic: 'home/light',
    payload: '',
    retain: true,
    qos: 2,
  });
  t.same(parseMqttCommand(['credentials'], {}), { command: 'credentials' });
  t.same(parseMqttCommand(['credentials'], { reset: 'devices' }), { command: 'credentials', reset: 'devices' });
  t.same(mqttFlagsUsed({ qos: '0' }), ['qos']);
  t.same(mqttFlagsUsed({ reset: 'devices' }), ['reset']);
  t.same(mqttFlagsUsed({}), []);
  const refused: Array<[string[], { qos?: string; retain?: boolean; reset?: string }, RegExp]> = [
    [['subscribe', 'x'], {}, /unknown mqtt command subscribe; use status, publish or credentials/],
    [['status', 'x'], {}, /mqtt status takes no arguments/],
    [['status'], { retain: true }, /--retain belongs to mqtt publish, not mqtt status/],
    [['status'], { reset: 'devices' }, /--reset belongs to mqtt credentials, not mqtt status/],
    [['publish', 'a', 'b'], { reset: 'devices' }, /--reset belongs to mqtt credentials, not mqtt publish/],
    [['credentials'], { qos: '1' }, /--qos belongs to mqtt publish, not mqtt credentials/],
    [['credentials', 'x'], {}, /mqtt credentials takes no arguments/],
    [['credentials'], { reset: 'homeagent' }, /--reset must be devices, not "homeagent"/],
    [['publish', 'only-topic'], {}, /mqtt publish needs a TOPIC and a PAYLOAD/],
    [['publish', 'a', 'b', 'c'], {}, /needs a TOPIC and a PAYLOAD/],
    [['publish', ' ', 'x'], {}, /the TOPIC is empty/],
    [['publish', 'a', 'x'], { qos: '3' }, /--qos must be 0, 1 or 2, not "3"/],
  ];
  for (const [positionals, flags, message] of refused) {
    t.throws(() => parseMqttCommand(positionals, flags), { constructor: MqttUsageError, message }, positionals.join(' '));
  }
});

const STATUS: MqttStatus = {
  state: 'connected',
  connected: true,
  url: 'mqtt://ha:***@broker.local:1883',
  client_id: 'homeagent-kitchen',
  node_id: 'kitchen',
  base_topic: 'homeagent',
  since: '2025-01-01T00:00:00.000Z',
  session_present: true,
  reconnects: 2,
  failed_attempts: 0,
  next_attempt_in_ms: null,
  last_error: null,
  subscriptions: ['zigbee2mqtt/#', 'homeagent/+/set'],
  outbox: { messages: 0, loaded: 0, skipped_lines: 0, max: 10_000, dropped: 0, problem: null },
  counters: { received: 10, published: 4, duplicates: 1, oversized: 0, malformed: 0, rate_limited: 3, dropped: 0, reconnects: 2 },
  broker: null,
  features: [{ name: 'inbound', status: null }],
};

t.test('formatMqttStatus and formatMqttPublish say what matters first', async (t) => {
  t.equal(
    formatMqttStatus(STATUS),
    [
      'connected to mqtt://ha:***@broker.local:1883 as homeagent-kitchen since 2025-01-01T00:00:00.000Z, session resumed',
      'node kitchen, topics under homeagent/, 2 reconnect(s)',
      'outbox: 0 waiting (max 10000)',
      'messages: received 10, published 4, duplicates 1, oversized 0, malformed 0, rate limited 3, dropped 0',
      'subscriptions: zigbee2mqtt/#, homeagent/+/set',
      'features: inbound',
    ].join('\n'),
  );
  const down = formatMqttStatus({
    ...STATUS,
    state: 'disconnected',
    connected: false,
    next_attempt_in_ms: 3500,
    failed_attempts: 4,
    last_error: 'nothing accepts connections',
    outbox: { messages: 12, loaded: 12, skipped_lines: 0, max: 10_000, dropped: 2, problem: 'disk full' },
    broker: { url: 'mqtt://127.0.0.1:1883', clients: 3 },
  });
  t.match(down, /^NOT connected to mqtt:\/\/ha:\*\*\*@broker\.local:1883 \(disconnected since .*\); next attempt in 4 s/);
  t.match(down, /4 failed attempt\(s\); last error: nothing accepts connections/);
  t.match(down, /outbox: 12 waiting \(max 10000\), 2 dropped \(full\); NOT DURABLE: disk full/);
  t.match(down, /embedded broker: mqtt:\/\/127\.0\.0\.1:1883, 3 client\(s\)$/m);
  t.match(
    formatMqttStatus({ ...STATUS, broker: { url: 'mqtt://127.0.0.1:1883', clients: 1, login: 'required' } }),
    /embedded broker: mqtt:\/\/127\.0\.0\.1:1883, 1 client\(s\), login required$/m,
  );
  t.match(
    formatMqttStatus({ ...STATUS, broker: { url: 'mqtt://127.0.0.1:1883', clients: 1, login: 'anonymous allowed' } }),
    /, ANONYMOUS CLIENTS ALLOWED$/m,
  );
  t.match(formatMqttStatus({ ...STATUS, state: 'off' }), /^MQTT off: no broker configured/);
  t.equal(
    formatMqttPublish({ topic: 'a/b', qos: 1, retain: true, bytes: 2, delivery: 'sent' }),
    'published to a/b (QoS 1, retained, 2 byte(s))',
  );
  t.match(formatMqttPublish({ topic: 'a/b', qos: 1, retain: false, bytes: 2, delivery: 'queued' }), /it is sent when the broker is back/);
  t.match(formatMqttPublish({ topic: 'a/b', qos: 0, retain: false, bytes: 2, delivery: 'dropped' }), /QoS 0 messages are not kept/);
});

const CREDENTIALS: MqttCredentials = {
  host: '0.0.0.0',
  port: 1883,
  tls_port: null,
  username: 'devices',
  password: 'Zq3-secret-0123456789abcdefghijk',
  extra_username: null,
  anonymous_allowed: false,
  file: '/var/lib/homeagent/plugin-data/mqtt/broker-credentials.json',
  created_at: '2025-01-01T00:00:00.000Z',
  updated_at: '2025-01-01T00:00:00.000Z',
};

t.test('mqtt in Chinese: the link, the numbers, a publish and the login', async (t) => {
  t.equal(
    formatMqttStatus(STATUS, 'zh'),
    [
      '已以 homeagent-kitchen 连接到 mqtt://ha:***@broker.local:1883，自 2025-01-01T00:00:00.000Z 起，会话已恢复',
      '节点 kitchen，主题位于 homeagent/ 下，重连 2 次',
      '待发队列：0 条等待（上限 10000）',
      '消息：收到 10，发布 4，重复 1，超大 0，格式错误 0，限流 3，丢弃 0',
      '订阅：zigbee2mqtt/#, homeagent/+/set',
      '功能：inbound',
    ].join('\n'),
  );
  t.match(formatMqttStatus({ ...STATUS, state: 'off' }, 'zh'), /^MQTT 未启用：没有配置代理/);
  t.equal(
    formatMqttPublish({ topic: 'a/b', qos: 1, retain: true, bytes: 2, delivery: 'sent' }, 'zh'),
    '已发布到 a/b（QoS 1，保留，2 字节）',
  );
  t.match(
    formatMqttPublish({ topic: 'a/b', qos: 0, retain: false, bytes: 2, delivery: 'dropped' }, 'zh'),
    /QoS 0 的消息不暂存（请用 --qos 1）$/,
  );
  const login = formatMqttCredentials(CREDENTIALS, 'zh');
  t.match(login, /^内置代理：mqtt:\/\/<本机地址>:1883（本机的所有地址）\n用户名：devices\n/);
  t.match(login, '\n保存在 /var/lib/homeagent/plugin-data/mqtt/broker-credentials.json（权限 0600），创建于 2025-01-01T00:00:00.000Z');
  t.notMatch(login, /user name|kept in/);
});

t.test('formatMqttCredentials: the login, where it reaches, and where Home Assistant and Zigbee2MQTT take it', async (t) => {
  t.equal(
    formatMqttCredentials(CREDENTIALS),
    [
      "embedded broker: mqtt://<this machine's address>:1883 (every address of this machine)",
      'user name: devices',
      'password:  Zq3-secret-0123456789abcdefghijk',
      "Home Assistant: Settings > Devices & services > Add integration > MQTT: broker <this machine's address>, port 1883, this user name and password",
      `Zigbee2MQTT (configuration.yaml): mqtt: { server: "mqtt://<this machine's address>:1883", user: devices, password: "Zq3-secret-0123456789abcdefghijk" }`,
      'kept in /var/lib/homeagent/plugin-data/mqtt/broker-credentials.json (mode 0600), made 2025-01-01T00:00:00.000Z',
    ].join('\n'),
  );
  const local = formatMqttCredentials({
    ...CREDENTIALS,
    host: '127.0.0.1',
    extra_username: 'zigbee2mqtt',
    anonymous_allowed: true,
    disconnected: 2,
    updated_at: '2025-02-01T00:00:00.000Z',
  });
  t.match(local, /^new password made for devices; the old one no longer works \(2 client\(s\) using it were disconnected\)\n/);
  t.match(
    local,
    /embedded broker: mqtt:\/\/127\.0\.0\.1:1883 \(this machine only; devices elsewhere need plugin\.mqtt\.broker_host, e\.g\. 0\.0\.0\.0\)\n/,
  );
  t.match(local, /also: +zigbee2mqtt \(plugin\.mqtt\.broker_username; its password is in the configuration\)/);
  t.match(local, /WARNING: +clients without a login are let in too \(plugin\.mqtt\.broker_allow_anonymous\)/);
  t.match(local, /, changed 2025-02-01T00:00:00\.000Z$/);
  const secure = formatMqttCredentials({ ...CREDENTIALS, host: '192.168.1.5', tls_port: 8883 });
  t.match(
    secure,
    /^embedded broker: mqtts:\/\/192\.168\.1\.5:8883 \(TLS, this address\)\nplain MQTT: +mqtt:\/\/127\.0\.0\.1:1883 \(this machine only\)\n/,
  );
  t.match(secure, /MQTT: broker 192\.168\.1\.5, port 8883, this user name and password, advanced options: TLS/);
  t.match(secure, /server: "mqtts:\/\/192\.168\.1\.5:8883", user: devices, password: "[^"]+", ca: <the CA file> \}/);
});

t.test('runMqtt credentials against a plugin running the embedded broker; --reset devices', async (t) => {
  const tc = createTestPluginContext({
    name: 'mqtt',
    dataDir: t.testdir(),
    settings: { ...defaultConfig().plugin.mqtt, node_id: 'cli', broker_enabled: true, broker_port: 0 },
  });
  const plugin = new MqttPlugin(tc.context, { features: [] });
  await plugin.start(new AbortController().signal);
  t.teardown(async () => {
    await plugin.stop();
    await tc.close();
  });
  const connect = async (): Promise<CommandClient> => ({
    call: async (method, params) => {
      try {
        return await tc.control.call(method, params, { actor: 'cli', owner: true });
      } catch (error) {
        throw new RemoteError(toErrorEnvelope(error));
      }
    },
    close: () => {},
  });
  const out: string[] = [];
  const stdout = { write: (text: string) => out.push(text) };
  t.equal(await runMqtt({ command: 'credentials' }, { connect, json: true, timeoutMs: 1000, stdout }), 0);
  const first = JSON.parse(out[0] ?? '') as MqttCredentials;
  t.match(first, { host: '127.0.0.1', tls_port: null, username: 'devices', password: /^[A-Za-z0-9_-]{32}$/ });
  t.equal(await runMqtt({ command: 'credentials', reset: 'devices' }, { connect, json: false, timeoutMs: 1000, stdout }), 0);
  t.match(out[1], /^new password made for devices; the old one no longer works \(0 client\(s\)/);
  t.notMatch(out[1], first.password, 'a new password is shown');
  t.same(
    tc.audits.map((a) => a.action),
    ['mqtt.credentials.read', 'mqtt.credentials.reset'],
  );
});

t.test('runMqtt against a running mqtt plugin: status, publish, JSON, and a missing plugin', async (t) => {
  const broker = await startTestBroker();
  const tc = createTestPluginContext({
    name: 'mqtt',
    dataDir: t.testdir(),
    settings: {
      url: broker.url,
      username: '',
      password: '',
      client_id: '',
      ca_file: '',
      cert_file: '',
      key_file: '',
      reject_unauthorized: true,
      node_id: 'cli',
      base_topic: 'homeagent',
      keepalive_s: 30,
      reconnect_min_ms: 100,
      reconnect_max_ms: 1000,
      connect_timeout_ms: 5000,
      publish_qos: 1,
      max_payload_bytes: 65536,
      outbox_max_messages: 100,
      subscriptions: [],
      publish_allow: [],
      broker_enabled: false,
    },
  });
  const plugin = new MqttPlugin(tc.context, { features: [] });
  await plugin.start(new AbortController().signal);
  t.teardown(async () => {
    await plugin.stop();
    await tc.close();
    await broker.close();
  });
  await eventually(() => plugin.status().connected, 'the plugin connected');

  let closed = 0;
  const connect = async (): Promise<CommandClient> => ({
    call: async (method, params) => {
      try {
        return await tc.control.call(method, params, { actor: 'cli', owner: true });
      } catch (error) {
        throw new RemoteError(toErrorEnvelope(error));
      }
    },
    close: () => void closed++,
  });
  const out: string[] = [];
  const stdout = { write: (text: string) => out.push(text) };

  t.equal(await runMqtt({ command: 'status' }, { connect, json: false, timeoutMs: 1000, stdout }), 0);
  t.match(out[0], /^connected to mqtt:\/\/127\.0\.0\.1:\d+\/? as homeagent-cli/);
  t.equal(
    await runMqtt(
      { command: 'publish', topic: 'cli/test', payload: 'hi', retain: false, qos: 1 },
      { connect, json: true, timeoutMs: 1000, stdout },
    ),
    0,
  );
  t.same(JSON.parse(out[1] ?? ''), { topic: 'cli/test', qos: 1, retain: false, bytes: 2, delivery: 'sent' });
  t.same(
    tc.audits.map((a) => a.action),
    ['mqtt.publish'],
  );
  await t.rejects(
    runMqtt({ command: 'publish', topic: 'cli/#', payload: 'x', retain: false }, { connect, json: false, timeoutMs: 1000, stdout }),
    {
      code: 'HA_ERR_MQTT_TOPIC',
    },
  );
  t.equal(closed, 3, 'the connection is closed after every command');

  const missing = async (): Promise<CommandClient> => ({
    call: async () => {
      throw new RemoteError({ code: 'HA_ERR_RPC_UNKNOWN_METHOD', message: 'no method mqtt.status' });
    },
    close: () => {},
  });
  await t.rejects(runMqtt({ command: 'status' }, { connect: missing, json: false, timeoutMs: 1000, stdout }), {
    message: /the mqtt plugin is not running: enable it with plugin\.mqtt\.enabled: true/,
  });
});
