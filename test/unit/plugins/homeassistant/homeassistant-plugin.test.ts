// The homeassistant plugin against a scripted Home Assistant on loopback (test/helpers/ha-peer.ts,
// HA's WebSocket messages and failures) with a real entity registry behind ctx.entities: the
// exposed entities come in with names, areas, aliases and live states; a HomeAgent call becomes
// call_service; a wrong token stops the reconnecting until the token changes; a dropped or
// restarted HA is reconnected and read afresh. Waits poll with a deadline; the auth test runs on a
// hand-driven clock so "no retry is armed" is a fact, not a pause.
import t, { type Test } from 'tap';
import { HomeassistantPlugin } from '../../../../plugins/homeassistant/homeassistant-plugin.js';
import { HaPeer } from '../../../helpers/ha-peer.js';
import { ManualTimerClock } from '../../../helpers/manual-timer-clock.js';
import { createTestPluginContext, type TestPluginContext } from '../../../helpers/plugin-context.js';
import { until } from '../../../helpers/until.js';
import { expectErrorAsync } from '../../fixtures/support.js';

const TOKEN = 'eyJhbGciOiJIUzI1NiJ9.long-lived-test-token';

const DEFAULTS = {
  enabled: true,
  token: TOKEN,
  expose: 'assist',
  include: ['input_boolean'],
  exclude: [],
  max_entities: 500,
  command_timeout_ms: 5000,
  ping_interval_ms: 30000,
  reconnect_min_ms: 20,
  reconnect_max_ms: 200,
};

interface Setup {
  peer: HaPeer;
  tc: TestPluginContext;
  plugin: HomeassistantPlugin;
  state(id: string): unknown;
}

async function setup(
  t: Test,
  options: { settings?: Record<string, unknown>; admin?: boolean; clock?: ManualTimerClock; ready?: boolean } = {},
): Promise<Setup> {
  const peer = new HaPeer({ token: TOKEN, ...(options.admin === undefined ? {} : { admin: options.admin }) });
  await peer.start();
  const tc = createTestPluginContext({
    name: 'homeassistant',
    dataDir: t.testdir(),
    settings: { ...DEFAULTS, url: peer.url, ...options.settings },
  });
  const plugin = new HomeassistantPlugin(tc.context, options.clock ? { clock: options.clock } : {});
  t.teardown(async () => {
    await plugin.stop();
    await peer.stop();
    await tc.close();
  });
  await plugin.start();
  if (options.ready !== false) await until('the first sync', () => (plugin.status().last_sync !== null ? true : undefined));
  return { peer, tc, plugin, state: (id) => tc.entities.find(id)?.state };
}

t.test('auth ok: the exposed entities come in with names, areas, aliases and states', async (t) => {
  const { tc, plugin, peer } = await setup(t);
  t.same(
    plugin.entityIds,
    ['cover.garage_door', 'light.kitchen', 'lock.front_door', 'sensor.living_room_temperature', 'switch.guest_mode'],
    'exposed to Assist, plus the included input_boolean; not the attic (not exposed), the alarm, the disabled heater, the sun',
  );
  const kitchen = tc.entities.find('light.kitchen');
  t.match(kitchen, {
    name: 'Kitchen ceiling',
    aliases: ['厨房灯', 'ceiling light'],
    area: 'kitchen',
    state: 'off',
    owner: 'plugin:homeassistant',
    critical: false,
    attributes: { ha_entity_id: 'light.kitchen', supported_color_modes: ['color_temp', 'xy'] },
  });
  t.equal(tc.entities.find('厨房灯')?.entity_id, 'light.kitchen', 'HA aliases find it, as intents will');
  t.match(tc.entities.find('sensor.living_room_temperature'), {
    state: 21.5,
    unit: '°C',
    device_class: 'temperature',
    area: 'living_room',
  });
  t.match(
    tc.entities.find('lock.front_door'),
    { critical: true, area: 'hallway', state: 'locked' },
    'a lock from HA is critical like a local one',
  );
  t.match(tc.entities.find('cover.garage_door'), { critical: true });
  const status = plugin.status();
  t.match(status, { state: 'ready', ha_version: '2025.11.3', entities: 5, assist_list: 'read', connections: 1 });
  t.match(
    status.skipped.find((s) => s.entity_id === 'alarm_control_panel.home'),
    { reason: /alarm panels stay in Home Assistant/ },
  );
  t.match(
    status.skipped.find((s) => s.entity_id === 'switch.old_heater'),
    { reason: /disabled/ },
  );
  t.match(plugin.health(), {
    ok: true,
    detail: /connected to Home Assistant 2025\.11\.3 .*5 entities$/,
    detail_zh: /已连接 .* 上的 Home Assistant 2025\.11\.3：5 个实体/,
  });
  t.same(
    peer.received.slice(0, 5),
    ['auth', 'subscribe_events', 'subscribe_events', 'subscribe_events', 'subscribe_events'],
    'subscribed before reading',
  );
  t.ok(peer.received.indexOf('get_states') > peer.received.lastIndexOf('subscribe_events'));
  const answered = (await tc.control.call('homeassistant.status', {}, { actor: 'cli', owner: true })) as { entities: number };
  t.equal(answered.entities, 5, 'homeassistant.status answers over the control API');
});

