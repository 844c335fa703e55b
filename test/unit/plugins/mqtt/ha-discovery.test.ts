// Home Assistant discovery and the state publisher against a real broker (aedes in-process) with a
// real entity registry: retained configs and states for HomeAgent's own entities, re-published on
// Home Assistant's birth, removed after the grace (not on a quick re-register), swept when stale or
// when discovery is switched off; states follow changes, coalesced, in a safe order.
import { Ajv } from 'ajv';
import t, { type Test } from 'tap';
import { type DiscoveryNode, entityDiscovery, HA_COMPONENTS, type HaComponent } from '../../../../plugins/mqtt/discovery-payloads.js';
import { HaDiscovery, type HaDiscoverySettings } from '../../../../plugins/mqtt/ha-discovery.js';
import { StatePublisher } from '../../../../plugins/mqtt/state-publisher.js';
import { emptyCounters, type MqttLink, type MqttMessage } from '../../../../plugins/mqtt/types.js';
import {
  DOMAIN_SERVICES,
  type EntityDefinition,
  type EntityDomain,
  type EntityHandle,
  type EntityInfo,
} from '../../../../src/sdk/index.js';
import { isHomeAgentError } from '../../../../src/shared/errors.js';
import { ManualTimerClock } from '../../../helpers/manual-timer-clock.js';
import { connectTestLink, startTestBroker } from '../../../helpers/mqtt-test-broker.js';
import { createTestPluginContext } from '../../../helpers/plugin-context.js';
import { record, retained } from './fixtures/discovery-recorder.js';
import { HA_DISCOVERY_SCHEMAS } from './fixtures/ha-discovery-schemas.js';

const GPIO = 'plugin:gpio';
const PREFIX = 'homeassistant';
const NODE_FILTER = `${PREFIX}/+/pi/+/config`;
const GRACE_MS = 5000;
const STALE_MS = 60_000;

const LIGHT: EntityDefinition = {
  domain: 'switch',
  object_id: 'kitchen_light',
  name: 'Kitchen light',
  area: 'Kitchen',
  initial_state: 'off',
  call: async () => {},
};
const MOTION: EntityDefinition = {
  domain: 'binary_sensor',
  object_id: 'hall_motion',
  name: 'Hall motion',
  device_class: 'motion',
  initial_state: 'off',
};
const TEMP: EntityDefinition = {
  domain: 'sensor',
  object_id: 'living_temperature',
  name: 'Living temperature',
  unit: '°C',
  initial_state: 21.5,
};
const TOPICS = {
  agentNotify: `${PREFIX}/notify/pi/agent_notify/config`,
  agentReply: `${PREFIX}/sensor/pi/agent_last_reply/config`,
  light: `${PREFIX}/switch/pi/switch_kitchen_light/config`,
  motion: `${PREFIX}/binary_sensor/pi/binary_sensor_hall_motion/config`,
  temp: `${PREFIX}/sensor/pi/sensor_living_temperature/config`,
};

