/**
 * The seq plugin's sequences are one of the databases a family backs up and restores: listed as
 * seq.sequences while the plugin runs, backed up with the stored sequence in it, and a restore into
 * <data>/plugin-data/seq/sequences.db (what `homeagent restore FILE --db seq.sequences` resolves)
 * brings a deleted sequence back at the plugin's next start.
 */
import { join } from 'node:path';
import t from 'tap';
import { SeqPlugin } from '../../../../plugins/seq/index.js';
import { systemClock } from '../../../../src/shared/clock.js';
import { restoreDatabase, restoreTarget } from '../../../../src/store/restore.js';
import { createTestPluginContext } from '../../../helpers/plugin-context.js';
import { type Teardown, tempDir } from '../../fixtures/support.js';

const SETTINGS = {
  max_sequences: 200,
  max_groups: 20,
  max_calls_per_group: 20,
  max_call_depth: 4,
  run_timeout_s: 120,
  max_definition_chars: 20000,
  run_by_name: true,
};

const BEDTIME = {
  name: 'bedtime',
  description: 'the hall light off',
  groups: [{ name: 'lights', calls: [{ tool: 'light_off', args: { entity: 'light.hall' } }] }],
};

async function startSeq(t: Teardown, dataDir: string) {
  const tc = createTestPluginContext({ name: 'seq', dataDir, settings: SETTINGS });
  tc.tools.register({
    name: 'light_off',
    description: 'Turns a light off.',
    owner: 'plugin:house',
    tier: 'act',
    parameters: { type: 'object', properties: { entity: { type: 'string' } } },
    execute: async () => 'off',
  });
  const plugin = new SeqPlugin(tc.context);
  await plugin.start();
  let stopped = false;
  const stop = async () => {
    if (stopped) return;
    stopped = true;
    await plugin.stop();
    await tc.close();
  };
  t.teardown(stop);
  return { tc, stop };
}

t.test('seq.sequences is listed, backed up with its rows, gone at stop, and restored', async (t) => {
  const dataDir = tempDir(t);
  const first = await startSeq(t, dataDir);
  t.same(
    first.tc.store.status().map((d) => d.name),
    ['seq.sequences'],
    'the plugin database is listed under its plugin',
  );
  await first.tc.call('seq_create', BEDTIME);
  const backup = join(dataDir, 'backups', 'seq.sequences.db');
  await first.tc.store.database('seq.sequences').backup(backup);
  await first.tc.call('seq_delete', { name: 'bedtime' });
  t.same(((await first.tc.call('seq_list', {})) as { sequences: unknown[] }).sequences, [], 'deleted after the backup');
  await first.stop();
  t.same(first.tc.store.status(), [], 'not listed once the plugin stopped');

  const target = restoreTarget(
    {
      stateDb: join(dataDir, 'state.db'),
      memoryDb: join(dataDir, 'memory.db'),
      knowledgeDb: join(dataDir, 'knowledge.db'),
      homeDb: join(dataDir, 'home.db'),
      pluginDataDir: join(dataDir, 'plugin-data'),
    },
    'seq.sequences',
  );
  t.same(target, { file: join(dataDir, 'plugin-data', 'seq', 'sequences.db'), component: 'seq' }, 'the file the plugin opens');
  const result = restoreDatabase(backup, target.file, systemClock, { component: target.component });
  t.ok(result.previousMovedTo, 'the database with the deletion is kept aside');

  const second = await startSeq(t, dataDir);
  const listed = (await second.tc.call('seq_list', {})) as { sequences: Array<{ name: string }> };
  t.same(
    listed.sequences.map((s) => s.name),
    ['bedtime'],
    'the restored sequence is back',
  );
  t.match(await second.tc.call('seq_run', { name: 'bedtime' }), { ok: true }, 'and runs');
});
