// Runs of the automation engine: modes, delays and their cancellation, failures, loop and rate
// limits, the run log, enable/disable across restarts, reload and stop. Local time is UTC here.
process.env.TZ = 'UTC';

import t from 'tap';
import type { AutomationAction, AutomationRule } from '../../../src/config/schema.js';
import { HomeAgentError } from '../../../src/shared/errors.js';
import { settle } from '../../helpers/manual-timer-clock.js';
import { expectError } from '../fixtures/support.js';
import { rule, startEngine } from './automation-fixture.js';

const call = (entity_id: string, service = 'turn_on'): AutomationAction => ({ type: 'service', entity_id, service, data: {} });
const wait = (seconds: number): AutomationAction => ({ type: 'delay', seconds });
const motion = { type: 'state', entity_id: 'binary_sensor.motion', to: 'on' } as const;

/** Motion on then off again: one trigger each time. */
function pulse(s: Awaited<ReturnType<typeof startEngine>>): void {
  s.entities.set('binary_sensor.motion', 'on');
  s.entities.set('binary_sensor.motion', 'off');
}

const ENTITIES = { 'binary_sensor.motion': 'off', 'light.hall': 'off', 'switch.fan': 'off' };

t.test('the first service call happens inside the event emit: no await, no database write before it', async (t) => {
  const s = await startEngine(t, [rule({ id: 'fast', triggers: [motion], actions: [call('light.hall')] })], { entities: ENTITIES });
  s.entities.set('binary_sensor.motion', 'on');
  t.equal(s.entities.calls.length, 1, 'the call was made before emit returned');
  t.same(s.engine.runs({ limit: 5 }).length, 0, 'the run is not finished yet, nothing written');
  await settle();
  t.equal(s.engine.runs({ limit: 5 }).length, 1);
});

t.test('restart mode: a new trigger cancels the running run (its delay too) and starts again', async (t) => {
  const s = await startEngine(
    t,
    [rule({ id: 'motion_light', triggers: [motion], actions: [call('light.hall'), wait(120), call('light.hall', 'turn_off')] })],
    { entities: ENTITIES },
  );
  pulse(s);
  await s.clock.advance(60_000);
  pulse(s);
  await s.clock.advance(119_000);
  t.same(
    s.entities.calls.map((c) => c.service),
    ['turn_on', 'turn_on'],
    'the first delay never ended',
  );
  await s.clock.advance(1000);
  t.same(
    s.entities.calls.map((c) => c.service),
    ['turn_on', 'turn_on', 'turn_off'],
  );
  const [second, first] = s.engine.runs({ automation_id: 'motion_light', limit: 5 });
  t.match(first, {
    status: 'aborted',
    error: 'HA_ERR_ABORTED: restarted by a new trigger (mode restart)',
    steps: [
      { index: 0, status: 'done' },
      { index: 1, type: 'delay', status: 'aborted', ms: 60_000, detail: '120 s' },
    ],
  });
  t.match(second, { status: 'done', steps: [{ status: 'done' }, { status: 'done', ms: 120_000 }, { status: 'done' }] });
  t.equal(s.clock.pending(), 0, 'no delay timer left');
});

t.test('single mode: a trigger while running is skipped and logged', async (t) => {
  const s = await startEngine(t, [rule({ id: 'once', mode: 'single', triggers: [motion], actions: [call('light.hall'), wait(10)] })], {
    entities: ENTITIES,
  });
  pulse(s);
  pulse(s);
  await s.clock.advance(10_000);
  pulse(s);
  await s.clock.advance(10_000);
  t.same(
    s.runs.map((r) => r.status),
    ['skipped', 'done', 'done'],
  );
  t.match(s.runs[0], { automation_id: 'once', status: 'skipped', error: 'a run is still going on (mode single)' });
  t.match(
    s.logs.records().filter((r) => r.status === 'skipped'),
    [{ level: 'info', automation_id: 'once', msg: /skipped: a run is still going on/ }],
  );
  t.equal(s.engine.runs({ automation_id: 'once', limit: 10 }).length, 2, 'skips are not stored as runs');
});

t.test('queued mode: runs one after the other, at most max_queued_runs waiting', async (t) => {
  const s = await startEngine(
    t,
    [
      rule({
        id: 'queue',
        mode: 'queued',
        triggers: [motion],
        actions: [{ type: 'notify', channel: 'c', text: '{{trigger.at}}' }, wait(10)],
      }),
    ],
    { entities: ENTITIES, settings: { max_queued_runs: 2 } },
  );
  for (let i = 0; i < 4; i++) pulse(s);
  t.match(s.engine.list(), [{ running: 1, queued: 2 }]);
  t.match(s.runs, [{ status: 'skipped', error: /2 runs already wait \(core\.automations\.max_queued_runs\)/ }]);
  await s.clock.advance(10_000);
  t.equal(s.io.sent.length, 2, 'the second started when the first ended');
  await s.clock.advance(20_000);
  t.equal(s.io.sent.length, 3);
  t.same(
    s.runs.map((r) => r.status),
    ['skipped', 'done', 'done', 'done'],
  );
  t.match(s.engine.list(), [{ running: 0, queued: 0 }]);
});

