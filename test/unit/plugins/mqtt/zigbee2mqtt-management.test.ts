// Zigbee2MQTT management (permit join, rename, remove, groups) against a real mosquitto and a
// scripted Zigbee2MQTT bridge (test/helpers/scripted-z2m-bridge.ts: the retained device list,
// groups and bridge/info; transaction-matched answers; Z2M's refusals; silence on request). Operations go through the control methods (owner
// only) and the agent tools; the bridge's entities live in a real entity registry.
import t, { type Test } from 'tap';
import { type MqttFeatureContext, Zigbee2MqttFeature } from '../../../../plugins/mqtt/mqtt-plugin.js';
import { topicLayout } from '../../../../plugins/mqtt/topics.js';
import { emptyCounters, type MqttLink } from '../../../../plugins/mqtt/types.js';
import { ToolError } from '../../../../src/shared/tool.js';
import { mosquittoMissing } from '../../../helpers/mosquitto.js';
import { connectTestLink } from '../../../helpers/mqtt-test-broker.js';
import { createTestPluginContext, type TestPluginContext } from '../../../helpers/plugin-context.js';
import { Z2M_BASE as BASE, ScriptedBridge, type TestLink } from '../../../helpers/scripted-z2m-bridge.js';
import { expectErrorAsync } from '../../fixtures/support.js';
import { cleanups, eventually, startBroker, subscriptionsTaken } from './mqtt-test-kit.js';

const OWNER = { actor: 'cli', owner: true, proof: 'the CLI socket' };

interface Setup {
  tc: TestPluginContext;
  feature: Zigbee2MqttFeature;
  z2m: ScriptedBridge;
  link: TestLink;
  settings: Record<string, unknown>;
}

async function setup(t: Test, overrides: Record<string, unknown> = {}): Promise<Setup> {
  const atEnd = cleanups(t);
  const broker = await startBroker(t, 'mosquitto', atEnd);
  const z2mLink = await connectTestLink(broker.url, `z2m-${Math.random().toString(16).slice(2)}`);
  atEnd(() => z2mLink.end());
  const z2m = new ScriptedBridge(z2mLink);
  await subscriptionsTaken(z2mLink.client);
  await z2m.publishAll();
  const link = await connectTestLink(broker.url);
  atEnd(async () => {
    if (link.connected) await link.end();
  });
  const tc = createTestPluginContext({ name: 'mqtt', dataDir: t.testdir() });
  atEnd(() => tc.close());
  const settings: Record<string, unknown> = {
    zigbee2mqtt_base_topic: BASE,
    zigbee2mqtt_confirm_ms: 500,
    zigbee2mqtt_request_timeout_ms: 2000,
    zigbee2mqtt_permit_join_max_s: 254,
    ...overrides,
  };
  const context = {
    link: link as MqttLink,
    ctx: tc.context,
    settings: () => settings,
    counters: emptyCounters(),
    nodeId: 'test',
    layout: topicLayout('homeagent/test'),
  } as unknown as MqttFeatureContext;
  const feature = new Zigbee2MqttFeature(context);
  await feature.start();
  atEnd(() => feature.stop());
  await subscriptionsTaken(link.client);
  await eventually(() => feature.bridge.status().devices > 0, 'the device list');
  return { tc, feature, z2m, link, settings };
}

