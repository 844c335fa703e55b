// The domains the intent engine acts on besides switches and lights (scene, script, climate,
// media_player, vacuum) and the ones it only reads (person, weather): their services, the data each
// service takes, and calls through a real registry over home.db.
import t from 'tap';
import { SERVICE_FIELDS, serviceFields, validateServiceData } from '../../../src/home/entity-services.js';
import {
  CRITICAL_DOMAINS,
  DOMAIN_SERVICES,
  ENTITY_DOMAINS,
  type EntityDefinition,
  type EntityDomain,
  type EntityHandle,
} from '../../../src/home/types.js';
import { expectError, expectErrorAsync } from '../fixtures/support.js';
import { openHome } from './home-fixture.js';

const NEW_DOMAINS = ['scene', 'script', 'climate', 'media_player', 'vacuum', 'person', 'weather'] as const;

t.test('the new domains and their services are the contract', async (t) => {
  for (const domain of NEW_DOMAINS) t.ok(ENTITY_DOMAINS.includes(domain), `${domain} is a domain`);
  t.same(DOMAIN_SERVICES.scene, ['turn_on']);
  t.same(DOMAIN_SERVICES.script, ['turn_on', 'turn_off']);
  t.same(DOMAIN_SERVICES.climate, ['turn_on', 'turn_off', 'set_temperature']);
  t.same(DOMAIN_SERVICES.media_player, [
    'turn_on',
    'turn_off',
    'media_play',
    'media_pause',
    'media_next_track',
    'media_previous_track',
    'volume_set',
    'play_media',
  ]);
  t.same(DOMAIN_SERVICES.vacuum, ['start', 'pause', 'stop', 'return_to_base']);
  t.same(DOMAIN_SERVICES.person, []);
  t.same(DOMAIN_SERVICES.weather, []);
  t.same([...CRITICAL_DOMAINS].sort(), ['cover', 'lock', 'siren', 'valve'], 'none of them is critical');
  t.equal(new Set(ENTITY_DOMAINS).size, ENTITY_DOMAINS.length, 'no domain twice');
  // Every data rule belongs to a service some domain offers: a typo in a key would silently take no data.
  for (const key of Object.keys(SERVICE_FIELDS)) {
    const [domain, service] = key.split('.') as [EntityDomain, string];
    t.ok(DOMAIN_SERVICES[domain]?.includes(service), `${key} is a service of its domain`);
  }
  t.same(serviceFields('media_player', 'play_media'), ['media_content_id', 'media_content_type']);
  t.same(serviceFields('light', 'turn_on'), ['brightness', 'color_name']);
  t.same(serviceFields('vacuum', 'start'), []);
});

t.test('service data: good values pass, as a checked copy', async (t) => {
  const ok: Array<[EntityDomain, string, Record<string, unknown>, Record<string, unknown>]> = [
    ['climate', 'set_temperature', { temperature: 21.5 }, { temperature: 21.5 }],
    ['climate', 'set_temperature', { temperature: -50 }, { temperature: -50 }],
    ['climate', 'set_temperature', { temperature: 100 }, { temperature: 100 }],
    ['media_player', 'volume_set', { volume_level: 0 }, { volume_level: 0 }],
    ['media_player', 'volume_set', { volume_level: 0.35 }, { volume_level: 0.35 }],
    ['media_player', 'volume_set', { volume_level: 1 }, { volume_level: 1 }],
    ['media_player', 'play_media', { media_content_id: 'x' }, { media_content_id: 'x' }],
    [
      'media_player',
      'play_media',
      { media_content_id: 'http://radio.example/stream.mp3', media_content_type: 'music' },
      { media_content_id: 'http://radio.example/stream.mp3', media_content_type: 'music' },
    ],
    ['media_player', 'play_media', { media_content_id: 'a'.repeat(500) }, { media_content_id: 'a'.repeat(500) }],
    ['light', 'turn_on', { color_name: 'red' }, { color_name: 'red' }],
    ['light', 'turn_on', { color_name: ' Warm White ', brightness: 10 }, { brightness: 10, color_name: 'warm white' }],
    ['light', 'turn_on', { color_name: 'c'.repeat(32) }, { color_name: 'c'.repeat(32) }],
    // 32 characters as people count them, although more UTF-16 units.
    ['light', 'turn_on', { color_name: '🔴'.repeat(32) }, { color_name: '🔴'.repeat(32) }],
    ['media_player', 'media_pause', {}, {}],
    ['vacuum', 'return_to_base', {}, {}],
    ['scene', 'turn_on', {}, {}],
    ['script', 'turn_off', {}, {}],
    ['climate', 'turn_on', {}, {}],
  ];
  for (const [domain, service, data, expected] of ok) {
    t.same(validateServiceData(`${domain}.x`, domain, service, data), expected, `${domain} ${service} ${JSON.stringify(data)}`);
  }
});