t.test('parallel mode: runs side by side, at most max_queued_runs at once', async (t) => {
  const s = await startEngine(t, [rule({ id: 'many', mode: 'parallel', triggers: [motion], actions: [call('light.hall'), wait(10)] })], {
    entities: ENTITIES,
    settings: { max_queued_runs: 2 },
  });
  pulse(s);
  await s.clock.advance(5000);
  pulse(s);
  pulse(s);
  t.equal(s.entities.calls.length, 2);
  t.match(s.engine.list(), [{ running: 2 }]);
  await s.clock.advance(5000);
  t.equal(s.engine.list()[0]?.running, 1, 'the first ended after its own 10 s');
  t.same(
    s.runs.map((r) => r.status),
    ['skipped', 'done'],
  );
  t.match(s.runs[0], { error: /2 runs already going on/ });
});

t.test('a failed action fails the run, stops the actions after it and is logged with its code', async (t) => {
  const s = await startEngine(
    t,
    [
      rule({
        id: 'broken',
        triggers: [motion],
        actions: [call('light.hall'), call('switch.fan'), { type: 'notify', channel: 'c', text: 'done' }],
      }),
    ],
    { entities: ENTITIES },
  );
  s.entities.failing.set('switch.fan', new HomeAgentError('HA_ERR_ENTITY_UNAVAILABLE', 'switch.fan does not answer'));
  s.entities.set('binary_sensor.motion', 'on');
  await settle();
  t.same(s.io.sent, [], 'the notify after the failure did not run');
  t.match(s.engine.runs({ limit: 1 }), [
    {
      status: 'failed',
      error: 'HA_ERR_ENTITY_UNAVAILABLE: switch.fan does not answer',
      steps: [
        { index: 0, status: 'done' },
        { index: 1, status: 'failed', error: 'HA_ERR_ENTITY_UNAVAILABLE: switch.fan does not answer', detail: 'turn_on switch.fan' },
      ],
    },
  ]);
  t.match(s.warnings(), [{ msg: 'automation broken failed', error: /^HA_ERR_ENTITY_UNAVAILABLE/, status: 'failed' }]);
  t.match(s.runs, [{ status: 'failed', error: /HA_ERR_ENTITY_UNAVAILABLE/ }]);

  // A reference that resolves to nothing fails the same way.
  const s2 = await startEngine(t, [rule({ id: 'missing', triggers: [motion], actions: [call('light.nowhere')] })], { entities: ENTITIES });
  s2.entities.set('binary_sensor.motion', 'on');
  await settle();
  t.match(s2.engine.runs({ limit: 1 }), [{ status: 'failed', error: /^HA_ERR_ENTITY_NOT_FOUND/ }]);
});

t.test("a loop through the automation's own actions is stopped at self_trigger_per_minute", async (t) => {
  // Toggling the switch it watches: each run causes the next trigger.
  const s = await startEngine(
    t,
    [rule({ id: 'flip_flop', triggers: [{ type: 'state', entity_id: 'switch.fan' }], actions: [call('switch.fan', 'toggle')] })],
    { entities: ENTITIES, settings: { self_trigger_per_minute: 3 } },
  );
  s.entities.set('switch.fan', 'on');
  await settle();
  t.equal(s.entities.calls.length, 4, 'the outside change, then three self-caused runs');
  t.ok(s.entities.calls.every((c) => c.context.actor === 'automation:flip_flop'));
  // Mode restart: each run's own change restarts it while its call is still returning.
  t.same(
    s.runs.map((r) => r.status),
    ['aborted', 'aborted', 'aborted', 'skipped', 'done'],
  );
  t.match(s.runs[3], { error: /loop stopped: its own actions triggered it more than 3 times in a minute/ });
  t.match(s.warnings(), [{ automation_id: 'flip_flop', reason: 'loop', msg: /loop stopped/ }]);

  await s.clock.advance(60_000);
  s.entities.set('switch.fan', s.entities.find('switch.fan')?.state === 'on' ? 'off' : 'on');
  await settle();
  t.equal(s.entities.calls.length, 8, 'a minute later it may run again (and is stopped again)');
  t.equal(s.warnings().length, 2, 'one warning per minute');
});

