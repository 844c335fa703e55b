// The entity registry over a real home.db: registration rules, restore after a restart, state
// updates (events, persistence, history), service calls with their context, areas and filters.
import t from 'tap';
import { DEFAULT_HISTORY_LIMIT } from '../../../src/home/entity-registry.js';
import type { EntityContext, EntityDefinition } from '../../../src/home/types.js';
import { HomeAgentError } from '../../../src/shared/errors.js';
import { expectError, expectErrorAsync } from '../fixtures/support.js';
import { type HomeSetup, openHome, T0 } from './home-fixture.js';

/** Rows of home.db after the registry wrote its queue (it writes behind). */
function rows(home: HomeSetup, sql: string, ...params: unknown[]) {
  home.registry.flush();
  return home.database.db.prepare(sql).all(...params) as Array<Record<string, unknown>>;
}

const light = (extra: Partial<EntityDefinition> = {}): EntityDefinition => ({
  domain: 'light',
  object_id: 'kitchen_ceiling',
  name: 'Ceiling light',
  area: 'kitchen',
  ...extra,
});

t.test('register, update, resolve, call: the basic path', async (t) => {
  const home = openHome(t);
  const calls: Array<{ service: string; data: Record<string, unknown>; context: EntityContext }> = [];
  const handle = home.registry.register('plugin:gpio', {
    domain: 'switch',
    object_id: 'kitchen_light',
    name: 'Kitchen light',
    initial_state: 'off',
    call: async (service, data, context) => {
      calls.push({ service, data, context });
      handle.update(service === 'turn_on' ? 'on' : 'off');
    },
  });
  t.equal(handle.entity_id, 'switch.kitchen_light');
  const info = home.registry.resolve('kitchen light');
  t.equal(info.state, 'off');
  t.equal(info.owner, 'plugin:gpio');
  t.same(info.services, ['turn_on', 'turn_off', 'toggle']);
  t.equal(info.critical, false);
  t.same(home.seen[0], {
    event: 'entity.registered',
    payload: { entity_id: 'switch.kitchen_light', domain: 'switch', owner: 'plugin:gpio' },
  });

  home.clock.advance(1000);
  const after = await home.registry.call('Kitchen Light', 'turn_on', {}, { actor: 'agent' });
  t.equal(after.state, 'on');
  t.same(calls, [{ service: 'turn_on', data: {}, context: { actor: 'agent' } }]);
  t.same(home.stateChanges()[0], {
    entity_id: 'switch.kitchen_light',
    domain: 'switch',
    old_state: 'off',
    new_state: 'on',
    state_changed: true,
    attributes: {},
    at: T0 + 1000,
    context: { actor: 'agent' },
  });

  home.clock.advance(1000);
  handle.update('off');
  t.equal(home.stateChanges()[1]?.context, null, "a device's own report carries no context");
  t.same(
    home.registry.history('switch.kitchen_light').map((r) => [r.at - T0, r.state, r.period_ms]),
    [
      [0, 'off', 0],
      [1000, 'on', 0],
      [2000, 'off', 0],
    ],
  );
  expectError(t, () => home.registry.resolve('garage door'), 'HA_ERR_ENTITY_NOT_FOUND');
  await expectErrorAsync(t, () => home.registry.call('switch.kitchen_light', 'open', {}, { actor: 'cli' }), 'HA_ERR_ENTITY_SERVICE');
});