t.test('Zigbee2MQTT management against mosquitto', { skip: mosquittoMissing() ?? false }, async (t) => {
  t.test('permit join opens for the asked time, clamped, closes with 0; owner only', async (t) => {
    const { tc, z2m, feature } = await setup(t, { zigbee2mqtt_permit_join_max_s: 180 });
    const state = (await tc.control.call('mqtt.zigbee_permit_join', { seconds: 250 }, OWNER)) as { open: boolean; remaining_s: number };
    t.match(
      z2m.requests.at(-1),
      { path: 'permit_join', payload: { value: true, time: 180 } },
      'clamped to the setting; value and time for 1.x and 2.x',
    );
    t.equal(typeof z2m.requests.at(-1)?.payload.transaction, 'string', 'carries a transaction');
    t.equal(state.open, true);
    t.ok(state.remaining_s > 170 && state.remaining_s <= 180, `remaining ${state.remaining_s} s`);
    t.match(tc.audits.at(-1), { action: 'zigbee2mqtt.permit_join', details: { time: 180, actor: 'cli' } });
    await eventually(() => feature.management.permitJoinState().until !== null, 'bridge/info read');
    await expectErrorAsync(
      t,
      () => tc.control.call('mqtt.zigbee_permit_join', { seconds: 60 }, { actor: 'webui:guest' }),
      'HA_ERR_RPC_FORBIDDEN',
    );
    const closed = (await tc.control.call('mqtt.zigbee_permit_join', { seconds: 0 }, OWNER)) as { open: boolean };
    t.match(z2m.requests.at(-1), { payload: { value: false, time: 0 } });
    t.equal(closed.open, false);
    await eventually(() => feature.management.status().permit_join.open === false, 'closed in bridge/info too');
  });

  t.test('rename: the device and its entities take the new name; an unknown one is refused by name', async (t) => {
    const { tc, z2m, feature } = await setup(t);
    t.ok(tc.entities.find('switch.hall_switch_l1'), 'the entity before');
    const answer = await tc.control.call('mqtt.zigbee_rename', { from: '0xa4c138d1e5f2b803', to: 'hallway/switch' }, OWNER);
    t.match(answer, { from: 'Hall switch', to: 'hallway/switch' }, 'the IEEE address names the device; Z2M gets its friendly name');
    t.match(z2m.requests.at(-1), { path: 'device/rename', payload: { from: 'Hall switch', to: 'hallway/switch' } });
    await eventually(() => tc.entities.find('switch.hallway_switch_l1') !== undefined, 'the renamed entities');
    t.equal(tc.entities.find('switch.hallway_switch_l1')?.area, 'hallway');
    t.notOk(tc.entities.find('switch.hall_switch_l1'), 'the old ids are gone');
    t.equal(feature.bridge.device('hallway/switch')?.ieee_address, '0xa4c138d1e5f2b803');
    const refused = await expectErrorAsync(t, () => feature.management.rename('Nonexistent lamp', 'x', 'cli'), 'HA_ERR_ZIGBEE_REQUEST');
    t.match(refused.message, /no Zigbee2MQTT device "Nonexistent lamp"; known: /);
    await expectErrorAsync(t, () => feature.management.rename('Front door', 'bad/#/name', 'cli'), 'HA_ERR_ZIGBEE_REQUEST');
    t.equal(z2m.requests.filter((r) => r.path === 'device/rename').length, 1, 'nothing invalid was sent');
  });

  t.test('remove: a sleepy device needs force; Z2M’s refusal comes back in its words', async (t) => {
    const { tc, z2m, feature } = await setup(t);
    const refused = await expectErrorAsync(
      t,
      () => tc.control.call('mqtt.zigbee_remove', { device: 'bathroom/climate' }, OWNER),
      'HA_ERR_ZIGBEE_REQUEST',
    );
    t.match(refused.message, /Zigbee2MQTT refused device\/remove: Failed to remove device 'bathroom\/climate'/);
    t.ok(tc.entities.find('sensor.bathroom_climate_temperature'), 'still there');
    await tc.control.call('mqtt.zigbee_remove', { device: 'bathroom/climate', force: true }, OWNER);
    t.match(z2m.requests.at(-1), { path: 'device/remove', payload: { id: 'bathroom/climate', force: true } });
    await eventually(() => tc.entities.find('sensor.bathroom_climate_temperature') === undefined, 'its entities gone');
    t.notOk(feature.bridge.device('bathroom/climate'));
    await feature.management.remove('garage sensor', false, 'cli');
    t.match(z2m.requests.at(-1), { payload: { id: 'Garage sensor' } }, 'a disabled device (no entities) can be removed too');
  });

  t.test('groups: add, members in and out, remove', async (t) => {
    const { tc, z2m, feature } = await setup(t);
    await tc.control.call('mqtt.zigbee_group', { action: 'add', group: 'bedroom_lights', id: 7 }, OWNER);
    t.match(z2m.requests.at(-1), { path: 'group/add', payload: { friendly_name: 'bedroom_lights', id: 7 } });
    await eventually(() => feature.management.status().groups.some((g) => g.friendly_name === 'bedroom_lights'), 'the new group listed');
    await tc.control.call('mqtt.zigbee_group', { action: 'members_add', group: 'bedroom_lights', device: 'living_room/ceiling' }, OWNER);
    t.match(z2m.requests.at(-1), { path: 'group/members/add', payload: { group: 'bedroom_lights', device: 'living_room/ceiling' } });
    await eventually(
      () => feature.management.status().groups.find((g) => g.id === 7)?.members[0]?.ieee_address === '0x8c8b48fffe23f09e',
      'the member listed',
    );
    await tc.control.call('mqtt.zigbee_group', { action: 'members_remove', group: 'bedroom_lights', device: 'living_room/ceiling' }, OWNER);
    await eventually(() => feature.management.status().groups.find((g) => g.id === 7)?.members.length === 0, 'the member gone');
    await expectErrorAsync(
      t,
      () => tc.control.call('mqtt.zigbee_group', { action: 'members_add', group: 'bedroom_lights' }, OWNER),
      'HA_ERR_RPC_INVALID_PARAMS',
    );
    const unknown = await expectErrorAsync(
      t,
      () => feature.management.groupRemove('kitchen_lights', false, 'cli'),
      'HA_ERR_ZIGBEE_REQUEST',
    );
    t.match(unknown.message, /known: living_room_lights, bedroom_lights/);
    const duplicate = await expectErrorAsync(t, () => feature.management.groupAdd('bedroom_lights', 'cli'), 'HA_ERR_ZIGBEE_REQUEST');
    t.match(duplicate.message, /already in use/);
    await tc.control.call('mqtt.zigbee_group', { action: 'remove', group: 'bedroom_lights' }, OWNER);
    await eventually(() => !feature.management.status().groups.some((g) => g.id === 7), 'the group gone');
  });

  t.test('no answer times out; a broker that is away refuses at once; an old Z2M without transactions works', async (t) => {
    const { z2m, feature, link } = await setup(t, { zigbee2mqtt_request_timeout_ms: 300 });
    z2m.silent.add('permit_join');
    await expectErrorAsync(t, () => feature.management.permitJoin(60, 'cli'), 'HA_ERR_ZIGBEE_TIMEOUT');
    z2m.silent.clear();
    z2m.legacy = true;
    const state = await feature.management.permitJoin(30, 'cli');
    t.equal(state.open, true, 'answered without a transaction: the only pending permit_join');
    await link.end();
    const sent = z2m.requests.length;
    await expectErrorAsync(t, () => feature.management.permitJoin(60, 'cli'), 'HA_ERR_ZIGBEE_UNAVAILABLE');
    t.equal(z2m.requests.length, sent, 'nothing queued for later');
  });

  t.test('diagnostics and tools: availability and link quality; remove is dangerous', async (t) => {
    const { tc, z2m, feature } = await setup(t);
    await z2m.state('Hall switch', { state_l1: 'ON', state_l2: 'OFF', linkquality: 87, last_seen: '2026-12-02T01:00:00.000Z' });
    await eventually(() => feature.bridge.diagnostics().find((d) => d.friendly_name === 'Hall switch')?.linkquality === 87, 'link quality');
    const status = (await tc.call('zigbee_devices', {})) as { devices: Array<Record<string, unknown>>; bridge: string };
    t.equal(status.bridge, 'online');
    t.match(
      status.devices.find((d) => d.friendly_name === 'Hall switch'),
      {
        ieee_address: '0xa4c138d1e5f2b803',
        availability: 'not reported',
        linkquality: 87,
        last_seen: '2026-12-02T01:00:00.000Z',
        entities: ['switch.hall_switch_l1', 'switch.hall_switch_l2'],
      },
    );
    t.match(
      status.devices.find((d) => d.friendly_name === 'Front door'),
      { availability: 'offline' },
    );
    t.equal(tc.tools.get('zigbee_remove')?.tier, 'dangerous');
    t.equal(tc.tools.get('zigbee_permit_join')?.tier, 'act');
    t.equal(tc.tools.get('zigbee_rename')?.tier, 'act');
    t.equal(tc.tools.get('zigbee_devices')?.tier, 'read');
    const opened = (await tc.call('zigbee_permit_join', {})) as { open: boolean; opened_by: string };
    t.match(opened, { open: true, opened_by: /^agent/ });
    t.match(z2m.requests.at(-1), { payload: { time: 120 } }, 'the tool opens for two minutes by default');
    await t.rejects(tc.call('zigbee_rename', { from: 'Ghost', to: 'x' }), ToolError);
    try {
      await tc.call('zigbee_rename', { from: 'Ghost', to: 'x' });
    } catch (error) {
      t.match((error as ToolError).info, { reason: 'not_found', hint: /zigbee_devices/ });
    }
  });
});
