// Every trigger type of the automation engine (src/automation/automation-engine.ts + triggers.ts),
// on the real EventBus and a real SQLite file, with a manual clock. Local time is UTC here.
process.env.TZ = 'UTC';

import t from 'tap';
import { settle } from '../../helpers/manual-timer-clock.js';
import { rule, startEngine } from './automation-fixture.js';

const turnOn = (entity_id: string) => ({ type: 'service', entity_id, service: 'turn_on', data: {} }) as const;

t.test('state trigger: from/to narrow it, numbers compare as numbers, attribute changes do not count', async (t) => {
  const s = await startEngine(
    t,
    [
      rule({
        id: 'door_light',
        triggers: [{ type: 'state', entity_id: 'binary_sensor.door', from: 'off', to: 'on' }],
        actions: [turnOn('light.hall')],
      }),
      rule({ id: 'level_two', triggers: [{ type: 'state', entity_id: 'sensor.level', to: [2, 'max'] }], actions: [turnOn('light.level')] }),
      rule({ id: 'any_change', triggers: [{ type: 'state', entity_id: 'sensor.level' }], actions: [turnOn('light.any')] }),
    ],
    { entities: { 'binary_sensor.door': 'off', 'sensor.level': '1', 'light.hall': 'off', 'light.level': 'off', 'light.any': 'off' } },
  );
  s.entities.set('binary_sensor.door', 'unavailable');
  s.entities.set('binary_sensor.door', 'on');
  t.same(s.entities.calls, [], 'unavailable → on is not from off');
  s.entities.set('binary_sensor.door', 'off');
  s.entities.set('binary_sensor.door', 'on');
  await settle();
  t.same(
    s.entities.calls.map((c) => [c.entity_id, c.service, c.context.actor]),
    [['light.hall', 'turn_on', 'automation:door_light']],
  );
  t.match(s.entities.calls[0]?.context, { run_id: /^[0-9a-f-]{36}$/ });

  s.entities.set('sensor.level', '2.0');
  await settle();
  t.same(
    s.entities.calls.slice(1).map((c) => c.entity_id),
    ['light.level', 'light.any'],
    '"2.0" matches to: 2; no from/to: any change',
  );
  s.entities.set('sensor.level', '2.0', null, { battery: 80 });
  s.entities.set('sensor.level', 'max');
  await settle();
  t.same(
    s.entities.calls.slice(3).map((c) => c.entity_id),
    ['light.level', 'light.any'],
    'the attribute-only change fired nothing; "max" matches the list',
  );
  t.same(
    s.runs.map((r) => [r.automation_id, r.status, r.trigger]),
    [
      ['door_light', 'done', 'state binary_sensor.door off→on'],
      ['level_two', 'done', 'state sensor.level 1→2.0'],
      ['any_change', 'done', 'state sensor.level 1→2.0'],
      ['level_two', 'done', 'state sensor.level 2.0→max'],
      ['any_change', 'done', 'state sensor.level 2.0→max'],
    ],
  );
  const stored = s.engine.runs({ automation_id: 'door_light', limit: 10 });
  t.match(stored, [
    {
      automation_id: 'door_light',
      status: 'done',
      error: null,
      trigger: { type: 'state', index: 0, entity_id: 'binary_sensor.door', from_state: 'off', to_state: 'on' },
      steps: [{ index: 0, type: 'service', status: 'done', detail: 'turn_on light.hall' }],
    },
  ]);
  t.match(
    s.logs.records().find((r) => r.msg === 'automation door_light done'),
    { level: 'info', automation_id: 'door_light', trigger: 'state binary_sensor.door off→on', status: 'done', ms: 0 },
    'one info line per run',
  );
});

