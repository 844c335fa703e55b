// The change tracker service (src/tracker/change-tracker.ts) on the real UserspaceTracker and a real
// SQLite state database: recording around tracked calls, the trial marker, commit and rollback of a
// trial, and what a start after a stop or crash does.
import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, rmSync, statSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import t from 'tap';
import { EventBus } from '../../../src/events/event-bus.js';
import { isHomeAgentError } from '../../../src/shared/errors.js';
import { ChangeTracker } from '../../../src/tracker/change-tracker.js';
import { UserspaceTracker } from '../../../src/tracker/userspace-tracker.js';
import { deferred } from '../../helpers/deferred.js';
import { silentLogs } from '../fixtures/support.js';
import { startTracker, stateLines } from './change-tracker-fixture.js';

const sha = (text: string) => createHash('sha256').update(text).digest('hex');
const origin = { actor: 'agent', tool: 'files_write', channel: 'speaker', task_id: 'task-1' };
const TREE = { weather: { 'index.js': 'v1\n', 'old.txt': 'old' }, lights: { 'main.js': 'lights' } };

t.test('a tracked call that adds, modifies and deletes files is recorded as one change set on trial and activated', async (t) => {
  const s = await startTracker(t, { tree: TREE });
  const result = await s.tracker.track(origin, async () => {
    writeFileSync(join(s.root, 'weather/index.js'), 'v2\n');
    rmSync(join(s.root, 'weather/old.txt'));
    mkdirSync(join(s.root, 'clock'));
    writeFileSync(join(s.root, 'clock/main.js'), 'tick');
    return 'tool result';
  });
  t.equal(result, 'tool result', 'the call answers as it would untracked');
  const set = s.tracker.show(1);
  t.match(set, {
    id: 1,
    actor: 'agent',
    tool: 'files_write',
    channel: 'speaker',
    status: 'trial',
    plugins: ['clock', 'weather'],
    reverts: null,
  });
  t.same(set.files, [
    { path: 'clock/main.js', op: 'add', sha256_before: null, sha256_after: sha('tick'), kept: true },
    { path: 'weather/index.js', op: 'modify', sha256_before: sha('v1\n'), sha256_after: sha('v2\n'), kept: true },
    { path: 'weather/old.txt', op: 'delete', sha256_before: sha('old'), sha256_after: null, kept: true },
  ]);
  t.match(s.tracker.trial(), { change_set_ids: [1], started_at: set.started_at, plugins: ['clock', 'weather'], activation_errors: [] });
  t.same(stateLines(s), ['1 trial by agent']);
  t.same(s.audits, [
    { actor: 'agent', action: 'changes.record', change_set: 1, tool: 'files_write', files: 3, plugins: ['clock', 'weather'] },
  ]);
  t.same(s.host.calls, [{ call: 'refresh', dirs: ['clock', 'weather'], actor: 'agent' }], 'only the plugins it touched are reloaded');
  t.ok(existsSync(join(s.stateDir, 'trial.json')), 'the marker stays while the change is on trial');
  t.equal((await s.tracker.status()).pending_files, 3);
  t.same(await s.tracker.pendingPlugins(), ['clock', 'weather']);
});

t.test('a call that touches nothing records nothing and leaves no marker behind', async (t) => {
  const s = await startTracker(t, { tree: TREE });
  t.equal(await s.tracker.track(origin, async () => 42), 42);
  t.same(s.tracker.list(), []);
  t.equal(s.tracker.trial(), null);
  t.same(s.host.calls, []);
  t.same(s.states, []);
  t.notOk(existsSync(join(s.stateDir, 'trial.json')));
});

t.test('the trial marker is on disk before the call runs', async (t) => {
  const s = await startTracker(t, { tree: TREE });
  let seen: unknown;
  await s.tracker.track(origin, async () => {
    seen = JSON.parse(readFileSync(join(s.stateDir, 'trial.json'), 'utf8'));
  });
  t.match(seen, { phase: 'trial', change_set_ids: [] });
});

t.test("the call's error is rethrown after its change was recorded", async (t) => {
  const s = await startTracker(t, { tree: TREE });
  await t.rejects(
    s.tracker.track(origin, async () => {
      writeFileSync(join(s.root, 'weather/index.js'), 'half written');
      throw new Error('disk full');
    }),
    { message: 'disk full' },
  );
  t.same(
    s.tracker.list().map((c) => [c.id, c.status, c.file_count]),
    [[1, 'trial', 1]],
  );
});

