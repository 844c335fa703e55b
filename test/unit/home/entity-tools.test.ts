// The entity tools as the model uses them: compact listing, one entity with history, calls with
// their ToolErrors, and the split between entity_call (act) and entity_call_critical (dangerous).
import t, { type Test } from 'tap';
import { ToolRegistry } from '../../../src/agent/tool-registry.js';
import { entityTools, GET_HISTORY_ROWS } from '../../../src/home/entity-tools.js';
import type { EntityContext } from '../../../src/home/types.js';
import { HomeAgentError } from '../../../src/shared/errors.js';
import { type ToolContext, ToolError, type ToolErrorReason } from '../../../src/shared/tool.js';
import { silentLogs } from '../fixtures/support.js';
import { openHome, T0 } from './home-fixture.js';

const context: ToolContext = {
  signal: new AbortController().signal,
  task_id: 't1',
  call_id: 'c1',
  source: 'chat',
  channel: 'family',
  trust: 'owner',
};

function setup(t: Test) {
  const home = openHome(t, { settings: { areas: [{ id: 'kitchen', name: 'Kitchen', aliases: ['厨房'] }] } });
  const audits: Array<Record<string, unknown>> = [];
  const calls: Array<{ entity: string; service: string; data: Record<string, unknown>; context: EntityContext }> = [];
  const tools = new Map(entityTools(home.registry, { audit: (r) => void audits.push(r) }).map((d) => [d.name, d]));
  const lamp = home.registry.register('plugin:hub', {
    domain: 'light',
    object_id: 'kitchen_lamp',
    name: 'Lamp',
    area: 'kitchen',
    initial_state: 'off',
    call: async (service, data, ctx) => {
      calls.push({ entity: 'light.kitchen_lamp', service, data, context: ctx });
      lamp.update(service === 'turn_off' ? 'off' : 'on', data.brightness === undefined ? {} : { brightness: data.brightness });
    },
  });
  const garage = home.registry.register('plugin:hub', {
    domain: 'cover',
    object_id: 'garage',
    name: 'Garage door',
    initial_state: 'closed',
    call: async (service, data, ctx) => {
      calls.push({ entity: 'cover.garage', service, data, context: ctx });
      garage.update(service === 'open' ? 'open' : 'closed');
    },
  });
  home.registry.register('plugin:i2c', {
    domain: 'sensor',
    object_id: 'kitchen_temp',
    name: 'Temperature',
    area: 'kitchen',
    unit: '°C',
    initial_state: 21.5,
  });
  home.registry.register('plugin:hub', { domain: 'light', object_id: 'hall_lamp', name: 'Lamp', call: async () => {} });
  const run = async (name: string, args: Record<string, unknown>) => {
    const tool = tools.get(name);
    if (tool === undefined) throw new Error(`no tool ${name}`);
    return (await tool.execute(args, context)) as Record<string, unknown>;
  };
  return { home, tools, run, audits, calls, lamp };
}

async function fails(t: Test, run: Promise<unknown>, reason: ToolErrorReason, field?: string): Promise<ToolError | undefined> {
  try {
    await run;
    t.fail(`expected ${reason}`);
    return undefined;
  } catch (error) {
    if (!(error instanceof ToolError)) throw error;
    t.equal(error.info.reason, reason, `reason ${reason}: ${error.info.detail}`);
    if (field !== undefined) t.equal(error.info.field, field);
    t.ok(error.info.hint !== undefined && error.info.hint !== '', 'with a hint');
    return error;
  }
}

t.test('the tools register cleanly with their tiers and owner', async (t) => {
  const { tools } = setup(t);
  const registry = new ToolRegistry({ log: silentLogs().child('tools') });
  for (const tool of tools.values()) registry.register(tool);
  t.same(
    [...tools.values()].map((d) => [d.name, d.tier, d.owner]),
    [
      ['entity_list', 'read', 'core'],
      ['entity_get', 'read', 'core'],
      ['entity_call', 'act', 'core'],
      ['entity_call_critical', 'dangerous', 'core'],
    ],
  );
  const call = tools.get('entity_call');
  if (call === undefined) throw new Error('no entity_call');
  t.match(registry.validate(call, '{"entity":"lamp","service":"turn_on","data":{"brightness":3}}'), { ok: true });
  t.match(registry.validate(call, '{"service":"turn_on"}'), { ok: false });
});

