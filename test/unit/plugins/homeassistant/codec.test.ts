// Home Assistant's WebSocket messages as the plugin reads them (protocol.ts) and HA entities as
// HomeAgent entities (entity-mapping.ts): real message shapes from the recorded house
// (test/fixtures/homeassistant/house.json), and the broken ones a peer can send.
import t from 'tap';
import {
  attributesOf,
  clean,
  domainOf,
  isExposed,
  matchesPattern,
  objectIdOf,
  planEntity,
  registriesOf,
  serviceCall,
  stateOf,
} from '../../../../plugins/homeassistant/entity-mapping.js';
import {
  parseServerMessage,
  readAreas,
  readDevices,
  readEntityEntries,
  readExposedToAssist,
  readStateChanged,
  readStates,
} from '../../../../plugins/homeassistant/protocol.js';
import { house } from '../../../helpers/ha-peer.js';

t.test('server messages: auth, results, pongs and events; anything else is not a message', async (t) => {
  t.same(parseServerMessage('{"type":"auth_required","ha_version":"2025.11.3"}'), { type: 'auth_required', ha_version: '2025.11.3' });
  t.same(parseServerMessage('{"type":"auth_ok","ha_version":"2025.11.3"}'), { type: 'auth_ok', ha_version: '2025.11.3' });
  t.same(parseServerMessage('{"type":"auth_invalid","message":"Invalid access token or password"}'), {
    type: 'auth_invalid',
    message: 'Invalid access token or password',
  });
  t.same(parseServerMessage('{"id":3,"type":"result","success":true,"result":null}'), {
    type: 'result',
    id: 3,
    success: true,
    result: null,
  });
  t.same(parseServerMessage('{"id":4,"type":"result","success":false,"error":{"code":"unknown_command","message":"Unknown command."}}'), {
    type: 'result',
    id: 4,
    success: false,
    error: { code: 'unknown_command', message: 'Unknown command.' },
  });
  t.match(
    parseServerMessage('{"id":5,"type":"result","success":false}'),
    { error: { code: 'unknown_error' } },
    'an error without detail still fails',
  );
  t.same(parseServerMessage('{"id":6,"type":"pong"}'), { type: 'pong', id: 6 });
  t.match(parseServerMessage('{"id":7,"type":"event","event":{"event_type":"state_changed"}}'), { type: 'event', id: 7 });
  for (const bad of [
    'not json',
    '[]',
    '{"type":"result","success":true}',
    '{"id":-1,"type":"pong"}',
    '{"id":1.5,"type":"pong"}',
    '{"id":2,"type":"result","success":"yes"}',
    '{"id":2,"type":"mystery"}',
    'null',
  ]) {
    t.equal(parseServerMessage(bad), undefined, `${bad} is not a message`);
  }
});

t.test('registries and states read from the recorded house', async (t) => {
  const h = house();
  const areas = readAreas(h.areas);
  t.same(areas[1], { area_id: 'living_room', name: 'Living Room', aliases: ['lounge'], floor_id: 'ground_floor' });
  const devices = readDevices(h.devices);
  t.match(devices[1], { id: '4b3a2c1d0e9f8a7b6c5d4e3f2a1b0c9d', name_by_user: 'Front door lock', area_id: 'hallway' });
  const entries = readEntityEntries(h.entities);
  t.match(entries[0], { entity_id: 'light.kitchen', aliases: ['厨房灯', 'ceiling light'], area_id: 'kitchen', disabled_by: null });
  t.equal(entries[3]?.disabled_by, 'user');
  const exposed = readExposedToAssist({ exposed_entities: h.exposed });
  t.ok(exposed.has('light.kitchen'));
  t.notOk(exposed.has('light.attic'), 'conversation: false is not exposed');
  t.same([...readExposedToAssist('nonsense')], []);
  const { states, unreadable } = readStates([...h.states, { entity_id: 'light.x' }, 42]);
  t.equal(states.length, h.states.length);
  t.equal(unreadable, 2, 'states without a state, and non-objects, are counted');
  t.same(readAreas({ not: 'a list' }), []);
});

