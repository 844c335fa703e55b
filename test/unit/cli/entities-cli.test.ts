// `homeagentctl entities …` and `homeagentctl sensors` (src/cli/entities.ts): argument parsing,
// readable output, and the commands end to end over the real CLI socket against a real registry.
import { join } from 'node:path';
import t, { type Test } from 'tap';
import { CliPlugin } from '../../../plugins/cli/index.js';
import type { CommandClient } from '../../../src/cli/command-client.js';
import {
  age,
  type EntitiesCommand,
  EntitiesUsageError,
  parseEntitiesCommand,
  parseSensorsCommand,
  runEntities,
} from '../../../src/cli/entities.js';
import { RpcClient } from '../../../src/cli/rpc-client.js';
import { registerEntityMethods } from '../../../src/home/entity-methods.js';
import { ControlRegistry } from '../../../src/plugin/control-registry.js';
import { asContext, createTestPluginContext } from '../../helpers/plugin-context.js';
import { captureLogs, tempDir } from '../fixtures/support.js';
import { type HomeSetup, openHome, T0 } from '../home/home-fixture.js';

t.test('parseEntitiesCommand and parseSensorsCommand read each command and refuse what does not fit', async (t) => {
  const parse = parseEntitiesCommand;
  t.same(parse(['list'], {}), { command: 'list' });
  t.same(parse(['list'], { domain: 'sensor', area: 'Kitchen' }), { command: 'list', domain: 'sensor', area: 'Kitchen' });
  t.same(parse(['get', 'kitchen', 'light'], {}), { command: 'get', entity: 'kitchen light' });
  t.same(parse(['get', '厨房灯'], {}), { command: 'get', entity: '厨房灯' });
  t.same(parse(['call', 'kitchen', 'light', 'turn_on'], { data: '{"brightness": 128}' }), {
    command: 'call',
    entity: 'kitchen light',
    service: 'turn_on',
    data: { brightness: 128 },
  });
  t.same(parse(['call', 'switch.pump', 'toggle'], {}), { command: 'call', entity: 'switch.pump', service: 'toggle', data: {} });
  for (const domain of ['scene', 'script', 'climate', 'media_player', 'vacuum', 'person', 'weather']) {
    t.same(parse(['list'], { domain }), { command: 'list', domain }, `--domain ${domain}`);
  }
  t.same(parse(['call', 'living', 'room', 'thermostat', 'set_temperature'], { data: '{"temperature": 21.5}' }), {
    command: 'call',
    entity: 'living room thermostat',
    service: 'set_temperature',
    data: { temperature: 21.5 },
  });
  t.same(parse(['history', 'sensor.temp'], {}), { command: 'history', entity: 'sensor.temp', hours: 24 });
  t.same(parse(['history', 'sensor.temp'], { hours: '168' }), { command: 'history', entity: 'sensor.temp', hours: 168 });
  t.same(parseSensorsCommand([], {}), { command: 'sensors' });
  t.same(parseSensorsCommand([], { area: 'kitchen' }), { command: 'sensors', area: 'kitchen' });

  const refused: Array<[() => unknown, RegExp]> = [
    [() => parse([], {}), /entities needs a command: list, get, call, history, rename, area or alias/],
    [() => parse(['show'], {}), /unknown entities command show/],
    [() => parse(['sensors'], {}), /unknown entities command sensors/],
    [() => parse(['list', 'x'], {}), /takes no arguments/],
    [
      () => parse(['list'], { domain: 'heater' }),
      /--domain must be one of switch, light.*, climate, media_player, vacuum, person, weather$/,
    ],
    [() => parse(['list'], { area: ' ' }), /--area needs an AREA/],
    [() => parse(['list'], { hours: '2' }), /--hours does not belong to entities list/],
    [() => parse(['get'], {}), /entities get needs an ENTITY/],
    [() => parse(['get', 'x'], { data: '{}' }), /--data does not belong to entities get/],
    [() => parse(['call', 'turn_on'], {}), /entities call needs an ENTITY and a SERVICE/],
    [() => parse(['call', 'x', 'turn_on'], { data: '{bad' }), /--data must be a JSON object.*is not JSON/],
    [() => parse(['call', 'x', 'turn_on'], { data: '[1]' }), /--data must be a JSON object/],
    [() => parse(['call', 'x', 'turn_on'], { data: '5' }), /--data must be a JSON object/],
    [() => parse(['history', 'x'], { hours: '0' }), /--hours must be a whole number from 1 to 87600/],
    [() => parse(['history', 'x'], { hours: '1.5' }), /--hours/],
    [() => parse(['history'], {}), /needs an ENTITY/],
    [() => parseSensorsCommand(['x'], {}), /sensors takes no arguments/],
    [() => parseSensorsCommand([], { domain: 'sensor' }), /--domain does not belong to sensors/],
  ];
  for (const [run, message] of refused) t.throws(run, { constructor: EntitiesUsageError, message }, String(message));
});

