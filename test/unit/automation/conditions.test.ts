// Conditions (src/automation/conditions.ts): state and numeric read the current state (a missing
// entity is false), time windows wrap midnight, weekdays, and/or/not; and the engine checks them
// before any action. Local time is UTC here.
process.env.TZ = 'UTC';

import t from 'tap';
import { conditionsHold, timeHolds } from '../../../src/automation/conditions.js';
import type { AutomationCondition } from '../../../src/config/schema.js';
import type { EntityInfo, EntityState } from '../../../src/home/types.js';
import { settle } from '../../helpers/manual-timer-clock.js';
import { rule, startEngine } from './automation-fixture.js';

const states: Record<string, EntityState> = {
  'switch.heater': 'on',
  'sensor.temp': '21.5',
  'sensor.dead': 'unavailable',
  'sensor.none': null,
};
const find = (ref: string): EntityInfo | undefined => {
  if (ref === 'Ambiguous') throw new Error('matches two entities');
  return ref in states ? ({ entity_id: ref, state: states[ref] } as EntityInfo) : undefined;
};
// Monday 2026-01-05.
const monday = (hh: number, mm = 0) => new Date(Date.UTC(2026, 0, 5, hh, mm));
const holds = (conditions: AutomationCondition[], now = monday(12)) => conditionsHold(conditions, { find, now });

t.test('state and numeric conditions read the current state; a missing or ambiguous entity is false', async (t) => {
  t.ok(holds([{ type: 'state', entity_id: 'switch.heater', state: 'on' }]));
  t.ok(holds([{ type: 'state', entity_id: 'switch.heater', state: ['off', 'on'] }]));
  t.notOk(holds([{ type: 'state', entity_id: 'switch.heater', state: 'off' }]));
  t.ok(holds([{ type: 'state', entity_id: 'sensor.temp', state: 21.5 }]), 'numbers as numbers');
  t.notOk(holds([{ type: 'state', entity_id: 'switch.missing', state: 'on' }]));
  t.notOk(holds([{ type: 'state', entity_id: 'Ambiguous', state: 'on' }]));
  t.notOk(holds([{ type: 'state', entity_id: 'sensor.none', state: 'null' }]), 'an unknown state matches nothing');

  t.ok(holds([{ type: 'numeric', entity_id: 'sensor.temp', above: 21 }]));
  t.ok(holds([{ type: 'numeric', entity_id: 'sensor.temp', above: 21, below: 22 }]));
  t.notOk(holds([{ type: 'numeric', entity_id: 'sensor.temp', above: 21.5 }]), 'bounds are exclusive');
  t.notOk(holds([{ type: 'numeric', entity_id: 'sensor.temp', below: 21.5 }]));
  t.notOk(holds([{ type: 'numeric', entity_id: 'sensor.dead', below: 100 }]), 'not a number');
  t.notOk(holds([{ type: 'numeric', entity_id: 'sensor.missing', below: 100 }]));
  t.ok(holds([]), 'no conditions: holds');
});

t.test('time windows, wrapping midnight, and weekdays', async (t) => {
  const night = { after: '22:00', before: '06:00' };
  t.ok(timeHolds(night, monday(23)));
  t.ok(timeHolds(night, monday(0)));
  t.ok(timeHolds(night, monday(5, 59)));
  t.notOk(timeHolds(night, monday(6)), 'before is exclusive');
  t.ok(timeHolds(night, monday(22)), 'after is inclusive');
  t.notOk(timeHolds(night, monday(12)));
  const day = { after: '08:00', before: '18:30' };
  t.ok(timeHolds(day, monday(18, 29)));
  t.notOk(timeHolds(day, monday(18, 30)));
  t.notOk(timeHolds(day, monday(7, 59)));
  t.ok(timeHolds({ after: '20:00' }, monday(23, 59)));
  t.notOk(timeHolds({ before: '07:00' }, monday(7)));
  t.ok(timeHolds({ weekdays: ['mon', 'fri'] }, monday(12)));
  t.notOk(timeHolds({ weekdays: ['sat', 'sun'] }, monday(12)));
  t.notOk(timeHolds({ after: '08:00', weekdays: ['tue'] }, monday(9)), 'both must hold');
});

t.test('and, or, not', async (t) => {
  const on = { type: 'state', entity_id: 'switch.heater', state: 'on' } as const;
  const off = { type: 'state', entity_id: 'switch.heater', state: 'off' } as const;
  t.ok(holds([{ type: 'and', conditions: [on, { type: 'numeric', entity_id: 'sensor.temp', above: 20 }] }]));
  t.notOk(holds([{ type: 'and', conditions: [on, off] }]));
  t.ok(holds([{ type: 'or', conditions: [off, on] }]));
  t.notOk(holds([{ type: 'or', conditions: [off, off] }]));
  t.ok(holds([{ type: 'not', conditions: [off] }]));
  t.notOk(holds([{ type: 'not', conditions: [off, on] }]), 'not: none of them may hold');
  t.notOk(holds([on, off]), 'the list itself: all must hold');
});

t.test('the engine runs actions only when the conditions hold at trigger time', async (t) => {
  const s = await startEngine(
    t,
    [
      rule({
        id: 'night_light',
        triggers: [{ type: 'state', entity_id: 'binary_sensor.motion', to: 'on' }],
        conditions: [
          { type: 'time', after: '22:00', before: '06:00' },
          { type: 'numeric', entity_id: 'sensor.lux', below: 10 },
        ],
        actions: [{ type: 'service', entity_id: 'light.hall', service: 'turn_on', data: {} }],
      }),
    ],
    { entities: { 'binary_sensor.motion': 'off', 'sensor.lux': 5, 'light.hall': 'off' } },
  );
  const motion = () => {
    s.entities.set('binary_sensor.motion', 'on');
    s.entities.set('binary_sensor.motion', 'off');
  };
  motion();
  t.equal(s.entities.calls.length, 0, '08:00: outside the window');
  await s.clock.advance(15 * 3600_000);
  motion();
  t.equal(s.entities.calls.length, 1, '23:00, dark');
  s.entities.set('sensor.lux', 50);
  motion();
  t.equal(s.entities.calls.length, 1, 'too bright');
  await settle();
  t.equal(s.runs.length, 1, 'a trigger whose conditions fail is neither a run nor a skip');
  t.match(
    s.logs.records().filter((r) => r.msg === 'automation conditions do not hold'),
    [{ level: 'debug', automation_id: 'night_light' }, { level: 'debug' }],
  );
});