t.test('max_runs_per_minute skips further starts in a sliding minute, with one warning', async (t) => {
  const s = await startEngine(t, [rule({ id: 'busy', triggers: [motion], actions: [call('light.hall')] })], {
    entities: ENTITIES,
    settings: { max_runs_per_minute: 3 },
  });
  for (let i = 0; i < 5; i++) {
    pulse(s);
    await s.clock.advance(1000);
  }
  t.equal(s.entities.calls.length, 3);
  t.same(
    s.runs.map((r) => r.status),
    ['done', 'done', 'done', 'skipped', 'skipped'],
  );
  t.match(s.warnings(), [
    { automation_id: 'busy', reason: 'rate', msg: /more than 3 runs in a minute \(core\.automations\.max_runs_per_minute\)/ },
  ]);
  t.equal(s.warnings().length, 1, 'the second skip in the same minute is not logged again');
  await s.clock.advance(55_000);
  pulse(s);
  t.equal(s.entities.calls.length, 4, 'the first start left the window');
  await settle();
});

t.test('enable/disable: persisted, overrides the rule, survives a new engine on the same database', async (t) => {
  const s = await startEngine(
    t,
    [
      rule({ id: 'light_on', triggers: [motion], actions: [call('light.hall'), wait(60)] }),
      rule({ id: 'off_in_config', enabled: false, triggers: [motion], actions: [call('switch.fan')] }),
    ],
    { entities: ENTITIES },
  );
  s.entities.set('binary_sensor.motion', 'on');
  t.equal(s.entities.calls.length, 1, 'off_in_config did not run');
  s.engine.setEnabled('light_on', false, 'cli');
  t.match(s.engine.runs({ automation_id: 'light_on', limit: 1 }), [
    { status: 'aborted', error: 'HA_ERR_ABORTED: the automation was disabled by cli' },
  ]);
  s.engine.setEnabled('off_in_config', true, 'webui');
  t.match(s.engine.list(), [
    { id: 'light_on', enabled: false, enabled_by: 'cli' },
    { id: 'off_in_config', enabled: true, enabled_by: 'webui' },
  ]);
  s.entities.set('binary_sensor.motion', 'off');
  s.entities.set('binary_sensor.motion', 'on');
  t.same(
    s.entities.calls.map((c) => c.entity_id),
    ['light.hall', 'switch.fan'],
  );
  expectError(t, () => s.engine.setEnabled('nope', true, 'cli'), 'HA_ERR_AUTOMATION_NOT_FOUND');

  await settle();
  await s.engine.stop();
  const again = await s.restart();
  t.match(again.list(), [
    { id: 'light_on', enabled: false, enabled_by: 'cli', last_run: { status: 'aborted' } },
    { id: 'off_in_config', enabled: true, enabled_by: 'webui', last_run: { status: 'done' } },
  ]);
  s.entities.set('binary_sensor.motion', 'off');
  s.entities.set('binary_sensor.motion', 'on');
  await settle();
  t.same(
    s.entities.calls.map((c) => c.entity_id),
    ['light.hall', 'switch.fan', 'switch.fan'],
    'the new engine follows the stored flags',
  );
});

t.test('the run log keeps at most run_history runs, oldest dropped first', async (t) => {
  const s = await startEngine(t, [rule({ id: 'count', triggers: [motion], actions: [{ type: 'notify', channel: 'c', text: 'x' }] })], {
    entities: ENTITIES,
    settings: { run_history: 10 },
  });
  for (let i = 0; i < 15; i++) {
    pulse(s);
    await s.clock.advance(1000);
  }
  const runs = s.engine.runs({ limit: 100 });
  t.equal(runs.length, 10);
  t.equal(runs[0]?.started_at, s.runs.at(-1)?.started_at, 'newest first');
  t.equal(runs.at(-1)?.started_at, s.runs[5]?.started_at, 'the five oldest are gone');
  t.equal(s.engine.runs({ automation_id: 'count', limit: 3 }).length, 3, 'limit');
  expectError(t, () => s.engine.runs({ automation_id: 'nope', limit: 3 }), 'HA_ERR_AUTOMATION_NOT_FOUND');
});

t.test('manual runs: conditions checked unless skipped, mode applies, disabled rules run too', async (t) => {
  const s = await startEngine(
    t,
    [
      rule({
        id: 'guarded',
        enabled: false,
        triggers: [motion],
        conditions: [{ type: 'state', entity_id: 'switch.fan', state: 'on' }],
        actions: [{ type: 'notify', channel: 'c', text: 'by {{trigger.actor}} ({{trigger.type}})' }, wait(5)],
        mode: 'single',
      }),
    ],
    { entities: ENTITIES },
  );
  t.match(s.engine.runNow('guarded', { actor: 'cli' }), { outcome: 'conditions_failed', run_id: null, reason: /conditions do not hold/ });
  const started = s.engine.runNow('guarded', { actor: 'cli', skip_conditions: true });
  t.match(started, { automation_id: 'guarded', outcome: 'started', run_id: /./ });
  t.match(s.engine.runNow('guarded', { actor: 'cli', skip_conditions: true }), {
    outcome: 'skipped',
    reason: 'a run is still going on (mode single)',
  });
  await s.clock.advance(5000);
  t.same(
    s.io.sent.map((x) => x.text),
    ['by cli (manual)'],
  );
  t.match(s.engine.runs({ limit: 1 }), [{ id: started.run_id, status: 'done', trigger: { type: 'manual', actor: 'cli', index: null } }]);
  expectError(t, () => s.engine.runNow('nope', { actor: 'cli' }), 'HA_ERR_AUTOMATION_NOT_FOUND');
});