t.test('activate: false records the change without reloading plugins', async (t) => {
  const s = await startTracker(t, { tree: TREE });
  await s.tracker.track({ actor: 'cli', tool: 'plugins.uninstall' }, async () => rmSync(join(s.root, 'lights'), { recursive: true }), {
    activate: false,
  });
  t.same(s.host.calls, []);
  t.same(s.tracker.show(1).plugins, ['lights']);
});

t.test('a plugin that fails to load after a change is noted on the trial', async (t) => {
  const s = await startTracker(t, { tree: TREE });
  s.host.failing.set('weather', 'SyntaxError: Unexpected token');
  await s.tracker.track(origin, async () => writeFileSync(join(s.root, 'weather/index.js'), 'v2('));
  t.same(s.tracker.trial()?.activation_errors, [{ plugin: 'weather', error: 'SyntaxError: Unexpected token' }]);
});

t.test('files changed outside any tracked call are recorded as actor outside before the next call', async (t) => {
  const s = await startTracker(t, { tree: TREE });
  writeFileSync(join(s.root, 'lights/main.js'), 'edited by hand');
  await s.tracker.track(origin, async () => writeFileSync(join(s.root, 'weather/index.js'), 'v2\n'));
  t.same(
    s.tracker.list().map((c) => `${c.id} ${c.actor} ${c.tool} ${c.plugins.join(',')}`),
    ['2 agent files_write weather', '1 outside outside lights'],
  );
  t.same(s.tracker.trial()?.change_set_ids, [1, 2]);
  t.same(s.host.calls, [
    { call: 'refresh', dirs: ['lights'], actor: 'outside' },
    { call: 'refresh', dirs: ['weather'], actor: 'agent' },
  ]);
});

t.test('tracked calls run one at a time, each credited with its own files', async (t) => {
  const s = await startTracker(t, { tree: TREE });
  const gate = deferred();
  const firstRuns = deferred();
  const order: string[] = [];
  const first = s.tracker.track({ actor: 'agent', tool: 'files_write' }, async () => {
    order.push('first runs');
    firstRuns.resolve();
    writeFileSync(join(s.root, 'weather/index.js'), 'first');
    await gate.promise;
    order.push('first ends');
  });
  const second = s.tracker.track({ actor: 'cli', tool: 'cmd_run' }, async () => {
    order.push('second runs');
    writeFileSync(join(s.root, 'lights/main.js'), 'second');
  });
  await firstRuns.promise;
  await new Promise((resolve) => setImmediate(resolve));
  t.same(order, ['first runs'], 'the second call waits');
  gate.resolve();
  await Promise.all([first, second]);
  t.same(order, ['first runs', 'first ends', 'second runs']);
  t.same(
    s.tracker.list().map((c) => `${c.actor} ${c.plugins.join(',')}`),
    ['cli lights', 'agent weather'],
  );
});

t.test('commitTrial makes the trial the last good state and records the decision', async (t) => {
  const s = await startTracker(t, { tree: TREE });
  await s.tracker.commitTrial('supervisor');
  t.same(s.states, [], 'no trial: nothing to commit');
  await s.tracker.track(origin, async () => writeFileSync(join(s.root, 'weather/index.js'), 'v2\n'));
  await s.tracker.track(origin, async () => writeFileSync(join(s.root, 'lights/main.js'), 'l2'));
  s.host.calls.length = 0;
  await s.clock.advance(60_000);
  await s.tracker.commitTrial('supervisor');
  t.equal(s.read('weather/index.js'), 'v2\n', 'the files stay');
  t.equal((await s.tracker.status()).pending_files, 0, 'nothing differs from the good state now');
  t.equal(s.tracker.trial(), null);
  t.notOk(existsSync(join(s.stateDir, 'trial.json')));
  t.match(s.tracker.show(1), { status: 'committed', decided_by: 'supervisor', decided_at: '2026-01-05T08:01:00.000Z', reason: null });
  t.match(s.tracker.show(2), { status: 'committed' });
  t.same(stateLines(s), ['1 trial by agent', '2 trial by agent', '1 committed by supervisor', '2 committed by supervisor']);
  t.match(s.audits.at(-1), { actor: 'supervisor', action: 'changes.commit_trial', change_sets: [1, 2], files: 2 });
  t.same(s.host.calls, [], 'the user-space back end commits without stopping plugins');
});

