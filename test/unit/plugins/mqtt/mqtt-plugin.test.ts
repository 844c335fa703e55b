// The MQTT plugin shell (plugins/mqtt/mqtt-plugin.ts) with a real test plugin context (control
// registry, audit records) and real brokers (aedes in-process; the embedded broker): MQTT off,
// mqtt.status and mqtt.publish (the owner's only), an absent broker that is not a start failure,
// feature modules started in order and stopped in reverse, the embedded broker started before the
// connection.
import { Type } from '@sinclair/typebox';
import t, { type Test } from 'tap';
import { EmbeddedBrokerService } from '../../../../plugins/mqtt/embedded-broker-service.js';
import {
  MQTT_OFF_DETAIL,
  MQTT_OFF_DETAIL_ZH,
  type MqttFeature,
  type MqttFeatureContext,
  type MqttFeatureFactory,
  MqttPlugin,
  type MqttPluginOptions,
  type MqttStatus,
  nodeIdFrom,
} from '../../../../plugins/mqtt/mqtt-plugin.js';
import { defaultConfig } from '../../../../src/config/loader.js';
import type { PluginHealth } from '../../../../src/sdk/index.js';
import { isHomeAgentError } from '../../../../src/shared/errors.js';
import { freePort } from '../../../helpers/mosquitto.js';
import { startTestBroker } from '../../../helpers/mqtt-test-broker.js';
import { createTestPluginContext, type TestPluginContext } from '../../../helpers/plugin-context.js';
import { expectErrorAsync } from '../../fixtures/support.js';
import { cleanups, eventually, plainClient } from './mqtt-test-kit.js';

/** plugin.mqtt.* defaults from the schema, with a fixed node id and fast reconnects for tests. */
const DEFAULTS = {
  ...defaultConfig().plugin.mqtt,
  node_id: 'testnode',
  reconnect_min_ms: 100,
  reconnect_max_ms: 1000,
};

interface Running {
  tc: TestPluginContext;
  plugin: MqttPlugin;
  call<R>(method: string, params?: object): Promise<R>;
  stop(): Promise<void>;
}

async function startPlugin(
  t: Test,
  atEnd: (fn: () => Promise<void> | void) => void,
  settings: Record<string, unknown>,
  options: MqttPluginOptions = {},
  before?: (tc: TestPluginContext) => void,
): Promise<Running> {
  const tc = createTestPluginContext({ name: 'mqtt', dataDir: t.testdir(), settings: { ...DEFAULTS, ...settings } });
  atEnd(() => tc.close());
  before?.(tc);
  const plugin = new MqttPlugin(tc.context, { features: [], ...options });
  await plugin.start(new AbortController().signal);
  let stopped = false;
  const stop = async () => {
    if (stopped) return;
    stopped = true;
    await plugin.stop();
  };
  atEnd(stop);
  return {
    tc,
    plugin,
    call: async <R>(method: string, params: object = {}) => (await tc.control.call(method, params, { actor: 'cli', owner: true })) as R,
    stop,
  };
}

t.test('no url and no embedded broker: MQTT is off, healthy, and says why', async (t) => {
  const atEnd = cleanups(t);
  const { plugin, call, tc } = await startPlugin(t, atEnd, {});
  t.same(plugin.health(), { ok: true, detail: MQTT_OFF_DETAIL, detail_zh: MQTT_OFF_DETAIL_ZH });
  const status = await call<MqttStatus>('mqtt.status');
  t.equal(status.state, 'off');
  t.equal(status.connected, false);
  const error = await expectErrorAsync(t, () => call('mqtt.publish', { topic: 'a/b', payload: 'x' }), 'HA_ERR_MQTT_UNAVAILABLE');
  t.match(error.message, /plugin\.mqtt\.url/);
  t.same(tc.audits, [], 'nothing was published, nothing audited');
});

