// The owner's changes to an entity (name, area, aliases) over what its driver registers, on a real
// home.db: they survive a restart and a re-registration with other driver values, and clearing one
// brings the driver's value back. Also the new entity fields (entity_category, state_class): their
// checks, defaults and storage, the version 1 database they migrate from, the model's entity_list
// leaving diagnostics out, and the owner-only control methods.
import t from 'tap';
import { registerEntityMethods } from '../../../src/home/entity-methods.js';
import type { EntityCustomization } from '../../../src/home/entity-registry.js';
import { entityTools } from '../../../src/home/entity-tools.js';
import { HOME_COMPONENT, HOME_MIGRATIONS } from '../../../src/home/home-schema.js';
import type { EntityDefinition } from '../../../src/home/types.js';
import { ControlRegistry } from '../../../src/plugin/control-registry.js';
import { captureLogs } from '../fixtures/support.js';
import { openHome } from './home-fixture.js';

const LAMP: EntityDefinition = {
  domain: 'light',
  object_id: 'lamp',
  name: 'Lamp',
  aliases: ['lamp one'],
  area: 'hall',
  initial_state: 'off',
};

t.test('overrides survive a restart and a re-registration with another driver name; clearing returns the driver value', async (t) => {
  const home = openHome(t, { settings: { areas: [{ id: 'kitchen', name: 'Kitchen', aliases: ['厨房'] }] } });
  home.registry.register('plugin:hub', LAMP);
  home.registry.customize('light.lamp', { name: 'Ceiling light' }, 'cli');
  home.registry.customize('Ceiling light', { area: '厨房', add_aliases: ['吊灯'], remove_aliases: ['LAMP ONE'] }, 'cli');
  const now = home.registry.resolve('light.lamp');
  t.match(now, { name: 'Ceiling light', area: 'kitchen', aliases: ['吊灯'] });
  t.same(now.overrides, { name: 'Ceiling light', area: 'kitchen', aliases_added: ['吊灯'], aliases_removed: ['lamp one'] });
  t.equal(home.registry.resolve('厨房吊灯').entity_id, 'light.lamp', 'the area and the alias resolve');
  t.equal(home.seen.filter((e) => e.event === 'entity.registered').length, 3, 'each change announces the entity again');
  await home.registry.stop();

  // A restart, and the driver registering with a new name and aliases (a rediscovery).
  const again = home.reopen();
  again.register('plugin:hub', { ...LAMP, name: 'Lamp (renamed in the hub)', aliases: ['lamp one', 'hub lamp'], area: 'garage' });
  t.match(again.resolve('light.lamp'), { name: 'Ceiling light', area: 'kitchen', aliases: ['hub lamp', '吊灯'] }, 'the owner wins');

  again.customize('light.lamp', { name: null }, 'webui:session');
  t.equal(again.resolve('light.lamp').name, 'Lamp (renamed in the hub)', "null: the driver's (new) name");
  again.customize('light.lamp', { reset_area: true, reset_aliases: true }, 'webui:session');
  const plain = again.resolve('light.lamp');
  t.match(plain, { area: 'garage', aliases: ['lamp one', 'hub lamp'] });
  t.equal(plain.overrides, undefined, 'nothing left of the owner');
  await again.stop();
  const rows = home.database.db.prepare('SELECT COUNT(*) AS n FROM entity_overrides').get() as { n: number };
  t.equal(rows.n, 0, 'an empty override is deleted, not kept');

  const third = home.reopen();
  third.register('plugin:hub', LAMP);
  third.customize('lamp', { aliases: ['big lamp', 'Big Lamp', 'lamp one'] }, 'cli');
  t.same(third.resolve('light.lamp').aliases, ['lamp one', 'big lamp'], 'a whole list: kept once, in any case');
  await third.stop();
});

t.test('bad changes are refused and change nothing', async (t) => {
  const home = openHome(t);
  home.registry.register('plugin:hub', LAMP);
  const before = home.registry.resolve('light.lamp');
  for (const [change, message] of [
    [{ name: '   ' }, /the name must be 1-128 characters/],
    [{ name: 'x'.repeat(129) }, /the name must be 1-128 characters/],
    [{ area: '' }, /the area must be 1-128 characters/],
    [{ remove_aliases: ['nope'] }, /has no alias "nope"; its aliases: lamp one/],
    [{ add_aliases: Array.from({ length: 16 }, (_, i) => `alias ${i}`) }, /would have 17 aliases; at most 16/],
  ] as Array<[EntityCustomization, RegExp]>) {
    t.throws(() => home.registry.customize('light.lamp', change, 'cli'), { code: 'HA_ERR_ENTITY_OVERRIDE', message });
  }
  t.throws(() => home.registry.customize('toaster', { name: 'x' }, 'cli'), { code: 'HA_ERR_ENTITY_NOT_FOUND' });
  t.same(home.registry.resolve('light.lamp'), before);
  await home.registry.stop();
  t.equal((home.database.db.prepare('SELECT COUNT(*) AS n FROM entity_overrides').get() as { n: number }).n, 0);
});

