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
    [() => parse([], {}), /entities needs a command: list, get, call or history/],
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

async function run(s: Served, command: EntitiesCommand, json = false) {
  let out = '';
  const code = await runEntities(command, {
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