t.test('connected: mqtt.status and mqtt.publish (audited, any valid topic), health says where', async (t) => {
  const atEnd = cleanups(t);
  const broker = await startTestBroker();
  atEnd(() => broker.close());
  const url = broker.url.replace('mqtt://', 'mqtt://someone:hunter2@');
  const { plugin, call, tc } = await startPlugin(t, atEnd, { url });
  await eventually(() => plugin.health().ok, 'healthy');
  t.match(plugin.health().detail, /^connected to mqtt:\/\/someone:\*\*\*@127\.0\.0\.1:\d+\/? as homeagent-testnode$/);

  const status = await call<MqttStatus>('mqtt.status');
  t.equal(status.state, 'connected');
  t.equal(status.client_id, 'homeagent-testnode', 'client id from the node id');
  t.equal(status.node_id, 'testnode');
  t.notMatch(JSON.stringify(status), /hunter2/, 'the password is not shown');
  t.ok(status.since !== null);
  t.same(status.counters.reconnects, 0);
  t.same(status.outbox?.max, 10_000);

  const observer = await plainClient(atEnd, broker.url, ['elsewhere/#']);
  const answer = await call<{ delivery: string; qos: number; bytes: number }>('mqtt.publish', {
    topic: 'elsewhere/light',
    payload: 'ON',
    retain: true,
  });
  t.same(answer, { topic: 'elsewhere/light', qos: 1, retain: true, bytes: 2, delivery: 'sent' }, 'publish_allow does not limit the owner');
  await observer.until(() => observer.inbox.length > 0, 'the message');
  t.same(observer.inbox[0], { topic: 'elsewhere/light', text: 'ON', retain: false, qos: 1 });
  t.same(tc.audits, [{ action: 'mqtt.publish', details: { topic: 'elsewhere/light', qos: 1, retain: true, bytes: 2, actor: 'cli' } }]);

  for (const actor of ['webui:session', 'plugin:onebot', 'agent']) {
    await expectErrorAsync(
      t,
      () => tc.control.call('mqtt.publish', { topic: 'homeagent/testnode/lock.front_door/set', payload: 'UNLOCK' }, { actor }),
      'HA_ERR_RPC_FORBIDDEN',
    );
  }
  await expectErrorAsync(t, () => call('mqtt.publish', { topic: 'bad/#', payload: 'x' }), 'HA_ERR_MQTT_TOPIC');
  await expectErrorAsync(t, () => call('mqtt.publish', { topic: 'a/b', payload: 'x', qos: 3 }), 'HA_ERR_RPC_INVALID_PARAMS');
  t.equal(tc.audits.length, 1, 'refused calls (not the owner, bad topic, bad QoS) publish nothing and are not audited as publishes');
});

t.test('an unreachable broker is not a start failure: the plugin runs, retries, and health says so', async (t) => {
  const atEnd = cleanups(t);
  const port = await freePort();
  const { plugin, call } = await startPlugin(t, atEnd, { url: `mqtt://127.0.0.1:${port}` });
  await eventually(() => (plugin.status().failed_attempts ?? 0) >= 2, 'two failed attempts');
  const health: PluginHealth = plugin.health();
  t.equal(health.ok, false);
  t.match(
    health.detail,
    /^not connected to mqtt:\/\/127\.0\.0\.1:\d+\/?: nothing accepts connections .*next attempt in \d+ s \(\d+ failed attempt\(s\)\)/,
  );
  const queued = await call<{ delivery: string }>('mqtt.publish', { topic: 'later/x', payload: 'kept' });
  t.equal(queued.delivery, 'queued');
  const dropped = await call<{ delivery: string }>('mqtt.publish', { topic: 'later/x', payload: 'gone', qos: 0 });
  t.equal(dropped.delivery, 'dropped');
  const status = await call<MqttStatus>('mqtt.status');
  t.equal(status.outbox?.messages, 1);
  t.equal(status.counters.dropped, 1);
  t.match(plugin.health().detail, /1 message\(s\) kept for later/);
});

t.test('feature modules start in order after the connection and stop in reverse; a failing start undoes the rest', async (t) => {
  const atEnd = cleanups(t);
  const broker = await startTestBroker();
  atEnd(() => broker.close());
  const log: string[] = [];
  const seen: MqttFeatureContext[] = [];
  const feature = (name: string, fail = false): MqttFeatureFactory => ({
    name,
    create: (context) => {
      seen.push(context);
      const instance: MqttFeature = {
        start: async () => {
          log.push(`start ${name}`);
          if (fail) throw new Error(`${name} broke`);
        },
        stop: async () => void log.push(`stop ${name}`),
        status: () => ({ name }),
      };
      return instance;
    },
  });
  const off: MqttFeatureFactory = { name: 'off', create: () => undefined };
  const running = await startPlugin(t, atEnd, { url: broker.url }, { features: [feature('inbound'), off, feature('discovery')] });
  t.same(log, ['start inbound', 'start discovery']);
  t.equal(seen[0]?.nodeId, 'testnode');
  t.equal(seen[0]?.layout.status, 'homeagent/testnode/status', 'an empty base_topic is homeagent/<node_id>');
  t.equal(seen[0]?.settings().base_topic, 'homeagent/testnode', 'features get the base topic resolved');
  t.equal(seen[0]?.settings().node_id, 'testnode');
  t.equal(seen[0]?.settings().node_name, 'HomeAgent', "core.name's default when it cannot be read");
  t.equal(seen[0]?.settings().publish_allow[0], 'homeagent/#');
  t.equal(seen[0]?.link, seen[1]?.link, 'one link for all');
  const status = running.plugin.status();
  t.same(status.features, [
    { name: 'inbound', status: { name: 'inbound' } },
    { name: 'discovery', status: { name: 'discovery' } },
  ]);
  await running.stop();
  t.same(log.slice(2), ['stop discovery', 'stop inbound']);
  t.same(
    running.tc.control.methods().filter((m) => m.name.startsWith('mqtt.')),
    [],
    'control methods removed at stop',
  );

  log.length = 0;
  const tc = createTestPluginContext({ name: 'mqtt', dataDir: t.testdir(), settings: { ...DEFAULTS, url: broker.url } });
  atEnd(() => tc.close());
  const failing = new MqttPlugin(tc.context, { features: [feature('first'), feature('second', true), feature('third')] });
  await t.rejects(failing.start(new AbortController().signal), /second broke/);
  t.same(log, ['start first', 'start second', 'stop first'], 'what started was stopped; nothing after the failure started');
  t.same(failing.health(), { ok: false, detail: 'MQTT is not running', detail_zh: 'MQTT 没有运行' });
});