t.test('rename, area and alias: what each reads, and the refusals', async (t) => {
  const parse = parseEntitiesCommand;
  t.same(parse(['rename', 'kitchen', 'lamp', 'Ceiling light'], {}), { command: 'rename', entity: 'kitchen lamp', name: 'Ceiling light' });
  t.same(parse(['rename', 'kitchen', 'lamp'], { default: true }), { command: 'rename', entity: 'kitchen lamp' });
  t.same(parse(['area', 'light.kitchen_lamp', '客厅'], {}), { command: 'area', entity: 'light.kitchen_lamp', area: '客厅' });
  t.same(parse(['area', 'light.kitchen_lamp'], { none: true }), { command: 'area', entity: 'light.kitchen_lamp', area: null });
  t.same(parse(['area', 'light.kitchen_lamp'], { default: true }), { command: 'area', entity: 'light.kitchen_lamp' });
  t.same(parse(['alias', 'kitchen', 'lamp', 'add', '吊灯'], {}), {
    command: 'alias',
    entity: 'kitchen lamp',
    action: 'add',
    alias: '吊灯',
  });
  t.same(parse(['alias', 'lamp', 'remove', 'big', 'light'], {}), {
    command: 'alias',
    entity: 'lamp',
    action: 'remove',
    alias: 'big light',
  });
  t.same(parse(['alias', 'lamp'], { default: true }), { command: 'alias', entity: 'lamp', action: 'reset' });
  const refused: Array<[() => unknown, RegExp]> = [
    [() => parse(['rename', 'lamp'], {}), /entities rename needs an ENTITY and the NEW NAME/],
    [() => parse(['area', 'lamp'], {}), /entities area needs an ENTITY and an AREA, or --none/],
    [() => parse(['area', 'lamp'], { none: true, default: true }), /--none or --default, not both/],
    [() => parse(['alias', 'lamp', '吊灯'], {}), /entities alias needs an ENTITY, add or remove, and an ALIAS/],
    [() => parse(['alias', 'add', 'x'], {}), /entities alias needs an ENTITY/],
    [() => parse(['rename', 'lamp', 'X'], { none: true }), /--none does not belong to entities rename/],
  ];
  for (const [call, message] of refused) t.throws(call, { constructor: EntitiesUsageError, message });
});

t.test('age keeps the two largest units', async (t) => {
  t.equal(age(T0, T0 + 2000), 'just now');
  t.equal(age(T0, T0 + 42_000), '42s ago');
  t.equal(age(T0, T0 + 3_725_000), '1h 2m ago');
  t.equal(age(T0, T0 + 120_000), '2m ago', 'no zero seconds');
  t.equal(age(T0, T0 + 2 * 86_400_000 + 3_600_000 + 5000), '2d 1h ago');
  t.equal(age(T0 + 10_000, T0), 'just now', 'a clock skew is not negative');
});

interface Served {
  home: HomeSetup;
  connect: () => Promise<CommandClient>;
  audits(): Array<Record<string, unknown>>;
}

/** The entities.* methods on a real registry, served by the real cli plugin on a Unix socket. */
async function serve(t: Test): Promise<Served> {
  const home = openHome(t, { settings: { areas: [{ id: 'kitchen', name: 'Kitchen', aliases: ['厨房'] }] } });
  const captured = captureLogs();
  const control = new ControlRegistry();
  registerEntityMethods(control, home.registry, { logs: captured.logs, now: home.clock.now });
  const dataDir = tempDir(t);
  const test = createTestPluginContext({
    name: 'cli',
    dataDir,
    settings: { socket_path: '', socket_mode: '660', max_frame_bytes: 1048576, max_connections: 4, idle_timeout_ms: 60_000 },
  });
  const plugin = new CliPlugin(asContext({ ...test.context, control }));
  await plugin.start();
  t.teardown(() => plugin.stop());
  const socket = join(dataDir, 'run', 'homeagent.sock');
  return {
    home,
    connect: () => RpcClient.connect(socket, 5000),
    audits: () => captured.records().filter((r) => r.audit === true),
  };
}

async function run(s: Served, command: EntitiesCommand, json = false, language: 'en' | 'zh' = 'en') {
  let out = '';
  const code = await runEntities(command, {
    language,
    connect: s.connect,
    json,
    timeoutMs: 10_000,
    stdout: { write: (text: string) => (out += text) },
    now: s.home.clock.now,
  });
  return { code, out };
}

