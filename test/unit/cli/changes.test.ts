// `homeagentctl changes …` (src/cli/changes.ts): argument parsing, readable output, and the commands
// end to end over the real cli plugin's socket to change-tracker methods answering the contract's
// shapes (test/helpers/fake-change-tracker.ts), and the compiled homeagentctl's exit codes.
process.env.TZ = 'UTC';

import { existsSync } from 'node:fs';
import { join } from 'node:path';
import t, { type Test } from 'tap';
import { CliPlugin } from '../../../plugins/cli/index.js';
import {
  type ChangesCommand,
  ChangesUsageError,
  formatChangeDiff,
  formatChangeList,
  formatChangeSet,
  formatCommit,
  formatRollback,
  formatTrackerStatus,
  parseChangesCommand,
  runChanges,
} from '../../../src/cli/changes.js';
import type { CommandClient } from '../../../src/cli/command-client.js';
import { RpcClient } from '../../../src/cli/rpc-client.js';
import { ControlRegistry } from '../../../src/plugin/control-registry.js';
import type { TrackerStatus } from '../../../src/tracker/change-types.js';
import { REPO_ROOT, runCtl } from '../../helpers/daemon.js';
import {
  type FakeTracker,
  type FakeTrackerOptions,
  fakeChangeTracker,
  sampleChangeSets,
  TRACKER_ROOT,
} from '../../helpers/fake-change-tracker.js';
import { asContext, createTestPluginContext } from '../../helpers/plugin-context.js';
import { tempDir } from '../fixtures/support.js';

t.test('parseChangesCommand reads each command and refuses what does not fit', async (t) => {
  const parse = parseChangesCommand;
  t.same(parse([], {}), { command: 'list' }, 'no sub-command lists');
  t.same(parse(['list'], { status: 'trial', limit: '5' }), { command: 'list', status: 'trial', limit: 5 });
  t.same(parse(['list'], { status: 'rolled_back' }), { command: 'list', status: 'rolled_back' });
  t.same(parse(['list'], { limit: '1000' }), { command: 'list', limit: 1000 });
  for (const sub of ['show', 'diff', 'rollback', 'commit'] as const) t.same(parse([sub, '12'], {}), { command: sub, id: 12 });

  const refused: Array<[string[], Record<string, string>, RegExp]> = [
    [['undo', '3'], {}, /unknown changes command undo; use list, show, diff, rollback or commit/],
    [['list', '3'], {}, /changes list takes no arguments/],
    [['list'], { status: 'pending' }, /--status must be trial, committed, rolled_back, not "pending"/],
    [['list'], { limit: '0' }, /--limit must be a positive whole number up to 1000, not "0"/],
    [['list'], { limit: '1001' }, /--limit must be a positive whole number up to 1000/],
    [['list'], { limit: 'ten' }, /--limit must be a positive whole number/],
    [['list'], { limit: '2.5' }, /--limit/],
    [['show'], {}, /changes show needs exactly one change ID/],
    [['diff', '1', '2'], {}, /changes diff needs exactly one change ID/],
    [['rollback', 'abc'], {}, /the change ID must be a positive whole number, not "abc"/],
    [['commit', '-3'], {}, /the change ID must be a positive whole number, not "-3"/],
    [['commit', '0'], {}, /positive whole number, not "0"/],
    [['show', '99999999999999999999'], {}, /positive whole number/],
    [['show', '3'], { status: 'trial' }, /--status does not belong to changes show/],
    [['rollback', '3'], { limit: '2' }, /--limit does not belong to changes rollback/],
  ];
  for (const [positionals, flags, message] of refused) {
    t.throws(
      () => parse(positionals, flags),
      { constructor: ChangesUsageError, message },
      `${positionals.join(' ')} ${JSON.stringify(flags)}`,
    );
  }
});

const STATUS: TrackerStatus = {
  backend: 'userspace',
  root: TRACKER_ROOT,
  state_dir: '/var/lib/homeagent/tracker',
  pending_files: 3,
  trial: { change_set_ids: [3], started_at: '2026-01-05T09:00:04.000Z', plugins: ['weather'], activation_errors: [] },
};