t.test('rollbackPending restores the last good state, marks the trial rolled back and reloads the plugins', async (t) => {
  const s = await startTracker(t, { tree: TREE });
  await s.tracker.track(origin, async () => {
    writeFileSync(join(s.root, 'weather/index.js'), 'broken');
    mkdirSync(join(s.root, 'clock'));
    writeFileSync(join(s.root, 'clock/main.js'), 'tick');
  });
  s.host.calls.length = 0;
  const undone = await s.tracker.rollbackPending('supervisor', 'plugin weather failed its health check');
  t.same(
    undone.map((c) => [c.id, c.status, c.decided_by, c.reason]),
    [[1, 'rolled_back', 'supervisor', 'plugin weather failed its health check']],
  );
  t.equal(s.read('weather/index.js'), 'v1\n');
  t.notOk(existsSync(join(s.root, 'clock')), 'the added plugin is gone');
  t.equal(s.tracker.trial(), null);
  t.notOk(existsSync(join(s.stateDir, 'trial.json')));
  t.same(s.host.calls, [{ call: 'refresh', dirs: ['clock', 'weather'], actor: 'supervisor' }]);
  t.same(stateLines(s), ['1 trial by agent', '1 rolled_back by supervisor']);
  t.equal(s.states[1]?.reason, 'plugin weather failed its health check');
  t.match(s.audits.at(-1), { actor: 'supervisor', action: 'changes.rollback_pending', change_sets: [1], files: 2 });
  t.ok(s.logs.records().some((r) => r.level === 'warn' && /rolled the plugins back/.test(String(r.msg))));
});

t.test('rollbackPending without a trial restores files changed by hand and records nothing', async (t) => {
  const s = await startTracker(t, { tree: TREE });
  writeFileSync(join(s.root, 'lights/main.js'), 'edited by hand');
  t.same(await s.tracker.rollbackPending('cli', 'undo'), []);
  t.equal(s.read('lights/main.js'), 'lights');
  t.same(s.tracker.list(), []);
  t.same(s.host.calls, [{ call: 'refresh', dirs: ['lights'], actor: 'cli' }]);
});

t.test('on the overlay back end plugins are stopped around a commit or rollback and started again', async (t) => {
  const s = await startTracker(t, { tree: TREE, overlayKind: true });
  s.host.running = ['lights', 'weather'];
  await s.tracker.track(origin, async () => writeFileSync(join(s.root, 'weather/index.js'), 'v2\n'));
  s.host.calls.length = 0;
  await s.tracker.commitTrial('supervisor');
  t.same(s.host.calls, [
    { call: 'stopTracked', actor: 'supervisor' },
    { call: 'refresh', dirs: ['lights', 'weather'], actor: 'supervisor' },
  ]);
  await s.tracker.track(origin, async () => writeFileSync(join(s.root, 'weather/index.js'), 'v3\n'));
  s.host.calls.length = 0;
  await s.tracker.rollbackPending('supervisor', 'unhealthy');
  t.same(s.host.calls, [
    { call: 'stopTracked', actor: 'supervisor' },
    { call: 'refresh', dirs: ['lights', 'weather'], actor: 'supervisor' },
  ]);
  t.equal(s.read('weather/index.js'), 'v2\n', 'back to the committed version');
});

t.test('a crash during a tracked call: the next start rolls the half-made change back before any plugin loads', async (t) => {
  const s = await startTracker(t, { tree: TREE });
  const never = deferred();
  const written = deferred();
  const crashed = s.tracker.track(origin, async () => {
    writeFileSync(join(s.root, 'weather/index.js'), 'half');
    written.resolve();
    await never.promise;
  });
  crashed.catch(() => {});
  t.teardown(() => never.reject(new Error('test over')));
  await written.promise;
  const next = await s.restart();
  t.equal(next.read('weather/index.js'), 'v1\n');
  t.same(next.tracker.startupRollbacks(), [], 'no change set had been recorded yet');
  t.same(next.host.calls, [], 'no plugin is refreshed or stopped at start');
  t.notOk(existsSync(join(s.stateDir, 'trial.json')));
});

