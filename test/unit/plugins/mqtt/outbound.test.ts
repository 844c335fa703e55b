// Outbound MQTT against a real broker (aedes in-process): the output channel, mqtt_publish, command
// topics driving entities of a fake "gpio" owner, and the agent's notify topic. The plugin side is a
// test link, "the house" (Home Assistant, a person with mosquitto_pub) another plain client.
import type { MqttClient } from 'mqtt';
import t, { type Test } from 'tap';
import { Outbound, type OutboundSettings, parseCommand } from '../../../../plugins/mqtt/outbound.js';
import { topicMatches } from '../../../../plugins/mqtt/topics.js';
import { emptyCounters, type MqttCounters, type MqttMessage } from '../../../../plugins/mqtt/types.js';
import type { EntityHandle } from '../../../../src/home/types.js';
import { CAPABILITY, type OutputEvent } from '../../../../src/io/types.js';
import { ToolError, type ToolErrorInfo } from '../../../../src/shared/tool.js';
import { connectTestLink, startTestBroker } from '../../../helpers/mqtt-test-broker.js';
import { createTestPluginContext, type TestPluginContext } from '../../../helpers/plugin-context.js';
import { expectErrorAsync } from '../../fixtures/support.js';
import { subscriptionsTaken, withDeadline } from './mqtt-test-kit.js';

const BASE = 'homeagent';

interface Heard {
  topic: string;
  payload: string;
  retain: boolean;
}

/** Subscribes a raw client to `filter` (acknowledged before it resolves) and records what arrives. */
async function listen(client: MqttClient, filter: string) {
  const heard: Heard[] = [];
  const waiters: Array<{ topic: string; resolve: (h: Heard) => void }> = [];
  client.on('message', (topic, payload, packet) => {
    if (!topicMatches(filter, topic)) return;
    const entry = { topic, payload: payload.toString(), retain: packet.retain };
    heard.push(entry);
    const i = waiters.findIndex((w) => w.topic === topic);
    if (i >= 0) waiters.splice(i, 1)[0]?.resolve(entry);
  });
  await client.subscribeAsync(filter, { qos: 1 });
  return {
    heard,
    next: (topic: string) => withDeadline(new Promise<Heard>((resolve) => waiters.push({ topic, resolve })), `a message on ${topic}`),
  };
}

interface Setup {
  tc: TestPluginContext;
  outbound: Outbound;
  counters: MqttCounters;
  house: Awaited<ReturnType<typeof connectTestLink>>;
  link: Awaited<ReturnType<typeof connectTestLink>>;
  url: string;
  settings: OutboundSettings;
  /** Resolves when the link has handed a message with this topic and payload to outbound. */
  arrival(topic: string, payload: string): Promise<void>;
  /** Publishes on a command or notify topic from the house and waits until outbound has handled it. */
  command(topic: string, payload: string, options?: { retain?: boolean }): Promise<void>;
  /** Waits until the broker has taken the link's subscriptions. */
  subscribed(): Promise<void>;
}

