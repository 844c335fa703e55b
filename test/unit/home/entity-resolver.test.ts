// Name resolution as people and the model say it: ids, names, aliases, area + name in English and
// Chinese, object ids with spaces; ambiguity and its narrowing by the named area.
import t from 'tap';
import { areaSlug, findArea, normalizeName, resolveEntity } from '../../../src/home/entity-resolver.js';
import type { Area, EntityDomain, EntityInfo } from '../../../src/home/types.js';

function entity(entityId: string, name: string, area: string | null = null, aliases: string[] = []): EntityInfo {
  const [domain = 'switch'] = entityId.split('.');
  return {
    entity_id: entityId,
    domain: domain as EntityDomain,
    name,
    aliases,
    area,
    device: null,
    state: null,
    attributes: {},
    unit: null,
    device_class: null,
    last_changed: 0,
    last_updated: 0,
    owner: 'test',
    critical: false,
    services: [],
    entity_category: null,
    state_class: null,
  };
}

const areas: Area[] = [
  { id: 'kitchen', name: 'Kitchen', aliases: ['厨房'] },
  { id: 'living_room', name: 'Living room', aliases: ['lounge', '客厅'] },
  { id: 'bedroom', name: 'Bedroom', aliases: ['卧室'] },
];

const entities = [
  entity('light.kitchen_ceiling', 'Ceiling light', 'kitchen', ['main light']),
  entity('light.lounge_ceiling', 'Ceiling light', 'living_room'),
  entity('light.kitchen_lamp', '灯', 'kitchen'),
  entity('switch.coffee_machine', 'Coffee-Machine', 'kitchen'),
  entity('sensor.bedroom_temperature', 'Temperature', 'bedroom', ['卧室温度计']),
  entity('sensor.outside_temperature', 'Outside temperature'),
  entity('switch.fountain_pump', 'Garden fountain'),
  entity('binary_sensor.front_door', 'Front door'),
  entity('binary_sensor.back_door', 'Back door'),
];

const resolve = (reference: string) => resolveEntity(reference, entities, areas);
const id = (reference: string) => resolve(reference).entity?.entity_id;

t.test('normalizeName ignores case, spaces and punctuation of any script', async (t) => {
  t.equal(normalizeName('  Coffee-Machine! '), 'coffeemachine');
  t.equal(normalizeName('Ｃｏｆｆｅｅ machine'), 'coffeemachine', 'full-width letters fold');
  t.equal(normalizeName('厨房 的 灯。'), '厨房的灯');
  t.equal(normalizeName('---'), '');
});

t.test('the stages: id, name or alias, area with name, object id', async (t) => {
  t.equal(id('light.kitchen_ceiling'), 'light.kitchen_ceiling', 'exact id');
  t.equal(id('  LIGHT.Kitchen_Ceiling '), 'light.kitchen_ceiling', 'an id in another case');
  t.equal(id('coffee machine'), 'switch.coffee_machine', 'name without punctuation');
  t.equal(id('COFFEE MACHINE.'), 'switch.coffee_machine');
  t.equal(id('main light'), 'light.kitchen_ceiling', 'alias');
  t.equal(id('卧室温度计'), 'sensor.bedroom_temperature', 'Chinese alias');
  t.equal(id('the garden fountain'), 'switch.fountain_pump', 'a leading "the" is ignored');
  t.equal(id('kitchen ceiling light'), 'light.kitchen_ceiling', '<area> <name>');
  t.equal(id('lounge ceiling light'), 'light.lounge_ceiling', '<area alias> <name>');
  t.equal(id('living room ceiling light'), 'light.lounge_ceiling', 'an area name with a space');
  t.equal(id('ceiling light in the kitchen'), 'light.kitchen_ceiling', '<name> in the <area>');
  t.equal(id('Ceiling light in living room'), 'light.lounge_ceiling', '<name> in <area>');
  t.equal(id('厨房灯'), 'light.kitchen_lamp', '<area><name> in Chinese');
  t.equal(id('厨房的灯'), 'light.kitchen_lamp', '<area>的<name>');
  t.equal(id('卧室 Temperature'), 'sensor.bedroom_temperature');
  t.equal(id('fountain pump'), 'switch.fountain_pump', 'object id with spaces');
  t.equal(id('front_door'), 'binary_sensor.front_door', 'object id as written');
});

t.test('not found and ambiguous', async (t) => {
  t.same(resolve('garage door'), { entity: undefined, candidates: [] });
  t.same(resolve('   '), { entity: undefined, candidates: [] });
  t.same(resolve('!!'), { entity: undefined, candidates: [] });
  const ambiguous = resolve('ceiling light');
  t.equal(ambiguous.entity, undefined);
  t.same(
    ambiguous.candidates.map((e) => e.entity_id),
    ['light.kitchen_ceiling', 'light.lounge_ceiling'],
  );
  t.equal(id('light in the kitchen'), undefined, 'no entity is named "light"');
  t.equal(id('bedroom ceiling light'), undefined, 'no ceiling light in the bedroom');
  t.equal(id('switch.nothing'), undefined);
});

t.test('several matches narrowed by the area the reference names', async (t) => {
  // Two entities with the same full name, in different areas: the area in the reference decides.
  const same = [entity('light.a', 'Kitchen light', 'kitchen'), entity('light.b', 'Kitchen light', 'living_room')];
  t.same(
    resolveEntity('kitchen light', same, areas).candidates.map((e) => e.entity_id),
    ['light.a'],
    'the name starts with an area: the one in it wins',
  );
  const twoInKitchen = [entity('light.a', 'Lamp', 'kitchen'), entity('light.b', 'Lamp', 'kitchen')];
  t.equal(resolveEntity('kitchen lamp', twoInKitchen, areas).candidates.length, 2, 'both in the named area: still ambiguous');
  const none = [entity('light.a', 'Lamp'), entity('light.b', 'Lamp')];
  t.equal(resolveEntity('lamp', none, areas).entity, undefined);
  t.equal(resolveEntity('lamp', none.slice(0, 1), areas).entity?.entity_id, 'light.a');
});

t.test('an exact name beats area + name', async (t) => {
  const list = [entity('light.special', 'Kitchen light', null), entity('light.plain', 'light', 'kitchen')];
  t.equal(resolveEntity('kitchen light', list, areas).entity?.entity_id, 'light.special');
  t.equal(resolveEntity('light in the kitchen', list, areas).entity?.entity_id, 'light.plain');
});

t.test('areaSlug and findArea', async (t) => {
  t.equal(areaSlug('Living room'), 'living_room');
  t.equal(areaSlug("  Kid's Room #2 "), 'kid_s_room_2');
  t.equal(areaSlug('Café'), 'cafe', 'accents drop');
  t.equal(areaSlug('Küche Süd'), 'kuche_sud', 'inside a word too');
  t.equal(areaSlug('书房'), areaSlug('书房'), 'stable');
  t.match(areaSlug('书房'), /^area_[0-9a-f]{10}$/);
  t.not(areaSlug('书房'), areaSlug('厨房'));
  t.equal(areaSlug('x'.repeat(100)).length, 64);
  t.equal(findArea('living_room', areas)?.id, 'living_room');
  t.equal(findArea('LIVING ROOM', areas)?.id, 'living_room');
  t.equal(findArea('客厅', areas)?.id, 'living_room');
  t.equal(findArea('garage', areas), undefined);
  t.equal(findArea('', areas), undefined);
});
