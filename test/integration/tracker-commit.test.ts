/**
 * A good plugin change through the built daemon (issue 10): `homeagentctl plugins install` is
 * recorded as a change set (actor cli, its files with their hashes), tried for the trial window
 * and committed; an upgrade records only the file that changed; both survive a restart of the
 * daemon as committed, with the plugin running; and the committed upgrade is the last good state a
 * later bad change rolls back to. Nothing outside the plugins tree is touched on the way.
 */
import { join } from 'node:path';
import t, { type Test } from 'tap';
import {
  ControlClient,
  FAULT_DEFAULTS,
  faultDaemonEnv,
  fixtureFiles,
  listChanges,
  newestChangeId,
  runFaultCase,
  sha256,
  showChange,
  stampFiles,
  treeDigest,
  waitForDecision,
  waitForNewChange,
  waitForPlugin,
  writeFixtureArchive,
  writeOutsideSentinels,
} from '../fixtures/fault-plugins/harness.mjs';
import { tempDir } from '../helpers/daemon.js';
import { type InProcessDaemonHandle as DaemonHandle, startDaemon } from '../helpers/in-process-daemon.js';

const HEARTBEAT_MS = FAULT_DEFAULTS.heartbeatMs;
const DECISION_TIMEOUT_MS = 4 * HEARTBEAT_MS + 15_000;
const PLUGIN = 'porch';

async function connect(t: Test, daemon: DaemonHandle): Promise<ControlClient> {
  await daemon.waitForReady(60_000);
  const client = await ControlClient.connect(daemon.socketPath);
  t.teardown(() => client.close());
  return client;
}

/** Installs with homeagentctl (as a person would) and answers the decided change set. */
async function installWithCtl(t: Test, daemon: DaemonHandle, client: ControlClient, archive: string) {
  const afterId = await newestChangeId(client);
  const installed = await daemon.ctl(['plugins', 'install', archive, '--json']);
  t.equal(installed.code, 0, `homeagentctl plugins install exits 0 (${installed.stderr.trim() || 'no stderr'})`);
  const recorded = await waitForNewChange(client, afterId, 'plugins.install', DECISION_TIMEOUT_MS);
  t.match(recorded, { actor: 'cli', tool: 'plugins.install' }, `the install is recorded as change set #${recorded.id} by the cli`);
  return waitForDecision(client, recorded.id, DECISION_TIMEOUT_MS);
}

const fileRow = (path: string, op: string, before: string | null, after: string | null) => ({
  path,
  op,
  sha256_before: before === null ? null : sha256(before),
  sha256_after: after === null ? null : sha256(after),
});

t.test('a good change is committed and survives a restart', async (t) => {
  const root = tempDir(t, 'ha-commit-');
  const dataDir = join(root, 'data');
  const archives = join(root, 'archives');
  const pluginsDir = join(dataDir, 'plugins');
  const sentinels = writeOutsideSentinels(dataDir, join(root, 'sibling'), [PLUGIN]);
  const stamps = stampFiles(sentinels);
  const env = faultDaemonEnv();

  const first = await startDaemon(t, { dataDir, env });
  let client = await connect(t, first);

  const v1 = fixtureFiles('good', PLUGIN, '1.0.0');
  const installed = await installWithCtl(t, first, client, await writeFixtureArchive(archives, 'good', PLUGIN, '1.0.0'));
  t.equal(installed.status, 'committed', 'a new good plugin is committed');
  t.same(
    installed.files.map((f) => ({ path: f.path, op: f.op, sha256_before: f.sha256_before, sha256_after: f.sha256_after })),
    [
      fileRow(`${PLUGIN}/index.mjs`, 'add', null, v1['index.mjs'] as string),
      fileRow(`${PLUGIN}/plugin.json`, 'add', null, v1['plugin.json'] as string),
    ],
    'its change set lists both files as added, with their hashes',
  );
  t.same(installed.plugins, [PLUGIN], 'and names the plugin');
  // Two healthy rounds that began after the change started, one interval apart.
  const trialMs = Date.parse(installed.decided_at ?? '') - Date.parse(installed.started_at);
  t.ok(trialMs >= HEARTBEAT_MS, `it was on trial for at least one interval before the commit (${trialMs} ms)`);
  t.equal(installed.decided_by, 'supervisor', 'the supervisor committed it');
  t.match(await waitForPlugin(client, PLUGIN, '1.0.0', 10_000), { ok: true }, 'the plugin runs and is healthy');

  const v2 = fixtureFiles('good', PLUGIN, '2.0.0');
  const upgraded = await installWithCtl(t, first, client, await writeFixtureArchive(archives, 'good', PLUGIN, '2.0.0'));
  t.equal(upgraded.status, 'committed', 'a good upgrade is committed');
  t.same(
    upgraded.files.map((f) => ({ path: f.path, op: f.op, sha256_before: f.sha256_before, sha256_after: f.sha256_after })),
    [fileRow(`${PLUGIN}/plugin.json`, 'modify', v1['plugin.json'] as string, v2['plugin.json'] as string)],
    'the upgrade records only the file that changed',
  );
  t.match(await waitForPlugin(client, PLUGIN, '2.0.0', 10_000), { ok: true }, 'version 2 runs');
  t.match(await client.call('changes.status'), { trial: null, pending_files: 0 }, 'nothing is pending');
  const committedTree = treeDigest(pluginsDir);
  t.same(committedTree[`${PLUGIN}/plugin.json`], sha256(v2['plugin.json'] as string), 'the tree holds version 2');

  first.kill('SIGTERM');
  t.match(await first.waitForExit(), { code: 0 }, 'the daemon stops cleanly');

  const second = await startDaemon(t, { dataDir, env });
  client = await connect(t, second);
  t.same(treeDigest(pluginsDir), committedTree, 'after the restart the tree is unchanged');
  t.equal((await showChange(client, installed.id)).status, 'committed', 'the install is still committed');
  t.equal((await showChange(client, upgraded.id)).status, 'committed', 'the upgrade is still committed');
  t.same(
    (await listChanges(client)).filter((c) => c.status !== 'committed'),
    [],
    'the restart rolled nothing back and put nothing on trial',
  );
  t.match(await client.call('changes.status'), { trial: null, pending_files: 0 }, 'nothing is pending after the restart');
  t.match(await waitForPlugin(client, PLUGIN, '2.0.0', 10_000), { ok: true }, 'version 2 runs after the restart');

  const listed = await second.ctl(['changes', 'list', '--json']);
  t.equal(listed.code, 0, 'homeagentctl changes list exits 0');
  t.match(
    listed.json(),
    {
      status: { backend: 'userspace', trial: null },
      changes: [
        { id: upgraded.id, status: 'committed' },
        { id: installed.id, status: 'committed' },
      ],
    },
    'and lists both change sets as committed, newest first, on the user-space back end',
  );

  // The committed upgrade is the last good state: a bad upgrade now goes back to 2.0.0, not 1.0.0.
  const bad = await runFaultCase({
    client,
    dataDir,
    archiveDir: archives,
    kind: 'fails_health',
    form: 'upgrade',
    name: PLUGIN,
    goodVersion: '2.0.0',
    heartbeatMs: HEARTBEAT_MS,
  });
  t.ok(bad.restored, `a bad upgrade after the restart is rolled back to the committed version 2 (${bad.problem ?? 'ok'})`);
  t.same(stampFiles(sentinels), stamps, 'no file outside the plugins tree changed');
});