t.test('formatTrackerStatus: back end, pending files, the trial and its start errors; off says so', async (t) => {
  t.equal(
    formatTrackerStatus(STATUS),
    [
      `change tracker: userspace on ${TRACKER_ROOT}, 3 files differing from the last good state`,
      'trial since 2026-01-05 09:00:04: change 3; plugins weather',
    ].join('\n'),
  );
  t.equal(
    formatTrackerStatus({
      ...STATUS,
      pending_files: 1,
      trial: {
        ...(STATUS.trial as NonNullable<TrackerStatus['trial']>),
        change_set_ids: [3, 4],
        activation_errors: [{ plugin: 'weather', error: 'SyntaxError: x' }],
      },
    }),
    [
      `change tracker: userspace on ${TRACKER_ROOT}, 1 file differing from the last good state`,
      'trial since 2026-01-05 09:00:04: changes 3, 4; plugins weather',
      '  weather failed to start: SyntaxError: x',
    ].join('\n'),
  );
  t.match(formatTrackerStatus({ ...STATUS, pending_files: 0, trial: null }), /0 files differing.*\nno trial under way$/);
  t.equal(
    formatTrackerStatus({ ...STATUS, backend: 'off', trial: null }),
    'change tracker: off (core.tracker.backend: off); plugin changes are neither recorded nor rolled back',
  );
});

t.test('formatChangeList: a table newest first under the tracker line; an empty list says so', async (t) => {
  const rows = [...sampleChangeSets()].reverse().map(({ files, ...rest }) => ({ ...rest, file_count: files.length }));
  t.equal(
    formatChangeList(STATUS, rows),
    [
      `change tracker: userspace on ${TRACKER_ROOT}, 3 files differing from the last good state`,
      'trial since 2026-01-05 09:00:04: change 3; plugins weather',
      'ID  STATUS       WHEN                 ACTOR        TOOL             PLUGINS  FILES',
      '3   trial        2026-01-05 09:00:00  agent        cmd_run          weather  3',
      '2   rolled_back  2026-01-05 08:00:00  webui:admin  plugins.install  clock    1',
      '1   committed    2026-01-05 07:00:00  agent        files_write      weather  1',
    ].join('\n'),
  );
  t.match(formatChangeList({ ...STATUS, trial: null }, []), /\nno change sets recorded$/);
  t.match(formatChangeList(STATUS, [], 'committed'), /\nno change sets with status committed$/);
});

t.test('formatChangeSet: the header, the decision and one line per file', async (t) => {
  const [committed, rolledBack, trial] = sampleChangeSets();
  t.equal(
    formatChangeSet(trial as NonNullable<typeof trial>),
    [
      'change 3: trial',
      '  by agent through cmd_run (channel webui)',
      '  started 2026-01-05 09:00:00, finished 2026-01-05 09:00:04',
      '  plugins weather',
      '  on trial: not yet part of the last good state',
      '3 files:',
      '  add     weather/extra.js   -        → dddddddd  kept',
      '  modify  weather/index.js   bbbbbbbb → eeeeeeee  kept',
      '  delete  weather/radar.png  ffffffff → -         not kept',
    ].join('\n'),
  );
  t.match(formatChangeSet(committed as NonNullable<typeof committed>), /\n {2}committed 2026-01-05 07:00:31 by supervisor\n1 file:\n/);
  t.match(
    formatChangeSet(rolledBack as NonNullable<typeof rolledBack>),
    /by webui:admin through plugins\.install\n.*\n.*\n {2}rolled back 2026-01-05 08:00:32 by supervisor: plugin:clock failed its health ping 3 times in a row\n/,
  );
  const revert = { ...(committed as NonNullable<typeof committed>), id: 4, status: 'trial' as const, reverts: 1, files: [] };
  t.match(formatChangeSet(revert), /\n {2}reverts change 1\nno files$/);
});

t.test('formatChangeDiff: the unified text, a note per file not shown, and an empty diff said in words', async (t) => {
  const diff = {
    id: 3,
    files: [
      { path: 'weather/index.js', op: 'modify' as const, diff: '--- a/weather/index.js\n+++ b/weather/index.js\n-x\n+y\n', note: null },
      { path: 'weather/radar.png', op: 'delete' as const, diff: null, note: 'binary file' },
    ],
    text: '--- a/weather/index.js\n+++ b/weather/index.js\n-x\n+y\n',
  };
  t.equal(formatChangeDiff(diff), '--- a/weather/index.js\n+++ b/weather/index.js\n-x\n+y\n# delete weather/radar.png: binary file');
  t.equal(formatChangeDiff({ id: 5, files: [], text: '' }), 'change 5 has no differences to show');
});