/** A broker, a test plugin context named mqtt, a link and a recorder; all stopped at teardown in order. */
async function harness(t: Test, options: { discovery?: boolean; before?: (url: string) => Promise<void> } = {}) {
  const broker = await startTestBroker();
  const clock = new ManualTimerClock();
  const tc = createTestPluginContext({ name: 'mqtt', dataDir: t.testdir(), settings: { discovery: options.discovery ?? true } });
  const plain = await connectTestLink(broker.url);
  const delivered = spyOn(plain);
  const link = delivered.link;
  const recorder = await record(broker.url, [`${PREFIX}/#`, 'homeagent/#', 'test/#']);
  const stops: Array<() => Promise<void>> = [];
  t.teardown(async () => {
    for (const stop of stops.reverse()) await stop();
    await recorder.end();
    await plain.end();
    await broker.close();
    await tc.close();
  });
  await options.before?.(broker.url);
  const settings = (): HaDiscoverySettings => ({
    discovery: tc.settings.get('discovery') as boolean,
    discovery_prefix: PREFIX,
    node_id: 'pi',
    node_name: 'Kitchen Pi',
    base_topic: 'homeagent',
    // QoS 2: aedes acknowledges QoS 1 before it stores the retained message, QoS 2 after; so once a
    // feature's publish resolved, the broker's retained store (read by the tests) has it.
    publish_qos: 2,
  });
  const handles = new Map<string, EntityHandle>();
  const register = (definition: EntityDefinition, owner = GPIO) => {
    const handle = tc.entities.register(owner, definition);
    handles.set(handle.entity_id, handle);
    return handle;
  };
  let barriers = 0;
  const features: Array<{ settled(): Promise<void> }> = [];
  return {
    broker,
    clock,
    tc,
    link,
    recorder,
    settings,
    handles,
    register,
    async startDiscovery() {
      const discovery = new HaDiscovery({ link, ctx: tc.context, settings, counters: emptyCounters(), clock, version: '0.1.0' });
      await discovery.start();
      stops.push(() => discovery.stop());
      features.push(discovery);
      return discovery;
    },
    async startPublisher() {
      const publisher = new StatePublisher({ link, ctx: tc.context, settings, counters: emptyCounters(), clock });
      await publisher.start();
      stops.push(() => publisher.stop());
      features.push(publisher);
      return publisher;
    },
    /**
     * Everything the features published before this is at the recorder after it: their publishes
     * are complete (QoS 2: the broker has passed them on) before the barrier message is sent.
     */
    async barrier() {
      for (const feature of features) await feature.settled();
      const topic = `test/barrier/${barriers++}`;
      const from = recorder.messages.length;
      await link.publish(topic, 'x', { qos: 2 });
      await recorder.waitFor(topic, (m) => m.topic === topic, { from });
      return recorder.messages.length;
    },
    /** Resolves once a feature's handler was given a matching message. */
    handled: delivered.waitFor,
  };
}

/**
 * The link the features get, noting every message handed to their handlers: a test handler of its
 * own would share the feature's subscription and change what the broker replays to whom.
 */
function spyOn(inner: MqttLink) {
  const seen: MqttMessage[] = [];
  const waiters = new Set<() => void>();
  const link: MqttLink = {
    get connected() {
      return inner.connected;
    },
    publish: (topic, payload, options) => inner.publish(topic, payload, options),
    onConnect: (listener) => inner.onConnect(listener),
    subscribe: (filter, qos, handler) =>
      inner.subscribe(filter, qos, (message) => {
        handler(message);
        seen.push(message);
        for (const wake of [...waiters]) wake();
      }),
  };
  const waitFor = (what: string, match: (m: MqttMessage) => boolean, timeoutMs = 5000) =>
    new Promise<void>((resolve, reject) => {
      const check = () => {
        if (!seen.some(match)) return false;
        clearTimeout(timer);
        waiters.delete(check);
        resolve();
        return true;
      };
      const timer = setTimeout(() => {
        waiters.delete(check);
        reject(new Error(`no ${what} reached a feature within ${timeoutMs} ms`));
      }, timeoutMs);
      if (!check()) waiters.add(check);
    });
  return { link, waitFor };
}

const ajv = new Ajv({ allErrors: true, allowUnionTypes: true });
const validators = new Map(HA_COMPONENTS.map((c) => [c, ajv.compile(HA_DISCOVERY_SCHEMAS[c])]));

function checkSchema(t: Test, topic: string, text: string): void {
  const component = topic.split('/')[1] as HaComponent;
  const validate = validators.get(component);
  t.ok(validate?.(JSON.parse(text)), `${topic} matches the ${component} schema ${validate?.errors ? ajv.errorsText(validate.errors) : ''}`);
}

