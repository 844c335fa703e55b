// Zigbee2MQTT exposes → entity plans, on a bridge/devices payload in Z2M 2.x's format
// (fixtures/z2m-bridge-devices.json) and on small hand-made exposes for the rarer shapes.
import { readFileSync } from 'node:fs';
import t from 'tap';
import {
  brightnessFromZ2m,
  brightnessToZ2m,
  objectId,
  planDeviceEntities,
  readDevice,
  skipReason,
  splitFriendlyName,
  type Z2mDevice,
  type Z2mEntityPlan,
  type Z2mExpose,
} from '../../../../plugins/mqtt/zigbee2mqtt-exposes.js';
import { expectError } from '../../fixtures/support.js';

const FIXTURES = new URL('./fixtures/', import.meta.url);
const DEVICES = JSON.parse(readFileSync(new URL('z2m-bridge-devices.json', FIXTURES), 'utf8')) as unknown[];
const STATES = JSON.parse(readFileSync(new URL('z2m-states.json', FIXTURES), 'utf8')) as Record<string, Record<string, unknown>>;

function fixture(name: string): Z2mDevice {
  const found = DEVICES.map(readDevice).find((d) => d?.friendly_name === name);
  if (found === undefined) throw new Error(`no fixture device ${name}`);
  return found;
}

function plans(name: string): Map<string, Z2mEntityPlan> {
  return new Map(planDeviceEntities(fixture(name)).map((p) => [`${p.definition.domain}.${p.definition.object_id}`, p]));
}

function plan(name: string, entityId: string): Z2mEntityPlan {
  const found = plans(name).get(entityId);
  if (found === undefined) throw new Error(`${name} has no ${entityId}: ${[...plans(name).keys()].join(', ')}`);
  return found;
}

/** A device around hand-made exposes. */
function device(exposes: Z2mExpose[], friendly_name = 'Test device'): Z2mDevice {
  return {
    ieee_address: '0x00158d0000000001',
    friendly_name,
    type: 'EndDevice',
    supported: true,
    interview_completed: true,
    definition: { model: 'M1', vendor: 'V', description: 'test', exposes },
  };
}

function summary(p: Z2mEntityPlan) {
  const d = p.definition;
  return { name: d.name, area: d.area, unit: d.unit, device_class: d.device_class, services: d.services };
}

t.test('every device of the payload gets the entities its exposes describe', async (t) => {
  const all = DEVICES.map(readDevice).flatMap((d) => (d === undefined ? [] : planDeviceEntities(d)));
  const ids = all.map((p) => `${p.definition.domain}.${p.definition.object_id}`).sort();
  t.strictSame(ids, [
    'binary_sensor.front_door_contact',
    'binary_sensor.hallway_motion_occupancy',
    'cover.bedroom_blind',
    'light.living_room_ceiling',
    'lock.back_door_lock',
    'number.back_door_lock_auto_relock_time',
    'sensor.back_door_lock_action',
    'sensor.back_door_lock_action_source_name',
    'sensor.back_door_lock_action_user',
    'sensor.back_door_lock_battery',
    'sensor.back_door_lock_sound_volume',
    'sensor.bathroom_climate_battery',
    'sensor.bathroom_climate_humidity',
    'sensor.bathroom_climate_pressure',
    'sensor.bathroom_climate_temperature',
    'sensor.bathroom_climate_voltage',
    'sensor.bedroom_blind_battery',
    'sensor.bedside_button_action',
    'sensor.bedside_button_battery',
    'sensor.bedside_button_device_temperature',
    'sensor.bedside_button_power_outage_count',
    'sensor.bedside_button_voltage',
    'sensor.front_door_battery',
    'sensor.front_door_device_temperature',
    'sensor.front_door_power_outage_count',
    'sensor.front_door_trigger_count',
    'sensor.front_door_voltage',
    'sensor.hallway_motion_battery',
    'sensor.hallway_motion_device_temperature',
    'sensor.hallway_motion_illuminance',
    'sensor.hallway_motion_power_outage_count',
    'sensor.hallway_motion_voltage',
    'switch.hall_switch_l1',
    'switch.hall_switch_l2',
  ]);
  t.notOk(
    ids.some((id) => id.includes('linkquality') || id.includes('power_on_behavior') || id.includes('effect') || id.includes('identify')),
    'link quality, settings and set-only exposes are not entities',
  );
  for (const p of all) {
    t.match(p.definition.object_id, /^[a-z0-9_]{1,64}$/, `${p.definition.object_id} is a valid object id`);
    t.equal(p.definition.device?.startsWith('0x'), true, 'the device is the IEEE address');
  }
});