t.test('formatRollback and formatCommit: what happened in a sentence or two', async (t) => {
  const [committed, , trial] = sampleChangeSets();
  const trialSet = trial as NonNullable<typeof trial>;
  t.equal(formatRollback(3, [trialSet]), 'rolled back change 3: 3 files restored to the last good state. Plugins reloaded: weather.');
  const second = { ...trialSet, id: 4, plugins: ['clock'], files: [] };
  t.equal(
    formatRollback(3, [trialSet, second]),
    'rolled back change 3 together with change 4 on trial with it: 3 files restored to the last good state. Plugins reloaded: clock, weather.',
  );
  const revert = { ...(committed as NonNullable<typeof committed>), id: 4, reverts: 1, status: 'trial' as const };
  t.equal(
    formatRollback(1, [revert]),
    'change 1 was already committed, so change 4 was made to revert it (1 file, plugins weather); it is on trial like any change.',
  );
  t.equal(formatRollback(7, []), 'change 7: nothing was rolled back');
  t.equal(formatCommit(3, [trialSet, second]), 'committed changes 3, 4: plugins clock, weather are now part of the last good state.');
  t.equal(formatCommit(3, []), 'change 3: nothing was committed');
});

interface Served {
  tracker: FakeTracker;
  dataDir: string;
  connect: () => Promise<CommandClient>;
}

/** The fake tracker's methods on a real ControlRegistry, served by the real cli plugin on a Unix socket. */
async function serve(t: Test, options: FakeTrackerOptions = {}): Promise<Served> {
  const control = new ControlRegistry();
  const tracker = fakeChangeTracker(
    (name, params, handler) => control.register({ name, description: `test double of ${name}`, params, handler }),
    options,
  );
  const dataDir = tempDir(t);
  const test = createTestPluginContext({
    name: 'cli',
    dataDir,
    settings: { socket_path: '', socket_mode: '660', max_frame_bytes: 1048576, max_connections: 4, idle_timeout_ms: 60_000 },
  });
  const plugin = new CliPlugin(asContext({ ...test.context, control }));
  await plugin.start();
  t.teardown(async () => {
    await plugin.stop();
    test.close();
  });
  const socket = join(dataDir, 'run', 'homeagent.sock');
  return { tracker, dataDir, connect: () => RpcClient.connect(socket, 5000) };
}

async function run(s: Served, command: ChangesCommand, json = false) {
  let out = '';
  const code = await runChanges(command, {
    connect: s.connect,
    json,
    timeoutMs: 10_000,
    stdout: { write: (text: string) => (out += text) },
  });
  return { code, out };
}

t.test('changes over the socket: list, show, diff, commit and rollback; readable text and --json', async (t) => {
  const s = await serve(t);
  const list = await run(s, { command: 'list' });
  t.equal(list.code, 0);
  t.match(
    list.out,
    /^change tracker: userspace on .*\ntrial since .*: change 3; plugins weather\nID +STATUS .*\n3 +trial .*\n2 +rolled_back .*\n1 +committed .*\n$/,
  );
  const filtered = await run(s, { command: 'list', status: 'committed', limit: 1 });
  t.match(filtered.out, /\n1 +committed +2026-01-05 07:00:00 +agent +files_write +weather +1\n$/);
  t.notMatch(filtered.out, /rolled_back/);
  const json = JSON.parse((await run(s, { command: 'list', limit: 2 }, true)).out);
  t.match(json, { status: { backend: 'userspace', pending_files: 3, trial: { change_set_ids: [3] } }, changes: [{ id: 3 }, { id: 2 }] });
  t.equal(json.changes.length, 2, '--limit reaches the daemon');

  const show = await run(s, { command: 'show', id: 3 });
  t.match(show.out, /^change 3: trial\n[\s\S]*\n {2}delete +weather\/radar\.png +ffffffff → - +not kept\n$/);
  t.match(JSON.parse((await run(s, { command: 'show', id: 3 }, true)).out), { id: 3, files: [{ path: 'weather/extra.js', kept: true }] });
  const diff = await run(s, { command: 'diff', id: 3 });
  t.match(
    diff.out,
    /^--- \/dev\/null\n\+\+\+ b\/weather\/extra\.js\n[\s\S]*\+export const version = 3;\n# delete weather\/radar\.png: contents not kept/,
  );

  await t.rejects(run(s, { command: 'show', id: 42 }), { code: 'HA_ERR_CHANGE_NOT_FOUND', message: /no change set 42/ });
  await t.rejects(run(s, { command: 'commit', id: 1 }), { code: 'HA_ERR_CHANGE_STATE', message: /committed, not on trial/ });
  t.same(
    s.tracker.sets.map((c) => c.status),
    ['committed', 'rolled_back', 'trial'],
    'refused commands changed nothing',
  );

  const commit = await run(s, { command: 'commit', id: 3 });
  t.same(commit, { code: 0, out: 'committed change 3: plugins weather are now part of the last good state.\n' });
  t.equal(s.tracker.sets[2]?.decided_by, 'cli', 'the socket forwards the cli actor');
  const revert = await run(s, { command: 'rollback', id: 1 });
  t.same(revert, {
    code: 0,
    out: 'change 1 was already committed, so change 4 was made to revert it (1 file, plugins weather); it is on trial like any change.\n',
  });
  const rollback = await run(s, { command: 'rollback', id: 4 }, true);
  t.match(JSON.parse(rollback.out), [{ id: 4, status: 'rolled_back', reverts: 1, decided_by: 'cli' }]);
  await t.rejects(run(s, { command: 'rollback', id: 4 }), { code: 'HA_ERR_CHANGE_STATE', message: /already rolled back/ });
});

