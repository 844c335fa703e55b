// The changes.* control methods (src/tracker/change-methods.ts) on a real ControlRegistry and a real
// ChangeTracker: parameters as the CLI and the web page send them, clear errors for bad ones that
// leave the data as it was, audit records with the caller as actor.
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import t, { type Test } from 'tap';
import type { AuditRecord } from '../../../src/log/logger.js';
import { ControlRegistry } from '../../../src/plugin/control-registry.js';
import { registerChangeMethods } from '../../../src/tracker/change-methods.js';
import type { ChangeSet, ChangeSummary } from '../../../src/tracker/change-types.js';
import { startTracker, type TrackerSetup } from './change-tracker-fixture.js';

interface Setup extends TrackerSetup {
  call(method: string, params?: unknown, actor?: string): Promise<unknown>;
  methodAudits: AuditRecord[];
}

/** A tracker with change 1 committed and change 2 on trial. */
async function setup(t: Test): Promise<Setup> {
  const s = await startTracker(t, { tree: { weather: { 'index.js': 'v1\n' }, lights: { 'main.js': 'l1' } } });
  await s.tracker.track({ actor: 'agent', tool: 'files_write' }, async () => writeFileSync(join(s.root, 'weather/index.js'), 'v2\n'));
  await s.tracker.commitTrial('supervisor');
  await s.tracker.track({ actor: 'agent', tool: 'cmd_run' }, async () => writeFileSync(join(s.root, 'lights/main.js'), 'l2'));
  const control = new ControlRegistry();
  const methodAudits: AuditRecord[] = [];
  registerChangeMethods(control, s.tracker, { logs: { audit: (record) => void methodAudits.push(record) } });
  return { ...s, methodAudits, call: (method, params = {}, actor = 'cli') => control.call(method, params, { actor }) };
}

/** Expects the call to fail with `code` and a message matching `message`. */
async function refused(t: Test, s: Setup, method: string, params: unknown, code: string, message: RegExp): Promise<void> {
  await t.rejects(s.call(method, params), { code, message }, `${method} ${JSON.stringify(params)}`);
}

t.test('the methods are registered with descriptions', async (t) => {
  const control = new ControlRegistry();
  const s = await startTracker(t);
  registerChangeMethods(control, s.tracker, { logs: { audit: () => {} } });
  t.same(
    control.methods().map((m) => m.name),
    ['changes.commit', 'changes.diff', 'changes.list', 'changes.rollback', 'changes.show', 'changes.status'],
  );
  t.ok(control.methods().every((m) => m.description.length > 40));
});

t.test('changes.list: newest first, limit and status as numbers or digit strings', async (t) => {
  const s = await setup(t);
  const all = (await s.call('changes.list')) as ChangeSummary[];
  t.same(
    all.map((c) => [c.id, c.status, c.file_count]),
    [
      [2, 'trial', 1],
      [1, 'committed', 1],
    ],
  );
  t.same(
    ((await s.call('changes.list', { limit: '1' })) as ChangeSummary[]).map((c) => c.id),
    [2],
  );
  t.same(
    ((await s.call('changes.list', { limit: 5, status: 'committed' })) as ChangeSummary[]).map((c) => c.id),
    [1],
  );
  await refused(
    t,
    s,
    'changes.list',
    { limit: 0 },
    'HA_ERR_RPC_INVALID_PARAMS',
    /params\.limit must be a whole number from 1 to 1000.*got 0$/,
  );
  await refused(t, s, 'changes.list', { limit: 1001 }, 'HA_ERR_RPC_INVALID_PARAMS', /got 1001$/);
  await refused(t, s, 'changes.list', { limit: '2x' }, 'HA_ERR_RPC_INVALID_PARAMS', /got "2x"$/);
  await refused(
    t,
    s,
    'changes.list',
    { status: 'done' },
    'HA_ERR_RPC_INVALID_PARAMS',
    /params\.status must be one of trial, committed, rolled_back; got "done"/,
  );
});

