// `homeagentctl mqtt …` (src/cli/mqtt.ts): argument parsing, readable output, and the commands run
// against the control methods of a real mqtt plugin connected to an in-process broker.
import t from 'tap';
import { MqttPlugin } from '../../../plugins/mqtt/mqtt-plugin.js';
import type { CommandClient } from '../../../src/cli/command-client.js';
import {
  formatMqttPublish,
  formatMqttStatus,
  type MqttStatusAnswer,
  MqttUsageError,
  mqttFlagsUsed,
  parseMqttCommand,
  runMqtt,
} from '../../../src/cli/mqtt.js';
import { RemoteError } from '../../../src/cli/rpc-client.js';
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
  t.same(mqttFlagsUsed({ qos: '0' }), ['qos']);
  t.same(mqttFlagsUsed({}), []);
  const refused: Array<[string[], { qos?: string; retain?: boolean }, RegExp]> = [
    [['subscribe', 'x'], {}, /unknown mqtt command subscribe; use status or publish/],
    [['status', 'x'], {}, /mqtt status takes no arguments/],
    [['status'], { retain: true }, /--retain belongs to mqtt publish, not mqtt status/],
    [['publish', 'only-topic'], {}, /mqtt publish needs a TOPIC and a PAYLOAD/],
    [['publish', 'a', 'b', 'c'], {}, /needs a TOPIC and a PAYLOAD/],
    [['publish', ' ', 'x'], {}, /the TOPIC is empty/],
    [['publish', 'a', 'x'], { qos: '3' }, /--qos must be 0, 1 or 2, not "3"/],
  ];
  for (const [positionals, flags, message] of refused) {
    t.throws(() => parseMqttCommand(positionals, flags), { constructor: MqttUsageError, message }, positionals.join(' '));
  }
});

const STATUS: MqttStatusAnswer = {
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
  outbox: { messages: 0, max: 10_000, dropped: 0, problem: null },
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
    outbox: { messages: 12, max: 10_000, dropped: 2, problem: 'disk full' },
    broker: { url: 'mqtt://127.0.0.1:1883', clients: 3 },
  });
  t.match(down, /^NOT connected to mqtt:\/\/ha:\*\*\*@broker\.local:1883 \(disconnected since .*\); next attempt in 4 s/);
  t.match(down, /4 failed attempt\(s\); last error: nothing accepts connections/);
  t.match(down, /outbox: 12 waiting \(max 10000\), 2 dropped \(full\); NOT DURABLE: disk full/);
  t.match(down, /embedded broker: mqtt:\/\/127\.0\.0\.1:1883, 3 client\(s\)/);
  t.match(formatMqttStatus({ ...STATUS, state: 'off' }), /^MQTT off: no broker configured/);
  t.equal(
    formatMqttPublish({ topic: 'a/b', qos: 1, retain: true, bytes: 2, delivery: 'sent' }),
    'published to a/b (QoS 1, retained, 2 byte(s))',
  );
  t.match(formatMqttPublish({ topic: 'a/b', qos: 1, retain: false, bytes: 2, delivery: 'queued' }), /it is sent when the broker is back/);
  t.match(formatMqttPublish({ topic: 'a/b', qos: 0, retain: false, bytes: 2, delivery: 'dropped' }), /QoS 0 messages are not kept/);
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
        return await tc.control.call(method, params, { actor: 'cli' });
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
