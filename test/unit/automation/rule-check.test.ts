// Rule checks the schema cannot express (src/automation/rule-check.ts): each problem names the rule
// id and the field, all problems come together, defaults are filled in, and references to entities
// that do not exist yet are no problem.
import t, { type Test } from 'tap';
import { checkRules, type RuleProblem, referenceProblems } from '../../../src/automation/rule-check.js';
import type { AutomationRule } from '../../../src/config/schema.js';
import { HomeAgentError } from '../../../src/shared/errors.js';
import { expectError } from '../fixtures/support.js';
import { rule } from './automation-fixture.js';

const notify = { type: 'notify', channel: 'speaker', text: 'hi' } as const;

function problemsOf(t: Test, rules: AutomationRule[]): RuleProblem[] {
  const error = expectError(t, () => checkRules(rules), 'HA_ERR_AUTOMATION_CONFIG');
  return (error.details?.problems ?? []) as RuleProblem[];
}

t.test('valid rules compile: defaults filled, cron and regex built once, unknown entities accepted', async (t) => {
  const rules = checkRules([
    {
      id: 'morning',
      triggers: [
        { type: 'time', at: '07:00' },
        { type: 'time', cron: '0 8 * * sat,sun' },
        { type: 'state', entity_id: 'binary_sensor.not_there_yet', to: 'on', for_s: 30 },
        { type: 'state', entity_id: 'Hall motion' },
        { type: 'numeric', entity_id: 'sensor.temp', above: 25, below: 30 },
        { type: 'edge', pin: 'doorbell' },
        { type: 'edge', pin: 'binary_sensor.doorbell', edge: 'both' },
        { type: 'mqtt', topic: 'zigbee2mqtt/+/action', payload: 'single' },
        { type: 'input', match: 'good morning|早上好' },
      ],
      actions: [
        { type: 'service', entity_id: ['light.kitchen', 'Kitchen lamp'], service: 'turn_on' },
        { type: 'input', text: 'x' },
      ],
    } as unknown as AutomationRule,
  ]);
  const [r] = rules;
  t.ok(r);
  if (!r) return;
  t.match(r, { id: 'morning', name: '', enabled: true, mode: 'restart', conditions: [] });
  t.same(
    r.triggers.map((x) => x.type),
    ['time', 'time', 'state', 'state', 'numeric', 'edge', 'edge', 'mqtt', 'input'],
  );
  t.match(r.triggers[0], { type: 'time', label: '07:00' });
  t.match(r.triggers[2], { type: 'state', entity_ref: 'binary_sensor.not_there_yet', to: 'on', for_ms: 30_000 });
  t.match(r.triggers[4], { hysteresis: 0 });
  t.match(r.triggers[5], { edge: 'rising' }, 'edge defaults to rising');
  t.match(r.triggers[7], { filter: { exact: false, levels: ['zigbee2mqtt', '+', 'action'] } });
  const input = r.triggers[8];
  t.ok(input?.type === 'input' && input.pattern.test('GOOD MORNING') && input.pattern.test('早上好'), 'case-insensitive');
  t.ok(input?.type === 'input' && !input.pattern.test('good morning everyone'), 'the whole text must match');
  t.match(r.actions[0], { data: {} });
  t.match(r.actions[1], { channel: 'automation', level: 0 });
  t.match(r.fingerprint, /^\{"id":"morning",/, 'the fingerprint is the rule as configured');
});

t.test('each problem names the rule id and the field; all are reported at once', async (t) => {
  const problems = problemsOf(t, [
    rule({ id: 'dup', triggers: [{ type: 'time', at: '07:00' }], actions: [notify] }),
    rule({ id: 'dup', triggers: [{ type: 'time', at: '08:00' }], actions: [notify] }),
    rule({
      id: 'bad_triggers',
      triggers: [
        { type: 'time' },
        { type: 'time', at: '07:00', cron: '0 7 * * *' },
        { type: 'time', cron: '0 25 * * *' },
        { type: 'numeric', entity_id: 'sensor.temp', hysteresis: 0 },
        { type: 'numeric', entity_id: 'sensor.temp', above: 30, below: 20, hysteresis: 0 },
        { type: 'numeric', entity_id: 'sensor.temp', above: 20, below: 20, hysteresis: 0 },
        { type: 'input', match: '(unclosed' },
        { type: 'mqtt', topic: 'home/#/x' },
        { type: 'mqtt', topic: 'home/a+' },
        { type: 'state', entity_id: 'sensor.Temp' },
        { type: 'state', entity_id: 'sensors.temp' },
        { type: 'edge', pin: 'GPIO 17', edge: 'rising' },
      ],
      actions: [notify],
    }),
    rule({
      id: 'bad_rest',
      triggers: [{ type: 'time', at: '07:00' }],
      conditions: [
        { type: 'time' },
        { type: 'time', after: '22:00', before: '22:00' },
        { type: 'numeric', entity_id: 'sensor.temp' },
        { type: 'or', conditions: [{ type: 'state', entity_id: 'switch.Bad', state: 'on' }] },
      ],
      actions: [
        { type: 'service', entity_id: 'sensor.temp', service: 'turn_on', data: {} },
        { type: 'service', entity_id: ['light.ok', 'lamp.x'], service: 'turn_on', data: {} },
        { type: 'service', entity_id: 'lock.front', service: 'open', data: {} },
      ],
    }),
  ]);
  const where = problems.map((p) => `${p.automation_id}: ${p.field}`);
  t.same(where, [
    'dup: id',
    'bad_triggers: triggers[0].at',
    'bad_triggers: triggers[1].cron',
    'bad_triggers: triggers[2].cron',
    'bad_triggers: triggers[3].above',
    'bad_triggers: triggers[4].below',
    'bad_triggers: triggers[5].below',
    'bad_triggers: triggers[6].match',
    'bad_triggers: triggers[7].topic',
    'bad_triggers: triggers[8].topic',
    'bad_triggers: triggers[9].entity_id',
    'bad_triggers: triggers[10].entity_id',
    'bad_triggers: triggers[11].pin',
    'bad_rest: conditions[0].type',
    'bad_rest: conditions[1].before',
    'bad_rest: conditions[2].above',
    'bad_rest: conditions[3].conditions[0].entity_id',
    'bad_rest: actions[0].service',
    'bad_rest: actions[1].entity_id[1]',
    'bad_rest: actions[2].service',
  ]);
  const text = (field: string) => problems.find((p) => `${p.automation_id}: ${p.field}` === field)?.problem ?? '';
  t.match(text('dup: id'), /used by another rule too \(rule 2 of 4\)/);
  t.match(text('bad_triggers: triggers[0].at'), /exactly one of at \(HH:MM\) and cron/);
  t.match(text('bad_triggers: triggers[2].cron'), /the hour field: 25 is out of range 0-23/);
  t.match(text('bad_triggers: triggers[3].above'), /needs above, below or both/);
  t.match(text('bad_triggers: triggers[4].below'), /below \(20\) must be greater than above \(30\)/);
  t.match(text('bad_triggers: triggers[6].match'), /"\(unclosed" is not a valid regular expression/);
  t.match(text('bad_triggers: triggers[7].topic'), /# may only be a whole last level/);
  t.match(text('bad_triggers: triggers[9].entity_id'), /"sensor.Temp" is not a valid entity id/);
  t.match(text('bad_triggers: triggers[10].entity_id'), /unknown domain sensors \(one of switch, light/);
  t.match(text('bad_triggers: triggers[11].pin'), /neither a pin id .* nor an entity id/);
  t.match(text('bad_rest: conditions[0].type'), /needs after, before or weekdays/);
  t.match(text('bad_rest: actions[0].service'), /sensor entities have no service turn_on \(they only report\)/);
  t.match(text('bad_rest: actions[2].service'), /lock entities have no service open \(they offer lock, unlock\)/);

  const error = expectError(
    t,
    () => checkRules([rule({ id: 'one', triggers: [{ type: 'time' }], actions: [notify] })]),
    'HA_ERR_AUTOMATION_CONFIG',
  );
  t.match(
    error.message,
    /^invalid automation rule \(core\.automations\.rules\):\none: triggers\[0\]\.at: /,
    'the message lists id: field: problem',
  );
});

t.test('referenceProblems lists the references that do not resolve, with what that means', async (t) => {
  const [r] = checkRules([
    rule({
      id: 'hall',
      triggers: [
        { type: 'state', entity_id: 'binary_sensor.hall_motion', to: 'on' },
        { type: 'numeric', entity_id: 'sensor.hall_temp', above: 25, hysteresis: 0 },
        { type: 'time', at: '07:00' },
      ],
      conditions: [{ type: 'not', conditions: [{ type: 'state', entity_id: 'Night mode', state: 'on' }] }],
      actions: [{ type: 'service', entity_id: ['light.hall', 'light.gone'], service: 'turn_on', data: {} }],
    }),
  ]);
  if (!r) throw new Error('no rule');
  const known = new Set(['binary_sensor.hall_motion', 'light.hall']);
  const problems = referenceProblems(r, (ref) => {
    if (!known.has(ref)) throw new HomeAgentError('HA_ERR_ENTITY_NOT_FOUND', `no entity ${ref}`);
  });
  t.same(problems, [
    'triggers[1].entity_id "sensor.hall_temp": HA_ERR_ENTITY_NOT_FOUND: no entity sensor.hall_temp (the trigger is inactive until it appears)',
    'conditions[0].conditions[0].entity_id "Night mode": HA_ERR_ENTITY_NOT_FOUND: no entity Night mode (the condition is false until it appears)',
    'actions[0].entity_id[1] "light.gone": HA_ERR_ENTITY_NOT_FOUND: no entity light.gone (the action fails until it appears)',
  ]);
});

t.test('service data is checked as the registry will check it; new domains take their services', async (t) => {
  const good = checkRules([
    rule({
      id: 'evening',
      triggers: [{ type: 'time', at: '18:00' }],
      actions: [
        { type: 'service', entity_id: 'climate.living_room', service: 'set_temperature', data: { temperature: 21 } },
        { type: 'service', entity_id: 'media_player.kitchen', service: 'volume_set', data: { volume_level: 0.3 } },
        { type: 'service', entity_id: 'media_player.kitchen', service: 'play_media', data: { media_content_id: 'jazz' } },
        { type: 'service', entity_id: 'light.hall', service: 'turn_on', data: { color_name: 'warm white', brightness: 80 } },
        { type: 'service', entity_id: 'vacuum.robot', service: 'return_to_base', data: {} },
        { type: 'service', entity_id: 'scene.movie_night', service: 'turn_on', data: {} },
        // A name resolves later: its data is checked when the action runs.
        { type: 'service', entity_id: 'Living room thermostat', service: 'set_temperature', data: { temperature: 500 } },
      ],
    }),
  ]);
  t.equal(good[0]?.actions.length, 7, 'a rule with good data compiles');
  const problems = problemsOf(t, [
    rule({
      id: 'bad_data',
      triggers: [{ type: 'time', at: '18:00' }],
      actions: [
        { type: 'service', entity_id: 'climate.living_room', service: 'set_temperature', data: { temperature: 500 } },
        { type: 'service', entity_id: ['light.ok', 'media_player.kitchen'], service: 'turn_on', data: { brightness: 10 } },
        { type: 'service', entity_id: 'media_player.kitchen', service: 'play_media', data: {} },
        { type: 'service', entity_id: 'weather.home', service: 'turn_on', data: {} },
        { type: 'service', entity_id: 'person.anna', service: 'turn_off', data: {} },
        { type: 'service', entity_id: 'vacuum.robot', service: 'turn_on', data: {} },
      ],
    }),
  ]);
  t.same(
    problems.map((p) => [p.field, p.problem]),
    [
      ['actions[0].data.temperature', 'climate.living_room set_temperature: temperature must be between -50 and 100, not 500'],
      ['actions[1].data.brightness', 'media_player.kitchen turn_on: unknown field "brightness"; it takes no data'],
      ['actions[2].data.media_content_id', 'media_player.kitchen play_media: media_content_id is required'],
      ['actions[3].service', 'weather entities have no service turn_on (they only report)'],
      ['actions[4].service', 'person entities have no service turn_off (they only report)'],
      ['actions[5].service', 'vacuum entities have no service turn_on (they offer start, pause, stop, return_to_base)'],
    ],
  );
});
