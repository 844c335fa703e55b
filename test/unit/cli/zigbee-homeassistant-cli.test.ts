// `homeagentctl zigbee …` and `homeagentctl homeassistant …` (src/cli/zigbee.ts, homeassistant.ts):
// argument parsing, readable output in both languages, and `homeassistant status` run against the
// control methods of a real homeassistant plugin connected to the scripted Home Assistant.
import t from 'tap';
import { HomeassistantPlugin } from '../../../plugins/homeassistant/homeassistant-plugin.js';
import type { HomeassistantStatus } from '../../../src/api/homeassistant.js';
import type { CommandClient } from '../../../src/cli/command-client.js';
import {
  formatHomeassistantStatus,
  HomeassistantUsageError,
  parseHomeassistantCommand,
  runHomeassistant,
} from '../../../src/cli/homeassistant.js';
import { RemoteError } from '../../../src/cli/rpc-client.js';
import {
  DEFAULT_PERMIT_JOIN_S,
  formatPermitJoin,
  formatZigbeeStatus,
  parseZigbeeCommand,
  runZigbee,
  ZIGBEE_OFF,
  ZigbeeUsageError,
  zigbeeFlagsUsed,
} from '../../../src/cli/zigbee.js';
import { toErrorEnvelope } from '../../../src/shared/errors.js';
import { HaPeer } from '../../helpers/ha-peer.js';
import { createTestPluginContext } from '../../helpers/plugin-context.js';
import { until } from '../../helpers/until.js';

t.test('parseZigbeeCommand reads each command and refuses what does not fit', async (t) => {
  t.same(parseZigbeeCommand([], {}), { command: 'status' });
  t.same(parseZigbeeCommand(['devices'], {}), { command: 'status' });
  t.same(parseZigbeeCommand(['permit-join'], {}), { command: 'permit-join', seconds: DEFAULT_PERMIT_JOIN_S });
  t.same(parseZigbeeCommand(['permit-join', '0'], {}), { command: 'permit-join', seconds: 0 });
  t.same(parseZigbeeCommand(['rename', 'Hall switch', 'hallway/switch'], {}), {
    command: 'rename',
    from: 'Hall switch',
    to: 'hallway/switch',
  });
  t.same(parseZigbeeCommand(['remove', '0x00158d0001e5b6a7'], { force: true }), {
    command: 'remove',
    device: '0x00158d0001e5b6a7',
    force: true,
  });
  t.same(parseZigbeeCommand(['group', 'add', 'bedroom'], { id: '7' }), { command: 'group', action: 'add', group: 'bedroom', id: 7 });
  t.same(parseZigbeeCommand(['group', 'remove', 'bedroom'], {}), { command: 'group', action: 'remove', group: 'bedroom', force: false });
  t.same(parseZigbeeCommand(['group', 'members', 'add', 'bedroom', 'lamp'], { endpoint: '2' }), {
    command: 'group',
    action: 'members_add',
    group: 'bedroom',
    device: 'lamp',
    endpoint: 2,
  });
  t.same(zigbeeFlagsUsed({ force: false }), ['force']);
  const refused: Array<[string[], Record<string, unknown>, RegExp]> = [
    [['pair'], {}, /unknown zigbee command pair; use status, permit-join, rename, remove or group/],
    [['permit-join', '300'], {}, /SECONDS must be a whole number from 0 to 254, not "300"/],
    [['permit-join', '-1'], {}, /SECONDS must be a whole number/],
    [['permit-join', '1', '2'], {}, /at most SECONDS/],
    [['rename', 'only-one'], {}, /needs FROM .* and TO/],
    [['remove'], {}, /exactly one DEVICE/],
    [['rename', 'a', 'b'], { force: true }, /--force does not belong to zigbee rename/],
    [['status'], { id: '3' }, /--id does not belong/],
    [['group', 'add', 'x'], { id: '0' }, /--id must be a whole number from 1 to 65535/],
    [['group', 'members', 'join', 'g', 'd'], {}, /members add\|remove GROUP DEVICE/],
    [['group'], {}, /zigbee group add NAME/],
  ];
  for (const [positionals, flags, message] of refused) {
    t.throws(() => parseZigbeeCommand(positionals, flags), { constructor: ZigbeeUsageError, message }, positionals.join(' '));
  }
});

