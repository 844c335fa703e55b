/**
 * The contract every TrackerBackend passes (src/tracker/types.ts), whether it keeps the good state
 * as copies (UserspaceTracker) or as an overlay lower layer (OverlayTracker): pending() lists what
 * differs from the last good state, commit() makes the tree the good state and survives a restart,
 * rollback() restores the good state byte for byte (modes, deletions, additions, folders), nothing
 * outside the tree is touched (links pointing out are never followed), and a crash at any step of
 * commit or rollback leaves the old or the new state once a new instance has started.
 *
 * The factory gets an empty folder and puts everything (root, state) under it, without using the
 * names `outside-*` next to `root`, which the suite uses for files that must never be touched. It
 * answers an instance that has not been started; two calls with the same folder must answer two
 * instances over the same state (a restart). `faultAfter` is called after each durable step of
 * commit and rollback; when it throws, the operation must stop there as a crash would.
 */
import { createHash } from 'node:crypto';
import { chmodSync, lstatSync, mkdirSync, readdirSync, readFileSync, readlinkSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import type { Test } from 'tap';
import { isHomeAgentError } from '../../src/shared/errors.js';
import type { FileChange, TrackerBackend } from '../../src/tracker/types.js';

export interface TrackerFactoryOptions {
  faultAfter?: (step: string) => void;
}

export type MakeTracker = (dir: string, options?: TrackerFactoryOptions) => Promise<TrackerBackend>;

const sha = (text: string | Buffer): string => createHash('sha256').update(text).digest('hex');

/** Every entry under `root` with its kind, mode and content, for exact before/after comparisons. */
export function snapshotTree(root: string): Record<string, string> {
  const out: Record<string, string> = {};
  const walk = (rel: string): void => {
    for (const name of readdirSync(rel === '' ? root : join(root, rel)).sort()) {
      const path = rel === '' ? name : `${rel}/${name}`;
      const full = join(root, path);
      const st = lstatSync(full);
      const mode = (st.mode & 0o7777).toString(8);
      if (st.isSymbolicLink()) out[path] = `link ${readlinkSync(full)}`;
      else if (st.isDirectory()) {
        out[path] = `dir ${mode}`;
        walk(path);
      } else out[path] = `file ${mode} ${readFileSync(full).toString('base64')}`;
    }
  };
  walk('');
  return out;
}

function write(root: string, path: string, content: string, mode = 0o644): void {
  const full = join(root, path);
  mkdirSync(dirname(full), { recursive: true });
  writeFileSync(full, content);
  chmodSync(full, mode);
}

/** The tree every test starts from: files at two depths, an executable, an empty folder. */
function seed(root: string): void {
  write(root, 'a.txt', 'alpha\n');
  write(root, 'run.sh', '#!/bin/sh\necho hi\n', 0o755);
  write(root, 'dir/b.txt', 'bravo\n');
  write(root, 'dir/sub/c.txt', 'charlie\n');
  write(root, 'keep/k.txt', 'kilo\n');
  mkdirSync(join(root, 'empty'));
}

/** Pending changes of every kind over the seeded tree. */
function mutate(root: string): void {
  write(root, 'a.txt', 'alpha changed\n');
  chmodSync(join(root, 'run.sh'), 0o600);
  rmSync(join(root, 'dir/b.txt'));
  rmSync(join(root, 'dir/sub'), { recursive: true });
  write(root, 'dir/new/deep/d.txt', 'delta\n');
  write(root, 'e.txt', 'echo\n');
  rmSync(join(root, 'keep'), { recursive: true });
  write(root, 'keep', 'a file where a folder was\n');
  rmSync(join(root, 'empty'), { recursive: true });
  mkdirSync(join(root, 'added-empty'));
}

const MUTATED_PENDING: FileChange[] = [
  { path: 'a.txt', op: 'modify', sha256_before: sha('alpha\n'), sha256_after: sha('alpha changed\n') },
  { path: 'dir/b.txt', op: 'delete', sha256_before: sha('bravo\n'), sha256_after: null },
  { path: 'dir/new/deep/d.txt', op: 'add', sha256_before: null, sha256_after: sha('delta\n') },
  { path: 'dir/sub/c.txt', op: 'delete', sha256_before: sha('charlie\n'), sha256_after: null },
  { path: 'e.txt', op: 'add', sha256_before: null, sha256_after: sha('echo\n') },
  { path: 'keep', op: 'add', sha256_before: null, sha256_after: sha('a file where a folder was\n') },
  { path: 'keep/k.txt', op: 'delete', sha256_before: sha('kilo\n'), sha256_after: null },
];

async function started(make: MakeTracker, dir: string, options?: TrackerFactoryOptions): Promise<TrackerBackend> {
  const tracker = await make(dir, options);
  await tracker.start();
  return tracker;
}

export function trackerBackendContract(t: Test, name: string, make: MakeTracker): void {
  t.test(`${name}: tracker backend contract`, async (t) => {
    /** A started tracker over a seeded tree (the first good state), stopped when the test ends. */
    const fresh = async (
      t: Test,
      options?: TrackerFactoryOptions,
      dir = t.testdir(),
    ): Promise<{ dir: string; tracker: TrackerBackend }> => {
      mkdirSync(dir, { recursive: true });
      const probe = await make(dir);
      mkdirSync(probe.root, { recursive: true });
      seed(probe.root);
      const tracker = await started(make, dir, options);
      t.teardown(() => tracker.stop());
      return { dir, tracker };
    };

    t.test('empty start: an empty tree has nothing pending; start is idempotent', async (t) => {
      const dir = t.testdir();
      const tracker = await started(make, dir);
      t.teardown(() => tracker.stop());
      t.equal(tracker.kind === 'overlay' || tracker.kind === 'userspace', true, `kind is ${tracker.kind}`);
      t.ok(lstatSync(tracker.root).isDirectory(), 'root exists after start');
      t.same(await tracker.pending(), []);
      await tracker.start();
      t.same(await tracker.pending(), [], 'a second start changes nothing');
      t.equal(await tracker.readGood('nothing.txt'), null);
    });

    t.test('the tree as found is the first good state', async (t) => {
      const { tracker } = await fresh(t);
      t.same(await tracker.pending(), []);
      t.same((await tracker.readGood('dir/sub/c.txt'))?.toString(), 'charlie\n');
    });

    t.test('pending lists adds, modifies and deletes in nested folders, sorted, with hashes', async (t) => {
      const { tracker } = await fresh(t);
      mutate(tracker.root);
      t.same(await tracker.pending(), MUTATED_PENDING);
    });

    t.test('readGood answers the good content, null for added files, and refuses paths leaving the tree', async (t) => {
      const { tracker } = await fresh(t);
      mutate(tracker.root);
      t.equal((await tracker.readGood('a.txt'))?.toString(), 'alpha\n', 'modified file: the old content');
      t.equal((await tracker.readGood('dir/b.txt'))?.toString(), 'bravo\n', 'deleted file: still readable');
      t.equal(await tracker.readGood('e.txt'), null, 'added file: null');
      t.equal(await tracker.readGood('dir/new/deep/d.txt'), null, 'added nested file: null');
      for (const bad of ['../outside-sibling.txt', '/etc/passwd', 'dir/../../x', '', 'dir//b.txt', './a.txt']) {
        const error = await tracker.readGood(bad).then(
          () => undefined,
          (e: unknown) => e,
        );
        t.ok(isHomeAgentError(error, 'HA_ERR_FILES_DENIED'), `refuses ${JSON.stringify(bad)}`);
      }
      t.same(await tracker.pending(), MUTATED_PENDING, 'refused reads change nothing');
    });

    t.test('commit empties pending, moves the good state, and survives a restart', async (t) => {
      const { dir, tracker } = await fresh(t);
      mutate(tracker.root);
      const committed = snapshotTree(tracker.root);
      await tracker.commit();
      t.same(await tracker.pending(), []);
      t.equal((await tracker.readGood('a.txt'))?.toString(), 'alpha changed\n');
      t.equal(await tracker.readGood('dir/b.txt'), null, 'a committed delete is gone from the good state');
      await tracker.stop();

      const again = await started(make, dir);
      t.teardown(() => again.stop());
      t.same(await again.pending(), [], 'nothing pending after the restart');
      t.same(snapshotTree(again.root), committed, 'the tree is unchanged by commit and restart');
      t.equal((await again.readGood('e.txt'))?.toString(), 'echo\n');
      write(again.root, 'e.txt', 'echo again\n');
      await again.rollback();
      t.same(snapshotTree(again.root), committed, 'a later rollback goes back to the committed tree');
    });

    t.test('rollback restores the good state exactly and answers what it undid', async (t) => {
      const { tracker } = await fresh(t);
      const good = snapshotTree(tracker.root);
      mutate(tracker.root);
      symlinkSync('a.txt', join(tracker.root, 'added-link'));
      const pending = await tracker.pending();
      const undone = await tracker.rollback();
      t.same(undone, pending, 'answers the pending changes it undid');
      t.same(snapshotTree(tracker.root), good, 'contents, modes, folders and deletions are back; additions are gone');
      t.same(await tracker.pending(), []);
      t.same(await tracker.rollback(), [], 'a second rollback has nothing to undo');
      t.same(snapshotTree(tracker.root), good);
    });

    t.test('a symlink in the good state is restored as the same symlink', async (t) => {
      const dir = t.testdir();
      const probe = await make(dir);
      mkdirSync(probe.root, { recursive: true });
      seed(probe.root);
      symlinkSync('dir/b.txt', join(probe.root, 'link'));
      const tracker = await started(make, dir);
      t.teardown(() => tracker.stop());
      const good = snapshotTree(tracker.root);
      rmSync(join(tracker.root, 'link'));
      symlinkSync('a.txt', join(tracker.root, 'link'));
      t.same(
        (await tracker.pending()).map((c) => [c.path, c.op]),
        [['link', 'modify']],
        'a retargeted link is a modify',
      );
      await tracker.rollback();
      t.same(snapshotTree(tracker.root), good);
    });

    t.test('rollback after commit undoes only what came after the commit', async (t) => {
      const { tracker } = await fresh(t);
      write(tracker.root, 'a.txt', 'committed\n');
      write(tracker.root, 'f.txt', 'foxtrot\n');
      await tracker.commit();
      const committed = snapshotTree(tracker.root);
      write(tracker.root, 'f.txt', 'foxtrot changed\n');
      write(tracker.root, 'g.txt', 'golf\n');
      const undone = await tracker.rollback();
      t.same(undone, [
        { path: 'f.txt', op: 'modify', sha256_before: sha('foxtrot\n'), sha256_after: sha('foxtrot changed\n') },
        { path: 'g.txt', op: 'add', sha256_before: null, sha256_after: sha('golf\n') },
      ]);
      t.same(snapshotTree(tracker.root), committed);
    });

    t.test('nothing outside the tree is touched and links pointing out are never followed', async (t) => {
      const dir = t.testdir();
      const probe = await make(dir);
      const outside = dirname(probe.root);
      mkdirSync(probe.root, { recursive: true });
      seed(probe.root);
      write(outside, 'outside-sibling.txt', 'sibling\n');
      write(outside, 'outside-dir/o.txt', 'outside\n');
      write(outside, 'outside-dir/b.txt', 'not bravo\n');
      symlinkSync(join(outside, 'outside-dir'), join(probe.root, 'ext'));
      const tracker = await started(make, dir);
      t.teardown(() => tracker.stop());
      const good = snapshotTree(tracker.root);

      // Written through a link that was already in the good state: outside the tree, not tracked.
      writeFileSync(join(tracker.root, 'ext/through.txt'), 'through\n');
      // A folder replaced by a link out of the tree: restoring must remove the link, not write through it.
      rmSync(join(tracker.root, 'dir'), { recursive: true });
      symlinkSync(join(outside, 'outside-dir'), join(tracker.root, 'dir'));
      symlinkSync(join(outside, 'outside-sibling.txt'), join(tracker.root, 'sibling-link'));
      const outsideBefore = snapshotTree(join(outside, 'outside-dir'));
      const pending = await tracker.pending();
      t.notOk(
        pending.some((c) => c.path.startsWith('ext/')),
        'files reached through a link are not pending changes',
      );
      await tracker.rollback();
      t.same(snapshotTree(tracker.root), good, 'the tree is restored');
      t.equal(readFileSync(join(outside, 'outside-sibling.txt'), 'utf8'), 'sibling\n', 'the sibling file is untouched');
      t.same(snapshotTree(join(outside, 'outside-dir')), outsideBefore, 'the folder the links pointed to is untouched');
      t.equal(readFileSync(join(outside, 'outside-dir/b.txt'), 'utf8'), 'not bravo\n');
    });

    for (const operation of ['commit', 'rollback'] as const) {
      t.test(`a crash at any step of ${operation} leaves the old or the new state after a restart`, async (t) => {
        const base = t.testdir();
        let crashes = 0;
        for (let step = 1; step <= 200; step++) {
          let calls = 0;
          const faultAfter = (where: string): void => {
            calls++;
            if (calls === step) throw new Error(`injected crash after ${where}`);
          };
          const { dir, tracker } = await fresh(t, { faultAfter }, join(base, `step-${step}`));
          const oldGood = snapshotTree(tracker.root);
          mutate(tracker.root);
          const changed = snapshotTree(tracker.root);
          const pending = await tracker.pending();
          const finished = await tracker[operation]().then(
            () => true,
            () => false,
          );
          if (finished) break;
          crashes++;
          // The crashed instance is abandoned as a killed process would leave it (no stop()).
          const again = await started(make, dir);
          t.teardown(() => again.stop());
          const now = snapshotTree(again.root);
          const nowPending = await again.pending();
          if (operation === 'commit') {
            t.same(now, changed, `step ${step}: commit never changes the tree`);
            t.ok(
              nowPending.length === 0 || JSON.stringify(nowPending) === JSON.stringify(pending),
              `step ${step}: the good state is the old or the new one (${nowPending.length} pending)`,
            );
            await again.rollback();
            const after = snapshotTree(again.root);
            t.ok(
              JSON.stringify(after) === JSON.stringify(oldGood) || JSON.stringify(after) === JSON.stringify(changed),
              `step ${step}: rolling back lands on the old or the new good state, not a mix`,
            );
          } else {
            const isOld = JSON.stringify(now) === JSON.stringify(changed);
            const isNew = JSON.stringify(now) === JSON.stringify(oldGood);
            t.ok(isOld || isNew, `step ${step}: the tree is the pending one or the good one, not a mix`);
            t.same(nowPending, isNew ? [] : pending, `step ${step}: pending matches the tree`);
            await again.rollback();
            t.same(snapshotTree(again.root), oldGood, `step ${step}: a rollback then restores the good state`);
          }
        }
        t.ok(crashes > 0, `${operation} calls faultAfter at least once (${crashes} crash points tried)`);
      });
    }
  });
}
