// The inbound router against a real broker (aedes in-process): the plugin side is a test link, "the
// house" another plain client publishing what sensors and hubs would. A manual clock drives the rate
// limits; every wait is for a message or an event, with a deadline.
import t, { type Test } from 'tap';
import {
  entityState,
  filtersOverlap,
  InboundRouter,
  type InboundSettings,
  planSubscriptions,
  TopicRateLimiter,
} from '../../../../plugins/mqtt/inbound-router.js';
import { emptyCounters, type MqttCounters } from '../../../../plugins/mqtt/types.js';
import type { EventMap } from '../../../../src/events/event-bus.js';
import { connectTestLink, startTestBroker } from '../../../helpers/mqtt-test-broker.js';
import { createTestPluginContext, type TestPluginContext } from '../../../helpers/plugin-context.js';
import { expectError, expectErrorAsync } from '../../fixtures/support.js';
import { subscriptionsTaken, withDeadline } from './mqtt-test-kit.js';

const SENTINEL = 'test/sentinel';

interface Setup {
  tc: TestPluginContext;
  router: InboundRouter;
  counters: MqttCounters;
  clock: { now(): number; set(ms: number): void };
  house: Awaited<ReturnType<typeof connectTestLink>>;
  link: Awaited<ReturnType<typeof connectTestLink>>;
  events: Array<EventMap['mqtt.message']>;
  /** Resolves with the next mqtt.message event on `topic`. */
  nextEvent(topic: string): Promise<EventMap['mqtt.message']>;
  /** Resolves once an event on `topic` was seen (at once when it already was). */
  seen(topic: string): Promise<EventMap['mqtt.message']>;
  /** Resolves with the next state change of an entity. */
  nextState(entityId: string): Promise<EventMap['entity.state_changed']>;
  /** Publishes from the house and waits until the router has handled everything sent before (a sentinel event). */
  send(topic: string, payload: string | Buffer, options?: { retain?: boolean }): Promise<void>;
  /** Waits until the broker has taken the router's subscriptions. */
  subscribed(): Promise<void>;
}

async function setup(
  t: Test,
  subscriptions: unknown[],
  options: { maxPayload?: number; retained?: Array<[string, string]>; start?: boolean } = {},
): Promise<Setup> {
  const broker = await startTestBroker();
  const house = await connectTestLink(broker.url, `house-${Math.random().toString(16).slice(2)}`);
  for (const [topic, payload] of options.retained ?? []) await house.publish(topic, payload, { retain: true, qos: 1 });
  const link = await connectTestLink(broker.url);
  const tc = createTestPluginContext({ name: 'mqtt', dataDir: t.testdir() });
  const counters = emptyCounters();
  let now = 1_700_000_000_000;
  const clock = {
    now: () => now,
    set: (ms: number) => {
      now = ms;
    },
  };
  const settings: InboundSettings = {
    subscriptions: [...subscriptions, { topic: SENTINEL, to: 'event', rate_per_minute: 60000 }],
    max_payload_bytes: options.maxPayload ?? 1024,
  };
  const router = new InboundRouter({ link, ctx: tc.context, settings: () => settings, counters, clock });
  const events: Array<EventMap['mqtt.message']> = [];
  const eventWaiters: Array<{ topic: string; resolve: (e: EventMap['mqtt.message']) => void }> = [];
  tc.events.on('test', 'mqtt.message', (event) => {
    events.push(event);
    const i = eventWaiters.findIndex((w) => w.topic === event.topic);
    if (i >= 0) eventWaiters.splice(i, 1)[0]?.resolve(event);
  });
  const stateWaiters: Array<{ id: string; resolve: (e: EventMap['entity.state_changed']) => void }> = [];
  tc.events.on('test', 'entity.state_changed', (event) => {
    const i = stateWaiters.findIndex((w) => w.id === event.entity_id);
    if (i >= 0) stateWaiters.splice(i, 1)[0]?.resolve(event);
  });
  let stopped = false;
  t.teardown(async () => {
    if (!stopped) await router.stop();
    // A test may have ended the link already (the broker "went away"); ending it twice never resolves.
    if (!link.client.disconnected) await link.end();
    await house.end();
    await tc.close();
    await broker.close();
  });
  const nextEvent = (topic: string) =>
    withDeadline(new Promise<EventMap['mqtt.message']>((resolve) => eventWaiters.push({ topic, resolve })), `an event on ${topic}`);
  let sentinel = 0;
  const s: Setup = {
    tc,
    router,
    counters,
    clock,
    house,
    link,
    events,
    nextEvent,
    seen: (topic) => {
      const earlier = events.find((e) => e.topic === topic);
      return earlier !== undefined ? Promise.resolve(earlier) : nextEvent(topic);
    },
    nextState: (id) =>
      withDeadline(new Promise<EventMap['entity.state_changed']>((resolve) => stateWaiters.push({ id, resolve })), `a state of ${id}`),
    send: async (topic, payload, sendOptions = {}) => {
      await house.publish(topic, payload, { qos: 1, retain: sendOptions.retain ?? false });
      const marker = nextEvent(SENTINEL);
      await house.publish(SENTINEL, String(++sentinel), { qos: 1 });
      await marker;
    },
    subscribed: () => subscriptionsTaken(link.client),
  };
  if (options.start !== false) {
    await router.start();
    await s.subscribed();
  }
  const stop = router.stop.bind(router);
  router.stop = async () => {
    stopped = true;
    await stop();
  };
  return s;
}

