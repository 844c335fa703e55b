import { existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { open } from 'node:fs/promises';
import { join } from 'node:path';
import t from 'tap';
import { OverlayTracker, SystemOverlayMounter } from '../../src/tracker/overlay-tracker.js';
import { inPrivateMountNamespace, overlayUnavailable, rerunInPrivateMountNamespace } from '../helpers/overlay.js';
import { snapshotTree, trackerBackendContract } from './tracker-backend.contract.js';

// Real overlay mounts need root and must not leak into the host's mount table, so this file runs
// itself again inside a private mount namespace (`unshare -m --propagation private`); every mount
// it makes disappears with that process. Where that is not possible the test skips and says why.
if (!inPrivateMountNamespace()) {
  const reason = await overlayUnavailable();
  if (reason !== null) t.plan(0, `skipped: ${reason}`);
  else await rerunInPrivateMountNamespace(t, import.meta.url, 'OverlayTracker in a private mount namespace');
} else {
  const mounter = new SystemOverlayMounter();
  const make = async (dir: string, options?: { faultAfter?: (step: string) => void }) =>
    new OverlayTracker({
      root: join(dir, 'plugins'),
      stateDir: join(dir, 'state'),
      mounter,
      ...(options?.faultAfter === undefined ? {} : { faultAfter: options.faultAfter }),
    });

  trackerBackendContract(t, 'OverlayTracker', make);

  t.test('OverlayTracker specifics', async (t) => {
    t.test('a folder deleted and made again (an opaque upper dir) hides every old file, through commit and restart', async (t) => {
      const dir = t.testdir();
      const root = join(dir, 'plugins');
      mkdirSync(join(root, 'p/sub'), { recursive: true });
      writeFileSync(join(root, 'p/old.txt'), 'old\n');
      writeFileSync(join(root, 'p/sub/deep.txt'), 'deep\n');
      writeFileSync(join(root, 'p/same.txt'), 'same\n');
      const tracker = await make(dir);
      await tracker.start();
      t.teardown(() => tracker.stop());

      rmSync(join(root, 'p'), { recursive: true });
      mkdirSync(join(root, 'p'));
      writeFileSync(join(root, 'p/same.txt'), 'same\n');
      writeFileSync(join(root, 'p/new.txt'), 'new\n');
      t.same(
        (await tracker.pending()).map((c) => `${c.op} ${c.path}`),
        ['add p/new.txt', 'delete p/old.txt', 'delete p/sub/deep.txt'],
        'the re-made folder shows the old files as deleted, the rewritten identical one as unchanged',
      );
      const expected = snapshotTree(root);
      await tracker.commit();
      t.same(snapshotTree(root), expected, 'commit keeps the tree');
      t.same(snapshotTree(join(dir, 'state/overlay/lower')), expected, 'the lower layer is exactly the committed tree');
      await tracker.stop();

      const again = await make(dir);
      await again.start();
      t.teardown(() => again.stop());
      t.same(snapshotTree(root), expected, 'and so is the tree after a restart');
      t.same(await again.pending(), []);
    });

    t.test('stop unmounts, start mounts again; writes land in the upper layer only', async (t) => {
      const dir = t.testdir();
      const tracker = await make(dir);
      await tracker.start();
      t.equal(await mounter.isMounted(tracker.root), true, 'mounted after start');
      writeFileSync(join(tracker.root, 'x.txt'), 'x\n');
      t.equal(readFileSync(join(dir, 'state/overlay/upper/x.txt'), 'utf8'), 'x\n', 'the write is in the upper layer');
      await tracker.stop();
      t.equal(await mounter.isMounted(tracker.root), false, 'unmounted after stop');
      await tracker.start();
      t.teardown(() => tracker.stop());
      t.same(
        (await tracker.pending()).map((c) => `${c.op} ${c.path}`),
        ['add x.txt'],
        'pending changes survive an unmount',
      );
    });

    t.test('a commit while a file in the tree is held open fails cleanly and changes nothing', async (t) => {
      const dir = t.testdir();
      const tracker = await make(dir);
      await tracker.start();
      t.teardown(() => tracker.stop());
      writeFileSync(join(tracker.root, 'held.txt'), 'held\n');
      const before = await tracker.pending();
      const held = await open(join(tracker.root, 'held.txt'), 'r');
      try {
        await t.rejects(tracker.commit(), { code: 'HA_ERR_TRACKER_MOUNT', message: /umount/ });
      } finally {
        await held.close();
      }
      t.equal(await mounter.isMounted(tracker.root), true, 'still mounted');
      t.notOk(existsSync(join(dir, 'state/overlay/journal.json')), 'no commit was scheduled');
      t.same(await tracker.pending(), before, 'the change is still pending');
      await tracker.commit();
      t.same(await tracker.pending(), [], 'and commits once the file is closed');
    });

    t.test('pending refuses to read a layer that is not mounted', async (t) => {
      const tracker = await make(t.testdir());
      await t.rejects(tracker.pending(), { code: 'HA_ERR_UNAVAILABLE' });
    });
  });
}