t.test('units and device classes follow the expose names', async (t) => {
  t.strictSame(summary(plan('bathroom/climate', 'sensor.bathroom_climate_temperature')), {
    name: 'climate Temperature',
    area: 'bathroom',
    unit: '°C',
    device_class: 'temperature',
    services: [],
  });
  const climate = plans('bathroom/climate');
  t.strictSame(
    [...climate.values()].map((p) => [p.definition.object_id, p.definition.unit, p.definition.device_class]),
    [
      ['bathroom_climate_temperature', '°C', 'temperature'],
      ['bathroom_climate_humidity', '%', 'humidity'],
      ['bathroom_climate_pressure', 'hPa', 'pressure'],
      ['bathroom_climate_battery', '%', 'battery'],
      ['bathroom_climate_voltage', 'mV', 'voltage'],
    ],
  );
  t.strictSame(summary(plan('Hallway motion', 'sensor.hallway_motion_illuminance')).device_class, 'illuminance');
  t.strictSame(summary(plan('Hallway motion', 'binary_sensor.hallway_motion_occupancy')).device_class, 'motion');
  t.strictSame(summary(plan('Front door', 'sensor.front_door_device_temperature')).device_class, 'temperature');
  t.strictSame(summary(plan('Front door', 'sensor.front_door_power_outage_count')).device_class, null, 'a counter has no class');
  t.strictSame(plan('Front door', 'sensor.front_door_battery').definition.attributes, {
    ieee_address: '0x00158d0002f24257',
    model: 'MCCGQ11LM',
    vendor: 'Aqara',
  });

  // Generic exposes: the rest of the class table, and illuminance only in lux.
  const extra = planDeviceEntities(
    device([
      { type: 'numeric', name: 'co2', property: 'co2', access: 1, unit: 'ppm' },
      { type: 'numeric', name: 'power', property: 'power', access: 5, unit: 'W' },
      { type: 'numeric', name: 'energy', property: 'energy', access: 5, unit: 'kWh' },
      { type: 'numeric', name: 'illuminance', property: 'illuminance', access: 1 },
      { type: 'numeric', name: 'illuminance_lux', property: 'illuminance_lux', access: 1, unit: 'lx' },
      { type: 'binary', name: 'water_leak', property: 'water_leak', access: 1, value_on: true, value_off: false },
      { type: 'binary', name: 'smoke', property: 'smoke', access: 1, value_on: true, value_off: false },
      { type: 'binary', name: 'vibration', property: 'vibration', access: 1, value_on: true, value_off: false },
      { type: 'binary', name: 'tamper', property: 'tamper', access: 1, value_on: true, value_off: false },
      { type: 'binary', name: 'battery_low', property: 'battery_low', access: 1, value_on: true, value_off: false, category: 'diagnostic' },
    ]),
  );
  t.strictSame(
    extra.map((p) => [p.definition.object_id, p.definition.domain, p.definition.unit, p.definition.device_class]),
    [
      ['test_device_co2', 'sensor', 'ppm', 'carbon_dioxide'],
      ['test_device_power', 'sensor', 'W', 'power'],
      ['test_device_energy', 'sensor', 'kWh', 'energy'],
      ['test_device_illuminance', 'sensor', null, null],
      ['test_device_illuminance_lux', 'sensor', 'lx', 'illuminance'],
      ['test_device_water_leak', 'binary_sensor', null, 'moisture'],
      ['test_device_smoke', 'binary_sensor', null, 'smoke'],
      ['test_device_vibration', 'binary_sensor', null, 'vibration'],
      ['test_device_tamper', 'binary_sensor', null, 'tamper'],
      ['test_device_battery_low', 'binary_sensor', null, 'battery'],
    ],
  );
});