t.test('events for every subscription kind, with + and # wildcards', async (t) => {
  const s = await setup(t, [{ topic: 'hub/#', to: 'event' }, { topic: 'room/+/motion' }]);
  const deep = s.nextEvent('hub/kitchen/sensor/1');
  await s.house.publish('hub/kitchen/sensor/1', 'hello', { qos: 1 });
  const event = await deep;
  t.same(event, { topic: 'hub/kitchen/sensor/1', payload: 'hello', retained: false, at: s.clock.now() });
  await s.send('hub', 'the bare level # also matches');
  await s.send('room/hall/motion', 'ON');
  await s.send('room/hall/extra/motion', 'not matched by +');
  t.same(
    s.events.filter((e) => e.topic !== 'test/sentinel').map((e) => e.topic),
    ['hub/kitchen/sensor/1', 'hub', 'room/hall/motion'],
  );
});

t.test('a message matching two subscriptions is announced once', async (t) => {
  const s = await setup(t, [
    { topic: 'dup/#', to: 'event' },
    { topic: 'dup/+', to: 'entity', entity: { domain: 'sensor', object_id: 'dup_value' } },
  ]);
  const state = s.nextState('sensor.dup_value');
  await s.send('dup/a', '7');
  t.equal((await state).new_state, 7, 'the second subscription still maps it');
  t.equal(s.events.filter((e) => e.topic === 'dup/a').length, 1);
});

t.test('entity states from JSON value paths and raw payloads; a wildcard entity takes the last message', async (t) => {
  const s = await setup(t, [
    {
      topic: 'house/+/climate',
      to: 'entity',
      entity: {
        domain: 'sensor',
        object_id: 'any_temperature',
        unit: '°C',
        device_class: 'temperature',
        value_path: 'temperature',
        area: 'house',
      },
    },
    { topic: 'meter/power', to: 'entity', entity: { domain: 'sensor', object_id: 'power', unit: 'W', value_path: 'state.power.0' } },
    {
      topic: 'door/front',
      to: 'entity',
      entity: { domain: 'binary_sensor', object_id: 'front_door', payload_on: 'open', payload_off: 'closed' },
    },
    { topic: 'hall/occupancy', to: 'entity', entity: { domain: 'binary_sensor', object_id: 'hall', value_path: 'occupancy' } },
    { topic: 'status/text', to: 'entity', entity: { domain: 'sensor', object_id: 'status_text' } },
  ]);
  const registered = await s.tc.context.entities.get('sensor.any_temperature');
  t.match(registered, { name: 'Any temperature', unit: '°C', device_class: 'temperature', area: 'house', owner: 'plugin:mqtt' });
  t.same(registered.services, [], 'a sensor only reports');

  let next = s.nextState('sensor.any_temperature');
  await s.house.publish('house/kitchen/climate', JSON.stringify({ temperature: 21.5, humidity: 40 }));
  t.match(await next, { new_state: 21.5, attributes: { mqtt_topic: 'house/kitchen/climate' } });
  next = s.nextState('sensor.any_temperature');
  await s.house.publish('house/cellar/climate', '{"temperature": "12.25"}');
  t.match(await next, { new_state: 12.25, attributes: { mqtt_topic: 'house/cellar/climate' } }, 'the last message wins, whichever topic');

  next = s.nextState('sensor.power');
  await s.house.publish('meter/power', JSON.stringify({ state: { power: [1500, 3] } }));
  t.equal((await next).new_state, 1500, 'a nested path through a list');

  next = s.nextState('binary_sensor.front_door');
  await s.house.publish('door/front', 'OPEN');
  t.equal((await next).new_state, 'on', 'payload_on compares case-insensitively');
  next = s.nextState('binary_sensor.front_door');
  await s.house.publish('door/front', 'closed');
  t.equal((await next).new_state, 'off');

  next = s.nextState('binary_sensor.hall');
  await s.house.publish('hall/occupancy', '{"occupancy": true}');
  t.equal((await next).new_state, 'on', 'a JSON boolean is on/off');

  next = s.nextState('sensor.status_text');
  await s.house.publish('status/text', 'all quiet');
  t.equal((await next).new_state, 'all quiet', 'a sensor without a unit keeps text');
  t.equal(s.counters.malformed, 0);
});