t.test('a crash during a trial: the next start rolls it back and keeps the rolled back sets for the announcement', async (t) => {
  const s = await startTracker(t, { tree: TREE, overlayKind: true });
  await s.tracker.track(origin, async () => writeFileSync(join(s.root, 'weather/index.js'), 'v2\n'));
  const next = await s.restart();
  t.equal(next.read('weather/index.js'), 'v1\n');
  t.same(
    next.tracker.startupRollbacks().map((c) => [c.id, c.status, c.decided_by, c.reason, c.channel]),
    [[1, 'rolled_back', 'startup', 'HomeAgent restarted while a change was on trial', 'speaker']],
  );
  t.same(next.host.calls, [], 'neither stopTracked nor refresh: no plugin runs yet');
  t.equal(next.tracker.trial(), null);
  t.same(stateLines(next), ['1 rolled_back by startup']);
});

t.test('a change set on trial in the database is rolled back at start even without the marker', async (t) => {
  const s = await startTracker(t, { tree: TREE });
  await s.tracker.track(origin, async () => writeFileSync(join(s.root, 'weather/index.js'), 'v2\n'));
  rmSync(join(s.stateDir, 'trial.json'));
  const next = await s.restart();
  t.equal(next.read('weather/index.js'), 'v1\n');
  t.same(
    next.tracker.startupRollbacks().map((c) => c.id),
    [1],
  );
});

t.test('files changed while HomeAgent was stopped are put on trial at start, without reloading anything', async (t) => {
  const s = await startTracker(t, { tree: TREE });
  await s.tracker.stop();
  writeFileSync(join(s.root, 'lights/main.js'), 'edited while stopped');
  const next = await s.restart();
  const set = next.tracker.show(1);
  t.match(set, { actor: 'outside', tool: 'found_at_start', status: 'trial', plugins: ['lights'] });
  t.same(set.files, [
    { path: 'lights/main.js', op: 'modify', sha256_before: sha('lights'), sha256_after: sha('edited while stopped'), kept: true },
  ]);
  t.same(next.tracker.trial()?.change_set_ids, [1]);
  t.same(next.host.calls, [], 'the plugins load the files when they start');
  t.ok(existsSync(join(s.stateDir, 'trial.json')));
  t.equal(next.read('lights/main.js'), 'edited while stopped');
  t.match((await next.tracker.diff(1)).text, /-lights\n\\ No newline at end of file\n\+edited while stopped/);
});

t.test('a commit interrupted after the back end committed is finished at start, not announced as a rollback', async (t) => {
  const s = await startTracker(t, { tree: TREE });
  await s.tracker.track(origin, async () => writeFileSync(join(s.root, 'weather/index.js'), 'v2\n'));
  // What commitTrial does up to the stop: the committing marker, then the back end's commit.
  writeFileSync(
    join(s.stateDir, 'trial.json'),
    JSON.stringify({ phase: 'committing', written_at: '', change_set_ids: [1], by: 'supervisor' }),
  );
  await new UserspaceTracker({ root: s.root, stateDir: s.stateDir }).commit();
  const next = await s.restart();
  t.same(next.tracker.startupRollbacks(), []);
  t.match(next.tracker.show(1), { status: 'committed', decided_by: 'supervisor' });
  t.equal(next.read('weather/index.js'), 'v2\n');
  t.notOk(existsSync(join(s.stateDir, 'trial.json')));
});

t.test('a commit interrupted before the back end committed is rolled back at start', async (t) => {
  const s = await startTracker(t, { tree: TREE });
  await s.tracker.track(origin, async () => writeFileSync(join(s.root, 'weather/index.js'), 'v2\n'));
  writeFileSync(
    join(s.stateDir, 'trial.json'),
    JSON.stringify({ phase: 'committing', written_at: '', change_set_ids: [1], by: 'supervisor' }),
  );
  const next = await s.restart();
  t.same(
    next.tracker.startupRollbacks().map((c) => c.status),
    ['rolled_back'],
  );
  t.equal(next.read('weather/index.js'), 'v1\n');
});

t.test('an unreadable marker still counts as a trial', async (t) => {
  const s = await startTracker(t, { tree: TREE });
  await s.tracker.stop();
  writeFileSync(join(s.root, 'weather/index.js'), 'v2\n');
  writeFileSync(join(s.stateDir, 'trial.json'), '{"phase": "tri');
  const next = await s.restart();
  t.equal(next.read('weather/index.js'), 'v1\n');
});

