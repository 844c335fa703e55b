import { chownSync, existsSync, lstatSync, mkdirSync, readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { open } from 'node:fs/promises';
import { basename, join } from 'node:path';
import t, { type Test } from 'tap';
import { isHomeAgentError } from '../../src/shared/errors.js';
import {
  CLAIMED_REQUEST_FILE,
  DelegatedOverlayTracker,
  findMount,
  mountUnitName,
  REQUEST_FILE,
  RESULT_FILE,
  writeFileDurably,
} from '../../src/tracker/delegated-overlay-tracker.js';
import { overlayLayout } from '../../src/tracker/overlay-layout.js';
import { runTrackerHelper } from '../../src/tracker/tracker-helper.js';
import type { FileChange, TrackerBackend } from '../../src/tracker/types.js';
import { inPrivateMountNamespace, overlayUnavailable, RecordingMounter, rerunInPrivateMountNamespace } from '../helpers/overlay.js';
import { SimulatedOverlaySystem, silentLog } from './delegated-overlay-system.js';
import { type MakeTracker, snapshotTree, trackerBackendContract } from './tracker-backend.contract.js';

// DelegatedOverlayTracker is the daemon's side; commit and rollback are done by tracker-apply, run
// as root by a path unit, and the layers are prepared by tracker-recover before the mount unit.
// What needs no mount runs here with a fake mount table; the contract suite and the end-to-end
// cases run with real overlay mounts in a private mount namespace (`unshare -m`, as root), with
// systemd's part played by SimulatedOverlaySystem. Where mounting is impossible they skip and say why.
const TRIAL_MARKER = JSON.stringify({ phase: 'trial', written_at: '2025-01-01T00:00:00.000Z', change_set_ids: [1], by: null });

/** A plugins tree and its state folder under `dir`, with the layer folders made (as after a first boot). */
function layers(dir: string) {
  const root = join(dir, 'plugins');
  const stateDir = join(dir, 'state');
  const layout = overlayLayout(root, stateDir);
  for (const d of [layout.lower, layout.upper, layout.work, root]) mkdirSync(d, { recursive: true });
  writeFileSync(layout.initialised, '');
  return { root, stateDir, layout, args: ['--root', root, '--state-dir', stateDir] };
}

const escapeMountinfo = (path: string) => path.replace(/[ \t\n\\]/g, (c) => `\\${c.charCodeAt(0).toString(8).padStart(3, '0')}`);

/** One mountinfo line as the kernel writes it for an overlay (or another filesystem) at `point`. */
function mountLine(point: string, fstype: string, superOptions: string): string {
  return `412 27 0:58 / ${escapeMountinfo(point)} rw,relatime shared:220 - ${fstype} ${fstype} ${superOptions}`;
}

function overlayMountinfo(l: ReturnType<typeof layers>, upper = l.layout.upper): string {
  const lines = [
    '26 1 259:2 / / rw,relatime shared:1 - ext4 /dev/root rw',
    mountLine(
      l.root,
      'overlay',
      `rw,lowerdir=${escapeMountinfo(l.layout.lower)},upperdir=${escapeMountinfo(upper)},workdir=${l.layout.work},uuid=on`,
    ),
  ];
  return `${lines.join('\n')}\n`;
}

/** Resolves with the request once the daemon has written one (polling: the test plays the path unit). */
async function nextRequest(stateDir: string): Promise<{ id: string; op: string; requested_at: string }> {
  const path = join(stateDir, REQUEST_FILE);
  for (;;) {
    if (existsSync(path)) return JSON.parse(readFileSync(path, 'utf8'));
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}

const rejection = (promise: Promise<unknown>): Promise<unknown> =>
  promise.then(
    () => undefined,
    (error: unknown) => error,
  );

function unprivilegedTests(t: Test): void {
  t.test('tracker-recover (before the mount unit)', async (t) => {
    t.test('a trial marker at boot: the upper layer is discarded, the good state kept, old requests dropped', async (t) => {
      const l = layers(t.testdir());
      writeFileSync(join(l.layout.lower, 'a.txt'), 'good\n');
      writeFileSync(join(l.layout.upper, 'a.txt'), 'on trial\n');
      mkdirSync(join(l.layout.upper, 'new'));
      writeFileSync(join(l.layout.upper, 'new/n.txt'), 'new\n');
      writeFileSync(join(l.stateDir, 'trial.json'), TRIAL_MARKER);
      for (const name of [REQUEST_FILE, CLAIMED_REQUEST_FILE, RESULT_FILE]) writeFileSync(join(l.stateDir, name), '{}');
      const mounter = new RecordingMounter();
      t.equal(await runTrackerHelper(['tracker-recover', ...l.args], { log: silentLog(), mounter }), 0);
      t.same(readdirSync(l.layout.upper), [], 'the upper layer is empty');
      t.equal(readFileSync(join(l.layout.lower, 'a.txt'), 'utf8'), 'good\n', 'the good state is untouched');
      t.ok(existsSync(join(l.stateDir, 'trial.json')), 'the marker stays for the daemon to record the rollback');
      for (const name of [REQUEST_FILE, CLAIMED_REQUEST_FILE, RESULT_FILE]) t.notOk(existsSync(join(l.stateDir, name)), `${name} is gone`);
      t.notOk(existsSync(l.layout.journal), 'no journal is left');
      t.same(mounter.calls, [], 'recover never mounts');
    });

    t.test('a commit a crash interrupted is finished before anything else', async (t) => {
      const l = layers(t.testdir());
      writeFileSync(join(l.layout.lower, 'a.txt'), 'old\n');
      writeFileSync(join(l.layout.upper, 'a.txt'), 'committed\n');
      writeFileSync(l.layout.journal, JSON.stringify({ op: 'commit', opaque: [] }));
      writeFileSync(join(l.stateDir, 'trial.json'), TRIAL_MARKER);
      t.equal(await runTrackerHelper(['tracker-recover', ...l.args], { log: silentLog(), mounter: new RecordingMounter() }), 0);
      t.equal(readFileSync(join(l.layout.lower, 'a.txt'), 'utf8'), 'committed\n', 'the merge was finished');
      t.same(readdirSync(l.layout.upper), []);
      t.notOk(existsSync(l.layout.journal), 'the journal is gone');
    });

    t.test('without a marker pending changes stay: the daemon puts them on trial', async (t) => {
      const l = layers(t.testdir());
      writeFileSync(join(l.layout.upper, 'a.txt'), 'made while stopped\n');
      t.equal(await runTrackerHelper(['tracker-recover', ...l.args], { log: silentLog(), mounter: new RecordingMounter() }), 0);
      t.equal(readFileSync(join(l.layout.upper, 'a.txt'), 'utf8'), 'made while stopped\n');
    });

    t.test('first boot: the tree as found becomes the good state, the layers belong to the daemon user', async (t) => {
      const dir = t.testdir({ plugins: { p: { 'x.txt': 'x\n' } } });
      const root = join(dir, 'plugins');
      const stateDir = join(dir, 'state');
      const asRoot = process.getuid?.() === 0;
      // The data folder belongs to the daemon user; the state folder does not exist yet.
      if (asRoot) chownSync(dir, 65534, 65534);
      const code = await runTrackerHelper(['tracker-recover', '--root', root, '--state-dir', stateDir], {
        log: silentLog(),
        mounter: new RecordingMounter(),
      });
      t.equal(code, 0);
      const layout = overlayLayout(root, stateDir);
      t.equal(readFileSync(join(layout.lower, 'p/x.txt'), 'utf8'), 'x\n', 'the tree moved into the lower layer');
      t.same(readdirSync(root), [], 'the mount point is empty');
      t.ok(existsSync(layout.initialised));
      const expected = asRoot ? 65534 : process.getuid?.();
      for (const path of [stateDir, layout.base, layout.lower, layout.upper, layout.work, root]) {
        t.equal(statSync(path).uid, expected, `${basename(path)} belongs to the owner of the data folder`);
      }
    });

    t.test('refuses while the overlay is mounted, changing nothing', async (t) => {
      const l = layers(t.testdir());
      writeFileSync(join(l.layout.upper, 'a.txt'), 'pending\n');
      writeFileSync(join(l.stateDir, 'trial.json'), TRIAL_MARKER);
      const mounter = new RecordingMounter(true);
      t.equal(await runTrackerHelper(['tracker-recover', ...l.args], { log: silentLog(), mounter }), 1);
      t.equal(readFileSync(join(l.layout.upper, 'a.txt'), 'utf8'), 'pending\n', 'the mounted upper layer is untouched');
      t.same(mounter.calls, []);
    });
  });

  t.test('tracker-apply (the path unit found a request)', async (t) => {
    const malformed: Array<[string, string, string | null, RegExp]> = [
      ['not JSON', '{"id": "r1", "op": ', null, /not JSON/],
      ['no id', JSON.stringify({ op: 'commit', requested_at: 'now' }), null, /no id/],
      ['an unknown op', JSON.stringify({ id: 'r2', op: 'format', requested_at: 'now' }), 'r2', /op is "format"/],
      ['no requested_at', JSON.stringify({ id: 'r3', op: 'rollback' }), 'r3', /requested_at/],
      ['an oversized request', JSON.stringify({ id: 'r4', op: 'commit', requested_at: 'x'.repeat(5000) }), null, /more than 4096/],
    ];
    for (const [what, text, id, error] of malformed) {
      t.test(`a request with ${what} is answered with an error and removed; the layers are untouched`, async (t) => {
        const l = layers(t.testdir());
        writeFileSync(join(l.layout.upper, 'a.txt'), 'pending\n');
        writeFileSync(join(l.stateDir, REQUEST_FILE), text);
        const before = snapshotTree(l.layout.base);
        const mounter = new RecordingMounter(true);
        t.equal(await runTrackerHelper(['tracker-apply', ...l.args], { log: silentLog(), mounter }), 65, 'exit code 65 (bad data)');
        const result = JSON.parse(readFileSync(join(l.stateDir, RESULT_FILE), 'utf8'));
        t.equal(result.id, id, 'the id, when one could be read');
        t.equal(result.ok, false);
        t.match(result.error, error);
        t.notOk(existsSync(join(l.stateDir, REQUEST_FILE)), 'the request is removed');
        t.notOk(existsSync(join(l.stateDir, CLAIMED_REQUEST_FILE)));
        t.same(snapshotTree(l.layout.base), before, 'the layers are untouched');
        t.same(mounter.calls, [], 'nothing was unmounted');
      });
    }

    t.test('with no request waiting it does nothing', async (t) => {
      const l = layers(t.testdir());
      t.equal(await runTrackerHelper(['tracker-apply', ...l.args], { log: silentLog(), mounter: new RecordingMounter(true) }), 0);
      t.notOk(existsSync(join(l.stateDir, RESULT_FILE)));
    });

    t.test('a wrong command line is a usage error', async (t) => {
      const l = layers(t.testdir());
      t.equal(await runTrackerHelper(['tracker-apply', '--root', l.root]), 64, 'no --state-dir');
      t.equal(await runTrackerHelper(['tracker-explode', ...l.args]), 64, 'no such command');
      t.equal(await runTrackerHelper(['tracker-apply', ...l.args, 'extra']), 64, 'a stray argument');
    });
  });

  t.test('DelegatedOverlayTracker against a fake mount table', async (t) => {
    const setup = (t: Test, mountinfo?: (l: ReturnType<typeof layers>) => string, applyTimeoutMs = 60_000) => {
      const l = layers(t.testdir());
      const text = mountinfo ? mountinfo(l) : overlayMountinfo(l);
      const tracker = new DelegatedOverlayTracker({
        root: l.root,
        stateDir: l.stateDir,
        applyTimeoutMs,
        log: silentLog(),
        readMountinfo: async () => text,
      });
      return { ...l, tracker };
    };

    t.test('start refuses a root that is not the overlay and names the mount unit to start', async (t) => {
      for (const [what, mountinfo, found] of [
        ['nothing mounted', () => '26 1 259:2 / / rw - ext4 /dev/root rw\n', /nothing is mounted there/],
        ['another filesystem', (l: ReturnType<typeof layers>) => mountLine(l.root, 'tmpfs', 'rw'), /it is a tmpfs mount/],
      ] as const) {
        const { tracker, root } = setup(t, mountinfo);
        const error = await rejection(tracker.start());
        t.ok(isHomeAgentError(error, 'HA_ERR_TRACKER_MOUNT'), what);
        t.match((error as Error).message, found);
        t.match((error as Error).message, `systemctl start ${mountUnitName(root)}`);
        t.match((error as Error).message, 'core.tracker.backend');
        await t.rejects(tracker.pending(), { code: 'HA_ERR_TRACKER_MOUNT' }, 'pending refuses too');
      }
    });

    t.test('start refuses an overlay whose upper layer is not ours', async (t) => {
      const { tracker } = setup(t, (l) => overlayMountinfo(l, '/srv/other upper'));
      await t.rejects(tracker.start(), {
        code: 'HA_ERR_TRACKER_MOUNT',
        message: /upper layer is \/srv\/other upper, not .*overlay\/upper/,
      });
    });

    t.test('start refuses while a journal is left, naming the recovery unit', async (t) => {
      const { tracker, layout } = setup(t);
      writeFileSync(layout.journal, JSON.stringify({ op: 'rollback' }));
      await t.rejects(tracker.start(), { code: 'HA_ERR_TRACKER_STATE', message: /homeagent-tracker-recover\.service/ });
    });

    t.test('start withdraws a request and an answer an earlier run left', async (t) => {
      const { tracker, stateDir } = setup(t);
      writeFileSync(join(stateDir, REQUEST_FILE), JSON.stringify({ id: 'old', op: 'commit', requested_at: 'then' }));
      writeFileSync(join(stateDir, RESULT_FILE), JSON.stringify({ id: 'older', ok: true }));
      await tracker.start();
      t.notOk(existsSync(join(stateDir, REQUEST_FILE)), 'a late helper finds nothing to do');
      t.notOk(existsSync(join(stateDir, RESULT_FILE)));
    });

    t.test('commit and rollback with nothing in the upper layer ask the helper nothing', async (t) => {
      // A request would go unanswered and fail after 100 ms.
      const { tracker, stateDir } = setup(t, undefined, 100);
      await tracker.start();
      await tracker.commit();
      t.same(await tracker.rollback(), []);
      t.notOk(existsSync(join(stateDir, REQUEST_FILE)));
    });

    t.test('an unanswered request times out with HA_ERR_TRACKER_APPLY and is withdrawn; answers to other ids do not count', async (t) => {
      const { tracker, stateDir, layout } = setup(t, undefined, 300);
      await tracker.start();
      writeFileSync(join(layout.upper, 'a.txt'), 'pending\n');
      const before = snapshotTree(layout.base);
      const committing = rejection(tracker.commit());
      const request = await nextRequest(stateDir);
      t.equal(request.op, 'commit');
      t.match(request.id, /^[0-9a-f-]{36}$/, 'a random id');
      await writeFileDurably(join(stateDir, RESULT_FILE), JSON.stringify({ id: 'someone-else', ok: true }));
      const error = await committing;
      t.ok(isHomeAgentError(error, 'HA_ERR_TRACKER_APPLY'), 'HA_ERR_TRACKER_APPLY');
      t.match((error as Error).message, /did not answer the commit request within 300 ms/);
      t.match((error as Error).message, /homeagent-tracker-apply\.path/);
      t.notOk(existsSync(join(stateDir, REQUEST_FILE)), 'the request is withdrawn');
      const after = snapshotTree(layout.base);
      t.same(after, before, 'the layers are untouched');
    });

    t.test("a failed request rejects with the helper's reason", async (t) => {
      const { tracker, stateDir, layout } = setup(t);
      await tracker.start();
      writeFileSync(join(layout.upper, 'a.txt'), 'pending\n');
      const rolling = rejection(tracker.rollback());
      const request = await nextRequest(stateDir);
      t.equal(request.op, 'rollback');
      await writeFileDurably(join(stateDir, RESULT_FILE), JSON.stringify({ id: request.id, ok: false, error: 'umount: target is busy' }));
      const error = await rolling;
      t.ok(isHomeAgentError(error, 'HA_ERR_TRACKER_APPLY'));
      t.match((error as Error).message, /could not rollback the plugins overlay: umount: target is busy/);
      t.notOk(existsSync(join(stateDir, RESULT_FILE)), 'the answer is cleared');
    });

    t.test('rollback answers what the helper says it undid', async (t) => {
      const { tracker, stateDir, layout } = setup(t);
      await tracker.start();
      writeFileSync(join(layout.upper, 'a.txt'), 'pending\n');
      const pending = await tracker.pending();
      t.same(
        pending.map((c) => `${c.op} ${c.path}`),
        ['add a.txt'],
      );
      const undone: FileChange[] = [{ path: 'a.txt', op: 'add', sha256_before: null, sha256_after: 'a'.repeat(64) }];
      const rolling = tracker.rollback();
      const request = await nextRequest(stateDir);
      await writeFileDurably(join(stateDir, RESULT_FILE), JSON.stringify({ id: request.id, ok: true, undone }));
      t.same(await rolling, undone);
    });

    t.test('readGood reads the lower layer and refuses paths leaving the tree', async (t) => {
      const { tracker, layout } = setup(t);
      writeFileSync(join(layout.lower, 'a.txt'), 'good\n');
      writeFileSync(join(layout.upper, 'a.txt'), 'pending\n');
      t.equal((await tracker.readGood('a.txt'))?.toString(), 'good\n');
      t.equal(await tracker.readGood('b.txt'), null);
      await t.rejects(tracker.readGood('../state/request.json'), { code: 'HA_ERR_FILES_DENIED' });
    });

    t.test('findMount reads escaped paths and takes the top of stacked mounts', async (t) => {
      const text = [
        mountLine('/data/my plugins', 'ext4', 'rw'),
        mountLine('/data/my plugins', 'overlay', 'rw,lowerdir=/s/lo\\040w,upperdir=/s/up,workdir=/s/wk'),
      ].join('\n');
      const mount = findMount(text, '/data/my plugins');
      t.equal(mount?.fstype, 'overlay');
      t.equal(mount?.options.get('lowerdir'), '/s/lo w');
      t.equal(mount?.options.get('upperdir'), '/s/up');
      t.equal(findMount(text, '/data/my'), null);
    });

    t.test('mountUnitName escapes as systemd-escape --path does', async (t) => {
      t.equal(mountUnitName('/var/lib/homeagent/plugins'), 'var-lib-homeagent-plugins.mount');
      t.equal(mountUnitName('/tmp/.a b/ü-x/'), 'tmp-.a\\x20b-\\xc3\\xbc\\x2dx.mount');
      t.equal(mountUnitName('/.hidden'), '\\x2ehidden.mount');
      t.equal(mountUnitName('/'), '-.mount');
    });
  });
}

/** DelegatedOverlayTracker whose start() boots the simulated machine first when it is down. */
class BootedTracker implements TrackerBackend {
  readonly kind = 'overlay' as const;
  constructor(
    private readonly system: SimulatedOverlaySystem,
    private readonly tracker: DelegatedOverlayTracker,
  ) {}
  get root(): string {
    return this.tracker.root;
  }
  async start(): Promise<void> {
    if (!this.system.up) await this.system.boot();
    await this.tracker.start();
  }
  stop(): Promise<void> {
    return this.tracker.stop();
  }
  pending(): Promise<FileChange[]> {
    return this.tracker.pending();
  }
  readGood(path: string): Promise<Buffer | null> {
    return this.tracker.readGood(path);
  }
  commit(): Promise<void> {
    return this.tracker.commit();
  }
  rollback(): Promise<FileChange[]> {
    return this.tracker.rollback();
  }
}

function namespacedTests(t: Test): void {
  const systems = new Map<string, SimulatedOverlaySystem>();
  t.teardown(() => {
    for (const system of systems.values()) system.shutdown();
  });
  const systemFor = (dir: string): SimulatedOverlaySystem => {
    let system = systems.get(dir);
    if (!system) {
      system = new SimulatedOverlaySystem(join(dir, 'plugins'), join(dir, 'state'));
      systems.set(dir, system);
    }
    return system;
  };
  const daemon = (dir: string, applyTimeoutMs = 30_000) =>
    new DelegatedOverlayTracker({ root: join(dir, 'plugins'), stateDir: join(dir, 'state'), applyTimeoutMs, log: silentLog() });
  const make: MakeTracker = async (dir, options) => {
    const system = systemFor(dir);
    // Each instance is a new daemon; the fault hook goes to the helper runs it causes.
    system.faultAfter = options?.faultAfter;
    return new BootedTracker(system, daemon(dir));
  };

  trackerBackendContract(t, 'DelegatedOverlayTracker + tracker-apply', make);

  t.test('DelegatedOverlayTracker with the privileged helper', async (t) => {
    /** A booted machine over a tree with one plugin file, and the daemon's tracker started. */
    const booted = async (t: Test, applyTimeoutMs?: number) => {
      const dir = t.testdir({ plugins: { p: { 'a.txt': 'good\n' } } });
      const system = systemFor(dir);
      await system.boot();
      const tracker = daemon(dir, applyTimeoutMs);
      await tracker.start();
      return { dir, system, tracker, root: join(dir, 'plugins'), layout: overlayLayout(join(dir, 'plugins'), join(dir, 'state')) };
    };

    t.test('the layers and what the merge writes belong to the daemon user, so it can still change them', async (t) => {
      const dir = t.testdir({ plugins: { p: { 'a.txt': 'good\n' } }, state: {} });
      chownSync(join(dir, 'state'), 65534, 65534);
      const system = systemFor(dir);
      await system.boot();
      const tracker = daemon(dir);
      await tracker.start();
      const root = join(dir, 'plugins');
      const layout = overlayLayout(root, join(dir, 'state'));
      t.equal(statSync(root).uid, 65534, 'the merged root (the upper layer root) belongs to the state folder owner');
      mkdirSync(join(root, 'q'));
      writeFileSync(join(root, 'q/b.txt'), 'b\n');
      chownSync(join(root, 'q'), 65534, 65534);
      chownSync(join(root, 'q/b.txt'), 65534, 65534);
      await tracker.commit();
      t.same(await tracker.pending(), []);
      t.equal(lstatSync(join(layout.lower, 'q')).uid, 65534, 'a merged folder keeps its owner');
      t.equal(lstatSync(join(layout.lower, 'q/b.txt')).uid, 65534, 'a merged file keeps its owner');
      t.equal(statSync(join(root, 'q/b.txt')).uid, 65534, 'and so does the merged view');
    });

    t.test('a commit while a plugin holds a file open fails with the reason, and the overlay stays mounted', async (t) => {
      const { system, tracker, root } = await booted(t);
      writeFileSync(join(root, 'p/a.txt'), 'changed\n');
      const before = await tracker.pending();
      const held = await open(join(root, 'p/a.txt'), 'r');
      try {
        await t.rejects(tracker.commit(), { code: 'HA_ERR_TRACKER_APPLY', message: /umount/ });
      } finally {
        await held.close();
      }
      t.equal(await system.mounter.isMounted(root), true, 'still mounted');
      t.same(await tracker.pending(), before, 'the change is still pending');
      await system.idle();
      t.equal(system.runs.at(-1), 1, 'the helper exited 1');
      await tracker.commit();
      t.same(await tracker.pending(), []);
    });

    t.test('a remount that fails once: the helper mounts again in its repair and answers that the commit went through', async (t) => {
      const { system, tracker, root, layout } = await booted(t);
      let failures = 1;
      const real = system.mounter;
      system.helperMounter = {
        isMounted: (merged) => real.isMounted(merged),
        unmount: (merged) => real.unmount(merged),
        mount: async (lower, upper, work, merged) => {
          if (failures-- > 0) throw new Error('mount: injected failure');
          await real.mount(lower, upper, work, merged);
        },
      };
      writeFileSync(join(root, 'p/a.txt'), 'changed\n');
      await tracker.commit();
      await system.idle();
      t.same(system.runs, [0], 'the helper exited 0');
      t.equal(await real.isMounted(root), true, 'mounted again');
      t.same(await tracker.pending(), []);
      t.equal(readFileSync(join(layout.lower, 'p/a.txt'), 'utf8'), 'changed\n', 'the change is in the good state');
    });

    t.test('a helper killed mid-commit: the daemon times out and withdraws, the next boot finishes the commit', async (t) => {
      const { dir, system, tracker, root, layout } = await booted(t, 1000);
      writeFileSync(join(root, 'p/a.txt'), 'changed\n');
      const committed = snapshotTree(root);
      system.answerWhenKilled = false;
      system.faultAfter = (step) => {
        if (step === 'commit:journal') throw new Error('killed');
      };
      await t.rejects(tracker.commit(), { code: 'HA_ERR_TRACKER_APPLY', message: /did not answer the commit request within 1000 ms/ });
      await system.idle();
      t.same(system.runs, ['killed']);
      t.notOk(existsSync(join(dir, 'state', REQUEST_FILE)), 'the request is withdrawn');
      t.ok(existsSync(layout.journal), 'the journal is left');
      t.equal(await system.mounter.isMounted(root), false, 'and the overlay is unmounted');
      const restarted = daemon(dir);
      await t.rejects(restarted.start(), { code: 'HA_ERR_TRACKER_MOUNT', message: mountUnitName(root) });

      system.faultAfter = undefined;
      await system.boot();
      await restarted.start();
      t.same(await restarted.pending(), [], 'the commit was finished');
      t.same(snapshotTree(root), committed);
      t.equal((await restarted.readGood('p/a.txt'))?.toString(), 'changed\n');
    });

    t.test('a trial the machine did not survive is discarded by the next boot', async (t) => {
      const { dir, system, tracker, root } = await booted(t);
      const good = snapshotTree(root);
      writeFileSync(join(root, 'p/a.txt'), 'bad\n');
      writeFileSync(join(root, 'p/new.txt'), 'new\n');
      t.equal((await tracker.pending()).length, 2);
      writeFileSync(join(dir, 'state', 'trial.json'), TRIAL_MARKER);
      await system.boot();
      const again = daemon(dir);
      await again.start();
      t.same(await again.pending(), [], 'nothing is pending');
      t.same(snapshotTree(root), good, 'the tree is the last good one');
    });
  });
}

if (!inPrivateMountNamespace()) {
  unprivilegedTests(t);
  const reason = await overlayUnavailable();
  if (reason !== null) t.test('DelegatedOverlayTracker with real overlay mounts', { skip: reason }, async () => {});
  else await rerunInPrivateMountNamespace(t, import.meta.url, 'DelegatedOverlayTracker and the helper in a private mount namespace');
} else {
  namespacedTests(t);
}