t.test('a retained config for every own entity and the agent, none for the MQTT plugin’s own', async (t) => {
  const h = await harness(t);
  h.register(LIGHT);
  h.register(MOTION);
  h.register(TEMP);
  // A remote or Zigbee2MQTT entity belongs to the MQTT plugin: it is not announced again.
  h.tc.context.entities.register({ domain: 'switch', object_id: 'zigbee_plug', name: 'Zigbee plug' });
  const discovery = await h.startDiscovery();
  await discovery.settled();
  const configs = await retained(h.broker.broker, NODE_FILTER);
  t.same([...configs.keys()].sort(), Object.values(TOPICS).sort());
  for (const [topic, text] of configs) checkSchema(t, topic, text);
  const light = JSON.parse(configs.get(TOPICS.light) ?? '{}');
  t.match(light, {
    unique_id: 'homeagent_pi_switch_kitchen_light',
    command_topic: 'homeagent/switch.kitchen_light/set',
    device: { suggested_area: 'Kitchen', via_device: 'homeagent_pi', manufacturer: 'HomeAgent', sw_version: '0.1.0' },
  });
  t.same(discovery.publishedTopics.sort(), Object.values(TOPICS).sort());
});

t.test('an entity registered later is announced; Home Assistant’s birth re-publishes all, its last will nothing', async (t) => {
  const h = await harness(t);
  h.register(LIGHT);
  const discovery = await h.startDiscovery();
  await discovery.settled();
  const from = h.recorder.messages.length;
  h.register(MOTION);
  await h.recorder.waitFor('the motion config', (m) => m.topic === TOPICS.motion && m.payload !== '', { from });

  // Home Assistant restarted: its birth message asks for every config again.
  const birth = h.recorder.messages.length;
  await h.recorder.client.publishAsync(`${PREFIX}/status`, 'online', { qos: 1 });
  for (const topic of [TOPICS.light, TOPICS.motion, TOPICS.agentNotify, TOPICS.agentReply]) {
    await h.recorder.waitFor(`${topic} again`, (m) => m.topic === topic && m.payload !== '', { from: birth });
  }

  // "offline" (Home Assistant's last will) asks for nothing.
  await h.recorder.client.publishAsync(`${PREFIX}/status`, 'offline', { qos: 1 });
  await h.handled('the last will', (m) => m.topic === `${PREFIX}/status` && m.payload.toString() === 'offline');
  await discovery.settled();
  const mark = h.recorder.messages.length;
  const end = await h.barrier();
  t.same(
    h.recorder.messages.slice(mark, end).filter((m) => m.topic.endsWith('/config')),
    [],
    'no config for the last will',
  );
});

t.test('a thermostat, a media player or the weather is not announced, before or after start', async (t) => {
  const h = await harness(t);
  h.register(LIGHT);
  h.register({ domain: 'climate', object_id: 'living_room', name: 'Thermostat', initial_state: 'heat', call: async () => {} });
  const discovery = await h.startDiscovery();
  await discovery.settled();
  h.register({ domain: 'media_player', object_id: 'speaker', name: 'Speaker', initial_state: 'idle', call: async () => {} });
  h.register({ domain: 'weather', object_id: 'home', name: 'Forecast', initial_state: 'sunny' });
  h.register(MOTION);
  await h.recorder.waitFor('the motion config', (m) => m.topic === TOPICS.motion && m.payload !== '');
  await discovery.settled();
  const configs = await retained(h.broker.broker, NODE_FILTER);
  t.same([...configs.keys()].sort(), [TOPICS.light, TOPICS.motion, TOPICS.agentNotify, TOPICS.agentReply].sort());
  t.same(discovery.publishedTopics.sort(), [TOPICS.light, TOPICS.motion, TOPICS.agentNotify, TOPICS.agentReply].sort());
});

t.test('a retained birth found at start is not a second reason to publish', async (t) => {
  const h = await harness(t, {
    before: async (url) => {
      const client = await record(url, []);
      await client.client.publishAsync(`${PREFIX}/status`, 'online', { qos: 2, retain: true });
      await client.end();
    },
  });
  h.register(LIGHT);
  const from = h.recorder.messages.length;
  const discovery = await h.startDiscovery();
  await h.handled('the retained birth', (m) => m.topic === `${PREFIX}/status` && m.retain);
  await discovery.settled();
  const end = await h.barrier();
  const published = h.recorder.messages.slice(from, end).filter((m) => m.topic === TOPICS.light);
  t.equal(published.length, 1, 'the light is announced once, by the connect');
});

