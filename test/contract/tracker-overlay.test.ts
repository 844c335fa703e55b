import { execFile } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { open } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { basename, dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import t from 'tap';
import { findOnPath } from '../../src/shared/find-on-path.js';
import { OverlayTracker, SystemOverlayMounter } from '../../src/tracker/overlay-tracker.js';
import { snapshotTree, trackerBackendContract } from './tracker-backend.contract.js';

// Real overlay mounts need root and must not leak into the host's mount table, so this file runs
// itself again inside a private mount namespace (`unshare -m --propagation private`); every mount
// it makes disappears with that process. Where that is not possible the test skips and says why.
const IN_NAMESPACE = 'HOMEAGENT_TEST_OVERLAY_NAMESPACE';
const execFileAsync = promisify(execFile);

/** Why real overlay mounts cannot be tested here, or null when a tiny trial mount worked. */
async function overlayUnavailable(): Promise<string | null> {
  if (process.platform !== 'linux') return `overlayfs needs Linux (this is ${process.platform})`;
  if (process.getuid?.() !== 0) return 'mounting overlayfs needs root (run the tests as root to include them)';
  if (findOnPath('unshare') === undefined) return 'unshare(1) from util-linux is not installed';
  const dir = mkdtempSync(join(tmpdir(), 'ha-overlay-probe-'));
  try {
    for (const name of ['lower', 'upper', 'work', 'merged']) mkdirSync(join(dir, name));
    const options = `lowerdir=${dir}/lower,upperdir=${dir}/upper,workdir=${dir}/work`;
    await execFileAsync('unshare', ['-m', '--propagation', 'private', 'mount', '-t', 'overlay', 'overlay', '-o', options, `${dir}/merged`]);
    return null;
  } catch (error) {
    const stderr = (error as { stderr?: string }).stderr?.trim();
    return `a trial overlay mount in a private namespace failed: ${stderr || String(error)}`;
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

if (process.env[IN_NAMESPACE] !== '1') {
  const reason = await overlayUnavailable();
  if (reason !== null) {
    t.plan(0, `skipped: ${reason}`);
  } else {
    const self = fileURLToPath(import.meta.url);
    // The suite's folders stay behind in the child (TAP_SAVE_FIXTURE): tap would remove them in a
    // teardown that runs before the tracker's stop() and so hits the live mount (EBUSY). Once the
    // child has exited its namespace, and every mount with it, is gone, and this removes them.
    const fixtures = dirname(t.testdirName);
    const prefix = basename(t.testdirName);
    t.teardown(() => {
      for (const name of readdirSync(fixtures)) if (name.startsWith(prefix)) rmSync(join(fixtures, name), { recursive: true, force: true });
    });
    await t.spawn(
      'unshare',
      ['-m', '--propagation', 'private', process.execPath, ...process.execArgv, self],
      { env: { ...process.env, [IN_NAMESPACE]: '1', TAP_SAVE_FIXTURE: '1' } },
      'OverlayTracker in a private mount namespace',
    );
  }
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