t.test('changes.show and changes.diff take the id as a number or a string of digits', async (t) => {
  const s = await setup(t);
  t.match(await s.call('changes.show', { id: 1 }), { id: 1, status: 'committed', files: [{ path: 'weather/index.js', op: 'modify' }] });
  t.match(await s.call('changes.show', { id: '2' }), { id: 2, status: 'trial' });
  t.match(await s.call('changes.diff', { id: '1' }), {
    id: 1,
    text: /^--- a\/weather\/index\.js\n\+\+\+ b\/weather\/index\.js\n@@ -1 \+1 @@\n-v1\n\+v2\n$/,
  });
  for (const id of ['abc', '0', -1, 1.5, '1e3', '', null, true]) {
    await refused(t, s, 'changes.show', { id }, 'HA_ERR_RPC_INVALID_PARAMS', /^changes\.show: params\.id must be a whole number from 1/);
  }
  await refused(t, s, 'changes.show', {}, 'HA_ERR_RPC_INVALID_PARAMS', /changes\.show: params\.id/);
  await refused(t, s, 'changes.diff', { id: '99' }, 'HA_ERR_CHANGE_NOT_FOUND', /no change set 99/);
});

t.test('changes.commit commits the trial with the caller as the decider and audits it', async (t) => {
  const s = await setup(t);
  const sets = (await s.call('changes.commit', { id: '2' }, 'webui:admin')) as ChangeSet[];
  t.same(
    sets.map((c) => `${c.id} ${c.status} ${c.decided_by}`),
    ['2 committed webui:admin'],
  );
  t.same(s.methodAudits, [{ actor: 'webui:admin', action: 'changes.commit', id: 2, change_sets: [2] }]);
  t.match(s.audits.at(-1), { actor: 'webui:admin', action: 'changes.commit_trial' });
});

t.test('changes.rollback of a change on trial undoes it; of a committed change records the revert', async (t) => {
  const s = await setup(t);
  t.same(
    ((await s.call('changes.rollback', { id: 2 })) as ChangeSet[]).map((c) => `${c.id} ${c.status} ${c.reason}`),
    ['2 rolled_back rolled back by cli'],
  );
  t.equal(s.read('lights/main.js'), 'l1');
  t.same(
    ((await s.call('changes.rollback', { id: '1' })) as ChangeSet[]).map((c) => `${c.id} ${c.status} ${c.reverts}`),
    ['3 trial 1'],
  );
  t.equal(s.read('weather/index.js'), 'v1\n');
  t.same(
    s.methodAudits.map((a) => `${a.actor} ${a.action} ${a.id}`),
    ['cli changes.rollback 2', 'cli changes.rollback 1'],
  );
});

t.test('commit or rollback in the wrong state is refused and changes nothing', async (t) => {
  const s = await setup(t);
  const before = await s.call('changes.list');
  await refused(
    t,
    s,
    'changes.commit',
    { id: 1 },
    'HA_ERR_CHANGE_STATE',
    /^change set 1 is committed \(.* by supervisor\); only a change on trial can be committed$/,
  );
  await refused(t, s, 'changes.commit', { id: 'x' }, 'HA_ERR_RPC_INVALID_PARAMS', /params\.id/);
  await refused(t, s, 'changes.rollback', { id: 42 }, 'HA_ERR_CHANGE_NOT_FOUND', /no change set 42/);
  t.same(await s.call('changes.list'), before);
  t.equal(s.read('lights/main.js'), 'l2', 'the trial is still in place');
  t.same(s.methodAudits, [], 'refused calls are not audited as done');
});

t.test('changes.status describes the back end and the trial', async (t) => {
  const s = await setup(t);
  t.match(await s.call('changes.status'), {
    backend: 'userspace',
    root: s.root,
    state_dir: s.stateDir,
    pending_files: 1,
    trial: { change_set_ids: [2], plugins: ['lights'], activation_errors: [] },
  });
});