t.test('a contact sensor is on (door open) when contact is false', async (t) => {
  const contact = plan('Front door', 'binary_sensor.front_door_contact');
  t.equal(contact.definition.device_class, 'door');
  t.strictSame(contact.read({ contact: true }), { state: 'off' }, 'contact: true is closed');
  t.strictSame(contact.read({ contact: false }), { state: 'on' }, 'contact: false is open');
  t.strictSame(contact.read(STATES['Front door'] ?? {}), { state: 'off' }, 'the recorded message: closed');
  t.strictSame(contact.read({ battery: 99 }), undefined, 'a message without contact says nothing about it');
  t.strictSame(contact.read({ contact: null }), { state: null }, 'null is unknown');
  t.strictSame(contact.read({ contact: 'maybe' }), undefined, 'a value that is neither is ignored');

  // An old definition without value_on / value_off still means closed by true.
  const [bare] = planDeviceEntities(device([{ type: 'binary', name: 'contact', property: 'contact', access: 1 }]));
  t.strictSame(bare?.read({ contact: true }), { state: 'off' });
  t.strictSame(bare?.read({ contact: false }), { state: 'on' });
});

t.test('brightness is scaled between HomeAgent (0-255) and Zigbee2MQTT (0-254)', async (t) => {
  t.equal(brightnessToZ2m(255), 254);
  t.equal(brightnessToZ2m(128), 127);
  t.equal(brightnessToZ2m(1), 1);
  t.equal(brightnessToZ2m(0), 0);
  t.equal(brightnessFromZ2m(254), 255);
  t.equal(brightnessFromZ2m(127), 128);
  t.equal(brightnessFromZ2m(0), 0);
  for (let z = 0; z <= 254; z++) {
    if (brightnessToZ2m(brightnessFromZ2m(z)) !== z) t.fail(`Z2M brightness ${z} does not survive the round trip`);
  }
  t.pass('every Z2M brightness survives the round trip');
});

t.test('a light: state, brightness and colour temperature in, on/off/dim commands out', async (t) => {
  const light = plan('living_room/ceiling', 'light.living_room_ceiling');
  t.strictSame(summary(light), {
    name: 'ceiling',
    area: 'living_room',
    unit: null,
    device_class: null,
    services: ['turn_on', 'turn_off', 'toggle'],
  });
  t.strictSame(light.read(STATES['living_room/ceiling'] ?? {}), { state: 'on', attributes: { brightness: 255, color_temp: 370 } });
  t.strictSame(light.read({ brightness: 127 }), { attributes: { brightness: 128 } }, 'brightness alone changes only the attribute');
  t.strictSame(light.read({ state: 'OFF' }), { state: 'off' });
  t.strictSame(light.read({ linkquality: 3 }), undefined);
  t.strictSame(light.properties, ['state', 'brightness', 'color_temp']);

  const command = light.command?.bind(light);
  if (command === undefined) throw new Error('the light takes commands');
  t.strictSame(command('turn_on', {}, 'off'), { state: 'ON' });
  t.strictSame(command('turn_on', { brightness: 128 }, 'off'), { state: 'ON', brightness: 127 });
  t.strictSame(command('turn_on', { brightness: 255 }, 'off'), { state: 'ON', brightness: 254 });
  t.strictSame(command('turn_on', { brightness: 0 }, 'on'), { state: 'OFF' }, 'brightness 0 is off');
  t.strictSame(command('turn_off', {}, 'on'), { state: 'OFF' });
  t.strictSame(command('toggle', {}, 'on'), { state: 'TOGGLE' }, "Z2M's own toggle");

  const [onOff] = planDeviceEntities(
    device(
      [{ type: 'light', features: [{ type: 'binary', name: 'state', property: 'state', access: 7, value_on: 'ON', value_off: 'OFF' }] }],
      'Lamp',
    ),
  );
  expectError(t, () => onOff?.command?.('turn_on', { brightness: 10 }, 'off'), 'HA_ERR_ENTITY_SERVICE');
  t.strictSame(onOff?.command?.('toggle', {}, 'on'), { state: 'OFF' }, 'without value_toggle the toggle is worked out from the state');
  t.strictSame(onOff?.command?.('toggle', {}, null), { state: 'ON' });
});

