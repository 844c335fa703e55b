/**
 * A tool sequence run by an automation's `sequence` action (src/automation/actions.ts) through the
 * daemon's automation tools (src/daemon/compose-home.ts): an act sequence runs at the automation's
 * household trust with its arguments; one with a dangerous step is refused with
 * HA_ERR_CONFIRMATION_REQUIRED before any step runs; a missing sequence fails the run with its code.
 */
import t from 'tap';
import { SeqPlugin } from '../../../../plugins/seq/index.js';
import { executeActions } from '../../../../src/automation/actions.js';
import type { RunStep } from '../../../../src/automation/types.js';
import type { AutomationAction } from '../../../../src/config/schema.js';
import { automationTools } from '../../../../src/daemon/compose-home.js';
import { ManualTimerClock } from '../../../helpers/manual-timer-clock.js';
import { createTestPluginContext } from '../../../helpers/plugin-context.js';
import { tempDir } from '../../fixtures/support.js';

const SETTINGS = {
  max_sequences: 200,
  max_groups: 20,
  max_calls_per_group: 20,
  max_call_depth: 4,
  run_timeout_s: 120,
  max_definition_chars: 20000,
  run_by_name: true,
};

t.test('an automation runs an act sequence, refuses a dangerous one, and fails on a missing one', async (t) => {
  const tc = createTestPluginContext({ name: 'seq', dataDir: tempDir(t), settings: SETTINGS });
  const ran: Array<{ tool: string; entity: unknown; trust: string; source: string }> = [];
  for (const [name, tier] of [
    ['light_off', 'act'],
    ['cmd_run', 'dangerous'],
  ] as const)
    tc.tools.register({
      name,
      description: name,
      owner: 'plugin:house',
      tier,
      parameters: { type: 'object', properties: { entity: { type: 'string' } } },
      execute: (args: { entity?: string }, context) => {
        ran.push({ tool: name, entity: args.entity, trust: context.trust, source: context.source });
        return 'ok';
      },
    });
  const plugin = new SeqPlugin(tc.context);
  await plugin.start();
  t.teardown(async () => {
    await plugin.stop();
    await tc.close();
  });
  await tc.call('seq_create', {
    name: 'good night',
    in: { room: { type: 'string', default: 'light.hall' } },
    groups: [{ calls: [{ tool: 'light_off', args: { entity: '$args.room' } }] }],
  });
  await tc.call('seq_create', { name: 'reboot', groups: [{ calls: [{ tool: 'light_off' }] }, { calls: [{ tool: 'cmd_run' }] }] });

  const run = async (action: AutomationAction) => {
    const steps: RunStep[] = [];
    const outcome = await executeActions(
      [action],
      {
        automation_id: 'bedtime',
        run_id: 'run-1',
        trigger: { type: 'manual', index: null, at: 0 },
        entities: { resolve: () => ({}) as never, find: () => undefined, call: async () => ({}) as never },
        io: { notify: async () => {}, input: () => {} },
        tools: automationTools(tc.tools),
        clock: new ManualTimerClock(),
        signal: new AbortController().signal,
      },
      { started: () => {}, finished: (step) => void steps.push(step) },
    );
    return { ...outcome, steps };
  };

  const done = await run({ type: 'sequence', name: 'good night', args: { room: 'light.bedroom' } });
  t.equal(done.status, 'done');
  t.match(done.steps, [{ type: 'sequence', status: 'done', detail: 'good night {"room":"light.bedroom"}' }]);
  t.same(ran, [{ tool: 'light_off', entity: 'light.bedroom', trust: 'household', source: 'automation' }]);

  const refused = await run({ type: 'sequence', name: 'reboot', args: {} });
  t.equal(refused.status, 'failed');
  t.match(refused.error, /^HA_ERR_CONFIRMATION_REQUIRED: seq_run .* has a dangerous step/);
  t.equal(ran.length, 1, 'not even its act step ran');

  const missing = await run({ type: 'sequence', name: 'nope', args: {} });
  t.equal(missing.status, 'failed');
  t.match(missing.error, /HA_ERR_TOOL_FAILED: seq_run: HA_ERR_SEQ_NOT_FOUND: there is no sequence named nope/);
});