t.test('zigbee output: joining, devices with weak links and offline ones, groups', async (t) => {
  t.equal(
    formatPermitJoin({ open: false, until: null, remaining_s: null, opened_by: null }, 'en'),
    'joining closed: no new Zigbee devices can pair',
  );
  t.equal(formatPermitJoin({ open: false, until: null, remaining_s: null, opened_by: null }, 'zh'), '已关闭入网：新设备无法配对');
  const open = { open: true, until: '2026-12-02T01:42:00.000Z', remaining_s: 118, opened_by: 'cli' };
  t.equal(formatPermitJoin(open, 'en'), 'joining open for 118 s (until 01:42:00 UTC): put the new device in pairing mode now');
  t.equal(formatPermitJoin(open, 'zh'), '已允许入网 118 秒（到 UTC 01:42:00）：请让新设备进入配对模式');
  const network: Parameters<typeof formatZigbeeStatus>[0] = {
    bridge: 'online',
    permit_join: { open: false, until: null, remaining_s: null, opened_by: null },
    devices: [
      {
        friendly_name: 'Front door',
        ieee_address: '0x00158d0002f24257',
        model: 'MCCGQ11LM',
        availability: 'offline',
        linkquality: 12,
        last_seen: null,
        entities: [],
      },
      {
        friendly_name: 'Hall switch',
        ieee_address: '0xa4c138d1e5f2b803',
        model: null,
        availability: 'online',
        linkquality: 87,
        last_seen: '2026-12-02T01:00:00.000Z',
        entities: [],
      },
    ],
    groups: [{ id: 1, friendly_name: 'living_room_lights', members: [{ ieee_address: '0x1', endpoint: 1 }] }],
  };
  const text = formatZigbeeStatus(network, 'en');
  t.match(text, /^Zigbee2MQTT bridge: online\n/);
  t.match(text, /Front door\s+OFFLINE, lqi 12 \(weak\)\s+\[0x00158d0002f24257, MCCGQ11LM\]/);
  t.match(text, /Hall switch\s+online, lqi 87, last seen 2026-12-02T01:00:00.000Z/);
  t.match(text, /living_room_lights \(id 1\): 1 member\(s\)/);
  t.equal(
    formatZigbeeStatus(
      { ...network, devices: [...network.devices, { ...network.devices[1], friendly_name: '走廊开关', model: null } as never] },
      'zh',
    ),
    [
      'Zigbee2MQTT 网关：在线',
      '已关闭入网：新设备无法配对',
      '3 个设备：',
      '  Front door   离线，lqi 12（信号弱）  [0x00158d0002f24257, MCCGQ11LM]',
      '  Hall switch  在线，lqi 87，上次出现 2026-12-02T01:00:00.000Z  [0xa4c138d1e5f2b803]',
      '  走廊开关     在线，lqi 87，上次出现 2026-12-02T01:00:00.000Z  [0xa4c138d1e5f2b803]',
      '1 个分组：',
      '  living_room_lights（id 1）：1 个成员',
    ].join('\n'),
    'in Chinese, a Chinese name is padded by its terminal width',
  );
});

t.test('parseHomeassistantCommand and its output', async (t) => {
  t.same(parseHomeassistantCommand([]), { command: 'status' });
  t.same(parseHomeassistantCommand(['sync']), { command: 'sync' });
  t.throws(() => parseHomeassistantCommand(['connect']), { constructor: HomeassistantUsageError, message: /use status or sync/ });
  t.throws(() => parseHomeassistantCommand(['status', 'x']), { constructor: HomeassistantUsageError, message: /takes no arguments/ });
  const base: HomeassistantStatus = {
    state: 'auth_failed',
    url: 'ws://homeassistant.local:8123/api/websocket',
    ha_version: null,
    since: null,
    connections: 0,
    failed_attempts: 0,
    next_attempt_in_ms: null,
    last_error: 'Invalid access token or password',
    configured: true,
    entities: 0,
    skipped: [],
    skipped_count: 0,
    assist_list: 'not read yet',
    last_sync: null,
  };
  t.match(
    formatHomeassistantStatus(base, 'en'),
    /REFUSED the token \(Invalid access token or password\): set a new one with\n {2}homeagentctl config set plugin.homeassistant.token <TOKEN>\n/,
  );
  t.match(
    formatHomeassistantStatus(base, 'zh'),
    /^Home Assistant 拒绝了令牌（Invalid access token or password）：请用下面的命令设置新令牌\n {2}homeagentctl config set plugin.homeassistant.token <TOKEN>\n/,
  );
  const waiting = { ...base, state: 'waiting' as const, last_error: 'cannot connect: ECONNREFUSED', next_attempt_in_ms: 4200 };
  t.match(
    formatHomeassistantStatus(waiting, 'en'),
    /^NOT connected to ws:\/\/homeassistant.local:8123\/api\/websocket \(waiting\): cannot connect: ECONNREFUSED; next attempt in 5 s\n/,
  );
  t.equal(
    formatHomeassistantStatus(
      { ...waiting, entities: 23, skipped: [{ entity_id: 'switch.old_heater', reason: 'disabled' }], skipped_count: 2, connections: 1 },
      'zh',
    ),
    [
      '未连接到 ws://homeassistant.local:8123/api/websocket（waiting）：cannot connect: ECONNREFUSED；5 秒后再试',
      '来自 Home Assistant 的实体 23 个',
      '跳过 2 个：',
      '  switch.old_heater: disabled',
      '  ……还有 1 个',
      '连接 1 次',
    ].join('\n'),
  );
});