t.test('a two-gang switch is one entity per endpoint, commanded by its own property', async (t) => {
  const hall = plans('Hall switch');
  const l1 = hall.get('switch.hall_switch_l1');
  const l2 = hall.get('switch.hall_switch_l2');
  t.strictSame(l1 && summary(l1), {
    name: 'Hall switch l1',
    area: null,
    unit: null,
    device_class: null,
    services: ['turn_on', 'turn_off', 'toggle'],
  });
  t.strictSame(l1?.read(STATES['Hall switch'] ?? {}), { state: 'off' });
  t.strictSame(l2?.read(STATES['Hall switch'] ?? {}), { state: 'on' });
  t.strictSame(l1?.read({ state_l2: 'OFF' }), undefined, "l2's state is not l1's");
  t.strictSame(l1?.command?.('turn_on', {}, 'off'), { state_l1: 'ON' });
  t.strictSame(l2?.command?.('turn_off', {}, 'on'), { state_l2: 'OFF' });
  t.strictSame(l2?.command?.('toggle', {}, 'on'), { state_l2: 'TOGGLE' });

  const [readOnly] = planDeviceEntities(
    device([
      {
        type: 'switch',
        endpoint: 'l2',
        features: [{ type: 'binary', name: 'state', property: 'state_l2', endpoint: 'l2', access: 1, value_on: 'ON', value_off: 'OFF' }],
      },
    ]),
  );
  t.strictSame(readOnly?.definition.services, [], 'a switch that cannot be set only reports');
  t.equal(readOnly?.command, undefined);
});

t.test('a lock: LOCK/UNLOCK as locked/unlocked, lock_state kept as an attribute', async (t) => {
  const lock = plan('Back door lock', 'lock.back_door_lock');
  t.strictSame(lock.definition.services, ['lock', 'unlock']);
  t.strictSame(lock.read(STATES['Back door lock'] ?? {}), { state: 'locked', attributes: { lock_state: 'locked' } });
  t.strictSame(lock.read({ state: 'UNLOCK', lock_state: 'unlocked' }), { state: 'unlocked', attributes: { lock_state: 'unlocked' } });
  t.strictSame(lock.read({ lock_state: 'not_fully_locked' }), { attributes: { lock_state: 'not_fully_locked' } });
  t.strictSame(lock.command?.('lock', {}, 'unlocked'), { state: 'LOCK' });
  t.strictSame(lock.command?.('unlock', {}, 'locked'), { state: 'UNLOCK' });
  // The lock's other exposes: its last action, settings that are settable numbers, enums that report.
  t.strictSame(plan('Back door lock', 'number.back_door_lock_auto_relock_time').command?.('set_value', { value: 60 }, 30), {
    auto_relock_time: 60,
  });
  t.strictSame(plan('Back door lock', 'number.back_door_lock_auto_relock_time').definition.attributes?.min, 0);
  expectError(
    t,
    () => plan('Back door lock', 'number.back_door_lock_auto_relock_time').command?.('set_value', { value: -1 }, 30),
    'HA_ERR_ENTITY_SERVICE',
  );
  t.strictSame(plan('Back door lock', 'sensor.back_door_lock_sound_volume').read({ sound_volume: 'silent_mode' }), {
    state: 'silent_mode',
  });
});

t.test('a cover: position decides open/closed; open, close, stop and set_position commands', async (t) => {
  const blind = plan('bedroom/blind', 'cover.bedroom_blind');
  t.strictSame(summary(blind), {
    name: 'blind',
    area: 'bedroom',
    unit: null,
    device_class: null,
    services: ['open', 'close', 'stop', 'set_position'],
  });
  t.strictSame(blind.read(STATES['bedroom/blind'] ?? {}), { state: 'open', attributes: { position: 100 } });
  t.strictSame(
    blind.read({ position: 0, state: 'OPEN' }),
    { state: 'closed', attributes: { position: 0 } },
    'the position wins over the word',
  );
  t.strictSame(blind.read({ position: 35 }), { state: 'open', attributes: { position: 35 } });
  t.strictSame(blind.read({ state: 'CLOSE' }), { state: 'closed' });
  t.strictSame(blind.command?.('open', {}, 'closed'), { state: 'OPEN' });
  t.strictSame(blind.command?.('close', {}, 'open'), { state: 'CLOSE' });
  t.strictSame(blind.command?.('stop', {}, 'open'), { state: 'STOP' });
  t.strictSame(blind.command?.('set_position', { position: 40 }, 'open'), { position: 40 });

  const [old] = planDeviceEntities(
    device([
      { type: 'cover', features: [{ type: 'binary', name: 'state', property: 'state', access: 7, value_on: 'OPEN', value_off: 'CLOSE' }] },
    ]),
  );
  t.strictSame(old?.definition.services, ['open', 'close'], 'an OPEN/CLOSE binary has no stop and no position');
});