t.test('an invalid definition is refused naming the problem, and nothing is stored', async (t) => {
  const home = openHome(t);
  await home.registry.start(new AbortController().signal);
  t.teardown(() => home.registry.stop());
  const bad: Array<[unknown, RegExp]> = [
    [{ ...light(), domain: 'heater' }, /domain "heater" is not one of switch, light/],
    [{ ...light(), object_id: 'Kitchen Light' }, /object_id "Kitchen Light" must be 1-64 lowercase/],
    [{ ...light(), object_id: 'x'.repeat(65) }, /object_id/],
    [{ ...light(), name: '  ' }, /light.kitchen_ceiling: name must be/],
    [{ ...light(), services: ['turn_on', 'open'] }, /services open are not light services/],
    [{ ...light(), domain: 'sensor', services: ['turn_on'] }, /not sensor services \(none\)/],
    [{ ...light(), initial_state: Number.NaN }, /a state must be a string, a finite number or null, not NaN/],
    [{ ...light(), initial_state: { on: true } }, /a state must be .* not object/],
    [{ ...light(), aliases: ['ok', ''] }, /aliases must be/],
    [{ ...light(), attributes: [1] }, /attributes must be an object/],
    [{ ...light(), area: 7 }, /area must be/],
  ];
  for (const [definition, message] of bad) {
    const error = expectError(t, () => home.registry.register('plugin:x', definition as EntityDefinition), 'HA_ERR_ENTITY_DEFINITION');
    t.match(error.message, message);
  }
  t.same(rows(home, 'SELECT * FROM entities'), [], 'no row');
  t.same(rows(home, 'SELECT * FROM state_history'), [], 'no history');
  t.same(home.seen, [], 'no event');
  t.same(home.registry.list(), []);
});

t.test("an id held by another owner is refused; the same owner's re-registration replaces it", async (t) => {
  const home = openHome(t);
  const first = home.registry.register('plugin:gpio', light({ initial_state: 'off' }));
  const error = expectError(t, () => home.registry.register('plugin:mqtt', light()), 'HA_ERR_ENTITY_DEFINITION');
  t.match(error.message, /light.kitchen_ceiling is already registered by plugin:gpio/);
  t.equal(home.registry.resolve('light.kitchen_ceiling').owner, 'plugin:gpio', 'the holder keeps it');

  // A reload: the plugin registers again; the old handle no longer speaks for the entity.
  const second = home.registry.register('plugin:gpio', light({ name: 'Ceiling lamp' }));
  t.equal(home.registry.list().length, 1);
  t.equal(home.registry.resolve('light.kitchen_ceiling').name, 'Ceiling lamp');
  t.equal(home.registry.resolve('light.kitchen_ceiling').state, 'off', 'the stored state carries over');
  first.update('on');
  first.remove();
  t.equal(home.registry.resolve('light.kitchen_ceiling').state, 'off', 'a stale handle changes nothing');
  second.update('on');
  t.equal(home.registry.resolve('light.kitchen_ceiling').state, 'on');

  // Once removed, another owner may take the id over.
  home.registry.removeOwner('plugin:gpio');
  home.registry.register('plugin:mqtt', light());
  t.equal(home.registry.resolve('light.kitchen_ceiling').owner, 'plugin:mqtt');
});

t.test('the last state survives a restart; numbers stay numbers; initial_state wins when given', async (t) => {
  const home = openHome(t);
  const temp = home.registry.register('plugin:i2c', {
    domain: 'sensor',
    object_id: 'kitchen_temperature',
    name: 'Kitchen temperature',
    unit: '°C',
    device_class: 'temperature',
  });
  t.equal(home.registry.resolve('sensor.kitchen_temperature').state, null, 'unknown until reported');
  t.same(rows(home, 'SELECT * FROM state_history'), [], 'a first unknown state is no history');
  home.clock.advance(5000);
  temp.update(21.5, { sensor: 'bme280' });
  home.clock.advance(5000);
  const sw = home.registry.register('plugin:gpio', { domain: 'switch', object_id: 'pump', name: 'Pump', initial_state: '1' });
  await home.registry.stop();

  const again = home.reopen();
  again.register('plugin:i2c', { domain: 'sensor', object_id: 'kitchen_temperature', name: 'Kitchen temperature' });
  const restored = again.resolve('sensor.kitchen_temperature');
  t.equal(restored.state, 21.5, 'a number, not "21.5"');
  t.equal(restored.last_changed, T0 + 5000, 'last_changed is the stored one');
  again.register('plugin:gpio', { domain: 'switch', object_id: 'pump', name: 'Pump', initial_state: 'off' });
  t.equal(again.resolve('switch.pump').state, 'off', 'initial_state overrides the stored one');
  t.equal(again.resolve('switch.pump').last_changed, T0 + 10_000);
  t.same(
    again.history('switch.pump').map((r) => r.state),
    ['1', 'off'],
    'the string "1" stays a string',
  );
  t.same(
    again.history('sensor.kitchen_temperature').map((r) => r.state),
    [21.5],
    're-registering with the same state adds no history row',
  );
  t.equal(sw.entity_id, 'switch.pump');
});