t.test('rolling back a committed change records a new change that restores its files', async (t) => {
  const s = await startTracker(t, { tree: TREE });
  await s.tracker.track(origin, async () => {
    writeFileSync(join(s.root, 'weather/index.js'), 'v2\n');
    rmSync(join(s.root, 'weather/old.txt'));
    mkdirSync(join(s.root, 'clock/lib'), { recursive: true });
    writeFileSync(join(s.root, 'clock/lib/main.js'), 'tick');
  });
  await s.tracker.commitTrial('supervisor');
  s.host.calls.length = 0;
  const [reverting] = await s.tracker.rollback(1, 'cli');
  t.match(reverting, { id: 2, actor: 'cli', tool: 'changes.rollback', status: 'trial', reverts: 1, plugins: ['clock', 'weather'] });
  t.same(
    reverting?.files.map((f) => `${f.op} ${f.path}`),
    ['delete clock/lib/main.js', 'modify weather/index.js', 'add weather/old.txt'],
  );
  t.equal(s.read('weather/index.js'), 'v1\n');
  t.equal(s.read('weather/old.txt'), 'old');
  t.notOk(existsSync(join(s.root, 'clock')), 'folders the change created are removed with its files');
  t.match(s.tracker.show(1), { status: 'committed' }, 'the reverted change stays in the history as it was');
  t.same(s.host.calls, [{ call: 'refresh', dirs: ['clock', 'weather'], actor: 'cli' }], 'activated like any change');
  t.match(s.audits.at(-1), { actor: 'cli', action: 'changes.revert', change_set: 1, reverting_change_set: 2 });
});

t.test('rolling back a committed change is refused when a later change touched its files', async (t) => {
  const s = await startTracker(t, { tree: TREE });
  await s.tracker.track(origin, async () => writeFileSync(join(s.root, 'weather/index.js'), 'v2\n'));
  await s.tracker.commitTrial('supervisor');
  await s.tracker.track(origin, async () => writeFileSync(join(s.root, 'weather/index.js'), 'v3\n'));
  const before = s.tracker.list();
  await t.rejects(s.tracker.rollback(1, 'cli'), {
    code: 'HA_ERR_CHANGE_STATE',
    message: 'change set 1 cannot be rolled back: weather/index.js changed since (by a later change); roll that change back first',
  });
  t.equal(s.read('weather/index.js'), 'v3\n', 'files untouched');
  t.same(s.tracker.list(), before, 'nothing recorded');
});

t.test('rolling back a committed change whose contents were not kept is refused', async (t) => {
  const s = await startTracker(t, { tree: TREE, settings: { max_kept_file_bytes: 4 } });
  await s.tracker.track(origin, async () => writeFileSync(join(s.root, 'weather/index.js'), 'much longer than four bytes'));
  t.equal(s.tracker.show(1).files[0]?.kept, false);
  await s.tracker.commitTrial('supervisor');
  await t.rejects(s.tracker.rollback(1, 'cli'), { code: 'HA_ERR_CHANGE_STATE', message: /contents not kept for weather\/index\.js/ });
  t.equal(s.read('weather/index.js'), 'much longer than four bytes');
});

t.test('commit and rollback refuse change sets in the wrong state, naming it', async (t) => {
  const s = await startTracker(t, { tree: TREE });
  await s.tracker.track(origin, async () => writeFileSync(join(s.root, 'weather/index.js'), 'v2\n'));
  await s.tracker.rollbackPending('supervisor', 'bad');
  await t.rejects(s.tracker.commit(1, 'cli'), {
    code: 'HA_ERR_CHANGE_STATE',
    message: /^change set 1 is rolled back \(2026-01-05T08:00:00.000Z by supervisor\); only a change on trial can be committed$/,
  });
  await t.rejects(s.tracker.rollback(1, 'cli'), { code: 'HA_ERR_CHANGE_STATE', message: /change set 1 is rolled back .* already/ });
  await t.rejects(s.tracker.rollback(7, 'cli'), { code: 'HA_ERR_CHANGE_NOT_FOUND', message: /no change set 7/ });
  t.match(s.tracker.show(1), { status: 'rolled_back', decided_by: 'supervisor' }, 'unchanged');
});