async function setup(t: Test, options: { start?: boolean; settings?: Partial<OutboundSettings> } = {}): Promise<Setup> {
  const broker = await startTestBroker();
  const house = await connectTestLink(broker.url, `house-${Math.random().toString(16).slice(2)}`);
  const link = await connectTestLink(broker.url);
  const tc = createTestPluginContext({ name: 'mqtt', dataDir: t.testdir() });
  const counters = emptyCounters();
  const settings: OutboundSettings = {
    base_topic: BASE,
    publish_allow: [`${BASE}/#`, 'notes/+'],
    publish_qos: 1,
    max_payload_bytes: 1024,
    notify_rate_per_minute: 20,
    command_rate_per_minute: 120,
    ...options.settings,
  };
  const outbound = new Outbound({ link, ctx: tc.context, settings: () => settings, counters });
  // The test's own handler on the filters outbound uses: the link calls outbound's first (it subscribed first).
  const arrivals: Array<{ topic: string; payload: string; resolve: () => void }> = [];
  const arrived = (message: MqttMessage) => {
    const i = arrivals.findIndex((a) => a.topic === message.topic && a.payload === message.payload.toString());
    if (i >= 0) arrivals.splice(i, 1)[0]?.resolve();
  };
  let stopped = options.start === false;
  t.teardown(async () => {
    if (!stopped) await outbound.stop();
    if (!link.client.disconnected) await link.end();
    await house.end();
    await tc.close();
    await broker.close();
  });
  const s: Setup = {
    tc,
    outbound,
    counters,
    house,
    link,
    url: broker.url,
    settings,
    arrival: (topic, payload) =>
      withDeadline(new Promise<void>((resolve) => arrivals.push({ topic, payload, resolve })), `${payload} on ${topic}`),
    command: async (topic, payload, sendOptions = {}) => {
      const handled = s.arrival(topic, payload);
      await house.publish(topic, payload, { qos: 1, retain: sendOptions.retain ?? false });
      await handled;
      await outbound.idle();
    },
    subscribed: () => subscriptionsTaken(link.client),
  };
  const start = outbound.start.bind(outbound);
  outbound.start = async () => {
    await start();
    stopped = false;
    link.subscribe(`${BASE}/+/set`, 1, arrived);
    link.subscribe(`${BASE}/agent/notify`, 1, arrived);
    await s.subscribed();
  };
  const stop = outbound.stop.bind(outbound);
  outbound.stop = async () => {
    stopped = true;
    await stop();
  };
  if (options.start !== false) await outbound.start();
  return s;
}

function outputEvent(payload: unknown, type: 'text' | 'structured' = 'text', meta: Record<string, unknown> = {}): OutputEvent {
  return { id: 'out-1', channel: 'mqtt', type, payload, meta, created_at: Date.now() };
}

async function toolError(t: Test, run: () => Promise<unknown>): Promise<ToolErrorInfo> {
  try {
    await run();
  } catch (error) {
    if (error instanceof ToolError) return error.info;
    throw error;
  }
  t.fail('the tool did not fail');
  return { reason: 'failed', detail: '' };
}

