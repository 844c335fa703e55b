// Action texts and delays (src/automation/actions.ts): placeholders filled, unknown ones verbatim,
// a delay that ends on time or at once when its run is cancelled.
import t from 'tap';
import { delay, fillTemplate } from '../../../src/automation/actions.js';
import type { TriggerData } from '../../../src/automation/types.js';
import type { EntityInfo } from '../../../src/home/types.js';
import { HomeAgentError } from '../../../src/shared/errors.js';
import { ManualTimerClock } from '../../helpers/manual-timer-clock.js';

const entities: Record<string, Partial<EntityInfo>> = {
  'sensor.temp': { entity_id: 'sensor.temp', state: 21.5 },
  'sensor.new': { entity_id: 'sensor.new', state: null },
  'light.hall': { entity_id: 'light.hall', state: 'on' },
};
const find = (ref: string) => (ref === 'Hall light' ? entities['light.hall'] : entities[ref]) as EntityInfo | undefined;

t.test('fillTemplate fills trigger fields and states; unknown placeholders stay as written', async (t) => {
  const state: TriggerData = { type: 'state', index: 0, at: 1, entity_id: 'binary_sensor.door', from_state: 'off', to_state: 'on' };
  const table: Array<[string, TriggerData, string]> = [
    ['{{trigger.entity_id}} went {{trigger.from_state}} → {{ trigger.to_state }}', state, 'binary_sensor.door went off → on'],
    ['{{trigger.pin}}|{{trigger.edge}}', { type: 'edge', index: 0, at: 1, pin: 'doorbell', edge: 'rising' }, 'doorbell|rising'],
    [
      '{{trigger.topic}}: {{trigger.payload}}',
      { type: 'mqtt', index: 0, at: 1, topic: 'home/door', payload: '{"open":true}' },
      'home/door: {"open":true}',
    ],
    ['you said {{trigger.text}}', { type: 'input', index: 0, at: 1, text: '晚安', channel: 'voice' }, 'you said 晚安'],
    ['{{trigger.pin}}', state, ''],
    ['{{state(sensor.temp)}} °C', state, '21.5 °C'],
    ["{{state('sensor.temp')}} / {{ state(\"light.hall\") }} / {{state('Hall light')}}", state, '21.5 / on / on'],
    ['{{state(sensor.new)}} {{state(sensor.gone)}}', state, 'unknown unknown'],
    ['{{trigger.nope}} {{states.x}} {{ }} {{state()}} {{ state(a', state, '{{trigger.nope}} {{states.x}} {{ }} {{state()}} {{ state(a'],
    ['{{trigger.from_state}}', { ...state, from_state: null }, ''],
    ['no placeholders', state, 'no placeholders'],
  ];
  for (const [text, trigger, expected] of table) t.equal(fillTemplate(text, trigger, find), expected, text);
});

t.test('delay ends on time, or at once when the signal aborts', async (t) => {
  const clock = new ManualTimerClock();
  const done: string[] = [];
  const controller = new AbortController();
  void delay(10_000, clock, controller.signal).then(() => done.push('short'));
  const long = delay(60_000, clock, controller.signal).catch((e: unknown) => {
    done.push(e instanceof HomeAgentError ? `${e.code}: ${e.message}` : 'other');
  });
  await clock.advance(9_999);
  t.same(done, []);
  await clock.advance(1);
  t.same(done, ['short']);
  controller.abort(new HomeAgentError('HA_ERR_ABORTED', 'restarted'));
  await long;
  t.same(done, ['short', 'HA_ERR_ABORTED: restarted']);
  t.equal(clock.pending(), 0, 'the cancelled delay left no timer');
  await t.rejects(delay(1, clock, controller.signal), { code: 'HA_ERR_ABORTED' }, 'an aborted signal ends it before it starts');
});
