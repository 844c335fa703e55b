// Home Assistant discovery configs: every domain (and every way an entity can appear) checked
// against Home Assistant's documented schema of its component; ids stable; odd names intact.
import { Ajv, type ValidateFunction } from 'ajv';
import t from 'tap';
import {
  agentDiscovery,
  availabilityOf,
  type DiscoveryMessage,
  type DiscoveryNode,
  discoveryTopic,
  entityAvailabilityTopic,
  entityDiscovery,
  entityOfTopicObjectId,
  HA_COMPONENTS,
  HA_DEVICE_CLASSES,
  type HaComponent,
  haComponentFor,
  isPublishedDomain,
  PUBLISHED_DOMAINS,
  parseDiscoveryTopic,
  stateText,
  uniqueIdFor,
} from '../../../../plugins/mqtt/discovery-payloads.js';
import { DOMAIN_SERVICES, ENTITY_DOMAINS, type EntityDomain, type EntityInfo } from '../../../../src/sdk/index.js';
import { DOCUMENTED_DEVICE_CLASSES, HA_DISCOVERY_SCHEMAS } from './fixtures/ha-discovery-schemas.js';

const NODE: DiscoveryNode = {
  node_id: 'pi_kitchen',
  name: 'Kitchen Pi',
  base_topic: 'homeagent',
  discovery_prefix: 'homeassistant',
  sw_version: '0.1.0',
};
const ajv = new Ajv({ allErrors: true, allowUnionTypes: true });
const validators = new Map<HaComponent, ValidateFunction>(HA_COMPONENTS.map((c) => [c, ajv.compile(HA_DISCOVERY_SCHEMAS[c])]));

function entity(domain: EntityDomain, objectId: string, extra: Partial<EntityInfo> = {}): EntityInfo {
  return {
    entity_id: `${domain}.${objectId}`,
    domain,
    name: objectId.replaceAll('_', ' '),
    aliases: [],
    area: null,
    device: null,
    state: null,
    attributes: {},
    unit: null,
    device_class: null,
    last_changed: 0,
    last_updated: 0,
    owner: 'plugin:gpio',
    critical: false,
    services: [...DOMAIN_SERVICES[domain]],
    entity_category: null,
    state_class: null,
    ...extra,
  };
}

/** The config of an entity of a published domain. */
function discover(e: EntityInfo, node: DiscoveryNode = NODE, areaName?: string): DiscoveryMessage {
  const message = entityDiscovery(e, node, areaName);
  if (message === undefined) throw new Error(`${e.entity_id} is not published`);
  return message;
}

/** The schema's complaints about a payload, as text ('' when it passes). */
function problems(component: HaComponent, payload: unknown): string {
  const validate = validators.get(component);
  if (validate === undefined) throw new Error(`no schema for ${component}`);
  return validate(payload) ? '' : ajv.errorsText(validate.errors);
}

/** Every domain, with and without its services, with the attributes and classes that add keys. */
const CASES: Array<{ entity: EntityInfo; component: HaComponent }> = [
  { entity: entity('switch', 'kitchen_light', { device_class: 'outlet', area: 'kitchen' }), component: 'switch' },
  { entity: entity('switch', 'garage_pulse', { services: ['toggle'] }), component: 'switch' },
  { entity: entity('switch', 'mains_sense', { services: [] }), component: 'binary_sensor' },
  { entity: entity('light', 'porch', {}), component: 'light' },
  { entity: entity('light', 'dimmer', { attributes: { brightness: 128 } }), component: 'light' },
  { entity: entity('fan', 'ceiling_fan', { attributes: { percentage: 40 } }), component: 'fan' },
  { entity: entity('fan', 'vent', { services: ['turn_on', 'turn_off'] }), component: 'fan' },
  { entity: entity('siren', 'alarm', {}), component: 'siren' },
  { entity: entity('cover', 'blind', { device_class: 'blind', attributes: { position: 30 } }), component: 'cover' },
  { entity: entity('cover', 'garage_door', { device_class: 'garage', services: ['open', 'close'] }), component: 'cover' },
  { entity: entity('cover', 'skylight', { services: [] }), component: 'cover' },
  { entity: entity('valve', 'water_main', { device_class: 'water' }), component: 'valve' },
  { entity: entity('valve', 'gas_sense', { services: [] }), component: 'valve' },
  { entity: entity('lock', 'front_door', {}), component: 'lock' },
  { entity: entity('lock', 'shed_lock', { services: [] }), component: 'binary_sensor' },
  { entity: entity('button', 'reboot', { device_class: 'restart' }), component: 'button' },
  { entity: entity('button', 'doorbell', { services: [] }), component: 'binary_sensor' },
  {
    entity: entity('number', 'setpoint', { unit: '°C', device_class: 'temperature', attributes: { min: 5, max: 30, step: 0.5 } }),
    component: 'number',
  },
  { entity: entity('number', 'reading', { services: [] }), component: 'sensor' },
  { entity: entity('binary_sensor', 'hall_motion', { device_class: 'motion' }), component: 'binary_sensor' },
  { entity: entity('sensor', 'living_temperature', { unit: '°C', device_class: 'temperature', state: 21.5 }), component: 'sensor' },
  { entity: entity('sensor', 'mode', {}), component: 'sensor' },
];