t.test('reload: unchanged rules keep their runs, changed and removed ones are cancelled; invalid rules change nothing', async (t) => {
  const keep = rule({ id: 'keep', triggers: [motion], actions: [call('light.hall'), wait(60)] });
  const change = rule({ id: 'change', triggers: [motion], actions: [call('switch.fan'), wait(60)] });
  const remove = rule({ id: 'remove', triggers: [motion], actions: [{ type: 'notify', channel: 'c', text: 'x' }, wait(60)] });
  const s = await startEngine(t, [keep, change, remove], { entities: ENTITIES });
  s.entities.set('binary_sensor.motion', 'on');
  t.equal(s.engine.list().filter((a) => a.running === 1).length, 3);

  s.settings.rules = [keep, { ...change, actions: [call('switch.fan', 'turn_off')] }];
  s.engine.reload();
  t.match(s.engine.list(), [
    { id: 'keep', running: 1 },
    { id: 'change', running: 0, last_run: { status: 'aborted', error: 'HA_ERR_ABORTED: the automation rule changed' } },
  ]);
  t.match(s.engine.runs({ automation_id: 'remove', limit: 1 }), [
    { status: 'aborted', error: 'HA_ERR_ABORTED: the automation rule was removed' },
  ]);
  s.entities.set('binary_sensor.motion', 'off');
  s.entities.set('binary_sensor.motion', 'on');
  t.same(
    s.entities.calls.map((c) => `${c.service} ${c.entity_id}`).slice(2),
    ['turn_on light.hall', 'turn_off switch.fan'],
    'keep restarted; change runs its new actions',
  );

  const before = s.engine.list();
  s.settings.rules = [keep, rule({ id: 'bad', triggers: [{ type: 'time', cron: '61 * * * *' }], actions: [call('light.hall')] })];
  const error = expectError(t, () => s.engine.reload(), 'HA_ERR_AUTOMATION_CONFIG');
  t.match(error.message, /bad: triggers\[0\]\.cron: cron "61 \* \* \* \*": the minute field: 61 is out of range/);
  t.same(
    s.engine.list().map((a) => a.id),
    before.map((a) => a.id),
    'the rules running stay',
  );
});

t.test('stop cancels running runs (aborted, stored), timers and subscriptions; an invalid rule refuses start', async (t) => {
  const s = await startEngine(
    t,
    [
      rule({ id: 'slow', triggers: [motion], actions: [call('light.hall'), wait(600)] }),
      rule({ id: 'daily', triggers: [{ type: 'time', at: '23:00' }], actions: [call('light.hall')] }),
      rule({ id: 'held', triggers: [{ type: 'state', entity_id: 'switch.fan', to: 'on', for_s: 30 }], actions: [call('light.hall')] }),
    ],
    { entities: ENTITIES },
  );
  s.entities.set('binary_sensor.motion', 'on');
  s.entities.set('switch.fan', 'on');
  await settle();
  await s.engine.stop();
  t.equal(s.clock.pending(), 0, 'delay, time and for_s timers are gone');
  t.equal(s.events.listenerCount('entity.state_changed'), 0);
  t.match(s.runs.at(-1), {
    automation_id: 'slow',
    status: 'aborted',
    error: /^HA_ERR_ABORTED: the operation was cancelled because HomeAgent is shutting down/,
  });
  const again = await s.restart();
  t.match(again.runs({ automation_id: 'slow', limit: 1 }), [{ status: 'aborted', steps: [{ status: 'done' }, { status: 'aborted' }] }]);
  await again.stop();

  const bad: AutomationRule[] = [rule({ id: 'x', triggers: [{ type: 'input', match: '(' }], actions: [call('light.hall')] })];
  const s2 = await startEngine(t, bad, { start: false });
  const error = await s2.engine.start(new AbortController().signal).then(
    () => undefined,
    (e: unknown) => e,
  );
  t.match(error, { code: 'HA_ERR_AUTOMATION_CONFIG', message: /x: triggers\[0\]\.match/ });
  t.equal(s2.events.listenerCount('entity.state_changed'), 0, 'nothing subscribed');
});