t.test('the embedded broker starts before the connection, which uses its address and its own generated login', async (t) => {
  const atEnd = cleanups(t);
  const order: string[] = [];
  const running = await startPlugin(
    t,
    atEnd,
    { broker_enabled: true, broker_port: 0 },
    {
      features: [
        {
          name: 'probe',
          create: (c) => ({ start: async () => void order.push(`feature sees connected=${c.link.connected}`), stop: async () => {} }),
        },
      ],
      broker: (setup) => {
        const real = new EmbeddedBrokerService({
          settings: setup.settings,
          ownClientId: setup.ownClientId,
          baseTopic: setup.baseTopic,
          nodeId: setup.nodeId,
          dataDir: setup.ctx.paths.data,
          brokerDir: `${setup.ctx.paths.data}/broker`,
          log: setup.ctx.log,
          audit: setup.ctx.audit,
          counters: setup.counters,
        });
        return {
          start: async () => {
            order.push('broker start');
            return real.start();
          },
          stop: async () => {
            order.push('broker stop');
            await real.stop();
          },
          status: () => real.status(),
        };
      },
    },
  );
  t.equal(order[0], 'broker start');
  await eventually(() => running.plugin.health().ok, 'connected to the embedded broker');
  const status = running.plugin.status();
  t.match(status.url, /^mqtt:\/\/127\.0\.0\.1:\d+/);
  t.match(status.broker, { clients: 1, login: 'required' });
  await running.stop();
  t.equal(order.at(-1), 'broker stop', 'the broker stops last');
});

t.test('the node id comes from core.name when plugin.mqtt.node_id is empty', async (t) => {
  const atEnd = cleanups(t);
  const broker = await startTestBroker();
  atEnd(() => broker.close());
  const features: MqttFeatureContext[] = [];
  const probe: MqttFeatureFactory = { name: 'probe', create: (c) => void features.push(c) };
  const { plugin } = await startPlugin(
    t,
    atEnd,
    { url: broker.url, node_id: '', base_topic: 'house/main/' },
    { features: [probe] },
    (tc) => {
      tc.control.register({
        name: 'config.get',
        description: 'test stand-in',
        params: Type.Object({ key: Type.String() }),
        handler: ({ key }) => ({ key, value: key === 'core.name' ? 'Living Room 2' : null }),
      });
    },
  );
  t.equal(plugin.status().node_id, 'living_room_2');
  await eventually(() => plugin.status().connected, 'connected');
  t.equal(plugin.status().client_id, 'homeagent-living_room_2');
  t.equal(plugin.status().base_topic, 'house/main/', 'a base_topic that is set is kept');
  t.equal(features[0]?.settings().node_name, 'Living Room 2');
  t.equal(features[0]?.layout.status, 'house/main/status');

  t.equal(nodeIdFrom('客厅'), 'homeagent', 'nothing usable: the fallback');
  t.equal(nodeIdFrom('  Küche / Süd '), 'kuche_sud');
});

t.test('a bad url fails the start with the setting named', async (t) => {
  const tc = createTestPluginContext({ name: 'mqtt', dataDir: t.testdir(), settings: { ...DEFAULTS, url: 'http://broker' } });
  t.teardown(() => tc.close());
  const plugin = new MqttPlugin(tc.context, { features: [] });
  const error = await plugin.start(new AbortController().signal).then(
    () => undefined,
    (e: unknown) => e,
  );
  t.ok(isHomeAgentError(error, 'HA_ERR_MQTT_UNAVAILABLE'));
  t.match((error as Error).message, /plugin\.mqtt\.url must start with mqtt:\/\//);
  t.same(tc.control.methods(), [], 'nothing left registered');
});