t.test('every domain gives a config Home Assistant documents for its component', async (t) => {
  const domains = new Set(CASES.map((c) => c.entity.domain));
  t.same([...domains].sort(), [...PUBLISHED_DOMAINS].sort(), 'the cases cover every published domain');
  for (const { entity: e, component } of CASES) {
    const message = discover(e, NODE, e.area === null ? undefined : 'Kitchen');
    t.equal(message.component, component, `${e.entity_id} appears as ${component}`);
    t.equal(problems(component, message.payload), '', `${e.entity_id} matches the ${component} schema`);
    t.equal(message.topic, `homeassistant/${component}/pi_kitchen/${e.entity_id.replace('.', '_')}/config`);
    t.match(message.topic.split('/')[3], /^[a-zA-Z0-9_-]+$/, 'the object id level uses the characters Home Assistant allows');
    t.notOk('object_id' in message.payload, 'the deprecated object_id is not sent');
    t.match(message.payload.default_entity_id, new RegExp(`^${component}\\.pi_kitchen_`));
    // The payload is what goes on the wire: JSON and back changes nothing.
    t.same(JSON.parse(JSON.stringify(message.payload)), message.payload);
  }
});

t.test('the agent is a notify entity and a last-reply sensor cut to 255 characters', async (t) => {
  const [notify, reply] = agentDiscovery(NODE);
  if (notify === undefined || reply === undefined) throw new Error('two agent configs expected');
  t.equal(notify.topic, 'homeassistant/notify/pi_kitchen/agent_notify/config');
  t.equal(problems('notify', notify.payload), '');
  t.equal(notify.payload.command_topic, 'homeagent/agent/notify');
  t.equal(reply.topic, 'homeassistant/sensor/pi_kitchen/agent_last_reply/config');
  t.equal(problems('sensor', reply.payload), '');
  t.equal(reply.payload.state_topic, 'homeagent/agent/last_reply');
  t.equal(reply.payload.value_template, '{{ value[:255] }}');
  t.equal(reply.payload.json_attributes_topic, 'homeagent/agent/last_reply', 'the whole text is an attribute');
  t.equal(entityOfTopicObjectId('agent_notify'), undefined, 'remote nodes do not take the agent for an entity');
});

t.test('the schemas refuse what Home Assistant would refuse or drop', async (t) => {
  const good = discover(entity('switch', 'kitchen_light'), NODE).payload;
  t.equal(problems('switch', good), '');
  const { command_topic: _, ...withoutCommand } = good;
  t.match(problems('switch', withoutCommand), /command_topic/, 'a switch needs its command topic');
  t.match(problems('switch', { ...good, stat_t: 'x' }), /additional/, 'an abbreviated or unknown key is refused');
  t.match(problems('switch', { ...good, device_class: 'lamp' }), /allowed values/, 'an undocumented device class is refused');
  t.match(
    problems('switch', { ...good, availability_topic: 'x/status' }),
    /must NOT be valid/,
    'availability and availability_topic together',
  );
  t.match(problems('switch', { ...good, device: { name: 'no ids' } }), /anyOf/, 'a device needs identifiers or connections');
  t.match(problems('switch', { ...good, default_entity_id: 'light.x' }), /pattern/, 'default_entity_id must be of the component');
  t.match(problems('sensor', { state_topic: 's', options: ['a'], unit_of_measurement: 'x' }), /must NOT be valid|must match "then"/);
});