t.test('malformed payloads are counted and logged, never fatal, and leave the state alone', async (t) => {
  const s = await setup(t, [
    { topic: 'm/temp', to: 'entity', entity: { domain: 'sensor', object_id: 'm_temp', unit: '°C', value_path: 'temperature' } },
    { topic: 'm/raw', to: 'entity', entity: { domain: 'sensor', object_id: 'm_raw', unit: '%' } },
    { topic: 'm/switch', to: 'entity', entity: { domain: 'switch', object_id: 'm_switch' } },
    { topic: 'm/input', to: 'input', template: 'temperature {json.temperature}' },
  ]);
  const first = s.nextState('sensor.m_temp');
  await s.house.publish('m/temp', '{"temperature": 20}');
  await first;
  await s.send('m/temp', '{"temperature": 20'); // bad JSON
  await s.send('m/temp', '{"humidity": 50}'); // missing path
  await s.send('m/temp', '{"temperature": "warm"}'); // not a number
  await s.send('m/temp', '{"temperature": {"value": 3}}'); // not a single value
  await s.send('m/raw', 'NaN%');
  await s.send('m/switch', 'MAYBE');
  await s.send('m/input', 'not json');
  await s.send('m/input', '{"other": 1}');
  t.equal(s.counters.malformed, 8);
  t.equal((await s.tc.context.entities.get('sensor.m_temp')).state, 20, 'the last good state stays');
  t.equal(s.tc.injected.length, 0, 'no input from a payload the template cannot read');
  const later = s.nextState('sensor.m_temp');
  await s.house.publish('m/temp', '{"temperature": 19}');
  t.equal((await later).new_state, 19, 'the router still works after them');
  const events = s.events.filter((e) => e.topic.startsWith('m/'));
  t.equal(events.length, 10, 'malformed payloads are still announced as events');
});

t.test('oversized payloads are dropped and counted before anything else', async (t) => {
  const s = await setup(t, [{ topic: 'big/+', to: 'entity', entity: { domain: 'sensor', object_id: 'big' } }], { maxPayload: 256 });
  await s.send('big/a', 'x'.repeat(257));
  t.equal(s.counters.oversized, 1);
  t.equal(s.events.filter((e) => e.topic === 'big/a').length, 0, 'no event');
  t.equal((await s.tc.context.entities.get('sensor.big')).state, null, 'no state');
  const fits = s.nextState('sensor.big');
  await s.house.publish('big/a', '1'.repeat(256));
  t.ok(await fits, 'a payload of exactly the limit passes');
});

