// Multi-room: two HomeAgent nodes on one broker (aedes in-process). The satellite "garage" announces
// its entities (HaDiscovery), publishes their states (StatePublisher) and takes commands
// (outbound.ts); the main node sees them as remote entities (RemoteNodes), switches them, and
// follows their availability and removal.
import { join } from 'node:path';
import mqtt from 'mqtt';
import t, { type Test } from 'tap';
import { HaDiscovery } from '../../../../plugins/mqtt/ha-discovery.js';
import { Outbound } from '../../../../plugins/mqtt/outbound.js';
import { RemoteNodes } from '../../../../plugins/mqtt/remote-nodes.js';
import { StatePublisher } from '../../../../plugins/mqtt/state-publisher.js';
import { emptyCounters, type MqttLink } from '../../../../plugins/mqtt/types.js';
import type { EntityHandle, EntityInfo } from '../../../../src/sdk/index.js';
import { isHomeAgentError } from '../../../../src/shared/errors.js';
import { ManualTimerClock } from '../../../helpers/manual-timer-clock.js';
import { connectTestLink, startTestBroker } from '../../../helpers/mqtt-test-broker.js';
import { createTestPluginContext, type TestPluginContext } from '../../../helpers/plugin-context.js';
import { untilEntities } from './mqtt-test-kit.js';

const PREFIX = 'homeassistant';
const SATELLITE_BASE = 'homeagent/garage';
const REMOTE_IDS = ['binary_sensor.garage_motion', 'light.garage_lamp', 'sensor.garage_temperature', 'switch.garage_door_relay'];

/** Resolves when `check` holds, re-checked at every entity event of the context; fails after the deadline. */
function until(tc: TestPluginContext, what: string, check: () => boolean): Promise<void> {
  return untilEntities(tc.events, check, what);
}

function find(tc: TestPluginContext, entityId: string): EntityInfo | undefined {
  return tc.entities.list().find((e) => e.entity_id === entityId);
}