t.test('the device classes HomeAgent passes on are the documented ones', async (t) => {
  for (const component of HA_COMPONENTS) {
    const documented = DOCUMENTED_DEVICE_CLASSES[component] ?? [];
    const passed = HA_DEVICE_CLASSES[component] ?? [];
    // enum is documented but needs `options`, which an entity does not declare.
    t.same([...passed].sort(), documented.filter((c) => !(component === 'sensor' && c === 'enum')).sort(), `${component}`);
  }
  const enumSensor = discover(entity('sensor', 'mode', { device_class: 'enum' }), NODE).payload;
  t.notOk('device_class' in enumSensor, 'a sensor of class enum is announced without it');
  t.equal(problems('sensor', enumSensor), '');
  t.match(problems('sensor', { ...enumSensor, device_class: 'enum', options: ['a'], unit_of_measurement: 'x' }), /must NOT be valid/);
});

t.test('a device class Home Assistant does not know for the component is left out', async (t) => {
  const payload = discover(entity('switch', 'pump', { device_class: 'pump' }), NODE).payload;
  t.notOk('device_class' in payload);
  const lock = discover(entity('lock', 'shed', { services: [], device_class: 'door' }), NODE).payload;
  t.equal(lock.device_class, 'lock', 'a reporting lock reads on as unlocked');
  t.equal(lock.payload_on, 'unlocked');
});

t.test('commands use the forms the command topic takes; states read HomeAgent words', async (t) => {
  const sw = discover(entity('switch', 'a'), NODE).payload;
  t.match(sw, {
    command_topic: 'homeagent/switch.a/set',
    state_topic: 'homeagent/switch.a/state',
    payload_on: 'ON',
    payload_off: 'OFF',
    state_on: 'on',
    state_off: 'off',
    retain: false,
  });
  const pulse = discover(entity('switch', 'p', { services: ['toggle'] }), NODE).payload;
  t.match(pulse, { payload_on: 'toggle', payload_off: 'toggle', state_on: 'on' }, 'a toggle-only relay is toggled');
  const light = discover(entity('light', 'd', { attributes: { brightness: 10 } }), NODE).payload;
  t.match(light, {
    state_value_template: '{{ value | upper }}',
    brightness_command_topic: 'homeagent/light.d/set',
    brightness_state_topic: 'homeagent/light.d/attributes',
    on_command_type: 'brightness',
  });
  t.same(JSON.parse(String(light.brightness_command_template).replace('{{ value }}', '200')), {
    service: 'turn_on',
    data: { brightness: 200 },
  });
  t.notOk('brightness_command_topic' in discover(entity('light', 'plain'), NODE).payload, 'on/off lights have no brightness');
  const fan = discover(entity('fan', 'f'), NODE).payload;
  t.same(JSON.parse(String(fan.percentage_command_template).replace('{{ value }}', '55')), {
    service: 'set_percentage',
    data: { percentage: 55 },
  });
  t.equal(fan.retain, false, 'a fan retains commands by default in Home Assistant: HomeAgent says no');
  const cover = discover(entity('cover', 'c'), NODE).payload;
  t.same(JSON.parse(String(cover.set_position_template).replace('{{ position }}', '70')), {
    service: 'set_position',
    data: { position: 70 },
  });
  t.match(cover, { payload_open: 'open', payload_close: 'close', payload_stop: 'stop', state_closed: 'closed' });
  t.notOk('command_topic' in discover(entity('cover', 'r', { services: [] }), NODE).payload, 'a reporting cover takes no command');
  t.match(discover(entity('lock', 'l'), NODE).payload, {
    payload_lock: 'lock',
    payload_unlock: 'unlock',
    state_locked: 'locked',
    state_unlocked: 'unlocked',
  });
  t.match(discover(entity('button', 'b'), NODE).payload, { payload_press: 'press' });
  const number = discover(entity('number', 'n', { attributes: { min: -3, max: 3, step: 'x' } }), NODE).payload;
  t.same(JSON.parse(String(number.command_template).replace('{{ value }}', '2.5')), { service: 'set_value', data: { value: 2.5 } });
  t.match(number, { min: -3, max: 3 });
  t.notOk('step' in number, 'a step that is not a number is left out');
  t.match(discover(entity('siren', 's'), NODE).payload, { command_template: '{{ value }}', support_duration: false });
  t.match(discover(entity('sensor', 't', { unit: 'hPa', state_class: 'measurement' }), NODE).payload, {
    unit_of_measurement: 'hPa',
    state_class: 'measurement',
  });
  t.notOk('state_class' in discover(entity('sensor', 'txt'), NODE).payload, 'a sensor without a state class has none');
  t.match(
    discover(entity('sensor', 'meter', { unit: 'kWh', device_class: 'energy', state_class: 'total_increasing' }), NODE).payload,
    { unit_of_measurement: 'kWh', device_class: 'energy', state_class: 'total_increasing' },
    'an energy counter is published as total_increasing, not measurement',
  );
  t.match(
    discover(entity('number', 'ro', { unit: '°C', services: [] }), NODE).payload,
    { state_class: 'measurement' },
    'a number shown as a sensor measures',
  );
});