t.test('service data: wrong type, range, length, missing or unknown fields are refused naming the field', async (t) => {
  const refused: Array<[EntityDomain, string, Record<string, unknown>, RegExp, string]> = [
    ['climate', 'set_temperature', {}, /climate\.x set_temperature: temperature is required/, 'data.temperature'],
    ['climate', 'set_temperature', { temperature: '21' }, /temperature must be a number, not "21"/, 'data.temperature'],
    ['climate', 'set_temperature', { temperature: 100.5 }, /temperature must be between -50 and 100, not 100.5/, 'data.temperature'],
    ['climate', 'set_temperature', { temperature: -51 }, /temperature must be between -50 and 100, not -51/, 'data.temperature'],
    ['climate', 'set_temperature', { temperature: Number.POSITIVE_INFINITY }, /temperature must be a number/, 'data.temperature'],
    [
      'climate',
      'set_temperature',
      { temperature: 20, hvac_mode: 'heat' },
      /unknown field "hvac_mode"; it takes temperature/,
      'data.hvac_mode',
    ],
    ['climate', 'turn_on', { temperature: 20 }, /unknown field "temperature"; it takes no data/, 'data.temperature'],
    ['media_player', 'volume_set', {}, /volume_level is required/, 'data.volume_level'],
    ['media_player', 'volume_set', { volume_level: 1.01 }, /volume_level must be between 0 and 1, not 1.01/, 'data.volume_level'],
    ['media_player', 'volume_set', { volume_level: -0.1 }, /volume_level must be between 0 and 1/, 'data.volume_level'],
    ['media_player', 'volume_set', { volume_level: null }, /volume_level must be a number, not null/, 'data.volume_level'],
    ['media_player', 'volume_set', { volume: 0.5 }, /unknown field "volume"; it takes volume_level/, 'data.volume'],
    ['media_player', 'play_media', {}, /media_content_id is required/, 'data.media_content_id'],
    ['media_player', 'play_media', { media_content_id: 42 }, /media_content_id must be text, not 42/, 'data.media_content_id'],
    ['media_player', 'play_media', { media_content_id: '' }, /media_content_id must be 1-500 characters, not 0/, 'data.media_content_id'],
    [
      'media_player',
      'play_media',
      { media_content_id: '   ' },
      /media_content_id must be 1-500 characters, not 0/,
      'data.media_content_id',
    ],
    [
      'media_player',
      'play_media',
      { media_content_id: 'a'.repeat(501) },
      /media_content_id must be 1-500 characters, not 501/,
      'data.media_content_id',
    ],
    [
      'media_player',
      'play_media',
      { media_content_id: 'x', media_content_type: 'm'.repeat(65) },
      /media_content_type must be 1-64 characters, not 65/,
      'data.media_content_type',
    ],
    [
      'media_player',
      'play_media',
      { media_content_id: 'x', media_content_type: ['music'] },
      /media_content_type must be text/,
      'data.media_content_type',
    ],
    ['media_player', 'media_play', { media_content_id: 'x' }, /it takes no data/, 'data.media_content_id'],
    ['light', 'turn_on', { color_name: 'c'.repeat(33) }, /color_name must be 1-32 characters, not 33/, 'data.color_name'],
    ['light', 'turn_on', { color_name: '' }, /color_name must be 1-32 characters, not 0/, 'data.color_name'],
    ['light', 'turn_on', { color_name: 0xff0000 }, /color_name must be text, not 16711680/, 'data.color_name'],
    ['light', 'turn_on', { color: 'red' }, /unknown field "color"; it takes brightness, color_name/, 'data.color'],
    ['vacuum', 'start', { fan_speed: 'max' }, /unknown field "fan_speed"; it takes no data/, 'data.fan_speed'],
    ['scene', 'turn_on', { transition: 2 }, /it takes no data/, 'data.transition'],
  ];
  for (const [domain, service, data, message, field] of refused) {
    const error = expectError(t, () => validateServiceData(`${domain}.x`, domain, service, data), 'HA_ERR_ENTITY_SERVICE');
    t.match(error.message, message, `${domain} ${service} ${JSON.stringify(data).slice(0, 60)}`);
    t.equal(error.details?.field, field, 'the field is named');
  }
  const notAnObject = expectError(
    t,
    () => validateServiceData('media_player.x', 'media_player', 'volume_set', [0.5]),
    'HA_ERR_ENTITY_SERVICE',
  );
  t.equal(notAnObject.details?.field, 'data');
});