t.test('inputs: template, level, meta; retained messages are not replayed as inputs but do update entities', async (t) => {
  const s = await setup(
    t,
    [
      { topic: 'doorbell/+', to: 'input', template: '{json.who} rang at {topic} ({payload})', level: 3, channel: 'door' },
      { topic: 'plain/msg', to: 'input' },
      { topic: 'kept/temp', to: 'entity', entity: { domain: 'sensor', object_id: 'kept', unit: '°C' } },
    ],
    {
      retained: [
        ['doorbell/front', '{"who": "yesterday"}'],
        ['kept/temp', '18.5'],
      ],
    },
  );
  await s.seen('kept/temp');
  const kept = await s.tc.context.entities.get('sensor.kept');
  t.equal(kept.state, 18.5, 'the retained value became the state');
  const bell = await s.seen('doorbell/front');
  t.equal(bell.retained, true, 'the retained message is an event, marked retained');
  t.equal(s.tc.injected.length, 0, 'the retained doorbell press is not an input');

  const ring = s.tc.nextInjected();
  await s.house.publish('doorbell/back', '{"who": "Anna"}');
  const injected = await withDeadline(ring, 'an input');
  t.equal(injected.level, 3);
  t.same(injected.input, {
    source: 'mqtt',
    channel: 'door',
    sender: { trust: 'untrusted', id: 'mqtt', proof: 'an MQTT payload' },
    type: 'text',
    payload: 'Anna rang at doorbell/back ({"who": "Anna"})',
    meta: { topic: 'doorbell/back', retained: false },
  });
  const plain = s.tc.nextInjected();
  await s.house.publish('plain/msg', 'hello');
  const second = await withDeadline(plain, 'an input');
  t.equal(second.level, 0);
  t.equal(second.input.payload, 'MQTT plain/msg: hello', 'the default template');
});

t.test('a chatty topic is limited to its rate; other topics are not affected', async (t) => {
  const rate = 6;
  const s = await setup(t, [
    { topic: 'chatty/+', to: 'event', rate_per_minute: rate },
    { topic: 'calm/+', to: 'event', rate_per_minute: rate },
  ]);
  const start = s.clock.now();
  const passedPerMinute: number[] = [];
  // Ten times the rate for three minutes: a message every second.
  for (let minute = 0; minute < 3; minute++) {
    const before = s.events.filter((e) => e.topic === 'chatty/a').length;
    for (let second = 0; second < 60; second++) {
      s.clock.set(start + (minute * 60 + second) * 1000);
      await s.send('chatty/a', 'x');
    }
    passedPerMinute.push(s.events.filter((e) => e.topic === 'chatty/a').length - before);
  }
  t.ok((passedPerMinute[0] ?? 0) <= 2 * rate, `the first minute: a minute's burst plus the rate (${passedPerMinute[0]})`);
  t.same(passedPerMinute.slice(1), [rate, rate], 'after the burst exactly the rate passes each minute');
  t.equal(s.counters.rate_limited, 180 - passedPerMinute.reduce((a, b) => a + b, 0));
  await s.send('chatty/b', 'another topic has its own bucket');
  await s.send('calm/a', 'another subscription is untouched');
  t.ok(s.events.some((e) => e.topic === 'chatty/b'));
  t.ok(s.events.some((e) => e.topic === 'calm/a'));
});

t.test('switch with a command topic: a call publishes payload_on/off and the state follows the device', async (t) => {
  const s = await setup(t, [
    {
      topic: 'plug/state',
      to: 'entity',
      entity: { domain: 'switch', object_id: 'plug', payload_on: 'on', payload_off: 'off', command_topic: 'plug/set' },
    },
    { topic: 'lamp/state', to: 'entity', entity: { domain: 'light', object_id: 'lamp', command_topic: 'lamp/set' } },
    { topic: 'watch/state', to: 'entity', entity: { domain: 'switch', object_id: 'watched' } },
  ]);
  const commands: string[] = [];
  // The device: takes the command and reports its new state, as a real plug does.
  s.house.subscribe('plug/set', 1, (message) => {
    commands.push(message.payload.toString());
    void s.house.publish('plug/state', message.payload.toString());
  });
  await s.house.client.subscribeAsync('test/sync-house');
  let state = s.nextState('switch.plug');
  await s.tc.context.entities.call('switch.plug', 'turn_on');
  t.equal((await state).new_state, 'on', 'the state comes from the report');
  state = s.nextState('switch.plug');
  await s.tc.context.entities.call('switch.plug', 'toggle');
  t.equal((await state).new_state, 'off');
  t.same(commands, ['on', 'off']);

  // A lamp that does not answer: the command goes out, the state stays what the lamp last said.
  const lampCommand = new Promise<string>((resolve) => s.house.subscribe('lamp/set', 1, (m) => resolve(m.payload.toString())));
  await s.house.client.subscribeAsync('test/sync-house');
  await s.tc.context.entities.call('light.lamp', 'turn_on');
  t.equal(await withDeadline(lampCommand, 'the lamp command'), 'ON');
  t.equal((await s.tc.context.entities.get('light.lamp')).state, null, 'a call alone does not change the state');
  await expectErrorAsync(t, () => s.tc.context.entities.call('light.lamp', 'turn_on', { brightness: 128 }), 'HA_ERR_ENTITY_SERVICE');
  const watched = await s.tc.context.entities.get('switch.watched');
  t.same(watched.services, [], 'a switch without a command topic only reports');
  await expectErrorAsync(t, () => s.tc.context.entities.call('switch.watched', 'turn_on'), 'HA_ERR_ENTITY_SERVICE');
});