t.test('entity categories: diagnostic for every component, config only where Home Assistant allows it', async (t) => {
  const battery = discover(entity('sensor', 'battery', { unit: '%', device_class: 'battery', entity_category: 'diagnostic' }), NODE);
  t.equal(battery.payload.entity_category, 'diagnostic');
  t.ok(validators.get('sensor')?.(battery.payload), 'the sensor schema takes it');
  t.equal(discover(entity('switch', 'led', { entity_category: 'config' }), NODE).payload.entity_category, 'config');
  t.notOk(
    'entity_category' in discover(entity('sensor', 'x', { entity_category: 'config' }), NODE).payload,
    'HA refuses config on a sensor',
  );
  t.notOk('entity_category' in discover(entity('switch', 'plain'), NODE).payload, 'a primary entity has none');
});

t.test("sw_version: the device and the origin carry HomeAgent's version", async (t) => {
  const payload = discover(entity('switch', 'a'), NODE).payload as { device: { sw_version?: string }; origin: { sw_version?: string } };
  t.equal(payload.device.sw_version, '0.1.0');
  t.equal(payload.origin.sw_version, '0.1.0');
});

t.test('availability: the node and the entity, both required', async (t) => {
  const payload = discover(entity('switch', 'a'), NODE).payload;
  t.same(payload.availability, [
    { topic: 'homeagent/status', payload_available: 'online', payload_not_available: 'offline' },
    { topic: 'homeagent/switch.a/availability', payload_available: 'online', payload_not_available: 'offline' },
  ]);
  t.equal(payload.availability_mode, 'all');
  t.equal(entityAvailabilityTopic('homeagent/', 'switch.a'), 'homeagent/switch.a/availability', 'a trailing slash is not doubled');
  t.equal(availabilityOf('unavailable'), 'offline');
  t.equal(availabilityOf(null), 'online', 'unknown is not unavailable');
  t.equal(stateText(null), '');
  t.equal(stateText(21.5), '21.5');
});

t.test('devices: the node, and one per area naming it', async (t) => {
  const plain = discover(entity('switch', 'a'), NODE).payload;
  t.same(plain.device, {
    identifiers: ['homeagent_pi_kitchen'],
    name: 'Kitchen Pi',
    manufacturer: 'HomeAgent',
    model: 'HomeAgent',
    sw_version: '0.1.0',
  });
  t.same(plain.origin, { name: 'HomeAgent', sw_version: '0.1.0' });
  const inArea = discover(entity('switch', 'b', { area: 'living_room' }), NODE, 'Living room').payload;
  t.same(inArea.device, {
    identifiers: ['homeagent_pi_kitchen_area_living_room'],
    name: 'Kitchen Pi Living room',
    manufacturer: 'HomeAgent',
    model: 'HomeAgent',
    sw_version: '0.1.0',
    suggested_area: 'Living room',
    via_device: 'homeagent_pi_kitchen',
  });
  const { sw_version: _, ...unversioned } = NODE;
  const bare = discover(entity('switch', 'c', { area: 'attic' }), unversioned).payload;
  t.match(bare.device, { suggested_area: 'attic' }, 'the area id when its name is not known');
  t.notOk('sw_version' in (bare.device as object));
  t.same(bare.origin, { name: 'HomeAgent' });
});