t.test('state_changed events', async (t) => {
  const state = house().states[0];
  t.match(readStateChanged({ event_type: 'state_changed', data: { entity_id: 'light.kitchen', old_state: null, new_state: state } }), {
    entity_id: 'light.kitchen',
    new_state: { state: 'off' },
  });
  t.same(readStateChanged({ event_type: 'state_changed', data: { entity_id: 'light.kitchen', old_state: state, new_state: null } }), {
    entity_id: 'light.kitchen',
    new_state: null,
  });
  t.equal(
    readStateChanged({ event_type: 'state_changed', data: { entity_id: 'light.other', new_state: state } }),
    undefined,
    'a new_state naming another entity is refused',
  );
  t.equal(readStateChanged({ event_type: 'call_service', data: {} }), undefined);
});

t.test('which entities come in', async (t) => {
  const assisted = new Set(['light.kitchen', 'lock.front_door']);
  const assist = { expose: 'assist' as const, include: ['input_boolean', 'sensor.outdoor'], exclude: ['lock.*'] };
  t.ok(isExposed('light.kitchen', assist, assisted), 'exposed to Assist');
  t.notOk(isExposed('lock.front_door', assist, assisted), 'exclude wins over Assist');
  t.ok(isExposed('input_boolean.guest_mode', assist, assisted), 'a whole domain included');
  t.ok(isExposed('sensor.outdoor', assist, assisted));
  t.notOk(isExposed('sensor.indoor', assist, assisted));
  t.notOk(isExposed('light.kitchen', { ...assist, expose: 'list' }, assisted), 'list mode ignores Assist');
  t.notOk(isExposed('light.kitchen', assist, undefined), 'HA would not say: only include counts');
  t.ok(matchesPattern('light.a', ['light.*']));
  t.notOk(matchesPattern('lights.a', ['light']));
});