t.test('climate, media player, vacuum, scene and script entities are called with checked data', async (t) => {
  const home = openHome(t);
  const calls: Array<{ entity: string; service: string; data: Record<string, unknown> }> = [];
  const handles = new Map<string, EntityHandle>();
  const register = (definition: EntityDefinition, onCall: (h: EntityHandle, service: string, data: Record<string, unknown>) => void) => {
    const id = `${definition.domain}.${definition.object_id}`;
    const handle = home.registry.register('plugin:hub', {
      ...definition,
      call: async (service, data) => {
        calls.push({ entity: id, service, data });
        onCall(handles.get(id) as EntityHandle, service, data);
      },
    });
    handles.set(id, handle);
  };
  register(
    {
      domain: 'climate',
      object_id: 'living_room',
      name: 'Living room thermostat',
      unit: '°C',
      initial_state: 'heat',
      attributes: { current_temperature: 19.5, temperature: 20 },
    },
    (h, service, data) => {
      if (service === 'set_temperature') h.update('heat', { temperature: data.temperature });
      else h.update(service === 'turn_off' ? 'off' : 'heat');
    },
  );
  register(
    {
      domain: 'media_player',
      object_id: 'kitchen_speaker',
      name: 'Kitchen speaker',
      initial_state: 'idle',
      attributes: { volume_level: 0.2 },
    },
    (h, service, data) => {
      if (service === 'volume_set') h.update('idle', { volume_level: data.volume_level });
      if (service === 'play_media') h.update('playing', { media_title: data.media_content_id });
      if (service === 'media_pause') h.update('paused');
    },
  );
  register({ domain: 'vacuum', object_id: 'robot', name: 'Robot vacuum', initial_state: 'docked' }, (h, service) =>
    h.update(service === 'start' ? 'cleaning' : service === 'return_to_base' ? 'returning' : 'idle'),
  );
  register({ domain: 'scene', object_id: 'movie_night', name: 'Movie night' }, () => {});
  register({ domain: 'script', object_id: 'good_morning', name: 'Good morning', initial_state: 'off' }, (h, service) =>
    h.update(service === 'turn_on' ? 'on' : 'off'),
  );
  const ctx = { actor: 'intent' };

  let after = await home.registry.call('Living room thermostat', 'set_temperature', { temperature: 22.5 }, ctx);
  t.equal(after.state, 'heat');
  t.same(after.attributes, { current_temperature: 19.5, temperature: 22.5 }, 'the target changed, the reading stayed');
  after = await home.registry.call('media_player.kitchen_speaker', 'volume_set', { volume_level: 0.6 }, ctx);
  t.equal(after.attributes.volume_level, 0.6);
  after = await home.registry.call('media_player.kitchen_speaker', 'play_media', { media_content_id: ' Jazz radio ' }, ctx);
  t.equal(after.state, 'playing');
  after = await home.registry.call('media_player.kitchen_speaker', 'media_pause', {}, ctx);
  t.equal(after.state, 'paused');
  t.equal((await home.registry.call('vacuum.robot', 'start', {}, ctx)).state, 'cleaning');
  t.equal((await home.registry.call('Robot vacuum', 'return_to_base', {}, ctx)).state, 'returning');
  t.equal((await home.registry.call('scene.movie_night', 'turn_on', {}, ctx)).state, null, 'a scene has no state of its own');
  t.equal((await home.registry.call('script.good_morning', 'turn_on', {}, ctx)).state, 'on');
  t.same(
    calls.map((c) => [c.entity, c.service, c.data]),
    [
      ['climate.living_room', 'set_temperature', { temperature: 22.5 }],
      ['media_player.kitchen_speaker', 'volume_set', { volume_level: 0.6 }],
      ['media_player.kitchen_speaker', 'play_media', { media_content_id: 'Jazz radio' }],
      ['media_player.kitchen_speaker', 'media_pause', {}],
      ['vacuum.robot', 'start', {}],
      ['vacuum.robot', 'return_to_base', {}],
      ['scene.movie_night', 'turn_on', {}],
      ['script.good_morning', 'turn_on', {}],
    ],
    'each driver got its service with the checked data',
  );

  const before = calls.length;
  const thermostat = home.registry.resolve('climate.living_room');
  const badTarget = await expectErrorAsync(
    t,
    () => home.registry.call('climate.living_room', 'set_temperature', { temperature: 500 }, ctx),
    'HA_ERR_ENTITY_SERVICE',
  );
  t.equal(badTarget.details?.field, 'data.temperature');
  const badVolume = await expectErrorAsync(
    t,
    () => home.registry.call('media_player.kitchen_speaker', 'volume_set', { volume_level: '50%' }, ctx),
    'HA_ERR_ENTITY_SERVICE',
  );
  t.equal(badVolume.details?.field, 'data.volume_level');
  const noSuchService = await expectErrorAsync(t, () => home.registry.call('vacuum.robot', 'turn_on', {}, ctx), 'HA_ERR_ENTITY_SERVICE');
  t.match(noSuchService.message, /it offers start, pause, stop, return_to_base/);
  await expectErrorAsync(t, () => home.registry.call('scene.movie_night', 'turn_off', {}, ctx), 'HA_ERR_ENTITY_SERVICE');
  t.equal(calls.length, before, 'no refused call reached a driver');
  t.same(home.registry.resolve('climate.living_room'), thermostat, 'and the thermostat is as it was');
  for (const id of ['climate.living_room', 'media_player.kitchen_speaker', 'vacuum.robot', 'scene.movie_night', 'script.good_morning']) {
    t.equal(home.registry.resolve(id).critical, false, `${id} is not critical`);
  }
});