t.test('a state_changed event updates the entity; a removed entity leaves; a new exposed one arrives', async (t) => {
  const { tc, peer, plugin } = await setup(t);
  peer.setState('sensor.living_room_temperature', '22.25');
  await until('the new temperature', () => (tc.entities.find('sensor.living_room_temperature')?.state === 22.25 ? true : undefined));
  peer.setState('light.kitchen', 'on', { brightness: 200 });
  await until('the light on', () => (tc.entities.find('light.kitchen')?.state === 'on' ? true : undefined));
  t.equal(tc.entities.find('light.kitchen')?.attributes.brightness, 200);
  peer.removeEntity('cover.garage_door');
  await until('the cover gone', () => (tc.entities.find('cover.garage_door') === undefined ? true : undefined));
  peer.setState('input_boolean.vacation', 'on', { friendly_name: 'Vacation' });
  await until('the new helper', () => (tc.entities.find('switch.vacation')?.state === 'on' ? true : undefined));
  const skipped = plugin.status().skipped_count;
  for (const state of ['disarmed', 'arming', 'armed_home']) peer.setState('alarm_control_panel.home', state);
  peer.setState('light.attic', 'off');
  peer.setState('light.kitchen', 'off');
  await until('the light off', () => (tc.entities.find('light.kitchen')?.state === 'off' ? true : undefined));
  t.notOk(plugin.entityIds.includes('light.attic'), 'an entity not exposed stays out when it changes');
  t.equal(plugin.status().skipped_count, skipped, 'a skipped entity changing state is still one skipped entity');
  t.notOk(tc.entities.find('alarm_control_panel.home'));
});

t.test('HomeAgent switching an HA light calls the service through HA; HA errors come back coded', async (t) => {
  const { tc, peer } = await setup(t);
  const after = await tc.entities.call('light.kitchen', 'turn_on', { brightness: 128 }, { actor: 'agent' });
  t.same(peer.calls.at(-1), {
    domain: 'light',
    service: 'turn_on',
    service_data: { brightness: 128 },
    target: { entity_id: 'light.kitchen' },
  });
  t.equal(after.state, 'on', "HA's state_changed arrived before its result: the call returns with the new state");
  t.equal(tc.entities.find('light.kitchen')?.attributes.brightness, 128);
  t.match(tc.audits.at(-1), { action: 'homeassistant.call_service', details: { entity_id: 'light.kitchen', service: 'turn_on' } });

  await tc.entities.call('cover.garage_door', 'open', {}, { actor: 'cli' });
  t.match(peer.calls.at(-1), { domain: 'cover', service: 'open_cover', target: { entity_id: 'cover.garage_door' } });
  await tc.entities.call('Guest mode', 'turn_on', {}, { actor: 'cli' });
  t.match(peer.calls.at(-1), { domain: 'input_boolean', service: 'turn_on' });
  t.equal(tc.entities.find('switch.guest_mode')?.state, 'on');

  peer.failures.set('lock.unlock', { code: 'home_assistant_error', message: 'Lock is jammed' });
  const error = await expectErrorAsync(
    t,
    () => tc.entities.call('lock.front_door', 'unlock', {}, { actor: 'cli' }),
    'HA_ERR_HOMEASSISTANT_COMMAND',
  );
  t.match(error.message, /home_assistant_error: Lock is jammed/);
  t.equal(tc.entities.find('lock.front_door')?.state, 'locked', 'a refused call changes nothing');
});