t.test('a report that changes nothing only touches last_updated, in memory until the next write', async (t) => {
  const home = openHome(t);
  const h = home.registry.register('plugin:i2c', {
    domain: 'sensor',
    object_id: 'lux',
    name: 'Light level',
    unit: 'lx',
    initial_state: 10,
  });
  const stored = () => rows(home, 'SELECT state, attributes, last_changed, last_updated FROM entities')[0];
  // The registration is written first: a touch while a change waits in the queue goes out with it.
  home.registry.flush();
  home.clock.advance(1000);
  h.update(10);
  h.update(10, {});
  t.equal(home.stateChanges().length, 0, 'no event');
  t.equal(home.registry.resolve('sensor.lux').last_updated, T0 + 1000, 'last_updated moved');
  t.equal(home.registry.resolve('sensor.lux').last_changed, T0);
  t.equal(stored()?.last_updated, T0, 'not written');
  t.equal(rows(home, 'SELECT * FROM state_history').length, 1, 'no history row');

  home.clock.advance(1000);
  h.update(10, { battery: 90 });
  t.match(home.stateChanges()[0], { old_state: 10, new_state: 10, state_changed: false, attributes: { battery: 90 }, context: null });
  t.same(stored(), { state: '10', attributes: '{"battery":90}', last_changed: T0, last_updated: T0 + 2000 });
  t.equal(rows(home, 'SELECT * FROM state_history').length, 1, 'an attribute change is no history row');
  h.update(10, { battery: 90 });
  t.equal(home.stateChanges().length, 1, 'the same attributes again: no event');

  home.clock.advance(1000);
  h.update(11.25);
  t.match(home.stateChanges()[1], { old_state: 10, new_state: 11.25, state_changed: true, attributes: { battery: 90 } });
  t.same(stored(), { state: '11.25', attributes: '{"battery":90}', last_changed: T0 + 3000, last_updated: T0 + 3000 });

  home.clock.advance(1000);
  h.update(11.25);
  await home.registry.stop();
  t.equal(stored()?.last_updated, T0 + 4000, 'stop writes the pending last_updated');

  const info = home.registry.resolve('sensor.lux');
  info.attributes.battery = 1;
  t.equal(home.registry.resolve('sensor.lux').attributes.battery, 90, 'a returned entity is a copy');
  expectError(t, () => h.update(Number.POSITIVE_INFINITY), 'HA_ERR_ENTITY_DEFINITION');
  t.equal(home.registry.resolve('sensor.lux').state, 11.25, 'a bad report changes nothing');
});