t.test('a command while the broker is away is refused, not queued', async (t) => {
  const s = await setup(t, [{ topic: 'p/state', to: 'entity', entity: { domain: 'switch', object_id: 'p', command_topic: 'p/set' } }]);
  await s.link.end();
  await expectErrorAsync(t, () => s.tc.context.entities.call('switch.p', 'turn_on'), 'HA_ERR_MQTT_UNAVAILABLE');
});

t.test('stop() unsubscribes and removes the entities; start() again works', async (t) => {
  const s = await setup(t, [{ topic: 's/v', to: 'entity', entity: { domain: 'sensor', object_id: 's_v' } }]);
  t.same(s.router.status(), { subscriptions: 2, entities: ['sensor.s_v'], tracked_topics: 0 });
  await s.router.stop();
  await expectErrorAsync(t, () => s.tc.context.entities.get('sensor.s_v'), 'HA_ERR_ENTITY_NOT_FOUND');
  // A listener of the test on the same link: when it has the message, the router would have had it too.
  const probe = new Promise<void>((resolve) => {
    const off = s.link.subscribe('s/#', 1, () => {
      off();
      resolve();
    });
  });
  await s.subscribed();
  await s.house.publish('s/v', '1');
  await withDeadline(probe, 'the probe');
  t.equal(s.events.length, 0, 'nothing is routed after stop');
  t.equal(s.tc.entities.find('sensor.s_v'), undefined, 'nor registered again');
  await s.router.start();
  await s.subscribed();
  const state = s.nextState('sensor.s_v');
  await s.house.publish('s/v', '2');
  t.equal((await state).new_state, 2);
});