t.test('unique ids are stable and distinct', async (t) => {
  const a = entity('switch', 'kitchen_light', { name: 'Kitchen light' });
  const first = discover(a, NODE);
  t.equal(first.unique_id, 'homeagent_pi_kitchen_switch_kitchen_light');
  t.equal(first.payload.unique_id, first.unique_id);
  t.same(discover(a, NODE), first, 'the same entity gives the same config');
  t.equal(discover({ ...a, name: 'Renamed', area: 'hall' }, NODE).unique_id, first.unique_id, 'renaming or moving keeps the id');
  t.equal(discover({ ...a, services: [] }, NODE).unique_id, first.unique_id, 'so does changing its services');
  t.not(discover(a, { ...NODE, node_id: 'garage' }).unique_id, first.unique_id, 'another node, another id');
  t.not(uniqueIdFor('n', 'light.kitchen_light'), uniqueIdFor('n', 'switch.kitchen_light'), 'another domain, another id');
  // button.x shown as a binary_sensor and binary_sensor.x share a component but not a topic.
  const asSensor = discover(entity('button', 'x', { services: [] }), NODE);
  const sensor = discover(entity('binary_sensor', 'x'), NODE);
  t.equal(asSensor.component, sensor.component);
  t.not(asSensor.topic, sensor.topic);
  t.not(asSensor.unique_id, sensor.unique_id);
});

t.test('names and areas with quotes, umlauts and emoji survive as they are', async (t) => {
  const name = 'Küche "Decke" \\ 💡 <licht>';
  const message = discover(entity('light', 'kuche', { name, area: 'kuche' }), NODE, 'Küche & Essen');
  const wire = JSON.parse(Buffer.from(JSON.stringify(message.payload), 'utf8').toString('utf8')) as Record<string, unknown>;
  t.equal(wire.name, name);
  t.match(wire.device, { suggested_area: 'Küche & Essen', name: 'Kitchen Pi Küche & Essen' });
  t.equal(problems('light', wire), '');
  t.match(message.topic, /^[\x20-\x7e]+$/, 'the topic stays ASCII whatever the name');
});

t.test('topic helpers', async (t) => {
  t.equal(discoveryTopic('homeassistant/', 'switch', 'n', 'switch_a'), 'homeassistant/switch/n/switch_a/config');
  t.same(parseDiscoveryTopic('homeassistant', 'homeassistant/switch/garage/switch_door/config'), {
    component: 'switch',
    node_id: 'garage',
    object_id: 'switch_door',
  });
  t.equal(parseDiscoveryTopic('homeassistant', 'homeassistant/switch/switch_door/config'), undefined, 'no node level');
  t.equal(parseDiscoveryTopic('homeassistant', 'other/switch/n/o/config'), undefined);
  t.equal(parseDiscoveryTopic('homeassistant', 'homeassistant/switch/n/o/state'), undefined);
  t.same(entityOfTopicObjectId('binary_sensor_hall'), { domain: 'binary_sensor', object_id: 'hall' }, 'the longest domain wins');
  t.same(entityOfTopicObjectId('switch_a_b'), { domain: 'switch', object_id: 'a_b' });
  t.equal(entityOfTopicObjectId('switch_'), undefined);
  t.equal(haComponentFor({ domain: 'number', services: ['set_value'] }), 'number');
});

t.test('scenes, scripts, climate, media players, vacuums, persons, weather and cameras are not published', async (t) => {
  const unpublished = ENTITY_DOMAINS.filter((d) => !isPublishedDomain(d));
  t.same([...unpublished].sort(), ['camera', 'climate', 'media_player', 'person', 'scene', 'script', 'vacuum', 'weather']);
  for (const domain of unpublished) {
    const e = entity(domain, 'x', { state: 'on' });
    t.equal(entityDiscovery(e, NODE), undefined, `${domain} gives no config`);
    t.equal(haComponentFor(e), undefined, `${domain} has no component`);
  }
  t.notOk((HA_COMPONENTS as readonly string[]).includes('climate'), 'nor is it a component');
  t.ok(isPublishedDomain('switch'));
  t.notOk(isPublishedDomain('notify'), 'the agent component is not an entity domain');
  t.same(entityOfTopicObjectId('media_player_tv'), { domain: 'media_player', object_id: 'tv' }, 'the whole domain, not a part');
});