t.test('removal keeps the row and the history; removed entities are not listed nor resolved', async (t) => {
  const home = openHome(t);
  const a = home.registry.register('plugin:gpio', { domain: 'switch', object_id: 'a', name: 'Fountain', initial_state: 'on' });
  home.registry.register('plugin:gpio', { domain: 'switch', object_id: 'b', name: 'Heater', initial_state: 'off' });
  home.registry.register('plugin:mqtt', { domain: 'switch', object_id: 'c', name: 'Radio', initial_state: 'off' });
  a.remove();
  t.same(
    home.seen.filter((s) => s.event === 'entity.removed').map((s) => s.payload),
    [{ entity_id: 'switch.a', domain: 'switch', owner: 'plugin:gpio' }],
  );
  expectError(t, () => home.registry.resolve('Fountain'), 'HA_ERR_ENTITY_NOT_FOUND');
  home.registry.removeOwner('plugin:gpio');
  t.same(
    home.registry.list().map((e) => e.entity_id),
    ['switch.c'],
  );
  t.equal(rows(home, 'SELECT * FROM entities').length, 3, 'rows stay');
  home.registry.removeOwner('plugin:mqtt', new Set(['switch.c']));
  t.same(
    home.registry.list().map((e) => e.entity_id),
    ['switch.c'],
    'what a reloaded owner registered again is kept',
  );
  t.same(
    home.registry.history('switch.a').map((r) => r.state),
    ['on'],
    "a removed entity's history is readable",
  );
  t.equal(home.registry.find('Heater'), undefined);
});

t.test('calls: the service and its data are checked; unavailable and report-only entities refuse', async (t) => {
  const home = openHome(t);
  const received: Array<Record<string, unknown>> = [];
  const lamp = home.registry.register('plugin:hub', {
    ...light({ initial_state: 'off' }),
    call: async (_service, data) => {
      received.push(data);
    },
  });
  home.registry.register('plugin:hub', {
    domain: 'cover',
    object_id: 'garage',
    name: 'Garage door',
    services: ['open', 'close'],
    call: async () => {},
  });
  home.registry.register('plugin:hub', { domain: 'fan', object_id: 'attic', name: 'Attic fan', call: async () => {} });
  home.registry.register('plugin:hub', { domain: 'number', object_id: 'target', name: 'Target', call: async () => {} });
  home.registry.register('plugin:i2c', { domain: 'sensor', object_id: 'temp', name: 'Temperature' });
  home.registry.register('plugin:hub', { domain: 'switch', object_id: 'dumb', name: 'Dumb switch' });
  const ctx = { actor: 'cli' };

  await home.registry.call('light.kitchen_ceiling', 'turn_on', { brightness: 255 }, ctx);
  await home.registry.call('light.kitchen_ceiling', 'turn_on', {}, ctx);
  await home.registry.call('fan.attic', 'set_percentage', { percentage: 37.5 }, ctx);
  await home.registry.call('number.target', 'set_value', { value: -4.5 }, ctx);
  t.same(received, [{ brightness: 255 }, {}]);

  const refused: Array<[string, string, Record<string, unknown>, RegExp, string]> = [
    ['light.kitchen_ceiling', 'turn_on', { brightness: 256 }, /brightness must be between 0 and 255, not 256/, 'data.brightness'],
    ['light.kitchen_ceiling', 'turn_on', { brightness: 12.5 }, /brightness must be a whole number/, 'data.brightness'],
    ['light.kitchen_ceiling', 'turn_on', { brightness: '50' }, /brightness must be a number, not "50"/, 'data.brightness'],
    ['light.kitchen_ceiling', 'turn_on', { color: 'red' }, /unknown field "color"; it takes brightness/, 'data.color'],
    ['light.kitchen_ceiling', 'turn_off', { brightness: 1 }, /unknown field "brightness"; it takes no data/, 'data.brightness'],
    ['fan.attic', 'set_percentage', {}, /percentage is required/, 'data.percentage'],
    ['fan.attic', 'set_percentage', { percentage: -1 }, /between 0 and 100/, 'data.percentage'],
    ['cover.garage', 'set_position', { position: 50 }, /has no service "set_position": it offers open, close/, 'service'],
    ['number.target', 'set_value', { value: Number.NaN }, /value must be a number/, 'data.value'],
    ['sensor.temp', 'turn_on', {}, /it only reports its state/, 'service'],
    ['switch.dumb', 'turn_on', {}, /reports only: its owner plugin:hub takes no calls/, 'service'],
  ];
  for (const [entity, service, data, message, field] of refused) {
    const error = await expectErrorAsync(t, () => home.registry.call(entity, service, data, ctx), 'HA_ERR_ENTITY_SERVICE');
    t.match(error.message, message);
    t.equal(error.details?.field, field, `${entity} ${service}: the field is named`);
  }
  t.equal(received.length, 2, 'no refused call reached the driver');

  lamp.update('unavailable');
  await expectErrorAsync(t, () => home.registry.call('light.kitchen_ceiling', 'turn_on', {}, ctx), 'HA_ERR_ENTITY_UNAVAILABLE');
  t.equal(received.length, 2);
});