t.test('a fan: speed modes as percentages', async (t) => {
  const [fan] = planDeviceEntities(
    device([
      {
        type: 'fan',
        features: [
          { type: 'binary', name: 'state', property: 'fan_state', access: 7, value_on: 'ON', value_off: 'OFF' },
          { type: 'enum', name: 'mode', property: 'fan_mode', access: 7, values: ['off', 'low', 'medium', 'high', 'on', 'auto', 'smart'] },
        ],
      },
    ]),
  );
  if (fan === undefined) throw new Error('no fan');
  t.equal(fan.definition.object_id, 'test_device', 'fan_state is the fan itself, not a switch beside it');
  t.strictSame(fan.definition.services, ['turn_on', 'turn_off', 'toggle', 'set_percentage']);
  t.strictSame(fan.read({ fan_state: 'ON', fan_mode: 'medium' }), { state: 'on', attributes: { mode: 'medium', percentage: 67 } });
  t.strictSame(fan.read({ fan_state: 'OFF', fan_mode: 'off' }), { state: 'off', attributes: { mode: 'off', percentage: 0 } });
  t.strictSame(fan.read({ fan_mode: 'auto' }), { attributes: { mode: 'auto' } });
  t.strictSame(fan.command?.('set_percentage', { percentage: 10 }, 'off'), { fan_mode: 'low' });
  t.strictSame(fan.command?.('set_percentage', { percentage: 50 }, 'off'), { fan_mode: 'medium' });
  t.strictSame(fan.command?.('set_percentage', { percentage: 100 }, 'off'), { fan_mode: 'high' });
  t.strictSame(fan.command?.('set_percentage', { percentage: 0 }, 'on'), { fan_state: 'OFF' });
  t.strictSame(fan.command?.('turn_on', { percentage: 70 }, 'off'), { fan_mode: 'high' });
  t.strictSame(fan.command?.('turn_on', {}, 'off'), { fan_state: 'ON' });
  t.strictSame(fan.command?.('toggle', {}, 'on'), { fan_state: 'OFF' });

  const [plain] = planDeviceEntities(
    device([
      { type: 'fan', features: [{ type: 'binary', name: 'state', property: 'state', access: 7, value_on: 'ON', value_off: 'OFF' }] },
    ]),
  );
  t.strictSame(plain?.definition.services, ['turn_on', 'turn_off', 'toggle']);
  expectError(t, () => plain?.command?.('turn_on', { percentage: 40 }, 'off'), 'HA_ERR_ENTITY_SERVICE');
});

t.test('a thermostat (climate) becomes sensors and numbers', async (t) => {
  const entities = planDeviceEntities(
    device(
      [
        {
          type: 'climate',
          features: [
            {
              type: 'numeric',
              name: 'occupied_heating_setpoint',
              property: 'occupied_heating_setpoint',
              access: 7,
              unit: '°C',
              value_min: 7,
              value_max: 30,
              value_step: 0.5,
            },
            { type: 'numeric', name: 'local_temperature', property: 'local_temperature', access: 5, unit: '°C' },
            { type: 'enum', name: 'system_mode', property: 'system_mode', access: 7, values: ['off', 'heat', 'auto'] },
            { type: 'enum', name: 'running_state', property: 'running_state', access: 5, values: ['idle', 'heat'] },
          ],
        },
      ],
      'Radiator',
    ),
  );
  t.strictSame(
    entities.map((p) => [`${p.definition.domain}.${p.definition.object_id}`, p.definition.unit, p.definition.device_class]),
    [
      ['number.radiator_occupied_heating_setpoint', '°C', null],
      ['sensor.radiator_local_temperature', '°C', 'temperature'],
      ['sensor.radiator_system_mode', null, null],
      ['sensor.radiator_running_state', null, null],
    ],
  );
  const setpoint = entities[0];
  t.strictSame(setpoint?.definition.attributes, {
    ieee_address: '0x00158d0000000001',
    model: 'M1',
    vendor: 'V',
    min: 7,
    max: 30,
    step: 0.5,
  });
  t.strictSame(setpoint?.command?.('set_value', { value: 21.5 }, 20), { occupied_heating_setpoint: 21.5 });
  expectError(t, () => setpoint?.command?.('set_value', { value: 31 }, 20), 'HA_ERR_ENTITY_SERVICE');
  t.strictSame(entities[2]?.definition.attributes?.options, ['off', 'heat', 'auto']);
});