t.test('a wrong token: auth_failed, no retry armed, health says so; a new token connects', async (t) => {
  const clock = new ManualTimerClock(Date.now());
  const { tc, plugin, peer } = await setup(t, { settings: { token: 'wrong-token' }, clock, ready: false });
  await until('the refusal', () => (plugin.connection?.state === 'auth_failed' ? true : undefined));
  t.equal(peer.authAttempts, 1);
  t.equal(clock.pending(), 0, 'nothing is scheduled: no retry with a refused token');
  await clock.advance(10 * 60_000);
  t.equal(peer.authAttempts, 1, 'ten minutes later, still one login attempt');
  t.match(plugin.health(), {
    ok: false,
    detail: /HA_ERR_HOMEASSISTANT_AUTH.*Invalid access token or password/,
    detail_zh: /HA_ERR_HOMEASSISTANT_AUTH.*拒绝了令牌/,
  });
  t.match(plugin.status(), { state: 'auth_failed', next_attempt_in_ms: null, last_error: 'Invalid access token or password' });
  await expectErrorAsync(t, () => plugin.sync(), 'HA_ERR_HOMEASSISTANT_CONNECTION');

  tc.context.settings.set('token', TOKEN);
  await until('connected with the new token', () => (plugin.status().last_sync !== null ? true : undefined));
  t.equal(peer.authAttempts, 2);
  t.ok(plugin.entityIds.includes('light.kitchen'));
});

t.test('no token: the plugin waits and says what to do', async (t) => {
  const { plugin, peer } = await setup(t, { settings: { token: '' }, ready: false });
  t.equal(plugin.connection?.state, 'stopped');
  t.equal(peer.connections, 0, 'no connection attempted without a token');
  t.match(plugin.health(), {
    ok: false,
    detail: /HA_ERR_HOMEASSISTANT_CONFIG: no plugin.homeassistant.token/,
    detail_zh: /长期访问令牌/,
  });
});

t.test('a token without administrator rights: only include comes in', async (t) => {
  const { plugin } = await setup(t, { admin: false, settings: { include: ['light.kitchen', 'input_boolean'] } });
  t.same(plugin.entityIds, ['light.kitchen', 'switch.guest_mode']);
  t.equal(plugin.status().assist_list, 'refused');
});

t.test('exclude and list mode; a setting change re-reads at once', async (t) => {
  const { plugin, tc } = await setup(t, { settings: { exclude: ['lock', 'cover.*'] } });
  t.same(plugin.entityIds, ['light.kitchen', 'sensor.living_room_temperature', 'switch.guest_mode']);
  tc.context.settings.set('expose', 'list');
  await until('list mode applied', () => (plugin.entityIds.length === 1 ? true : undefined));
  t.same(plugin.entityIds, ['switch.guest_mode']);
});

t.test('an id HomeAgent already has locally: the HA entity is told apart', async (t) => {
  const peer = new HaPeer({ token: TOKEN });
  await peer.start();
  const tc = createTestPluginContext({ name: 'homeassistant', dataDir: t.testdir(), settings: { ...DEFAULTS, url: peer.url } });
  const local = tc.entities.register('plugin:gpio', { domain: 'light', object_id: 'kitchen', name: 'Kitchen relay' });
  const plugin = new HomeassistantPlugin(tc.context);
  t.teardown(async () => {
    await plugin.stop();
    local.remove();
    await peer.stop();
    await tc.close();
  });
  await plugin.start();
  await until('the first sync', () => (plugin.status().last_sync !== null ? true : undefined));
  t.ok(plugin.entityIds.includes('light.kitchen_ha'));
  t.equal(tc.entities.find('light.kitchen')?.owner, 'plugin:gpio', 'the local entity is untouched');
});