function populate(home: HomeSetup) {
  const { registry, clock } = home;
  const lamp = registry.register('plugin:hub', {
    domain: 'light',
    object_id: 'kitchen_lamp',
    name: 'Lamp',
    aliases: ['灯'],
    area: '厨房',
    initial_state: 'off',
    call: async (service, data) => {
      lamp.update(service === 'turn_off' ? 'off' : 'on', data.brightness === undefined ? {} : { brightness: data.brightness });
    },
  });
  const temp = registry.register('plugin:i2c', {
    domain: 'sensor',
    object_id: 'kitchen_temp',
    name: 'Kitchen temperature',
    area: 'kitchen',
    unit: '°C',
    initial_state: 21,
  });
  registry.register('plugin:gpio', { domain: 'binary_sensor', object_id: 'door', name: 'Front door', initial_state: 'off' });
  clock.advance(90_000);
  temp.update(21.5);
  clock.advance(30_000);
}

t.test('entities list, get, call and history over the socket: readable text and --json', async (t) => {
  const s = await serve(t);
  populate(s.home);

  const list = await run(s, { command: 'list' });
  t.equal(list.code, 0);
  t.equal(
    list.out,
    [
      'ENTITY               NAME                 AREA     STATE    CHANGED',
      'binary_sensor.door   Front door           -        off      2m ago',
      'light.kitchen_lamp   Lamp                 kitchen  off      2m ago',
      'sensor.kitchen_temp  Kitchen temperature  kitchen  21.5 °C  30s ago',
      '',
    ].join('\n'),
  );
  const lights = await run(s, { command: 'list', domain: 'light', area: 'Kitchen' }, true);
  t.match(JSON.parse(lights.out), [{ entity_id: 'light.kitchen_lamp', state: 'off', owner: 'plugin:hub' }]);
  t.equal(JSON.parse(lights.out).length, 1);

  const got = await run(s, { command: 'get', entity: '厨房灯' });
  t.match(got.out, /^light\.kitchen_lamp {2}Lamp\n {2}state +off\n/);
  t.match(got.out, /services +turn_on, turn_off, toggle\n/);
  t.match(got.out, /history:\n {2}2025-03-01 12:00:00Z {2}off\n$/);

  const called = await run(s, { command: 'call', entity: 'kitchen lamp', service: 'turn_on', data: { brightness: 40 } });
  t.equal(called.out, 'turn_on: light.kitchen_lamp (Lamp) is now on\n');
  t.equal(s.home.registry.resolve('light.kitchen_lamp').attributes.brightness, 40);
  const json = await run(s, { command: 'call', entity: 'light.kitchen_lamp', service: 'turn_off', data: {} }, true);
  t.match(JSON.parse(json.out), { entity_id: 'light.kitchen_lamp', state: 'off' });

  await t.rejects(run(s, { command: 'call', entity: 'kitchen lamp', service: 'turn_on', data: { brightness: 999 } }), {
    code: 'HA_ERR_ENTITY_SERVICE',
    message: /brightness must be between 0 and 255/,
  });
  await t.rejects(run(s, { command: 'get', entity: 'toaster' }), { code: 'HA_ERR_ENTITY_NOT_FOUND' });
  t.equal(s.home.registry.resolve('light.kitchen_lamp').state, 'off', 'the refused call changed nothing');
  t.match(
    s.audits().map((a) => [a.actor, a.action, a.entity, a.state ?? a.error]),
    [
      ['cli', 'entities.call', 'kitchen lamp', 'on'],
      ['cli', 'entities.call', 'light.kitchen_lamp', 'off'],
      ['cli', 'entities.call', 'kitchen lamp', /HA_ERR_ENTITY_SERVICE/],
    ],
    'every call is audited with the socket actor, the refused one too',
  );

  const history = await run(s, { command: 'history', entity: 'sensor.kitchen_temp', hours: 1 });
  t.equal(
    history.out,
    ['sensor.kitchen_temp: 2 stored states in the last 1 h', '  2025-03-01 12:00:00Z  21', '  2025-03-01 12:01:30Z  21.5', ''].join('\n'),
  );
  const removed = s.home.registry.list({ domain: 'binary_sensor' })[0];
  s.home.registry.removeOwner('plugin:gpio');
  const gone = await run(s, { command: 'history', entity: 'binary_sensor.door', hours: 24 }, true);
  t.match(JSON.parse(gone.out), { entity_id: 'binary_sensor.door', rows: [{ state: 'off' }] }, "a removed entity's history by its id");
  t.equal(removed?.entity_id, 'binary_sensor.door');
});