t.test('a removed entity’s config goes after the grace; one registered again in time stays', async (t) => {
  const h = await harness(t);
  const light = h.register(LIGHT);
  const motion = h.register(MOTION);
  const discovery = await h.startDiscovery();
  await discovery.settled();
  const from = h.recorder.messages.length;

  light.remove();
  motion.remove();
  // A plugin reload: motion comes back at once.
  h.register(MOTION);
  await h.clock.advance(GRACE_MS - 1);
  await discovery.settled();
  t.ok((await retained(h.broker.broker, NODE_FILTER)).get(TOPICS.light), 'still there inside the grace');

  await h.clock.advance(1);
  await discovery.settled();
  const configs = await retained(h.broker.broker, NODE_FILTER);
  t.notOk(configs.has(TOPICS.light), 'the removed entity’s config is gone from the broker');
  t.ok(configs.get(TOPICS.motion), 'the re-registered one is kept');
  const until = await h.barrier();
  const emptied = h.recorder.messages.slice(from, until).filter((m) => m.payload === '' && m.topic.endsWith('/config'));
  t.same(
    emptied.map((m) => m.topic),
    [TOPICS.light],
    'Home Assistant was told to delete only the removed entity',
  );
  t.notOk(discovery.publishedTopics.includes(TOPICS.light));
});

t.test('switching discovery off removes every config; on again brings them back', async (t) => {
  const h = await harness(t);
  h.register(LIGHT);
  h.register(TEMP);
  const discovery = await h.startDiscovery();
  await discovery.settled();
  t.equal((await retained(h.broker.broker, NODE_FILTER)).size, 4);

  h.tc.context.settings.set('discovery', false);
  await discovery.settled();
  t.equal((await retained(h.broker.broker, NODE_FILTER)).size, 0, 'no config left on the broker');
  t.same(discovery.publishedTopics, []);
  // While off, a newly registered entity is not announced.
  h.register(MOTION);
  await discovery.settled();
  t.equal((await retained(h.broker.broker, NODE_FILTER)).size, 0);

  h.tc.context.settings.set('discovery', true);
  await discovery.settled();
  t.same([...(await retained(h.broker.broker, NODE_FILTER)).keys()].sort(), Object.values(TOPICS).sort());
});

t.test('configs of this node nobody publishes any more are swept after the startup grace', async (t) => {
  const node: DiscoveryNode = { node_id: 'pi', name: 'Kitchen Pi', base_topic: 'homeagent', discovery_prefix: PREFIX };
  const ghost = entityDiscovery(infoOf({ domain: 'switch', object_id: 'ghost', name: 'Ghost' }), node);
  const late = entityDiscovery(infoOf({ domain: 'switch', object_id: 'late', name: 'Late' }), node);
  if (ghost === undefined || late === undefined) throw new Error('switches are published');
  const other = { ...ghost, topic: `${PREFIX}/switch/garage/switch_ghost/config` };
  const h = await harness(t, {
    before: async (url) => {
      const client = await record(url, []);
      for (const m of [ghost, late, other]) await client.client.publishAsync(m.topic, JSON.stringify(m.payload), { qos: 2, retain: true });
      await client.end();
    },
  });
  const discovery = await h.startDiscovery();
  await h.handled('the retained late config', (m) => m.topic === late.topic);
  // A plugin starting after MQTT registers its entity inside the grace: its config is its own again.
  h.register({ domain: 'switch', object_id: 'late', name: 'Late', call: async () => {} });
  await h.clock.advance(STALE_MS);
  await discovery.settled();
  const configs = await retained(h.broker.broker, `${PREFIX}/#`);
  t.notOk(configs.has(ghost.topic), 'the leftover of a deleted entity is removed');
  t.ok(configs.get(late.topic), 'the late entity keeps its config');
  t.ok(configs.get(other.topic), 'another node’s configs are not touched');
});

