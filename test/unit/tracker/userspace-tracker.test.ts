import { existsSync, mkdirSync, readdirSync, readFileSync, statSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import t, { type Test } from 'tap';
import { UserspaceTracker } from '../../../src/tracker/userspace-tracker.js';

/** A tree and a state folder; `state` lays out good / good.new / good.old as a crash could leave them. */
function setup(t: Test, state: Record<string, Record<string, string>>) {
  const dir = t.testdir({ plugins: { 'x.txt': 'tree' }, state, outside: { 'o.txt': 'outside' } });
  const tracker = new UserspaceTracker({ root: join(dir, 'plugins'), stateDir: join(dir, 'state') });
  t.teardown(() => tracker.stop());
  return { dir, tracker };
}

const goodText = async (tracker: UserspaceTracker) => (await tracker.readGood('x.txt'))?.toString();

t.test('start after a crash while good.new was being built keeps the old good state', async (t) => {
  const { dir, tracker } = setup(t, { good: { 'x.txt': 'old' }, 'good.new': { 'x.txt': 'half' } });
  await tracker.start();
  t.equal(await goodText(tracker), 'old');
  t.same(readdirSync(join(dir, 'state')), ['good']);
});

t.test('start after a crash between the two renames finishes the swap', async (t) => {
  const { dir, tracker } = setup(t, { 'good.old': { 'x.txt': 'old' }, 'good.new': { 'x.txt': 'new' } });
  await tracker.start();
  t.equal(await goodText(tracker), 'new', 'the complete good.new becomes good, not a fresh copy of the tree');
  t.same(readdirSync(join(dir, 'state')), ['good']);
});

t.test('start after a crash before good.old was removed keeps the new good state', async (t) => {
  const { dir, tracker } = setup(t, { 'good.old': { 'x.txt': 'old' }, good: { 'x.txt': 'new' } });
  await tracker.start();
  t.equal(await goodText(tracker), 'new');
  t.same(readdirSync(join(dir, 'state')), ['good']);
});

t.test('start with only good.old puts it back rather than copying the tree', async (t) => {
  const { tracker } = setup(t, { 'good.old': { 'x.txt': 'old' } });
  await tracker.start();
  t.equal(await goodText(tracker), 'old');
});

t.test('start replays a rollback journal a crash left behind, then removes it', async (t) => {
  const { dir, tracker } = setup(t, { good: { 'x.txt': 'good', 'y.txt': 'why' } });
  writeFileSync(join(dir, 'plugins/added.txt'), 'added');
  const steps = [
    { do: 'remove', path: 'added.txt' },
    { do: 'copy', path: 'x.txt' },
    { do: 'copy', path: 'y.txt' },
  ];
  writeFileSync(join(dir, 'state/rollback.json'), JSON.stringify({ changes: [], steps }));
  await tracker.start();
  t.same(readdirSync(join(dir, 'plugins')).sort(), ['x.txt', 'y.txt']);
  t.equal(readFileSync(join(dir, 'plugins/x.txt'), 'utf8'), 'good');
  t.notOk(existsSync(join(dir, 'state/rollback.json')));
  t.same(await tracker.pending(), []);
});

t.test('a journal naming a path outside the tree is refused and nothing outside is touched', async (t) => {
  const { dir, tracker } = setup(t, { good: { 'x.txt': 'good' } });
  writeFileSync(join(dir, 'state/rollback.json'), JSON.stringify({ changes: [], steps: [{ do: 'remove', path: '../outside' }] }));
  await t.rejects(tracker.start(), { code: 'HA_ERR_FILES_DENIED' });
  t.equal(readFileSync(join(dir, 'outside/o.txt'), 'utf8'), 'outside');
  t.equal(readFileSync(join(dir, 'plugins/x.txt'), 'utf8'), 'tree', 'the tree is untouched too');
});

t.test('an unreadable journal stops start with an error naming it, the tree untouched', async (t) => {
  const { dir, tracker } = setup(t, { good: { 'x.txt': 'good' } });
  writeFileSync(join(dir, 'state/rollback.json'), '{"steps": [');
  await t.rejects(tracker.start(), { code: 'HA_ERR_TRACKER_STATE', message: /rollback\.json is unreadable/ });
  t.equal(readFileSync(join(dir, 'plugins/x.txt'), 'utf8'), 'tree');
});

t.test('readGood does not follow a link inside the good copy', async (t) => {
  const { dir, tracker } = setup(t, {});
  symlinkSync(join(dir, 'outside'), join(dir, 'plugins/out'));
  symlinkSync(join(dir, 'outside/o.txt'), join(dir, 'plugins/o-link'));
  await tracker.start();
  t.equal(await tracker.readGood('out/o.txt'), null, 'through a linked folder');
  t.equal(await tracker.readGood('o-link'), null, 'a link itself has no file content');
  t.equal(await goodText(tracker), 'tree');
});

t.test('commit and rollback called together run one after the other', async (t) => {
  const { dir, tracker } = setup(t, {});
  await tracker.start();
  writeFileSync(join(dir, 'plugins/x.txt'), 'changed');
  const [, undone] = await Promise.all([tracker.commit(), tracker.rollback()]);
  t.same(undone, [], 'the rollback sees the committed state');
  t.equal(await goodText(tracker), 'changed');
});

t.test('the first start copies the tree as found, empty folders and modes included', async (t) => {
  const { dir, tracker } = setup(t, {});
  mkdirSync(join(dir, 'plugins/empty'), { mode: 0o700 });
  await tracker.start();
  t.equal(statSync(join(dir, 'state/good/empty')).mode & 0o777, 0o700);
  t.equal(await goodText(tracker), 'tree');
});

t.test('a state folder inside the tree is refused before anything is written', async (t) => {
  const dir = t.testdir({ plugins: { 'x.txt': 'tree' } });
  const tracker = new UserspaceTracker({ root: join(dir, 'plugins'), stateDir: join(dir, 'plugins/.state') });
  await t.rejects(tracker.start(), { code: 'HA_ERR_TRACKER_STATE', message: /is inside the plugins tree/ });
  t.same(readdirSync(join(dir, 'plugins')), ['x.txt']);
});