t.test('sensors: sensors and binary sensors with value and age', async (t) => {
  const s = await serve(t);
  t.equal((await run(s, { command: 'sensors' })).out, 'no sensors\n');
  populate(s.home);
  const sensors = await run(s, { command: 'sensors' });
  t.equal(
    sensors.out,
    [
      'SENSOR               NAME                 VALUE    CHANGED',
      'binary_sensor.door   Front door           off      2m ago',
      'sensor.kitchen_temp  Kitchen temperature  21.5 °C  30s ago',
      '',
    ].join('\n'),
  );
  const kitchen = await run(s, { command: 'sensors', area: 'kitchen' }, true);
  t.same(
    JSON.parse(kitchen.out).map((e: { entity_id: string }) => e.entity_id),
    ['sensor.kitchen_temp'],
  );
  const areas = await s.connect().then(async (c) => {
    try {
      return await c.call('entities.areas', {}, 5000);
    } finally {
      c.close();
    }
  });
  t.same(areas, [{ id: 'kitchen', name: 'Kitchen', aliases: ['厨房'] }]);
});

t.test('state words by device class in both languages; diagnostics marked; the owner renames, moves and aliases', async (t) => {
  const s = await serve(t);
  const { registry } = s.home;
  registry.register('plugin:z2m', {
    domain: 'binary_sensor',
    object_id: 'back_door',
    name: 'Back door',
    device_class: 'door',
    initial_state: 'on',
  });
  registry.register('plugin:z2m', {
    domain: 'sensor',
    object_id: 'back_door_battery',
    name: 'Back door battery',
    unit: '%',
    device_class: 'battery',
    entity_category: 'diagnostic',
    initial_state: 80,
  });
  registry.register('plugin:z2m', {
    domain: 'binary_sensor',
    object_id: 'hall_motion',
    name: 'Hall motion',
    device_class: 'occupancy',
    initial_state: 'off',
  });
  const en = await run(s, { command: 'list' });
  t.match(en.out, /binary_sensor\.back_door +Back door +- +open /, 'a door contact reads open, not on');
  t.match(en.out, /sensor\.back_door_battery +Back door battery \[diagnostic\] +- +80 % /);
  t.match(en.out, /binary_sensor\.hall_motion +Hall motion +- +clear /);
  const zh = await run(s, { command: 'list' }, false, 'zh');
  t.match(zh.out, /^实体 +名称 +区域 +状态 +变化于\n/);
  t.match(zh.out, /binary_sensor\.back_door +Back door +- +开着 +刚刚/);
  t.match(zh.out, /Back door battery \[诊断\]/);
  t.match(zh.out, /binary_sensor\.hall_motion +Hall motion +- +无人 /);

  const renamed = await run(s, { command: 'rename', entity: 'binary_sensor.back_door', name: '后门' });
  t.equal(
    renamed.out,
    ['binary_sensor.back_door', '  name     后门 (yours)', "  area     - (the driver's)", "  aliases  - (the driver's)", ''].join('\n'),
  );
  await run(s, { command: 'area', entity: '后门', area: 'kitchen' });
  const aliased = await run(s, { command: 'alias', entity: '后门', action: 'add', alias: 'garden door' }, false, 'zh');
  t.match(aliased.out, /名称 +后门（主人设置）\n +区域 +kitchen（主人设置）\n +别名 +garden door（主人设置）/);
  t.equal(registry.resolve('kitchen garden door').entity_id, 'binary_sensor.back_door', 'the new alias and area resolve');
  await t.rejects(run(s, { command: 'alias', entity: '后门', action: 'remove', alias: 'front' }), {
    code: 'HA_ERR_ENTITY_OVERRIDE',
    message: /has no alias "front"; its aliases: garden door/,
  });
  await run(s, { command: 'rename', entity: '后门' });
  await run(s, { command: 'area', entity: 'binary_sensor.back_door', area: null });
  const back = registry.resolve('binary_sensor.back_door');
  t.equal(back.name, 'Back door', "no name: the driver's again");
  t.equal(back.area, null, 'area --none');
  t.same(back.overrides, { aliases_added: ['garden door'] }, "no area is the driver's own value here: no override is kept for it");
  t.match(
    s.audits().map((a) => [a.actor, a.action, a.entity_id ?? a.error]),
    [
      ['cli', 'entities.rename', 'binary_sensor.back_door'],
      ['cli', 'entities.set_area', 'binary_sensor.back_door'],
      ['cli', 'entities.aliases', 'binary_sensor.back_door'],
      ['cli', 'entities.aliases', /HA_ERR_ENTITY_OVERRIDE/],
      ['cli', 'entities.rename', 'binary_sensor.back_door'],
      ['cli', 'entities.set_area', 'binary_sensor.back_door'],
    ],
    'every change is audited with the socket actor, the refused one too',
  );
});
