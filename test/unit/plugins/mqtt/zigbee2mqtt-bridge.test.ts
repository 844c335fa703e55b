// The Zigbee2MQTT bridge against a real broker (aedes in-process) and a fake Zigbee2MQTT: a plain
// client that publishes the retained device list, states and availability, and answers each /set
// with the new state as Z2M does. The bridge's entities live in a real entity registry. Every wait
// is for a message or a registry event, with a deadline.
import { readFileSync } from 'node:fs';
import t, { type Test } from 'tap';
import { emptyCounters, type MqttCounters, type MqttLink } from '../../../../plugins/mqtt/types.js';
import { parseOnline, Zigbee2MqttBridge } from '../../../../plugins/mqtt/zigbee2mqtt-bridge.js';
import type { EventMap } from '../../../../src/events/event-bus.js';
import { connectTestLink, startTestBroker } from '../../../helpers/mqtt-test-broker.js';
import { createTestPluginContext, type TestPluginContext } from '../../../helpers/plugin-context.js';
import { expectErrorAsync } from '../../fixtures/support.js';
import { subscriptionsTaken, untilEntities, withDeadline } from './mqtt-test-kit.js';

const FIXTURES = new URL('./fixtures/', import.meta.url);
const DEVICES = JSON.parse(readFileSync(new URL('z2m-bridge-devices.json', FIXTURES), 'utf8')) as Array<Record<string, unknown>>;
const STATES = JSON.parse(readFileSync(new URL('z2m-states.json', FIXTURES), 'utf8')) as Record<string, Record<string, unknown>>;
const BASE = 'zigbee2mqtt';
const OWNER = 'plugin:mqtt';

type TestLink = Awaited<ReturnType<typeof connectTestLink>>;

/** Zigbee2MQTT as far as the bridge can tell: device list, states, availability, answers to /set. */
class FakeZigbee2Mqtt {
  readonly commands: Array<{ name: string; command: Record<string, unknown> }> = [];
  /** Devices that take commands without answering (a sleepy lock). */
  readonly silent = new Set<string>();
  readonly #states = new Map<string, Record<string, unknown>>();
  readonly #commandWaiters: Array<(c: { name: string; command: Record<string, unknown> }) => void> = [];