t.test('state trigger with for_s: fires after the state held; a change before that cancels the wait', async (t) => {
  const s = await startEngine(
    t,
    [
      rule({
        id: 'left_open',
        triggers: [{ type: 'state', entity_id: 'binary_sensor.door', to: 'on', for_s: 60 }],
        actions: [turnOn('siren.porch')],
      }),
    ],
    { entities: { 'binary_sensor.door': 'off', 'siren.porch': 'off' } },
  );
  s.entities.set('binary_sensor.door', 'on');
  await s.clock.advance(59_000);
  s.entities.set('binary_sensor.door', 'on', null, { battery: 50 });
  s.entities.set('binary_sensor.door', 'off');
  await s.clock.advance(10_000);
  t.same(s.entities.calls, [], 'closed after 59 s: nothing; an attribute report did not restart or end the wait');

  s.entities.set('binary_sensor.door', 'on');
  await s.clock.advance(30_000);
  s.entities.set('binary_sensor.door', 'on', null, { battery: 49 });
  await s.clock.advance(29_999);
  t.equal(s.entities.calls.length, 0, 'not yet');
  await s.clock.advance(1);
  t.same(
    s.entities.calls.map((c) => c.entity_id),
    ['siren.porch'],
    'after 60 s open',
  );
  t.match(s.runs[0], { automation_id: 'left_open', trigger: 'state binary_sensor.door off→on' });
  t.equal(s.clock.pending(), 0, 'no timer left behind');
});

t.test('numeric trigger: fires on entering the range, again only after leaving it by the hysteresis', async (t) => {
  const s = await startEngine(
    t,
    [
      rule({
        id: 'hot',
        triggers: [{ type: 'numeric', entity_id: 'sensor.temp', above: 25, hysteresis: 1 }],
        actions: [turnOn('fan.bedroom')],
      }),
      rule({
        id: 'comfortable',
        triggers: [{ type: 'numeric', entity_id: 'sensor.temp', above: 20, below: 23, hysteresis: 0 }],
        actions: [turnOn('light.green')],
      }),
    ],
    { entities: { 'sensor.temp': 19, 'fan.bedroom': 'off', 'light.green': 'off' } },
  );
  const fired = () => s.entities.calls.map((c) => c.entity_id);
  s.entities.set('sensor.temp', 26);
  t.same(fired(), ['fan.bedroom'], 'the first report after start inside the range counts as entering it');
  s.entities.set('sensor.temp', 25.5);
  s.entities.set('sensor.temp', 24.5);
  s.entities.set('sensor.temp', 26);
  t.same(fired(), ['fan.bedroom'], '24.5 is not 1 below 25: still not re-armed');
  s.entities.set('sensor.temp', 'unavailable');
  s.entities.set('sensor.temp', 24);
  s.entities.set('sensor.temp', 'unavailable');
  s.entities.set('sensor.temp', 25.1);
  t.same(fired(), ['fan.bedroom', 'fan.bedroom'], '24 re-armed it (unavailable changed nothing); 25.1 entered again');

  s.entities.set('sensor.temp', 21);
  s.entities.set('sensor.temp', 22);
  s.entities.set('sensor.temp', '23');
  s.entities.set('sensor.temp', 22.9);
  await settle();
  t.same(fired().slice(2), ['light.green', 'light.green'], 'a range with both bounds: in at 21, out at 23 (exclusive), in at 22.9');
  t.match(s.runs.at(-1), { automation_id: 'comfortable', trigger: 'numeric sensor.temp 23→22.9' });
});

t.test('edge trigger: by pin id or entity id; rising, falling or both', async (t) => {
  const s = await startEngine(
    t,
    [
      rule({ id: 'bell', triggers: [{ type: 'edge', pin: 'doorbell', edge: 'rising' }], actions: [turnOn('light.a')] }),
      rule({ id: 'bell_both', triggers: [{ type: 'edge', pin: 'binary_sensor.doorbell', edge: 'both' }], actions: [turnOn('light.b')] }),
      rule({ id: 'bell_falls', triggers: [{ type: 'edge', pin: 'doorbell', edge: 'falling' }], actions: [turnOn('light.c')] }),
    ],
    { entities: { 'light.a': 'off', 'light.b': 'off', 'light.c': 'off' } },
  );
  const edge = (e: 'rising' | 'falling') =>
    s.events.emit('gpio.edge', {
      pin: 'doorbell',
      bcm: 17,
      entity_id: 'binary_sensor.doorbell',
      edge: e,
      value: e === 'rising' ? 1 : 0,
      at: s.clock.now(),
    });
  edge('rising');
  edge('falling');
  s.events.emit('gpio.edge', { pin: 'other', bcm: 27, entity_id: 'binary_sensor.other', edge: 'rising', value: 1, at: s.clock.now() });
  await settle();
  t.same(
    s.entities.calls.map((c) => c.entity_id),
    ['light.a', 'light.b', 'light.c', 'light.b'],
    'rising: bell and bell_both; falling: bell_falls and bell_both; the other pin: nothing',
  );
  t.match(s.engine.runs({ automation_id: 'bell', limit: 1 }), [
    { trigger: { type: 'edge', pin: 'doorbell', edge: 'rising', entity_id: 'binary_sensor.doorbell' } },
  ]);
});

