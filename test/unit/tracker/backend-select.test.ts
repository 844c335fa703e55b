import { existsSync, mkdirSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import t from 'tap';
import { selectTrackerBackend, type TrackerBackendSetting } from '../../../src/tracker/backend-select.js';
import { DelegatedOverlayTracker, mountUnitName } from '../../../src/tracker/delegated-overlay-tracker.js';
import { overlayLayout } from '../../../src/tracker/overlay-layout.js';
import { UserspaceTracker } from '../../../src/tracker/userspace-tracker.js';

// Which back end core.tracker.backend picks, decided from mount table text the tests write.

const ROOT_MOUNT = '26 1 259:2 / / rw,relatime shared:1 - ext4 /dev/root rw\n';

function mountinfoWith(point: string, fstype: string, options = 'rw'): string {
  const escaped = point.replace(/ /g, '\\040');
  return `${ROOT_MOUNT}412 26 0:58 / ${escaped} rw,relatime shared:220 - ${fstype} ${fstype} ${options}\n`;
}

function paths(dir: string) {
  return { root: join(dir, 'plugins'), stateDir: join(dir, 'tracker') };
}

const choose = (setting: TrackerBackendSetting, dir: string, mountinfo?: string) =>
  selectTrackerBackend({ setting, ...paths(dir), applyTimeoutMs: 1000, ...(mountinfo === undefined ? {} : { mountinfo }) });

t.test('off tracks nothing', async (t) => {
  t.equal(choose('off', t.testdir()), undefined);
});

t.test('userspace and overlay are taken as set, whatever is mounted', async (t) => {
  const dir = t.testdir();
  const { root } = paths(dir);
  t.ok(choose('userspace', dir, mountinfoWith(root, 'overlay')) instanceof UserspaceTracker);
  const overlay = choose('overlay', dir, ROOT_MOUNT);
  t.ok(overlay instanceof DelegatedOverlayTracker);
  t.equal(overlay?.kind, 'overlay');
  t.equal(overlay?.root, root);
  t.notOk(existsSync(root), 'choosing creates nothing');
  // Here nothing is mounted at root for real: its start says which unit would mount it.
  mkdirSync(root);
  await t.rejects(overlay?.start() ?? Promise.resolve(), {
    code: 'HA_ERR_TRACKER_MOUNT',
    message: `systemctl start ${mountUnitName(root)}`,
  });
});

t.test('auto: the overlay back end when the plugins tree is an overlay mount', async (t) => {
  const dir = t.testdir();
  const { root } = paths(dir);
  t.ok(choose('auto', dir, mountinfoWith(root, 'overlay', 'rw,lowerdir=/a,upperdir=/b,workdir=/c')) instanceof DelegatedOverlayTracker);
  t.ok(choose('auto', dir, mountinfoWith(`${root}/sub`, 'overlay')) instanceof UserspaceTracker, 'an overlay below the tree is not it');
  t.ok(choose('auto', dir, mountinfoWith(dir, 'overlay')) instanceof UserspaceTracker, 'nor one above it');
  t.ok(choose('auto', dir, mountinfoWith(root, 'tmpfs')) instanceof UserspaceTracker, 'another filesystem at the tree');
  t.ok(choose('auto', dir, ROOT_MOUNT) instanceof UserspaceTracker, 'nothing mounted at the tree');
  t.ok(choose('auto', dir, '') instanceof UserspaceTracker, 'an empty mount table');
});

t.test('auto: the mount table is matched by real path, with its escapes', async (t) => {
  const dir = t.testdir({ 'real plugins': {} });
  const real = join(dir, 'real plugins');
  symlinkSync(real, join(dir, 'plugins'));
  t.ok(choose('auto', dir, mountinfoWith(real, 'overlay')) instanceof DelegatedOverlayTracker, 'the tree reached through a symlink');
});

t.test('auto: overlay layers without their mount still pick the overlay back end, which names the unit', async (t) => {
  const dir = t.testdir();
  const { root, stateDir } = paths(dir);
  const layout = overlayLayout(root, stateDir);
  mkdirSync(layout.base, { recursive: true });
  mkdirSync(root);
  writeFileSync(layout.initialised, '');
  // The plugins are in the lower layer; a copying tracker would take the empty folder as the good state.
  const backend = choose('auto', dir, ROOT_MOUNT);
  t.ok(backend instanceof DelegatedOverlayTracker);
  await t.rejects(backend?.start() ?? Promise.resolve(), { code: 'HA_ERR_TRACKER_MOUNT', message: mountUnitName(root) });
});

t.test('a state folder inside the plugins tree is refused for every back end', async (t) => {
  for (const setting of ['auto', 'overlay', 'userspace'] as const) {
    const dir = t.testdir({ plugins: { inner: {} }, elsewhere: {} });
    const root = join(dir, 'plugins');
    symlinkSync(join(root, 'inner'), join(dir, 'elsewhere/link'));
    for (const stateDir of [root, join(root, 'tracker'), join(root, 'a/b'), join(dir, 'elsewhere/link')]) {
      t.throws(
        () => selectTrackerBackend({ setting, root, stateDir, applyTimeoutMs: 1000, mountinfo: ROOT_MOUNT }),
        { code: 'HA_ERR_TRACKER_STATE', message: /lies inside the plugins tree/ },
        `${setting}: ${stateDir.slice(dir.length)}`,
      );
    }
    t.ok(
      selectTrackerBackend({ setting, root, stateDir: `${root}-state`, applyTimeoutMs: 1000, mountinfo: ROOT_MOUNT }),
      `${setting}: a sibling whose name starts like the tree is fine`,
    );
  }
});