t.test('commit and rollback by id act on the whole trial', async (t) => {
  const s = await startTracker(t, { tree: TREE });
  await s.tracker.track(origin, async () => writeFileSync(join(s.root, 'weather/index.js'), 'v2\n'));
  await s.tracker.track(origin, async () => writeFileSync(join(s.root, 'lights/main.js'), 'l2'));
  t.same(
    (await s.tracker.commit(1, 'cli')).map((c) => `${c.id} ${c.status} ${c.decided_by}`),
    ['1 committed cli', '2 committed cli'],
  );
  await s.tracker.track(origin, async () => writeFileSync(join(s.root, 'lights/main.js'), 'l3'));
  t.same(
    (await s.tracker.rollback(3, 'cli')).map((c) => `${c.id} ${c.status} ${c.reason}`),
    ['3 rolled_back rolled back by cli'],
  );
  t.equal(s.read('lights/main.js'), 'l2');
});

t.test('a manual commit includes files changed by hand meanwhile; the supervisor waits for them to be tried', async (t) => {
  const s = await startTracker(t, { tree: TREE });
  await s.tracker.track(origin, async () => writeFileSync(join(s.root, 'weather/index.js'), 'v2\n'));
  writeFileSync(join(s.root, 'lights/main.js'), 'by hand');
  await s.tracker.commitTrial('supervisor');
  t.same(s.tracker.trial()?.change_set_ids, [1, 2], 'postponed: the hand edit went on trial');
  t.match(s.tracker.show(2), { actor: 'outside', status: 'trial' });
  writeFileSync(join(s.root, 'lights/main.js'), 'by hand again');
  t.same(
    (await s.tracker.commit(1, 'cli')).map((c) => `${c.id} ${c.actor}`),
    ['1 agent', '2 outside', '3 outside'],
  );
  t.equal((await s.tracker.status()).pending_files, 0);
});

t.test('diff shows a unified diff of the kept contents, notes for binary and unkept files', async (t) => {
  const s = await startTracker(t, {
    tree: { weather: { 'index.js': 'a\nb\nc\nd\ne\nf\ng\nh\n', 'icon.png': Buffer.from([0x89, 0x50, 0, 1]), 'big.txt': 'x' } },
    settings: { max_kept_file_bytes: 20 },
  });
  await s.tracker.track(origin, async () => {
    writeFileSync(join(s.root, 'weather/index.js'), 'a\nb\nc\nd\nE\nf\ng\nh\n');
    writeFileSync(join(s.root, 'weather/icon.png'), Buffer.from([0x89, 0x50, 0, 2]));
    writeFileSync(join(s.root, 'weather/big.txt'), 'more than twenty bytes of text');
    writeFileSync(join(s.root, 'weather/new.txt'), 'hello\n');
  });
  const diff = await s.tracker.diff(1);
  t.same(
    diff.files.map((f) => [f.path, f.op, f.note]),
    [
      ['weather/big.txt', 'modify', 'contents not kept (larger than core.tracker.max_kept_file_bytes, or a symbolic link)'],
      ['weather/icon.png', 'modify', 'binary file'],
      ['weather/index.js', 'modify', null],
      ['weather/new.txt', 'add', null],
    ],
  );
  t.equal(
    diff.text,
    [
      'Files a/weather/big.txt and b/weather/big.txt differ (contents not kept (larger than core.tracker.max_kept_file_bytes, or a symbolic link))',
      'Binary files a/weather/icon.png and b/weather/icon.png differ',
      '--- a/weather/index.js',
      '+++ b/weather/index.js',
      '@@ -2,7 +2,7 @@',
      ' b',
      ' c',
      ' d',
      '-e',
      '+E',
      ' f',
      ' g',
      ' h',
      '--- /dev/null',
      '+++ b/weather/new.txt',
      '@@ -0,0 +1 @@',
      '+hello',
      '',
    ].join('\n'),
  );
  await t.rejects(s.tracker.diff(9), { code: 'HA_ERR_CHANGE_NOT_FOUND' });
});

t.test('decided change sets beyond keep_change_sets go, with kept contents nothing refers to', async (t) => {
  const s = await startTracker(t, { tree: TREE, settings: { keep_change_sets: 2 } });
  for (const version of ['v2', 'v3', 'v4']) {
    await s.tracker.track(origin, async () => writeFileSync(join(s.root, 'weather/index.js'), version));
    await s.tracker.commitTrial('supervisor');
  }
  t.same(
    s.tracker.list().map((c) => c.id),
    [3, 2],
  );
  await t.rejects(s.tracker.diff(1), { code: 'HA_ERR_CHANGE_NOT_FOUND', message: /pruned/ });
  t.notOk(existsSync(join(s.stateDir, 'kept', sha('v1\n').slice(0, 2), sha('v1\n'))), 'the content only set 1 referred to is gone');
  t.ok(existsSync(join(s.stateDir, 'kept', sha('v2').slice(0, 2), sha('v2'))), 'set 2 still refers to v2');
  await s.tracker.track(origin, async () => writeFileSync(join(s.root, 'weather/index.js'), 'v5'));
  s.settings.keep_change_sets = 1;
  await s.tracker.commitTrial('supervisor');
  t.same(
    s.tracker.list().map((c) => c.id),
    [4],
  );
});