t.test('time trigger: daily at HH:MM and cron, re-armed after each fire', async (t) => {
  // The manual clock starts on Monday 2026-01-05 08:00 UTC.
  const s = await startEngine(t, [
    rule({
      id: 'morning',
      triggers: [{ type: 'time', at: '08:30' }],
      actions: [{ type: 'notify', channel: 'speaker', text: 'at {{trigger.schedule}}' }],
    }),
    rule({
      id: 'quarterly',
      triggers: [{ type: 'time', cron: '*/15 9 * * mon-fri' }],
      actions: [{ type: 'notify', channel: 'log', text: 'tick' }],
    }),
  ]);
  await s.clock.advance(30 * 60_000 - 1);
  t.same(s.io.sent, [], 'not before 08:30');
  await s.clock.advance(1);
  t.same(
    s.io.sent.map((x) => [x.channel, x.text]),
    [['speaker', 'at 08:30']],
  );
  t.match(s.io.sent[0]?.meta, { automation_id: 'morning', run_id: /./ });
  await s.clock.advance(24 * 3600_000);
  const times = s.runs.map((r) => `${r.automation_id}@${new Date(r.started_at).toISOString().slice(0, 16)}`);
  t.same(times, [
    'morning@2026-01-05T08:30',
    'quarterly@2026-01-05T09:00',
    'quarterly@2026-01-05T09:15',
    'quarterly@2026-01-05T09:30',
    'quarterly@2026-01-05T09:45',
    'morning@2026-01-06T08:30',
  ]);
  t.match(s.engine.runs({ automation_id: 'quarterly', limit: 1 }), [
    { trigger: { type: 'time', schedule: '*/15 9 * * mon-fri', at: Date.UTC(2026, 0, 5, 9, 45) } },
  ]);
});

t.test('time trigger: a clock that jumps forward skips a missed time instead of firing it late', async (t) => {
  const s = await startEngine(t, [
    rule({ id: 'morning', triggers: [{ type: 'time', at: '09:00' }], actions: [{ type: 'notify', channel: 's', text: 'x' }] }),
  ]);
  // NTP sets the clock two hours ahead (08:00 → 10:00): 09:00 passed unseen.
  s.clock.jumpWallClock(2 * 3600_000);
  await s.clock.advance(60_000);
  t.same(s.io.sent, [], 'not fired late');
  t.match(s.warnings(), [{ automation_id: 'morning', msg: /time trigger skipped: noticed too late/ }]);
  await s.clock.advance(23 * 3600_000);
  t.equal(s.io.sent.length, 1, 'the next day at 09:00 it fires');
});

t.test('mqtt trigger: + and # filters, optional exact payload', async (t) => {
  const s = await startEngine(t, [
    rule({
      id: 'button',
      triggers: [{ type: 'mqtt', topic: 'zigbee2mqtt/+/action', payload: 'single' }],
      actions: [{ type: 'notify', channel: 'c', text: '{{trigger.topic}}={{trigger.payload}}' }],
    }),
    rule({
      id: 'all_home',
      triggers: [{ type: 'mqtt', topic: 'home/#' }],
      actions: [{ type: 'notify', channel: 'c', text: 'home {{trigger.topic}}' }],
    }),
    rule({ id: 'exact', triggers: [{ type: 'mqtt', topic: 'home/door' }], actions: [{ type: 'notify', channel: 'c', text: 'door' }] }),
  ]);
  const msg = (topic: string, payload: string) => s.events.emit('mqtt.message', { topic, payload, retained: false, at: s.clock.now() });
  msg('zigbee2mqtt/kitchen_button/action', 'single');
  msg('zigbee2mqtt/kitchen_button/action', 'double');
  msg('zigbee2mqtt/a/b/action', 'single');
  msg('home', 'x');
  msg('home/door', 'open');
  msg('homes/door', 'open');
  msg('$SYS/home', 'x');
  await settle();
  t.same(
    s.io.sent.map((x) => x.text),
    ['zigbee2mqtt/kitchen_button/action=single', 'home home', 'door', 'home home/door'],
    'home/# also matches home itself; + is one level',
  );
});