t.test('changes with the tracker off: the status says so, the other methods refuse with HA_ERR_TRACKER_OFF', async (t) => {
  const s = await serve(t, { off: true });
  await t.rejects(run(s, { command: 'list' }), { code: 'HA_ERR_TRACKER_OFF', message: /core\.tracker\.backend: off/ });
  await t.rejects(run(s, { command: 'rollback', id: 3 }), { code: 'HA_ERR_TRACKER_OFF' });
  t.equal(s.tracker.sets[2]?.status, 'trial', 'nothing was rolled back');
});

// The compiled command line against the same socket: exit codes and usage errors.
const CTL_JS = join(REPO_ROOT, 'dist', 'src', 'cli', 'homeagentctl.js');
const notBuilt = existsSync(CTL_JS) ? false : `${CTL_JS} is missing: run npx tsc -p tsconfig.build.json first`;

t.test('homeagentctl changes: exit 0, 1 on errors, 64 on usage errors before any socket is tried', { skip: notBuilt }, async (t) => {
  const s = await serve(t);
  const env = { env: { TZ: 'UTC' } };
  const list = await runCtl(s.dataDir, ['changes', '--status', 'trial'], env);
  t.equal(list.code, 0, list.stderr);
  t.match(list.stdout, /\n3 +trial +2026-01-05 09:00:00 +agent +cmd_run +weather +3\n$/);
  const missing = await runCtl(s.dataDir, ['changes', 'show', '42'], env);
  t.equal(missing.code, 1);
  t.match(missing.stderr, /no change set 42 .*\(HA_ERR_CHANGE_NOT_FOUND\)/);
  const missingJson = await runCtl(s.dataDir, ['changes', 'diff', '42', '--json'], env);
  t.equal(missingJson.code, 1);
  t.match(missingJson.json(), { ok: false, error: { code: 'HA_ERR_CHANGE_NOT_FOUND' } });
  const rollback = await runCtl(s.dataDir, ['changes', 'rollback', '3'], env);
  t.equal(rollback.code, 0);
  t.equal(rollback.stdout, 'rolled back change 3: 3 files restored to the last good state. Plugins reloaded: weather.\n');
  const again = await runCtl(s.dataDir, ['changes', 'commit', '3'], env);
  t.equal(again.code, 1, 'a rolled back change cannot be committed');
  t.match(again.stderr, /HA_ERR_CHANGE_STATE/);

  for (const [args, message] of [
    [['changes', 'rollback'], /changes rollback needs exactly one change ID/],
    [['changes', 'show', 'x1'], /the change ID must be a positive whole number/],
    [['changes', '--status', 'done'], /--status must be trial, committed, rolled_back/],
    [['status', '--status', 'trial'], /--status belongs to changes/],
    [['changes', 'diff', '3', '--limit', '3'], /--limit does not belong to changes diff/],
  ] as const) {
    const r = await runCtl(s.dataDir, [...args]);
    t.equal(r.code, 64, args.join(' '));
    t.match(r.stderr, message);
  }
  t.same(
    s.tracker.sets.map((c) => c.status),
    ['committed', 'rolled_back', 'rolled_back'],
    'usage errors changed nothing',
  );
  const help = await runCtl(s.dataDir, ['--help']);
  t.match(help.stdout, /changes \[list\] \[--status trial\|committed\|rolled_back\] \[--limit N\]/);
  t.match(help.stdout, /changes rollback\|commit ID/);
});