async function twoNodes(t: Test) {
  const broker = await startTestBroker();
  const dir = t.testdir();
  const stops: Array<() => Promise<void>> = [];
  const ends: Array<() => Promise<void>> = [];
  t.teardown(async () => {
    for (const stop of stops.reverse()) await stop();
    for (const end of ends) await end();
    await broker.close();
  });

  // ---- the satellite ----
  const satClock = new ManualTimerClock();
  const sat = createTestPluginContext({ name: 'mqtt', dataDir: join(dir, 'satellite'), settings: { discovery: true } });
  ends.push(() => sat.close());
  const satLink = await connectTestLink(broker.url);
  ends.unshift(() => satLink.end());
  const handles = new Map<string, EntityHandle>();
  const relay: EntityHandle = sat.entities.register('plugin:gpio', {
    domain: 'switch',
    object_id: 'door_relay',
    name: 'Door relay',
    area: 'Garage',
    initial_state: 'off',
    call: async (service) => relay.update(service === 'turn_on' ? 'on' : service === 'turn_off' ? 'off' : flip()),
  });
  const flip = () => (find(sat, 'switch.door_relay')?.state === 'on' ? 'off' : 'on');
  const lamp: EntityHandle = sat.entities.register('plugin:gpio', {
    domain: 'light',
    object_id: 'lamp',
    name: 'Lamp',
    area: 'Garage',
    initial_state: 'off',
    attributes: { brightness: 0 },
    call: async (service, data) =>
      lamp.update(service === 'turn_off' ? 'off' : 'on', { brightness: service === 'turn_off' ? 0 : ((data.brightness as number) ?? 255) }),
  });
  handles.set('switch.door_relay', relay);
  handles.set('light.lamp', lamp);
  handles.set(
    'sensor.temperature',
    sat.entities.register('plugin:i2c', {
      domain: 'sensor',
      object_id: 'temperature',
      name: 'Temperature',
      unit: '°C',
      initial_state: 21.5,
    }),
  );
  handles.set(
    'binary_sensor.motion',
    sat.entities.register('plugin:gpio', {
      domain: 'binary_sensor',
      object_id: 'motion',
      name: 'Motion',
      device_class: 'motion',
      // Its category makes the round trip through discovery (as the temperature's state class does).
      entity_category: 'diagnostic',
      initial_state: 'off',
    }),
  );
  const satSettings = () => ({
    discovery: true,
    discovery_prefix: PREFIX,
    node_id: 'garage',
    node_name: 'Garage Pi',
    base_topic: SATELLITE_BASE,
    publish_qos: 1 as const,
    publish_allow: [`${SATELLITE_BASE}/notes/#`],
    max_payload_bytes: 65536,
    notify_rate_per_minute: 20,
    command_rate_per_minute: 120,
  });
  // What the satellite's connection does: "online" on <base>/status, retained (its last will says "offline").
  await satLink.publish(`${SATELLITE_BASE}/status`, 'online', { qos: 1, retain: true });
  const outbound = new Outbound({ link: satLink, ctx: sat.context, settings: satSettings, counters: emptyCounters() });
  const publisher = new StatePublisher({
    link: satLink,
    ctx: sat.context,
    settings: satSettings,
    counters: emptyCounters(),
    clock: satClock,
  });
  const discovery = new HaDiscovery({ link: satLink, ctx: sat.context, settings: satSettings, counters: emptyCounters(), clock: satClock });
  for (const feature of [outbound, publisher, discovery]) {
    await feature.start();
    stops.push(() => feature.stop());
  }

  // ---- the main node ----
  const main = createTestPluginContext({ name: 'mqtt', dataDir: join(dir, 'main'), settings: { remote_nodes: true } });
  ends.push(() => main.close());
  main.entities.register('plugin:gpio', {
    domain: 'switch',
    object_id: 'kitchen_light',
    name: 'Kitchen light',
    initial_state: 'off',
    call: async () => {},
  });
  const mainPlain = await connectTestLink(broker.url);
  ends.unshift(() => mainPlain.end());
  let mainConnected = true;
  const mainLink: MqttLink = {
    get connected() {
      return mainConnected && mainPlain.connected;
    },
    publish: (topic, payload, options) => mainPlain.publish(topic, payload, options),
    subscribe: (filter, qos, handler) => mainPlain.subscribe(filter, qos, handler),
    onConnect: (listener) => mainPlain.onConnect(listener),
  };
  const mainCounters = emptyCounters();
  const mainSettings = () => ({
    remote_nodes: main.settings.get('remote_nodes') as boolean,
    discovery: true,
    discovery_prefix: PREFIX,
    node_id: 'main',
    node_name: 'Main Pi',
    base_topic: 'homeagent/main',
    publish_qos: 1 as const,
  });
  const mainDiscovery = new HaDiscovery({ link: mainLink, ctx: main.context, settings: mainSettings, counters: emptyCounters() });
  const remote = new RemoteNodes({ link: mainLink, ctx: main.context, settings: mainSettings, counters: mainCounters });
  for (const feature of [mainDiscovery, remote]) {
    await feature.start();
    stops.push(() => feature.stop());
  }
  const publisherClient = await mqtt.connectAsync(broker.url, { reconnectPeriod: 0 });
  ends.unshift(() => publisherClient.endAsync());

  const remoteIds = () =>
    main.entities
      .list({ owner: 'plugin:mqtt' })
      .map((e) => e.entity_id)
      .sort();
  await until(main, 'the satellite’s entities on the main node', () => REMOTE_IDS.every((id) => remoteIds().includes(id)));
  return {
    sat,
    satClock,
    handles,
    main,
    remote,
    mainCounters,
    remoteIds,
    publisherClient,
    setMainConnected: (value: boolean) => {
      mainConnected = value;
    },
  };
}