t.test('the mqtt output channel publishes answers on last_reply (retained) or an allowed meta.topic', async (t) => {
  const s = await setup(t);
  const channel = s.tc.channels.get('mqtt');
  if (channel === undefined) throw new Error('no mqtt channel');
  t.equal(channel.capabilities, CAPABILITY.TEXT | CAPABILITY.STRUCTURED);
  t.equal(channel.synchronous, false);
  const house = await listen(s.house.client, '#');

  let next = house.next(`${BASE}/agent/last_reply`);
  await channel.send(outputEvent('The kitchen light is on.'));
  t.same(await next, { topic: `${BASE}/agent/last_reply`, payload: 'The kitchen light is on.', retain: false });
  next = house.next(`${BASE}/agent/last_reply`);
  await channel.send(outputEvent({ temperature: 21 }, 'structured'));
  t.equal((await next).payload, '{"temperature":21}', 'structured content as JSON');

  const later = await connectTestLink(s.url, 'late-subscriber');
  t.teardown(() => later.end());
  const kept = await listen(later.client, `${BASE}/agent/last_reply`);
  const retained = kept.heard[0] ?? (await kept.next(`${BASE}/agent/last_reply`));
  t.same(retained, { topic: `${BASE}/agent/last_reply`, payload: '{"temperature":21}', retain: true }, 'the last reply is retained');

  next = house.next('notes/today');
  await channel.send(outputEvent('Buy milk', 'text', { topic: 'notes/today' }));
  t.same(await next, { topic: 'notes/today', payload: 'Buy milk', retain: false });

  const refused = await expectErrorAsync(t, () => channel.send(outputEvent('x', 'text', { topic: 'elsewhere/x' })), 'HA_ERR_MQTT_TOPIC');
  t.match(refused.message, /publishing on elsewhere\/x is not allowed; allowed topics: homeagent\/#, notes\/\+/);
  await expectErrorAsync(t, () => channel.send(outputEvent('ON', 'text', { topic: `${BASE}/lock.front_door/set` })), 'HA_ERR_MQTT_TOPIC');
  await expectErrorAsync(t, () => channel.send(outputEvent('x', 'text', { topic: 'notes/+' })), 'HA_ERR_MQTT_TOPIC');
  await expectErrorAsync(t, () => channel.send(outputEvent('x'.repeat(1025))), 'HA_ERR_MQTT_PAYLOAD');
  next = house.next('notes/after');
  await channel.send(outputEvent('marker', 'text', { topic: 'notes/after' }));
  await next;
  t.same(
    house.heard.map((h) => h.topic),
    [`${BASE}/agent/last_reply`, `${BASE}/agent/last_reply`, 'notes/today', 'notes/after'],
    'nothing refused was published',
  );
});

t.test('mqtt_publish: allowed topics only, JSON payloads, retain, size and topic checks, audited', async (t) => {
  const s = await setup(t);
  const house = await listen(s.house.client, '#');
  let next = house.next('notes/kitchen');
  const result = await s.tc.call('mqtt_publish', { topic: 'notes/kitchen', payload: 'Soup is ready' });
  t.match(result, { ok: true, topic: 'notes/kitchen', bytes: 13, qos: 1, retain: false, delivery: 'sent' });
  t.same(await next, { topic: 'notes/kitchen', payload: 'Soup is ready', retain: false });
  t.match(s.tc.audits.at(-1), { action: 'mqtt.publish', details: { topic: 'notes/kitchen', bytes: 13 } });

  next = house.next(`${BASE}/display/text`);
  await s.tc.call('mqtt_publish', { topic: `${BASE}/display/text`, payload: { line: 1, text: 'Hi' }, retain: true, qos: 2 });
  t.same(await next, { topic: `${BASE}/display/text`, payload: '{"line":1,"text":"Hi"}', retain: false });
  const later = await connectTestLink(s.url, 'late-subscriber');
  t.teardown(() => later.end());
  const kept = await listen(later.client, `${BASE}/display/text`);
  const retained = kept.heard[0] ?? (await kept.next(`${BASE}/display/text`));
  t.equal(retained.retain, true, 'retain: true keeps it on the broker');

  const unauthorized = await toolError(t, () => s.tc.call('mqtt_publish', { topic: 'zigbee2mqtt/front_lock/set', payload: 'UNLOCK' }));
  t.match(unauthorized, { reason: 'unauthorized', field: 'topic', hint: /allowed topics: homeagent\/#, notes\/\+/ });
  const own = await toolError(t, () => s.tc.call('mqtt_publish', { topic: `${BASE}/lock.front_door/set`, payload: 'unlock' }));
  t.match(own, { reason: 'unauthorized', detail: /HomeAgent's own topics/, hint: /entity_call/ });
  for (const topic of [`${BASE}/status`, `${BASE}/switch.relay/state`, `${BASE}/agent/notify`]) {
    t.match(await toolError(t, () => s.tc.call('mqtt_publish', { topic, payload: 'x' })), { reason: 'unauthorized' }, topic);
  }
  t.match(await toolError(t, () => s.tc.call('mqtt_publish', { topic: 'notes/+', payload: 'x' })), { reason: 'format', field: 'topic' });
  t.match(await toolError(t, () => s.tc.call('mqtt_publish', { topic: 'notes/big', payload: 'x'.repeat(1025) })), {
    reason: 'range',
    field: 'payload',
  });
  next = house.next('notes/marker');
  await s.tc.call('mqtt_publish', { topic: 'notes/marker', payload: 'end' });
  await next;
  t.same(
    house.heard.map((h) => h.topic),
    ['notes/kitchen', `${BASE}/display/text`, 'notes/marker'],
    'nothing refused was published',
  );
  t.equal(s.tc.audits.filter((a) => a.action === 'mqtt.publish').length, 3, 'only what was published is audited');
});

t.test('mqtt_publish while disconnected: QoS 0 refused, not silently lost', async (t) => {
  const s = await setup(t);
  await s.link.end();
  t.match(await toolError(t, () => s.tc.call('mqtt_publish', { topic: 'notes/x', payload: 'x', qos: 0 })), { reason: 'unavailable' });
});

interface Fakes {
  calls: Array<{ entity: string; service: string; data: Record<string, unknown> }>;
  /** Services in the order their calls finished. */
  finished: string[];
  handles: Map<string, EntityHandle>;
}

/** Entities of a fake "gpio" owner: each call is recorded and reported back as the new state. */
function gpioEntities(tc: TestPluginContext): Fakes {
  const calls: Fakes['calls'] = [];
  const finished: string[] = [];
  const handles = new Map<string, EntityHandle>();
  const add = (
    domain: 'switch' | 'lock' | 'cover' | 'number' | 'light',
    objectId: string,
    state: (service: string, data: Record<string, unknown>) => string | number,
  ) => {
    const entityId = `${domain}.${objectId}`;
    const handle = tc.entities.register('plugin:gpio', {
      domain,
      object_id: objectId,
      name: objectId,
      initial_state: null,
      call: async (service, data) => {
        calls.push({ entity: entityId, service, data });
        // A device that takes a moment, turning on longer than the rest: commands run at once would finish out of order.
        for (let i = 0; i < (service === 'turn_on' ? 5 : 1); i++) await new Promise((resolve) => setImmediate(resolve));
        handle.update(state(service, data), data);
        finished.push(service);
      },
    });
    handles.set(entityId, handle);
  };
  add('switch', 'relay', (service) => (service === 'turn_on' ? 'on' : service === 'turn_off' ? 'off' : 'toggled'));
  add('lock', 'front_door', (service) => (service === 'lock' ? 'locked' : 'unlocked'));
  add('cover', 'garage', (service) => (service === 'set_position' ? 'open' : service === 'close' ? 'closed' : service));
  add('number', 'target', (_service, data) => Number(data.value));
  add('light', 'desk', (service) => (service === 'turn_off' ? 'off' : 'on'));
  return { calls, finished, handles };
}

t.test('command topics drive HomeAgent entities: words, ON/OFF, numbers, JSON; critical ones audited', async (t) => {
  const s = await setup(t);
  const fakes = gpioEntities(s.tc);
  const state = async (id: string) => (await s.tc.context.entities.get(id)).state;

  await s.command(`${BASE}/switch.relay/set`, 'ON');
  t.equal(await state('switch.relay'), 'on');
  await s.command(`${BASE}/switch.relay/set`, 'off');
  t.equal(await state('switch.relay'), 'off');
  await s.command(`${BASE}/switch.relay/set`, '{"service": "turn_on"}');
  t.equal(await state('switch.relay'), 'on');
  await s.command(`${BASE}/lock.front_door/set`, 'UNLOCK');
  t.equal(await state('lock.front_door'), 'unlocked', 'a critical entity is allowed from MQTT');
  t.match(s.tc.audits.at(-1), {
    action: 'mqtt.command',
    details: { entity_id: 'lock.front_door', service: 'unlock', critical: true, topic: `${BASE}/lock.front_door/set` },
  });
  await s.command(`${BASE}/cover.garage/set`, 'OPEN');
  await s.command(`${BASE}/cover.garage/set`, '40');
  await s.command(`${BASE}/cover.garage/set`, '{"service": "set_position", "data": {"position": 55}}');
  await s.command(`${BASE}/number.target/set`, '21.5');
  t.equal(await state('number.target'), 21.5);
  await s.command(`${BASE}/light.desk/set`, '128');
  await s.command(`${BASE}/light.desk/set`, '{"service": "turn_on", "data": {"brightness": 200}}');
  t.same(
    fakes.calls.map((c) => [c.entity, c.service, c.data]),
    [
      ['switch.relay', 'turn_on', {}],
      ['switch.relay', 'turn_off', {}],
      ['switch.relay', 'turn_on', {}],
      ['lock.front_door', 'unlock', {}],
      ['cover.garage', 'open', {}],
      ['cover.garage', 'set_position', { position: 40 }],
      ['cover.garage', 'set_position', { position: 55 }],
      ['number.target', 'set_value', { value: 21.5 }],
      ['light.desk', 'turn_on', { brightness: 128 }],
      ['light.desk', 'turn_on', { brightness: 200 }],
    ],
  );
  t.equal(s.tc.audits.filter((a) => a.action === 'mqtt.command').length, 10, 'every command is audited');
  t.equal(s.counters.malformed, 0);
});

t.test('commands for one entity run in the order they came', async (t) => {
  const s = await setup(t);
  const fakes = gpioEntities(s.tc);
  const words = ['ON', 'OFF', 'ON', 'OFF', 'toggle', 'ON'];
  for (const word of words) await s.house.publish(`${BASE}/switch.relay/set`, word, { qos: 1 });
  await s.command(`${BASE}/switch.relay/set`, '{"service": "turn_off"}');
  const expected = ['turn_on', 'turn_off', 'turn_on', 'turn_off', 'toggle', 'turn_on', 'turn_off'];
  t.same(fakes.finished, expected, 'each command finished before the next began');
  t.equal((await s.tc.context.entities.get('switch.relay')).state, 'off', 'the last command wins');
});

t.test('bad commands are counted and logged, never fatal; MQTT-owned entities and retained commands are refused', async (t) => {
  const s = await setup(t, { start: false });
  const fakes = gpioEntities(s.tc);
  // Retained before outbound subscribes: the broker hands it over with the subscription.
  await s.house.publish(`${BASE}/switch.relay/set`, 'ON', { retain: true, qos: 1 });
  const retainedArrives = s.arrival(`${BASE}/switch.relay/set`, 'ON');
  await s.outbound.start();
  await retainedArrives;
  await s.outbound.idle();
  t.equal(fakes.calls.length, 0, 'a retained command is not run');
  t.equal(s.counters.malformed, 0, 'nor counted as malformed');

  let zigbeeCalls = 0;
  s.tc.context.entities.register({
    domain: 'switch',
    object_id: 'zigbee_plug',
    name: 'Zigbee plug',
    call: async () => void zigbeeCalls++,
  });
  const before = s.counters.malformed;
  const bad: Array<[string, string]> = [
    [`${BASE}/switch.relay/set`, 'DANCE'],
    [`${BASE}/switch.relay/set`, '{"service": "turn_on"'],
    [`${BASE}/switch.relay/set`, '{"service": "turn_on", "extra": 1}'],
    [`${BASE}/switch.relay/set`, '42'],
    [`${BASE}/light.desk/set`, '{"service": "turn_on", "data": {"brightness": 999}}'],
    [`${BASE}/switch.nope/set`, 'ON'],
    [`${BASE}/agent/set`, 'ON'],
    [`${BASE}/switch.zigbee_plug/set`, 'ON'],
  ];
  for (const [topic, payload] of bad) await s.command(topic, payload);
  t.equal(s.counters.malformed - before, bad.length, 'each bad command counted once');
  t.equal(zigbeeCalls, 0, "the MQTT plugin's own entity is not commanded through HomeAgent's topics");
  t.same(fakes.calls, [], 'no bad command reached an entity');
  await s.command(`${BASE}/switch.relay/set`, 'ON');
  t.equal((await s.tc.context.entities.get('switch.relay')).state, 'on', 'commands still work afterwards');
});

t.test('notify: a text for the agent at level 2 on channel mqtt; empty and retained ones are not', async (t) => {
  const s = await setup(t, { start: false });
  await s.house.publish(`${BASE}/agent/notify`, 'an old message', { retain: true, qos: 1 });
  const retained = s.arrival(`${BASE}/agent/notify`, 'an old message');
  await s.outbound.start();
  await retained;
  t.equal(s.tc.injected.length, 0, 'a retained notify is not replayed to the agent');
  const injected = s.tc.nextInjected();
  await s.command(`${BASE}/agent/notify`, 'Someone is at the front door');
  const input = await withDeadline(injected, 'the notify input');
  t.equal(input.level, 2);
  t.same(input.input, {
    source: 'mqtt',
    channel: 'mqtt',
    sender: { trust: 'untrusted', id: 'mqtt', proof: 'an MQTT payload' },
    type: 'text',
    payload: 'Someone is at the front door',
    meta: { topic: `${BASE}/agent/notify`, retained: false },
  });
  await s.command(`${BASE}/agent/notify`, '   ');
  t.equal(s.counters.malformed, 1, 'an empty text is malformed');
  t.equal(s.tc.injected.length, 1);
});

t.test('a bad publish_allow refuses to start, naming the key, and registers nothing', async (t) => {
  const s = await setup(t, { start: false, settings: { publish_allow: ['notes/#', 'a/#/b'] } });
  const error = await expectErrorAsync(t, () => s.outbound.start(), 'HA_ERR_CONFIG_INVALID');
  t.match(error.message, /plugin\.mqtt\.publish_allow\[1\]: # must be a whole level/);
  t.equal(s.tc.channels.size, 0);
  t.equal(s.tc.tools.get('mqtt_publish'), undefined);
});

t.test('stop() removes the channel and the tool and stops taking commands', async (t) => {
  const s = await setup(t);
  const fakes = gpioEntities(s.tc);
  await s.outbound.stop();
  t.equal(s.tc.channels.size, 0);
  t.equal(s.tc.tools.get('mqtt_publish'), undefined);
  const probe = new Promise<void>((resolve) => s.link.subscribe(`${BASE}/#`, 1, () => resolve()));
  await s.subscribed();
  await s.house.publish(`${BASE}/switch.relay/set`, 'ON', { qos: 1 });
  await withDeadline(probe, 'the probe');
  await s.outbound.idle();
  t.same(fakes.calls, []);
});

t.test('parseCommand', async (t) => {
  const lock = { entity_id: 'lock.door', domain: 'lock', services: ['lock', 'unlock'] } as const;
  const relay = { entity_id: 'switch.r', domain: 'switch', services: ['turn_on', 'turn_off', 'toggle'] } as const;
  const pulse = { entity_id: 'switch.p', domain: 'switch', services: ['toggle'] } as const;
  const sensor = { entity_id: 'sensor.t', domain: 'sensor', services: [] } as const;
  t.same(parseCommand({ ...lock, services: [...lock.services] }, 'LOCK'), { service: 'lock', data: {} });
  t.same(parseCommand({ ...relay, services: [...relay.services] }, ' on '), { service: 'turn_on', data: {} });
  t.match(parseCommand({ ...pulse, services: [...pulse.services] }, 'ON'), { problem: /send one of toggle/ });
  t.match(parseCommand({ ...sensor, services: [] }, 'ON'), { problem: /it takes no commands/ });
  t.match(parseCommand({ ...relay, services: [...relay.services] }, ''), { problem: /empty/ });
  t.match(parseCommand({ ...relay, services: [...relay.services] }, '[1]'), { problem: /not a command/ });
  t.match(parseCommand({ ...relay, services: [...relay.services] }, '{"service": 3}'), { problem: /"service": "<name>"/ });
  t.match(parseCommand({ ...relay, services: [...relay.services] }, '{"service": "turn_on", "data": [1]}'), {
    problem: /data must be an object/,
  });
});