t.test("a driver's failure fails the call; a HomeAgentError keeps its code", async (t) => {
  const home = openHome(t);
  let fail: unknown = new Error('relay board not answering');
  home.registry.register('plugin:gpio', {
    domain: 'switch',
    object_id: 'pump',
    name: 'Pump',
    call: async () => {
      throw fail;
    },
  });
  const plain = await expectErrorAsync(t, () => home.registry.call('pump', 'turn_on', {}, { actor: 'cli' }), 'HA_ERR_INTERNAL');
  t.match(plain.message, /switch.pump turn_on failed: relay board not answering/);
  fail = new HomeAgentError('HA_ERR_GPIO_IO', 'write failed');
  await expectErrorAsync(t, () => home.registry.call('pump', 'turn_on', {}, { actor: 'cli' }), 'HA_ERR_GPIO_IO');
});

t.test('updates during a call carry its context; concurrent calls: the last one started wins', async (t) => {
  const home = openHome(t);
  const gates: Array<() => void> = [];
  const handle = home.registry.register('plugin:hub', {
    domain: 'switch',
    object_id: 'slow',
    name: 'Slow switch',
    initial_state: 'off',
    call: (service) =>
      new Promise<void>((resolve) => {
        gates.push(() => {
          handle.update(service === 'turn_on' ? 'on' : 'off');
          resolve();
        });
      }),
  });
  const first = home.registry.call('switch.slow', 'turn_on', {}, { actor: 'automation:morning', run_id: 'r1' });
  const second = home.registry.call('switch.slow', 'turn_off', {}, { actor: 'agent' });
  await new Promise((resolve) => setImmediate(resolve));
  t.equal(gates.length, 2, 'both calls reached the driver');
  gates[0]?.();
  await first;
  t.same(home.stateChanges()[0]?.context, { actor: 'agent' }, 'the later call started last: its context');
  gates[1]?.();
  await second;
  t.same(home.stateChanges()[1]?.context, { actor: 'agent' });
  handle.update('on');
  t.equal(home.stateChanges()[2]?.context, null, 'after the calls end, reports are the device again');

  // One call alone: its run id travels.
  const third = home.registry.call('switch.slow', 'turn_off', {}, { actor: 'automation:night', run_id: 'r9' });
  await new Promise((resolve) => setImmediate(resolve));
  gates[2]?.();
  t.same((await third).state, 'off');
  t.same(home.stateChanges()[3]?.context, { actor: 'automation:night', run_id: 'r9' });
});