/** A CommandClient over a plugin's control methods, as the CLI socket would carry them. */
function clientOf(control: {
  call(method: string, params: unknown, caller: { actor: string; owner: boolean }): Promise<unknown>;
}): CommandClient {
  return {
    call: async (method, params) => {
      try {
        return await control.call(method, params, { actor: 'cli', owner: true });
      } catch (error) {
        throw new RemoteError(toErrorEnvelope(error));
      }
    },
    close: () => undefined,
  };
}

t.test('homeagentctl homeassistant status against a real plugin and the scripted Home Assistant', async (t) => {
  const peer = new HaPeer({ token: 'cli-test-token' });
  await peer.start();
  const tc = createTestPluginContext({
    name: 'homeassistant',
    dataDir: t.testdir(),
    settings: {
      url: peer.url,
      token: 'cli-test-token',
      expose: 'assist',
      include: [],
      exclude: [],
      max_entities: 500,
      command_timeout_ms: 5000,
      ping_interval_ms: 30000,
      reconnect_min_ms: 50,
      reconnect_max_ms: 500,
    },
  });
  const plugin = new HomeassistantPlugin(tc.context);
  t.teardown(async () => {
    await plugin.stop();
    await peer.stop();
    await tc.close();
  });
  await plugin.start();
  await until('the first sync', () => (plugin.status().last_sync !== null ? true : undefined));
  let out = '';
  const code = await runHomeassistant(
    { command: 'status' },
    {
      connect: async () => clientOf(tc.control),
      json: false,
      timeoutMs: 5000,
      language: 'en',
      stdout: { write: (s: string) => (out += s) },
    },
  );
  t.equal(code, 0);
  t.match(out, /^connected to Home Assistant 2025\.11\.3 at ws:\/\/127\.0\.0\.1:\d+\/api\/websocket since \S+\n/);
  t.match(out, /4 entities from Home Assistant/);
  t.match(out, /alarm_control_panel\.home: alarm panels stay in Home Assistant/);
  out = '';
  await runHomeassistant(
    { command: 'status' },
    {
      connect: async () => clientOf(tc.control),
      json: false,
      timeoutMs: 5000,
      language: 'zh',
      stdout: { write: (s: string) => (out += s) },
    },
  );
  t.match(
    out,
    /^已连接到 Home Assistant 2025\.11\.3（ws:\/\/127\.0\.0\.1:\d+\/api\/websocket），自 \S+ 起\n来自 Home Assistant 的实体 4 个\n/,
  );
  out = '';
  await runHomeassistant(
    { command: 'sync' },
    { connect: async () => clientOf(tc.control), json: true, timeoutMs: 5000, stdout: { write: (s: string) => (out += s) } },
  );
  t.match(JSON.parse(out), { state: 'ready', entities: 4 });
});

t.test('homeagentctl zigbee with Zigbee2MQTT off says what to set', async (t) => {
  // What the daemon answers for a method nobody registered (the control registry's own error).
  const { ControlRegistry } = await import('../../../src/plugin/control-registry.js');
  const client = clientOf(new ControlRegistry() as never);
  await t.rejects(
    runZigbee(
      { command: 'permit-join', seconds: 60 },
      { connect: async () => client, json: false, timeoutMs: 1000, stdout: { write: () => true } },
    ),
    {
      code: 'HA_ERR_RPC_UNKNOWN_METHOD',
      message: ZIGBEE_OFF,
    },
  );
});