t.test('input trigger: the whole text matches; a reply answers without the agent; channel, disabled and conditions', async (t) => {
  const s = await startEngine(
    t,
    [
      rule({
        id: 'good_night',
        triggers: [
          {
            type: 'input',
            match: 'good ?night|晚安',
            reply: 'Good night, it is {{state(sensor.temp)}} degrees. You said "{{trigger.text}}".',
          },
        ],
        actions: [turnOn('switch.night_mode')],
      }),
      rule({
        id: 'cli_only',
        triggers: [{ type: 'input', match: 'lights? off', channel: 'cli' }],
        actions: [{ type: 'service', entity_id: 'light.all', service: 'turn_off', data: {} }],
      }),
      rule({
        id: 'if_home',
        triggers: [{ type: 'input', match: 'welcome' }],
        conditions: [{ type: 'state', entity_id: 'switch.home_mode', state: 'on' }],
        actions: [turnOn('light.porch')],
      }),
    ],
    { entities: { 'sensor.temp': 19.5, 'switch.night_mode': 'off', 'light.all': 'on', 'switch.home_mode': 'off', 'light.porch': 'off' } },
  );
  t.same(s.engine.handleInput({ text: '  Good Night ', channel: 'webui', source: 'webui' }), {
    matched: true,
    reply: 'Good night, it is 19.5 degrees. You said "Good Night".',
  });
  t.same(s.engine.handleInput({ text: '晚安', channel: 'voice', source: 'voice' }).matched, true);
  t.same(
    s.engine.handleInput({ text: 'good night everyone', channel: 'webui', source: 'webui' }),
    { matched: false },
    'the whole text must match',
  );
  t.same(s.engine.handleInput({ text: 'lights off', channel: 'webui', source: 'webui' }), { matched: false }, 'another channel');
  t.same(s.engine.handleInput({ text: 'lights off', channel: 'cli', source: 'cli' }), { matched: true }, 'no reply: the agent answers too');
  t.same(
    s.engine.handleInput({ text: 'welcome', channel: 'cli', source: 'cli' }),
    { matched: false },
    'conditions do not hold: the agent handles it',
  );
  s.engine.setEnabled('good_night', false, 'tester');
  t.same(s.engine.handleInput({ text: 'good night', channel: 'cli', source: 'cli' }), { matched: false }, 'disabled');
  await settle();
  t.same(
    s.entities.calls.map((c) => `${c.service} ${c.entity_id}`),
    ['turn_on switch.night_mode', 'turn_on switch.night_mode', 'turn_off light.all'],
  );
  t.match(s.engine.runs({ automation_id: 'good_night', limit: 1 }), [{ trigger: { type: 'input', text: '晚安', channel: 'voice' } }]);
});

t.test('a reference that does not resolve leaves its trigger inactive until the entity registers', async (t) => {
  const s = await startEngine(t, [
    rule({ id: 'hall', triggers: [{ type: 'state', entity_id: 'Hall motion', to: 'on' }], actions: [turnOn('light.hall')] }),
  ]);
  t.match(s.engine.list(), [
    {
      id: 'hall',
      problems: [
        /^triggers\[0\]\.entity_id "Hall motion": HA_ERR_ENTITY_NOT_FOUND: .*\(the trigger is inactive until it appears\)$/,
        /actions\[0\]\.entity_id "light.hall"/,
      ],
    },
  ]);
  s.entities.add('light.hall', 'off');
  s.entities.add('binary_sensor.hall_pir', 'off', { name: 'Hall motion' });
  s.entities.set('binary_sensor.hall_pir', 'on');
  await settle();
  t.same(
    s.entities.calls.map((c) => c.entity_id),
    ['light.hall'],
    'resolved by name once registered',
  );
  t.same(s.engine.list()[0]?.problems, [], 'no problems once both exist');

  // The sensor is replaced by another one with the same name: the name follows it.
  s.entities.remove('binary_sensor.hall_pir');
  t.match(s.engine.list()[0]?.problems, [/"Hall motion": HA_ERR_ENTITY_NOT_FOUND/]);
  s.entities.add('binary_sensor.hall_radar', 'off', { name: 'Hall motion' });
  s.entities.set('binary_sensor.hall_radar', 'on');
  await settle();
  t.same(
    s.entities.calls.map((c) => c.entity_id),
    ['light.hall', 'light.hall'],
  );
  t.match(s.runs.at(-1), { trigger: 'state binary_sensor.hall_radar off→on' });
});