t.test('decided change sets older than keep_days go; sets on trial always stay', async (t) => {
  const s = await startTracker(t, { tree: TREE, settings: { keep_days: 1 } });
  await s.tracker.track(origin, async () => writeFileSync(join(s.root, 'weather/index.js'), 'v2'));
  await s.tracker.commitTrial('supervisor');
  await s.clock.advance(2 * 86_400_000);
  await s.tracker.track(origin, async () => writeFileSync(join(s.root, 'weather/index.js'), 'v3'));
  await s.tracker.track(origin, async () => writeFileSync(join(s.root, 'lights/main.js'), 'l2'));
  await s.tracker.rollbackPending('supervisor', 'bad');
  t.same(
    s.tracker.list().map((c) => `${c.id} ${c.status}`),
    ['3 rolled_back', '2 rolled_back'],
  );
});

t.test('a rollback never touches anything outside the plugins tree', async (t) => {
  const s = await startTracker(t, { tree: TREE });
  const sibling = join(s.dir, 'sibling');
  const before = { bytes: readFileSync(sibling), mtime: statSync(sibling).mtimeMs };
  await s.tracker.track(origin, async () => {
    // A link out of the tree, and a plugin folder replaced by one.
    symlinkSync(sibling, join(s.root, 'weather/link'));
    rmSync(join(s.root, 'lights'), { recursive: true });
    symlinkSync(s.dir, join(s.root, 'lights'));
  });
  await s.tracker.rollbackPending('supervisor', 'bad');
  await s.tracker.track(origin, async () => writeFileSync(join(s.root, 'weather/index.js'), 'v2\n'));
  await s.tracker.commitTrial('supervisor');
  // A committed change whose folder was later swapped for a link out of the tree cannot be reverted through it.
  await s.tracker.track(origin, async () => {
    rmSync(join(s.root, 'weather'), { recursive: true });
    symlinkSync(s.dir, join(s.root, 'weather'));
  });
  await s.tracker.commitTrial('supervisor');
  const error = await s.tracker.rollback(2, 'cli').catch((e: unknown) => e);
  t.ok(isHomeAgentError(error, 'HA_ERR_CHANGE_STATE'), 'refused: the file is not where the change left it');
  t.same(readFileSync(sibling), before.bytes);
  t.equal(statSync(sibling).mtimeMs, before.mtime);
  t.notOk(existsSync(join(s.dir, 'index.js')), 'nothing written through the link');
});

t.test('with the tracker off, calls just run and the methods say it is off', async (t) => {
  const dir = t.testdir({ plugins: {} });
  const host = { refresh: async () => ({ plugins: [], errors: [] }), stopTracked: async () => [] };
  const tracker = new ChangeTracker({
    backend: undefined,
    stateDir: join(dir, 'tracker'),
    database: () => {
      throw new Error('not used');
    },
    plugins: host,
    settings: () => {
      throw new Error('not used');
    },
    events: new EventBus(silentLogs().child('events')),
    log: silentLogs().child('tracker'),
    audit: () => {},
    clock: { now: () => 0, monotonic: () => 0 },
  });
  await tracker.start(new AbortController().signal);
  t.equal(tracker.enabled, false);
  t.equal(await tracker.track(origin, async () => 'ran'), 'ran');
  t.throws(() => tracker.list(), { code: 'HA_ERR_TRACKER_OFF' });
  await t.rejects(tracker.commit(1, 'cli'), { code: 'HA_ERR_TRACKER_OFF' });
  t.match(await tracker.status(), { backend: 'off', pending_files: 0, trial: null });
  t.same(await tracker.rollbackPending('supervisor', 'x'), []);
  await tracker.commitTrial('supervisor');
  t.same(await tracker.pendingPlugins(), []);
  await tracker.stop();
});