t.test('with discovery off, leftover configs of this node are removed at once', async (t) => {
  const h = await harness(t, {
    discovery: false,
    before: async (url) => {
      const client = await record(url, []);
      await client.client.publishAsync(TOPICS.light, '{"name":"old"}', { qos: 2, retain: true });
      await client.end();
    },
  });
  const discovery = await h.startDiscovery();
  await h.handled('the leftover config', (m) => m.topic === TOPICS.light);
  await discovery.settled();
  t.equal((await retained(h.broker.broker, NODE_FILTER)).size, 0);
});

t.test('the state publisher: retained states, attributes and availability of own entities', async (t) => {
  const h = await harness(t);
  h.register(LIGHT);
  const temp = h.register(TEMP);
  temp.update(21.5, { battery: 90 });
  h.register({ domain: 'sensor', object_id: 'unknown_yet', name: 'Unknown yet' });
  h.tc.context.entities.register({ domain: 'switch', object_id: 'zigbee_plug', name: 'Zigbee plug', initial_state: 'on' });
  const publisher = await h.startPublisher();
  t.equal(publisher.entityCount, 3);
  const topics = await retained(h.broker.broker, 'homeagent/#');
  t.same(Object.fromEntries([...topics].sort()), {
    'homeagent/sensor.living_temperature/attributes': '{"battery":90}',
    'homeagent/sensor.living_temperature/availability': 'online',
    'homeagent/sensor.living_temperature/state': '21.5',
    'homeagent/sensor.unknown_yet/attributes': '{}',
    'homeagent/sensor.unknown_yet/availability': 'online',
    'homeagent/switch.kitchen_light/attributes': '{}',
    'homeagent/switch.kitchen_light/availability': 'online',
    'homeagent/switch.kitchen_light/state': 'off',
  });
  t.notOk(topics.has('homeagent/sensor.unknown_yet/state'), 'an unknown state leaves no retained state');
});

t.test('the state publisher follows changes, in a safe order, coalescing bursts', async (t) => {
  const h = await harness(t);
  const light = h.register(LIGHT);
  const temp = h.register(TEMP);
  await h.startPublisher();
  let from = await h.barrier();

  temp.update(22);
  await h.recorder.waitFor('the new temperature', (m) => m.topic === 'homeagent/sensor.living_temperature/state' && m.payload === '22', {
    from,
  });
  // Inside the interval of the last publish: it waits for the interval's end.
  temp.update(22, { battery: 80 });
  await h.clock.advance(100);
  await h.recorder.waitFor(
    'the new attributes',
    (m) => m.topic === 'homeagent/sensor.living_temperature/attributes' && m.payload === '{"battery":80}',
    {
      from,
    },
  );
  await h.clock.advance(100);

  // Unavailable: "offline" first, so nobody reads "unavailable" as a real state; back: state first.
  from = await h.barrier();
  temp.update('unavailable');
  await h.clock.advance(100);
  temp.update(23);
  let until = await h.barrier();
  const sensorTopics = h.recorder.messages.slice(from, until).filter((m) => m.topic.startsWith('homeagent/sensor.living_temperature/'));
  t.same(
    sensorTopics.map((m) => `${m.topic.split('/')[2]}=${m.payload}`),
    ['availability=offline', 'state=unavailable', 'state=23', 'availability=online'],
  );

  // A flapping input: the first change goes out, the rest wait for the interval, the last one wins.
  await h.clock.advance(100);
  from = await h.barrier();
  for (let i = 0; i < 50; i++) light.update(i % 2 === 0 ? 'on' : 'off');
  light.update('on');
  until = await h.barrier();
  const state = (m: { topic: string }) => m.topic === 'homeagent/switch.kitchen_light/state';
  t.same(
    h.recorder.messages
      .slice(from, until)
      .filter(state)
      .map((m) => m.payload),
    ['on'],
    'one message inside the interval',
  );
  await h.clock.advance(100);
  until = await h.barrier();
  t.same(
    h.recorder.messages
      .slice(from, until)
      .filter(state)
      .map((m) => m.payload),
    ['on'],
    'the burst ended where it started: nothing more to say',
  );
  light.update('off');
  light.update('on');
  light.update('off');
  await h.clock.advance(100);
  until = await h.barrier();
  t.same(
    h.recorder.messages
      .slice(from, until)
      .filter(state)
      .map((m) => m.payload),
    ['on', 'off'],
    'after the interval, only the last state of the burst',
  );
});