t.test('entity_category and state_class: checked, defaulted and stored', async (t) => {
  const home = openHome(t);
  const r = home.registry;
  r.register('plugin:z2m', { domain: 'sensor', object_id: 'meter', name: 'Meter', unit: 'kWh', device_class: 'energy', initial_state: 12 });
  r.register('plugin:z2m', { domain: 'sensor', object_id: 'temp', name: 'Temp', unit: '°C', initial_state: 20 });
  r.register('plugin:z2m', { domain: 'sensor', object_id: 'action', name: 'Action', initial_state: 'single' });
  r.register('plugin:z2m', { domain: 'sensor', object_id: 'net', name: 'Net', unit: 'kWh', device_class: 'energy', state_class: 'total' });
  r.register('plugin:z2m', { domain: 'sensor', object_id: 'battery', name: 'Battery', unit: '%', entity_category: 'diagnostic' });
  t.equal(r.resolve('sensor.meter').state_class, 'total_increasing', 'a meter counts up');
  t.equal(r.resolve('sensor.temp').state_class, 'measurement');
  t.equal(r.resolve('sensor.action').state_class, null, 'text is no statistic');
  t.equal(r.resolve('sensor.net').state_class, 'total', 'the driver decides');
  t.equal(r.resolve('sensor.battery').entity_category, 'diagnostic');
  t.equal(r.resolve('sensor.temp').entity_category, null);
  t.throws(() => r.register('plugin:z2m', { domain: 'sensor', object_id: 'x', name: 'X', entity_category: 'hidden' as 'config' }), {
    code: 'HA_ERR_ENTITY_DEFINITION',
    message: /entity_category "hidden" is not one of diagnostic, config or null/,
  });
  t.throws(() => r.register('plugin:z2m', { domain: 'sensor', object_id: 'x', name: 'X', state_class: 'sum' as 'total' }), {
    message: /state_class "sum" is not one of measurement, total, total_increasing or null/,
  });
  await r.stop();
  const stored = home.database.db.prepare('SELECT entity_id, entity_category, state_class FROM entities ORDER BY entity_id').all();
  t.same(stored, [
    { entity_id: 'sensor.action', entity_category: null, state_class: null },
    { entity_id: 'sensor.battery', entity_category: 'diagnostic', state_class: 'measurement' },
    { entity_id: 'sensor.meter', entity_category: null, state_class: 'total_increasing' },
    { entity_id: 'sensor.net', entity_category: null, state_class: 'total' },
    { entity_id: 'sensor.temp', entity_category: null, state_class: 'measurement' },
  ]);
});

t.test('a version 1 home.db keeps its rows: the state comes back after the migration', async (t) => {
  const first = openHome(t);
  first.database.migrate(HOME_COMPONENT, HOME_MIGRATIONS.slice(0, 1));
  first.database.db
    .prepare(
      `INSERT INTO entities (entity_id, domain, name, aliases, area, device, unit, device_class, attributes, state, last_changed, last_updated, owner)
       VALUES ('light.lamp', 'light', 'Lamp', '[]', NULL, NULL, NULL, NULL, '{}', '"on"', 1000, 1000, 'plugin:hub')`,
    )
    .run();
  t.equal(first.database.schemaVersion(HOME_COMPONENT), 1);
  const registry = first.reopen();
  registry.register('plugin:hub', { domain: 'light', object_id: 'lamp', name: 'Lamp' });
  t.match(registry.resolve('light.lamp'), { state: 'on', last_changed: 1000, entity_category: null, state_class: null });
  await registry.stop();
});

t.test("entity_list leaves diagnostics out unless asked; the owner's methods refuse a caller who is not the owner", async (t) => {
  const home = openHome(t);
  home.registry.register('plugin:z2m', { domain: 'sensor', object_id: 'temp', name: 'Temp', unit: '°C', initial_state: 20 });
  home.registry.register('plugin:z2m', {
    domain: 'sensor',
    object_id: 'battery',
    name: 'Battery',
    unit: '%',
    entity_category: 'diagnostic',
  });
  const list = entityTools(home.registry).find((tool) => tool.name === 'entity_list');
  const plain = (await list?.execute({}, {} as never)) as {
    count: number;
    diagnostic_hidden?: number;
    entities: Array<{ entity_id: string }>;
  };
  t.same(
    plain.entities.map((e) => e.entity_id),
    ['sensor.temp'],
  );
  t.equal(plain.diagnostic_hidden, 1, 'the model is told some are left out');
  const all = (await list?.execute({ include_diagnostic: true }, {} as never)) as {
    entities: Array<{ entity_id: string; entity_category?: string }>;
  };
  t.same(all.entities, [
    { entity_id: 'sensor.battery', name: 'Battery', area: null, state: null, unit: '%', entity_category: 'diagnostic' },
    { entity_id: 'sensor.temp', name: 'Temp', area: null, state: 20, unit: '°C' },
  ]);

  const control = new ControlRegistry();
  const captured = captureLogs();
  registerEntityMethods(control, home.registry, { logs: captured.logs });
  for (const [method, params] of [
    ['entities.rename', { entity: 'sensor.temp', name: 'Hall' }],
    ['entities.set_area', { entity: 'sensor.temp', area: 'hall' }],
    ['entities.aliases', { entity: 'sensor.temp', add: ['x'] }],
    ['entities.customize', { entity: 'sensor.temp', name: 'Hall' }],
  ] as const) {
    await t.rejects(control.call(method, params, { actor: 'mqtt:someone' }), { code: 'HA_ERR_RPC_FORBIDDEN' }, method);
  }
  t.equal(home.registry.resolve('sensor.temp').name, 'Temp', 'nothing changed');
  const renamed = (await control.call(
    'entities.customize',
    { entity: 'sensor.temp', name: 'Hall', area: 'hall', aliases: ['走廊温度'] },
    {
      actor: 'webui:session',
      owner: true,
    },
  )) as { name: string; area: string; aliases: string[] };
  t.match(renamed, { name: 'Hall', area: 'hall', aliases: ['走廊温度'] });
  t.match(
    captured.records().filter((r) => r.audit === true),
    [{ actor: 'webui:session', action: 'entities.customize', entity_id: 'sensor.temp', name: 'Hall' }],
  );
  await home.registry.stop();
});