t.test('bad subscriptions are refused at start, naming the key, and nothing is left behind', async (t) => {
  const cases: Array<[unknown[], RegExp]> = [
    [[{ topic: 'a/#/b' }], /plugin\.mqtt\.subscriptions\[0\]\.topic: # must be a whole level/],
    [[{ topic: 'ok' }, { topic: 'a+' }], /subscriptions\[1\]\.topic: \+ must be a whole level/],
    [[{ topic: 'x', to: 'input', template: 'hi {name}' }], /subscriptions\[0\]\.template: unknown placeholder \{name\}/],
    [[{ topic: 'x', to: 'entity' }], /subscriptions\[0\]\.entity: to: entity needs an entity/],
    [[{ topic: 'x', to: 'event', entity: { object_id: 'a' } }], /subscriptions\[0\]\.entity: only read with to: entity/],
    [[{ topic: 'x', to: 'entity', entity: { object_id: 'Bad Id' } }], /entity\.object_id: must be 1-64 lowercase/],
    [[{ topic: 'x', to: 'entity', entity: { object_id: 't', command_topic: 'x/set' } }], /command_topic: a sensor takes no commands/],
    [
      [{ topic: 'x', to: 'entity', entity: { domain: 'switch', object_id: 't', command_topic: 'x/+/set' } }],
      /command_topic: a topic to publish/,
    ],
    [[{ topic: 'x', rate_per_minute: 0 }], /rate_per_minute: must be a whole number from 1 to 60000/],
    [[{ topic: 'x', colour: 'red' }], /subscriptions\[0\]\.colour: unknown setting/],
    [
      [
        { topic: 'x', to: 'entity', entity: { object_id: 'same' } },
        { topic: 'y', to: 'entity', entity: { object_id: 'same' } },
      ],
      /subscriptions\[1\]\.entity\.object_id: sensor\.same is already mapped by plugin\.mqtt\.subscriptions\[0\]/,
    ],
  ];
  for (const [subscriptions, message] of cases) {
    const error = expectError(t, () => planSubscriptions(subscriptions), 'HA_ERR_CONFIG_INVALID');
    t.match(error.message, message);
  }
  // Through start(): the first entity registered before the second failed is removed again.
  const s = await setup(
    t,
    [
      { topic: 'ok/state', to: 'entity', entity: { object_id: 'first' } },
      { topic: 'taken/state', to: 'entity', entity: { object_id: 'taken' } },
    ],
    { start: false },
  );
  s.tc.entities.register('plugin:gpio', { domain: 'sensor', object_id: 'taken', name: 'Taken' });
  const error = await expectErrorAsync(t, () => s.router.start(), 'HA_ERR_CONFIG_INVALID');
  t.match(error.message, /subscriptions\[1\]\.entity\.object_id: sensor\.taken is already registered by plugin:gpio/);
  t.equal(s.tc.entities.find('sensor.first'), undefined, 'the entity registered before the failure is gone');
  t.equal(s.tc.entities.find('sensor.taken')?.owner, 'plugin:gpio', "the other owner's entity is untouched");
});

t.test('entityState rules', async (t) => {
  const sensor = { domain: 'sensor', unit: '', payload_on: 'ON', payload_off: 'OFF' } as const;
  t.equal(entityState(sensor, ' 21.5 '), 21.5);
  t.equal(entityState(sensor, '-1e3'), -1000);
  t.equal(entityState(sensor, ''), null, 'empty is unknown');
  t.equal(entityState(sensor, null), null);
  t.equal(String(entityState(sensor, 'x'.repeat(300))).length, 255, 'a long text is cut');
  t.match(entityState({ ...sensor, unit: 'W' }, '12 W'), { problem: /"12 W" is not a number/ });
  t.match(entityState({ ...sensor, unit: 'W' }, true), { problem: /not a number/ });
  t.equal(entityState({ ...sensor, domain: 'switch' }, 'on'), 'on');
  t.equal(entityState({ ...sensor, domain: 'switch' }, false), 'off');
  t.equal(entityState({ ...sensor, domain: 'binary_sensor', payload_on: '1', payload_off: '0' }, 1), 'on', 'a JSON number as text');
  t.match(entityState({ ...sensor, domain: 'light' }, 'dim'), { problem: /neither ON nor OFF/ });
});

t.test('filtersOverlap', async (t) => {
  t.ok(filtersOverlap('a/+/c', 'a/#'));
  t.ok(filtersOverlap('a/#', 'a'));
  t.ok(filtersOverlap('+/b', 'a/+'));
  t.ok(filtersOverlap('x', 'x'));
  t.notOk(filtersOverlap('a/b', 'a/c'));
  t.notOk(filtersOverlap('a/+', 'a/b/c'));
  t.notOk(filtersOverlap('a', 'a/b'));
});

t.test('TopicRateLimiter: exact per-minute counts at 10x the rate, bounded keys, a clock going back', async (t) => {
  const limiter = new TopicRateLimiter(3);
  const rate = 30;
  const perMinute = new Map<number, number>();
  for (let ms = 0; ms < 10 * 60_000; ms += 200) {
    const minute = Math.floor(ms / 60_000);
    if (limiter.take('flood', rate, ms)) perMinute.set(minute, (perMinute.get(minute) ?? 0) + 1);
  }
  const first = perMinute.get(0);
  t.ok(first === 2 * rate || first === 2 * rate - 1, `first minute: a minute's burst plus the rate (${first})`);
  t.same([...perMinute.values()].slice(1), Array(9).fill(rate));
  for (const key of ['a', 'b', 'c', 'd']) limiter.take(key, rate, 0);
  t.equal(limiter.size, 3, 'at most maxKeys buckets');
  const back = new TopicRateLimiter();
  for (let i = 0; i < 5; i++) back.take('k', 5, 1000);
  t.notOk(back.take('k', 5, 500), 'a clock going back refills nothing');
  t.ok(back.take('k', 5, 500 + 12_000), 'it refills again once time moves on');
});