t.test('entity_list: compact rows, filtered by domain or area', async (t) => {
  const { run } = setup(t);
  const all = await run('entity_list', {});
  t.equal(all.count, 4);
  t.same((all.entities as unknown[])[0], { entity_id: 'cover.garage', name: 'Garage door', area: null, state: 'closed', unit: null });
  const kitchen = await run('entity_list', { area: '厨房' });
  t.same(
    (kitchen.entities as Array<{ entity_id: string }>).map((e) => e.entity_id),
    ['light.kitchen_lamp', 'sensor.kitchen_temp'],
  );
  const sensors = await run('entity_list', { domain: 'sensor' });
  t.same(sensors.entities, [{ entity_id: 'sensor.kitchen_temp', name: 'Temperature', area: 'kitchen', state: 21.5, unit: '°C' }]);
  const error = await fails(t, run('entity_list', { area: 'attic' }), 'not_found', 'area');
  t.match(error?.info.hint, /Kitchen/);
  await fails(t, run('entity_list', { domain: 'heater' }), 'enum', 'domain');
});

t.test('entity_get: the entity in full with its last history rows', async (t) => {
  const { run, lamp, home } = setup(t);
  for (let i = 0; i < 12; i++) {
    home.clock.advance(1000);
    lamp.update(i % 2 === 0 ? 'on' : 'off');
  }
  const got = await run('entity_get', { entity: '厨房的Lamp' });
  t.match(got, { entity_id: 'light.kitchen_lamp', name: 'Lamp', area: 'kitchen', state: 'off', critical: false, owner: 'plugin:hub' });
  t.equal(got.last_changed, new Date(T0 + 12_000).toISOString());
  const history = got.history as Array<Record<string, unknown>>;
  t.equal(history.length, GET_HISTORY_ROWS);
  t.same(history.at(-1), { at: new Date(T0 + 12_000).toISOString(), state: 'off', period_ms: 0 });
  await fails(t, run('entity_get', { entity: 'toaster' }), 'not_found', 'entity');
  const ambiguous = await fails(t, run('entity_get', { entity: 'lamp' }), 'rejected', 'entity');
  t.match(ambiguous?.info.hint, /light.hall_lamp, light.kitchen_lamp/);
  await fails(t, run('entity_get', {}), 'required', 'entity');
});

t.test('entity_call: acts as the agent, audited; bad service and data are explained', async (t) => {
  const { run, audits, calls, home } = setup(t);
  const result = await run('entity_call', { entity: 'kitchen lamp', service: 'turn_on', data: { brightness: 200 } });
  t.same(result, { entity_id: 'light.kitchen_lamp', name: 'Lamp', state: 'on' });
  t.same(calls, [{ entity: 'light.kitchen_lamp', service: 'turn_on', data: { brightness: 200 }, context: { actor: 'agent' } }]);
  t.same(home.stateChanges().at(-1)?.context, { actor: 'agent' });
  t.same(audits, [
    { actor: 'agent', action: 'entity.call', entity_id: 'light.kitchen_lamp', service: 'turn_on', data: { brightness: 200 }, state: 'on' },
  ]);

  const service = await fails(t, run('entity_call', { entity: 'kitchen lamp', service: 'open' }), 'enum', 'service');
  t.match(service?.info.hint, /turn_on, turn_off, toggle/);
  const range = await fails(
    t,
    run('entity_call', { entity: 'kitchen lamp', service: 'turn_on', data: { brightness: 300 } }),
    'range',
    'data.brightness',
  );
  t.match(range?.info.detail, /between 0 and 255/);
  t.match(range?.info.hint, /turn_on takes brightness/);
  const noData = await fails(t, run('entity_call', { entity: 'kitchen lamp', service: 'toggle', data: { x: 1 } }), 'range', 'data.x');
  t.match(noData?.info.hint, /takes no data/);
  await fails(t, run('entity_call', { entity: 'kitchen lamp', service: 'turn_on', data: [1] }), 'type', 'data');
  await fails(t, run('entity_call', { entity: 'Temperature', service: 'turn_on' }), 'enum', 'service');
  await fails(t, run('entity_call', { entity: 'nothing', service: 'turn_on' }), 'not_found', 'entity');
  t.equal(calls.length, 1, 'no refused call reached the driver');
  t.equal(audits.length, 5, 'each call that reached the registry is audited, refused ones too (not the bad type, nor the unknown entity)');
  t.match(audits[1], { actor: 'agent', action: 'entity.call', service: 'open', error: /HA_ERR_ENTITY_SERVICE/ });
});

t.test('a critical entity needs entity_call_critical (dangerous), which runs it', async (t) => {
  const { run, calls, home, tools } = setup(t);
  const refused = await fails(t, run('entity_call', { entity: 'garage door', service: 'open' }), 'confirmation_required', 'entity');
  t.match(refused?.info.hint, /entity_call_critical/);
  t.equal(calls.length, 0, 'nothing moved');
  t.equal(home.registry.resolve('cover.garage').state, 'closed');
  t.equal(tools.get('entity_call_critical')?.tier, 'dangerous', 'the confirmation gate holds it until the owner confirms');
  const done = await run('entity_call_critical', { entity: 'garage door', service: 'open' });
  t.same(done, { entity_id: 'cover.garage', name: 'Garage door', state: 'open' });
});