t.test('HA entities as HomeAgent entities', async (t) => {
  const h = house();
  const registries = registriesOf(readAreas(h.areas), readDevices(h.devices), readEntityEntries(h.entities));
  const [kitchen, temperature, lock, garage, alarm, heater, , guest] = readStates(h.states).states;
  t.same(planEntity(kitchen as never, registries), {
    ha_entity_id: 'light.kitchen',
    ha_domain: 'light',
    domain: 'light',
    object_id: 'kitchen',
    name: 'Kitchen ceiling',
    aliases: ['厨房灯', 'ceiling light'],
    area: 'Kitchen',
    device: null,
    unit: null,
    device_class: null,
    entity_category: null,
    state_class: null,
    services: ['turn_on', 'turn_off', 'toggle'],
  });
  // HA's entity registry says which entities are diagnostic; a sensor's state_class is an attribute.
  const entry = { entity_id: 'sensor.plug_energy', name: null, original_name: 'Energy', area_id: null, device_id: null, aliases: [] };
  const meter = {
    entity_id: 'sensor.plug_energy',
    state: '12.5',
    attributes: { unit_of_measurement: 'kWh', device_class: 'energy', state_class: 'total_increasing', friendly_name: 'Plug energy' },
  };
  const withEntries = (entity_category: string | null) =>
    registriesOf([], [], [{ ...entry, disabled_by: null, hidden_by: null, entity_category }]);
  t.match(planEntity(meter as never, withEntries(null)), {
    unit: 'kWh',
    device_class: 'energy',
    state_class: 'total_increasing',
    entity_category: null,
  });
  t.match(planEntity(meter as never, withEntries('diagnostic')), { entity_category: 'diagnostic' });
  t.match(
    planEntity({ ...meter, attributes: { state_class: 'sum' } } as never, withEntries('odd')),
    { state_class: null, entity_category: null },
    'unknown values are left out',
  );
  t.match(
    planEntity(temperature as never, registries),
    {
      domain: 'sensor',
      area: 'Living Room',
      device: 'homeassistant:9f1c2b7e4a6d4c0fb1d2e3f4a5b6c7d8',
      unit: '°C',
      device_class: 'temperature',
      services: [],
    },
    'the area comes from the device when the entity has none',
  );
  t.match(planEntity(lock as never, registries), { domain: 'lock', area: 'Hallway', aliases: ['front door'] });
  t.match(planEntity(garage as never, registries), { domain: 'cover', services: ['open', 'close', 'stop', 'set_position'] });
  t.match(planEntity(alarm as never, registries), { skip: /alarm panels stay in Home Assistant/ });
  t.match(planEntity(heater as never, registries), { skip: /disabled in Home Assistant \(user\)/ });
  t.match(planEntity(guest as never, registries), { domain: 'switch', ha_domain: 'input_boolean', name: 'Guest mode' });
  t.match(domainOf('automation.morning'), { skip: /automation domain has no HomeAgent counterpart/ });

  t.equal(stateOf('sensor', '21.5'), 21.5, 'numeric sensor states are numbers');
  t.equal(stateOf('sensor', 'high'), 'high');
  t.equal(stateOf('light', 'unavailable'), 'unavailable');
  t.equal(stateOf('light', 'unknown'), null);
  t.equal(stateOf('scene', '2025-12-01T07:00:00+00:00'), null, 'a scene has no state');
  t.equal(stateOf('lock', 'jammed'), 'jammed');

  const attributes = attributesOf({
    entity_id: 'light.kitchen',
    state: 'on',
    attributes: {
      friendly_name: 'Kitchen',
      brightness: 128,
      supported_color_modes: ['color_temp', 'xy'],
      xy_color: [0.3, 0.3],
      effect_list: Array.from({ length: 100 }, (_, i) => `effect ${i}`),
      nested: { a: 1 },
      label: 'Hello\u001b[31m world\u202e',
      'Bad Key': 1,
    },
  });
  t.same(
    attributes,
    {
      ha_entity_id: 'light.kitchen',
      brightness: 128,
      supported_color_modes: ['color_temp', 'xy'],
      xy_color: [0.3, 0.3],
      label: 'Hello [31m world',
    },
    'scalars and short lists kept, control characters gone, the rest dropped',
  );
});

t.test('object ids and cleaned text', async (t) => {
  t.equal(objectIdOf('light.kitchen'), 'kitchen');
  const long = `sensor.${'a'.repeat(80)}`;
  const id = objectIdOf(long);
  t.equal(id.length, 64);
  t.not(id, objectIdOf(`sensor.${'a'.repeat(79)}b`), 'two long ids stay apart');
  t.equal(clean('  a\n\tb  ', 10), 'a b');
  t.equal(clean('\u0007', 10), undefined);
  t.equal(clean('客厅的灯很亮', 3), '客厅的');
});

t.test('HomeAgent services as HA service calls', async (t) => {
  t.same(serviceCall('light', 'turn_on', { brightness: 128 }), { domain: 'light', service: 'turn_on', service_data: { brightness: 128 } });
  t.same(serviceCall('cover', 'set_position', { position: 40 }), {
    domain: 'cover',
    service: 'set_cover_position',
    service_data: { position: 40 },
  });
  t.same(serviceCall('valve', 'close', {}), { domain: 'valve', service: 'close_valve', service_data: {} });
  t.same(serviceCall('input_boolean', 'toggle', {}), { domain: 'input_boolean', service: 'toggle', service_data: {} });
  t.match(serviceCall('media_player', 'play_media', { media_content_id: 'jazz' }), {
    service_data: { media_content_id: 'jazz', media_content_type: 'music' },
  });
  t.throws(() => serviceCall('input_button', 'turn_on', {}), { code: 'HA_ERR_ENTITY_SERVICE' });
});
