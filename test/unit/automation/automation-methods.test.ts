// The automations.* control methods (src/automation/automation-methods.ts) on a real ControlRegistry
// and a real engine; audit records read back from the log.
process.env.TZ = 'UTC';

import t, { type Test } from 'tap';
import { registerAutomationMethods } from '../../../src/automation/automation-methods.js';
import { ControlRegistry } from '../../../src/plugin/control-registry.js';
import { settle } from '../../helpers/manual-timer-clock.js';
import { expectErrorAsync } from '../fixtures/support.js';
import { type EngineSetup, rule, startEngine } from './automation-fixture.js';

interface Setup extends EngineSetup {
  control: ControlRegistry;
  call(method: string, params?: unknown, actor?: string): Promise<unknown>;
  audits(): Array<Record<string, unknown>>;
}

async function setup(t: Test): Promise<Setup> {
  const s = await startEngine(
    t,
    [
      rule({
        id: 'motion_light',
        name: 'Hall light on motion',
        triggers: [{ type: 'state', entity_id: 'binary_sensor.motion', to: 'on' }],
        conditions: [{ type: 'state', entity_id: 'switch.home_mode', state: 'on' }],
        actions: [
          { type: 'service', entity_id: 'light.hall', service: 'turn_on', data: {} },
          { type: 'delay', seconds: 30 },
        ],
      }),
      rule({
        id: 'nightly',
        mode: 'single',
        triggers: [{ type: 'time', at: '23:00' }],
        actions: [{ type: 'notify', channel: 'speaker', text: 'bed time' }],
      }),
    ],
    { entities: { 'binary_sensor.motion': 'off', 'light.hall': 'off' } },
  );
  const control = new ControlRegistry();
  registerAutomationMethods(control, s.engine, { logs: s.logs.logs });
  return {
    ...s,
    control,
    call: (method, params = {}, actor = 'cli') => control.call(method, params, { actor }),
    audits: () =>
      s.logs
        .records()
        .filter((r) => r.audit === true)
        .map(({ actor, action, automation_id, outcome }) => ({ actor, action, automation_id, ...(outcome !== undefined && { outcome }) })),
  };
}

t.test('the methods are registered with descriptions', async (t) => {
  const s = await setup(t);
  t.same(
    s.control.methods().map((m) => m.name),
    ['automations.disable', 'automations.enable', 'automations.get', 'automations.list', 'automations.run', 'automations.runs'],
  );
  t.ok(s.control.methods().every((m) => m.description.length > 20));
});

t.test('automations.list and .get: state, trigger summaries, problems, the rule as configured', async (t) => {
  const s = await setup(t);
  t.same(await s.call('automations.list'), {
    automations: [
      {
        id: 'motion_light',
        name: 'Hall light on motion',
        enabled: true,
        enabled_by: 'config',
        mode: 'restart',
        triggers: ['state binary_sensor.motion to on'],
        running: 0,
        queued: 0,
        last_run: null,
        problems: [
          'conditions[0].entity_id "switch.home_mode": HA_ERR_ENTITY_NOT_FOUND: no entity is called "switch.home_mode" (the condition is false until it appears)',
        ],
      },
      {
        id: 'nightly',
        name: '',
        enabled: true,
        enabled_by: 'config',
        mode: 'single',
        triggers: ['time at 23:00'],
        running: 0,
        queued: 0,
        last_run: null,
        problems: [],
      },
    ],
  });
  t.match(await s.call('automations.get', { id: 'nightly' }), {
    id: 'nightly',
    rule: { id: 'nightly', mode: 'single', triggers: [{ type: 'time', at: '23:00' }] },
  });
  await expectErrorAsync(t, () => s.call('automations.get', { id: 'nope' }), 'HA_ERR_AUTOMATION_NOT_FOUND');
  await expectErrorAsync(t, () => s.call('automations.get', { id: 'Bad Id' }), 'HA_ERR_RPC_INVALID_PARAMS');
});

t.test('automations.run: conditions unless skipped; audited with the outcome', async (t) => {
  const s = await setup(t);
  t.match(await s.call('automations.run', { id: 'motion_light' }), { outcome: 'conditions_failed', run_id: null });
  const started = (await s.call('automations.run', { id: 'motion_light', skip_conditions: true }, 'webui:admin')) as { run_id: string };
  t.match(started, { automation_id: 'motion_light', outcome: 'started', run_id: /./, reason: null });
  t.same(
    s.entities.calls.map((c) => [c.entity_id, c.context.actor]),
    [['light.hall', 'automation:motion_light']],
  );
  t.match(await s.call('automations.list'), { automations: [{ running: 1 }, {}] });
  await s.clock.advance(30_000);
  t.match(await s.call('automations.runs', { id: 'motion_light' }), {
    runs: [{ id: started.run_id, status: 'done', trigger: { type: 'manual', actor: 'webui:admin' } }],
  });
  t.same(s.audits(), [
    { actor: 'cli', action: 'automations.run', automation_id: 'motion_light', outcome: 'conditions_failed' },
    { actor: 'webui:admin', action: 'automations.run', automation_id: 'motion_light', outcome: 'started' },
  ]);
  await expectErrorAsync(t, () => s.call('automations.run', { id: 'nope' }), 'HA_ERR_AUTOMATION_NOT_FOUND');
});

t.test('automations.enable / .disable are audited and answer the new state', async (t) => {
  const s = await setup(t);
  t.match(await s.call('automations.disable', { id: 'nightly' }), { id: 'nightly', enabled: false, enabled_by: 'cli' });
  t.match(await s.call('automations.enable', { id: 'nightly' }, 'webui'), { id: 'nightly', enabled: true, enabled_by: 'webui' });
  await expectErrorAsync(t, () => s.call('automations.disable', { id: 'nope' }), 'HA_ERR_AUTOMATION_NOT_FOUND');
  t.same(s.audits(), [
    { actor: 'cli', action: 'automations.disable', automation_id: 'nightly' },
    { actor: 'webui', action: 'automations.enable', automation_id: 'nightly' },
  ]);
});

t.test('automations.runs: newest first, of one or all, limited; bad limits refused', async (t) => {
  const s = await setup(t);
  await s.call('automations.run', { id: 'nightly' });
  await s.clock.advance(1000);
  await s.call('automations.run', { id: 'motion_light', skip_conditions: true });
  await s.clock.advance(30_000);
  await settle();
  t.match(await s.call('automations.runs'), { runs: [{ automation_id: 'motion_light' }, { automation_id: 'nightly' }] });
  t.match(await s.call('automations.runs', { limit: 1 }), { runs: [{ automation_id: 'motion_light' }] });
  t.equal(((await s.call('automations.runs', { limit: 1 })) as { runs: unknown[] }).runs.length, 1);
  t.match(await s.call('automations.runs', { id: 'nightly' }), {
    runs: [{ automation_id: 'nightly', steps: [{ type: 'notify', detail: 'speaker: bed time' }] }],
  });
  await expectErrorAsync(t, () => s.call('automations.runs', { limit: 0 }), 'HA_ERR_RPC_INVALID_PARAMS');
  await expectErrorAsync(t, () => s.call('automations.runs', { limit: 1001 }), 'HA_ERR_RPC_INVALID_PARAMS');
  await expectErrorAsync(t, () => s.call('automations.runs', { id: 'nope' }), 'HA_ERR_AUTOMATION_NOT_FOUND');
});