  constructor(readonly link: TestLink) {
    link.subscribe(`${BASE}/#`, 1, (message) => {
      if (!message.topic.endsWith('/set')) return;
      const name = message.topic.slice(BASE.length + 1, -'/set'.length);
      const command = JSON.parse(message.payload.toString('utf8')) as Record<string, unknown>;
      this.commands.push({ name, command });
      this.#commandWaiters.shift()?.({ name, command });
      if (this.silent.has(name)) return;
      const state = { ...this.#states.get(name) };
      for (const [key, value] of Object.entries(command)) state[key] = value === 'TOGGLE' ? (state[key] === 'ON' ? 'OFF' : 'ON') : value;
      void this.state(name, state);
    });
  }

  nextCommand(): Promise<{ name: string; command: Record<string, unknown> }> {
    return withDeadline(new Promise((resolve) => this.#commandWaiters.push(resolve)), 'a /set command');
  }

  devices(list: unknown[] = DEVICES): Promise<void> {
    return this.link.publish(`${BASE}/bridge/devices`, JSON.stringify(list), { qos: 1, retain: true });
  }

  /** Publishes a device's state (merged into what it said before, as Z2M's state cache does). */
  state(name: string, update: Record<string, unknown>): Promise<void> {
    const state = { ...this.#states.get(name), ...update };
    this.#states.set(name, state);
    return this.link.publish(`${BASE}/${name}`, JSON.stringify(state), { qos: 1 });
  }

  availability(name: string, state: 'online' | 'offline', legacy = false): Promise<void> {
    return this.link.publish(`${BASE}/${name}/availability`, legacy ? state : JSON.stringify({ state }), { qos: 1, retain: true });
  }

  bridge(state: 'online' | 'offline'): Promise<void> {
    return this.link.publish(`${BASE}/bridge/state`, JSON.stringify({ state }), { qos: 1, retain: true });
  }

  raw(topic: string, payload: string): Promise<void> {
    return this.link.publish(`${BASE}/${topic}`, payload, { qos: 1 });
  }
}

interface Setup {
  tc: TestPluginContext;
  bridge: Zigbee2MqttBridge;
  counters: MqttCounters;
  z2m: FakeZigbee2Mqtt;
  link: TestLink;
  changes: Array<EventMap['entity.state_changed']>;
  /** Resolves once `check` holds, re-checked on every entity event. */
  until(check: () => boolean, what: string): Promise<void>;
  state(entityId: string): unknown;
}

async function setup(
  t: Test,
  options: { before?: (z2m: FakeZigbee2Mqtt) => Promise<void>; devices?: boolean; confirmTimeoutMs?: number } = {},
): Promise<Setup> {
  const broker = await startTestBroker();
  const z2mLink = await connectTestLink(broker.url, `z2m-${Math.random().toString(16).slice(2)}`);
  const z2m = new FakeZigbee2Mqtt(z2mLink);
  await subscriptionsTaken(z2mLink.client);
  await z2m.bridge('online');
  if (options.devices !== false) await z2m.devices();
  await options.before?.(z2m);
  const link = await connectTestLink(broker.url);
  const tc = createTestPluginContext({ name: 'mqtt', dataDir: t.testdir() });
  const counters = emptyCounters();
  const bridge = new Zigbee2MqttBridge({
    link: link as MqttLink,
    ctx: tc.context,
    settings: () => ({ zigbee2mqtt_base_topic: `${BASE}/` }),
    counters,
    ...(options.confirmTimeoutMs === undefined ? {} : { confirmTimeoutMs: options.confirmTimeoutMs }),
  });
  const changes: Array<EventMap['entity.state_changed']> = [];
  tc.events.on('test', 'entity.state_changed', (event) => void changes.push(event));
  t.teardown(async () => {
    await bridge.stop();
    if (link.connected) await link.end();
    await z2mLink.end();
    await tc.close();
    await broker.close();
  });
  await bridge.start();
  await subscriptionsTaken(link.client);
  const until = (check: () => boolean, what: string) => untilEntities(tc.events, check, what);
  return { tc, bridge, counters, z2m, link, changes, until, state: (id) => tc.entities.find(id)?.state };
}

/** Entities appear for the retained list; the test then waits for one of them. */
async function ready(s: Setup): Promise<void> {
  await s.until(() => s.tc.entities.find('sensor.bedside_button_action') !== undefined, 'the fixture devices');
}

t.test('the retained device list becomes entities, and states follow the state messages', async (t) => {
  const s = await setup(t);
  await ready(s);
  const ids = s.tc.entities.list({ owner: OWNER }).map((e) => e.entity_id);
  t.equal(ids.length, 34, 'every entity of the fixture');
  t.ok(ids.includes('light.living_room_ceiling') && ids.includes('switch.hall_switch_l2') && ids.includes('cover.bedroom_blind'));
  t.match(s.bridge.status(), {
    bridge: 'online',
    devices: 8,
    entities: 34,
    skipped: [
      { friendly_name: '0x00169a00022256da', reason: 'Zigbee2MQTT does not support it' },
      { friendly_name: 'Garage sensor', reason: 'it is disabled in Zigbee2MQTT' },
      { friendly_name: '0x54ef44100076e3f1', reason: 'its interview has not completed' },
    ],
  });
  const light = s.tc.entities.find('light.living_room_ceiling');
  t.match(light, { name: 'ceiling', area: 'living_room', device: '0x8c8b48fffe23f09e', state: null, owner: OWNER });
  t.equal(s.tc.entities.find('living room ceiling')?.entity_id, 'light.living_room_ceiling', 'found by area and name');

  for (const [name, state] of Object.entries(STATES)) await s.z2m.state(name, state);
  await s.until(() => s.state('sensor.bedside_button_action') === 'single', 'the last fixture state');
  t.equal(s.state('light.living_room_ceiling'), 'on');
  t.match(s.tc.entities.find('light.living_room_ceiling')?.attributes, { brightness: 255, color_temp: 370 });
  t.equal(s.state('binary_sensor.front_door_contact'), 'off', 'contact: true is a closed door');
  t.equal(s.state('sensor.bathroom_climate_temperature'), 21.37);
  t.equal(s.state('switch.hall_switch_l1'), 'off');
  t.equal(s.state('switch.hall_switch_l2'), 'on');
  t.equal(s.state('lock.back_door_lock'), 'locked');
  t.equal(s.state('cover.bedroom_blind'), 'open');
  t.equal(s.state('binary_sensor.hallway_motion_occupancy'), 'on');

  await s.z2m.state('Front door', { contact: false });
  await s.until(() => s.state('binary_sensor.front_door_contact') === 'on', 'the door to open');
  t.equal(s.state('sensor.front_door_battery'), 100, 'properties absent from a message keep their state');
  t.equal(s.counters.malformed, 0);
});

t.test('a switch call publishes the right /set JSON and resolves with the state Z2M answers', async (t) => {
  const s = await setup(t);
  await ready(s);
  await s.z2m.state('Hall switch', STATES['Hall switch'] ?? {});
  await s.until(() => s.state('switch.hall_switch_l1') === 'off', 'the switch state');

  const command = s.z2m.nextCommand();
  const after = await s.tc.context.entities.call('switch.hall_switch_l1', 'turn_on');
  t.strictSame(await command, { name: 'Hall switch', command: { state_l1: 'ON' } });
  t.equal(after.state, 'on', 'the call waits for the device to confirm');
  const change = s.changes.find((c) => c.entity_id === 'switch.hall_switch_l1' && c.new_state === 'on');
  t.strictSame(change?.context, { actor: OWNER }, "the confirmed state carries the caller's context");
  t.equal(s.state('switch.hall_switch_l2'), 'on', 'the other gang is untouched');

  await s.tc.context.entities.call('switch.hall_switch_l2', 'toggle');
  t.strictSame(s.z2m.commands.at(-1), { name: 'Hall switch', command: { state_l2: 'TOGGLE' } });
  t.equal(s.state('switch.hall_switch_l2'), 'off');
});

t.test('a light with / in its name: brightness scaled on the way out and in', async (t) => {
  const s = await setup(t);
  await ready(s);
  await s.z2m.state('living_room/ceiling', { state: 'OFF', brightness: 10 });
  await s.until(() => s.state('light.living_room_ceiling') === 'off', 'the light state');

  const after = await s.tc.context.entities.call('light.living_room_ceiling', 'turn_on', { brightness: 128 });
  t.strictSame(
    s.z2m.commands.at(-1),
    { name: 'living_room/ceiling', command: { state: 'ON', brightness: 127 } },
    'sent to <z2m>/living_room/ceiling/set',
  );
  t.equal(after.state, 'on');
  t.equal(after.attributes.brightness, 128, 'Z2M 127 is HomeAgent 128 again');

  await s.z2m.availability('living_room/ceiling', 'offline');
  await s.until(() => s.state('light.living_room_ceiling') === 'unavailable', 'availability of a name with /');
});

t.test('availability offline makes the device unavailable; online restores its last state', async (t) => {
  const s = await setup(t);
  await ready(s);
  await s.z2m.state('Back door lock', STATES['Back door lock'] ?? {});
  await s.until(() => s.state('lock.back_door_lock') === 'locked', 'the lock state');

  await s.z2m.availability('Back door lock', 'offline');
  await s.until(() => s.state('lock.back_door_lock') === 'unavailable', 'the lock to go unavailable');
  t.equal(s.state('sensor.back_door_lock_battery'), 'unavailable', 'every entity of the device');
  t.equal(s.state('switch.hall_switch_l1'), null, 'other devices are not touched');
  await expectErrorAsync(t, () => s.tc.context.entities.call('lock.back_door_lock', 'unlock'), 'HA_ERR_ENTITY_UNAVAILABLE');
  t.equal(s.z2m.commands.length, 0, 'no command reached Z2M');

  // A report while offline is kept, and shown once the device is back.
  await s.z2m.state('Back door lock', { battery: 50 });
  await s.z2m.availability('Back door lock', 'online', true);
  await s.until(() => s.state('lock.back_door_lock') === 'locked', 'the lock to come back (legacy plain payload)');
  t.equal(s.state('sensor.back_door_lock_battery'), 50);
});

t.test('the bridge going offline makes every device unavailable until it is back', async (t) => {
  const s = await setup(t);
  await ready(s);
  await s.z2m.state('Hall switch', { state_l1: 'ON', state_l2: 'OFF' });
  await s.until(() => s.state('switch.hall_switch_l1') === 'on', 'the switch state');
  await s.z2m.availability('Front door', 'offline');
  await s.until(() => s.state('binary_sensor.front_door_contact') === 'unavailable', 'the door sensor to go unavailable');

  await s.z2m.bridge('offline');
  await s.until(() => s.tc.entities.list({ owner: OWNER }).every((e) => e.state === 'unavailable'), 'every entity unavailable');
  t.equal(s.bridge.status().bridge, 'offline');

  await s.z2m.bridge('online');
  await s.until(() => s.state('switch.hall_switch_l1') === 'on', 'the switch back');
  t.equal(s.state('switch.hall_switch_l2'), 'off');
  t.equal(s.state('binary_sensor.front_door_contact'), 'unavailable', 'a device offline on its own stays so');
});

t.test('retained availability that arrives before the device list is applied when the list names the device', async (t) => {
  const s = await setup(t, {
    devices: false,
    before: async (z2m) => {
      await z2m.availability('Front door', 'offline');
    },
  });
  await subscriptionsTaken(s.z2m.link.client);
  await s.z2m.devices();
  await ready(s);
  t.equal(s.state('binary_sensor.front_door_contact'), 'unavailable');
  t.equal(s.state('sensor.hallway_motion_battery'), null);
});

t.test('a device leaving the list loses its entities; a renamed device gets new ids and keeps its state', async (t) => {
  const s = await setup(t);
  await ready(s);
  await s.z2m.state('Hallway motion', STATES['Hallway motion'] ?? {});
  await s.until(() => s.state('binary_sensor.hallway_motion_occupancy') === 'on', 'the motion state');

  const without = DEVICES.filter((d) => d.friendly_name !== 'Bedside button');
  const renamed = without.map((d) => (d.friendly_name === 'Hallway motion' ? { ...d, friendly_name: 'hall/motion' } : d));
  await s.z2m.devices(renamed);
  await s.until(() => s.tc.entities.find('sensor.bedside_button_action') === undefined, 'the button to leave');
  t.notOk(
    s.tc.entities.list({ owner: OWNER }).some((e) => e.entity_id.startsWith('sensor.bedside_button')),
    'all of its entities',
  );
  t.equal(s.tc.entities.find('binary_sensor.hallway_motion_occupancy'), undefined, 'the old id is gone');
  t.match(s.tc.entities.find('binary_sensor.hall_motion_occupancy'), { state: 'on', area: 'hall', name: 'motion Occupancy' });
  t.equal(s.state('sensor.hall_motion_illuminance'), 41);

  await s.z2m.state('hall/motion', { occupancy: false });
  await s.until(() => s.state('binary_sensor.hall_motion_occupancy') === 'off', 'a state under the new name');
  t.equal(s.bridge.status().devices, 7);
});

t.test('malformed payloads are counted and logged, never fatal', async (t) => {
  const s = await setup(t);
  await ready(s);
  await s.z2m.raw('Front door', '{"contact": tru');
  await s.z2m.raw('Front door', '[1, 2]');
  await s.z2m.raw('Front door/availability', 'sleepy');
  await s.z2m.raw('bridge/state', '{"state": 42}');
  await s.z2m.raw('bridge/devices', '{"not": "a list"}');
  await s.z2m.raw('bridge/devices', 'not json');
  // Not counted: unknown names (groups, attribute topics), cleared retained messages, other bridge topics.
  await s.z2m.raw('Front door/contact', 'false');
  await s.z2m.raw('Living room group', 'ON');
  await s.z2m.raw('Front door', '');
  await s.z2m.raw('bridge/logging', 'not json either');
  await s.z2m.state('Front door', { contact: false });
  await s.until(() => s.state('binary_sensor.front_door_contact') === 'on', 'a good message after the bad ones');
  t.equal(s.counters.malformed, 6);
  t.equal(s.tc.entities.list({ owner: OWNER }).length, 34, 'a bad device list keeps the entities');

  // A list with an unreadable entry still takes the rest.
  await s.z2m.devices([{ friendly_name: 'no address' }, ...DEVICES.filter((d) => d.friendly_name !== 'Front door')]);
  await s.until(() => s.tc.entities.find('binary_sensor.front_door_contact') === undefined, 'the list without the door');
  t.equal(s.counters.malformed, 7);
});

t.test('a repeated button action reaches state triggers each time', async (t) => {
  const s = await setup(t);
  await ready(s);
  const presses = () => s.changes.filter((c) => c.entity_id === 'sensor.bedside_button_action' && c.new_state === 'single').length;
  await s.z2m.state('Bedside button', { action: 'single' });
  await s.until(() => presses() === 1, 'the first press');
  await s.z2m.state('Bedside button', { action: 'single' });
  await s.until(() => presses() === 2, 'the second press');
  t.equal(s.state('sensor.bedside_button_action'), 'single', 'the entity holds the last action');
  await s.z2m.state('Bedside button', { action: 'double', battery: 99 });
  await s.until(() => s.state('sensor.bedside_button_action') === 'double', 'another action');
  t.equal(
    s.changes.filter((c) => c.entity_id === 'sensor.bedside_button_action' && c.new_state === null).length,
    1,
    'only the repeat passed through null',
  );
});

t.test('a call resolves when the device does not answer, and is refused while the broker is away', async (t) => {
  const s = await setup(t, { confirmTimeoutMs: 50 });
  await ready(s);
  s.z2m.silent.add('bedroom/blind');
  const after = await s.tc.context.entities.call('cover.bedroom_blind', 'set_position', { position: 40 });
  t.strictSame(s.z2m.commands.at(-1), { name: 'bedroom/blind', command: { position: 40 } });
  t.equal(after.state, null, 'no answer: the state is what the device last said');

  await s.link.end();
  await expectErrorAsync(t, () => s.tc.context.entities.call('switch.hall_switch_l1', 'turn_on'), 'HA_ERR_MQTT_UNAVAILABLE');
  t.equal(s.z2m.commands.length, 1, 'nothing was queued for later');
});

t.test('stop removes the entities and stops following Zigbee2MQTT', async (t) => {
  const s = await setup(t);
  await ready(s);
  await s.bridge.stop();
  t.equal(s.tc.entities.list({ owner: OWNER }).length, 0);
  t.match(s.bridge.status(), { bridge: 'unknown', devices: 0, entities: 0 });
  await s.bridge.start();
  await ready(s);
  t.equal(s.tc.entities.list({ owner: OWNER }).length, 34, 'a restart takes the retained list again');
});

t.test('parseOnline reads both availability formats', async (t) => {
  t.equal(parseOnline('online'), true);
  t.equal(parseOnline(' offline\n'), false);
  t.equal(parseOnline('{"state":"online"}'), true);
  t.equal(parseOnline('{"state":"offline"}'), false);
  t.equal(parseOnline('{"state":"maybe"}'), undefined);
  t.equal(parseOnline('{"state":'), undefined);
  t.equal(parseOnline('[]'), undefined);
  t.equal(parseOnline('ONLINE'), undefined);
});