t.test('a button: action is a sensor holding the last action, marked as an event', async (t) => {
  const action = plan('Bedside button', 'sensor.bedside_button_action');
  t.equal(action.event, true);
  t.strictSame(action.definition.attributes?.options, ['single', 'double', 'triple', 'quadruple', 'hold', 'release']);
  t.strictSame(action.read(STATES['Bedside button'] ?? {}), { state: 'single' });
  t.strictSame(action.read({ action: '' }), undefined, "Z2M 1.x's empty action after each one is not an action");
  t.strictSame(action.read({ battery: 100 }), undefined);
  t.notOk(plan('Bedside button', 'sensor.bedside_button_battery').event);
});

t.test('generic exposes: settable binaries are switches, settings and set-only values are left out', async (t) => {
  const entities = planDeviceEntities(
    device([
      { type: 'binary', name: 'child_lock', label: 'Child lock', property: 'child_lock', access: 3, value_on: 'LOCK', value_off: 'UNLOCK' },
      {
        type: 'binary',
        name: 'led_disabled_night',
        property: 'led_disabled_night',
        access: 7,
        value_on: true,
        value_off: false,
        category: 'config',
      },
      { type: 'numeric', name: 'transition', property: 'transition', access: 2 },
      { type: 'composite', name: 'color_xy', property: 'color', access: 7, features: [] },
      { type: 'list', name: 'schedule', property: 'schedule', access: 3 },
      { type: 'text', name: 'inserted', property: 'inserted', access: 1 },
      {
        type: 'switch',
        label: 'Away mode',
        features: [{ type: 'binary', name: 'state', property: 'away_mode', access: 3, value_on: 'ON', value_off: 'OFF' }],
      },
      { type: 'numeric', name: 'linkquality', property: 'linkquality', access: 1, unit: 'lqi' },
      { name: 'no type' } as unknown as Z2mExpose,
    ]),
  );
  t.strictSame(
    entities.map((p) => [`${p.definition.domain}.${p.definition.object_id}`, p.definition.name]),
    [
      ['switch.test_device_child_lock', 'Test device Child lock'],
      ['sensor.test_device_inserted', 'Test device Inserted'],
      ['switch.test_device_away_mode', 'Test device Away mode'],
    ],
  );
  t.strictSame(entities[0]?.read({ child_lock: 'LOCK' }), { state: 'on' });
  t.strictSame(entities[0]?.command?.('turn_off', {}, 'on'), { child_lock: 'UNLOCK' });
  t.strictSame(entities[2]?.command?.('turn_on', {}, 'off'), { away_mode: 'ON' });
});

t.test('one expose listed twice gives one entity', async (t) => {
  const entities = planDeviceEntities(
    device([
      { type: 'numeric', name: 'illuminance_lux', property: 'illuminance', access: 1, unit: 'lx' },
      { type: 'numeric', name: 'illuminance', property: 'illuminance', access: 1, unit: 'lx' },
    ]),
  );
  t.equal(entities.length, 1);
});