t.test('a satellite’s entities appear on the main node, with names, areas and states', async (t) => {
  const n = await twoNodes(t);
  t.same(n.remoteIds(), REMOTE_IDS, 'the agent’s notify and last-reply entities and the main node’s own are not imported');
  await until(n.main, 'the temperature', () => find(n.main, 'sensor.garage_temperature')?.state === 21.5);
  t.match(find(n.main, 'switch.garage_door_relay'), {
    name: 'Door relay',
    area: 'garage',
    state: 'off',
    critical: false,
    services: ['turn_on', 'turn_off', 'toggle'],
  });
  t.match(find(n.main, 'sensor.garage_temperature'), { name: 'Temperature', unit: '°C', state: 21.5, services: [] });
  t.equal(typeof find(n.main, 'sensor.garage_temperature')?.state, 'number', 'a sensor’s state is a number again');
  t.match(find(n.main, 'binary_sensor.garage_motion'), { device_class: 'motion', state: 'off', entity_category: 'diagnostic' });
  t.match(find(n.main, 'sensor.garage_temperature'), { state_class: 'measurement', entity_category: null });
  t.match(find(n.main, 'switch.garage_door_relay'), { state_class: null }, 'only sensors carry a state class');
  t.same(n.remote.status(), { nodes: { garage: 4 } });
});

t.test('a call on the main node switches the satellite’s entity, and its state comes back', async (t) => {
  const n = await twoNodes(t);
  await n.main.context.entities.call('switch.garage_door_relay', 'turn_on');
  await until(n.sat, 'the satellite’s relay on', () => find(n.sat, 'switch.door_relay')?.state === 'on');
  await until(n.main, 'the remote relay on', () => find(n.main, 'switch.garage_door_relay')?.state === 'on');
  await n.main.context.entities.call('switch.garage_door_relay', 'toggle');
  await until(n.sat, 'the satellite’s relay toggled off', () => find(n.sat, 'switch.door_relay')?.state === 'off');
  // Inside the satellite's publish interval for the relay: its change goes out at the interval's end.
  await n.satClock.advance(100);
  await until(n.main, 'the remote relay toggled off', () => find(n.main, 'switch.garage_door_relay')?.state === 'off');
  t.equal(find(n.sat, 'switch.door_relay')?.state, 'off');

  // Data travels as {"service", "data"}; the attributes come back through the attributes topic.
  await n.main.context.entities.call('light.garage_lamp', 'turn_on', { brightness: 120 });
  await until(n.main, 'the remote lamp at 120', () => find(n.main, 'light.garage_lamp')?.attributes.brightness === 120);
  t.match(find(n.sat, 'light.lamp'), { state: 'on', attributes: { brightness: 120 } });
  t.equal(find(n.main, 'light.garage_lamp')?.state, 'on');
});

t.test('availability: an entity or the whole satellite unavailable, then back', async (t) => {
  const n = await twoNodes(t);
  n.handles.get('sensor.temperature')?.update('unavailable');
  await until(n.main, 'the remote sensor unavailable', () => find(n.main, 'sensor.garage_temperature')?.state === 'unavailable');
  n.handles.get('sensor.temperature')?.update(19.5);
  await n.satClock.advance(100);
  await until(n.main, 'the remote sensor back', () => find(n.main, 'sensor.garage_temperature')?.state === 19.5);

  // The satellite's last will: every entity of it becomes unavailable, and calls are refused.
  await n.publisherClient.publishAsync(`${SATELLITE_BASE}/status`, 'offline', { qos: 1, retain: true });
  await until(n.main, 'every remote entity unavailable', () => REMOTE_IDS.every((id) => find(n.main, id)?.state === 'unavailable'));
  const refused = await n.main.context.entities.call('switch.garage_door_relay', 'turn_on').catch((error: unknown) => error);
  t.ok(isHomeAgentError(refused, 'HA_ERR_ENTITY_UNAVAILABLE'), 'a call to an offline satellite is refused');
  t.equal(find(n.main, 'switch.garage_door_relay')?.state, 'unavailable', 'the main node’s own entities are unaffected');
  t.equal(find(n.main, 'switch.kitchen_light')?.state, 'off');

  await n.publisherClient.publishAsync(`${SATELLITE_BASE}/status`, 'online', { qos: 1, retain: true });
  await until(
    n.main,
    'the last states again',
    () => find(n.main, 'switch.garage_door_relay')?.state === 'off' && find(n.main, 'sensor.garage_temperature')?.state === 19.5,
  );
  t.pass('back with the states it had');
});