t.test('unavailable and failing devices', async (t) => {
  const { run, lamp, home } = setup(t);
  lamp.update('unavailable');
  await fails(t, run('entity_call', { entity: 'light.kitchen_lamp', service: 'turn_on' }), 'unavailable', 'entity');
  home.registry.register('plugin:gpio', {
    domain: 'switch',
    object_id: 'pump',
    name: 'Pump',
    call: async () => {
      throw new HomeAgentError('HA_ERR_GPIO_IO', 'write to GPIO17 failed');
    },
  });
  const failed = await run('entity_call', { entity: 'pump', service: 'turn_on' }).then(
    () => undefined,
    (error: unknown) => error,
  );
  t.ok(failed instanceof ToolError);
  t.match((failed as ToolError).info, { reason: 'failed', detail: /HA_ERR_GPIO_IO: write to GPIO17 failed/ });
  home.registry.register('plugin:hub', { domain: 'switch', object_id: 'dumb', name: 'Dumb' });
  await fails(t, run('entity_call', { entity: 'dumb', service: 'turn_on' }), 'capability', 'service');
});

t.test('entity_call on a thermostat, a media player and a vacuum; a person only reads', async (t) => {
  const { run, home, calls } = setup(t);
  const thermostat = home.registry.register('plugin:hub', {
    domain: 'climate',
    object_id: 'living_room',
    name: 'Thermostat',
    initial_state: 'heat',
    attributes: { current_temperature: 19, temperature: 20 },
    call: async (service, data, ctx) => {
      calls.push({ entity: 'climate.living_room', service, data, context: ctx });
      thermostat.update('heat', { temperature: data.temperature });
    },
  });
  home.registry.register('plugin:hub', {
    domain: 'media_player',
    object_id: 'speaker',
    name: 'Speaker',
    initial_state: 'idle',
    call: async (service, data, ctx) => void calls.push({ entity: 'media_player.speaker', service, data, context: ctx }),
  });
  home.registry.register('plugin:hub', {
    domain: 'vacuum',
    object_id: 'robot',
    name: 'Robot',
    initial_state: 'docked',
    call: async (service, data, ctx) => void calls.push({ entity: 'vacuum.robot', service, data, context: ctx }),
  });
  home.registry.register('plugin:presence', { domain: 'person', object_id: 'anna', name: 'Anna', initial_state: 'home' });

  t.same(await run('entity_call', { entity: 'thermostat', service: 'set_temperature', data: { temperature: 21.5 } }), {
    entity_id: 'climate.living_room',
    name: 'Thermostat',
    state: 'heat',
  });
  t.equal(home.registry.resolve('climate.living_room').attributes.temperature, 21.5);
  await run('entity_call', { entity: 'speaker', service: 'volume_set', data: { volume_level: 0.4 } });
  await run('entity_call', { entity: 'speaker', service: 'play_media', data: { media_content_id: 'news', media_content_type: 'music' } });
  await run('entity_call', { entity: 'robot', service: 'start' });
  t.same(
    calls.map((c) => [c.entity, c.service, c.data]),
    [
      ['climate.living_room', 'set_temperature', { temperature: 21.5 }],
      ['media_player.speaker', 'volume_set', { volume_level: 0.4 }],
      ['media_player.speaker', 'play_media', { media_content_id: 'news', media_content_type: 'music' }],
      ['vacuum.robot', 'start', {}],
    ],
    'not critical: entity_call runs them without confirmation',
  );

  const target = await fails(
    t,
    run('entity_call', { entity: 'thermostat', service: 'set_temperature', data: { temperature: 'warm' } }),
    'range',
    'data.temperature',
  );
  t.match(target?.info.hint, /set_temperature takes temperature/);
  const media = await fails(
    t,
    run('entity_call', { entity: 'speaker', service: 'play_media', data: {} }),
    'range',
    'data.media_content_id',
  );
  t.match(media?.info.hint, /play_media takes media_content_id, media_content_type/);
  const person = await fails(t, run('entity_call', { entity: 'Anna', service: 'turn_on' }), 'enum', 'service');
  t.match(person?.info.hint, /none: it only reports/);
  t.equal(calls.length, 4, 'no refused call reached a driver');
  const listed = await run('entity_list', { domain: 'vacuum' });
  t.same(listed.entities, [{ entity_id: 'vacuum.robot', name: 'Robot', area: null, state: 'docked', unit: null }]);
});