t.test('the state publisher clears a removed entity after the grace, not one registered again', async (t) => {
  const h = await harness(t);
  const light = h.register(LIGHT);
  const temp = h.register(TEMP);
  const publisher = await h.startPublisher();
  light.remove();
  temp.remove();
  h.register(TEMP);
  await h.clock.advance(GRACE_MS);
  await publisher.settled();
  const topics = await retained(h.broker.broker, 'homeagent/#');
  t.same(
    [...topics.keys()].filter((k) => k.includes('kitchen_light')),
    [],
    'the removed entity’s state, attributes and availability are cleared',
  );
  t.equal(topics.get('homeagent/sensor.living_temperature/state'), '21.5', 'the re-registered entity keeps its state');
  t.equal(publisher.entityCount, 1);
});

t.test('a reconnect publishes everything again', async (t) => {
  const h = await harness(t);
  h.register(LIGHT);
  const connected: Array<(info: { session_present: boolean }) => void> = [];
  // The test link never reconnects by itself; its onConnect is driven here like the real connection would.
  const link = Object.create(h.link, {
    onConnect: {
      value: (listener: (info: { session_present: boolean }) => void) => {
        connected.push(listener);
        return () => undefined;
      },
    },
  });
  const publisher = new StatePublisher({ link, ctx: h.tc.context, settings: h.settings, counters: emptyCounters(), clock: h.clock });
  await publisher.start();
  t.teardown(() => publisher.stop());
  const from = await h.barrier();
  for (const listener of connected) listener({ session_present: false });
  await h.recorder.waitFor('the state again', (m) => m.topic === 'homeagent/switch.kitchen_light/state' && m.payload === 'off', { from });
  t.pass('re-published');
});

/** An EntityInfo as the registry gives it, for configs of entities the test does not register. */
function infoOf(definition: { domain: EntityDomain; object_id: string; name: string }): EntityInfo {
  return {
    entity_id: `${definition.domain}.${definition.object_id}`,
    domain: definition.domain,
    name: definition.name,
    aliases: [],
    area: null,
    device: null,
    state: null,
    attributes: {},
    unit: null,
    device_class: null,
    last_changed: 0,
    last_updated: 0,
    owner: GPIO,
    critical: false,
    services: [...DOMAIN_SERVICES[definition.domain]],
    entity_category: null,
    state_class: null,
  };
}

t.test('a node id that cannot be a topic level is refused at start, naming the setting', async (t) => {
  const h = await harness(t);
  for (const nodeId of ['', 'Kitchen Pi', 'a/b', 'x'.repeat(65)]) {
    const discovery = new HaDiscovery({
      link: h.link,
      ctx: h.tc.context,
      settings: () => ({ ...h.settings(), node_id: nodeId }),
      counters: emptyCounters(),
    });
    const error = await discovery.start().catch((e: unknown) => e);
    t.ok(isHomeAgentError(error, 'HA_ERR_CONFIG_INVALID'), JSON.stringify(nodeId));
    t.match(String((error as Error).message), /plugin\.mqtt\.node_id/);
  }
  t.equal((await retained(h.broker.broker, `${PREFIX}/#`)).size, 0, 'nothing was published');
});