t.test('areas: configured ones by id, name or alias; unknown ones are created from the name', async (t) => {
  const home = openHome(t, {
    settings: {
      areas: [
        { id: 'kitchen', name: 'Kitchen', aliases: ['厨房'] },
        { id: 'living_room', name: 'Living room', aliases: ['lounge'] },
      ],
    },
  });
  home.registry.register('p', { domain: 'light', object_id: 'a', name: 'Lamp', area: '厨房' });
  home.registry.register('p', { domain: 'light', object_id: 'b', name: 'Lamp', area: 'Lounge' });
  home.registry.register('p', { domain: 'switch', object_id: 'c', name: 'Pump', area: 'Garden Shed' });
  home.registry.register('p', { domain: 'switch', object_id: 'd', name: 'Heater', area: '书房' });
  home.registry.register('p', { domain: 'sensor', object_id: 'e', name: 'Temp', area: 'kitchen' });
  t.same(
    home.registry.list().map((e) => [e.entity_id, e.area]),
    [
      ['light.a', 'kitchen'],
      ['light.b', 'living_room'],
      ['sensor.e', 'kitchen'],
      ['switch.c', 'garden_shed'],
      ['switch.d', home.registry.resolve('switch.d').area],
    ],
  );
  const study = home.registry.resolve('switch.d').area ?? '';
  t.match(study, /^area_[0-9a-f]{10}$/, 'a name without Latin letters gets a stable hashed id');
  t.same(home.registry.areas(), [
    { id: 'kitchen', name: 'Kitchen', aliases: ['厨房'] },
    { id: 'living_room', name: 'Living room', aliases: ['lounge'] },
    ...[
      { id: 'garden_shed', name: 'Garden Shed', aliases: [] },
      { id: study, name: '书房', aliases: [] },
    ].sort((a, b) => a.id.localeCompare(b.id)),
  ]);
  t.same(
    home.registry.list({ area: 'Kitchen' }).map((e) => e.entity_id),
    ['light.a', 'sensor.e'],
  );
  t.same(
    home.registry.list({ area: '书房' }).map((e) => e.entity_id),
    ['switch.d'],
  );
  t.same(
    home.registry.list({ domain: 'light', area: 'lounge' }).map((e) => e.entity_id),
    ['light.b'],
  );
  t.same(home.registry.list({ owner: 'other' }), []);
  // Area plus name picks one of the two lamps; the bare name is ambiguous.
  t.equal(home.registry.resolve('厨房的Lamp').entity_id, 'light.a');
  t.equal(home.registry.resolve('lamp in the lounge').entity_id, 'light.b');
  const ambiguous = expectError(t, () => home.registry.resolve('lamp'), 'HA_ERR_ENTITY_AMBIGUOUS');
  t.match(ambiguous.message, /light.a \(Lamp, kitchen\), light.b \(Lamp, living_room\)/);
  t.same(ambiguous.details?.candidates, ['light.a', 'light.b']);
});

t.test('history: the last 24 hours by default, oldest first, the newest rows within the limit', async (t) => {
  const home = openHome(t);
  const h = home.registry.register('p', { domain: 'sensor', object_id: 'count', name: 'Counter', initial_state: 0 });
  for (let i = 1; i <= 30; i++) {
    home.clock.advance(3_600_000);
    h.update(i);
  }
  const day = home.registry.history('sensor.count');
  t.equal(day.length, 25, 'the hours 6..30 (the window includes both ends)');
  t.equal(day[0]?.state, 6);
  t.equal(day.at(-1)?.state, 30);
  t.same(
    home.registry.history('sensor.count', { from: 0, limit: 3 }).map((r) => r.state),
    [28, 29, 30],
  );
  t.same(
    home.registry.history('sensor.count', { from: T0, to: T0 + 2 * 3_600_000 }).map((r) => r.state),
    [0, 1, 2],
  );
  t.same(home.registry.history('sensor.count', { from: 0, limit: 0 }).length, 1, 'a limit below 1 is 1');
  t.equal(
    home.registry.history('sensor.count', { from: 0, limit: Number.NaN }).length,
    31,
    `NaN is the default (${DEFAULT_HISTORY_LIMIT})`,
  );
  t.same(home.registry.history('sensor.nothing'), []);
  t.same(Object.keys(day[0] ?? {}).sort(), ['at', 'entity_id', 'period_ms', 'state'], 'raw rows carry no min/mean/max');
});

t.test('start runs no maintenance at once; stop clears the timer and can run twice', async (t) => {
  const home = openHome(t);
  const controller = new AbortController();
  await home.registry.start(controller.signal);
  t.equal(home.database.schemaVersion('home'), 2, 'migrated at start (categories, state classes and owner overrides are version 2)');
  await home.registry.stop();
  await home.registry.stop();
  t.pass('stopped twice');
});