t.test('HA dropping and restarting: unavailable meanwhile, then reconnected and read afresh', async (t) => {
  // Waits long enough to look at the house while HA is away (the state changes are recorded too).
  const { tc, peer, plugin } = await setup(t, { settings: { reconnect_min_ms: 2000, reconnect_max_ms: 3000 } });
  const seen: unknown[] = [];
  tc.events.on('test', 'entity.state_changed', (e) => {
    if (e.entity_id === 'light.kitchen') seen.push(e.new_state);
  });
  peer.drop();
  await until('unavailable', () => (seen.includes('unavailable') ? true : undefined));
  t.equal(tc.entities.find('light.kitchen')?.state, 'unavailable');
  t.match(plugin.health(), { ok: false, detail: /not connected to Home Assistant/ });
  await expectErrorAsync(t, () => tc.entities.call('lock.front_door', 'lock', {}, { actor: 'cli' }), 'HA_ERR_ENTITY_UNAVAILABLE');
  await until('reconnected after the drop', () =>
    plugin.status().connections === 2 && plugin.status().state === 'ready' ? true : undefined,
  );
  await until('states back', () => (tc.entities.find('light.kitchen')?.state === 'off' ? true : undefined));

  // A restart: HA goes away, the house changes meanwhile, HA comes back on the same port.
  await peer.restart((h) => {
    const kitchen = h.states.find((s) => s.entity_id === 'light.kitchen');
    if (kitchen) kitchen.state = 'on';
    h.states = h.states.filter((s) => s.entity_id !== 'cover.garage_door');
    h.ha_version = '2025.12.0';
  });
  await until('reconnected after the restart', () =>
    plugin.status().ha_version === '2025.12.0' && plugin.status().last_sync !== null && tc.entities.find('light.kitchen')?.state === 'on'
      ? true
      : undefined,
  );
  t.notOk(plugin.entityIds.includes('cover.garage_door'), 'an entity gone during the restart is gone here');
  t.equal(peer.calls.length, 0, 'the refused call was not queued for later');
  peer.setState('light.kitchen', 'off');
  await until('live again', () => (tc.entities.find('light.kitchen')?.state === 'off' ? true : undefined));
});

t.test('a ping HA does not answer ends the connection; it reconnects', async (t) => {
  const { plugin, peer } = await setup(t, {
    settings: { ping_interval_ms: 1000, command_timeout_ms: 500, reconnect_min_ms: 1000, reconnect_max_ms: 2000 },
  });
  peer.answerPings = false;
  // Seen while it waits to reconnect (the pings of a reconnected link go unanswered too, until below).
  await until(
    'the dead link noticed',
    () => (plugin.status().state === 'waiting' && plugin.status().last_error?.includes('connection lost') ? true : undefined),
    10_000,
  );
  const before = plugin.status().connections;
  t.ok(peer.received.includes('ping'), 'HomeAgent pinged');
  peer.answerPings = true;
  await until(
    'reconnected',
    () => (plugin.status().connections === before + 1 && plugin.status().state === 'ready' ? true : undefined),
    10_000,
  );
  t.pass('one new connection after the dead one');
});

t.test('HA finishing its start (homeassistant_started) or a registry change makes a re-read', async (t) => {
  const { tc, peer, plugin } = await setup(t);
  const reads = () => peer.received.filter((r) => r === 'get_states').length;
  const first = reads();
  // HA started late: an integration's entity arrived without a state_changed HomeAgent saw.
  peer.house.states.push({ entity_id: 'input_boolean.late', state: 'on', attributes: { friendly_name: 'Late helper' } });
  peer.fire('homeassistant_started', {});
  await until('read again', () => (tc.entities.find('switch.late')?.state === 'on' ? true : undefined));
  t.equal(reads(), first + 1);
  const entry = peer.house.entities.find((e) => e.entity_id === 'light.kitchen');
  if (entry) entry.area_id = 'living_room';
  peer.fire('entity_registry_updated', { action: 'update', entity_id: 'light.kitchen', changes: { area_id: 'kitchen' } });
  await until('the light moved', () => (tc.entities.find('light.kitchen')?.area === 'living_room' ? true : undefined));
  t.equal(plugin.status().state, 'ready');
});
