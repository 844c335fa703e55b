import { execFileSync } from 'node:child_process';
import { chmodSync, lstatSync, mkdirSync, readdirSync, readFileSync, readlinkSync, symlinkSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import t from 'tap';
import { findOnPath } from '../../../src/shared/find-on-path.js';
import {
  discardUpper,
  findOpaqueDirs,
  isWhiteout,
  mergeUpperIntoLower,
  pendingFromUpper,
  xattrOpaqueProbe,
} from '../../../src/tracker/overlay-apply.js';
import { sha256OfFile } from '../../../src/tracker/tree-manifest.js';

// Upper layers made by hand, as overlayfs would leave them, merged into hand-made lower layers:
// no mount is needed. Whiteouts are 0/0 character devices, which only root can make (mknod(1);
// node has no mknod). Opaque dirs are an xattr node cannot set, so the probe is injected here;
// the real xattr reader is tested only where getfattr/setfattr exist.

const isRoot = process.getuid?.() === 0;
const noWhiteouts = isRoot ? false : 'making a whiteout (mknod c 0 0) needs root';

function write(root: string, path: string, content: string, mode = 0o644): void {
  const full = join(root, path);
  mkdirSync(dirname(full), { recursive: true });
  writeFileSync(full, content);
  chmodSync(full, mode);
}

function whiteout(root: string, path: string): void {
  mkdirSync(dirname(join(root, path)), { recursive: true });
  execFileSync('mknod', [join(root, path), 'c', '0', '0']);
}

/** kind, mode and content of every entry, to compare whole trees. */
function tree(root: string): Record<string, string> {
  const out: Record<string, string> = {};
  const walk = (rel: string): void => {
    for (const name of readdirSync(join(root, rel)).sort()) {
      const path = rel === '' ? name : `${rel}/${name}`;
      const st = lstatSync(join(root, path));
      const mode = (st.mode & 0o7777).toString(8);
      if (st.isSymbolicLink()) out[path] = `link ${readlinkSync(join(root, path))}`;
      else if (st.isDirectory()) {
        out[path] = `dir ${mode}`;
        walk(path);
      } else out[path] = `file ${mode} ${readFileSync(join(root, path), 'utf8')}`;
    }
  };
  walk('');
  return out;
}

function layers(dir: string): { lower: string; upper: string; work: string } {
  const lower = join(dir, 'lower');
  const upper = join(dir, 'upper');
  const work = join(dir, 'work');
  for (const d of [lower, upper, work]) mkdirSync(d, { recursive: true });
  write(lower, 'a.txt', 'alpha\n');
  write(lower, 'run.sh', 'run\n', 0o755);
  write(lower, 'gone.txt', 'gone\n');
  write(lower, 'p/old.txt', 'old\n');
  write(lower, 'p/sub/deep.txt', 'deep\n');
  write(lower, 'q/keep.txt', 'keep\n');
  write(lower, 'q/x.txt', 'x\n');
  write(lower, 'was-dir/in.txt', 'in\n');
  return { lower, upper, work };
}

const none = async (): Promise<boolean> => false;

t.test('isWhiteout tells a 0/0 character device from other entries', { skip: noWhiteouts }, async (t) => {
  const dir = t.testdir();
  whiteout(dir, 'w');
  write(dir, 'f', 'f');
  t.equal(isWhiteout(lstatSync(join(dir, 'w'))), true);
  t.equal(isWhiteout(lstatSync(join(dir, 'f'))), false);
});

t.test(
  'pendingFromUpper: adds, modifies, whiteouts, type changes; chmod-only copy-ups are not content changes',
  { skip: noWhiteouts },
  async (t) => {
    const { lower, upper } = layers(t.testdir());
    write(upper, 'a.txt', 'alpha changed\n');
    write(upper, 'run.sh', 'run\n', 0o600);
    write(upper, 'new/deep/n.txt', 'new\n');
    whiteout(upper, 'gone.txt');
    whiteout(upper, 'q/x.txt');
    write(upper, 'was-dir', 'now a file\n');
    symlinkSync('a.txt', join(upper, 'link'));
    const changes = await pendingFromUpper(upper, lower, none);
    t.same(
      changes.map((c) => `${c.op} ${c.path}`),
      ['modify a.txt', 'delete gone.txt', 'add link', 'add new/deep/n.txt', 'delete q/x.txt', 'add was-dir', 'delete was-dir/in.txt'],
    );
    const modify = changes[0];
    t.equal(modify?.sha256_before, await sha256OfFile(join(lower, 'a.txt')));
    t.equal(modify?.sha256_after, await sha256OfFile(join(upper, 'a.txt')));
    t.same(changes[3], {
      path: 'new/deep/n.txt',
      op: 'add',
      sha256_before: null,
      sha256_after: await sha256OfFile(join(upper, 'new/deep/n.txt')),
    });
    t.same(changes[1], { path: 'gone.txt', op: 'delete', sha256_before: await sha256OfFile(join(lower, 'gone.txt')), sha256_after: null });
  },
);

t.test('pendingFromUpper and merge: an opaque dir hides every lower file below it unless the upper layer has it again', async (t) => {
  const { lower, upper } = layers(t.testdir());
  write(upper, 'p/old.txt', 'old\n');
  write(upper, 'p/fresh.txt', 'fresh\n');
  const opaque = async (rel: string): Promise<boolean> => rel === 'p';
  t.same(
    (await pendingFromUpper(upper, lower, opaque)).map((c) => `${c.op} ${c.path}`),
    ['add p/fresh.txt', 'delete p/sub/deep.txt'],
    'old.txt was written again with the same content: unchanged',
  );
  t.same(
    (await pendingFromUpper(upper, lower, none)).map((c) => `${c.op} ${c.path}`),
    ['add p/fresh.txt'],
    'the same upper dir, not opaque, merges with its lower contents',
  );
  t.same(await findOpaqueDirs(upper, lower, opaque), ['p']);
  await mergeUpperIntoLower(upper, lower, { isOpaque: opaque });
  t.same(Object.keys(tree(join(lower, 'p'))), ['fresh.txt', 'old.txt'], 'merge replaced the lower dir by the upper one');
});

t.test('mergeUpperIntoLower makes lower show exactly what the mount showed, modes and links included', { skip: noWhiteouts }, async (t) => {
  const { lower, upper } = layers(t.testdir());
  write(upper, 'a.txt', 'alpha changed\n');
  write(upper, 'run.sh', 'run\n', 0o700);
  write(upper, 'new/deep/n.txt', 'new\n', 0o640);
  chmodSync(join(upper, 'new'), 0o750);
  whiteout(upper, 'gone.txt');
  whiteout(upper, 'q/x.txt');
  whiteout(upper, 'p');
  write(upper, 'was-dir', 'now a file\n');
  write(upper, 'a-dir-now/f.txt', 'f\n');
  symlinkSync('a.txt', join(upper, 'link'));
  await mergeUpperIntoLower(upper, lower, { isOpaque: none });
  t.same(tree(lower), {
    'a-dir-now': 'dir 755',
    'a-dir-now/f.txt': 'file 644 f\n',
    'a.txt': 'file 644 alpha changed\n',
    link: 'link a.txt',
    new: 'dir 750',
    'new/deep': 'dir 755',
    'new/deep/n.txt': 'file 640 new\n',
    q: 'dir 755',
    'q/keep.txt': 'file 644 keep\n',
    'run.sh': 'file 700 run\n',
    'was-dir': 'file 644 now a file\n',
  });
  t.same(await pendingFromUpper(upper, lower, none), [], 'after the merge the upper layer changes nothing');
});

t.test('a merge interrupted at any entry and run again ends where an uninterrupted one does', { skip: noWhiteouts }, async (t) => {
  const base = t.testdir();
  const build = (name: string): { lower: string; upper: string } => {
    const { lower, upper } = layers(join(base, name));
    write(upper, 'a.txt', 'alpha changed\n');
    whiteout(upper, 'gone.txt');
    write(upper, 'p/new.txt', 'new\n');
    write(upper, 'was-dir', 'file\n');
    return { lower, upper };
  };
  const opaque = async (rel: string): Promise<boolean> => rel === 'p';
  const reference = build('reference');
  await mergeUpperIntoLower(reference.upper, reference.lower, { isOpaque: opaque });
  const expected = tree(reference.lower);
  let crashes = 0;
  for (let step = 1; step < 50; step++) {
    const { lower, upper } = build(`step-${step}`);
    let calls = 0;
    const crashed = await mergeUpperIntoLower(upper, lower, {
      isOpaque: opaque,
      faultAfter: () => {
        if (++calls === step) throw new Error('crash');
      },
    }).then(
      () => false,
      () => true,
    );
    if (!crashed) break;
    crashes++;
    await mergeUpperIntoLower(upper, lower, { isOpaque: opaque });
    t.same(tree(lower), expected, `step ${step}: the re-run completes the merge`);
  }
  t.ok(crashes >= 5, `every entry is a crash point (${crashes})`);
});

t.test('discardUpper empties upper and work and never follows links out', async (t) => {
  const dir = t.testdir();
  const upper = join(dir, 'upper');
  const work = join(dir, 'work');
  write(dir, 'outside/o.txt', 'outside\n');
  write(upper, 'a/b.txt', 'b');
  symlinkSync(join(dir, 'outside'), join(upper, 'out-link'));
  mkdirSync(join(work, 'work'), { recursive: true });
  chmodSync(join(work, 'work'), 0o000);
  await discardUpper(upper, work);
  t.same(readdirSync(upper), []);
  t.same(readdirSync(work), []);
  t.equal(readFileSync(join(dir, 'outside/o.txt'), 'utf8'), 'outside\n', 'the link target is untouched');
});

const noAttrTools = findOnPath('getfattr') && findOnPath('setfattr') ? false : 'getfattr/setfattr (the attr package) are not installed';
t.test('xattrOpaqueProbe reads trusted.overlay.opaque through getfattr', { skip: noAttrTools || noWhiteouts }, async (t) => {
  const dir = t.testdir();
  mkdirSync(join(dir, 'opaque'));
  mkdirSync(join(dir, 'plain'));
  execFileSync('setfattr', ['-n', 'trusted.overlay.opaque', '-v', 'y', join(dir, 'opaque')]);
  const probe = xattrOpaqueProbe(dir);
  t.ok(probe);
  t.equal(await probe?.('opaque'), true);
  t.equal(await probe?.('plain'), false);
});