t.test('persons and the weather only report: calls are refused, their states kept', async (t) => {
  const home = openHome(t);
  const anna = home.registry.register('plugin:presence', { domain: 'person', object_id: 'anna', name: 'Anna', initial_state: 'home' });
  const weather = home.registry.register('plugin:weather', {
    domain: 'weather',
    object_id: 'home',
    name: 'Home forecast',
    initial_state: 'sunny',
    attributes: { temperature: 18, humidity: 55, temperature_unit: '°C', wind_speed: 12 },
  });
  t.same(home.registry.resolve('person.anna').services, []);
  for (const [id, service] of [
    ['person.anna', 'turn_on'],
    ['weather.home', 'turn_on'],
    ['weather.home', 'set_temperature'],
  ] as const) {
    const error = await expectErrorAsync(t, () => home.registry.call(id, service, {}, { actor: 'agent' }), 'HA_ERR_ENTITY_SERVICE');
    t.match(error.message, /it only reports its state/, `${id} ${service} refused`);
    t.equal(error.details?.field, 'service');
  }
  const definitionError = expectError(
    t,
    () => home.registry.register('plugin:weather', { domain: 'weather', object_id: 'roof', name: 'Roof', services: ['turn_on'] }),
    'HA_ERR_ENTITY_DEFINITION',
  );
  t.match(definitionError.message, /services turn_on are not weather services \(none\)/);

  anna.update('not_home');
  weather.update('rainy', { temperature: 14 });
  t.same(home.registry.resolve('weather.home').attributes, { temperature: 14, humidity: 55, temperature_unit: '°C', wind_speed: 12 });
  await home.registry.stop();
  const again = home.reopen();
  again.register('plugin:presence', { domain: 'person', object_id: 'anna', name: 'Anna' });
  again.register('plugin:weather', { domain: 'weather', object_id: 'home', name: 'Home forecast' });
  t.equal(again.resolve('person.anna').state, 'not_home', 'a person state survives a restart');
  t.equal(again.resolve('weather.home').state, 'rainy', 'so does the weather condition');
});