t.test('an entity removed on the satellite leaves the main node after the grace', async (t) => {
  const n = await twoNodes(t);
  n.handles.get('binary_sensor.motion')?.remove();
  await n.satClock.advance(4999);
  t.ok(find(n.main, 'binary_sensor.garage_motion'), 'still there inside the grace');
  await n.satClock.advance(1);
  await until(n.main, 'the remote motion sensor removed', () => find(n.main, 'binary_sensor.garage_motion') === undefined);
  t.same(n.remote.status(), { nodes: { garage: 3 } });
});

t.test('no command is queued while the broker is away', async (t) => {
  const n = await twoNodes(t);
  n.setMainConnected(false);
  const refused = await n.main.context.entities.call('switch.garage_door_relay', 'turn_on').catch((error: unknown) => error);
  t.ok(isHomeAgentError(refused, 'HA_ERR_MQTT_UNAVAILABLE'), 'refused with HA_ERR_MQTT_UNAVAILABLE');
  t.match(String((refused as Error).message), /turn_on was not sent/);
  n.setMainConnected(true);
  await n.main.context.entities.call('switch.garage_door_relay', 'turn_on');
  await until(n.main, 'the relay on', () => find(n.main, 'switch.garage_door_relay')?.state === 'on');
  t.pass('sent once the broker is back');
});

t.test('configs that are the same again, not HomeAgent’s, malformed or unusable change nothing', async (t) => {
  const n = await twoNodes(t);
  const registered: string[] = [];
  n.main.events.on('test', 'entity.registered', (e) => void registered.push(e.entity_id));
  const publish = (topic: string, payload: string) => n.publisherClient.publishAsync(topic, payload, { qos: 1, retain: false });
  const relayTopic = `${PREFIX}/switch/garage/switch_door_relay/config`;
  const relayConfig = await new Promise<string>((resolve) => {
    n.publisherClient.subscribe(relayTopic);
    n.publisherClient.once('message', (_topic, payload) => resolve(payload.toString('utf8')));
  });
  // A satellite reconnecting sends the same config again.
  await publish(relayTopic, relayConfig);
  // Zigbee2MQTT's (or anyone else's) discovery on the same prefix.
  await publish(
    `${PREFIX}/switch/0x00124b/switch/config`,
    JSON.stringify({ name: 'Plug', command_topic: 'z/set', device: { manufacturer: 'IKEA' } }),
  );
  await publish(`${PREFIX}/switch/attic/switch_fan/config`, '{not json');
  const long = JSON.parse(relayConfig) as Record<string, unknown>;
  await publish(`${PREFIX}/switch/attic/switch_${'x'.repeat(60)}/config`, JSON.stringify(long));
  await publish(`${PREFIX}/sensor/attic/agent_last_reply/config`, JSON.stringify({ ...long, state_topic: 'a/b' }));
  // A domain HomeAgent's discovery does not publish: no config could describe it, so none is taken.
  await publish(`${PREFIX}/climate/attic/climate_heating/config`, JSON.stringify({ ...long, name: 'Heating' }));
  // A marker that does register: everything published before it was handled.
  await publish(`${PREFIX}/sensor/attic/sensor_marker/config`, JSON.stringify({ ...long, name: 'Marker', command_topic: undefined }));
  await until(n.main, 'the marker entity', () => find(n.main, 'sensor.attic_marker') !== undefined);
  t.same(registered, ['sensor.attic_marker'], 'nothing else was registered or registered again');
  t.equal(n.mainCounters.malformed, 1, 'the config that is not JSON is counted');
  t.same(find(n.main, 'sensor.attic_marker')?.services, [], 'without a command topic it only reports');

  // Switching remote nodes off removes them; on again brings them back from the retained configs.
  n.main.context.settings.set('remote_nodes', false);
  t.same(n.remoteIds(), []);
  n.main.context.settings.set('remote_nodes', true);
  await until(n.main, 'the remote entities again', () => REMOTE_IDS.every((id) => n.remoteIds().includes(id)));
});