t.test('devices without entities and entries that are not devices', async (t) => {
  const reasons = DEVICES.map(readDevice).map((d) => (d === undefined ? 'unreadable' : [d.friendly_name, skipReason(d) ?? null]));
  t.strictSame(reasons, [
    ['Coordinator', 'it is the coordinator'],
    ['living_room/ceiling', null],
    ['Front door', null],
    ['bathroom/climate', null],
    ['Hall switch', null],
    ['Back door lock', null],
    ['bedroom/blind', null],
    ['Hallway motion', null],
    ['Bedside button', null],
    ['0x00169a00022256da', 'Zigbee2MQTT does not support it'],
    ['Garage sensor', 'it is disabled in Zigbee2MQTT'],
    ['0x54ef44100076e3f1', 'its interview has not completed'],
  ]);
  t.strictSame(planDeviceEntities(fixture('Garage sensor')), [], 'a skipped device plans nothing');
  t.equal(skipReason({ ...device([]), interview_completed: false }), 'its interview has not completed', 'Z2M 1.x: interview_completed');
  t.equal(skipReason({ ...device([]), definition: null }), 'it has no definition');
  t.equal(readDevice({ friendly_name: 'x' }), undefined, 'no IEEE address');
  t.equal(readDevice({ ieee_address: '0x1', friendly_name: '' }), undefined, 'no friendly name');
  t.equal(readDevice([1, 2]), undefined);
  t.equal(readDevice(null), undefined);
});

t.test('names: areas from the first level of a name with /, object ids within 64 characters', async (t) => {
  t.strictSame(splitFriendlyName('kitchen/ceiling'), { area: 'kitchen', name: 'ceiling' });
  t.strictSame(splitFriendlyName('house/first_floor/lamp'), { area: 'house', name: 'first floor lamp' });
  t.strictSame(splitFriendlyName('living_room_lamp'), { area: null, name: 'living room lamp' });
  t.strictSame(splitFriendlyName('/odd/'), { area: null, name: 'odd' });

  const [lamp] = planDeviceEntities(
    device(
      [{ type: 'light', features: [{ type: 'binary', name: 'state', property: 'state', access: 7, value_on: 'ON', value_off: 'OFF' }] }],
      'living_room_lamp',
    ),
  );
  t.equal(lamp?.definition.name, 'living room lamp');
  t.strictSame(lamp?.definition.aliases, ['living_room_lamp'], 'the friendly name as written stays findable');

  const [thai] = planDeviceEntities(
    device([{ type: 'numeric', name: 'temperature', property: 'temperature', access: 1, unit: '°C' }], 'ม่านห้อง'),
  );
  t.equal(thai?.definition.object_id, '0x00158d0000000001_temperature', 'a name without letters to keep falls back to the IEEE address');
  t.equal(thai?.definition.name, 'ม่านห้อง Temperature');

  const long = 'a'.repeat(80);
  t.equal(objectId(long), 'a'.repeat(64));
  t.equal(objectId(long, 'battery'), `${'a'.repeat(56)}_battery`, 'the suffix is kept whole');
  t.equal(objectId('lamp', 'State_L1'), 'lamp_state_l1');
});

t.test('diagnostic exposes, the battery and the device temperature are diagnostic entities; the rest primary', async (t) => {
  const all = DEVICES.map(readDevice).flatMap((d) => (d === undefined ? [] : planDeviceEntities(d)));
  const category = (id: string) => all.find((p) => `${p.definition.domain}.${p.definition.object_id}` === id)?.definition.entity_category;
  t.equal(category('sensor.front_door_battery'), 'diagnostic', 'a recorded battery');
  t.equal(category('binary_sensor.front_door_contact'), undefined, 'the contact itself is primary');
  const made = planDeviceEntities(
    device([
      { type: 'numeric', name: 'device_temperature', property: 'device_temperature', access: 1, unit: '°C' },
      { type: 'numeric', name: 'temperature', property: 'temperature', access: 1, unit: '°C' },
      { type: 'enum', name: 'update_state', property: 'update_state', access: 1, values: ['idle'], category: 'diagnostic' },
      { type: 'numeric', name: 'energy', property: 'energy', access: 1, unit: 'kWh' },
      { type: 'binary', name: 'child_lock', property: 'child_lock', access: 3, value_on: 'LOCK', value_off: 'UNLOCK', category: 'config' },
    ]),
  );
  t.strictSame(
    made.map((p) => [p.definition.object_id, p.definition.entity_category ?? null]),
    [
      ['test_device_device_temperature', 'diagnostic'],
      ['test_device_temperature', null],
      ['test_device_update_state', 'diagnostic'],
      ['test_device_energy', null],
    ],
    'the config expose stays out',
  );
});
