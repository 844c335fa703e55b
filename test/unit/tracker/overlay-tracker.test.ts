import { existsSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import t from 'tap';
import { overlayLayout } from '../../../src/tracker/overlay-layout.js';
import { OverlayTracker, SystemOverlayMounter } from '../../../src/tracker/overlay-tracker.js';
import { RecordingMounter } from '../../helpers/overlay.js';

// What needs no mount: the layout checks, crash recovery from the journal and the first adoption
// of the tree, with a mounter that only records calls. Real mounts: test/contract/tracker-overlay.

function setup(dir: string) {
  const mounter = new RecordingMounter();
  const tracker = new OverlayTracker({ root: join(dir, 'plugins'), stateDir: join(dir, 'state'), mounter });
  const layout = overlayLayout(join(dir, 'plugins'), join(dir, 'state'));
  for (const d of [layout.lower, layout.upper, layout.work]) mkdirSync(d, { recursive: true });
  writeFileSync(layout.initialised, '');
  return { dir, mounter, tracker, layout };
}

t.test('overlayLayout puts the layers under <stateDir>/overlay and refuses paths overlayfs cannot take', async (t) => {
  const layout = overlayLayout('/data/plugins', '/data/state');
  t.same(
    [layout.lower, layout.upper, layout.work, layout.merged],
    ['/data/state/overlay/lower', '/data/state/overlay/upper', '/data/state/overlay/work', '/data/plugins'],
  );
  for (const [root, state] of [
    ['/data/plug,ins', '/data/state'],
    ['/data/plugins', '/data/st:ate'],
    ['/data/plugins', '/data/plugins/state'],
  ] as const) {
    t.throws(() => overlayLayout(root, state), { code: 'HA_ERR_CONFIG_INVALID' }, `${root} + ${state}`);
  }
});

t.test('a commit a crash interrupted is finished by start: upper merged into lower, then remounted', async (t) => {
  const { mounter, tracker, layout } = setup(t.testdir());
  writeFileSync(join(layout.lower, 'a.txt'), 'old\n');
  writeFileSync(join(layout.upper, 'a.txt'), 'new\n');
  writeFileSync(join(layout.upper, 'b.txt'), 'added\n');
  writeFileSync(layout.journal, JSON.stringify({ op: 'commit', opaque: [] }));
  mounter.mounted = true; // the crash left the overlay mounted
  await tracker.start();
  t.same(mounter.calls, ['unmount', 'mount'], 'the layers were changed only while unmounted');
  t.equal(readFileSync(join(layout.lower, 'a.txt'), 'utf8'), 'new\n');
  t.equal(readFileSync(join(layout.lower, 'b.txt'), 'utf8'), 'added\n');
  t.same(readdirSync(layout.upper), [], 'the upper layer is empty');
  t.notOk(existsSync(layout.journal), 'the journal is gone');
  t.equal((await tracker.readGood('a.txt'))?.toString(), 'new\n');
});

t.test('a rollback a crash interrupted is finished by start: upper discarded, lower untouched', async (t) => {
  const { mounter, tracker, layout } = setup(t.testdir());
  writeFileSync(join(layout.lower, 'a.txt'), 'good\n');
  writeFileSync(join(layout.upper, 'a.txt'), 'bad\n');
  writeFileSync(layout.journal, JSON.stringify({ op: 'rollback' }));
  await tracker.start();
  t.same(mounter.calls, ['mount']);
  t.same(readdirSync(layout.upper), []);
  t.equal(readFileSync(join(layout.lower, 'a.txt'), 'utf8'), 'good\n');
  t.notOk(existsSync(layout.journal));
});

t.test('an unreadable journal stops start with a clear error and leaves the layers as they are', async (t) => {
  const { mounter, tracker, layout } = setup(t.testdir());
  writeFileSync(join(layout.upper, 'a.txt'), 'pending\n');
  writeFileSync(layout.journal, '{"op":"merge-everything"}');
  await t.rejects(tracker.start(), { code: 'HA_ERR_TRACKER_STATE', message: /journal/ });
  t.same(mounter.calls, [], 'nothing mounted or unmounted');
  t.equal(readFileSync(join(layout.upper, 'a.txt'), 'utf8'), 'pending\n');
  t.ok(existsSync(layout.journal), 'the journal is kept for inspection');
});

t.test('the first start takes the tree as found as the good state, once', async (t) => {
  const dir = t.testdir();
  const mounter = new RecordingMounter();
  const root = join(dir, 'plugins');
  mkdirSync(join(root, 'p'), { recursive: true });
  writeFileSync(join(root, 'p/plugin.js'), 'export {}\n');
  const tracker = new OverlayTracker({ root, stateDir: join(dir, 'state'), mounter });
  await tracker.start();
  const layout = overlayLayout(root, join(dir, 'state'));
  t.equal(readFileSync(join(layout.lower, 'p/plugin.js'), 'utf8'), 'export {}\n', 'moved into the lower layer');
  t.same(readdirSync(root), [], 'the mount point is left empty for the mount');
  await tracker.stop();
  writeFileSync(join(root, 'stray.txt'), 'written while unmounted\n');
  await tracker.start();
  t.notOk(existsSync(join(layout.lower, 'stray.txt')), 'a later start adopts nothing');
});

t.test('SystemOverlayMounter reports mount points and names the failing command', async (t) => {
  const mounter = new SystemOverlayMounter();
  t.equal(await mounter.isMounted('/'), true);
  t.equal(await mounter.isMounted(t.testdir()), false);
  const dir = t.testdir();
  await t.rejects(mounter.mount(join(dir, 'missing-lower'), join(dir, 'u'), join(dir, 'w'), join(dir, 'm')), {
    code: 'HA_ERR_TRACKER_MOUNT',
    message: /^mount -t overlay/,
  });
});
